#!/bin/bash
# "btrfs-space replay" on the recorded traces in tests/fixtures, no kernel needed:
# - replay-preempt-16g: 688 btrfs_done_preemptive_reclaim states recorded by
#   6.18.44 (16 GiB, 4 xattr writers and a data writer; 5 lines of other
#   filesystems mixed in): every state agrees (the kernel said no-flush), 5.12
#   flushes in 18, 5.15 and 6.18 in none; a state edited to flush is listed as a
#   disagreement on its line, unexplained, or explained by the per-CPU counters
#   when delalloc is within their error;
# - replay-points-16g: the same workload with update_bytes_may_use: 4510
#   reservation points, 4 followed by a "preempt" trigger of the same task;
# - replay-delalloc-20x5: 20 files, each with five non-adjacent 4 KiB buffered
#   writes, then sync: 100 delalloc sets, 40 delalloc_lock acquisitions under
#   the flag rule, 120 flagless, 20 cycles; one inode's clears dropped makes it
#   39 and 19;
# - replay-delayed-refs-rm20: rm of 20 files of 1 MiB: 20 dropped data heads,
#   20 csum leaves, a size rise of 12.5 MiB (6.18) / 20 MiB (before 6.7), as
#   csum-delete computes for the same extents;
# - replay-overcommit (constructed, section 22.4): rises of 128, 256, 512 and
#   1024 MiB on 1 GiB of metadata with 768 MiB taken and 4 GiB unallocated:
#   3 over-commits, one within the FLUSH_ALL room, one within the other modes'
#   room only, one beyond (line 8); 5.12/5.15 allow 3, 6.18 2, zoned 6.18 none;
#   part 4 on a trace without update_bytes_may_use is refused;
# - replay-points-16g recorded by 6.18.44: every over-commit within the room;
# - --svg: the part 1 timeline of both 16 GiB traces is well-formed XML with
#   one bucket per "buckets" of the JSON, whose samples add up to the states
#   and reservation points, whose trigger marks add up to the preempt
#   triggers, and whose flush marks per kernel add up to the states and
#   points that kernel flushes in; a threshold line per kernel; "--svg -"
#   writes the same picture alone; the trace itself is refused as the output,
#   and so is --svg without part 1; rendered by chromium when installed;
# - the same output twice, from a file and from stdin, and from the trace-cmd
#   report layout (no flags column, "cpus=" header, "print:" markers);
# - a truncated, garbled, over-long, NUL-holding line or a missing field is a
#   one-line error naming the line; a part asked for whose events are missing,
#   a state without the metadata profile, two filesystems without --fsid, are
#   errors naming what is missing.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq xz jq sed awk

fx=$TEST_TOP/fixtures
pre=$TEST_TMP/preempt.trace
del=$TEST_TMP/delalloc.trace
xz -dc "$fx/replay-preempt-16g.trace.xz" > "$pre" || fail "cannot unpack the preempt trace"
xz -dc "$fx/replay-delalloc-20x5.trace.xz" > "$del" || fail "cannot unpack the delalloc trace"

# rj ARGS...: the JSON of a replay that must succeed
rj()
{
	run_check_stdout "$BTRFS_SPACE" --format json replay "$@"
}

# --- part 1 ---------------------------------------------------------------------

out=$(rj "$pre") || exit
expect "preempt states" "$(jq .preempt.states <<< "$out")" 688
expect "agreeing states" "$(jq .preempt.agree <<< "$out")" 688
expect "unexplained" "$(jq .preempt.unexplained <<< "$out")" 0
expect "flush states 5.12/5.15/6.18" "$(jq -c '[.preempt.kernels[].flush_states]' <<< "$out")" "[18,0,0]"
expect "5.12 only" "$(jq .preempt.only_5_12 <<< "$out")" 18
# each kernel's reasons: they add up to the states, the flush verdicts to its flush states
expect "reasons per kernel add up to the states" \
	"$(jq -c '[.preempt.kernels[].kernel as $k | [.preempt.reasons[] | select(.kernel == $k) | .count] | add]' <<< "$out")" "[688,688,688]"
expect "5.12's flush reasons" \
	"$(jq '[.preempt.reasons[] | select(.kernel == "5.12.0" and .verdict == "flush") | .count] | add' <<< "$out")" 18
# 6.18 flushes in none: 669 below the threshold, 19 under the 128 MiB floor
# besides the global reserve (of them, the 18 5.12 flushes in)
expect "6.18's no-flush under the 128 MiB floor" \
	"$(jq '[.preempt.reasons[] | select(.kernel == "6.18.0" and .verdict == "no flush" and (.reason | test("128 MiB"))) | .count] | add' <<< "$out")" 19
expect "other filesystems' events" "$(jq .trace.other_fs_events <<< "$out")" 5
expect "preempt triggers" "$(jq .preempt.preempt_triggers <<< "$out")" 688
expect "recorded kernel" "$(jq -r .trace.recorded_kernel <<< "$out")" 6.18.44

