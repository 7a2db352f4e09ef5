#!/bin/bash
# --readonly-device models read-only media (losetup -r): every block group
# with a stripe on it is read-only at mount, so bytes_readonly becomes
# total_bytes - bytes_used for each type, and the device leaves the
# over-commit figures.  Expected values: what Linux 6.18 showed for the
# ns16k-1g image on a read-only loop device (shared/truth/NOTES.md, item 3).

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar

tar -xSJf "$TEST_TOP/fixtures/ns16k-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack fixture"
img=$TEST_TMP/ns16k-1g.img

out=$(run_check_stdout "$BTRFS_SPACE" --format json inspect --readonly-device 1 "$img") || exit
check() {
	local got
	got=$(jq -r "$1" <<< "$out")
	echo "$1 = $got (kernel: $2)"
	[ "$got" = "$2" ] || fail "$1: got $got, kernel showed $2"
}
check .space_info.data.bytes_readonly 8388608
check .space_info.metadata.bytes_readonly 53542912
check .overcommit.free_chunk_space 0
check .overcommit.total_rw_bytes 0

# without the option every present device is writeable: only bytes_super
out=$(run_check_stdout "$BTRFS_SPACE" --format json inspect "$img") || exit
check .space_info.data.bytes_readonly 0
check .space_info.metadata.bytes_readonly 65536
run_mustfail_code 2 "devid must be a number" "$BTRFS_SPACE" inspect --readonly-device x "$img"
echo "readonly device: ok"
