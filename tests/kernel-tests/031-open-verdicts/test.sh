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
#   block group length          read_one_block_group: "block group ... len
#                               4194304 mismatch with chunk ... len 8388608"
#                               (mount-estimate, csum-delete --top: chunks
#                               and global-rsv read no block group item, as
#                               dump-tree -t chunk, Documentation/verdicts.md)
# then images made here the kernel refuses:
#   sector size above the page size   validate_super: "sectorsize 16384 not
#                                     yet supported for page size 4096"
#   a ROOT_ITEM removed from the root tree (extent, csum, free space,
#   block group, dev tree: an edited copy of the bgt-1g fixture, its fsid
#   changed by btrfstune -m first): "failed to load root csum",
#   "failed to read root (objectid=11): -2"
#   a device replace STARTED, its target gone (a finished replace whose
#   DEV_REPLACE item is set back to STARTED): btrfs_init_dev_replace:
#   "tgtdev (devid 0) is missing, need to run 'btrfs dev scan'?"
#   mkfs.btrfs -O zoned on a regular file: 6.18 built without zoned support
#   mounts it as a regular filesystem; the tool too (a WARNING), every
#   allocation field equal to sysfs
# For each: btrfs-space must exit 1 with one ERROR line (0 with the
# WARNING line for the warning case) holding the kernel's words; then the
# mutant is mounted -o ro on a read-write loop device and the kernel must
# agree: refuse where the tool refused, and log the same words. Without
# root, loop devices or btrfs the kernel half is skipped (said so), the
# tool half still runs.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq python3 tar xz mkfs.btrfs btrfstune getconf jq blkid
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

