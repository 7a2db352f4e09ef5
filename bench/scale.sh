#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scale.sh: how a command's cost grows with the filesystem.  For each point
# of a series (a size X and the devices that have it) the command is run
# --repeat times with -v; the medians of its CPU time (user + system) and
# the largest RSS are printed with the blocks it read (-v's count) and the
# bytes it printed, the 1-minute load average when the point ended (the
# machine may be shared: CPU times hold under load better than wall
# times), and between points the growth exponent
# log(cost2 / cost1) / log(X2 / X1): 1 is linear, 2 quadratic.  The last
# line of each series is the exponent from the first point to the last.
#
#   bench/scale.sh [--repeat N] [--tsv FILE] [--callgrind] --series NAME --cmd 'ARGS' \
#                  --point X=DEV[+DEV...] [--point ...] [--series ...]
#   bench/scale.sh --build DIR [--max-extents N] [--max-bgs N]
#
# ARGS is the command line after `btrfs-space -v` (devices excluded); {x}
# in it is replaced by the point's X (csum-delete --file /f{x}).  Several
# devices of one point are joined by +.  --series starts a new series;
# --cmd and --point belong to the last one.  BTRFS_SPACE= names the binary
# (default: the repository's ./btrfs-space).  --callgrind runs each point once
# more under valgrind's callgrind and adds its instruction count (Ir) and that
# count's exponent: the CPU work, which a loaded machine does not blur (warm:
# the run follows one that reads the same blocks into the page cache).
#
# --build DIR makes what the series of Documentation/benchmark.md use, in
# about a minute on a quiet machine (root: loop device, mount):
#   DIR/files.img    20 GiB, files f10000 ... f1000000 of 4 KiB
#                    preallocated extents 4 KiB apart (f10000000 too with
#                    --max-extents 10000000: 40 GiB of extents, 200 GiB file)
#   DIR/pool4-N.img  4 sparse 15 TiB devices, mkfs -d raid10 -m raid1c3
#   DIR/pool16-N.img 16 sparse 15 TiB devices, mkfs -d raid1 -m raid1c3
#   DIR/bgs-N-{1,2,3}.img  bench/gen-bgs.py's filesystem on 3 sparse 9 TiB
#                    devices of N full 256 MiB data block groups, N = 1,000,
#                    3,000, 10,000, 30,000, 100,000 (--max-bgs), in seconds
#   DIR/empty-N-{1,2,3}.img  the same with every data block group empty
#   DIR/part-N-{1,2,3}.img   the same with every data block group 30 % used
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
BTRFS_SPACE=${BTRFS_SPACE:-$BENCH_DIR/../btrfs-space}
REPEAT=3
TSV=
CALLGRIND=
BUILD=
MAX_EXTENTS=1000000
BGS_MAX=100000
declare -a NAMES=() CMDS=() POINTS=()

die() { echo "scale: $*" >&2; exit 1; }

build() {
	local dir=$1 loop n i devs
	[ "$(id -u)" = 0 ] || die "--build needs root (loop device, mount)"
	mkdir -p "$dir/mnt"
	gcc -O2 -Wall -o "$dir/falloc-loop" "$BENCH_DIR/falloc-loop.c"
	if [ ! -f "$dir/files.img" ]; then
		truncate -s $((MAX_EXTENTS > 1000000 ? 200 : 20))G "$dir/files.img"
		mkfs.btrfs -q "$dir/files.img" >/dev/null
		loop=$(losetup -f --show "$dir/files.img")
		mount "$loop" "$dir/mnt"
		for n in 10000 30000 100000 300000 1000000 3000000 10000000; do
			[ "$n" -le "$MAX_EXTENTS" ] || break
			"$dir/falloc-loop" "$dir/mnt/f$n" 4K 4K $((n * 4))K >/dev/null
		done
		umount "$dir/mnt"
		losetup -d "$loop"
	fi
	for n in 4 16; do
		[ -f "$dir/pool$n-1.img" ] && continue
		devs=()
		for i in $(seq "$n"); do
			truncate -s 15T "$dir/pool$n-$i.img"
			devs+=("$dir/pool$n-$i.img")
		done
		if [ "$n" = 4 ]; then
			mkfs.btrfs -q -f -d raid10 -m raid1c3 "${devs[@]}" >/dev/null
		else
			mkfs.btrfs -q -f -d raid1 -m raid1c3 "${devs[@]}" >/dev/null
		fi
	done
	build_bgs "$dir"
	ls -ls "$dir"
}

