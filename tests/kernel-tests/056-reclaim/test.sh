#!/bin/bash
# The kernel's own reclaim against forecast's prediction (issue 23 item 4,
# formulas.md 21.14): which block groups the kernel relocates, and the
# block groups and unallocated space after (the reclaim list replayed
# through relocation.c).  Each round on a fresh filesystem (mkfs.btrfs,
# 3 GiB sparse file): 32 files of 64 MiB preallocated (fallocate), synced,
# then unmounted and mounted again with nodiscard,commit=300, so that
# - no data block group is on the unused list any more: one made during
#   the fill stays there (btrfs_create_pending_block_groups() finds it
#   empty) until a cleaner run, and a free then cannot put it on the
#   reclaim list (btrfs_mark_bg_to_reclaim() adds only a block group on no
#   list): that was why some rounds relocated nothing before;
# - the cleaner runs only when the test wakes it: `btrfs filesystem sync`
#   (BTRFS_IOC_SYNC commits, then wakes the cleaner), after the frees'
#   transaction committed (a marked block group with pinned bytes is
#   dropped by btrfs_reclaim_bgs_work()).
# Rounds, each run twice:
# - free: bg_reclaim_threshold 60; the live forecast lists each full data
#   block group in on_free with free_to_mark = used - length * 60 / 100 + 1;
#   files wholly in the first are deleted until free_to_mark bytes went
#   (some remain): the kernel must relocate it; then one file from a
#   second (the control, less than its free_to_mark): nothing relocated;
# - empty: the same with every file of the first deleted: the free that
#   takes it to 0 moves it to the unused list, the cleaner deletes it and
#   nothing is relocated;
# - sweep: periodic_reclaim, the first and the second sweep (below);
# - sweep dynamic: the same with dynamic_reclaim (see sweep_round);
# - control uncached / cached: the control's file deleted with the
#   target's, before the relocation; its block group full at the mount (no
#   size class: its hole is passed over) or partly used then (classed when
#   the free caches it: its holes are filled); see control_round.
# - armed: dynamic_reclaim, marked on free, with less than a data chunk
#   unused: the threshold is 0 until arm_bytes are freed and committed;
#   predicted from the image before the deletes; see armed_round.
# - sweep armed: dynamic_reclaim and periodic_reclaim with less than a
#   data chunk unused: the sweep sees the armed threshold; see
#   sweep_armed_round.
# ROUNDS="sweep-armed" runs only those (default: all).
# In each, after the frees and a sync, the offline forecast of the image
# (--reclaim-marked for the free-marked one, --full-at-mount for the data
# block groups full at the mount that remain) gives the block groups
# relocated and the state after; then the cleaner is woken and the kernel's
# log, block groups and `btrfs device usage -b` must equal it.  A private
# tracefs instance records each round's marks, relocations and data
# reservations (trace-report.py): the free's mark and the relocation of the
# target must be there in every free and control round.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount fallocate filefrag dmesg python3 truncate jq findmnt fsfreeze
need_btrfs_module
losetup -f > /dev/null 2>&1 || skip "no free loop device (modprobe loop, or free one: losetup -d)"
dmesg > /dev/null 2>&1 || skip "dmesg is not readable here"
need_tracefs
setup_cleanup_trap
setup_trace_instance 056

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The kernel's own account of each round, in the private tracefs instance:
# the marks (a free's or a sweep's), the unused list, the relocations, and
# each data extent reserved (block group, its size class, the loop of
# find_free_extent()) and each data block group find_free_extent() reached
events="btrfs_add_reclaim_block_group btrfs_reclaim_block_group btrfs_add_unused_block_group
	btrfs_skip_unused_block_group btrfs_reserve_extent btrfs_find_free_extent_have_block_group"
echo 8192 > "$inst/buffer_size_kb" || fail "cannot size the trace buffer"
for e in $events; do
	[ -d "$inst/events/btrfs/$e" ] || skip "no tracepoint btrfs:$e"
	case $e in
	btrfs_reserve_extent|btrfs_find_free_extent_have_block_group)
		echo 'flags & 1' > "$inst/events/btrfs/$e/filter" || fail "filter of $e";;
	esac
	echo 1 > "$inst/events/btrfs/$e/enable" || fail "cannot enable btrfs:$e"
