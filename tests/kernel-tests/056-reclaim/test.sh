#!/bin/bash
# The kernel's own reclaim against forecast's prediction (issue 23 item 4,
# formulas.md 21.14).  Twice, on a fresh filesystem (mkfs.btrfs, 3 GiB
# sparse file, nodiscard, commit=5 so the cleaner runs every 5 s):
# - data preallocated in 64 MiB files (fallocate) to about 70 % of the
#   device, synced;
# - bg_reclaim_threshold of data set to 60 in sysfs; forecast in live mode
#   must read it (knobs_from sysfs, threshold_pct 60) and list each data
#   block group at or above 60 % of its length in on_free with
#   free_to_mark = used - length * 60 / 100 + 1;
# - the files lying wholly in the first such block group (FIEMAP via
#   filefrag: btrfs reports logical addresses) are deleted, smallest count
#   first, until at least free_to_mark bytes are freed and some remain
#   used; from a second one, one file, less than its free_to_mark (the
#   control);
# - after a sync the kernel must log "relocating block group START flags
#   data" for the first and not for the control (waited up to 60 s); a
#   round where it relocated nothing is run again (see the end);
# - then the periodic sweep (sweep_round below, plan-sweep.py).

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount fallocate filefrag dmesg python3 truncate jq
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"
dmesg > /dev/null 2>&1 || skip "dmesg is not readable here"
setup_cleanup_trap

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# relocated SINCE LOOP: the data block groups the kernel logged relocating
# on LOOP after kernel time SINCE (seconds; the ring buffer may have
# wrapped on a busy machine: counting lines would not do)
relocated()
{
	dmesg | awk -v since="$1" -v dev="(device $2)" -v devs="(device $2 " '
		{ t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t) }
		t + 0 > since + 0 && (index($0, dev) || index($0, devs)) &&
		/relocating block group [0-9]+ flags data/ {
			for (i = 1; i <= NF; i++) if ($i == "group") print $(i + 1)
		}' | sort -n | tr '\n' ' '
}

one_round()
{
	local round=$1 uuid loop since i want got

	new_btrfs_mount 3G "fs$round" rw,nodiscard,commit=5
	uuid=$(findmnt -n -o UUID "$mnt") || fail "no uuid for $mnt"
	loop=$(basename "$dev")
	for i in $(seq 1 32); do
		fallocate -l 64M "$mnt/f$i" || fail "fallocate f$i"
	done
	sync
	echo 60 > "/sys/fs/btrfs/$uuid/allocation/data/bg_reclaim_threshold" ||
		skip "cannot set bg_reclaim_threshold (kernel before 5.19?)"
	run_check_stdout "$BTRFS_SPACE" --format json forecast "$mnt" > "$TEST_TMP/live.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json block-groups "$mnt" > "$TEST_TMP/bg.json" || exit
	for i in $(seq 1 32); do
		printf 'f%s %s\n' "$i" "$(filefrag -v -b1 "$mnt/f$i" | awk '/^ *[0-9]+:/ {
			gsub(/[.:]/, " "); print $4, $5 - $4 + 1 }' | tr '\n' ' ')"
	done > "$TEST_TMP/extents.txt"
	python3 "$here/plan-frees.py" "$TEST_TMP/live.json" "$TEST_TMP/bg.json" \
		"$TEST_TMP/extents.txt" > "$TEST_TMP/plan.txt" || fail "round $round: prediction checks"
	cat "$TEST_TMP/plan.txt"
	since=$(awk '{ print $1 }' /proc/uptime)
	for i in $(sed -n 's/^delete //p' "$TEST_TMP/plan.txt"); do
		rm -f "$mnt/$i" || fail "rm $i"
	done
	sync
	want=$(sed -n 's/^expect //p' "$TEST_TMP/plan.txt")
	for i in $(seq 1 60); do
		got=$(relocated "$since" "$loop")
		[ -n "$got" ] && sleep 2 && break
		sleep 1
	done
	got=$(relocated "$since" "$loop")
	echo "round $round: predicted relocation of [$want], kernel relocated [${got% }]"
	# nothing at all: the mark was lost (see below), not a wrong prediction
	[ -z "$got" ] && return 1
	[ "${got% }" = "$want" ] || fail "round $round: kernel relocated [${got% }], predicted [$want]"
}

