#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Make one-field mutants of a crc32c btrfs image, checksums fixed.

usage: common-mutate.py IMAGE MUTATION

Each mutation changes exactly one thing a mount checks, and rewrites the
checksum of what it changed (the primary superblock, or every copy of the
chunk-tree leaf), so that the mutant fails only on the rule under test:

  stripesize=N        superblock stripesize
  super-flag=BIT      set bit BIT of the superblock flags
  total-bytes=N       superblock total_bytes
  num-devices=N       superblock num_devices
  sys-stripe-uuid     flip a byte of the first sys_chunk_array stripe's dev_uuid
  dev-item-devid=N    the superblock's dev_item devid (a member claiming
                      another member's devid, with its own device uuid)
  dev-item-fsid       flip a byte of the fsid of the chunk tree's first DEV_ITEM
  bg-length=N         the key offset (length) of the first BLOCK_GROUP_ITEM in
                      the extent tree's leaf (a length its chunk does not have)
  replace-state=N     replace_state of the dev tree's DEV_REPLACE item (1:
                      STARTED, as if a replace had stopped half-way)
  replace-src=DEVID   src_devid of the dev tree's DEV_REPLACE item
  drop-root-item=ID   remove tree ID's ROOT_ITEM from the root tree's leaf
                      (its data moved up so the leaf stays packed)

Only the primary superblock is rewritten (backup copies stay as they
were: the kernel mounts from the primary). Single-device images whose
chunk root is one leaf, as mkfs.btrfs makes them.
"""
import struct
import sys

SB_OFFSET = 65536
SB_SIZE = 4096
CSUM_SIZE = 32
HEADER_SIZE = 101
ITEM_SIZE = 25
DEV_ITEM_KEY = 216


def crc32c_table():
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


TABLE = crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def set_csum(block):
    """crc32c of everything after the checksum field, little-endian."""
    block[0:CSUM_SIZE] = b"\0" * CSUM_SIZE
    block[0:4] = struct.pack("<I", crc32c(bytes(block[CSUM_SIZE:])))


# superblock field offsets (ctree.h: struct btrfs_super_block)
SB_FLAGS = 0x38
SB_CHUNK_ROOT = 0x58
SB_TOTAL_BYTES = 0x70
SB_NUM_DEVICES = 0x88
SB_NODESIZE = 0x94
SB_STRIPESIZE = 0x9c
SB_SYS_ARRAY_SIZE = 0xa0
SB_CSUM_TYPE = 0xc4
SB_DEV_ITEM = 0xc9
SB_SYS_ARRAY = 0x32b
CHUNK_STRIPES = 48		# offset of the first stripe in a chunk item
STRIPE_DEV_UUID = 16


def read_super(f):
    f.seek(SB_OFFSET)
    sb = bytearray(f.read(SB_SIZE))
    if sb[0x40:0x48] != b"_BHRfS_M":
        sys.exit("not a btrfs image")
    if struct.unpack_from("<H", sb, SB_CSUM_TYPE)[0] != 0:
        sys.exit("only crc32c images are supported")
    return sb


def write_super(f, sb):
    set_csum(sb)
    f.seek(SB_OFFSET)
    f.write(sb)


def sys_array_chunk(sb):
    """(logical, chunk item offset in sb) of the first system chunk."""
    key = SB_SYS_ARRAY
    logical = struct.unpack_from("<Q", sb, key + 9)[0]
    return logical, key + 17


def physical_copies(sb, logical):
    """Physical offsets of every stripe of the sys chunk holding @logical."""
    end = SB_SYS_ARRAY + struct.unpack_from("<I", sb, SB_SYS_ARRAY_SIZE)[0]
    key = SB_SYS_ARRAY
    while key < end:
        start = struct.unpack_from("<Q", sb, key + 9)[0]
        chunk = key + 17
        length = struct.unpack_from("<Q", sb, chunk)[0]
        num_stripes = struct.unpack_from("<H", sb, chunk + 44)[0]
        if start <= logical < start + length:
            return [struct.unpack_from("<Q", sb, chunk + CHUNK_STRIPES + i * 32 + 8)[0]
                    + logical - start for i in range(num_stripes)]
        key = chunk + CHUNK_STRIPES + num_stripes * 32
    sys.exit("no sys_chunk_array chunk maps %d" % logical)


def mutate_chunk_leaf(f, sb, change):
    nodesize = struct.unpack_from("<I", sb, SB_NODESIZE)[0]
    chunk_root = struct.unpack_from("<Q", sb, SB_CHUNK_ROOT)[0]
    copies = physical_copies(sb, chunk_root)
    f.seek(copies[0])
    leaf = bytearray(f.read(nodesize))
    if leaf[HEADER_SIZE - 1] != 0:
        sys.exit("the chunk root is not a leaf")
    change(leaf)
    set_csum(leaf)
    for phys in copies:
        f.seek(phys)
        f.write(leaf)


def flip_dev_item_fsid(leaf):
    nritems = struct.unpack_from("<I", leaf, HEADER_SIZE - 5)[0]
    for slot in range(nritems):
        item = HEADER_SIZE + slot * ITEM_SIZE
        if leaf[item + 8] != DEV_ITEM_KEY:
            continue
        data = HEADER_SIZE + struct.unpack_from("<I", leaf, item + 17)[0]
        # dev item: ... uuid at 66, fsid at 82
        leaf[data + 82] ^= 0xff
        return
    sys.exit("no DEV_ITEM in the chunk root leaf")


CHUNK_ITEM_KEY = 228
ROOT_ITEM_KEY = 132
SB_ROOT = 0x50


def leaf_items(leaf):
    """(slot, objectid, type, offset, data offset, data size) of each item."""
    nritems = struct.unpack_from("<I", leaf, HEADER_SIZE - 5)[0]
    for slot in range(nritems):
        item = HEADER_SIZE + slot * ITEM_SIZE
        objectid, typ, offset, doff, dsize = struct.unpack_from("<QBQII", leaf, item)
        yield slot, objectid, typ, offset, doff, dsize


def chunk_copies(f, sb, logical):
    """Physical offsets of @logical, from the chunk root leaf's chunk items."""
    nodesize = struct.unpack_from("<I", sb, SB_NODESIZE)[0]
    chunk_root = struct.unpack_from("<Q", sb, SB_CHUNK_ROOT)[0]
    f.seek(physical_copies(sb, chunk_root)[0])
    leaf = f.read(nodesize)
    for _, _, typ, start, doff, _ in leaf_items(leaf):
        if typ != CHUNK_ITEM_KEY:
            continue
        chunk = HEADER_SIZE + doff
        length = struct.unpack_from("<Q", leaf, chunk)[0]
        if not start <= logical < start + length:
            continue
        num_stripes = struct.unpack_from("<H", leaf, chunk + 44)[0]
        return [struct.unpack_from("<Q", leaf, chunk + CHUNK_STRIPES + i * 32 + 8)[0]
                + logical - start for i in range(num_stripes)]
    sys.exit("no chunk item maps %d" % logical)


