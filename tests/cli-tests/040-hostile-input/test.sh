#!/bin/bash
# Inputs from strangers that once broke btrfs-space, each kept small (the
# long sweep is fuzz-tests/003-every-command):
# - forecast --resize 1:1M on a single-device filesystem with DUP metadata:
#   btrfs_shrink_device() tries every dev extent past the new size, highest
#   first, and the failed ones once more, so a DUP chunk is tried four times;
#   the list of groups tried outgrew its room (heap overflow under ASan);
#   the order is the kernel's walk;
# - replay: a trace whose events step back in time on one CPU (two captures
#   spliced, or edited) is refused naming the line and the CPU; a step back
#   between two CPUs (trace_pipe read while events are written) is not;
# - replay: a capture marker of a kernel outside the models (4.4, 99.1) is
#   refused on its line, and --recorded-kernel names one of them instead;
#   --recorded-kernel outside the models is a usage error;
# - device sets that lie: the same file twice, a byte copy of a member (same
#   fsid and devid), a member of another filesystem, a member shorter than
#   its dev item (the kernel's read_one_dev(): "device total_bytes should be
#   at most ..."): one ERROR line naming the file; a member whose
#   superblock claims another member's devid with its own device uuid is
#   that devid's device missing, as the kernel's read of the sys_array says
#   ("devid 1 uuid U is missing", 6.18.44), not the other member read in
#   its place ("bad tree block start"); with --degraded, alone it leaves
#   every copy of the chunk root on missing devices ("failed to read chunk
#   root"), beside devid 1 it is dropped and devid 1 read alone, as
#   -o degraded mounts them (main refused: "devid 1 was already given");
# - trees that lie (tests/fuzz/tree-mutants.py, every copy of one block
#   changed, its checksum rewritten): in the log tree the mount estimate
#   replays (fixture log-replay/scatter-third), a leaf claiming level 1 is
#   "level verify failed ... wanted 0 found 1" as Linux 6.18.44 says when
#   it mounts a copy (the parent's level is checked before the
#   tree-checker since 6.2; before, the leaf read as a node was "unaligned
#   pointer"), and a node of another generation is "parent transid verify
#   failed"; a node of it pointing to itself is mounted by 6.18.44 (the
#   walk holds the node: no check; the replay reads it as a leaf, warns
#   "bad eb member start" and replays nothing of it, the leaf the pointer
#   stood for is never read; the node stays pinned): the tool reads it as
#   the kernel does (kernel test 038: metadata bytes_used 884,736, bytes_pinned
#   16,384, 62 reads, as sysfs and the block trace say), where it refused
#   with "level verify failed"; in the subvolume tree csum-delete --file walks (fixture
#   bg-spread-ns4k-50, three levels), a node pointing to itself or to the
#   root (loops) ends at the level check, and an item running past the leaf
#   is the tree-checker's "unexpected item end";
# - forecast --balance reads the extent tree, which inspect does not read on
#   a filesystem with the block-group tree (fixture many-bgs-1t-bgt): an
#   extent leaf of another generation was "out of memory" (every error of
#   the what-ifs was, and what they had built leaked); it is the read error.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq xz awk sed

# one_error WHAT PATTERN CMD...: exit 1 with one "ERROR: " line matching PATTERN
one_error()
{
	local what=$1 pattern=$2 rc
	shift 2
	_bs_log_cmd "$what" "$@"
	"$@" > /dev/null 2> "$TEST_TMP/err"
	rc=$?
	[ "$rc" = 1 ] || fail "$what: exit $rc, expected 1: $(head -3 "$TEST_TMP/err" | tr '\n' '|')"
	[ "$(grep -c '' "$TEST_TMP/err")" = 1 ] && grep -q '^ERROR: ' "$TEST_TMP/err" ||
		fail "$what: not one ERROR line: $(head -3 "$TEST_TMP/err" | tr '\n' '|')"
	grep -q -E -- "$pattern" "$TEST_TMP/err" ||
		fail "$what: the error does not say /$pattern/: $(cat "$TEST_TMP/err")"
	echo "ok: $what: $(cut -c1-150 "$TEST_TMP/err")"
}

# --- forecast --resize: a shrink tries a DUP chunk once per dev extent -----------

one=$(fixture_images ns4k-1g "$TEST_TMP/ns4k") || exit
out=$(run_check_stdout "$BTRFS_SPACE" --format json forecast --resize 1:1M "$one") || exit
# data 13631488 (single), system 22020096 and metadata 30408704 (DUP): the
# walk from the highest dev extent down, then the failed ones again
expect "resize 1:1M tried" "$(jq -c '.. | objects | select(.operation? == "resize") | .selected' <<< "$out")" \
	"[30408704,30408704,22020096,22020096,13631488,30408704,30408704,22020096,22020096]"
