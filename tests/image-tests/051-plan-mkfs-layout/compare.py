#!/usr/bin/env python3
# compare.py PLAN.json IMAGE.json CHUNK.txt: the planner's mkfs_layout
# chunks must be the CHUNK_ITEMs of the dump (logical, length, type and
# profile, every stripe's devid and offset, in order), its devices' sizes
# and allocated bytes the image's, and its forecast section the image's.
import json
import re
import sys

BITS = {"DATA": 1, "SYSTEM": 2, "METADATA": 4, "RAID0": 8, "RAID1": 16,
        "DUP": 32, "RAID10": 64, "RAID5": 128, "RAID6": 256,
        "RAID1C3": 512, "RAID1C4": 1024, "single": 0}


def parse_dump(path):
    chunks, devs, cur = [], {}, None
    for line in open(path):
        m = re.search(r"key \(FIRST_CHUNK_TREE CHUNK_ITEM (\d+)\)", line)
        if m:
            cur = {"logical": int(m.group(1)), "stripes": []}
            chunks.append(cur)
            continue
        m = re.search(r"key \(DEV_ITEMS DEV_ITEM (\d+)\)", line)
        if m:
            cur = {"devid": int(m.group(1))}
            devs[cur["devid"]] = cur
            continue
        if cur is None:
            continue
        m = re.search(r"total_bytes (\d+) bytes_used (\d+)", line)
        if m and "devid" in cur:
            cur["size"] = int(m.group(1))
            cur["allocated"] = int(m.group(2))
            continue
        m = re.search(r"length (\d+) owner \d+ stripe_len \d+ type (\S+)", line)
        if m:
            cur["length"] = int(m.group(1))
            cur["flags"] = sum(BITS[t] for t in m.group(2).split("|"))
            continue
        m = re.search(r"stripe \d+ devid (\d+) offset (\d+)", line)
        if m:
            cur["stripes"].append((int(m.group(1)), int(m.group(2))))
    return chunks, devs


def main():
    plan = json.load(open(sys.argv[1]))
    image = json.load(open(sys.argv[2]))
    dumped, devs = parse_dump(sys.argv[3])
    layout = plan["mkfs_layout"]
    planned = [{"logical": c["logical"], "length": c["length"], "flags": c["flags"],
                "stripes": [(s["devid"], s["offset"]) for s in c["stripes"]]}
               for c in layout["chunks"]]
    ok = True
    if planned != dumped:
        print("  mkfs made %d chunks, the planner %d" % (len(dumped), len(planned)))
        for c in dumped:
            print("    mkfs    %s" % c)
        for c in planned:
            print("    planner %s" % c)
        ok = False
    if sorted(devs) != [d["devid"] for d in layout["devices"]]:
        print("  mkfs made devids %s, the planner %s" %
              (sorted(devs), [d["devid"] for d in layout["devices"]]))
        ok = False
    for d in layout["devices"]:
        got = devs.get(d["devid"])
        if got and (got["size"], got["allocated"]) != (d["size"], d["allocated"]):
            print("  devid %d: mkfs size %d allocated %d, planner %d %d" %
                  (d["devid"], got["size"], got["allocated"], d["size"], d["allocated"]))
            ok = False
    if plan["forecast"] != image["forecast"]:
        print("  the forecast of the planned filesystem differs from that of mkfs's files")
        for k in plan["forecast"]:
            if plan["forecast"][k] != image["forecast"].get(k):
                print("    %s: planner %s" % (k, json.dumps(plan["forecast"][k])[:300]))
                print("    %s: image   %s" % (k, json.dumps(image["forecast"].get(k))[:300]))
        ok = False
    d, m = plan["forecast"]["data_fill"], plan["forecast"]["metadata_fill"]
    print("    %d chunks as mkfs made them; writable data %d, metadata %d; %s" %
          (len(planned), d["writable_bytes"], m["writable_bytes"],
           "equal" if ok else "DIFFERENT"))
    sys.exit(0 if ok else 1)


main()
