#!/bin/bash
# Device removes that abort the transaction (formulas.md 21.13), two shapes:
#
# RAID1 of 1, 2 and 4 GiB filled to ENOSPC, then emptied to 1.6 GiB of data
# in partly used block groups.  Removing devid 2 relocates its data groups
# and then the only metadata group: btrfs_inc_block_group_ro() lets it go
# read-only (over-commit counts devid 3's unallocated space, which no
# RAID1 chunk can use beside a full devid 1), metadata has no free byte
# besides it, and the next commit's delayed refs abort with -ENOSPC: the
# kernel forces the filesystem read-only and the remove ends with EROFS.
# forecast --remove 2 must say so (main before this test: "ENOSPC");
# --remove 1 ends cleanly (relocated, or ENOSPC).
#
# RAID10 of 4 x 1 GiB filled to ENOSPC, then emptied to 59 % of its data
# total.  Removing devid 1 or 4 relocates four data groups (one fails),
# then the metadata group goes read-only by over-commit on the removed
# device's freed dev extents (btrfs_remove_chunk() gives them back to
# free_chunk_space), and prepare_to_relocate()'s commit finds no room for
# the extent tree's COWs: devids 3 and 4 (1 and 2) hold only that
# transaction's holes.  EROFS (main before this test: "ENOSPC").
#
# RAID6 data and RAID1C3 metadata on 5 x 1 GiB, aged as RAID10 is.
# Removing devid 5 relocates five data groups, then the metadata group
# goes read-only: the over-commit keeps a data chunk of 10 % of
# total_rw_bytes free, which btrfs_shrink_device() has already lowered to
# the 4 GiB left (409.6 MiB kept, not 512 MiB), and the delayed refs'
# COWs then abort in __btrfs_free_extent(): EROFS (main before this test:
# "ENOSPC", the metadata group not turned read-only).
#
# Each remove's outcome must be the forecast's; a clean end's unallocated
# bytes per device (on disk) and an abort's (in memory, btrfs filesystem
# show before the unmount) must equal the forecast's unallocated_after.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount findmnt python3 truncate jq
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

here=$TOP/tests/kernel-tests/076-remove-metadata-abort
mnt=$(mktemp -d "$TEST_TMP/mnt.XXXXXX") || fail "cannot create a mount point"
failed=

# mount_devs FILE...: each set up on a loop device and all mounted on $mnt; devs
mount_devs()
{
	local f opts
	devs=()
	for f in "$@"; do devs+=("$(setup_loop "$f")") || exit; done
	opts=$(printf 'device=%s,' "${devs[@]}")
	setup_mount "${devs[0]}" "$mnt" -o "${opts%,}"
}

# release: unmounted, the kernel forgets the devices, detached
release()
{
	local dev
	umount "$mnt" 2> /dev/null
	for dev in "${devs[@]}"; do
		btrfs device scan --forget "$dev" > /dev/null 2>&1
	done
	cleanup_all
}

# make_shape NAME PROFILE LIMIT SIZE...: files NAME.N, mkfs'd with PROFILE
# for data and metadata (DATA:METADATA when they differ), aged by age.py to
# LIMIT, unmounted
make_shape()
{
	local name=$1 profile=$2 limit=$3 size
	local data=${2%%:*} meta=${2##*:}
	shift 3
	files=()
	for size in "$@"; do
		truncate -s "$size" "$TEST_TMP/$name.${#files[@]}" || fail "truncate"
		files+=("$TEST_TMP/$name.${#files[@]}")
	done
	mkfs.btrfs -q -f -d "$data" -m "$meta" "${files[@]}" > /dev/null 2>&1 ||
		fail "mkfs.btrfs $profile"
	mount_devs "${files[@]}"
	python3 "$here/age.py" "$mnt" "$limit" "$(findmnt -n -o UUID "$mnt")" > /dev/null ||
		fail "age.py $name"
	release
}

# check_remove NAME ID: forecast --remove ID of the files, then the kernel's
# on copies
check_remove()
{
	local name=$1 id=$2 f out=$TEST_TMP/$1-$2 reason outcome kernel predicted actual
	local copies=()

	"$BTRFS_SPACE" --format json forecast --remove "$id" "${files[@]}" > "$out.json" ||
		fail "forecast --remove $id ($name)"
	reason=$(jq -r '.forecast.shrink.reason' "$out.json")
	for f in "${files[@]}"; do
		cp --sparse=always "$f" "$f.copy" || fail "cp"
		copies+=("$f.copy")
	done
	mount_devs "${copies[@]}"
	if btrfs device remove "$id" "$mnt" > "$out.kernel" 2>&1; then
		kernel=ok
	elif grep -q "Read-only file system" "$out.kernel"; then
		kernel=EROFS
	elif grep -q "No space left" "$out.kernel"; then
		kernel=ENOSPC
	else
		kernel="other: $(tail -n 1 "$out.kernel")"
	fi
	# the devices in memory: after an abort the disk keeps the last commit
	btrfs filesystem show --raw "$mnt" > "$out.show" 2>&1
	umount "$mnt" || fail "umount after the remove"
	# a removed device's superblock is wiped: the others are read
	left=("${devs[@]}")
	[ "$kernel" = ok ] && unset "left[$((id - 1))]"
	"$BTRFS_SPACE" --format json inspect "${left[@]}" > "$out.after.json" ||
		fail "inspect after the remove"
	release
	rm -f "${copies[@]}"
	outcome=${reason%%:*}
	[ "$reason" = "every chunk past the new size relocated" ] && outcome=ok
	echo "$name remove $id: forecast: $outcome ($reason); kernel: $kernel"
	case $kernel in
	ok | EROFS | ENOSPC) [ "$outcome" = "$kernel" ] || failed="$failed $name-$id:outcome" ;;
	*) failed="$failed $name-$id:kernel-$kernel"; return ;;
	esac
	predicted=$(jq -c --arg k "$kernel" --arg id "$id" '.forecast.shrink.unallocated_after |
		if $k == "ok" then del(.[$id]) else . end' "$out.json")
	if [ "$kernel" = EROFS ]; then
		actual=$(awk '$1 == "devid" { printf "%s\"%s\":%.0f", n++ ? "," : "{", $2, $4 - $6 }
			END { print "}" }' "$out.show")
	else
		actual=$(jq -c '[.devices[] | {(.devid | tostring): .unallocated}] | add' "$out.after.json")
	fi
	echo "    unallocated after: forecast $predicted, kernel $actual"
	[ "$predicted" = "$actual" ] || failed="$failed $name-$id:unallocated"
}

make_shape raid1 raid1 $((1600 << 20)) 1G 2G 4G
for id in 2 1; do check_remove raid1 "$id"; done
rm -f "${files[@]}"
make_shape raid10 raid10 59% 1G 1G 1G 1G
for id in 1 4; do check_remove raid10 "$id"; done
rm -f "${files[@]}"
make_shape raid6 raid6:raid1c3 59% 1G 1G 1G 1G 1G
check_remove raid6 5
[ -z "$failed" ] || fail "device removes disagree with the kernel in:$failed"
