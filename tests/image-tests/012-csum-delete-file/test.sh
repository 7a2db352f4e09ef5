#!/bin/bash
# csum-delete --file and --top against files the kernel wrote: on a 1 GiB
# image (nodesize 16K, crc32c, free space tree) mounted with compress=zstd,
# an 8 MiB compressible file (every 128 KiB its own compressed extent: 64),
# a 4 MiB file written before compression was switched on, a reflink copy
# of the first, and a reflink copy inside a subvolume.  After unmount the
# extent counts must equal the file extent items btrfs-progs' dump-tree lists,
# and the reservation must equal the kernel's formula worked here by hand.
# Also: --top finds the same files with their paths, and a missing path
# component is a one-line error.  Needs root and a kernel with btrfs.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space mkfs.btrfs btrfs losetup mount umount mountpoint \
	jq truncate cp stat
need_btrfs_module
# (tests/common installed the EXIT trap that unmounts and detaches)

img="$TEST_TMP/csum-delete.img"
mnt="$TEST_TMP/mnt"

# nodesize 16K, crc32c: csums_per_leaf = (16384 - 101 - 25) / 4 = 4064
run_check truncate -s 1G "$img"
run_check mkfs.btrfs -q -f -n 16384 --csum crc32c -R free-space-tree "$img"
dev=$(setup_loop "$img") || exit
setup_mount "$dev" "$mnt"

# written while compression is off: plain extents; one direct write of 4 MiB
# is one extent (buffered, writeback under load split it in two, which
# FIEMAP then merged into one because they were contiguous)
run_check dd if=/dev/urandom of="$mnt/plain" bs=4M count=1 oflag=direct status=none
run_check sync
run_check mount -o remount,compress=zstd "$mnt"
yes "btrfs-space csum-delete: a line that compresses well" | head -c 8M > "$mnt/comp" ||
	fail "cannot write $mnt/comp"
run_check sync
run_check cp --reflink=always "$mnt/comp" "$mnt/comp-copy"
run_check btrfs subvolume create "$mnt/sv"
run_check cp --reflink=always "$mnt/comp" "$mnt/sv/comp"
run_check sync

# the inodes, to find their file extent items after the unmount
ino_plain=$(stat -c %i "$mnt/plain") && ino_comp=$(stat -c %i "$mnt/comp") &&
	ino_copy=$(stat -c %i "$mnt/comp-copy") && ino_sv=$(stat -c %i "$mnt/sv/comp") ||
	fail "cannot stat the files"

run_check umount "$mnt"

# extent_items TREE INO: the file extent items of inode INO in TREE that
# point at data, as btrfs-progs' dump-tree lists them in the unmounted
# image (not FIEMAP, which merges extents that lie side by side: a direct
# write of 4 MiB once made two, and filefrag said 1)
extent_items()
{
	btrfs inspect-internal dump-tree -t "$1" "$img" 2> /dev/null | awk -v INO="$2" '
		$1 == "item" && $3 == "key" { mine = $5 == "EXTENT_DATA" && substr($4, 2) == INO }
		mine && $1 == "extent" && $3 == "disk" && $5 != 0 { n++ }
		END { print n + 0 }'
}

frag_plain=$(extent_items 5 "$ino_plain")
frag_comp=$(extent_items 5 "$ino_comp")
frag_copy=$(extent_items 5 "$ino_copy")
frag_sv=$(extent_items 256 "$ino_sv")
echo "file extent items: plain=$frag_plain comp=$frag_comp comp-copy=$frag_copy sv/comp=$frag_sv"
[ "$frag_plain" -ge 1 ] && [ "$frag_copy" = "$frag_comp" ] && [ "$frag_sv" = "$frag_comp" ] ||
	fail "dump-tree: plain=$frag_plain comp=$frag_comp comp-copy=$frag_copy sv/comp=$frag_sv"
# 64 of 128 KiB, or more where another task's sync(2) wrote part of the
# file back first (65 and 68 beside other tests): compressed extents start
# again where a writeback cut the file, and the tool must count them all
[ "$frag_comp" -ge 64 ] ||
	fail "compressed 8 MiB file has $frag_comp extents, expect 64 of 128 KiB or more"
[ "$frag_comp" = 64 ] ||
	echo "note: $frag_comp compressed extents, a writeback cut the file (another task's sync)"

# the kernel's figures for nodesize 16K with the free space tree option:
#   delayed_ref_bytes(1)      = 2 * calc_insert_metadata_size(1) = 2 * 2 * 16384 * 8 = 524288
#   delayed_ref_csum_bytes(1) = calc_metadata_size(1) = 16384 * 8                      = 131072
#   a head up to 4064 sectors (15.875 MiB on disk) has one csum leaf
REF=524288
CSUM_LEAF=131072
CSUM_LEAF_BEFORE=524288		# before v6.7: a leaf charged as a delayed ref