# a state made to flush: 4 GiB may_use weighed (delalloc far above ordered/2)
fs=$(awk '/btrfs-space-replay:/ { for (i = 1; i <= NF; i++) if ($i ~ /^fsid=/) print substr($i, 6) }' "$pre")
n=$(grep -n "btrfs_done_preemptive_reclaim: $fs" "$pre" | sed -n 100p | cut -d: -f1)
[ -n "$n" ] || fail "no 100th state in the preempt trace"
sed "${n}s/bytes_may_use=[0-9]*/bytes_may_use=4294967296/; ${n}s/delalloc_bytes=[0-9]*/delalloc_bytes=1073741824/; ${n}s/ordered_bytes=[0-9]*/ordered_bytes=0/" \
	"$pre" > "$TEST_TMP/flush.trace"
out=$(rj "$TEST_TMP/flush.trace") || exit
expect "disagreements after the edit" "$(jq .preempt.disagree <<< "$out")" 1
expect "its line" "$(jq '.preempt.disagreements[0].line' <<< "$out")" "$n"
expect "its branch" "$(jq -r '.preempt.disagreements[0].branch' <<< "$out")" may_use
expect "unexplained after the edit" "$(jq .preempt.unexplained <<< "$out")" 1
# within the per-CPU error (2 CPUs: 2 x 8 MiB): the delayed branch says no-flush
sed "${n}s/bytes_may_use=[0-9]*/bytes_may_use=4294967296/; ${n}s/delalloc_bytes=[0-9]*/delalloc_bytes=1048576/; ${n}s/ordered_bytes=[0-9]*/ordered_bytes=0/" \
	"$pre" > "$TEST_TMP/pcpu.trace"
out=$(rj "$TEST_TMP/pcpu.trace") || exit
expect "explained by the per-CPU counters" "$(jq .preempt.explained_pcpu <<< "$out")" 1
expect "unexplained with delalloc in the error" "$(jq .preempt.unexplained <<< "$out")" 0

# without the capture marker: the static state from the options
grep -v btrfs-space-replay: "$pre" > "$TEST_TMP/nomarker.trace"
run_mustfail "no metadata profile" "$BTRFS_SPACE" replay --fsid "$fs" "$TEST_TMP/nomarker.trace"
grep -q -- "--metadata-copies" "$TEST_TMP/cmd.err" 2>/dev/null ||
	"$BTRFS_SPACE" replay --fsid "$fs" "$TEST_TMP/nomarker.trace" 2>&1 | grep -q -- "--metadata-copies" ||
	fail "the missing-profile error does not name --metadata-copies"
out=$(rj --fsid "$fs" --metadata-copies 2 --total-rw-bytes 16G --nr-cpus 2 "$TEST_TMP/nomarker.trace") || exit
expect "states from the options" "$(jq -c '[.preempt.agree, [.preempt.kernels[].flush_states]]' <<< "$out")" "[688,[18,0,0]]"
err=$("$BTRFS_SPACE" replay --metadata-copies 2 "$TEST_TMP/nomarker.trace" 2>&1 >/dev/null)
grep -q -- "--fsid" <<< "$err" || fail "several filesystems without --fsid: $err"
echo "ok: several filesystems need --fsid"

# reservation points (update_bytes_may_use): 4510 rises, 4 followed by the
# trigger; a trigger moved to another task is no longer the kernel's answer
pts=$TEST_TMP/points.trace
xz -dc "$fx/replay-points-16g.trace.xz" > "$pts" || fail "cannot unpack the points trace"
out=$(rj --part 1 "$pts") || exit
expect "reservation points" "$(jq .preempt.reservations.points <<< "$out")" 4510
expect "points followed by a trigger" "$(jq .preempt.reservations.kernel_flush <<< "$out")" 4
expect "points agreeing" "$(jq .preempt.reservations.agree <<< "$out")" 4506
t=$(grep -n "btrfs_trigger_flush: .*preempt:" "$pts" | head -1 | cut -d: -f1)
sed -E "${t}s/-([0-9]+) +\[/-1 [/" "$pts" > "$TEST_TMP/otherpid.trace"
out=$(rj --part 1 "$TEST_TMP/otherpid.trace") || exit
expect "points followed by a trigger of the same task" "$(jq .preempt.reservations.kernel_flush <<< "$out")" 3

# --- part 2 ---------------------------------------------------------------------

out=$(rj "$del") || exit
expect "delalloc sets" "$(jq .delalloc.set_calls <<< "$out")" 100
expect "flag-rule locks" "$(jq .delalloc.lock_flag_rule <<< "$out")" 40
expect "flagless locks" "$(jq .delalloc.lock_flagless <<< "$out")" 120
expect "cycles" "$(jq .delalloc.cycles <<< "$out")" 20
expect "underflow" "$(jq .delalloc.underflow <<< "$out")" 0
expect "inodes with a cycle" "$(jq .delalloc.cycled_inodes <<< "$out")" 20
expect "inodes by cycles (1, 2, 3-4, 5-8, 9+)" "$(jq -c '[.delalloc.cycles_per_inode[].inodes]' <<< "$out")" "[20,0,0,0,0]"
expect "the busiest inode's cycles" "$(jq '.delalloc.busiest_inodes[0].cycles' <<< "$out")" 1
# the same trace twice, the second copy's times after the first's: each inode two cycles
# (a step back in time on a CPU is refused: the copy is 100000 s later)
awk '/btrfs-space-replay:/ && seen++ { next }
     FNR != NR { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {
		sub(/ [0-9]+\.[0-9]+: /, sprintf(" %d.%s: ", int($i) + 100000,
			substr($i, index($i, ".") + 1, length($i) - index($i, ".") - 1)))
		break } }
     { print }' "$del" "$del" > "$TEST_TMP/twice.trace"
