#!/bin/bash
# Live mode, data written but not yet committed (formulas.md 21.4, "Live
# mode"): a monitoring check that runs between two commits must see it.
# The kernel holds such data in bytes_may_use (delalloc), bytes_reserved
# (extent allocated) and bytes_used (written), while the block group items
# the tool reads only change at the commit.  1 GiB single/DUP on a loop
# device, mounted with commit=300 so no periodic commit lands: 880 MiB are
# written without sync, then "inspect --format nagios MNT" must say
# CRITICAL (exit 2) and the data headroom must be what dd can still write
# before ENOSPC, within 8 MiB.  Before, the check read the last commit: OK
# with 948 MiB of headroom one second before ENOSPC.  Another task's sync
# commits the filesystem: then the block groups hold the data and the
# check holds as well.  About 20 s.
source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space mkfs.btrfs losetup mount umount jq truncate dd
need_btrfs_module

dir=$TEST_TMP/live-data
mnt=$dir/mnt
mkdir -p "$mnt" || fail "mkdir $mnt"
img=$dir/dev0.img
truncate -s 1G "$img" || fail "truncate"
mkfs.btrfs -q -f -d single -m dup "$img" > /dev/null 2>&1 || fail "mkfs.btrfs"
dev=$(setup_loop "$img") || exit
mount -t btrfs -o commit=300 "$dev" "$mnt" 2> "$dir/mount.log" ||
	skip "cannot mount btrfs on a loop device: $(tail -n 1 "$dir/mount.log")"
register_mount "$mnt"

dd if=/dev/zero of="$mnt/f0" bs=1M count=880 status=none || fail "dd of 880 MiB"
"$BTRFS_SPACE" inspect --format nagios "$mnt" > "$dir/nagios.txt"
rc=$?
"$BTRFS_SPACE" --format json inspect "$mnt" > "$dir/inspect.json" || fail "inspect --format json"
sed 's/^/    | /' "$dir/nagios.txt"
head=$(jq '.summary.space.data.headroom.bytes' "$dir/inspect.json")
dd if=/dev/zero of="$mnt/f1" bs=1M status=none 2> "$dir/dd.err"
grep -q 'No space left on device' "$dir/dd.err" || fail "the second dd ended without ENOSPC: $(cat "$dir/dd.err")"
sync
wrote=$(stat -c %s "$mnt/f1")
echo "    headroom $head, the kernel wrote $wrote more before ENOSPC"
[ "$rc" = 2 ] && grep -q '^BTRFS-SPACE CRITICAL - ' "$dir/nagios.txt" ||
	fail "880 MiB written on 1 GiB: nagios exits $rc, not 2 (CRITICAL)"
diff=$((head > wrote ? head - wrote : wrote - head))
[ "$diff" -le $((8 * 1024 * 1024)) ] ||
	fail "data headroom $head, but the kernel wrote $wrote before ENOSPC"
