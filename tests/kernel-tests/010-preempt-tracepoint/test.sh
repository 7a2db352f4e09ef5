#!/bin/bash
# Check "btrfs-space preempt" (need_preemptive_reclaim, spec §5 and §6) against
# the space-info states the kernel records in btrfs_done_preemptive_reclaim.
#
# A 16 GiB sparse image (mkfs.btrfs defaults) is mounted read-write on a loop
# device, and a private tracefs instance records btrfs_done_preemptive_reclaim
# while parallel writers create many empty files, each with a 1000-byte xattr
# (phase A: metadata only), then with a buffered data writer added (phase B:
# delalloc makes the predicate weigh bytes_may_use instead of the delayed
# reserves). Each phase runs until PREEMPT_EVENTS states (default 50) are
# recorded (phase B also until one is at a clamp above 1) or PREEMPT_SECONDS
# (default 45) pass.
#
# The event fires when the preempt worker has just found the predicate false,
# so for every recorded state, fed to the tool in place of the image's own
# figures (--total-bytes --bytes-used --bytes-readonly --free-chunk-space
# --global-rsv and the runtime options), the tool must say "no-flush". It must
# also say how far the state was from flushing: min_bytes_may_use_to_flush >
# the recorded bytes_may_use when the predicate weighs may_use, otherwise
# used < thresh_by_clamp[clamp]. The boundary is probed so the check cannot
# pass with a constant answer: at min_bytes_may_use_to_flush (or with the
# delayed-refs reserve raised by the margin) the tool must say "flush", one
# byte less "no-flush".
#
# Not exact in the recorded state (the kernel reads them differently):
# - delalloc_bytes/ordered_bytes are exact sums in the event, approximate
#   per-cpu reads in the predicate; when they are within the per-cpu error of
#   the "ordered/2 >= delalloc" switch both branches are tried;
# - the worker lowers the clamp by one after a single flush loop before the
#   event, so the recorded clamp may be one below the one evaluated (a lower
#   clamp only raises the threshold; margins are given at the recorded clamp).
# - delayed_refs_rsv.reserved and delayed_block_rsv.reserved are read without
#   their locks by both the predicate and the event while writers end and
#   start transactions: a "flush" in the delayed-reserves branch by less than
#   one create reservation per writer (rsv_race) is counted and shown, not
#   failed (seen: 64 KiB over a 560 MB threshold, once in 387 states).
# Fields not fed: fsid, flags (METADATA only is checked), trans_reserved (not
# an input of the predicate).

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space mkfs.btrfs btrfs losetup mount umount mountpoint \
	jq awk truncate setfattr
need_btrfs_module

: "${PREEMPT_EVENTS:=50}"
: "${PREEMPT_SECONDS:=45}"
WRITERS=4		# xattr writers
BATCH=500		# files per directory, one touch and one setfattr each
DATA_MAX_FILES=12000	# 256 KiB each: at most 3 GiB of data in phase B

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
parser="$here/trace-states.awk"
event=btrfs/btrfs_done_preemptive_reclaim

# --- tracefs ----------------------------------------------------------------

# a private mount of tracefs: another test (or a second run beside this
# one) that mounted /sys/kernel/tracing and unmounts it at its end cannot
# take the instance away (a .ci/run beside another lost it mid-capture)
tracing=$TEST_TMP/tracefs
tracefs_mounted_here=false
inst=
writer_pids=()

on_exit()
{
	local rc=$? pid

	cd / 2>/dev/null
	[ -n "${stop_file:-}" ] && touch "$stop_file" 2>/dev/null
	for pid in "${writer_pids[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in "${writer_pids[@]}"; do
		wait "$pid" 2>/dev/null
	done
	if [ -n "$inst" ] && [ -d "$inst" ]; then
		echo 0 > "$inst/tracing_on" 2>/dev/null
		echo 0 > "$inst/events/$event/enable" 2>/dev/null
		rmdir "$inst" 2>/dev/null || echo "cleanup: cannot remove tracefs instance $inst" >&2
	fi
	if $tracefs_mounted_here; then
		umount "$tracing" 2>/dev/null || echo "cleanup: cannot unmount $tracing" >&2
	fi
	cleanup_all
	exit "$rc"
}
trap on_exit EXIT