out=$(rj --part 2 "$TEST_TMP/twice.trace") || exit
expect "twice: inodes by cycles" "$(jq -c '[.delalloc.cycles_per_inode[].inodes]' <<< "$out")" "[0,20,0,0,0]"
expect "twice: cycles" "$(jq .delalloc.cycles <<< "$out")" 40
ino=$(grep -o 'btrfs_set_extent_bit: .* ino=[0-9]* ' "$del" | grep -o 'ino=[0-9]*' | sort | uniq -c | sort -rn | awk '{ print $2; exit }')
awk -v ino="$ino " '!(/btrfs_clear_extent_bit/ && index($0, ino))' "$del" > "$TEST_TMP/noclear.trace"
out=$(rj --part 2 "$TEST_TMP/noclear.trace") || exit
expect "flag-rule locks, one inode never cleared" "$(jq .delalloc.lock_flag_rule <<< "$out")" 39
expect "cycles, one inode never cleared" "$(jq .delalloc.cycles <<< "$out")" 19
grep -v btrfs-space-replay: "$del" > "$TEST_TMP/delnomarker.trace"
run_mustfail "part 1 without its event" "$BTRFS_SPACE" replay --part 1 "$TEST_TMP/delnomarker.trace"
err=$("$BTRFS_SPACE" replay --part 1 "$TEST_TMP/delnomarker.trace" 2>&1 >/dev/null)
grep -q "btrfs_done_preemptive_reclaim" <<< "$err" || fail "the refusal does not name the event: $err"
echo "ok: part 1 refused: $err"

# --- part 3 ---------------------------------------------------------------------

# rm of 20 files of 1 MiB (one extent each): 20 data heads, 20 csum leaves, 20
# refs; the size rise is csum-delete's for 20 extents of 1 MiB with one ref
dr=$TEST_TMP/drefs.trace
xz -dc "$fx/replay-delayed-refs-rm20.trace.xz" > "$dr" || fail "cannot unpack the delayed-refs trace"
out=$(rj --part 3 "$dr") || exit
expect "data drop heads" "$(jq .delayed_refs.data_drop_heads <<< "$out")" 20
expect "csum leaves" "$(jq .delayed_refs.csum_leaves <<< "$out")" 20
expect "data refs dropped" "$(jq .delayed_refs.data_drop_refs <<< "$out")" 20
expect "size rise (6.18)" "$(jq .delayed_refs.size_rise <<< "$out")" 13107200
expect "size rise before 6.7" "$(jq .delayed_refs.size_rise_before_6_7 <<< "$out")" 20971520
out=$(rj --part 3 --recorded-kernel 6.6 "$dr") || exit
expect "size rise recorded by 6.6" "$(jq .delayed_refs.size_rise <<< "$out")" 20971520
h=$(grep -n "add_delayed_ref_head: .*is_data=1" "$dr" | grep DROP_DELAYED_REF | head -1 | cut -d: -f1)
sed "${h}d" "$dr" > "$TEST_TMP/onehead.trace"
out=$(rj --part 3 "$TEST_TMP/onehead.trace") || exit
expect "data drop heads, one head line removed" "$(jq .delayed_refs.data_drop_heads <<< "$out")" 19
expect "runs of a head never added" "$(jq .delayed_refs.unknown_runs <<< "$out")" 1

# the same rm recorded with btrfs_space_reservation and btrfs_transaction_commit:
# what 6.18 traces of delayed_refs_rsv is reserved bytes (refills, and what a
# size drop frees), each within the bound its caller gives (formulas.md 22.3)
ds=$TEST_TMP/drsv.trace
xz -dc "$fx/replay-delayed-rsv-rm20.trace.xz" > "$ds" || fail "cannot unpack the delayed-rsv trace"
out=$(rj --part 3 "$ds") || exit
expect "rsv: size rise" "$(jq .delayed_refs.size_rise <<< "$out")" 13107200
expect "rsv: traced" "$(jq .delayed_refs.rsv_trace.traced <<< "$out")" true
expect "rsv: refills" "$(jq .delayed_refs.rsv_trace.refills <<< "$out")" 0
expect "rsv: releases" "$(jq .delayed_refs.rsv_trace.releases <<< "$out")" 44
expect "rsv: released" "$(jq .delayed_refs.rsv_trace.released <<< "$out")" 14450688
expect "rsv: largest release = delayed_ref_bytes(1)" "$(jq .delayed_refs.rsv_trace.release_max <<< "$out")" 524288
expect "rsv: transaction starts' local reserve" "$(jq .delayed_refs.rsv_trace.local_reserved <<< "$out")" 66060288
expect "rsv: bounds checked" "$(jq .delayed_refs.rsv_trace.bounds_checked <<< "$out")" true
expect "rsv: releases over their call's drop" "$(jq .delayed_refs.rsv_trace.releases_over_call <<< "$out")" 0
expect "rsv: refills over the limit" "$(jq .delayed_refs.rsv_trace.refills_over_limit <<< "$out")" 0
expect "rsv: one transaction" "$(jq -c '[.delayed_refs.rsv_trace.transactions[] | [.gen, .size_rise, .releases, .released]]' <<< "$out")" \
	'[[8,13107200,44,14450688]]'
