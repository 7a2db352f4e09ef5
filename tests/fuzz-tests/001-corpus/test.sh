#!/bin/bash
# Robustness and correctness on the btrfs-progs test images in $SHARED/corpus
# (catalog.jsonl says what each one is; most are damaged on purpose). Each
# image is unpacked into $TEST_TMP and read with "inspect", "inspect
# --format json", "chunks --format json" and "block-groups --format json"
# under a 20 s timeout:
#  * never a timeout, a signal, an exit status other than 0/1, a sanitizer
#    or valgrind report, nor a change to the image file;
#  * the kernel is the referee: for every image that kernel-verdict.jsonl
#    says Linux 6.18 mounted with -o ro, exit 0; for every image it refused,
#    exit 1 with one "ERROR: " line ("chunks" reads less and may pass), and
#    where the kernel's first error is a tree-checker line ("corrupt
#    leaf/node: ..."), inspect's line holds the kernel's text. The
#    catalog's "valid" is btrfs check's view and decides only for images
#    with no kernel verdict (fuzz-tests, never mounted);
#  * "valid": true -> exit 0, and the chunk list (logical, length, type,
#    num_stripes, stripes devid/offset) and block-group list (start, length,
#    used as the item has it: "item_used", flags) equal the catalog's;
#  * "valid": false (including must_fail) -> exit 1 with exactly one stderr
#    line, starting "ERROR: "; except the images listed in
#    damage-outside-reader.txt (damage in trees btrfs-space does not read),
#    where exit 0 is accepted too (then the lists must equal the catalog's
#    where btrfs-progs could dump them);
#  * a member of a multi-device filesystem ("device_group") read alone ->
#    exit 1 (missing device); the members are also read together and the
#    outcome recorded (only the robustness rules apply there).
# CORPUS_ONLY=REGEX limits the run to matching image names (debugging).
# Prints one line per image and "summary: valid-ok=N invalid-rejected=N
# outside-reader-accepted=N failures=N".

source "$TEST_TOP/common" || exit

corpus=$SHARED/corpus
catalog=$corpus/catalog.jsonl
[ -d "$corpus" ] || skip_no_shared "image corpus" "$corpus"
[ -f "$catalog" ] || skip_no_shared "image corpus catalog" "$catalog"
check_prereq btrfs-space
check_prereq jq xz tar od timeout sha256sum btrfs-image

kernel_verdicts=$corpus/kernel-verdict.jsonl
outside_list=$TEST_TOP/fuzz-tests/001-corpus/damage-outside-reader.txt
[ -f "$outside_list" ] || fail "missing $outside_list"

TIMEOUT=${CORPUS_TIMEOUT:-20}
[ -z "$INSTRUMENT" ] || TIMEOUT=$((TIMEOUT * 5))
REPORT_RE='AddressSanitizer|LeakSanitizer|MemorySanitizer|UndefinedBehaviorSanitizer|runtime error:|==[0-9]+== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|Mismatched free|Source and destination overlap)'

work=$TEST_TMP/corpus
mkdir -p "$work" || fail "cannot create $work"

# --- what is expected ----------------------------------------------------------