grep -qw tracefs /proc/filesystems ||
	skip "no tracefs in this kernel (/proc/filesystems): needs CONFIG_TRACING"
mkdir -p "$tracing"
mount -t tracefs nodev "$tracing" 2> /dev/null ||
	skip "cannot mount tracefs at $tracing (run as root: mount -t tracefs nodev $tracing)"
tracefs_mounted_here=true
[ -d "$tracing/instances" ] || skip "no $tracing/instances (tracefs instances unsupported)"
# the event exists once the btrfs module is loaded
[ -f "$tracing/events/$event/format" ] ||
	skip "no tracepoint $event in $tracing/events (kernel without btrfs tracepoints?)"

# --- the event's fields, from its format file --------------------------------

format=$tracing/events/$event/format
fields=$(awk -f "$parser" "$format" /dev/null) || fail "cannot read $format: $fields"
fields=${fields#fields }
# the event field -> the tool's option ("-" = deliberately not fed)
declare -A opt_of=(
	[total_bytes]=--total-bytes
	[bytes_used]=--bytes-used
	[bytes_pinned]=--pinned
	[bytes_reserved]=--reserved
	[bytes_may_use]=--may-use
	[bytes_readonly]=--bytes-readonly
	[reclaim_size]=--reclaim-size
	[clamp]=--clamp
	[global_reserved]=--global-rsv
	[delayed_refs_reserved]=--delayed-refs-rsv
	[delayed_reserved]=--delayed-rsv
	[free_chunk_space]=--free-chunk-space
	[delalloc_bytes]=--delalloc
	[ordered_bytes]=--ordered
	[trans_reserved]=-
	[flags]=-
	[fsid]=-
)
for f in "${!opt_of[@]}"; do
	case " $fields " in
	*" $f "*) ;;
	*) fail "$format has no field $f (fields:$fields)" ;;
	esac
done
for f in $fields; do
	[ -n "${opt_of[$f]:-}" ] || echo "note: event field $f is new to this test and not used"
done

# every option must exist: a missing one would leave the image's figure in
# place of the recorded one
help=$("$BTRFS_SPACE" preempt --help 2>&1)
missing=
for f in "${!opt_of[@]}"; do
	o=${opt_of[$f]}
	[ "$o" = - ] && continue
	grep -q -- "${o}[ ,]" <<< "$help" || missing="$missing $o($f)"
done
[ -z "$missing" ] || fail "btrfs-space preempt lacks options for recorded fields:$missing"

# --- filesystem ---------------------------------------------------------------

avail_kb=$(df -Pk "$TEST_TMP" | awk 'NR == 2 { print $4 }')
[ "${avail_kb:-0}" -ge $((6 * 1024 * 1024)) ] ||
	skip "needs 6 GiB free in $TEST_TMP for the image's data (has ${avail_kb:-?} KiB): set TMPDIR to a folder with room"

img="$TEST_TMP/preempt.img"
mnt="$TEST_TMP/mnt"
truncate -s 16G "$img" || fail "cannot create $img"
mkfs.btrfs -f "$img" > "$TEST_TMP/mkfs.log" 2>&1 ||
	fail "mkfs.btrfs failed: $(tail -n 1 "$TEST_TMP/mkfs.log")"
super=$(btrfs inspect-internal dump-super "$img") || fail "dump-super $img failed"
fsid=$(awk '$1 == "fsid" { print $2 }' <<< "$super")
sectorsize=$(awk '$1 == "sectorsize" { print $2 }' <<< "$super")
nodesize=$(awk '$1 == "nodesize" { print $2 }' <<< "$super")
if [ -z "$fsid" ] || [ -z "$sectorsize" ] || [ -z "$nodesize" ]; then
	fail "no fsid/sectorsize/nodesize in dump-super of $img"
