#!/bin/bash
# csum-delete --file's reservation.reserve_flush against the kernel
# (formulas.md 14.1): a deletion whose reservations are more than
# over-commit grants makes the rm's own reservations flush
# (btrfs_truncate_inode_items() -EAGAIN on a BTRFS_RESERVE_NO_FLUSH refill,
# btrfs_evict_inode()'s FLUSH_EVICT ticket run by the rm: delayed refs run
# during the rm), one that fits does not.  A fresh 16 GiB filesystem, a
# file of 100,000 extents of 4 KiB 4 KiB apart (reserved about 52 GB; on
# another filesystem of 16 GiB preempt_flush was false there while the rm
# ran 94 % of the heads itself) and one of 4; for each the tool
# runs on the unmounted device, then the rm is traced (run_delayed_ref_head
# in a private tracefs instance): the heads the rm task ran before the
# sync's commit must be many when reserve_flush is true and none when false.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount jq truncate python3 awk
need_btrfs_module
need_tracefs
setup_trace_instance rmflush
[ -d "$inst/events/btrfs/run_delayed_ref_head" ] || skip "no btrfs run_delayed_ref_head tracepoint"
echo 1 > "$inst/events/btrfs/run_delayed_ref_head/enable" ||
	fail "cannot enable btrfs/run_delayed_ref_head"
echo 65536 > "$inst/buffer_size_kb" || true

new_btrfs_mount 16G rmflush
# N fallocate(2) calls of 4 KiB, 4 KiB apart: N extents, bytenrs rising
python3 - "$mnt/big" 100000 "$mnt/small" 4 <<'PY' || fail "fallocate"
import os, sys
for path, n in zip(sys.argv[1::2], sys.argv[2::2]):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    for i in range(int(n)):
        os.posix_fallocate(fd, i * 8192, 4096)
    os.close(fd)
PY
umount "$mnt" || fail "umount"

# rm_heads FILE: heads the rm task ran between the rm and the sync's
# commit, into $heads
rm_heads()
{
	setup_mount "$dev" "$mnt" -t btrfs -o rw
	btrfs filesystem sync "$mnt" || fail "sync before the rm"
	echo > "$inst/trace"
	echo 1 > "$inst/tracing_on"
	echo MARK_RM > "$inst/trace_marker"
	rm "$mnt/$1" || fail "rm $1"
	echo MARK_SYNC > "$inst/trace_marker"
	btrfs filesystem sync "$mnt" || fail "sync after the rm"
	echo 0 > "$inst/tracing_on"
	umount "$mnt" || fail "umount"
	heads=$(awk '/MARK_RM/ { on = 1; next } /MARK_SYNC/ { on = 0; next }
		on && / run_delayed_ref_head: / { c = $1; sub(/-[0-9]+$/, "", c); if (c == "rm") n++ }
		END { print n + 0 }' "$inst/trace")
}

for f in small big; do
	out=$(run_check_stdout "$BTRFS_SPACE" --format json csum-delete --file "/$f" "$dev") || fail "btrfs-space $f"
	flush=$(jq -r .reservation.reserve_flush <<< "$out")
	preempt=$(jq -r .reservation.preempt_flush <<< "$out")
	rm_heads "$f"
	echo "$f: reserved $(jq -r .csum_delete.reserved <<< "$out"), extents $(jq -r .csum_delete.extents <<< "$out"), reserve_flush $flush, preempt_flush $preempt; heads run by the rm before the commit: $heads"
	case $flush in
	true) [ "$heads" -gt 0 ] || fail "$f: reserve_flush true, but the rm ran no heads" ;;
	false) [ "$heads" -eq 0 ] || fail "$f: reserve_flush false, but the rm ran $heads heads" ;;
	*) fail "$f: no reservation.reserve_flush in the output" ;;
	esac
	[ "$f" = big ] && [ "$flush" != true ] && fail "big: reserve_flush should be true on 16 GiB"
	[ "$f" = small ] && [ "$flush" != false ] && fail "small: reserve_flush should be false"
done
echo "reserve_flush matches the kernel's flushing in the rm"
