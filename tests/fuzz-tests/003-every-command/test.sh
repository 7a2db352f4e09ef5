#!/bin/bash
# Every command on every input a stranger can hand over, under limits: the
# corpus images of $SHARED/corpus (as given, compressed or btrfs-image dumps,
# and unpacked to raw), its multi-device groups read together, and device
# sets that lie, built from the fixtures (the same file twice, a missing
# member with and without --degraded, a member of another filesystem, a
# byte copy of a member (same fsid and devid, another file), a member
# shorter than its dev item says, a member claiming another's devid with
# its own device uuid); each read by
#   inspect (text, json), chunks, block-groups, map (text, --svg FILE),
#   mount-estimate, global-rsv, overcommit, preempt, forecast (alone,
#   --remove 1, --resize 1:half, --balance, --periodic-reclaim data),
#   csum-delete (--extents, --top 3, --file: the first file --top names, or a
#   path that is not there), replay of a fixture trace with the image
# Per run: a timeout (SWEEP_TIMEOUT, 30 s: the hang detector; the file
# "timeout" lets the whole sweep, 5-6 min of CPU, take 45 min of a busy
# machine: under load 20 it passed the runner's 900 s), an address-space
# limit (SWEEP_MEM_MB, 2048: ulimit -v; an ASan build reserves terabytes of shadow,
# so there hard_rss_limit_mb and malloc_limit_mb), its own TMPDIR, which
# must be empty afterwards, on a tmpfs of SWEEP_TMP_MB (1024) where one can
# be mounted (root): a decompressed image is a sparse file as long as its
# device, so what bounds it is the space it takes, not its length (ulimit
# -f killed the tool with SIGXFSZ on a 2 GiB xz image of 4 MiB of data);
# and at most SWEEP_OUT_MB (64) of standard output.
# A run passes when: no timeout, signal or sanitizer report; exit 0 or 1
# (never 2: the arguments are valid); exit 1 prints exactly one "ERROR: "
# line; exit 0 JSON is one object and an SVG is well-formed XML; no input
# changed (size, mtime, ctime). Sets the kernel refuses (a member alone, the
# same file twice, a member shorter than its dev item, a devid claimed with
# another uuid) must exit 1 under inspect. SWEEP_ONLY=REGEX limits the sets, SWEEP_CMDS=REGEX the commands.
# Prints one line per set and "summary: sets=N runs=N failures=N".

source "$TEST_TOP/common" || exit

corpus=$SHARED/corpus
[ -d "$corpus" ] || skip_no_shared "image corpus" "$corpus"
check_prereq btrfs-space
check_prereq jq xz tar timeout python3 stat

TIMEOUT=${SWEEP_TIMEOUT:-30}
[ -z "$INSTRUMENT" ] || TIMEOUT=$((TIMEOUT * 5))
MEM_MB=${SWEEP_MEM_MB:-2048}
TMP_MB=${SWEEP_TMP_MB:-1024}
OUT_MB=${SWEEP_OUT_MB:-64}
REPORT_RE='AddressSanitizer|LeakSanitizer|MemorySanitizer|UndefinedBehaviorSanitizer|runtime error:|==[0-9]+== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|Mismatched free|Source and destination overlap)'
work=$TEST_TMP/sweep
mkdir -p "$work/tmp" || fail "cannot create $work"
fx=$TEST_TOP/fixtures
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o "size=${TMP_MB}m" tmpfs "$work/tmp" 2> /dev/null; then
	register_mount "$work/tmp"
	echo "note: TMPDIR is a tmpfs of $TMP_MB MiB"
else
	echo "note: TMPDIR is not bounded (no tmpfs: not root, or mount refused)"
fi

# an ASan build cannot start under ulimit -v
if (ulimit -v $((MEM_MB * 1024)); "$BTRFS_SPACE" --version) > /dev/null 2>&1; then
	LIMIT_V=$((MEM_MB * 1024))