# The block-group images, written by gen-bgs.py (no kernel: its allocator
# walks every full block group at each new chunk, so a fallocate(2) fill is
# quadratic, hours for 100,000): three sparse 9 TiB devices, data single in
# 256 MiB chunks, metadata RAID1, at 1,000 ... 100,000 data block groups,
# each full (bgs-N), each empty (empty-N: the state between a deletion's
# commit and the cleaner) and each 30 % used (part-N: what a reclaim sweep
# relocates).  gen-bgs-check.sh mounts one and compares sysfs.
build_bgs() {
	local dir=$1 n
	for n in 1000 3000 10000 30000 100000; do
		[ "$n" -le "$BGS_MAX" ] || break
		[ -f "$dir/bgs-$n-1.img" ] ||
			python3 "$BENCH_DIR/gen-bgs.py" --bgs "$n" --devices 3 --dev-size 9T "$dir/bgs-$n"
		[ -f "$dir/empty-$n-1.img" ] ||
			python3 "$BENCH_DIR/gen-bgs.py" --bgs "$n" --empty "$n" --devices 3 \
				--dev-size 9T "$dir/empty-$n"
		[ -f "$dir/part-$n-1.img" ] ||
			python3 "$BENCH_DIR/gen-bgs.py" --bgs "$n" --fill 30 --devices 3 \
				--dev-size 9T "$dir/part-$n"
	done
}

