#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# warm-pairs.sh IMAGE [ROUNDS]: the CPU time of the kernel's own warm mount
# against btrfs-space's warm inspect of the same image, in the same run,
# interleaved: each round runs `mount -t btrfs -o ro` on a new read-write
# loop device over IMAGE, `btrfs-space --format json inspect IMAGE`, the
# same with --io-threads 1 and /bin/true, each under `perf stat -e
# task-clock` (the process's CPU in microseconds, system calls included;
# run.sh's CPU column comes from time(1), in hundredths).  Prints a line per
# round (ms: mount, inspect, inspect x1, true, and the 1-minute load) and
# the medians with the median of the per-round ratio inspect / mount.
#
# What the mount's figure leaves out: the kernel reads the tree blocks
# through the loop device's worker and checks them (csum, tree-checker) in
# btrfs's end-io workers, kernel threads whose CPU is nobody's process:
# the tool does both in its own process.  So the comparison favours the
# kernel.  Needs root and perf; BTRFS_SPACE= names the binary.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
BTRFS_SPACE=${BTRFS_SPACE:-$BENCH_DIR/../btrfs-space}
IMG=${1:?usage: warm-pairs.sh IMAGE [ROUNDS]}
ROUNDS=${2:-15}
MNT=$(mktemp -d /tmp/warm-pairs.XXXXXX)
LOOP=

cleanup() {
	mountpoint -q "$MNT" && umount "$MNT"
	if [ -n "$LOOP" ]; then
		btrfs device scan -u "$LOOP" >/dev/null 2>&1 || true
		losetup -d "$LOOP" 2>/dev/null || true
	fi
	rmdir "$MNT"
}
trap cleanup EXIT

tc() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | grep task-clock | cut -d, -f1; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

"$BTRFS_SPACE" inspect "$IMG" > /dev/null	# warm the page cache
echo "# warm-pairs.sh $(date -u '+%Y-%m-%d %H:%M UTC'), $IMG, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# task-clock ms: mount inspect inspect-x1 true load"
: > "$MNT.rows"
for _ in $(seq "$ROUNDS"); do
	LOOP=$(losetup -f --show "$IMG")
	k=$(tc mount -t btrfs -o ro "$LOOP" "$MNT")
	umount "$MNT"
	btrfs device scan -u "$LOOP" >/dev/null 2>&1 || true
	losetup -d "$LOOP"
	LOOP=
	a=$(tc "$BTRFS_SPACE" --format json inspect "$IMG")
	b=$(tc "$BTRFS_SPACE" --io-threads 1 --format json inspect "$IMG")
	t=$(tc /bin/true)
	echo "$k $a $b $t $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$MNT.rows"
done
printf 'median: mount %s, inspect %s, inspect x1 %s, true %s; inspect / mount %s\n' \
	"$(awk '{ print $1 }' "$MNT.rows" | median)" "$(awk '{ print $2 }' "$MNT.rows" | median)" \
	"$(awk '{ print $3 }' "$MNT.rows" | median)" "$(awk '{ print $4 }' "$MNT.rows" | median)" \
	"$(awk '{ printf "%.2f\n", $2 / $1 }' "$MNT.rows" | median)"
rm -f "$MNT.rows"
