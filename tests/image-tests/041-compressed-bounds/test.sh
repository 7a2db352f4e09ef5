#!/bin/bash
# A compressed image is decompressed no further than the device size its
# superblock gives (dev_item.total_bytes): a stream of a 256 MiB fixture followed
# by 3 GiB of non-zero garbage (xz, zstd and gzip; the garbage is one small
# compressed member repeated, so the input stays small) is read quickly,
# with one warning that the rest is not part of the filesystem, a temporary
# file of exactly the device size whose allocated blocks stay those of the
# image, and the same JSON as the raw image.  A trailing run of zeros is
# taken without a word, and a stream that stops short of its device gets
# the verdict of a short device.  A compressed btrfs-image dump followed by
# the garbage ends where its chain of clusters does.  A device with more
# than 1 GiB in chunks gets a note of the temporary space it may need.
# Non-zero data outside the metadata and system chunks is never written
# to the temporary file.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz gzip tar od stat cmp truncate python3

tar -xSJf "$TEST_TOP/fixtures/size-256m.tar.xz" -C "$TEST_TMP" || fail "cannot unpack size-256m"
raw=$TEST_TMP/size-256m.img
dev_total=$(od -An -t u8 -j $((65536 + 201 + 8)) -N 8 "$raw" | tr -d ' ')
[ "$dev_total" -eq "$(stat -c %s "$raw")" ] || fail "fixture is not its device size"
raw_alloc=$(($(stat -c %b "$raw") * 512))

export TMPDIR=$TEST_TMP/tmpdir
mkdir -p "$TMPDIR" || fail "cannot create $TMPDIR"

kinds="xz gzip"
if command -v zstd > /dev/null 2>&1; then
	kinds="$kinds zstd"
else
	echo "zstd not found: .zst not tested"
fi

compress()
{
	case $1 in
	xz) xz -T1 -0 -c ;;
	zstd) zstd -q -1 -c ;;
	gzip) gzip -1 -c ;;
	esac
}

# compress_blocks KIND FILE BYTES: the first BYTES (a multiple of 8 MiB) of
# FILE as one stream per 8 MiB block, a block of zeros compressed once and
# repeated.  The same bytes decompressed, without compressing hundreds of MiB
# of zeros; the streams follow each other as in the bombs below, read as one
compress_blocks()
{
	local kind=$1 file=$2 bytes=$3 bs=$((8 << 20)) i
	[ -f "$TEST_TMP/zero.$kind" ] ||
		head -c $bs /dev/zero | compress "$kind" > "$TEST_TMP/zero.$kind" || return 1
	for ((i = 0; i < bytes / bs; i++)); do
		dd if="$file" bs=$bs skip=$i count=1 status=none > "$TEST_TMP/block" || return 1
		if cmp -s -n $bs "$TEST_TMP/block" /dev/zero; then
			cat "$TEST_TMP/zero.$kind"
		else
			compress "$kind" < "$TEST_TMP/block"
		fi || return 1
	done
	rm -f "$TEST_TMP/block"
}

# 64 MiB of non-zero garbage, compressed once, repeated 48 times: 3 GiB
yes 'not part of any filesystem' | head -c $((64 << 20)) > "$TEST_TMP/garbage" ||
	fail "cannot make the garbage"