# a release larger than any one call drops, and a refill above delayed_ref_bytes(1)
l=$(grep -n "delayed_refs_rsv: 0 release" "$ds" | head -1 | cut -d: -f1)
sed "${l}s/release [0-9]*\$/release 2097152/" "$ds" > "$TEST_TMP/bigrel.trace"
out=$(rj --part 3 "$TEST_TMP/bigrel.trace") || exit
expect "rsv: a 2 MiB release is over its call's drop" "$(jq .delayed_refs.rsv_trace.releases_over_call <<< "$out")" 1
expect "rsv: at its line" "$(jq .delayed_refs.rsv_trace.first_over_bound_line <<< "$out")" "$l"
sed "${l}s/release [0-9]*\$/reserve 1048576/" "$ds" > "$TEST_TMP/bigref.trace"
out=$(rj --part 3 "$TEST_TMP/bigref.trace") || exit
expect "rsv: a 1 MiB refill is over the limit" "$(jq .delayed_refs.rsv_trace.refills_over_limit <<< "$out")" 1
out=$(rj --part 3 --recorded-kernel 6.6 "$TEST_TMP/bigrel.trace") || exit
expect "rsv: bounds not checked for 6.6" "$(jq .delayed_refs.rsv_trace.bounds_checked <<< "$out")" false
sed "${l}s/release [0-9]*\$/give 5/" "$ds" > "$TEST_TMP/badrsv.trace"
err=$(run_mustfail "bad reservation body" "$BTRFS_SPACE" replay --part 3 "$TEST_TMP/badrsv.trace" 2>&1 >/dev/null)
grep -q "line $l: .*reserve|release" <<< "$err" || fail "bad reservation body: $err"
echo "ok: a bad btrfs_space_reservation body is refused naming line $l"

# --- part 4 ---------------------------------------------------------------------

xz -dc "$fx/replay-overcommit.trace.xz" > "$TEST_TMP/oc.trace" || fail "cannot unpack the over-commit trace"
out=$(rj --part 4 "$TEST_TMP/oc.trace") || exit
expect "rises weighed" "$(jq .overcommit.rises <<< "$out")" 4
expect "over-commits" "$(jq .overcommit.overcommits <<< "$out")" 3
expect "within FLUSH_ALL / other / beyond" \
	"$(jq -c '[.overcommit.within_flush_all, .overcommit.within_other_modes, .overcommit.beyond_room]' <<< "$out")" "[1,1,1]"
expect "beyond: line, over, room" "$(jq -c '[.overcommit.beyond[] | .line, .over, .room]' <<< "$out")" \
	"[8,1744830464,1717986918]"
expect "allowed 5.12/5.15/6.18" "$(jq -c '[.overcommit.kernels[].allowed]' <<< "$out")" "[3,3,2]"
expect "zoned 6.18 allowed" "$(jq '.overcommit.kernels[2].zoned_allowed' <<< "$out")" 0
expect "tickets" "$(jq .overcommit.tickets <<< "$out")" 1
run_mustfail "part 4 without update_bytes_may_use" "$BTRFS_SPACE" replay --part 4 "$pre"
err=$("$BTRFS_SPACE" replay --part 4 "$pre" 2>&1 >/dev/null)
grep -q "part 4 (metadata over-commit) cannot be replayed: the trace has no update_bytes_may_use" <<< "$err" ||
	fail "part 4 refusal does not name update_bytes_may_use: $err"

xz -dc "$fx/replay-points-16g.trace.xz" > "$TEST_TMP/pts.trace" || fail "cannot unpack the points trace"
out=$(rj --part 4 "$TEST_TMP/pts.trace") || exit
expect "recorded over-commits" "$(jq .overcommit.overcommits <<< "$out")" 1361
expect "recorded beyond the room" "$(jq .overcommit.beyond_room <<< "$out")" 0

# --- the SVG timeline ----------------------------------------------------------------

# well_formed FILE: XML that parses, by xmllint or else python3
well_formed()
{
	if command -v xmllint > /dev/null 2>&1; then
		xmllint --noout "$1" || fail "not well-formed XML (xmllint): $1"
	elif command -v python3 > /dev/null 2>&1; then
		python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1" ||
			fail "not well-formed XML (python3): $1"
	else
		fail "neither xmllint nor python3 to parse the SVG"
	fi
}

# attr_sum SVG CLASS ATTR [FILTER]: ATTR of the <path class="CLASS"> elements added up
attr_sum()
{
	grep -o "<path class=\"$2\"[^>]*" "$1" | grep -- "${4:-.}" | grep -o " $3=\"[0-9]*\"" |
		tr -dc '0-9\n' | awk '{ n += $1 } END { print n + 0 }'
}

