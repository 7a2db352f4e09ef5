#!/bin/bash
# A device claiming another's devid, against the kernel: a two-device
# RAID1 filesystem (mkfs.btrfs, its own fsid) and a copy of its second
# device whose superblock says devid 1 (tests/common-mutate.py
# dev-item-devid=1), keeping its own device uuid.  The kernel tells
# devices apart by devid and uuid (device_list_add(), read_one_chunk()):
#   - the claimant alone, -o degraded,ro: devid 1 (the first device's uuid)
#     and devid 2 are missing, every copy of the chunk root is on them:
#     "failed to read chunk root" (the tool: exit 1, those words; main said
#     "bad tree block start": it read the claimant as devid 1);
#   - the first device and the claimant, -o degraded,ro (either order):
#     mounted, devid 2 missing, the claimant dropped
#     (btrfs_free_extra_devids()); every allocation field of sysfs must be
#     the tool's (main refused: "devid 1 was already given");
#   - the same without degraded: refused, "devid 2 uuid U is missing".
source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space mkfs.btrfs btrfs losetup mount umount jq python3 findmnt truncate
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device"
setup_cleanup_trap

a=$TEST_TMP/a.img
b=$TEST_TMP/b.img
claims=$TEST_TMP/claims.img
truncate -s 1G "$a" "$b" || fail "cannot make the images"
mkfs.btrfs -q -f -d raid1 -m raid1 "$a" "$b" > /dev/null || fail "mkfs.btrfs failed"
cp --sparse=always "$b" "$claims" || fail "cannot copy $b"
python3 "$TEST_TOP/common-mutate.py" "$claims" dev-item-devid=1 || fail "cannot change the devid"
uuid2=$(btrfs inspect-internal dump-super "$b" | awk '$1 == "dev_item.uuid" { print $2 }')
mnt=$TEST_TMP/mnt
mkdir -p "$mnt"
failed=

# kernel_mount OPTS IMG...: sparse copies on loop devices, the first mounted with
# device= for all; prints "mounted FSID" or "refused", dmesg's BTRFS lines in $TEST_TMP/dmesg
kernel_mount()
{
	local opts=$1 f n=0 devs=() dev
	shift
	for f in "$@"; do
		cp --sparse=always "$f" "$TEST_TMP/m$n.img" || fail "cannot copy $f"
		dev=$(setup_loop "$TEST_TMP/m$n.img") || exit 1
		devs+=("$dev")
		n=$((n + 1))
	done
	echo "btrfs-space test 039: $opts $*" > /dev/kmsg
	if mount -t btrfs -o "$opts$(printf ',device=%s' "${devs[@]}")" "${devs[0]}" "$mnt" 2> /dev/null; then
		register_mount "$mnt"
		echo "mounted $(findmnt -n -o UUID "$mnt")"
	else
		echo refused
	fi
	dmesg | awk '/btrfs-space test 039:/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' |
		grep 'BTRFS' > "$TEST_TMP/dmesg"
}

unmount_all()
{
	umount "$mnt" 2> /dev/null
	for dev in $(losetup -j "$TEST_TMP/m0.img" -O NAME -n) $(losetup -j "$TEST_TMP/m1.img" -O NAME -n); do
		btrfs device scan --forget "$dev" > /dev/null 2>&1
		losetup -d "$dev"
	done
}

# the claimant alone, degraded
k=$(kernel_mount degraded,ro "$claims")
[ "$k" = refused ] && grep -q "failed to read chunk root" "$TEST_TMP/dmesg" ||
	echo "note: the kernel: $k, $(tr '\n' '|' < "$TEST_TMP/dmesg")"
unmount_all
"$BTRFS_SPACE" --degraded inspect "$claims" > /dev/null 2> "$TEST_TMP/err"
rc=$?
[ "$rc" = 1 ] && grep -q "^ERROR: failed to read chunk root" "$TEST_TMP/err" ||
	failed="$failed claimant-alone:exit-$rc:$(head -1 "$TEST_TMP/err")"

# the first device and the claimant, degraded, in both orders
for order in "$a $claims" "$claims $a"; do
	k=$(kernel_mount degraded,ro $order)
	case $k in
	mounted*) ;;
	*) unmount_all; fail "the kernel refused $order -o degraded: $(tr '\n' '|' < "$TEST_TMP/dmesg")" ;;
	esac
	fsid=${k#mounted }
	"$BTRFS_SPACE" --degraded --format json inspect $order > "$TEST_TMP/tool.json" 2> "$TEST_TMP/err" ||
		failed="$failed pair($order):$(head -1 "$TEST_TMP/err")"
	for t in data metadata system; do
		for f in total_bytes bytes_used bytes_pinned bytes_may_use bytes_readonly bytes_reserved disk_total disk_used; do
			kv=$(cat "/sys/fs/btrfs/$fsid/allocation/$t/$f")
			tv=$(jq ".space_info.$t.$f" "$TEST_TMP/tool.json" 2> /dev/null)
			[ "$kv" = "$tv" ] || failed="$failed $t.$f:kernel=$kv,tool=$tv"
		done
	done
	grep -q "^WARNING: .*claims.img: devid 1 with device uuid .*not used" "$TEST_TMP/err" ||
		failed="$failed pair($order):no-warning"
	unmount_all
done

# the same without degraded
k=$(kernel_mount ro "$a" "$claims")
unmount_all
[ "$k" = refused ] || fail "the kernel mounted the pair without degraded"
grep -q "devid 2 uuid $uuid2 is missing" "$TEST_TMP/dmesg" ||
	echo "note: the kernel said: $(tr '\n' '|' < "$TEST_TMP/dmesg")"
"$BTRFS_SPACE" inspect "$a" "$claims" > /dev/null 2> "$TEST_TMP/err"
rc=$?
[ "$rc" = 1 ] && grep -q "^ERROR: devid 2 uuid $uuid2 is missing" "$TEST_TMP/err" ||
	failed="$failed pair-not-degraded:exit-$rc:$(head -1 "$TEST_TMP/err")"

[ -z "$failed" ] || fail "the tool disagrees with the kernel:$failed"
exit 0
