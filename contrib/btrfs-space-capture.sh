#!/bin/bash
# Record the btrfs events "btrfs-space replay" reads, with tracefs only.
#
#   btrfs-space-capture.sh [-o OUT] [-b KB] [-e EVENTS] [-T DAT] MOUNTPOINT [COMMAND [ARGS...]]
#
# Records into a private tracefs instance (/sys/kernel/tracing/instances/
# btrfs-space-capture.PID, so other tracers are not disturbed) while COMMAND
# runs (or until Ctrl-C without one), streaming trace_pipe to OUT (default
# btrfs-trace.txt). The first line is a marker with what the events do not
# carry: the kernel, the filesystem's fsid, metadata profile copies, device
# size, data chunk size, sector and node size, nr_cpu_ids and the events
# enabled (so the replay can tell "not enabled" from "did not happen").
#
# EVENTS is a comma list of btrfs event names; the default is every event
# the replay reads, for all four parts: part 1 (btrfs_done_preemptive_reclaim,
# btrfs_trigger_flush, btrfs_flush_space, btrfs_fail_all_tickets, and
# update_bytes_may_use/update_bytes_pinned for the reservation points),
# part 2 (btrfs_set/clear/convert_extent_bit), part 3 (add_delayed_ref_head,
# run_delayed_ref_head, add_delayed_data_ref, and btrfs_space_reservation with
# btrfs_transaction_commit for the traced delayed_refs_rsv), part 4 (update_bytes_may_use,
# btrfs_reserve_ticket). update_bytes_may_use and the extent-bit events fire
# on every reservation and write: on a busy filesystem raise -b, or record
# only the parts wanted with -e.
#
# With -T DAT the events stay in the instance's buffer (sized by -b: what
# does not fit is lost, and said) and are written at the end by
# "trace-cmd extract -B" into DAT, in trace-cmd's file format, and OUT is
# "trace-cmd report" of it, marker included. trace-cmd record itself needs
# to enable the function tracer (/proc/sys/kernel/ftrace_enabled), which a
# kernel in lockdown refuses ("Can't enable ftrace"); extract does not.
# Where record works, the same capture without this script (no marker:
# pass --metadata-copies/--total-rw-bytes or the device to the replay):
#
#   trace-cmd record -B btrfs-space -e btrfs:btrfs_done_preemptive_reclaim \
#       -e btrfs:btrfs_trigger_flush -e btrfs:btrfs_flush_space \
#       -e btrfs:btrfs_fail_all_tickets -e btrfs:btrfs_reserve_ticket \
#       -e btrfs:update_bytes_may_use -e btrfs:update_bytes_pinned \
#       -e btrfs:btrfs_set_extent_bit -e btrfs:btrfs_clear_extent_bit \
#       -e btrfs:btrfs_convert_extent_bit -e btrfs:add_delayed_ref_head \
#       -e btrfs:run_delayed_ref_head -e btrfs:add_delayed_data_ref \
#       -e btrfs:btrfs_space_reservation -e btrfs:btrfs_transaction_commit COMMAND
#   trace-cmd report -i trace.dat > btrfs-trace.txt
#
# Needs root and a kernel with btrfs tracepoints (CONFIG_FTRACE, tracefs).

set -u
out=btrfs-trace.txt
buffer_kb=8192
tcmd_dat=
events=btrfs_done_preemptive_reclaim,btrfs_trigger_flush,btrfs_flush_space,btrfs_fail_all_tickets,btrfs_reserve_ticket,update_bytes_may_use,update_bytes_pinned,btrfs_set_extent_bit,btrfs_clear_extent_bit,btrfs_convert_extent_bit,add_delayed_ref_head,run_delayed_ref_head,add_delayed_data_ref,btrfs_space_reservation,btrfs_transaction_commit

while getopts "o:b:e:T:h" opt; do
	case $opt in
	o) out=$OPTARG ;;
	b) buffer_kb=$OPTARG ;;
	e) events=$OPTARG ;;
	T) tcmd_dat=$OPTARG ;;
	*) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-o OUT] [-b KB] [-e EVENTS] [-T DAT] MOUNTPOINT [COMMAND...]" >&2; exit 2; }
mnt=$1
shift

die() { echo "btrfs-space-capture: $*" >&2; exit 1; }

[ -z "$tcmd_dat" ] || command -v trace-cmd > /dev/null || die "-T needs trace-cmd (Debian: trace-cmd)"

fsid=$(findmnt -no FSTYPE,UUID --target "$mnt" 2>/dev/null | awk '$1 == "btrfs" { print $2 }')
[ -n "$fsid" ] || fsid=$(btrfs filesystem show "$mnt" 2>/dev/null | awk '/uuid:/ { print $NF; exit }')
[ -n "$fsid" ] || die "$mnt is not a mounted btrfs filesystem"
sys=/sys/fs/btrfs/$fsid
[ -d "$sys" ] || die "no $sys"

