#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
The include circles of kernel-shared/ and common/: the strongly connected
components (Tarjan) of the graph of their #include "..." lines, a .c and
its .h counted as one node (a file and its header are one room; a header
without a .c, such as fs.h, is a node of its own).  Prints the components
of more than one node, largest first, and exits 1 when the largest has
more than --max nodes (Documentation/dev/architecture.md, "Include
circles": no larger than the kernel's read path).

usage: include-circles.py [--max N] [TOP]
"""
import os
import re
import sys

DIRS = ('kernel-shared', 'common')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def nodes(top):
    """{relative path: node}, the node being the path without .c/.h"""
    files = {}
    for d in DIRS:
        for dirpath, _, names in os.walk(os.path.join(top, d)):
            for name in names:
                if name.endswith(('.c', '.h')):
                    rel = os.path.relpath(os.path.join(dirpath, name), top)
                    files[rel] = rel[:-2]
    return files


def graph(top, files):
    edges = {node: set() for node in files.values()}
    for rel, node in files.items():
        with open(os.path.join(top, rel), errors='replace') as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            here = os.path.normpath(os.path.join(os.path.dirname(rel), inc))
            for cand in (inc, here):
                if cand in files:
                    if files[cand] != node:
                        edges[node].add(files[cand])
                    break
    return edges


def components(edges):
    """Tarjan's strongly connected components, without recursion"""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def enter(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        return (v, iter(sorted(edges[v])))

    for root in sorted(edges):
        if root in index:
            continue
        work = [enter(root)]
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    work.append(enter(w))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return sorted(out, key=lambda c: (-len(c), c))


def main(argv):
    limit = None
    args = argv[1:]
    if len(args) >= 2 and args[0] == '--max':
        limit = int(args[1])
        args = args[2:]
    top = args[0] if args else '.'
    comps = [c for c in components(graph(top, nodes(top))) if len(c) > 1]
    for comp in comps:
        print('%d: %s' % (len(comp), ' '.join(comp)))
    largest = len(comps[0]) if comps else 1
    print('largest: %d' % largest)
    return 1 if limit is not None and largest > limit else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
