#!/usr/bin/env python3
# plan-frees.py [--empty] LIVE.json BG.json EXTENTS: check forecast's live reclaim
# prediction against the rule recomputed from the block groups (on_free:
# used >= length * pct / 100, free_to_mark = used - thresh + 1), then
# choose the files to delete: from the first on_free block group, files
# lying wholly in it until free_to_mark bytes are freed with some used
# left ("expect START"); from a second one, one file freeing less than its
# free_to_mark (the control, "control_delete FILE" lines: deleted after
# the target's relocation).  Prints every figure, then "delete FILE"
# lines and one "expect START" line.  --empty: every file of the target
# is deleted (the free that takes used to 0 moves it to the unused list):
# "expect" is then empty and "gone START" names it.
import json
import sys

empty = len(sys.argv) > 1 and sys.argv[1] == "--empty"
if empty:
    del sys.argv[1]

rc = json.load(open(sys.argv[1]))["forecast"]["reclaim"]["data"]
bgs = [b for b in json.load(open(sys.argv[2]))["block_groups"] if b["type_name"] == "DATA"]
files = {}
for line in open(sys.argv[3]):
    parts = line.split()
    ext = [(int(parts[i]), int(parts[i + 1])) for i in range(1, len(parts), 2)]
    files[parts[0]] = ext

ok = True
print("live: knobs from %s, threshold %d %%" % (rc["knobs_from"], rc["threshold_pct"]))
if rc["knobs_from"] != "sysfs" or rc["threshold_pct"] != 60 or rc.get("bg_reclaim_threshold") != 60:
    print("the live knobs are not sysfs's 60")
    ok = False
want = []
for b in bgs:
    thresh = b["length"] * 60 // 100
    if not b["read_only"] and b["used"] and b["used"] >= thresh:
        want.append([b["start"], b["used"] - thresh + 1])
got = [[c["start"], c["free_to_mark"]] for c in rc["on_free"]]
print("on_free predicted %s, recomputed %s" % (got, want))
if got != want:
    ok = False


def inside(ext, b):
    return all(b["start"] <= s and s + n <= b["start"] + b["length"] for s, n in ext)


chosen = []
for start, need in got:
    b = next(x for x in bgs if x["start"] == start)
    mine = sorted(f for f, e in files.items() if e and inside(e, b))
    sizes = {f: sum(n for _, n in files[f]) for f in mine}
    chosen.append((b, need, mine, sizes))
target = control = None
for b, need, mine, sizes in chosen:
    freed, dels = 0, []
    for f in mine:
        if freed >= need and not empty:
            break
        dels.append(f)
        freed += sizes[f]
    if target is None and freed >= need and (b["used"] - freed > 0) != empty:
        target = (b, need, dels, freed)
    elif control is None and mine and sizes[mine[0]] < need:
        control = (b, need, mine[:1], sizes[mine[0]])
    if target and control:
        break
if not target or not control:
    print("no block group to free as planned")
    sys.exit(1)
for what, (b, need, dels, freed) in (("target", target), ("control", control)):
    print("%s: block group %d used %d, free_to_mark %d, deleting %s (%d bytes)" %
          (what, b["start"], b["used"], need, " ".join(dels), freed))
    for f in dels:
        print("%s %s" % ("delete" if what == "target" else "control_delete", f))
if empty:
    print("expect ")
    print("gone %d" % target[0]["start"])
else:
    print("expect %d" % target[0]["start"])
print("target %d" % target[0]["start"])
sys.exit(0 if ok else 1)