# check_svg TRACE SVG: the timeline's structure against the JSON of the same replay
check_svg()
{
	local trace=$1 svg=$2 out k kernels ver want got
	out=$(rj --part 1 --svg "$svg" "$trace") || exit
	well_formed "$svg"
	expect "$(basename "$trace") buckets" "$(grep -c '<path class="bucket"' "$svg")" "$(jq .svg.buckets <<< "$out")"
	expect "$(basename "$trace") samples" "$(attr_sum "$svg" bucket data-samples)" \
		"$(jq '.preempt.states + (.preempt.reservations.points // 0)' <<< "$out")"
	expect "$(basename "$trace") decision states" "$(attr_sum "$svg" bucket data-states)" \
		"$(jq .preempt.states <<< "$out")"
	expect "$(basename "$trace") trigger marks" "$(attr_sum "$svg" trigger data-count)" \
		"$(jq .preempt.preempt_triggers <<< "$out")"
	kernels=$(jq '.preempt.kernels | length' <<< "$out")
	expect "$(basename "$trace") threshold lines" "$(grep -c '<polyline class="thresh"' "$svg")" "$kernels"
	grep -q '<polyline class="may-use"' "$svg" || fail "no may_use line"
	grep -q '<polyline class="used"' "$svg" || fail "no used line"
	for ((k = 0; k < kernels; k++)); do
		ver=$(jq -r ".preempt.kernels[$k].kernel" <<< "$out")
		want=$(jq ".preempt.kernels[$k].flush_states + (.preempt.reservations.kernels[$k].flush_points // 0)" <<< "$out")
		got=$(attr_sum "$svg" flush data-count "data-kernel=\"$ver\"")
		expect "$(basename "$trace") $ver flush marks" "$got" "$want"
	done
}

check_svg "$pre" "$TEST_TMP/pre.svg"
check_svg "$TEST_TMP/pts.trace" "$TEST_TMP/pts.svg"
# the x axis is time: ticks 0, s, 2s, ... seconds (s 1, 2 or 5 x 10^k), the
# buckets' boxes in time order; the y ticks round multiples of one step; a
# legend entry for every kind of mark
for svg in "$TEST_TMP/pre.svg" "$TEST_TMP/pts.svg"; do
	python3 - "$svg" <<'EOS' || fail "$svg: axes or legend"
import re, sys
t = open(sys.argv[1]).read()
xs = [float(v) for v in re.findall(r'<text class="axis"[^>]*>([0-9.]+) s<', t)]
assert len(xs) >= 3 and xs[0] == 0, xs
step = xs[1] - xs[0]
assert all(abs(b - a - step) < 1e-9 * max(1, step) + 1e-12 for a, b in zip(xs, xs[1:])), xs
m = step / 10 ** __import__("math").floor(__import__("math").log10(step))
assert round(m, 6) in (1, 2, 5), step
ys = re.findall(r'<text class="axis"[^>]*>([0-9.]+)([KMGT]?i?B)<', t)
vals = [float(v) for v, u in ys]
assert len(vals) >= 3 and vals[0] == 0
d = vals[1] - vals[0]
assert all(abs(b - a - d) < 1e-6 for a, b in zip(vals, vals[1:])), ys
assert round(d / 10 ** __import__("math").floor(__import__("math").log10(d)), 6) in (1, 2, 5), ys
boxes = re.findall(r'<path class="bucket" [^>]*d="M([0-9.]+) ', t)
xb = [float(v) for v in boxes]
assert xb == sorted(xb), "bucket boxes not in time order"
for want in ("bytes_may_use", "used as need_preemptive_reclaim", "threshold at the clamp",
             "preempt triggers in the bucket", "flushes in (height: share)"):
    assert want in t, want
print("ok: %s: x ticks every %g s, y ticks every %g %s, %d buckets in time order, every mark in the legend"
      % (sys.argv[1].rsplit("/", 1)[1], step, d, ys[1][1], len(xb)))
EOS
done
grep -q 'data-kernel="5.12.0"' "$TEST_TMP/pre.svg" || fail "pre.svg: no 5.12 flush marked (the fixture has 18)"
run_check_stdout "$BTRFS_SPACE" replay --part 1 --svg - "$pre" > "$TEST_TMP/stdout.svg"
cmp -s "$TEST_TMP/stdout.svg" "$TEST_TMP/pre.svg" || fail "--svg - is not the picture --svg FILE writes, alone"
[ ! -e ./- ] || fail "--svg - created a file named -"
cp "$pre" "$TEST_TMP/copy.trace" || fail "cp failed"
run_mustfail_code 2 "--svg onto the trace" "$BTRFS_SPACE" replay --svg "$TEST_TMP/copy.trace" "$TEST_TMP/copy.trace"
cmp -s "$pre" "$TEST_TMP/copy.trace" || fail "--svg wrote onto the trace"
run_mustfail "--svg without part 1" "$BTRFS_SPACE" replay --part 2 --svg "$TEST_TMP/p2.svg" "$del"
echo "ok: --svg - alone on standard output; the trace and a trace without part 1 refused"

chrome=
for c in chromium chromium-browser google-chrome; do
	command -v "$c" > /dev/null 2>&1 && { chrome=$c; break; }
done
if [ -z "$chrome" ]; then
	echo "rendering skipped: install chromium (tests/install-deps.sh installs it, or apt-get install chromium)"
