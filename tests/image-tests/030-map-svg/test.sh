#!/bin/bash
# "map --svg": on every fixture the SVG is well-formed XML with one cell
# (<path class="bg">) per block group, in the order and with the starts that
# "block-groups" gives, and the text/JSON summary adds up.  Each device is
# drawn as segments (<path class="dev"> stripes, <path class="free">
# unallocated space) that tile it from 0 to its size, their lengths adding
# up to what its DEV_ITEM says, and the raw totals equal what "btrfs
# filesystem usage" printed on the kernel's mount (the truth set, when
# $SHARED is there).  The subtitle compares logical bytes with logical and
# raw with raw.  A cell no longer than a row is one rectangle; a longer one
# is marked with arrows.  Past --max-cells the cells are merged but still
# cover every block group.  "--svg -" writes the map, and nothing else, to
# standard output.  The output must never land on an input (same path,
# hard link, symlink, a block device, standard output), and an existing
# file is truncated.  Read-only block groups are hatched (when
# --readonly-device is there to make some).  If chromium is installed the
# map is rendered headless and the PNG checked for size and for the colours
# of the cells and of unallocated space; otherwise that part is skipped
# with a message to install chromium.  Under QUICK=1 (make check-quick)
# the rendering is left to make check.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space
check_prereq jq tar xz grep cmp

fixtures=$TEST_TOP/fixtures
ls "$fixtures"/*.tar.xz > /dev/null 2>&1 || skip "no fixtures in $fixtures (tests/fixtures is incomplete: git checkout tests/fixtures)"

# well_formed FILE: XML that parses, by xmllint or else python3
well_formed()
{
	if command -v xmllint > /dev/null 2>&1; then
		xmllint --noout "$1" || fail "not well-formed XML (xmllint): $1"
	elif command -v python3 > /dev/null 2>&1; then
		python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1" ||
			fail "not well-formed XML (python3): $1"
	else
		fail "neither xmllint nor python3 to parse the SVG"
	fi
}

# attr_values FILE NAME: the values of attribute NAME on the cells, in order
attr_values()
{
	grep -o "<path class=\"bg\"[^>]*" "$1" | grep -o " $2=\"[^\"]*\"" |
		sed -e 's/^[^"]*"//' -e 's/"$//'
}

# unpack NAME: the raw image paths of fixture NAME, one per line, for
# reading only (the run's unpacked fixtures, tests/common fixture_images)
unpack()
{
	rm -rf "$TEST_TMP/img"
	fixture_images "$1" "$TEST_TMP/img"
}

# seg_sums SVG CLASS: "devid bytes" per device, the data-length of its CLASS segments added up
seg_sums()
{
	grep -o "<path class=\"$2\"[^>]*" "$1" |
		sed -e 's/.* data-devid="\([0-9]*\)".* data-length="\([0-9]*\)".*/\1 \2/' |
		awk '{ n[$1] += $2 } END { for (d in n) printf "%s %.0f\n", d, n[d] }' | sort -n
}

