#!/usr/bin/env python3
# age.py MNT LIMIT UUID: files of 4 KiB to 30 MiB preallocated (a fixed
# random source) until ENOSPC, 8 of every 30 deleted with a commit (syncfs);
# then the oldest deleted, a commit each, until data bytes_used (sysfs
# allocation/data of UUID) is under LIMIT bytes, or under LIMIT percent of
# the data total at ENOSPC when LIMIT ends with %: the data block groups
# stay allocated, partly used.
import ctypes
import errno
import os
import random
import sys

libc = ctypes.CDLL(None, use_errno=True)
mnt, limit, uuid = sys.argv[1], sys.argv[2], sys.argv[3]
mfd = os.open(mnt, os.O_RDONLY)
rnd = random.Random(11)
files = []
n = 0


def data(name):
    with open("/sys/fs/btrfs/%s/allocation/data/%s" % (uuid, name)) as f:
        return int(f.read())


def used():
    return data("bytes_used")


try:
    while True:
        size = rnd.choice([4096, 49152, 786432, 8 << 20, 30 << 20])
        path = os.path.join(mnt, "f%d" % n)
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
        try:
            os.posix_fallocate(fd, 0, size)
        finally:
            os.close(fd)
        files.append(path)
        n += 1
        if n % 30 == 0:
            for q in rnd.sample(files, 8):
                os.unlink(q)
                files.remove(q)
            libc.syncfs(mfd)
except OSError as e:
    if e.errno != errno.ENOSPC:
        raise
libc.syncfs(mfd)
if limit.endswith("%"):
    limit = data("total_bytes") * int(limit[:-1]) // 100
else:
    limit = int(limit)
for path in sorted(files, key=lambda p: int(os.path.basename(p)[1:])):
    if used() < limit:
        break
    os.unlink(path)
    libc.syncfs(mfd)
print(n)
