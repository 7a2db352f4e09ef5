#!/bin/bash
# Which empty metadata block groups a fresh nodiscard mount deletes
# (formulas.md 21.4).  The cleaner's btrfs_delete_unused_bgs() makes the
# group it deletes read-only, and its transaction's tree blocks go to the
# first cached group of the metadata list with room: the mount cached the
# empty groups, the partly used ones start caching only then.  So the
# first empty metadata group other than the first deleted one takes them
# and stays.  Main (52e199c) had forecast --mount-options nodiscard delete
# every empty metadata group but the last of the list: on "meta" (two
# empty 112 MiB DUP groups) both, data 469,762,048 bytes, where 6.18.44
# deleted one and data wrote 234,881,024.  Two cases, each 1 GiB
# single/DUP, the groups emptied and the filesystem unmounted at once:
#   meta       metadata grown by 22,000 xattrs and emptied, data filled;
#              the first deletion is a metadata group, the next one stays
#   data-meta  data preallocated, then the xattrs, all deleted; the first
#              deletion is a data group, the first empty metadata group
#              stays; the dev tree's one leaf, alone in a 106 MiB metadata
#              group, is copied by that deletion: the group is empty at its
#              commit and the next cleaner pass deletes it (main, 80dc5d8:
#              not forecast, data 490,733,568 where 6.18.44 wrote
#              713,687,040)
# Checked on a copy mounted -o nodiscard,commit=5: the groups removed
# (tracepoint btrfs_remove_block_group, fsid filtered: those the mount
# found empty and those the first deletions' commit emptied; the test
# waits for as many removals as forecast) are the forecast's,
# the kept one is skipped (btrfs_skip_unused_block_group), and the data
# fill after them writes what the forecast says (less at most 1 MiB).
# About 1 min.
source "$TEST_TOP/common" || exit

source "$TOP/tests/kernel-tests/070-summary-levels/lib.sh" || exit
need_tracefs
setup_trace_instance nodiscard-tb

# detach DEV: as release(), which would unmount the tracefs too
detach()
{
	btrfs device scan --forget "$1" > /dev/null 2>&1
	losetup -d "$1" || fail "losetup -d $1"
}

# make_case NAME DIR: the filesystem of case NAME in DIR/dev0.img
make_case()
{
	local img=$2/dev0.img dev
	truncate -s 1G "$img" || fail "truncate"
	mkfs.btrfs -q -f -d single -m dup "$img" > /dev/null 2>&1 || fail "mkfs.btrfs"
	dev=$(setup_loop "$img") || exit
	mount_devs "$dev"
	[ "$1" = data-meta ] && { fallocate -l 300M "$mnt/data" || fail "fallocate"; }
	mkdir "$mnt/x" || fail "mkdir"
	python3 "$fills/xattr-fill.py" "$mnt/x" 22000 > /dev/null || fail "xattr-fill.py"
	rm -rf "$mnt/x" "$mnt/data"
	umount "$mnt" || fail "umount"
	if [ "$1" = meta ]; then
		mount_devs "$dev"
		python3 "$fills/fill.py" "$mnt" > /dev/null || fail "fill.py"
		umount "$mnt" || fail "umount"
	fi
	detach "$dev"
}

# events NAME [first]: the block group starts of event NAME for this
# filesystem; first: only those before the cleaner's first decision (the
# mount's: the groups it found empty; its task name may show as <...>)
events()
{
	grep "$fsid" "$dir/trace" |
		if [ "$2" = first ]; then
			sed '/ btrfs_\(remove_block_group\|skip_unused_block_group\): /,$d'
		else
			cat
		fi | grep " $1: " |
		sed -n 's/.* bg bytenr=\([0-9]*\) .*/\1/p' | sort -n | tr '\n' ' '
}

check_case()
{
	local name=$1 pred kept want dev t removed skipped filled found later
	dir=$TEST_TMP/$name
	mkdir -p "$dir"
	make_case "$name" "$dir"
	"$BTRFS_SPACE" --format json forecast --mount-options nodiscard,commit=5 \
		"$dir/dev0.img" > "$dir/forecast.json" || fail "forecast"
	pred=$(jq -r '[.forecast.unused_block_groups[].start] | sort | map(tostring) |
		join(" ")' "$dir/forecast.json")
	kept=$(jq -r '.forecast.mount.tree_block_group // "none"' "$dir/forecast.json")
	want=$(jq '.forecast.data_fill.writable_bytes' "$dir/forecast.json")
	fsid=$(blkid -s UUID -o value "$dir/dev0.img") || fail "blkid"

	dev=$(setup_loop "$dir/dev0.img") || exit
	: > "$inst/trace"
	echo 1 > "$inst/events/btrfs/btrfs_remove_block_group/enable"
	echo 1 > "$inst/events/btrfs/btrfs_skip_unused_block_group/enable"
	echo 1 > "$inst/events/btrfs/btrfs_add_unused_block_group/enable"
	echo 1 > "$inst/tracing_on"
	setup_mount "$dev" "$mnt" -o nodiscard,commit=5
	for ((t = 0; t < 60; t++)); do
		cat "$inst/trace" > "$dir/trace"
		[ "$(events btrfs_remove_block_group | wc -w)" -ge "$(wc -w <<< "$pred")" ] &&
			[ -n "$pred" ] && break
		sleep 1
	done
	sleep 6	# one more cleaner pass: nothing else goes
	echo 0 > "$inst/tracing_on"
	cat "$inst/trace" > "$dir/trace"
	removed=$(events btrfs_remove_block_group)
	skipped=$(events btrfs_skip_unused_block_group)
	found=$(events btrfs_add_unused_block_group first)
	later=$(for w in $removed; do grep -qw "$w" <<< "$found" || echo -n "$w "; done)
	mkdir "$mnt/measure" || fail "mkdir"
	filled=$(python3 "$fills/fill.py" "$mnt/measure") || fail "fill.py"
	umount "$mnt" || fail "umount"
	detach "$dev"
	echo "    $name: of the empty [${found% }], removed [${removed% }] (forecast [$pred])" \
		"after ${t} s; skipped [${skipped% }] (forecast kept $kept);" \
		"data filled $filled (forecast $want)"
	[ "${removed% }" = "$pred" ] || failed="$failed $name:removed"
	[ "$kept" = none ] || grep -qw "$kept" <<< "$skipped" || failed="$failed $name:kept"
	[ -z "$later" ] || echo "    $name: [${later% }] emptied by the deletions' commit, removed" \
		"at the cleaner's next pass"
	if ! [ "$filled" -le "$want" ] || ! [ "$filled" -ge $((want - 1048576)) ]; then
		failed="$failed $name:data-fill"
	fi
}

check_case meta
check_case data-meta
[ -z "$failed" ] || fail "the tool disagrees with the kernel in:$failed"
