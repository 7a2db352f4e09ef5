#!/bin/bash
# Every example of README.md runs as written on the shipped fixtures and
# prints the lines the README shows. extract-examples.py takes each
# "$ ./btrfs-space ..." line of a ``` block and the lines under it; the
# images it names must be fixtures of tests/fixtures (NAME.img or
# NAME.devN.img of NAME.tar.xz), unpacked into one folder where the command
# runs with ./btrfs-space the binary under test. It must exit 0 and print
# every line shown, in that order ("..." marks what the README leaves out).
# Both READMEs must give the same tar command to unpack the fixtures.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq python3 tar xz jq

readme=$TOP/README.md
work=$TEST_TMP/work
mkdir -p "$work"
python3 ./extract-examples.py "$readme" "$TEST_TMP/examples" > "$TEST_TMP/list" ||
	fail "cannot read the examples of $readme"
[ "$(wc -l < "$TEST_TMP/list")" -ge 8 ] || fail "only $(wc -l < "$TEST_TMP/list") examples found in $readme"

# the images the examples name: each must be a shipped fixture
for img in $(grep -oE '[A-Za-z0-9._-]+\.img' "$TEST_TMP/list" | sort -u); do
	name=${img%.img}
	name=${name%.dev[0-9]}
	[ -f "$TEST_TOP/fixtures/$name.tar.xz" ] ||
		fail "README example uses $img, which is not a fixture in tests/fixtures"
	[ -e "$work/$img" ] || fixture_images "$name" "$work" > /dev/null
	[ -e "$work/$img" ] || fail "fixture $name has no $img"
done
ln -s "$BTRFS_SPACE" "$work/btrfs-space"

bad=0
while IFS=$'\t' read -r n line cmd; do
	out=$TEST_TMP/examples/$n.out
	(cd "$work" && bash -c "$cmd") > "$out" 2> "$out.err"
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "README.md:$line: '$cmd' exits $rc: $(head -n 2 "$out.err")"
		bad=$((bad + 1))
		continue
	fi
	# every line shown, in order: a subsequence of the output
	missing=$(python3 - "$TEST_TMP/examples/$n.expect" "$out" << 'PY'
import sys
want = open(sys.argv[1]).read().split("\n")[:-1]
got = [l.rstrip() for l in open(sys.argv[2]).read().split("\n")]
i = 0
for w in want:
    while i < len(got) and got[i] != w:
        i += 1
    if i == len(got):
        print(w)
        break
    i += 1
PY
)
	if [ -n "$missing" ]; then
		echo "README.md:$line: '$cmd' does not print (in this order): '$missing'"
		bad=$((bad + 1))
	else
		echo "ok README.md:$line: $cmd ($(wc -l < "$TEST_TMP/examples/$n.expect") lines shown)"
	fi
done < "$TEST_TMP/list"
[ "$bad" = 0 ] || fail "$bad README example(s) differ from the tool (listed above)"

# one way to unpack, in both READMEs
tars=$(grep -ohE 'tar -x[A-Za-z]*f' "$readme" "$TEST_TOP/fixtures/README.md" | sort -u)
[ "$(wc -l <<< "$tars")" = 1 ] || fail "the READMEs unpack the fixtures differently: ${tars//$'\n'/, }"
echo "all $(wc -l < "$TEST_TMP/list") README examples print what the README shows"