json chunks "$raw" > "$TEST_TMP/ref.json"
for kind in $kinds; do
	bin=$TEST_TMP/bomb-$kind.bin
	compress "$kind" < "$raw" > "$bin" || fail "$kind failed"
	[ "$kind" = xz ] && cp "$bin" "$TEST_TMP/raw.xz"
	compress "$kind" < "$TEST_TMP/garbage" > "$TEST_TMP/garbage.$kind" || fail "$kind failed"
	for _ in $(seq 48); do cat "$TEST_TMP/garbage.$kind"; done >> "$bin"
	echo "$kind: $(stat -c %s "$bin") bytes for the image and 3 GiB of garbage"

	start=$(date +%s)
	err=$("$BTRFS_SPACE" -v chunks "$bin" 2>&1 >/dev/null)
	rc=$?
	secs=$(($(date +%s) - start))
	echo "$err"
	echo "$kind: read in $secs s"
	[ "$rc" -eq 0 ] || fail "$kind: exit $rc: $err"
	[ "$secs" -le 60 ] || fail "$kind: took $secs s: the garbage was decompressed"
	grep -q "^WARNING: $bin: $kind-compressed: the stream goes on past the device size of its superblock ($dev_total bytes): the rest is not part of the filesystem and was not read$" <<< "$err" ||
		fail "$kind: no warning that the stream goes on past the device"
	line=$(grep "decompressed to a sparse temporary file" <<< "$err")
	size=$(sed -n 's/.*(\([0-9]*\) bytes, \([0-9]*\) allocated).*/\1/p' <<< "$line")
	alloc=$(sed -n 's/.*(\([0-9]*\) bytes, \([0-9]*\) allocated).*/\2/p' <<< "$line")
	[ "$size" = "$dev_total" ] || fail "$kind: temporary file of $size bytes, the device has $dev_total"
	# holes stay holes: what is allocated is what the sparse image holds
	[ -n "$alloc" ] && [ "$alloc" -le $((raw_alloc + (1 << 20))) ] ||
		fail "$kind: temporary file has $alloc bytes allocated, the image $raw_alloc"
	json chunks "$bin" > "$TEST_TMP/got.json"
	cmp -s "$TEST_TMP/ref.json" "$TEST_TMP/got.json" || fail "$kind: chunks differ from the raw image's"
	rm -f "$bin"
done

# zeros past the device size (an image file larger than its filesystem)
# (the image's stream, then 32 MiB of zeros, all read to see that they are)
: > "$TEST_TMP/empty"
truncate -s 32M "$TEST_TMP/empty" || fail "cannot make 32 MiB of zeros"
{ cat "$TEST_TMP/raw.xz" && compress_blocks xz "$TEST_TMP/empty" $((32 << 20)); } \
	> "$TEST_TMP/bigger.bin" || fail "xz failed"
rm -f "$TEST_TMP/empty"
err=$("$BTRFS_SPACE" -v chunks "$TEST_TMP/bigger.bin" 2>&1 >/dev/null) || fail "trailing zeros: exit $?: $err"
echo "$err"
grep -q WARNING <<< "$err" && fail "trailing zeros gave a warning: $err"
grep -q "($dev_total bytes, " <<< "$err" || fail "trailing zeros: the temporary file is not the device size: $err"

# a btrfs-image dump is sized by its chain of clusters: the garbage after
# it is cut after its first KiB (the bad header the reader stops at, as
# restore does), and the verdict is the one of the whole file uncompressed
if command -v btrfs-image > /dev/null 2>&1; then
	dump=$TEST_TMP/image.dump
	run_check btrfs-image -c9 "$raw" "$dump"
	dump_size=$(stat -c %s "$dump")
	cat "$dump" "$TEST_TMP/garbage" > "$TEST_TMP/dump-garbage.dump" || fail "cat failed"
	compress xz < "$dump" > "$TEST_TMP/dump-bomb.bin" || fail "xz failed"
	for _ in $(seq 48); do cat "$TEST_TMP/garbage.xz"; done >> "$TEST_TMP/dump-bomb.bin"
	want=$("$BTRFS_SPACE" chunks "$TEST_TMP/dump-garbage.dump" 2>&1 >/dev/null)
	want_rc=$?
	got=$("$BTRFS_SPACE" -v chunks "$TEST_TMP/dump-bomb.bin" 2>&1 >/dev/null)
	got_rc=$?
	echo "dump and garbage: exit $want_rc: $want"
	echo "compressed dump and 3 GiB of garbage: exit $got_rc: $got"
	[ "$got_rc" -eq "$want_rc" ] || fail "compressed dump: exit $got_rc, uncompressed $want_rc"
	[ "$(grep -v 'decompressed to a sparse' <<< "$got" | sed "s|$TEST_TMP/dump-bomb.bin|F|g")" = \
	  "$(sed "s|$TEST_TMP/dump-garbage.dump|F|g" <<< "$want")" ] ||
		fail "compressed dump: not the verdict of the uncompressed file"
	grep -q "($((dump_size + 1024)) bytes, " <<< "$got" ||
		fail "compressed dump: the temporary file is not the dump and one KiB"