done

# trace_report WHAT [MARKED]: the round's events of this filesystem (since
# the frees); MARKED: the block group the free must have marked
trace_report()
{
	grep -F " $uuid: " "$inst/trace" > "$TEST_TMP/events.txt"
	python3 "$here/trace-report.py" "$1" "$TEST_TMP/events.txt" "$2" ||
		fail "$1: the trace differs from the round's expectation"
	grep -q "LOST EVENTS" "$inst/trace" && echo "$1: trace events were lost (a busy machine): shown as read"
	return 0
}

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

# fresh_filled NAME [--partial]: the filled filesystem, mounted again (see
# the top); waits until the mount's cleaner run deleted the empty block
# groups.  --partial: before the umount, one file lying wholly in the
# second full data block group is deleted, so that the mount finds that
# block group partly used (not cached: its size class is read when it is
# cached).  Sets full_at_mount: the data block groups full at the mount
# (read_one_block_group() caches them without reading their extents: no
# size class until an allocation in them).
fresh_filled()
{
	local i pre

	new_btrfs_mount 3G "$1" rw,nodiscard,commit=5
	for i in $(seq 1 32); do
		fallocate -l 64M "$mnt/f$i" || fail "fallocate f$i"
	done
	sync
	if [ "$2" = --partial ]; then
		run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$mnt" > "$TEST_TMP/bg.json" || exit
		extents 1
		pre=$(python3 - "$TEST_TMP/bg.json" "$TEST_TMP/extents.txt" <<'PY'
import json, sys
bgs = sorted((b for b in json.load(open(sys.argv[1]))["block_groups"]
              if b["type_name"] == "DATA" and b["used"] == b["length"]), key=lambda b: b["start"])
b = bgs[1]
for line in open(sys.argv[2]):
    p = line.split()
    ext = [(int(p[i]), int(p[i + 1])) for i in range(1, len(p), 2)]
    if ext and all(b["start"] <= s and s + n <= b["start"] + b["length"] for s, n in ext):
        print(p[0], b["start"])
        break
PY
)
		[ -n "$pre" ] || fail "no file lies wholly in the second full data block group"
		echo "before the mount: deleted ${pre% *} from block group ${pre#* }"
		rm -f "$mnt/${pre% *}" || fail "rm ${pre% *}"
		sync
	fi
	umount "$mnt" || fail "umount $mnt"
	setup_mount "$dev" "$mnt" -t btrfs -o rw,nodiscard,commit=300
	uuid=$(findmnt -n -o UUID "$mnt") || fail "no uuid for $mnt"
	loop=$(basename "$dev")
	for i in $(seq 1 60); do
		btrfs filesystem sync "$mnt" || fail "btrfs filesystem sync"
		run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$mnt" > "$TEST_TMP/bg.json" || exit
		if jq -e '[.block_groups[] | select(.used == 0)] | length == 0' "$TEST_TMP/bg.json" > /dev/null; then
			full_at_mount=$(jq -r '[.block_groups[] | select(.type_name == "DATA" and .used == .length)
				| .start] | map(tostring) | join(",")' "$TEST_TMP/bg.json")
			echo "data block groups full at the mount: [$full_at_mount]"
			return 0
		fi
		sleep 1
	done
	fail "the mount's cleaner did not delete the empty block groups in 60 s"
}

# full_now: the block groups of full_at_mount that still exist (deleted
# ones cannot be named)
full_now()
{
	run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$mnt" > "$TEST_TMP/bgnow.json" || exit
	jq -r --arg f "$full_at_mount" '($f | split(",") | map(tonumber)) as $m
		| [.block_groups[] | select(.start as $s | $m | index($s)) | .start]
		| map(tostring) | join(",")' "$TEST_TMP/bgnow.json"
}

