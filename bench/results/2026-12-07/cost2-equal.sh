#!/bin/bash
# cost2-equal.sh BEFORE AFTER IMAGE...: inspect and forecast of each image (devices
# joined by +), text, -v (timings out) and JSON, before vs after; prints DIFF lines
B=$1 A=$2; shift 2
n=0 bad=0
run() { local bin=$1; shift; "$bin" "$@" 2>&1 | sed -E 's/[0-9.]+ m?s\b//g'; echo "rc=${PIPESTATUS[0]}"; }
for spec in "$@"; do
	devs=${spec//+/ }
	for cmd in inspect forecast; do
		for fmt in "" "-v" "--format json"; do
			n=$((n + 1))
			if [ "$(run "$B" $fmt $cmd $devs)" != "$(run "$A" $fmt $cmd $devs)" ]; then
				bad=$((bad + 1)); echo "DIFF $fmt $cmd $spec"
			fi
		done
	done
done
echo "$n compared, $bad differ"
