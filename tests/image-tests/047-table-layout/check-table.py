#!/usr/bin/env python3
# check-table.py WHAT TEXT JSON [layout]
#
# Reads the text table WHAT ("chunks", "block-groups" or "devices") of a
# "btrfs-space -b" run by its dashed rule line, as a user's eye would: each
# run of dashes is a column, its cells are the characters above and below
# it. Checks that every line keeps to the columns (nothing in a gap between
# two columns, numbers end at the column's right edge, no line over 120
# characters before a last column "Path", as long as the path given), then
# that the cells say what the JSON of the same run says: one line per
# chunk stripe, block group or device, the numbers equal, the
# type and profile spelled as btrfs-progs does ("Data, RAID1") from the JSON's
# sysfs names ("DATA", "raid1"); in the devices table a column per chunk type
# ("Data, RAID1", as btrfs filesystem usage -T), its bytes or "-" per device,
# the Slack column, and under a second rule the Total and Used rows.
# With "layout" (a run in human units), the columns and the line count only. One line per problem, exit 1 on any.
import json
import re
import sys

what, text_file, json_file = sys.argv[1:4]
layout_only = sys.argv[4:5] == ["layout"]
NUMBER = r"\s*\d+(\.\d+)?([KMGTPE]i?)?B?\s*"
HEADINGS = {"chunks": "Chunks:", "block-groups": "Block groups:", "devices": "Devices:"}
problems = []
RULE = {}		# a dashed line: every cell dashes


def problem(msg):
    problems.append(msg)
    print("PROBLEM %s: %s" % (what, msg))


def progs_name(type_name, profile):
    kind = {"DATA": "Data", "METADATA": "Metadata", "SYSTEM": "System",
            "DATA+METADATA": "Data+Metadata"}[type_name]
    return "%s, %s" % (kind, profile if profile == "single" else profile.upper())


def table_lines(lines):
    """The header, the rule and the rows of the table under the heading"""
    start = lines.index(HEADINGS[what])
    body = []
    for line in lines[start + 1:]:
        if not line.startswith("    ") or line.strip().endswith(":"):
            break
        body.append(line)
    return body[0], body[1], body[2:]


def columns(rule):
    return [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]


def parse(header, rule, rows):
    cols = columns(rule)
    names = [header[a:b].strip() for a, b in cols]
    cells = []
    # the path, last, is as long as the user's: the rest must fit
    fixed = cols[-1][0] if names and names[-1] == "Path" else None
    for n, line in enumerate([header] + rows):
        if len(line[:fixed]) > 120:
            problem("line of %d characters: %s" % (len(line[:fixed]), line))
        # outside the columns, only blanks
        outside = list(line)
        for a, b in cols:
            for i in range(a, min(b, len(line))):
                outside[i] = " "
        if "".join(outside).strip():
            problem("text outside the columns: '%s'" % line)
        row = {}
        for (a, b), name in zip(cols, names):
            cell = line[a:b]
            if re.fullmatch(NUMBER, cell) and cell != cell.rstrip():
                problem("number not right-aligned in %s: '%s'" % (name, line))
            row[name] = cell.strip()
        if n:
            cells.append(row)
    return names, cells


def expect_rows(doc):
    rows = []
    if what == "chunks":
        for c in doc["chunks"]:
            first = {"Logical": str(c["logical"]), "Length": str(c["length"]),
                     "Type, profile": progs_name(c["type_name"], c["profile"]),
                     "Stripes": str(c["num_stripes"]),
                     "Stripe size": str(c["stripe_size"])}
            for i, s in enumerate(c["stripes"]):
                row = dict(first) if i == 0 else {k: "" for k in first}
                row.update({"Devid": str(s["devid"]), "Physical": str(s["offset"])})
                rows.append(row)
    elif what == "block-groups":
        for bg in doc["block_groups"]:
            rows.append({"Start": str(bg["start"]), "Length": str(bg["length"]),
                         "Used": str(bg["used"]),
                         "Type, profile": progs_name(bg["type_name"], bg["profile"]),
                         "Leaf": str(bg["leaf"]), "RO": "yes" if bg["read_only"] else "no",
                         "Super": str(bg["bytes_super"])})
    else:
        # a column per chunk type any device has, "-" where a device has none
        kinds = set(progs_name(p["type_name"], p["profile"])
                    for d in doc["devices"] for p in d["profiles"])
        for d in doc["devices"]:
            row = {"Devid": str(d["devid"]), "Size": str(d["size"]),
                   "Allocated": str(d["allocated"]),
                   "Unallocated": str(d["unallocated"]),
                   "Path": "missing" if d["missing"] else d["path"]}
            row.update({k: "-" for k in kinds})
            for p in d["profiles"]:
                row[progs_name(p["type_name"], p["profile"])] = str(p["bytes"])
            row["Slack"] = str(d["slack"]) if d["slack"] else "-"
            rows.append(row)
        # under a second rule, the Total and Used rows of btrfs fi usage -T
        t = doc["device_totals"]
        rows.append(RULE)
        total = {"Devid": "Total", "Size": str(t["size"]), "Allocated": str(t["allocated"]),
                 "Unallocated": str(t["unallocated"]), "Slack": str(t["slack"]), "Path": ""}
        used = {"Devid": "Used", "Size": "", "Allocated": "", "Unallocated": "", "Slack": "", "Path": ""}
        for p in t["profiles"]:
            total[progs_name(p["type_name"], p["profile"])] = str(p["total"])
            used[progs_name(p["type_name"], p["profile"])] = str(p["used"])
        rows += [total, used]
    return rows


lines = open(text_file).read().split("\n")
doc = json.load(open(json_file))
try:
    header, rule, rows = table_lines(lines)
except (ValueError, IndexError):
    problem("no table under '%s'" % HEADINGS[what])
    sys.exit(1)
names, got = parse(header, rule, rows)
want = expect_rows(doc)
if len(got) != len(want):
    problem("%d table lines, the JSON gives %d" % (len(got), len(want)))
for n, (g, w) in enumerate(zip(got, [] if layout_only else want)):
    if w is RULE:
        if not all(re.fullmatch(r"-+", v) for v in g.values()):
            problem("line %d: not a rule: %s" % (n + 1, g))
        continue
    for key, value in w.items():
        if key not in g:
            problem("no column %s (columns: %s)" % (key, ", ".join(names)))
            sys.exit(1)
        if g[key] != value:
            problem("line %d, %s: '%s', the JSON gives '%s'" % (n + 1, key, g[key], value))
print("%s: %d lines, columns %s" % (what, len(got), " | ".join(names)))
sys.exit(1 if problems else 0)
