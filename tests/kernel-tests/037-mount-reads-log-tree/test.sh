#!/bin/bash
# Mount reads with a log tree, against the kernel: a cold "mount -o ro"
# replays the log (and commits), and the tree blocks it reads
# (block:block_bio_queue in a private tracefs instance, on a fresh loop
# device) must equal "btrfs-space mount-estimate"'s total_reads
# (Documentation/mount-estimate.md): the log trees, then the subvolume,
# extent and csum tree blocks the replay searches and changes, the extent
# items of the blocks it copies, the commit's COW searches (extent, free
# space, root and device trees), and what caching_thread() reads for each
# block group the replay caches (the log trees' blocks pinned, the logged
# extents allocated, the extents freed): load_block_group_size_class()'s
# five samples of the extent tree and the free space tree's items, both
# with READA_FORWARD read-ahead.
#
# Each image: a fresh mkfs.btrfs (random fsid) mounted read-write with
# commit=300 on a loop device; the first step is committed by "sync", the
# second step writes and fsyncs (the log tree), and the backing file is
# copied while still mounted: the copy has log_root != 0, as after a crash.
#   small        three new 5 KB files, 16K nodes (one leaf per tree)
#   foreign-reads the same, and a dd of FOREIGN_BLOCKS blocks of the device
#                in the mount's traced window: another task's reads, as
#                another test's scan of every block device makes them (47
#                reads of a btrfs-space's device scan in one run of
#                unlink-many), are not the mount's: counted apart, printed
#   rewrite-4k   2,000 committed files in 4K-node trees: 21 rewritten,
#                20 new, and 32 scattered 8 KiB writes into an 8 MiB file
#   extents      a 64 MiB file with 512 scattered 4 KiB rewrites, one fsync
#                (16K nodes: 512 extent items, their csums)
#   xattrs       2,000 committed files (4K nodes), two xattrs on 150 of them
#                (their leaves split and push items into their neighbours)
#   many-16k     3,000 committed files: 60 rewritten, 30 new (16K nodes)
#   renames      600 committed files in a directory: 50 renamed and 30
#                linked, each fsynced, and 20 new ones (4K nodes)
#   large-4k     16,000 files, every other one deleted (4K nodes: a
#                3-level extent tree, a free space tree of bitmaps over
#                several leaves): 40 rewritten, 40 new; the data block
#                group's caching samples leaves no search reads
#   block-groups 2,400 small files among six 40 MiB preallocated files
#                (several data block groups), half the small files
#                deleted: 60 rewritten across the groups, 20 new
#   subvolume    new and rewritten files in a subvolume and in the top
#                subvolume: two log trees
#   node-split   6,000 committed empty files in a directory (4K nodes: a
#                3-level fs tree), 1,200 new ones each fsynced: the
#                replay's inserts fill level-1 nodes, which push pointers
#                into their siblings and split (push_nodes_for_insert(),
#                split_node())
#   sparse       12,000 files (4K nodes), f2001 to f9000 deleted but three,
#                which the second step rewrites: inode_in_dir() finds
#                their names in place and reads, without copying, their
#                DIR_INDEX and DIR_ITEM leaves
#   unlink-balance 8,000 committed empty files in a directory (4K nodes: a
#                3-level fs tree), f1 to f5000 unlinked and the directory
#                fsynced: replay_dir_deletes() unlinks 5,000 names, the
#                DIR_INDEX leaves of that range empty and go, and the
#                level-1 nodes above them drain to a quarter: balance_level()
#                moves their pointers into their siblings (counted, must be
#                at least one), and the metadata bytes_used after the
#                replay must equal sysfs' (the nodes it frees)
#   unlink-many  the same with 12,000 files, nine in ten unlinked: several
#                balances, nodes freed
#   level2-root  100 files given 3,800-byte xattrs (4K nodes: one a leaf)
#                until the fs tree's level-2 root holds 117 pointers at a
#                commit (about 9,700 xattrs, under a minute), then a new
#                file of 160 such xattrs fsynced (one fsync: a short step
#                for a foreign sync to fall into): the replay's
#                inserts split level-1 nodes, the root reaches
#                BTRFS_NODEPTRS_PER_BLOCK - 3 and splits under a new root
#                (split_node() at level 2, insert_new_root()); the
#                metadata bytes_used after the replay must equal sysfs'
# A case whose fsync falls back to a full commit has no log: made again
# (three tries), then skipped with a note.  Every case must count what
# the kernel read.  log_replay_partial must be false, except where the
# replay's leaf model flags an operation it does not follow
# (log_replay.tree_model_inexact: a node of one pointer that
# balance_level() finds without a left sibling, a name whose hash is
# taken...; no case here so far); then it is true, and the count may be
# PARTIAL_SLACK reads off either way (printed).
# The layouts differ from run to run, more so under load: the first
# step's files get their inline extents at writeback, their inode items
# at the commit, and where writeback falls decides which items end a
# leaf.  many-16k once had a rewritten file's extent item last in its
# leaf, and btrfs_drop_extents() then reads the next leaf (counted since).
# Another task's commit of the case's filesystem during the fsync step (a
# "sync" beside the test: btrfs_transaction_commit traced in the instance
# while the step runs) commits part of the step and cuts the log there:
# a log and a layout no quiet run gives, from timing the image does not
# record.  Such a case is printed with those commits and compared all the
# same; a difference there is reported, not failed, but in the unlink
# cases, held exactly there too (only their node balance, which needs the
# deletions the other commits took, may be missing: reported).  Every
# case built without them is held exactly.  Such layouts showed model
# gaps since fixed (node-split and sparse one read over: a push's sibling
# too full and the directory's iget are reads, not copies; unlink-balance
# and unlink-many one or two short: the order of the replay's COWs
# decides which places keep extent items, each iget's props walk can read
# the next leaf, an emptied leaf that took a neighbour's items is read:
# Documentation/mount-estimate.md).  Not yet: extents one read off either
# way there (the replay's searches are counted on the image's tree).

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq mkfs.btrfs btrfs jq losetup python3 setfattr findmnt blockdev
need_root
need_btrfs_module
need_tracefs
setup_cleanup_trap

