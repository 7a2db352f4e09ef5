#!/usr/bin/env python3
# fill.py MNT [FIRST]: preallocate files in MNT until ENOSPC, in steps of
# FIRST bytes when given (kernel test 053: 1 GiB on pools of a few TiB),
# then 16 MiB, 1 MiB, 64 KiB and 4 KiB, and print the bytes preallocated.
# Steps no larger than a chunk keep each reservation to at most one new
# chunk, so a failed reservation leaves no empty chunk behind for the
# cleaner.
import errno
import os
import sys

mnt = sys.argv[1]
steps = (16 << 20, 1 << 20, 64 << 10, 4 << 10)
if len(sys.argv) > 2:
    steps = (int(sys.argv[2]),) + steps
total = 0
n = 0
full = False
for size in steps:
    while not full:
        path = os.path.join(mnt, "f%d" % n)
        try:
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
        except OSError as e:
            # mixed block groups: even a new inode finds no room
            if e.errno != errno.ENOSPC:
                raise
            full = True
            break
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError as e:
            os.close(fd)
            os.unlink(path)
            if e.errno != errno.ENOSPC:
                raise
            break
        os.close(fd)
        n += 1
        total += size
print(total)