# extents FIRST: each file's extents (FIEMAP via filefrag: btrfs reports
# logical addresses), one line per file
extents()
{
	local i

	for i in $(seq "$1" 32); do
		[ -e "$mnt/f$i" ] || continue
		printf 'f%s %s\n' "$i" "$(filefrag -v -b1 "$mnt/f$i" | awk '/^ *[0-9]+:/ {
			gsub(/[.:]/, " "); print $4, $5 - $4 + 1 }' | tr '\n' ' ')"
	done > "$TEST_TMP/extents.txt"
}

# delete_predict PLAN [forecast options]: the planned deletes, a sync (the
# frees commit; nothing may be relocated: no cleaner run yet), the offline
# forecast of the image after them, told which block groups were full at
# the mount
delete_predict()
{
	local i since full

	since=$(awk '{ print $1 }' /proc/uptime)
	echo > "$inst/trace"
	for i in $(sed -n 's/^delete //p' "$1"); do
		rm -f "$mnt/$i" || fail "rm $i"
	done
	sync
	shift
	full=$(full_now)
	run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$img" --mount-options nodiscard,commit=300 \
		--reclaim-threshold data=60 ${full:+--full-at-mount "$full"} "$@" > "$TEST_TMP/after.json" || exit
	got=$(relocated "$since" "$loop")
	[ -z "$got" ] || fail "relocated before the cleaner was woken: [$got]"
}

# wake_compare WHAT GONE [MORE.json]: wake the cleaner; wait until block
# group GONE is no more (relocated or deleted), then compare with the
# prediction (and with MORE.json, another forecast that must equal it)
wake_compare()
{
	local since i got

	since=$(awk '{ print $1 }' /proc/uptime)
	btrfs filesystem sync "$mnt" || fail "btrfs filesystem sync"
	for i in $(seq 1 90); do
		sync
		run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$mnt" > "$TEST_TMP/bg.json" || exit
		jq -e --argjson g "$2" '[.block_groups[] | select(.start == $g)] | length == 0' \
			"$TEST_TMP/bg.json" > /dev/null && break
		sleep 1
	done
	[ "$i" -lt 90 ] || fail "$1: block group $2 still there 90 s after the cleaner was woken"
	sleep 3
	sync
	run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$mnt" > "$TEST_TMP/bg.json" || exit
	btrfs device usage -b "$mnt" > "$TEST_TMP/usage.txt" || fail "btrfs device usage"
	got=$(relocated "$since" "$loop")
	echo "$1: kernel relocated [${got% }]"
	python3 "$here/compare-after.py" "$TEST_TMP/after.json" "$TEST_TMP/bg.json" \
		"$TEST_TMP/usage.txt" "$got" || fail "$1: the kernel differs from the prediction"
	[ -z "$3" ] || python3 "$here/compare-after.py" "$3" "$TEST_TMP/bg.json" \
		"$TEST_TMP/usage.txt" "$got" || fail "$1: the kernel differs from the prediction $3"
}

# done_with: unmount the round's filesystem, free its loop device and file
done_with()
{
	umount "$mnt" || fail "umount $mnt"
	losetup -d "$dev" || fail "losetup -d $dev"
	rm -f "$img"
}

# free_round N [--empty]
free_round()
{
	local target

	fresh_filled "fs$1"
	echo 60 > "/sys/fs/btrfs/$uuid/allocation/data/bg_reclaim_threshold" ||
		skip "cannot set bg_reclaim_threshold (kernel before 5.19?)"
	run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$mnt" > "$TEST_TMP/live.json" || exit
	extents 1
	python3 "$here/plan-frees.py" $2 "$TEST_TMP/live.json" "$TEST_TMP/bg.json" \
		"$TEST_TMP/extents.txt" > "$TEST_TMP/plan.txt" || { cat "$TEST_TMP/plan.txt"; fail "round $1: prediction checks"; }
	cat "$TEST_TMP/plan.txt"
	target=$(sed -n 's/^target //p' "$TEST_TMP/plan.txt")
	delete_predict "$TEST_TMP/plan.txt" --reclaim-marked "$target"
	wake_compare "round $1${2:+ $2}" "$target"
	# with --empty the free takes it to 0 after marking it: not relocated
	trace_report "round $1${2:+ $2}" "$([ -z "$2" ] && echo "$target")"
	control "round $1${2:+ $2}"
	done_with
}

