#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh IMAGE [options]: how many tree blocks and how much time btrfs-space,
# btrfs-progs and the kernel's mount spend loading the block groups of IMAGE,
# on a device with an added latency per read.  A benchmark, not a test: it
# prints tables and never fails on a number.
#
#   --delay-ms LIST   added latency per read, comma separated (default 0,2,8).
#                     0: the tools read IMAGE directly with a warm page cache
#                     (each tool runs once to warm, then --repeat times; the
#                     median is shown).  >0: IMAGE is served by bench/delayfs
#                     (FUSE, direct_io, one sleep per read request); every
#                     method reads through it once.
#   --repeat N        runs per method at delay 0 (default 5)
#   --no-kernel       skip the kernel's mount (needs root, like dropping the
#                     page cache; without root both are skipped)
#   --tsv FILE        also append every measurement to FILE, tab separated:
#                     label delay_ms method blocks bytes device_reads wall_s
#                     cpu_s bg_search_blocks block_groups tree_leaves
#                     minimal_set utc_time
#   --label NAME      name of the image in the tables and the TSV (default:
#                     the file name)
#
# Environment: BTRFS_SPACE (default: the repo's ./btrfs-space), BTRFS (btrfs).
#
# Methods, per delay:
#   pinpoint x64    btrfs-space --io-threads 64 --format json inspect
#   pinpoint x1     btrfs-space --io-threads 1 ... (one descent per block group)
#   scan            btrfs-space --bg-search scan ... (the kernel's walk)
#   fi show         btrfs filesystem show (btrfs-progs: opens the tree and
#                   loads the block groups); preads counted with strace
#   kernel mount    losetup + mount -t btrfs -o ro, cold: caches dropped, new
#                   loop device; reads = block:block_bio_queue events of that
#                   loop device in a private tracefs instance; time = mount(8)
#
# "blocks read" is what each method says it read (btrfs-space: io.blocks_read;
# fi show: pread64 calls on the image; kernel: bios); "device reads" is what
# delayfs served (the reads that paid the delay).  The minimal set for loading
# the block groups is computed from `btrfs inspect-internal dump-tree`: the
# leaves that hold BLOCK_GROUP_ITEMs and the nodes on their root paths.
#
# Loop devices are attached read-write (a read-only loop device makes the
# kernel mark every block group read-only; NOTES.md of the truth set) over a
# delayfs file that refuses writes; `mount -o ro` writes nothing (delayfs
# counts refused writes).  Should a read-write attach fail, `losetup -r` is
# used and said: the read count is what matters here and it is the same.
set -uo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$BENCH_DIR/.." && pwd)
BTRFS_SPACE=${BTRFS_SPACE:-$TOP/btrfs-space}
BTRFS=${BTRFS:-btrfs}
DELAYS=0,2,8
REPEAT=5
KERNEL=1
TSV=
LABEL=
IMAGE=

usage() { sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
die() { echo "run.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	--delay-ms) DELAYS=$2; shift 2 ;;
	--delay-ms=*) DELAYS=${1#*=}; shift ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--no-kernel) KERNEL=0; shift ;;
	--tsv) TSV=$2; shift 2 ;;
	--label) LABEL=$2; shift 2 ;;
	-h|--help) usage 0 ;;
	-*) die "unknown option $1" ;;
	*) [ -z "$IMAGE" ] || die "one image only"; IMAGE=$1; shift ;;
	esac