fi

dev=$(setup_loop "$img") || exit 1
setup_mount "$dev" "$mnt" -t btrfs -o rw

inst="$tracing/instances/btrfs-space-preempt.$$"
mkdir "$inst" || fail "cannot create tracefs instance $inst"
echo 0 > "$inst/tracing_on"
echo 2048 > "$inst/buffer_size_kb" || fail "cannot size the buffer of $inst"
echo 1 > "$inst/events/$event/enable" || fail "cannot enable $event in $inst"
# reading "trace" to count events must not stop the recording
[ -f "$inst/options/pause-on-trace" ] && echo 0 > "$inst/options/pause-on-trace"
echo 1 > "$inst/tracing_on"

# --- workload -----------------------------------------------------------------

stop_file="$TEST_TMP/stop"
rm -f "$stop_file"
xattr_value=$(printf '%1000s' '' | tr ' ' x)

# xattr_writer DIR: directories of BATCH empty files with a 1000-byte xattr
xattr_writer()
{
	local dir=$1 b=0 i paths
	mkdir -p "$dir" || return 1
	while [ ! -e "$stop_file" ]; do
		mkdir "$dir/b$b" || return 1
		paths=()
		for ((i = 0; i < BATCH; i++)); do
			paths+=("$dir/b$b/f$i")
		done
		touch "${paths[@]}" || return 1
		setfattr -n user.pad -v "$xattr_value" "${paths[@]}" || return 1
		b=$((b + 1))
	done
}

# data_writer DIR: buffered 256 KiB files (delalloc), at most DATA_MAX_FILES
data_writer()
{
	local dir=$1 n=0
	mkdir -p "$dir" || return 1
	while [ ! -e "$stop_file" ] && [ "$n" -lt "$DATA_MAX_FILES" ]; do
		head -c 262144 /dev/zero > "$dir/d$n" || return 1
		n=$((n + 1))
	done
}

# events: how many events of our filesystem the instance holds (reading
# "trace" does not pause recording: pause-on-trace is off)
events()
{
	grep -c "btrfs_done_preemptive_reclaim: $fsid" "$inst/trace"
}

# clamped: events of our filesystem recorded at a clamp above 1
clamped()
{
	grep -c "btrfs_done_preemptive_reclaim: $fsid: .* clamp=[2-8] " "$inst/trace"
}

# wait_events N SECONDS [clamp]: until N more events (with "clamp": and one
# at a clamp above 1 in all) or SECONDS pass
wait_events()
{
	local want=$(($(events) + $1)) end=$((SECONDS + $2)) need_clamp=${3:-}
	while [ "$SECONDS" -lt "$end" ]; do
		if [ "$(events)" -ge "$want" ]; then
			[ -z "$need_clamp" ] && break
			[ "$(clamped)" -gt 0 ] && break
		fi
		sleep 1
	done
}

echo "phase A: $WRITERS xattr writers, up to $PREEMPT_SECONDS s or $PREEMPT_EVENTS events"
echo "phase-A" > "$inst/trace_marker"
t0=$SECONDS
for ((w = 0; w < WRITERS; w++)); do
	xattr_writer "$mnt/x$w" &
	writer_pids+=($!)
done
wait_events "$PREEMPT_EVENTS" "$PREEMPT_SECONDS"
echo "phase A: $(events) events after $((SECONDS - t0)) s"

echo "phase B: a buffered data writer too, up to $PREEMPT_SECONDS s or $PREEMPT_EVENTS more events and a clamp above 1"
echo "phase-B" > "$inst/trace_marker"
t0=$SECONDS
data_writer "$mnt/data" &
writer_pids+=($!)
wait_events "$PREEMPT_EVENTS" "$PREEMPT_SECONDS" clamp
echo "phase B: $(events) events in all ($(clamped) at a clamp above 1) after $((SECONDS - t0)) s"

