#!/bin/bash
# Compare "btrfs-space --format json inspect" of unmounted images with what the
# kernel reports in /sys/fs/btrfs/<fsid>/allocation/ after "mount -t btrfs -o ro"
# on read-write loop devices, over a matrix of mkfs.btrfs images: nodesize
# 4K/16K/64K x checksum crc32c/xxhash/sha256/blake2, --mixed (256 MiB),
# -m single, and multi-device RAID0/1/10/1C3/1C4/5/6 for data and metadata.
# Some images get data written through a read-write mount first (a 64 MiB
# file, a few hundred small files, some deleted).
#
# Compared per image: global_rsv_size, global_rsv_reserved; per space type
# (data, metadata, system, mixed) every sysfs file total_bytes bytes_used
# bytes_readonly bytes_zone_unusable bytes_may_use bytes_pinned bytes_reserved
# disk_total disk_used chunk_size flags and the profile subdirectories;
# fsid, nodesize, sectorsize, checksum and the device count; the number of
# chunks ("chunks" command) and block groups ("inspect" block_groups.count and
# the "block-groups" command) against dump-tree of the unmounted image, and
# per type the sums of chunk and block-group lengths and of block-group used
# bytes against the kernel's total_bytes and bytes_used.
#
# Prints one line per image, "match NAME", or one line per difference,
# "MISMATCH NAME key kernel=X tool=Y"; "FAIL NAME what" when an image could
# not be made or mounted. KERNEL_TEST_IMAGES='glob' selects images by name.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space mkfs.btrfs btrfs losetup mount umount mountpoint jq truncate
need_btrfs_module

# (tests/common installed the EXIT trap: setup_cleanup_trap)

mnt="$TEST_TMP/mnt"
work="$TEST_TMP/images"
mkdir -p "$mnt" "$work" || fail "cannot create $mnt, $work"

# Loop devices and the mount of the image being worked on, released after
# each image; all are registered with tests/common (setup_loop,
# register_mount), whose EXIT trap undoes whatever is left on failure.
loops=()
mounted=false

# attach FILE...: attach each file read-write, fill loops[]
attach()
{
	local f dev

	loops=()
	for f in "$@"; do
		dev=$(setup_loop "$f") || return 1
		[ -b "$dev" ] || return 1
		loops+=("$dev")
	done
}

# release: unmount, forget the devices in the kernel's device list, detach
release()
{
	local dev

	if $mounted; then
		umount "$mnt" || echo "WARNING: umount $mnt failed"
		mounted=false
	fi
	for dev in "${loops[@]}"; do
		btrfs device scan -u "$dev" > /dev/null 2>&1
		losetup -d "$dev" || echo "WARNING: losetup -d $dev failed"
	done
	loops=()
}

# mount_loops OPTS: mount loops[] at $mnt, multi-device with device=
mount_loops()
{
	local opts=$1 dev

	if [ "${#loops[@]}" -gt 1 ]; then
		for dev in "${loops[@]}"; do
			opts="$opts,device=$dev"
		done
	fi
	mount -t btrfs -o "$opts" "${loops[0]}" "$mnt" || return 1
	register_mount "$mnt"
	mounted=true
}

# Try once that a btrfs filesystem on a loop device can be mounted here.
probe="$TEST_TMP/probe.img"
truncate -s 256M "$probe" || fail "cannot create $probe"
mkfs.btrfs -q -f "$probe" > "$TEST_TMP/probe.log" 2>&1 ||
	fail "mkfs.btrfs of a 256 MiB image failed: $(tail -n 1 "$TEST_TMP/probe.log")"
if ! attach "$probe"; then
	release
	skip "cannot attach a loop device (losetup -f $probe failed)"
fi
if ! mount_loops ro 2> "$TEST_TMP/probe.log"; then
	release
	skip "cannot mount btrfs on a loop device: $(tail -n 1 "$TEST_TMP/probe.log")"
fi
release
rm -f "$probe"

