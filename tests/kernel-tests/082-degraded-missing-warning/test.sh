#!/bin/bash
# A device never given, read with --degraded, against the kernel: a
# two-device RAID1 filesystem mounted -o degraded,ro from its first device
# alone.  The kernel warns "devid 2 uuid U is missing" (read_one_dev() ->
# btrfs_report_missing_device() as add_missing_dev() makes the
# placeholder); the tool, given the first device alone with --degraded,
# must print the same words as one warning line on stderr, and the
# devid and uuid must be the ones in dmesg.
source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space mkfs.btrfs losetup mount umount truncate
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device"
setup_cleanup_trap

a=$TEST_TMP/a.img
b=$TEST_TMP/b.img
truncate -s 1G "$a" "$b" || fail "cannot make the images"
mkfs.btrfs -q -f -d raid1 -m raid1 "$a" "$b" > /dev/null || fail "mkfs.btrfs failed"
mnt=$TEST_TMP/mnt
mkdir -p "$mnt"

# the kernel: only the first device on a loop device (the second is never
# scanned: a plain file), mounted degraded
dev=$(setup_loop "$a") || exit
echo "btrfs-space test 082: degraded,ro" > /dev/kmsg
mount -t btrfs -o degraded,ro "$dev" "$mnt" || fail "mount -o degraded,ro of one RAID1 device refused"
register_mount "$mnt"
kernel=$(dmesg | awk '/btrfs-space test 082:/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' |
	grep -o 'devid [0-9]* uuid [0-9a-f-]* is missing' | head -1)
[ -n "$kernel" ] || fail "the kernel did not warn of the missing device (dmesg: $(dmesg | tail -5))"
umount "$mnt" || fail "umount"
echo "kernel: $kernel"

"$BTRFS_SPACE" --degraded inspect "$a" > "$TEST_TMP/out" 2> "$TEST_TMP/err" ||
	fail "btrfs-space --degraded inspect of one RAID1 device failed: $(cat "$TEST_TMP/err")"
cat "$TEST_TMP/err"
grep -qxF "WARNING: $kernel" "$TEST_TMP/err" ||
	fail "the tool does not warn '$kernel' as the kernel does"
[ "$(grep -cF "is missing" "$TEST_TMP/err")" = 1 ] || fail "the missing device is warned of more than once"
