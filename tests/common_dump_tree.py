# SPDX-License-Identifier: GPL-2.0
"""The chunk tree as `btrfs inspect-internal dump-tree -t chunk` prints it,
for the tests that hold the forecast's chunks to the kernel's (kernel tests
050, 052, 053, 054): import it with sys.path set to the tests folder."""
import re

BITS = {"DATA": 1, "SYSTEM": 2, "METADATA": 4, "RAID0": 8, "RAID1": 16,
        "DUP": 32, "RAID10": 64, "RAID5": 128, "RAID6": 256,
        "RAID1C3": 512, "RAID1C4": 1024, "single": 0}


def parse_dump(path):
    """The CHUNK_ITEMs of `btrfs inspect-internal dump-tree -t chunk`."""
    chunks = {}
    cur = None
    for line in open(path):
        m = re.search(r"key \(FIRST_CHUNK_TREE CHUNK_ITEM (\d+)\)", line)
        if m:
            cur = {"logical": int(m.group(1)), "stripes": []}
            chunks[cur["logical"]] = cur
            continue
        if cur is None:
            continue
        m = re.search(r"length (\d+) owner \d+ stripe_len \d+ type (\S+)", line)
        if m:
            cur["length"] = int(m.group(1))
            cur["flags"] = sum(BITS[t] for t in m.group(2).split("|"))
            continue
        m = re.search(r"stripe \d+ devid (\d+) offset (\d+)", line)
        if m:
            cur["stripes"].append((int(m.group(1)), int(m.group(2))))
            continue
        if "key (" in line:
            cur = None
    return chunks
