#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make-large-image.sh [SIZE] [OUT]: build (or reuse) a large sparse btrfs image
# for bench/run.sh: thousands of 1 GiB data block groups, each holding several
# hundred preallocated extents of one medium size, so the BLOCK_GROUP_ITEMs lie
# far apart in a big extent tree.  No data is written: the image file stays
# sparse (its metadata is a few hundred MiB for 3 TiB).
#
#   SIZE   size of the sparse file (default 3T; anything truncate(1) takes)
#   OUT    image path (default /tmp/btrfs-space-bench/large-SIZE.img)
#
# Environment:
#   EXTENT=1M     size of every preallocated extent (one size only: since Linux
#                 6.3 data extents go to block groups by size class, so mixing
#                 sizes would not interleave them; <= 8 MiB is "medium")
#   GAP=4K        file-offset gap between two extents (keeps them separate)
#   FILL_PCT=98   preallocate this share of SIZE (stops early on ENOSPC)
#   JOBS=1        preallocating processes, one file each, FILL_PCT/JOBS of
#                 SIZE each; their extents share the block groups
#   MKFS_OPTS=    extra mkfs.btrfs options (e.g. "-n 4096")
#   FORCE=1       rebuild even when OUT was built with the same parameters
#   APPEND=1      no mkfs: mount OUT as it is and preallocate up to FILL_PCT
#                 of SIZE in new files (EXTENT may differ from the first
#                 pass: a build cut short goes on with fewer, larger calls)
#   BTRFSTUNE=    a btrfstune that has --convert-to-block-group-tree; when it
#                 (or the one on PATH) has it, OUT's twin OUT-bgt.img is made
#
# Needs root (loop device and a read-write mount), mkfs.btrfs, gcc.
# Prints the time each step took.  The image is cleanly unmounted at the end.
#
# More than 10,000 block groups in under 10 minutes (Documentation/benchmark.md):
#   EXTENT=8M JOBS=2 bench/make-large-image.sh 10500G
# 1 GiB data block groups of 128 extents each: fewer, larger preallocations
# than the 3 TiB image's 1,024 per block group, 1.32 million calls (539 s on
# a quiet machine), and still more extent-tree leaves holding block-group
# items (6,357) than the 3 TiB image (3,012).  EXTENT=128M is 82,000 calls
# (586 s at load 15) but 443 leaves.  ext4 takes sparse files up to 16 TiB.
set -euo pipefail

SIZE=${1:-3T}
OUT=${2:-/tmp/btrfs-space-bench/large-$SIZE.img}
EXTENT=${EXTENT:-1M}
GAP=${GAP:-4K}
FILL_PCT=${FILL_PCT:-98}
JOBS=${JOBS:-1}
MKFS_OPTS=${MKFS_OPTS:-}
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)

