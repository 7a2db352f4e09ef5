#!/usr/bin/env python3
# check-metrics.py OUT.prom INSPECT.json: each sample of the OpenMetrics
# output equals the JSON figure it names; every family has HELP and TYPE;
# the last line is "# EOF".
import json
import re
import sys

lines = open(sys.argv[1]).read().split("\n")
s = json.load(open(sys.argv[2]))["summary"]
fsid = json.load(open(sys.argv[2]))["filesystem"]["fsid"]
LEVEL = {"ok": 0, "tight": 1, "critical": 2}
want = {}
for t, sp in s["space"].items():
    want[("btrfs_space_level", (("what", t),))] = LEVEL[sp["level"]]
    if sp.get("headroom"):
        want[("btrfs_space_headroom_bytes", (("type", t),))] = sp["headroom"]["bytes"]
        want[("btrfs_space_headroom_new_chunks_bytes", (("type", t),))] = sp["headroom"]["in_new_chunks"]
want[("btrfs_space_level", (("what", "mount"),))] = LEVEL[s["mount"]["level"]]
want[("btrfs_space_level", (("what", "overall"),))] = LEVEL[s["level"]]
for d in s["unallocated"]["devices"]:
    dv = str(d["devid"])
    want[("btrfs_space_device_unallocated_bytes", (("devid", dv),))] = d["unallocated"]
    for k in ("hard", "soft_data", "soft_metadata"):
        want[("btrfs_space_device_dead_bytes", (("devid", dv), ("kind", k)))] = d["dead_" + k]
if s["mount"]["available"]:
    want[("btrfs_space_mount_reads", ())] = s["mount"]["reads"]
    want[("btrfs_space_mount_seconds", (("profile", "hdd"),))] = s["mount"]["hdd_seconds"]
    want[("btrfs_space_mount_seconds", (("profile", "ssd"),))] = s["mount"]["ssd_seconds"]
bad = []
if lines[-2:] != ["# EOF", ""]:
    bad.append("does not end with # EOF")
meta = {}
got = {}
for l in lines:
    m = re.match(r"^# (HELP|TYPE|UNIT) (\S+) (.+)$", l)
    if m:
        meta.setdefault(m.group(2), set()).add(m.group(1))
        continue
    m = re.match(r'^([a-z_]+)\{(.*)\} (\S+)$', l)
    if not m:
        continue
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
    if labels.pop("fsid", None) != fsid:
        bad.append("sample without the fsid: %s" % l)
    got[(m.group(1), tuple(sorted(labels.items())))] = float(m.group(3))
    # whole numbers in full, fractions without %.17g's binary tail
    digits = re.sub(r"[-.]|e.*$", "", m.group(3)).strip("0")
    if "." in m.group(3) and len(digits) > 15:
        bad.append("value with %d significant digits: %s" % (len(digits), l))
for k, v in want.items():
    if k not in got:
        bad.append("missing %s" % (k,))
    elif abs(got[k] - v) > 1e-6 * max(1, abs(v)):
        bad.append("%s = %s, JSON %s" % (k, got[k], v))
for name, kinds in meta.items():
    if not {"HELP", "TYPE"} <= kinds:
        bad.append("%s lacks HELP or TYPE" % name)
    if name.endswith("_bytes") and "UNIT" not in kinds:
        bad.append("%s has no UNIT" % name)
for b in bad:
    print(b)
print("openmetrics: %d samples equal to the JSON" % len(want))
sys.exit(1 if bad else 0)
