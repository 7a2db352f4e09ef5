#!/bin/bash
# The words of the "delete the data in block group N" remedy (formulas.md
# 19.6) where snapshots hold the data, against the kernel: subvolume sv
# with an incompressible file and a compressed one (its directory's
# compression property: the inline fill stays uncompressed, and fast), a
# read-only snapshot of it, then a new file in sv (the shared leaf is
# COWed: its extents gain SHARED_DATA_REFs), then metadata filled with
# inline files until ENOSPC (kernel test 070's inline-fill.py), so that
# the first screen offers to delete the data of the least used data block
# group.  The text must name sv and snap as holding that data and say
# that deleting the files frees none of it while the snapshot exists (the kernel's
# logical-resolve finds the same extents in the snapshot's files), and
# label the files' sizes as extent bytes on disk: the compressed file's
# is its compressed size, not its file size.
source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount jq python3 truncate
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

trap cleanup_all EXIT
img=$TEST_TMP/snap.img
mnt=$TEST_TMP/mnt
truncate -s 256M "$img" || fail "truncate"
dev=$(setup_loop "$img") || exit
run_check mkfs.btrfs -q -f -d single -m single "$dev" > /dev/null
mkdir -p "$mnt"
setup_mount "$dev" "$mnt"
run_check btrfs subvolume create "$mnt/sv" > /dev/null
run_check btrfs property set "$mnt/sv" compression zstd
head -c 4M /dev/urandom > "$mnt/sv/random" || fail "write random"
yes "a compressible line of text" | head -c 8M > "$mnt/sv/text" || fail "write text"
sync
run_check btrfs subvolume snapshot -r "$mnt/sv" "$mnt/snap" > /dev/null
echo new > "$mnt/sv/new" || fail "write new"
sync
python3 "$TOP/tests/kernel-tests/070-summary-levels/inline-fill.py" "$mnt" ||
	fail "inline fill"
sync
umount "$mnt" || fail "umount"

run_check_stdout "$BTRFS_SPACE" inspect "$dev" > "$TEST_TMP/inspect.txt" || exit
run_check_stdout "$BTRFS_SPACE" --format json inspect "$dev" > "$TEST_TMP/inspect.json" || exit
# the remedy's paragraph as one line (the text wraps it)
line=$(awk '/delete .* of data in block group/ { on = 1 } on && /^ *$/ { exit }
	on { sub(/^ +/, ""); sub(/ +$/, ""); printf "%s ", $0 }' "$TEST_TMP/inspect.txt")
[ -n "$line" ] ||
	skip "metadata did not fill enough for the delete-data remedy: $(grep -m1 -i metadata "$TEST_TMP/inspect.txt")"
echo "remedy: $line"
cat "$TEST_TMP/inspect.txt"
shared=$(jq '[.summary.remedies[].effect.files // empty | .shared_bytes] | max' "$TEST_TMP/inspect.json")
[ "$shared" -gt 0 ] || fail "no shared bytes: the snapshot's extents are not counted as shared"
grep -qE "shared by (sv and snap|snap and sv): it is freed only when gone from all of them, so deleting the files frees none of it while a snapshot holding it exists; delete that snapshot too" <<< "$line" ||
	fail "the remedy does not say that sv and its snapshot snap keep the data"

# the kernel agrees: logical-resolve of the block group's first extent
# (the compressed file's: the group holds nothing else) names the
# snapshot's copy as well
setup_mount "$dev" "$mnt" -o ro
bytenr=$(jq '[.summary.remedies[].effect.block_group // empty] | first' "$TEST_TMP/inspect.json")
# -P: inode and subvolume ids (paths need each subvolume mounted)
btrfs inspect-internal logical-resolve -o -P "$bytenr" "$mnt" > "$TEST_TMP/resolve" ||
	fail "logical-resolve -o -P $bytenr"
echo "logical-resolve -o -P $bytenr: $(tr '\n' ' ' < "$TEST_TMP/resolve")"
for sub in sv snap; do
	id=$(btrfs inspect-internal rootid "$mnt/$sub") || fail "rootid $sub"
	ino=$(stat -c %i "$mnt/$sub/text") || fail "stat $sub/text"
	grep -qE "^inode $ino offset [0-9]+ root $id\$" "$TEST_TMP/resolve" ||
		fail "the kernel does not find the block group's first extent in $sub/text"
done

# sizes in brackets are extent bytes on disk: the compressed file's is far
# under its 8 MiB
text_bytes=$(jq '[.summary.remedies[].effect.files // empty | .largest[] | select(.path == "sv/text") | .bytes] | first' "$TEST_TMP/inspect.json")
echo "sv/text: $text_bytes bytes of extents on disk for 8388608 bytes of file"
[ "$text_bytes" != null ] && [ "$text_bytes" -lt 8388608 ] ||
	fail "sv/text not among the largest files with its compressed size: $text_bytes"
grep -qE "sv/text \([0-9.]+[KMG]iB on disk\)" <<< "$line" ||
	fail "the size of sv/text is not labelled as on disk"
