#!/bin/bash
# The "delete the data in block group N" remedy (formulas.md 19.6) where a
# snapshot shares the subvolume's leaves uncopied, against the kernel's
# freed bytes.  Per case, a 256 MiB single/single filesystem: subvolume sv
# with files written in one go (data extents, not inline), a read-only
# snapshot snap, then
#   untouched: 400 files of 12 KiB (about 20 leaves under the root node),
#              nothing written to sv since: every leaf is shared uncopied
#              (one EXTENT_DATA_REF per extent, no SHARED_DATA_REF, the
#              leaf's extent item has the snapshot's tree ref);
#   mixed:     the same, 50 of the files rewritten since: their leaves are
#              COWed (the other extents there gain SHARED_DATA_REFs), the
#              rest not, and the rewritten data is sv's alone;
#   deep:      4 KiB nodes, 1500 files of 4 KiB (about 200 leaves, two
#              levels of nodes), nothing written since: a leaf has one ref,
#              the level-1 node above it the snapshot's (the snapshot's
#              root points to the same nodes), so the walk goes up;
# then metadata filled with inline files (kernel test 070's inline-fill.py)
# so that the summary offers to delete the data of the least used data
# block group (summary.remedies[] of the JSON).  The tool's promise, what deleting its files frees, is
# delete_bytes less shared_bytes; the kernel's is the drop of
# allocation/data/bytes_used when every file of sv is deleted and the
# deletion committed.  The group must hold all the data (checked), so the
# two measure the same extents.
source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount jq python3 truncate
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

trap cleanup_all EXIT
mnt=$TEST_TMP/mnt
mkdir -p "$mnt"

# write_files DIR FIRST LAST SIZE: files f<N> of SIZE random bytes
write_files()
{
	python3 - "$@" <<'PY' || fail "write files in $1"
import os, sys
d, first, last, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for n in range(first, last + 1):
    with open(os.path.join(d, "f%d" % n), "wb") as f:
        f.write(os.urandom(size))
PY
}

data_used()
{
	cat "/sys/fs/btrfs/$1/allocation/data/bytes_used" || fail "read /sys/fs/btrfs/$1/allocation/data/bytes_used"
}

# run_case NAME FILES SIZE REWRITTEN [MKFS_OPTION...]: FILES files of SIZE
# bytes, f0..f(REWRITTEN-1) rewritten after the snapshot
run_case()
{
	local name=$1 files=$2 size=$3 rewritten=$4
	shift 4
	local img=$TEST_TMP/$name.img dev fsid delete shared promise before after

	truncate -s 256M "$img" || fail "truncate"
	dev=$(setup_loop "$img") || exit
	run_check mkfs.btrfs -q -f -d single -m single "$@" "$dev" > /dev/null
	setup_mount "$dev" "$mnt"
	run_check btrfs subvolume create "$mnt/sv" > /dev/null
	write_files "$mnt/sv" 0 $((files - 1)) "$size"
	sync
	run_check btrfs subvolume snapshot -r "$mnt/sv" "$mnt/snap" > /dev/null
	if [ "$rewritten" -gt 0 ]; then
		write_files "$mnt/sv" 0 $((rewritten - 1)) "$size"
		sync
	fi
	python3 "$TOP/tests/kernel-tests/070-summary-levels/inline-fill.py" "$mnt" > /dev/null ||
		fail "$name: inline fill"
	sync
	umount "$mnt" || fail "umount"

	run_check_stdout "$BTRFS_SPACE" inspect "$dev" > "$TEST_TMP/$name.txt" || exit
	run_check_stdout "$BTRFS_SPACE" --format json inspect "$dev" > "$TEST_TMP/$name.json" || exit
	# not advised (one 8 MiB data chunk is too small to help): in the JSON only
	[ "$(jq '[.summary.remedies[].effect | select(.files)] | length' "$TEST_TMP/$name.json")" -gt 0 ] ||
		skip "$name: metadata did not fill enough for the delete-data remedy: $(grep -m1 -i metadata "$TEST_TMP/$name.txt")"
	delete=$(jq '[.summary.remedies[].effect | select(.files) | .delete_bytes] | first' "$TEST_TMP/$name.json")
	shared=$(jq '[.summary.remedies[].effect | select(.files) | .files.shared_bytes] | first' "$TEST_TMP/$name.json")
	[ "$delete" != null ] && [ "$shared" != null ] || fail "$name: no files in the delete-data remedy's JSON"
	promise=$((delete - shared))

	setup_mount "$dev" "$mnt"
	fsid=$(findmnt -n -o UUID "$mnt") || fail "findmnt $mnt"
	before=$(data_used "$fsid")
	[ "$before" = "$delete" ] ||
		fail "$name: the block group holds $delete bytes of the $before bytes of data: the case needs them all in it"
	rm -f "$mnt"/sv/f* || fail "$name: rm sv/f*"
	sync
	btrfs filesystem sync "$mnt" || fail "btrfs filesystem sync"
	after=$(data_used "$fsid")
	echo "$name: delete $delete bytes, shared $shared: promised $promise freed; the kernel freed $((before - after))"
	[ "$promise" = $((before - after)) ] ||
		fail "$name: the remedy promises $promise bytes freed by deleting the files, the kernel freed $((before - after))"
	umount "$mnt" || fail "umount"
}

run_case untouched 400 12288 0
run_case mixed 400 12288 50
run_case deep 1500 4096 0 -n 4096
