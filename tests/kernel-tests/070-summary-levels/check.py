#!/usr/bin/env python3
# check.py INSPECT.json DATA-FILLED METADATA-FILLED: the summary's levels
# against the kernel's fills (test.sh); one line per type, exit 1 when a
# level breaks the rule's promise.
import json
import sys

s = json.load(open(sys.argv[1]))["summary"]
dk, mk = int(sys.argv[2]), int(sys.argv[3])
bad = []
data = s["space"].get("data") or s["space"].get("mixed")
meta = s["space"].get("metadata") or s["space"].get("mixed")
# the type's size as the rule weighs it (formulas.md 19.2: at least a
# tenth of the filesystem in the type's copies)
d_cap = max(data["held"] + dk, data["headroom"]["size_share"])
m_chunk = meta["chunk_size"]
rsv = meta["headroom"]["reservation"]
roomy = dk >= d_cap // 10 and mk >= m_chunk
for t, sp in s["space"].items():
    if t == "system":
        continue
    k = dk if t in ("data", "mixed") else mk
    print("    %-8s level %-8s tool headroom %11d  kernel filled %11d  (chunk %d)" % (
        t, sp["level"], sp["headroom"]["bytes"], k, sp["chunk_size"]))
    if roomy and sp["level"] == "critical":
        bad.append("%s critical, but the kernel wrote %d data (10 %% of %d) and %d metadata (a chunk: %d)"
                   % (t, dk, d_cap, mk, m_chunk))
if dk < min(data["chunk_size"], d_cap // 10) and data["level"] != "critical":
    bad.append("data %s, but the kernel's data fill stopped after %d bytes" % (data["level"], dk))
if mk < rsv and meta["level"] != "critical":
    bad.append("metadata %s, but the kernel's metadata fill took %d < one reservation %d"
               % (meta["level"], mk, rsv))
# the level follows the written rule on the kernel's own headroom too
# (metadata: the fill plus the reservation it stops short by)
for b in bad:
    print("    BROKEN: " + b)
sys.exit(1 if bad else 0)
