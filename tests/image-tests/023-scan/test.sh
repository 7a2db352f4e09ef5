#!/bin/bash
# --scan: given one device of a two-device RAID1 filesystem, the other one
# is found.  Among files given explicitly: the members are kept, an ext4
# image and another btrfs filesystem are left out, and the JSON equals
# that of both devices given by hand.  Among block devices (root, losetup
# -r): given only the first loop device, libblkid finds the second, and
# the JSON equals that of both files with --readonly-device for each.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space
check_prereq jq xz tar mkfs.ext4 truncate cmp

fixture=$TEST_TOP/fixtures/raid1-2dev.tar.xz
other=$TEST_TOP/fixtures/size-256m.tar.xz
[ -f "$fixture" ] && [ -f "$other" ] || skip "fixtures raid1-2dev and size-256m not found (tests/fixtures is incomplete: git checkout tests/fixtures)"
mapfile -t devs < <(unpack_image "$fixture" "$TEST_TMP/raid1")
[ ${#devs[@]} = 2 ] || fail "expected 2 device files in $fixture, got ${#devs[@]}"
oth=$(unpack_image "$other" "$TEST_TMP/other") || exit
ext4=$TEST_TMP/ext4.img
run_check truncate -s 64M "$ext4"
run_check mkfs.ext4 -q -F "$ext4"

for cmd in chunks inspect; do
	json "$cmd" "${devs[0]}" "${devs[1]}" > "$TEST_TMP/both-$cmd.json"
	json --scan "$cmd" "${devs[0]}" "$ext4" "$oth" "${devs[1]}" > "$TEST_TMP/scan.json"
	cmp -s "$TEST_TMP/both-$cmd.json" "$TEST_TMP/scan.json" ||
		fail "$cmd --scan over files differs from both devices given"
	echo "$cmd: --scan over files found the two devices"
done

# without --scan, one device alone is an error; a missing device stays one
run_mustfail "one device of two" "$BTRFS_SPACE" chunks "${devs[0]}"
run_mustfail "--scan finds no second device among these" \
	"$BTRFS_SPACE" --scan chunks "${devs[0]}" "$oth"

# block devices
[ "$(id -u)" = 0 ] || { echo "not root: block devices not scanned"; exit 0; }
command -v losetup > /dev/null 2>&1 || { echo "no losetup: block devices not scanned"; exit 0; }
loop1=$(losetup -r -f --show "${devs[0]}") || { echo "losetup failed: block devices not scanned"; exit 0; }
register_loop "$loop1"
loop2=$(losetup -r -f --show "${devs[1]}") || fail "losetup of the second device failed"
register_loop "$loop2"
for cmd in chunks inspect; do
	# read-only loop devices are modelled read-only, as the kernel has them
	json --readonly-device 1 --readonly-device 2 "$cmd" "${devs[0]}" "${devs[1]}" > "$TEST_TMP/both-ro-$cmd.json"
	json --scan "$cmd" "$loop1" > "$TEST_TMP/scan.json"
	cmp -s "$TEST_TMP/both-ro-$cmd.json" "$TEST_TMP/scan.json" ||
		fail "$cmd --scan $loop1 differs from both devices given"
	echo "$cmd: --scan $loop1 found $loop2"
done
exit 0