done
[ -n "$IMAGE" ] || usage
[ -f "$IMAGE" ] || die "$IMAGE: no such file"
IMAGE=$(readlink -f "$IMAGE")
LABEL=${LABEL:-$(basename "$IMAGE" .img)}
[ -x "$BTRFS_SPACE" ] || die "$BTRFS_SPACE not built (make), or set BTRFS_SPACE="
[[ "$REPEAT" =~ ^[1-9][0-9]?$ ]] || die "--repeat takes 1..99"
for t in jq strace awk "$BTRFS" /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t not found (apt-get install jq strace time btrfs-progs)"
done
IFS=, read -r -a DELAY_LIST <<< "$DELAYS"
NEED_FUSE=0
for d in "${DELAY_LIST[@]}"; do
	[[ "$d" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "bad delay '$d'"
	[ "$d" = 0 ] || NEED_FUSE=1
done
if [ "$KERNEL" = 1 ] && [ "$(id -u)" != 0 ]; then
	echo "run.sh: not root: the kernel's mount is skipped" >&2
	KERNEL=0
fi
if [ "$NEED_FUSE" = 1 ]; then
	if ! pkg-config --exists fuse3 || ! command -v fusermount3 >/dev/null || [ ! -e /dev/fuse ]; then
		die "delays > 0 need FUSE: apt-get install libfuse3-dev fuse3 pkg-config"
	fi
fi

# ---------------------------------------------------------------- clean-up
WORK=$(mktemp -d /tmp/btrfs-space-bench-run.XXXXXX)
FUSE_DIR=$WORK/fuse
KMNT=$WORK/kmnt
FUSE_PID=
LOOP=
TRACE=
TRACEFS=
TRACEFS_MOUNTED=0
mkdir -p "$FUSE_DIR" "$KMNT"

kernel_detach() {
	if mountpoint -q "$KMNT"; then umount "$KMNT" || umount -l "$KMNT"; fi
	if [ -n "$LOOP" ]; then
		"$BTRFS" device scan -u "$LOOP" >/dev/null 2>&1
		losetup -d "$LOOP" 2>/dev/null
		LOOP=
	fi
}
fuse_stop() {
	[ -n "$FUSE_PID" ] || return 0
	fusermount3 -u "$FUSE_DIR" 2>/dev/null || umount -l "$FUSE_DIR" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$FUSE_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill "$FUSE_PID" 2>/dev/null
	wait "$FUSE_PID" 2>/dev/null
	FUSE_PID=
}
cleanup() {
	kernel_detach
	fuse_stop
	if [ -n "$TRACE" ] && [ -d "$TRACE" ]; then
		echo 0 > "$TRACE/events/block/block_bio_queue/enable" 2>/dev/null
		rmdir "$TRACE" 2>/dev/null
	fi
	[ "$TRACEFS_MOUNTED" = 1 ] && umount "$TRACEFS" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- helpers
now() { date +%s.%N; }
fsub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a - b }'; }
fratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
drop_caches() { sync; [ "$(id -u)" != 0 ] || echo 3 > /proc/sys/vm/drop_caches; }

# delayfs counters: "reads N bytes N writes_refused N delay_us N"
fuse_reads() { [ -n "$FUSE_PID" ] && awk '{ print $2 }' "$FUSE_DIR/stats" || echo 0; }
fuse_writes() { [ -n "$FUSE_PID" ] && awk '{ print $6 }' "$FUSE_DIR/stats" || echo 0; }

fuse_start() {	# $1 = delay in ms
	local us
	us=$(awk -v d="$1" 'BEGIN { printf "%d", d * 1000 }')
	"$WORK/delayfs" "$FUSE_DIR" -f -o "image=$IMAGE,delay_us=$us" 2>"$WORK/delayfs.log" &
	FUSE_PID=$!
	for _ in $(seq 100); do
		[ -f "$FUSE_DIR/stats" ] && return 0
		kill -0 "$FUSE_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$WORK/delayfs.log" >&2
	die "delayfs did not come up"
}

# run one command: sets WALL, CPU (user+sys), OUT (its stdout file), DEVREADS
run_timed() {
	local r0 t0 t1
	OUT=$WORK/out
	r0=$(fuse_reads)
	t0=$(now)
	/usr/bin/time -f "%U %S" -o "$WORK/time" "$@" > "$OUT" 2>"$WORK/err"
	local rc=$?
	t1=$(now)
	WALL=$(fsub "$t1" "$t0")
	CPU=$(awk '{ printf "%.3f", $1 + $2 }' "$WORK/time" 2>/dev/null | tail -1)
	DEVREADS=$(( $(fuse_reads) - r0 ))
	if [ $rc != 0 ]; then
		echo "run.sh: '$*' failed ($rc):" >&2
		head -5 "$WORK/err" >&2
	fi
	return $rc
}

# ---------------------------------------------------------------- tracing
trace_setup() {
	TRACEFS=/sys/kernel/tracing
	if [ ! -d "$TRACEFS/instances" ]; then
		if [ -d /sys/kernel/debug/tracing/instances ]; then
			TRACEFS=/sys/kernel/debug/tracing
		else
			mount -t tracefs nodev "$TRACEFS" || die "cannot mount tracefs"
			TRACEFS_MOUNTED=1
		fi
	fi
	TRACE=$TRACEFS/instances/btrfs-space-bench.$$
	mkdir "$TRACE" || die "cannot create a tracefs instance"
}

# kernel_mount TARGET MODE: MODE = warm (page cache as it is), cold (caches
# dropped), delayed (caches dropped, then the backing image's blocks read
# back into the page cache, so the delay of delayfs is the only latency).
# Sets KREADS KBYTES KWALL KCPU DEVREADS KWRITES KRO KLAT (s per 16 KiB
# direct read of the loop device, measured after the mount).
kernel_mount() {
	local target=$1 mode=$2 mm dev t0 t1 r0 w0
	case $mode in
	cold) drop_caches ;;
	delayed) drop_caches; warm_backing ;;
	esac
	KRO=rw
	LOOP=$(losetup -f --show "$target" 2>/dev/null) || {
		LOOP=$(losetup -r -f --show "$target") || die "losetup failed"
		KRO=ro
	}
	mm=$(cat "/sys/block/${LOOP#/dev/}/dev")
	dev=$(( (${mm%:*} << 20) | ${mm#*:} ))
	echo "dev == $dev" > "$TRACE/events/block/block_bio_queue/filter"
	echo > "$TRACE/trace"
	r0=$(fuse_reads); w0=$(fuse_writes)
	echo 1 > "$TRACE/events/block/block_bio_queue/enable"
	t0=$(now)
	/usr/bin/time -f "%U %S" -o "$WORK/time" mount -t btrfs -o ro "$LOOP" "$KMNT" 2>"$WORK/err"
	local rc=$?
	t1=$(now)
	echo 0 > "$TRACE/events/block/block_bio_queue/enable"
	KWALL=$(fsub "$t1" "$t0")
	KCPU=$(awk '{ printf "%.3f", $1 + $2 }' "$WORK/time" | tail -1)
	DEVREADS=$(( $(fuse_reads) - r0 ))
	# "loop0-123 [001] ..... 1.2: block_bio_queue: 7,0 RM 128 + 32 [mount]"
	read -r KREADS KBYTES < <(grep -v '^#' "$TRACE/trace" |
		awk '{ for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+,[0-9]+$/) {
			if ($(i + 1) ~ /R/) { n++; b += $(i + 4) * 512 } break } }
		     END { print n + 0, b + 0 }')
	if [ $rc != 0 ]; then
		echo "run.sh: mount failed:" >&2; cat "$WORK/err" >&2
		KREADS=-; KBYTES=-
	fi
	mountpoint -q "$KMNT" && umount "$KMNT"
	KWRITES=$(( $(fuse_writes) - w0 ))
	# the device's own per-read time, as the kernel sees it (200 reads)
	t0=$(now)
	dd if="$LOOP" of=/dev/null bs=16k count=200 iflag=direct status=none
	KLAT=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.6f", (b - a) / 200 }')
	kernel_detach
	return 0
}

# est_row LABEL PREDICTED_READS TRACED_READS PREDICTED_S MEASURED_S
est_row() {
	awk -v l="$1" -v pr="$2" -v kr="$3" -v ps="$4" -v kt="$5" 'BEGIN {
		re = (kr > 0) ? sprintf("%+.1f%%", (pr - kr) * 100 / kr) : "-"
		te = (kt > 0) ? sprintf("%+.1f%%", (ps - kt) * 100 / kt) : "-"
		printf "| %s | %d | %s | %s | %.3f | %s | %s |\n", l, pr, kr, re, ps, kt, te }'
}

# ---------------------------------------------------------------- the methods
bs_json() { jq -r "$1" "$OUT"; }

# the blocks the kernel's mount and the tools read, from the image itself
warm_backing() {
	"$BTRFS_SPACE" --bg-search scan inspect "$IMAGE" >/dev/null 2>&1
	"$BTRFS_SPACE" inspect "$IMAGE" >/dev/null 2>&1
	"$BTRFS" filesystem show "$IMAGE" >/dev/null 2>&1
}

METHODS=("pinpoint x64" "pinpoint x1" "scan" "fi show")
method_cmd() {	# $1 method, $2 target: sets CMD
	case $1 in
	"pinpoint x64") CMD=("$BTRFS_SPACE" --io-threads 64 --format json inspect "$2") ;;
	"pinpoint x1") CMD=("$BTRFS_SPACE" --io-threads 1 --format json inspect "$2") ;;
	"scan") CMD=("$BTRFS_SPACE" --bg-search scan --format json inspect "$2") ;;
	"fi show") CMD=("$BTRFS" filesystem show "$2") ;;
	esac
}

