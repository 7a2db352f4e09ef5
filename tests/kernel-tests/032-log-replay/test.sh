#!/bin/bash
# Log replay: a mount replays the log tree (superblock log_root != 0) even
# with -o ro and commits, so the space infos sysfs shows are those of the
# filesystem after the replay.  "btrfs-space inspect" must give them
# before any mount, from the image with the log.
#
# For each case a 1 GiB sparse image is made with mkfs.btrfs defaults and
# mounted read-write on a loop device with -o commit=300, so no
# transaction commits by itself during the test; "sync" commits the
# files of the first step, then the second step writes and fsyncs, which
# writes the log tree and points the superblock at it.  The backing file
# is copied (cp --sparse=always) while the filesystem is still mounted,
# the copy must have log_root != 0 (btrfs inspect-internal dump-super),
# and the original is unmounted.  btrfs-space reads the copy (JSON),
# then a second copy is mounted -o ro on a read-write loop device, which
# replays the log, and every field of every space info and the global
# reserve (global_rsv_size, global_rsv_reserved) must equal
# /sys/fs/btrfs/<fsid>/allocation/.  The report must also say a log tree
# is present.
#
# Cases: new files; overwrite of a whole extent committed before the log
# (frees it); overwrite of one of several committed extents; a small
# overwrite inside a committed extent (split: the old extent stays);
# append; fallocate (prealloc, also beyond EOF with KEEP_SIZE); a clone of
# committed data and a clone of data new in the log; a file deleted and
# its directory fsynced (the inode is an orphan: its extents stay on a
# read-only mount); truncation; compressed files (-o compress=zstd); and
# cases whose replay splits and pushes leaves, which metadata bytes_used
# counts (Documentation/formulas.md, section 5.6): some hundreds of fsynced
# new and rewritten files (the extent tree splits), 120 new files in an
# empty filesystem (the subvolume's root leaf splits and gets a node above
# it), 400 new files, new and rewritten files with long names in a
# directory (overwritten inode items split full leaves and push items
# into their neighbours), and new files in a subvolume and the top
# subvolume (two log trees); hard links and renames; xattrs; a committed
# inode whose names overflowed into INODE_EXTREFs; a directory fsynced
# after most of its names were deleted (replay_dir_deletes()); renames
# and new links in a directory fsynced alone (insert_one_name()); large
# fsynced writes (their csum items split the csum tree's leaves); a new
# back reference in hundreds of committed extents' items, in the top
# subvolume and in a snapshot (the items grow by 29 bytes each); freed
# extents scattered through a block group, 400 of 800 and 400 of 1,200
# (the commit's copies of the changed blocks take lower places, their
# items go in before the originals' go out, and a full extent-tree leaf
# splits on the way in some runs: the layout differs from run to run).
# LOG_REPLAY_CASES="glob ..." runs only the cases named; LOG_REPLAY_KEEP=DIR
# keeps there the image (before the mount) of each case that differs.
#
# A case whose fsync falls back to a full commit has no log to check: it
# is made again (five tries) and fails if it never gets one.  Another
# task's sync(2) during the fsync step commits the case's filesystem too
# and drops its log (a CI run beside other tests lost "compress" three
# times so): btrfs_transaction_commit is traced in a private tracefs
# instance while the step runs, and a case whose every try lost its log
# to such commits is skipped with their count, not failed; the test is
# skipped when fewer than half of its cases could be compared.

source "$TEST_TOP/common" || exit

need_root
check_prereq btrfs-space btrfs mkfs.btrfs losetup mount umount jq truncate python3 fallocate
need_btrfs_module

# other tasks' commits during a fsync step: traced where tracefs is
inst=
if grep -qw tracefs /proc/filesystems; then
	setup_trace_instance 032
	[ -e "$inst/events/btrfs/btrfs_transaction_commit/enable" ] || inst=
fi

work="$TEST_TMP/log-replay"
mkdir -p "$work" || fail "cannot create $work"

# The file operations of a case, in one process: helpers for the snippets
cat > "$work/io.py" << 'EOF'
import os, sys, fcntl, struct, subprocess

