#!/bin/bash
# libFuzzer smoke run (tests/fuzz, Documentation/dev/fuzzing.md):
#  1. build the targets (make fuzz-build);
#  2. every seed the targets derive from the templates must read fine (a
#     template the reader refuses would leave the fuzzers on the surface),
#     and the committed seeds (tests/fuzz/corpus) must run clean;
#  3. every input in tests/fuzz/regressions/TARGET must run clean in its
#     target, and, exported as an image, be read by btrfs-space with exit 0
#     or 1 and exactly one "ERROR: " line (the parse-* targets have no image
#     to export: only the replay);
#  4. every target fuzzes for FUZZ_SMOKE_SECONDS (20) seconds, the fast
#     parse-* targets FUZZ_SMOKE_PARSE_SECONDS (10), two at a time
#     (FUZZ_SMOKE_JOBS): no crash, leak, timeout or out-of-memory.
# Skips when clang cannot link a libFuzzer program or the tree is not
# configured (no Makefile).
source "$TEST_TOP/common" || exit

check_prereq btrfs-space
check_prereq clang make timeout
[ -f "$TOP/Makefile" ] || skip "tree not configured (no $TOP/Makefile): run ./configure"

SECONDS_EACH=${FUZZ_SMOKE_SECONDS:-20}
PARSE_SECONDS=${FUZZ_SMOKE_PARSE_SECONDS:-10}
JOBS=${FUZZ_SMOKE_JOBS:-2}
BUILD=$TOP/tests/fuzz/build

printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ return 0; }\n' \
	> "$TEST_TMP/probe.c"
if ! clang -fsanitize=fuzzer,address,undefined "$TEST_TMP/probe.c" -o "$TEST_TMP/probe" \
	> "$TEST_TMP/probe.log" 2>&1; then
	skip "clang cannot link -fsanitize=fuzzer (apt-get install libclang-rt-14-dev): $(tail -1 "$TEST_TMP/probe.log")"
fi

# --- 1. build -------------------------------------------------------------------
echo "building the fuzz targets"
make -C "$TOP" -j2 fuzz-build > "$TEST_TMP/build.log" 2>&1 ||
	fail "make fuzz-build failed: $(grep -m1 -E 'error|Error' "$TEST_TMP/build.log")"
mapfile -t targets < <(cd "$BUILD" && ls fuzz-* | sed 's/^fuzz-//' | LC_ALL=C sort)
[ ${#targets[@]} -ge 9 ] || fail "only ${#targets[@]} fuzz targets built: ${targets[*]}"

# --- 2. seeds read fine, committed seeds run clean ----------------------------
for t in "${targets[@]}"; do
	seeds=$TEST_TMP/seeds/$t
	mkdir -p "$seeds"
	FUZZ_DUMP_SEEDS=$seeds "$BUILD/fuzz-$t" > /dev/null 2>&1 ||
		fail "$t: cannot derive its seeds"
	if [ -n "$(ls "$seeds")" ]; then
		FUZZ_VERBOSE=1 "$BUILD/fuzz-$t" "$seeds"/* > "$TEST_TMP/seeds.$t.log" 2>&1 ||
			fail "$t: a seed crashed: $(grep -m1 -E 'ERROR|SUMMARY' "$TEST_TMP/seeds.$t.log")"
		bad=$(grep '^fuzz: error' "$TEST_TMP/seeds.$t.log" | head -1)
		[ -z "$bad" ] || fail "$t: a seed derived from the templates does not read: $bad"
		echo "$t: $(ls "$seeds" | wc -l) seeds read fine"
	fi
	# committed seeds (damaged test images among them): only no crash
	committed=$TOP/tests/fuzz/corpus/$t
	if [ -d "$committed" ]; then
		"$BUILD/fuzz-$t" "$committed"/* > "$TEST_TMP/corpus.$t.log" 2>&1 ||
			fail "$t: a committed seed crashed: $(grep -m1 -E 'ERROR|SUMMARY' "$TEST_TMP/corpus.$t.log")"
		echo "$t: $(ls "$committed" | wc -l) committed seeds run clean"
	fi
done

# --- 3. regressions ---------------------------------------------------------------
nr_reg=0
for t in "${targets[@]}"; do
	for input in "$TOP/tests/fuzz/regressions/$t"/*; do
		[ -f "$input" ] || continue
		nr_reg=$((nr_reg + 1))
		name=$t/$(basename "$input")
		timeout 60 "$BUILD/fuzz-$t" "$input" > "$TEST_TMP/reg.log" 2>&1 ||
			fail "regression $name fails again: $(grep -m1 -E 'ERROR|SUMMARY|runtime error' "$TEST_TMP/reg.log")"
		case $t in
		parse-*) echo "regression $name: clean (parser only, no image)"; continue ;;
		esac
		# the same input as an image, read by the tool with the same options
		rm -f "$TEST_TMP"/reg.dev*.img
		FUZZ_EXPORT=$TEST_TMP/reg "$BUILD/fuzz-$t" "$input" > "$TEST_TMP/export.log" 2>&1 ||
			fail "regression $name: cannot export it"
		mapfile -t devs < <(sed -n 's/^FUZZ_EXPORT: wrote \([^ ]*\) ([0-9]* bytes)$/\1/p' \
			"$TEST_TMP/export.log")
		opts=$(sed -n 's/^FUZZ_EXPORT: flags 0x[0-9a-f]*: \([^(]*\).*/\1/p' "$TEST_TMP/export.log")
		# shellcheck disable=SC2086 # opts is a list of options
		_bs_log_cmd regression "$BTRFS_SPACE" $opts inspect "${devs[@]}"
		# shellcheck disable=SC2086
		timeout 20 "$BTRFS_SPACE" $opts inspect "${devs[@]}" > /dev/null 2> "$TEST_TMP/cli.err"
		rc=$?
		case $rc in
		0) ;;
		1)	lines=$(grep -c '' "$TEST_TMP/cli.err")
			[ "$lines" = 1 ] && grep -q '^ERROR: ' "$TEST_TMP/cli.err" ||
				fail "regression $name: exit 1 but stderr is not one ERROR line: $(head -3 "$TEST_TMP/cli.err" | tr '\n' '|')"
			;;
		*)	fail "regression $name: btrfs-space inspect exit $rc: $(head -1 "$TEST_TMP/cli.err")" ;;
		esac
		echo "regression $name: clean (btrfs-space exit $rc: $(head -1 "$TEST_TMP/cli.err" | cut -c1-100))"
		rm -f "$TEST_TMP"/reg.dev*.img
	done
done
echo "$nr_reg regression inputs replayed"

# --- 4. fuzz a little -------------------------------------------------------------
# the parse-* targets run 100 times as many inputs per second: less time
pipeline=()
parsers=()
for t in "${targets[@]}"; do
	case $t in
	parse-*) parsers+=("$t") ;;
	*) pipeline+=("$t") ;;
	esac
done
for set in pipeline parsers; do
	declare -n list=$set
	[ ${#list[@]} -gt 0 ] || continue
	secs=$SECONDS_EACH
	[ "$set" = parsers ] && secs=$PARSE_SECONDS
	FUZZ_SECONDS=$secs FUZZ_JOBS=$JOBS FUZZ_WORK=$TEST_TMP/work \
		bash "$TOP/tests/fuzz/run-all.sh" "${list[@]}" ||
		fail "fuzzing found a problem (or a target did not run): $(grep -h -m1 -E '^==[0-9]+==ERROR|SUMMARY' "$TEST_TMP"/work/*/log | head -1)"
	unset -n list
done
exit 0