else
	check_prereq python3
	png=$TEST_TMP/pre.png
	timeout 120 "$chrome" --headless --disable-gpu --no-sandbox --hide-scrollbars \
		--user-data-dir="$TEST_TMP/chrome-profile" --screenshot="$png" \
		--window-size=1000,600 "file://$TEST_TMP/pre.svg" > "$TEST_TMP/chrome.log" 2>&1
	[ -s "$png" ] || fail "$chrome wrote no screenshot of pre.svg: $(tail -n 3 "$TEST_TMP/chrome.log")"
	# the share of pixels near the line colours: may_use, used, 6.18's threshold, the 5.12 marks
	share=$(png_colours --tolerance 24 "$png" '#2471a3' '#27ae60' '#d35400' '#c0392b') ||
		fail "cannot read $png"
	read -r blue green orange red <<< "$(tr '\n' ' ' <<< "$share")"
	awk -v b="$blue" -v g="$green" -v o="$orange" -v r="$red" \
		'BEGIN { exit !(b > 0.03 && g > 0.03 && o > 0.03 && r > 0.03) }' ||
		fail "pre.png: may_use $blue%, used $green%, 6.18 threshold $orange%, 5.12 $red% of the window"
	echo "ok: rendered by $chrome: may_use $blue%, used $green%, 6.18 threshold $orange%, 5.12 $red% of the window"
fi

# --- layouts, determinism ---------------------------------------------------------

a=$(rj "$del") && b=$(rj - < "$del") || exit
[ "$(jq -S 'del(.trace.path)' <<< "$a")" = "$(jq -S 'del(.trace.path)' <<< "$b")" ] ||
	fail "stdin and file replays differ"
[ "$(rj "$del")" = "$a" ] || fail "two replays of the same trace differ"
echo "ok: deterministic, stdin = file"
{
	echo "cpus=2"
	sed -E 's/^(.*\[[0-9]+\]) [^ ]+ +([0-9]+\.[0-9]+:)/\1 \2/; s/tracing_mark_write: /print:                tracing_mark_write: /' "$del" |
		# trace-cmd prints the delayed-ref action enum by value
		sed -E 's/action=ADD_DELAYED_REF/action=0x1/; s/action=DROP_DELAYED_REF/action=0x2/; s/action=ADD_DELAYED_EXTENT/action=0x3/'
} > "$TEST_TMP/tracecmd.trace"
c=$(rj "$TEST_TMP/tracecmd.trace") || exit
[ "$(jq -S 'del(.trace.path, .trace.lines)' <<< "$a")" = "$(jq -S 'del(.trace.path, .trace.lines)' <<< "$c")" ] ||
	fail "the trace-cmd layout replays differently"
echo "ok: trace-cmd report layout"

# --- bad input ----------------------------------------------------------------------

# bad WHY PATTERN FILE: exit 1 and one stderr line matching PATTERN
bad()
{
	local err lines
	run_mustfail "$1" "$BTRFS_SPACE" replay "$3"
	err=$("$BTRFS_SPACE" replay "$3" 2>&1 >/dev/null)
	lines=$(wc -l <<< "$err")
	grep -q -- "$2" <<< "$err" || fail "$1: stderr '$err' lacks '$2'"
	[ "$lines" = 1 ] || fail "$1: $lines lines on stderr: $err"
	echo "ok: $1: $err"
}
# a last line cut (a capture stopped while writing it): replayed up to it, with a warning
total=$(wc -l < "$del")
head -c -40 "$del" > "$TEST_TMP/trunc.trace"
head -n $((total - 1)) "$del" > "$TEST_TMP/whole.trace"
a=$(rj "$TEST_TMP/trunc.trace" 2> "$TEST_TMP/trunc.err") || exit
grep -q "WARNING: .*line $total has no end of line .*replayed up to line $((total - 1))" "$TEST_TMP/trunc.err" ||
	fail "cut last line: no warning naming it: $(cat "$TEST_TMP/trunc.err")"
expect "cut last line reported" "$(jq .trace.cut_line <<< "$a")" "$total"
b=$(rj "$TEST_TMP/whole.trace") || exit
[ "$(jq -S 'del(.trace)' <<< "$a")" = "$(jq -S 'del(.trace)' <<< "$b")" ] ||
	fail "a cut last line replays differently from the trace without it"