def _open(name):
    return os.open(name, os.O_WRONLY | os.O_CREAT, 0o644)

def fsync(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)

def pwrite(name, off, length, sync=True, zero=False):
    fd = _open(name)
    os.pwrite(fd, bytes(length) if zero else os.urandom(length), off)
    if sync:
        os.fsync(fd)
    os.close(fd)

def falloc(name, off, length, keep_size=False):
    args = ["fallocate"] + (["-n"] if keep_size else []) + \
           ["-o", str(off), "-l", str(length), name]
    subprocess.run(args, check=True)
    fsync(name)

def clone(src, dst, soff, doff, length):
    s = os.open(src, os.O_RDONLY)
    d = _open(dst)
    FICLONERANGE = 0x4020940d
    fcntl.ioctl(d, FICLONERANGE, struct.pack("qQQQ", s, soff, length, doff))
    os.fsync(d)
    os.close(d)
    os.close(s)

def setxattr(name, attr, length):
    os.setxattr(name, attr, b"v" * length)

def link(src, dst):
    os.link(src, dst)

def truncate(name, size):
    os.truncate(name, size)
    fsync(name)

os.chdir(sys.argv[1])
exec(sys.argv[2])
EOF

# mount_image IMG MNT OPTS: attach IMG to a loop device and mount it
mount_image()
{
	local img=$1 mnt=$2 opts=$3 dev

	dev=$(losetup -f --show "$img" 2> "$work/losetup.log") ||
		skip "cannot attach a loop device: $(tail -n 1 "$work/losetup.log")"
	register_loop "$dev"
	mkdir -p "$mnt" || fail "cannot create $mnt"
	mount -t btrfs -o "$opts" "$dev" "$mnt" 2> "$work/mount.log" ||
		skip "cannot mount btrfs on a loop device: $(tail -n 1 "$work/mount.log")"
	register_mount "$mnt"
	echo "$dev"
}

# release MNT DEV: unmount and detach now (the trap would do it at exit)
release()
{
	umount "$1" || fail "umount $1 failed"
	btrfs device scan --forget "$2" > /dev/null 2>&1
	losetup -d "$2" || fail "losetup -d $2 failed"
}

# trace_commits 1|0: trace the commits of every btrfs (when traced at all)
trace_commits()
{
	[ -n "$inst" ] || return 0
	[ "$1" = 0 ] || echo > "$inst/trace"
	echo "$1" > "$inst/events/btrfs/btrfs_transaction_commit/enable"
}

# make_log_image DIR MOUNTOPTS PRE POST: the image with a log in DIR/copy.img;
# DIR/foreign gets the commits other tasks made during the fsync step
make_log_image()
{
	local dir=$1 opts=$2 pre=$3 post=$4 dev fsid

	rm -f "$dir/orig.img" "$dir/copy.img"
	truncate -s 1G "$dir/orig.img" || fail "cannot create $dir/orig.img"
	mkfs.btrfs -q -f "$dir/orig.img" > "$dir/mkfs.log" 2>&1 ||
		fail "mkfs.btrfs failed: $(tail -n 1 "$dir/mkfs.log")"
	dev=$(mount_image "$dir/orig.img" "$dir/mnt" "commit=300$opts") || exit
	# the first mount's own commits (uuid tree...) are over before the case
	sync
	sleep 1
	python3 "$work/io.py" "$dir/mnt" "$pre" || fail "$dir: first step failed"
	sync
	trace_commits 1
	python3 "$work/io.py" "$dir/mnt" "$post" || fail "$dir: second step failed"
	cp --sparse=always "$dir/orig.img" "$dir/copy.img" || fail "cannot copy $dir/orig.img"
	trace_commits 0
	: > "$dir/foreign"
	if [ -n "$inst" ]; then
		fsid=$(findmnt -n -o UUID "$dir/mnt")
		commits_by_others "$inst" "$fsid" 'python3|cp|fallocate|kworker/.*' > "$dir/foreign"
	fi
	release "$dir/mnt" "$dev"
	rm -f "$dir/orig.img"
	btrfs inspect-internal dump-super "$dir/copy.img" |
		awk '$1 == "log_root" { print $2 }'
}

