#!/bin/bash
# forecast's reclaim group (formulas.md 21.14) on devadd-convert-raid1,
# without a kernel:
# - worked by hand from `btrfs-space block-groups` of the fixture (data
#   RAID1 block groups of 208 MiB: 318963712 with 720 KiB used,
#   788725760 with 200 MiB, 1124270080 empty; metadata 570621952 with
#   656 KiB, 1006829568 empty; 96 MiB unallocated, so urgent): with
#   --reclaim-threshold data=90 the threshold is 218103808 * 90 / 100 =
#   196293427 bytes; 788725760 is marked by the free of 209715200 -
#   196293427 + 1 = 13421774 bytes; 318963712 is already below, taken only
#   by a sweep (urgent: the first sweep's second pass), else never marked;
#   the empty ones are never candidates;
# - the same rules recomputed from the block-groups and inspect JSON for
#   dynamic reclaim (calc_dynamic_reclaim_threshold(): 10 data chunks of
#   target, 100 * (target - unallocated) / target) and metadata;
# - kernel defaults: no threshold, nothing predicted; system is never swept;
# - --kernel 5.15 has no reclaim group, --dynamic-reclaim before 6.11 and
#   bad values exit 2.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq python3 tar

imgs=$(fixture_images devadd-convert-raid1 "$TEST_TMP") || exit
# shellcheck disable=SC2086
set -- $imgs

# --list-chunks: the lists item by item (009-list-runs checks their runs)
reclaim()
{
	run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$@" \
		> "$TEST_TMP/fc.json" || exit
}

expect()
{
	local what=$1 filter=$2 want=$3 got

	got=$(jq -c "$filter" "$TEST_TMP/fc.json")
	[ "$got" = "$want" ] || fail "$what: $filter is $got, expected $want"
	echo "$what: $filter = $got"
}

# by hand, threshold 90 % with the periodic sweep
reclaim --reclaim-threshold data=90 --periodic-reclaim data "$@"
expect "data=90 periodic" '.forecast.reclaim.data.threshold_pct' 90
expect "data=90 periodic" '.forecast.reclaim.data.urgent' true
expect "data=90 periodic" '[.forecast.reclaim.data.sweep[] | [.start, .used, .when, .may_be_skipped]]' \
	'[[318963712,737280,"first sweep (urgent)",false]]'
expect "data=90 periodic" '.forecast.reclaim.data.sweep_bytes' 737280
# with periodic reclaim a free marks nothing (6.11 to 6.18): 788725760 waits for a sweep
expect "data=90 periodic" '.forecast.reclaim.data.on_free' '[]'
expect "data=90 periodic" '.forecast.reclaim.data.above_swept' 1
# the sweep's list replayed through relocation.c: 318963712 relocated, its
# 720 KiB somewhere else, every used byte kept
expect "data=90 periodic" '.forecast.reclaim.after | [.list, .skipped, .relocated, .moved_bytes]' \
	'[[318963712],[],[318963712],737280]'
expect "data=90 periodic" '[.forecast.reclaim.after.block_groups_after[] | select(.start == 318963712)]' '[]'
expect "data=90 periodic" '[.forecast.reclaim.after.block_groups_after[] | select(.type == "DATA") | .used] | add' \
	"$((737280 + 209715200))"
expect "data=90 periodic" '.forecast.reclaim.data.knobs_from' '"what-if options"'
expect "data=90 periodic" '.forecast.reclaim.metadata.knobs_from' '"kernel defaults"'
expect "data=90 periodic" '.forecast.reclaim.metadata.threshold_pct' 0

# without the sweep, the block group already below is never marked
reclaim --reclaim-threshold data=90 "$@"
expect "data=90" '.forecast.reclaim.data.sweep' '[]'
expect "data=90" '.forecast.reclaim.data.below_unswept' 1
expect "data=90" '[.forecast.reclaim.data.on_free[] | [.start, .free_to_mark]]' '[[788725760,13421774]]'
expect "data=90" '.forecast.reclaim.after' null