# check_image IMG LABEL EXPECT WORDS [COMMAND]: EXPECT is error or warning
failures=0
cases=0
check_image()
{
	local img=$1 label=$2 expect=$3 words=$4 cmd=${5:-inspect} out rc kout kverdict

	cases=$((cases + 1))
	out=$("$BTRFS_SPACE" "$cmd" "$img" 2>&1 > /dev/null)
	rc=$?
	echo "$label: tool $cmd exit $rc: $out"
	if [ "$expect" = error ]; then
		[ "$rc" -eq 1 ] && [ "$(grep -c '' <<< "$out")" -eq 1 ] &&
			grep -q "^ERROR: .*$words" <<< "$out" ||
			{ echo "  FAIL: expected exit 1 and one ERROR line with '$words'"; failures=$((failures + 1)); }
	else
		[ "$rc" -eq 0 ] && grep -q "^WARNING: .*$words" <<< "$out" ||
			{ echo "  FAIL: expected exit 0 and a WARNING with '$words'"; failures=$((failures + 1)); }
	fi
	[ -z "$kernel_reason" ] || return
	kout=$(kernel_verdict "$img")
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

# check_case MUTATION EXPECT WORDS: a mutant of the ns16k-1g fixture
check_case()
{
	cp --sparse=always "$base" "$mut" || fail "cannot copy $base"
	python3 "$mutate" "$mut" "$1" || fail "common-mutate.py $1 failed"
	check_image "$mut" "$@"
}

check_case stripesize=12288 error "invalid stripesize 12288"
check_case super-flag=36 error "has incomplete metadata_uuid change, please use btrfstune to complete"
check_case total-bytes=1000000000 error "super_total_bytes 1000000000 mismatch with fs_devices total_rw_bytes 1073741824"
check_case num-devices=2 warning "super block num_devices 2 mismatch with DEV_ITEM count 1"
check_case sys-stripe-uuid error "devid 1 uuid [0-9a-f-]* is missing"
check_case dev-item-fsid error "failed to find fsid [0-9a-f-]* when attempting to open seed devices"

# a block group item whose length is not its chunk's: every command that
# makes the mount's checks replays its walk of the block group items, block
# groups loaded or not; chunks reads the chunk tree only and says nothing of it
cp --sparse=always "$base" "$mut" || fail "cannot copy $base"
python3 "$mutate" "$mut" bg-length=4194304 || fail "bg-length failed"
words="block group [0-9]* len 4194304 mismatch with chunk [0-9]* len 8388608"
for cmd in mount-estimate; do
	check_image "$mut" "bg-length" error "$words" "$cmd"
done
"$BTRFS_SPACE" chunks "$mut" > /dev/null 2>&1 ||
	{ echo "  FAIL: chunks: reads the chunk tree only, expected exit 0 on bg-length"; failures=$((failures + 1)); }
out=$("$BTRFS_SPACE" csum-delete --top 3 "$mut" 2>&1 > /dev/null)
[ $? -eq 1 ] && grep -q "^ERROR: $words" <<< "$out" ||
	{ echo "  FAIL: csum-delete: expected exit 1 with '$words': $out"; failures=$((failures + 1)); }

# sector sizes above the page size: refused without CONFIG_BTRFS_EXPERIMENTAL
page=$(getconf PAGESIZE)
for ss in 16384 65536; do
	[ "$ss" -gt "$page" ] || continue
	img=$TEST_TMP/sectorsize-$ss.img
	truncate -s 1G "$img"
	mkfs.btrfs -q -f -s "$ss" "$img" > /dev/null 2>&1 || fail "mkfs.btrfs -s $ss failed"
	check_image "$img" "sectorsize $ss" error "sectorsize $ss not yet supported for page size $page"
	rm -f "$img"
done

# the trees open_ctree() cannot go without, each ROOT_ITEM removed in turn
tar -xSJf "$TEST_TOP/fixtures/bgt-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack bgt-1g"
for tree in "2 failed to load root extent" "7 failed to load root csum" \
	    "10 failed to load root free space" "11 failed to read root (objectid=11): -2" \
	    "4 failed to read root (objectid=4): -2"; do
	id=${tree%% *}
	cp --sparse=always "$TEST_TMP/bgt-1g.img" "$mut" || fail "cannot copy bgt-1g"
	# another copy of the fixture may be mounted: a new fsid, superblock only
	btrfstune -m "$mut" > /dev/null 2>&1 || fail "btrfstune -m failed"
	python3 "$mutate" "$mut" "drop-root-item=$id" || fail "drop-root-item=$id failed"
	words=${tree#* }
	for cmd in global-rsv mount-estimate; do
		out=$("$BTRFS_SPACE" "$cmd" "$mut" 2>&1 > /dev/null)
		[ $? -eq 1 ] && grep -qF -- "$words" <<< "$out" ||
			{ echo "  FAIL: $cmd: expected exit 1 with '$words': $out"; failures=$((failures + 1)); }
	done
	check_image "$mut" "drop ROOT_ITEM $id" error "${words//[()]/.}"
done
rm -f "$TEST_TMP/bgt-1g.img"

# a device replace left STARTED with its target gone: a replace run to its
# end here (root and loop devices needed), then its DEV_REPLACE item set back
# to STARTED from devid 1, whose target (devid 0) is not given
if [ -z "$kernel_reason" ] && command -v btrfs > /dev/null; then
	src=$TEST_TMP/replace-src.img
	tgt=$TEST_TMP/replace-tgt.img
	truncate -s 1G "$src" "$tgt"
	mkfs.btrfs -q -f "$src" > /dev/null 2>&1 || fail "mkfs.btrfs failed"
	sdev=$(setup_loop "$src") && tdev=$(setup_loop "$tgt") || fail "losetup failed"
	setup_mount "$sdev" "$TEST_TMP/replace" -t btrfs
	head -c 20M /dev/urandom > "$TEST_TMP/replace/data"
	btrfs replace start -B -f "$sdev" "$tdev" "$TEST_TMP/replace" > /dev/null ||
		fail "btrfs replace start failed"
	umount "$TEST_TMP/replace"
	btrfs device scan --forget "$tdev" > /dev/null 2>&1
	losetup -d "$sdev"
	losetup -d "$tdev"
	python3 "$mutate" "$tgt" replace-state=1 && python3 "$mutate" "$tgt" replace-src=1 ||
		fail "replace-state failed"
	check_image "$tgt" "replace STARTED, target gone" error "tgtdev (devid 0) is missing, need to run 'btrfs dev scan'?"
	"$BTRFS_SPACE" --degraded inspect "$tgt" 2>&1 > /dev/null |
		grep -q "^WARNING: device replace operation is ongoing and its target (devid 0) is missing" ||
		{ echo "  FAIL: --degraded: no WARNING"; failures=$((failures + 1)); }
	rm -f "$src" "$tgt"
fi

# mkfs.btrfs -O zoned on a regular file: read as a kernel without zoned
# support mounts it (as a regular filesystem), with a WARNING saying so
img=$TEST_TMP/zoned.img
truncate -s 4G "$img"
if mkfs.btrfs -q -f -O zoned "$img" > /dev/null 2>&1; then
	cases=$((cases + 1))
	err=$("$BTRFS_SPACE" --format json inspect "$img" 2>&1 > "$TEST_TMP/zoned.json")
	rc=$?
	echo "zoned: tool exit $rc: $err"
	[ "$rc" -eq 0 ] && grep -q "^WARNING: zoned filesystem: read as a kernel built without CONFIG_BLK_DEV_ZONED mounts it" <<< "$err" ||
		{ echo "  FAIL: expected exit 0 and the zoned WARNING"; failures=$((failures + 1)); }
	# a kernel with zoned support mounts it in zoned mode: not compared
	if { zcat /proc/config.gz; cat "/boot/config-$(uname -r)"; } 2> /dev/null |
		grep -q '^CONFIG_BLK_DEV_ZONED=y'; then
		echo "  kernel: built with CONFIG_BLK_DEV_ZONED, zoned mode not compared"
	elif [ -z "$kernel_reason" ]; then
		zdev=$(setup_loop "$img")
		if mount -t btrfs -o ro "$zdev" "$mnt"; then
			allocation_keys "$(blkid -s UUID -o value "$zdev")" | sort > "$TEST_TMP/zoned.kernel"
			umount "$mnt"
			report_allocation_keys < "$TEST_TMP/zoned.json" | sort > "$TEST_TMP/zoned.tool"
			diff "$TEST_TMP/zoned.kernel" "$TEST_TMP/zoned.tool" ||
				{ echo "  FAIL: zoned: allocation differs from sysfs"; failures=$((failures + 1)); }
			echo "  kernel: mounted, $(wc -l < "$TEST_TMP/zoned.kernel") allocation fields compared"
		else
			echo "  FAIL: the kernel refused the zoned image"; failures=$((failures + 1))
		fi
		btrfs device scan --forget "$zdev" > /dev/null 2>&1
		losetup -d "$zdev"
	fi
else
	echo "zoned: skipped (mkfs.btrfs -O zoned failed on a regular file)"
fi
rm -f "$img"

[ -z "$kernel_reason" ] || echo "kernel half skipped: $kernel_reason"
[ "$failures" -eq 0 ] || fail "$failures disagreements"
echo "open verdicts: $cases images, tool and kernel agree"