else
	LIMIT_V=unlimited
	export ASAN_OPTIONS="hard_rss_limit_mb=$MEM_MB:malloc_limit_mb=$MEM_MB:allocator_may_return_null=0:detect_leaks=1:abort_on_error=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	echo "note: sanitizer build: RSS and malloc limits of $MEM_MB MiB instead of ulimit -v"
fi
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

trace=$work/overcommit.trace
xz -dc "$fx/replay-overcommit.trace.xz" > "$trace" || fail "cannot unpack the replay trace"

COMMANDS=(inspect inspect-json chunks block-groups map map-svg mount-estimate
	global-rsv overcommit preempt forecast forecast-remove forecast-resize
	forecast-balance forecast-reclaim csum-extents csum-top csum-file replay)

# args_of COMMAND DEV...: sets ARGS, the command line of COMMAND
args_of()
{
	local what=$1 size half path
	shift
	case $what in
	inspect)	ARGS=(inspect) ;;
	inspect-json)	ARGS=(--format json inspect) ;;
	chunks)		ARGS=(chunks) ;;
	block-groups)	ARGS=(--format json block-groups) ;;
	map)		ARGS=(map) ;;
	map-svg)	rm -f "$work/map.svg"; ARGS=(map --svg "$work/map.svg") ;;
	mount-estimate) ARGS=(mount-estimate) ;;
	global-rsv)	ARGS=(global-rsv) ;;
	overcommit)	ARGS=(overcommit) ;;
	preempt)	ARGS=(preempt) ;;
	forecast)	ARGS=(--format json forecast) ;;
	forecast-remove) ARGS=(forecast --remove 1) ;;
	forecast-resize)
		size=$(stat -L -c %s "${@: -1}")
		half=$(( (size / 2) & ~1048575 ))
		[ "$half" -gt 0 ] || half=1048576
		ARGS=(forecast --resize "1:$half") ;;
	forecast-balance) ARGS=(forecast --balance '-dusage=50,limit=4 -musage=90') ;;
	forecast-reclaim) ARGS=(forecast --periodic-reclaim data) ;;
	csum-extents)	ARGS=(csum-delete --extents 100 --extent-size 1M) ;;
	csum-top)	ARGS=(--format json csum-delete --top 3) ;;
	csum-file)
		path=$(jq -r '[.top[]?.path] | first // empty' "$work/run.csum-top.out" 2> /dev/null)
		ARGS=(csum-delete --file "${path:-/no-such-file}") ;;
	replay)		ARGS=(replay "$trace") ;;
	*)		fail "args_of: unknown command $what" ;;
	esac
}

# stamp FILE...: what changes when a file is written to
stamp()
{
	stat -L -c '%s %Y.%y %Z.%z' "$@" 2> /dev/null
}

# run_one LABEL DEV...: one command under the limits; sets RC, OUT, ERR
run_one()
{
	local label=$1 cmd
	shift
	args_of "$label" "$@"
	OUT=$work/run.$label.out
	ERR=$work/run.$label.err
	# word splitting of INSTRUMENT is intended
	# shellcheck disable=SC2206
	cmd=($INSTRUMENT "$BTRFS_SPACE" "${ARGS[@]}" "$@")
	_bs_log_cmd sweep "${cmd[@]}"
	(
		ulimit -v "$LIMIT_V" -c 0
		TMPDIR=$work/tmp exec timeout -k 5 "$TIMEOUT" "${cmd[@]}"
	) < /dev/null > "$OUT" 2> "$ERR"
	RC=$?
	RUNS=$((RUNS + 1))
}

