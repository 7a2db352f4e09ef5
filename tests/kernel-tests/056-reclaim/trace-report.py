#!/usr/bin/env python3
# trace-report.py WHAT EVENTS [MARKED]: one round's tracepoints (one
# filesystem's lines of the private instance): the block groups marked for
# reclaim (btrfs_add_reclaim_block_group), put on and passed over on the
# unused list, relocated (btrfs_reclaim_block_group), each data extent of
# 1 MiB or more reserved (block group, its size class then, the
# find_free_extent() loop) and, per data block group, the loops in which
# find_free_extent() reached it.  MARKED: the block group the round's free
# must have marked and the cleaner relocated (exit 1 otherwise).
import re
import sys

what, path = sys.argv[1], sys.argv[2]
marked = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else None
ev = {"add_reclaim": [], "reclaim": [], "add_unused": [], "skip_unused": []}
reserved = []
reached = {}
for line in open(path):
    m = re.search(r"btrfs_(add_reclaim|reclaim|add_unused|skip_unused)_block_group: \S+ bg bytenr=(\d+)", line)
    if m:
        ev[m.group(1)].append(int(m.group(2)))
        continue
    m = re.search(r"btrfs_reserve_extent: .* block_group=(\d+) .*bg_size_class=(\d+) start=(\d+) len=(\d+) loop=(\d+)", line)
    if m and int(m.group(4)) >= 1 << 20:
        reserved.append(tuple(int(x) for x in m.groups()))
        continue
    m = re.search(r"find_free_extent_have_block_group: .* len=(\d+) .*loop=(\d+) .*block_group=(\d+)", line)
    if m and int(m.group(1)) >= 1 << 20:
        reached.setdefault(int(m.group(3)), set()).add(int(m.group(2)))
print("%s: traced: marked %s, on the unused list %s, passed over there %s, relocated %s" %
      (what, ev["add_reclaim"], ev["add_unused"], sorted(set(ev["skip_unused"])), ev["reclaim"]))
for bg, cls, start, length, loop in reserved:
    print("%s: traced: data extent %d+%d reserved in %d (size class %d) at loop %d" %
          (what, start, length, bg, cls, loop))
print("%s: traced: loops in which find_free_extent() reached each data block group: %s" %
      (what, {bg: sorted(l) for bg, l in sorted(reached.items())}))
if marked is not None and (marked not in ev["add_reclaim"] or marked not in ev["reclaim"]):
    print("%s: block group %d was not marked at the free and relocated" % (what, marked))
    sys.exit(1)
