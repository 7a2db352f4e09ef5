#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""gen-bgs.py: write a btrfs filesystem with N data block groups directly.

The kernel's allocator walks every full block group at each new chunk
(find_free_extent()), so filling a filesystem to 100,000 block groups with
fallocate(2) is quadratic: hours on this machine.  This writes the same kind
of filesystem without it: N data chunks of --chunk-size (data single, spread
over the devices in turn, as the kernel's most-free-device order does for
equal devices), each filled by one preallocated extent of file /f (to --fill percent; the
--empty E of them spread evenly have no extent: used 0, the state between a
deletion's commit and the cleaner's pass), one system and one metadata chunk
(DUP on one device, RAID1 on more), and every tree the kernel reads at
mount: superblocks (primary and mirrors inside the device), the
sys_chunk_array, the chunk tree (DEV_ITEMs, CHUNK_ITEMs), the dev tree
(DEV_EXTENTs), the root tree (ROOT_ITEMs, the "default" dir item), the
extent tree (BLOCK_GROUP_ITEMs, EXTENT_ITEMs with inline data refs, skinny
METADATA_ITEMs of every tree block), the free-space tree (an info item per
block group, an extent item per free range), the fs tree (root dir, /f and
its PREALLOC extents), the data reloc tree and an empty csum tree, all of
one generation, with crc32c checksums.  Features: mixed backref, extended
iref, skinny metadata, no holes, free-space tree (what mkfs.btrfs 6.x sets).

  gen-bgs.py --bgs N [--empty E] [--fill PCT] [--fill-min PCT] [--devices K] [--dev-size SIZE, 0: full]
             [--chunk-size SIZE] OUT

writes sparse OUT-1.img ... OUT-K.img (a fresh random fsid each run).  The
format facts come from the kernel's uapi/btrfs_tree.h and the tree checker;
the layout is this script's own.
"""
import argparse
import os
import struct
import sys
import uuid

NODESIZE = 16384
SECTORSIZE = 4096
STRIPE_LEN = 65536
GENERATION = 7
HEADER_SIZE = 101
ITEM_SIZE = 25
KEY_PTR_SIZE = 33
SUPER_OFFSETS = (64 << 10, 64 << 20, 256 << 30, 1 << 50)

# objectids
ROOT_TREE, EXTENT_TREE, CHUNK_TREE, DEV_TREE, FS_TREE = 1, 2, 3, 4, 5
ROOT_TREE_DIR, CSUM_TREE, FREE_SPACE_TREE = 6, 7, 10
DATA_RELOC_TREE = (1 << 64) - 9
DEV_ITEMS, FIRST_CHUNK_TREE, FIRST_FREE = 1, 256, 256
# key types
INODE_ITEM, INODE_REF, DIR_ITEM, DIR_INDEX, EXTENT_DATA = 1, 12, 84, 96, 108
ROOT_ITEM, EXTENT_ITEM, METADATA_ITEM = 132, 168, 169
TREE_BLOCK_REF, EXTENT_DATA_REF, BLOCK_GROUP_ITEM = 176, 178, 192
FREE_SPACE_INFO, FREE_SPACE_EXTENT, DEV_EXTENT, DEV_ITEM, CHUNK_ITEM = \
	198, 199, 204, 216, 228
# block group flags
BG_DATA, BG_SYSTEM, BG_METADATA, BG_RAID1, BG_DUP = 1, 2, 4, 16, 32

# crc32c (Castagnoli, reflected 0x82f63b78), slice by 8
_T = [[0] * 256 for _ in range(8)]
for _i in range(256):
	_c = _i
	for _ in range(8):
		_c = (_c >> 1) ^ (0x82F63B78 if _c & 1 else 0)
	_T[0][_i] = _c
for _i in range(256):
	for _k in range(1, 8):
		_T[_k][_i] = (_T[_k - 1][_i] >> 8) ^ _T[0][_T[_k - 1][_i] & 0xFF]
T0, T1, T2, T3, T4, T5, T6, T7 = _T


def crc32c_raw(crc, data):
	"""The CRC register after data, starting from crc (no inversions)."""
	n = len(data) & ~7
	for (w,) in struct.iter_unpack("<Q", data[:n]):
		w ^= crc
		crc = (T7[w & 0xFF] ^ T6[(w >> 8) & 0xFF] ^ T5[(w >> 16) & 0xFF] ^
		       T4[(w >> 24) & 0xFF] ^ T3[(w >> 32) & 0xFF] ^
		       T2[(w >> 40) & 0xFF] ^ T1[(w >> 48) & 0xFF] ^ T0[w >> 56])
	for b in data[n:]:
		crc = T0[(crc ^ b) & 0xFF] ^ (crc >> 8)
	return crc


def csum(data):
	return struct.pack("<I", crc32c_raw(0xFFFFFFFF, data) ^ 0xFFFFFFFF)


def name_hash(name):
	# btrfs_name_hash(): crc32c seeded with ~1, no final inversion
	return crc32c_raw(0xFFFFFFFE, name)


def key(objectid, typ, offset):
	"""A key as a tuple: tuples sort as the kernel's btrfs_comp_cpu_keys()."""
	return (objectid, typ, offset)


