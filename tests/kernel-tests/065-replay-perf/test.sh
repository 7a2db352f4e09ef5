#!/bin/bash
# "btrfs-space replay" of a perf recording, as an administrator makes one:
# "perf record -a -e btrfs:EVENT ..." around a workload on a 1 GiB
# filesystem this test makes, then "perf script --show-lost-events", the
# same workload recorded at once by contrib/btrfs-space-capture.sh
# (tracefs text) inside it.  The workload is test 063's: PERF_FILES
# (default 40) small files with a 1000-byte xattr, rewritten with 4 KiB
# buffered writes, half removed, syncs, so all four parts have events.
# perf prints the events as "TASK PID [CPU] SECONDS: btrfs:EVENT: BODY",
# the extent bits and the delayed-ref action by value; every part must
# replay the same from both (main read no event in perf's layout).  The
# perf trace is cut to the inner capture's first and last event of the
# filesystem, found by their text (perf and tracefs stamp with their own
# clocks); perf's lost events (PERF_RECORD_LOST) are counted, and a
# recording that lost any is made once more with larger buffers, then
# skipped saying so.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space
check_prereq mkfs.btrfs btrfs losetup mount umount mountpoint jq truncate setfattr findmnt
need_btrfs_module
need_tracefs
command -v perf > /dev/null || skip "no perf (Debian package linux-perf)"
perf list 'btrfs:*' 2> /dev/null | grep -q btrfs_set_extent_bit ||
	skip "perf lists no btrfs tracepoints (perf_event_paranoid, or no tracefs for perf)"

: "${PERF_FILES:=40}"

need_capture
setup_cleanup_trap

new_btrfs_mount 1G p

source "$TOP/tests/kernel-tests/063-replay-trace-cmd/lib.sh" || exit
replay_work "$TEST_TMP/work.sh"
perf_events=()
for e in ${events//,/ }; do perf_events+=(-e "btrfs:$e"); done
fsid=$(findmnt -no UUID --target "$mnt")
sync
pages=256
for try in 1 2; do
	rm -f "$TEST_TMP/perf.data" "$TEST_TMP/text.trace"
	perf record -q -a -m "$pages" "${perf_events[@]}" -o "$TEST_TMP/perf.data" -- \
		"$capture" -e "$events" -o "$TEST_TMP/text.trace" "$mnt" \
		bash "$TEST_TMP/work.sh" "$mnt/w$try" "$PERF_FILES" > "$TEST_TMP/perf.log" 2>&1 ||
		fail "perf record failed: $(tail -n 3 "$TEST_TMP/perf.log")"
	perf script --show-lost-events -i "$TEST_TMP/perf.data" > "$TEST_TMP/perf.trace" 2> "$TEST_TMP/script.log" ||
		fail "perf script failed: $(tail -n 3 "$TEST_TMP/script.log")"
	lost=$(awk '/ PERF_RECORD_LOST lost / { n += $NF } END { print n + 0 }' "$TEST_TMP/perf.trace")
	clost=$(capture_lost "$TEST_TMP/perf.log")
	[ "$lost" = 0 ] && [ "$clost" = 0 ] && break
	[ "$try" = 2 ] &&
		skip "the machine is too busy: perf lost $lost events, the capture $clost, twice (last with $pages pages per CPU, load $(cut -d' ' -f1-3 /proc/loadavg))"
	pages=$((pages * 8))
	echo "perf lost $lost events, the capture $clost (load $(cut -d' ' -f1-3 /proc/loadavg)): once more with $pages pages per CPU"
done
head -n 2 "$TEST_TMP/perf.trace" | cut -c 1-160
grep -q " btrfs:btrfs_set_extent_bit: $fsid: " "$TEST_TMP/perf.trace" ||
	fail "perf recorded no btrfs_set_extent_bit of $fsid"

# perf's trace cut to the inner capture's first and last event of this
# filesystem: from the first line that is the inner's first event to the
# one that is its last
# (the event's name and its decimal fields: perf prints flags and enums in hex)
body_awk='function ev(   s, i, n, w, k) { s = $0; sub(/^.*[0-9]\.[0-9]+: +(btrfs:)?/, "", s)
	n = split(s, w, " "); k = w[1] " " w[2]
	for (i = 2; i <= n; i++) if (w[i] ~ /^[a-z_]+=[0-9]+$/) k = k " " w[i]
	return k }'