# judge LABEL EXPECT: the last run against the rules; appends to PROBLEMS
judge()
{
	local label=$1 expect=$2 first lines
	first=$(grep -m1 -v '^[[:space:]]*$' "$ERR" | cut -c1-160)
	if grep -q -E "$REPORT_RE" "$ERR"; then
		PROBLEMS+=("$label: sanitizer report: $(grep -m1 -E "$REPORT_RE" "$ERR" | cut -c1-200)")
		sed 's/^/    | /' "$ERR" | head -30 >&2
	fi
	if [ -n "$(ls -A "$work/tmp")" ]; then
		PROBLEMS+=("$label: temporary files left in TMPDIR: $(ls -A "$work/tmp" | head -3 | tr '\n' ' ')")
		rm -rf -- "${work:?}/tmp/"*
	fi
	[ "$(stat -c %s "$OUT")" -le $((OUT_MB << 20)) ] ||
		PROBLEMS+=("$label: more than $OUT_MB MiB of standard output")
	case $RC in
	0|1) ;;
	124|137) PROBLEMS+=("$label: timeout (${TIMEOUT}s)"); return ;;
	*)	PROBLEMS+=("$label: exit $RC${first:+: $first}"); return ;;
	esac
	if [ "$RC" = 1 ]; then
		lines=$(grep -c '' "$ERR")
		if [ "$lines" != 1 ] || ! head -1 "$ERR" | grep -q '^ERROR: '; then
			PROBLEMS+=("$label: exit 1 but stderr is not one 'ERROR: ' line ($lines lines: $(head -3 "$ERR" | tr '\n' '|' | cut -c1-240))")
		fi
		[ "$expect" != ok ] || PROBLEMS+=("$label: exit 1 where the kernel reads it: $first")
		return
	fi
	[ "$expect" != reject ] || PROBLEMS+=("$label: exit 0 where the kernel refuses")
	case $label in
	inspect-json|block-groups|forecast|csum-top)
		jq -e 'type == "object"' "$OUT" > /dev/null 2>&1 ||
			PROBLEMS+=("$label: exit 0 but stdout is not a JSON object")
		;;
	map-svg)
		python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' \
			"$work/map.svg" 2> /dev/null ||
			PROBLEMS+=("$label: exit 0 but $work/map.svg is not well-formed XML")
		;;
	esac
}

