#!/bin/bash
# forecast --devices against mkfs.btrfs, no mount: for each layout (single,
# DUP, RAID0, RAID1 on equal and unequal devices, RAID10, RAID5, RAID1C3,
# single data with RAID1 metadata, the defaults on one and on two devices,
# RAID6 with RAID1C3 on 4 x 20 GiB, RAID10 on five devices, RAID1C4, RAID0
# on seven unequal devices, single on three, 1 GiB metadata chunks past
# 50 GiB)
# mkfs.btrfs runs on sparse files of the sizes planned; the planner's chunks
# (mkfs_layout.chunks) must be the CHUNK_ITEMs of `btrfs inspect-internal
# dump-tree -t chunk` right after mkfs, and its devices' sizes and
# allocated bytes its DEV_ITEMs, and the planner's
# forecast section the one `forecast` gives on the files mkfs made: one
# forecast code, fed a planned or a read filesystem.  This needs
# mkfs.btrfs 6.2 (the release the planner replays); another release is
# checked only if it makes the same layout.  Where mkfs.btrfs refuses (a
# device under its minimum size, no room for a chunk its allocator wants),
# the planner must refuse too, with exit status 1.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space mkfs.btrfs btrfs jq truncate python3

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
progs=$(mkfs.btrfs --version 2>/dev/null | sed -n 's/.*btrfs-progs v\([0-9.]*\).*/\1/p')
[ "$progs" = 6.2 ] || skip "mkfs.btrfs is btrfs-progs '$progs': the planner replays 6.2"

failed=
# run_case NAME "MKFS OPTIONS" "PLAN OPTIONS" SIZE...
run_case()
{
	local name=$1 mkfs_opts=$2 plan_opts=$3 dir files=() i=0 size sizes=
	shift 3
	dir=$TEST_TMP/$name
	mkdir -p "$dir" || fail "cannot create $dir"
	for size in "$@"; do
		truncate -s "$size" "$dir/dev$i.img" || fail "$name: truncate"
		files+=("$dir/dev$i.img")
		sizes=$sizes${sizes:+,}$size
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	if ! mkfs.btrfs -q -f $mkfs_opts "${files[@]}" > "$dir/mkfs.txt" 2>&1; then
		echo "$name: mkfs.btrfs $mkfs_opts on $sizes refuses: $(grep ERROR "$dir/mkfs.txt" | head -n 1)"
		# shellcheck disable=SC2086
		run_mustfail_code 1 "mkfs.btrfs refuses $name" "$BTRFS_SPACE" forecast --devices "$sizes" $plan_opts
		rm -f "${files[@]}"
		return
	fi
	btrfs inspect-internal dump-tree --noscan -t chunk "${files[@]}" > "$dir/chunk.txt" 2>/dev/null ||
		fail "$name: dump-tree -t chunk failed"
	# shellcheck disable=SC2086
	run_check_stdout "$BTRFS_SPACE" --format json forecast --devices "$sizes" $plan_opts > "$dir/plan.json"
	run_check_stdout "$BTRFS_SPACE" --format json forecast "${files[@]}" > "$dir/image.json"
	echo "$name: mkfs.btrfs $mkfs_opts on $sizes"
	python3 "$here/compare.py" "$dir/plan.json" "$dir/image.json" "$dir/chunk.txt" || failed="$failed $name"
	rm -f "${files[@]}"
}

run_case single "-d single -m single" "--data-profile single --metadata-profile single" 1G
run_case dup "-d dup -m dup" "--data-profile dup --metadata-profile dup" 2G
run_case raid0 "-d raid0 -m raid1" "--data-profile raid0 --metadata-profile raid1" 1G 1G
run_case raid1-equal "-d raid1 -m raid1" "--data-profile raid1 --metadata-profile raid1" 1536M 1536M
run_case raid1-unequal "-d raid1 -m raid1" "--data-profile raid1 --metadata-profile raid1" 1G 2G 5G
run_case raid10 "-d raid10 -m raid10" "--data-profile raid10 --metadata-profile raid10" 1G 1G 1G 1G
run_case raid5 "-d raid5 -m raid1" "--data-profile raid5 --metadata-profile raid1" 1G 1G 1G
run_case raid1c3 "-d raid1c3 -m raid1c3" "--data-profile raid1c3 --metadata-profile raid1c3" 1G 1536M 2G
run_case single-raid1 "-d single -m raid1" "--data-profile single --metadata-profile raid1" 1G 2G
run_case default-one "" "" 3G
run_case default-two "" "" 700M 3G
run_case raid6-big "-d raid6 -m raid1c3" "--data-profile raid6 --metadata-profile raid1c3" 20G 20G 20G 20G
run_case raid10-odd "-d raid10 -m raid10" "--data-profile raid10 --metadata-profile raid10" 200M 200M 200M 200M 200M
run_case raid1c4 "-d raid1c4 -m raid1c4" "--data-profile raid1c4 --metadata-profile raid1c4" 1G 1G 1G 1G 1G
run_case raid0-seven "-d raid0 -m raid0" "--data-profile raid0 --metadata-profile raid0" 1G 2G 3G 4G 5G 6G 7G
run_case single-three "-d single -m single" "--data-profile single --metadata-profile single" 200M 300M 400M
run_case big-metadata "-d single -m raid1" "--data-profile single --metadata-profile raid1" 60G 60G
run_case refused-small "-d raid1 -m raid1" "--data-profile raid1 --metadata-profile raid1" 120M 5G
run_case refused-chunk "-d raid1 -m raid1c3" "--data-profile raid1 --metadata-profile raid1c3" 500M 800M 900M 64G
[ -z "$failed" ] || fail "the planner differs from mkfs.btrfs in:$failed"
