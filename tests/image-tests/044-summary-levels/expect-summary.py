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
    """init_alloc_chunk_ctl_policy_regular() (6.0+): the stripe limit is
    taken from chunk_size before the 10 % cap lowers max_chunk_size"""
    max_chunk = min(chunk_size, total_rw * 10 // 100)
    devs_max = prof[3] or ndevs
    if system:
        devs_max = min(devs_max, 16)
    return max_chunk, min(chunk_size, GiB), devs_max


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


def profile_of(bits):
    for p in PROFILES:
        if p[1] and bits & p[1]:
            return p
    return PROFILES[-1]


def dev_extents(exp):
    """each device's allocated ranges: the chunk stripes"""
    ext = {d["devid"]: [] for d in exp["devices"]}
    for c in exp["chunks"]:
        p = profile_of(c["type"])
        n = c["num_stripes"]
        data_stripes = {"raid0": n, "raid10": n // 2, "raid5": n - 1,
                        "raid6": n - 2}.get(p[0], 1)
        for s in c["stripes"]:
            ext.setdefault(s["devid"], []).append((s["offset"], c["length"] // data_stripes))
    return ext


def holes_of(ranges, size):
    """the free ranges from 1 MiB to the device's end, in order"""
    holes, start = [], MiB
    for off, length in sorted(ranges):
        if off > start:
            holes.append([start, off - start])
        start = max(start, off + length)
    if size > start:
        holes.append([start, size - start])
    return holes


def largest_hole(holes, want):
    """find_free_dev_extent(): the first hole of want bytes, else the
    largest (the first of equal ones); (index, start, length)"""
    best = (-1, MiB, 0)
    for i, (start, length) in enumerate(holes):
        if length >= want:
            return i, start, want
        if length > best[2]:
            best = (i, start, length)
    return best


def heap_order(rooms):
    """lib/sort.c's heapsort (6.18) on (max_avail, total_avail, devid):
    most room first; devices that tie end where this sort leaves them"""
    def cmp(x, y):
        kx, ky = (-x[0], -x[1]), (-y[0], -y[1])
        return (kx > ky) - (kx < ky)
    v = list(rooms)
    n, a, shift = len(v), len(v) // 2, 0
    if not a:
        return v
    while True:
        if a:
            a -= 1 << shift
        elif n > 3:
            n -= 1
            v[0], v[n] = v[n], v[0]
            shift = 1 if cmp(v[1], v[2]) <= 0 else 0
            a = 1 << shift
            n -= 1
            v[a], v[n] = v[n], v[a]
        else:
            break
        b = a
        while True:
            c, d = 2 * b + 1, 2 * b + 2
            if d >= n:
                break
            b = c if cmp(v[c], v[d]) > 0 else d
        if d == n:
            b = c
        while b != a and cmp(v[a], v[b]) >= 0:
            b = (b - 1) // 2
        c = b
        while b != a:
            b = (b - 1) // 2
            v[b], v[c] = v[c], v[b]
    n -= 1
    v[0], v[n] = v[n], v[0]
    if n == 2 and cmp(v[0], v[1]) > 0:
        v[0], v[1] = v[1], v[0]
    return v


def new_chunks(prof, chunk_size, total_rw, devs, ext, system, empty=False):
    """successive btrfs_create_chunk() calls of this type alone; with
    empty, one chunk on the devices as if nothing were allocated"""
    used = {d["devid"]: (0 if empty else d["bytes_used"]) for d in devs}
    size = {d["devid"]: d["size"] for d in devs}
    holes = {k: holes_of([] if empty else ext[k], size[k]) for k in size}
    max_chunk, max_stripe, devs_max = ctl(prof, chunk_size, total_rw, len(devs), system)
    want = max_stripe * prof[5]
    count = total = 0
    while count < 100000:
        rooms = []
        for devid in sorted(size):
            total_avail = max(size[devid] - used[devid], 0)
            if total_avail < (64 << 10) * prof[5]:
                continue
            i, start, avail = largest_hole(holes[devid], want)
            if avail >= (64 << 10) * prof[5]:
                rooms.append((avail, total_avail, devid, i))
        rooms = heap_order(rooms)
        ndevs = len(rooms) - len(rooms) % prof[4]
        if ndevs == 0 or ndevs < prof[2]:
            break
        ndevs = min(ndevs, devs_max)
        csize, stripe = chunk_of(prof, ndevs, rooms[ndevs - 1][0], max_chunk)
        if csize == 0:
            break
        for r in rooms[:ndevs]:
            # the stripes go at the hole's start
            hole = holes[r[2]][r[3]]
            hole[0] += stripe * prof[5]
            hole[1] -= stripe * prof[5]
            used[r[2]] += stripe * prof[5]
        count += 1
        total += csize
        if empty:
            return csize
    return 0 if empty else (count, total)


def headroom_level(h, csize, cap, rsv):
    """section 19.2 on the forecast's figure: critical below
    min(C, max(2R, cap/10)), tight below min(2C, max(4R, cap/5))"""
    if h < min(csize, max(2 * rsv, cap // 10)):
        return "critical"
    if h < min(2 * csize, max(4 * rsv, cap // 5)):
        return "tight"
    return "ok"


def reservation(nodesize, fst):
    """19.2: a 5-item transaction and its delayed refs (twice with the
    free-space tree): nodesize * BTRFS_MAX_LEVEL * 2 per item"""
    one = nodesize * 8 * 2 * 5
    return one + one * (2 if fst else 1)


def main():
    exp = json.load(open(sys.argv[1]))
    got = json.load(open(sys.argv[2]))["summary"]
    name = exp["name"]
    alloc = exp["allocation"]
    left = [d["size"] - d["bytes_used"] for d in exp["devices"]]
    total_rw = sum(d["size"] for d in exp["devices"])
    bad = []
    ext = dev_extents(exp)
    nodesize = exp["superblock"]["nodesize"]
    # the free-space tree: compat_ro bit 0 of the superblock (the tool's read)
    fst = bool(json.load(open(sys.argv[2]))["filesystem"]["compat_ro_flags"] & 1)

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
        csize = new_chunks(prof, si["chunk_size"], total_rw, exp["devices"], ext,
                           t == "system", empty=True)
        n, nbytes = new_chunks(prof, si["chunk_size"], total_rw, exp["devices"], ext,
                               t == "system")
        g = got["space"].get(t, {})
        if t == "system":
            level = "critical" if free < nodesize and n == 0 else "ok"
        else:
            h = g.get("headroom", {})
            hb = h.get("bytes", -1)
            rsv = reservation(nodesize, fst) if t in ("metadata", "mixed") else 0
            if rsv:
                cmp("space.%s.headroom.reservation" % t, rsv, h.get("reservation"))
            cmp("space.%s.headroom.capacity" % t, held + hb, h.get("capacity"))
            cmp("space.%s.headroom.parts" % t, hb,
                h.get("in_block_groups", 0) + h.get("in_new_chunks", 0))
            level = headroom_level(hb, csize, held + hb, rsv)
            cmp("space.%s.headroom.level" % t, level, h.get("level"))
        spaces[t] = (prof, free, csize, n, level)
        cmp("space.%s.profile" % t, prof[0], g.get("profile"))
        cmp("space.%s.free" % t, free, g.get("free"))
        cmp("space.%s.chunk_size" % t, csize, g.get("chunk_size"))
        cmp("space.%s.new_chunks" % t, n, g.get("new_chunks"))
        cmp("space.%s.new_chunk_bytes" % t, nbytes, g.get("new_chunk_bytes"))
        cmp("space.%s.level" % t, level, g.get("level"))
    cmp("space.types", sorted(spaces), sorted(got["space"]))

    meta = spaces.get("metadata") or spaces.get("mixed")
    cmp("unallocated.bytes", sum(left), got["unallocated"]["bytes"])

    # over-commit room (section 8.2, 6.9+): FLUSH_ALL; a figure, no level
    data_cs = alloc["data"]["chunk_size"] if "data" in alloc else alloc["mixed"]["chunk_size"]
    eff = min(data_cs, total_rw * 10 // 100, GiB)
    avail = sum(left) // meta[0][6]
    room = 0 if avail <= eff else (avail - eff) >> 3
    cmp("overcommit.room", room, got["overcommit"]["room"])
    cmp("preempt.flushing", False, got["preempt"]["flushing"])

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

    # findings: every tight or critical line, worst first; the overall level
    # is the first one's
    order = [t for t in ("data", "metadata", "mixed", "system") if t in spaces]
    want = []
    for lv in ("critical", "tight"):
        want += [(lv, t) for t in order if spaces[t][4] == lv]
        if ml == lv:
            want.append((lv, "mount"))
    gotf = [(f["level"], f["what"]) for f in got["findings"]]
    cmp("findings", want, gotf)
    overall = want[0][0] if want else "ok"
    cmp("level", overall, got["level"])
    for line in bad:
        print(line)
    print("levels %s %s mount=%s overall=%s" % (
        name, " ".join("%s=%s" % (t, s[4]) for t, s in sorted(spaces.items())),
        ml, overall))
    return 1 if bad else 0


sys.exit(main())