die() { echo "make-large-image: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (losetup, mount)"
for t in mkfs.btrfs losetup gcc truncate btrfs; do
	command -v $t >/dev/null || die "$t not found"
done

[[ "$JOBS" =~ ^[1-9][0-9]?$ ]] || die "JOBS takes 1..99"
PARAMS="size=$SIZE extent=$EXTENT gap=$GAP fill_pct=$FILL_PCT mkfs_opts=$MKFS_OPTS"
[ "$JOBS" = 1 ] || PARAMS="$PARAMS jobs=$JOBS"
BGT="${OUT%.img}-bgt.img"
mkdir -p "$(dirname "$OUT")"

WORK=$(mktemp -d /tmp/make-large-image.XXXXXX)
LOOP=
cleanup() {
	if mountpoint -q "$WORK/mnt" 2>/dev/null; then
		umount "$WORK/mnt" || true
	fi
	if [ -n "$LOOP" ]; then
		btrfs device scan -u "$LOOP" >/dev/null 2>&1 || true
		losetup -d "$LOOP" || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# the block-group-tree twin, when some btrfstune can convert
bgt_twin() {
	local tune=${BTRFSTUNE:-btrfstune} t0
	if ! "$tune" --help 2>&1 | grep -q -- '--convert-to-block-group-tree'; then
		echo "block-group-tree twin: skipped ($tune of $(btrfs --version 2>&1 | head -1) has no --convert-to-block-group-tree; set BTRFSTUNE= to a btrfs-progs >= 6.3 btrfstune)"
		return 0
	fi
	if [ -f "$BGT" ] && [ "$(cat "$BGT.params" 2>/dev/null)" = "$PARAMS" ] && [ -z "${FORCE:-}" ]; then
		echo "block-group-tree twin: reusing $BGT"
		return 0
	fi
	t0=$(now)
	rm -f "$BGT" "$BGT.params"
	cp --sparse=always "$OUT" "$BGT"
	"$tune" --convert-to-block-group-tree "$BGT"
	echo "$PARAMS" > "$BGT.params"
	echo "block-group-tree twin: $BGT ($(elapsed "$t0") s)"
}

if [ -n "${APPEND:-}" ]; then
	[ -f "$OUT" ] || die "APPEND=1: no $OUT to go on with"
elif [ -f "$OUT" ] && [ "$(cat "$OUT.params" 2>/dev/null)" = "$PARAMS" ] && [ -z "${FORCE:-}" ]; then
	echo "reusing $OUT ($PARAMS); FORCE=1 rebuilds"
	bgt_twin
	exit 0
fi

T0=$(now)
gcc -O2 -Wall -o "$WORK/falloc-loop" "$BENCH_DIR/falloc-loop.c"
if [ -z "${APPEND:-}" ]; then
	rm -f "$OUT" "$OUT.params"
	truncate -s "$SIZE" "$OUT"
	# shellcheck disable=SC2086
	mkfs.btrfs -q $MKFS_OPTS "$OUT" >/dev/null
fi
BYTES=$(stat -c %s "$OUT")
TOTAL=$((BYTES * FILL_PCT / 100))
mkdir "$WORK/mnt"
LOOP=$(losetup -f --show "$OUT")
mount -t btrfs "$LOOP" "$WORK/mnt"
if [ -n "${APPEND:-}" ]; then
	# what earlier passes preallocated (st_blocks counts preallocated extents)
	HAVE=$(du -s -B1 "$WORK/mnt" | cut -f1)
	TOTAL=$((TOTAL > HAVE ? TOTAL - HAVE : 0))
	rm -f "$OUT.params"
	PARAMS="$PARAMS appended"
fi
echo "${APPEND:+(append) }mkfs + mount: $(elapsed "$T0") s ($OUT, $SIZE, $LOOP)"

T1=$(now)
echo "preallocating ${TOTAL} bytes as $EXTENT extents, $GAP apart, $JOBS process(es)"
PIDS=()
for j in $(seq "$JOBS"); do
	f=$WORK/mnt/prealloc
	[ "$JOBS" = 1 ] || f=$WORK/mnt/prealloc.$j
	[ -z "${APPEND:-}" ] || f=$(mktemp "$WORK/mnt/prealloc-more.XXXXXX")
	"$WORK/falloc-loop" "$f" "$EXTENT" "$GAP" "$((TOTAL / JOBS))" &
	PIDS+=($!)
done
for p in "${PIDS[@]}"; do
	wait "$p" || die "falloc-loop failed"
done
sync
echo "fallocate: $(elapsed "$T1") s"

T2=$(now)
btrfs filesystem df "$WORK/mnt" | sed 's/^/    /'
umount "$WORK/mnt"
btrfs device scan -u "$LOOP" >/dev/null 2>&1 || true
losetup -d "$LOOP"
LOOP=
echo "umount: $(elapsed "$T2") s"

echo "$PARAMS" > "$OUT.params"
T3=$(now)
read -r BGS LEAVES < <(btrfs inspect-internal dump-tree -t extent "$OUT" |
	awk '/^leaf [0-9]+ items/ { l++ } /^\titem [0-9]+ key \([0-9]+ BLOCK_GROUP_ITEM / { b++ }
	     END { print b + 0, l + 0 }')
echo "image: $OUT: $BGS block groups, $LEAVES extent-tree leaves, $(du -h "$OUT" | cut -f1) on disk (counted in $(elapsed "$T3") s)"
echo "built in $(elapsed "$T0") s"
bgt_twin
