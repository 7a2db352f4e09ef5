#!/usr/bin/env python3
# make-empty.py MNT BTRFS_SPACE SHARE: preallocate 16 MiB files in MNT up
# to SHARE (0..1) of the data the filesystem can take (as forecast says),
# then delete every file with an extent in two data chunks: the last one
# and one in the middle (never the first, mkfs's), so that their block
# groups are empty.  Prints the two chunks' logical starts.  The caller
# syncs and unmounts at once, before the cleaner runs.
import ctypes
import fcntl
import json
import os
import struct
import subprocess
import sys

FS_IOC_FIEMAP = 0xC020660B
EXTENT_SIZE = 56


def extents(path):
    """(logical on btrfs, length) of each extent of path (FIEMAP)."""
    out = []
    start = 0
    with open(path, "rb") as f:
        while True:
            count = 64
            buf = ctypes.create_string_buffer(32 + count * EXTENT_SIZE)
            struct.pack_into("QQIIII", buf, 0, start, (1 << 64) - 1 - start, 0, 0, count, 0)
            fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, buf)
            mapped = struct.unpack_from("I", buf, 20)[0]
            last = False
            for i in range(mapped):
                lo, ph, ln, _, _, flags = struct.unpack_from("QQQQQI", buf, 32 + i * EXTENT_SIZE)
                out.append((ph, ln))
                start = lo + ln
                last = last or bool(flags & 1)
            if mapped == 0 or last:
                return out


def data_chunks(tool, mnt):
    js = json.loads(subprocess.check_output([tool, "--format", "json", "chunks", "--list-chunks", mnt]))
    return sorted((c["logical"], c["length"]) for c in js["chunks"] if c["type"] & 1)


def main():
    mnt, tool, share = sys.argv[1], sys.argv[2], float(sys.argv[3])
    fc = json.loads(subprocess.check_output([tool, "--format", "json", "forecast", mnt]))
    goal = int(fc["forecast"]["data_fill"]["writable_bytes"] * share)
    files = []
    total = 0
    while total + (16 << 20) <= goal:
        path = os.path.join(mnt, "g%d" % len(files))
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
        os.posix_fallocate(fd, 0, 16 << 20)
        os.close(fd)
        files.append(path)
        total += 16 << 20
    os.sync()
    chunks = data_chunks(tool, mnt)
    if len(chunks) < 3:
        sys.exit("only %d data chunks: no middle one to empty" % len(chunks))
    chosen = [chunks[len(chunks) // 2], chunks[-1]]
    for path in files:
        if any(c[0] <= ph < c[0] + c[1] or ph <= c[0] < ph + ln
               for ph, ln in extents(path) for c in chosen):
            os.unlink(path)
    os.sync()
    print(" ".join(str(c[0]) for c in chosen))


main()
