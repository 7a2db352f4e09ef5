#!/bin/bash
# "btrfs-space replay" part 3 on rm of compressed files, recorded with
# contrib/btrfs-space-capture.sh (a private tracefs instance) on a 1 GiB
# image this test makes and mounts with compress=zstd: COMP_FILES (default
# 4) files of COMP_MB (default 4) MiB of text that compresses to about a
# third, each extent 128 KiB before compression and of its own compressed
# size on disk. Before the rm the image is unmounted and "csum-delete --file"
# reads each file's extents from it; after "rm && sync" the replay must
# count as many dropped data heads as the files have extents, their disk
# bytes, and a size rise equal to the sum of what csum-delete computes; every
# traced delayed_refs_rsv refill and release (btrfs_space_reservation) within
# the bound 6.18's callers give it.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space
check_prereq mkfs.btrfs btrfs losetup mount umount mountpoint jq truncate findmnt python3
need_btrfs_module
need_tracefs

: "${COMP_FILES:=4}"
: "${COMP_MB:=4}"

need_capture
setup_cleanup_trap

new_btrfs_mount 1G c rw,compress=zstd

mkdir -p "$mnt/drop"
python3 - "$mnt/drop" "$COMP_FILES" "$COMP_MB" <<'EOS' || fail "cannot write the files"
# hex digits of random bytes: 4 bits of entropy a byte, zstd gets about 1/2
import os, sys
d, n, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    with open(os.path.join(d, "f%d" % i), "wb") as f:
        for _ in range(mb * 2):
            f.write(os.urandom(262144).hex().encode())
EOS
sync
umount "$mnt" || fail "cannot unmount $mnt"
want_total=0 want_before=0 want_extents=0 want_disk=0
for ((i = 0; i < COMP_FILES; i++)); do
	out=$(run_check_stdout "$BTRFS_SPACE" --format json csum-delete --file "/drop/f$i" "$img") || exit
	read -r t tb e db < <(jq -r '[.. | objects | select(has("total") and has("extents") and has("disk_bytes"))][0] |
		"\(.total) \(.total_before) \(.extents) \(.disk_bytes)"' <<< "$out")
	[ -n "$t" ] && [ "$t" != null ] || fail "csum-delete --file /drop/f$i: no total in $(jq -c . <<< "$out" | head -c 300)"
	want_total=$((want_total + t)) want_before=$((want_before + tb))
	want_extents=$((want_extents + e)) want_disk=$((want_disk + db))
done
echo "csum-delete --file: $want_extents extents, $want_disk disk bytes for $((COMP_FILES * COMP_MB)) MiB; size rise $want_total ($want_before before 6.7)"
[ "$want_disk" -lt $((COMP_FILES * COMP_MB * 1048576)) ] || fail "the files are not compressed: $want_disk disk bytes"
cp --sparse=always "$img" "$TEST_TMP/pre.img" || fail "cannot copy $img"
setup_mount "$dev" "$mnt" -t btrfs -o rw,compress=zstd
# reset: the image as csum-delete read it, for a second capture on a busy machine
reset()
{
	umount "$mnt" &&
		dd if="$TEST_TMP/pre.img" of="$dev" bs=1M conv=fsync status=none &&
		setup_mount "$dev" "$mnt" -t btrfs -o rw,compress=zstd
}
capture_retry 16384 "$TEST_TMP/c.trace" reset \
	-e add_delayed_ref_head,run_delayed_ref_head,add_delayed_data_ref,btrfs_space_reservation,btrfs_transaction_commit \
	"$mnt" bash -c "rm -r '$mnt/drop' && sync"
out=$(run_check_stdout "$BTRFS_SPACE" --format json replay --part 3 "$TEST_TMP/c.trace") || exit
jq -r '.delayed_refs | "replay: \(.data_drop_heads) data heads, \(.data_drop_bytes) bytes, \(.csum_leaves) csum leaves, \(.data_drop_refs) refs, size rise \(.size_rise) (\(.size_rise_before_6_7) before 6.7), peak \(.peak_queued)"' <<< "$out"
expect "dropped data heads = the files' extents" "$(jq .delayed_refs.data_drop_heads <<< "$out")" "$want_extents"
expect "their disk bytes" "$(jq .delayed_refs.data_drop_bytes <<< "$out")" "$want_disk"
expect "runs of heads never added" "$(jq .delayed_refs.unknown_runs <<< "$out")" 0
expect "size rise = csum-delete --file's" "$(jq .delayed_refs.size_rise <<< "$out")" "$want_total"
expect "size rise before 6.7 = csum-delete's" "$(jq .delayed_refs.size_rise_before_6_7 <<< "$out")" "$want_before"
# the traced delayed_refs_rsv: reserved bytes within their callers' bounds
# (formulas.md 22.3); 6.18 traces no size to compare the rise with
t=$(jq -c .delayed_refs.rsv_trace <<< "$out")
jq -r '"traced: \(.refills) refills of \(.refilled) bytes (largest \(.refill_max)), \(.releases) releases of \(.released) (largest \(.release_max)), \(.commits) commits"' <<< "$t"
expect "btrfs_space_reservation recorded" "$(jq .traced <<< "$t")" true
expect "bounds checked" "$(jq .bounds_checked <<< "$t")" true
expect "refills above delayed_ref_bytes(1)" "$(jq .refills_over_limit <<< "$t")" 0
expect "releases above their call's drop" "$(jq .releases_over_call <<< "$t")" 0
expect "the transactions' rises sum to the rise" "$(jq '[.transactions[].size_rise] | add' <<< "$t")" "$want_total"
[ "$(jq .releases <<< "$t")" -ge 1 ] || fail "no delayed_refs_rsv release while the heads ran"
