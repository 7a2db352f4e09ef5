#!/usr/bin/env python3
# inline-fill.py MNT: 2000-byte files (inline extents: metadata only)
# until ENOSPC, a commit every 500 (syncfs), then the last 20 deleted, so
# that metadata is nearly full but the filesystem still writable.
import ctypes
import errno
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
mnt = sys.argv[1]
d = os.path.join(mnt, "inline")
os.mkdir(d)
mfd = os.open(mnt, os.O_RDONLY)
n = 0
try:
    while True:
        with open(os.path.join(d, "i%d" % n), "wb") as f:
            f.write(b"i" * 2000)
        n += 1
        if n % 500 == 0:
            libc.syncfs(mfd)
except OSError as e:
    if e.errno not in (errno.ENOSPC, errno.EROFS, errno.EIO):
        raise
for i in range(max(0, n - 20), n + 1):
    try:
        os.unlink(os.path.join(d, "i%d" % i))
    except OSError:
        pass
libc.syncfs(mfd)
print(n)
