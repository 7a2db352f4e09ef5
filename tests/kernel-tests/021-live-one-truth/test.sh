#!/bin/bash
# Live mode tells one truth: every section of "inspect MOUNTPOINT" is the
# kernel's accounting of one moment, a live run never calls a filesystem
# being written corrupt, and an offline read of a mounted device says so.
#
# (a) A read-write mount with dirty data (a 100 MiB file written without
#     sync, so delalloc holds data and metadata reservations): the live
#     report's space_info (every sysfs file of every type), global_rsv_size
#     and global_rsv_reserved equal /sys/fs/btrfs/UUID/allocation/ read just
#     before and just after the run (tried again, up to 5 times, when the
#     two reads differ); the preempt section's bytes_may_use is the metadata
#     bytes_may_use of that same report, the over-commit free_chunk_space
#     the devices' unallocated bytes of it; "mode" is "live" and the text
#     heading says "live". Offline, after unmount: "mode" is "image" and
#     the heading says "right after mount".
# (b) 50 live runs while one process writes small files and commits (sync)
#     in a loop and another rebalances the metadata in a loop: every run
#     exits 0 with a live JSON report; the runs whose mount estimate had to
#     start over, and those that found it unavailable, are counted. Then 10
#     runs with each block-device read slowed by 40 ms (slow-reads.c), where
#     commits do land during the replay: they too exit 0.
# (c) The loop device read offline while it is mounted, and the image file
#     behind it, print one warning naming the mount point (run before (b),
#     once the generation has settled: an offline read of a filesystem being
#     committed races like any reader of the disk); after unmount, and for an
#     image never mounted, no warning. Exit status 0 throughout.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space mkfs.btrfs btrfs losetup mount umount jq truncate
need_btrfs_module

img="$TEST_TMP/one-truth.img"
other="$TEST_TMP/never-mounted.img"
mnt="$TEST_TMP/mnt"
out="$TEST_TMP/out"
mkdir -p "$mnt" "$out" || fail "cannot create $mnt, $out"

# the writers of (b) stop before the mount is undone
writers=()
stop_writers()
{
	local pid
	for pid in "${writers[@]}"; do
		kill "$pid" 2> /dev/null
		wait "$pid" 2> /dev/null
	done
	writers=()
}
trap 'stop_writers; cleanup_all' EXIT

truncate -s 1G "$img" "$other" || fail "cannot create the images"
for f in "$img" "$other"; do
	mkfs.btrfs -q -f "$f" > "$out/mkfs.log" 2>&1 ||
		fail "mkfs.btrfs $f failed: $(tail -n 1 "$out/mkfs.log")"
done
dev=$(losetup -f --show "$img" 2> "$out/losetup.log") ||
	skip "cannot attach a loop device: $(tail -n 1 "$out/losetup.log")"
register_loop "$dev"
mount -t btrfs "$dev" "$mnt" 2> "$out/mount.log" ||
	skip "cannot mount btrfs on a loop device: $(tail -n 1 "$out/mount.log")"
register_mount "$mnt"

errors=0
mismatch()
{
	echo "MISMATCH $*"
	errors=$((errors + 1))
}

# --- (a) one snapshot, with dirty data ---------------------------------------

head -c $((100 * 1024 * 1024)) /dev/urandom > "$mnt/pending" || fail "cannot write $mnt/pending"
fsid=$(jq -r .filesystem.fsid <(run_check_stdout "$BTRFS_SPACE" --format json inspect "$mnt")) ||
	fail "no fsid in the live report"
sysfs="/sys/fs/btrfs/$fsid/allocation"
[ -d "$sysfs" ] || fail "no $sysfs"

fields="total_bytes bytes_used bytes_readonly bytes_zone_unusable bytes_may_use bytes_pinned bytes_reserved disk_total disk_used chunk_size"

# sysfs_snapshot: "type.field value" for every file the report mirrors
sysfs_snapshot()
{
	local t f
	echo "global_rsv_size $(cat "$sysfs/global_rsv_size")"
	echo "global_rsv_reserved $(cat "$sysfs/global_rsv_reserved")"
	for t in data metadata system mixed; do
		[ -d "$sysfs/$t" ] || continue
		for f in $fields; do
			[ -f "$sysfs/$t/$f" ] && echo "$t.$f $(cat "$sysfs/$t/$f")"
		done
	done
}

# report_snapshot JSON: the same lines from the live report
report_snapshot()
{
	jq -r --arg fields "$fields" '
		"global_rsv_size \(.global_rsv_size)",
		"global_rsv_reserved \(.global_rsv_reserved)",
		(.space_info | to_entries[] | .key as $t | .value as $v |
		 ($fields | split(" "))[] | "\($t).\(.) \($v[.])")' "$1"
}