copies=1
for p in "$sys"/allocation/metadata/*/; do
	case $(basename "$p") in
	dup | raid1 | raid10) copies=2 ;;
	raid1c3) copies=3 ;;
	raid1c4) copies=4 ;;
	esac
done
total_rw=$(btrfs filesystem show --raw "$mnt" 2>/dev/null |
	awk '$1 == "devid" { for (i = 1; i < NF; i++) if ($i == "size") s += $(i + 1) } END { printf "%.0f\n", s }')
data_chunk=$(cat "$sys/allocation/data/chunk_size" 2>/dev/null || echo 0)
cpus=$(awk -F'[-,]' '{ print $NF + 1 }' /sys/devices/system/cpu/possible)
case $(cut -d' ' -f1 "$sys/checksum" 2>/dev/null) in
crc32c) csum_size=4 ;;
xxhash64) csum_size=8 ;;
sha256 | blake2b) csum_size=32 ;;
*) csum_size= ;;
esac
fst=0
[ -e "$sys/features/free_space_tree" ] && fst=1
kver=$(uname -r | sed 's/^\([0-9]*\.[0-9]*\(\.[0-9]*\)\{0,1\}\).*/\1/')

tracing=/sys/kernel/tracing
mounted_here=false
if ! mountpoint -q "$tracing"; then
	mount -t tracefs nodev "$tracing" || die "cannot mount tracefs at $tracing"
	mounted_here=true
fi
inst_name=btrfs-space-capture.$$
inst=$tracing/instances/$inst_name
reader=
cleanup()
{
	[ -n "$reader" ] && kill "$reader" 2>/dev/null && wait "$reader" 2>/dev/null
	if [ -d "$inst" ]; then
		echo 0 > "$inst/tracing_on"
		rmdir "$inst" 2>/dev/null || echo "btrfs-space-capture: cannot remove $inst" >&2
	fi
	$mounted_here && umount "$tracing" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir "$inst" || die "cannot create $inst"
echo 0 > "$inst/tracing_on"
echo "$buffer_kb" > "$inst/buffer_size_kb" || die "cannot size the buffer of $inst"
IFS=, read -r -a evlist <<< "$events"
for e in "${evlist[@]}"; do
	[ -f "$inst/events/btrfs/$e/enable" ] || die "no event btrfs/$e in this kernel"
done

if [ -z "$tcmd_dat" ]; then
	cat "$inst/trace_pipe" > "$out" &
	reader=$!
fi
# the marker first, then the events: the replay reads the fsid from it
echo 1 > "$inst/tracing_on"
echo "btrfs-space-replay: kernel=$kver fsid=$fsid metadata_copies=$copies total_rw_bytes=$total_rw data_chunk_size=$data_chunk sectorsize=$(cat "$sys/sectorsize") nodesize=$(cat "$sys/nodesize") nr_cpu_ids=$cpus ${csum_size:+csum_size=$csum_size }free_space_tree=$fst events=$events" > "$inst/trace_marker"
for e in "${evlist[@]}"; do
	echo 1 > "$inst/events/btrfs/$e/enable" || die "cannot enable btrfs/$e"
done

# unread: the events still in the instance's buffer (per_cpu stats "entries")
unread()
{
	awk '$1 == "entries:" { n += $2 } END { print n + 0 }' "$inst"/per_cpu/cpu*/stats
}

# The end of OUT, whole however busy the machine: the reader drains the
# buffer (up to 60 s), is stopped once the file has not grown for 0.5 s,
# and what it left is read without blocking; a last line still without its
# end (the reader stopped inside a write) is taken off, and said.
finish_pipe()
{
	local i size prev=-1 tail_len
	for ((i = 0; i < 600; i++)); do
		size=$(stat -c %s "$out")
		[ "$(unread)" = 0 ] && [ "$size" = "$prev" ] && break
		prev=$size
		sleep 0.5
	done
	kill "$reader" 2>/dev/null
	wait "$reader" 2>/dev/null
	reader=
	while dd if="$inst/trace_pipe" iflag=nonblock bs=1M count=1 status=none >> "$out" 2>/dev/null &&
		[ "$(unread)" != 0 ]; do
		:
	done
	if [ -s "$out" ] && [ -n "$(tail -c 1 "$out")" ]; then
		tail_len=$(tail -n 1 "$out" | wc -c)
		truncate -s "-$tail_len" "$out"
		echo "btrfs-space-capture: the last line was cut ($tail_len bytes): taken off" >&2
	fi
}

rc=0
if [ $# -gt 0 ]; then
	"$@" || rc=$?
else
	echo "recording btrfs events of $mnt into $out; Ctrl-C to stop" >&2
	while :; do sleep 1; done
fi
echo 0 > "$inst/tracing_on"
lost=$(awk '$1 == "overrun:" { n += $2 } END { print n + 0 }' "$inst"/per_cpu/cpu*/stats)
if [ -n "$tcmd_dat" ]; then
	# extract removes the instance when it is done
	trace-cmd extract -B "$inst_name" -o "$tcmd_dat" > /dev/null 2>&1 ||
		die "trace-cmd extract -B $inst_name failed"
	trace-cmd report -i "$tcmd_dat" > "$out" 2> /dev/null || die "trace-cmd report -i $tcmd_dat failed"
else
	finish_pipe
fi
[ "$lost" = 0 ] || echo "btrfs-space-capture: $lost events lost (raise -b)" >&2
echo "btrfs-space-capture: $(wc -l < "$out") lines in $out" >&2
exit "$rc"