setup_trace_instance 037
[ -e "$inst/events/btrfs/btrfs_transaction_commit/enable" ] ||
	fail "no btrfs/btrfs_transaction_commit event in $inst"

mnt=$TEST_TMP/mnt
mkdir -p "$mnt"

# The file operations of a case, in one process
cat > "$TEST_TMP/io.py" << 'EOF'
import os, sys

def fsync(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)

def pwrite(name, off, length, sync=True):
    fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644)
    os.pwrite(fd, os.urandom(length), off)
    if sync:
        os.fsync(fd)
    os.close(fd)

def files(d, n, length):
    for i in range(1, n + 1):
        pwrite("%s/f%d" % (d, i), 0, length, sync=False)

os.chdir(sys.argv[1])
exec(sys.argv[2])
EOF

# traced_reads IMG TRACE [FOREIGN_BLOCKS]: the reads of a cold mount -o ro
# of IMG (which replays the log), the mount's own (mount_reads); the trace
# is left in TRACE, the metadata bytes_used after the replay (sysfs) in
# TRACE.meta, the reads of other tasks in TRACE.foreign.  With
# FOREIGN_BLOCKS, a dd of that many blocks of the device (O_DIRECT) in the
# traced window first, as another test's device scan: not the mount's
traced_reads()
{
	local dev mm fsid
	dev=$(setup_loop "$1") || exit 1
	udevadm settle 2> /dev/null
	mm=$(cat "/sys/block/${dev#/dev/}/dev")
	echo "dev == $(( (${mm%:*} << 20) | ${mm#*:} ))" > "$inst/events/block/block_bio_queue/filter"
	echo > "$inst/trace"
	echo 1 > "$inst/events/block/block_bio_queue/enable"
	[ -z "${3:-}" ] || dd if="$dev" of=/dev/null bs=4096 count="$3" iflag=direct status=none ||
		fail "dd of $dev failed"
	mount -t btrfs -o ro "$dev" "$mnt" || fail "mount -o ro of $1 failed"
	echo 0 > "$inst/events/block/block_bio_queue/enable"
	fsid=$(findmnt -n -o UUID "$mnt")
	cat "/sys/fs/btrfs/$fsid/allocation/metadata/bytes_used" > "$2.meta" 2> /dev/null
	umount "$mnt"
	btrfs device scan --forget "$dev" > /dev/null 2>&1
	losetup -d "$dev"
	grep -v '^#' "$inst/trace" > "$2"
	mount_reads "$2" "$2.foreign"
}