else
	echo "btrfs-image not found: compressed dumps not tested"
fi

# a stream that ends before the device does: a short device
compress_blocks xz "$raw" $((200 << 20)) > "$TEST_TMP/short.bin" || fail "xz failed"
run_mustfail "the stream ends 56 MiB before the device" "$BTRFS_SPACE" chunks "$TEST_TMP/short.bin"
err=$("$BTRFS_SPACE" chunks "$TEST_TMP/short.bin" 2>&1 >/dev/null)
echo "$err"
[ "$(wc -l <<< "$err")" -eq 1 ] && grep -q "device total_bytes should be at most $((200 << 20)) but found $dev_total" <<< "$err" ||
	fail "short stream: expected the kernel's device size verdict, got: $err"

# a device whose chunks hold more than 1 GiB: a note names $TMPDIR and how
# much non-zero data may come (its first MiB, the superblock, is enough to
# see it)
tar -xSJf "$TEST_TOP/fixtures/many-bgs-1t.tar.xz" -C "$TEST_TMP" || fail "cannot unpack many-bgs-1t"
big=$TEST_TMP/many-bgs-1t.img
big_total=$(od -An -t u8 -j $((65536 + 201 + 8)) -N 8 "$big" | tr -d ' ')
big_used=$(od -An -t u8 -j $((65536 + 201 + 16)) -N 8 "$big" | tr -d ' ')
head -c $((1 << 20)) "$big" | compress xz > "$TEST_TMP/big.bin" || fail "xz failed"
rm -f "$big"
err=$("$BTRFS_SPACE" chunks "$TEST_TMP/big.bin" 2>&1 >/dev/null)
echo "$err"
grep -q "^NOTE: $TEST_TMP/big.bin: xz-compressed: decompressing to a sparse temporary file in $TMPDIR: up to $big_used bytes of non-zero data (the chunks of its $big_total-byte device)" <<< "$err" ||
	fail "no note of the temporary space a device with $big_used bytes of chunks may need"
err=$("$BTRFS_SPACE" chunks "$TEST_TMP/short.bin" 2>&1 >/dev/null)
grep -q "^NOTE" <<< "$err" && fail "a note for a device with little in its chunks: $err"

# non-zero data where nothing is ever read (128 MiB of unallocated space
# from 112 MiB: a stream that made a large temporary file from a small
# input): once the chunk root is out (at 22 MiB here), only the first MiB,
# the superblock copies and the metadata and system chunks are written;
# the report is the raw image's
cp --sparse=always "$raw" "$TEST_TMP/filled.img" || fail "cannot copy"
python3 -c '
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(112 << 20); f.write(b"\xcd" * (128 << 20))' "$TEST_TMP/filled.img" || fail "cannot fill"
compress xz < "$TEST_TMP/filled.img" > "$TEST_TMP/filled.bin" || fail "xz failed"
rm -f "$TEST_TMP/filled.img"
err=$("$BTRFS_SPACE" -v chunks "$TEST_TMP/filled.bin" 2>&1 >/dev/null) || fail "filled: exit $?: $err"
line=$(grep "decompressed to a sparse temporary file" <<< "$err")
alloc=$(sed -n 's/.*(\([0-9]*\) bytes, \([0-9]*\) allocated).*/\2/p' <<< "$line")
echo "filled: $(stat -c %s "$TEST_TMP/filled.bin")-byte stream, $alloc bytes allocated (the image: $raw_alloc)"
[ -n "$alloc" ] && [ "$alloc" -le $((raw_alloc + (1 << 20))) ] ||
	fail "filled: $alloc bytes allocated for 128 MiB of data never read"
json chunks "$TEST_TMP/filled.bin" > "$TEST_TMP/got.json"
cmp -s "$TEST_TMP/ref.json" "$TEST_TMP/got.json" || fail "filled: chunks differ from the raw image's"

left=$(find "$TMPDIR" -mindepth 1 | head -3)
[ -z "$left" ] || fail "temporary files left behind: $left"
echo "compressed bounds: ok"
