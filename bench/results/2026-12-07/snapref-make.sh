#!/bin/bash
# snapref-make.sh IMG REWRITTEN (root, from the top folder): a 256 MiB single/single
# filesystem, subvolume sv with 400 files of 12 KiB, a read-only snapshot, REWRITTEN of
# the files rewritten after it, metadata filled with inline files (kernel test 070's
# inline-fill.py).  snapref-c: mkfs -n 4096, 1500 files of 4096 bytes.
set -e
TOP=${TOP:-$(pwd)}
img=$1; rw=$2; mnt=/tmp/snapref-mnt
mkdir -p $mnt
truncate -s 256M $img
dev=$(losetup -f --show $img)
trap 'umount $mnt 2>/dev/null; losetup -d $dev' EXIT
mkfs.btrfs -q -f -d single -m single $dev >/dev/null
mount $dev $mnt
btrfs subvolume create $mnt/sv >/dev/null
python3 -c '
import os,sys
for n in range(int(sys.argv[2]), int(sys.argv[3])+1):
    open(os.path.join(sys.argv[1],"f%d"%n),"wb").write(os.urandom(12288))' $mnt/sv 0 399
sync
btrfs subvolume snapshot -r $mnt/sv $mnt/snap >/dev/null
if [ $rw -gt 0 ]; then python3 -c '
import os,sys
for n in range(int(sys.argv[2]), int(sys.argv[3])+1):
    open(os.path.join(sys.argv[1],"f%d"%n),"wb").write(os.urandom(12288))' $mnt/sv 0 $((rw-1)); sync; fi
python3 $TOP/tests/kernel-tests/070-summary-levels/inline-fill.py $mnt >/dev/null
sync
umount $mnt
