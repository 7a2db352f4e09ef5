# compare-truth.sh - compare btrfs-space output with what the kernel reported
#
# Sourced (after tests/common) by image-tests/001-truth-fixtures and
# 002-shared-truth. Needs jq, $BTRFS_SPACE, $TEST_TMP and unpack_image.
#
#   truth_expected TRUTH_JSON OUT   reduce shared/truth/NAME.json to the
#                                   NAME.expected.json form (fixtures/expected.jq)
#   compare_truth NAME EXPECTED ARCHIVE
#                                   unpack ARCHIVE (tar.xz with the device
#                                   files named in EXPECTED), run inspect,
#                                   chunks and block-groups with
#                                   --format json over all its devices and
#                                   compare; prints "match NAME" or one line
#                                   per difference,
#                                   "MISMATCH NAME field expected=X got=Y";
#                                   returns 0 when everything matches
#
# Compared: fsid, nodesize, sectorsize, checksum, device count, devid and
# size of each device, and its bytes per type and profile and unallocated
# bytes as "btrfs filesystem usage -b" printed them; global_rsv_size and global_rsv_reserved; per space
# type the kernel has (data/metadata/system/mixed) every number of
# allocation/<type>/ in EXPECTED (the tool reports them as right after a
# cold ro mount, which is when the kernel's were read) and no extra type;
# the chunk list (logical, length, type, num_stripes, stripes devid/offset)
# and block-group list (start, length, used, flags, tree), both in
# ascending logical order, and inspect's block_groups count and source.

TRUTH_TIMEOUT=${TRUTH_TIMEOUT:-60}
# at most this many MISMATCH lines per image (the rest is counted)
TRUTH_MAX_LINES=${TRUTH_MAX_LINES:-25}

truth_expected()
{
	jq -f "$TEST_TOP/fixtures/expected.jq" "$1" > "$2"
}

# jq program: expected, inspect, chunks and block-groups output in, one
# "field<TAB>expected<TAB>got" line per difference out
# shellcheck disable=SC2016 # a jq program, not shell
_truth_compare_jq='
def show: if type == "string" then . elif . == null then "absent" else tojson end;
def cmp($field; $e; $g): if $e == $g then empty else [$field, ($e | show), ($g | show)] end;
def treename: if . == null then null else ascii_upcase | gsub("-"; "_") end;
# sysfs names as btrfs filesystem usage prints them: "Data+Metadata", "RAID1"
def progs_type: {DATA: "Data", METADATA: "Metadata", SYSTEM: "System",
	"DATA+METADATA": "Data+Metadata"}[.] // .;
