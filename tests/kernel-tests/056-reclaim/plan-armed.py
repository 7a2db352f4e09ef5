#!/usr/bin/env python3
# plan-armed.py BEFORE.json BG.json EXTENTS: dynamic reclaim marked on free
# (periodic_reclaim off), predicted from the image before the deletes.
# The threshold must be 0 now (the space info has less than a data chunk
# unused) and arm once chunk_size - unused bytes are freed and committed:
# arm_bytes and armed_pct recomputed from the forecast's own figures
# (100 * want / target, calc_pct_ratio()); on_free must list every data
# block group at or above the armed threshold with free_to_mark = used -
# length * armed_pct / 100 + 1, "once armed".  Then the deletes:
# - A (one transaction): files of the block groups below the armed
#   threshold (not the last of each: none emptied), then files of the first
#   on_free block group X until arm_bytes are freed: X loses at least its
#   free_to_mark in the transaction that arms it, so its crossing free saw
#   threshold 0: never marked ("unmarked X").  The bytes freed before X's
#   crossing free must be less than arm_bytes, so that a foreign commit
#   between two deletes cannot arm it first;
# - B (a later transaction): files of the second on_free block group Y
#   until its free_to_mark is freed, some left: marked ("target Y").
# Prints every figure, "delete_a FILE", "delete_b FILE", "unmarked X",
# "target Y", "armed_pct P".
import json
import sys

rc = json.load(open(sys.argv[1]))["forecast"]["reclaim"]["data"]
bgs = [b for b in json.load(open(sys.argv[2]))["block_groups"] if b["type_name"] == "DATA"]
files = {}
for line in open(sys.argv[3]):
    parts = line.split()
    files[parts[0]] = [(int(parts[i]), int(parts[i + 1])) for i in range(1, len(parts), 2)]
ok = True
chunk, unused = rc["chunk_size"], rc["unused"]
arm = chunk - unused if unused < chunk else 0
pct = 100 * rc["dynamic_want"] // rc["dynamic_target"]
print("before: threshold %d %%, unused %d, chunk %d, arm_bytes %s (recomputed %d), armed_pct %s (recomputed %d)" %
      (rc["threshold_pct"], unused, chunk, rc.get("arm_bytes"), arm, rc.get("armed_pct"), pct))
if rc["threshold_pct"] != 0 or not arm or rc.get("arm_bytes") != arm or rc.get("armed_pct") != pct or not pct:
    print("the threshold now is not 0 with an armed threshold after arm_bytes")
    ok = False
want = [[b["start"], b["used"] - b["length"] * pct // 100 + 1, "on a free that crosses it once armed"]
        for b in bgs if b["used"] and b["used"] >= b["length"] * pct // 100]
got = [[c["start"], c["free_to_mark"], c["when"]] for c in rc["on_free"]]
print("on_free predicted %s, recomputed %s" % (got, want))
if got != want or len(got) < 2:
    ok = False
if not ok:
    sys.exit(1)


def inside(ext, b):
    return all(b["start"] <= s and s + n <= b["start"] + b["length"] for s, n in ext)


def files_of(b):
    mine = sorted((f for f, e in files.items() if e and inside(e, b)), key=lambda f: int(f[1:]))
    return [(f, sum(n for _, n in files[f])) for f in mine]


freed, dels_a = 0, []
for b in bgs:
    if b["start"] in [s for s, _, _ in got] or not b["used"]:
        continue
    for f, n in files_of(b)[:-1]:
        dels_a.append(f)
        freed += n
x = next(b for b in bgs if b["start"] == got[0][0])
xfreed, before_cross = 0, None
for f, n in files_of(x):
    if freed >= arm and xfreed >= got[0][1]:
        break
    if before_cross is None and xfreed + n >= got[0][1]:
        before_cross = freed
    dels_a.append(f)
    freed += n
    xfreed += n
# a commit of someone else's (a sync) between two deletes of A must not
# arm the threshold before X's crossing free: the bytes before it are
# less than arm_bytes
if before_cross is None or before_cross >= arm:
    print("A would arm the threshold before X's crossing free (%s of %d)" % (before_cross, arm))
    sys.exit(1)
y = next(b for b in bgs if b["start"] == got[1][0])
yfreed, dels_b = 0, []
for f, n in files_of(y):
    if yfreed >= got[1][1]:
        break
    dels_b.append(f)
    yfreed += n
if freed < arm or xfreed < got[0][1] or xfreed >= x["used"] or yfreed < got[1][1] or yfreed >= y["used"]:
    print("no deletes as planned: A %d of %d (X %d), B %d" % (freed, arm, xfreed, yfreed))
    sys.exit(1)
print("A: %s, %d bytes (arming %d), %d of them from %d (free_to_mark %d): not marked" %
      (" ".join(dels_a), freed, arm, xfreed, x["start"], got[0][1]))
print("B: %s, %d bytes from %d (free_to_mark %d): marked" %
      (" ".join(dels_b), yfreed, y["start"], got[1][1]))
for f in dels_a:
    print("delete_a %s" % f)
for f in dels_b:
    print("delete_b %s" % f)
print("unmarked %d" % x["start"])
print("target %d" % y["start"])
print("armed_pct %d" % pct)
