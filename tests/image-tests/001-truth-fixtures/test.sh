#!/bin/bash
# Every fixture image in tests/fixtures (small mkfs.btrfs images, 1 to 4
# devices) read with "inspect", "chunks" and "block-groups" --format json
# over all its device files must give exactly what Linux 6.18 reported for
# it (NAME.expected.json, made from shared/truth by make-expected.sh): the
# allocation/ numbers of every space type, the global reserve, and the chunk
# and block-group lists. Prints "match NAME" or "MISMATCH NAME field
# expected=X got=Y" per image.

source "$TEST_TOP/common" || exit
source "$TEST_TOP/image-tests/compare-truth.sh" || exit

check_prereq btrfs-space
check_prereq jq xz tar od timeout

fixtures=$TEST_TOP/fixtures
total=0
bad=0
for expected in "$fixtures"/*.expected.json; do
	[ -e "$expected" ] || continue
	name=$(basename "$expected" .expected.json)
	archive=$fixtures/$name.tar.xz
	total=$((total + 1))
	if [ ! -f "$archive" ]; then
		echo "MISMATCH $name fixture expected=$name.tar.xz got=absent"
		bad=$((bad + 1))
		continue
	fi
	compare_truth "$name" "$expected" "$archive" || bad=$((bad + 1))
done

[ $total -gt 0 ] || fail "no fixtures found in $fixtures"
echo "$((total - bad)) of $total fixture images match"
[ $bad = 0 ] || fail "$bad of $total fixture images do not match the kernel's numbers"
exit 0