def drop_root_item(f, sb, objectid):
    nodesize = struct.unpack_from("<I", sb, SB_NODESIZE)[0]
    root = struct.unpack_from("<Q", sb, SB_ROOT)[0]
    copies = chunk_copies(f, sb, root)
    f.seek(copies[0])
    leaf = bytearray(f.read(nodesize))
    if leaf[HEADER_SIZE - 1] != 0:
        sys.exit("the tree root is not a leaf")
    items = list(leaf_items(leaf))
    found = [i for i in items if i[1] == objectid and i[2] == ROOT_ITEM_KEY]
    if not found:
        sys.exit("no ROOT_ITEM of tree %d in the root leaf" % objectid)
    slot, _, _, _, doff, dsize = found[0]
    last_off = items[-1][4]
    # the data of the later items lies below: move it up over the hole
    base = HEADER_SIZE
    leaf[base + last_off + dsize:base + doff + dsize] = leaf[base + last_off:base + doff]
    for later in items[slot + 1:]:
        struct.pack_into("<I", leaf, HEADER_SIZE + later[0] * ITEM_SIZE + 17, later[4] + dsize)
    start = HEADER_SIZE + slot * ITEM_SIZE
    end = HEADER_SIZE + len(items) * ITEM_SIZE
    leaf[start:end - ITEM_SIZE] = leaf[start + ITEM_SIZE:end]
    leaf[end - ITEM_SIZE:end] = b"\0" * ITEM_SIZE
    struct.pack_into("<I", leaf, HEADER_SIZE - 5, len(items) - 1)
    set_csum(leaf)
    for phys in copies:
        f.seek(phys)
        f.write(leaf)


