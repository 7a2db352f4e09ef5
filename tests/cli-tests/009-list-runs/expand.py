#!/usr/bin/env python3
# expand.py WHAT RUNS.json EACH.json: the runs of the default output,
# expanded (formulas.md section 21.11), are the items the expanding option
# lists, one for one and in order; the per-type totals are their sums.
# WHAT: chunks, block-groups or reclaim (the forecast's reclaim lists).
import json
import sys

what, runs_file, each_file = sys.argv[1:4]
runs = json.load(open(runs_file))
each = json.load(open(each_file))
bad = []


def chunk_key(c):
    return (c["logical"], c["length"], c["type_name"] if "type_name" in c else c["type"],
            c["profile"], c["stripe_size"],
            [(s["devid"], s["offset"]) for s in c["stripes"]])


def expand_chunks(run):
    pattern = run.get("pattern", [run])
    period = run.get("period", 1)
    steps = {int(d): s for d, s in run.get("device_steps", {}).items()}
    out = []
    for i in range(run["count"]):
        p, r = pattern[i % period], i // period
        c = dict(p)
        c["logical"] = p["logical"] + r * run.get("logical_step", 0)
        c["stripes"] = [{"devid": s["devid"], "offset": s["offset"] + r * steps.get(s["devid"], 0)}
                        for s in p["stripes"]]
        out.append(c)
    if run["count"] > 1 and chunk_key(out[-1]) != chunk_key(run["last"]):
        bad.append("run at %d: last %s, expanded %s" % (run["logical"], run["last"], out[-1]))
    return out


def expand_starts(run, key):
    """the starts of a run of items: pattern[i % period] + (i // period) * step"""
    pattern = run.get("pattern", [run[key]])
    period = run.get("period", 1)
    starts = [pattern[i % period] + i // period * run.get("step", 0) for i in range(run["count"])]
    if run["count"] > 1 and starts[-1] != run["last"]:
        bad.append("run at %d: last %d, expanded %d" % (run[key], run["last"], starts[-1]))
    return starts


def check_list(name, got, want):
    if len(got) != len(want):
        bad.append("%s: %d items from the runs, %d listed" % (name, len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            bad.append("%s[%d]: runs give %s, the list %s" % (name, i, g, w))
            break


def chunk_type(c):
    return c["type_name"], c["profile"]


if what == "chunks":
    got = [c for run in runs["chunk_runs"] for c in expand_chunks(run)]
    want = each["chunks"]
    check_list("chunks", [chunk_key({**c, "type_name": c["type"]}) for c in got],
               [chunk_key(c) for c in want])
    totals = {}
    for c in want:
        t = totals.setdefault(chunk_type(c), [0, 0, 0])
        t[0] += 1
        t[1] += c["length"]
        t[2] += c["stripe_size"] * c["num_stripes"]
    printed = {(t["type_name"], t["profile"]): [t["count"], t["length"], t["disk_bytes"]]
               for t in runs["chunk_totals"]}
    if printed != totals:
        bad.append("chunk_totals %s, summed from the list %s" % (printed, totals))
    n = len(want)
elif what == "block-groups":
    want = each["block_groups"]
    got, used = [], []
    for run in runs["block_group_runs"]:
        starts = expand_starts(run, "start")
        got += [(s, run["length"], run["flags"], run["read_only"], run["bytes_super"])
                for s in starts]
        used.append((len(got) - run["count"], run["count"], run["used"], run["item_used"],
                     run["state"]))
    check_list("block_groups", got, [(b["start"], b["length"], b["flags"], b["read_only"],
                                      b["bytes_super"]) for b in want])
    for first, count, u, iu, state in used:
        part = want[first:first + count]
        if sum(b["used"] for b in part) != u or sum(b["item_used"] for b in part) != iu:
            bad.append("run at %d: used %d, the list sums %d" % (part[0]["start"], u,
                                                                 sum(b["used"] for b in part)))
        for b in part:
            s = "empty" if not b["used"] else \
                "full" if b["used"] + b["bytes_super"] >= b["length"] else "partly used"
            if s != state:
                bad.append("block group %d is %s in a run of %s" % (b["start"], s, state))
    n = len(want)
else:
    n = 0
    rc, re = runs["forecast"]["reclaim"], each["forecast"]["reclaim"]
    pairs = []
    for t in ("data", "metadata", "system", "mixed"):
        if t in re:
            pairs += [(rc[t], re[t], k, "start") for k in ("sweep", "on_free")]
    if "after" in re:
        pairs += [(rc["after"], re["after"], k, "logical")
                  for k in ("list", "skipped", "started", "relocated", "failed")]
        pairs.append((rc["after"], re["after"], "block_groups_after", "start"))
    for r, e, k, key in pairs:
        got = []
        for run in r[k + "_runs"]:
            for s in expand_starts(run, key):
                item = {f: v for f, v in run.items()
                        if f not in ("count", "period", "step", "pattern", "last")}
                item[key] = s
                got.append(item if isinstance(e[k][0] if e[k] else {}, dict) else s)
        check_list(k, got, e[k])
        n += len(e[k])

for b in bad[:10]:
    print("MISMATCH " + b)
print("%s: %d items, %s" % (what, n, "runs expand to the list" if not bad else "%d mismatches" % len(bad)))
sys.exit(1 if bad else 0)
