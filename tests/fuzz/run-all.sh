#!/bin/bash
# Run libFuzzer targets for a while each and print, per target, how many
# inputs were executed and how many crashes (crash-, leak-, oom-, timeout-
# artifacts) it found.  `make fuzz` calls this after `make fuzz-build`.
#
# Usage: tests/fuzz/run-all.sh [TARGET...]    (default: every built target)
#
# Environment:
#   FUZZ_SECONDS=60        seconds per target
#   FUZZ_JOBS=1            targets run at the same time
#   FUZZ_WORK=tests/fuzz/work   per target: corpus/ (grows, kept between
#                          runs), seeds/ (derived from the templates),
#                          crashes/, log
#   FUZZ_BUILD=tests/fuzz/build  where the fuzz-TARGET programs are
#   FUZZ_NICE=10           nice level (the machine is shared)
#   FUZZ_ARGS              more libFuzzer options
#
# Corpora read: the work corpus (new finds are written there), the committed
# seeds tests/fuzz/corpus/TARGET and the seeds the target derives from the
# templates (FUZZ_DUMP_SEEDS).  A crash is kept as FUZZ_WORK/TARGET/crashes/*:
# replay it with  FUZZ_BUILD/fuzz-TARGET FILE  and turn it into an image with
# FUZZ_EXPORT=/tmp/x FUZZ_BUILD/fuzz-TARGET FILE  (Documentation/dev/fuzzing.md).
#
# Exit status: 0 no crash, 1 a crash (or a target did not run), 2 usage.

set -u

FUZZ_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$FUZZ_DIR/../.." && pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_JOBS=${FUZZ_JOBS:-1}
FUZZ_WORK=${FUZZ_WORK:-$FUZZ_DIR/work}
FUZZ_BUILD=${FUZZ_BUILD:-$FUZZ_DIR/build}
FUZZ_NICE=${FUZZ_NICE:-10}
FUZZ_ARGS=${FUZZ_ARGS:-}

case "$FUZZ_WORK" in /*) ;; *) FUZZ_WORK=$TOP/$FUZZ_WORK ;; esac
case "$FUZZ_BUILD" in /*) ;; *) FUZZ_BUILD=$TOP/$FUZZ_BUILD ;; esac

if [ $# -gt 0 ]; then
	targets=("$@")
else
	mapfile -t targets < <(cd "$FUZZ_BUILD" 2>/dev/null && ls fuzz-* 2>/dev/null |
		sed 's/^fuzz-//' | LC_ALL=C sort)
fi
[ ${#targets[@]} -gt 0 ] || { echo "run-all.sh: no targets in $FUZZ_BUILD (make fuzz-build)" >&2; exit 2; }

run_one()
{
	local t=$1 bin=$FUZZ_BUILD/fuzz-$1 dir=$FUZZ_WORK/$1 committed=$FUZZ_DIR/corpus/$1

	mkdir -p "$dir/corpus" "$dir/seeds" "$dir/crashes"
	rm -f "$dir/seeds"/*
	if ! FUZZ_DUMP_SEEDS=$dir/seeds "$bin" > "$dir/log" 2>&1; then
		echo "could not derive seeds" >> "$dir/log"
		return
	fi
	[ -d "$committed" ] || committed=
	# the dictionary and the limits: an allocation over 256 MiB or a run
	# over 10 s is a finding (Documentation/dev/fuzzing.md, resource bounds)
	# shellcheck disable=SC2086 # FUZZ_ARGS is a list of options
	nice -n "$FUZZ_NICE" "$bin" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
		-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
		-dict="$FUZZ_DIR/btrfs.dict" -artifact_prefix="$dir/crashes/" \
		-close_fd_mask=3 -len_control=0 $FUZZ_ARGS \
		"$dir/corpus" "$dir/seeds" ${committed:+"$committed"} >> "$dir/log" 2>&1
	echo "exit status $?" >> "$dir/log"
}

declare -A BEFORE
for t in "${targets[@]}"; do
	[ -x "$FUZZ_BUILD/fuzz-$t" ] || { echo "run-all.sh: $FUZZ_BUILD/fuzz-$t not built" >&2; exit 2; }
	BEFORE[$t]=$(ls "$FUZZ_WORK/$t/crashes" 2>/dev/null | wc -l)
done

echo "fuzzing ${#targets[@]} targets for ${FUZZ_SECONDS}s each, $FUZZ_JOBS at a time (work: $FUZZ_WORK)"
running=0
for t in "${targets[@]}"; do
	run_one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$FUZZ_JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

status=0
total_execs=0
printf '%-18s %12s %8s %8s %8s  %s\n' target executions exec/s corpus crashes note
for t in "${targets[@]}"; do
	dir=$FUZZ_WORK/$t
	log=$dir/log
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	corpus=$(ls "$dir/corpus" | wc -l)
	now=$(ls "$dir/crashes" | wc -l)
	new=$((now - BEFORE[$t]))
	note=
	if [ -z "$execs" ]; then
		execs=0
		note="did not run: $(grep -v '^exit status' "$log" | tail -1 | cut -c1-60)"
		status=1
	fi
	if [ "$new" -gt 0 ]; then
		note="NEW: $(ls -t "$dir/crashes" | head -"$new" | tr '\n' ' ')"
		status=1
	fi
	total_execs=$((total_execs + execs))
	printf '%-18s %12s %8s %8s %8s  %s\n' "$t" "$execs" "${secs:-0}" "$corpus" "$new" "$note"
done
echo "total executions: $total_execs"
[ "$status" = 0 ] || echo "see $FUZZ_WORK/TARGET/log and crashes/"
exit "$status"
