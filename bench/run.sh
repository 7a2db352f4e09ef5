#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh IMAGE [options]: how long btrfs-space, btrfs-progs and the kernel's
# mount take to load the block groups of IMAGE, warm, cold and on a device
# with an added latency per read, each against the limit of this machine for
# the tool's own reads.  A benchmark, not a test: it prints tables and never
# fails on a number.
#
#   --delay-ms LIST   added latency per read, comma separated (default 0,8).
#                     0: warm and cold tables, IMAGE read directly.  >0:
#                     IMAGE served by bench/delayfs (FUSE, direct_io, one
#                     sleep per read request) over a warm backing file
#   --repeat N        warm rounds (default 11): every method once per round,
#                     ratios taken within a round, medians over the rounds
#   --cold-repeat N   cold runs per method, caches dropped before each (3)
#   --no-cold         no cold table (it drops the page cache of the whole
#                     machine, which a shared machine's other users feel)
#   --delay-repeat N  runs per method at each delay > 0 (default 1)
#   --queue-depths L  --io-threads of the "pinpoint xQ" rows (default 64)
#   --methods LIST    of pinpoint,x1,scan,fishow,kernel (default all)
#   --no-kernel       as --methods without kernel (needs root, like the cold
#                     table; without root both are skipped)
#   --tsv FILE        also append every row to FILE, tab separated: label
#                     delay_ms method cache blocks bytes device_reads wall_s
#                     cpu_s bg_search_blocks block_groups tree_leaves
#                     minimal_set disk_bytes vs_limit utc_time cpu_vs_limit
#   --label NAME      name of the image in the tables (default: file name)
#
# Environment: BTRFS_SPACE, the binary under test (default: the repo's
# ./btrfs-space), so the figures can be measured again for another build;
# BTRFS (btrfs).
#
# Warm means warm: btrfs-progs (6.2 here) calls posix_fadvise(DONTNEED) on
# the image when it opens and closes it, which empties the page cache.  Every
# warm btrfs-progs run here goes through bench/nofadvise.so (LD_PRELOAD,
# built from bench/nofadvise.c), which drops that advice; the "as shipped"
# row shows it without, and the cache is warmed again after each such run.
#
# The limit (warm): process start-up (/bin/true, timed the same way as every
# method) + copying exactly the blocks the tool read out of the page cache
# into one reused buffer + their crc32c (bench/readset-limit.c, ISA-L).  The
# read set is the tool's own pread64/preadv2 calls on IMAGE (strace of one
# warm run), checked against its io.blocks_read.  Its CPU time (user +
# system of /bin/true and of readset-limit's pass) is the limit of the CPU
# column: "CPU vs limit" holds a method's CPU time against it, a ratio the
# load of others moves much less than the wall's.
#
# The limit at +D ms: process start-up (/bin/true, timed alike) + the
# dependency chain: R round trips x the measured delay
# + (N - R) reads / queue depth x the measured delay, where R = 1 (super-
# block) + chunk-tree height + root-tree height + the levels above the
# leaves of the tree holding the block-group items (heights from
# dump-super/dump-tree), N the reads delayfs served the method.
#
# Cold: caches dropped (echo 3 > /proc/sys/vm/drop_caches) before each run,
# then the program and its libraries read back (a run on /dev/null);
# disk bytes = the process's block input (/usr/bin/time %I x 512), for the
# kernel's mount the backing disk's sectors read (/sys/class/block/*/stat:
# other processes' reads count too), against blocks read x their size.
#
# The machine may be shared: wall times move with the load of others, so
# read medians and the per-round ratios, not single figures.
#
# Loop devices are attached read-write over delayfs (which refuses writes) or
# over IMAGE for the warm and cold mounts (mount -o ro writes nothing); if a
# read-write attach fails, losetup -r is used and said.
set -uo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$BENCH_DIR/.." && pwd)
BTRFS_SPACE=${BTRFS_SPACE:-$TOP/btrfs-space}
BTRFS=${BTRFS:-btrfs}
DELAYS=0,8
REPEAT=11
COLD_REPEAT=3
DELAY_REPEAT=1
QDS=64
METHOD_SET=pinpoint,x1,scan,fishow,kernel
KERNEL=1
COLD=1
TSV=
LABEL=
IMAGE=

