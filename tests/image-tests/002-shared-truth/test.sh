#!/bin/bash
# Like 001-truth-fixtures, over every image of the shared truth set
# ($SHARED/truth: NAME.json with what Linux 6.18 reported, images/NAME.tar.xz),
# including the ones too large to keep in tests/fixtures: "inspect",
# "chunks" and "block-groups" --format json over all device files must give
# the kernel's allocation/ numbers, global reserve, chunk and block-group
# lists. Skipped when $SHARED/truth is not there. An image that is also a
# shipped fixture (the same tar.xz and the same expected numbers) is read
# from the run's unpacked fixtures; with QUICK=1 (make check-quick) it is
# left to 001-truth-fixtures, which compares the very same files, and only
# the images too large to ship are compared here.

source "$TEST_TOP/common" || exit
source "$TEST_TOP/image-tests/compare-truth.sh" || exit

truth=${SHARED:-}/truth
if [ -z "${SHARED:-}" ] || [ ! -d "$truth/images" ]; then
	skip_no_shared "truth set" "$truth/images"
fi
check_prereq btrfs-space
check_prereq jq xz tar od timeout

total=0
bad=0
quick_left=0
for json in "$truth"/*.json; do
	[ -e "$json" ] || continue
	name=$(basename "$json" .json)
	archive=$truth/images/$name.tar.xz
	if [ ! -f "$archive" ]; then
		echo "note: $name has no image ($archive), not compared"
		continue
	fi
	total=$((total + 1))
	expected=$TEST_TMP/$name.expected.json
	if ! truth_expected "$json" "$expected"; then
		echo "MISMATCH $name truth expected=readable got=jq-error"
		bad=$((bad + 1))
		continue
	fi
	fixture=$TEST_TOP/fixtures/$name
	if cmp -s "$archive" "$fixture.tar.xz" && [ -f "$fixture.expected.json" ] &&
	   [ "$(jq -S . "$expected")" = "$(jq -S . "$fixture.expected.json")" ]; then
		if [ -n "${QUICK:-}" ]; then
			echo "same as the shipped fixture $name: compared by 001-truth-fixtures (QUICK=1)"
			quick_left=$((quick_left + 1))
			continue
		fi
		archive=$fixture.tar.xz
	fi
	compare_truth "$name" "$expected" "$archive" || bad=$((bad + 1))
done

[ $total -gt 0 ] || fail "no truth images found in $truth"
echo "$((total - quick_left - bad)) of $((total - quick_left)) truth images match${QUICK:+ ($quick_left left to 001-truth-fixtures)}"
[ $bad = 0 ] || fail "$bad of $total truth images do not match the kernel's numbers"
exit 0
