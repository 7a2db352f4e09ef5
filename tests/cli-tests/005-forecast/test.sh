#!/bin/bash
# forecast on fixtures, without a kernel (kernel test 050 holds the chunks
# and bytes to the kernel's):
# - JSON keys as issue 14 lists them; writable_bytes is free_existing plus
#   the new chunks' usable bytes (formulas.md section 21.4); new chunks
#   start at the end of the chunk map, one after another, and each stripe
#   lies on its device from the first MiB on, clear of every dev extent of
#   the chunk map and of the other new stripes;
# - --fail-below: exit 3 with one line naming the type and the limit when
#   a limit is not met, 0 when it is; bad values exit 2;
# - --kernel 5.15 and --data-profile what-ifs run; inspect carries the same
#   forecast object and a headroom line per type;
# - runs (formulas.md section 21.11): the runs of the default output,
#   expanded, are the chunks --list-chunks lists; on pools of 16 sparse
#   devices of 64 GiB and 15 TiB (raid1, mkfs.btrfs) the fill reaches
#   ENOSPC (no bound, nothing soft, less than a chunk hard per device) and
#   the forecast's text is no more than twice as long at 15 TiB as at 64 GiB.

source "$TEST_TOP/common" || exit
check_prereq btrfs-space
check_prereq jq python3 tar

tar -xSJf "$TEST_TOP/fixtures/ns16k-1g.tar.xz" -C "$TEST_TMP" || fail "cannot unpack ns16k-1g"
img=$TEST_TMP/ns16k-1g.img
# read only: the run's unpacked fixture (tests/common fixture_images)
r10=$(fixture_images raid10-4dev "$TEST_TMP") || exit

check_forecast()
{
	local name=$1
	shift
	run_check_stdout "$BTRFS_SPACE" --format json forecast --list-chunks "$@" > "$TEST_TMP/$name.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json forecast "$@" > "$TEST_TMP/$name.runs.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json chunks --list-chunks "$@" > "$TEST_TMP/$name.chunks.json" || exit
	run_check_stdout "$BTRFS_SPACE" --format json inspect "$@" > "$TEST_TMP/$name.inspect.json" || exit
	python3 - "$TEST_TMP/$name.json" "$TEST_TMP/$name.chunks.json" "$TEST_TMP/$name.inspect.json" \
		"$TEST_TMP/$name.runs.json" <<'PY' || fail "$name: forecast invariants"
import json, sys
fc = json.load(open(sys.argv[1]))["forecast"]
chunks = json.load(open(sys.argv[2]))["chunks"]
insp = json.load(open(sys.argv[3]))
runs = json.load(open(sys.argv[4]))["forecast"]
bad = []
for k in ("kernel", "data_fill", "metadata_fill"):
    if k not in fc:
        bad.append("no forecast.%s" % k)
if insp.get("forecast") != runs:
    bad.append("inspect's forecast object differs from forecast's")
RUN_KEYS = ("count", "period", "logical_step", "device_steps", "pattern", "last")

def expand(run):
    # formulas.md 21.11: chunk i is pattern[i % period] moved i // period periods on
    if run["count"] == 1:
        return [{k: v for k, v in run.items() if k not in RUN_KEYS}]
    out = []
    for i in range(run["count"]):
        c = dict(run["pattern"][i % run["period"]])
        r = i // run["period"]
        c["logical"] += r * run["logical_step"]
        c["stripes"] = [{"devid": s["devid"],
                         "offset": s["offset"] + r * run["device_steps"][str(s["devid"])]}
                        for s in c["stripes"]]
        out.append(c)
    if out[-1] != run["last"]:
        bad.append("run at %d: last %s, expanded %s" % (run["logical"], run["last"], out[-1]))
    return out

for name in ("data_fill", "metadata_fill"):
    listed = fc.get(name, {}).get("new_chunks", [])
    expanded = [c for r in runs.get(name, {}).get("new_chunks", []) for c in expand(r)]
    if expanded != listed:
        bad.append("%s: runs expanded (%d chunks) differ from --list-chunks (%d)"
                   % (name, len(expanded), len(listed)))
    if runs.get(name, {}).get("nr_new_chunks") != len(listed):
        bad.append("%s: nr_new_chunks %s, %d listed" % (name, runs.get(name, {}).get("nr_new_chunks"), len(listed)))
ranges = {}
for c in chunks:
    for s in c["stripes"]:
        ranges.setdefault(s["devid"], []).append((s["offset"], s["offset"] + c["stripe_size"]))
end = max(c["logical"] + c["length"] for c in chunks)
for name in ("data_fill", "metadata_fill"):
    f = fc.get(name, {})
    for k in ("profile", "writable_bytes", "new_chunks", "unallocatable_hard", "unallocatable_soft"):
        if k not in f:
            bad.append("no %s.%s" % (name, k))
    want = f["free_existing"] + f["new_chunk_bytes"] - f.get("global_rsv_held", 0)
    if f["writable_bytes"] != max(want, 0):
        bad.append("%s: writable_bytes %d, free + new - held %d" % (name, f["writable_bytes"], want))
    nxt = end
    taken = {k: list(v) for k, v in ranges.items()}
    for c in f["new_chunks"]:
        for k in ("logical", "length", "type", "profile", "stripes"):
            if k not in c:
                bad.append("%s: chunk without %s" % (name, k))
        if c["logical"] != nxt:
            bad.append("%s: chunk at %d, not at the end of the last %d" % (name, c["logical"], nxt))
        nxt = c["logical"] + c["length"]
        for s in c["stripes"]:
            lo, hi = s["offset"], s["offset"] + c["stripe_size"]
            if lo < (1 << 20):
                bad.append("%s: stripe in the first MiB: %s" % (name, s))
            for a, b in taken.setdefault(s["devid"], []):
                if lo < b and a < hi:
                    bad.append("%s: stripe %s overlaps [%d, %d)" % (name, s, a, b))
            taken[s["devid"]].append((lo, hi))
    if sorted(f["unallocatable_hard"]) != sorted(str(d) for d in ranges):
        bad.append("%s: unallocatable_hard keys %s" % (name, sorted(f["unallocatable_hard"])))
for t, s in insp["summary"]["space"].items():
    if t != "system" and s.get("headroom", {}).get("level") not in ("ok", "tight", "critical"):
        bad.append("summary.space.%s: no headroom level" % t)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
	echo "$name: forecast invariants hold"
}

