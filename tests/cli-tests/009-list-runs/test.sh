#!/bin/bash
# chunks and block-groups print runs by default, forecast's reclaim lists
# too (formulas.md section 21.11); --list-chunks and --list-block-groups
# list every item, as before.  On fixtures and on a generated filesystem of
# 1,000 block groups 30 % used (bench/gen-bgs.py, three sparse devices):
# - JSON: the runs expanded (first, count, period, steps) are the listed
#   items one for one, in order, and the last item of each run is its
#   "last"; the counts sum to the number of items; the per-type totals are
#   the list's sums (expand.py);
# - the reclaim what-if (--periodic-reclaim data --reclaim-threshold
#   data=50): every list of runs expands to the list --list-chunks prints;
# - text: a run of one is one line (the row count of a fixture's text is
#   at most the list's), and the text of 1,000 block groups has a few rows.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq python3 tar

here=$TEST_TOP/cli-tests/009-list-runs

# compare WHAT OPTION NAME DEV...: runs against the expanded list
compare()
{
	local what=$1 opt=$2 name=$3
	shift 3
	run_check_stdout "$BTRFS_SPACE" --format json "$what" "$@" > "$TEST_TMP/runs.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json "$what" "$opt" "$@" > "$TEST_TMP/each.json" || exit
	printf '%s ' "$name"
	python3 "$here/expand.py" "$what" "$TEST_TMP/runs.json" "$TEST_TMP/each.json" ||
		fail "$name: $what runs do not expand to $opt's list"
}

# rows NAME WHAT OPTION DEV...: the text has no more lines as runs
rows()
{
	local name=$1 what=$2 opt=$3 runs each
	shift 3
	runs=$(run_check_stdout "$BTRFS_SPACE" "$what" "$@" | wc -l) || exit
	each=$(run_check_stdout "$BTRFS_SPACE" "$what" "$opt" "$@" | wc -l) || exit
	# the runs add a table of totals: its header, rule, rows and blank line
	[ "$runs" -le $((each + 10)) ] || fail "$name: $what prints $runs lines, $each listed"
	echo "$name: $what text $runs lines, $opt $each"
}

for fx in many-bgs-1t raid10-4dev raid5-3dev devadd-convert-raid1 mixed-256m size-1t; do
	imgs=$(fixture_images "$fx" "$TEST_TMP/$fx") || exit
	# shellcheck disable=SC2086
	set -- $imgs
	compare chunks --list-chunks "$fx" "$@"
	compare block-groups --list-block-groups "$fx" "$@"
	rows "$fx" chunks --list-chunks "$@"
	rows "$fx" block-groups --list-block-groups "$@"
done

imgs=$(fixture_images devadd-convert-raid1 "$TEST_TMP/devadd") || exit
# shellcheck disable=SC2086
set -- $imgs
run_check_stdout "$BTRFS_SPACE" --format json forecast --reclaim-threshold data=90 \
	--periodic-reclaim data "$@" > "$TEST_TMP/runs.json" || exit
run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks --reclaim-threshold data=90 \
	--periodic-reclaim data "$@" > "$TEST_TMP/each.json" || exit
printf 'devadd-convert-raid1 reclaim '
python3 "$here/expand.py" reclaim "$TEST_TMP/runs.json" "$TEST_TMP/each.json" ||
	fail "devadd-convert-raid1: the reclaim runs do not expand to --list-chunks' lists"

# 1,000 block groups 30 % used on three sparse 9 TiB devices (81 KB on disk)
python3 "$TEST_TOP/../bench/gen-bgs.py" --bgs 1000 --fill 30 --devices 3 --dev-size 9T \
	"$TEST_TMP/part" > /dev/null || fail "gen-bgs.py failed"
set -- "$TEST_TMP"/part-{1,2,3}.img
compare chunks --list-chunks "1,000 block groups" "$@"
compare block-groups --list-block-groups "1,000 block groups" "$@"
for what in chunks block-groups; do
	n=$(run_check_stdout "$BTRFS_SPACE" "$what" "$@" | wc -l) || exit
	[ "$n" -le 20 ] || fail "1,000 block groups: $what prints $n lines as runs"
	echo "1,000 block groups: $what text $n lines"
done
run_check_stdout "$BTRFS_SPACE" --format json forecast --reclaim-threshold data=50 \
	--periodic-reclaim data "$@" > "$TEST_TMP/runs.json" || exit
run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks --reclaim-threshold data=50 \
	--periodic-reclaim data "$@" > "$TEST_TMP/each.json" || exit
printf '1,000 block groups reclaim '
python3 "$here/expand.py" reclaim "$TEST_TMP/runs.json" "$TEST_TMP/each.json" ||
	fail "1,000 block groups: the reclaim runs do not expand to --list-chunks' lists"
n=$(run_check_stdout "$BTRFS_SPACE" forecast --reclaim-threshold data=50 \
	--periodic-reclaim data "$@" | wc -c) || exit
[ "$n" -le 20000 ] || fail "1,000 block groups: the reclaim what-if prints $n bytes"
echo "1,000 block groups: the reclaim what-if prints $n bytes"
exit 0
