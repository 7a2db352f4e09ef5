#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gen-bgs-check.sh: the kernel's word on an image of bench/gen-bgs.py.
# Sparse copies of its devices are attached to read-write loop devices and
# mounted read-only; sysfs allocation/ (total_bytes, bytes_used, disk_total,
# disk_used per type) is compared with `btrfs-space inspect`'s JSON space
# info, and the mount's own check (the tree checker on every block read,
# the chunk/dev-extent/block-group cross checks of open_ctree()) has passed
# when the mount succeeds.  With --check, `btrfs check --readonly` runs on
# the loop devices first.  Everything made is removed by a trap.
#
#   bench/gen-bgs-check.sh [--check] OUT-1.img [OUT-2.img ...]
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
BTRFS_SPACE=${BTRFS_SPACE:-$BENCH_DIR/../btrfs-space}
CHECK=
[ "${1:-}" = --check ] && { CHECK=1; shift; }
[ $# -gt 0 ] || { echo "usage: $0 [--check] DEV-IMAGE..." >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "gen-bgs-check: needs root (loop, mount)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/gen-bgs-check.XXXXXX")
LOOPS=()
MNT=$WORK/mnt
cleanup() {
	mountpoint -q "$MNT" && umount "$MNT"
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT
mkdir "$MNT"

copies=()
for f in "$@"; do
	cp --sparse=always "$f" "$WORK/$(basename "$f")"
	copies+=("$WORK/$(basename "$f")")
done
opts=ro
for c in "${copies[@]}"; do
	l=$(losetup -f --show "$c")
	LOOPS+=("$l")
	opts+=",device=$l"
done
if [ -n "$CHECK" ]; then
	# on the loop devices: btrfs check finds the other devices by scanning
	btrfs check --readonly "${LOOPS[0]}" 2>&1 | sed -n '/^found\|error\|ERROR\|^\[/p'
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "gen-bgs-check: btrfs check failed" >&2; exit 1; }
fi
start=$(date +%s.%N)
mount -o "$opts" "${LOOPS[0]}" "$MNT"
end=$(date +%s.%N)
fsid=$(findmnt -no UUID "$MNT")
echo "mounted $fsid read-only in $(echo "$end - $start" | bc) s"
sys=/sys/fs/btrfs/$fsid/allocation
"$BTRFS_SPACE" --format json inspect "${copies[@]}" > "$WORK/inspect.json"
rc=0
for t in data metadata system; do
	for f in total_bytes bytes_used bytes_readonly disk_total disk_used; do
		k=$(cat "$sys/$t/$f")
		u=$(python3 -c '
import json, sys
print(json.load(open(sys.argv[1]))["space_info"][sys.argv[2]][sys.argv[3]])
' "$WORK/inspect.json" "$t" "$f")
		if [ "$k" = "$u" ]; then s=equal; else s=DIFFERENT; rc=1; fi
		printf '%-9s %-12s kernel %16s  btrfs-space %16s  %s\n' "$t" "$f" "$k" "$u" "$s"
	done
done
exit $rc
