#!/bin/bash
# Live mode: "btrfs-space inspect MOUNTPOINT" reads the metadata through the
# kernel (BTRFS_IOC_FS_INFO, DEV_INFO, TREE_SEARCH_V2, sysfs) and must give
# the same report as the offline read of the unmounted image.
#
# A 1 GiB sparse image (mkfs.btrfs defaults) gets data through a read-write
# mount (a 64 MiB file, a few hundred small files, some deleted), is
# unmounted and read offline ("inspect", "chunks", "block-groups" with
# --format json), then mounted -o ro on a read-write loop device and read
# live through the mount point. Compared:
# - space_info (every field of every type), global_rsv_size and
#   global_rsv_reserved, the block-group count and source, the filesystem
#   section, the global reserve detail, the over-commit and preemption
#   sections: equal;
# - the chunk list and the block-group list: equal, except the block
#   groups' "leaf" (the tree search does not say which leaf held the item);
# - the device list: equal except the path (image file offline, loop device
#   live); the "io" counters are not compared;
# - the mount estimate (live mode replays it on the devices' on-disk trees,
#   read-only) and the summary: equal, and so is everything else "inspect"
#   prints.
# On the read-only mount the live metadata bytes_may_use (the reservation
# model's runtime input, taken from sysfs allocation/) must equal sysfs.
#
# Then the filesystem is mounted read-write and a 100 MiB file is written
# without sync, so delalloc holds metadata reservations beyond the global
# reserve: the live report's preempt.bytes_may_use must lie between the
# sysfs value read just before and just after the run, and an explicit
# --may-use must still win over the live value. With and without it, the
# summary must weigh the same live figures as the other sections.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space mkfs.btrfs losetup mount umount mountpoint jq truncate
need_btrfs_module

img="$TEST_TMP/live.img"
mnt="$TEST_TMP/mnt"
out="$TEST_TMP/out"
mkdir -p "$mnt" "$out" || fail "cannot create $mnt, $out"

truncate -s 1G "$img" || fail "cannot create $img"
mkfs.btrfs -q -f "$img" > "$out/mkfs.log" 2>&1 ||
	fail "mkfs.btrfs failed: $(tail -n 1 "$out/mkfs.log")"
dev=$(losetup -f --show "$img" 2> "$out/losetup.log") ||
	skip "cannot attach a loop device: $(tail -n 1 "$out/losetup.log")"
register_loop "$dev"

# mount_dev OPTS: mount $dev at $mnt, skip (77) when btrfs cannot be mounted
mount_dev()
{
	mount -t btrfs -o "$1" "$dev" "$mnt" 2> "$out/mount.log" ||
		skip "cannot mount btrfs on a loop device: $(tail -n 1 "$out/mount.log")"
	register_mount "$mnt"
}

umount_dev()
{
	umount "$mnt" || fail "umount $mnt failed"
}

# --- populate through a read-write mount, then read offline ----------------

mount_dev rw
head -c $((64 * 1024 * 1024)) /dev/urandom > "$mnt/big" || fail "cannot write $mnt/big"
sizes=(100 1500 3000 4096 9000 40000 130000)
for i in $(seq 1 300); do
	d="$mnt/dir$((i % 5))"
	mkdir -p "$d" || fail "mkdir $d"
	head -c "${sizes[$((i % ${#sizes[@]}))]}" /dev/urandom > "$d/file$i" || fail "write $d/file$i"
done
for i in $(seq 7 7 300); do
	rm -f "$mnt/dir$((i % 5))/file$i"
done
sync
umount_dev

for cmd in inspect chunks block-groups; do
	run_check_stdout "$BTRFS_SPACE" --format json "$cmd" $(list_each "$cmd") "$img" > "$out/offline-$cmd.json"
done

# --- the same filesystem mounted read-only, read live ------------------------

mount_dev ro
for cmd in inspect chunks block-groups; do
	run_check_stdout "$BTRFS_SPACE" --format json "$cmd" $(list_each "$cmd") "$mnt" > "$out/live-$cmd.json"
done
fsid=$(jq -r .filesystem.fsid "$out/live-inspect.json") || fail "no fsid in the live report"
sysfs="/sys/fs/btrfs/$fsid/allocation"
[ -d "$sysfs" ] || fail "no $sysfs"
sysfs_may_use=$(cat "$sysfs/metadata/bytes_may_use") || fail "cannot read $sysfs/metadata/bytes_may_use"
umount_dev

errors=0

# same FILTER KEY...: compare jq FILTER applied to the offline and live files
same()
{
	local what=$1 file=$2 filter=$3 a b

	a=$(jq -S "$filter" "$out/offline-$file.json") || fail "jq $filter offline-$file.json"
	b=$(jq -S "$filter" "$out/live-$file.json") || fail "jq $filter live-$file.json"
	if [ "$a" = "$b" ]; then
		echo "match $what"
	else
		echo "MISMATCH $what"
		diff <(echo "$a") <(echo "$b") | head -n 20
		errors=$((errors + 1))
	fi
}