usage() { awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit "${1:-2}"; }
die() { echo "run.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	--delay-ms) DELAYS=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--cold-repeat) COLD_REPEAT=$2; shift 2 ;;
	--delay-repeat) DELAY_REPEAT=$2; shift 2 ;;
	--queue-depths) QDS=$2; shift 2 ;;
	--methods) METHOD_SET=$2; shift 2 ;;
	--no-kernel) KERNEL=0; shift ;;
	--no-cold) COLD=0; shift ;;
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
for n in "$REPEAT" "$COLD_REPEAT" "$DELAY_REPEAT"; do
	[[ "$n" =~ ^[1-9][0-9]?$ ]] || die "repeat counts take 1..99"
done
for t in jq strace awk gcc "$BTRFS" /usr/bin/time; do
	command -v "$t" >/dev/null || die "$t not found (apt-get install jq strace gcc time btrfs-progs)"
done
[ -f /usr/include/isa-l.h ] || die "readset-limit needs ISA-L: apt-get install libisal-dev"
has_method() { [[ ",$METHOD_SET," == *",$1,"* ]]; }
has_method kernel || KERNEL=0
IFS=, read -r -a DELAY_LIST <<< "$DELAYS"
IFS=, read -r -a QD_LIST <<< "$QDS"
for q in "${QD_LIST[@]}"; do
	[[ "$q" =~ ^[1-9][0-9]*$ ]] || die "bad queue depth '$q'"