declare -A BLOCKS BYTES BGBLOCKS WALLS CPUS DEVR KLAT_AT
record() {	# $1 delay $2 method $3 blocks $4 bytes $5 devreads $6 wall $7 cpu $8 bg-blocks
	BLOCKS[$1,$2]=$3; BYTES[$1,$2]=$4; DEVR[$1,$2]=$5; WALLS[$1,$2]=$6; CPUS[$1,$2]=$7
	BGBLOCKS[$1,$2]=${8:--}
	if [ -n "$TSV" ]; then
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$LABEL" "$1" "$2" "$3" "$4" \
			"$5" "$6" "$7" "$8" "$NBG" "$MIN_TREE_LEAVES" "$MIN_SET" "$(date -u +%FT%TZ)" >> "$TSV"
	fi
}

# ---------------------------------------------------------------- the image
echo "## $LABEL"
echo
"$BTRFS_SPACE" --format json inspect "$IMAGE" > "$WORK/info.json" || die "btrfs-space cannot read $IMAGE"
NBG=$(jq -r .block_groups.count "$WORK/info.json")
BGSRC=$(jq -r .block_groups.source "$WORK/info.json")
NODESIZE=$(jq -r .filesystem.nodesize "$WORK/info.json")
TREE=extent
[ "$BGSRC" = block-group-tree ] && TREE=11
# minimal set: leaves holding BG items + every node on their paths to the root
read -r MIN_BGS MIN_TREE_LEAVES MIN_LEAVES MIN_NODES < <(
	"$BTRFS" inspect-internal dump-tree -t "$TREE" "$IMAGE" | awk '
	/^node [0-9]+ level [0-9]+/ { cur = $2; nodes[cur] = 1; next }
	/^leaf [0-9]+ items/ { leaf = $2; nleaves++; next }
	/^\tkey \(.*\) block [0-9]+ gen/ {
		for (i = 1; i < NF; i++) if ($i == "block") parent[$(i + 1)] = cur; next }
	/^\titem [0-9]+ key \([0-9]+ BLOCK_GROUP_ITEM / {
		nbg++; if (!(leaf in bg)) { bg[leaf] = 1; nbgl++ } }
	END {
		for (l in bg)
			for (b = l; b != "" && !(b in need); b = (b in parent) ? parent[b] : "") {
				need[b] = 1; if (b in nodes) nn++ }
		print nbg + 0, nleaves + 0, nbgl + 0, nn + 0 }')
MIN_SET=$((MIN_LEAVES + MIN_NODES))
echo "image: $IMAGE ($(du -h "$IMAGE" | cut -f1) on disk, $(numfmt --to=iec "$(stat -c %s "$IMAGE")") apparent)"
echo "block groups: $NBG in the $BGSRC ($MIN_BGS BLOCK_GROUP_ITEMs in dump-tree); that tree has $MIN_TREE_LEAVES leaves; nodesize $NODESIZE"
echo "minimal set for loading the block groups: $MIN_SET blocks ($MIN_LEAVES leaves holding BG items + $MIN_NODES nodes on their paths)"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r), $($BTRFS --version | head -1)"
echo

# fi show: its preads of the image, counted once (strace slows it, so the
# timed runs go without strace)
strace -f -y -qq -e trace=pread64 -o "$WORK/strace" "$BTRFS" filesystem show "$IMAGE" >/dev/null 2>&1
read -r FS_PREADS FS_BYTES < <(grep -F "<$IMAGE>" "$WORK/strace" |
	awk -F'= ' '{ n++; b += $NF } END { print n + 0, b + 0 }')

if [ "$NEED_FUSE" = 1 ]; then
	# shellcheck disable=SC2046
	gcc -O2 -Wall -o "$WORK/delayfs" "$BENCH_DIR/delayfs.c" $(pkg-config --cflags --libs fuse3) ||
		die "cannot build delayfs"
fi
[ "$KERNEL" = 1 ] && trace_setup

# ---------------------------------------------------------------- per delay
for d in "${DELAY_LIST[@]}"; do
	if [ "$d" = 0 ]; then
		target=$IMAGE
		runs=$REPEAT
		warm_backing
		for m in "${METHODS[@]}"; do
			method_cmd "$m" "$IMAGE"
			"${CMD[@]}" >/dev/null 2>&1
		done
	else
		fuse_start "$d"
		target=$FUSE_DIR/image
		runs=1
		drop_caches
		warm_backing
	fi
	for m in "${METHODS[@]}"; do
		echo "run.sh: +$d ms: $m ($runs run(s))" >&2
		walls=(); cpus=()
		for _ in $(seq "$runs"); do
			method_cmd "$m" "$target"
			run_timed "${CMD[@]}" || continue
			walls+=("$WALL"); cpus+=("$CPU")
		done
		[ ${#walls[@]} -gt 0 ] || { record "$d" "$m" - - - - - -; continue; }
		if [ "$m" = "fi show" ]; then
			record "$d" "$m" "$FS_PREADS" "$FS_BYTES" "$DEVREADS" "$(median "${walls[@]}")" \
				"$(median "${cpus[@]}")" -
		else
			record "$d" "$m" "$(bs_json .io.blocks_read)" "$(bs_json .io.bytes_read)" "$DEVREADS" \
				"$(median "${walls[@]}")" "$(median "${cpus[@]}")" \
				"$(bs_json .io.block_group_search.blocks_read)"
		fi
	done

	# the kernel
	KMODES=()
	if [ "$KERNEL" = 1 ]; then
		if [ "$d" = 0 ]; then KMODES=("kernel mount (warm)" "kernel mount (cold)"); else KMODES=("kernel mount"); fi
	fi
	for km in "${KMODES[@]}"; do
		case $km in
		*warm*) mode=warm; kr=$REPEAT ;;
		*cold*) mode=cold; kr=1 ;;
		*) mode=delayed; kr=1 ;;
		esac
		echo "run.sh: +$d ms: $km ($kr run(s))" >&2
		walls=(); cpus=()
		for _ in $(seq "$kr"); do
			kernel_mount "$target" "$mode"
			walls+=("$KWALL"); cpus+=("$KCPU")
		done
		record "$d" "$km" "$KREADS" "$KBYTES" "$DEVREADS" "$(median "${walls[@]}")" "$(median "${cpus[@]}")" -
		KLAT_AT[$d]=$KLAT
		[ "$KWRITES" = 0 ] || echo "run.sh: warning: $KWRITES writes reached delayfs during the mount" >&2
		[ "$KRO" = rw ] || echo "run.sh: note: loop device attached read-only (losetup -r)" >&2
	done
	[ "$d" = 0 ] || fuse_stop

	# ------------------------------------------------------------ tables
	if [ "$d" = 0 ]; then
		echo "### delay 0 ms: warm page cache, IMAGE read directly (median of $REPEAT runs after one warm-up run)"
	else
		echo "### +$d ms per read (delayfs), one cold run each"
	fi
	echo
	echo "| method | blocks read | BG-search blocks | bytes read | device reads | wall s | CPU s | blocks vs pinpoint x64 | time vs pinpoint x64 |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	base_b=${BLOCKS[$d,pinpoint x64]}; base_t=${WALLS[$d,pinpoint x64]}
	for m in "${METHODS[@]}" "${KMODES[@]}"; do
		dv=${DEVR[$d,$m]}; [ "$d" = 0 ] && dv=-
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$m" "${BLOCKS[$d,$m]}" \
			"${BGBLOCKS[$d,$m]}" "${BYTES[$d,$m]}" "$dv" "${WALLS[$d,$m]}" "${CPUS[$d,$m]}" \
			"$(fratio "${BLOCKS[$d,$m]}" "$base_b")" "$(fratio "${WALLS[$d,$m]}" "$base_t")"
	done
	echo
	printf 'BG loading vs the minimal set (%d blocks): pinpoint x64 %s (%s), pinpoint x1 %s (%s), scan %s (%s)\n' \
		"$MIN_SET" "${BGBLOCKS[$d,pinpoint x64]}" "$(fratio "${BGBLOCKS[$d,pinpoint x64]}" "$MIN_SET")" \
		"${BGBLOCKS[$d,pinpoint x1]}" "$(fratio "${BGBLOCKS[$d,pinpoint x1]}" "$MIN_SET")" \
		"${BGBLOCKS[$d,scan]}" "$(fratio "${BGBLOCKS[$d,scan]}" "$MIN_SET")"
	if [ "$KERNEL" = 1 ]; then
		kname="kernel mount"; [ "$d" = 0 ] && kname="kernel mount (cold)"
		"$BTRFS_SPACE" --format json mount-estimate --latency "${d}ms" "$IMAGE" > "$WORK/est.json"
		pr=$(jq -r .mount_estimate.total_reads "$WORK/est.json")
		ps=$(jq -r .mount_estimate.seconds "$WORK/est.json")
		# the latency delayfs really added: the loop device's measured time per
		# read, less its time per read without delayfs (the model's per-read
		# constant stands for that one when delay 0 was not run)
		base=${KLAT_AT[0]:-0.00009}
		lat_s=$(awk -v l="${KLAT_AT[$d]}" -v b="$base" 'BEGIN { v = l - b; printf "%.6f", v < 0 ? 0 : v }')
		lat_ms=$(awk -v l="$lat_s" 'BEGIN { printf "%.3f", l * 1e3 }')
		# plain seconds: mount-estimate (at d040ade) compares the number with
		# its 10 s limit before applying the unit, so "10.5ms" is refused
		ps2=-
		"$BTRFS_SPACE" --format json mount-estimate --latency "$lat_s" "$IMAGE" > "$WORK/est2.json" &&
			ps2=$(jq -r .mount_estimate.seconds "$WORK/est2.json")
		kr=${BLOCKS[$d,$kname]}; kt=${WALLS[$d,$kname]}
		echo
		echo "| mount-estimate --latency | predicted reads | traced reads | reads error | predicted s | measured s ($kname) | time error |"
		echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
		est_row "${d}ms" "$pr" "$kr" "$ps" "$kt"
		[ "$d" = 0 ] || [ "$ps2" = - ] ||
			est_row "${lat_ms}ms (delay measured on the loop device)" "$pr" "$kr" "$ps2" "$kt"
	fi
	echo
done
