#!/bin/bash
# holes-equal.sh BEFORE AFTER SPEC...: each image (devices joined by +) through inspect,
# forecast and its balance / remove / cleaner / mount-option what-ifs, in text, -v
# (timings out) and JSON, BEFORE against AFTER; prints a DIFF line per difference and
# the count.  QUICK=1: inspect and forecast only (the largest images)
B=$1 A=$2; shift 2
n=0 bad=0
run() { local bin=$1; shift; "$bin" "$@" 2>&1 | sed -E 's/[0-9.]+ m?s\b//g'; echo "rc=${PIPESTATUS[0]}"; }
cmds=("inspect" "forecast")
[ -n "$QUICK" ] || cmds+=("forecast --balance '-dusage=50'" "forecast --balance '-dusage=90 -musage=90'"
	"forecast --balance '-dconvert=raid1 -mconvert=raid1c3'" "forecast --remove 1"
	"forecast --cleaner-uncommitted" "forecast --list-chunks" "forecast --mount-options nodiscard")
for spec in "$@"; do
	devs=${spec//+/ }
	for cmd in "${cmds[@]}"; do
		eval "args=($cmd)"
		for fmt in "" "-v" "--format json"; do
			n=$((n + 1))
			# shellcheck disable=SC2086 # the format and the devices split on spaces
			if [ "$(run "$B" $fmt "${args[@]}" $devs)" != "$(run "$A" $fmt "${args[@]}" $devs)" ]; then
				bad=$((bad + 1)); echo "DIFF $fmt $cmd $(basename "${spec%%+*}")"
			fi
		done
	done
done
echo "$n compared, $bad differ"