# populate SIZE_MIB: write a file of SIZE_MIB MiB and a few hundred small
# files (inline, one block, several blocks), then delete every 7th
populate()
{
	local i d size sizes=(100 1500 3000 4096 9000 40000 130000)

	head -c "$(($1 * 1024 * 1024))" /dev/urandom > "$mnt/big" || return 1
	for i in $(seq 1 300); do
		d="$mnt/dir$((i % 5))"
		mkdir -p "$d" || return 1
		size=${sizes[$((i % ${#sizes[@]}))]}
		head -c "$size" /dev/urandom > "$d/file$i" || return 1
	done
	for i in $(seq 7 7 300); do
		rm -f "$mnt/dir$((i % 5))/file$i"
	done
	sync
}

# tool_keys NAME: "key value" lines of the tool's answer, sorted
tool_keys()
{
	local dir="$work/$1"

	jq -r '
	def v: if type == "array" then (sort | join(",")) else tostring end;
	"global_rsv_size \(.global_rsv_size | v)",
	"global_rsv_reserved \(.global_rsv_reserved | v)",
	"fsid \(.filesystem.fsid | v)",
	"nodesize \(.filesystem.nodesize | v)",
	"sectorsize \(.filesystem.sectorsize | v)",
	"checksum \(.filesystem.csum_type | v)",
	"num_devices \(.filesystem.num_devices | v)",
	"block_groups.count \(.block_groups.count | v)",
	(.space_info // {} | to_entries[] | .key as $t | .value |
	 (to_entries[] | select(.key != "ratio") | "\($t).\(.key) \(.value | v)"))
	' "$dir/inspect.json" || return 1

	jq -r '
	def t: if . == 1 then "data" elif . == 2 then "system"
	       elif . == 4 then "metadata" elif . == 5 then "mixed"
	       else "type\(.)" end;
	"chunks.count \(.chunks | length)",
	(.chunks | group_by(.type % 8)[] |
	 "\(.[0].type % 8 | t).chunk_length_sum \(map(.length) | add)")
	' "$dir/chunks.json" || return 1

	jq -r '
	def t: if . == 1 then "data" elif . == 2 then "system"
	       elif . == 4 then "metadata" elif . == 5 then "mixed"
	       else "type\(.)" end;
	"block-groups.count \(.block_groups | length)",
	(.block_groups | group_by(.flags % 8)[] |
	 "\(.[0].flags % 8 | t).bg_length_sum \(map(.length) | add)",
	 "\(.[0].flags % 8 | t).bg_used_sum \(map(.used) | add)")
	' "$dir/block-groups.json" || return 1
}

# kernel_keys FSID NCHUNKS NBGS: "key value" lines from sysfs and dump-tree
kernel_keys()
{
	local sys="/sys/fs/btrfs/$1" alloc="/sys/fs/btrfs/$1/allocation"
	local t f p profiles

	[ -d "$alloc" ] || return 1
	echo "global_rsv_size $(cat "$alloc/global_rsv_size")"
	echo "global_rsv_reserved $(cat "$alloc/global_rsv_reserved")"
	echo "fsid $1"
	echo "nodesize $(cat "$sys/nodesize")"
	echo "sectorsize $(cat "$sys/sectorsize")"
	# "crc32c (crc32c-lib)" -> crc32c
	echo "checksum $(awk '{print $1; exit}' "$sys/checksum")"
	echo "num_devices $(ls "$sys/devinfo" | wc -l)"
	echo "chunks.count $2"
	echo "block_groups.count $3"
	echo "block-groups.count $3"
	for t in data metadata system mixed; do
		[ -d "$alloc/$t" ] || continue
		for f in total_bytes bytes_used bytes_readonly bytes_zone_unusable \
			 bytes_may_use bytes_pinned bytes_reserved disk_total \
			 disk_used chunk_size flags; do
			echo "$t.$f $(cat "$alloc/$t/$f")"
		done
		profiles=$(for p in "$alloc/$t"/*/; do basename "$p"; done | sort | paste -sd,)
		echo "$t.profiles $profiles"
		echo "$t.chunk_length_sum $(cat "$alloc/$t/total_bytes")"
		echo "$t.bg_length_sum $(cat "$alloc/$t/total_bytes")"
		echo "$t.bg_used_sum $(cat "$alloc/$t/bytes_used")"
	done
}

# compare NAME: print match/MISMATCH lines, return 1 on any difference
compare()
{
	local name=$1 dir="$work/$1" key kval tval ret=0

	# every key of either side; absent on one side is a difference
	cut -d' ' -f1 "$dir/kernel.txt" "$dir/tool.txt" | sort -u > "$dir/keys"
	while read -r key; do
		kval=$(awk -v k="$key" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$dir/kernel.txt")
		tval=$(awk -v k="$key" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$dir/tool.txt")
		grep -q "^$key " "$dir/kernel.txt" || kval="<absent>"
		grep -q "^$key " "$dir/tool.txt" || tval="<absent>"
		if [ "$kval" != "$tval" ]; then
			echo "MISMATCH $name $key kernel=$kval tool=$tval"
			ret=1
		fi
	done < "$dir/keys"
	[ "$ret" = 0 ] && echo "match $name"
	return $ret
}

failed=0
checked=0

# image NAME NDEV SIZE POPULATE_MIB MKFS_ARGS...: make, measure and compare one
# image; POPULATE_MIB 0 leaves the image as mkfs made it
image()
{
	local name=$1 ndev=$2 size=$3 pop=$4
	local dir="$work/$1" files=() i fsid nchunks nbgs rc cmd
	shift 4

	if [ -n "$KERNEL_TEST_IMAGES" ]; then
		# shellcheck disable=SC2053
		[[ $name == $KERNEL_TEST_IMAGES ]] || return 0
	fi
	checked=$((checked + 1))
	mkdir -p "$dir"
	for i in $(seq 1 "$ndev"); do
		files+=("$dir/dev$i.img")
		truncate -s "$size" "$dir/dev$i.img" || { echo "FAIL $name truncate"; return 1; }
	done
	if ! mkfs.btrfs -f "$@" "${files[@]}" > "$dir/mkfs.log" 2>&1; then
		echo "FAIL $name mkfs.btrfs $*: $(grep ERROR "$dir/mkfs.log" | head -n 1)"
		return 1
	fi

	if [ "$pop" != 0 ]; then
		if ! attach "${files[@]}" || ! mount_loops rw; then
			echo "FAIL $name read-write mount for writing data"
			release
			return 1
		fi
		populate "$pop" || { echo "FAIL $name writing data"; release; return 1; }
		release
	fi

	# the tool, on the unmounted image files
	for cmd in inspect chunks block-groups; do
		# a crash or sanitizer report fails the whole test
		run_mayfail "$BTRFS_SPACE" --format json "$cmd" $(list_each "$cmd") "${files[@]}" \
			> "$dir/$cmd.json" 2> "$dir/$cmd.err"
		rc=$?
		if [ "$rc" != 0 ]; then
			echo "MISMATCH $name $cmd-exit-status kernel=0 tool=$rc ($(grep -v '^####### ' "$dir/$cmd.err" | head -n 1))"
			return 1
		fi
	done
	if ! tool_keys "$name" > "$dir/tool.unsorted"; then
		echo "MISMATCH $name json kernel=- tool=unparsable (see $dir/*.json)"
		return 1
	fi

	# dump-tree of the unmounted image; leaf items only ("item N key"),
	# internal nodes print the same keys as "key (...) block N"
	nchunks=$(btrfs inspect-internal dump-tree -t chunk "${files[@]}" 2> /dev/null |
		grep -Ec '^[[:space:]]*item [0-9]+ key \(FIRST_CHUNK_TREE CHUNK_ITEM ')
	nbgs=$(btrfs inspect-internal dump-tree -t extent "${files[@]}" 2> /dev/null |
		grep -Ec '^[[:space:]]*item [0-9]+ key \([0-9]+ BLOCK_GROUP_ITEM ')
	if [ "$nchunks" = 0 ] || [ "$nbgs" = 0 ]; then
		echo "FAIL $name dump-tree found $nchunks chunks, $nbgs block groups"
		return 1
	fi
	fsid=$(btrfs inspect-internal dump-super "${files[0]}" | awk '$1 == "fsid" { print $2 }')
	[ -n "$fsid" ] || { echo "FAIL $name no fsid in dump-super"; return 1; }

	# the kernel: read-write loop devices, read-only mount
	if ! attach "${files[@]}"; then
		echo "FAIL $name losetup"
		release
		return 1
	fi
	if ! mount_loops ro 2> "$dir/mount.err"; then
		echo "FAIL $name mount -o ro: $(tail -n 1 "$dir/mount.err")"
		release
		return 1
	fi
	kernel_keys "$fsid" "$nchunks" "$nbgs" > "$dir/kernel.unsorted"
	rc=$?
	release
	[ "$rc" = 0 ] || { echo "FAIL $name no /sys/fs/btrfs/$fsid/allocation"; return 1; }

	sort "$dir/kernel.unsorted" > "$dir/kernel.txt"
	sort "$dir/tool.unsorted" > "$dir/tool.txt"
	compare "$name" || return 1
	# keep the images of a mismatch for a look, drop the others
	rm -f "${files[@]}"
}

run_image()
{
	image "$@" || failed=$((failed + 1))
}

# single device: nodesize x checksum, every other one with data
pop=64
for ns in 4k 16k 64k; do
	for csum in crc32c xxhash sha256 blake2; do
		run_image "ns$ns-$csum" 1 1G "$pop" -n "$ns" --csum "$csum"
		if [ "$pop" = 0 ]; then pop=64; else pop=0; fi
	done
done
run_image mixed-256m 1 256M 32 --mixed
run_image meta-single-1g 1 1G 64 -m single
run_image data-single-fresh 1 1G 0 -m single -d single

# multi-device, 1 GiB sparse files
run_image raid0-2dev 2 1G 64 -d raid0 -m raid0
run_image raid1-2dev 2 1G 64 -d raid1 -m raid1
run_image raid10-4dev 4 1G 64 -d raid10 -m raid10
run_image raid1c3-3dev 3 1G 64 -d raid1c3 -m raid1c3
run_image raid1c4-4dev 4 1G 0 -d raid1c4 -m raid1c4
run_image raid5-3dev 3 1G 64 -d raid5 -m raid5
run_image raid6-4dev 4 1G 64 -d raid6 -m raid6

echo "$checked images, $failed with differences or errors"
[ "$checked" -gt 0 ] || fail "no image selected (KERNEL_TEST_IMAGES='$KERNEL_TEST_IMAGES')"
[ "$failed" = 0 ] || fail "$failed of $checked images differ from the kernel"
exit 0
