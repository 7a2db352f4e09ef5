#!/bin/bash
# "btrfs-space replay" of a trace recorded the ways an administrator records
# one, no kernel needed: the fixture replay-delalloc-20x5 (tracefs text of
# 6.18.44, the capture marker taken out) rewritten into the other layouts,
# each of which must replay as the tracefs text does or say why it cannot:
# - perf script of "perf record -e 'btrfs:*'": "TASK PID [CPU] SECONDS:
#   btrfs:EVENT: BODY", the extent bits in hex (libtraceevent printed them
#   so on 6.18.44: set_bits=0x1 for DIRTY); part 2 must give the same
#   figures (main took no line for an event of the replay: "none of the
#   events a part needs");
# - perf script --show-lost-events: a "PERF_RECORD_LOST lost N" line is
#   counted as lost events (with N > 0 the replay warns);
# - the "trace" file of a ring buffer that overwrote its oldest events: its
#   header "# entries-in-buffer/entries-written: A/B" says B - A were lost;
# - a capture begun inside a line (a copy from an offset): the first line,
#   no event, is set aside with a warning naming it (main: an error), as a
#   last line cut before its end is;
# - --fsid of a filesystem the trace has no event of (its events overwritten
#   in a busy ring buffer): one error naming that filesystem and the other
#   filesystems' event count, not "the trace has none of the events".

source "$TEST_TOP/common" || exit

check_prereq xz jq awk

src=$TEST_TMP/tracefs.trace
perf=$TEST_TMP/perf.trace
xz -dc "$TEST_TOP/fixtures/replay-delalloc-20x5.trace.xz" | grep -v tracing_mark_write > "$src" ||
	fail "cannot unpack the delalloc trace"

# The tracefs text as perf script prints it: the task's PID after a blank,
# no flags column, the event named with its system, the extent bits in hex
awk 'function hex(s,   v, i) { v = 0; s = tolower(substr(s, 3))
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
     BEGIN { n = split("DIRTY LOCKED DIO_LOCKED DIRTY_LOG1 DIRTY_LOG2 DELALLOC DEFRAG BOUNDARY NODATASUM CLEAR_META_RESV NEED_WAIT NORESERVE QGROUP_RESERVED CLEAR_DATA_RESV DELALLOC_NEW", names, " ")
	     for (i = 1; i <= n; i++) bit[names[i]] = 2 ^ (i - 1) }
	{ match($0, /-[0-9]+ +\[[0-9]+\]/)
	  task = substr($0, 1, RSTART - 1); sub(/^ +/, "", task)
	  split(substr($0, RSTART + 1, RLENGTH - 1), tp, " ")
	  rest = substr($0, RSTART + RLENGTH); sub(/^ +[^ ]+ +/, "", rest)
	  ts = rest; sub(/ .*/, "", ts); body = substr(rest, length(ts) + 2)
	  ev = body; sub(/:.*/, "", ev); body = substr(body, length(ev) + 2)
	  out = ""
	  while (match(body, /_bits=[A-Za-z0-9_|]+/)) {
		k = split(substr(body, RSTART + 6, RLENGTH - 6), fl, "|"); v = 0
		for (i = 1; i <= k; i++) v += fl[i] ~ /^0x/ ? hex(fl[i]) : bit[fl[i]]
		out = out substr(body, 1, RSTART + 5) sprintf("0x%x", v)
		body = substr(body, RSTART + RLENGTH) }
	  printf "%16s %5s %s %s %24s:%s\n", task, tp[1], tp[2], ts, "btrfs:" ev, out body }' \
	"$src" > "$perf" || fail "cannot rewrite the trace"
head -n 2 "$perf"
grep -q "btrfs:btrfs_set_extent_bit: .* set_bits=0x" "$perf" || fail "the rewrite made no perf layout"

# part2 TRACE: part 2's figures of TRACE
part2()
{
	run_check_stdout "$BTRFS_SPACE" --format json replay --part 2 "$1" |
		jq -c '[.trace.events, .trace.lost_events, (.delalloc | .set_events, .clear_events,
			.lock_flag_rule, .lock_flagless, .cycles)]'
}
want=$(part2 "$src") || exit
expect "tracefs text, part 2 (events, lost, sets, clears, flag rule, flagless, cycles)" \
	"$want" "[1386,0,580,780,40,120,20]"
expect "perf script, part 2" "$(part2 "$perf")" "$want"

# perf script --show-lost-events
{ head -n 100 "$perf"; echo "         kworker/u8:6 31068 [000] 13753.930000: PERF_RECORD_LOST lost 6057"
  tail -n +101 "$perf"; } > "$TEST_TMP/perf-lost.trace"
expect "perf lost events" "$("$BTRFS_SPACE" --format json replay --part 2 "$TEST_TMP/perf-lost.trace" 2> /dev/null |
	jq .trace.lost_events)" 6057

# the trace file of an overwritten ring buffer
{ echo "# tracer: nop"; echo "#"; echo "# entries-in-buffer/entries-written: 1386/1500   #P:2"
  cat "$src"; } > "$TEST_TMP/overwritten.trace"
expect "overwritten events" "$("$BTRFS_SPACE" --format json replay --part 2 "$TEST_TMP/overwritten.trace" 2> /dev/null |
	jq .trace.lost_events)" 114

# a capture begun inside a line: the first line is set aside, said
tail -c +80 "$src" > "$TEST_TMP/head-cut.trace"
out=$(run_check_stdout "$BTRFS_SPACE" --format json replay --part 2 "$TEST_TMP/head-cut.trace" 2> "$TEST_TMP/err") || exit
expect "first line cut" "$(jq .trace.first_line_cut <<< "$out")" 1
expect "events after it" "$(jq .trace.events <<< "$out")" 1385
expect "part 2 after it (flag rule, flagless, cycles)" \
	"$(jq -c '[.delalloc | .lock_flag_rule, .lock_flagless, .cycles]' <<< "$out")" "[40,120,20]"
grep -q "WARNING: .*head-cut.trace: line 1 is not a trace line (.* bytes, the capture began inside it): replayed from line 2" "$TEST_TMP/err" ||
	fail "no warning naming the cut first line: $(cat "$TEST_TMP/err")"

# --fsid of a filesystem with no event in the trace
out=$(run_mustfail "no event of that filesystem" "$BTRFS_SPACE" replay --fsid 00000000-1111-2222-3333-444444444444 "$src" 2>&1) || exit
grep -q "ERROR: the trace has no event of filesystem 00000000-1111-2222-3333-444444444444, 1386 of other filesystems" <<< "$out" ||
	fail "no error naming the filesystem: $out"
echo "perf script, its lost events, an overwritten ring buffer, a cut first line and a filesystem absent from the trace: read as the tracefs text"