declare -A VALID MUSTFAIL GROUP OUTSIDE
jq -r '[.name, (.valid | tostring), (.must_fail | tostring),
	(.device_group.id // "-")] | @tsv' "$catalog" > "$work/catalog.tsv" ||
	fail "cannot read $catalog"
while IFS=$'\t' read -r name valid mustfail group; do
	VALID[$name]=$valid
	MUSTFAIL[$name]=$mustfail
	GROUP[$name]=$group
done < "$work/catalog.tsv"

# what Linux 6.18 did with each non-fuzz image: "mounts" or "refuses"
declare -A KERNEL KREASON
if [ -f "$kernel_verdicts" ]; then
	while IFS=$'\t' read -r name verdict; do
		KERNEL[$name]=$verdict
	done < <(jq -r 'select(.kind == "image") | [.name,
		(if .kernel.mounted then "mounts" else "refuses" end)] | @tsv' \
		"$kernel_verdicts") || fail "cannot read $kernel_verdicts"
	# the kernel's tree-checker reason, after "BTRFS critical (device DEV): "
	while IFS=$'\t' read -r name reason; do
		KREASON[$name]=$reason
	done < <(jq -r 'select(.kind == "image" and .kernel.mounted == false) |
		[.name, ((.kernel.first_error // "") |
			sub("^.*BTRFS [a-z]+ \\(device [^)]*\\): "; ""))] |
		select(.[1] | test("^corrupt (leaf|node): ")) | @tsv' \
		"$kernel_verdicts") || fail "cannot read $kernel_verdicts"
else
	echo "note: no $kernel_verdicts: the catalog decides every verdict"
fi

while read -r name reason; do
	case "$name" in ''|'#'*) continue ;; esac
	[ -n "$reason" ] || fail "damage-outside-reader.txt: no reason given for $name"
	OUTSIDE[$name]=$reason
done < "$outside_list"

# the list may only relax images the catalog calls invalid, readable and
# single-device; names of another corpus are only noted
bad_list=
for name in "${!OUTSIDE[@]}"; do
	if [ -z "${VALID[$name]+set}" ]; then
		echo "note: $name (damage-outside-reader.txt) is not in the catalog"
		continue
	fi
	if [ "${VALID[$name]}" != false ] || [ "${MUSTFAIL[$name]}" != false ] ||
	   [ "${GROUP[$name]}" != - ]; then
		bad_list="$bad_list $name"
	fi
done
[ -z "$bad_list" ] ||
	fail "damage-outside-reader.txt lists valid, must_fail or multi-device images:$bad_list"

# normalized catalog lists for one image: chunk type as flags (type|profile)
# shellcheck disable=SC2016 # a jq program, not shell
expected_jq='
def bits: {"DATA": 1, "SYSTEM": 2, "METADATA": 4, "SINGLE": 0, "RAID0": 8,
	"RAID1": 16, "DUP": 32, "RAID10": 64, "RAID5": 128, "RAID6": 256,
	"RAID1C3": 512, "RAID1C4": 1024};
def typeflags: if (.type | type) == "number" then .type
	else ((.type + "|" + (.profile // "single")) | ascii_upcase | split("|")
	      | map(bits[.] // error("unknown chunk type word \(.)")) | add) end;
select(.name == $name) | {
	chunks: [ .chunks[]? | { logical, length, type: typeflags, num_stripes,
		stripes: [ .stripes[] | { devid, offset } ] } ],
	block_groups: [ .block_groups[]? | { start: .objectid, length: .offset,
		used, flags } ],
	chunks_dumped: (.progs.dump_tree_chunk.behaviour == "ok"),
	bgs_dumped: (.progs.dump_tree_extent.behaviour == "ok")
}'

# first differences between the expected lists and the tool's output
# shellcheck disable=SC2016 # a jq program, not shell
compare_jq='
def diffs($what; $e; $g):
	(if ($e | length) != ($g | length)
	 then ["\($what).count", ($e | length), ($g | length)] else empty end),
	(range(0; [($e | length), ($g | length)] | min) as $k
	 | ($e[$k] | keys_unsorted[]) as $f
	 | select($e[$k][$f] != $g[$k][$f])
	 | ["\($what)[\($k)].\($f)", $e[$k][$f], $g[$k][$f]]);
$exp[0] as $e | $got[0] as $o |
if $what == "chunks" then
	diffs("chunks"; $e.chunks; [ $o.chunks[]? | { logical, length, type,
		num_stripes, stripes: [ .stripes[]? | { devid, offset } ] } ])
else
	diffs("block_groups"; $e.block_groups; [ $o.block_groups[]? | { start,
		length, used: (.item_used // .used), flags } ])
end | "\(.[0]) expected=\(.[1] | tojson) got=\(.[2] | tojson)"'

# --- helpers -------------------------------------------------------------------

# digest FILE: sha256 of the file's content that does not read the holes (a
# restored btrfs-image dump is a sparse file of up to 3 TB): GNU tar with
# SEEK_DATA/SEEK_HOLE hole detection streams the data regions, the hole
# map, size and mtime; plus the exact size and mtime
digest()
{
	local sum
	sum=$(timeout 120 tar -cS --hole-detection=seek -f - -C "$(dirname "$1")" \
		"$(basename "$1")" 2> /dev/null | sha256sum) || sum=unavailable
	echo "${sum%% *} $(stat -c '%s %y' "$1")"
}

# run LABEL ARGS... : run btrfs-space ARGS under timeout (and $INSTRUMENT);
# sets RC, OUT, ERR
run()
{
	local label=$1 cmd
	shift
	OUT=$work/run.$label.out
	ERR=$work/run.$label.err
	# word splitting of INSTRUMENT is intended
	# shellcheck disable=SC2206
	cmd=($INSTRUMENT "$BTRFS_SPACE" "$@")
	printf '####### run:' >&2
	printf ' %q' "${cmd[@]}" >&2
	printf '\n' >&2
	timeout -k 5 "$TIMEOUT" "${cmd[@]}" < /dev/null > "$OUT" 2> "$ERR"
	RC=$?
}

# judge EXPECT DESC: check the last run; EXPECT is ok (exit 0), reject
# (exit 1) or either. Appends to PROBLEMS; prints notes
judge()
{
	local expect=$1 desc=$2 lines first
	first=$(grep -m1 -v '^[[:space:]]*$' "$ERR" | cut -c1-160)
	if grep -q -E "$REPORT_RE" "$ERR"; then
		PROBLEMS+=("$desc: sanitizer/valgrind report: $(grep -m1 -E "$REPORT_RE" "$ERR" | cut -c1-160)")
		sed 's/^/    | /' "$ERR" | head -40 >&2
	fi
	if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
		PROBLEMS+=("$desc: timeout (${TIMEOUT}s, exit $RC)")
		return
	fi
	if [ "$RC" -ge 124 ]; then
		PROBLEMS+=("$desc: exit $RC (signal $((RC > 128 ? RC - 128 : 0))) $first")
		return
	fi
	if [ "$RC" != 0 ] && [ "$RC" != 1 ]; then
		PROBLEMS+=("$desc: exit $RC $first")
		return
	fi
	if [ "$RC" = 1 ]; then
		# grep -c counts a last line without a newline too
		lines=$(grep -c '' "$ERR")
		if [ "$lines" != 1 ] || ! head -1 "$ERR" | grep -q '^ERROR: '; then
			PROBLEMS+=("$desc: exit 1 but stderr is not one 'ERROR: ' line ($lines lines: $(head -3 "$ERR" | tr '\n' '|' | cut -c1-200))")
		fi
		[ "$expect" != ok ] || PROBLEMS+=("$desc: exit 1 on a valid image: $first")
		return
	fi
	# exit 0
	[ "$expect" != reject ] || PROBLEMS+=("$desc: exit 0 on an invalid image")
	[ ! -s "$ERR" ] || echo "    note: $desc: exit 0 with stderr: $first"
	case "$desc" in
	*json*)
		jq -e 'type == "object"' "$OUT" > /dev/null 2>&1 ||
			PROBLEMS+=("$desc: exit 0 but stdout is not a JSON object: $(head -c 100 "$OUT" | tr '\n' ' ')")
		;;
	esac
}

# compare_lists WHAT EXPECTED_FILE: compare the last run's JSON with the
# catalog's list WHAT (chunks or block_groups)
compare_lists()
{
	local what=$1 expfile=$2 diff
	diff=$(jq -n -r --arg what "$what" --slurpfile exp "$expfile" \
		--slurpfile got "$OUT" "$compare_jq" 2>&1 | head -5)
	[ -z "$diff" ] || PROBLEMS+=("$what differ from the catalog: $(echo "$diff" | tr '\n' ';')")
}

# run_all EXPECT COMPARE DEV...: the four commands on DEV...; COMPARE is a
# file with the expected lists, or "-"; sets CODES (the four exit statuses);
# after a timeout the remaining commands are not run (a hanging reader would
# otherwise cost 4 x TIMEOUT per image)
run_all()
{
	local expect=$1 expfile=$2 what
	shift 2
	CODES=
	for what in inspect inspect-json chunks block-groups; do
		case "$what" in
		inspect)	run "$what" inspect "$@"
				judge "$expect" "inspect" ;;
		inspect-json)	run "$what" inspect --format json "$@"
				judge "$expect" "inspect --format json" ;;
		chunks)		run "$what" "$what" --list-chunks --format json "$@"
				# chunks reads a subset (no block groups): it may
				# succeed where the damage is in what it skips
				judge "$( [ "$expect" = reject ] && echo either || echo "$expect")" \
					"$what --format json" ;;
		*)		run "$what" "$what" --list-block-groups --format json "$@"
				judge "$expect" "$what --format json" ;;
		esac
		CODES="$CODES $RC"
		if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
			PROBLEMS+=("remaining commands not run after the timeout")
			break
		fi
		if [ "$RC" != 0 ] || [ "$expfile" = - ]; then
			continue
		fi
		case "$what" in
		chunks)
			if jq -e '.chunks_dumped and (.chunks | length > 0)' "$expfile" > /dev/null; then
				compare_lists chunks "$expfile"
			fi
			;;
		block-groups)
			if jq -e '.bgs_dumped and (.block_groups | length > 0)' "$expfile" > /dev/null; then
				compare_lists block_groups "$expfile"
			fi
			;;
		esac
	done
}

# --- the images ----------------------------------------------------------------

mapfile -t files < <(cd "$corpus" && find . -maxdepth 1 -type f \
	! -name '*.jsonl' ! -name '*.md' ! -name '*.sh' ! -name '*.txt' |
	sed 's#^\./##' | LC_ALL=C sort)
if [ -n "${CORPUS_ONLY:-}" ]; then
	# CORPUS_ONLY=REGEX: only the images whose name matches (for debugging)
	mapfile -t files < <(printf "%s\n" "${files[@]}" | grep -E -- "$CORPUS_ONLY")
fi
[ ${#files[@]} -gt 0 ] || fail "no images in $corpus"
for name in "${!VALID[@]}"; do
	[ -f "$corpus/$name" ] || echo "note: $name is in the catalog but not in $corpus"
done

valid_ok=0
rejected=0
accepted=0
failures=0
failed_names=()
declare -A RAWS
idx=0
for name in "${files[@]}"; do
	idx=$((idx + 1))
	dir=$work/img.$idx
	PROBLEMS=()
	if [ -z "${VALID[$name]+set}" ]; then
		class=unknown
		expect=either
	elif [ "${GROUP[$name]}" != - ]; then
		class=member
		expect=reject
	elif [ "${KERNEL[$name]:-}" = mounts ]; then
		class=kernel-mounts
		expect=ok
	elif [ "${KERNEL[$name]:-}" = refuses ]; then
		class=kernel-refuses
		expect=reject
	elif [ "${VALID[$name]}" = true ]; then
		class=valid
		expect=ok
	elif [ -n "${OUTSIDE[$name]+set}" ]; then
		class=outside
		expect=either
	else
		class=invalid
		expect=reject
	fi

	mkdir -p "$dir"
	if ! raw_list=$(unpack_image "$corpus/$name" "$dir" 2> "$dir/unpack.err"); then
		echo "FAIL $name: cannot unpack: $(tail -1 "$dir/unpack.err")"
		failures=$((failures + 1))
		failed_names+=("$name")
		rm -rf -- "$dir"
		continue
	fi
	mapfile -t raws <<< "$raw_list"
	expfile=-
	if [ "$class" != unknown ]; then
		expfile=$dir/expected.json
		jq -c --arg name "$name" "$expected_jq" "$catalog" > "$expfile" ||
			fail "cannot read the catalog entry of $name"
	fi

	before=()
	for raw in "${raws[@]}"; do
		before+=("$(digest "$raw")")
	done
	run_all "$expect" "$expfile" "${raws[@]}"
	i=0
	for raw in "${raws[@]}"; do
		[ "$(digest "$raw")" = "${before[$i]}" ] ||
			PROBLEMS+=("image file changed: $(basename "$raw")")
		i=$((i + 1))
	done

	# a tree-checker refusal names what the kernel's names
	if [ -n "${KREASON[$name]:-}" ] &&
	   ! grep -qF -- "${KREASON[$name]}" "$work/run.inspect.err"; then
		PROBLEMS+=("inspect: not the kernel's reason \"${KREASON[$name]}\": $(head -1 "$work/run.inspect.err" | cut -c1-200)")
	fi
	first_err=$(grep -m1 -v '^[[:space:]]*$' "$work/run.inspect.err" 2> /dev/null | cut -c1-120)
	if [ ${#PROBLEMS[@]} -gt 0 ]; then
		failures=$((failures + 1))
		failed_names+=("$name")
		echo "FAIL $name ($class, exits$CODES):"
		printf '    %s\n' "${PROBLEMS[@]}"
	else
		case "$class:$CODES" in
		valid:*|kernel-mounts:*)
			valid_ok=$((valid_ok + 1))
			echo "ok   $class $(printf '%*s' $((17 - ${#class})) '')$name"
			;;
		outside:*0*|unknown:*0*)
			accepted=$((accepted + 1))
			echo "ok   $class-accepted  $name (exits$CODES)"
			;;
		*)
			rejected=$((rejected + 1))
			echo "ok   rejected          $name ($class): $first_err"
			;;
		esac
	fi

	if [ "$class" = member ]; then
		RAWS[$name]=${raws[*]}
	else
		rm -rf -- "$dir"
	fi
done

# --- multi-device groups read together -------------------------------------------

while IFS=$'\t' read -r gid members; do
	[ -n "$gid" ] || continue
	devs=()
	missing=
	for m in $members; do
		if [ -n "${RAWS[$m]:-}" ]; then
			# shellcheck disable=SC2206
			devs+=(${RAWS[$m]})
		else
			missing="$missing $m"
		fi
	done
	if [ -n "$missing" ]; then
		echo "group $gid: not run, members not unpacked:$missing"
		continue
	fi
	PROBLEMS=()
	# the lists are compared only when all members' catalog chunk lists agree
	expfile=$work/group.expected.json
	first=${members%% *}
	jq -c --arg name "$first" "$expected_jq" "$catalog" > "$expfile"
	for m in $members; do
		jq -c --arg name "$m" "$expected_jq" "$catalog" |
			jq -e --slurpfile f "$expfile" '.chunks == $f[0].chunks and
				.block_groups == $f[0].block_groups' > /dev/null || expfile=-
	done
	before=()
	for raw in "${devs[@]}"; do
		before+=("$(digest "$raw")")
	done
	run_all either "$expfile" "${devs[@]}"
	i=0
	for raw in "${devs[@]}"; do
		[ "$(digest "$raw")" = "${before[$i]}" ] ||
			PROBLEMS+=("image file changed: $(basename "$raw")")
		i=$((i + 1))
	done
	first_err=$(grep -m1 -v '^[[:space:]]*$' "$work/run.inspect.err" | cut -c1-120)
	echo "group $gid read together: exits$CODES${first_err:+, inspect: $first_err}"
	if [ ${#PROBLEMS[@]} -gt 0 ]; then
		failures=$((failures + 1))
		failed_names+=("group:$gid")
		echo "FAIL group $gid:"
		printf '    %s\n' "${PROBLEMS[@]}"
	fi
done < <(jq -r 'select(.device_group) | [.device_group.id,
	(.device_group.members | join(" "))] | @tsv' "$catalog" | sort -u)

echo "summary: valid-ok=$valid_ok invalid-rejected=$rejected outside-reader-accepted=$accepted failures=$failures"
[ "$failures" = 0 ] || fail "$failures corpus images failed: ${failed_names[*]}"
exit 0