check_forecast ns16k-1g "$img"
check_forecast raid10-4dev $r10

# --fail-below: 3 with one line naming what is below which limit
err=$TEST_TMP/err
( run_mustfail_code 3 "data cannot grow by 1 TiB" "$BTRFS_SPACE" forecast --fail-below data=1T "$img" ) \
	> /dev/null 2> "$err" || fail "--fail-below data=1T did not exit 3"
line=$(grep -v '^ *#######' "$err")
[ "$(wc -l <<< "$line")" -eq 1 ] || fail "--fail-below: more than one line: $line"
grep -q '^ERROR: forecast: data can grow by .*, below data=1.00TiB$' <<< "$line" ||
	fail "--fail-below: unexpected message: $line"
echo "fail-below: $line"
( run_mustfail_code 3 "both below" "$BTRFS_SPACE" forecast --fail-below data=1T,metadata=1T "$img" ) \
	> /dev/null 2> "$err" || fail "--fail-below data=1T,metadata=1T did not exit 3"
grep -q 'below data=1.00TiB; metadata can grow by .*, below metadata=1.00TiB$' "$err" ||
	fail "--fail-below: both limits not named: $(cat "$err")"
run_check "$BTRFS_SPACE" forecast --fail-below data=1M,metadata=1M "$img" > /dev/null
for bad in "" "data" "data=" "data=x" "foo=1M" "data=1M,data=2M" "data=1M,"; do
	run_mustfail_code 2 "bad --fail-below '$bad'" "$BTRFS_SPACE" forecast --fail-below "$bad" "$img" \
		> /dev/null 2>&1
done
run_mustfail_code 2 "bad profile" "$BTRFS_SPACE" forecast --data-profile raid7 "$img" > /dev/null 2>&1
run_mustfail_code 2 "kernel too old" "$BTRFS_SPACE" forecast --kernel 4.19 "$img" > /dev/null 2>&1

# what-ifs run, and a single-device filesystem cannot take a raid1 chunk
run_check "$BTRFS_SPACE" forecast --kernel 5.15 "$img" > /dev/null
n=$(run_check_stdout "$BTRFS_SPACE" --format json forecast --data-profile raid1 "$img" |
	jq '.forecast.data_fill.new_chunks | length') || exit
[ "$n" = 0 ] || fail "--data-profile raid1 on one device: $n new chunks"
n=$(run_check_stdout "$BTRFS_SPACE" --format json forecast --data-profile dup "$img" |
	jq '[.forecast.data_fill.new_chunks[] | select(.profile == "dup")] | length') || exit
