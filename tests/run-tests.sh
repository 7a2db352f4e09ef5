#!/bin/bash
# Run the btrfs-space tests; `make check` calls this after building.
#
# Usage: tests/run-tests.sh [CATEGORY...]
#   CATEGORY: unit cli image fuzz kernel (default: all, in that order)
#
# unit:   every tests/unit/test-NAME.c must have been built to tests/unit/test-NAME;
#         each program is one test.
# others: every tests/CATEGORY-tests/NNN-name/test.sh, sorted, run with bash in
#         its own directory.
# A test exits 0 (pass), 77 (skipped; the reason is its last line) or anything
# else (fail). Each test gets a fresh, empty TEST_TMP, removed afterwards.
#
# Environment:
#   TEST=glob       run only tests whose name or category/name matches
#   INSTRUMENT=cmd  wrapper for btrfs-space and the unit programs (e.g. valgrind)
#   TEST_TIMEOUT=s  seconds before a test is killed (default 900, 0 = none); a
#                   test whose work is long by design says its own in a file
#                   "timeout" beside its test.sh (it then detects hangs itself)
#   BTRFS_SPACE     the binary to test (default: ./btrfs-space in the top folder)
#   SHARED          the shared material (default: ../shared beside the top folder)
#   QUICK=1         make check-quick: tests that also have a full form run
#                   fewer but representative cases (each test says which)
#   JOBS=N          run up to N unit, cli and image tests at a time (default
#                   1); kernel and fuzz tests always run one at a time, alone
#
# Output: per test a start line "[K/N] category/name ...  (so far N passed,
# N failed, N skipped)" when it starts and, when it ends (with JOBS > 1 not
# always in the order they started), a result line "PASS|FAIL|SKIP  category/name
# (reason)  [Ns, cpu N.Ns]" (wall seconds, then the CPU seconds, user and
# system, of the test and everything it ran); a SKIP's reason says what to
# install or set. The last 20 lines of a failed test's output, a line
# "wall N s, cpu N.N s (user N.N, system N.N)" for the whole run, and a final
# line "N passed, N failed, N skipped". Full output:
# tests/CATEGORY-tests-results.txt.
# Exit status: 1 if any test failed, else 0.

set -u

TEST_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$TEST_TOP/.." && pwd)
BTRFS_SPACE=${BTRFS_SPACE:-$TOP/btrfs-space}
SHARED=${SHARED:-$(cd "$TOP/.." && pwd)/shared}
INSTRUMENT=${INSTRUMENT:-}
TEST=${TEST:-}
TEST_TIMEOUT=${TEST_TIMEOUT:-900}
JOBS=${JOBS:-1}
export TEST_TOP TOP BTRFS_SPACE SHARED INSTRUMENT
# UBSan only prints by default; make its first report fail the program, as
# ASan does. The caller's setting wins.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LC_ALL=C

ALL_CATEGORIES="unit cli image fuzz kernel"
categories=${*:-$ALL_CATEGORIES}
for cat in $categories; do
	case " $ALL_CATEGORIES " in
	*" $cat "*) ;;
	*) echo "run-tests.sh: unknown category '$cat' (known: $ALL_CATEGORIES)" >&2; exit 2 ;;
	esac
done

passed=0
failed=0
skipped=0

RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/btrfs-space-tests.XXXXXX") || exit 2
# tests/common fixture_images(): each fixture unpacked once per run
export FIXTURE_CACHE=$RUN_DIR/fixtures
# the running tests: background pid -> their job folder
declare -A running=()
on_exit()
{
	local pid jdir
	# interrupted: stop the running tests (timeout passes the signal on)
	for pid in "${!running[@]}"; do
		jdir=${running[$pid]%%$'\t'*}
		[ -s "$jdir/pid" ] && kill -TERM "$(cat "$jdir/pid")" 2>/dev/null
	done
	for pid in "${!running[@]}"; do
		wait "$pid" 2>/dev/null
		jdir=${running[$pid]%%$'\t'*}
		[ -s "$jdir/tmp" ] && cleanup_tmp "$(cat "$jdir/tmp")" > /dev/null
	done
	rm -rf "$RUN_DIR"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ -x "$BTRFS_SPACE" ] || echo "warning: $BTRFS_SPACE not built (run make)" >&2

