#!/bin/bash
# Deleted subvolumes the cleaner has not dropped yet (formulas.md 19.7):
# quotas on, a subvolume changed between 8 read-only snapshots (16 MiB of
# new data each, half of the last copy deleted), every snapshot deleted
# and the filesystem unmounted at once (commit=300: the cleaner is not
# woken), so their ORPHAN_ITEMs stay in the tree root.  inspect offline
# must count what dump-tree -t root lists, print the first screen's line
# for them, and its data figures must be those sysfs showed before the
# unmount (the snapshots' extents still held).  Then mounted again,
# "btrfs subvolume sync" waits for the cleaner: live and offline the count
# is 0, the line gone, and the data headroom grew by what sysfs's data
# bytes_used fell.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount jq truncate
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

trap cleanup_all EXIT
img=$TEST_TMP/del.img
mnt=$TEST_TMP/mnt
truncate -s 1G "$img" || fail "truncate"
dev=$(setup_loop "$img") || exit
run_check mkfs.btrfs -q -f "$dev" > /dev/null
mkdir -p "$mnt"
setup_mount "$dev" "$mnt" -o commit=300
run_check btrfs quota enable "$mnt"
run_check btrfs subvolume create "$mnt/sv" > /dev/null
for i in $(seq 1 8); do
	head -c 16M /dev/urandom > "$mnt/sv/r$i" || fail "write r$i"
	run_check btrfs subvolume snapshot -r "$mnt/sv" "$mnt/snap$i" > /dev/null
	rm -f "$mnt/sv/r$((i - 1))"
done
sync
uuid=$(findmnt -n -o UUID "$mnt" 2>/dev/null) || uuid=$(blkid -s UUID -o value "$dev")
run_check btrfs subvolume delete "$mnt"/snap* > /dev/null
used_before=$(cat "/sys/fs/btrfs/$uuid/allocation/data/bytes_used")
umount "$mnt" || fail "umount"

orphans=$(btrfs inspect-internal dump-tree -t root "$dev" | grep -c 'ORPHAN_ITEM')
[ "$orphans" -gt 0 ] || skip "the cleaner dropped every snapshot before the unmount (timing): nothing pending to check"
run_check_stdout "$BTRFS_SPACE" --format json inspect "$dev" > "$TEST_TMP/before.json" || exit
run_check_stdout "$BTRFS_SPACE" inspect "$dev" > "$TEST_TMP/before.txt" || exit
count=$(jq .summary.deleted_subvolumes "$TEST_TMP/before.json")
used=$(jq .space_info.data.bytes_used "$TEST_TMP/before.json")
echo "pending: dump-tree $orphans ORPHAN_ITEMs, inspect $count; data bytes_used: sysfs $used_before before the unmount, inspect $used"
[ "$count" = "$orphans" ] || fail "inspect counts $count deleted subvolumes, dump-tree lists $orphans"
grep -q "^Deleted subvolumes: $orphans not yet dropped by the cleaner" "$TEST_TMP/before.txt" ||
	fail "no 'Deleted subvolumes: $orphans' line on the first screen"
[ "$used" = "$used_before" ] ||
	fail "data bytes_used $used offline, sysfs said $used_before before the unmount"
h_before=$(jq .summary.space.data.headroom.bytes "$TEST_TMP/before.json")

setup_mount "$dev" "$mnt"
run_check btrfs subvolume sync "$mnt"
sync
used_after=$(cat "/sys/fs/btrfs/$uuid/allocation/data/bytes_used")
run_check_stdout "$BTRFS_SPACE" --format json inspect "$mnt" > "$TEST_TMP/live.json" || exit
[ "$(jq .summary.deleted_subvolumes "$TEST_TMP/live.json")" = 0 ] ||
	fail "live: $(jq .summary.deleted_subvolumes "$TEST_TMP/live.json") deleted subvolumes after the sync"
umount "$mnt" || fail "umount"
run_check_stdout "$BTRFS_SPACE" --format json inspect "$dev" > "$TEST_TMP/after.json" || exit
run_check_stdout "$BTRFS_SPACE" inspect "$dev" > "$TEST_TMP/after.txt" || exit
[ "$(jq .summary.deleted_subvolumes "$TEST_TMP/after.json")" = 0 ] || fail "offline: deleted subvolumes after the sync"
! grep -q '^Deleted subvolumes' "$TEST_TMP/after.txt" || fail "the line stays after the sync"
h_after=$(jq .summary.space.data.headroom.bytes "$TEST_TMP/after.json")
echo "after the sync: data bytes_used $used_before -> $used_after (freed $((used_before - used_after))), headroom $h_before -> $h_after (grew $((h_after - h_before)))"
[ $((h_after - h_before)) = $((used_before - used_after)) ] ||
	fail "the headroom grew by $((h_after - h_before)), the kernel freed $((used_before - used_after))"
echo "deleted subvolumes: $orphans pending counted, 0 after btrfs subvolume sync, headroom grew by the $((used_before - used_after)) bytes freed"
