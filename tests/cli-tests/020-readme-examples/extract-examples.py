#!/usr/bin/env python3
# extract-examples.py README OUTDIR
#
# The examples of README: in every ``` block, a line "$ ./btrfs-space ..."
# is a command (a trailing "  # comment" dropped) and the lines under it,
# up to the next "$ " line or the end of the block, are output lines the
# tool must print, in that order; a line "..." only marks what was left
# out. Writes OUTDIR/N.cmd and OUTDIR/N.expect, and prints one line per
# example: "N<TAB>line-in-README<TAB>command".
import os
import re
import sys

readme, outdir = sys.argv[1:3]
examples = []
in_block = False
cur = None
for n, line in enumerate(open(readme).read().split("\n"), 1):
    if line.startswith("```"):
        in_block = not in_block
        cur = None
        continue
    if not in_block:
        continue
    if line.startswith("$ "):
        cur = None
        if line.startswith("$ ./btrfs-space"):
            cmd = re.sub(r"\s+#\s.*$", "", line[2:]).rstrip()
            cur = {"line": n, "cmd": cmd, "expect": []}
            examples.append(cur)
        continue
    if cur is not None and line.strip() != "...":
        cur["expect"].append(line.rstrip())
os.makedirs(outdir, exist_ok=True)
for i, ex in enumerate(examples, 1):
    with open(os.path.join(outdir, "%d.cmd" % i), "w") as f:
        f.write(ex["cmd"] + "\n")
    with open(os.path.join(outdir, "%d.expect" % i), "w") as f:
        f.write("".join(l + "\n" for l in ex["expect"]))
    print("%d\t%d\t%s" % (i, ex["line"], ex["cmd"]))