failed=0
checked=0
cases=0

# check NAME MOUNTOPTS PRE POST: make the image, compare tool and kernel
check()
{
	local name=$1 dir="$work/$1" log=0 try dev fsid foreign lost=0

	# LOG_REPLAY_CASES="glob ..." runs only the cases it names
	if [ -n "$LOG_REPLAY_CASES" ]; then
		local c hit=0
		for c in $LOG_REPLAY_CASES; do
			# shellcheck disable=SC2053
			[[ $name == $c ]] && hit=1
		done
		[ "$hit" = 1 ] || return 0
	fi
	mkdir -p "$dir" || fail "cannot create $dir"
	cases=$((cases + 1))
	for try in 1 2 3 4 5; do
		log=$(make_log_image "$dir" "$2" "$3" "$4") || exit
		[ -n "$log" ] && [ "$log" != 0 ] && break
		foreign=$(cat "$dir/foreign")
		if [ -n "$foreign" ]; then
			lost=$((lost + 1))
			echo "note $name: try $try got no log tree (other tasks committed it: $foreign)"
		else
			echo "note $name: try $try got no log tree (the fsync committed)"
		fi
	done
	if [ -z "$log" ] || [ "$log" = 0 ]; then
		if [ "$lost" = 5 ]; then
			echo "$name: skipped, each of 5 tries lost its log to other tasks' commits (a busy machine)"
			return
		fi
		echo "FAIL $name: no log tree after 5 tries"
		failed=$((failed + 1))
		return
	fi
	# read before any mount: the replay writes to the image
	run_check_stdout "$BTRFS_SPACE" inspect --format json "$dir/copy.img" > "$dir/tool.json"
	cp --sparse=always "$dir/copy.img" "$dir/replay.img" || fail "cannot copy $dir/copy.img"
	dev=$(mount_image "$dir/replay.img" "$dir/mnt" ro) || exit
	fsid=$(jq -r .filesystem.fsid "$dir/tool.json")
	[ -d "/sys/fs/btrfs/$fsid/allocation" ] || fail "$name: no /sys/fs/btrfs/$fsid/allocation"
	allocation_keys "$fsid" | sort > "$dir/kernel.txt"
	release "$dir/mnt" "$dev"
	report_allocation_keys < "$dir/tool.json" | sort > "$dir/tool.txt"
	checked=$((checked + 1))
	if [ "$(jq -r '.log_replay.present' "$dir/tool.json")" != true ] ||
	   [ "$(jq -r '.log_replay.log_root' "$dir/tool.json")" != "$log" ]; then
		echo "FAIL $name: the report does not show the log tree at $log"
		failed=$((failed + 1))
	elif ! diff -u "$dir/kernel.txt" "$dir/tool.txt" > "$dir/diff"; then
		echo "MISMATCH $name (- kernel, + btrfs-space):"
		grep '^[-+][a-z]' "$dir/diff"
		# LOG_REPLAY_KEEP=DIR keeps the image of a case that differs
		[ -z "${LOG_REPLAY_KEEP:-}" ] ||
			cp --sparse=always "$dir/copy.img" "$LOG_REPLAY_KEEP/$name.$$.img"
		failed=$((failed + 1))
	else
		echo "match $name $(jq -c '.log_replay | {extent_items, refs_added,
			extents_allocated, bytes_allocated, extents_freed, bytes_freed,
			subvol_blocks_added, subvol_blocks_freed, extent_tree_blocks_added,
			extent_tree_blocks_freed, csum_tree_blocks_added,
			csum_tree_blocks_freed, tree_model_inexact}' "$dir/tool.json")"
	fi
	rm -f "$dir/replay.img"
}

M=1048576
check new-files "" "" "
pwrite('big', 0, $M)
for i in range(1, 21):
    pwrite('f%d' % i, 0, 4096 * i)"
