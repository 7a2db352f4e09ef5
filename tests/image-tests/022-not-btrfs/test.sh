#!/bin/bash
# A device or image that is not btrfs gets one ERROR line saying what it is
# (libblkid's probe) and exit status 1: an ext4 image ("ext4 filesystem,
# not btrfs", also when given xz-compressed), a swap area, an all-zero file
# ("no recognised filesystem"), a file too small for a superblock.  The
# btrfs-image dumps of the corpus that are not btrfs at all, if any, too.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space
check_prereq mkfs.ext4 truncate grep xz

# one_error WHY PATTERN FILES: exit status 1, one ERROR line matching PATTERN
# (FILES: paths separated by spaces, none of them with a space)
one_error()
{
	local why=$1 pattern=$2 file=$3 cmd lines
	for cmd in chunks inspect; do
		# shellcheck disable=SC2086 # FILE may be several paths
		(run_mustfail "$why" "$BTRFS_SPACE" "$cmd" $file) \
			> "$TEST_TMP/out" 2>&1 || fail "$(tail -1 "$TEST_TMP/out")"
		grep -v '^####### ' "$TEST_TMP/out" > "$TEST_TMP/err"
		lines=$(wc -l < "$TEST_TMP/err")
		if [ "$lines" != 1 ] || ! grep -q "^ERROR: .*$pattern" "$TEST_TMP/err"; then
			cat "$TEST_TMP/err"
			fail "$why: expected one ERROR line matching '$pattern', got $lines lines"
		fi
		echo "$why ($cmd): $(cat "$TEST_TMP/err")"
	done
}

img=$TEST_TMP/ext4.img
run_check truncate -s 64M "$img"
run_check mkfs.ext4 -q -F "$img"
one_error "ext4 image" "ext4 filesystem, not btrfs" "$img"

xz -T1 -c "$img" > "$TEST_TMP/ext4.bin" || fail "xz failed"
one_error "xz-compressed ext4 image" "ext4 filesystem, not btrfs" "$TEST_TMP/ext4.bin"

zero=$TEST_TMP/zero.img
run_check truncate -s 16M "$zero"
one_error "all-zero image" "no recognised filesystem" "$zero"

small=$TEST_TMP/small.img
printf 'not a filesystem\n' > "$small"
one_error "17-byte file" "17 bytes, too small for a btrfs superblock" "$small"

if command -v mkswap > /dev/null 2>&1; then
	swap=$TEST_TMP/swap.img
	run_check truncate -s 16M "$swap"
	run_check mkswap -q "$swap"
	one_error "swap area" "swap (other), not btrfs" "$swap"
fi

# a btrfs image given with the ext4 one: the ext4 one is named
fixture=$TEST_TOP/fixtures/size-256m.tar.xz
if [ -f "$fixture" ]; then
	check_prereq tar
	raw=$(unpack_image "$fixture" "$TEST_TMP/fixture") || exit
	one_error "btrfs image and ext4 image" "ext4.img: ext4 filesystem, not btrfs" "$raw $img"
fi

# the ext4 images of the corpus
if [ -d "$SHARED/corpus" ]; then
	for f in "$SHARED"/corpus/convert-tests__*ext4*.raw.xz; do
		[ -f "$f" ] || continue
		one_error "$(basename "$f")" "ext4 filesystem, not btrfs" "$f"
	done
fi
exit 0
