#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A log tree whose level-1 nodes share their leaves (a DAG, not a tree).

usage: log-shared-subtree.py IMAGE CHUNKS_JSON NODES OUT FREE...

IMAGE: a single-device crc32c image whose log root tree is one leaf and
whose first log tree's root is a node of level 1 with at least NODES
pointers (fixture log-replay/scatter-third).  FREE: NODES nodesize blocks
of a metadata chunk that no tree uses.  Written to OUT (a sparse copy of
IMAGE made by the caller): NODES - 1 copies of that node, the i-th without
its first i pointers (each starts with the key of the leaf it points to
first); a node of level 2 pointing to the node and to each copy; the log
tree's root item then names it, level 2.  The leaf of slot i is reached
i + 1 times: walk_log_tree() follows every pointer, and each level built
this way multiplies the walk.
"""
import importlib.util
import json
import os
import struct
import sys

HEADER = 101
ITEM = 25
KEY_PTR = 33
ROOT_ITEM_KEY = 132


def load_common_mutate():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common-mutate.py")
    spec = importlib.util.spec_from_file_location("common_mutate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


crc32c = load_common_mutate().crc32c


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    image, chunks_json, nodes, out = sys.argv[1:5]
    nodes = int(nodes)
    free = [int(x) for x in sys.argv[5:]]
    if nodes < 2 or len(free) != nodes:
        sys.exit("log-shared-subtree.py: NODES >= 2 and NODES free blocks")
    with open(chunks_json) as f:
        chunks = json.load(f)["chunks"]

    def places(logical):
        for c in chunks:
            if c["logical"] <= logical < c["logical"] + c["length"]:
                return [s["offset"] + logical - c["logical"] for s in c["stripes"]]
        sys.exit("log-shared-subtree.py: %d is in no chunk" % logical)

    src = open(image, "rb")
    src.seek(65536 + 148)
    nodesize, = struct.unpack("<I", src.read(4))
    src.seek(65536 + 96)
    log_root, = struct.unpack("<Q", src.read(8))

    def read(logical):
        src.seek(places(logical)[0])
        return bytearray(src.read(nodesize))

    writes = {}
    root_leaf = read(log_root)
    if root_leaf[100] != 0:
        sys.exit("log-shared-subtree.py: the log root tree is not one leaf")
    slot = next(i for i in range(struct.unpack_from("<I", root_leaf, 96)[0])
                if root_leaf[HEADER + i * ITEM + 8] == ROOT_ITEM_KEY)
    item_off, = struct.unpack_from("<I", root_leaf, HEADER + slot * ITEM + 17)
    root_item = HEADER + item_off
    node_bytenr, = struct.unpack_from("<Q", root_leaf, root_item + 176)
    node = read(node_bytenr)
    nritems, = struct.unpack_from("<I", node, 96)
    if node[100] != 1 or nritems < nodes:
        sys.exit("log-shared-subtree.py: the log tree's root is not a node of level 1 with NODES pointers")
    gen, = struct.unpack_from("<Q", node, 80)

    top = bytearray(node)
    struct.pack_into("<Q", top, 48, free[-1])
    struct.pack_into("<I", top, 96, nodes)
    top[100] = 2
    top[HEADER:] = bytes(nodesize - HEADER)
    for i in range(nodes):
        bytenr = node_bytenr
        if i:
            bytenr = free[i - 1]
            tail = bytearray(node)
            struct.pack_into("<Q", tail, 48, bytenr)
            struct.pack_into("<I", tail, 96, nritems - i)
            tail[HEADER:] = bytes(nodesize - HEADER)
            tail[HEADER:HEADER + (nritems - i) * KEY_PTR] = \
                node[HEADER + i * KEY_PTR:HEADER + nritems * KEY_PTR]
            writes[bytenr] = tail
        ptr = HEADER + i * KEY_PTR
        top[ptr:ptr + 17] = node[ptr:ptr + 17]
        struct.pack_into("<QQ", top, ptr + 17, bytenr, gen)
    writes[free[-1]] = top

    struct.pack_into("<Q", root_leaf, root_item + 176, free[-1])
    root_leaf[root_item + 238] = 2
    writes[log_root] = root_leaf

    with open(out, "r+b") as f:
        for logical, block in writes.items():
            struct.pack_into("<I", block, 0, crc32c(bytes(block[32:])))
            for p in places(logical):
                f.seek(p)
                f.write(block)


if __name__ == "__main__":
    main()
