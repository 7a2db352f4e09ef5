#!/bin/bash
# map shows dead space: on RAID1 over 1, 2 and 5 GiB (mkfs.btrfs on sparse
# files, nothing mounted) each device's "dead" and "metadata_only" in the
# JSON must be forecast's data_fill unallocatable_hard and _soft (2 GiB of
# the 5 GiB device and the first MiB of each, kernel test 052's figures),
# the text must say why, and the SVG must hatch exactly those bytes: its
# class="dead" pieces of a device add up to the device's dead and
# metadata-only bytes, the first MiB at offset 0 and the rest ending at the
# device's size, with the legend naming the profiles.  On single data with
# DUP metadata only the first MiB is dead.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space mkfs.btrfs jq truncate python3

dir=$TEST_TMP/raid1
mkdir -p "$dir" || fail "mkdir"
truncate -s 1G "$dir/d1.img" && truncate -s 2G "$dir/d2.img" && truncate -s 5G "$dir/d3.img" ||
	fail "truncate"
mkfs.btrfs -q -f -d raid1 -m raid1 "$dir"/d{1,2,3}.img > /dev/null 2>&1 || fail "mkfs.btrfs"
devs=("$dir"/d1.img "$dir"/d2.img "$dir"/d3.img)

map=$(run_check_stdout "$BTRFS_SPACE" --format json map "${devs[@]}") || exit
fc=$(run_check_stdout "$BTRFS_SPACE" --format json forecast "${devs[@]}") || exit
got=$(jq -c '[.devices[] | [.devid, .dead, .metadata_only]]' <<< "$map")
want=$(jq -c '.forecast.data_fill as $f | [$f.unallocatable_hard | keys[] | tonumber] | sort |
	map([., $f.unallocatable_hard[tostring], $f.unallocatable_soft[tostring]])' <<< "$fc")
[ "$got" = "$want" ] || fail "map devices $got, forecast $want"
[ "$got" = "[[1,1048576,0],[2,1048576,0],[3,2149580800,0]]" ] || fail "not kernel test 052's figures: $got"
echo "ok: dead per device $got, as the forecast"

text=$(run_check_stdout "$BTRFS_SPACE" map "${devs[@]}") || exit
grep -q "devid 3 .* dead 2.00GiB" <<< "$text" || fail "the text does not give devid 3's dead space"
grep -q "Dead: .*neither a data (raid1) nor a metadata (raid1) chunk" <<< "$text" ||
	fail "the text does not say why"
echo "ok: the text says it"

run_check "$BTRFS_SPACE" map --svg "$dir/map.svg" "${devs[@]}"
python3 - "$dir/map.svg" <<'PY' || fail "the SVG does not hatch the dead space"
import re, sys
svg = open(sys.argv[1]).read()
dead = {}
for m in re.finditer(r'<path class="dead"[^>]*data-devid="(\d+)" data-physical="(\d+)" data-length="(\d+)"', svg):
    d, p, l = int(m.group(1)), int(m.group(2)), int(m.group(3))
    dead.setdefault(d, []).append((p, l))
print("dead pieces:", dead)
assert dead[1] == [(0, 1048576)] and dead[2] == [(0, 1048576)], dead
assert dead[3] == [(0, 1048576), (5368709120 - 2148532224, 2148532224)], dead
assert "red hatch: dead, no new data (raid1) or metadata (raid1)" in svg
PY
echo "ok: the SVG hatches the first MiB of each device and the top 2 GiB of devid 3"

rm -f "${devs[@]}"
truncate -s 2G "$dir/s.img" || fail "truncate"
mkfs.btrfs -q -f -d single -m dup "$dir/s.img" > /dev/null 2>&1 || fail "mkfs.btrfs"
got=$("$BTRFS_SPACE" --format json map "$dir/s.img" | jq -c '[.devices[] | [.dead, .metadata_only]]')
[ "$got" = "[[1048576,0]]" ] || fail "single/DUP: $got"
echo "ok: single data, DUP metadata: only the first MiB is dead"
