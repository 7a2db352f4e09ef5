#!/bin/bash
# The verdicts of open_ctree()'s own checks, against the kernel: one-field
# mutants of the ns16k-1g fixture (tests/common-mutate.py fixes the
# checksums, so each mutant breaks exactly one rule):
#   stripesize 12288            validate_super: "invalid stripesize 12288"
#   flag CHANGING_FSID_V2       device_list_add: "incomplete metadata_uuid change"
#   total_bytes < device size   btrfs_read_chunk_tree: "super_total_bytes ... mismatch"
#   num_devices 2               btrfs_read_chunk_tree: a warning, the mount goes on
#   sys_chunk_array stripe uuid read_one_chunk: "devid 1 uuid ... is missing"
#   DEV_ITEM fsid               open_seed_devices: "failed to find fsid ..."
# For each: btrfs-space must exit 1 with one ERROR line (0 with the
# WARNING line for the warning case) holding the kernel's words; then the
# mutant is mounted -o ro on a read-write loop device and the kernel must
# agree: refuse where the tool refused, and log the same words. Without
# root, loop devices or btrfs the kernel half is skipped (said so), the
# tool half still runs.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq python3 tar xz
setup_cleanup_trap

mutate=$TEST_TOP/common-mutate.py
tar -xSJf "$TEST_TOP/fixtures/ns16k-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack fixture"
base=$TEST_TMP/ns16k-1g.img
mut=$TEST_TMP/mutant.img
mnt=$TEST_TMP/mnt
mkdir -p "$mnt"

# the kernel can be asked when we are root and a btrfs loop mount works
kernel_reason=
if [ "$(id -u)" -ne 0 ]; then
	kernel_reason="not root"
elif ! command -v losetup > /dev/null || ! [ -w /dev/kmsg ]; then
	kernel_reason="no losetup or /dev/kmsg"
else
	grep -qw btrfs /proc/filesystems || modprobe btrfs > /dev/null 2>&1
	grep -qw btrfs /proc/filesystems || kernel_reason="no btrfs in /proc/filesystems"
fi

# kernel_verdict IMG: mount IMG -o ro on a loop device; prints "mounted" or
# "refused", then the kernel's BTRFS lines logged by this mount
kernel_verdict()
{
	local dev mark="btrfs-space-test-031-$$-$RANDOM" verdict
	dev=$(setup_loop "$1")
	echo "$mark" > /dev/kmsg
	if timeout 60 mount -t btrfs -o ro "$dev" "$mnt" 2> /dev/null; then
		verdict=mounted
		umount "$mnt"
	else
		verdict=refused
	fi
	echo "$verdict"
	dmesg | sed -n "/$mark/,\$p" | grep 'BTRFS' | grep -v 'scanned by\|first mount\|checksum algorithm'
	btrfs device scan --forget "$dev" > /dev/null 2>&1
	losetup -d "$dev"
}

# case MUTATION EXPECT WORDS: EXPECT is error or warning
failures=0
check_case()
{
	local mutation=$1 expect=$2 words=$3 out rc kout kverdict
	cp --sparse=always "$base" "$mut" || fail "cannot copy $base"
	python3 "$mutate" "$mut" "$mutation" || fail "common-mutate.py $mutation failed"
	out=$("$BTRFS_SPACE" inspect "$mut" 2>&1 > /dev/null)
	rc=$?
	echo "$mutation: tool exit $rc: $out"
	if [ "$expect" = error ]; then
		[ "$rc" -eq 1 ] && [ "$(grep -c '' <<< "$out")" -eq 1 ] &&
			grep -q "^ERROR: .*$words" <<< "$out" ||
			{ echo "  FAIL: expected exit 1 and one ERROR line with '$words'"; failures=$((failures + 1)); }
	else
		[ "$rc" -eq 0 ] && grep -q "^WARNING: .*$words" <<< "$out" ||
			{ echo "  FAIL: expected exit 0 and a WARNING with '$words'"; failures=$((failures + 1)); }
	fi
	[ -z "$kernel_reason" ] || return
	kout=$(kernel_verdict "$mut")
	kverdict=$(head -1 <<< "$kout")
	echo "  kernel: $kverdict: $(sed -n 2p <<< "$kout")"
	if { [ "$kverdict" = mounted ] && [ "$rc" -ne 0 ]; } ||
	   { [ "$kverdict" = refused ] && [ "$rc" -eq 0 ]; }; then
		echo "  FAIL: the kernel $kverdict the mutant, the tool exited $rc"
		failures=$((failures + 1))
	fi
	grep -q -- "$words" <<< "$kout" ||
		{ echo "  FAIL: the kernel did not log '$words'"; failures=$((failures + 1)); }
}

check_case stripesize=12288 error "invalid stripesize 12288"
check_case super-flag=36 error "has incomplete metadata_uuid change, please use btrfstune to complete"
check_case total-bytes=1000000000 error "super_total_bytes 1000000000 mismatch with fs_devices total_rw_bytes 1073741824"
check_case num-devices=2 warning "super block num_devices 2 mismatch with DEV_ITEM count 1"
check_case sys-stripe-uuid error "devid 1 uuid [0-9a-f-]* is missing"
check_case dev-item-fsid error "failed to find fsid [0-9a-f-]* when attempting to open seed devices"

[ -z "$kernel_reason" ] || echo "kernel half skipped: $kernel_reason"
[ "$failures" -eq 0 ] || fail "$failures disagreements"
echo "open verdicts: 6 mutants, tool and kernel agree"
