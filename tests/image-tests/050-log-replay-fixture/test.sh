#!/bin/bash
# The log replay of kept images against what Linux 6.18 reported for them.
# Each tests/fixtures/log-replay/NAME.tar.xz holds one image with a log
# tree (log-replay-*.img); NAME.kernel.txt is /sys/fs/btrfs/<fsid>/allocation/
# after "mount -o ro" of that very file on a read-write loop device (Linux
# 6.18.44), which replays the log, as allocation_keys prints it; where there
# is a NAME.mount-reads, it is the reads that mount made (block_bio_queue,
# the mount's own).  Every space-info field and the global reserve must
# equal the kernel's, and mount-estimate's total_reads the mount's reads,
# without a mount.
#   scatter-third  one image of kernel test 032's free-space-scatter-third
#                  case (400 of 1,200 fsynced extents freed through the log),
#                  caught in a run where the tool missed one 16 KiB metadata
#                  block: the commit model kept its delayed-ref cursor at the
#                  last head after a run had found none left, where
#                  btrfs_select_ref_head() has looked again from 0 and stands
#                  at 0, so the original dev-tree leaf's DROP ran before the
#                  new root and dev-tree leaves' ADDs and emptied a third of
#                  an extent-tree leaf that the kernel keeps
#   unlink-fixup   one image of kernel test 037's unlink-many case (12,000
#                  files, nine in ten unlinked, the directory fsynced; 4K
#                  nodes), where the tool had one fs-tree leaf fewer than the
#                  kernel after the replay (metadata bytes_used 4 KiB under):
#                  fixup_inode_link_counts() deleted the fixup item that began
#                  a level-1 node, and fixup_low_keys() moved that node's key
#                  up to its next item; the model kept the old bound, so the
#                  orphan items inserted below the new one went to that node's
#                  first leaf, where the kernel puts them at the end of the
#                  node on the left, and the leaf they left emptying was
#                  pushed into its neighbour and freed
# The data blocks and the second DUP copy are punched out (nothing reads
# them; the kernel's figures are of the punched files).

source "$TEST_TOP/common" || exit

check_prereq btrfs-space jq tar xz
fixtures=$TEST_TOP/fixtures/log-replay
n=0
for tarball in "$fixtures"/*.tar.xz; do
	name=$(basename "$tarball" .tar.xz)
	dir=$TEST_TMP/$name
	mkdir -p "$dir"
	tar -xSJf "$tarball" -C "$dir" || fail "cannot unpack $tarball"
	img=$(echo "$dir"/log-replay-*.img)
	[ -f "$img" ] || fail "$tarball holds no log-replay-*.img"
	[ -f "$fixtures/$name.kernel.txt" ] || fail "no $name.kernel.txt beside $tarball"
	out=$(run_check_stdout "$BTRFS_SPACE" inspect --format json "$img") || exit
	[ "$(jq -r .log_replay.present <<< "$out")" = true ] || fail "$name: the report shows no log tree"

	report_allocation_keys <<< "$out" | sort > "$TEST_TMP/$name.tool.txt"
	if ! diff -u "$fixtures/$name.kernel.txt" "$TEST_TMP/$name.tool.txt" > "$TEST_TMP/diff"; then
		grep '^[-+][a-z]' "$TEST_TMP/diff"
		fail "$name: the tool differs from the kernel's figures (- kernel, + btrfs-space)"
	fi
	echo "$name: $(wc -l < "$TEST_TMP/$name.tool.txt") figures equal the kernel's, log replay $(jq -c '.log_replay | {extent_tree_blocks_added, extent_tree_blocks_freed, subvol_blocks_added, subvol_blocks_freed}' <<< "$out")"
	if [ -f "$fixtures/$name.mount-reads" ]; then
		reads=$(run_check_stdout "$BTRFS_SPACE" --format json mount-estimate "$img" |
			jq .mount_estimate.total_reads) || exit
		expect "$name mount reads" "$reads" "$(cat "$fixtures/$name.mount-reads")"
	fi
	rm -rf "$dir"
	n=$((n + 1))
done
[ "$n" -ge 2 ] || fail "only $n log-replay fixtures in $fixtures"
echo "$n log-replay fixtures equal the kernel's figures"