touch "$stop_file"
writer_errors=0
for pid in "${writer_pids[@]}"; do
	wait "$pid" || writer_errors=$((writer_errors + 1))
done
writer_pids=()
echo 0 > "$inst/tracing_on"
[ "$writer_errors" = 0 ] || echo "warning: $writer_errors writers stopped on an error"
overrun=$(awk '$1 == "overrun:" { n += $2 } END { print n + 0 }' "$inst"/per_cpu/cpu*/stats)
[ "$overrun" = 0 ] || echo "note: $overrun events overwritten in the ring buffer"

cp "$inst/trace" "$TEST_TMP/trace.txt" || fail "cannot copy $inst/trace"
echo 0 > "$inst/events/$event/enable"
rmdir "$inst" || echo "warning: cannot remove $inst"
inst=

# unmount and detach before the tool reads the image
sync
umount "$mnt" || fail "umount $mnt failed"
btrfs device scan -u "$dev" > /dev/null 2>&1
losetup -d "$dev" || fail "losetup -d $dev failed"

# --- states -------------------------------------------------------------------

awk -f "$parser" "$format" "$TEST_TMP/trace.txt" > "$TEST_TMP/states.all" ||
	fail "cannot parse the trace: $(tail -n 1 "$TEST_TMP/states.all")"
# per-cpu counter error of the predicate's reads: a cpu holds less than
# delalloc_batch = sectorsize * 512 * (1 + ilog2(nr_cpu_ids)) unsummed
nr_cpu_ids=$(awk -F'[-,]' '{ print $NF + 1 }' /sys/devices/system/cpu/possible)
ilog2=0
while [ $((1 << (ilog2 + 1))) -le "$nr_cpu_ids" ]; do
	ilog2=$((ilog2 + 1))
done
pcpu_err=$((sectorsize * 512 * (1 + ilog2) * nr_cpu_ids))

# need_preemptive_reclaim() and the event read delayed_refs_rsv.reserved and
# delayed_block_rsv.reserved without their locks (space_info->lock does not
# cover them), while writers end and start transactions; allow per writer
# the reservation of one create (5 items of nodesize * BTRFS_MAX_LEVEL * 2,
# once more for its delayed refs) between the two reads
rsv_race=$(((WRITERS + 1) * 5 * nodesize * 8 * 2 * 2))

# tool ARGS...: the tool's preempt answer as one line:
#   verdict used thresh min clamp may_use reason
tool()
{
	local out
	out=$(run_check_stdout "$BTRFS_SPACE" preempt --format json --kernel 6.18 "$@" "$img" \
		2> "$TEST_TMP/tool.err") || return 1
	jq -r '.preempt | [.verdict, .used, .thresh_by_clamp[(.clamp | tostring)],
		(.min_bytes_may_use_to_flush // "null"), .clamp, .bytes_may_use,
		(.reason | gsub(" "; "_"))] | join(" ")' <<< "$out"
}

