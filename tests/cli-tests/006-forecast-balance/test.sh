#!/bin/bash
# forecast --balance on fixtures, without a kernel (formulas.md 21.8):
# - the kernel's filters (mult_perc rounding, usage=0 meaning used < 1,
#   range ends, soft convert, limit last) applied here to the block-groups
#   JSON: the selection walks from the highest logical down; a selected
#   block group passed with its used before the balance (used only grows
#   on the way); one that passed and was not selected got extents on the
#   way; relocated block groups are gone from block_groups_after;
# - data is neither lost nor made: data used before = after;
# - unallocated_after is the unallocated space now (a filter selecting
#   nothing) plus the relocated chunks' stripes minus the new chunks';
# - a refused balance selects nothing; completes = can start and nothing
#   failed; exact has no may_differ and no reason;
# - bad filters exit 2.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq python3 tar

for f in bg-spread-ns4k-50 raid10-4dev mixed-256m devadd-convert-raid1 meta-single-1g; do
	# read only: the run's unpacked fixtures (tests/common fixture_images)
	fixture_images "$f" "$TEST_TMP/$f" > /dev/null
done

# the state now: a filter selecting nothing, the block groups, the chunks
load_image()
{
	run_check_stdout "$BTRFS_SPACE" --format json forecast --balance "-dlimit=0 -mlimit=0" "$@" \
		> "$TEST_TMP/base.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$@" > "$TEST_TMP/bg.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json chunks --list-chunks "$@" > "$TEST_TMP/chunks.json" || exit
}

check_balance()
{
	local name=$1 filters=$2
	shift 2
	run_check_stdout "$BTRFS_SPACE" --format json forecast --balance "$filters" "$@" \
		> "$TEST_TMP/fc.json" || exit
	python3 - "$filters" "$TEST_TMP"/{fc,base,bg,chunks}.json <<'PY' || fail "$name '$filters': balance invariants"
import json, sys
filters = sys.argv[1]
bal = json.load(open(sys.argv[2]))["forecast"]["balance"]
base = json.load(open(sys.argv[3]))["forecast"]["balance"]
bgs = json.load(open(sys.argv[4]))["block_groups"]
chunks = {c["logical"]: c for c in json.load(open(sys.argv[5]))["chunks"]}
args = {}
for part in filters.split():
    a = {}
    for f in filter(None, part[2:].split(",")):
        k, _, v = f.partition("=")
        a[k] = v
    args[part[1]] = a
def selects(bg, used, a):
    length = bg["length"]
    u = a.get("usage")
    if u is not None and ".." not in u:
        thresh = 1 if int(u) == 0 else length * int(u) // 100
        if used >= thresh:
            return False
    if u is not None and ".." in u:
        lo, hi = u.split("..")
        lo = int(lo) if lo else 0
        hi = int(hi) if hi else 100
        lo = length * lo // 100 if lo else 0
        hi = 1 if hi == 0 else length * hi // 100
        if not (lo <= used < hi):
            return False
    if "convert" in a and "soft" in a and bg["profile"] == a["convert"]:
        return False
    if "limit" in a:
        if a["limit"] == 0:
            return False
        a["limit"] -= 1
    return True
for a in args.values():
    if "limit" in a:
        a["limit"] = int(a["limit"])
orig = {b["start"]: b for b in bgs}
after = {b["start"]: b for b in bal["block_groups_after"]}
def args_of(bg):
    t = bg["flags"]
    if t & 1:
        # DATA, or mixed: balanced by -d or -m, with the data arguments
        return args.get("d", {} if (t & 4) and "m" in args else None)
    return args.get("m")
bad = []
sel = bal["selected"]
if base["selected"]:
    bad.append("limit=0 selected %s" % base["selected"])
# the walk: highest logical first, each block group once
if sel != sorted(sel, reverse=True) or len(set(sel)) != len(sel):
    bad.append("selected not from the highest logical down: %s" % sel[:8])
# used only grows before a block group is reached: what is selected passed
# the filters with its used before the balance; what passed and was not
# selected got extents on the way (its used is higher after) or met limit
limited = {k: "limit" in a for k, a in args.items()}
for bg in sorted(bgs, key=lambda b: -b["start"]):
    a = args_of(bg)
    if a is None:
        if bg["start"] in sel:
            bad.append("%d selected without a filter for its type" % bg["start"])
        continue
    passes = selects(bg, bg["used"], dict(a, limit=1) if "limit" in a else a)
    if bg["start"] in sel and not passes:
        bad.append("%d selected, but its used %d does not pass" % (bg["start"], bg["used"]))
    if passes and bg["start"] not in sel and not any(limited.values()) and bal["can_start"]:
        if bg["start"] not in after or after[bg["start"]]["used"] <= bg["used"]:
            bad.append("%d passes, not selected, and got nothing" % bg["start"])
# relocated block groups are gone, the new chunks are there
for start in bal["relocated"]:
    if start in after and not after[start]["new"]:
        bad.append("%d relocated but still there" % start)
if bal["moved_bytes"] < sum(orig[s]["used"] for s in bal["relocated"]):
    bad.append("moved_bytes %d below the used of the relocated" % bal["moved_bytes"])
# data is neither made nor lost: the data used before equals the data used after
if bal["completes"]:
    d0 = sum(b["used"] for b in bgs if b["flags"] & 7 == 1)
    d1 = sum(b["used"] for b in bal["block_groups_after"] if b["flags"] & 7 == 1)
    if d0 != d1:
        bad.append("data used %d before, %d after" % (d0, d1))
# per device: unallocated now + stripes freed - stripes of the new chunks
freed = {}
for start in bal["relocated"]:
    c = chunks[start]
    for st in c["stripes"]:
        freed[str(st["devid"])] = freed.get(str(st["devid"]), 0) + c["stripe_size"]
for c in bal["new_chunks"]:
    for st in c["stripes"]:
        freed[str(st["devid"])] = freed.get(str(st["devid"]), 0) - c["stripe_size"]
for dev, now in base["unallocated_after"].items():
    exp = now + freed.get(dev, 0)
    if bal["unallocated_after"][dev] != exp:
        bad.append("devid %s: unallocated_after %d, now + freed - new %d" % (dev, bal["unallocated_after"][dev], exp))
if bal["nr_new_chunks"] != len(bal["new_chunks"]):
    bad.append("nr_new_chunks %d, %d listed" % (bal["nr_new_chunks"], len(bal["new_chunks"])))
if not bal["can_start"] and (sel or not bal["reason"].startswith("refused")):
    bad.append("refused (%s) yet %d selected" % (bal["reason"], len(sel)))
if bal["completes"] != (bal["can_start"] and not bal["failed"]):
    bad.append("completes %s with %d failed" % (bal["completes"], len(bal["failed"])))
if bal["exact"] and any(bal["may_differ"].values()):
    bad.append("exact but may_differ %s" % bal["may_differ"])
if bal["exact"] != (bal["inexact_reason"] == "-"):
    bad.append("exact %s, reason %s" % (bal["exact"], bal["inexact_reason"]))
if bad:
    print("\n".join(bad))
    sys.exit(1)
print("%d selected, %d moved, %d new chunks, exact %s" % (len(sel), bal["moved_bytes"],
      bal["nr_new_chunks"], bal["exact"]))
PY
}