# --reclaim-marked: on the kernel's list, checked again when reached:
# 788725760 (200 MiB, not below 90 %) is left, 318963712 relocated
reclaim --reclaim-threshold data=90 --reclaim-marked 788725760,318963712 "$@"
expect "marked" '.forecast.reclaim.after | [.list, .skipped, .relocated]' \
	'[[318963712,788725760],[788725760],[318963712]]'
# a block group marked twice is on the list once (list_empty() before list_add_tail());
# equal used keep the order they were added: the sort is stable
reclaim --reclaim-threshold data=90 --reclaim-marked 788725760,318963712,788725760 "$@"
expect "marked twice" '.forecast.reclaim.after.list' '[318963712,788725760]'

# --full-at-mount: the named block group has no size class (full at the
# mount, freed since).  Without it 788725760 is classed by its samples
# (large extents) and the relocated small extents go, at
# LOOP_UNSET_SIZE_CLASS, into the empty 1124270080; named, 788725760 has no
# class either and comes first in the list: they go there.
cp "$TEST_TMP/fc.json" "$TEST_TMP/fc-marked.json"
reclaim --reclaim-threshold data=90 --reclaim-marked 788725760,318963712 \
	--full-at-mount 788725760 "$@"
expect "full at mount" '.forecast.reclaim.after | [.list, .skipped, .relocated]' \
	'[[318963712,788725760],[788725760],[318963712]]'
expect "full at mount" '[.forecast.reclaim.after.block_groups_after[] | select(.type == "DATA") | [.start, .used]]' \
	"$(jq -c '[.forecast.reclaim.after.block_groups_after[] | select(.type == "DATA") | .used] as $u
		| [[788725760, $u[0] + $u[1]], [1124270080, 0]]' "$TEST_TMP/fc-marked.json")"
expect "full at mount, moved" '.forecast.reclaim.after.moved_bytes' \
	"$(jq -c '.forecast.reclaim.after.moved_bytes' "$TEST_TMP/fc-marked.json")"

# kernel defaults: off everywhere, and said plainly; is_reclaim_urgent()
# matters only to a sweep: the text says nothing of it without one (96 MiB
# unallocated here is below the chunk: the JSON keeps urgent true)
reclaim "$@"
expect "defaults" '[.forecast.reclaim[] | .threshold_pct] | add' 0
expect "defaults" '[.forecast.reclaim[] | (.sweep + .on_free) | length] | add' 0
expect "defaults" '[.forecast.reclaim[] | .outlook] | unique' '["off: the kernel relocates nothing by itself"]'
expect "defaults" '.forecast.reclaim.data.urgent' true
run_check_stdout "$BTRFS_SPACE" forecast "$@" > "$TEST_TMP/fc.txt" || exit
! grep -q "Urgent" "$TEST_TMP/fc.txt" || fail "defaults: the text says urgent with no sweep"
run_check_stdout "$BTRFS_SPACE" forecast --periodic-reclaim data --reclaim-threshold data=90 "$@" \
	> "$TEST_TMP/fc.txt" || exit
grep -q "Urgent (unallocated < chunk size): yes" "$TEST_TMP/fc.txt" || fail "periodic: the text does not say urgent"

# system is never swept (btrfs_should_periodic_reclaim())
reclaim --reclaim-threshold system=100 --periodic-reclaim system "$@"
expect "system" '.forecast.reclaim.system.sweeps' false
expect "system" '.forecast.reclaim.system.below_unswept' 1

# the rules recomputed from the fixture's own JSON
run_check_stdout "$BTRFS_SPACE" --format json block-groups --list-block-groups "$@" > "$TEST_TMP/bg.json" || exit
run_check_stdout "$BTRFS_SPACE" --format json inspect "$@" > "$TEST_TMP/in.json" || exit
for args in "--dynamic-reclaim data --periodic-reclaim data" \
	    "--dynamic-reclaim data" \
	    "--reclaim-threshold metadata=100 --periodic-reclaim metadata" \
	    "--reclaim-threshold data=51 --reclaim-threshold metadata=99"; do
	# shellcheck disable=SC2086
	reclaim $args "$@"
	python3 - "$args" "$TEST_TMP"/{fc,bg,in}.json <<'PY' || fail "reclaim '$args'"