# The periodic sweep: three files deleted while the threshold is still 0
# (no free marks anything), then threshold 60 and periodic_reclaim 1; the
# live forecast's sweep list; a full block group's files deleted to make
# the space info ready (chunk_size freed); the kernel must relocate the
# first candidate and nothing outside the list (the later ones may be
# skipped: the first one's bytes may go into them).
sweep_round()
{
	local uuid loop since i got first allowed g

	new_btrfs_mount 3G "sweep$round" rw,nodiscard,commit=5
	uuid=$(findmnt -n -o UUID "$mnt") || fail "no uuid for $mnt"
	loop=$(basename "$dev")
	for i in $(seq 1 32); do
		fallocate -l 64M "$mnt/f$i" || fail "fallocate f$i"
	done
	sync
	rm -f "$mnt/f1" "$mnt/f2" "$mnt/f3"
	sync
	sleep 7
	echo 60 > "/sys/fs/btrfs/$uuid/allocation/data/bg_reclaim_threshold" &&
	echo 1 > "/sys/fs/btrfs/$uuid/allocation/data/periodic_reclaim" ||
		skip "cannot set periodic_reclaim (kernel before 6.11?)"
	run_check_stdout "$BTRFS_SPACE" --format json forecast "$mnt" > "$TEST_TMP/live.json" || exit
	for i in $(seq 4 32); do
		printf 'f%s %s\n' "$i" "$(filefrag -v -b1 "$mnt/f$i" | awk '/^ *[0-9]+:/ {
			gsub(/[.:]/, " "); print $4, $5 - $4 + 1 }' | tr '\n' ' ')"
	done > "$TEST_TMP/extents.txt"
	python3 "$here/plan-sweep.py" "$TEST_TMP/live.json" "$TEST_TMP/extents.txt" \
		> "$TEST_TMP/sweep.txt" || { cat "$TEST_TMP/sweep.txt"; fail "sweep: prediction checks"; }
	cat "$TEST_TMP/sweep.txt"
	grep -q '^skip' "$TEST_TMP/sweep.txt" && return 0
	first=$(sed -n 's/^first //p' "$TEST_TMP/sweep.txt")
	allowed=$(sed -n 's/^allowed //p' "$TEST_TMP/sweep.txt")
	since=$(awk '{ print $1 }' /proc/uptime)
	for i in $(sed -n 's/^delete //p' "$TEST_TMP/sweep.txt"); do
		rm -f "$mnt/$i" || fail "rm $i"
	done
	sync
	for i in $(seq 1 60); do
		got=$(relocated "$since" "$loop")
		[ -n "$got" ] && sleep 5 && break
		sleep 1
	done
	got=$(relocated "$since" "$loop")
	echo "sweep: predicted [$allowed] (first $first), kernel relocated [${got% }]"
	[ -z "$got" ] && return 1
	[[ " $got " == *" $first "* ]] || fail "sweep: the kernel did not relocate $first: [${got% }]"
	for g in $got; do
		[[ " $allowed " == *" $g "* ]] || fail "sweep: the kernel relocated $g, not predicted"
	done
}

# A round where the kernel relocated nothing is run again on a fresh
# filesystem: btrfs_reclaim_bgs_work() drops a marked block group that
# still has pinned bytes, and the free's own bytes stay pinned until its
# transaction commits, so a cleaner run between the two (timing, on a busy
# machine) loses the mark.  Two rounds must match of at most five, and the
# sweep once of at most three; a round relocating anything else fails.
matched=0
for round in 1 2 3 4 5; do
	one_round "$round" && matched=$((matched + 1))
	[ "$matched" -ge 2 ] && break
done
echo "free-marked rounds: $matched matched of $round"
[ "$matched" -ge 2 ] || fail "the kernel relocated nothing in $((round - matched)) of $round rounds"
for round in 1 2 3; do
	sweep_round && break
	[ "$round" -lt 3 ] || fail "sweep: the kernel relocated nothing in 3 rounds"
done