check overwrite-whole "" "pwrite('a', 0, $M, sync=False)" "pwrite('a', 0, $M)"
check overwrite-one-of-four "" "
for i in range(4):
    pwrite('a', i * 262144, 262144, sync=False)
    os.sync()" "pwrite('a', 262144, 262144)"
check overwrite-inside "" "pwrite('a', 0, 8192, sync=False)" "pwrite('a', 0, 4096)"
check append "" "pwrite('a', 0, 8192, sync=False)" "pwrite('a', 8192, 65536)"
check fallocate "" "pwrite('p', 0, 4096, sync=False)" "
falloc('q', 0, 2 * $M)
falloc('p', $M, $M, keep_size=True)
pwrite('p', 4096, 4096)"
check clone-committed "" "pwrite('a', 0, $M, sync=False)" "clone('a', 'b', 0, 0, 524288)"
check clone-new "" "" "
pwrite('a', 0, $M)
clone('a', 'b', 0, 0, 524288)
clone('a', 'a', 0, $M, 262144)"
check delete "" "
pwrite('a', 0, $M, sync=False)
pwrite('b', 0, 4096, sync=False)
os.mkdir('d')
pwrite('d/c', 0, 65536, sync=False)" "
os.unlink('a')
pwrite('b', 0, 8192)
os.unlink('d/c')
fsync('d')"
check truncate "" "pwrite('a', 0, $M, sync=False)" "truncate('a', 4096)"
check compress ",compress=zstd" "pwrite('c', 0, 131072, zero=True, sync=False)" "
pwrite('d', 0, 131072, zero=True)
pwrite('c', 0, 131072, zero=True)
pwrite('r', 0, 8192)"
# enough new and rewritten files that the replay splits leaves
check many-files "" "
for i in range(100):
    pwrite('old%d' % i, 0, 8192, sync=False)" "
for i in range(300):
    pwrite('new%d' % i, 0, 4096 * (1 + i % 4), sync=False)
for i in range(300):
    fsync('new%d' % i)
for i in range(0, 100, 3):
    pwrite('old%d' % i, 0, 8192)"
check new-files-root-leaf "" "" "
for i in range(120):
    pwrite('new%d' % i, 0, 4096 * (1 + i % 4), sync=False)
for i in range(120):
    fsync('new%d' % i)"
check new-files-400 "" "" "
for i in range(400):
    pwrite('new%d' % i, 0, 4096 * (1 + i % 4), sync=False)
for i in range(400):
    fsync('new%d' % i)"
check long-names-dir "" "
os.mkdir('d')
for i in range(500):
    pwrite('d/old_file_with_long_name_%d' % i, 0, 4096, sync=False)" "
for i in range(300):
    pwrite('d/new_file_%d' % i, 0, 4096 * (1 + i % 3), sync=False)
for i in range(300):
    fsync('d/new_file_%d' % i)
for i in range(0, 500, 2):
    pwrite('d/old_file_with_long_name_%d' % i, 0, 8192)"
# two log trees (a subvolume's and the top one's), new files in both
check two-subvolumes "" "
subprocess.run(['btrfs', '-q', 'subvolume', 'create', 'sv'], check=True)
for i in range(100):
    pwrite('sv/o%d' % i, 0, 4096, sync=False)" "
for i in range(250):
    pwrite('sv/n%d' % i, 0, 8192, sync=False)
for i in range(250):
    fsync('sv/n%d' % i)
for i in range(150):
    pwrite('top%d' % i, 0, 4096)"
# a hard link and renames in the log: the dentries come from INODE_REFs
check hardlink-rename "" "
os.mkdir('d')
os.mkdir('e')
for i in range(300):
    pwrite('d/file_%d' % i, 0, 4096, sync=False)" "
for i in range(0, 300, 3):
    os.link('d/file_%d' % i, 'e/link_%d' % i)
    os.rename('d/file_%d' % (i + 1), 'e/renamed_%d' % (i + 1))
    pwrite('d/new_%d' % i, 0, 4096, sync=False)
    os.link('d/new_%d' % i, 'e/new_link_%d' % i)
for i in range(0, 300, 3):
    fsync('d/file_%d' % i)
    fsync('e/renamed_%d' % (i + 1))
    fsync('d/new_%d' % i)"
