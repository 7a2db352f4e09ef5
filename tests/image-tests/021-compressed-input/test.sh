#!/bin/bash
# Compressed images given directly: an .xz, .zst and .gz of a fixture image
# (and of a btrfs-image dump of it) must give exactly the JSON of the
# uncompressed file for "chunks", "block-groups" and "inspect" (I/O counts
# included; only the path differs).  The format is found by magic bytes:
# the compressed copies are named without a telling extension.  -v says
# on stderr what was decompressed, and no temporary file is left behind.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space
check_prereq jq xz gzip tar od cmp stat

fixture=$TEST_TOP/fixtures/size-256m.tar.xz
[ -f "$fixture" ] || skip "no fixture $fixture (tests/fixtures is incomplete: git checkout tests/fixtures)"
raw=$(unpack_image "$fixture" "$TEST_TMP") || exit
[ -f "$raw" ] || fail "cannot unpack $fixture"

# keep what btrfs-space decompresses in a folder of our own, to see it go
export TMPDIR=$TEST_TMP/tmpdir
mkdir -p "$TMPDIR" || fail "cannot create $TMPDIR"

# the fastest levels: the tool reads any stream, and xz -6 of 256 MiB
# costs twice the CPU of xz -1 for the same test
compress()
{
	local kind=$1 src=$2 out=$3
	case $kind in
	xz) xz -T1 -1 -c "$src" > "$out" ;;
	zstd) zstd -q -c "$src" > "$out" ;;
	gzip) gzip -1 -c "$src" > "$out" ;;
	esac
}

# same_json REFERENCE FILE: every command gives the same JSON on both
same_json()
{
	local ref=$1 file=$2 cmd
	for cmd in chunks block-groups inspect; do
		json "$cmd" "$ref" > "$TEST_TMP/ref.json"
		json "$cmd" "$file" > "$TEST_TMP/got.json"
		[ -s "$TEST_TMP/ref.json" ] || fail "no output for $cmd $ref"
		if ! cmp -s "$TEST_TMP/ref.json" "$TEST_TMP/got.json"; then
			diff "$TEST_TMP/ref.json" "$TEST_TMP/got.json" | head -20
			fail "$cmd: $(basename "$file") differs from $(basename "$ref")"
		fi
	done
	echo "same JSON: $(basename "$file") and $(basename "$ref")"
}

kinds="xz gzip"
if command -v zstd > /dev/null 2>&1; then
	kinds="$kinds zstd"
else
	echo "zstd not found: .zst not tested"
fi

for kind in $kinds; do
	compress "$kind" "$raw" "$TEST_TMP/image-$kind.bin" || fail "$kind failed"
	same_json "$raw" "$TEST_TMP/image-$kind.bin"
done

# -v says what was done; the error of a broken stream is one line
out=$(run_check_stdout "$BTRFS_SPACE" -v chunks "$TEST_TMP/image-xz.bin" 2>&1)
echo "$out" | grep -q "xz-compressed, decompressed to a sparse temporary file" ||
	fail "-v does not say the image was decompressed: $out"
head -c $(($(stat -c %s "$TEST_TMP/image-xz.bin") / 2)) "$TEST_TMP/image-xz.bin" > "$TEST_TMP/cut.xz"
(run_mustfail "truncated xz stream" "$BTRFS_SPACE" chunks "$TEST_TMP/cut.xz") \
	> "$TEST_TMP/err.all" 2>&1 || fail "$(tail -1 "$TEST_TMP/err.all")"
grep -v '^####### ' "$TEST_TMP/err.all" > "$TEST_TMP/err"
[ "$(wc -l < "$TEST_TMP/err")" = 1 ] && grep -q "ERROR: .*xz.*cut short" "$TEST_TMP/err" ||
	fail "truncated xz: expected one ERROR line saying the xz data is cut short, got: $(cat "$TEST_TMP/err")"

# a compressed btrfs-image dump reads like the dump itself
if command -v btrfs-image > /dev/null 2>&1; then
	dump=$TEST_TMP/image.dump
	run_check btrfs-image -c9 "$raw" "$dump"
	for kind in $kinds; do
		compress "$kind" "$dump" "$TEST_TMP/dump-$kind.bin" || fail "$kind failed"
		same_json "$dump" "$TEST_TMP/dump-$kind.bin"
	done
else
	echo "btrfs-image not found: compressed dumps not tested"
fi

left=$(find "$TMPDIR" -mindepth 1 | head -3)
[ -z "$left" ] || fail "temporary files left behind: $left"
exit 0
