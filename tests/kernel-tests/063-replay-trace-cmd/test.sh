#!/bin/bash
# "btrfs-space replay" of trace-cmd's layout as trace-cmd itself writes it:
# one workload recorded twice at once on a 1 GiB filesystem this test makes,
# by contrib/btrfs-space-capture.sh -T (the events kept in the instance's
# buffer, "trace-cmd extract -B" into a trace.dat, "trace-cmd report" of it)
# around the same script without -T (trace_pipe, the tracefs text). The
# workload writes TCMD_FILES (default 40) small files with a 1000-byte xattr,
# rewrites them with 4 KiB buffered writes and removes half, then syncs, so
# all four parts have events. Both traces hold the same events (the -T
# instance is enabled before the inner one and disabled after it, and the
# inner capture adds no btrfs event; the outer trace is cut to the inner's
# first and last event of the filesystem), so every part must replay the
# same from both; only the trace's own lines, path and layout may differ.
# trace-cmd record is not used: it enables the function tracer, which a
# kernel in lockdown refuses.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space
check_prereq mkfs.btrfs btrfs losetup mount umount mountpoint jq truncate setfattr findmnt
need_btrfs_module
need_tracefs
command -v trace-cmd > /dev/null || skip "no trace-cmd (Debian package trace-cmd; tests/install-deps.sh installs it)"

: "${TCMD_FILES:=40}"

need_capture
setup_cleanup_trap

new_btrfs_mount 1G t

source "$TOP/tests/kernel-tests/063-replay-trace-cmd/lib.sh" || exit
replay_work "$TEST_TMP/work.sh"
# The -T capture keeps every event in its buffer until the end: on a busy
# machine either may overflow. Then once more, in a new folder, with a
# buffer sized from what the first try emitted; lost again: skip, saying so.
kb=${TCMD_KB:-65536}
for try in 1 2; do
	rm -f "$TEST_TMP/trace.dat" "$TEST_TMP/tcmd.trace" "$TEST_TMP/text.trace"
	"$capture" -b "$kb" -e "$events" -T "$TEST_TMP/trace.dat" -o "$TEST_TMP/tcmd.trace" "$mnt" \
		"$capture" -b "$kb" -e "$events" -o "$TEST_TMP/text.trace" "$mnt" \
		bash "$TEST_TMP/work.sh" "$mnt/w$try" "$TCMD_FILES" 2> "$TEST_TMP/capture.log" ||
		fail "capture failed: $(tail -n 3 "$TEST_TMP/capture.log")"
	cat "$TEST_TMP/capture.log"
	lost=$(capture_lost "$TEST_TMP/capture.log")
	[ "$lost" = 0 ] && break
	[ "$try" = 2 ] &&
		skip "the machine is too busy: the trace captures lost $lost events twice (last with $kb KiB per CPU, load $(cut -d' ' -f1-3 /proc/loadavg))"
	kb=$(capture_next_kb "$kb" "$lost" "$TEST_TMP/tcmd.trace")
	echo "the captures lost $lost events (load $(cut -d' ' -f1-3 /proc/loadavg)): once more with $kb KiB per CPU"
