#!/bin/bash
# forecast --balance on fixtures, without a kernel (formulas.md 21.8):
# - the selection is recomputed here from the block-groups JSON with the
#   kernel's filters (mult_perc rounding, usage=0 meaning used < 1, range
#   ends, soft convert, limit last, highest logical first, each relocated
#   block group's bytes raising the used of the kept ones of its target,
#   lowest first) and must equal balance.selected, in order; moved_bytes
#   is the sum of the used relocated;
# - unallocated_after is the unallocated space now (a filter selecting
#   nothing) plus the selected chunks' stripes, minus may_differ (the new
#   chunks' raw bytes); exact means no new chunk;
# - unplaced_bytes (no chunk of the target profile can be made) means
#   can_start is false;
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
	run_check_stdout "$BTRFS_SPACE" --format json block-groups "$@" > "$TEST_TMP/bg.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json chunks "$@" > "$TEST_TMP/chunks.json" || exit
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
want = []
moved = 0
used = {b["start"]: b["used"] for b in bgs}
picked = set()
def profile_of(bg, a):
    return a.get("convert", bg["profile"]) if "convert" in a else bg["profile"]
for bg in sorted(bgs, key=lambda b: -b["start"]):
    t = bg["flags"]
    if t & 1:
        # DATA, or mixed: balanced by -d or -m, with the data arguments
        a = args.get("d", {} if (t & 4) and "m" in args else None)
    else:
        a = args.get("m")
    if a is None:
        continue
    if selects(bg, used[bg["start"]], a):
        want.append(bg)
        picked.add(bg["start"])
        moved += used[bg["start"]]
        # the moved bytes raise the used of kept block groups, lowest first
        left = used[bg["start"]]
        target = profile_of(bg, a)
        for o in sorted(bgs, key=lambda b: b["start"]):
            if not left:
                break
            if o["start"] in picked or o["read_only"] or o["flags"] & 7 != bg["flags"] & 7 \
               or o["profile"] != target:
                continue
            take = min(left, max(0, o["length"] - used[o["start"]] - o["bytes_super"]))
            used[o["start"]] += take
            left -= take
bad = []
if bal["selected"] != [b["start"] for b in want]:
    bad.append("selected %s, recomputed %s" % (bal["selected"][:8], [b["start"] for b in want][:8]))
if bal["moved_bytes"] != moved:
    bad.append("moved_bytes %d, recomputed %d" % (bal["moved_bytes"], moved))
if base["selected"]:
    bad.append("limit=0 selected %s" % base["selected"])
freed = {}
for b in want:
    c = chunks[b["start"]]
    for s in c["stripes"]:
        freed[str(s["devid"])] = freed.get(str(s["devid"]), 0) + c["stripe_size"]
for dev, now in base["unallocated_after"].items():
    exp = now + freed.get(dev, 0) - bal["may_differ"][dev]
    if bal["unallocated_after"][dev] != exp:
        bad.append("devid %s: unallocated_after %d, now + freed - new %d" % (dev, bal["unallocated_after"][dev], exp))
if bal["exact"] != (bal["nr_new_chunks"] == 0 and bal["unplaced_bytes"] == 0):
    bad.append("exact %s with %d new chunks, %d unplaced" % (bal["exact"], bal["nr_new_chunks"], bal["unplaced_bytes"]))
if bal["unplaced_bytes"] and bal["can_start"]:
    bad.append("%d bytes unplaced, yet can_start" % bal["unplaced_bytes"])
if bal["exact"] and any(bal["may_differ"].values()):
    bad.append("exact but may_differ %s" % bal["may_differ"])
if bad:
    print("\n".join(bad))
    sys.exit(1)
print("%d selected, %d moved, %d new chunks" % (len(want), bal["moved_bytes"], bal["nr_new_chunks"]))
PY
}

for f in bg-spread-ns4k-50 raid10-4dev mixed-256m devadd-convert-raid1 meta-single-1g; do
	set -- "$TEST_TMP/$f"/*.img
	load_image "$@"
	for filters in "-dusage=0" "-dusage=50" "-dusage=99" "-dusage=100" "-dusage=10..90" \
		       "-dusage=..50" "-musage=30" "-dusage=100,limit=2 -musage=100" \
		       "-dconvert=raid1,soft" "-dconvert=single,soft -mconvert=dup,soft" \
		       "-dconvert=single" "-d -m" "-m"; do
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
	   "-dusage=1 -dusage=2" "-dusage=,limit=1" "usage=1"; do
	run_mustfail_code 2 "bad --balance '$bad'" "$BTRFS_SPACE" forecast --balance "$bad" "$img" \
		> /dev/null 2>&1
done
