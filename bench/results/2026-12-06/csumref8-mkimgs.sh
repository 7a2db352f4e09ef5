#!/bin/bash
# Fresh images for the csum-delete equality check (after /tmp/csumwin-mkimgs.sh), plus
# adversarial orders: 150,000 extents allocated in random key order (runs merged),
# one block shared by 3,000 file extents, a split extent (same bytenr and ref offset).
set -euo pipefail
dir=${DIR:-/tmp/csumref8-imgs}
mkdir -p $dir/mnt
FL=${FL:-/tmp/csumref8-bench/falloc-loop}
clone_range() { # src soff dst doff len  (FICLONERANGE)
python3 - "$@" <<'PY'
import fcntl, os, struct, sys
src, soff, dst, doff, ln = sys.argv[1], *map(int, sys.argv[2:3]), sys.argv[3], *map(int, sys.argv[4:6])
s = os.open(src, os.O_RDONLY); d = os.open(dst, os.O_RDWR)
FICLONERANGE = 0x4020940d
fcntl.ioctl(d, FICLONERANGE, struct.pack("qQQQ", s, soff, ln, doff))
PY
}
for ns in 4096 16384; do
	img=$dir/fresh-$ns.img
	rm -f $img; truncate -s 8G $img
	mkfs.btrfs -q -f -n $ns $img >/dev/null
	loop=$(losetup -f --show $img)
	trap 'umount $dir/mnt 2>/dev/null; losetup -d $loop 2>/dev/null' EXIT
	mount $loop $dir/mnt
	m=$dir/mnt
	btrfs -q subvolume create $m/sv
	$FL $m/sv/many 4K 4K 160M >/dev/null   # 40,000 extents
	for i in $(seq 0 1999); do
		dd if=/dev/urandom of=$m/sv/small bs=4K count=1 seek=$((i * 2)) conv=notrunc oflag=direct status=none
	done
	sync
	for k in 1 2; do clone_range $m/sv/small 0 $m/sv/small $((k * 40 * 1024 * 1024)) $((400 * 1024)); done
	cp --reflink=always $m/sv/small $m/sv/small-copy
	touch $m/sv/mixed
	clone_range $m/sv/many 0 $m/sv/mixed 0 $((4 * 1024 * 1024))
	# random key order: each fallocate a new extent, bytenrs in allocation order
	python3 - $m/sv/random <<'PY'
import os, random, sys
random.seed(8)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
offs = list(range(150000)); random.shuffle(offs)
for o in offs:
    os.posix_fallocate(fd, o * 8192, 4096)
os.close(fd)
PY
	# one block shared by 3,000 file extents of one file, and 20 of the random file
	dd if=/dev/urandom of=$m/sv/shared bs=4K count=1 oflag=direct status=none
	python3 - $m/sv/shared $m/sv/random <<'PY'
import fcntl, os, struct, sys
s = os.open(sys.argv[1], os.O_RDWR)
for i in range(1, 3000):
    fcntl.ioctl(s, 0x4020940d, struct.pack("qQQQ", s, 0, 4096, i * 8192))
d = os.open(sys.argv[2], os.O_RDWR)
for i in range(20):
    fcntl.ioctl(d, 0x4020940d, struct.pack("qQQQ", s, 0, 4096, 150000 * 8192 + i * 8192))
PY
	# a 1 MiB extent split by holes: items of one bytenr and one ref offset
	dd if=/dev/urandom of=$m/sv/split bs=1M count=1 oflag=direct status=none
	for k in 1 3 5 7 9; do fallocate -p -o $((k * 65536)) -l 4096 $m/sv/split; done
	clone_range $m/sv/split 0 $m/sv/random 0 $((1024 * 1024))
	btrfs -q subvolume snapshot $m/sv $m/snap
	dd if=/dev/urandom of=$m/snap/small bs=4K count=500 seek=100 conv=notrunc oflag=direct status=none
	mount -o remount,compress=zstd $m
	yes "csum-delete window: a line that compresses" | head -c 64M > $m/sv/comp || true
	sync
	cp --reflink=always $m/sv/comp $m/snap/comp
	yes "other" | head -c 16M > $m/comp-top || true
	sync
	umount $m
	losetup -d $loop
	trap - EXIT
done
ls -ls $dir
