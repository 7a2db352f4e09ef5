#!/usr/bin/env python3
# plan-sweep.py [--dynamic] LIVE.json BG.json EXTENTS: the periodic sweep
# case.  The live forecast (threshold 60, periodic on; with --dynamic,
# dynamic_reclaim on too: the threshold is calc_dynamic_reclaim_threshold()'s,
# 100 * (target - unallocated) / target, and must not be 0) must list no on_free block
# group (with periodic reclaim a free marks nothing, 6.11 to 6.18) and as
# sweep candidates the data block groups below 60 %, by used; it counts
# the ones at or above in above_swept.  Two full data block groups are
# chosen, A and B: deleting all files of one makes the space info ready
# (a block group's length is at least chunk_size here) and the cleaner
# deletes it before it sweeps.  Prints every figure, "delete_a FILE",
# "delete_b FILE", "a START", "b START" and "first START".
import json
import sys

dynamic = sys.argv[1] == "--dynamic"
args = sys.argv[2:] if dynamic else sys.argv[1:]
rc = json.load(open(args[0]))["forecast"]["reclaim"]["data"]
bgs = [b for b in json.load(open(args[1]))["block_groups"] if b["type_name"] == "DATA"]
pct = rc["threshold_pct"] if dynamic else 60
files = {}
for line in open(args[2]):
    parts = line.split()
    files[parts[0]] = [(int(parts[i]), int(parts[i + 1])) for i in range(1, len(parts), 2)]
sweep = [c["start"] for c in rc["sweep"]]
want = [b["start"] for b in sorted((b for b in bgs if b["used"] and
                                    b["used"] < b["length"] * pct // 100),
                                   key=lambda b: b["used"])]
above = len([b for b in bgs if b["used"] >= b["length"] * pct // 100])
print("live: threshold %d %%, periodic %s, urgent %s, chunk %d" %
      (rc["threshold_pct"], rc["periodic"], rc["urgent"], rc["chunk_size"]))
if dynamic:
    print("live: dynamic %s, target %d, want %d, threshold %d %%" %
          (rc["dynamic"], rc["dynamic_target"], rc["dynamic_want"], pct))
print("sweep predicted %s, recomputed %s; on_free %s; above_swept %d, recomputed %d" %
      (sweep, want, rc["on_free"], rc["above_swept"], above))
ok = ((rc["dynamic"] and pct > 0 if dynamic else pct == 60) and rc["periodic"] and not rc["on_free"] and sweep == want and
      rc["above_swept"] == above and len(sweep) >= 1)
full = [b for b in bgs if b["used"] == b["length"]]
if len(full) < 2 or full[0]["length"] < rc["chunk_size"]:
    print("no two full block groups of at least chunk_size")
    sys.exit(1)
for name, b in (("a", full[0]), ("b", full[1])):
    mine = sorted(f for f, e in files.items() if e and
                  all(b["start"] <= s and s + n <= b["start"] + b["length"] for s, n in e))
    freed = sum(n for f in mine for _, n in files[f])
    print("%s: block group %d, deleting %s (%d bytes)" % (name, b["start"], " ".join(mine), freed))
    if freed != b["used"]:
        print("its files do not hold all of it")
        ok = False
    for f in mine:
        print("delete_%s %s" % (name, f))
    print("%s %d" % (name, b["start"]))
print("first %d" % sweep[0] if sweep else "first none")
sys.exit(0 if ok else 1)
