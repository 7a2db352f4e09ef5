#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Mutants of what backref.c's sharedness walk reads, on the fixture of
# fuzz template 12 (tests/fixtures/fuzz/snap-shared.tar.xz): one block
# changed by tree-mutants.py, then "inspect" in text and JSON.  Prints per
# mutant the exit status of both, whether the delete-data remedy's files
# were read, its shared bytes and the first line of stderr (or, when the
# files were not read, the JSON's files_error).
#
# usage: tests/fuzz/backref-mutants.sh [BTRFS_SPACE [WRAPPER...]]
#   (WRAPPER: e.g. valgrind -q --error-exitcode=99)
# Blocks (the image's layout, from btrfs inspect-internal dump-tree):
#   22249472  extent tree leaf, item 66: EXTENT_ITEM 15462400 (12 KiB, gen 7)
#             with one inline EXTENT_DATA_REF (root 256, inode 406, offset
#             0, count 1), not shared: the walk starts from it
#   106954752 extent tree leaf, item 61: METADATA_ITEM of 6193152 (refs 2:
#             subvolume 256's leaf shared uncopied with snapshot 257)
#   6193152   subvolume 256's leaf, item 62: EXTENT_DATA (406, 0)
#   7733248   subvolume 256's root node (level 1)
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BTRFS_SPACE=${1:-$TOP/btrfs-space}
shift $(($# > 0 ? 1 : 0))
WRAP=("$@")
work=$(mktemp -d "${TMPDIR:-/tmp}/backref-mutants.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xSJf "$TOP/tests/fixtures/fuzz/snap-shared.tar.xz" -C "$work"
img=$work/snap-shared.img
"$BTRFS_SPACE" --format json chunks --list-chunks "$img" > "$work/chunks.json" || exit 1

EXT=22249472 META=106954752 LEAF=6193152 NODE=7733248
# name block mutation
MUTANTS="
none                 $EXT  -
ref-count-0          $EXT  item-field=66,49,4,0
ref-count-huge       $EXT  item-field=66,49,4,0xffffffff
ref-count-2          $EXT  item-field=66,49,4,2
ref-missing-inode    $EXT  item-field=66,33,8,999999
ref-inode-max        $EXT  item-field=66,33,8,0xffffffffffffffff
ref-missing-root     $EXT  item-field=66,25,8,999
ref-root-snapshot    $EXT  item-field=66,25,8,257
ref-offset-overflow  $EXT  item-field=66,41,8,0xfffffffffffff000
ref-offset-max       $EXT  item-field=66,41,8,0xffffffffffffffff
extent-refs-0        $EXT  item-field=66,0,8,0
extent-refs-huge     $EXT  item-field=66,0,8,0xffffffffffffffff
extent-gen-0         $EXT  item-field=66,8,8,0
extent-gen-huge      $EXT  item-field=66,8,8,0xffffffffffffffff
leaf-refs-0          $META item-field=61,0,8,0
leaf-refs-1          $META item-field=61,0,8,1
leaf-refs-huge       $META item-field=61,0,8,0xffffffffffffffff
leaf-flags-0         $META item-field=61,16,8,0
leaf-flags-data      $META item-field=61,16,8,1
fi-bytenr-0          $LEAF item-field=62,21,8,0
fi-offset-overflow   $LEAF item-field=62,37,8,0xfffffffffffff000
fi-type-inline       $LEAF item-field=62,20,1,0
fi-type-bad          $LEAF item-field=62,20,1,7
leaf-size-past-end   $LEAF item-size-past-end
leaf-overlap         $LEAF item-overlap
leaf-nritems-huge    $LEAF nritems-huge
leaf-generation      $LEAF generation
leaf-owner           $LEAF owner
leaf-level           $LEAF child-level
node-self-pointer    $NODE self-pointer
node-ptr-generation  $NODE ptr-generation
node-nritems-huge    $NODE nritems-huge
node-level           $NODE child-level
"
printf '%-20s %4s %4s %5s %9s  %s\n' mutant text json files shared stderr
echo "$MUTANTS" | while read -r name block what; do
	[ -n "$name" ] || continue
	m=$work/m.img
	cp --sparse=always "$img" "$m"
	if [ "$what" != - ]; then
		python3 "$TOP/tests/fuzz/tree-mutants.py" "$img" "$work/chunks.json" "$block" "$what" "$m" ||
			{ echo "$name: no mutant"; continue; }
	fi
	timeout 60 "${WRAP[@]}" "$BTRFS_SPACE" inspect "$m" > "$work/out.txt" 2> "$work/err.txt"
	rt=$?
	timeout 60 "${WRAP[@]}" "$BTRFS_SPACE" --format json inspect "$m" > "$work/out.json" 2> "$work/err.json"
	rj=$?
	files=- shared=-
	if [ "$rj" = 0 ]; then
		files=$(jq '[.summary.remedies[].effect | select(.block_group) | .files.count] | first' "$work/out.json")
		shared=$(jq '[.summary.remedies[].effect | select(.block_group) | .files.shared_bytes] | first' "$work/out.json")
		why=$(jq -r '[.summary.remedies[].effect | select(.block_group) | .files_error // empty] | first // empty' "$work/out.json")
		[ -z "$why" ] || echo "$work/err.txt: files not read: $why" >> "$work/err.txt"
	fi
	grep -q -E 'nan|inf\b' "$work/out.txt" && echo "$name: nan or inf printed"
	printf '%-20s %4s %4s %5s %9s  %s\n' "$name" "$rt" "$rj" "$files" "$shared" \
		"$(head -1 "$work/err.txt" | sed "s|^$work/err.txt: ||" | cut -c1-170)"
	[ "$(grep -c -v '^/' "$work/err.txt")" -le 1 ] || echo "$name: $(wc -l < "$work/err.txt") lines of stderr"
done