import json, sys
args = sys.argv[1].split()
rc = json.load(open(sys.argv[2]))["forecast"]["reclaim"]
bgs = json.load(open(sys.argv[3]))["block_groups"]
ins = json.load(open(sys.argv[4]))
sinfo = ins["space_info"]
unalloc = ins["device_totals"]["unallocated"]
total_rw = ins["device_totals"]["size"]
chunk = min(sinfo["data"]["chunk_size"], total_rw * 10 // 100, 1 << 30)
knobs = {}
for i in range(0, len(args), 2):
    opt, val = args[i], args[i + 1]
    if opt == "--reclaim-threshold":
        t, _, p = val.partition("=")
        knobs.setdefault(t, {})["pct"] = int(p)
    else:
        knobs.setdefault(val, {})[opt[2:]] = True
for t, k in knobs.items():
    s = sinfo[t]
    used = sum(s[f] for f in ("bytes_used", "bytes_reserved", "bytes_pinned",
                              "bytes_readonly", "bytes_zone_unusable"))
    pct = k.get("pct", 0)
    r = rc[t]
    mark = pct
    if k.get("dynamic-reclaim"):
        target = 10 * chunk
        unused = s["total_bytes"] - used
        pct = mark = 0 if unused < chunk else max(target - unalloc, 0) * 100 // target
        # marked on free while unused is below a chunk: armed once the rest is freed
        if unused < chunk and not k.get("periodic-reclaim"):
            mark = max(target - unalloc, 0) * 100 // target
            assert r["arm_bytes"] == chunk - unused and r["armed_pct"] == mark, (t, r)
    sweeps = bool(k.get("periodic-reclaim")) and t != "system"
    sweep, on_free = [], []
    for bg in bgs:
        if bg["type_name"].lower() != t or bg["read_only"] or not bg["used"]:
            continue
        thresh = bg["length"] * mark // 100
        if not thresh:
            continue
        if bg["used"] >= thresh:
            if not k.get("periodic-reclaim"):
                on_free.append([bg["start"], bg["used"] - thresh + 1])
        elif sweeps:
            sweep.append([bg["used"], bg["start"]])
    sweep = [s for _, s in sorted(sweep)]
    got = ([b["start"] for b in r["sweep"]], [[b["start"], b["free_to_mark"]] for b in r["on_free"]])
    want = (sweep, on_free)
    assert r["threshold_pct"] == pct, (t, r["threshold_pct"], pct)
    assert got == want, (t, got, want)
    assert r["sweep_bytes"] == sum(b["used"] for b in r["sweep"])
    assert [b["may_be_skipped"] for b in r["sweep"]] == [i > 0 for i in range(len(sweep))]
    print(f"{sys.argv[1]}: {t} threshold {pct} %, sweep {sweep}, on free {on_free}")
PY
done

# no per-space-info reclaim before 5.19; knobs a kernel lacks, bad values: usage errors
reclaim --kernel 5.15 "$@"
expect "5.15" '.forecast.reclaim' null
for bad in "--kernel 6.6 --dynamic-reclaim data" "--kernel 5.15 --reclaim-threshold data=60" \
	   "--reclaim-threshold data=101" "--reclaim-threshold foo=5" \
	   "--reclaim-threshold data" "--periodic-reclaim bogus" \
	   "--reclaim-marked 12345" "--reclaim-marked 318963712," \
	   "--kernel 5.15 --reclaim-marked 318963712" \
	   "--full-at-mount 12345" "--full-at-mount 318963712," "--full-at-mount ,"; do
	# shellcheck disable=SC2086
	run_mustfail_code 2 "bad reclaim option '$bad'" "$BTRFS_SPACE" forecast $bad "$@"
done
