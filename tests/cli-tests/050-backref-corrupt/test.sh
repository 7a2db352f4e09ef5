#!/bin/bash
# The delete-data remedy's files (backref.c) on corrupt leaves that the
# mount does not read, fixture fuzz/snap-shared (subvolume 256's 400 files
# of 12 KiB, a snapshot sharing its leaves uncopied: 4,915,200 bytes
# shared), one block changed by tests/fuzz/tree-mutants.py:
# - a data ref count of 0 in the extent tree leaf 22249472, slot 66 (the
#   tree checker refuses it, as the kernel's check_extent_item() does),
#   and an item of subvolume 256's leaf 6193152 running past its end:
#   the remedy is kept, its files are not read, and the JSON's
#   files_error names the block, the slot and the field (before: files
#   null, no word why, as if the extent tree had not been read);
# - the data ref naming a missing inode, or an offset past 2^64 - 4096:
#   read, that extent not shared (no file extent item matches, as
#   add_all_parents() finds none), 4,902,912 bytes shared.
# Exit 0 each time, one line of nothing on stderr.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq python3 tar xz

tar -xSJf "$TEST_TOP/fixtures/fuzz/snap-shared.tar.xz" -C "$TEST_TMP" || fail "cannot unpack"
img=$TEST_TMP/snap-shared.img
"$BTRFS_SPACE" --format json chunks --list-chunks "$img" > "$TEST_TMP/chunks.json" ||
	fail "cannot list the chunks"

# mutant BLOCK MUTATION: the delete-data remedy's files and files_error (f.json)
mutant()
{
	cp --sparse=always "$img" "$TEST_TMP/m.img" || fail "cannot copy"
	[ "$2" = none ] || python3 "$TEST_TOP/fuzz/tree-mutants.py" "$img" "$TEST_TMP/chunks.json" \
		"$1" "$2" "$TEST_TMP/m.img" || fail "$2: cannot mutate"
	"$BTRFS_SPACE" inspect "$TEST_TMP/m.img" > "$TEST_TMP/t.out" 2> "$TEST_TMP/t.err" ||
		fail "$2: inspect exits $?: $(cat "$TEST_TMP/t.err")"
	[ ! -s "$TEST_TMP/t.err" ] || fail "$2: inspect says $(cat "$TEST_TMP/t.err")"
	"$BTRFS_SPACE" --format json inspect "$TEST_TMP/m.img" > "$TEST_TMP/j.out" 2> "$TEST_TMP/t.err" ||
		fail "$2: inspect --format json exits $?: $(cat "$TEST_TMP/t.err")"
	jq -c '[.summary.remedies[].effect | select(.block_group) |
		{shared: .files.shared_bytes, error: .files_error}] | first' \
		"$TEST_TMP/j.out" > "$TEST_TMP/f.json" || fail "$2: no JSON"
}

expect()
{
	[ "$(jq -r "$2" "$TEST_TMP/f.json")" = "$3" ] ||
		fail "$1: $2 is $(jq -r "$2" "$TEST_TMP/f.json"), expected $3"
}

mutant 22249472 none
expect none .shared 4915200
expect none .error null

mutant 22249472 item-field=66,49,4,0
expect ref-count-0 .shared null
expect ref-count-0 .error \
	"corrupt leaf: block=22249472 slot=66 extent bytenr=15462400 len=12288 invalid data ref count, should have non-zero value"

mutant 6193152 item-size-past-end
expect leaf-size-past-end .shared null
expect leaf-size-past-end .error \
	"corrupt leaf: root=256 block=6193152 slot=0, unexpected item end, have 16284 expect 16283"

mutant 22249472 item-field=66,33,8,999999
expect ref-missing-inode .shared 4902912
expect ref-missing-inode .error null

mutant 22249472 item-field=66,41,8,0xfffffffffffff000
expect ref-offset-overflow .shared 4902912
expect ref-offset-overflow .error null
