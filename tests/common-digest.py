#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The digest of a file's content, read the way a sparse image is stored.

usage: common-digest.py FILE

Prints one line: the sha256 of the file size, the list of its data extents
(SEEK_DATA/SEEK_HOLE) and their bytes. Two files with the same content and
the same holes have the same digest; any byte written anywhere changes it
(a write into a hole also makes a new data extent). It reads only the
allocated extents, so a 1 GiB image that holds 200 KiB takes milliseconds
where sha256sum reads the whole GiB. Where the file system cannot report
holes, SEEK_DATA gives the whole file as one extent: still exact, only slower.
"""
import hashlib
import os
import sys

CHUNK = 1 << 20


def digest(path):
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        h.update(b"size %d\n" % size)
        pos = 0
        while pos < size:
            try:
                start = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:
                break  # ENXIO: only a hole is left
            end = os.lseek(fd, start, os.SEEK_HOLE)
            h.update(b"extent %d %d\n" % (start, end))
            os.lseek(fd, start, os.SEEK_SET)
            left = end - start
            while left:
                buf = os.read(fd, min(CHUNK, left))
                if not buf:
                    sys.exit("%s: short read at %d" % (path, end - left))
                h.update(buf)
                left -= len(buf)
            pos = end
    finally:
        os.close(fd)
    return h.hexdigest()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(digest(sys.argv[1]))
