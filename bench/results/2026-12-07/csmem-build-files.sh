#!/bin/bash
# the files.img part of bench/scale.sh --build DIR --max-extents 10000000
set -euo pipefail
dir=${DIR:-/tmp/csmem-img}
mkdir -p $dir/mnt
gcc -O2 -Wall -o $dir/falloc-loop $(dirname "$0")/../../falloc-loop.c
truncate -s 200G $dir/files.img
mkfs.btrfs -q $dir/files.img >/dev/null
loop=$(losetup -f --show $dir/files.img)
trap 'umount $dir/mnt 2>/dev/null; losetup -d $loop' EXIT
mount $loop $dir/mnt
for n in 10000 30000 100000 300000 1000000 3000000 10000000; do
	nice $dir/falloc-loop $dir/mnt/f$n 4K 4K $((n * 4))K
	date -u
done