# foreign_commits FSID: the commits of FSID's filesystem in the instance's
# trace made by another task than the fsync step's python3 or the kernel's
# workers (test 040's rule): a "sync" of another test, as "N by COMM, ..."
foreign_commits()
{
	awk -v FSID="$1" 'index($0, FSID ":") && / btrfs_transaction_commit: / {
			c = $1; sub(/-[0-9]+$/, "", c)
			if (c !~ /^(python3|kworker\/.*)$/) n[c]++ }
		END { sep = ""; for (c in n) { printf "%s%d by %s", sep, n[c], c; sep = ", " } }' \
		"$inst/trace"
}

# make_log_image IMG NODESIZE PRE POST: IMG with a log tree (PRE committed,
# POST fsynced); prints the log_root of the copy, and leaves in IMG.foreign
# the commits other tasks made during the fsync step (foreign_commits), in
# IMG.commits the number of all its commits then
make_log_image()
{
	local img=$1 orig=$1.orig fsmnt=$TEST_TMP/fs dev
	rm -f "$img" "$orig"
	truncate -s 1G "$orig"
	mkfs.btrfs -q -f -n "$2" "$orig" > /dev/null 2>&1 || fail "mkfs.btrfs failed"
	dev=$(setup_loop "$orig") || exit 1
	mkdir -p "$fsmnt"
	mount -t btrfs -o commit=300 "$dev" "$fsmnt" || fail "mount of $orig failed"
	register_mount "$fsmnt"
	# the first mount's own commits (uuid tree...) are over before the case
	sync
	sleep 1
	python3 "$TEST_TMP/io.py" "$fsmnt" "$3" || fail "first step failed"
	sync
	# a commit of another task during the fsync step ends the log there
	echo > "$inst/trace"
	echo 1 > "$inst/events/btrfs/btrfs_transaction_commit/enable"
	python3 "$TEST_TMP/io.py" "$fsmnt" "$4" || fail "second step failed"
	cp --sparse=always "$orig" "$img" || fail "cannot copy $orig"
	echo 0 > "$inst/events/btrfs/btrfs_transaction_commit/enable"
	foreign_commits "$(findmnt -n -o UUID "$fsmnt")" > "$img.foreign"
	# and every commit of it then, the step's own too (its deletions committed)
	awk -v FSID="$(findmnt -n -o UUID "$fsmnt")" 'index($0, FSID ":") &&
		/ btrfs_transaction_commit: / { n++ } END { print n + 0 }' "$inst/trace" > "$img.commits"
	umount "$fsmnt" || fail "umount $fsmnt failed"
	btrfs device scan --forget "$dev" > /dev/null 2>&1
	losetup -d "$dev"
	rm -f "$orig"
	btrfs inspect-internal dump-super "$img" | awk '$1 == "log_root" { print $2 }'
}

# keep_case NAME IMG TRACE: with KEEP=DIR, keep a differing case's image
# (before the mount: the log not yet replayed), its mount's trace (and the
# metadata bytes_used after it, .meta) and the tool's verbose estimate in
# DIR/NAME.$$.*, to compare block by block
keep_case()
{
	local to=$KEEP/$1.$$
	[ -n "${KEEP:-}" ] || return 0
	mkdir -p "$KEEP" || return 0
	cp --sparse=always "$2" "$to.img"
	cp "$3" "$to.trace"
	cp "$3.meta" "$to.meta" 2> /dev/null
	"$BTRFS_SPACE" -v mount-estimate "$2" > "$to.estimate" 2>&1
	echo "  kept in $to.*"
}