def disk_key(k):
	return struct.pack("<QBQ", *k)


def inode_item(size, nbytes, mode, nlink=1, generation=GENERATION, flags=0):
	# generation transid size nbytes block_group nlink uid gid mode rdev
	# flags sequence reserved[4], then four timespecs
	return (struct.pack("<QQQQQIIIIQQQ32x", generation, GENERATION, size,
			    nbytes, 0, nlink, 0, 0, mode, 0, flags, 0) +
		struct.pack("<QI", 1796500000, 0) * 4)


def inode_ref(index, name):
	return struct.pack("<QH", index, len(name)) + name


def dir_item(location, ftype, name):
	return disk_key(location) + struct.pack("<QHHB", GENERATION, 0, len(name), ftype) + name


def root_item(bytenr, level, nblocks, dirid):
	inode = inode_item(3 if dirid else 0, NODESIZE if dirid else 0,
			   0o40755 if dirid else 0, 1 if dirid else 0,
			   1 if dirid else 0)
	if not dirid:
		inode = bytes(160)
	body = inode + struct.pack("<QQQQQQQI", GENERATION, dirid, bytenr, 0,
				   nblocks * NODESIZE, 0, 0, 1)
	body += bytes(17) + struct.pack("<BB", 0, level)
	body += struct.pack("<Q", GENERATION) + bytes(48) + bytes(32) + bytes(48) + bytes(64)
	assert len(body) == 439
	return body


class Chunk:
	def __init__(self, logical, length, flags, stripes):
		self.logical, self.length, self.flags = logical, length, flags
		self.stripes = stripes		# [(devid, physical)]
		self.used = 0
		self.extent = False		# data: one extent fills it

	def item(self, dev_uuids):
		body = struct.pack("<QQQQIIIHH", self.length, EXTENT_TREE, STRIPE_LEN,
				   self.flags, STRIPE_LEN, STRIPE_LEN, SECTORSIZE,
				   len(self.stripes), 1)
		for devid, phys in self.stripes:
			body += struct.pack("<QQ", devid, phys) + dev_uuids[devid]
		return body


class Layout:
	"""Physical placement: a cursor per device from 1 MiB, never over a
	superblock copy (the kernel excludes those ranges from block groups;
	keeping chunks off them keeps every extent off them)."""

	def __init__(self, ndev, dev_size):
		self.cursor = {d: 1 << 20 for d in range(1, ndev + 1)}
		self.dev_size = dev_size
		self.logical = 1 << 20
		self.chunks = []

	def place(self, devid, length):
		p = self.cursor[devid]
		for s in SUPER_OFFSETS[1:]:
			if p < s + SECTORSIZE and s < p + length:
				p = s + (1 << 20)
		if p + length > self.dev_size:
			sys.exit("gen-bgs: device %d full: larger --dev-size or more --devices" % devid)
		self.cursor[devid] = p + length
		return p

	def add(self, length, flags, devids):
		stripes = [(d, self.place(d, length)) for d in devids]
		c = Chunk(self.logical, length, flags, stripes)
		self.logical += length
		self.chunks.append(c)
		return c


def pack_leaves(items):
	"""Split sorted (key, data) items into leaves, each as full as it fits."""
	leaves, cur, room = [], [], NODESIZE - HEADER_SIZE
	for it in items:
		need = ITEM_SIZE + len(it[1])
		if need > room and cur:
			leaves.append(cur)
			cur, room = [], NODESIZE - HEADER_SIZE
		cur.append(it)
		room -= need
	leaves.append(cur)
	return leaves