expect "resize 1:1M failed" "$(jq -c '.. | objects | select(.operation? == "resize") | .failed | length' <<< "$out")" 8

# --- replay: time order per CPU, kernels outside the models ----------------------

pre=$TEST_TMP/preempt.trace
xz -dc "$TEST_TOP/fixtures/replay-preempt-16g.trace.xz" > "$pre" || fail "cannot unpack the trace"
# the last state of the filesystem moved to a time before the capture began
awk '/btrfs_done_preemptive_reclaim: 6772d6a8/ { last = NR } { l[NR] = $0 }
     END { for (i = 1; i <= NR; i++) { if (i == last) sub(/ [0-9]+\.[0-9]+: btrfs_done/, " 100.000001: btrfs_done", l[i]); print l[i] } }' \
	"$pre" > "$TEST_TMP/back.trace"
lineno=$(grep -n 'btrfs_done_preemptive_reclaim: 6772d6a8' "$pre" | tail -1 | cut -d: -f1)
one_error "replay of a step back on one CPU" \
	"line $lineno: btrfs_done_preemptive_reclaim: time 100\.000001 on CPU [0-9]+ is before line [0-9]+'s" \
	"$BTRFS_SPACE" replay "$TEST_TMP/back.trace"
# the same step back, the line on another CPU than any before it: accepted
sed "${lineno}s/\[00[01]\]/[003]/" "$TEST_TMP/back.trace" > "$TEST_TMP/cpu3.trace"
run_check "$BTRFS_SPACE" replay "$TEST_TMP/cpu3.trace" > /dev/null
for k in 4.4 99.1; do
	sed "1s/kernel=6\.18\.44/kernel=$k/" "$pre" > "$TEST_TMP/k.trace"
	one_error "replay of a trace recorded by $k" \
		"line 1: capture marker: kernel=$k is not one of the kernels modelled" \
		"$BTRFS_SPACE" replay "$TEST_TMP/k.trace"
	run_check "$BTRFS_SPACE" replay --recorded-kernel 6.18 "$TEST_TMP/k.trace" > /dev/null
	run_mustfail_code 2 "--recorded-kernel $k" "$BTRFS_SPACE" replay --recorded-kernel "$k" "$pre"
done

# --- device sets that lie -----------------------------------------------------------