checked=0 n_mayuse=0 n_delayed=0 n_other_branch=0 n_gated=0 n_probed=0 n_race=0 race_max=0
min_mayuse_margin="" min_delayed_margin=""
declare -A reasons clamps phases
state_no=0
phase=-
while read -r line; do
	case "$line" in
	fields*) continue ;;
	"marker phase-"*) phase=${line#marker phase-}; continue ;;
	marker*) continue ;;
	esac
	state_no=$((state_no + 1))
	declare -A s=()
	for kv in $line; do
		s[${kv%%=*}]=${kv#*=}
	done
	[ "${s[fsid]:-}" = "$fsid" ] || continue
	[ "${s[flags]:-}" = METADATA ] || continue
	args=()
	for f in "${!opt_of[@]}"; do
		o=${opt_of[$f]}
		[ "$o" = - ] && continue
		args+=("$o" "${s[$f]}")
	done
	desc="state $state_no (phase $phase): $line"

	g=${s[global_reserved]} mu=${s[bytes_may_use]} pinned=${s[bytes_pinned]}
	drr=${s[delayed_refs_reserved]} dr=${s[delayed_reserved]}
	d=${s[delalloc_bytes]} o=${s[ordered_bytes]}
	# step 6: may_use is weighed when ordered/2 < delalloc
	if [ $((o >> 1)) -lt "$d" ]; then branch=may_use; else branch=delayed; fi
	# phase A writes no data: the counters are exactly 0 in the kernel too
	diff=$(((o >> 1) - d))
	ambiguous=false
	[ "$phase" != A ] && [ "${diff#-}" -le $((2 * pcpu_err)) ] && ambiguous=true

	r=$(tool "${args[@]}") || fail "btrfs-space failed on $desc: $(tail -n 1 "$TEST_TMP/tool.err")"
	read -r verdict used thresh min clamp tmu reason <<< "$r"
	[ "$tmu" = "$mu" ] || fail "tool took bytes_may_use $tmu, recorded $mu; $desc"
	[ "$clamp" = "${s[clamp]}" ] || fail "tool took clamp $clamp, recorded ${s[clamp]}; $desc"
	if [ "$branch" = may_use ]; then
		want_used=$((pinned + (mu > g ? mu - g : 0)))
	else
		want_used=$((pinned + drr + dr))
	fi
	[ "$used" = "$want_used" ] ||
		fail "tool weighs $used, expected $want_used ($branch branch); $desc"

	branch_args=()
	if [ "$verdict" != no-flush ] && $ambiguous; then
		# the kernel's approximate counters may have taken the other branch
		if [ "$branch" = may_use ]; then
			other_args=(--delalloc 0 --ordered 0)
			other=delayed
		else
			other_args=(--delalloc 1 --ordered 0)
			other=may_use
		fi
		r=$(tool "${args[@]}" "${other_args[@]}") || fail "btrfs-space failed on $desc"
		if [ "${r%% *}" = no-flush ]; then
			# the boundary probes below must stay in that branch
			branch_args=("${other_args[@]}")
			read -r verdict used thresh min clamp tmu reason <<< "$r"
			branch=$other
			n_other_branch=$((n_other_branch + 1))
			echo "note: no-flush only in the other delalloc/ordered branch ($branch): $desc"
		fi
	fi
	if [ "$verdict" != no-flush ] && [ "$branch" = delayed ] &&
	   [ "$used" -ge "$thresh" ] && [ $((used - thresh)) -lt "$rsv_race" ]; then
		# the delayed reserves moved between the predicate and the event
		n_race=$((n_race + 1))
		excess=$((used - thresh))
		[ "$excess" -gt "$race_max" ] && race_max=$excess
		echo "note: flush by $excess bytes of delayed reserves (< $rsv_race, unlocked reads): $desc"
		clamps[$clamp]=$((${clamps[$clamp]:-0} + 1))
		phases[$phase]=$((${phases[$phase]:-0} + 1))
		checked=$((checked + 1))
		continue
	fi
	[ "$verdict" = no-flush ] ||
		fail "the kernel stopped preemptive flushing but the tool says $verdict ($reason); $desc"

	reasons[$reason]=$((${reasons[$reason]:-0} + 1))
	clamps[$clamp]=$((${clamps[$clamp]:-0} + 1))
	phases[$phase]=$((${phases[$phase]:-0} + 1))
	checked=$((checked + 1))

	if [ "$min" != null ]; then
		[ "$min" -gt "$mu" ] ||
			fail "min_bytes_may_use_to_flush $min <= recorded bytes_may_use $mu; $desc"
		margin=$((min - mu))
		# the boundary: flush at min, not one byte below
		r=$(tool "${args[@]}" "${branch_args[@]}" --may-use "$min") || fail "btrfs-space failed on $desc"
		[ "${r%% *}" = flush ] || fail "tool says ${r%% *} at its min_bytes_may_use_to_flush $min; $desc"
		r=$(tool "${args[@]}" "${branch_args[@]}" --may-use $((min - 1))) || fail "btrfs-space failed on $desc"
		[ "${r%% *}" = no-flush ] || fail "tool says ${r%% *} below its min_bytes_may_use_to_flush $min; $desc"
		n_probed=$((n_probed + 1))
		n_mayuse=$((n_mayuse + 1))
		if [ -z "$min_mayuse_margin" ] || [ "$margin" -lt "$min_mayuse_margin" ]; then
			min_mayuse_margin=$margin
			closest_mayuse="state $state_no (phase $phase, clamp $clamp): may_use $mu, flushes from $min, threshold $thresh"
		fi
	elif [ "$branch" = delayed ] && [ "$used" -lt "$thresh" ]; then
		# may_use is not weighed: the margin is in the delayed reserves
		margin=$((thresh - used))
		case "$reason" in
		*below*threshold*)
			r=$(tool "${args[@]}" "${branch_args[@]}" --delayed-refs-rsv $((drr + margin))) ||
				fail "btrfs-space failed on $desc"
			[ "${r%% *}" = flush ] || fail "tool says ${r%% *} with the delayed reserves at the threshold; $desc"
			r=$(tool "${args[@]}" "${branch_args[@]}" --delayed-refs-rsv $((drr + margin - 1))) ||
				fail "btrfs-space failed on $desc"
			[ "${r%% *}" = no-flush ] || fail "tool says ${r%% *} one byte below the threshold; $desc"
			n_probed=$((n_probed + 1))
			;;
		esac
		n_delayed=$((n_delayed + 1))
		if [ -z "$min_delayed_margin" ] || [ "$margin" -lt "$min_delayed_margin" ]; then
			min_delayed_margin=$margin
			closest_delayed="state $state_no (phase $phase, clamp $clamp): used $used (pinned+delayed reserves), threshold $thresh"
		fi
	else
		# no may_use would flush: plain full, tickets queued, ...
		n_gated=$((n_gated + 1))
	fi
