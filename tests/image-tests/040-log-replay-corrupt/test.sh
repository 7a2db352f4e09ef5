#!/bin/bash
# The log replay model on damaged and unusual log trees.  From the corpus
# image fsck-tests/065-valid-log-tree/compressed (one log tree for the FS
# tree: inode 257 with one compressed 4 KiB extent, not yet in the extent
# tree), copies are patched in their log tree leaf, with the block's
# crc32c recomputed so the damage reaches the replay, not the checksum
# test:
# - as is: the log is present and its extent is allocated (data used 4096);
# - the file extent type set to 9: exit 1, the kernel's tree-checker line
#   "invalid type for file extent" naming the log leaf and slot;
# - the file extent item cut short: exit 1, "invalid item size for
#   reg/prealloc file extent";
# - the extent moved beyond every block group: exit 1, "lies in no block
#   group" (btrfs_alloc_logged_file_extent() fails with -EINVAL);
# - the inode item logged with 0 links: its extent is not replayed
#   (data used 0, one ignored item);
# - the log tree's root item for subvolume 300, which does not exist: the
#   log is skipped (data used 0, one skipped tree);
# - all devices named read-only (--readonly-device 1): "log replay
#   required on RO media", exit 1.
# The input files are never changed by the tool (image_digest before and
# after: the sha256 of every data extent, holes skipped, so that the 1 GiB
# sparse image is not read whole sixteen times).
# Linux 6.18 on the same patched copies (mount -o ro, by hand): data
# bytes_used 0 for the 0-links and subvolume-300 copies; the type-9 and
# short-item copies fail in btrfs_replay_log() with -EIO, the
# no-block-group copy with -EINVAL.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space jq python3 cp
src=${SHARED:-}/corpus/fsck-tests__065-valid-log-tree__compressed.img.xz
[ -n "${SHARED:-}" ] && [ -f "$src" ] || skip_no_shared "corpus image" "$src"

img=$(unpack_image "$src" "$TEST_TMP/orig") || exit
img=$(echo "$img" | head -n 1)

# patch.py IMG CHUNKS.JSON WHAT OUT: write a copy of IMG with one change
cat > "$TEST_TMP/patch.py" << 'EOF'
import json, struct, subprocess, sys

img, chunks, what, out = sys.argv[1:5]
# sparse: the image is 1 GiB with some 200 KiB of data
subprocess.run(["cp", "--sparse=always", img, out], check=True)
maps = json.load(open(chunks))["chunks"]
f = open(out, "r+b")

def physical(logical):
    for c in maps:
        if c["logical"] <= logical < c["logical"] + c["length"]:
            return [s["offset"] + logical - c["logical"] for s in c["stripes"]]
    sys.exit("no chunk for %d" % logical)

def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff

f.seek(65536)
sb = f.read(4096)
nodesize = struct.unpack_from("<I", sb, 0x94)[0]
log_root = struct.unpack_from("<Q", sb, 0x60)[0]

def read_block(logical):
    f.seek(physical(logical)[0])
    return bytearray(f.read(nodesize))

def write_block(logical, block):
    struct.pack_into("<I", block, 0, crc32c(bytes(block[32:])))
    block[4:32] = bytes(28)
    for p in physical(logical):
        f.seek(p)
        f.write(block)

def items(block):
    for i in range(struct.unpack_from("<I", block, 0x60)[0]):
        base = 101 + 25 * i
        objectid, type_, offset = struct.unpack_from("<QBQ", block, base)
        off, size = struct.unpack_from("<II", block, base + 17)
        yield base, objectid, type_, offset, 101 + off, size

# the log root tree leaf and the log tree leaf it points at
root_leaf = read_block(log_root)
for base, objectid, type_, offset, data, size in items(root_leaf):
    if type_ == 132:
        log_leaf_at = struct.unpack_from("<Q", root_leaf, data + 176)[0]
        root_item_key = base
if what == "subvol-300":
    struct.pack_into("<Q", root_leaf, root_item_key + 9, 300)
    write_block(log_root, root_leaf)
    sys.exit(0)
def shrink(leaf, slot, cut):
    # item data runs down from the end of the leaf: the data of @slot and
    # of every later item moves up by @cut, so the items stay contiguous
    lst = list(items(leaf))
    low = lst[-1][4]
    keep_end = lst[slot][4] + lst[slot][5] - cut
    leaf[low + cut:keep_end + cut] = leaf[low:keep_end]
    for i in range(slot, len(lst)):
        base = lst[i][0]
        off, size = struct.unpack_from("<II", leaf, base + 17)
        struct.pack_into("<II", leaf, base + 17, off + cut, size - (cut if i == slot else 0))

