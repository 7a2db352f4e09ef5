#!/bin/bash
# "map --svg": on every fixture the SVG is well-formed XML with one cell
# (<path class="bg">) per block group, in the order and with the starts that
# "block-groups" gives, and the text/JSON summary adds up.  Past --max-cells
# the cells are merged but still cover every block group.  The output must
# never land on an input (same path, hard link, symlink, a block device),
# and an existing file is truncated.  Read-only block groups are hatched
# (when --readonly-device is there to make some).  If chromium is installed
# the map is rendered headless and the PNG checked for size and for the
# colours of the cells; otherwise that part is skipped with a message.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space
check_prereq jq tar xz grep cmp

fixtures=$TEST_TOP/fixtures
ls "$fixtures"/*.tar.xz > /dev/null 2>&1 || skip "no fixtures in $fixtures"

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

# unpack NAME: the raw image paths of fixture NAME, one per line
unpack()
{
	rm -rf "$TEST_TMP/img"
	unpack_image "$fixtures/$1.tar.xz" "$TEST_TMP/img"
}

# --- every fixture: one cell per block group, in order ------------------------

nr_fixtures=0
for archive in "$fixtures"/*.tar.xz; do
	name=$(basename "$archive" .tar.xz)
	mapfile -t imgs < <(unpack "$name") || exit
	[ "${#imgs[@]}" -gt 0 ] || fail "$name: nothing unpacked"
	svg=$TEST_TMP/$name.svg

	run_check_stdout "$BTRFS_SPACE" --format json block-groups "${imgs[@]}" > "$TEST_TMP/bg.json"
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
	[ "$(grep -c '<title>' "$svg")" = "$want" ] || fail "$name: not one tooltip per cell"
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
	echo "$name: $cells cells, $(stat -c %s "$svg") bytes"
	nr_fixtures=$((nr_fixtures + 1))
done

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

mapfile -t imgs < <(unpack ns16k-1g) || exit
img=${imgs[0]}
sum_before=$(md5sum < "$img")
ln "$img" "$TEST_TMP/hardlink.img" || fail "ln failed"
ln -s "$img" "$TEST_TMP/symlink.img" || fail "ln -s failed"
for out in "$img" "$TEST_TMP/hardlink.img" "$TEST_TMP/symlink.img"; do
	run_mustfail_code 2 "--svg is the input" "$BTRFS_SPACE" map --svg "$out" "$img"
done
[ "$(md5sum < "$img")" = "$sum_before" ] || fail "an input was modified"
echo "the input itself, a hard link and a symlink to it are refused"

if [ "$(id -u)" -eq 0 ] && command -v losetup > /dev/null 2>&1; then
	scratch=$TEST_TMP/scratch.bin
	head -c 1048576 /dev/urandom > "$scratch" || fail "cannot make $scratch"
	scratch_sum=$(md5sum < "$scratch")
	loop=$(setup_loop "$scratch") || exit
	run_mustfail_code 2 "--svg is a block device" "$BTRFS_SPACE" map --svg "$loop" "$img"
	[ "$(md5sum < "$scratch")" = "$scratch_sum" ] || fail "the block device was written"
	echo "a block device is refused"
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
	echo "read-only: $hatched of $cells cells hatched"
else
	echo "no --readonly-device: the hatching of read-only block groups is not checked"
fi

# --- rendering in a headless browser ---------------------------------------------

chrome=
for c in chromium chromium-browser google-chrome; do
	command -v "$c" > /dev/null 2>&1 && { chrome=$c; break; }
done
if [ -z "$chrome" ]; then
	echo "SKIP rendering: chromium not installed (apt-get install chromium)"
	echo "$nr_fixtures fixtures mapped, rendering not checked"
	exit 0
fi
check_prereq python3

# png_check PNG: 1200x900, and print the share of pixels near each colour
# given after it (#rrggbb), in percent
png_check()
{
	python3 - "$@" <<'EOF'
import struct, sys, zlib

data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = ihdr
if (w, h) != (1200, 900):
    sys.exit("size %dx%d, not 1200x900" % (w, h))
if depth != 8 or ctype not in (2, 6) or interlace:
    sys.exit("unexpected PNG format: depth %d colour type %d" % (depth, ctype))
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, rows, i = bytearray(stride), [], 0
for _ in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1:
            line[x] = (line[x] + a) & 255
        elif f == 2:
            line[x] = (line[x] + b) & 255
        elif f == 3:
            line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[x] = (line[x] + pr) & 255
    rows.append(line)
    prev = line
for colour in sys.argv[2:]:
    want = [int(colour[k:k + 2], 16) for k in (1, 3, 5)]
    near = 0
    for line in rows:
        for x in range(0, stride, bpp):
            if all(abs(line[x + k] - want[k]) <= 12 for k in range(3)):
                near += 1
    print("%.1f" % (100.0 * near / (w * h)))
EOF
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

echo "$nr_fixtures fixtures mapped; maps rendered by $chrome in $TEST_TMP"
exit 0
