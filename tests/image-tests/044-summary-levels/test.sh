#!/bin/bash
# The summary at the top of "inspect" (formulas.md section 19) on fixtures
# from nearly full to roomy: every level and the figures behind it must be
# what the documented rules give from the kernel's numbers in
# NAME.expected.json (and the forecast's headroom, held to the kernel by
# kernel test 050), worked out by expect-summary.py without the tool's
# code. The nearly full full-data must be critical or tight for data, the
# roomy size-1t ok throughout, a read-only device critical; the text must
# begin with full-data's finding.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar python3

fixtures=$TEST_TOP/fixtures
# nearly full, fresh, roomy, mixed, striped, and one tight on metadata
names="full-data ns16k-1g size-1t mixed-256m raid10-4dev devadd-convert-raid1"
bad=0
for name in $names; do
	expected=$fixtures/$name.expected.json
	dir=$TEST_TMP/$name
	mapfile -t devs < <(fixture_images "$name" "$dir")
	[ ${#devs[@]} -gt 0 ] || fail "fixture $name: no device files"
	run_check_stdout "$BTRFS_SPACE" inspect --format json "${devs[@]}" > "$dir/inspect.json" || exit
	python3 ./expect-summary.py "$expected" "$dir/inspect.json" > "$dir/levels" || bad=$((bad + 1))
	cat "$dir/levels"
done

level() { # level NAME JQ-PATH
	jq -r "$2" "$TEST_TMP/$1/inspect.json"
}
data=$(level full-data .summary.space.data.level)
case $data in
critical|tight) echo "full-data: data $data" ;;
*) fail "full-data (nearly full): data level is $data, not critical or tight" ;;
esac
overall=$(level size-1t .summary.level)
[ "$overall" = ok ] || fail "size-1t (roomy): overall level is $overall, not ok"
echo "size-1t: overall ok"

# text: the first screen names the worst finding, then one line per type
text=$(run_check_stdout "$BTRFS_SPACE" inspect "$TEST_TMP/full-data/full-data.img") || exit
head -n 1 <<< "$text" | grep -q '^critical: data: 0.00B left before ENOSPC' ||
	fail "inspect text of full-data does not start with the data finding: $(head -n 1 <<< "$text")"
grep -qE '^    data +0.00B +0.00B +0.00B +- +critical$' <<< "$text" ||
	fail "inspect text of full-data has no data line under 'Before ENOSPC'"
grep -q '^No balance helps data: every data block group is full (btrfs balance start' <<< "$text" ||
	fail "full-data: the balance what-if of its full data block groups is not shown as not helping"

# a read-only device can take no chunk and no write: every type critical
ro=$(run_check_stdout "$BTRFS_SPACE" inspect --format json --readonly-device 1 \
	"$TEST_TMP/ns16k-1g/ns16k-1g.img") || exit
got=$(jq -r '[.summary.space[] | .level + ":" + .rule] | unique | join(",")' <<< "$ro")
[ "$got" = "critical:no writeable device: nothing can be allocated or written" ] ||
	fail "ns16k-1g with a read-only device: $got"
[ "$(jq .summary.unallocated.devices[0].counted <<< "$ro")" = false ] ||
	fail "ns16k-1g with a read-only device: the device is counted as writeable"
echo "ns16k-1g read-only: every type critical"

[ $bad = 0 ] || fail "$bad fixtures: the summary differs from the documented rules"
echo "summary levels: ok"