BLOCK_GROUP_ITEM_KEY = 192
ROOT_ITEM_BYTENR = 176


def tree_leaf(f, sb, objectid):
    """(leaf, physical copies) of tree @objectid, whose root must be a leaf."""
    nodesize = struct.unpack_from("<I", sb, SB_NODESIZE)[0]
    root = struct.unpack_from("<Q", sb, SB_ROOT)[0]
    f.seek(chunk_copies(f, sb, root)[0])
    leaf = f.read(nodesize)
    for _, oid, typ, _, doff, _ in leaf_items(leaf):
        if oid == objectid and typ == ROOT_ITEM_KEY:
            bytenr = struct.unpack_from("<Q", leaf, HEADER_SIZE + doff + ROOT_ITEM_BYTENR)[0]
            copies = chunk_copies(f, sb, bytenr)
            f.seek(copies[0])
            tree = bytearray(f.read(nodesize))
            if tree[HEADER_SIZE - 1] != 0:
                sys.exit("the root of tree %d is not a leaf" % objectid)
            return tree, copies
    sys.exit("no ROOT_ITEM of tree %d" % objectid)


def set_bg_length(f, sb, length):
    leaf, copies = tree_leaf(f, sb, 2)
    for slot, _, typ, _, _, _ in leaf_items(leaf):
        if typ == BLOCK_GROUP_ITEM_KEY:
            struct.pack_into("<Q", leaf, HEADER_SIZE + slot * ITEM_SIZE + 9, length)
            break
    else:
        sys.exit("no BLOCK_GROUP_ITEM in the extent tree's leaf")
    set_csum(leaf)
    for phys in copies:
        f.seek(phys)
        f.write(leaf)


DEV_REPLACE_KEY = 250
REPLACE_STATE = 32


def set_replace_field(f, sb, field, value):
    leaf, copies = tree_leaf(f, sb, 4)
    for _, _, typ, _, doff, _ in leaf_items(leaf):
        if typ == DEV_REPLACE_KEY:
            struct.pack_into("<Q", leaf, HEADER_SIZE + doff + field, value)
            break
    else:
        sys.exit("no DEV_REPLACE item in the dev tree's leaf")
    set_csum(leaf)
    for phys in copies:
        f.seek(phys)
        f.write(leaf)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, mutation = sys.argv[1], sys.argv[2]
    name, _, value = mutation.partition("=")
    with open(path, "r+b") as f:
        sb = read_super(f)
        if name == "stripesize":
            struct.pack_into("<I", sb, SB_STRIPESIZE, int(value))
        elif name == "super-flag":
            flags = struct.unpack_from("<Q", sb, SB_FLAGS)[0]
            struct.pack_into("<Q", sb, SB_FLAGS, flags | (1 << int(value)))
        elif name == "total-bytes":
            struct.pack_into("<Q", sb, SB_TOTAL_BYTES, int(value))
        elif name == "num-devices":
            struct.pack_into("<Q", sb, SB_NUM_DEVICES, int(value))
        elif name == "dev-item-devid":
            struct.pack_into("<Q", sb, SB_DEV_ITEM, int(value))
        elif name == "sys-stripe-uuid":
            _, chunk = sys_array_chunk(sb)
            sb[chunk + CHUNK_STRIPES + STRIPE_DEV_UUID] ^= 0xff
        elif name == "bg-length":
            set_bg_length(f, sb, int(value))
            return
        elif name == "replace-state":
            set_replace_field(f, sb, REPLACE_STATE, int(value))
            return
        elif name == "replace-src":
            set_replace_field(f, sb, 0, int(value))
            return
        elif name == "drop-root-item":
            drop_root_item(f, sb, int(value))
            return
        elif name == "dev-item-fsid":
            mutate_chunk_leaf(f, sb, flip_dev_item_fsid)
            return
        else:
            sys.exit("unknown mutation: " + mutation)
        write_super(f, sb)


if __name__ == "__main__":
    main()