get()
{
	jq -r "$2" <<< "$1" || fail "jq '$2' failed"
}

# check_file PATH EXTENTS SUBVOL [--subvol ID]: extents, refs and the totals
check_file()
{
	local path=$1 extents=$2 subvol=$3 out expect expect_before
	shift 3

	out=$(run_check_stdout "$BTRFS_SPACE" csum-delete --file "$path" "$@" \
		--format json "$img") || exit
	expect=$((extents * CSUM_LEAF + extents * REF))
	expect_before=$((extents * CSUM_LEAF_BEFORE + extents * REF))
	[ "$(get "$out" .params.nodesize)" = 16384 ] || fail "$path: nodesize is not 16384"
	[ "$(get "$out" .params.csums_per_leaf)" = 4064 ] || fail "$path: csums_per_leaf is not 4064"
	[ "$(get "$out" .params.free_space_tree_option)" = true ] ||
		fail "$path: free space tree option not seen"
	[ "$(get "$out" .file.subvolume)" = "$subvol" ] ||
		fail "$path: subvolume $(get "$out" .file.subvolume), expect $subvol"
	[ "$(get "$out" .file.extents)" = "$extents" ] ||
		fail "$path: $(get "$out" .file.extents) extents, dump-tree lists $extents"
	[ "$(get "$out" .csum_delete.extents)" = "$extents" ] ||
		fail "$path: $(get "$out" .csum_delete.extents) heads, expect $extents"
	# every extent is referenced once by the file: one ref each
	[ "$(get "$out" .csum_delete.refs)" = "$extents" ] ||
		fail "$path: $(get "$out" .csum_delete.refs) refs, expect $extents"
	[ "$(get "$out" .csum_delete.csum_leaves)" = "$extents" ] ||
		fail "$path: $(get "$out" .csum_delete.csum_leaves) csum leaves, expect one per head"
	[ "$(get "$out" .csum_delete.total)" = "$expect" ] ||
		fail "$path: total $(get "$out" .csum_delete.total), expect $expect"
	[ "$(get "$out" .csum_delete.total_before)" = "$expect_before" ] ||
		fail "$path: total before v6.7 $(get "$out" .csum_delete.total_before), expect $expect_before"
	echo "$path: $extents extents, reservation $expect (before v6.7 $expect_before)"
}

# 64 heads x (csum leaf 131072) + 64 refs x 524288 = 41943040
check_file /comp "$frag_comp" 5
[ "$((64 * 131072 + 64 * 524288))" = 41943040 ] || fail "shell arithmetic"
check_file /comp-copy "$frag_copy" 5
check_file /plain "$frag_plain" 5
check_file /sv/comp "$frag_sv" 256
check_file /comp "$frag_sv" 256 --subvol 256

# the compressed file's disk bytes are its compressed extents, below 8 MiB
out=$(run_check_stdout "$BTRFS_SPACE" csum-delete --file /comp --format json "$img") || exit
disk=$(get "$out" .file.disk_bytes)
[ "$disk" -gt 0 ] && [ "$disk" -lt $((8 << 20)) ] ||
	fail "/comp: disk bytes $disk, expect compressed size below 8 MiB"
out=$(run_check_stdout "$BTRFS_SPACE" csum-delete --file /plain --format json "$img") || exit
[ "$(get "$out" .file.disk_bytes)" = $((4 << 20)) ] ||
	fail "/plain: disk bytes $(get "$out" .file.disk_bytes), expect 4 MiB"

# --top 2: the two 8 MiB files of subvolume 5, paths resolved, costliest first
out=$(run_check_stdout "$BTRFS_SPACE" csum-delete --top 2 --format json "$img") || exit
[ "$(get "$out" '.top | length')" = 2 ] || fail "--top 2 did not list 2 files"
[ "$(get "$out" '[.top[].path] | sort | join(",")')" = "/comp,/comp-copy" ] ||
	fail "--top 2 lists $(get "$out" '[.top[].path] | join(",")'), expect /comp and /comp-copy"
[ "$(get "$out" '[.top[].total] | unique | join(",")')" = $((frag_comp * (CSUM_LEAF + REF))) ] ||
	fail "--top 2 totals $(get "$out" '[.top[].total] | join(",")')"
[ "$(get "$out" .scan.files)" = 3 ] ||
	fail "--top scanned $(get "$out" .scan.files) files in subvolume 5, expect 3"

# errors are one line naming the component, the directory and the subvolume
run_mustfail "missing path component" "$BTRFS_SPACE" csum-delete --file /nope "$img"
msg=$("$BTRFS_SPACE" csum-delete --file /nope "$img" 2>&1 >/dev/null)
[ "$msg" = "ERROR: path component 'nope' not found in directory inode 256 of subvolume 5" ] ||
	fail "unexpected message: $msg"
run_mustfail "a directory is not a file" "$BTRFS_SPACE" csum-delete --file /sv "$img"

exit 0
