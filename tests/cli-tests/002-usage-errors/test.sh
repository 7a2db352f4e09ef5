#!/bin/bash
# Exit codes and error messages of bad invocations:
# - usage errors exit 2 with a message on stderr: unknown command, unknown
#   global or command option, missing device argument, missing or invalid
#   --format value
# - an unreadable filesystem exits 1 with exactly one stderr line starting
#   "ERROR: ": nonexistent file, 4 KiB file (too short for a superblock),
#   zero-filled 1 MiB file (the message must mention the superblock); a
#   csum-delete --file path with a newline in it (still one line)

source "$TEST_TOP/common" || exit

check_prereq btrfs-space

out="$TEST_TMP/out"
log="$TEST_TMP/log"
err="$TEST_TMP/err"
commands="inspect chunks block-groups"

# run_code CODE WHY ARGS...: btrfs-space ARGS must exit with CODE (and not
# crash); its stderr, without the log lines of tests/common and valgrind,
# is left in $err
run_code()
{
	local want=$1 why=$2 rc
	shift 2

	# in a subshell, so that a failure can still show stderr here
	( run_mustfail_code "$want" "$why" "$BTRFS_SPACE" "$@" ) > "$out" 2> "$log"
	rc=$?
	grep -Ev '^(####### |==[0-9]+==)' "$log" > "$err"
	echo "btrfs-space $*:"
	sed 's/^/  stderr: /' "$err"
	[ "$rc" = 0 ] || fail "btrfs-space $*: expected exit status $want ($why), see stderr above"
}

# usage_error ARGS...: exit 2, something on stderr
usage_error()
{
	run_code 2 "usage error" "$@"
	[ -s "$err" ] || fail "btrfs-space $*: usage error without a message on stderr"
}

# fs_error ARGS...: exit 1, exactly one stderr line, starting with "ERROR: "
fs_error()
{
	local lines

	run_code 1 "unreadable filesystem" "$@"
	lines=$(wc -l < "$err")
	[ "$lines" = 1 ] || fail "btrfs-space $*: $lines lines on stderr, expected 1"
	grep -q '^ERROR: ' "$err" || fail "btrfs-space $*: stderr does not start with 'ERROR: '"
}

img="$TEST_TMP/ok.img"
zero="$TEST_TMP/zero.img"
short="$TEST_TMP/short.img"
missing="$TEST_TMP/does-not-exist.img"
head -c 1M /dev/zero > "$zero" || fail "cannot create $zero"
head -c 4096 /dev/zero > "$short" || fail "cannot create $short"
# a valid image when mkfs.btrfs is there, so that option errors are not
# masked by an unreadable device; the zero file otherwise
if command -v mkfs.btrfs > /dev/null &&
   truncate -s 512M "$img" && mkfs.btrfs -q -f "$img" > /dev/null 2>&1; then
	:
else
	img=$zero
fi

# unknown command, with and without a device
usage_error no-such-command
usage_error no-such-command "$img"
# no command at all
usage_error
usage_error --format json
# unknown global option
usage_error --no-such-option inspect "$img"
# --format without value, with an invalid value
usage_error --format
usage_error --format xml inspect "$img"
for cmd in $commands; do
	# unknown command option
	usage_error "$cmd" --no-such-option "$img"
	# missing device argument
	usage_error "$cmd"
	usage_error --format json "$cmd"
done

for cmd in $commands; do
	for fmt in text json; do
		fs_error --format "$fmt" "$cmd" "$missing"
		fs_error --format "$fmt" "$cmd" "$short"
		fs_error --format "$fmt" "$cmd" "$zero"
		grep -Eqi 'super[ -]?block' "$err" ||
			fail "btrfs-space --format $fmt $cmd <zero-filled file>: the error does not mention the superblock"
	done
done

# a path that quotes a newline and an escape in its message: still one line
if [ "$img" != "$zero" ]; then
	fs_error csum-delete --file "$(printf '/no\nsuch\033[31m')" "$img"
	grep -q "no?such?\[31m" "$err" ||
		fail "csum-delete --file with a newline: control characters not shown as '?'"
fi

exit 0