leaf = read_block(log_leaf_at)
for slot, (base, objectid, type_, offset, data, size) in enumerate(list(items(leaf))):
    if type_ == 108 and what == "type-9":
        leaf[data + 20] = 9
    elif type_ == 108 and what == "short-item":
        shrink(leaf, slot, 13)
    elif type_ == 108 and what == "no-block-group":
        struct.pack_into("<Q", leaf, data + 21, 1 << 40)
    elif type_ == 1 and what == "nlink-0":
        struct.pack_into("<I", leaf, data + 40, 0)
write_block(log_leaf_at, leaf)
EOF

run_check_stdout "$BTRFS_SPACE" chunks --list-chunks --format json "$img" > "$TEST_TMP/chunks.json"
sum_before=$(image_digest "$img")

errors=0
# expect NAME WHAT RC TEXT|JQ: patch, run inspect, compare.  Not tests/common's
# expect (one figure against a value): this one patches a copy, runs inspect
# and counts the mismatches so that every case is listed before the test
# fails; it replaces the common one in this script only.
expect()
{
	local name=$1 what=$2 rc=$3 want=$4 out="$TEST_TMP/$1" got

	if [ "$what" = none ]; then
		cp --sparse=always "$img" "$out.img" || fail "cannot copy $img"
	else
		python3 "$TEST_TMP/patch.py" "$img" "$TEST_TMP/chunks.json" "$what" "$out.img" ||
			fail "cannot patch $img ($what)"
	fi
	local before
	before=$(image_digest "$out.img")
	"$BTRFS_SPACE" inspect --format json ${EXTRA_ARGS:-} "$out.img" > "$out.json" 2> "$out.err"
	got=$?
	[ "$(image_digest "$out.img")" = "$before" ] ||
		{ echo "MISMATCH $name: the tool changed its input"; errors=$((errors + 1)); }
	if [ "$got" != "$rc" ]; then
		echo "MISMATCH $name: exit $got, expected $rc: $(head -n 2 "$out.err")"
		errors=$((errors + 1))
	elif [ "$rc" = 1 ]; then
		if [ "$(wc -l < "$out.err")" = 1 ] && grep -q -F -- "$want" "$out.err" &&
		   grep -q "^ERROR: " "$out.err"; then
			echo "match $name: $(cat "$out.err")"
		else
			echo "MISMATCH $name: expected one ERROR line with \"$want\", got: $(cat "$out.err")"
			errors=$((errors + 1))
		fi
	elif [ "$(jq -c "$want" "$out.json")" = true ]; then
		echo "match $name: $(jq -c '{data: .space_info.data.bytes_used, log: .log_replay |
			{log_trees, skipped_trees, ignored_items, bytes_allocated}}' "$out.json")"
	else
		echo "MISMATCH $name: $want is not true in $(jq -c '{data: .space_info.data,
			log: .log_replay}' "$out.json")"
		errors=$((errors + 1))
	fi
	rm -f "$out.img"
}

expect as-is none 0 '.log_replay.present and .log_replay.bytes_allocated == 4096 and
	.space_info.data.bytes_used == 4096 and .space_info.data.disk_used == 4096'
expect type-9 type-9 1 "corrupt leaf: root=18446744073709551610 block=5373952 slot=2 ino=257 file_offset=0, invalid type for file extent, have 9 expect range [0, 2]"
expect short-item short-item 1 "corrupt leaf: root=18446744073709551610 block=5373952 slot=2 ino=257 file_offset=0, invalid item size for reg/prealloc file extent, have 40 expect 53"
expect no-block-group no-block-group 1 "extent 1099511627776 len 4096 of inode 257 lies in no block group"
expect nlink-0 nlink-0 0 '.log_replay.ignored_items == 1 and .log_replay.bytes_allocated == 0 and
	.space_info.data.bytes_used == 0'
expect subvol-300 subvol-300 0 '.log_replay.log_trees == 1 and .log_replay.skipped_trees == 1 and
	.log_replay.extent_items == 0 and .space_info.data.bytes_used == 0'
EXTRA_ARGS="--readonly-device 1" expect read-only-media none 1 "log replay required on RO media"

[ "$(image_digest "$img")" = "$sum_before" ] || fail "the tool changed $img"
[ "$errors" = 0 ] || fail "$errors case(s) differ"
exit 0
