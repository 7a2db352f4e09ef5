#!/bin/bash
# The kernel's reclaim with dynamic_reclaim and periodic_reclaim on and
# less than a data chunk unused (formulas.md 21.14): the threshold in
# effect is 0, but a sweep waits for a data chunk freed and committed,
# so it sees the armed threshold.  On the full-data fixture (data full:
# nothing unused) the forecast must give arm_bytes = chunk - unused,
# armed_pct = 100 * want / target (calc_pct_ratio(), rounded down) from
# its own figures, sweep candidates only below armed_pct's threshold and
# the outlook naming that percent; main gave arm_bytes only without
# periodic_reclaim (threshold 0, "nothing: the dynamic threshold is 0").
# Dynamic alone keeps its on-free outlook.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq

img=$(fixture_images full-data "$TEST_TMP/fx") || exit
run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks --dynamic-reclaim data \
	--periodic-reclaim data "$img" > "$TEST_TMP/both.json" || exit
run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$img" > "$TEST_TMP/bg.json" || exit
rc=$(jq -c '.forecast.reclaim.data' "$TEST_TMP/both.json")
jq -c '{threshold_pct, unused, chunk_size, arm_bytes, armed_pct, dynamic_want, dynamic_target, urgent}' <<< "$rc"
[ "$(jq '.unused < .chunk_size and .threshold_pct == 0' <<< "$rc")" = true ] ||
	fail "the fixture no longer has less than a data chunk unused"
[ "$(jq '.arm_bytes == .chunk_size - .unused' <<< "$rc")" = true ] || fail "arm_bytes is not chunk - unused"
pct=$(jq '(.dynamic_want * 100 / .dynamic_target) | floor' <<< "$rc")
[ "$(jq '.armed_pct' <<< "$rc")" = "$pct" ] && [ "$pct" -gt 0 ] || fail "armed_pct is not $pct"
want=$(jq -c --argjson p "$pct" '[.block_groups[] | select(.type_name == "DATA" and .used > 0 and
	(.ro | not) and .used < (.length * $p / 100 | floor)) | .start] | sort' "$TEST_TMP/bg.json")
got=$(jq -c '[.sweep[].start] | sort' <<< "$rc")
echo "sweep candidates $got, below $pct %: $want"
[ "$got" = "$want" ] || fail "sweep candidates $got, not $want"
run_check_stdout "$BTRFS_SPACE" forecast --dynamic-reclaim data --periodic-reclaim data "$img" \
	> "$TEST_TMP/both.txt" || exit
grep 'In short' "$TEST_TMP/both.txt" | head -n 1 > "$TEST_TMP/outlook.txt"
cat "$TEST_TMP/outlook.txt"
grep -q "a sweep waits for a data chunk freed and committed and then sees $pct %" "$TEST_TMP/outlook.txt" ||
	fail "the outlook does not name the sweep's $pct %"
run_check_stdout "$BTRFS_SPACE" forecast --dynamic-reclaim data "$img" > "$TEST_TMP/dyn.txt" || exit
grep 'In short' "$TEST_TMP/dyn.txt" | head -n 1 | grep -q "after .* more freed and committed it is $pct %" ||
	fail "dynamic alone: the on-free outlook changed"