# xattrs on fsynced files: XATTR_ITEMs go in by overwrite_item()
check xattrs "" "
for i in range(100):
    pwrite('o%d' % i, 0, 4096, sync=False)" "
for i in range(0, 100, 2):
    setxattr('o%d' % i, 'user.a', 40 + i)
    fsync('o%d' % i)
for i in range(100):
    pwrite('n%d' % i, 0, 4096, sync=False)
    setxattr('n%d' % i, 'user.b', 200)
    setxattr('n%d' % i, 'user.c', 1000)
    fsync('n%d' % i)"
# many names of one inode in one directory, committed: the INODE_REF
# overflowed into INODE_EXTREFs, and a write logs them all (a new name
# for such an inode makes the fsync commit)
check extrefs "" "
os.mkdir('d')
pwrite('d/t', 0, 4096, sync=False)
for i in range(120):
    link('d/t', 'd/' + ('%03d' % i) * 60)" "pwrite('d/t', 0, 8192)"
# a directory fsynced after most of its names were deleted: replay_dir_deletes()
check dir-deletes "" "
os.mkdir('d')
for i in range(600):
    pwrite('d/file_with_a_longer_name_%d' % i, 0, 4096, sync=False)" "
for i in range(600):
    if i % 5:
        os.unlink('d/file_with_a_longer_name_%d' % i)
pwrite('d/new', 0, 4096, sync=False)
fsync('d')"
# large fsynced writes: the csum items of the log split the csum tree's leaves
# (the first step's 20 MiB make the data chunk the second needs: a chunk
# allocated in the transaction makes the fsync commit)
check large-csums "" "pwrite('old', 0, 20 * $M, sync=False)" "
pwrite('a', 0, 40 * $M)
pwrite('b', 0, 24 * $M)
pwrite('old', 2 * $M, 4 * $M)"
# a new back reference in 600 committed extents' items (29 bytes each)
check clone-many-extents "" "
for i in range(600):
    pwrite('a', i * 8192, 4096, sync=False)" "clone('a', 'b', 0, 0, 0)"
# the same in a snapshot: extents shared with the snapshot get the snapshot's refs
check snapshot-clone "" "
subprocess.run(['btrfs', '-q', 'subvolume', 'create', 'sv'], check=True)
for i in range(300):
    pwrite('sv/a', i * 8192, 4096, sync=False)
os.sync()
subprocess.run(['btrfs', '-q', 'subvolume', 'snapshot', 'sv', 'snap'], check=True)
pwrite('snap/x', 0, 4096, sync=False)
pwrite('sv/x', 0, 4096, sync=False)" "clone('snap/a', 'snap/b', 0, 0, 0)"
# freed extents scattered through a block group: the commit copies many blocks
check free-space-scatter "" "
for i in range(800):
    pwrite('o%d' % i, 0, 4096, sync=False)" "
for i in range(0, 800, 2):
    pwrite('o%d' % i, 0, 4096)"

check free-space-scatter-third "" "
for i in range(1200):
    pwrite('o%d' % i, 0, 4096, sync=False)" "
for i in range(0, 1200, 3):
    pwrite('o%d' % i, 0, 4096)"

# renames and new links in a committed directory, the directory fsynced:
# the names come from dir index items alone (insert_one_name())
check rename-dir-fsync "" "
os.mkdir('d')
for i in range(300):
    pwrite('d/file_%d' % i, 0, 4096, sync=False)" "
for i in range(0, 300, 2):
    os.rename('d/file_%d' % i, 'd/renamed_file_%d' % i)
    os.link('d/file_%d' % (i + 1), 'd/link_%d' % i)
fsync('d')"

echo "$checked of $cases case(s) compared with the kernel, $failed failed"
[ "$failed" = 0 ] || fail "$failed case(s) differ from the kernel"
[ $((2 * checked)) -ge "$cases" ] ||
	skip "the machine is too busy: other tasks' commits took the logs of $((cases - checked)) of $cases cases (load $(cut -d' ' -f1-3 /proc/loadavg))"
exit 0