echo "ok: a cut last line: replayed up to line $((total - 1)), with a warning"
sed '3i this is not a trace line' "$del" > "$TEST_TMP/garbled.trace"
bad "garbled line" "line 3: not a trace line" "$TEST_TMP/garbled.trace"
sed "5s/ len=[0-9]*//" "$del" > "$TEST_TMP/nolen.trace"
bad "missing field" "line 5: btrfs_.*_extent_bit: no len=" "$TEST_TMP/nolen.trace"
sed "${n}s/ bytes_used=[0-9]*//" "$pre" > "$TEST_TMP/noused.trace"
bad "missing state field" "line $n: btrfs_done_preemptive_reclaim: no bytes_used=" "$TEST_TMP/noused.trace"
{ head -n 4 "$del"; printf 'x%.0s' $(seq 5000); echo; } > "$TEST_TMP/long.trace"
bad "over-long line" "line 5: longer than 4096" "$TEST_TMP/long.trace"
{ head -n 2 "$del"; printf 'a\0b\n'; } > "$TEST_TMP/nul.trace"
bad "NUL byte" "line 3: holds a NUL byte" "$TEST_TMP/nul.trace"
# a clear to the end of the file (end (u64)-1, as inode teardown clears):
# len = end + 1 - start wraps; it is a range, only an end before the start is bad
ln=$(grep -n -m1 'btrfs_clear_extent_bit: .*io_tree=INODE_IO' "$del" | cut -d: -f1)
[ -n "$ln" ] || fail "no INODE_IO clear in $del"
start=$(sed -n "${ln}p" "$del" | sed -E 's/.* start=([0-9]+) .*/\1/')
sed "${ln}s/ len=[0-9]*/ len=$(python3 -c "print(((1 << 64) - $start) % (1 << 64))")/" "$del" > "$TEST_TMP/toend.trace"
rj "$TEST_TMP/toend.trace" > /dev/null || fail "a clear to the end of the file is refused"
echo "ok: a clear to the end of the file (start $start) replays"
sed "${ln}s/ start=[0-9]*/ start=8192/; ${ln}s/ len=[0-9]*/ len=0/" "$del" > "$TEST_TMP/before.trace"
bad "range ending before it starts" "line $ln: btrfs_clear_extent_bit: range ends before it starts" "$TEST_TMP/before.trace"
sed "6s/set_bits=[A-Z_|]*/set_bits=BOGUS/; 6s/clear_bits=[A-Z_|]*/clear_bits=BOGUS/" "$del" > "$TEST_TMP/bits.trace"
bad "unknown extent bit" "line 6: btrfs_.*_extent_bit: bad .*_bits=" "$TEST_TMP/bits.trace"

# --- every field strict, every type the kernel prints -----------------------------------

# btrfs_space_reservation types of 6.18 (fs/btrfs/*.c callers of
# trace_btrfs_space_reservation): one of each after line 2, the replay unchanged
fsid_ds=$(awk '/btrfs-space-replay:/ { for (i = 1; i <= NF; i++) if ($i ~ /^fsid=/) print substr($i, 6) }' "$ds")
pfx=$(sed -n 2p "$ds" | sed -E 's/(btrfs_space_reservation: [^ ]+ ).*/\1/')
{
	sed -n 1,2p "$ds"
	for t in space_info space_info:enospc transaction delalloc pinned delayed_item delayed_inode local_delayed_refs_rsv; do
		echo "${pfx}$t: 4 reserve 4096"
	done
	sed -n '3,$p' "$ds"
} > "$TEST_TMP/types.trace"
[ "$(grep -c "space_info:enospc: 4 reserve" "$TEST_TMP/types.trace")" = 1 ] || fail "no space_info:enospc line made"
a=$(rj --part 3 "$ds") || exit
b=$(rj --part 3 "$TEST_TMP/types.trace") || exit
expect "space_info:enospc and the other types: delayed_refs_rsv releases" "$(jq .delayed_refs.rsv_trace.releases <<< "$b")" \
	"$(jq .delayed_refs.rsv_trace.releases <<< "$a")"
echo "ok: every btrfs_space_reservation type of 6.18 parses ($fsid_ds)"

# bytes that sscanf("%llu") took: negative, hex, overflowing, trailing garbage, a blank type
for v in -524288 0x80000 18446744073709551616 524288x "524288 junk"; do
	sed "${l}s/release [0-9]*\$/release $v/" "$ds" > "$TEST_TMP/badbytes.trace"
	err=$(run_mustfail "reservation bytes '$v'" "$BTRFS_SPACE" replay --part 3 "$TEST_TMP/badbytes.trace" 2>&1 >/dev/null)
	grep -q "line $l: btrfs_space_reservation: .*BYTES not an unsigned decimal" <<< "$err" ||
		fail "reservation bytes '$v': $err"
	echo "ok: reservation bytes '$v' refused at line $l"
done
sed "${l}s/delayed_refs_rsv: 0 release/delayed_refs_rsv: -1 release/" "$ds" > "$TEST_TMP/badval.trace"
err=$(run_mustfail "reservation value -1" "$BTRFS_SPACE" replay --part 3 "$TEST_TMP/badval.trace" 2>&1 >/dev/null)
grep -q "line $l: .*VAL not an unsigned decimal" <<< "$err" || fail "reservation value -1: $err"
# delayed-ref fields: a negative, hex or overflowing bytenr, an unknown action
hl=$(grep -n "add_delayed_ref_head: " "$ds" | head -1 | cut -d: -f1)
for edit in "s/bytenr=[0-9]*/bytenr=-1/" "s/bytenr=[0-9]*/bytenr=0x10/" "s/num_bytes=[0-9]*/num_bytes=99999999999999999999/" "s/action=[A-Z_]*/action=BOGUS/" "s/is_data=[0-9]/is_data=2/"; do
	sed "${hl}${edit}" "$ds" > "$TEST_TMP/badhead.trace"
	err=$(run_mustfail "head edit $edit" "$BTRFS_SPACE" replay --part 3 "$TEST_TMP/badhead.trace" 2>&1 >/dev/null)
	grep -q "line $hl: add_delayed_ref_head: .*\(bytenr\|num_bytes\|action\|is_data\)=" <<< "$err" || fail "head edit $edit: $err"
	echo "ok: $edit refused: $err"