agreed=
for try in 1 2 3 4 5; do
	sysfs_snapshot > "$out/sysfs-before"
	run_check_stdout "$BTRFS_SPACE" --format json inspect "$mnt" > "$out/live.json"
	sysfs_snapshot > "$out/sysfs-after"
	if cmp -s "$out/sysfs-before" "$out/sysfs-after"; then
		agreed=$try
		break
	fi
done
[ -n "$agreed" ] || fail "sysfs changed across each of 5 runs: the figures could not be pinned down"
report_snapshot "$out/live.json" | sort > "$out/report-lines"
sort "$out/sysfs-after" > "$out/sysfs-lines"
# chunk_size is missing from sysfs before 6.0: compare only the lines sysfs has
if join -j 1 -o 1.1,1.2,2.2 "$out/sysfs-lines" "$out/report-lines" |
		awk '$2 != $3 { print; bad = 1 } END { exit bad }' &&
		[ "$(wc -l < "$out/sysfs-lines")" = "$(join -j 1 "$out/sysfs-lines" "$out/report-lines" | wc -l)" ]; then
	echo "match space_info and global reserve = sysfs ($(wc -l < "$out/sysfs-lines") files, run $agreed)"
else
	mismatch "space_info/global reserve differ from sysfs:"
	diff "$out/sysfs-lines" "$out/report-lines" | head -n 20
fi

j() { jq -r "$1" "$out/live.json"; }
meta=$(j 'if .space_info.mixed then "mixed" else "metadata" end')
may_use=$(j ".space_info.$meta.bytes_may_use")
rsv=$(j .global_rsv_reserved)
[ "$(j .preempt.bytes_may_use)" = "$may_use" ] && echo "match preempt.bytes_may_use = space_info.$meta.bytes_may_use $may_use" ||
	mismatch "preempt.bytes_may_use $(j .preempt.bytes_may_use) != space_info.$meta.bytes_may_use $may_use"
unalloc=$(j '[.devices[] | select(.missing | not) | .unallocated] | add')
[ "$(j .overcommit.free_chunk_space)" = "$unalloc" ] && echo "match overcommit.free_chunk_space = devices' unallocated $unalloc" ||
	mismatch "overcommit.free_chunk_space $(j .overcommit.free_chunk_space) != devices' unallocated $unalloc"
[ "$(j .mode)" = live ] && echo "match mode live" || mismatch "live mode is \"$(j .mode)\""
if [ "$may_use" -gt "$rsv" ]; then
	echo "note: delalloc held: metadata bytes_may_use $may_use > global reserve $rsv"
else
	echo "note: metadata bytes_may_use $may_use is only the global reserve: delalloc was flushed before the run"
fi
run_check_stdout "$BTRFS_SPACE" inspect "$mnt" > "$out/live.txt"
grep -q '^Space info (live, sysfs allocation/ now):' "$out/live.txt" && echo "match text heading live" ||
	mismatch "live text heading: $(grep '^Space info' "$out/live.txt")"

# --- (c) offline read of a mounted device -----------------------------------

# An offline read of a mounted filesystem races with its commits like any
# reader of the disk: let the delalloc of (a) reach the disk and the
# generation settle first.
sync
super_gen() { btrfs inspect-internal dump-super "$dev" 2> /dev/null | awk '$1 == "generation" { print $2 }'; }
for try in $(seq 1 10); do
	g=$(super_gen)
	sleep 1
	[ "$g" = "$(super_gen)" ] && break
done
# warned CMD...: the "is mounted at" warning lines of an offline run
warned()
{
	run_check_stdout "$BTRFS_SPACE" "$@" > /dev/null 2> "$out/offline.err"
	grep -c "is mounted at $mnt: this reads its last commit on disk" "$out/offline.err"
}
n=$(warned inspect "$dev")
[ "$n" = 1 ] && echo "match mounted $dev: one warning" || mismatch "mounted $dev: $n warning lines: $(cat "$out/offline.err")"
n=$(warned inspect "$img")
[ "$n" = 1 ] && grep -q "(on $dev)" "$out/offline.err" && echo "match mounted image behind $dev: one warning" ||
	mismatch "mounted image: $n warning lines: $(cat "$out/offline.err")"
n=$(warned --format json block-groups "$dev")
[ "$n" = 1 ] && echo "match mounted $dev, block-groups: one warning" || mismatch "block-groups $dev: $n warning lines"


# --- (b) 50 live runs while the filesystem is written and committed ---------

(
	n=0
	while :; do
		n=$((n + 1))
		mkdir -p "$mnt/w$((n % 4))"
		for i in $(seq 1 100); do echo "$i" > "$mnt/w$((n % 4))/f$i.$n"; done
		rm -rf "$mnt/w$(((n + 2) % 4))"
		sync -f "$mnt/"
	done
) > /dev/null 2>&1 &
writers+=($!)
(
	while :; do btrfs balance start -m "$mnt" > /dev/null 2>&1; done
) &
writers+=($!)

