#!/usr/bin/env python3
# parse-nagios.py LINE-FILE INSPECT.json EXIT: the Nagios plugin line by the
# plugin development guidelines: one line, "SERVICE STATUS - text | perfdata",
# perfdata 'label'=value[UOM];[warn];[crit];[min];[max] separated by spaces;
# STATUS and EXIT those of summary.level, each NAME_headroom the JSON's.
import json
import re
import sys

lines = open(sys.argv[1]).read().split("\n")
doc = json.load(open(sys.argv[2]))["summary"]
code = int(sys.argv[3])
bad = []
if len(lines) != 2 or lines[1] != "":
    bad.append("not exactly one line: %r" % lines)
m = re.match(r"^BTRFS-SPACE (OK|WARNING|CRITICAL|UNKNOWN) - ([^|]+) \| (.+)$", lines[0])
if not m:
    print("not a plugin line: %s" % lines[0])
    sys.exit(1)
status, text, perf = m.groups()
want = {"ok": ("OK", 0), "tight": ("WARNING", 1), "critical": ("CRITICAL", 2)}[doc["level"]]
if (status, code) != want:
    bad.append("status %s exit %d, JSON level %s" % (status, code, doc["level"]))
RANGE = r"(~|-?[0-9.]+)?:?(-?[0-9.]+)?"
seen = {}
for item in perf.split(" "):
    pm = re.match(r"^([A-Za-z0-9_]+)=(-?[0-9.]+)(s|us|ms|%|B|KB|MB|TB|c)?;([^;]*);([^;]*);([^;]*);([^;]*)$", item)
    if not pm:
        bad.append("perfdata item %r" % item)
        continue
    label, value, uom, warn, crit, lo, hi = pm.groups()
    for r in (warn, crit):
        if r and not re.fullmatch(RANGE, r):
            bad.append("%s: threshold %r is no range" % (label, r))
    seen[label] = (float(value), uom, warn, crit)
for t, s in doc["space"].items():
    h = s.get("headroom")
    if not h:
        continue
    v = seen.get(t + "_headroom")
    if not v or v[0] != h["bytes"] or v[1] != "B":
        bad.append("%s_headroom %s, JSON %d" % (t, v, h["bytes"]))
    # an alert below the threshold: "N:"; the level from them is the JSON's
    warn, crit = int(v[2].rstrip(":")), int(v[3].rstrip(":"))
    lvl = "critical" if h["bytes"] < crit else "tight" if h["bytes"] < warn else "ok"
    if lvl != s["level"]:
        bad.append("%s: thresholds %s %s give %s, JSON %s" % (t, v[2], v[3], lvl, s["level"]))
if doc["findings"] and not text.startswith(doc["findings"][0]["level"] + ": " + doc["findings"][0]["what"]):
    bad.append("text %r does not name the worst finding" % text)
for b in bad:
    print(b)
print("nagios: %s exit %d, %d perfdata items" % (status, code, len(seen)))
sys.exit(1 if bad else 0)
