#!/bin/bash
# A device shorter than its dev item's total_bytes gets the kernel's
# verdict (read_one_dev() of 6.18, measured by kernel-tests/033-short-device
# on loop devices): refused, with the kernel's words and both sizes, at any
# shortfall, below or above the last dev extent, a sector or a gigabyte;
# a file's size counts in whole 512-byte sectors as a loop device's does;
# cut below the chunk root, no copy of it can be read.  A larger device is
# fine.  Also one member of a RAID1 pair cut short.  Needs no mount.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar od truncate cp

tar -xSJf "$TEST_TOP/fixtures/ns16k-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack ns16k-1g"
img=$TEST_TMP/ns16k-1g.img
cut=$TEST_TMP/cut.img
total=$(od -An -t u8 -j $((65536 + 201 + 8)) -N 8 "$img" | tr -d ' ')
last_end=$("$BTRFS_SPACE" --format json chunks --list-chunks "$img" |
	jq '[.chunks[] | .stripe_size as $s | .stripes[] | .offset + $s] | max')
chunk_root=$(od -An -t u8 -j $((65536 + 88)) -N 8 "$img" | tr -d ' ')
echo "total_bytes $total, last dev extent ends at $last_end, chunk root $chunk_root"
[ "$last_end" -lt $((total - (64 << 20))) ] || fail "fixture: no room between the last dev extent and the end"

# verdict SIZE: run inspect on a copy cut (or grown) to SIZE; $rc and $err
verdict()
{
	cp --sparse=always "$img" "$cut" && truncate -s "$1" "$cut" || fail "cannot make $cut"
	err=$("$BTRFS_SPACE" inspect "$cut" 2>&1 >/dev/null)
	rc=$?
	echo "size $1: exit $rc: $err"
	[ "$rc" -lt 128 ] || fail "crashed at size $1"
}

# refused SIZE SEEN: exit 1, one line with the kernel's words
refused()
{
	verdict "$1"
	[ "$rc" -eq 1 ] && [ "$(wc -l <<< "$err")" -eq 1 ] ||
		fail "size $1: expected one error line and exit 1"
	grep -q "^ERROR: $cut: device total_bytes should be at most $2 but found $total$" <<< "$err" ||
		fail "size $1: not the kernel's verdict"
}

refused $((total - 512)) $((total - 512))
refused $((total - 4096)) $((total - 4096))
refused $((total - 100)) $((total - 512))		# a loop device drops the partial sector
refused $(((last_end + total) / 2)) $(((last_end + total) / 2))
refused "$last_end" "$last_end"
refused $((last_end - (16 << 20))) $((last_end - (16 << 20)))
refused $((chunk_root + (4 << 20))) $((chunk_root + (4 << 20)))

# below the chunk root: neither copy can be read
verdict $((chunk_root - (1 << 20)))
[ "$rc" -eq 1 ] && [ "$(wc -l <<< "$err")" -eq 1 ] &&
	grep -q "^ERROR: all 2 copies bad; copy 1: tree block $chunk_root: .*beyond the end of the device; copy 2: " <<< "$err" ||
	fail "cut below the chunk root: expected its read to fail on both copies"

# the superblock must end before the device does (btrfs_read_disk_super)
verdict $((65536 + 4096))
[ "$rc" -eq 1 ] && grep -q "too small for superblock copy 0 at offset 65536 (size 69632)" <<< "$err" ||
	fail "a 68 KiB device holds no superblock for the kernel"

# larger than total_bytes, even by a partial sector: read without a word
for size in $((total + 100)) $((total + (1 << 20))); do
	verdict "$size"
	[ "$rc" -eq 0 ] && [ -z "$err" ] || fail "size $size: expected exit 0 and nothing on stderr"
done

# one member of a RAID1 pair cut short: refused on that member
# (the first member the run's unpacked one, read only; the second a copy)
mapfile -t devs < <(fixture_images raid1-2dev "$TEST_TMP/r1") || exit
[ "${#devs[@]}" -eq 2 ] || fail "raid1-2dev: expected two images, got ${#devs[@]}"
if [ -L "${devs[1]}" ]; then
	cp --sparse=always --remove-destination "$(readlink -f "${devs[1]}")" "${devs[1]}" ||
		fail "cannot copy ${devs[1]}"
fi
second=$(od -An -t u8 -j $((65536 + 201 + 8)) -N 8 "${devs[1]}" | tr -d ' ')
truncate -s $((second - (8 << 20))) "${devs[1]}" || fail "truncate failed"
err=$("$BTRFS_SPACE" inspect "${devs[@]}" 2>&1 >/dev/null)
rc=$?
echo "raid1, second member 8 MiB short: exit $rc: $err"
[ "$rc" -eq 1 ] && grep -q "^ERROR: ${devs[1]}: device total_bytes should be at most $((second - (8 << 20))) but found $second$" <<< "$err" ||
	fail "raid1: a short member is not refused with the kernel's words"
echo "short devices: ok"
