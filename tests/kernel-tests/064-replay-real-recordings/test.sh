#!/bin/bash
# "btrfs-space replay" of recordings as a user makes them: the default event
# set of contrib/btrfs-space-capture.sh, then the capture marker taken out
# (a trace-cmd or hand-made tracefs recording has none), on filesystems
# this test makes:
#
# A. a full 1 GiB filesystem: data until no chunk space is left, then a
#    writer of small files with a 1000-byte xattr until ENOSPC for
#    FULL_SECONDS (default 6), every tenth file with 4 KiB of data (32 MiB of
#    data space freed for them). Without the marker and without the device,
#    every part the trace allows is replayed and part 3 is skipped with a
#    note naming the csum size and the free-space-tree flag (not refused);
#    with the facts as options (--metadata-copies, --csum-size,
#    --free-space-tree, --sectorsize, --nodesize) or with the device, all
#    four parts replay, and the options give the same part 3 as the device.
#    A part the recording kernel gave nothing to (0 decision states) says so.
# B. rm of a 32 MiB file (8 extents of 4 MiB, between 600 small files: a
#    tree of several leaves) whose leaf a snapshot shares, then a commit: every dropped data ref is cancelled by the ref
#    the copy of the shared leaf added first (update_ref_for_cow()), so the
#    csum net rise is 0 where the gross charge of the dropping heads is not;
#    the same rm without a snapshot: a csum net rise of one leaf per extent
#    (8 x 4 MiB of crc32c fit one leaf each), nothing released.
# On a busy machine a capture that lost events runs once more with a larger
# buffer (tests/common capture_retry), then the test skips saying why.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space
check_prereq mkfs.btrfs btrfs losetup mount umount mountpoint jq truncate fallocate findmnt python3 dd setfattr
need_btrfs_module
need_tracefs

: "${FULL_SECONDS:=6}"

need_capture
setup_cleanup_trap

# the facts the marker carried, as options
facts="--metadata-copies 2 --csum-size 4 --free-space-tree 1 --sectorsize 4096 --nodesize 16384"

# --- A. the full filesystem ------------------------------------------------------------

new_btrfs_mount 1G full
n=0
while fallocate -l 32M "$mnt/data$n" 2> /dev/null; do n=$((n + 1)); done
while fallocate -l 1M "$mnt/small$n" 2> /dev/null; do n=$((n + 1)); done
# 32 MiB inside the data chunks for the writer's data, no chunk space
rm -f "$mnt/data0"
sync
echo "A: $n data files: no chunk space left, 32 MiB of data space"
cat > "$TEST_TMP/xattrs.py" <<'EOS'
# xattrs.py DIR SECONDS: files with a 1000-byte xattr, every tenth with 4 KiB
# of data (delalloc), until ENOSPC or SECONDS
import errno, os, sys, time
d, end, i = sys.argv[1], time.time() + float(sys.argv[2]), 0
os.makedirs(d, exist_ok=True)
while time.time() < end:
    p = os.path.join(d, "f%d" % i)
    i += 1
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
        if i % 10 == 1:
            os.write(fd, b"d" * 4096)
        os.close(fd)
        os.setxattr(p, "user.pad", b"x" * 1000)
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        break
print("%d files" % i)
EOS
round=0
reset_a() { round=$((round + 1)); }
capture_retry 65536 "$TEST_TMP/full.marker.trace" reset_a "$mnt" \
	python3 "$TEST_TMP/xattrs.py" "$mnt/x$round" "$FULL_SECONDS"
grep -q "btrfs-space-replay:" "$TEST_TMP/full.marker.trace" || fail "A: no capture marker to take out"
grep -v "btrfs-space-replay:" "$TEST_TMP/full.marker.trace" > "$TEST_TMP/full.trace"
# other filesystems at work meanwhile are in the trace too: without the
# marker, --fsid chooses (with the device, the device does)
fs=$(findmnt -no UUID --target "$mnt")
umount "$mnt" || fail "cannot unmount $mnt"
[ -z "${KEEP_TRACES:-}" ] || cp "$TEST_TMP/full.trace" "$KEEP_TRACES"/

