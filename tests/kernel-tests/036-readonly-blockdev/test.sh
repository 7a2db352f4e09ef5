#!/bin/bash
# A read-only block device (losetup -r): the kernel opens it without
# BTRFS_DEV_STATE_WRITEABLE (btrfs_open_one_device(): bdev_read_only()),
# so every block group on it is read-only and sysfs shows bytes_readonly
# of all of them.  btrfs-space given the device must say so (one WARNING)
# and print the space infos a "mount -o ro" of it shows: every field of
# /sys/fs/btrfs/FSID/allocation/ equal (before: modelled as writeable,
# bytes_readonly 0 for data and system).

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq tar xz jq losetup mkfs.btrfs blkid
need_root
need_btrfs_module
setup_cleanup_trap

img=$TEST_TMP/ro.img
truncate -s 1G "$img"
mkfs.btrfs -q -f "$img" > /dev/null 2>&1 || fail "mkfs.btrfs failed"
dev=$(losetup -r -f --show "$img") || fail "losetup -r failed"
register_loop "$dev"
[ "$(blockdev --getro "$dev")" = 1 ] || fail "$dev is not read-only"

err=$("$BTRFS_SPACE" --format json inspect "$dev" 2>&1 > "$TEST_TMP/ro.json")
rc=$?
echo "tool: exit $rc: $err"
[ "$rc" -eq 0 ] || fail "btrfs-space failed on the read-only device"
grep -q "^WARNING: $dev (devid 1) is a read-only block device: .* modelled as --readonly-device 1$" <<< "$err" ||
	fail "no WARNING about the read-only device"

setup_mount "$dev" "$TEST_TMP/mnt" -t btrfs -o ro
fsid=$(blkid -s UUID -o value "$dev")
allocation_keys "$fsid" | sort > "$TEST_TMP/kernel.txt"
report_allocation_keys < "$TEST_TMP/ro.json" | sort > "$TEST_TMP/tool.txt"
diff "$TEST_TMP/kernel.txt" "$TEST_TMP/tool.txt" || fail "the space infos differ from sysfs (<: kernel, >: tool)"
echo "read-only block device: $(wc -l < "$TEST_TMP/kernel.txt") allocation fields equal sysfs"
