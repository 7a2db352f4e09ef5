#!/usr/bin/env python3
# plan-sweep.py LIVE.json EXTENTS: the periodic sweep case.  The live
# forecast (threshold 60, periodic on) must list sweep candidates, the
# first not may_be_skipped, and say urgent (else the first sweep marks
# only: "skip" is printed).  To make the space info ready, every file of
# the first on_free block group is deleted: at least chunk_size bytes must
# go.  Prints every figure, "delete FILE" lines, "first START" and
# "allowed START..." (the sweep list: a later one may be skipped).
import json
import sys

rc = json.load(open(sys.argv[1]))["forecast"]["reclaim"]["data"]
files = {}
for line in open(sys.argv[2]):
    parts = line.split()
    files[parts[0]] = [(int(parts[i]), int(parts[i + 1])) for i in range(1, len(parts), 2)]
sweep = rc["sweep"]
print("live: threshold %d %%, periodic %s, urgent %s, chunk %d" %
      (rc["threshold_pct"], rc["periodic"], rc["urgent"], rc["chunk_size"]))
print("sweep predicted: %s" % [[c["start"], c["used"], c["when"], c["may_be_skipped"]] for c in sweep])
if not rc["urgent"]:
    print("skip: not urgent, the first sweep only marks")
    sys.exit(0)
if not sweep or sweep[0]["may_be_skipped"] or rc["threshold_pct"] != 60 or not rc["periodic"]:
    print("no sweep candidate as expected")
    sys.exit(1)
b = rc["on_free"][0]
mine = [f for f, e in files.items() if e and
        all(b["start"] <= s and s + n <= b["start"] + b["length"] for s, n in e)]
freed = sum(n for f in mine for _, n in files[f])
print("ready: deleting %s from %d (%d bytes, chunk %d)" % (" ".join(sorted(mine)), b["start"],
                                                          freed, rc["chunk_size"]))
if freed < rc["chunk_size"]:
    print("not enough to free")
    sys.exit(1)
for f in mine:
    print("delete %s" % f)
print("first %d" % sweep[0]["start"])
print("allowed %s" % " ".join(str(c["start"]) for c in sweep))
