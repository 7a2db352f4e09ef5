#!/bin/bash
# Like 001-truth-fixtures, over every image of the shared truth set
# ($SHARED/truth: NAME.json with what Linux 6.18 reported, images/NAME.tar.xz),
# including the ones too large to keep in tests/fixtures: "inspect",
# "chunks" and "block-groups" --format json over all device files must give
# the kernel's allocation/ numbers, global reserve, chunk and block-group
# lists. Skipped when $SHARED/truth is not there.

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
	compare_truth "$name" "$expected" "$archive" || bad=$((bad + 1))
done

[ $total -gt 0 ] || fail "no truth images found in $truth"
echo "$((total - bad)) of $total truth images match"
[ $bad = 0 ] || fail "$bad of $total truth images do not match the kernel's numbers"
exit 0
