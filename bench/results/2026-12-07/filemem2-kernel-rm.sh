#!/bin/bash
# Does the kernel keep a big rm's delayed ref heads until one commit?  Trace the rm of
# a file of N 4 KiB extents 4 KiB apart (falloc-loop), on a fresh 16 GiB filesystem
set -u
D=${D:-/tmp/kernel-rm}; FL=${FL:-$D/falloc-loop}; BS=${BS:-./btrfs-space}
# FL: gcc -O2 -o $D/falloc-loop bench/falloc-loop.c
mkdir -p $D/mnt $D/tracefs
img=$D/k.img
loop=
cleanup() { umount $D/mnt 2>/dev/null; [ -n "$loop" ] && losetup -d $loop 2>/dev/null; rmdir $D/tracefs/instances/kernel-rm 2>/dev/null; umount $D/tracefs 2>/dev/null; }
trap cleanup EXIT
rm -f $img; truncate -s 16G $img; mkfs.btrfs -q -f $img >/dev/null
loop=$(losetup -f --show $img); mount $loop $D/mnt
for n in "$@"; do $FL $D/mnt/f$n 4K 4K $((n * 4))K >/dev/null; done
umount $D/mnt
mount -t tracefs nodev $D/tracefs || exit 1
inst=$D/tracefs/instances/kernel-rm; mkdir $inst
echo 262144 > $inst/buffer_size_kb
for e in add_delayed_ref_head run_delayed_ref_head btrfs_transaction_commit btrfs_flush_space btrfs_trigger_flush; do
	[ -d $inst/events/btrfs/$e ] && echo 1 > $inst/events/btrfs/$e/enable
done
fsid=$(btrfs inspect-internal dump-super $loop | awk '$1 == "fsid" { print $2 }')
for n in "$@"; do
	echo "== f$n: the tool's prediction (unmounted)"
	$BS --format json csum-delete --file /f$n $loop | jq -c '{extents: .csum_delete.extents, total: .csum_delete.total, peak: .csum_delete.peak, reserved: .csum_delete.reserved, refills: .csum_delete.refills, preempt_flush: .reservation.preempt_flush}' 2>/dev/null
	mount $loop $D/mnt
	btrfs filesystem sync $D/mnt
	echo > $inst/trace; echo 1 > $inst/tracing_on
	echo MARK_RM > $inst/trace_marker
	t0=$(date +%s.%N); rm $D/mnt/f$n; t1=$(date +%s.%N)
	echo MARK_SYNC > $inst/trace_marker
	btrfs filesystem sync $D/mnt; t2=$(date +%s.%N)
	echo 0 > $inst/tracing_on
	cat $inst/trace > $D/trace-$n.txt
	umount $D/mnt
	echo "rm $(echo "$t1 - $t0" | bc) s, sync $(echo "$t2 - $t1" | bc) s"
	awk -v FSID="$fsid" '/MARK_RM/ { on = 1; ph = "rm"; next } /MARK_SYNC/ { ph = "sync"; next }
		!on || !index($0, FSID) { next }
		/ add_delayed_ref_head: / { add[ph]++ }
		/ run_delayed_ref_head: / { c = $1; sub(/-[0-9]+$/, "", c); run[ph]++; task[ph " " c]++ }
		/ btrfs_transaction_commit: / { com[ph]++ }
		/ btrfs_flush_space: / { f = $0; sub(/.*state=/, "", f); sub(/ .*/, "", f); fl[ph " state " f]++ }
		END {
			for (p in add) printf "heads added during %s: %d\n", p, add[p]
			for (p in run) printf "heads run during %s: %d\n", p, run[p]
			for (t in task) printf "  run by %s: %d\n", t, task[t]
			for (p in com) printf "commits during %s: %d\n", p, com[p]
			for (f in fl) printf "flush_space during %s: %d\n", f, fl[f]
		}' $D/trace-$n.txt | sort
	grep -c . $D/trace-$n.txt | sed 's/^/trace lines: /'
	grep -m1 -i "lost\|overrun" $inst/per_cpu/cpu0/stats 2>/dev/null
	cat $inst/per_cpu/cpu*/stats 2>/dev/null | grep -i overrun
done
