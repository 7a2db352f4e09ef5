#!/usr/bin/env python3
# layout.py PLAN.json BEFORE.txt AFTER.txt: the planner's mkfs_layout
# chunks must be the chunk tree right after mkfs (BEFORE), and its dead
# space per device after the data fill (data_fill.unallocatable_hard, plus
# the soft part only metadata could still take) what the DEV_ITEMs leave
# unallocated after the kernel's fill (AFTER: total_bytes - bytes_used).
import json
import re
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from common_dump_tree import parse_dump  # noqa: E402


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
