#!/bin/bash
# A device remove that aborts the transaction (formulas.md 21.13): a RAID1
# of 1, 2 and 4 GiB filled to ENOSPC, then emptied to 1.6 GiB of data in
# partly used block groups.  Removing devid 2 relocates its data groups
# and then the only metadata group: btrfs_inc_block_group_ro() lets it go
# read-only (over-commit counts devid 3's unallocated space, which no
# RAID1 chunk can use beside a full devid 1), metadata has no free byte
# besides it, and the next commit's delayed refs abort with -ENOSPC: the
# kernel forces the filesystem read-only and the remove ends with EROFS.
# forecast --remove 2 must say so (main before this test: "ENOSPC");
# --remove 1 ends cleanly (relocated, or ENOSPC), and the unallocated
# bytes per device it predicts must equal the kernel's.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount findmnt python3 truncate jq
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

here=$TOP/tests/kernel-tests/076-remove-metadata-abort
mnt=$(mktemp -d "$TEST_TMP/mnt.XXXXXX") || fail "cannot create a mount point"
files=()
for size in 1G 2G 4G; do
	truncate -s "$size" "$TEST_TMP/dev${#files[@]}.img" || fail "truncate"
	files+=("$TEST_TMP/dev${#files[@]}.img")
done
mkfs.btrfs -q -f -d raid1 -m raid1 "${files[@]}" > /dev/null 2>&1 || fail "mkfs.btrfs"

# mount_copies: copies of the images, set up and mounted on $mnt; devs
mount_copies()
{
	local f opts
	devs=()
	for f in "${files[@]}"; do
		cp --sparse=always "$f" "$f.copy" || fail "cp"
		devs+=("$(setup_loop "$f.copy")") || exit
	done
	opts=$(printf 'device=%s,' "${devs[@]}")
	setup_mount "${devs[0]}" "$mnt" -o "${opts%,}"
}

# release: unmounted, the kernel forgets the copies' devices, detached
release()
{
	local dev
	umount "$mnt" 2> /dev/null
	for dev in "${devs[@]}"; do
		btrfs device scan --forget "$dev" > /dev/null 2>&1
	done
	cleanup_all
	rm -f "${files[@]/%/.copy}"
}

devs=()
for f in "${files[@]}"; do devs+=("$(setup_loop "$f")") || exit; done
opts=$(printf 'device=%s,' "${devs[@]}")
setup_mount "${devs[0]}" "$mnt" -o "${opts%,}"
python3 "$here/age.py" "$mnt" $((1600 << 20)) "$(findmnt -n -o UUID "$mnt")" > /dev/null ||
	fail "age.py"
umount "$mnt" || fail "umount"
for dev in "${devs[@]}"; do btrfs device scan --forget "$dev" > /dev/null 2>&1; done
cleanup_all

failed=
for id in 2 1; do
	"$BTRFS_SPACE" --format json forecast --remove "$id" "${files[@]}" > "$TEST_TMP/remove$id.json" ||
		fail "forecast --remove $id"
	reason=$(jq -r '.forecast.shrink.reason' "$TEST_TMP/remove$id.json")
	mount_copies
	export kernel=
	if btrfs device remove "$id" "$mnt" > "$TEST_TMP/kernel$id.out" 2>&1; then
		kernel=ok
	elif grep -q "Read-only file system" "$TEST_TMP/kernel$id.out"; then
		kernel=EROFS
	elif grep -q "No space left" "$TEST_TMP/kernel$id.out"; then
		kernel=ENOSPC
	else
		kernel="other: $(tail -n 1 "$TEST_TMP/kernel$id.out")"
	fi
	umount "$mnt" || fail "umount after the remove"
	# a removed device's superblock is wiped: the others are read
	left=("${devs[@]}")
	[ "$kernel" = ok ] && unset "left[$((id - 1))]"
	"$BTRFS_SPACE" --format json inspect "${left[@]}" > "$TEST_TMP/after$id.json" ||
		fail "inspect after the remove"
	release
	outcome=${reason%%:*}
	[ "$reason" = "every chunk past the new size relocated" ] && outcome=ok
	echo "remove $id: forecast: $outcome ($reason); kernel: $kernel"
	case $kernel in
	ok | EROFS | ENOSPC) [ "$outcome" = "$kernel" ] || failed="$failed remove$id:outcome" ;;
	*) failed="$failed remove$id:kernel-$kernel" ;;
	esac
	# a clean end commits what it relocated: the bytes must agree
	if [ "$kernel" = ENOSPC ] || [ "$kernel" = ok ]; then
		predicted=$(jq -c --arg id "$id" '.forecast.shrink.unallocated_after |
			if $ENV.kernel == "ok" then del(.[$id]) else . end' "$TEST_TMP/remove$id.json")
		actual=$(jq -c '[.devices[] | {(.devid | tostring): .unallocated}] | add' "$TEST_TMP/after$id.json")
		echo "    unallocated after: forecast $predicted, kernel $actual"
		[ "$predicted" = "$actual" ] || failed="$failed remove$id:unallocated"
	fi
done
[ -z "$failed" ] || fail "device removes disagree with the kernel in:$failed"
