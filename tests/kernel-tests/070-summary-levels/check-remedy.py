#!/usr/bin/env python3
# check-remedy.py INSPECT.json INDEX DIR: remedy INDEX of the summary
# against what the kernel did on a copy (test.sh: DIR/unallocated, "devid
# bytes" per device after it; DIR/filled, bytes of a fill after a device
# add, a resize or a replace; DIR/kernel.rc of a balance, resize or
# replace).  An advised remedy must do what it predicts: a balance, each
# device's unallocated bytes within 16 MiB of unallocated_after and the
# type's fill after it above its headroom now (near writable_after); a
# conversion, that (and may_differ when not exact) and the fill of the
# converted type after it against writable_after; a device add for a
# type, the fill at least the headroom plus 90 % of the predicted new
# chunk bytes (so too deleting a block group's data; of several devices
# added, the gain within 1 MiB of it); a device add for
# dead space, the device's unallocated bytes within 16 MiB of dead_after
# and the data fill within 5 % of writable_after; a resize or replace, the
# same.
# A remedy shown as not helping is reported with the kernel's outcome.
import json
import sys

doc = json.load(open(sys.argv[1]))["summary"]
r = doc["remedies"][int(sys.argv[2])]
d = sys.argv[3]
MiB = 1 << 20
after = {}
for line in open(d + "/unallocated"):
    devid, b = line.split()
    after[int(devid)] = int(b)
e = r["effect"]


def balance_result(held):
    """Each device's unallocated bytes after the kernel's balance against
    unallocated_after, and its exit; @held: the differences fail"""
    rc = open(d + "/kernel.rc").read().strip()
    now = {x["devid"]: x["unallocated"] for x in doc["unallocated"]["devices"]}
    # not exact (the metadata the kernel holds while it relocates is not on
    # disk): the bytes the new chunks may be placed otherwise are allowed
    for u in e["unallocated_after"]:
        k = after.get(u["devid"], -1)
        md = u.get("may_differ", 0)
        print("        devid %d: unallocated %d now, predicted %d (may differ by %d), kernel %d (balance %s)" % (
            u["devid"], now[u["devid"]], u["bytes"], md, k, rc))
        if held and abs(k - u["bytes"]) > 16 * MiB + md:
            bad.append("devid %d: kernel %d, predicted %d" % (u["devid"], k, u["bytes"]))
    if held and rc != "ok":
        bad.append("the kernel's balance failed")