mapfile -t r1 < <(fixture_images raid1-2dev "$TEST_TMP/raid1")
mapfile -t r0 < <(fixture_images raid0-2dev "$TEST_TMP/raid0")
[ ${#r1[@]} = 2 ] && [ ${#r0[@]} = 2 ] || fail "cannot unpack raid1-2dev and raid0-2dev"
one_error "the same file twice" "devid 1 was already given" \
	"$BTRFS_SPACE" inspect "${r1[0]}" "${r1[0]}" "${r1[1]}"
cp --sparse=always "${r1[0]}" "$TEST_TMP/copy.img" || fail "cannot copy"
one_error "a byte copy of a member" "copy.img: devid 1 was already given" \
	"$BTRFS_SPACE" inspect "${r1[0]}" "$TEST_TMP/copy.img" "${r1[1]}"
one_error "a member of another filesystem" "raid0-2dev.dev2.img belongs to another filesystem" \
	"$BTRFS_SPACE" inspect "${r1[0]}" "${r0[1]}"
cp --sparse=always "${r1[1]}" "$TEST_TMP/short.img" || fail "cannot copy"
truncate -s 512M "$TEST_TMP/short.img"
one_error "a member shorter than its dev item" "short.img: device total_bytes should be at most 536870912" \
	"$BTRFS_SPACE" inspect "${r1[0]}" "$TEST_TMP/short.img"
cp --sparse=always "${r1[1]}" "$TEST_TMP/claims1.img" || fail "cannot copy"
python3 "$TEST_TOP/common-mutate.py" "$TEST_TMP/claims1.img" dev-item-devid=1 ||
	fail "cannot change the devid of claims1.img"
uuid1=$(od -An -tx1 -j $((65536 + 0xc9 + 66)) -N 16 "${r1[0]}" | tr -d ' \n' |
	sed 's/\(.\{8\}\)\(.\{4\}\)\(.\{4\}\)\(.\{4\}\)/\1-\2-\3-\4-/')
one_error "a member claiming devid 1 with its own uuid" \
	"devid 1 uuid $uuid1 is missing \(sys_array chunk [0-9]+ stripe 0 names it; .*claims1.img is devid 1 with another device uuid\)" \
	"$BTRFS_SPACE" inspect "$TEST_TMP/claims1.img"
# with devid 1 given too (either order) the claimant is dropped and -o
# degraded mounts devid 1 alone (kernel test 039); main said "devid 1 was
# already given"
for order in "${r1[0]} $TEST_TMP/claims1.img" "$TEST_TMP/claims1.img ${r1[0]}"; do
	"$BTRFS_SPACE" --degraded --format json inspect $order > "$TEST_TMP/pair.json" 2> "$TEST_TMP/err" ||
		fail "devid 1 and a claimant, --degraded: refused: $(cat "$TEST_TMP/err")"
	grep -q "^WARNING: .*claims1.img: devid 1 with device uuid .*not used" "$TEST_TMP/err" ||
		fail "devid 1 and a claimant, --degraded: no warning for the claimant: $(cat "$TEST_TMP/err")"
	[ "$(jq -r '.devices[] | select(.devid == 1) | .path' "$TEST_TMP/pair.json")" = "${r1[0]}" ] ||
		fail "devid 1 and a claimant, --degraded: devid 1 is not ${r1[0]}: $(jq -c .devices "$TEST_TMP/pair.json")"
done
one_error "the claimant alone, --degraded" "^ERROR: failed to read chunk root: " \
	"$BTRFS_SPACE" --degraded inspect "$TEST_TMP/claims1.img"

# --- trees that lie ---------------------------------------------------------------

mutate()	# SRC CHUNKS BYTENR MUTATION OUT: a sparse copy of SRC with one block changed
{
	rm -f "$5"
	cp --sparse=always "$1" "$5" || fail "cannot copy $1"
	python3 "$TEST_TOP/fuzz/tree-mutants.py" "$1" "$2" "$3" "$4" "$5" ||
		fail "cannot make the $4 mutant of block $3"
}
check_prereq python3
mkdir -p "$TEST_TMP/lr"
tar -xSJf "$TEST_TOP/fixtures/log-replay/scatter-third.tar.xz" -C "$TEST_TMP/lr" ||
	fail "cannot unpack the log-replay fixture"
lr=$TEST_TMP/lr/log-replay-scatter.img
"$BTRFS_SPACE" --format json chunks --list-chunks "$lr" > "$TEST_TMP/lr.chunks" ||
	fail "cannot read the chunks of $lr"
# the log tree of subvolume 5: node 54591488 (level 1), its first leaf 36847616
mutate "$lr" "$TEST_TMP/lr.chunks" 36847616 child-level "$TEST_TMP/m.img"
one_error "log tree leaf claiming level 1" \
	"level verify failed on logical 36847616 mirror 1 wanted 0 found 1" \
	"$BTRFS_SPACE" mount-estimate "$TEST_TMP/m.img"
mutate "$lr" "$TEST_TMP/lr.chunks" 54591488 self-pointer "$TEST_TMP/m.img"
"$BTRFS_SPACE" --format json inspect "$TEST_TMP/m.img" > "$TEST_TMP/self.json" 2> "$TEST_TMP/err" ||
	fail "log tree node pointing to itself: refused, 6.18.44 mounts it: $(cat "$TEST_TMP/err")"
grep -q '^WARNING: bad eb member start: ptr 0x3410065 start 54591488 member offset 54591629 size 4$' \
	"$TEST_TMP/err" || fail "log tree node pointing to itself: not the kernel's warning: $(cat "$TEST_TMP/err")"
[ "$(jq -c '[.space_info.metadata.bytes_used, .space_info.metadata.bytes_pinned, .mount_estimate.total_reads]' \
	"$TEST_TMP/self.json")" = "[884736,16384,62]" ] ||
	fail "log tree node pointing to itself: not 6.18.44's metadata used, pinned and reads: $(jq -c \
		'[.space_info.metadata.bytes_used, .space_info.metadata.bytes_pinned, .mount_estimate.total_reads]' \
		"$TEST_TMP/self.json")"
echo "ok: log tree node pointing to itself: mounted as 6.18.44 does"
# log trees of two levels whose level-1 nodes share leaves (blocks of an
# older log, unused, hold the new nodes): walk_log_tree() follows every
# pointer.  Two nodes sharing 8 leaves: 6.18.44 mounts it, metadata used
# 901120 + 16384, the 8 leaves pinned twice stay pinned (131072); main left
# them unpinned
shared_leaves()	# NODES: the log tree of NODES level-1 nodes in m.img
{
	rm -f "$TEST_TMP/m.img"
	cp --sparse=always "$lr" "$TEST_TMP/m.img" || fail "cannot copy $lr"
	python3 "$TEST_TOP/fuzz/log-shared-subtree.py" "$lr" "$TEST_TMP/lr.chunks" "$1" \
		"$TEST_TMP/m.img" $(seq 33521664 16384 $((33521664 + 16384 * ($1 - 1)))) ||
		fail "cannot make the log tree of $1 nodes sharing leaves"
}
shared_leaves 2
"$BTRFS_SPACE" --format json inspect "$TEST_TMP/m.img" > "$TEST_TMP/shared.json" 2> "$TEST_TMP/err" ||
	fail "log tree nodes sharing leaves: refused, 6.18.44 mounts it: $(cat "$TEST_TMP/err")"
[ "$(jq -c '[.space_info.metadata.bytes_used, .space_info.metadata.bytes_pinned]' "$TEST_TMP/shared.json")" = \
	"[917504,131072]" ] || fail "log tree nodes sharing leaves: not 6.18.44's metadata used and pinned: $(jq -c \
		'[.space_info.metadata.bytes_used, .space_info.metadata.bytes_pinned]' "$TEST_TMP/shared.json")"
echo "ok: log tree nodes sharing leaves: mounted as 6.18.44 does"
# nine nodes, the i-th sharing the last 9 - i leaves: 45 leaves walked for 9;
# each level built so multiplies the walk (main walked it whatever its size)
shared_leaves 9
one_error "log tree nodes sharing leaves, more walked again than distinct" \
	"log tree node 33538048 slot 5 points to block 54624256, reached before from another node: 14 blocks walked again for 13 distinct ones" \
	"$BTRFS_SPACE" mount-estimate "$TEST_TMP/m.img"
mutate "$lr" "$TEST_TMP/lr.chunks" 54591488 generation "$TEST_TMP/m.img"
one_error "log tree node of another generation" \
	"parent transid verify failed on logical 54591488 mirror 1 wanted 17 found 16" \
	"$BTRFS_SPACE" mount-estimate "$TEST_TMP/m.img"

fs=$(fixture_images bg-spread-ns4k-50 "$TEST_TMP/spread") || exit
"$BTRFS_SPACE" --format json chunks --list-chunks "$fs" > "$TEST_TMP/fs.chunks" ||
	fail "cannot read the chunks of $fs"
# FS_TREE: root node 30941184 (level 2), its first child 30457856 (level 1),
# whose first child is leaf 30416896
mutate "$fs" "$TEST_TMP/fs.chunks" 30941184 self-pointer "$TEST_TMP/m.img"
one_error "subvolume root pointing to itself" \
	"level verify failed on logical 30941184 mirror 1 wanted 1 found 2" \
	"$BTRFS_SPACE" csum-delete --file /spread "$TEST_TMP/m.img"
mutate "$fs" "$TEST_TMP/fs.chunks" 30457856 ancestor-pointer=30941184 "$TEST_TMP/m.img"
one_error "subvolume node pointing to its parent" \
	"level verify failed on logical 30941184 mirror 1 wanted 0 found 2" \
	"$BTRFS_SPACE" csum-delete --file /spread "$TEST_TMP/m.img"
mutate "$fs" "$TEST_TMP/fs.chunks" 30416896 item-size-past-end "$TEST_TMP/m.img"
one_error "subvolume leaf item past its end" \
	"corrupt leaf: root=5 block=30416896 slot=0, unexpected item end" \
	"$BTRFS_SPACE" csum-delete --file /spread "$TEST_TMP/m.img"

bgt=$(fixture_images many-bgs-1t-bgt "$TEST_TMP/bgt") || exit
"$BTRFS_SPACE" --format json chunks --list-chunks "$bgt" > "$TEST_TMP/bgt.chunks" ||
	fail "cannot read the chunks of $bgt"
# the extent tree: node 36634624, its first leaf 36651008
mutate "$bgt" "$TEST_TMP/bgt.chunks" 36651008 generation "$TEST_TMP/m.img"
run_check "$BTRFS_SPACE" inspect "$TEST_TMP/m.img" > /dev/null
one_error "forecast --balance over an extent leaf of another generation" \
	"^ERROR: forecast: .*parent transid verify failed on logical 36651008 mirror 1 wanted 38 found 37" \
	"$BTRFS_SPACE" forecast --balance -dusage=90 "$TEST_TMP/m.img"
rm -f "$TEST_TMP/m.img"
exit 0