done < "$TEST_TMP/states.all"

# --- summary ------------------------------------------------------------------

echo "states checked: $checked (filesystem $fsid): $((checked - n_race)) no-flush"
echo "  flush only by delayed reserves that moved between the two unlocked reads: $n_race (largest excess $race_max bytes, allowance $rsv_race)"
echo "  phase A (metadata only): ${phases[A]:-0}, phase B (with delalloc): ${phases[B]:-0}"
echo "  weighing may_use (delalloc > ordered/2): $n_mayuse, minimum margin ${min_mayuse_margin:-n/a} bytes"
[ -n "$min_mayuse_margin" ] && echo "    closest: $closest_mayuse"
echo "  weighing the delayed reserves: $n_delayed, minimum margin ${min_delayed_margin:-n/a} bytes"
[ -n "$min_delayed_margin" ] && echo "    closest: $closest_delayed"
echo "  no may_use would flush (other gates): $n_gated"
echo "  no-flush only in the other counter branch: $n_other_branch (per-cpu error bound $pcpu_err bytes)"
echo "  boundary probed (flush at the margin, no-flush one byte below): $n_probed"
for k in "${!reasons[@]}"; do
	echo "  reason: ${reasons[$k]} x ${k//_/ }"
done | sort
line=
for k in 1 2 3 4 5 6 7 8; do
	[ -n "${clamps[$k]:-}" ] && line="$line $k:${clamps[$k]}"
done
echo "  states by clamp:$line"

[ "$checked" -gt 0 ] ||
	skip "the workload recorded no $event state for $fsid in $((2 * PREEMPT_SECONDS)) s"
[ "$checked" -ge "$PREEMPT_EVENTS" ] ||
	echo "note: fewer than $PREEMPT_EVENTS states recorded"
[ $((n_mayuse + n_delayed)) -gt 0 ] ||
	fail "no recorded state had a finite margin: nothing was checked against a threshold"
exit 0
