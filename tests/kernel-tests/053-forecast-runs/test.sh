#!/bin/bash
# forecast's runs against the kernel on pools of a few TiB (formulas.md
# section 21.11): sparse files made into RAID1 over four unequal devices
# (1, 1, 1.5 and 2 TiB: the allocator goes through phases of different
# periods), RAID10 over six of 512 GiB and RAID1 over sixteen of 256 GiB
# (period 8: each pair of devices once), forecast run on the unmounted
# devices (runs, and --list-chunks), then mounted read-write on loop
# devices, df -B1 taken (the kernel's statfs, printed beside), and filled
# with fallocate until ENOSPC (050's fill.py, 1 GiB steps first).  Every
# chunk the kernel made (dump-tree -t chunk before and after) must be the
# forecast's, in order, and the bytes preallocated within 0.5 % or 4 MiB
# of writable_bytes (050's compare.py); the runs must be few.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount blockdev df python3 truncate
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fill050=$here/../050-forecast-fill
mnt=$(mktemp -d "$TEST_TMP/mnt.XXXXXX") || fail "cannot create a mount point"
truncate -s 2T "$TEST_TMP/probe" 2> /dev/null || skip "no sparse files of 2 TiB in $TEST_TMP"
rm -f "$TEST_TMP/probe"

# run_case NAME "MKFS OPTIONS" SIZE...
run_case()
{
	local name=$1 mkfs_opts=$2 dir files=() i=0 size dev opts runs
	shift 2
	dir=$TEST_TMP/$name
	mkdir -p "$dir" || fail "cannot create $dir"
	for size in "$@"; do
		truncate -s "$size" "$dir/dev$i.img" || fail "$name: truncate"
		files+=("$dir/dev$i.img")
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	mkfs.btrfs -q -f $mkfs_opts "${files[@]}" > /dev/null 2>&1 || fail "$name: mkfs.btrfs $mkfs_opts failed"
	devs=()
	for size in "${files[@]}"; do
		dev=$(setup_loop "$size") || exit
		devs+=("$dev")
	done
	opts=$(printf 'device=%s,' "${devs[@]}")
	"$BTRFS_SPACE" --format json forecast --list-chunks "${devs[@]}" > "$dir/forecast.json" ||
		fail "$name: forecast failed"
	"$BTRFS_SPACE" --format json forecast "${devs[@]}" > "$dir/runs.json" ||
		fail "$name: forecast failed"
	runs=$(python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["forecast"]["data_fill"]
print("%d chunks in %d runs, writable_bytes %d" % (f["nr_new_chunks"], f["nr_new_chunk_runs"], f["writable_bytes"]))
sys.exit(0 if f["nr_new_chunk_runs"] * 20 <= f["nr_new_chunks"] else 1)' "$dir/runs.json") ||
		fail "$name: forecast's runs are not few: $runs"
	dump_chunk_tree "$dir/before.txt" "${devs[@]}"
	setup_mount "${devs[0]}" "$mnt" -o "${opts%,}"
	df -B1 --output=avail "$mnt" | tail -1 > "$dir/statfs"
	python3 "$fill050/fill.py" "$mnt" $((1 << 30)) > "$dir/filled" || fail "$name: fill.py failed"
	umount "$mnt" || fail "$name: cannot unmount"
	dump_chunk_tree "$dir/after.txt" "${devs[@]}"
	echo "$name ($mkfs_opts): forecast $runs; statfs (df -B1) before the fill $(cat "$dir/statfs")"
	python3 "$fill050/compare.py" data_fill "$dir/forecast.json" "$dir/before.txt" \
		"$dir/after.txt" "$dir/filled" | grep -v '^  \(kernel\|forecast\) ' | head -20
	[ "${PIPESTATUS[0]}" = 0 ] || failed="$failed $name"
	cleanup_all
	rm -f "${files[@]}"
}

failed=
run_case raid1-unequal-4 "-d raid1 -m raid1" 1T 1T 1536G 2T
run_case raid10-6 "-d raid10 -m raid10" 512G 512G 512G 512G 512G 512G
run_case raid1-16 "-d raid1 -m raid1" $(printf '256G %.0s' $(seq 16))
[ -z "$failed" ] || fail "forecast differs from the kernel in:$failed"
