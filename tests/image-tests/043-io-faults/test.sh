#!/bin/bash
# I/O errors and short reads say what they are: with the LD_PRELOAD fault
# injector (tests/preload/fault-inject.c) reads of a fixture fail with EIO,
# or come back short, at the format probe, the superblock, the chunk root,
# a root-tree block and a block-group leaf read in a concurrent batch.  A
# fault is one line naming the file and the byte offset, exit 1, never "no
# recognised filesystem"; a tree block with a good second copy is read from
# it, and the warning names the first copy's I/O error; with both copies
# bad, the error names the I/O error of each.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz tar od

inject=$TOP/tests/preload/fault-inject.so
[ -f "$inject" ] || fail "fault injector not built: $inject (run make)"

tar -xSJf "$TEST_TOP/fixtures/ns16k-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack ns16k-1g"
tar -xSJf "$TEST_TOP/fixtures/meta-single-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack meta-single-1g"
tar -xSJf "$TEST_TOP/fixtures/many-bgs-1t.tar.xz" -C "$TEST_TMP" || fail "cannot unpack many-bgs-1t"
dup=$TEST_TMP/ns16k-1g.img
single=$TEST_TMP/meta-single-1g.img
many=$TEST_TMP/many-bgs-1t.img
log=$TEST_TMP/faults.log
# a sanitizer build wants its runtime first among the libraries; the
# injector, preloaded, comes before it and is harmless to it
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
# io_uring reads beside the injector (no libc call to intercept): the
# concurrent reads go through the thread pool here
export BTRFS_SPACE_IO_ENGINE=threads

# sb_u64 IMG OFFSET: a little-endian u64 of the primary superblock
sb_u64()
{
	od -An -t u8 -j $((65536 + $2)) -N 8 "$1" | tr -d ' '
}

# copies IMG LOGICAL: the physical offset of each copy of a tree block
copies()
{
	"$BTRFS_SPACE" --format json chunks --list-chunks "$1" | jq -r --argjson l "$2" '.chunks[] |
		select(.logical <= $l and $l < .logical + .length) |
		(.logical) as $start | .stripes[] | .offset + $l - $start'
}

# faulty IMG OFFSETS MODE ARGS...: run btrfs-space ARGS with reads of IMG
# failing at OFFSETS; its stderr (without the log lines of run_*) in $err,
# its exit status in $rc.  The fault must have been met.
faulty()
{
	local img=$1 offsets=$2 mode=$3
	shift 3
	rm -f "$log"
	err=$(LD_PRELOAD=$inject BS_FAULT_FILE=$img BS_FAULT_OFFSETS=$offsets \
	      BS_FAULT_MODE=$mode BS_FAULT_LOG=$log "$BTRFS_SPACE" "$@" 2>&1 >/dev/null)
	rc=$?
	echo "[$mode at $offsets] exit $rc: $err"
	[ "$rc" -lt 128 ] || fail "crashed (exit $rc) with $mode at $offsets: $err"
	[ -s "$log" ] || fail "the injector met no read at $offsets of $img"
	if grep -q "no recognised filesystem" <<< "$err"; then
		fail "an I/O fault at $offsets reported as a format problem: $err"
	fi
}

# one_error PATTERN: exit 1 and a single line matching PATTERN
one_error()
{
	[ "$rc" -eq 1 ] || fail "expected exit 1, got $rc: $err"
	[ "$(wc -l <<< "$err")" -eq 1 ] || fail "expected one line, got: $err"
	grep -q -E -- "$1" <<< "$err" || fail "expected '$1', got: $err"
}

eio="Input/output error"

# the format probe (the head of the file with the superblock, in one read;
# the 8-byte magic alone when that read fails), of a raw image and of a
# compressed one
faulty "$dup" 0 eio inspect "$dup"
one_error "^ERROR: read error on $dup at offset 0: $eio$"
# the faults are met in the first bytes of the stream: its first MiB (the
# superblock and what is before it) makes the stream, not xz of 1 GiB
head -c $((1 << 20)) "$dup" | xz -T1 -c > "$TEST_TMP/image.bin" || fail "xz failed"
faulty "$TEST_TMP/image.bin" 0 eio inspect "$TEST_TMP/image.bin"
one_error "^ERROR: read error on $TEST_TMP/image.bin at offset 0: $eio$"
faulty "$TEST_TMP/image.bin" 4 short inspect "$TEST_TMP/image.bin"
one_error "^ERROR: short read on $TEST_TMP/image.bin at offset 0: got 4 of 8 bytes$"
# the compressed stream itself, past the probe
faulty "$TEST_TMP/image.bin" 100 eio inspect "$TEST_TMP/image.bin"
one_error "^ERROR: read error on $TEST_TMP/image.bin at offset 0: $eio$"