[ "$n" -gt 0 ] || fail "--data-profile dup: no dup chunk"
echo "what-ifs: raid1 on one device makes no chunk, dup makes $n"

# --mount-options and --workload: what they name is what the output says
for bad in "" "," "discard=maybe" "ro" "commit=x"; do
	run_mustfail_code 2 "bad --mount-options '$bad'" "$BTRFS_SPACE" forecast \
		--mount-options "$bad" "$img" > /dev/null 2>&1
done
run_mustfail_code 2 "bad --workload" "$BTRFS_SPACE" forecast --workload mkdir "$img" > /dev/null 2>&1
js=$(run_check_stdout "$BTRFS_SPACE" --format json forecast --mount-options nodiscard,commit=5 \
	--workload setxattr "$img") || exit
got=$(jq -r '.forecast | "\(.mount.discard) \(.mount.discard_source) \(.mount.commit_interval) \(.metadata_fill.workload) \(.metadata_fill.workload_items) \(.metadata_fill.writable_bytes - .metadata_fill.last_reservation == .metadata_fill.workload_writable_bytes or .metadata_fill.workload_writable_bytes == 0)"' <<< "$js")
[ "$got" = "nodiscard --mount-options 5 setxattr 2 true" ] || fail "--mount-options/--workload: $got"
got=$(run_check_stdout "$BTRFS_SPACE" --format json forecast "$img" |
	jq -r '.forecast | "\(.mount.discard) \(.metadata_fill.workload) \(.metadata_fill.workload_items)"') || exit
[ "$got" = "async create-xattr 5" ] || fail "defaults: $got"
echo "mount options and workload: $got by default"
# runs on large pools: exact to ENOSPC, output bounded
if ! command -v mkfs.btrfs > /dev/null; then
	echo "mkfs.btrfs not found: the large pools are not checked"
	exit 0
fi
pool()
{
	local name=$1 size=$2 i

	mkdir -p "$TEST_TMP/$name" || fail "cannot create $TEST_TMP/$name"
	for i in $(seq 1 16); do
		truncate -s "$size" "$TEST_TMP/$name/d$i.img" 2> /dev/null || return 1
	done
	run_check mkfs.btrfs -q -f -d raid1 -m raid1 "$TEST_TMP/$name"/d*.img > /dev/null
}
pool p64g 64G || fail "cannot make 16 sparse files of 64 GiB"
if ! pool p15t 15T; then
	echo "no sparse files of 15 TiB in $TEST_TMP: the 240 TiB pool is not checked"
	exit 0
fi
for name in p64g p15t; do
	run_check_stdout "$BTRFS_SPACE" forecast "$TEST_TMP/$name"/d*.img > "$TEST_TMP/$name.txt" || exit
	run_check_stdout "$BTRFS_SPACE" --format json forecast "$TEST_TMP/$name"/d*.img \
		> "$TEST_TMP/$name.json" || exit
	python3 - "$TEST_TMP/$name.json" "$name" <<'PY' || fail "$name: runs to ENOSPC"
import json, sys
fc = json.load(open(sys.argv[1]))["forecast"]
bad = []
for name in ("data_fill", "metadata_fill"):
    f = fc[name]
    if f["truncated"]:
        bad.append("%s: stopped before ENOSPC" % name)
    if any(v != 0 for v in f["unallocatable_soft"].values()):
        bad.append("%s: soft %s" % (name, f["unallocatable_soft"]))
    if any(v >= 1 << 30 for v in f["unallocatable_hard"].values()):
        bad.append("%s: hard %s" % (name, f["unallocatable_hard"]))
    n = sum(r["count"] for r in f["new_chunks"])
    if n != f["nr_new_chunks"] or len(f["new_chunks"]) != f["nr_new_chunk_runs"]:
        bad.append("%s: %d chunks in runs, nr_new_chunks %d" % (name, n, f["nr_new_chunks"]))
    print("%s %s: %d chunks in %d runs, writable %d" % (sys.argv[2], name, n,
          len(f["new_chunks"]), f["writable_bytes"]))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
done
small=$(wc -c < "$TEST_TMP/p64g.txt")
large=$(wc -c < "$TEST_TMP/p15t.txt")
echo "forecast text: $small bytes at 16 x 64 GiB, $large bytes at 16 x 15 TiB"
[ "$large" -le $((2 * small)) ] || fail "forecast text grows with the pool: $small bytes at 64 GiB, $large at 15 TiB"
