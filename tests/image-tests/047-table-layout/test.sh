#!/bin/bash
# The text tables of "chunks", "block-groups" and inspect's devices on
# fixtures with one to four devices (single, DUP, mixed, RAID10 with four
# stripes per chunk, RAID5): check-table.py reads each table
# by its dashed rule line and fails when a cell leaves its column, a number
# is not right-aligned, a line is over 120 characters, or a cell differs
# from the JSON of the same run (one line per chunk stripe, the type and
# profile spelled "Data, RAID1" where JSON keeps "DATA" and "raid1"). The
# JSON keeps the sysfs names. In human units the columns hold as well.
# The tables of every item (--list-chunks, --list-block-groups); the runs'
# are cli-tests/009-list-runs'.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar python3

names="ns16k-1g mixed-256m raid10-4dev raid5-3dev"
bad=0
for name in $names; do
	dir=$TEST_TMP/$name
	mapfile -t devs < <(fixture_images "$name" "$dir")
	[ ${#devs[@]} -gt 0 ] || fail "fixture $name: no device files"
	for what in chunks block-groups devices; do
		cmd=$what
		[ "$what" = devices ] && cmd=inspect
		# shellcheck disable=SC2046
		run_check_stdout "$BTRFS_SPACE" -b "$cmd" $(list_each "$cmd") "${devs[@]}" \
			> "$dir/$what.txt" || exit
		# shellcheck disable=SC2046
		run_check_stdout "$BTRFS_SPACE" --format json "$cmd" $(list_each "$cmd") "${devs[@]}" \
			> "$dir/$what.json" || exit
		echo -n "$name: "
		python3 ./check-table.py "$what" "$dir/$what.txt" "$dir/$what.json" || bad=$((bad + 1))
	done
	# JSON: the sysfs names, never the progs spelling
	names_json=$(jq -r '[.chunks[] | .type_name + "/" + .profile] | unique | join(" ")' "$dir/chunks.json")
	grep -qE '^((DATA|METADATA|SYSTEM|DATA\+METADATA)/(single|dup|raid[0-9c]+) ?)+$' <<< "$names_json" ||
		fail "$name: chunks JSON type/profile not the sysfs names: $names_json"
done
[ "$bad" = 0 ] || fail "$bad table(s) with problems (listed above)"

# human units (16.00MiB): the same columns, sizes right-aligned too
dir=$TEST_TMP/raid10-4dev
for what in chunks block-groups; do
	# shellcheck disable=SC2046
	run_check_stdout "$BTRFS_SPACE" "$what" $(list_each "$what") "$dir"/raid10-4dev.dev*.img \
		> "$dir/$what.human" || exit
	python3 ./check-table.py "$what" "$dir/$what.human" "$dir/$what.json" layout ||
		fail "$what in human units: columns broken (listed above)"
done
echo "all tables aligned and equal to the JSON"
