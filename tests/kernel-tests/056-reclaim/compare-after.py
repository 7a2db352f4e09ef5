#!/usr/bin/env python3
# compare-after.py AFTER.json BG.json USAGE RELOCATED: forecast's reclaim
# after-state (the offline forecast of the image, the kernel's reclaim list
# replayed through relocation.c) against the kernel's: the block groups
# relocated (RELOCATED, from the kernel log), the block groups after
# (start, length, used) from btrfs-space block-groups of the mount, and
# unallocated per device from `btrfs device usage -b`.  Prints every figure.
import json
import re
import sys

fc = json.load(open(sys.argv[1]))["forecast"]
after = fc["reclaim"]["after"]
kbgs = json.load(open(sys.argv[2]))["block_groups"]
kunalloc = {}
devid = None
for line in open(sys.argv[3]):
    m = re.search(r"ID: (\d+)", line)
    if m:
        devid = m.group(1)
    m = re.match(r"\s*Unallocated:\s+(\d+)", line)
    if m and devid:
        kunalloc[devid] = int(m.group(1))
krel = [int(x) for x in sys.argv[4].split()]

ok = True


def check(what, want, got):
    global ok
    print("%s: predicted %s, kernel %s" % (what, want, got))
    if want != got:
        ok = False


print("reclaim list %s, left when checked again %s, unused deleted first %s" %
      (after["list"], after["skipped"], [b["start"] for b in fc["unused_block_groups"]]))
check("relocated", after["relocated"], krel)
check("block groups after (start, length, used)",
      [[b["start"], b["length"], b["used"]] for b in after["block_groups_after"]],
      [[b["start"], b["length"], b["used"]] for b in kbgs])
check("unallocated after", {k: v for k, v in after["unallocated_after"].items()}, kunalloc)
print("extents read %s, exact reason %s" % (after["extents_read"], after["inexact_reason"]))
sys.exit(0 if ok else 1)
