#!/bin/bash
# The planner against the kernel: for eight layouts (single data with DUP
# metadata, DUP, RAID0, RAID1 on equal and unequal devices, RAID10, RAID5,
# RAID1C3) forecast --devices plans the filesystem before it exists; then mkfs.btrfs makes
# it on sparse files of those sizes, mounted read-write on loop devices and
# filled with fallocate until ENOSPC (050's fill.py: 16 MiB, 1 MiB, 64 KiB,
# 4 KiB steps).  The planner's mkfs_layout.chunks must be the chunk tree
# right after mkfs, the chunks the kernel made during the fill the
# planner's data_fill.new_chunks exactly, and the bytes preallocated within
# 0.5 % or 4 MiB of its writable_bytes (050's compare.py); what it says
# each device keeps unallocated (unallocatable_hard, the dead space, plus
# unallocatable_soft) must be what the DEV_ITEMs leave after the fill.
# Needs mkfs.btrfs 6.2, the release the planner replays.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount findmnt blockdev python3 truncate jq
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"
progs=$(mkfs.btrfs --version 2>/dev/null | sed -n 's/.*btrfs-progs v\([0-9.]*\).*/\1/p')
[ "$progs" = 6.2 ] || skip "mkfs.btrfs is btrfs-progs '$progs': the planner replays 6.2"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fill=$TEST_TOP/kernel-tests/050-forecast-fill
mnt=$(mktemp -d "$TEST_TMP/mnt.XXXXXX") || fail "cannot create a mount point"

# run_case NAME DATA METADATA SIZE...
run_case()
{
	local name=$1 data=$2 meta=$3 dir files=() i=0 size sizes= devs=() dev opts
	shift 3
	dir=$TEST_TMP/$name
	mkdir -p "$dir" || fail "cannot create $dir"
	for size in "$@"; do
		sizes=$sizes${sizes:+,}$size
	done
	# the plan first: nothing of the filesystem exists yet
	run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks --devices "$sizes" \
		--data-profile "$data" --metadata-profile "$meta" > "$dir/plan.json"
	for size in "$@"; do
		truncate -s "$size" "$dir/dev$i.img" || fail "$name: truncate"
		files+=("$dir/dev$i.img")
		i=$((i + 1))
	done
	mkfs.btrfs -q -f -d "$data" -m "$meta" "${files[@]}" > /dev/null 2>&1 ||
		fail "$name: mkfs.btrfs -d $data -m $meta failed"
	for size in "${files[@]}"; do
		dev=$(setup_loop "$size") || exit
		devs+=("$dev")
	done
	opts=$(printf 'device=%s,' "${devs[@]}")
	dump_chunk_tree "$dir/before.txt" "${devs[@]}"
	setup_mount "${devs[0]}" "$mnt" -o "${opts%,}"
	python3 "$fill/fill.py" "$mnt" > "$dir/filled" || fail "$name: fill.py failed"
	umount "$mnt" || fail "$name: cannot unmount"
	dump_chunk_tree "$dir/after.txt" "${devs[@]}"
	echo "$name (-d $data -m $meta on $sizes):"
	python3 "$here/layout.py" "$dir/plan.json" "$dir/before.txt" "$dir/after.txt" ||
		failed="$failed $name"
	python3 "$fill/compare.py" data_fill "$dir/plan.json" "$dir/before.txt" "$dir/after.txt" \
		"$dir/filled" || failed="$failed $name"
	cleanup_all
	rm -f "${files[@]}"
}

failed=
run_case single single dup 2G
run_case dup dup dup 2G
run_case raid0 raid0 raid1 1G 1G
run_case raid1-equal raid1 raid1 1536M 1536M
run_case raid1-unequal raid1 raid1 1G 2G 5G
run_case raid10 raid10 raid10 1G 1G 1G 1G
run_case raid5 raid5 raid1 1G 1G 1G
run_case raid1c3 raid1c3 raid1c3 1G 1536M 2G
[ -z "$failed" ] || fail "the planner differs from mkfs.btrfs and the kernel in:$failed"
