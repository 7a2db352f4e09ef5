#!/bin/bash
# Each command reads what its output needs (Documentation/btrfs-space.rst,
# "WHAT EACH COMMAND READS"), as -v counts the reads by purpose, on the
# many-bgs-1t fixture (1 TiB, 1,000 block groups in the extent tree):
# chunks reads the superblock and the chunk tree and nothing else;
# global-rsv adds the root tree and no more; csum-delete --extents N
# --extent-size S reads one superblock; inspect, which reports on the
# mount, reads the block-group search.  The figures of the lighter reads
# equal those the full open gives: the chunk list equals the block-group
# list's starts and lengths, the global reserve equals inspect's.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar

tar -xSJf "$TEST_TOP/fixtures/many-bgs-1t.tar.xz" -C "$TEST_TMP" ||
	fail "cannot unpack many-bgs-1t.tar.xz"
img=$TEST_TMP/many-bgs-1t.img
[ -f "$img" ] || fail "no $img in the fixture"

# purposes CMD...: the -v purposes that read anything, sorted, one line
purposes()
{
	"$BTRFS_SPACE" -v "$@" "$img" 2>&1 >/dev/null |
		sed -n 's/^read:     \([a-z -]*[a-z]\) \+[0-9]\+ reads,.*/\1/p' | sort | paste -sd,
}

expect_purposes()
{
	local want=$1 got
	shift
	got=$(purposes "$@")
	[ "$got" = "$want" ] || fail "$*: read '$got', expected '$want'"
	echo "$*: reads $got"
}

expect_purposes "chunk tree,superblock" chunks
expect_purposes "chunk tree,root tree,superblock" global-rsv
expect_purposes "superblock" csum-delete --extents 4 --extent-size 128K
got=$(purposes inspect)
case ",$got," in
*",block-group search,"*) echo "inspect: reads $got" ;;
*) fail "inspect: read '$got', expected the block-group search among them" ;;
esac

chunks=$("$BTRFS_SPACE" --format json chunks --list-chunks "$img" |
	jq -c "[.chunks[] | [.logical, .length]]") ||
	fail "chunks --format json failed"
bgs=$("$BTRFS_SPACE" --format json block-groups --list-block-groups "$img" |
	jq -c "[.block_groups[] | [.start, .length]]") ||
	fail "block-groups --format json failed"
[ "$chunks" = "$bgs" ] || fail "chunks and block-groups list different ranges"
echo "chunks: $(jq length <<< "$chunks") chunks, as block-groups lists them"

rsv=$("$BTRFS_SPACE" --format json global-rsv "$img" | jq .global_rsv_size)
want=$("$BTRFS_SPACE" --format json inspect "$img" | jq .global_rsv_size)
[ -n "$rsv" ] && [ "$rsv" = "$want" ] ||
	fail "global-rsv says $rsv, inspect $want"
echo "global-rsv: $rsv bytes, as inspect"
