#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Mutants of the items of a quota tree leaf (single-device crc32c image).

usage: quota-mutants.py IMAGE CHUNKS_JSON BYTENR MUTATION OUT

As tree-mutants.py (whose chunk lookup and checksum it uses), but the leaf
at BYTENR is taken apart into its items, one item changed, added or
removed, and the leaf built again (item data packed from the end, so the
tree checker's layout rules still hold): what reaches the quota reader is
the item, not a broken leaf.  Mutations (btrfs_read_qgroup_config() of
Linux 6.18 says what the kernel does with each):

  status-version     status version 2 ("old qgroup version, quota disabled")
  status-generation  status generation - 1 ("qgroup generation mismatch,
                     marked as inconsistent")
  status-off         status flags 0 (quotas off)
  status-short       status item of 16 bytes, without its flags (the kernel
                     reads past it)
  status-empty       status item of 0 bytes
  status-missing     no status item (quotas off: the flags stay 0)
  info-short         the first limited qgroup's info item of 24 bytes (no excl)
  info-missing       the first limited qgroup without its info item
                     ("inconsistent qgroup config")
  limit-short        the first limit item with a flag of 16 bytes (no max_excl)
  rfer-over-limit    the first limited qgroup counts twice its limit
  rfer-max           its rfer and excl 2^64 - 1
  limit-max          its max_rfer and max_excl 2^64 - 1
  limit-zero         its max_rfer and max_excl 0
  limit-flags-all    its limit flags 2^64 - 1
"""
import importlib.util
import os
import struct
import sys

HEADER = 101
ITEM = 25
STATUS, INFO, LIMIT = 240, 242, 244


def load(name, file):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), file)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tree_mutants = load("tree_mutants", "tree-mutants.py")


def items_of(block):
    nritems, = struct.unpack_from("<I", block, 96)
    out = []
    for i in range(nritems):
        key = bytes(block[HEADER + ITEM * i:HEADER + ITEM * i + 17])
        off, size = struct.unpack_from("<II", block, HEADER + ITEM * i + 17)
        out.append([key, bytearray(block[HEADER + off:HEADER + off + size])])
    return out


def build(block, items, nodesize):
    struct.pack_into("<I", block, 96, len(items))
    block[HEADER:] = bytes(nodesize - HEADER)
    end = nodesize - HEADER
    for i, (key, data) in enumerate(items):
        end -= len(data)
        block[HEADER + ITEM * i:HEADER + ITEM * i + 17] = key
        struct.pack_into("<II", block, HEADER + ITEM * i + 17, end, len(data))
        block[HEADER + end:HEADER + end + len(data)] = data


def key_type(item):
    return item[0][8]


def key_offset(item):
    return struct.unpack_from("<Q", item[0], 9)[0]


def first(items, ktype, cond=lambda it: True):
    for i, it in enumerate(items):
        if key_type(it) == ktype and cond(it):
            return i
    sys.exit("quota-mutants.py: no such item in this leaf")


def limited(it):
    return struct.unpack_from("<Q", it[1], 0)[0] & 3 != 0


def mutate(items, what):
    st = lambda: items[first(items, STATUS)][1]
    lim = first(items, LIMIT, limited)
    qgroup = key_offset(items[lim])
    info = lambda: first(items, INFO, lambda it: key_offset(it) == qgroup)
    if what == "status-version":
        struct.pack_into("<Q", st(), 0, 2)
    elif what == "status-generation":
        gen, = struct.unpack_from("<Q", st(), 8)
        struct.pack_into("<Q", st(), 8, gen - 1)
    elif what == "status-off":
        struct.pack_into("<Q", st(), 16, 0)
    elif what == "status-short":
        del st()[16:]
    elif what == "status-empty":
        del st()[:]
    elif what == "status-missing":
        del items[first(items, STATUS)]
    elif what == "info-short":
        del items[info()][1][24:]
    elif what == "info-missing":
        del items[info()]
    elif what == "limit-short":
        del items[lim][1][16:]
    elif what == "rfer-over-limit":
        rfer = max(struct.unpack_from("<QQ", items[lim][1], 8))
        struct.pack_into("<Q", items[info()][1], 8, 2 * rfer)
        struct.pack_into("<Q", items[info()][1], 24, 2 * rfer)
    elif what == "rfer-max":
        struct.pack_into("<Q", items[info()][1], 8, 2**64 - 1)
        struct.pack_into("<Q", items[info()][1], 24, 2**64 - 1)
    elif what == "limit-max":
        struct.pack_into("<QQ", items[lim][1], 8, 2**64 - 1, 2**64 - 1)
    elif what == "limit-zero":
        struct.pack_into("<QQ", items[lim][1], 8, 0, 0)
    elif what == "limit-flags-all":
        struct.pack_into("<Q", items[lim][1], 0, 2**64 - 1)
    else:
        sys.exit("quota-mutants.py: unknown mutation " + what)


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    image, chunks_json, bytenr, what, out = sys.argv[1:]
    block, places = tree_mutants.read_block(image, chunks_json, int(bytenr),
                                            "quota-mutants.py")
    if block[100] != 0 or struct.unpack_from("<Q", block, 88)[0] != 8:
        sys.exit("quota-mutants.py: %s is not a leaf of the quota tree" % bytenr)
    items = items_of(block)
    mutate(items, what)
    build(block, items, len(block))
    tree_mutants.write_block(out, block, places)


if __name__ == "__main__":
    main()