# without the marker nor the device: parts 1, 2 and 4 need the profile
# (given), part 3 is skipped with a note
out=$(run_check_stdout "$BTRFS_SPACE" --format json replay --fsid "$fs" --metadata-copies 2 \
	"$TEST_TMP/full.trace" 2> "$TEST_TMP/a.err") || fail "A: $(tail -n 2 "$TEST_TMP/a.err")"
cat "$TEST_TMP/a.err"
grep -q "NOTE: part 3 (delayed refs of dropped data extents) skipped: the csum size, the free-space-tree flag, the sector size and the node size not known" "$TEST_TMP/a.err" ||
	fail "A: part 3 not skipped with its note: $(cat "$TEST_TMP/a.err")"
expect "A: capture marker" "$(jq .trace.capture_marker <<< "$out")" false
expect "A: part 3 left out" "$(jq .delayed_refs <<< "$out")" null
[ "$(jq .delalloc.set_events <<< "$out")" -gt 0 ] || fail "A: part 2 replayed no set"
[ "$(jq .overcommit.rises <<< "$out")" -ge 0 ] || fail "A: no part 4"
echo "A: parts 1, 2, 4 replayed without the marker: $(jq -c '{states: .preempt.states, points: .preempt.reservations.points, sets: .delalloc.set_events, rises: .overcommit.rises}' <<< "$out")"
if [ "$(jq .preempt.states <<< "$out")" = 0 ]; then
	jq -r .preempt.states_note <<< "$out" | grep -q "never reached a decision point" ||
		fail "A: 0 decision states without saying why"
	echo "ok: 0 decision states: $(jq -r .preempt.states_note <<< "$out")"
fi
# a part asked for without its facts is refused, naming them
run_mustfail "A: --part 3 without the facts" "$BTRFS_SPACE" replay --fsid "$fs" --part 3 "$TEST_TMP/full.trace"
# the facts as options, then the device: all four parts, part 3 the same
o=$(run_check_stdout "$BTRFS_SPACE" --format json replay --fsid "$fs" $facts "$TEST_TMP/full.trace") || exit
d=$(run_check_stdout "$BTRFS_SPACE" --format json replay "$TEST_TMP/full.trace" "$TEST_TMP/full.img") || exit
for part in preempt delalloc delayed_refs overcommit; do
	[ "$(jq ".$part" <<< "$d")" != null ] || fail "A: no part $part with the device"
done
[ "$(jq -S .delayed_refs <<< "$o")" = "$(jq -S .delayed_refs <<< "$d")" ] ||
	fail "A: part 3 from the options differs from the device's: $(diff <(jq -S .delayed_refs <<< "$o") <(jq -S .delayed_refs <<< "$d") | head -n 6)"
echo "ok: A: all four parts with the options or the device; part 3 the same from both ($(jq -c '.delayed_refs | {heads, data_drop_heads, csum_net_rise, net_size_rise, peak_outstanding}' <<< "$d"))"

# --- B. rm of a file a snapshot shares ---------------------------------------------------