failures=0
reported=
# differs NAME MESSAGE: a difference from the kernel; a failure, unless the
# case's image was built under foreign commits ($foreign: other tasks'
# commits during the fsync step cut its log at points no quiet run gives,
# timing the image does not record) and the case is not held there
# ($held: the unlink cases), then reported, not failed
differs()
{
	case_differs=1
	if [ -n "$foreign" ] && [ -z "$held" ]; then
		echo "  reported, not failed: $2 (built under foreign commits: $foreign)"
		[[ " $reported " == *" $1 "* ]] || reported="$reported $1"
	else
		echo "  FAIL: $2"
		failures=$((failures + 1))
	fi
}
# A replay counted in part (log_replay_partial: the leaf model flags an
# operation it does not follow) may be this many reads off: before node
# splits and pushes were replayed, the subvolume case's left 0 or 1 (a
# leaf a push read, that the kernel's node push moved under another node)
PARTIAL_SLACK=2
# the blocks the foreign-reads case's dd reads in the mount's traced window
FOREIGN_BLOCKS=16
# check NAME NODESIZE EXACT PRE POST [balances|meta|foreign-reads]: EXACT
# "exact" fails on any difference; with "balances" the replay must count a
# node balance, and with either of the two the metadata used after it must
# be the kernel's; with "foreign-reads" a dd reads FOREIGN_BLOCKS blocks of
# the device in the traced window, which must be counted apart;
# CASES="glob ..." runs only the cases named
check_once()
{
	local name=$1 img=$TEST_TMP/$1.img log try tool partial inexact moves meta kernel c foreign held
	local reader others step_commits
	if [ -n "${CASES:-}" ]; then
		for c in $CASES; do
			# shellcheck disable=SC2053
			[[ $name == $c ]] && break
			c=
		done
		[ -n "$c" ] || return 0
	fi
	for try in 1 2 3; do
		log=$(make_log_image "$img" "$2" "$4" "$5") || exit
		[ -n "$log" ] && [ "$log" != 0 ] && break
		echo "note $name: try $try got no log tree (the fsync committed)"
	done
	if [ -z "$log" ] || [ "$log" = 0 ]; then
		echo "$name: skipped, no log tree after 3 tries"
		rm -f "$img.foreign"
		return
	fi
	foreign=$(cat "$img.foreign")
	step_commits=$(cat "$img.commits" 2> /dev/null)
	rm -f "$img.foreign" "$img.commits"
	# the balance cases' reads and metadata are held under foreign commits
	# too (not level2-root's: a foreign commit there takes its root split)
	held=
	[ "${6:-}" != balances ] || held=1
	tool=$("$BTRFS_SPACE" --format json mount-estimate "$img" |
		jq -r '.mount_estimate | "\(.total_reads) \(.log_replay_partial)"')
	partial=${tool#* }
	tool=${tool% *}
	# the one residual: an operation the replay's leaf model does not follow;
	# and the node moves the replay made (printed, NODES checked)
	read -r inexact moves meta < <("$BTRFS_SPACE" --format json inspect "$img" |
		jq -r '"\(.log_replay.tree_model_inexact) \(.log_replay.node_pushes)/\(.log_replay.node_splits)/\(.log_replay.node_balances) \(.space_info.metadata.bytes_used)"')
	# the mount replays the log into the image: keep it as it was
	[ -z "${KEEP:-}${KEEP_ALL:-}" ] || cp --sparse=always "$img" "$img.pre"
	case_differs=
	reader=
	[ "${6:-}" != foreign-reads ] || reader=$FOREIGN_BLOCKS
	kernel=$(traced_reads "$img" "$TEST_TMP/$name.trace" "$reader")
	echo "$name: kernel $kernel reads, mount-estimate $tool (log tree at $log)"
	echo "  node pushes/splits/balances of the replay: $moves"
	[ -z "$foreign" ] || echo "  commits of other tasks during the fsync step: $foreign"
	others=$(cat "$TEST_TMP/$name.trace.foreign" 2> /dev/null)
	[ -z "$others" ] || echo "  reads of other tasks on the device during the mount, not the mount's: $others"
	if [ -n "$reader" ] && [ "$others" != "$reader by dd" ]; then
		echo "  FAIL: the $reader reads of a dd in the traced window are not set apart ('$others')"
		failures=$((failures + 1))
	fi
	if [ "${6:-}" = balances ] && [ "${moves##*/}" = 0 ]; then
		# a layout the other commits took the deletions of: not the model's
		if [ -z "$foreign" ] && [ "${step_commits:-0}" -gt 0 ]; then
			# the step's own commits (its python3, a kernel worker) did
			echo "  reported, not failed: the case is made to balance nodes on deletions, none counted ($step_commits commits during the fsync step: its deletions committed, not logged)"
			[[ " $reported " == *" $name "* ]] || reported="$reported $name"
		else
			held= differs "$name" "the case is made to balance nodes on deletions, none counted"
		fi
	fi
	# a balance frees nodes, a split adds: the replayed metadata used must be the kernel's
	if [[ ${6:-} == balances || ${6:-} == meta ]] && [ "$meta" != "$(cat "$TEST_TMP/$name.trace.meta" 2> /dev/null)" ]; then
		differs "$name" "metadata bytes_used $meta, the kernel's $(cat "$TEST_TMP/$name.trace.meta" 2> /dev/null)"
	fi
	# fail in traced_reads' subshell leaves no count: that is a failure here
	if [ -z "$kernel" ]; then
		echo "  FAIL: the kernel's mount was not traced"
		failures=$((failures + 1))
		rm -f "$img" "$img.pre"
		return
	fi
	if [ "$partial" != "$inexact" ]; then
		echo "  FAIL: log_replay_partial is $partial, the leaf model's tree_model_inexact $inexact"
		failures=$((failures + 1))
	elif [ "$partial" = true ]; then
		echo "  log_replay_partial: the leaf model met an operation it does not follow"
	fi
	if [ "$partial" = true ] && [ "$tool" != "$kernel" ]; then
		# counted in part: off by at most PARTIAL_SLACK, printed
		echo "  $((tool - kernel)) reads off, counted in part"
		if [ "$tool" -gt $((kernel + PARTIAL_SLACK)) ] ||
		   [ "$tool" -lt $((kernel - PARTIAL_SLACK)) ]; then
			echo "  FAIL: more than $PARTIAL_SLACK reads off"
			failures=$((failures + 1))
		fi
	elif [ "$tool" -gt "$kernel" ]; then
		differs "$name" "counts $((tool - kernel)) reads the kernel did not make"
	elif [ "$tool" -lt "$kernel" ] && [ "$3" = exact ]; then
		differs "$name" "$((kernel - tool)) reads not counted"
	elif [ "$tool" -lt "$kernel" ]; then
		echo "  $((kernel - tool)) reads not counted"
	fi
	if [ -n "${KEEP_ALL:-}" ]; then
		KEEP=$KEEP_ALL keep_case "$name" "$img.pre" "$TEST_TMP/$name.trace"
	elif [ "$tool" != "$kernel" ] || [ -n "$case_differs" ]; then
		keep_case "$name" "$img.pre" "$TEST_TMP/$name.trace"
	fi
	rm -f "$img" "$img.pre"
}

# check ...: check_once, and once more on a new build when the first build
# differs from the kernel.  A difference the second build does not repeat
# is reported, not failed (its line above says what it was and where the
# log tree was: a layout to chase); one repeated fails.  Seen once: the CI
# run of f751e1d at load 4-5 beside another CI run, unlink-many 1 read
# short (kernel 1,173, log tree at 39895040, no foreign commit), never in
# quiet runs nor in eight runs beside a sync loop and two CPU hogs.  A
# loop of that case under load kept two kinds since: another task's reads
# of the device in the trace (47 by another test's btrfs-space device
# scan; counted apart since, mount_reads) and a layout the replay got
# wrong (a node's bound after fixup_low_keys(); the fixture
# log-replay/unlink-fixup of image test 050 since)
check()
{
	local before=$failures

	check_once "$@"
	[ "$failures" = "$before" ] && return
	echo "  $1: differs in its first build: built again (a second difference fails)"
	failures=$before
	check_once "$@"
	[ "$failures" = "$before" ] || return
	echo "  reported, not failed: $1 differed from the kernel in its first build only"
	[[ " $reported " == *" $1 "* ]] || reported="$reported $1"
}

check small 16384 exact 'pass' '
for i in range(3): pwrite("new%d" % i, 0, 5000)'

check foreign-reads 16384 exact 'pass' '
for i in range(3): pwrite("new%d" % i, 0, 5000)' foreign-reads

check rewrite-4k 4096 exact 'files(".", 2000, 3000); pwrite("big", 0, 8 << 20, sync=False)' '
for i in range(1, 2001, 97): pwrite("f%d" % i, 0, 3000)
for i in range(20): pwrite("n%d" % i, 0, 9000)
for off in range(0, 8 << 20, 256 << 10): pwrite("big", off, 8192, sync=False)
fsync("big")'

check extents 16384 exact 'pwrite("big", 0, 64 << 20, sync=False)' '
for off in range(0, 64 << 20, 128 << 10): pwrite("big", off, 4096, sync=False)
fsync("big")'

check xattrs 4096 exact 'files(".", 2000, 4)' '
import random
random.seed(37)
for i in random.sample(range(1, 2001), 150):
    os.setxattr("f%d" % i, "user.a", b"x" * 200)
    os.setxattr("f%d" % i, "user.b%d" % i, b"1")
for n in os.listdir("."):
    fsync(n)'

check many-16k 16384 exact 'files(".", 3000, 2000)' '
for i in range(1, 3001, 50): pwrite("f%d" % i, 0, 9000)
for i in range(30): pwrite("n%d" % i, 0, 20000)'

check renames 4096 exact 'os.mkdir("d"); files("d", 600, 100)' '
for i in range(1, 601, 12):
    os.rename("d/f%d" % i, "d/g%d" % i)
    fsync("d/g%d" % i)
for i in range(6, 601, 20):
    os.link("d/f%d" % i, "d/h%d" % i)
    fsync("d/h%d" % i)
for i in range(20): pwrite("d/n%d" % i, 0, 3000)'

check large-4k 4096 exact 'files(".", 16000, 5000)
for i in range(1, 16001, 2): os.remove("f%d" % i)' '
for i in range(2, 16001, 400): pwrite("f%d" % i, 0, 5000)
for i in range(40): pwrite("n%d" % i, 0, 9000)'

check block-groups 4096 exact '
for r in range(6):
    files(".", 0, 0)
    for i in range(400): pwrite("s%d_%d" % (r, i), 0, 5000, sync=False)
    fd = os.open("big%d" % r, os.O_WRONLY | os.O_CREAT, 0o644)
    os.posix_fallocate(fd, 0, 40 << 20)
    os.close(fd)
for r in range(6):
    for i in range(0, 400, 2): os.remove("s%d_%d" % (r, i))' '
for r in range(6):
    for i in range(1, 400, 40): pwrite("s%d_%d" % (r, i), 0, 5000)
for i in range(20): pwrite("n%d" % i, 0, 9000)'

check subvolume 4096 exact '
import subprocess
subprocess.run(["btrfs", "-q", "subvolume", "create", "sv"], check=True)
files(".", 500, 1000); files("sv", 500, 1000)' '
for d in (".", "sv"):
    for i in range(1, 501, 25): pwrite("%s/f%d" % (d, i), 0, 6000)
    for i in range(10): pwrite("%s/n%d" % (d, i), 0, 3000)'

check node-split 4096 exact 'os.mkdir("d"); files("d", 6000, 0)' '
for i in range(1200): pwrite("d/m%d" % i, 0, 100)'

check sparse 4096 exact 'files(".", 12000, 1000)
for i in range(2001, 9001):
    if i not in (3000, 5000, 7000): os.remove("f%d" % i)' '
for i in (3000, 5000, 7000): pwrite("f%d" % i, 0, 1000)'

check unlink-balance 4096 exact 'os.mkdir("d"); files("d", 8000, 0)' '
for i in range(1, 5001): os.remove("d/f%d" % i)
fsync("d")' balances

check unlink-many 4096 exact 'os.mkdir("d"); files("d", 12000, 0)' '
for i in range(1, 12001):
    if i % 10: os.remove("d/f%d" % i)
fsync("d")' balances

# the fs tree's root: (level, pointers) of its committed block
check level2-root 4096 exact '
import subprocess, time
val = b"v" * 3800
def fs_root():
    dev = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "--target", "."],
                         capture_output=True, text=True).stdout.split()[0]
    os.sync()
    subprocess.run(["blockdev", "--flushbufs", dev], check=True)
    out = subprocess.run(["btrfs", "inspect-internal", "dump-tree", "-t", "1", dev],
                         capture_output=True, text=True).stdout.split()
    at = out.index("(FS_TREE")
    bytenr = out[out.index("bytenr", at) + 1]
    out = subprocess.run(["btrfs", "inspect-internal", "dump-tree", "-b", bytenr, dev],
                         capture_output=True, text=True).stdout.split()
    level = int(out[out.index("level") + 1]) if "node" in out else 0
    return level, int(out[out.index("items") + 1])
for f in range(100):
    open("x%d" % f, "w").close()
n = 0
t = time.time()
while True:
    level, items = fs_root()
    if level > 2:
        raise SystemExit("the fs tree root split: %d %d" % (level, items))
    if level == 2 and items >= 117:
        print("fs tree root: level 2, %d pointers after %d xattrs, %.0f s"
              % (items, n, time.time() - t), file=sys.stderr)
        break
    k = 500 if level < 2 or items < 100 else 40 if items < 113 else 1
    for i in range(k):
        os.setxattr("x%d" % (n % 100), "user.%d" % n, val)
        n += 1' '
val = b"w" * 3800
open("y", "w").close()
for j in range(160): os.setxattr("y", "user.%d" % j, val)
fsync("y")' meta

[ -z "$reported" ] || echo "reported, not failed (built under foreign commits, or differing in a first build only):$reported"
[ "$failures" -eq 0 ] || fail "$failures differences from the kernel's reads"
echo "mount reads with a log tree: every case built without foreign commits equal to the kernel's, and the unlink cases built with them, or within $PARTIAL_SLACK where counted in part; the balance and level2-root cases' metadata used equal to sysfs"
