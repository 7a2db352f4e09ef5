#!/usr/bin/env python3
# qfill.py DIR (kernel test 088): preallocate files in DIR until EDQUOT or
# ENOSPC, steps of 1 MiB, 64 KiB and 4 KiB; a commit (syncfs) before each
# smaller step, so that the counts the limit is checked against are
# committed; prints the bytes preallocated and the error that stopped it.
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
d = sys.argv[1]
dfd = os.open(d, os.O_RDONLY)
total = n = 0
stop = None
for size in (1 << 20, 64 << 10, 4 << 10):
    libc.syncfs(dfd)
    while True:
        p = os.path.join(d, "q%d" % n)
        try:
            fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
        except OSError as e:
            if e.errno not in (errno.EDQUOT, errno.ENOSPC):
                raise
            stop = errno.errorcode[e.errno]
            break
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError as e:
            os.close(fd)
            os.unlink(p)
            if e.errno not in (errno.EDQUOT, errno.ENOSPC):
                raise
            stop = errno.errorcode[e.errno]
            break
        os.close(fd)
        n += 1
        total += size
print(total, stop)
