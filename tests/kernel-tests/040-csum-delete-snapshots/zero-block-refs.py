#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Set the refs of one tree block's METADATA_ITEM to 0, checksums fixed.

usage: zero-block-refs.py IMAGE BYTENR

The extent tree leaf holding (BYTENR METADATA_ITEM level) is found with
"btrfs inspect-internal dump-tree -t extent", its copies with the chunk
tree's stripes (dump-tree -t chunk); every copy gets refs = 0 and its
crc32c rewritten.  Single-device crc32c images with skinny metadata, as
mkfs.btrfs makes them.  The image is a scratch copy: it is written.
"""
import re
import struct
import subprocess
import sys

HEADER_SIZE = 101
CSUM_SIZE = 32


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def dump(image, tree):
    return subprocess.run(["btrfs", "inspect-internal", "dump-tree", "-t", tree, image],
                          check=True, capture_output=True, text=True).stdout


def find_item(image, bytenr):
    leaf = None
    for line in dump(image, "extent").splitlines():
        m = re.match(r"leaf (\d+) items", line)
        if m:
            leaf = int(m.group(1))
            continue
        m = re.search(r"key \((\d+) METADATA_ITEM \d+\) itemoff (\d+) itemsize", line)
        if m and int(m.group(1)) == bytenr:
            return leaf, int(m.group(2))
    sys.exit("no METADATA_ITEM for %d in the extent tree" % bytenr)


def physical_copies(image, logical):
    text = dump(image, "chunk")
    for m in re.finditer(r"CHUNK_ITEM (\d+)\).*?\n\s+length (\d+)(.*?)(?=\n\s+item|\Z)", text, re.S):
        start, length = int(m.group(1)), int(m.group(2))
        if start <= logical < start + length:
            return [int(o) + logical - start
                    for o in re.findall(r"stripe \d+ devid 1 offset (\d+)", m.group(3))]
    sys.exit("no chunk maps %d" % logical)


def main():
    image, bytenr = sys.argv[1], int(sys.argv[2])
    leaf, itemoff = find_item(image, bytenr)
    nodesize = int(re.search(r"^nodesize\s+(\d+)", subprocess.run(
        ["btrfs", "inspect-internal", "dump-super", image], check=True,
        capture_output=True, text=True).stdout, re.M).group(1))
    with open(image, "r+b") as f:
        for phys in physical_copies(image, leaf):
            f.seek(phys)
            block = bytearray(f.read(nodesize))
            block[HEADER_SIZE + itemoff:HEADER_SIZE + itemoff + 8] = struct.pack("<Q", 0)
            block[0:CSUM_SIZE] = b"\0" * CSUM_SIZE
            block[0:4] = struct.pack("<I", crc32c(bytes(block[CSUM_SIZE:])))
            f.seek(phys)
            f.write(block)


if __name__ == "__main__":
    main()
