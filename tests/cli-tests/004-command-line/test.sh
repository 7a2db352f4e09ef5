#!/bin/bash
# The command line a btrfs-progs user expects:
# - options before or after the devices (GNU permutation), "--" ends them;
# - --version prints the VERSION file's version; "help" and "help COMMAND"
#   print the texts --help prints; a command may be an unambiguous prefix,
#   an ambiguous one is a usage error naming the candidates;
# - -v says on stderr what the run read (devices, trees, reads, bytes as
#   the JSON's io counts them, time);
# - -q keeps warnings off stderr (a mutant that the kernel mounts with a
#   warning: num_devices 2 on a one-device filesystem);
# - a bad option value names the option, the value and what is allowed;
# - inputs that are not images say what they are: a directory, a character
#   device, a FIFO (without waiting for a writer), an empty file, a tar
#   archive; a --readonly-device devid the filesystem lacks is an error.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq tar xz python3 timeout mkfifo jq

tar -xSJf "$TEST_TOP/fixtures/ns16k-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack fixture"
img=$TEST_TMP/ns16k-1g.img

# same_output WHY ARGS_A -- ARGS_B: both runs print the same stdout
same_output()
{
	local why=$1 a=() b=()
	shift
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	diff <("$BTRFS_SPACE" "${a[@]}" 2>&1) <("$BTRFS_SPACE" "${b[@]}" 2>&1) > /dev/null ||
		fail "$why: 'btrfs-space ${a[*]}' and 'btrfs-space ${b[*]}' differ"
	echo "ok: $why"
}

# stderr_is CODE PATTERN ARGS: exit CODE, stderr matching PATTERN
stderr_is()
{
	local want=$1 pattern=$2 err rc
	shift 2
	err=$(timeout 20 "$BTRFS_SPACE" "$@" 2>&1 > /dev/null)
	rc=$?
	echo "btrfs-space $*: exit $rc: $err"
	[ "$rc" -eq "$want" ] || fail "expected exit $want"
	grep -qE -- "$pattern" <<< "$err" || fail "stderr does not match '$pattern'"
}

same_output "unit option after the device" overcommit -g "$img" -- overcommit "$img" -g
same_output "--format after the device" inspect --format json "$img" -- inspect "$img" --format json
same_output "global option before the command" --format json chunks "$img" -- chunks --format json "$img"
stderr_is 1 "cannot open -q" inspect -- "$img" -q

version=$(tr -d '[:space:]' < "$TOP/VERSION")
[ "$("$BTRFS_SPACE" --version)" = "btrfs-space $version" ] ||
	fail "--version does not print 'btrfs-space $version'"
echo "ok: --version"
same_output "help" help -- --help
same_output "help COMMAND" help csum-delete -- csum-delete --help
same_output "command prefix" insp "$img" -- inspect "$img"
same_output "help with a prefix" help mount-e -- mount-estimate --help
stderr_is 2 "ambiguous command 'm': mount-estimate, map" m "$img"
stderr_is 2 "unknown command 'frobnicate'" frobnicate "$img"
# a device or image given first: the message says where it goes
stderr_is 2 "unknown command '.*': a device or image comes after a command, as in 'btrfs-space inspect " "$img"

# -q: the warning goes, the report stays
warned=$TEST_TMP/warned.img
cp --sparse=always "$img" "$warned"
python3 "$TEST_TOP/common-mutate.py" "$warned" num-devices=2 || fail "common-mutate.py failed"
stderr_is 0 "^WARNING: super block num_devices 2 mismatch" inspect "$warned"
[ -z "$("$BTRFS_SPACE" -q inspect "$warned" 2>&1 > /dev/null)" ] || fail "-q left something on stderr"
[ -z "$("$BTRFS_SPACE" inspect "$warned" --quiet 2>&1 > /dev/null)" ] || fail "--quiet left something on stderr"
"$BTRFS_SPACE" -q inspect "$warned" | grep -q '^Space info' || fail "-q dropped the report"
echo "ok: -q"

# -v: what the run read, on stderr, the counts the JSON reports
"$BTRFS_SPACE" -v --format json inspect "$img" > "$TEST_TMP/v.json" 2> "$TEST_TMP/v.err" ||
	fail "-v inspect failed"
reads=$(jq -r '"\(.io.blocks_read) reads, \(.io.bytes_read) bytes"' "$TEST_TMP/v.json")
for want in "^read: 1 of 1 devices$" "^read: +devid 1 $img " \
	"^read: trees chunk, root, extent, csum, free-space, dev; 3 chunks, 3 block groups$" \
	"^read: $reads \(.*\), in [0-9.]+ s$" "^read: +superblock +1 reads"; do
	grep -qE -- "$want" "$TEST_TMP/v.err" || fail "-v: no line '$want' in: $(cat "$TEST_TMP/v.err")"
