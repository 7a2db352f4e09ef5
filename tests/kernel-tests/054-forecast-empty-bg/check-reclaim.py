#!/usr/bin/env python3
# check-reclaim.py LIVE.json ALLOCATION_DIR: forecast's live "reclaim"
# object must hold every reclaim and size-class file the kernel has under
# sysfs allocation/TYPE/, with the value read there (the sysfs read right
# after the tool's: nothing writes on the idle mount in between), and
# no other sysfs file; and its "mount.discard" must be the mount's (discard=async
# in the options: async).  Prints every figure.
import json
import os
import sys

FILES = ["bg_reclaim_threshold", "dynamic_reclaim", "periodic_reclaim",
         "reclaim_count", "reclaim_bytes", "reclaim_errors"]

fc = json.load(open(sys.argv[1]))["forecast"]
alloc = sys.argv[2]
ok = True
got = fc.get("reclaim", {})
for sinfo in sorted(os.listdir(alloc)):
    d = os.path.join(alloc, sinfo)
    if not os.path.isdir(d) or sinfo not in ("data", "metadata", "system", "mixed"):
        continue
    want = {}
    for name in FILES:
        p = os.path.join(d, name)
        if os.path.exists(p):
            want[name] = int(open(p).read())
    p = os.path.join(d, "size_classes")
    if os.path.exists(p):
        want["size_classes"] = {k: int(v) for k, v in
                                (line.split() for line in open(p) if line.strip())}
    print("    %s: sysfs %s" % (sinfo, want))
    # the files only: the same object also holds the reclaim forecast (21.14)
    tool = {k: v for k, v in got.get(sinfo, {}).items()
            if k in FILES or k == "size_classes"}
    print("    %s: tool  %s" % (sinfo, tool))
    if tool != want:
        print("reclaim files of %s differ" % sinfo)
        ok = False
print("    mount: discard %s, from %s" % (fc["mount"]["discard"], fc["mount"]["discard_source"]))
if fc["mount"]["discard"] != "async":
    print("the mount has discard=async, the tool says %s" % fc["mount"]["discard"])
    ok = False
sys.exit(0 if ok else 1)
