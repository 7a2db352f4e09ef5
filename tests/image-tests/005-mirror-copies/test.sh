#!/bin/bash
# A tree block with a bad first copy is read from its second copy (DUP),
# and the tool says which copy it used; with both copies bad it fails with
# one line naming the block.  Corrupts the chunk root of the ns16k-1g
# fixture (SYSTEM DUP) at both of its physical places.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar dd

tar -xSJf "$TEST_TOP/fixtures/ns16k-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack fixture"
img=$TEST_TMP/ns16k-1g.img

# the chunk root's logical address, from the superblock at 64 KiB (offset 88)
chunk_root=$(od -An -t u8 -j $((65536 + 88)) -N 8 "$img" | tr -d ' ')
chunks=$(run_check_stdout "$BTRFS_SPACE" --format json chunks --list-chunks "$img") || exit
# where each copy of the block lives: stripe start + offset in the chunk
physical=($(jq -r --argjson l "$chunk_root" '.chunks[] |
	select(.logical <= $l and $l < .logical + .length) |
	(.logical) as $start | .stripes[] | .offset + $l - $start' <<< "$chunks"))
[ "${#physical[@]}" -eq 2 ] || fail "expected a DUP chunk for the chunk root, got ${#physical[@]} stripes"

corrupt() {
	# four bytes inside the block, past the checksum field
	printf '\xde\xad\xbe\xef' | dd of="$img" bs=1 seek=$(($1 + 200)) conv=notrunc status=none
}

corrupt "${physical[0]}"
out=$("$BTRFS_SPACE" inspect "$img" 2>&1 >/dev/null)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "first copy bad: expected exit 0, got $rc"
grep -q "1 bad copy .*copy 2 used" <<< "$out" || fail "no warning naming the copy used"

corrupt "${physical[1]}"
run_mustfail "both copies of the chunk root are bad" "$BTRFS_SPACE" inspect "$img"
out=$("$BTRFS_SPACE" inspect "$img" 2>&1 >/dev/null)
echo "$out"
[ "$(wc -l <<< "$out")" -eq 1 ] || fail "expected one error line"
grep -q "^ERROR: all 2 copies bad; copy 1: checksum verify failed on logical $chunk_root" <<< "$out" ||
	fail "error does not name the block and the copies"
echo "mirror copies: ok"