# control WHAT: the control's file deleted after the relocation (a free of
# less than free_to_mark marks nothing), the cleaner woken: nothing may be
# relocated.  control_round deletes it before the relocation instead.
control()
{
	local since got i

	since=$(awk '{ print $1 }' /proc/uptime)
	for i in $(sed -n 's/^control_delete //p' "$TEST_TMP/plan.txt"); do
		rm -f "$mnt/$i" || fail "rm $i"
	done
	sync
	btrfs filesystem sync "$mnt" || fail "btrfs filesystem sync"
	sleep 5
	got=$(relocated "$since" "$loop")
	echo "$1: control, less than free_to_mark freed: kernel relocated [${got% }], predicted []"
	[ -z "$got" ] || fail "$1: the control's free made the kernel relocate [${got% }]"
}

# The periodic sweep: three files deleted while the threshold is still 0
# (no free marks anything), then threshold 60 and periodic_reclaim 1; the
# live forecast (plan-sweep.py).  Then twice a full block group's files
# deleted (A, then B: chunk_size freed makes the space info ready), the
# offline forecast of the image, the cleaner woken: it deletes the empty
# block group first, so unallocated is no longer below chunk_size and the
# sweep is not urgent.  After A the forecast must say "second sweep" and
# the kernel relocate nothing (the first sweep after the mount only sets
# reclaim_mark); after B the kernel's relocations, block groups and
# unallocated must be the forecast's (later candidates are checked again:
# the first one's bytes may lift them to the threshold).  dynamic:
# dynamic_reclaim 1 too, and before it one file of the first full block
# group, four of the second and two of the third deleted (256, 64 and
# 192 MiB used); the threshold is then about 69 % at the sweep and falls
# by 10 points with each block group relocated (its chunk back to
# unallocated), which the kernel's check again uses: at least one
# candidate must be left when checked again.
sweep_round()
{
	local first a b since got when i left what="sweep $1${2:+ $2}" dyn=

	fresh_filled "sweep$1$2"
	if [ "$2" = dynamic ]; then
		rm -f "$mnt/f1" "$mnt/f6" "$mnt/f7" "$mnt/f8" "$mnt/f9" "$mnt/f11" "$mnt/f12"
	else
		rm -f "$mnt/f1" "$mnt/f2" "$mnt/f3"
	fi
	sync
	echo 60 > "/sys/fs/btrfs/$uuid/allocation/data/bg_reclaim_threshold" &&
	echo 1 > "/sys/fs/btrfs/$uuid/allocation/data/periodic_reclaim" ||
		skip "cannot set periodic_reclaim (kernel before 6.11?)"
	if [ "$2" = dynamic ]; then
		echo 1 > "/sys/fs/btrfs/$uuid/allocation/data/dynamic_reclaim" ||
			skip "cannot set dynamic_reclaim (kernel before 6.11?)"
		dyn="--dynamic-reclaim data"
	fi
	run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$mnt" > "$TEST_TMP/live.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$mnt" > "$TEST_TMP/bg.json" || exit
	extents 1
	python3 "$here/plan-sweep.py" ${2:+--$2} "$TEST_TMP/live.json" "$TEST_TMP/bg.json" "$TEST_TMP/extents.txt" \
		> "$TEST_TMP/sweep.txt" || { cat "$TEST_TMP/sweep.txt"; fail "$what: prediction checks"; }
	cat "$TEST_TMP/sweep.txt"
	first=$(sed -n 's/^first //p' "$TEST_TMP/sweep.txt")
	a=$(sed -n 's/^a //p' "$TEST_TMP/sweep.txt")
	b=$(sed -n 's/^b //p' "$TEST_TMP/sweep.txt")
	sed -n 's/^delete_a /delete /p' "$TEST_TMP/sweep.txt" > "$TEST_TMP/plan.txt"
	delete_predict "$TEST_TMP/plan.txt" --periodic-reclaim data $dyn
	when=$(jq -r '[.forecast.reclaim.data.sweep[].when] | unique | join(",")' "$TEST_TMP/after.json")
	echo "$what, after A: predicted when [$when], unused deleted first" \
		"$(jq -c '[.forecast.unused_block_groups[].start]' "$TEST_TMP/after.json")"
	[ "$when" = "second sweep" ] || fail "$what: after A predicted [$when], not the second sweep"
	since=$(awk '{ print $1 }' /proc/uptime)
	btrfs filesystem sync "$mnt" || fail "btrfs filesystem sync"
	for i in $(seq 1 90); do
		sync
		run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$mnt" > "$TEST_TMP/bg.json" || exit
		jq -e --argjson g "$a" '[.block_groups[] | select(.start == $g)] | length == 0' \
			"$TEST_TMP/bg.json" > /dev/null && break
		sleep 1
	done
	sleep 3
	got=$(relocated "$since" "$loop")
	echo "$what, first sweep: kernel relocated [${got% }], predicted []"
	[ -z "$got" ] || fail "$what: the first sweep relocated [${got% }]"
	sed -n 's/^delete_b /delete /p' "$TEST_TMP/sweep.txt" > "$TEST_TMP/plan.txt"
	delete_predict "$TEST_TMP/plan.txt" --periodic-reclaim data $dyn
	wake_compare "$what" "$first"
	if [ "$2" = dynamic ]; then
		left=$(jq -c '.forecast.reclaim.after.skipped' "$TEST_TMP/after.json")
		[ "$left" != "[]" ] || fail "$what: no block group left when checked again: the threshold's fall not shown"
	fi
	trace_report "$what"
	done_with
}

