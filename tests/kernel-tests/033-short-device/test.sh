#!/bin/bash
# Devices cut short, against the kernel: sparse copies of the ns16k-1g
# fixture truncated below the chunk root, below the last dev extent, at
# it, between it and total_bytes, a few KiB and one sector (and 100 bytes)
# short, and a little larger, each attached read-write to a loop device
# and mounted -o ro.  The kernel's verdict (mounted, or the first BTRFS
# error line of that loop device in dmesg) must be the tool's, on the image
# file and on the loop device: exit 0 where the kernel mounts, exit 1
# where it refuses, and where the kernel says "device total_bytes should
# be at most X but found Y" the tool says so with the same X and Y.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs losetup mount umount mountpoint jq truncate od dmesg
need_btrfs_module
[ -w /dev/kmsg ] || skip "cannot write a marker to /dev/kmsg (run as root)"
dmesg > /dev/null 2>&1 || skip "cannot read the kernel log (dmesg): run as root, or set sysctl kernel.dmesg_restrict=0"
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"

tar -xSJf "$TEST_TOP/fixtures/ns16k-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack ns16k-1g"
img=$TEST_TMP/ns16k-1g.img
cut=$TEST_TMP/cut.img
mnt=$TEST_TMP/mnt
mkdir -p "$mnt" || fail "cannot create $mnt"
total=$(od -An -t u8 -j $((65536 + 201 + 8)) -N 8 "$img" | tr -d ' ')
last_end=$("$BTRFS_SPACE" --format json chunks --list-chunks "$img" |
	jq '[.chunks[] | .stripe_size as $s | .stripes[] | .offset + $s] | max')
chunk_root=$(od -An -t u8 -j $((65536 + 88)) -N 8 "$img" | tr -d ' ')

# kernel_verdict DEV TAG: "mounted", or the first BTRFS error of DEV
kernel_verdict()
{
	local dev=$1 tag=$2 name line
	name=$(basename "$dev")
	echo "btrfs-space-test $tag" > /dev/kmsg
	if mount -o ro "$dev" "$mnt" 2>/dev/null; then
		register_mount "$mnt"
		umount "$mnt" || fail "cannot unmount $mnt"
		echo mounted
		return
	fi
	line=$(dmesg | sed -n "/btrfs-space-test $tag\$/,\$p" |
		grep "BTRFS error (device $name)" | head -1 |
		sed 's/^\[[^]]*\] //; s/^BTRFS error (device [^)]*): //')
	echo "refused: ${line:-(no BTRFS error: not scanned as btrfs)}"
}

# tool_agrees KERNEL TARGET: the tool's verdict on TARGET is the kernel's
tool_agrees()
{
	local kernel=$1 target=$2 err rc words
	err=$("$BTRFS_SPACE" inspect "$target" 2>&1 >/dev/null)
	rc=$?
	echo "    tool on $target: exit $rc: $err"
	[ "$rc" -lt 128 ] || fail "crashed on $target"
	case $kernel in
	mounted)
		[ "$rc" -eq 0 ] || fail "the kernel mounts it, the tool exits $rc on $target"
		;;
	refused:*)
		[ "$rc" -eq 1 ] || fail "the kernel refuses it ($kernel), the tool exits $rc on $target"
		words=${kernel#refused: }
		case $words in
		"device total_bytes should be at most "*)
			grep -qF "$target: $words" <<< "$err" ||
				fail "the kernel says '$words', the tool on $target: $err"
			;;
		esac
		;;
	esac
}

n=0
for size in $((chunk_root - (1 << 20))) $((chunk_root + (4 << 20))) \
	    $((last_end - (16 << 20))) "$last_end" $(((last_end + total) / 2)) \
	    $((total - 8192)) $((total - 512)) $((total - 100)) "$total" \
	    $((total + 100)) $((total + (1 << 20))); do
	n=$((n + 1))
	cp --sparse=always "$img" "$cut" && truncate -s "$size" "$cut" || fail "cannot make $cut"
	dev=$(setup_loop "$cut") || exit
	kernel=$(kernel_verdict "$dev" "$$-$n")
	echo "size $size: kernel: $kernel"
	tool_agrees "$kernel" "$cut"
	tool_agrees "$kernel" "$dev"
	btrfs device scan --forget "$dev" > /dev/null 2>&1
	losetup -d "$dev" || fail "cannot detach $dev"
done
echo "short devices: the tool's verdict is the kernel's at all $n sizes"
