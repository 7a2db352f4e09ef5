#!/bin/bash
# btrfs-space never writes to the device: on a small mkfs.btrfs image made
# read-only (chmod 0444, and chattr +i where the filesystem and privileges
# allow it), inspect, chunks and block-groups (text and json) exit 0, the
# image's content does not change (image_digest: the sha256 of its data
# extents, holes skipped), and under strace (when available) no open
# of the image uses O_WRONLY or O_RDWR.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space mkfs.btrfs python3 truncate

img="$TEST_TMP/ro.img"
immutable=false

# our own EXIT trap must call cleanup_all of tests/common
cleanup_immutable()
{
	local rc=$?

	if $immutable; then
		chattr -i "$img" || echo "WARNING: chattr -i $img failed"
	fi
	cleanup_all
	exit "$rc"
}
trap cleanup_immutable EXIT

run_check truncate -s 512M "$img"
run_check mkfs.btrfs -q -f -n 4096 "$img"
run_check chmod 0444 "$img"
if chattr +i "$img" 2> "$TEST_TMP/chattr.err"; then
	immutable=true
	echo "image is immutable (chattr +i)"
else
	echo "chattr +i not possible, immutable part skipped: $(cat "$TEST_TMP/chattr.err")"
fi

before=$(image_digest "$img")

# strace, with every open-like syscall this architecture has
use_strace=false
trace_set=
if command -v strace > /dev/null; then
	for trace_set in openat,open,openat2,creat openat; do
		if strace -f -o /dev/null -e trace="$trace_set" true > /dev/null 2>&1; then
			use_strace=true
			break
		fi
	done
fi
$use_strace || echo "strace not available or not permitted, open-flag part skipped"

n=0
for cmd in inspect chunks block-groups; do
	for fmt in text json; do
		n=$((n + 1))
		out="$TEST_TMP/out.$n"
		trace="$TEST_TMP/strace.$n"
		if $use_strace; then
			# LeakSanitizer cannot run under ptrace: only this run goes without it
			ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
				run_check_stdout strace -f -qq -o "$trace" -e trace="$trace_set" \
				"$BTRFS_SPACE" --format "$fmt" "$cmd" "$img" > "$out"
		else
			run_check_stdout "$BTRFS_SPACE" --format "$fmt" "$cmd" "$img" > "$out"
		fi
		echo "btrfs-space --format $fmt $cmd: exit 0"
		[ -s "$out" ] || fail "btrfs-space --format $fmt $cmd printed nothing"
		if [ "$fmt" = json ] && command -v jq > /dev/null; then
			jq -e . "$out" > /dev/null || fail "btrfs-space --format json $cmd: invalid JSON"
		fi
		if $use_strace; then
			grep -F "$(basename "$img")" "$trace" > "$TEST_TMP/opens.$n"
			[ -s "$TEST_TMP/opens.$n" ] ||
				fail "strace shows no open of the image ($cmd); trace: $(head -c 2000 "$trace")"
			if grep -E 'O_WRONLY|O_RDWR|O_CREAT|O_TRUNC' "$TEST_TMP/opens.$n"; then
				fail "btrfs-space --format $fmt $cmd opened the image for writing"
			fi
			# writable opens of anything else are worth a note
			grep -E 'O_WRONLY|O_RDWR' "$trace" | grep -v ENOENT |
				sed 's/^/  note: writable open: /'
		fi
		after=$(image_digest "$img")
		[ "$after" = "$before" ] ||
			fail "image changed after btrfs-space --format $fmt $cmd"
	done
done

exit 0