# control_round N uncached|cached: the control's file deleted with the
# target's, before the relocation (formulas.md 21.14, "cached since the
# mount").  uncached: the control's block group was full at the mount, so
# the mount cached it without its extents read: no size class, skipped by
# find_free_extent()'s loops 0 and 1; the target's bytes go elsewhere.
# cached: a file of it was deleted before the mount (fresh_filled
# --partial), so the free after the mount caches it (btrfs_update_block_group()
# waits for caching_thread(), which reads its size class): the target's
# bytes fill its holes.  The offline forecast with --full-at-mount and the
# live forecast (the extent tree through the kernel's tree search) must
# both equal the kernel; the offline forecast without --full-at-mount (the
# image taken as just mounted) is printed beside it: in the uncached case
# it must differ (it fills the control's hole).
control_round()
{
	local target control cused kused naive

	if [ "$2" = cached ]; then
		fresh_filled "ctl$1$2" --partial
	else
		fresh_filled "ctl$1$2"
	fi
	echo 60 > "/sys/fs/btrfs/$uuid/allocation/data/bg_reclaim_threshold" ||
		skip "cannot set bg_reclaim_threshold (kernel before 5.19?)"
	run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$mnt" > "$TEST_TMP/live.json" || exit
	extents 1
	python3 "$here/plan-frees.py" "$TEST_TMP/live.json" "$TEST_TMP/bg.json" \
		"$TEST_TMP/extents.txt" > "$TEST_TMP/plan.txt" || { cat "$TEST_TMP/plan.txt"; fail "control $1 $2: prediction checks"; }
	cat "$TEST_TMP/plan.txt"
	target=$(sed -n 's/^target //p' "$TEST_TMP/plan.txt")
	control=$(sed -n 's/^control: block group \([0-9]*\) .*/\1/p' "$TEST_TMP/plan.txt")
	sed -i 's/^control_delete /delete /' "$TEST_TMP/plan.txt"
	delete_predict "$TEST_TMP/plan.txt" --reclaim-marked "$target"
	run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$img" --mount-options nodiscard,commit=300 \
		--reclaim-threshold data=60 --reclaim-marked "$target" > "$TEST_TMP/naive.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$mnt" --reclaim-marked "$target" \
		$(f=$(full_now); [ -n "$f" ] && echo --full-at-mount "$f") > "$TEST_TMP/live-after.json" || exit
	echo "control $1 $2: live forecast: extents read $(jq -c '.forecast.reclaim.after.extents_read' "$TEST_TMP/live-after.json"), inexact reason $(jq -c '.forecast.reclaim.after.inexact_reason' "$TEST_TMP/live-after.json")"
	cused=$(jq --argjson g "$control" '.forecast.reclaim.after.block_groups_after[] | select(.start == $g) | .used' "$TEST_TMP/after.json")
	naive=$(jq --argjson g "$control" '.forecast.reclaim.after.block_groups_after[] | select(.start == $g) | .used' "$TEST_TMP/naive.json")
	echo "control $1 $2: control block group $control used after: predicted $cused" \
		"(without --full-at-mount $naive)"
	wake_compare "control $1 $2" "$target" "$TEST_TMP/live-after.json"
	trace_report "control $1 $2" "$target"
	kused=$(jq --argjson g "$control" '.block_groups[] | select(.start == $g) | .used' "$TEST_TMP/bg.json")
	echo "control $1 $2: control block group $control used after: kernel $kused"
	if [ "$2" = uncached ]; then
		[ "$naive" != "$kused" ] || fail "control $1 $2: the image taken as just mounted gave the kernel's $kused too: no difference shown"
	else
		[ "$naive" = "$kused" ] || fail "control $1 $2: without --full-at-mount $naive, kernel $kused"
	fi
	done_with
}