first=$(awk -v F=": $fsid:" "$body_awk"'index($0, F) { print ev(); exit }' "$TEST_TMP/text.trace")
last=$(awk -v F=": $fsid:" "$body_awk"'index($0, F) { l = ev() } END { print l }' "$TEST_TMP/text.trace")
awk -v first="$first" -v last="$last" -v F=": $fsid:" "$body_awk"'
	!on && ev() == first { on = 1 }
	on { print; if (ev() == last) n = NR }
	!on && index($0, F) { before++ }
	END { print before + 0 > "/dev/stderr" }' "$TEST_TMP/perf.trace" > "$TEST_TMP/perf.window" 2> "$TEST_TMP/cut" ||
	fail "cannot cut the perf trace to the capture's events"
# and after the inner capture's last event
awk -v last="$last" "$body_awk"'{ print } ev() == last { exit }' "$TEST_TMP/perf.window" > "$TEST_TMP/perf.cut"
echo "perf trace cut to the capture's events: $(cat "$TEST_TMP/cut") events of this filesystem before, $(( $(grep -c ": $fsid:" "$TEST_TMP/perf.window") - $(grep -c ": $fsid:" "$TEST_TMP/perf.cut") )) after"
same_events tracefs "$TEST_TMP/text.trace" perf "$TEST_TMP/perf.cut"

umount "$mnt" || fail "cannot unmount $mnt"
a=$(run_check_stdout "$BTRFS_SPACE" --format json replay "$TEST_TMP/text.trace" "$img") || exit
# what the capture marker gives the tracefs text, perf's trace has not: as options
marker=$(grep -m 1 -o 'btrfs-space-replay: .*' "$TEST_TMP/text.trace")
kver=$(grep -o 'kernel=[^ ]*' <<< "$marker") ncpu=$(grep -o 'nr_cpu_ids=[0-9]*' <<< "$marker")
[ -n "$kver" ] && [ -n "$ncpu" ] || fail "no kernel= or nr_cpu_ids= in the capture marker: $marker"
b=$(run_check_stdout "$BTRFS_SPACE" --format json replay --fsid "$fsid" --recorded-kernel "${kver#*=}" \
	--nr-cpus "${ncpu#*=}" "$TEST_TMP/perf.cut" "$img") || exit
sum='"\(.trace.lines) lines: \(.preempt.reservations.points) reservation points, \(.delalloc.set_events) delalloc sets in \(.delalloc.cycles) cycles, \(.delayed_refs.heads) ref heads, \(.delayed_refs.data_drop_heads) data drops, \(.overcommit.rises) may_use rises"'
echo "tracefs text: $(jq -r "$sum" <<< "$a")"
echo "perf script:  $(jq -r "$sum" <<< "$b")"
expect "perf: data drops" "$(jq .delayed_refs.data_drop_heads <<< "$b")" $((PERF_FILES / 2))
for part in preempt delalloc delayed_refs overcommit; do
	x=$(jq -S ".$part" <<< "$a") y=$(jq -S ".$part" <<< "$b")
	[ "$x" != null ] || fail "no part $part in the replay of the tracefs text"
	[ "$x" = "$y" ] || fail "part $part differs between tracefs and perf: $(diff <(echo "$x") <(echo "$y") | head -n 10)"
	echo "ok: part $part the same from both"
done
echo "a perf recording replays as the tracefs text of the same events"