# check_devices NAME SVG JSON: each device tiled by its segments, in order
# and without overlap, stripes = DEV_ITEM bytes_used, gaps = the rest; the
# raw totals as btrfs filesystem usage printed them on the kernel's mount
check_devices()
{
	local name=$1 svg=$2 json=$3 truth=$SHARED/truth/$1.json

	grep -o '<path class="\(dev\|free\)"[^>]*' "$svg" |
		sed -e 's/.* data-devid="\([0-9]*\)" data-physical="\([0-9]*\)" data-length="\([0-9]*\)".*/\1 \2 \3/' \
		> "$TEST_TMP/segs"
	awk -v name="$name" '
		$1 != dev { if (dev != "") printf "%s %.0f\n", dev, end; dev = $1; end = 0 }
		$2 != end { printf "%s: devid %s: a segment at %s, not at %.0f\n", name, $1, $2, end; bad = 1 }
		{ end = $2 + $3 }
		END { if (dev != "") printf "%s %.0f\n", dev, end; exit bad }' "$TEST_TMP/segs" > "$TEST_TMP/seg.ends" ||
		fail "$(grep -v '^[0-9]* [0-9]*$' "$TEST_TMP/seg.ends")"
	jq -r '.devices[] | "\(.devid) \(.size)"' "$json" | sort -n > "$TEST_TMP/dev.sizes"
	cmp -s "$TEST_TMP/seg.ends" "$TEST_TMP/dev.sizes" ||
		fail "$name: the segments do not end at the devices' sizes: $(tr '\n' ' ' < "$TEST_TMP/seg.ends")"
	seg_sums "$svg" dev > "$TEST_TMP/dev.used"
	jq -r '.devices[] | select(.allocated > 0) | "\(.devid) \(.allocated)"' "$json" | sort -n |
		cmp -s - "$TEST_TMP/dev.used" ||
		fail "$name: the stripes drawn are not the devices' bytes_used: $(tr '\n' ' ' < "$TEST_TMP/dev.used")"
	seg_sums "$svg" free > "$TEST_TMP/dev.free"
	jq -r '.devices[] | select(.unallocated > 0) | "\(.devid) \(.unallocated)"' "$json" |
		sort -n | cmp -s - "$TEST_TMP/dev.free" ||
		fail "$name: the unallocated space drawn is not size - bytes_used"
	jq -e '.raw.allocated == .raw.stripes and
		.raw.size == ([.devices[].size] | add)' "$json" > /dev/null ||
		fail "$name: raw totals: $(jq -c .raw "$json")"
	[ -f "$truth" ] || return 0
	jq -e --slurpfile t "$truth" '$t[0].fi_usage.parsed.overall as $u |
		.raw.size == $u.device_size and .raw.allocated == $u.device_allocated and
		.raw.unallocated == $u.device_unallocated' "$json" > /dev/null ||
		fail "$name: raw $(jq -c .raw "$json") is not btrfs fi usage's $(jq -c .fi_usage.parsed.overall "$truth")"
	nr_usage=$((nr_usage + 1))
}

# check_units NAME SVG IMG...: the subtitle's logical line has the logical
# sizes of "map", its raw line the raw ones, as the same units print them
check_units()
{
	local name=$1 svg=$2
	shift 2
	"$BTRFS_SPACE" map "$@" > "$TEST_TMP/map.txt" || fail "$name: map failed"
	local len raw_alloc raw_size
	len=$(awk '/^Block groups:/ { g = 1 } g && /^ *Length:/ { print $2; exit }' "$TEST_TMP/map.txt")
	raw_alloc=$(awk '/^Raw/ { g = 1 } g && /^ *Allocated:/ { print $2; exit }' "$TEST_TMP/map.txt")
	raw_size=$(awk '/^Raw/ { g = 1 } g && /^ *Size:/ { print $2; exit }' "$TEST_TMP/map.txt")
	[ -n "$len" ] && [ -n "$raw_alloc" ] && [ -n "$raw_size" ] ||
		fail "$name: no Length, or no raw Allocated/Size, in the text summary"
	grep -q "<text class=\"subtitle\"[^>]*>Logical: [0-9]* block groups\? of $len in all" "$svg" ||
		fail "$name: the logical subtitle does not give the logical length $len"
	grep -q "<text class=\"subtitle\"[^>]*>Raw, on [0-9]* devices\?: $raw_alloc allocated of $raw_size " "$svg" ||
		fail "$name: the raw subtitle does not compare raw $raw_alloc with raw $raw_size"
}

# check_whole_cells NAME SVG JSON: a cell drawn as more than one rectangle
# is longer than a row, and two arrows mark where it goes on
check_whole_cells()
{
	local name=$1 svg=$2 json=$3 cut wrapped arrows
	cut=$(grep -o '<path class="bg"[^>]*' "$svg" | grep -o ' d="[^"]*"' |
		awk -F z 'NF > 2 { n++ } END { print n + 0 }')
	wrapped=$(jq .svg.wrapped_cells "$json")
	arrows=$(grep -c '<polygon class="wrap"' "$svg")
	[ "$cut" -le "$wrapped" ] ||
		fail "$name: $cut cells cut in pieces, only $wrapped longer than a row"
	[ "$arrows" = $((2 * cut)) ] ||
		fail "$name: $cut cells in two pieces but $arrows wrap arrows, not two each"
	nr_wrapped=$((nr_wrapped + cut))
}