# armed_round N: dynamic reclaim marked on free (dynamic_reclaim 1,
# periodic_reclaim 0).  Right after the fill the space info has less than
# a data chunk unused, so the dynamic threshold is 0; the forecast of the
# image before any delete must say after how many freed bytes it arms and
# at what percent, and which block groups a later free marks (plan-armed.py).
# A: files of the partly used block group and of X, enough to arm it, in
# one transaction (synced): the frees' bytes count toward unused only
# once unpinned, so X's crossing free saw threshold 0 and is never
# marked; sysfs bg_reclaim_threshold (the threshold in effect) must be 0
# before and the armed percent after.  B: files of Y past its
# free_to_mark, then fsfreeze: the freeze commits the frees (the mark) and
# holds the reclaim worker at sb_start_write(), so the image read then
# is the state before the relocation; the offline forecast of it
# (--reclaim-marked Y) must equal the kernel after the thaw: Y relocated,
# X not, the block groups and unallocated; the trace must show Y marked
# and relocated and X never marked.
armed_round()
{
	local x y pct k i full same= what="armed $1" since got

	fresh_filled "armed$1"
	echo 1 > "/sys/fs/btrfs/$uuid/allocation/data/dynamic_reclaim" ||
		skip "cannot set dynamic_reclaim (kernel before 6.11?)"
	# the mount's cleaner deleted the empty block groups: once that is
	# committed the image has the kernel's figures (before, its unused is
	# theirs more); the live forecast reads sysfs
	for i in $(seq 1 10); do
		sync
		run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$img" --mount-options nodiscard,commit=300 \
			--dynamic-reclaim data > "$TEST_TMP/before.json" || exit
		run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$mnt" > "$TEST_TMP/live.json" || exit
		k=$(jq -c '.forecast.reclaim.data | [.knobs_from, .unused, .arm_bytes, .armed_pct]' "$TEST_TMP/live.json")
		[ "$(jq -c '.forecast.reclaim.data | ["sysfs", .unused, .arm_bytes, .armed_pct]' "$TEST_TMP/before.json")" = "$k" ] &&
			same=yes && break
		sleep 1
	done
	echo "$what: live forecast (sysfs knobs, space info) [knobs, unused, arm_bytes, armed_pct] $k"
	[ -n "$same" ] || fail "$what: the image's forecast differs from the live one after 10 commits"
	extents 1
	python3 "$here/plan-armed.py" "$TEST_TMP/before.json" "$TEST_TMP/bg.json" "$TEST_TMP/extents.txt" \
		> "$TEST_TMP/armed.txt" || { cat "$TEST_TMP/armed.txt"; fail "$what: prediction checks"; }
	cat "$TEST_TMP/armed.txt"
	x=$(sed -n 's/^unmarked //p' "$TEST_TMP/armed.txt")
	y=$(sed -n 's/^target //p' "$TEST_TMP/armed.txt")
	pct=$(sed -n 's/^armed_pct //p' "$TEST_TMP/armed.txt")
	k=$(cat "/sys/fs/btrfs/$uuid/allocation/data/bg_reclaim_threshold")
	echo "$what: sysfs threshold before the deletes $k, predicted 0"
	[ "$k" = 0 ] || fail "$what: sysfs threshold $k before the deletes, predicted 0"
	since=$(awk '{ print $1 }' /proc/uptime)
	echo > "$inst/trace"
	for i in $(sed -n 's/^delete_a //p' "$TEST_TMP/armed.txt"); do
		rm -f "$mnt/$i" || fail "rm $i"
	done
	sync
	k=$(cat "/sys/fs/btrfs/$uuid/allocation/data/bg_reclaim_threshold")
	echo "$what: sysfs threshold after A $k, predicted $pct"
	[ "$k" = "$pct" ] || fail "$what: sysfs threshold $k after A, predicted $pct"
	# named before the freeze: nothing may exit while it is frozen
	full=$(full_now)
	for i in $(sed -n 's/^delete_b //p' "$TEST_TMP/armed.txt"); do
		rm -f "$mnt/$i" || fail "rm $i"
	done
	fsfreeze -f "$mnt" || fail "fsfreeze -f $mnt"
	"$BTRFS_SPACE" --format json forecast --list-chunks "$img" --mount-options nodiscard,commit=300 \
		--dynamic-reclaim data --reclaim-marked "$y" ${full:+--full-at-mount "$full"} \
		> "$TEST_TMP/after.json"
	k=$?
	got=$(relocated "$since" "$loop")
	fsfreeze -u "$mnt" || fail "fsfreeze -u $mnt"
	[ "$k" = 0 ] || fail "$what: the forecast of the frozen image failed"
	[ -z "$got" ] || fail "$what: relocated before the image was read: [$got]"
	wake_compare "$what" "$y"
	trace_report "$what" "$y"
	if grep -q "btrfs_add_reclaim_block_group: .* bytenr=$x " "$TEST_TMP/events.txt"; then
		fail "$what: $x marked, though its crossing free came before the threshold armed"
	fi
	echo "$what: $x never marked, as predicted"
	done_with
}

