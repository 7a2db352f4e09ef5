#!/usr/bin/env python3
# create-xattr-fill.py MNT: metadata only, until ENOSPC: empty files, each
# created and given one 12000-byte extended attribute (two transactions:
# the create's and the setxattr's), and print how many files were made.
# A syncfs(2) of this filesystem every 500 files, as 050's xattr-fill.py.
import ctypes
import errno
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)

mnt = sys.argv[1]
n = 0
val = b"v" * 12000
mfd = os.open(mnt, os.O_RDONLY)
try:
    while True:
        f = os.path.join(mnt, "c%d" % n)
        os.close(os.open(f, os.O_CREAT | os.O_WRONLY, 0o644))
        os.setxattr(f, "user.x", val)
        n += 1
        if n % 500 == 0:
            libc.syncfs(mfd)
except OSError as e:
    if e.errno not in (errno.ENOSPC, errno.EROFS, errno.EIO):
        raise
print(n)