def tree_shape(items):
	"""Blocks per level, leaves first, for a tree of these items."""
	leaves = pack_leaves(items)
	levels = [leaves]
	width = len(leaves)
	per_node = (NODESIZE - HEADER_SIZE) // KEY_PTR_SIZE
	while width > 1:
		width = (width + per_node - 1) // per_node
		levels.append(width)
	return levels


def count_blocks(items):
	levels = tree_shape(items)
	return len(levels[0]) + sum(levels[1:])


class Fs:
	def __init__(self, args):
		self.fsid = uuid.uuid4().bytes
		self.chunk_uuid = uuid.uuid4().bytes
		self.ndev = args.devices
		self.dev_size = args.dev_size
		self.dev_uuids = {d: uuid.uuid4().bytes for d in range(1, self.ndev + 1)}
		self.blocks = []		# (logical, bytes)

	def header(self, bytenr, owner, nritems, level):
		return (bytes(32) + self.fsid + struct.pack("<QQ", bytenr, 1 | (1 << 56)) +
			self.chunk_uuid + struct.pack("<QQIB", GENERATION, owner, nritems, level))

	def write_tree(self, items, owner, addrs):
		"""Build the tree of items on blocks addrs (leaves first, root
		last); return (root bytenr, level)."""
		levels = tree_shape(items)
		leaves = levels[0]
		assert len(leaves) + sum(levels[1:]) == len(addrs)
		ai = iter(addrs)
		ptrs = []
		for leaf in leaves:
			bytenr = next(ai)
			head, data, off = [], [], NODESIZE - HEADER_SIZE
			for k, d in leaf:
				off -= len(d)
				head.append(disk_key(k) + struct.pack("<II", off, len(d)))
				data.append(d)
			body = b"".join(head)
			tail = b"".join(reversed(data))
			pad = NODESIZE - HEADER_SIZE - len(body) - len(tail)
			assert pad >= 0
			block = self.header(bytenr, owner, len(leaf), 0) + body + bytes(pad) + tail
			self.blocks.append((bytenr, block))
			ptrs.append((leaf[0][0] if leaf else key(0, 0, 0), bytenr))
		level = 0
		per_node = (NODESIZE - HEADER_SIZE) // KEY_PTR_SIZE
		while len(ptrs) > 1:
			level += 1
			up = []
			for i in range(0, len(ptrs), per_node):
				group = ptrs[i:i + per_node]
				bytenr = next(ai)
				body = b"".join(disk_key(k) + struct.pack("<QQ", b, GENERATION) for k, b in group)
				block = self.header(bytenr, owner, len(group), level) + body
				block += bytes(NODESIZE - len(block))
				self.blocks.append((bytenr, block))
				up.append((group[0][0], bytenr))
			ptrs = up
		return ptrs[0][1], level