# Backstop for tests that did not clean up: unmount whatever is mounted below
# DIR, detach loop devices whose backing file is below DIR, then remove DIR
# without crossing into another file system.
cleanup_tmp()
{
	local dir=$1 mnt dev back left=
	[ -d "$dir" ] || return 0
	if command -v findmnt >/dev/null 2>&1; then
		while read -r mnt; do
			case "$mnt" in
			"$dir"/*)
				left="$left mount:$mnt"
				umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
				;;
			esac
		done < <(findmnt -rn -o TARGET | sed 's/\\x20/ /g' | sort -r)
	fi
	if command -v losetup >/dev/null 2>&1; then
		while read -r dev back; do
			back=${back% (deleted)}
			case "$back" in
			"$dir"/*)
				left="$left loop:$dev"
				btrfs device scan --forget "$dev" >/dev/null 2>&1
				losetup -d "$dev" 2>/dev/null
				;;
			esac
		done < <(losetup -n -l -O NAME,BACK-FILE 2>/dev/null)
	fi
	rm -rf --one-file-system "$dir"
	[ -z "$left" ] || echo "$left"
}

# cpu_ms ARRAY FILE: ARRAY=(USER SYSTEM), the CPU milliseconds of this
# shell's waited-for children so far (the second line of the "times"
# builtin, "XmY.YYYs XmY.YYYs", written to FILE: run here, not in a
# subshell, which has its own)
cpu_ms()
{
	times > "$2"
	read -r -a "$1" < <(tail -n 1 "$2" | awk '{
		for (i = 1; i <= 2; i++) {
			split($i, p, "m"); sub("s", "", p[2])
			printf "%s%.0f", (i > 1 ? " " : ""), (p[1] * 60 + p[2]) * 1000
		}
		print ""
	}')
}

# ms_s MS: milliseconds as seconds with one decimal
ms_s()
{
	printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100))
}

# test_timeout DIR: the seconds the test in DIR may run: TEST_TIMEOUT, or
# the test's own "timeout" file where it has one (0: no limit at all)
test_timeout()
{
	local own

	if [ "$TEST_TIMEOUT" != 0 ] && [ -f "$1/timeout" ] &&
	   read -r own < "$1/timeout" && [[ $own =~ ^[1-9][0-9]*$ ]]; then
		echo "$own"
	else
		echo "$TEST_TIMEOUT"
	fi
}

# job_run JOB DIR CMD...: one test, in the background: its output in
# JOB/output, then JOB/status: exit status, wall seconds, CPU milliseconds
# and what it left behind, one per line
job_run()
{
	local jdir=$1 dir=$2 tmp rc start=$SECONDS cpu0 cpu1 leftovers
	local limit
	shift 2
	limit=$(test_timeout "$dir")
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/btrfs-space-test.XXXXXX") || exit 2
	echo "$tmp" > "$jdir/tmp"
	cpu_ms cpu0 "$jdir/times"
	(
		export TEST_TMP=$tmp
		cd "$dir" || exit 1
		if [ "$limit" != 0 ] && command -v timeout >/dev/null 2>&1; then
			exec timeout -k 10 "$limit" "$@"
		fi
		exec "$@"
	) < /dev/null > "$jdir/output" 2>&1 &
	echo $! > "$jdir/pid"
	wait $!
	rc=$?
	: > "$jdir/pid"
	cpu_ms cpu1 "$jdir/times"
	leftovers=$(cleanup_tmp "$tmp")
	: > "$jdir/tmp"
	printf '%s\n%s\n%s\n%s\n' "$rc" "$((SECONDS - start))" \
		"$((cpu1[0] + cpu1[1] - cpu0[0] - cpu0[1]))" "$leftovers" > "$jdir/status"
}

# job_start CATEGORY NAME DIR CMD...: start one test in the background
job_start()
{
	local cat=$1 name=$2 dir=$3 jdir
	shift 3
	jdir=$RUN_DIR/job.$count
	mkdir -p "$jdir" || exit 2
	# the runner's INT and TERM traps are not the job's: it ends when told
	( trap - INT TERM EXIT; job_run "$jdir" "$dir" "$@" ) &
	running[$!]=$jdir$'\t'$cat$'\t'$name
}

# job_end: wait for a running test to end, print its line, count it
job_end()
{
	local pid jdir cat name out rc took cpu leftovers reason result
	local log

	wait -n -p pid "${!running[@]}"
	IFS=$'\t' read -r jdir cat name <<< "${running[$pid]}"
	unset "running[$pid]"
	log=$TEST_TOP/$cat-tests-results.txt
	out=$jdir/output
	{ read -r rc; read -r took; read -r cpu; read -r leftovers; } < "$jdir/status" ||
		{ rc=2; took=0; cpu=0; leftovers=; echo "the runner lost this test's status" >> "$out"; }
	cpu=$(ms_s "$cpu")

	if [ "$rc" -gt 128 ]; then
		reason="exit status $rc, killed by signal $((rc - 128))"
	else
		# the last line, without the "SKIP: "/"FAIL: " of skip and fail
		reason=$(grep -v '^[[:space:]]*$' "$out" | tail -n 1 | sed -E 's/^(SKIP|FAIL): //')
	fi

	case $rc in
	0)	result=PASS; reason= ;;
	77)	result=SKIP; [ -n "$reason" ] || reason="skipped" ;;
	124)	result=FAIL; reason="timed out after ${took}s" ;;
	*)	result=FAIL; [ -n "$reason" ] || reason="exit status $rc" ;;
	esac
	if [ -n "$leftovers" ]; then
		echo "test left behind:$leftovers (cleaned up by the runner)" >> "$out"
		if [ "$result" = PASS ]; then
			result=FAIL
			reason="left behind:$leftovers"
		fi
	fi

	{
		echo "====== $result $cat/$name (exit status $rc, ${took}s, cpu ${cpu}s)"
		cat "$out"
		echo
	} >> "$log"

	if [ -n "$reason" ]; then
		printf '%s  %s/%s  (%s)  [%ss, cpu %ss]\n' "$result" "$cat" "$name" "$reason" "$took" "$cpu"
	else
		printf '%s  %s/%s  [%ss, cpu %ss]\n' "$result" "$cat" "$name" "$took" "$cpu"
	fi
	case $result in
	PASS)	passed=$((passed + 1)) ;;
	SKIP)	skipped=$((skipped + 1)) ;;
	FAIL)	failed=$((failed + 1))
		tail -n 20 "$out" | sed 's/^/    /'
		;;
	esac
	rm -rf "$jdir"
}

selected()
{
	[ -z "$TEST" ] && return 0
	# shellcheck disable=SC2053
	[[ $2 == $TEST || $1/$2 == $TEST ]]
}

# The tests to run, one "category<TAB>name<TAB>path" line each, in order:
# listed first so that each start line can say how many there are.
list_tests()
{
	local cat src dir name
	for cat in $categories; do
		if [ "$cat" = unit ]; then
			for src in "$TEST_TOP"/unit/test-*.c; do
				[ -e "$src" ] || continue
				name=$(basename "${src%.c}")
				selected unit "$name" && printf 'unit\t%s\t%s\n' "$name" "${src%.c}"
			done
			continue
		fi
		for dir in "$TEST_TOP/$cat-tests"/*/; do
			dir=${dir%/}
			[ -f "$dir/test.sh" ] || continue
			name=$(basename "$dir")
			selected "$cat" "$name" && printf '%s\t%s\t%s\n' "$cat" "$name" "$dir"
		done
	done
}

