#!/bin/bash
# forecast against the kernel: filesystems made on sparse files (single,
# DUP, RAID0, RAID1 on equal and unequal devices, RAID10, RAID5, RAID6,
# RAID1C3 on unequal devices, single data with RAID1 metadata on unequal
# devices, mixed block groups, a device added after mkfs), forecast run on
# the unmounted devices, then mounted read-write on loop devices and
# filled with fallocate until ENOSPC (fill.py).  The chunks the kernel
# made (the chunk tree dumped by btrfs inspect-internal dump-tree before
# and after) must be data_fill.new_chunks exactly, and the bytes
# preallocated within 0.5 % or 4 MiB of data_fill.writable_bytes
# (compare.py).  Two metadata fills likewise (xattr-fill.py: extended
# attributes until ENOSPC): the metadata chunks made must be
# metadata_fill.new_chunks exactly, and the growth of metadata bytes_used
# (sysfs allocation/metadata) within 0.5 % or 4 MiB of
# metadata_fill.writable_bytes.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount findmnt blockdev python3 truncate
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mnt=$(mktemp -d "$TEST_TMP/mnt.XXXXXX") || fail "cannot create a mount point"

# metadata bytes_used of the filesystem mounted on $mnt
meta_used()
{
	local uuid
	uuid=$(findmnt -n -o UUID "$mnt") || fail "no UUID for $mnt"
	cat "/sys/fs/btrfs/$uuid/allocation/metadata/bytes_used"
}

# run_case [metadata] NAME "MKFS OPTIONS" SIZE... [+ SIZE]: SIZEs before
# "+" go to mkfs, the one after it is added with btrfs device add before
# the forecast; "metadata" first: the metadata fill
run_case()
{
	local kind=data_fill name mkfs_opts dir files=() add= size i devs=() opts dev used
	if [ "$1" = metadata ]; then
		kind=metadata_fill
		shift
	fi
	name=$1 mkfs_opts=$2
	shift 2
	dir=$TEST_TMP/$name
	mkdir -p "$dir" || fail "cannot create $dir"
	i=0
	while [ $# -gt 0 ]; do
		if [ "$1" = + ]; then
			add=$2
			break
		fi
		truncate -s "$1" "$dir/dev$i.img" || fail "$name: truncate"
		files+=("$dir/dev$i.img")
		i=$((i + 1))
		shift
	done
	# shellcheck disable=SC2086
	mkfs.btrfs -q -f $mkfs_opts "${files[@]}" > /dev/null 2>&1 || fail "$name: mkfs.btrfs $mkfs_opts failed"
	for size in "${files[@]}"; do
		dev=$(setup_loop "$size") || exit
		devs+=("$dev")
	done
	opts=$(printf 'device=%s,' "${devs[@]}")
	if [ -n "$add" ]; then
		truncate -s "$add" "$dir/dev$i.img" || fail "$name: truncate"
		files+=("$dir/dev$i.img")
		dev=$(setup_loop "$dir/dev$i.img") || exit
		devs+=("$dev")
		setup_mount "${devs[0]}" "$mnt" -o "${opts%,}"
		btrfs device add -f "$dev" "$mnt" > /dev/null || fail "$name: btrfs device add failed"
		umount "$mnt" || fail "$name: cannot unmount"
		opts=$(printf 'device=%s,' "${devs[@]}")
	fi
	"$BTRFS_SPACE" --format json forecast --list-chunks "${devs[@]}" > "$dir/forecast.json" ||
		fail "$name: forecast failed"
	dump_chunk_tree "$dir/before.txt" "${devs[@]}"
	setup_mount "${devs[0]}" "$mnt" -o "${opts%,}"
	if [ "$kind" = data_fill ]; then
		python3 "$here/fill.py" "$mnt" > "$dir/filled" || fail "$name: fill.py failed"
	else
		used=$(meta_used) || exit
		python3 "$here/xattr-fill.py" "$mnt" > /dev/null || fail "$name: xattr-fill.py failed"
		sync
		echo $(($(meta_used) - used)) > "$dir/filled"
		# an aborted transaction (forced read-only) is the kernel's end of
		# the fill: it has then used the global reserve too
		if findmnt -n -o OPTIONS "$mnt" | grep -qE '(^|,)ro(,|$)'; then
			echo "    $name: the kernel aborted the last transaction (forced read-only)"
			kind=metadata_fill_aborted
		fi
	fi
	umount "$mnt" || fail "$name: cannot unmount"
	dump_chunk_tree "$dir/after.txt" "${devs[@]}"
	echo "$name ($mkfs_opts):"
	python3 "$here/compare.py" "$kind" "$dir/forecast.json" "$dir/before.txt" "$dir/after.txt" \
		"$dir/filled" || failed="$failed $name"
	cleanup_all
}

failed=
run_case single "-d single -m dup" 2G
run_case dup "-d dup -m dup" 2G
run_case raid0 "-d raid0 -m raid1" 1G 1G
run_case raid1-equal "-d raid1 -m raid1" 1536M 1536M
run_case raid1-unequal "-d raid1 -m raid1" 1G 3G
run_case raid10 "-d raid10 -m raid10" 1G 1G 1G 1G
run_case raid5 "-d raid5 -m raid1" 1G 1G 1G
run_case raid6 "-d raid6 -m raid1c3" 1G 1G 1G 1G
run_case raid1c3-unequal "-d raid1c3 -m raid1c3" 1G 1536M 2G
run_case single-raid1-unequal "-d single -m raid1" 1G 2G
run_case mixed "--mixed" 1G
run_case device-added "-d single -m dup" 1G + 2G
run_case metadata metadata-dup "-d single -m dup" 384M
run_case metadata metadata-raid1-unequal "-d single -m raid1" 256M 512M
[ -z "$failed" ] || fail "forecast differs from the kernel in:$failed"