done
NEED_FUSE=0
for d in "${DELAY_LIST[@]}"; do
	[[ "$d" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "bad delay '$d'"
	[ "$d" = 0 ] || NEED_FUSE=1
done
ROOT=0
[ "$(id -u)" = 0 ] && ROOT=1
if [ "$KERNEL" = 1 ] && [ $ROOT = 0 ]; then
	echo "run.sh: not root: the kernel's mount and the cold table are skipped" >&2
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
fratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
median() {
	[ $# -gt 0 ] || { echo -; return; }
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
drop_caches() { sync; [ $ROOT = 0 ] || echo 3 > /proc/sys/vm/drop_caches; }

# delayfs counters: "reads N bytes N writes_refused N delay_us N"
fuse_reads() { [ -n "$FUSE_PID" ] && awk '{ print $2 }' "$FUSE_DIR/stats" || echo 0; }
fuse_writes() { [ -n "$FUSE_PID" ] && awk '{ print $6 }' "$FUSE_DIR/stats" || echo 0; }

fuse_start() {	# $1 = delay in ms
	local us th
	us=$(awk -v d="$1" 'BEGIN { printf "%d", d * 1000 }')
	# at least one delayfs thread per request in flight: its default of
	# 128 would halve the overlap of --queue-depths 256
	th=$(printf '%s\n' 128 "${QD_LIST[@]}" | sort -n | tail -1)
	"$WORK/delayfs" "$FUSE_DIR" -f -o "image=$IMAGE,delay_us=$us" \
		-o "max_threads=$th,max_idle_threads=$th,clone_fd" 2>"$WORK/delayfs.log" &
	FUSE_PID=$!
	for _ in $(seq 100); do
		[ -f "$FUSE_DIR/stats" ] && return 0
		kill -0 "$FUSE_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$WORK/delayfs.log" >&2
	die "delayfs did not come up"
}

# run one command: sets WALL, CPU (user+sys to the millisecond, by bash's
# time: /usr/bin/time prints hundredths), DISK (block input, bytes), OUT
# (its stdout file), DEVREADS (requests delayfs served meanwhile)
run_timed() {
	local r0 t0 t1 rc TIMEFORMAT='%3U %3S'
	OUT=$WORK/out
	r0=$(fuse_reads)
	t0=$(now)
	{ time /usr/bin/time -f "%U %S %I" -o "$WORK/time" "$@" > "$OUT" 2>"$WORK/err"; } 2>"$WORK/cpu"
	rc=$?
	t1=$(now)
	WALL=$(fsub "$t1" "$t0")
	read -r _ DISK < <(tail -1 "$WORK/time" | awk '{ printf "%.3f %.0f\n", $1 + $2, $3 * 512 }')
	CPU=$(awk '{ printf "%.3f", $1 + $2 }' "$WORK/cpu")
	DEVREADS=$(( $(fuse_reads) - r0 ))
	if [ $rc != 0 ]; then
		echo "run.sh: '$*' failed ($rc):" >&2
		head -5 "$WORK/err" >&2
	fi
	return $rc
}

# the backing disk of IMAGE, for the kernel's cold reads
BACKING_STAT=
backing_stat_find() {
	local src
	src=$(findmnt -n -o SOURCE --target "$IMAGE" 2>/dev/null | head -1)
	src=${src#/dev/}
	[ -n "$src" ] && [ -r "/sys/class/block/$src/stat" ] && BACKING_STAT=/sys/class/block/$src/stat
}
disk_read_bytes() { [ -n "$BACKING_STAT" ] && awk '{ printf "%.0f\n", $3 * 512 }' "$BACKING_STAT" || echo 0; }

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
	TRACE=$(mktemp -u "$TRACEFS/instances/btrfs-space-bench.$$.XXXXXX")
	mkdir "$TRACE" || die "cannot create a tracefs instance"
}

# kernel_mount TARGET MODE: MODE = warm (page cache as it is), cold (caches
# dropped), delayed (caches dropped, then the backing image's blocks read
# back into the page cache, so the delay of delayfs is the only latency).
# Sets KREADS KBYTES KWALL KCPU DEVREADS KWRITES KRO KDISK (bytes the backing
# disk read meanwhile) KLAT (s per 16 KiB direct read of the loop device).
kernel_mount() {
	local target=$1 mode=$2 mm dev t0 t1 r0 w0 d0 rc
	kernel_detach	# nothing left from a run that failed half-way
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
	r0=$(fuse_reads); w0=$(fuse_writes); d0=$(disk_read_bytes)
	echo 1 > "$TRACE/events/block/block_bio_queue/enable"
	t0=$(now)
	/usr/bin/time -f "%U %S" -o "$WORK/time" mount -t btrfs -o ro "$LOOP" "$KMNT" 2>"$WORK/err"
	rc=$?
	t1=$(now)
	echo 0 > "$TRACE/events/block/block_bio_queue/enable"
	KDISK=$(( $(disk_read_bytes) - d0 ))
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
	[ "$KWRITES" = 0 ] || echo "run.sh: warning: $KWRITES writes reached delayfs during the mount" >&2
	[ "$KRO" = rw ] || echo "run.sh: note: loop device attached read-only (losetup -r)" >&2
	KLAT=-
	if [ "$mode" = delayed ]; then
		t0=$(now)
		dd if="$LOOP" of=/dev/null bs=16k count=200 iflag=direct status=none
		KLAT=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.6f", (b - a) / 200 }')
	fi
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
NOFADVISE=$WORK/nofadvise.so
bs_json() { jq -r "$1" "$OUT"; }

# fill the page cache with what every method reads, emptying nothing: the
# tool both ways, and btrfs-progs with its DONTNEED neutralised (it reads
# the few blocks the tool does not, which the kernel's mount reads too)
warm_backing() {
	"$BTRFS_SPACE" --bg-search scan inspect "$IMAGE" >/dev/null 2>&1
	"$BTRFS_SPACE" inspect "$IMAGE" >/dev/null 2>&1
	LD_PRELOAD=$NOFADVISE "$BTRFS" filesystem show "$IMAGE" >/dev/null 2>&1
}

METHODS=()
if has_method pinpoint; then
	for q in "${QD_LIST[@]}"; do METHODS+=("pinpoint x$q"); done
fi
has_method x1 && METHODS+=("pinpoint x1")
has_method scan && METHODS+=("scan")
has_method fishow && METHODS+=("fi show")
[ ${#METHODS[@]} -gt 0 ] || die "--methods: nothing to run"
BASE=${METHODS[0]}
method_cmd() {	# $1 method, $2 target: sets CMD
	case $1 in
	"pinpoint x"*) CMD=("$BTRFS_SPACE" --io-threads "${1#pinpoint x}" --format json inspect "$2") ;;
	"scan") CMD=("$BTRFS_SPACE" --bg-search scan --format json inspect "$2") ;;
	"fi show") CMD=(env LD_PRELOAD="$NOFADVISE" "$BTRFS" filesystem show "$2") ;;
	"fi show, as shipped") CMD=("$BTRFS" filesystem show "$2") ;;
	esac
}
# method_prime METHOD: load the method's program and its libraries into the
# page cache by running it on /dev/null (no filesystem, no image read), so
# that a cold run's disk bytes are the image's: drop_caches drops them too,
# and on a quiet machine, where no other process maps libc and the rest,
# %I counted them (1.15 instead of 1.00 for the tool: 7.5 MB of program and
# libraries).  Sets CMD, as method_cmd does.
method_prime() {
	method_cmd "$1" /dev/null
	"${CMD[@]}" > /dev/null 2>&1
}
is_tool() { [[ "$1" == pinpoint* || "$1" == scan ]]; }
method_qd() {	# the queue depth a method keeps: its threads; 1 for the rest
	case $1 in "pinpoint x"*) echo "${1#pinpoint x}" ;; *) echo 1 ;; esac
}

# a table row and its TSV line
# row DELAY METHOD CACHE BLOCKS BYTES DEVREADS WALL CPU BGBLOCKS DISK VS_LIMIT VS_BASE [CPU_VS_LIMIT]
row() {
	local disk_vs
	disk_vs=$(fratio "${10}" "$5")
	[ "${10}" = - ] && disk_vs=-
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$2" "$3" "$4" "$5" \
		"$6" "$9" "$7" "$8" "${10}" "$disk_vs" "${11}" "${13:--}" "${12}"
	if [ -n "$TSV" ]; then
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$LABEL" "$1" "$2" "$3" \
			"$4" "$5" "$6" "$7" "$8" "$9" "$NBG" "$MIN_TREE_LEAVES" "$MIN_SET" "${10}" "${11}" \
			"$(date -u +%FT%TZ)" "${13:--}" >> "$TSV"
	fi
}
table_head() {
	echo "| method | cache | blocks read | bytes read | device reads | BG-search blocks | wall s | CPU s | disk bytes read | disk / bytes read | vs limit | CPU vs limit | vs $BASE |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
}

# ---------------------------------------------------------------- the image
# (dump-tree and dump-super are btrfs-progs too: they empty the cache, so
# they run before anything is warmed)
echo "## $LABEL"
echo
"$BTRFS_SPACE" --format json inspect "$IMAGE" > "$WORK/info.json" || die "btrfs-space cannot read $IMAGE"
NBG=$(jq -r .block_groups.count "$WORK/info.json")
BGSRC=$(jq -r .block_groups.source "$WORK/info.json")
NODESIZE=$(jq -r .filesystem.nodesize "$WORK/info.json")
TREE=extent
[ "$BGSRC" = block-group-tree ] && TREE=11
# minimal set: leaves holding BG items + every node on their paths to the
# root; and the tree's height (the level of the first block dump-tree prints)
read -r MIN_BGS MIN_TREE_LEAVES MIN_LEAVES MIN_NODES BG_LEVEL < <(
	"$BTRFS" inspect-internal dump-tree -t "$TREE" "$IMAGE" | awk '
	/^(node|leaf) [0-9]+ / && top == "" { top = ($1 == "leaf") ? 0 : $4 }
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
		print nbg + 0, nleaves + 0, nbgl + 0, nn + 0, top + 0 }')
MIN_SET=$((MIN_LEAVES + MIN_NODES))
read -r CHUNK_LEVEL ROOT_LEVEL < <("$BTRFS" inspect-internal dump-super "$IMAGE" |
	awk '$1 == "chunk_root_level" { c = $2 } $1 == "root_level" { r = $2 } END { print c + 0, r + 0 }')
# round trips no reader can avoid: superblock, chunk tree level by level,
# root tree level by level, the levels above the block-group leaves
CHAIN_RT=$((1 + CHUNK_LEVEL + 1 + ROOT_LEVEL + 1 + BG_LEVEL))
echo "image: $IMAGE ($(du -h "$IMAGE" | cut -f1) on disk, $(numfmt --to=iec "$(stat -c %s "$IMAGE")") apparent)"
echo "block groups: $NBG in the $BGSRC ($MIN_BGS BLOCK_GROUP_ITEMs in dump-tree); that tree has $MIN_TREE_LEAVES leaves, height $((BG_LEVEL + 1)); chunk tree height $((CHUNK_LEVEL + 1)), root tree height $((ROOT_LEVEL + 1)); nodesize $NODESIZE"
echo "minimal set for loading the block groups: $MIN_SET blocks ($MIN_LEAVES leaves holding BG items + $MIN_NODES nodes on their paths)"
# named from the repository's top when it is in it: results are committed,
# and a checkout's absolute path means nothing in another one
shown_tool=$BTRFS_SPACE
case "$shown_tool" in "$TOP"/*) shown_tool=./${shown_tool#"$TOP"/} ;; esac
echo "tool under test: BTRFS_SPACE=$shown_tool ($("$BTRFS_SPACE" --version 2>&1 | head -1)$(git -C "$(dirname "$BTRFS_SPACE")" log -1 --format=', commit %h' 2>/dev/null))"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (shared: others' work moves the wall times, hence medians and per-round ratios), $(uname -r), $($BTRFS --version | head -1)"
echo

# fi show: its preads of the image, counted once (strace slows it, so the
# timed runs go without strace)
strace -f -y -qq -s 0 -e trace=pread64 -o "$WORK/strace" "$BTRFS" filesystem show "$IMAGE" >/dev/null 2>&1
read -r FS_PREADS FS_BYTES < <(grep -F "<$IMAGE>" "$WORK/strace" |
	awk -F'= ' '{ n++; b += $NF } END { print n + 0, b + 0 }')

gcc -O2 -Wall -shared -fPIC -o "$NOFADVISE" "$BENCH_DIR/nofadvise.c" -ldl || die "cannot build nofadvise.so"
gcc -O2 -Wall -o "$WORK/readset-limit" "$BENCH_DIR/readset-limit.c" -lisal || die "cannot build readset-limit"
if [ "$NEED_FUSE" = 1 ]; then
	# shellcheck disable=SC2046
	gcc -O2 -Wall -o "$WORK/delayfs" "$BENCH_DIR/delayfs.c" $(pkg-config --cflags --libs fuse3) ||
		die "cannot build delayfs"
fi
[ "$KERNEL" = 1 ] && trace_setup
backing_stat_find

# the shim, shown to work: fadvise64 syscalls of one fi show with and without
n_plain=$(strace -f -qq -e trace=fadvise64 -o "$WORK/fa1" "$BTRFS" filesystem show "$IMAGE" >/dev/null 2>&1;
	grep -c DONTNEED "$WORK/fa1")
n_shim=$(strace -f -qq -e trace=fadvise64 -o "$WORK/fa2" env LD_PRELOAD="$NOFADVISE" "$BTRFS" filesystem show "$IMAGE" >/dev/null 2>&1;
	grep -c DONTNEED "$WORK/fa2")
echo "btrfs-progs' DONTNEED: \`btrfs filesystem show\` makes $n_plain fadvise64(POSIX_FADV_DONTNEED) syscalls on the image; with LD_PRELOAD=nofadvise.so (bench/nofadvise.c: posix_fadvise() drops DONTNEED, passes the rest on) $n_shim. Every warm \"fi show\" row runs with it"

# the tool's read set: its own pread64/preadv2 calls on IMAGE in one warm run
warm_backing
method_cmd "$BASE" "$IMAGE"
[[ "$BASE" == pinpoint* ]] || method_cmd "pinpoint x${QD_LIST[0]}" "$IMAGE"
# (through the thread pool: a read that misses the cache would go to
# io_uring, which strace cannot see; the blocks are the same)
BTRFS_SPACE_IO_ENGINE=threads strace -f -qq -y -s 0 -e trace=pread64,preadv2 -o "$WORK/reads.strace" \
	"${CMD[@]}" > "$WORK/reads.json" 2>/dev/null
# pread64(3</img>, ""..., LEN, OFF) = RET: kept when RET = LEN
# preadv2(3</img>, [...], 1, OFF, RWF_NOWAIT) = RET: strace -s 0 hides the
# length; kept when RET is a whole number of 4 KiB sectors (an EAGAIN or a
# short read is read again by the tool with pread64, which is listed then)
grep -F "<$IMAGE>" "$WORK/reads.strace" | awk '
	{ s = $0; sub(/.*>, /, "", s); gsub(/""(\.\.\.)?/, "", s); n = split(s, a, /[^0-9-]+/); k = 0
	  for (i = 1; i <= n; i++) if (a[i] != "") v[++k] = a[i] }
	/ pread64\(/ && k == 3 && v[1] == v[3] { print v[2], v[1] }
	/ preadv2\(/ && k == 3 && v[3] > 0 && v[3] % 4096 == 0 { print v[2], v[3] }' > "$WORK/readset"
read -r RS_N RS_BYTES < <(awk '{ n++; b += $2 } END { print n + 0, b + 0 }' "$WORK/readset")
IO_HEAD=$(awk '$1 == 0 { print $2; exit }' "$WORK/readset")
RS_COUNTED=$(jq -r .io.blocks_read "$WORK/reads.json")
echo "read set of the tool: $RS_N reads, $RS_BYTES bytes (strace of its pread64/preadv2 on the image in one warm run; the tool counts io.blocks_read $RS_COUNTED; the first read is the head of the file, $IO_HEAD bytes at 0: io_open()'s format probe with the superblock in it, which the superblock read then takes from memory; run with BTRFS_SPACE_IO_ENGINE=threads, as io_uring's reads are not system calls strace sees)"
[ "$RS_N" -ge "$RS_COUNTED" ] ||
	echo "run.sh: warning: strace saw fewer reads than the tool counts: the limit below misses some" >&2
[ "$RS_N" -gt 0 ] || die "no reads of $IMAGE seen by strace: does the tool read through another interface (io_uring)?"
echo

# ---------------------------------------------------------------- warm
# shellcheck disable=SC2034  # filled through add(), read through med()
declare -A W RL RB RC CPUW BLK BYT BGB DSK
add() { eval "$1[\$2]=\"\${$1[\$2]:-} \$3\""; }	# add ARRAY KEY VALUE
med() { local -n arr=$1; # shellcheck disable=SC2086
	median ${arr[$2]:-}; }

if has_method pinpoint || has_method x1 || has_method scan || has_method fishow; then
	echo "run.sh: warm: $REPEAT round(s) after one warm-up" >&2
	warm_backing
	for m in "${METHODS[@]}"; do method_cmd "$m" "$IMAGE"; "${CMD[@]}" >/dev/null 2>&1; done
	for r in $(seq 0 "$REPEAT"); do
		# start-up: the median of three, as one sample is noisy here
		sts=(); stc=()
		for _ in 1 2 3; do run_timed /bin/true; sts+=("$WALL"); stc+=("$CPU"); done
		st=$(median "${sts[@]}"); stcpu=$(median "${stc[@]}")
		read -r _ _ _ _ _ copy _ crc _ _ _ lcpu < <("$WORK/readset-limit" "$IMAGE" "$WORK/readset" 5)
		lim=$(awk -v a="$st" -v b="$copy" -v c="$crc" 'BEGIN { printf "%.4f", a + b + c }')
		limcpu=$(awk -v a="$stcpu" -v b="$lcpu" 'BEGIN { printf "%.4f", a + b }')
		base=
		for m in "${METHODS[@]}" "kernel mount" "fi show, as shipped"; do
			case $m in
			"kernel mount")
				[ "$KERNEL" = 1 ] || continue
				kernel_mount "$IMAGE" warm
				WALL=$KWALL; CPU=$KCPU; DISK=$KDISK
				BLK[$m]=$KREADS; BYT[$m]=$KBYTES; BGB[$m]=- ;;
			"fi show, as shipped")
				has_method fishow || continue
				method_cmd "$m" "$IMAGE"; run_timed "${CMD[@]}"
				BLK[$m]=$FS_PREADS; BYT[$m]=$FS_BYTES; BGB[$m]=-
				warm_backing ;;	# it emptied the cache: fill it again
			*)
				method_cmd "$m" "$IMAGE"; run_timed "${CMD[@]}" || continue
				if is_tool "$m"; then
					BLK[$m]=$(bs_json .io.blocks_read); BYT[$m]=$(bs_json .io.bytes_read)
					BGB[$m]=$(bs_json .io.block_group_search.blocks_read)
				else
					BLK[$m]=$FS_PREADS; BYT[$m]=$FS_BYTES; BGB[$m]=-
				fi ;;
			esac
			[ -n "$base" ] || base=$WALL
			[ "$r" = 0 ] && continue	# the first round warms
			add W "$m" "$WALL"; add CPUW "$m" "$CPU"; add DSK "$m" "$DISK"
			add RL "$m" "$(fratio "$WALL" "$lim")"; add RB "$m" "$(fratio "$WALL" "$base")"
			add RC "$m" "$(fratio "$CPU" "$limcpu")"
		done
		[ "$r" = 0 ] && continue
		add W limit "$lim"; add W startup "$st"; add W copy "$copy"; add W crc "$crc"
		add CPUW limit "$limcpu"; add CPUW startup "$stcpu"; add CPUW readset "$lcpu"
	done

	echo "### warm page cache (IMAGE read directly): median of $REPEAT rounds; each round runs the limit and every method once, and each ratio is taken within its round (pairwise), then its median"
	echo
	echo "Warm shows in the disk bytes each process read (/usr/bin/time %I): 0. The kernel's mount: a new loop device over the warm file, \`mount -o ro\` timed. \"fi show, as shipped\" is btrfs-progs without the shim: its DONTNEED empties the cache at open, so it is not warm (the cache is filled again after it)."
	echo
	table_head
	limm=$(med W limit)
	row 0 "limit: start-up + copy + crc32c of the tool's $RS_N reads" warm "$RS_N" "$RS_BYTES" - "$limm" \
		"$(med CPUW limit)" - 0 1.00 "$(fratio "$limm" "$(med W "$BASE")")" 1.00
	row 0 "  of it: process start-up (/bin/true, median of 3 a round)" warm - - - "$(med W startup)" \
		"$(med CPUW startup)" - - - -
	row 0 "  of it: copy into one reused buffer (pread)" warm "$RS_N" "$RS_BYTES" - "$(med W copy)" \
		"$(med CPUW readset) (with the crc32c)" - - - -
	row 0 "  of it: crc32c (ISA-L)" warm "$RS_N" "$RS_BYTES" - "$(med W crc)" - - - - -
	for m in "${METHODS[@]}" "kernel mount" "fi show, as shipped"; do
		[ -n "${W[$m]:-}" ] || continue
		cache=warm
		[ "$m" = "kernel mount" ] && cache="warm (backing file)"
		[ "$m" = "fi show" ] && cache="warm (DONTNEED dropped)"
		[ "$m" = "fi show, as shipped" ] && cache="emptied by its DONTNEED"
		row 0 "$m" "$cache" "${BLK[$m]}" "${BYT[$m]}" - "$(med W "$m")" "$(med CPUW "$m")" "${BGB[$m]}" \
			"$(med DSK "$m")" "$(med RL "$m")" "$(med RB "$m")" "$(med RC "$m")"
	done
	echo
	printf 'BG loading vs the minimal set (%d blocks):' "$MIN_SET"
	for m in "${METHODS[@]}"; do
		is_tool "$m" && printf ' %s %s (%s)' "$m" "${BGB[$m]}" "$(fratio "${BGB[$m]}" "$MIN_SET")"
	done
	echo
	echo
fi

# ---------------------------------------------------------------- cold
if [ $ROOT = 1 ] && [ $COLD = 1 ]; then
	echo "run.sh: cold: $COLD_REPEAT run(s) per method" >&2
	# shellcheck disable=SC2034
	declare -A CW CD CR CBYT CBLK
	for _ in $(seq "$COLD_REPEAT"); do
		cbase=
		for m in "${METHODS[@]}" "kernel mount"; do
			if [ "$m" = "kernel mount" ]; then
				[ "$KERNEL" = 1 ] || continue
				kernel_mount "$IMAGE" cold
				WALL=$KWALL; DISK=$KDISK; CBLK[$m]=$KREADS; CBYT[$m]=$KBYTES
			else
				drop_caches
				method_prime "$m"
				method_cmd "$m" "$IMAGE"
				run_timed "${CMD[@]}" || continue
				if is_tool "$m"; then
					CBLK[$m]=$(bs_json .io.blocks_read); CBYT[$m]=$(bs_json .io.bytes_read)
				else
					CBLK[$m]=$FS_PREADS; CBYT[$m]=$FS_BYTES
				fi
			fi
			[ -n "$cbase" ] || cbase=$WALL
			add CW "$m" "$WALL"; add CD "$m" "$DISK"; add CR "$m" "$(fratio "$WALL" "$cbase")"
		done
	done
	echo "### cold: page cache dropped before each run (echo 3 > drop_caches; then the method's program and libraries read back by a run on /dev/null, so that only the image is cold), median of $COLD_REPEAT"
	echo
	echo "Disk bytes: the process's block input (/usr/bin/time %I × 512); for the kernel's mount, the sectors the backing disk ($BACKING_STAT) read meanwhile, others' reads included. \"disk / bytes read\" above 1 is readahead: blocks the tools never asked for."
	echo
	table_head
	for m in "${METHODS[@]}" "kernel mount"; do
		[ -n "${CW[$m]:-}" ] || continue
		row cold "$m" cold "${CBLK[$m]}" "${CBYT[$m]}" - "$(med CW "$m")" - - "$(med CD "$m")" - \
			"$(med CR "$m")"
	done
	echo
fi

# ---------------------------------------------------------------- per delay
for d in "${DELAY_LIST[@]}"; do
	[ "$d" = 0 ] && continue
	fuse_start "$d"
	target=$FUSE_DIR/image
	drop_caches
	warm_backing
	# the delay one read really pays through delayfs (dd's own start-up
	# spread over 50 reads)
	t0=$(now)
	dd if="$target" of=/dev/null bs=16k count=50 iflag=direct status=none
	DLAT=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.6f", (b - a) / 50 }')
	# process start-up, timed as every method is: part of every wall time
	# here as in the warm limit, and of no round trip
	sts=()
	for _ in 1 2 3 4 5; do run_timed /bin/true; sts+=("$WALL"); done
	DSTART=$(median "${sts[@]}")
	declare -A DW DR DB DBL DBG DCPU DRB
	# shellcheck disable=SC2034
	DW=(); DR=(); DB=(); DBL=(); DBG=(); DCPU=(); DRB=()
	for _ in $(seq "$DELAY_REPEAT"); do
		dbase=
		for m in "${METHODS[@]}" "kernel mount"; do
			echo "run.sh: +$d ms: $m" >&2
			if [ "$m" = "kernel mount" ]; then
				[ "$KERNEL" = 1 ] || continue
				kernel_mount "$target" delayed
				WALL=$KWALL; CPU=$KCPU; DBL[$m]=$KREADS; DB[$m]=$KBYTES; DBG[$m]=-
				KLAT_D=$KLAT
			else
				method_cmd "$m" "$target"
				run_timed "${CMD[@]}" || continue
				if is_tool "$m"; then
					DBL[$m]=$(bs_json .io.blocks_read); DB[$m]=$(bs_json .io.bytes_read)
					DBG[$m]=$(bs_json .io.block_group_search.blocks_read)
				else
					DBL[$m]=$FS_PREADS; DB[$m]=$FS_BYTES; DBG[$m]=-
				fi
			fi
			[ -n "$dbase" ] || dbase=$WALL
			add DW "$m" "$WALL"; add DR "$m" "$DEVREADS"; add DCPU "$m" "$CPU"
			add DRB "$m" "$(fratio "$WALL" "$dbase")"
		done
	done
	fuse_stop

	echo "### +$d ms per read (delayfs over a warm backing file, re-warmed without DONTNEED), median of $DELAY_REPEAT run(s)"
	echo
	echo "Measured delay per read through delayfs: $(awk -v l="$DLAT" 'BEGIN { printf "%.3f", l * 1e3 }') ms (50 direct 16 KiB reads by dd). The limit of a method: process start-up ($(awk -v s="$DSTART" 'BEGIN { printf "%.4f", s }') s, /bin/true timed as the methods are, median of 5) + the dependency chain, $CHAIN_RT round trips (superblock 1 + chunk tree $((CHUNK_LEVEL + 1)) + root tree $((ROOT_LEVEL + 1)) + levels above the BG leaves $BG_LEVEL) × the measured delay + the other (device reads − $CHAIN_RT) ÷ the method's queue depth × the measured delay: its threads for pinpoint xQ, 1 for the methods that read one block at a time."
	echo
	table_head
	for m in "${METHODS[@]}" "kernel mount"; do
		[ -n "${DW[$m]:-}" ] || continue
		qd=$(method_qd "$m")
		dr=$(med DR "$m")
		lim=$(awk -v r="$CHAIN_RT" -v n="$dr" -v q="$qd" -v l="$DLAT" -v s="$DSTART" \
			'BEGIN { o = n - r; if (o < 0) o = 0; printf "%.3f", s + r * l + o / q * l }')
		wt=$(med DW "$m")
		row "$d" "$m (limit $lim s at depth $qd)" "+$d ms, backing warm" "${DBL[$m]}" "${DB[$m]}" "$dr" "$wt" \
			"$(med DCPU "$m")" "${DBG[$m]}" - "$(fratio "$wt" "$lim")" "$(med DRB "$m")"
	done
	echo
	if [ "$KERNEL" = 1 ] && [ -n "${DW[kernel mount]:-}" ]; then
		"$BTRFS_SPACE" --format json mount-estimate --latency "${d}ms" "$IMAGE" > "$WORK/est.json"
		pr=$(jq -r .mount_estimate.total_reads "$WORK/est.json")
		ps=$(jq -r .mount_estimate.seconds "$WORK/est.json")
		ps2=-
		"$BTRFS_SPACE" --format json mount-estimate --latency "$DLAT" "$IMAGE" > "$WORK/est2.json" &&
			ps2=$(jq -r .mount_estimate.seconds "$WORK/est2.json")
		kr=${DBL[kernel mount]}; kt=$(med DW "kernel mount")
		echo "| mount-estimate --latency | predicted reads | traced reads | reads error | predicted s | measured s (kernel mount) | time error |"
		echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
		est_row "${d}ms" "$pr" "$kr" "$ps" "$kt"
		[ "$ps2" = - ] || est_row "$(awk -v l="$DLAT" 'BEGIN { printf "%.3f", l * 1e3 }')ms (measured delay)" "$pr" "$kr" "$ps2" "$kt"
		echo
		echo "The loop device's own time per 16 KiB direct read after the mount: ${KLAT_D:-?} s."
		echo
	fi
done
