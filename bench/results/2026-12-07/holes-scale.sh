#!/bin/bash
# holes-scale.sh BINARY IMG: the scale series of the holes section (benchmark.md,
# 2026-12-07): inspect and forecast at 1 k ... 100 k data block groups on the images
# gen-bgs.py makes in IMG (three devices each): tight (--fill 99 --fill-min 60
# --dev-size 0), half-empty (the same, --empty N/2), and scale.sh --build's full,
# empty and 30 % (--dev-size 9T); REPEAT (3) runs a point and one under callgrind
# (NOCG=1: none, for the binary before, whose 100 k runs take hours under callgrind)
B=$1 IMG=$2
here=$(cd "$(dirname "$0")" && pwd)
args=()
for set in tight half bgs empty part; do
	for cmd in inspect forecast; do
		args+=(--series "$set: $cmd" --cmd "$cmd")
		for n in 1000 3000 10000 30000 100000; do
			args+=(--point "$n=$IMG/$set-$n-1.img+$IMG/$set-$n-2.img+$IMG/$set-$n-3.img")
		done
	done
done
[ -n "$NOCG" ] || args=(--callgrind "${args[@]}")
BTRFS_SPACE=$B nice "$here/../../scale.sh" --repeat "${REPEAT:-3}" "${args[@]}"
