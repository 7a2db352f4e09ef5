#!/bin/bash
# "-" reads the image from standard input: a pipe of the raw image, of its
# xz and zstd compression (xz -dc IMG.xz | btrfs-space inspect - as well)
# and a file redirected must give exactly the JSON of the image file for
# "chunks" and "inspect" (I/O counts and the path aside).  A pipe is
# copied into a sparse temporary file bounded by the superblock's device
# size: data piped after the image is not read (a warning says so), the
# file is gone at exit.  A stream that is not btrfs gets the usual refusal.

source "$TEST_TOP/common" || exit

check_prereq btrfs-space
check_prereq jq xz zstd tar

fixture=$TEST_TOP/fixtures/size-256m.tar.xz
[ -f "$fixture" ] || skip "no fixture $fixture"
raw=$(unpack_image "$fixture" "$TEST_TMP") || exit
[ -f "$raw" ] || fail "cannot unpack $fixture"
export TMPDIR=$TEST_TMP/tmpdir
mkdir -p "$TMPDIR" || fail "cannot create $TMPDIR"

strip()
{
	jq -S 'walk(if type == "object" then del(.path, .io, .bytes_read, .blocks_read) else . end)'
}

xz -T1 -1 -c "$raw" > "$TEST_TMP/img.xz" || fail "xz"
zstd -q -c "$raw" > "$TEST_TMP/img.zst" || fail "zstd"
for cmd in chunks inspect; do
	want=$("$BTRFS_SPACE" --format json "$cmd" "$raw" | strip) || fail "$cmd on the file"
	got=$(cat "$raw" | "$BTRFS_SPACE" --format json "$cmd" - | strip) || fail "$cmd on a pipe"
	[ "$got" = "$want" ] || fail "$cmd: the raw pipe differs from the file"
	got=$(xz -dc "$TEST_TMP/img.xz" | "$BTRFS_SPACE" --format json "$cmd" - | strip) ||
		fail "$cmd on xz -dc"
	[ "$got" = "$want" ] || fail "$cmd: xz -dc | differs from the file"
	got=$(cat "$TEST_TMP/img.xz" | "$BTRFS_SPACE" --format json "$cmd" - | strip) ||
		fail "$cmd on an xz pipe"
	[ "$got" = "$want" ] || fail "$cmd: an xz stream differs from the file"
	got=$(cat "$TEST_TMP/img.zst" | "$BTRFS_SPACE" --format json "$cmd" - | strip) ||
		fail "$cmd on a zstd pipe"
	[ "$got" = "$want" ] || fail "$cmd: a zstd stream differs from the file"
	got=$("$BTRFS_SPACE" --format json "$cmd" - < "$raw" | strip) || fail "$cmd on a redirect"
	[ "$got" = "$want" ] || fail "$cmd: a redirected file differs from the file"
	echo "ok: $cmd: raw, xz -dc, xz, zstd pipes and a redirect equal the file"
done

# bounded: 64 MiB of data after the image are not read
err=$( (cat "$raw"; head -c 64M /dev/urandom) | "$BTRFS_SPACE" chunks - 2>&1 >/dev/null)
grep -q "goes on past the device size" <<< "$err" || fail "no warning for data past the device: $err"
echo "ok: data past the device size: $err"
[ -z "$(ls -A "$TMPDIR")" ] || fail "temporary files left: $(ls "$TMPDIR")"
echo "ok: no temporary file left"

run_mustfail_code 1 "not btrfs on standard input" sh -c "echo hello | '$BTRFS_SPACE' chunks -"
