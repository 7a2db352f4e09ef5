#!/bin/bash
# With --format json a refused filesystem still gets its one ERROR line on
# stderr, and stdout holds the error record as the command's object
# (Documentation/dev/json-format.md, "error"): errno, the message (the
# ERROR line's words), and what the check knew of where and what: device,
# physical offset, tree, chunk, the on-disk field, the value found and the
# one expected.  One-field mutants of the ns16k-1g fixture
# (tests/common-mutate.py, checksums fixed), a device cut short, a file that
# is no btrfs.  In text mode stdout stays empty.  Needs no mount: the
# kernel's verdicts on the same mutants are kernel-tests/031-open-verdicts.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar truncate cp python3

tar -xSJf "$TEST_TOP/fixtures/ns16k-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack ns16k-1g"
base=$TEST_TMP/ns16k-1g.img
mut=$TEST_TMP/mutant.img
mutate=$TEST_TOP/common-mutate.py
failures=0

# record FILE JQ-FILTER: inspect FILE in both formats; the JSON record must
# satisfy the filter, its message must be the ERROR line, text stdout empty
record()
{
	local file=$1 filter=$2 json err text rc
	json=$("$BTRFS_SPACE" --format json inspect "$file" 2> "$TEST_TMP/err")
	rc=$?
	err=$(cat "$TEST_TMP/err")
	echo "$(basename "$file"): exit $rc: $(jq -c .error <<< "$json" 2>&1)"
	if [ "$rc" -ne 1 ] || [ "$(grep -c '' <<< "$err")" -ne 1 ]; then
		echo "  FAIL: expected exit 1 and one ERROR line, got $rc: $err"
		failures=$((failures + 1))
		return
	fi
	if [ "ERROR: $(jq -r .error.message <<< "$json")" != "$err" ]; then
		echo "  FAIL: the record's message is not the ERROR line: $err"
		failures=$((failures + 1))
	fi
	if ! jq -e ".__header.command == \"inspect\" and (.error | $filter)" <<< "$json" > /dev/null; then
		echo "  FAIL: the record does not satisfy: $filter"
		failures=$((failures + 1))
	fi
	text=$("$BTRFS_SPACE" inspect "$file" 2> /dev/null)
	if [ -n "$text" ]; then
		echo "  FAIL: text mode printed on stdout: $text"
		failures=$((failures + 1))
	fi
}

mutant()
{
	cp --sparse=always "$base" "$mut" || fail "cannot copy $base"
	python3 "$mutate" "$mut" "$1" || fail "common-mutate.py $1 failed"
}

mutant stripesize=12288
record "$mut" ".errno == 117 and .device == \"$mut\" and .physical == 65536 and
	.field == \"stripesize\" and .found == 12288 and (has(\"expected\") | not)"

mutant super-flag=36
record "$mut" ".errno == 11 and .device == \"$mut\" and .field == \"flags\" and
	(.found / 68719476736 | floor) % 2 == 1"

mutant total-bytes=1000000000
record "$mut" ".errno == 22 and .field == \"total_bytes\" and .found == 1000000000"

mutant sys-stripe-uuid
record "$mut" ".errno == 2 and .tree == 3 and .tree_name == \"chunk tree\" and
	.logical > 0 and .field == \"dev_uuid\""

mutant dev-item-fsid
record "$mut" ".errno == 2 and .tree == 3 and .field == \"fsid\""

# a device 64 MiB shorter than its dev item's total_bytes (read_one_dev)
cp --sparse=always "$base" "$mut" && truncate -s $(( (1 << 30) - (64 << 20) )) "$mut" ||
	fail "cannot cut $mut"
record "$mut" ".errno == 22 and .device == \"$mut\" and .field == \"total_bytes\" and
	.found == 1073741824"

printf 'not a filesystem\n' > "$TEST_TMP/small.img"
record "$TEST_TMP/small.img" ".errno == 22 and .device == \"$TEST_TMP/small.img\" and
	(has(\"field\") | not)"

[ "$failures" -eq 0 ] || fail "$failures records wrong"
echo "error records: 7 refusals, each with its field and values"
