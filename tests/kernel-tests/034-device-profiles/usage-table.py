#!/usr/bin/env python3
# usage-table.py FI_USAGE_T TOOL_JSON
#
# Reads the device table of "btrfs filesystem usage -T -b" (FI_USAGE_T) by
# its dashed rule line: each run of dashes is a column, the type ("Data")
# is in the line above the "Id Path" header, the profile ("RAID1") in it.
# Compares every device's bytes of each type and profile, and its
# unallocated bytes, with the "devices" of a "btrfs-space --format json
# inspect" run (TOOL_JSON). One line per difference, exit 1 on any.
import json
import re
import sys

lines = open(sys.argv[1]).read().split("\n")
doc = json.load(open(sys.argv[2]))
head = next(i for i, l in enumerate(lines) if re.match(r"^Id\s+Path\b", l))
types, names, rule = lines[head - 1], lines[head], lines[head + 1]
cols = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]
# columns are left-aligned in the header and right-aligned in the rows:
# a cell is what lies between the end of the last column and this one's
spans = [(cols[k - 1][1] if k else 0, b) for k, (a, b) in enumerate(cols)]
heads = [(types[a:b].strip(), names[a:b].strip()) for a, b in cols]

kernel = {}
for line in lines[head + 2:]:
    if line.startswith("--") or not line.strip():
        break
    cells = [line[a:b].strip() for a, b in spans]
    devid = int(cells[0])
    row = {}
    for (kind, prof), cell in zip(heads, cells):
        if kind and cell != "-":
            row["%s, %s" % (kind, prof)] = int(cell)
        elif prof == "Unallocated":
            row["Unallocated"] = int(cell)
    kernel[devid] = row


def progs(p):
    kind = {"DATA": "Data", "METADATA": "Metadata", "SYSTEM": "System",
            "DATA+METADATA": "Data+Metadata"}[p["type_name"]]
    return "%s, %s" % (kind, p["profile"] if p["profile"] == "single" else p["profile"].upper())


tool = {}
for d in doc["devices"]:
    row = {progs(p): p["bytes"] for p in d["profiles"]}
    row["Unallocated"] = d["unallocated"]
    tool[d["devid"]] = row

bad = 0
for devid in sorted(set(kernel) | set(tool)):
    k, t = kernel.get(devid), tool.get(devid)
    if k != t:
        print("devid %d: btrfs fi usage -T %s, btrfs-space %s" % (devid, k, t))
        bad = 1
    else:
        print("devid %d: %s" % (devid, ", ".join("%s %d" % kv for kv in sorted(k.items()))))
sys.exit(bad)