def progs_profile: if . == "single" then . else ascii_upcase end;
$exp[0] as $e | $ins[0] as $i | $chk[0] as $c | $bgs[0] as $b |
(
	cmp("filesystem.fsid"; $e.superblock.fsid; $i.filesystem.fsid),
	cmp("filesystem.nodesize"; $e.superblock.nodesize; $i.filesystem.nodesize),
	cmp("filesystem.sectorsize"; $e.superblock.sectorsize; $i.filesystem.sectorsize),
	cmp("filesystem.csum_type"; $e.superblock.csum_type_name; $i.filesystem.csum_type),
	cmp("filesystem.num_devices"; ($e.devices | length); $i.filesystem.num_devices),
	cmp("filesystem.degraded"; false; $i.filesystem.degraded),
	cmp("devices.count"; ($e.devices | length); ($i.devices | length?)),
	($e.devices[] as $d
	 | ([$i.devices[]? | select(.devid == $d.devid)] | first) as $g
	 | if $g == null then ["devices[devid=\($d.devid)]", "present", "absent"]
	   else cmp("devices[devid=\($d.devid)].size"; $d.size; $g.size),
		cmp("devices[devid=\($d.devid)].missing"; false; $g.missing),
		(select($d.fi_usage != null)
		 | cmp("devices[devid=\($d.devid)].profiles"; $d.fi_usage.profiles | sort;
			[$g.profiles[]? | { type: (.type_name | progs_type),
				profile: (.profile | progs_profile), bytes }] | sort),
		   cmp("devices[devid=\($d.devid)].unallocated"; $d.fi_usage.unallocated;
			$g.unallocated))
	   end),
	cmp("global_rsv_size"; $e.allocation.global_rsv_size; $i.global_rsv_size),
	# the reads the kernel issued during a cold mount (block_bio_queue)
	cmp("mount_estimate.total_reads"; $e.mount_reads.reads; $i.mount_estimate.total_reads),
	cmp("global_rsv_reserved"; $e.allocation.global_rsv_reserved; $i.global_rsv_reserved),
	($e.allocation | to_entries[] | select(.value | type == "object")
	 | .key as $t
	 | if ($i.space_info[$t]? | type) != "object" then ["space_info.\($t)", "present", "absent"]
	   else .value | to_entries[]
		| cmp("space_info.\($t).\(.key)"; .value; $i.space_info[$t][.key])
	   end),
	(($i.space_info // {}) | keys[]
	 | select(. as $k | $e.allocation | has($k) | not)
	 | ["space_info.\(.)", "absent", "present"]),
	((($c.chunks // []) | map({logical, length, type, num_stripes,
		stripes: [.stripes[]? | {devid, offset}]})) as $gc
	 | cmp("chunks.count"; ($e.chunks | length); ($gc | length)),
	   (range(0; [($e.chunks | length), ($gc | length)] | min) as $k
	    | $e.chunks[$k] as $x | $gc[$k] as $y
	    | ($x | keys_unsorted[]) as $f
	    | cmp("chunks[\($k)].\($f)"; $x[$f]; $y[$f]))),
	((($b.block_groups // []) | map({objectid: .start, offset: .length, used,
		flags, tree: (.tree | treename)})) as $gb
	 | cmp("block_groups.count"; ($e.block_groups | length); ($gb | length)),
	   (range(0; [($e.block_groups | length), ($gb | length)] | min) as $k
	    | $e.block_groups[$k] as $x | $gb[$k] as $y
	    | ($x | keys_unsorted[]) as $f
	    | cmp("block_groups[\($k)].\($f)"; $x[$f]; $y[$f]))),
	cmp("inspect.block_groups.count"; ($e.block_groups | length); $i.block_groups.count),
	cmp("inspect.block_groups.source"; ($e.block_groups[0].tree // null);
		($i.block_groups.source | treename))
) | @tsv'

# _truth_stem PATH: file name without folder and without .img/.raw/.xz/.tar
_truth_stem()
{
	local base=${1##*/}
	while :; do
		case "$base" in
		*.xz|*.tar|*.img|*.raw) base=${base%.*} ;;
		*) break ;;
		esac
	done
	echo "$base"
}

# what counts as a sanitizer or valgrind report in stderr
TRUTH_REPORT_RE='AddressSanitizer|LeakSanitizer|MemorySanitizer|UndefinedBehaviorSanitizer|runtime error:|==[0-9]+== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|Mismatched free|Source and destination overlap)'

# _truth_run NAME WHAT OUT DEV... -> runs "btrfs-space WHAT --format json DEV..."
# (under $INSTRUMENT when set); prints MISMATCH lines and returns 1 when it
# did not exit 0 with a JSON object on stdout and no sanitizer report
_truth_run()
{
	local name=$1 what=$2 out=$3 rc first tmo=$TRUTH_TIMEOUT cmd
	shift 3
	# word splitting of INSTRUMENT is intended (e.g. "valgrind -q ...")
	# shellcheck disable=SC2206
	cmd=(${INSTRUMENT:-} "$BTRFS_SPACE" "$what" $(list_each "$what") --format json "$@")
	[ -z "${INSTRUMENT:-}" ] || tmo=$((tmo * 5))
	printf '####### run:' >&2
	printf ' %q' "${cmd[@]}" >&2
	printf '\n' >&2
	timeout -k 5 "$tmo" "${cmd[@]}" < /dev/null > "$out" 2> "$out.err"
	rc=$?
	if grep -q -E "$TRUTH_REPORT_RE" "$out.err"; then
		first=$(grep -m1 -E "$TRUTH_REPORT_RE" "$out.err" | cut -c1-200)
		echo "MISMATCH $name $what.sanitizer expected=none got=$first"
		cat "$out.err" >&2
		return 1
	fi
	if [ "$rc" != 0 ]; then
		first=$(grep -m1 -v '^[[:space:]]*$' "$out.err" | cut -c1-200)
		[ "$rc" != 124 ] || first="timeout after ${tmo}s"
		echo "MISMATCH $name $what.exit expected=0 got=$rc ($first)"
		return 1
	fi
	if ! jq -e 'type == "object"' "$out" > /dev/null 2>&1; then
		echo "MISMATCH $name $what.json expected=object got=$(head -c 100 "$out" | tr '\n' ' ')"
		return 1
	fi
	return 0
}