# snap_case NAME SNAPSHOT(yes|no): a fresh filesystem with sv/f (8 extents of
# 4 MiB), a snapshot of sv or not; the rm of sv/f and a commit recorded;
# the replay's JSON of part 3 without the marker, with the device, in $out
snap_case()
{
	local name=$1 snap=$2
	new_btrfs_mount 1G "$name"
	btrfs -q subvolume create "$mnt/sv" > /dev/null || fail "$name: subvolume create"
	# 300 files of 8 KiB before and after f: a tree of several leaves under
	# a root node, so the snapshot shares f's leaf (not only a root copy)
	for ((k = 0; k < 300; k++)); do head -c 8192 /dev/urandom > "$mnt/sv/a$k"; done
	for ((k = 0; k < 8; k++)); do
		dd if=/dev/urandom of="$mnt/sv/f" bs=4M count=1 seek=$k conv=notrunc,fsync status=none ||
			fail "$name: cannot write sv/f"
	done
	for ((k = 0; k < 300; k++)); do head -c 8192 /dev/urandom > "$mnt/sv/b$k"; done
	[ "$snap" = no ] || btrfs -q subvolume snapshot "$mnt/sv" "$mnt/snap" > /dev/null ||
		fail "$name: snapshot"
	btrfs filesystem sync "$mnt" || fail "$name: sync"
	umount "$mnt" || fail "$name: umount"
	cp --sparse=always "$img" "$TEST_TMP/$name.pre.img" || fail "$name: copy"
	setup_mount "$dev" "$mnt" -t btrfs -o rw
	reset_b()
	{
		umount "$mnt" &&
			dd if="$TEST_TMP/$name.pre.img" of="$dev" bs=1M conv=fsync status=none &&
			setup_mount "$dev" "$mnt" -t btrfs -o rw
	}
	capture_retry 65536 "$TEST_TMP/$name.marker.trace" reset_b "$mnt" \
		bash -c "rm '$mnt/sv/f' && btrfs filesystem sync '$mnt'"
	grep -v "btrfs-space-replay:" "$TEST_TMP/$name.marker.trace" > "$TEST_TMP/$name.trace"
	fs=$(findmnt -no UUID --target "$mnt")
	umount "$mnt" || fail "$name: umount"
	out=$(run_check_stdout "$BTRFS_SPACE" --format json replay --part 3 \
		"$TEST_TMP/$name.trace" "$TEST_TMP/$name.pre.img") || exit
	echo "$name: $(jq -c '.delayed_refs | {data_drop_heads, size_rise, csum_charged, csum_released, csum_net_rise, data_ref_nodes, tree_ref_nodes, tree_ref_rise, net_size_rise, peak_outstanding}' <<< "$out")"
}

snap_case snaprm yes
[ -z "${KEEP_TRACES:-}" ] || cp "$TEST_TMP/snaprm.trace" "$KEEP_TRACES"/
# every dropped extent: 8 data extents of 4 MiB, their heads gained a ref first
[ "$(jq .delayed_refs.data_ref_nodes <<< "$out")" -ge 16 ] ||
	fail "B: fewer than 16 data ref nodes (an add and a drop per extent)"
expect "B: snapshot rm: csum net rise" "$(jq .delayed_refs.csum_net_rise <<< "$out")" 0
[ "$(jq .delayed_refs.tree_ref_nodes <<< "$out")" -gt 0 ] || fail "B: no tree-block ref node"
[ "$(jq .delayed_refs.peak_outstanding <<< "$out")" -gt 0 ] || fail "B: no peak outstanding"
o=$(run_check_stdout "$BTRFS_SPACE" --format json replay --fsid "$fs" --part 3 $facts "$TEST_TMP/snaprm.trace") || exit
[ "$(jq -S .delayed_refs <<< "$o")" = "$(jq -S .delayed_refs <<< "$out")" ] ||
	fail "B: the options and the device give another part 3"
echo "ok: B: the snapshot's rm replayed without the marker: csum net 0, the options the same as the device"

snap_case plainrm no
expect "B: plain rm: dropped data heads" "$(jq .delayed_refs.data_drop_heads <<< "$out")" 8
expect "B: plain rm: csum released" "$(jq .delayed_refs.csum_released <<< "$out")" 0
# 8 heads of 4 MiB, one csum leaf each: the csum part of the gross charge
one=$(jq '.delayed_refs.csum_charged / 8' <<< "$out")
[ "$one" -gt 0 ] || fail "B: plain rm: no csum charge"
expect "B: plain rm: csum net rise = charged" "$(jq .delayed_refs.csum_net_rise <<< "$out")" "$(jq .delayed_refs.csum_charged <<< "$out")"
