#!/bin/bash
# forecast from a filesystem with empty block groups, against the kernel
# (issue 23 item 3).  Each case is made on sparse files, mounted with
# nodiscard, preallocated to 60 % of its data space in 16 MiB files, then
# the files of two data chunks are deleted (the last chunk and one in the
# middle: make-empty.py) and it is unmounted at once, before the cleaner
# runs: two empty block groups.  Then, each twice on a fresh copy (with a
# new fsid):
# - default mount options: a loop device over a regular file supports
#   discard, so 6.18 mounts with discard=async, and read_one_block_group()
#   queues the empty groups for discard before discard runs: they stay;
#   forecast with its default must list none deleted;
# - nodiscard: the cleaner deletes them (waited for: the chunk count drops,
#   printed with the seconds it took), then a sync commits the deletion
#   (the allocator searches the commit root for free dev extents);
#   forecast --mount-options nodiscard must list exactly those deleted;
# - uncommitted (data only): nodiscard, the fill started as soon as the
#   cleaner has deleted them, before their transaction commits: the freed
#   dev extents are used only after the commit the first ENOSPC makes;
#   forecast --mount-options nodiscard --cleaner-uncommitted (or, when the
#   transaction kthread's commit came first, which is timing, the
#   committed forecast: the test says which held);
# then fill.py (050) preallocates until ENOSPC (16M, 1M, 64K, 4K steps)
# and compare.py (050) holds the chunks made (dump-tree -t chunk before
# and after) to data_fill.new_chunks exactly, the chunks gone to
# unused_block_groups, and the bytes within max(0.5 %, 4 MiB) of
# data_fill.writable_bytes.  On the single case, the same four mounts for
# a metadata fill (create-xattr-fill.py: empty files, one 12000-byte xattr
# each, until ENOSPC): the metadata chunks made must be new_chunks and the
# growth of metadata bytes_used within max(0.25 %, 1 MiB) of
# metadata_fill.workload_writable_bytes (the create-xattr workload's
# largest reservation, a create's, short of writable_bytes).  On the first
# default mount, forecast in live mode must say discard=async and print
# every reclaim and size-class file of sysfs allocation/TYPE/ with its
# value (check-reclaim.py).

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs btrfstune mkfs.btrfs losetup mount umount findmnt blockdev python3 truncate
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fill=$here/../050-forecast-fill
mnt=$(mktemp -d "$TEST_TMP/mnt.XXXXXX") || fail "cannot create a mount point"

attach()
{
	local f dev
	devs=()
	for f in "$@"; do
		dev=$(setup_loop "$f") || exit
		devs+=("$dev")
	done
	opts=$(printf 'device=%s,' "${devs[@]}")
	opts=${opts%,}
}

nr_chunks()
{
	"$BTRFS_SPACE" --format json chunks --list-chunks "$mnt" |
		python3 -c 'import json, sys; print(len(json.load(sys.stdin)["chunks"]))'
}

# make_base NAME "MKFS OPTIONS" SIZE...: the aged filesystem in $TEST_TMP/NAME/base
make_base()
{
	local name=$1 mkfs_opts=$2 base files=() i=0 size
	shift 2
	base=$TEST_TMP/$name/base
	mkdir -p "$base" || fail "cannot create $base"
	for size in "$@"; do
		truncate -s "$size" "$base/dev$i.img" || fail "$name: truncate"
		files+=("$base/dev$i.img")
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	mkfs.btrfs -q -f $mkfs_opts "${files[@]}" > /dev/null 2>&1 ||
		fail "$name: mkfs.btrfs $mkfs_opts failed"
	attach "${files[@]}"
	setup_mount "${devs[0]}" "$mnt" -o "nodiscard,$opts"
	emptied=$(python3 "$here/make-empty.py" "$mnt" "$BTRFS_SPACE" 0.6) ||
		fail "$name: make-empty.py failed"
	umount "$mnt" || fail "$name: cannot unmount"
	cleanup_all
	echo "$name ($mkfs_opts $*): data chunks emptied at $emptied"
}

# metadata bytes_used of the filesystem mounted on $mnt
meta_used()
{
	cat "/sys/fs/btrfs/$(findmnt -n -o UUID "$mnt")/allocation/metadata/bytes_used"
}