same space_info inspect '.space_info'
same global_rsv_size inspect '.global_rsv_size'
same global_rsv_reserved inspect '.global_rsv_reserved'
same block_groups.count inspect '.block_groups'
same filesystem inspect '.filesystem'
same devices inspect '.devices | map(del(.path))'
same global_rsv inspect '.global_rsv'
same overcommit inspect '.overcommit'
same preempt inspect '.preempt'
same mount_estimate inspect '.mount_estimate'
same summary inspect '.summary'
# live mode alone reads the mount's options (where the discard mode comes
# from) and sysfs's reclaim files
same "inspect (all but mode, io, device paths, the mount options' source and reclaim)" inspect \
	'del(.mode) | del(.io) | .devices |= map(del(.path)) | del(.forecast.mount.discard_source) | del(.forecast.reclaim)'
same chunks.count chunks '.chunks | length'
same chunks chunks '.chunks'
same block-groups.count block-groups '.block_groups | length'
same block-groups block-groups '.block_groups | map(del(.leaf))'

nchunks=$(jq '.chunks | length' "$out/live-chunks.json")
nbgs=$(jq '.block_groups | length' "$out/live-block-groups.json")
[ "$nchunks" -gt 0 ] && [ "$nchunks" = "$nbgs" ] ||
	{ echo "MISMATCH chunks=$nchunks block_groups=$nbgs"; errors=$((errors + 1)); }

live_may_use=$(jq .preempt.bytes_may_use "$out/live-inspect.json")
if [ "$live_may_use" = "$sysfs_may_use" ]; then
	echo "match read-only mount bytes_may_use $live_may_use = sysfs"
else
	echo "MISMATCH read-only mount bytes_may_use live=$live_may_use sysfs=$sysfs_may_use"
	errors=$((errors + 1))
fi

# --- read-write mount with delalloc: the live runtime input is sysfs' --------

mount_dev rw
head -c $((100 * 1024 * 1024)) /dev/urandom > "$mnt/pending" || fail "cannot write $mnt/pending"
before=$(cat "$sysfs/metadata/bytes_may_use")
run_check_stdout "$BTRFS_SPACE" --format json inspect "$mnt" > "$out/live-rw.json"
after=$(cat "$sysfs/metadata/bytes_may_use")
run_check_stdout "$BTRFS_SPACE" --format json inspect --may-use 1G "$mnt" > "$out/live-rw-whatif.json"
run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$mnt" > "$out/live-rw-bgs.json"
umount_dev

rw_may_use=$(jq .preempt.bytes_may_use "$out/live-rw.json")
rsv=$(jq .global_rsv_reserved "$out/live-rw.json")
lo=$((before < after ? before : after))
hi=$((before < after ? after : before))
if [ "$rw_may_use" -ge "$lo" ] && [ "$rw_may_use" -le "$hi" ]; then
	echo "match read-write mount bytes_may_use $rw_may_use (sysfs $before before, $after after; global reserve $rsv)"
else
	echo "MISMATCH read-write mount bytes_may_use live=$rw_may_use sysfs before=$before after=$after"
	errors=$((errors + 1))
fi
[ "$rw_may_use" -gt "$rsv" ] ||
	echo "note: bytes_may_use $rw_may_use is only the global reserve: delalloc was flushed before the run"
whatif=$(jq .preempt.bytes_may_use "$out/live-rw-whatif.json")
if [ "$whatif" = $((1024 * 1024 * 1024)) ]; then
	echo "match --may-use 1G wins over the live value"
else
	echo "MISMATCH --may-use 1G gave bytes_may_use $whatif"
	errors=$((errors + 1))
fi
# the summary weighs the live figures the other sections show: the space
# infos, the devices, the over-commit room and the preempt state of the run
# shellcheck disable=SC2016 # a jq program
summary_check='
def held: .bytes_used + .bytes_reserved + .bytes_pinned + .bytes_readonly
	+ .bytes_zone_unusable + .bytes_may_use;
. as $r | [
	($r.space_info | to_entries[] | .key as $t | .value as $si
	 | select($r.summary.space[$t].free != ([$si.total_bytes - ($si | held), 0] | max))
	 | "summary.space.\($t).free"),
	(select($r.summary.unallocated.bytes != ([$r.devices[].unallocated] | add))
	 | "summary.unallocated.bytes"),
	(select($r.summary.overcommit.room != $r.overcommit.avail_flush_all)
	 | "summary.overcommit.room"),
	(select($r.summary.preempt.bytes_may_use != $r.preempt.bytes_may_use)
	 | "summary.preempt.bytes_may_use"),
	(select($r.summary.mount.reads != $r.mount_estimate.total_reads)
	 | "summary.mount.reads")
] | join(" ")'
for f in live-rw live-rw-whatif; do
	diffs=$(jq -r "$summary_check" "$out/$f.json") || fail "jq on $f.json"
	if [ -z "$diffs" ]; then
		echo "match $f: the summary weighs the live figures of the other sections"
	else
		echo "MISMATCH $f: the summary differs from the other sections in $diffs"
		errors=$((errors + 1))
	fi
done
[ "$(jq '.block_groups | length' "$out/live-rw-bgs.json")" -gt 0 ] ||
	{ echo "MISMATCH read-write mount: no block groups"; errors=$((errors + 1)); }

[ "$errors" = 0 ] || fail "$errors difference(s) between the offline and the live report"
exit 0
