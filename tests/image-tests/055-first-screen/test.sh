#!/bin/bash
# The first screen of "inspect" (formulas.md section 19) on every shipped
# fixture, as it is and with its first device read-only (every type
# critical, the most lines): the lines before the first blank line are at
# most 20, none wider than 80 columns, and the first one names the worst
# finding of the JSON of the same run ("LEVEL: WHAT: ..."), or begins
# with "ok:" when there is none. The lines "Before ENOSPC", one per space
# info, "Dead space" and "Mount time" are there, and no dead-space part of
# 0 bytes ("0.00B hard"); so too on a fresh RAID5 over unequal devices.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar

bad=0
checked=0
# check_screen NAME TEXT JSON: the rules above, one line per problem
check_screen()
{
	local name=$1 text=$2 json=$3 screen lines wide first want type
	screen=$(sed '/^$/q' "$text" | sed '$d')
	lines=$(wc -l <<< "$screen")
	[ "$lines" -le 20 ] || { echo "$name: first screen has $lines lines"; return 1; }
	wide=$(awk 'length > 80 { print NR ": " length }' <<< "$screen")
	[ -z "$wide" ] || { echo "$name: lines over 80 columns: $wide"; return 1; }
	first=$(head -n 1 <<< "$screen")
	want=$(jq -r 'if (.summary.findings | length) > 0
		then .summary.findings[0].level + ": " + .summary.findings[0].what + ":"
		else "ok:" end' "$json") || return 1
	[ "$(jq -r .summary.level "$json")" = "${want%%:*}" ] ||
		{ echo "$name: JSON level $(jq -r .summary.level "$json") is not its first finding's"; return 1; }
	[[ "$first" == "$want"* ]] || { echo "$name: first line '$first', not '$want ...'"; return 1; }
	grep -q '^Before ENOSPC' <<< "$screen" || { echo "$name: no 'Before ENOSPC' line"; return 1; }
	for type in $(jq -r '.summary.space | keys[]' "$json"); do
		grep -qE "^    $type " <<< "$screen" || { echo "$name: no line for $type"; return 1; }
	done
	grep -q '^Dead space' <<< "$screen" || { echo "$name: no dead space line"; return 1; }
	grep -q '^Mount time: ' <<< "$screen" || { echo "$name: no mount time line"; return 1; }
	# a dead-space part of 0 bytes is left out, not printed with its why
	! grep -q ': 0\.00B hard' <<< "$screen" ||
		{ echo "$name: '0.00B hard' on a dead space line"; return 1; }
	# a device add names how many devices to add: at least one
	[ "$(jq '[.summary.remedies[].effect | select(has("device_size")) |
		select((.device_count // 0) < 1)] | length' "$json")" = 0 ] ||
		{ echo "$name: a device add remedy without a device_count of 1 or more"; return 1; }
	echo "$name: $lines lines, first: ${first:0:60}"
}

for archive in "$TEST_TOP"/fixtures/*.tar.xz; do
	name=$(basename "$archive" .tar.xz)
	dir=$TEST_TMP/$name
	mapfile -t devs < <(fixture_images "$name" "$dir")
	[ ${#devs[@]} -gt 0 ] || fail "fixture $name: no device files"
	for variant in plain readonly; do
		opts=()
		[ "$variant" = readonly ] && opts=(--readonly-device 1)
		run_check_stdout "$BTRFS_SPACE" inspect "${opts[@]}" "${devs[@]}" > "$dir/$variant.txt" || exit
		run_check_stdout "$BTRFS_SPACE" --format json inspect "${opts[@]}" "${devs[@]}" \
			> "$dir/$variant.json" || exit
		check_screen "$name ($variant)" "$dir/$variant.txt" "$dir/$variant.json" || bad=$((bad + 1))
		checked=$((checked + 1))
	done
done
# RAID5 data and RAID1C3 metadata over 1, 1, 2 and 2 GiB (mkfs.btrfs on
# sparse files): devids 3 and 4 have space only data's profile can use and
# none that no profile can
if command -v mkfs.btrfs > /dev/null && command -v truncate > /dev/null; then
	dir=$TEST_TMP/raid5-unequal
	mkdir -p "$dir"
	truncate -s 1G "$dir/d1.img" "$dir/d2.img" || fail "truncate"
	truncate -s 2G "$dir/d3.img" "$dir/d4.img" || fail "truncate"
	mkfs.btrfs -q -f -d raid5 -m raid1c3 "$dir"/d{1,2,3,4}.img > /dev/null 2>&1 ||
		fail "mkfs.btrfs"
	run_check_stdout "$BTRFS_SPACE" inspect "$dir"/d{1,2,3,4}.img > "$dir/plain.txt" || exit
	run_check_stdout "$BTRFS_SPACE" --format json inspect "$dir"/d{1,2,3,4}.img \
		> "$dir/plain.json" || exit
	check_screen "raid5-unequal" "$dir/plain.txt" "$dir/plain.json" || bad=$((bad + 1))
	grep -q "^Dead space, devid 3: [0-9.]*MiB only data's profile can use$" "$dir/plain.txt" ||
		{ echo "raid5-unequal: no soft-only dead space line for devid 3"; bad=$((bad + 1)); }
	checked=$((checked + 1))
else
	echo "raid5-unequal: not run: no mkfs.btrfs (apt-get install btrfs-progs)"
fi
[ "$checked" -ge 40 ] || fail "only $checked fixture runs checked"
[ "$bad" = 0 ] || fail "$bad of $checked first screens break the rules (listed above)"
echo "first screens: $checked fixture runs within 20 lines of 80 columns, worst finding first"
