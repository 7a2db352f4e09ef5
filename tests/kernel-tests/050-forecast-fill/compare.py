#!/usr/bin/env python3
# compare.py FILL FORECAST.json BEFORE.txt AFTER.txt FILLED: the chunks
# the kernel made during the fill (in the chunk tree dump after, not
# before) must be the forecast's FILL (data_fill or metadata_fill)
# new_chunks exactly (logical, length, type and profile, every stripe's
# devid and offset, in order), and FILLED (the bytes preallocated, or the
# growth of metadata bytes_used) within 0.5 % or 4 MiB of writable_bytes
# (metadata: of writable_bytes to writable_bytes + global_rsv_held).
# The chunks gone after the fill (deleted by the cleaner after the mount)
# must be the forecast's unused_block_groups.
import json
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from common_dump_tree import parse_dump  # noqa: E402


def main():
    kind = sys.argv[1]
    aborted = kind == "metadata_fill_aborted"
    if aborted:
        kind = "metadata_fill"
    # a named workload's fill: within max(0.25 %, 1 MiB) of where it stops
    workload = kind == "metadata_workload"
    if workload:
        kind = "metadata_fill"
    fc = json.load(open(sys.argv[2]))["forecast"]
    before = parse_dump(sys.argv[3])
    after = parse_dump(sys.argv[4])
    filled = int(open(sys.argv[5]).read())
    fill = fc[kind]
    # a chunk is itself by logical, length, type and stripes: one deleted
    # and made again at the same logical with other stripes is both
    made = [after[k] for k in sorted(after) if after[k] != before.get(k)]
    gone = [k for k in sorted(before) if before[k] != after.get(k)]
    want = [{"logical": c["logical"], "length": c["length"], "flags": c["flags"],
             "stripes": [(s["devid"], s["offset"]) for s in c["stripes"]]}
            for c in fill["new_chunks"]]
    deleted = sorted(u["start"] for u in fc.get("unused_block_groups", []))
    # deleted and made again just as it was: the dumps cannot see it
    same = [c for c in want if c["logical"] in deleted and before.get(c["logical"]) == c]
    for c in same:
        print("    deleted and made again as it was (forecast): %d" % c["logical"])
        want.remove(c)
        deleted.remove(c["logical"])
    ok = True
    if gone != deleted:
        print("chunks deleted after the mount: kernel %s, forecast %s" % (sorted(gone), deleted))
        ok = False
    elif deleted:
        print("    deleted by the cleaner after the mount: %d chunks, as forecast: %s"
              % (len(deleted), deleted))
    if made != want:
        print("kernel made %d chunks, forecast %d" % (len(made), len(want)))
        for c in made:
            print("  kernel   %s" % c)
        for c in want:
            print("  forecast %s" % c)
        ok = False
    w = fill["writable_bytes"]
    # at the end of a metadata fill the kernel may take from the global
    # reserve (btrfs_use_block_rsv() falls back to it; an aborted
    # transaction used it up): up to global_rsv_held more is the forecast too
    top = w + fill.get("global_rsv_held", 0) if kind == "metadata_fill" else w
    if workload:
        w = top = fill["workload_writable_bytes"]
        print("    workload %s: its largest transaction %d items, reservation %d, writable_bytes %d"
              % (fill["workload"], fill["workload_items"], fill["last_reservation"],
                 fill["writable_bytes"]))
        d = abs(filled - w)
        print("    metadata_fill: chunks %d made, %d forecast; written %d, workload_writable_bytes %d, off by %d (%.3f %%)"
              % (len(made), len(want), filled, w, d, 100.0 * d / max(w, 1)))
        if d > max(w * 0.0025, 1 << 20):
            print("written %d is not within 0.25 %% or 1 MiB of %d" % (filled, w))
            ok = False
        sys.exit(0 if ok else 1)
    if aborted:
        print("    (the kernel aborted the last transaction: forced read-only)")
    diff = 0 if w <= filled <= top else min(abs(filled - w), abs(filled - top))
    print("    %s: chunks %d made, %d forecast; written %d, writable_bytes %d (+ reserve %d), outside by %d (%.3f %%)"
          % (kind, len(made), len(want), filled, w, top - w, diff, 100.0 * diff / max(w, 1)))
    if diff > max(w * 0.005, 4 << 20):
        print("written %d is not within 0.5 %% or 4 MiB of [%d, %d]" % (filled, w, top))
        ok = False
    sys.exit(0 if ok else 1)


main()