# sweep_armed_round N: dynamic_reclaim and periodic_reclaim, with less
# than a data chunk unused after the fill: the threshold in effect is 0
# (sysfs bg_reclaim_threshold), but a sweep waits for a data chunk freed
# net (periodic_reclaim_ready) and runs after the commit that unpinned
# it, so it sees armed_pct.  Main showed threshold 0 and no candidates.
# The forecast of the image before any delete (plan-sweep-armed.py)
# names armed_pct and when; A (a chunk or more, from three full block
# groups, none emptied), synced: sysfs must read armed_pct.  Urgent (less
# than a chunk unallocated, as on 3 GiB): the cleaner woken, the first
# sweep relocates, compared with the offline forecast (wake_compare); not
# urgent: the first sweep only sets reclaim_mark (nothing relocated) and
# B, from three others, readies the second, compared likewise.
sweep_armed_round()
{
	local what="sweep armed $1" i k same= pct when since got first

	fresh_filled "sweeparmed$1"
	echo 1 > "/sys/fs/btrfs/$uuid/allocation/data/dynamic_reclaim" &&
	echo 1 > "/sys/fs/btrfs/$uuid/allocation/data/periodic_reclaim" ||
		skip "cannot set dynamic_reclaim, periodic_reclaim (kernel before 6.11?)"
	for i in $(seq 1 10); do
		sync
		run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$img" --mount-options nodiscard,commit=300 \
			--dynamic-reclaim data --periodic-reclaim data > "$TEST_TMP/before.json" || exit
		run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$mnt" > "$TEST_TMP/live.json" || exit
		k=$(jq -c '.forecast.reclaim.data | [.knobs_from, .unused, .arm_bytes, .armed_pct]' "$TEST_TMP/live.json")
		[ "$(jq -c '.forecast.reclaim.data | ["sysfs", .unused, .arm_bytes, .armed_pct]' "$TEST_TMP/before.json")" = "$k" ] &&
			same=yes && break
		sleep 1
	done
	echo "$what: live forecast [knobs, unused, arm_bytes, armed_pct] $k"
	[ -n "$same" ] || fail "$what: the image's forecast differs from the live one after 10 commits"
	run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$mnt" > "$TEST_TMP/bg.json" || exit
	extents 1
	python3 "$here/plan-sweep-armed.py" "$TEST_TMP/before.json" "$TEST_TMP/bg.json" "$TEST_TMP/extents.txt" \
		> "$TEST_TMP/sweep.txt" || { cat "$TEST_TMP/sweep.txt"; fail "$what: prediction checks"; }
	cat "$TEST_TMP/sweep.txt"
	pct=$(sed -n 's/^armed_pct //p' "$TEST_TMP/sweep.txt")
	when=$(sed -n 's/^when //p' "$TEST_TMP/sweep.txt")
	k=$(cat "/sys/fs/btrfs/$uuid/allocation/data/bg_reclaim_threshold")
	echo "$what: sysfs threshold before the deletes $k, predicted 0"
	[ "$k" = 0 ] || fail "$what: sysfs threshold $k before the deletes, predicted 0"
	sed -n 's/^delete_a /delete /p' "$TEST_TMP/sweep.txt" > "$TEST_TMP/plan.txt"
	delete_predict "$TEST_TMP/plan.txt" --periodic-reclaim data --dynamic-reclaim data
	k=$(cat "/sys/fs/btrfs/$uuid/allocation/data/bg_reclaim_threshold")
	echo "$what: sysfs threshold after A (a chunk freed, committed) $k, predicted $pct"
	[ "$k" = "$pct" ] || fail "$what: sysfs threshold $k after A, predicted $pct"
	if [ "$when" = "second sweep" ]; then
		since=$(awk '{ print $1 }' /proc/uptime)
		btrfs filesystem sync "$mnt" || fail "btrfs filesystem sync"
		sleep 5
		sync
		got=$(relocated "$since" "$loop")
		echo "$what, first sweep: kernel relocated [${got% }], predicted []"
		[ -z "$got" ] || fail "$what: the first sweep relocated [${got% }]"
		sed -n 's/^delete_b /delete /p' "$TEST_TMP/sweep.txt" > "$TEST_TMP/plan.txt"
		delete_predict "$TEST_TMP/plan.txt" --periodic-reclaim data --dynamic-reclaim data
	fi
	first=$(jq '.forecast.reclaim.data.sweep[0].start' "$TEST_TMP/after.json")
	echo "$what: predicted $when of $(jq -c '[.forecast.reclaim.data.sweep[].start]' "$TEST_TMP/after.json")" \
		"at $(jq '.forecast.reclaim.data.threshold_pct' "$TEST_TMP/after.json") %," \
		"relocated $(jq -c '.forecast.reclaim.after.relocated' "$TEST_TMP/after.json")"
	[ "$first" != null ] || fail "$what: no sweep candidate"
	wake_compare "$what" "$first"
	trace_report "$what"
	done_with
}

for round in 1 2; do
	case " ${ROUNDS:-all} " in *" all "*) ;; *) continue;; esac
	free_round "$round"
	free_round "$round" --empty
	sweep_round "$round"
	sweep_round "$round" dynamic
	control_round "$round" uncached
	control_round "$round" cached
	armed_round "$round"
done
for round in 1 2; do
	case " ${ROUNDS:-all} " in *" all "* | *" sweep-armed "*) ;; *) continue;; esac
	sweep_armed_round "$round"
done
echo "every round as predicted, twice"
