#!/bin/bash
# A log tree node whose first pointer points to the node itself, against
# the kernel (Documentation/verdicts.md, "Log trees that point back"): the
# log-replay fixture scatter-third with its subvolume log tree's node
# 54591488 (level 1) changed by tests/fuzz/tree-mutants.py self-pointer.
# 6.18 mounts it: walk_down_log_tree() finds the node in memory (no level
# or generation check of a block it holds), hands it to the replay as a
# leaf (6.18's replay_one_buffer() tests the level it is passed), reads
# an inode item's nlink past the block ("bad eb member start: ..."), so
# replays nothing of it, and never reads the leaf the pointer stood for.
# The pin walk pinned the node twice, the commit unpins it once.  The tool
# must mount it too (main refused: "level verify failed"), print the
# kernel's warning, and give sysfs's allocation fields after the replay
# (metadata bytes_used 884,736, bytes_pinned 16,384 on 6.18.44) and, with
# tracefs, the mount's reads (block:block_bio_queue: 62, 66 unchanged).
source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space losetup mount umount jq python3 findmnt dmesg
need_btrfs_module
[ -w /dev/kmsg ] || skip "cannot write a marker to /dev/kmsg (run as root)"
dmesg > /dev/null 2>&1 || skip "cannot read the kernel log (dmesg): run as root"
losetup -f > /dev/null 2>&1 || skip "no free loop device"
setup_cleanup_trap

tar -xSJf "$TEST_TOP/fixtures/log-replay/scatter-third.tar.xz" -C "$TEST_TMP" ||
	fail "cannot unpack the log-replay fixture"
src=$TEST_TMP/log-replay-scatter.img
img=$TEST_TMP/self.img
"$BTRFS_SPACE" --format json chunks --list-chunks "$src" > "$TEST_TMP/chunks" ||
	fail "cannot read the chunks of $src"
cp --sparse=always "$src" "$img" || fail "cannot copy $src"
python3 "$TEST_TOP/fuzz/tree-mutants.py" "$src" "$TEST_TMP/chunks" 54591488 self-pointer "$img" ||
	fail "cannot make the self-pointer mutant"

"$BTRFS_SPACE" --format json inspect "$img" > "$TEST_TMP/tool.json" 2> "$TEST_TMP/tool.err" ||
	fail "btrfs-space refuses what 6.18 mounts: $(cat "$TEST_TMP/tool.err")"
grep -q "^WARNING: bad eb member start: ptr 0x3410065 start 54591488 member offset 54591629 size 4$" \
	"$TEST_TMP/tool.err" || fail "no kernel warning: $(cat "$TEST_TMP/tool.err")"

# the kernel: a cold mount -o ro of a sparse copy, its reads traced when it can
cp --sparse=always "$img" "$TEST_TMP/mount.img" || fail "cannot copy $img"
dev=$(setup_loop "$TEST_TMP/mount.img") || exit 1
traced=false
if grep -qw tracefs /proc/filesystems && mkdir -p "$TEST_TMP/tracefs" &&
   mount -t tracefs nodev "$TEST_TMP/tracefs" 2> /dev/null; then
	register_mount "$TEST_TMP/tracefs"
	inst=$TEST_TMP/tracefs/instances/bs-038-$$
	if mkdir "$inst" 2> /dev/null; then
		mm=$(cat "/sys/block/${dev#/dev/}/dev")
		echo "dev == $(( (${mm%:*} << 20) | ${mm#*:} ))" > "$inst/events/block/block_bio_queue/filter"
		echo 1 > "$inst/events/block/block_bio_queue/enable" && traced=true
	fi
fi
echo "btrfs-space test 038: mount $dev" > /dev/kmsg
mkdir -p "$TEST_TMP/mnt"
setup_mount "$dev" "$TEST_TMP/mnt" -t btrfs -o ro
if $traced; then
	echo 0 > "$inst/events/block/block_bio_queue/enable"
	kernel_reads=$(grep -v '^#' "$inst/trace" | awk '{ for (i = 1; i < NF; i++)
		if ($i ~ /^[0-9]+,[0-9]+$/) { if ($(i + 1) ~ /R/) n++; break } } END { print n + 0 }')
	rmdir "$inst"
fi
# the lines since the last marker
dmesg | awk '/btrfs-space test 038: mount/ { buf = "" } { buf = buf $0 "\n" }
	END { printf "%s", buf }' > "$TEST_TMP/dmesg"
grep -q "bad eb member start: ptr 0x3410065 start 54591488 member offset 54591629 size 4" \
	"$TEST_TMP/dmesg" || echo "note: the kernel's warning not found in dmesg (rate-limited?)"
fsid=$(findmnt -n -o UUID "$TEST_TMP/mnt")
failed=
for t in data metadata system; do
	for f in total_bytes bytes_used bytes_pinned bytes_may_use bytes_readonly bytes_reserved; do
		k=$(cat "/sys/fs/btrfs/$fsid/allocation/$t/$f")
		v=$(jq ".space_info.$t.$f" "$TEST_TMP/tool.json")
		[ "$k" = "$v" ] || failed="$failed $t.$f:kernel=$k,tool=$v"
	done
done
if $traced; then
	tool_reads=$(jq '.mount_estimate.total_reads' "$TEST_TMP/tool.json")
	[ "$kernel_reads" = "$tool_reads" ] || failed="$failed reads:kernel=$kernel_reads,tool=$tool_reads"
else
	echo "note: no tracefs instance: the mount's reads not compared"
fi
[ -z "$failed" ] || fail "the tool disagrees with the kernel:$failed"
exit 0
