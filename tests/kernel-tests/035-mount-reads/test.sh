#!/bin/bash
# Mount reads of layouts the fixtures do not have, against the kernel: the
# tree blocks a cold "mount -o ro" reads (block:block_bio_queue in a
# private tracefs instance, on a fresh loop device) must equal
# "btrfs-space mount-estimate"'s total_reads (Documentation/mount-estimate.md).
#   set-default   a default subvolume "@" (the openSUSE/snapper layout):
#                 the mount opens it, its root node and the searches of
#                 btrfs_get_fs_root(), after finding its name
#   set-default-nested
#                 the default is a subvolume in a directory of a subvolume
#                 in directories (dir1/dir2/sv/x/inner), 4K nodes and
#                 trees of several levels: every lookup of the path walk
#   convert       an ext4 converted by btrfs-convert, whose data reloc
#                 tree's ROOT_ITEM is at key offset 2 (the kernel takes
#                 the highest offset)
# Each image is made fresh (random fsid) and mounted once, on a copy.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq mkfs.btrfs btrfs jq losetup
need_root
need_btrfs_module
need_tracefs
setup_cleanup_trap

setup_trace_instance 035

mnt=$TEST_TMP/mnt
mkdir -p "$mnt"

# traced_reads IMG TRACE: the reads of a cold mount -o ro of IMG, the
# mount's own (mount_reads: not another task's scan of the device); the
# trace is left in TRACE, the other tasks' reads in TRACE.foreign
traced_reads()
{
	local dev mm
	dev=$(setup_loop "$1") || exit 1
	udevadm settle 2> /dev/null
	mm=$(cat "/sys/block/${dev#/dev/}/dev")
	echo "dev == $(( (${mm%:*} << 20) | ${mm#*:} ))" > "$inst/events/block/block_bio_queue/filter"
	echo > "$inst/trace"
	echo 1 > "$inst/events/block/block_bio_queue/enable"
	mount -t btrfs -o ro "$dev" "$mnt" || fail "mount -o ro of $1 failed"
	echo 0 > "$inst/events/block/block_bio_queue/enable"
	umount "$mnt"
	btrfs device scan --forget "$dev" > /dev/null 2>&1
	losetup -d "$dev"
	grep -v '^#' "$inst/trace" > "$2"
	mount_reads "$2" "$2.foreign"
}

failures=0
# check NAME: $TEST_TMP/NAME.img, made and unmounted
check()
{
	local img=$TEST_TMP/$1.img tool kernel others
	tool=$("$BTRFS_SPACE" --format json mount-estimate "$img" | jq .mount_estimate.total_reads)
	kernel=$(traced_reads "$img" "$TEST_TMP/$1.trace")
	echo "$1: kernel $kernel reads, mount-estimate $tool"
	others=$(cat "$TEST_TMP/$1.trace.foreign" 2> /dev/null)
	[ -z "$others" ] || echo "  reads of other tasks on the device during the mount, not the mount's: $others"
	[ "$tool" = "$kernel" ] || { echo "  FAIL: not equal"; failures=$((failures + 1)); }
	rm -f "$img"
}

# make_fs NAME NODESIZE: a fresh 1 GiB filesystem mounted at $TEST_TMP/NAME
make_fs()
{
	img=$TEST_TMP/$1.img
	fsmnt=$TEST_TMP/$1
	truncate -s 1G "$img"
	mkfs.btrfs -q -f -n "$2" "$img" > /dev/null 2>&1 || fail "mkfs.btrfs failed"
	fsdev=$(setup_loop "$img") || exit 1
	setup_mount "$fsdev" "$fsmnt" -t btrfs
}

# unmount_fs: the filesystem of make_fs unmounted, its loop device detached
unmount_fs()
{
	umount "$fsmnt" || fail "umount $fsmnt failed"
	btrfs device scan --forget "$fsdev" > /dev/null 2>&1
	losetup -d "$fsdev"
}

# set_default PATH: make the subvolume at PATH (under $fsmnt) the default
set_default()
{
	local id
	id=$(btrfs subvolume show "$fsmnt/$1" | awk '/Subvolume ID:/ { print $3 }')
	btrfs subvolume set-default "$id" "$fsmnt" || fail "set-default $1 failed"
}

files()
{
	local i
	for ((i = 1; i <= $2; i++)); do echo "$i" > "$1/f$i"; done
}

make_fs set-default 16384
btrfs subvolume create "$fsmnt/@" > /dev/null && btrfs subvolume create "$fsmnt/@/home" > /dev/null ||
	fail "subvolume create failed"
files "$fsmnt/@" 300
set_default @
unmount_fs
check set-default

make_fs set-default-nested 4096
files "$fsmnt" 2000
mkdir -p "$fsmnt/dir1/dir2"
btrfs subvolume create "$fsmnt/dir1/dir2/sv" > /dev/null || fail "subvolume create failed"
files "$fsmnt/dir1/dir2/sv" 1500
mkdir -p "$fsmnt/dir1/dir2/sv/x"
btrfs subvolume create "$fsmnt/dir1/dir2/sv/x/inner" > /dev/null || fail "subvolume create failed"
files "$fsmnt/dir1/dir2/sv/x/inner" 800
set_default dir1/dir2/sv/x/inner
unmount_fs
check set-default-nested

if command -v btrfs-convert > /dev/null && command -v mkfs.ext4 > /dev/null; then
	img=$TEST_TMP/convert.img
	truncate -s 512M "$img"
	mkfs.ext4 -q -F "$img" || fail "mkfs.ext4 failed"
	fsdev=$(setup_loop "$img") || exit 1
	fsmnt=$TEST_TMP/convert
	setup_mount "$fsdev" "$fsmnt" -t ext4
	head -c 20M /dev/urandom > "$fsmnt/data"
	mkdir "$fsmnt/d" && files "$fsmnt/d" 50
	umount "$fsmnt" && losetup -d "$fsdev"
	btrfs-convert "$img" > "$TEST_TMP/convert.log" 2>&1 || fail "btrfs-convert: $(tail -n 1 "$TEST_TMP/convert.log")"
	btrfs inspect-internal dump-tree -t root "$img" | grep -q "DATA_RELOC_TREE ROOT_ITEM [1-9]" ||
		echo "note: btrfs-convert wrote the data reloc tree's ROOT_ITEM at offset 0"
	check convert
else
	echo "convert: skipped (no btrfs-convert or mkfs.ext4)"
fi

[ "$failures" -eq 0 ] || fail "$failures images where mount-estimate differs from the kernel's reads"
echo "mount reads: every image equal to the kernel's traced cold mount"