gen0=$(jq .filesystem.generation "$out/live.json")
failed=0 retried=0 unavailable=0
for i in $(seq 1 50); do
	if ! run_mayfail "$BTRFS_SPACE" --format json inspect "$mnt" > "$out/run.json" 2> "$out/run.err"; then
		failed=$((failed + 1))
		echo "run $i failed: $(tail -n 1 "$out/run.err")"
		continue
	fi
	[ "$(jq -r .mode "$out/run.json")" = live ] || { failed=$((failed + 1)); echo "run $i: no live report"; }
	[ "$(jq .mount_estimate.attempts "$out/run.json")" = 1 ] || retried=$((retried + 1))
	[ "$(jq .mount_estimate.available "$out/run.json")" = true ] || unavailable=$((unavailable + 1))
done
gen1=$(jq .filesystem.generation "$out/run.json" 2> /dev/null)

# The same with every block-device read slowed (slow-reads.c, LD_PRELOAD),
# so that commits land during the replay and the retry path runs; the runs
# must still exit 0. Not under $INSTRUMENT nor a sanitizer build, whose
# runtimes must come first.
slow_failed=0 slow_retried=0 slow_unavailable=0 slow_runs=0
so="$TEST_TMP/slow-reads.so"
if [ -z "$INSTRUMENT" ] && ! ldd "$BTRFS_SPACE" 2> /dev/null | grep -q -e libasan -e libubsan &&
		cc -shared -fPIC -O2 -o "$so" "$TEST_TOP/kernel-tests/021-live-one-truth/slow-reads.c" -ldl \
			2> "$out/cc.log"; then
	for i in $(seq 1 10); do
		slow_runs=$i
		if ! env SLOW_READS_MS=40 LD_PRELOAD="$so" "$BTRFS_SPACE" --format json inspect "$mnt" \
				> "$out/run.json" 2> "$out/run.err"; then
			slow_failed=$((slow_failed + 1))
			echo "slowed run $i failed: $(tail -n 1 "$out/run.err")"
			continue
		fi
		[ "$(jq .mount_estimate.attempts "$out/run.json")" = 1 ] || slow_retried=$((slow_retried + 1))
		[ "$(jq .mount_estimate.available "$out/run.json")" = true ] ||
			slow_unavailable=$((slow_unavailable + 1))
	done
	echo "$slow_runs live runs with 40 ms per device read: $slow_failed failed, $slow_retried retried the mount estimate, $slow_unavailable without one"
else
	echo "note: slowed runs not made (instrumented or sanitizer build, or no cc: $(tail -n 1 "$out/cc.log" 2> /dev/null))"
fi
stop_writers
btrfs balance cancel "$mnt" > /dev/null 2>&1
echo "50 live runs under writes: $failed failed, $retried retried the mount estimate, $unavailable without one; generation $gen0 -> ${gen1:-?}"
[ "$failed" = 0 ] || mismatch "$failed of 50 live runs failed while the filesystem was written"
[ "$slow_failed" = 0 ] || mismatch "$slow_failed of $slow_runs slowed live runs failed"

# --- (c) continued: nothing to warn about once unmounted ---------------------

umount "$mnt" || fail "umount $mnt failed"
# quiet FILE: no line of the tool's stderr besides the logged command lines
quiet() { ! grep -v '^####### ' "$1" | grep -q .; }
run_check_stdout "$BTRFS_SPACE" --format json inspect "$img" > "$out/offline.json" 2> "$out/offline.err"
quiet "$out/offline.err" || mismatch "unmounted $img (still on $dev) warns: $(grep -v '^#' "$out/offline.err")"
run_check_stdout "$BTRFS_SPACE" inspect "$dev" > "$out/offline.txt" 2> "$out/offline.err"
quiet "$out/offline.err" || mismatch "unmounted $dev warns: $(grep -v '^#' "$out/offline.err")"
run_check_stdout "$BTRFS_SPACE" inspect "$other" > /dev/null 2> "$out/offline.err"
quiet "$out/offline.err" || mismatch "never-mounted image warns: $(grep -v '^#' "$out/offline.err")"
echo "checked no warning once unmounted, nor for an image never mounted"
[ "$(jq -r .mode "$out/offline.json")" = image ] && echo "match offline mode image" ||
	mismatch "offline mode is \"$(jq -r .mode "$out/offline.json")\""
grep -q '^Space info (sysfs allocation/, right after mount):' "$out/offline.txt" &&
	echo "match offline text heading right after mount" ||
	mismatch "offline text heading: $(grep '^Space info' "$out/offline.txt")"

[ "$errors" = 0 ] || fail "$errors check(s) failed"
exit 0
