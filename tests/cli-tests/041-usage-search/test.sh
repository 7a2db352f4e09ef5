#!/bin/bash
# inspect's -dusage=N remedy is the smallest usage class that is enough
# (formulas.md 19.6): every class is tried, not a sample of 12.  On a
# full filesystem of 1,000 data block groups 60-99 % used (bench/gen-bgs.py,
# three sparse devices, about 40 classes), metadata tight: the printed N
# gives back the room it needs, and the balance what-if of every class
# below it (forecast --balance -dusage=M) gives back less.  Evenly spread
# tries printed -dusage=65 where -dusage=63 is enough.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq python3

python3 "$TEST_TOP/../bench/gen-bgs.py" --bgs 1000 --fill 99 --fill-min 60 --devices 3 \
	--dev-size 0 "$TEST_TMP/full" > /dev/null || fail "gen-bgs.py failed"
devs=("$TEST_TMP"/full-1.img "$TEST_TMP"/full-2.img "$TEST_TMP"/full-3.img)

run_check_stdout "$BTRFS_SPACE" --format json inspect "${devs[@]}" > "$TEST_TMP/inspect.json" || exit
remedy=$(jq -c '[.summary.remedies[] | select(.command | test("-dusage="))][0]' \
	"$TEST_TMP/inspect.json")
[ "$remedy" != null ] || fail "no -dusage remedy"
usage=$(jq -r '.effect.usage' <<< "$remedy")
needed=$(jq -r '.effect.room_needed' <<< "$remedy")
gained=$(jq -r '.effect.room_gained' <<< "$remedy")
before=$(jq -r '[.effect.unallocated_after[].bytes] | add' <<< "$remedy")
before=$((before - gained))
[ "$gained" -ge "$needed" ] || fail "-dusage=$usage gives back $gained < $needed"
echo "printed -dusage=$usage: gains $gained, needs $needed"
lower=0
for ((m = usage - 1; m > 0; m--)); do
	run_check_stdout "$BTRFS_SPACE" --format json forecast --balance "-dusage=$m" "${devs[@]}" \
		> "$TEST_TMP/m.json" || exit
	sel=$(jq -r '.forecast.balance.nr_selected' "$TEST_TMP/m.json")
	[ "$sel" -gt 0 ] || break
	after=$(jq -r '[.forecast.balance.unallocated_after[]] | add' "$TEST_TMP/m.json")
	echo "-dusage=$m: $sel groups, gains $((after - before))"
	[ $((after - before)) -lt "$needed" ] ||
		fail "-dusage=$m (below the printed $usage) gives back $((after - before)) >= $needed"
	lower=$((lower + 1))
done
[ "$lower" -gt 0 ] || fail "no class below -dusage=$usage: the test checks nothing"