for f in bg-spread-ns4k-50 raid10-4dev mixed-256m devadd-convert-raid1 meta-single-1g; do
	set -- "$TEST_TMP/$f"/*.img
	load_image "$@"
	for filters in "-dusage=0" "-dusage=50" "-dusage=99" "-dusage=100" "-dusage=10..90" \
		       "-dusage=..50" "-musage=30" "-dusage=100,limit=2 -musage=100" \
		       "-dconvert=raid1,soft" "-dconvert=single,soft -mconvert=dup,soft" \
		       "-dconvert=single" "-d -m" "-m" "-mconvert=single" "-mconvert=single -f"; do
		check_balance "$f" "$filters" "$@"
	done
done

# the boundary: usage=N selects used < floor(length * N / 100), found per block group
img=$TEST_TMP/bg-spread-ns4k-50/bg-spread-ns4k-50.img
load_image "$img"
n=$(jq '[.block_groups[] | select(.type_name == "DATA")] | map((.used * 100 / .length | floor) + 1) | max' "$TEST_TMP/bg.json")
check_balance boundary "-dusage=$n" "$img"
check_balance boundary "-dusage=$((n - 1))" "$img"

for bad in "" "-x" "-dusage=101" "-dusage=5..3" "-dlimit=" "-dsoft" "-dconvert=raid9" \
	   "-dusage=1 -dusage=2" "-dusage=,limit=1" "usage=1" "-f" "-dusage=1 -f -f"; do
	run_mustfail_code 2 "bad --balance '$bad'" "$BTRFS_SPACE" forecast --balance "$bad" "$img" \
		> /dev/null 2>&1
done