# the superblock: an error, and a read cut 64 bytes in
faulty "$dup" 65536 eio inspect "$dup"
one_error "^ERROR: read error on $dup at offset 65536: $eio$"
faulty "$dup" $((65536 + 64)) short inspect "$dup"
one_error "^ERROR: short read on $dup at offset 65536: got 64 of 4096 bytes$"

# the chunk root (SYSTEM DUP): one bad copy is read from the other
chunk_root=$(sb_u64 "$dup" 88)
mapfile -t cr < <(copies "$dup" "$chunk_root")
[ "${#cr[@]}" -eq 2 ] || fail "expected two copies of the chunk root, got ${#cr[@]}"
faulty "$dup" "${cr[0]}" eio inspect "$dup"
[ "$rc" -eq 0 ] || fail "one copy of the chunk root bad: expected exit 0, got $rc"
grep -q "^WARNING: tree block $chunk_root: 1 bad copy (copy 1: tree block $chunk_root: read error on $dup at offset ${cr[0]}: $eio), copy 2 used$" <<< "$err" ||
	fail "the warning does not name copy 1's I/O error: $err"
faulty "$dup" "${cr[0]},${cr[1]}" eio inspect "$dup"
one_error "^ERROR: all 2 copies bad; copy 1: tree block $chunk_root: read error on $dup at offset ${cr[0]}: $eio; copy 2: tree block $chunk_root: read error on $dup at offset ${cr[1]}: $eio$"
faulty "$dup" "$((cr[0] + 4096)),$((cr[1] + 8192))" short inspect "$dup"
one_error "^ERROR: all 2 copies bad; copy 1: tree block $chunk_root: short read on $dup at offset ${cr[0]}: got 4096 of 16384 bytes; copy 2: tree block $chunk_root: short read on $dup at offset ${cr[1]}: got 8192 of 16384 bytes$"

# the root tree's root block, metadata SINGLE: one copy, no other to try
root=$(sb_u64 "$single" 80)
mapfile -t rt < <(copies "$single" "$root")
[ "${#rt[@]}" -eq 1 ] || fail "expected one copy of the tree root, got ${#rt[@]}"
faulty "$single" "${rt[0]}" eio inspect "$single"
one_error "^ERROR: tree block $root: read error on $single at offset ${rt[0]}: $eio$"

# a block-group leaf read in a batch of concurrent reads (preadv2 and the
# thread pool): copy 1 bad is read from copy 2, both bad fail
leaf=$("$BTRFS_SPACE" --format json block-groups --list-block-groups "$many" | jq '.block_groups[-1].leaf')
mapfile -t lf < <(copies "$many" "$leaf")
[ "${#lf[@]}" -eq 2 ] || fail "expected two copies of leaf $leaf, got ${#lf[@]}"
faulty "$many" "${lf[0]}" eio --io-threads 4 inspect "$many"
[ "$rc" -eq 0 ] || fail "one copy of leaf $leaf bad: expected exit 0, got $rc"
grep -q "^WARNING: tree block $leaf: 1 bad copy (copy 1: tree block $leaf: read error on $many at offset ${lf[0]}: $eio), copy 2 used$" <<< "$err" ||
	fail "the warning does not name the leaf's I/O error: $err"
faulty "$many" "${lf[0]},${lf[1]}" eio --io-threads 4 block-groups "$many"
one_error "^ERROR: all 2 copies bad; copy 1: tree block $leaf: read error on $many at offset ${lf[0]}: $eio; copy 2: tree block $leaf: read error on $many at offset ${lf[1]}: $eio$"

# without faults the same runs succeed: the injector alone changes nothing
rm -f "$log"
LD_PRELOAD=$inject BS_FAULT_FILE=$dup BS_FAULT_OFFSETS=524288 BS_FAULT_LOG=$log \
	run_check "$BTRFS_SPACE" inspect "$dup" > /dev/null
[ ! -s "$log" ] || fail "a fault at offset 524288 was met by a run that never reads there"
echo "I/O faults: ok"
