#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Mutants of one tree block of a single-device crc32c btrfs image.

usage: tree-mutants.py IMAGE CHUNKS_JSON BYTENR MUTATION OUT

CHUNKS_JSON is "btrfs-space --format json chunks --list-chunks IMAGE" (the
chunk map, to find every copy of the block: a DUP chunk has two). The
block at logical BYTENR is changed as MUTATION says, its checksum written
anew, and the result written to every copy in OUT (a sparse copy of IMAGE
made by the caller). Mutations, each one rule the kernel checks:

  item-size-past-end   leaf: item 0's size runs past the end of the leaf
                       (tree-checker.c check_leaf(): "slot 0 item data
                       start ... end ... beyond leaf end")
  item-overlap         leaf: item 1's data overlaps item 0's
  nritems-huge         nritems far beyond what fits (leaf or node)
  self-pointer         node: pointer 0 is the node itself (a loop)
  ancestor-pointer=A   node: pointer 0 is block A (an ancestor: a loop)
  child-level          header level + 1 (the parent's pointer expects one less:
                       read_extent_buffer()'s "level verify failed")
  generation           header generation - 1 (the parent's pointer or the
                       root item says another: "parent transid verify failed")
  ptr-generation       node: pointer 0's generation + 1000 (a child from the
                       future: transid mismatch on the child)
  owner                header owner set to 2 (the extent tree)
  item-field=S,O,W,V   leaf: the W bytes (1, 2, 4 or 8) at offset O of item
                       S's data set to V (little endian; V decimal or 0x..):
                       a count, an id, an offset no tree-checker rule reads
                       (backref-mutants.sh: the sharedness walk's inputs)
"""
import importlib.util
import json
import os
import struct
import sys

HEADER = 101
ITEM = 25
KEY_PTR = 33


def load_common_mutate():
    """tests/common-mutate.py, for its crc32c (a file name with a dash)"""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common-mutate.py")
    spec = importlib.util.spec_from_file_location("common_mutate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


crc32c = load_common_mutate().crc32c


def copies(chunks, logical):
    for c in chunks:
        if c["logical"] <= logical < c["logical"] + c["length"]:
            if c["profile"] not in ("single", "dup"):
                sys.exit("tree-mutants.py: only single and DUP chunks")
            return [s["offset"] + logical - c["logical"] for s in c["stripes"]]
    sys.exit("tree-mutants.py: %d is in no chunk" % logical)


def mutate(block, what, nodesize):
    nritems, = struct.unpack_from("<I", block, 96)
    level = block[100]
    name, _, arg = what.partition("=")
    if name == "item-size-past-end":
        need(level == 0, what)
        off, size = struct.unpack_from("<II", block, HEADER + 17)
        struct.pack_into("<I", block, HEADER + 21, nodesize - HEADER - off + 1)
    elif name == "item-overlap":
        need(level == 0 and nritems >= 2, what)
        off0, = struct.unpack_from("<I", block, HEADER + 17)
        struct.pack_into("<I", block, HEADER + ITEM + 17, off0 + 1)
    elif name == "nritems-huge":
        struct.pack_into("<I", block, 96, 0x7fffffff)
    elif name in ("self-pointer", "ancestor-pointer", "ptr-generation"):
        need(level > 0 and nritems >= 1, what)
        bytenr, = struct.unpack_from("<Q", block, 48)
        if name == "self-pointer":
            struct.pack_into("<Q", block, HEADER + 17, bytenr)
        elif name == "ancestor-pointer":
            struct.pack_into("<Q", block, HEADER + 17, int(arg))
        else:
            gen, = struct.unpack_from("<Q", block, HEADER + 25)
            struct.pack_into("<Q", block, HEADER + 25, gen + 1000)
    elif name == "child-level":
        block[100] = level + 1
    elif name == "generation":
        gen, = struct.unpack_from("<Q", block, 80)
        struct.pack_into("<Q", block, 80, gen - 1)
    elif name == "owner":
        struct.pack_into("<Q", block, 88, 2)
    elif name == "item-field":
        slot, field, width, value = (int(v, 0) for v in arg.split(","))
        need(level == 0 and slot < nritems and width in (1, 2, 4, 8), what)
        off, size = struct.unpack_from("<II", block, HEADER + slot * ITEM + 17)
        need(field + width <= size, what)
        fmt = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}[width]
        struct.pack_into(fmt, block, HEADER + off + field, value)
    else:
        sys.exit("tree-mutants.py: unknown mutation " + what)


def need(cond, what):
    if not cond:
        sys.exit("tree-mutants.py: %s does not apply to this block" % what)


def read_block(image, chunks_json, bytenr, me="tree-mutants.py"):
    """The tree block at logical BYTENR of a crc32c IMAGE and the image
    offsets of its copies (CHUNKS_JSON: chunks --list-chunks)"""
    with open(chunks_json) as f:
        chunks = json.load(f)["chunks"]
    with open(image, "rb") as f:
        f.seek(65536 + 148)
        nodesize, = struct.unpack("<I", f.read(4))
        f.seek(65536 + 196)
        csum_type, = struct.unpack("<H", f.read(2))
        if csum_type != 0:
            sys.exit("%s: crc32c images only" % me)
        places = copies(chunks, bytenr)
        f.seek(places[0])
        return bytearray(f.read(nodesize)), places


def write_block(out, block, places):
    """BLOCK with its checksum written again, at each of PLACES in OUT"""
    struct.pack_into("<I", block, 0, crc32c(bytes(block[32:])))
    with open(out, "r+b") as f:
        for p in places:
            f.seek(p)
            f.write(block)


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    image, chunks_json, bytenr, what, out = sys.argv[1:]
    block, places = read_block(image, chunks_json, int(bytenr))
    mutate(block, what, len(block))
    write_block(out, block, places)


if __name__ == "__main__":
    main()