compare_truth()
{
	local name=$1 expected=$2 archive=$3
	local dir=$TEST_TMP/truth-$name out=$TEST_TMP/truth-$name.out
	local unpacked file path found devs=() bad=0 lines n

	rm -rf -- "$dir" "$out"
	mkdir -p -- "$dir" "$out" || { echo "MISMATCH $name setup expected=ok got=mkdir-failed"; return 1; }
	# a shipped fixture: unpacked once per run (fixture_images), read only
	if [ "$archive" -ef "$TEST_TOP/fixtures/$name.tar.xz" ] && [ -n "${FIXTURE_CACHE:-}" ]; then
		unpacked=$(fixture_images "$name" "$dir") || {
			echo "MISMATCH $name unpack expected=ok got=failed ($archive)"
			return 1
		}
	elif ! unpacked=$(unpack_image "$archive" "$dir"); then
		echo "MISMATCH $name unpack expected=ok got=failed ($archive)"
		rm -rf -- "$dir"
		return 1
	fi
	# device files in the order of the expected device list (devid order);
	# unpack_image may rename NAME.devN.img to NAME.devN.raw
	while read -r file; do
		found=
		while read -r path; do
			[ -n "$path" ] || continue
			if [ "$(_truth_stem "$path")" = "$(_truth_stem "$file")" ]; then
				found=$path
			fi
		done <<< "$unpacked"
		if [ -z "$found" ]; then
			echo "MISMATCH $name device-file expected=$file got=absent"
			rm -rf -- "$dir"
			return 1
		fi
		devs+=("$found")
	done < <(jq -r '.devices[].file' "$expected")
	if [ ${#devs[@]} = 0 ]; then
		echo "MISMATCH $name device-file expected=some got=none"
		rm -rf -- "$dir"
		return 1
	fi

	_truth_run "$name" inspect "$out/inspect.json" "${devs[@]}" || bad=1
	_truth_run "$name" chunks "$out/chunks.json" "${devs[@]}" || bad=1
	_truth_run "$name" block-groups "$out/block-groups.json" "${devs[@]}" || bad=1
	rm -rf -- "$dir"
	[ $bad = 0 ] || return 1

	if ! jq -n -r --slurpfile exp "$expected" --slurpfile ins "$out/inspect.json" \
		--slurpfile chk "$out/chunks.json" --slurpfile bgs "$out/block-groups.json" \
		"$_truth_compare_jq" > "$out/diff" 2> "$out/diff.err"; then
		echo "MISMATCH $name compare expected=ok got=jq-error ($(head -1 "$out/diff.err"))"
		return 1
	fi
	lines=$(wc -l < "$out/diff")
	if [ "$lines" = 0 ]; then
		echo "match $name"
		return 0
	fi
	n=0
	while IFS=$'\t' read -r field exp got; do
		n=$((n + 1))
		[ $n -le "$TRUTH_MAX_LINES" ] || break
		echo "MISMATCH $name $field expected=$exp got=$got"
	done < "$out/diff"
	[ "$lines" -le "$TRUTH_MAX_LINES" ] ||
		echo "MISMATCH $name (and $((lines - TRUTH_MAX_LINES)) more differences)"
	return 1
}
