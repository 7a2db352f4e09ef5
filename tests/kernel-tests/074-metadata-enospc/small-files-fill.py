#!/usr/bin/env python3
# small-files-fill.py MNT: small files (200-2000 bytes: inline extents,
# metadata only) with a 100-1000 byte extended attribute each, 1000 to a
# directory, until ENOSPC; a commit every 2000 (syncfs).  Prints how many
# were made.  Metadata fills its chunks and then every unallocated byte,
# data keeps the one chunk mkfs made.
import ctypes
import errno
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
mnt = sys.argv[1]
mfd = os.open(mnt, os.O_RDONLY)
n = 0
try:
    while True:
        d = os.path.join(mnt, "d%d" % (n // 1000))
        if n % 1000 == 0:
            os.mkdir(d)
        p = os.path.join(d, "f%d" % n)
        with open(p, "wb") as f:
            f.write(b"s" * (200 + (n * 37) % 1800))
        os.setxattr(p, "user.a", b"x" * (100 + (n * 53) % 900))
        n += 1
        if n % 2000 == 0:
            libc.syncfs(mfd)
except OSError as e:
    if e.errno not in (errno.ENOSPC, errno.EROFS, errno.EIO):
        raise
libc.syncfs(mfd)
print(n)