done

# a cut btrfs_trigger_flush line inside the trace is no ticket trigger: an error naming it
t=$(grep -n "btrfs_trigger_flush: .*preempt:" "$pts" | head -1 | cut -d: -f1)
sed -E "${t}s/(btrfs_trigger_flush: [^ ]+ pre).*/\1/" "$pts" > "$TEST_TMP/cuttrig.trace"
err=$(run_mustfail "cut trigger line" "$BTRFS_SPACE" replay --part 1 "$TEST_TMP/cuttrig.trace" 2>&1 >/dev/null)
grep -q "line $t: btrfs_trigger_flush: no REASON:" <<< "$err" || fail "cut trigger line: $err"
sed -E "${t}s/ bytes=[0-9]+//" "$pts" > "$TEST_TMP/cuttrig2.trace"
err=$(run_mustfail "trigger without bytes=" "$BTRFS_SPACE" replay --part 1 "$TEST_TMP/cuttrig2.trace" 2>&1 >/dev/null)
grep -q "line $t: btrfs_trigger_flush: no bytes=" <<< "$err" || fail "trigger without bytes=: $err"
echo "ok: a cut btrfs_trigger_flush line is refused at line $t"

# --- without the marker: what the trace allows ---------------------------------------------

# part 3 needs the csum size and free-space-tree flag: skipped with a note,
# part 2 goes on (the delalloc trace and the rm, one filesystem, no marker)
fs_del=$(awk '/btrfs-space-replay:/ { for (i = 1; i <= NF; i++) if ($i ~ /^fsid=/) print substr($i, 6) }' "$del")
{
	grep -v btrfs-space-replay: "$del"
	grep -v btrfs-space-replay: "$ds" | sed "s/$fsid_ds/$fs_del/"
} > "$TEST_TMP/nomarker2.trace"
out=$(rj "$TEST_TMP/nomarker2.trace" 2> "$TEST_TMP/nm.err") || exit
cat "$TEST_TMP/nm.err"
grep -q "NOTE: part 3 (delayed refs of dropped data extents) skipped: the csum size, the free-space-tree flag, the sector size and the node size not known: give the image or device, --csum-size N, --free-space-tree 0|1, --sectorsize N, --nodesize N, or record" "$TEST_TMP/nm.err" ||
	fail "no note for part 3: $(cat "$TEST_TMP/nm.err")"
expect "part 3 left out" "$(jq .delayed_refs <<< "$out")" null
expect "part 2 without the marker" "$(jq .delalloc.cycles <<< "$out")" 20
run_mustfail "part 3 asked without the facts" "$BTRFS_SPACE" replay --part 3 "$TEST_TMP/nomarker2.trace"
out=$(rj --csum-size 4 --free-space-tree 1 --sectorsize 4096 --nodesize 16384 "$TEST_TMP/nomarker2.trace") || exit
expect "part 3 from the options: size rise" "$(jq .delayed_refs.size_rise <<< "$out")" 13107200
expect "part 2 beside it" "$(jq .delalloc.cycles <<< "$out")" 20
echo "ok: without the marker part 3 is skipped with a note, the others replayed; the facts may be options"

# --- the net of the heads: a snapshot's added refs cancel the drops --------------------------

out=$(rj --part 3 "$dr") || exit
expect "rm20: csum net rise (20 leaves)" "$(jq .delayed_refs.csum_net_rise <<< "$out")" 2621440
expect "rm20: csum released" "$(jq .delayed_refs.csum_released <<< "$out")" 0
# each dropped data extent also gains a ref first (a snapshot's full-backref add
# of its leaf, update_ref_for_cow()): total_ref_mod never goes below 0
awk '/add_delayed_ref_head: .*action=DROP_DELAYED_REF is_data=1/ { a = $0; sub(/DROP_DELAYED_REF/, "ADD_DELAYED_REF", a); print a } { print }' "$dr" > "$TEST_TMP/snap.trace"
out=$(rj --part 3 "$TEST_TMP/snap.trace") || exit
expect "snapshot rm: csum net rise" "$(jq .delayed_refs.csum_net_rise <<< "$out")" 0
expect "snapshot rm: data ref nodes (an add and a drop per extent)" "$(jq .delayed_refs.data_ref_nodes <<< "$out")" 40
# the add after the drop: charged, then released
awk '/add_delayed_ref_head: .*action=DROP_DELAYED_REF is_data=1/ { a = $0; sub(/DROP_DELAYED_REF/, "ADD_DELAYED_REF", a); print; print a; next } { print }' "$dr" > "$TEST_TMP/snap2.trace"
out=$(rj --part 3 "$TEST_TMP/snap2.trace") || exit
expect "drop then add: csum charged" "$(jq .delayed_refs.csum_charged <<< "$out")" 2621440
expect "drop then add: csum released" "$(jq .delayed_refs.csum_released <<< "$out")" 2621440
expect "drop then add: csum net rise" "$(jq .delayed_refs.csum_net_rise <<< "$out")" 0