def build(args):
	fs = Fs(args)
	lay = Layout(args.devices, args.dev_size)
	n, empty = args.bgs, args.empty
	meta_devs = [1, 2] if args.devices > 1 else [1, 1]
	prof = BG_RAID1 if args.devices > 1 else BG_DUP

	# sizes first: the trees' block counts depend only on item counts
	sys_blocks_est = count_blocks([(key(0, 0, 0), bytes(48 + 32 * 2))] * (n + 3 + args.devices))
	sys_len = max(32 << 20, -(-sys_blocks_est * NODESIZE * 3 // 2 // (32 << 20)) * (32 << 20))
	meta_est = 6 * count_blocks([(key(0, 0, 0), bytes(53))] * (n + 16)) + 64
	meta_len = max(256 << 20, -(-meta_est * NODESIZE * 3 // 2 // (256 << 20)) * (256 << 20))
	sys_chunk = lay.add(sys_len, BG_SYSTEM | prof, meta_devs)
	meta_chunk = lay.add(meta_len, BG_METADATA | prof, meta_devs)
	data = []
	empties = set(int(i * n / empty) for i in range(empty)) if empty else set()
	for i in range(n):
		c = lay.add(args.chunk_size, BG_DATA, [1 + i % args.devices])
		c.extent = i not in empties
		fill = args.fill - (i * 7919 % (args.fill - args.fill_min + 1) if args.fill_min else 0)
		c.used = args.chunk_size * fill // 100 // SECTORSIZE * SECTORSIZE if c.extent else 0
		data.append(c)

	# chunk tree
	dev_used = {d: 0 for d in range(1, args.devices + 1)}
	for c in lay.chunks:
		for d, _ in c.stripes:
			dev_used[d] += c.length
	dev_items = {d: struct.pack("<QQQIIIQQQIBB", d, args.dev_size, dev_used[d],
				    SECTORSIZE, SECTORSIZE, SECTORSIZE, 0, 0, 0, 0, 0, 0) +
		     fs.dev_uuids[d] + fs.fsid for d in dev_used}
	chunk_items = [(key(DEV_ITEMS, DEV_ITEM, d), dev_items[d]) for d in sorted(dev_items)]
	chunk_items += [(key(FIRST_CHUNK_TREE, CHUNK_ITEM, c.logical), c.item(fs.dev_uuids))
			for c in lay.chunks]
	# dev tree
	dev_ext = []
	for c in lay.chunks:
		for d, p in c.stripes:
			dev_ext.append((d, p, struct.pack("<QQQQ", CHUNK_TREE, FIRST_CHUNK_TREE,
							  c.logical, c.length) + fs.chunk_uuid))
	dev_ext.sort()
	dev_items_t = [(key(d, DEV_EXTENT, p), b) for d, p, b in dev_ext]
	# fs tree: / with file f of the data extents
	name = b"f"
	file_items = []
	foff = 0
	for c in data:
		if not c.extent:
			continue
		file_items.append((key(257, EXTENT_DATA, foff),
				   struct.pack("<QQBBHBQQQQ", GENERATION, c.used, 0, 0, 0, 2,
					       c.logical, c.used, 0, c.used)))
		c.file_offset = foff
		foff += c.used
	fs_items = [(key(256, INODE_ITEM, 0), inode_item(2 * len(name), NODESIZE, 0o40755)),
		    (key(256, INODE_REF, 256), inode_ref(0, b"..")),
		    (key(256, DIR_ITEM, name_hash(name)), dir_item(key(257, INODE_ITEM, 0), 1, name)),
		    (key(256, DIR_INDEX, 2), dir_item(key(257, INODE_ITEM, 0), 1, name)),
		    (key(257, INODE_ITEM, 0), inode_item(foff, foff, 0o100600)),
		    (key(257, INODE_REF, 256), inode_ref(2, name))] + file_items
	reloc_items = [(key(256, INODE_ITEM, 0), inode_item(0, 0, 0o40755)),
		       (key(256, INODE_REF, 256), inode_ref(0, b".."))]
	csum_items = []

	def fst_items(meta_used, sys_used):
		items = []
		for c in lay.chunks:
			used = c.used
			if c is meta_chunk:
				used = meta_used
			elif c is sys_chunk:
				used = sys_used
			free = [] if used == c.length else [(c.logical + used, c.length - used)]
			items.append((key(c.logical, FREE_SPACE_INFO, c.length),
				      struct.pack("<II", len(free), 0)))
			items += [(key(s, FREE_SPACE_EXTENT, l), b"") for s, l in free]
		return items

	def root_items(addrs):
		"""addrs: {objectid: (bytenr, level, nblocks)}"""
		items = [(key(FS_TREE, INODE_REF, ROOT_TREE_DIR), inode_ref(0, b"default")),
			 (key(ROOT_TREE_DIR, INODE_ITEM, 0), inode_item(0, NODESIZE, 0o40755, 1, 3)),
			 (key(ROOT_TREE_DIR, INODE_REF, ROOT_TREE_DIR), inode_ref(0, b"..")),
			 (key(ROOT_TREE_DIR, DIR_ITEM, name_hash(b"default")),
			  dir_item(key(FS_TREE, ROOT_ITEM, (1 << 64) - 1), 2, b"default"))]
		for oid, (b, lvl, nb) in addrs.items():
			dirid = 256 if oid in (FS_TREE, DATA_RELOC_TREE) else 0
			items.append((key(oid, ROOT_ITEM, 0), root_item(b, lvl, nb, dirid)))
		items.sort()
		return items

	def extent_items(tree_blocks):
		"""tree_blocks: [(bytenr, level, owner)]"""
		items = []
		for c in lay.chunks:
			items.append((key(c.logical, BLOCK_GROUP_ITEM, c.length),
				      struct.pack("<QQQ", c.used, FIRST_CHUNK_TREE, c.flags)))
			if c.extent:
				items.append((key(c.logical, EXTENT_ITEM, c.used),
					      struct.pack("<QQQ", 1, GENERATION, 1) +
					      struct.pack("<BQQQI", EXTENT_DATA_REF, FS_TREE, 257,
							  c.file_offset, 1)))
		for b, lvl, owner in tree_blocks:
			items.append((key(b, METADATA_ITEM, lvl),
				      struct.pack("<QQQ", 1, GENERATION, 2) +
				      struct.pack("<BQ", TREE_BLOCK_REF, owner)))
		items.sort()
		return items

	# block counts: the chunk tree in the system chunk, the rest in the
	# metadata chunk; the extent tree holds an item per block, its own too
	fixed = {CHUNK_TREE: count_blocks(sorted(chunk_items)), DEV_TREE: count_blocks(dev_items_t),
		 FS_TREE: count_blocks(fs_items), DATA_RELOC_TREE: count_blocks(reloc_items),
		 CSUM_TREE: 1, FREE_SPACE_TREE: count_blocks(fst_items(NODESIZE, NODESIZE)),
		 ROOT_TREE: count_blocks(root_items({o: (0, 0, 0) for o in
						     (EXTENT_TREE, DEV_TREE, FS_TREE, CSUM_TREE,
						      FREE_SPACE_TREE, DATA_RELOC_TREE)}))}
	others = sum(fixed.values())
	ext = 1
	while True:
		dummy = [(0, 0, 0)] * (others + ext)
		nxt = count_blocks(extent_items(dummy))
		if nxt == ext:
			break
		ext = nxt
	fixed[EXTENT_TREE] = ext

	# addresses
	addrs = {CHUNK_TREE: [sys_chunk.logical + i * NODESIZE for i in range(fixed[CHUNK_TREE])]}
	cur = meta_chunk.logical
	for oid in (ROOT_TREE, EXTENT_TREE, DEV_TREE, FS_TREE, CSUM_TREE, FREE_SPACE_TREE,
		    DATA_RELOC_TREE):
		addrs[oid] = [cur + i * NODESIZE for i in range(fixed[oid])]
		cur += fixed[oid] * NODESIZE
	sys_chunk.used = fixed[CHUNK_TREE] * NODESIZE
	meta_chunk.used = cur - meta_chunk.logical
	if sys_chunk.used >= sys_chunk.length or meta_chunk.used >= meta_chunk.length:
		sys.exit("gen-bgs: metadata estimate too small")

	roots = {}
	roots[CHUNK_TREE] = fs.write_tree(sorted(chunk_items), CHUNK_TREE, addrs[CHUNK_TREE])
	roots[DEV_TREE] = fs.write_tree(dev_items_t, DEV_TREE, addrs[DEV_TREE])
	roots[FS_TREE] = fs.write_tree(fs_items, FS_TREE, addrs[FS_TREE])
	roots[DATA_RELOC_TREE] = fs.write_tree(reloc_items, DATA_RELOC_TREE, addrs[DATA_RELOC_TREE])
	roots[CSUM_TREE] = fs.write_tree(csum_items, CSUM_TREE, addrs[CSUM_TREE])
	roots[FREE_SPACE_TREE] = fs.write_tree(fst_items(meta_chunk.used, sys_chunk.used),
						FREE_SPACE_TREE, addrs[FREE_SPACE_TREE])
	tb = []
	for oid, a in addrs.items():
		tb += [(b, lvl, oid) for b, lvl in zip(a, tree_shape_levels(len(a)))]
	roots[EXTENT_TREE] = fs.write_tree(extent_items(tb), EXTENT_TREE, addrs[EXTENT_TREE])
	ri = {oid: (roots[oid][0], roots[oid][1], len(addrs[oid]))
	      for oid in (EXTENT_TREE, DEV_TREE, FS_TREE, CSUM_TREE, FREE_SPACE_TREE,
			  DATA_RELOC_TREE)}
	roots[ROOT_TREE] = fs.write_tree(root_items(ri), ROOT_TREE, addrs[ROOT_TREE])
	return fs, lay, roots, dev_items, sys_chunk


def tree_shape_levels(n):
	"""The level of each block of an n-block tree as write_tree() lays it
	out: leaves first, then each level up."""
	per_node = (NODESIZE - HEADER_SIZE) // KEY_PTR_SIZE
	# find the leaf count L with L + ceil-chain = n
	for leaves in range(n, 0, -1):
		total, width, lv = leaves, leaves, [0] * leaves
		level = 0
		while width > 1:
			level += 1
			width = (width + per_node - 1) // per_node
			total += width
			lv += [level] * width
		if total == n:
			return lv
	raise AssertionError("no tree shape of %d blocks" % n)


def write_images(args, fs, lay, roots, dev_items, sys_chunk):
	by_logical = {c.logical: c for c in lay.chunks}
	starts = sorted(by_logical)
	import bisect
	paths = ["%s-%d.img" % (args.out, d) for d in range(1, args.devices + 1)]
	fds = {}
	for d, p in enumerate(paths, 1):
		fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
		os.ftruncate(fd, args.dev_size)
		fds[d] = fd
	for bytenr, block in fs.blocks:
		c = by_logical[starts[bisect.bisect_right(starts, bytenr) - 1]]
		block = csum(block[32:]) + bytes(28) + block[32:]
		for d, phys in c.stripes:
			os.pwrite(fds[d], block, phys + bytenr - c.logical)
	sys_array = disk_key(key(FIRST_CHUNK_TREE, CHUNK_ITEM, sys_chunk.logical)) + sys_chunk.item(fs.dev_uuids)
	used = sum(c.used for c in lay.chunks)
	for d, fd in fds.items():
		for off in SUPER_OFFSETS:
			if off + 4096 > args.dev_size:
				continue
			sb = bytes(32) + fs.fsid + struct.pack("<QQ", off, 1) + b"_BHRfS_M"
			sb += struct.pack("<QQQQQ", GENERATION, roots[ROOT_TREE][0],
					  roots[CHUNK_TREE][0], 0, 0)
			sb += struct.pack("<QQQQ", args.dev_size * args.devices, used,
					  ROOT_TREE_DIR, args.devices)
			sb += struct.pack("<IIIII", SECTORSIZE, NODESIZE, NODESIZE, SECTORSIZE,
					  len(sys_array))
			sb += struct.pack("<QQQQ", GENERATION, 0, 3, 0x341)
			sb += struct.pack("<HBBB", 0, roots[ROOT_TREE][1], roots[CHUNK_TREE][1], 0)
			sb += dev_items[d]
			sb += bytes(256) + struct.pack("<QQ", 0, 0) + bytes(16) + struct.pack("<Q", 0)
			sb += bytes(27 * 8)
			assert len(sb) == 0x32b, hex(len(sb))
			sb += sys_array + bytes(2048 - len(sys_array))
			sb += bytes(4096 - len(sb))
			sb = csum(sb[32:]) + bytes(28) + sb[32:]
			os.pwrite(fd, sb, off)
		os.close(fd)
	return paths


def size_arg(s):
	units = {"K": 10, "M": 20, "G": 30, "T": 40, "P": 50}
	if s[-1].upper() in units:
		return int(float(s[:-1]) * (1 << units[s[-1].upper()]))
	return int(s)


def main():
	ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
	ap.add_argument("--bgs", type=int, required=True, help="data block groups")
	ap.add_argument("--empty", type=int, default=0, help="of them with used 0")
	ap.add_argument("--fill", type=int, default=100,
			help="percent of each other data block group its extent fills")
	ap.add_argument("--fill-min", type=int, default=0,
			help="fills spread over --fill-min..--fill percent (many usage classes)")
	ap.add_argument("--devices", type=int, default=1)
	ap.add_argument("--dev-size", type=size_arg, default=size_arg("12T"))
	ap.add_argument("--chunk-size", type=size_arg, default=size_arg("256M"))
	ap.add_argument("out")
	args = ap.parse_args()
	if args.empty > args.bgs or not 0 < args.fill <= 100 or not 0 <= args.fill_min <= args.fill or args.devices < 1 or args.chunk_size % STRIPE_LEN:
		sys.exit("gen-bgs: bad arguments")
	if not args.dev_size:
		# 0: a full filesystem, each device 448 MiB beyond the chunks of a first layout
		args.dev_size = 1 << 46
		lay = build(args)[1]
		args.dev_size = max(sum(c.length for c in lay.chunks if d in [s for s, _ in c.stripes])
				    for d in range(1, args.devices + 1)) + (449 << 20)
	fs, lay, roots, dev_items, sys_chunk = build(args)
	paths = write_images(args, fs, lay, roots, dev_items, sys_chunk)
	print("%s: %d data block groups (%d empty), %d tree blocks, fsid %s" %
	      (" ".join(paths), args.bgs, args.empty, len(fs.blocks), uuid.UUID(bytes=fs.fsid)))


if __name__ == "__main__":
	main()