# unit_built NAME PROG: true if PROG is there; else its FAIL line, counted
unit_built()
{
	[ -x "$2" ] && return 0
	printf 'FAIL  unit/%s  (not built: run make)\n' "$1"
	echo "====== FAIL unit/$1 (not built)" >> "$TEST_TOP/unit-tests-results.txt"
	failed=$((failed + 1))
	return 1
}

for cat in $categories; do
	: > "$TEST_TOP/$cat-tests-results.txt"
done
run_start=$SECONDS
cpu_ms cpu_start "$RUN_DIR/times"
mapfile -t tests < <(list_tests)
total=${#tests[@]}
count=0
case $JOBS in
''|*[!0-9]*|0) echo "run-tests.sh: JOBS must be a number of at least 1, not '$JOBS'" >&2; exit 2 ;;
esac
for line in "${tests[@]}"; do
	IFS=$'\t' read -r cat name path <<< "$line"
	count=$((count + 1))
	# kernel and fuzz tests mount, trace and time: alone
	alone=false
	case $cat in kernel|fuzz) alone=true ;; esac
	while [ ${#running[@]} -gt 0 ] &&
	      { $alone || [ ${#running[@]} -ge "$JOBS" ]; }; do
		job_end
	done
	# the start line, with the running count of what ended so far
	printf '[%d/%d] %s/%s ...  (so far %d passed, %d failed, %d skipped)\n' \
		"$count" "$total" "$cat" "$name" "$passed" "$failed" "$skipped"
	if [ "$cat" = unit ]; then
		unit_built "$name" "$path" || continue
		# word splitting of INSTRUMENT is intended
		# shellcheck disable=SC2086
		job_start unit "$name" "$TEST_TOP/unit" $INSTRUMENT "$path"
	else
		job_start "$cat" "$name" "$path" bash ./test.sh
	fi
	! $alone || job_end
done
while [ ${#running[@]} -gt 0 ]; do
	job_end
done

cpu_ms cpu_end "$RUN_DIR/times"
printf 'wall %d s, cpu %s s (user %s, system %s)\n' "$((SECONDS - run_start))" \
	"$(ms_s $((cpu_end[0] + cpu_end[1] - cpu_start[0] - cpu_start[1])))" \
	"$(ms_s $((cpu_end[0] - cpu_start[0])))" "$(ms_s $((cpu_end[1] - cpu_start[1])))"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
