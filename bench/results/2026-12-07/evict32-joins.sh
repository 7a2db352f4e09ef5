#!/bin/bash
# The evict joins of rm for files over 32 MiB: trace update_bytes_may_use with
# stack traces in a private tracefs instance, compare with csum-delete --file
set -u
D=${D:-/tmp/evict32-w}; BS=${BS:-./btrfs-space}
mkdir -p $D/mnt $D/tracefs
img=$D/k.img; loop=
cleanup() { umount $D/mnt 2>/dev/null; [ -n "$loop" ] && losetup -d $loop 2>/dev/null; rmdir $D/tracefs/instances/evict32 2>/dev/null; umount $D/tracefs 2>/dev/null; }
trap cleanup EXIT
rm -f $img; truncate -s ${SIZE:-4G} $img; mkfs.btrfs -q -f $img >/dev/null
loop=$(losetup -f --show $img); mount $loop $D/mnt
for spec in $MAKE; do n=${spec%%:*}; r=${spec#*:}; bs=${r%%x*}; c=${r#*x}; dd if=/dev/urandom of=$D/mnt/$n bs=$bs count=$c oflag=direct status=none; done
sync; umount $D/mnt
mount -t tracefs nodev $D/tracefs || exit 1
inst=$D/tracefs/instances/evict32; mkdir $inst
echo 65536 > $inst/buffer_size_kb
echo 1 > $inst/events/btrfs/update_bytes_may_use/enable
echo 1 > $inst/events/btrfs/btrfs_transaction_commit/enable
echo stacktrace > $inst/events/btrfs/update_bytes_may_use/trigger
fsid=$(btrfs inspect-internal dump-super $loop | awk '$1 == "fsid" { print $2 }')
for f in "$@"; do
	echo "== $f: the tool (unmounted)"
	$BS --format json csum-delete --file /$f $loop > $D/tool-$f.json
	jq -c '{extents: .csum_delete.extents, reserved: .csum_delete.reserved, refills: .csum_delete.refills}' $D/tool-$f.json
	jq -c '.reservation' $D/tool-$f.json
	mount $loop $D/mnt
	btrfs filesystem sync $D/mnt
	echo > $inst/trace; echo 1 > $inst/tracing_on
	echo MARK_RM > $inst/trace_marker
	rm $D/mnt/$f
	echo MARK_SYNC > $inst/trace_marker
	btrfs filesystem sync $D/mnt
	echo 0 > $inst/tracing_on
	cat $inst/trace > $D/trace-$f.txt
	umount $D/mnt
	cat $inst/per_cpu/cpu*/stats | grep -i overrun | tr '\n' ' '; echo
done