done
[ -z "${KEEP_TRACES:-}" ] || cp "$TEST_TMP"/*.trace "$KEEP_TRACES"/
[ -s "$TEST_TMP/trace.dat" ] || fail "trace-cmd extract wrote no $TEST_TMP/trace.dat"
head -n 3 "$TEST_TMP/tcmd.trace" | cut -c 1-160

# The outer capture runs longer: this filesystem's events before the inner
# one enabled its events or after it stopped (a commit, writeback or inode
# eviction a busy machine delays into that gap) are in it only. It is cut
# to the time of the inner capture's first and last event of this
# filesystem, with 1 ms on either side (each instance stamps an event with
# its own clock read: the times of one event differ a little), the marker
# and header kept; what was cut is said. The workload ends with a second of
# rest, so that nothing of it is left for the gap.
fsid=$(findmnt -no UUID --target "$mnt")
# ts_of: the SECONDS.FRACTION after the [CPU] column (both layouts)
ts_awk='function ts_of(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) return substr($i, 1, length($i) - 1) + 0; return -1 }'
read -r first last < <(awk -v F="$fsid:" "$ts_awk"'
	index($0, F) { t = ts_of(); if (t >= 0) { if (first == "") first = t; last = t } }
	END { printf "%.6f %.6f\n", first, last }' "$TEST_TMP/text.trace")
awk -v first="$first" -v last="$last" -v F="$fsid:" "$ts_awk"'
	/btrfs-space-replay:/ || ts_of() < 0 { print; next }
	{ t = ts_of() }
	t >= first - 0.001 && t <= last + 0.001 { print; next }
	index($0, F) { cut++ }
	END { print cut + 0 > "/dev/stderr" }' "$TEST_TMP/tcmd.trace" > "$TEST_TMP/tcmd.window.trace" 2> "$TEST_TMP/cut" ||
	fail "cannot cut the trace-cmd trace to the inner capture's time"
echo "the trace-cmd trace cut to $first .. $last s (1 ms either side): $(cat "$TEST_TMP/cut") events of this filesystem outside"
mv "$TEST_TMP/tcmd.window.trace" "$TEST_TMP/tcmd.trace"
same_events text "$TEST_TMP/text.trace" trace-cmd "$TEST_TMP/tcmd.trace"

umount "$mnt" || fail "cannot unmount $mnt"
# with the image: the reservation points anchored on its state
a=$(run_check_stdout "$BTRFS_SPACE" --format json replay "$TEST_TMP/text.trace" "$img") || exit
b=$(run_check_stdout "$BTRFS_SPACE" --format json replay "$TEST_TMP/tcmd.trace" "$img") || exit
sum='"\(.trace.lines) lines: \(.preempt.reservations.points) reservation points, \(.delalloc.set_events) delalloc sets in \(.delalloc.cycles) cycles, \(.delayed_refs.heads) ref heads, \(.delayed_refs.data_drop_heads) data drops of \(.delayed_refs.data_drop_bytes) bytes, \(.overcommit.rises) may_use rises"'
echo "tracefs text: $(jq -r "$sum" <<< "$a")"
echo "trace-cmd:    $(jq -r "$sum" <<< "$b")"
# known by construction: every other file removed, each one 16 KiB extent
expect "data drops (trace-cmd layout)" "$(jq .delayed_refs.data_drop_heads <<< "$b")" $((TCMD_FILES / 2))
expect "their bytes" "$(jq .delayed_refs.data_drop_bytes <<< "$b")" $((TCMD_FILES / 2 * 16384))
[ "$(jq .delalloc.set_events <<< "$b")" -gt 0 ] || fail "no delalloc set replayed from the trace-cmd layout"
[ "$(jq .preempt.reservations.points <<< "$b")" -gt 0 ] || fail "no reservation point replayed from the trace-cmd layout"
strip='del(.trace)'
for part in preempt delalloc delayed_refs overcommit; do
	x=$(jq -S ".$part" <<< "$a") y=$(jq -S ".$part" <<< "$b")
	[ "$x" != null ] || fail "no part $part in the replay of the tracefs text"
	[ "$x" = "$y" ] || fail "part $part differs between the layouts: $(diff <(echo "$x") <(echo "$y") | head -n 10)"
	echo "ok: part $part the same from both layouts"
done
[ "$(jq -S "$strip" <<< "$a")" = "$(jq -S "$strip" <<< "$b")" ] ||
	fail "the replays differ outside the trace group: $(diff <(jq -S "$strip" <<< "$a") <(jq -S "$strip" <<< "$b") | head -n 10)"
echo "ok: the whole replay the same but for the trace group"
