#!/bin/bash
# warm4-cmp.sh BEFORE AFTER IMAGE...: each image through both binaries as
# `inspect`, `-v inspect`, `--format json inspect` and `-v --format json
# inspect`; stdout, stderr and exit status compared byte for byte, the
# elapsed times of -v (stderr "time", "elapsed") and of the JSON masked.
# Prints one line per run that differs and the count.
set -uo pipefail
BEFORE=$1 AFTER=$2
shift 2
T=$(mktemp -d /tmp/warm4-cmp.XXXXXX)
trap 'rm -rf "$T"' EXIT
mask() { sed -E 's/[0-9]+(\.[0-9]+)? ?(ms|s|us|µs)\b/T/g; s/"(elapsed|time|wall|cpu)[a-z_]*": *[0-9.e+-]+/"\1": T/g' "$1"; }
runs=0 differ=0
for img in "$@"; do
	for opts in "inspect" "-v inspect" "--format json inspect" "-v --format json inspect"; do
		for b in before after; do
			bin=$BEFORE; [ $b = after ] && bin=$AFTER
			# shellcheck disable=SC2086
			$bin $opts $img > "$T/$b.out" 2> "$T/$b.err"
			echo "exit $?" >> "$T/$b.out"
		done
		runs=$((runs + 1))
		if ! cmp -s <(mask "$T/before.out") <(mask "$T/after.out") ||
		   ! cmp -s <(mask "$T/before.err") <(mask "$T/after.err"); then
			differ=$((differ + 1))
			echo "DIFFER: $opts $(echo $img)"
		fi
	done
done
echo "compared $runs runs, $differ differ"
