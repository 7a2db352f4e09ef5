#!/usr/bin/env python3
# plan-sweep-armed.py BEFORE.json BG.json EXTENTS: the sweep of a dynamic
# threshold not armed yet (dynamic_reclaim and periodic_reclaim on, less
# than a data chunk unused after the fill).  The forecast of the image
# before any delete must say threshold 0 now, arm_bytes (chunk - unused)
# and armed_pct, the threshold the sweep sees: it waits for a chunk freed
# net (periodic_reclaim_ready), which leaves at least a chunk unused.
# Two batches of deletes, each a chunk or more, two files from each of
# three full data block groups (so none is emptied and deleted: that would
# take its length out of unused again), each left below armed_pct:
# A makes the space info ready for the first sweep (which only sets
# reclaim_mark), B for the second.  Prints every figure, "armed_pct N",
# "when W", "delete_a FILE", "delete_b FILE", "first START" (the smallest
# block group B leaves, relocated first).
import json
import sys

rc = json.load(open(sys.argv[1]))["forecast"]["reclaim"]["data"]
bgs = [b for b in json.load(open(sys.argv[2]))["block_groups"] if b["type_name"] == "DATA"]
files = {}
for line in open(sys.argv[3]):
    parts = line.split()
    files[parts[0]] = [(int(parts[i]), int(parts[i + 1])) for i in range(1, len(parts), 2)]
chunk = rc["chunk_size"]
pct = rc.get("armed_pct", 0)
when = sorted({c["when"] for c in rc["sweep"]})
print("before: threshold %d %%, unused %d, chunk %d, arm_bytes %d, armed_pct %d, periodic %s, "
      "dynamic %s, urgent %s, sweep %s" %
      (rc["threshold_pct"], rc["unused"], chunk, rc.get("arm_bytes", 0), pct, rc["periodic"],
       rc["dynamic"], rc["urgent"], [c["start"] for c in rc["sweep"]]))
ok = (rc["threshold_pct"] == 0 and rc["unused"] < chunk and pct > 0 and
      rc.get("arm_bytes", 0) == chunk - rc["unused"] and rc["periodic"] and rc["dynamic"])
print("armed_pct %d" % pct)
print("when %s" % ",".join(when))
full = sorted((b for b in bgs if b["used"] == b["length"]), key=lambda b: b["start"])
batches = {"a": full[0:3], "b": full[3:6]}
left = []
for name, group in batches.items():
    freed = 0
    for b in group:
        mine = sorted(f for f, e in files.items() if e and
                      all(b["start"] <= s and s + n <= b["start"] + b["length"] for s, n in e))
        gone = mine[:2]
        n = sum(l for f in gone for _, l in files[f])
        after = b["used"] - n
        print("%s: block group %d, deleting %s (%d bytes), %d left (%.1f %%)" %
              (name, b["start"], " ".join(gone), n, after, 100.0 * after / b["length"]))
        if len(mine) < 3 or after * 100 >= b["length"] * pct:
            print("  not left partly used below armed_pct")
            ok = False
        freed += n
        left.append((after, b["start"]))
        for f in gone:
            print("delete_%s %s" % (name, f))
    print("%s frees %d bytes (a chunk: %d)" % (name, freed, chunk))
    if len(group) < 3 or freed < chunk:
        ok = False
print("first %d" % min(left)[1] if left else "first none")
sys.exit(0 if ok else 1)