# --- every fixture: one cell per block group, in order ------------------------

nr_usage=0
nr_wrapped=0

nr_fixtures=0
for archive in "$fixtures"/*.tar.xz; do
	name=$(basename "$archive" .tar.xz)
	# read only: the run's unpacked fixtures (tests/common fixture_images)
	rm -rf "$TEST_TMP/img"
	mapfile -t imgs < <(fixture_images "$name" "$TEST_TMP/img") || exit
	[ "${#imgs[@]}" -gt 0 ] || fail "$name: nothing unpacked"
	svg=$TEST_TMP/$name.svg

	run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "${imgs[@]}" > "$TEST_TMP/bg.json"
	jq -r '.block_groups[].start' "$TEST_TMP/bg.json" > "$TEST_TMP/bg.starts"
	want=$(wc -l < "$TEST_TMP/bg.starts")

	run_check_stdout "$BTRFS_SPACE" --format json map --svg "$svg" "${imgs[@]}" > "$TEST_TMP/map.json"
	[ -s "$svg" ] || fail "$name: no SVG written"
	well_formed "$svg"

	cells=$(grep -c '<path class="bg"' "$svg")
	[ "$cells" = "$want" ] || fail "$name: $cells cells for $want block groups"
	attr_values "$svg" data-start > "$TEST_TMP/svg.starts"
	cmp -s "$TEST_TMP/bg.starts" "$TEST_TMP/svg.starts" ||
		fail "$name: the cells' data-start differ from the block groups' starts"
	[ "$(grep -c '<path class="bg"[^>]*><title>' "$svg")" = "$want" ] ||
		fail "$name: not one tooltip per cell"
	grep -q '<pattern id="ro-hatch"' "$svg" || fail "$name: no hatch pattern for read-only"

	jq -e --argjson n "$want" '
		.map.block_groups == $n and .svg.cells == $n and
		([.types[].block_groups] | add) == $n and
		([.fill[].block_groups] | add) == $n and
		([.types[].length] | add) == .map.length and
		([.fill[].used] | add) == .map.used and
		(.fill | length) == 10' "$TEST_TMP/map.json" > /dev/null ||
		fail "$name: the JSON summary does not add up: $(jq -c '{map, svg}' "$TEST_TMP/map.json")"
	fsid=$(jq -r .map.fsid "$TEST_TMP/map.json")
	grep -q "<text class=\"title\"[^>]*>Block groups of $fsid" "$svg" ||
		fail "$name: the title lacks the fsid $fsid"
	check_devices "$name" "$svg" "$TEST_TMP/map.json"
	check_units "$name" "$svg" "${imgs[@]}"
	check_whole_cells "$name" "$svg" "$TEST_TMP/map.json"
	echo "$name: $cells cells, $(stat -c %s "$svg") bytes"
	nr_fixtures=$((nr_fixtures + 1))
done

echo "$nr_fixtures fixtures: devices tiled by their segments; raw totals equal to btrfs fi usage on $nr_usage; $nr_wrapped cells longer than a row in two pieces, marked"
[ "$nr_wrapped" -gt 0 ] || fail "no fixture has a block group in two pieces: the wrap marks are not checked"

# --- the units of the subtitle on RAID1: logical with logical, raw with raw ----

mapfile -t imgs < <(unpack raid1-2dev) || exit
run_check_stdout "$BTRFS_SPACE" -b --format json map "${imgs[@]}" > "$TEST_TMP/r1.json"
run_check "$BTRFS_SPACE" -b map --svg "$TEST_TMP/r1.svg" "${imgs[@]}" > /dev/null
# every block group is RAID1: two copies, so raw is twice the logical length
jq -e '.raw.stripes == 2 * .map.length' "$TEST_TMP/r1.json" > /dev/null ||
	fail "raid1-2dev: raw stripes are not twice the logical length: $(jq -c '{raw, map}' "$TEST_TMP/r1.json")"
logical=$(jq .map.length "$TEST_TMP/r1.json")
grep -q "Logical: 5 block groups of ${logical} in all" "$TEST_TMP/r1.svg" ||
	fail "raid1-2dev: the logical subtitle lacks ${logical}"
grep -q "Raw, on 2 devices: $(jq .raw.allocated "$TEST_TMP/r1.json") allocated of $(jq .raw.size "$TEST_TMP/r1.json")" "$TEST_TMP/r1.svg" ||
	fail "raid1-2dev: the raw subtitle does not compare raw with raw"
echo "raid1-2dev: logical ${logical}, raw $(jq .raw.stripes "$TEST_TMP/r1.json"), each compared with its own kind"

# --- standard output -------------------------------------------------------------

run_check_stdout "$BTRFS_SPACE" map --svg - "${imgs[@]}" > "$TEST_TMP/stdout.svg"
well_formed "$TEST_TMP/stdout.svg"
[ ! -e ./- ] || fail "--svg - created a file named -"
run_check "$BTRFS_SPACE" -b map --svg "$TEST_TMP/file.svg" "${imgs[@]}" > /dev/null
run_check_stdout "$BTRFS_SPACE" -b map --svg - "${imgs[@]}" > "$TEST_TMP/stdout.svg"
cmp -s "$TEST_TMP/stdout.svg" "$TEST_TMP/file.svg" ||
	fail "--svg - is not the map --svg FILE writes, alone"
# into a file first: a reader that stops early (head) would end the tool by SIGPIPE
run_check_stdout "$BTRFS_SPACE" --format json map --svg - "${imgs[@]}" > "$TEST_TMP/json-stdout.svg"
head -c 5 "$TEST_TMP/json-stdout.svg" | grep -q '^<svg\|^<?xml' ||
	fail "--format json --svg -: standard output does not start with the SVG"
# standard output appending to an input: refused, the input left as it was
cp --sparse=always "${imgs[0]}" "$TEST_TMP/copy.img" || fail "cp failed"
before=$(image_digest "$TEST_TMP/copy.img")
run_mustfail_code 2 "--svg - onto an input" \
	bash -c '"$0" map --svg - "$1" "$2" >> "$1"' "$BTRFS_SPACE" "$TEST_TMP/copy.img" "${imgs[1]}"
[ "$(image_digest "$TEST_TMP/copy.img")" = "$before" ] || fail "--svg - wrote onto an input"
echo "--svg -: the map alone on standard output, refused onto an input"

# --- many block groups: merged cells, bounded --------------------------------

mapfile -t imgs < <(unpack many-bgs-1t) || exit
want=$(run_check_stdout "$BTRFS_SPACE" --format json map "${imgs[@]}" | jq .map.block_groups)
for max in 16 3 1; do
	svg=$TEST_TMP/max$max.svg
	run_check "$BTRFS_SPACE" map --max-cells "$max" --svg "$svg" "${imgs[@]}" > /dev/null
	well_formed "$svg"
	cells=$(grep -c '<path class="bg"' "$svg")
	sum=$(attr_values "$svg" data-count | awk '{ n += $1 } END { print n }')
	[ "$cells" -le "$max" ] || fail "--max-cells $max: $cells cells"
	[ "$sum" = "$want" ] || fail "--max-cells $max: the cells hold $sum block groups, not $want"
	grep -q "$want block groups drawn as $cells cells" "$svg" ||
		fail "--max-cells $max: no note that block groups were merged"
	echo "--max-cells $max: $want block groups in $cells cell(s)"
done
run_mustfail_code 2 "--max-cells 0" "$BTRFS_SPACE" map --max-cells 0 --svg "$TEST_TMP/x.svg" "${imgs[0]}"
run_mustfail_code 2 "--max-cells too large" "$BTRFS_SPACE" map --max-cells 65537 "${imgs[0]}"

# --- never over an input ------------------------------------------------------

# its own unpacked copy: hard links and symlinks to it are made below
rm -rf "$TEST_TMP/img"
img=$(unpack_image "$fixtures/ns16k-1g.tar.xz" "$TEST_TMP/img") || exit
sum_before=$(image_digest "$img")
ln "$img" "$TEST_TMP/hardlink.img" || fail "ln failed"
ln -s "$img" "$TEST_TMP/symlink.img" || fail "ln -s failed"
for out in "$img" "$TEST_TMP/hardlink.img" "$TEST_TMP/symlink.img"; do
	run_mustfail_code 2 "--svg is the input" "$BTRFS_SPACE" map --svg "$out" "$img"
done
[ "$(image_digest "$img")" = "$sum_before" ] || fail "an input was modified"
echo "the input itself, a hard link and a symlink to it are refused"

if [ "$(id -u)" -eq 0 ] && command -v losetup > /dev/null 2>&1; then
	scratch=$TEST_TMP/scratch.bin
	head -c 1048576 /dev/urandom > "$scratch" || fail "cannot make $scratch"
	scratch_sum=$(md5sum < "$scratch")
	loop=$(setup_loop "$scratch") || exit
	run_mustfail_code 2 "--svg is a block device" "$BTRFS_SPACE" map --svg "$loop" "$img"
	[ "$(md5sum < "$scratch")" = "$scratch_sum" ] || fail "the block device was written"
	echo "a block device is refused"
	# the input is a loop device (read-only): its backing file is the image
	roloop=$(losetup -r -f --show "$img") || fail "losetup -r failed"
	register_loop "$roloop"
	run_mustfail_code 2 "--svg is the backing file of a loop device given" \
		"$BTRFS_SPACE" map --svg "$img" "$roloop"
	run_mustfail_code 2 "--svg - appending to the backing file of a loop device given" \
		sh -c '"$1" map --svg - "$2" >> "$3"' sh "$BTRFS_SPACE" "$roloop" "$img"
	[ "$(image_digest "$img")" = "$sum_before" ] || fail "the loop device's backing file was written"
	echo "the backing file of a loop device given is refused"
else
	echo "not root or no losetup: the block-device refusal is not checked"
fi

# under strace: the input is opened read-only, the map write-only
if command -v strace > /dev/null 2>&1 &&
   strace -f -o /dev/null -e trace=openat true > /dev/null 2>&1; then
	trace=$TEST_TMP/strace
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		run_check strace -f -qq -o "$trace" -e trace=openat,open,creat \
		"$BTRFS_SPACE" map --svg "$TEST_TMP/traced.svg" "$img" > /dev/null
	grep -F "$(basename "$img")" "$trace" > "$TEST_TMP/opens" ||
		fail "strace shows no open of the image"
	if grep -E 'O_WRONLY|O_RDWR|O_CREAT|O_TRUNC' "$TEST_TMP/opens"; then
		fail "map opened the image for writing"
	fi
	grep -F traced.svg "$trace" | grep -q O_WRONLY || fail "strace shows no open of the map"
	echo "strace: the image opened read-only, the map write-only"
else
	echo "strace not available or not permitted: open flags not checked"
fi

# an existing file is truncated, not overwritten in place
out=$TEST_TMP/old.svg
head -c 1000000 /dev/zero | tr '\0' 'x' > "$out"
run_check "$BTRFS_SPACE" map --svg "$out" "$img" > /dev/null
[ "$(stat -c %s "$out")" -lt 100000 ] || fail "the old content of $out was kept"
well_formed "$out"
run_mustfail "a folder that does not exist" "$BTRFS_SPACE" map --svg "$TEST_TMP/no/such/dir/x.svg" "$img"

# --- read-only block groups are hatched ----------------------------------------

if "$BTRFS_SPACE" map --help | grep -q -- '--readonly-device'; then
	svg=$TEST_TMP/ro.svg
	run_check "$BTRFS_SPACE" map --readonly-device 1 --svg "$svg" "$img" > /dev/null
	well_formed "$svg"
	cells=$(grep -c '<path class="bg"' "$svg")
	hatched=$(grep -c '<path class="ro"' "$svg")
	[ "$hatched" = "$cells" ] || fail "read-only device: $hatched of $cells cells hatched"
	grep -q 'read-only</title>' "$svg" || fail "read-only device: the tooltips do not say read-only"
	stripes=$(grep -c '<path class="dev"' "$svg")
	dev_hatched=$(grep -c '<path class="dev-ro"' "$svg")
	[ "$dev_hatched" = "$stripes" ] ||
		fail "read-only device: $dev_hatched of its $stripes stripe segments hatched"
	echo "read-only: $hatched of $cells cells and $dev_hatched of $stripes device segments hatched"
else
	echo "no --readonly-device: the hatching of read-only block groups is not checked"
fi

# --- rendering in a headless browser ---------------------------------------------

chrome=
for c in chromium chromium-browser google-chrome; do
	command -v "$c" > /dev/null 2>&1 && { chrome=$c; break; }
done
if [ -z "$chrome" ]; then
	echo "rendering skipped: install chromium (tests/install-deps.sh installs it, or apt-get install chromium)"
	echo "$nr_fixtures fixtures mapped, rendering not checked"
	exit 0
fi
# three browser starts and screenshots decoded in python: 10 to 20 s of CPU
if [ "${QUICK:-}" = 1 ]; then
	echo "QUICK=1: rendering in $chrome left to make check"
	echo "$nr_fixtures fixtures mapped, rendering not checked"
	exit 0
fi
check_prereq python3

# png_check PNG COLOUR...: 1200x900, and the share of pixels near each colour
# (#rrggbb, within 12 of each component), in percent
png_check()
{
	png_colours --size 1200x900 --tolerance 12 "$@"
}

# render NAME: the fixture's SVG as $TEST_TMP/NAME.png
render()
{
	local png=$TEST_TMP/$1.png
	rm -f "$png"
	_bs_log_cmd render "$chrome" --screenshot="$png" "file://$TEST_TMP/$1.svg"
	timeout 120 "$chrome" --headless --disable-gpu --no-sandbox --hide-scrollbars \
		--user-data-dir="$TEST_TMP/chrome-profile" --screenshot="$png" \
		--window-size=1200,900 "file://$TEST_TMP/$1.svg" > "$TEST_TMP/chrome.log" 2>&1
	if [ ! -s "$png" ]; then
		tail -5 "$TEST_TMP/chrome.log"
		fail "$chrome wrote no screenshot of $1.svg"
	fi
}

# a full data block group is #174a8c: most of a filesystem full of data
render many-bgs-1t
size=$(stat -c %s "$TEST_TMP/many-bgs-1t.png")
[ "$size" -gt 15000 ] || fail "many-bgs-1t.png: $size bytes, too small for the map"
share=$(png_check "$TEST_TMP/many-bgs-1t.png" '#174a8c' '#ffffff' | tr '\n' ' ') ||
	fail "many-bgs-1t.png: cannot read it"
read -r blue white <<< "$share"
awk -v b="$blue" -v w="$white" 'BEGIN { exit !(b > 30 && w > 10) }' ||
	fail "many-bgs-1t.png: $blue% full-data blue, $white% white; not the map expected"
echo "rendered many-bgs-1t: $size bytes, $blue% full-data blue, $white% white"

# an almost empty filesystem: light cells of the three types, no dark blue
render ns16k-1g
share=$(png_check "$TEST_TMP/ns16k-1g.png" '#174a8c' '#d6e6f7' '#fde3c4' '#d4eed2' |
	tr '\n' ' ') || fail "ns16k-1g.png: cannot read it"
read -r dark data meta sys <<< "$share"
awk -v d="$dark" -v a="$data" -v m="$meta" -v s="$sys" \
	'BEGIN { exit !(d < 0.5 && a > 0.5 && m > 2 && s > 0.5) }' ||
	fail "ns16k-1g.png: dark $dark%, empty data $data%, metadata $meta%, system $sys%"
echo "rendered ns16k-1g: empty data $data%, metadata $meta%, system $sys% of the window"

# two devices with unallocated space: the grey bars, and the cells above them
render raid1-2dev
share=$(png_check "$TEST_TMP/raid1-2dev.png" '#f2f2f2' '#6086b5' '#fde2c3' | tr '\n' ' ') ||
	fail "raid1-2dev.png: cannot read it"
read -r free data meta <<< "$share"
awk -v f="$free" -v d="$data" -v m="$meta" 'BEGIN { exit !(f > 1 && d > 3 && m > 1) }' ||
	fail "raid1-2dev.png: unallocated grey $free%, half-full data $data%, metadata $meta%"
echo "rendered raid1-2dev: unallocated $free%, data $data%, metadata $meta% of the window"

echo "$nr_fixtures fixtures mapped; maps rendered by $chrome in $TEST_TMP"
exit 0
