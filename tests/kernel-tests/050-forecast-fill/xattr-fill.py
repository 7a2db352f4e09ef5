#!/usr/bin/env python3
# xattr-fill.py MNT [MAX]: metadata only, until ENOSPC (or MAX set: kernel
# test 071 grows metadata chunks with them): 12000-byte extended
# attributes, 2000 to a file (each is one item in the fs tree, no data,
# a leaf of its own), and print how many were set.  A commit every 500
# (syncfs(2) of this filesystem only): a transaction that runs out of
# metadata while it runs its delayed refs is aborted (6.18 does that at
# the very end of a fill), and the chunks made before it must be on disk
# by then.
import ctypes
import errno
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)

mnt = sys.argv[1]
most = int(sys.argv[2]) if len(sys.argv) > 2 else -1
n = 0
val = b"v" * 12000
f = None
mfd = os.open(mnt, os.O_RDONLY)
try:
    while n != most:
        if n % 2000 == 0:
            f = os.path.join(mnt, "x%d" % (n // 2000))
            open(f, "w").close()
        os.setxattr(f, "user.%d" % n, val)
        n += 1
        if n % 500 == 0:
            libc.syncfs(mfd)
except OSError as e:
    # EROFS, or EIO on the call the abort hit: the kernel aborted a
    # transaction and forced read-only (test.sh checks which it was)
    if e.errno not in (errno.ENOSPC, errno.EROFS, errno.EIO):
        raise
print(n)