done
[ -z "$("$BTRFS_SPACE" -v -q inspect "$img" 2>&1 > /dev/null)" ] || fail "-v -q: -q must win"
echo "ok: -v"

stderr_is 2 "^ERROR: --clamp: invalid value '9', expect 1 to 8" preempt --clamp 9 "$img"
for v in 6.19 7.0 99.0 4.19; do
	stderr_is 2 "^ERROR: --kernel: invalid value '$v', expect a kernel version from 5.12 to 6.18.y \\(the releases modelled\\)" inspect --kernel $v "$img"
	stderr_is 2 "^ERROR: --kernel: invalid value '$v', expect a kernel version from 5.12 to 6.18.y" forecast --kernel $v "$img"
	stderr_is 2 "^ERROR: --kernel: invalid value '$v', expect a kernel version from 5.12 to 6.18.y" csum-delete --kernel $v "$img"
	stderr_is 2 "^ERROR: --kernel: invalid value '$v', expect a kernel version from 5.12 to 6.18.y" replay --kernel $v /dev/null
done
# a path with a terminal escape, a newline and bytes that are not UTF-8:
# never printed raw, and the JSON stays valid (RFC 8259)
evil=$TEST_TMP/$(printf 'a\033[31mred\nline\x80\xff.img')
cp --sparse=always "$img" "$evil" || fail "cannot copy to an odd name"
"$BTRFS_SPACE" inspect "$evil" > "$TEST_TMP/evil.txt" 2>&1
! grep -aq "$(printf '\033')" "$TEST_TMP/evil.txt" || fail "a raw escape byte in the text report"
grep -aqF 'a\x1b[31mred\x0aline\x80\xff.img' "$TEST_TMP/evil.txt" || fail "the path is not shown escaped"
"$BTRFS_SPACE" --format json inspect "$evil" | jq -e '.devices[0].path | endswith("a\u001b[31mred\nline\\x80\\xff.img")' > /dev/null ||
	fail "JSON invalid or the path not escaped"
err=$("$BTRFS_SPACE" inspect "$evil" "$evil" 2>&1 > /dev/null)
[ "$(grep -c '' <<< "$err")" -eq 1 ] && ! grep -aq "$(printf '\033')" <<< "$err" ||
	fail "the error line is split or holds a raw escape: $err"
rm -f "$evil"
echo "ok: odd paths escaped in text, JSON and errors"

# a report that cannot be written whole is a failure, said on stderr
for args in "inspect $img" "--format json chunks $img" "--help"; do
	err=$("$BTRFS_SPACE" $args 2>&1 > /dev/full)
	rc=$?
	echo "btrfs-space $args > /dev/full: exit $rc: $err"
	[ "$rc" -eq 1 ] && grep -q "^ERROR: cannot write the report to standard output: .*, the report is cut$" <<< "$err" ||
		fail "> /dev/full: expected exit 1 and the ERROR line"
done
# the last release modelled is accepted, every stable update of it too
"$BTRFS_SPACE" global-rsv --kernel 6.18.200 "$img" > /dev/null || fail "--kernel 6.18.200 refused"
stderr_is 2 "^ERROR: --profile: invalid value 'floppy', expect nvme, ssd or hdd" mount-estimate --profile floppy "$img"
stderr_is 2 "^ERROR: --top: invalid value '0', expect 1 to 100000" csum-delete --top 0 "$img"
stderr_is 2 "^ERROR: --format: invalid value 'xml', expect text, json, openmetrics or nagios" inspect --format xml "$img"
stderr_is 1 "^ERROR: --readonly-device 7: the filesystem has no devid 7" inspect --readonly-device 7 "$img"

stderr_is 1 "^ERROR: $TEST_TMP: a directory, not a mounted btrfs filesystem" inspect "$TEST_TMP"
stderr_is 1 "^ERROR: /dev/null: a character device" inspect /dev/null
mkfifo "$TEST_TMP/fifo"
stderr_is 1 "^ERROR: $TEST_TMP/fifo: a FIFO" inspect "$TEST_TMP/fifo"
: > "$TEST_TMP/empty.img"
stderr_is 1 "^ERROR: $TEST_TMP/empty.img: an empty file$" inspect "$TEST_TMP/empty.img"
stderr_is 1 "^ERROR: .*ns16k-1g.tar.xz: a tar archive, not a filesystem image: unpack it first" \
	inspect "$TEST_TOP/fixtures/ns16k-1g.tar.xz"
echo "command line: ok"
