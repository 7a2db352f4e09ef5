#!/usr/bin/env python3
# expect-summary.py EXPECTED.json INSPECT.json
#
# The summary levels of Documentation/formulas.md section 19, worked out here
# from the kernel's numbers in a fixture's NAME.expected.json (sysfs
# allocation/, the DEV_ITEMs, the chunk list, the mount's traced reads),
# without the tool's code, and compared with what "inspect --format json"
# printed. One line per difference, "MISMATCH NAME field expected=X got=Y";
# then "levels NAME data=L metadata=L ..." for the caller. Exit 1 on any
# difference.
import json
import sys

MiB = 1 << 20
GiB = 1 << 30

# profile: (bit, devs_min, devs_max (0 = all), devs_increment, dev_stripes,
#           ncopies, nparity), highest allocation preference first (5.4)
PROFILES = [
    ("raid1c4", 1 << 10, 4, 4, 4, 1, 4, 0),
    ("raid6", 1 << 8, 3, 0, 1, 1, 1, 2),
    ("raid1c3", 1 << 9, 3, 3, 3, 1, 3, 0),
    ("raid5", 1 << 7, 2, 0, 1, 1, 1, 1),
    ("raid10", 1 << 6, 2, 0, 2, 1, 2, 0),
    ("raid1", 1 << 4, 2, 2, 2, 1, 2, 0),
    ("dup", 1 << 5, 1, 1, 1, 2, 2, 0),
    ("raid0", 1 << 3, 1, 0, 1, 1, 1, 0),
    ("single", 0, 1, 1, 1, 1, 1, 0),
]
TYPE_BITS = {"data": 1, "system": 2, "metadata": 4, "mixed": 5}
LEVELS = ["ok", "tight", "critical"]


def alloc_profile(exp, bits, ndevs):
    """btrfs_get_alloc_profile(): the type's profiles, reduced to those the
    devices allow, the most redundant first; single when none is left"""
    present = 0
    for c in exp["chunks"]:
        if c["type"] & 7 == bits:
            present |= c["type"] & ~7
    for p in PROFILES[:-1]:
        if present & p[1] and p[2] <= ndevs:
            return p
    return PROFILES[-1]


