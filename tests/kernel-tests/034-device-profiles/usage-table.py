#!/usr/bin/env python3
# usage-table.py FI_USAGE_T TOOL_JSON
#
# Reads the device table of "btrfs filesystem usage -T -b" (FI_USAGE_T) by
# its dashed rule line: each run of dashes is a column, the type ("Data")
# is in the line above the "Id Path" header, the profile ("RAID1") in it.
# Compares every device's bytes of each type and profile, its unallocated
# bytes and its slack, and the Total and Used rows (each type's logical
# bytes and used, the devices' sums), with the "devices" of a "btrfs-space --format json
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
at = head + 2
for line in lines[at:]:
    at += 1
    if line.startswith("--") or not line.strip():
        break
    cells = [line[a:b].strip() for a, b in spans]
    devid = int(cells[0])
    row = {}
    for (kind, prof), cell in zip(heads, cells):
        if kind and cell != "-":
            row["%s, %s" % (kind, prof)] = int(cell)
        elif prof in ("Unallocated", "Slack"):
            row[prof] = 0 if cell == "-" else int(cell)
    kernel[devid] = row

# under the second rule: the Total and Used rows, named in the Path column
for line in lines[at:]:
    cells = [line[a:b].strip() for a, b in spans]
    if len(cells) < 2 or cells[1] not in ("Total", "Used"):
        break
    row = {}
    for (kind, prof), cell in zip(heads, cells):
        if cell and cell != "-" and (kind or prof in ("Unallocated", "Total", "Slack")):
            row["%s, %s" % (kind, prof) if kind else prof] = int(cell)
    kernel[cells[1]] = row


def progs(p):
    kind = {"DATA": "Data", "METADATA": "Metadata", "SYSTEM": "System",
            "DATA+METADATA": "Data+Metadata"}[p["type_name"]]
    return "%s, %s" % (kind, p["profile"] if p["profile"] == "single" else p["profile"].upper())


tool = {}
for d in doc["devices"]:
    row = {progs(p): p["bytes"] for p in d["profiles"]}
    row["Unallocated"] = d["unallocated"]
    row["Slack"] = d["slack"]
    tool[d["devid"]] = row
t = doc["device_totals"]
tool["Total"] = {progs(p): p["total"] for p in t["profiles"]}
tool["Total"].update({"Unallocated": t["unallocated"], "Total": t["size"], "Slack": t["slack"]})
tool["Used"] = {progs(p): p["used"] for p in t["profiles"]}

bad = 0
for devid in sorted(set(kernel) | set(tool), key=str):
    k, t = kernel.get(devid), tool.get(devid)
    if k != t:
        print("%s: btrfs fi usage -T %s, btrfs-space %s" % (devid, k, t))
        bad = 1
    else:
        print("%s: %s" % (devid, ", ".join("%s %d" % kv for kv in sorted(k.items()))))
sys.exit(bad)
