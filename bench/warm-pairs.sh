#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# warm-pairs.sh IMAGE [ROUNDS]: the CPU time of the kernel's own warm mount
# and of the limit against btrfs-space's warm inspect of the same image, in
# the same run, interleaved: each round runs `mount -t btrfs -o ro` on a new
# read-write loop device over IMAGE, `btrfs-space --format json inspect
# IMAGE`, the same with --io-threads 1 (and with the binary BEFORE= names,
# when set), /bin/true and readset-limit's pass over the tool's own reads,
# each under `perf stat -e task-clock` (the process's CPU in microseconds,
# system calls included; run.sh's CPU column comes from time(1), in
# hundredths), readset-limit's pass by its own CPU clock.  Prints a line per
# round (ms: mount, inspect, inspect x1, [before,] true, copy and crc32c,
# and the 1-minute load) and the medians with the median per-round ratios
# inspect / mount and inspect / limit, where the limit is true + the copy
# and crc32c of exactly the blocks the tool read (as run.sh defines it:
# bench/readset-limit.c, the read set from an strace of one warm run).
# The limit's copy is the median of 5 passes in one process, its buffer and
# the CPU's caches warm, where each tool run starts cold after the round's
# mount: so each round also times readset-limit with one pass as a whole
# process, under the same task-clock as the tool (exec, one copy and crc32c
# of the read set, exit), and prints inspect / that process beside the
# ratio to the limit.
#
# What the mount's figure leaves out: the kernel reads the tree blocks
# through the loop device's worker and checks them (csum, tree-checker) in
# btrfs's end-io workers, kernel threads whose CPU is nobody's process:
# the tool does both in its own process.  So the comparison favours the
# kernel.  Needs root, perf, strace, gcc and ISA-L; BTRFS_SPACE= names the
# binary, NO_MOUNT=1 leaves the mount out (no root needed then).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
BTRFS_SPACE=${BTRFS_SPACE:-$BENCH_DIR/../btrfs-space}
BEFORE=${BEFORE:-}
NO_MOUNT=${NO_MOUNT:-}
IMG=$(readlink -f "${1:?usage: warm-pairs.sh IMAGE [ROUNDS]}")
ROUNDS=${2:-15}
WORK=$(mktemp -d /tmp/warm-pairs.XXXXXX)
MNT=$WORK/mnt
LOOP=

cleanup() {
	mountpoint -q "$MNT" && umount "$MNT"
	if [ -n "$LOOP" ]; then
		btrfs device scan -u "$LOOP" >/dev/null 2>&1 || true
		losetup -d "$LOOP" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
mkdir "$MNT"

tc() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | grep task-clock | cut -d, -f1; }
median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }'; }
# the median and the quartiles of column $1 of the rows
col() { awk -v k="$1" '{ print $k }' "$WORK/rows" | sort -g |
	awk '{ v[NR] = $1 } END { printf "%.2f [%.2f-%.2f]", v[int((NR + 1) / 2)], v[int(NR / 4) + 1], v[int(3 * NR / 4)] }'; }

"$BTRFS_SPACE" inspect "$IMG" > /dev/null	# warm the page cache
# the limit: the tool's reads (as run.sh takes them), copied and summed
gcc -O2 -Wall -o "$WORK/readset-limit" "$BENCH_DIR/readset-limit.c" -lisal
BTRFS_SPACE_IO_ENGINE=threads strace -f -qq -y -s 0 -e trace=pread64,preadv2 -o "$WORK/strace" \
	"$BTRFS_SPACE" --format json inspect "$IMG" > "$WORK/io.json"
grep -F "<$IMG>" "$WORK/strace" | awk '
	{ s = $0; sub(/.*>, /, "", s); gsub(/""(\.\.\.)?/, "", s); n = split(s, a, /[^0-9-]+/); k = 0
	  for (i = 1; i <= n; i++) if (a[i] != "") v[++k] = a[i] }
	/ pread64\(/ && k == 3 && v[1] == v[3] { print v[2], v[1] }
	/ preadv2\(/ && k == 3 && v[3] > 0 && v[3] % 4096 == 0 { print v[2], v[3] }' > "$WORK/readset"
echo "# warm-pairs.sh $(date -u '+%Y-%m-%d %H:%M UTC'), $IMG, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# read set: $(wc -l < "$WORK/readset") reads of the image ($(awk '{ b += $2 } END { print b }' "$WORK/readset") bytes), the tool counts $(jq -r .io.blocks_read "$WORK/io.json") blocks"
echo "# task-clock ms: mount inspect inspect-x1 ${BEFORE:+before }true copy+crc32c limit-process load"
: > "$WORK/rows"
for _ in $(seq "$ROUNDS"); do
	k=0
	if [ -z "$NO_MOUNT" ]; then
		LOOP=$(losetup -f --show "$IMG")
		k=$(tc mount -t btrfs -o ro "$LOOP" "$MNT")
		umount "$MNT"
		btrfs device scan -u "$LOOP" >/dev/null 2>&1 || true
		losetup -d "$LOOP"
		LOOP=
	fi
	a=$(tc "$BTRFS_SPACE" --format json inspect "$IMG")
	b=$(tc "$BTRFS_SPACE" --io-threads 1 --format json inspect "$IMG")
	p=
	[ -z "$BEFORE" ] || p=$(tc "$BEFORE" --format json inspect "$IMG")
	t=$(tc /bin/true)
	l=$("$WORK/readset-limit" "$IMG" "$WORK/readset" 5 | awk '{ printf "%.3f", $NF * 1000 }')
	q=$(tc "$WORK/readset-limit" "$IMG" "$WORK/readset" 1)
	echo "$k $a $b ${p:+$p }$t $l $q $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$WORK/rows"
done
n=$(awk 'NR == 1 { print NF }' "$WORK/rows")	# the true column is n - 3
printf 'median [quartiles]: mount %s, inspect %s, inspect x1 %s, ' "$(col 1)" "$(col 2)" "$(col 3)"
[ -z "$BEFORE" ] || printf 'before %s, ' "$(col 4)"
printf 'true %s, copy+crc32c %s, limit as a process %s; load %s-%s\n' "$(col $((n - 3)))" "$(col $((n - 2)))" "$(col $((n - 1)))" \
	"$(awk -v k="$n" '{ print $k }' "$WORK/rows" | sort -g | head -1)" \
	"$(awk -v k="$n" '{ print $k }' "$WORK/rows" | sort -g | tail -1)"
printf 'per round, medians: limit %s ms; inspect / limit %s, inspect x1 / limit %s' \
	"$(awk -v n="$n" '{ print $(n - 3) + $(n - 2) }' "$WORK/rows" | median)" \
	"$(awk -v n="$n" '{ print $2 / ($(n - 3) + $(n - 2)) }' "$WORK/rows" | median)" \
	"$(awk -v n="$n" '{ print $3 / ($(n - 3) + $(n - 2)) }' "$WORK/rows" | median)"
printf '; inspect / limit as a process %s' "$(awk -v n="$n" '{ print $2 / $(n - 1) }' "$WORK/rows" | median)"
[ -n "$NO_MOUNT" ] || printf '; inspect / mount %s' "$(awk '{ print $2 / $1 }' "$WORK/rows" | median)"
[ -z "$BEFORE" ] || printf '; inspect / before %s' "$(awk '{ print $2 / $4 }' "$WORK/rows" | median)"
printf '\n'