while [ $# -gt 0 ]; do
	case $1 in
	--repeat) REPEAT=$2; shift 2 ;;
	--tsv) TSV=$2; shift 2 ;;
	--callgrind) CALLGRIND=1; shift ;;
	--build) BUILD=$2; shift 2 ;;
	--max-extents) MAX_EXTENTS=$2; shift 2 ;;
	--max-bgs) BGS_MAX=$2; shift 2 ;;
	--series) NAMES+=("$2"); CMDS+=(""); POINTS+=(""); shift 2 ;;
	--cmd) [ ${#NAMES[@]} -gt 0 ] || die "--cmd before --series"
		CMDS[${#NAMES[@]}-1]=$2; shift 2 ;;
	--point) [ ${#NAMES[@]} -gt 0 ] || die "--point before --series"
		POINTS[${#NAMES[@]}-1]+="$2 "; shift 2 ;;
	*) die "unknown argument '$1'" ;;
	esac
done
if [ -n "$BUILD" ]; then
	build "$BUILD"
	exit 0
fi
[ ${#NAMES[@]} -gt 0 ] || die "no --series (see the header of $0)"
[ -x "$BTRFS_SPACE" ] || die "no $BTRFS_SPACE (build it, or set BTRFS_SPACE=)"

TMP=$(mktemp -d /tmp/scale.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# one_point CMD X DEVS: "cpu rss_kb reads out_bytes rc cpu_min cpu_max"
one_point() {
	local cmd=${1//\{x\}/$2} devs=${3//+/ } r rc=0 reads
	: > "$TMP/cpu"
	: > "$TMP/rss"
	for r in $(seq "$REPEAT"); do
		# CPU: wait4() of time(1) and the command, in microseconds (time(1)
		# prints 10 ms); RSS: time(1)'s %M, the command's own (a child of
		# the interpreter would count the interpreter's pages up to its exec)
		# shellcheck disable=SC2086 # the command line and the devices split on spaces
		python3 -c '
import os, sys
out = os.open(sys.argv[1] + "/out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
err = os.open(sys.argv[1] + "/err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
# posix_spawn: no copy of this interpreter is counted in the child
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ,
		     file_actions=[(os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, err, 2)])
_, status, ru = os.wait4(pid, 0)
print("%.4f %d" % (ru.ru_utime + ru.ru_stime, os.waitstatus_to_exitcode(status)))
' "$TMP" /usr/bin/time -f %M -o "$TMP/rss1" "$BTRFS_SPACE" -v $cmd $devs > "$TMP/time"
		rc=$(awk '{ print $2 }' "$TMP/time")
		awk '{ print $1 }' "$TMP/time" >> "$TMP/cpu"
		tail -1 "$TMP/rss1" >> "$TMP/rss"
	done
	# forecast and replay close without -v's read counts: "-"
	reads=$(sed -n 's/^read: \([0-9]*\) reads,.*/\1/p' "$TMP/err" | head -1)
	echo "$(median < "$TMP/cpu") $(sort -g "$TMP/rss" | tail -1) ${reads:--}" \
		"$(wc -c < "$TMP/out") $rc $(sort -g "$TMP/cpu" | head -1) $(sort -g "$TMP/cpu" | tail -1)"
}

# instructions CMD X DEVS: callgrind's instruction count of one run, "-" without --callgrind
instructions() {
	local cmd=${1//\{x\}/$2} devs=${3//+/ }

	[ -n "$CALLGRIND" ] || { echo -; return; }
	# a run just before, so the blocks are in the page cache: a read that
	# misses it plans the read-ahead (reada.c), which a warm run skips, and
	# a drop_caches by anything else on the machine would count as work
	# shellcheck disable=SC2086 # the command line and the devices split on spaces
	"$BTRFS_SPACE" -v $cmd $devs > /dev/null 2>&1
	# shellcheck disable=SC2086
	valgrind --tool=callgrind --callgrind-out-file="$TMP/cg" "$BTRFS_SPACE" -v $cmd $devs \
		> /dev/null 2>&1
	sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$TMP/cg"
}

# exponent X1 X2 V1 V2: the slope in log-log, "-" when undefined
exponent() {
	awk -v x1="$1" -v x2="$2" -v a="$3" -v b="$4" 'BEGIN {
		if (x1 <= 0 || x2 <= x1 || a <= 0 || b <= 0) { print "-"; exit }
		printf "%.2f", log(b / a) / log(x2 / x1) }'
}

echo "# bench/scale.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $REPEAT runs a point"
echo "# binary: $BTRFS_SPACE ($("$BTRFS_SPACE" --version 2>&1 | head -1))"
[ -z "$TSV" ] || printf 'series\tx\tcpu_s\trss_kb\treads\tout_bytes\trc\tload\n' > "$TSV"
for s in "${!NAMES[@]}"; do
	echo
	echo "## ${NAMES[$s]}: btrfs-space ${CMDS[$s]}"
	echo
	echo "| X | CPU s | CPU min–max | RSS MB | blocks read | output bytes | exit | exp. CPU | exp. reads | exp. RSS |${CALLGRIND:+ instructions | exp. instr. |} load |"
	echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |${CALLGRIND:+ ---: | ---: |} ---: |"
	first=
	prev=
	for p in ${POINTS[$s]}; do
		x=${p%%=*}
		read -r cpu rss reads out rc cmin cmax < <(one_point "${CMDS[$s]}" "$x" "${p#*=}")
		ir=$(instructions "${CMDS[$s]}" "$x" "${p#*=}")
		[ "$reads" != - ] || reads=
		# under 1 ms the process start-up is all there is
		cpu_e=$(awk -v c="$cpu" 'BEGIN { print (c < 0.001 ? 0.001 : c) }')
		e_cpu=-; e_reads=-; e_rss=-; e_ir=-
		if [ -n "$prev" ]; then
			read -r px pcpu preads prss pir <<< "$prev"
			e_ir=$(exponent "$px" "$x" "$pir" "$ir")
			e_cpu=$(exponent "$px" "$x" "$pcpu" "$cpu_e")
			e_reads=$(exponent "$px" "$x" "$preads" "${reads:-0}")
			e_rss=$(exponent "$px" "$x" "$prss" "$rss")
		fi
		load=$(cut -d' ' -f1 /proc/loadavg)
		printf '| %s | %.4f | %.4f–%.4f | %.1f | %s | %s | %s | %s | %s | %s |%s %s |\n' "$x" "$cpu" \
			"$cmin" "$cmax" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "${reads:--}" \
			"$out" "$rc" "$e_cpu" "$e_reads" "$e_rss" "${CALLGRIND:+ $ir | $e_ir |}" "$load"
		[ -z "$TSV" ] || printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${NAMES[$s]}" "$x" \
			"$cpu" "$rss" "${reads:-}" "$out" "$rc" "$load" >> "$TSV"
		prev="$x $cpu_e ${reads:-0} $rss $ir"
		[ -n "$first" ] || first=$prev
	done
	if [ -n "$first" ] && [ "$first" != "$prev" ]; then
		read -r fx fcpu freads frss fir <<< "$first"
		read -r lx lcpu lreads lrss lir <<< "$prev"
		echo
		echo "first to last point: CPU exponent $(exponent "$fx" "$lx" "$fcpu" "$lcpu")," \
			"reads $(exponent "$fx" "$lx" "$freads" "$lreads")," \
			"RSS $(exponent "$fx" "$lx" "$frss" "$lrss")${CALLGRIND:+, instructions $(exponent "$fx" "$lx" "$fir" "$lir")}"
	fi
done
echo
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