def ctl(prof, chunk_size, total_rw, ndevs, system):
    max_chunk = min(chunk_size, total_rw * 10 // 100)
    devs_max = prof[3] or ndevs
    if system:
        devs_max = min(devs_max, 16)
    return max_chunk, min(max_chunk, GiB), devs_max


def chunk_of(prof, ndevs, min_avail, max_chunk):
    data_stripes = (ndevs * prof[5] - prof[7]) // prof[6]
    if data_stripes == 0:
        return 0, 0
    stripe = min_avail // prof[5]
    if stripe * data_stripes > max_chunk:
        up = -(-(max_chunk // data_stripes) // (16 * MiB)) * 16 * MiB
        stripe = min(up, stripe)
    stripe = min(stripe, GiB) // (64 << 10) * (64 << 10)
    return stripe * data_stripes, stripe


def full_chunk(prof, chunk_size, total_rw, nr):
    max_chunk, max_stripe, devs_max = ctl(prof, chunk_size, total_rw, nr, False)
    ndevs = min(nr - nr % prof[4], devs_max)
    ndevs = max(ndevs, prof[2])
    return chunk_of(prof, ndevs, max_stripe * prof[5], max_chunk)[0]


def new_chunks(prof, chunk_size, total_rw, left, system):
    left = [max(x - MiB, 0) for x in left]
    max_chunk, max_stripe, devs_max = ctl(prof, chunk_size, total_rw, len(left), system)
    want = max_stripe * prof[5]
    count = total = 0
    while count < 100000:
        rooms = sorted(((min(x, want), x, i) for i, x in enumerate(left)
                        if x >= (64 << 10) * prof[5]), reverse=True)
        ndevs = len(rooms) - len(rooms) % prof[4]
        if ndevs == 0 or ndevs < prof[2]:
            break
        ndevs = min(ndevs, devs_max)
        size, stripe = chunk_of(prof, ndevs, rooms[ndevs - 1][0], max_chunk)
        if size == 0:
            break
        for r in rooms[:ndevs]:
            left[r[2]] -= stripe * prof[5]
        count += 1
        total += size
    return count, total


def main():
    exp = json.load(open(sys.argv[1]))
    got = json.load(open(sys.argv[2]))["summary"]
    name = exp["name"]
    alloc = exp["allocation"]
    left = [d["size"] - d["bytes_used"] for d in exp["devices"]]
    total_rw = sum(d["size"] for d in exp["devices"])
    bad = []

    def cmp(field, e, g):
        if e != g:
            bad.append("MISMATCH %s %s expected=%s got=%s" % (name, field, e, g))

    spaces = {}
    for t, si in alloc.items():
        if not isinstance(si, dict):
            continue
        prof = alloc_profile(exp, TYPE_BITS[t] if t != "mixed" else 5, len(left))
        held = sum(si[k] for k in ("bytes_used", "bytes_reserved", "bytes_pinned",
                                   "bytes_readonly", "bytes_zone_unusable",
                                   "bytes_may_use"))
        free = max(si["total_bytes"] - held, 0)
        csize = full_chunk(prof, si["chunk_size"], total_rw, len(left))
        n, nbytes = new_chunks(prof, si["chunk_size"], total_rw, list(left), t == "system")
        if free < csize and n == 0:
            level = "critical"
        elif free + nbytes < 2 * csize:
            level = "tight"
        else:
            level = "ok"
        spaces[t] = (prof, free, csize, n, level)
        g = got["space"].get(t, {})
        cmp("space.%s.profile" % t, prof[0], g.get("profile"))
        cmp("space.%s.free" % t, free, g.get("free"))
        cmp("space.%s.chunk_size" % t, csize, g.get("chunk_size"))
        cmp("space.%s.new_chunks" % t, n, g.get("new_chunks"))
        cmp("space.%s.new_chunk_bytes" % t, nbytes, g.get("new_chunk_bytes"))
        cmp("space.%s.level" % t, level, g.get("level"))
    cmp("space.types", sorted(spaces), sorted(got["space"]))

    meta = spaces.get("metadata") or spaces.get("mixed")
    data = spaces.get("data")
    if meta[3] == 0:
        unalloc = "critical"
    elif meta[3] < 2 or (data and data[3] == 0):
        unalloc = "tight"
    else:
        unalloc = "ok"
    cmp("unallocated.bytes", sum(left), got["unallocated"]["bytes"])
    cmp("unallocated.level", unalloc, got["unallocated"]["level"])

    # over-commit room (section 8.2, 6.9+): FLUSH_ALL
    data_cs = alloc["data"]["chunk_size"] if "data" in alloc else alloc["mixed"]["chunk_size"]
    eff = min(data_cs, total_rw * 10 // 100, GiB)
    avail = sum(left) // meta[0][6]
    room = 0 if avail <= eff else (avail - eff) >> 3
    if room == 0 and meta[1] < meta[2]:
        oc = "critical"
    elif room == 0:
        oc = "tight"
    else:
        oc = "ok"
    cmp("overcommit.room", room, got["overcommit"]["room"])
    cmp("overcommit.level", oc, got["overcommit"]["level"])

    # preemptive flushing right after mount: never flushing (G is all of
    # bytes_may_use); plain full when used + reserved + G >= 90 % of total
    msi = alloc.get("metadata") or alloc.get("mixed")
    full = msi["bytes_used"] + msi["bytes_reserved"] + alloc["global_rsv_reserved"] \
        >= msi["total_bytes"] * 90 // 100
    cmp("preempt.flushing", False, got["preempt"]["flushing"])
    cmp("preempt.level", "tight" if full else "ok", got["preempt"]["level"])

    # mount time: the kernel's traced reads at the hdd and ssd latencies
    reads = exp["mount_reads"]["reads"]
    hdd = 0.011 + reads * (0.008 + 0.00009)
    ssd = 0.011 + reads * (0.0002 + 0.00009)
    cmp("mount.reads", reads, got["mount"]["reads"])
    for k, v in (("hdd_seconds", hdd), ("ssd_seconds", ssd)):
        if abs(got["mount"][k] - v) > 1e-6:
            cmp("mount." + k, "%.6f" % v, "%.6f" % got["mount"][k])
    ml = "critical" if hdd >= 90 else "tight" if hdd >= 10 else "ok"
    cmp("mount.level", ml, got["mount"]["level"])

    overall = max([LEVELS.index(s[4]) for s in spaces.values()] +
                  [LEVELS.index(x) for x in (unalloc, oc, ml)] +
                  [1 if full else 0])
    cmp("level", LEVELS[overall], got["level"])
    for line in bad:
        print(line)
    print("levels %s %s unallocated=%s overcommit=%s mount=%s overall=%s" % (
        name, " ".join("%s=%s" % (t, s[4]) for t, s in sorted(spaces.items())),
        unalloc, oc, ml, LEVELS[overall]))
    return 1 if bad else 0


sys.exit(main())
