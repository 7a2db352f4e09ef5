#!/usr/bin/env python3
# layout.py PLAN.json BEFORE.txt AFTER.txt: the planner's mkfs_layout
# chunks must be the chunk tree right after mkfs (BEFORE), and its dead
# space per device after the data fill (data_fill.unallocatable_hard, plus
# the soft part only metadata could still take) what the DEV_ITEMs leave
# unallocated after the kernel's fill (AFTER: total_bytes - bytes_used).
import json
import re
import sys

BITS = {"DATA": 1, "SYSTEM": 2, "METADATA": 4, "RAID0": 8, "RAID1": 16,
        "DUP": 32, "RAID10": 64, "RAID5": 128, "RAID6": 256,
        "RAID1C3": 512, "RAID1C4": 1024, "single": 0}


def parse_dump(path):
    """The CHUNK_ITEMs of `btrfs inspect-internal dump-tree -t chunk`, by logical."""
    chunks, cur = {}, None
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


def dev_items(path):
    devs, cur = {}, None
    for line in open(path):
        m = re.search(r"key \(DEV_ITEMS DEV_ITEM (\d+)\)", line)
        if m:
            cur = int(m.group(1))
            continue
        m = re.search(r"devid (\d+) total_bytes (\d+) bytes_used (\d+)", line)
        if m and cur is not None:
            devs[cur] = int(m.group(2)) - int(m.group(3))
            cur = None
    return devs


plan = json.load(open(sys.argv[1]))
before = parse_dump(sys.argv[2])
after_free = dev_items(sys.argv[3])
planned = {c["logical"]: {"logical": c["logical"], "length": c["length"], "flags": c["flags"],
                          "stripes": [(s["devid"], s["offset"]) for s in c["stripes"]]}
           for c in plan["mkfs_layout"]["chunks"]}
ok = True
if planned != before:
    print("  mkfs made %s\n  planned   %s" % (sorted(before.values(), key=lambda c: c["logical"]),
                                           sorted(planned.values(), key=lambda c: c["logical"])))
    ok = False
fill = plan["forecast"]["data_fill"]
hard = {int(k): v + fill["unallocatable_soft"][k] for k, v in fill["unallocatable_hard"].items()}
if hard != after_free:
    print("  left unallocated after the fill %s, planned dead space %s" % (after_free, hard))
    ok = False
print("    mkfs layout: %d chunks %s; left per device (hard + soft) %s %s" %
      (len(planned), "equal" if planned == before else "DIFFERENT", hard,
       "equal" if hard == after_free else "DIFFERENT"))
sys.exit(0 if ok else 1)