bad = []
print("    remedy %s: %s (advised %s)" % (r["finding"], r["command"], r["advised"]))
if "convert=" in r["command"]:
    # a conversion: unallocated per device after it within 16 MiB, the
    # kernel's fill of the converted type after it within 5 % (at least
    # 16 MiB) of writable_after, dead space after the fill within 16 MiB
    balance_result(True)
    filled = int(open(d + "/filled").read())
    print("        %s writable: %d now, predicted %d after, kernel filled %d after" % (
        e["type"], e["writable_before"], e["writable_after"], filled))
    if abs(filled - e["writable_after"]) > max(16 * MiB, e["writable_after"] // 20):
        bad.append("the kernel filled %d, predicted %d" % (filled, e["writable_after"]))
    if "dead_after" in e:
        left = {}
        for line in open(d + "/unallocated.filled"):
            devid, b = line.split()
            left[int(devid)] = int(b)
        k = left.get(e["devid"], -1)
        print("        dead devid %d: %d before, predicted %d after, kernel %d after the fill" % (
            e["devid"], e["dead_before"], e["dead_after"], k))
        if abs(k - e["dead_after"]) > 16 * MiB:
            bad.append("dead space left %d, predicted %d" % (k, e["dead_after"]))
elif "size_after" in e:
    # a resize to the device's size, or a replace and that resize: both
    # done, the kernel's fill of the type after it against writable_after
    # (5 %, at least 16 MiB), the dead device's unallocated bytes after
    # the fill within 16 MiB of dead_after
    rc = open(d + "/kernel.rc").read().strip()
    filled = int(open(d + "/filled").read())
    print("        devid %d: %d -> %d bytes (%s); %s writable: %d now, predicted %d after, kernel filled %d" % (
        e["device"], e["size_before"], e["size_after"], rc, e["type"], e["writable_before"],
        e["writable_after"], filled))
    if rc != "ok":
        bad.append("the kernel's resize or replace failed")
    if abs(filled - e["writable_after"]) > max(16 * MiB, e["writable_after"] // 20):
        bad.append("the kernel filled %d, predicted %d" % (filled, e["writable_after"]))
    if "dead_after" in e:
        k = after.get(e["devid"], -1)
        print("        dead devid %d: %d before, predicted %d after, kernel %d after the fill" % (
            e["devid"], e["dead_before"], e["dead_after"], k))
        if abs(k - e["dead_after"]) > 16 * MiB:
            bad.append("dead space left %d, predicted %d" % (k, e["dead_after"]))
elif r["command"].startswith("btrfs balance"):
    # a usage balance: unallocated per device after it, then the kernel's
    # fill of the finding's type after it: advised, the type writes more
    # than its headroom now (and within 5 %, at least 16 MiB, of
    # writable_after); shown as not helping for want of more to write, no
    # more than the headroom now (within 16 MiB)
    balance_result(r["advised"])
    filled = int(open(d + "/filled").read())
    h = doc["space"][r["finding"]]["headroom"]["bytes"]
    wa = e.get("writable_after")
    print("        %s writable: %d now, predicted %s after, kernel filled %d after" % (
        r["finding"], h, wa, filled))
    if r["advised"] and filled < h + MiB:
        bad.append("advised, but the kernel filled %d after it, the headroom was %d" % (filled, h))
    if r["advised"] and wa is not None and abs(filled - wa) > max(16 * MiB, wa // 20):
        bad.append("the kernel filled %d, predicted %d" % (filled, wa))
    if (not r["advised"] and wa is not None and e["room_gained"] >= e["room_needed"]
            and filled > h + 16 * MiB):
        bad.append("shown as not helping, but the kernel filled %d after it, headroom %d" % (filled, h))
elif "block_group" in e:
    # the gain: the kernel's fill after the deletion less its fill before
    # (the case's own metadata fill), against the predicted new chunk bytes
    filled = int(open(d + "/filled").read())
    before = int(open(d + "/metadata.before").read())
    h = doc["space"][r["finding"]]["headroom"]["bytes"]
    print("        delete %d in block group %d: predicted %d new chunk bytes (headroom %d), kernel filled %d, %d before: gained %d" % (
        e["delete_bytes"], e["block_group"], e["new_chunk_bytes"], h, filled, before, filled - before))
    if abs(filled - before - e["new_chunk_bytes"]) > max(MiB, e["new_chunk_bytes"] // 10):
        bad.append("the kernel gained %d, predicted %d" % (filled - before, e["new_chunk_bytes"]))
    if r["advised"] and filled < h + e["new_chunk_bytes"] * 9 // 10:
        bad.append("the kernel filled %d, under headroom + 90 %% of %d" % (filled, e["new_chunk_bytes"]))
    # shown as not enough: the kernel may not have done better than the rule needs
    if not r["advised"] and filled >= h + e["room_needed"] + 16 * MiB:
        bad.append("shown as not enough, but the kernel filled %d" % filled)
elif "devid" in e:
    k = after.get(e["devid"], -1)
    print("        dead devid %d: %d before, predicted %d after, kernel %d after a data fill" % (
        e["devid"], e["dead_before"], e["dead_after"], k))
    if r["advised"] and abs(k - e["dead_after"]) > 16 * MiB:
        bad.append("dead space left %d, predicted %d" % (k, e["dead_after"]))
    if "writable_after" in e:
        filled = int(open(d + "/filled").read())
        print("        data writable: %d now, predicted %d after, kernel filled %d" % (
            e["writable_before"], e["writable_after"], filled))
        if r["advised"] and abs(filled - e["writable_after"]) > max(16 * MiB, e["writable_after"] // 20):
            bad.append("the kernel filled %d, predicted %d" % (filled, e["writable_after"]))
else:
    filled = int(open(d + "/filled").read())
    h = doc["space"][r["finding"]]["headroom"]["bytes"]
    count = e.get("device_count", 1)
    print("        %d device(s) of %d: predicted %d new chunk bytes (headroom %d), kernel filled %d (gained %d)" % (
        count, e["device_size"], e["new_chunk_bytes"], h, filled, filled - h))
    if r["advised"] and filled < h + e["new_chunk_bytes"] * 9 // 10:
        bad.append("the kernel filled %d, under headroom + 90 %% of %d" % (filled, e["new_chunk_bytes"]))
    # several devices: the other devices are full, so the gain is the new
    # chunks' alone (the fill's last 64 KiB aside)
    if r["advised"] and count > 1 and abs(filled - h - e["new_chunk_bytes"]) > MiB:
        bad.append("the kernel gained %d, predicted %d" % (filled - h, e["new_chunk_bytes"]))
for b in bad:
    print("        BROKEN: " + b)
sys.exit(1 if bad else 0)