# run_fill NAME MODE RUN [metadata]: MODE default or nodiscard, on a fresh
# copy; metadata: create-xattr-fill.py, held to workload_writable_bytes
run_fill()
{
	local name=$1 mode=$2 run=$3 kind=${4:-data} used dir f files=() fopts=() mopts waited=0 want now last
	dir=$TEST_TMP/$name/$kind-$mode-$run
	mkdir -p "$dir" || fail "cannot create $dir"
	for f in "$TEST_TMP/$name"/base/dev*.img; do
		cp --sparse=always "$f" "$dir/" || fail "$name: cp"
		files+=("$dir/$(basename "$f")")
	done
	# a new fsid: the loop devices attached first, so that btrfstune
	# finds every device of the copy (and no other)
	attach "${files[@]}"
	btrfstune -f -u "${devs[0]}" > "$dir/btrfstune.out" 2>&1 ||
		fail "$name: btrfstune -u failed: $(tail -1 "$dir/btrfstune.out")"
	[ "$mode" = nodiscard ] && fopts=(--mount-options nodiscard)
	[ "$mode" = uncommitted ] && fopts=(--mount-options nodiscard --cleaner-uncommitted)
	"$BTRFS_SPACE" --format json forecast "${fopts[@]}" "${devs[@]}" > "$dir/forecast.json" ||
		fail "$name: forecast failed"
	if [ "$mode" = uncommitted ]; then
		"$BTRFS_SPACE" --format json forecast --mount-options nodiscard "${devs[@]}" \
			> "$dir/forecast-committed.json" || fail "$name: forecast failed"
	fi
	dump_chunk_tree "$dir/before.txt" "${devs[@]}"
	mopts=$opts
	[ "$mode" = default ] || mopts="nodiscard,$opts"
	setup_mount "${devs[0]}" "$mnt" -o "$mopts"
	echo "    $name $mode run $run: mounted with $(findmnt -n -o OPTIONS "$mnt")"
	if [ "$mode" != default ]; then
		want=$(python3 -c 'import json, sys
fc = json.load(open(sys.argv[1]))["forecast"]
print(len(fc["unused_block_groups"]))' "$dir/forecast.json")
		# the chunks before the mount, less those the cleaner deletes: it
		# may have run as the mount ended (its first wake-up) already
		want=$(( $(grep -c 'CHUNK_ITEM' "$dir/before.txt") - want ))
		now=$(nr_chunks)
		echo "    $name $mode run $run: $now chunks after the mount, waiting for $want"
		while [ "$now" != "$want" ]; do
			[ $waited -lt 120 ] || fail "$name: still $now chunks 120 s after the mount, not $want"
			sleep 1
			waited=$((waited + 1))
			last=$now
			now=$(nr_chunks)
			[ "$now" = "$last" ] || echo "    $name $mode run $run: $now chunks at $waited s"
		done
		# the chunk items go before btrfs_remove_chunk() ends (the chunk
		# map last): let the cleaner finish, far from the commit the
		# transaction kthread makes 30 s after the deletion started
		sleep 2
		# nodiscard: the deletion committed first; uncommitted: not yet
		if [ "$mode" = nodiscard ]; then sync; fi
		echo "    $name $mode run $run: the cleaner deleted the unused block groups ${waited} s after the mount"
	fi
	if [ "$mode" = default ] && [ "$run" = 1 ]; then
		echo "    $name: live forecast's reclaim files and discard mode against sysfs and mountinfo"
		"$BTRFS_SPACE" --format json forecast "$mnt" > "$dir/live.json" ||
			fail "$name: live forecast failed"
		python3 "$here/check-reclaim.py" "$dir/live.json" \
			"/sys/fs/btrfs/$(findmnt -n -o UUID "$mnt")/allocation" || failed="$failed $name/live"
	fi
	if [ "$kind" = data ]; then
		python3 "$fill/fill.py" "$mnt" > "$dir/filled" || fail "$name: fill.py failed"
	else
		used=$(meta_used) || exit
		python3 "$here/create-xattr-fill.py" "$mnt" > "$dir/files" ||
			fail "$name: create-xattr-fill.py failed"
		sync
		echo $(($(meta_used) - used)) > "$dir/filled"
		echo "    $name $mode run $run: $(cat "$dir/files") files made, metadata bytes_used grew by $(cat "$dir/filled")"
		if findmnt -n -o OPTIONS "$mnt" | grep -qE '(^|,)ro(,|$)'; then
			echo "    $name: the kernel aborted the last transaction (forced read-only)"
			failed="$failed $name/$kind/$mode/$run(aborted)"
		fi
	fi
	umount "$mnt" || fail "$name: cannot unmount"
	dump_chunk_tree "$dir/after.txt" "${devs[@]}"
	echo "  $name, $kind fill, $mode mount options, run $run ($(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["forecast"]["mount"]
print("forecast: discard %s, %d empty block groups, from %s" % (m["discard"], m["empty_block_groups"], m["discard_source"]))' "$dir/forecast.json")):"
	if python3 "$fill/compare.py" "$([ "$kind" = data ] && echo data_fill || echo metadata_workload)" \
		"$dir/forecast.json" "$dir/before.txt" "$dir/after.txt" "$dir/filled"; then
		:
	elif [ "$mode" = uncommitted ] && echo "    (then the committed forecast:)" &&
	     python3 "$fill/compare.py" data_fill "$dir/forecast-committed.json" \
		"$dir/before.txt" "$dir/after.txt" "$dir/filled"; then
		# the transaction kthread's commit came between the deletion
		# and the fill: which one the kernel ran is a matter of timing
		echo "    $name uncommitted run $run: the deletion had committed before the fill: the committed forecast holds"
	else
		failed="$failed $name/$kind/$mode/$run"
	fi
	cleanup_all
}

# run_case [metadata] NAME "MKFS OPTIONS" SIZE...: the data fills, and
# with "metadata" the metadata fills too
run_case()
{
	local kinds=data name mode modes run kind
	if [ "$1" = metadata ]; then
		kinds="data metadata"
		shift
	fi
	name=$1
	make_base "$@"
	for kind in $kinds; do
		modes="default nodiscard"
		[ "$kind" = data ] && modes="$modes uncommitted"
		for mode in $modes; do
			for run in 1 2; do
				run_fill "$name" $mode $run $kind
			done
		done
	done
}

failed=
run_case metadata single "-d single -m dup" 2G
run_case raid1-unequal "-d raid1 -m raid1" 2G 3G
[ -z "$failed" ] || fail "forecast differs from the kernel in:$failed"
