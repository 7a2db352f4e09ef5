#!/bin/bash
# The log replay of a kept image against what Linux 6.18 reported for it.
# tests/fixtures/log-replay/scatter-third.tar.xz is one image of kernel
# test 032's free-space-scatter-third case (400 of 1,200 fsynced extents
# freed through the log), caught in a run where the tool missed one 16 KiB
# metadata block: the commit model kept its delayed-ref cursor at the last
# head after a run had found none left, where btrfs_select_ref_head() has
# looked again from 0 and stands at 0, so the original dev-tree leaf's DROP
# ran before the new root and dev-tree leaves' ADDs and emptied a third of
# an extent-tree leaf that the kernel keeps.  The data blocks and the second
# DUP copy are punched out (nothing reads them); scatter-third.kernel.txt is
# /sys/fs/btrfs/<fsid>/allocation/ after "mount -o ro" of that very file on
# a read-write loop device (Linux 6.18.44), which replays the log, as
# allocation_keys prints it.  Every space-info field and the global reserve
# must equal it, without a mount.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space jq tar xz
fixtures=$TEST_TOP/fixtures/log-replay
tar -xSJf "$fixtures/scatter-third.tar.xz" -C "$TEST_TMP" ||
	fail "cannot unpack $fixtures/scatter-third.tar.xz"
img=$TEST_TMP/log-replay-scatter.img
out=$(run_check_stdout "$BTRFS_SPACE" inspect --format json "$img") || exit
[ "$(jq -r .log_replay.present <<< "$out")" = true ] || fail "the report shows no log tree"

report_allocation_keys <<< "$out" | sort > "$TEST_TMP/tool.txt"
if ! diff -u "$fixtures/scatter-third.kernel.txt" "$TEST_TMP/tool.txt" > "$TEST_TMP/diff"; then
	grep '^[-+][a-z]' "$TEST_TMP/diff"
	fail "the tool differs from the kernel's figures (- kernel, + btrfs-space)"
fi
echo "scatter-third: $(wc -l < "$TEST_TMP/tool.txt") figures equal the kernel's, log replay $(jq -c '.log_replay | {extent_tree_blocks_added, extent_tree_blocks_freed, subvol_blocks_added}' <<< "$out")"