# sweep NAME EXPECT DEV...: every command on one device set; EXPECT (ok,
# reject, either) is what inspect must do
sweep()
{
	local name=$1 expect=$2 what before codes=
	shift 2
	PROBLEMS=()
	before=$(stamp "$@")
	for what in "${COMMANDS[@]}"; do
		[[ $what =~ ${SWEEP_CMDS:-.} ]] || continue
		run_one "$what" "$@"
		case $what in
		inspect)	judge "$what" "$expect" ;;
		*)		judge "$what" either ;;
		esac
		codes="$codes $RC"
	done
	[ "$(stamp "$@")" = "$before" ] || PROBLEMS+=("an input file changed")
	SETS=$((SETS + 1))
	if [ ${#PROBLEMS[@]} -gt 0 ]; then
		FAILURES=$((FAILURES + 1))
		FAILED+=("$name")
		echo "FAIL $name (exits$codes):"
		printf '    %s\n' "${PROBLEMS[@]}"
	else
		echo "ok   $name (exits$codes) $(head -1 "$work/run.inspect.err" 2> /dev/null | cut -c1-110)"
	fi
}

wanted()
{
	[[ $1 =~ ${SWEEP_ONLY:-.} ]]
}

SETS=0
RUNS=0
FAILURES=0
FAILED=()
start=$SECONDS

# --- the corpus: as given, unpacked, groups together ---------------------------

mapfile -t files < <(cd "$corpus" && find . -maxdepth 1 -type f \
	! -name '*.jsonl' ! -name '*.md' ! -name '*.sh' ! -name '*.txt' |
	sed 's#^\./##' | LC_ALL=C sort)
[ ${#files[@]} -gt 0 ] || fail "no images in $corpus"
declare -A GROUP RAWS
if [ -f "$corpus/catalog.jsonl" ]; then
	while IFS=$'\t' read -r name group; do
		GROUP[$name]=$group
	done < <(jq -r '[.name, (.device_group.id // "-")] | @tsv' "$corpus/catalog.jsonl")
fi
idx=0
for name in "${files[@]}"; do
	wanted "$name" || continue
	idx=$((idx + 1))
	expect=either
	[ "${GROUP[$name]:--}" = - ] || expect=reject
	sweep "given:$name" "$expect" "$corpus/$name"
	dir=$work/img.$idx
	mkdir -p "$dir"
	if ! raw_list=$(_bs_unpack "$corpus/$name" "$dir" 1 2> "$dir/unpack.err"); then
		echo "note: $name: cannot unpack: $(tail -1 "$dir/unpack.err")"
		rm -rf -- "$dir"
		continue
	fi
	mapfile -t raws <<< "$raw_list"
	sweep "raw:$name" "$expect" "${raws[@]}"
	if [ "${GROUP[$name]:--}" != - ]; then
		RAWS[${GROUP[$name]}]="${RAWS[${GROUP[$name]}]:-} ${raws[*]}"
	else
		rm -rf -- "$dir"
	fi
done
for gid in "${!RAWS[@]}"; do
	# shellcheck disable=SC2206 # the paths have no blanks
	devs=(${RAWS[$gid]})
	[ ${#devs[@]} -gt 1 ] && sweep "group:$gid" either "${devs[@]}"
done

# --- device sets that lie ---------------------------------------------------------

if wanted lie:; then
	lie=$work/lie
	mkdir -p "$lie"
	mapfile -t r1 < <(fixture_images raid1-2dev "$lie/raid1")
	mapfile -t r0 < <(fixture_images raid0-2dev "$lie/raid0")
	mapfile -t one < <(fixture_images ns4k-1g "$lie/ns4k")
	[ ${#r1[@]} = 2 ] && [ ${#r0[@]} = 2 ] && [ ${#one[@]} = 1 ] ||
		fail "cannot unpack the raid1-2dev, raid0-2dev and ns4k-1g fixtures"
	sweep "lie:same-file-twice" reject "${r1[0]}" "${r1[0]}"
	sweep "lie:member-missing" reject "${r1[0]}"
	sweep "lie:member-missing-degraded" either --degraded "${r1[0]}"
	sweep "lie:raid0-member-missing-degraded" either --degraded "${r0[1]}"
	sweep "lie:member-of-another-fs" reject "${r1[0]}" "${r0[1]}"
	sweep "lie:single-plus-another-fs" either "${one[0]}" "${r1[1]}"
	cp --sparse=always "${r1[0]}" "$lie/copy-of-dev1.img" || fail "cannot copy"
	sweep "lie:duplicate-devid" either "${r1[0]}" "$lie/copy-of-dev1.img" "${r1[1]}"
	sweep "lie:duplicate-devid-no-dev2" reject "${r1[0]}" "$lie/copy-of-dev1.img"
	# shorter than the dev item's total_bytes: the kernel's read_one_dev
	# refuses ("device total_bytes should be at most ...")
	cp --sparse=always "${r1[1]}" "$lie/short-dev2.img" || fail "cannot copy"
	truncate -s $(( $(stat -c %s "${r1[1]}") / 2 )) "$lie/short-dev2.img"
	sweep "lie:member-shorter-than-dev-item" reject "${r1[0]}" "$lie/short-dev2.img"
	# a member claiming the other's devid with its own device uuid: the
	# kernel's sys_array read finds devid 1 uuid U missing
	cp --sparse=always "${r1[1]}" "$lie/claims-devid1.img" || fail "cannot copy"
	python3 "$TEST_TOP/common-mutate.py" "$lie/claims-devid1.img" dev-item-devid=1 ||
		fail "cannot change a devid"
	sweep "lie:member-claims-devid-1" reject "$lie/claims-devid1.img"
	sweep "lie:member-claims-devid-1-with-dev1" reject "${r1[0]}" "$lie/claims-devid1.img"
	cp --sparse=always "${one[0]}" "$lie/short-single.img" || fail "cannot copy"
	truncate -s $(( $(stat -c %s "${one[0]}") - 4096 )) "$lie/short-single.img"
	sweep "lie:single-shorter-than-dev-item" reject "$lie/short-single.img"
	rm -rf -- "$lie"
fi

echo "summary: sets=$SETS runs=$RUNS failures=$FAILURES seconds=$((SECONDS - start))"
[ "$FAILURES" = 0 ] || fail "$FAILURES sets failed: ${FAILED[*]}"
exit 0
