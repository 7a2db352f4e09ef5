// SPDX-License-Identifier: GPL-2.0
/*
 * Checks on tree blocks and items before any field is used, after the
 * kernel's fs/btrfs/tree-checker.c: check_leaf() (key order, item bounds,
 * the empty-leaf rules, item contents only in written blocks) with every
 * item check of check_leaf_item() (file extents, csums, dir entries,
 * inode items, inode refs and extrefs, chunks, dev items, dev extents,
 * block groups, root items, extent and metadata items, keyed back refs,
 * raid stripe extents) and check_prev_ino(); check_node(),
 * btrfs_check_chunk_valid() and btrfs_check_eb_owner(); with the kernel's
 * wording where it has one.  Costs matter: a warm read of a large extent
 * tree spends most of its time here (Documentation/benchmark.md), so a
 * value only a failing check would print is worked out only then.
 * Behaviour reproduced: 6.18.  Documentation/verdicts.md lists each check
 * with the kernel version that introduced it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "common/checksum.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/tree-checker.h"
#include "kernel-shared/volumes.h"

/*
 * IS_ALIGNED(), as the kernel tests it: a mask, since the sector size is a
 * power of two (btrfs_validate_super).  A division per item was a tenth
 * of the leaf checks on large extent trees.
 */
static inline bool sector_aligned(const struct btrfs_fs_info *fs_info, u64 value)
{
	return !(value & ((u64)fs_info->sectorsize - 1));
}

/*
 * Where in a tree block a check failed, for the error record: the key of
 * @slot too when its item or key pointer lies inside the block.
 */
static const struct btrfs_error_loc *fill_block_loc(struct btrfs_error_loc *loc,
						    const struct btrfs_tree_block *eb,
						    int slot)
{
	size_t entry = eb->level ? sizeof(struct btrfs_key_ptr) : sizeof(struct btrfs_item);

	*loc = BTRFS_ERROR_LOC_NONE;
	loc->logical = eb->start;
	loc->tree = eb->owner;
	loc->slot = slot;
	if (slot < 0 || (u32)slot >= eb->nritems ||
	    sizeof(struct btrfs_header) + (slot + 1) * entry > eb->len)
		return loc;
	loc->has_key = true;
	if (eb->level)
		btrfs_node_key_to_cpu(eb, slot, &loc->key);
	else
		btrfs_item_key_to_cpu(eb, slot, &loc->key);
	return loc;
}

#define block_loc(eb, nr)	fill_block_loc(&(struct btrfs_error_loc){ 0 }, (eb), (nr))

/*
 * The same, with the on-disk field the check read and the value found;
 * with @has_expected the one value it wanted too (a range or an alignment
 * is in the message only).
 */
static const struct btrfs_error_loc *fill_field_loc(struct btrfs_error_loc *loc,
						    const struct btrfs_tree_block *eb,
						    int slot, const char *field, u64 found,
						    bool has_expected, u64 expected)
{
	fill_block_loc(loc, eb, slot);
	if (has_expected)
		return btrfs_loc_value(loc, field, found, expected);
	return btrfs_loc_found(loc, field, found);
}

#define found_loc(eb, nr, field, found)						\
	fill_field_loc(&(struct btrfs_error_loc){ 0 }, (eb), (nr), (field),	\
		       (found), false, 0)
#define value_loc(eb, nr, field, found, expected)				\
	fill_field_loc(&(struct btrfs_error_loc){ 0 }, (eb), (nr), (field),	\
		       (found), true, (expected))

/*
 * Each family prints the kernel's prefix (generic_err(), dev_item_err(),
 * extent_err(), dir_item_err(), file_extent_err(), block_group_err()) and
 * comes in three forms: X_error() with where, X_found_error() with the
 * field and the value found, X_value_error() with the value expected too.
 */
#define leaf_error_at(err, loc, eb, slot, fmt, ...)			\
	btrfs_record_error_at(err, -EUCLEAN, (loc),			\
		"corrupt leaf: root=%llu block=%llu slot=%d, " fmt,	\
		(unsigned long long)(eb)->owner,			\
		(unsigned long long)(eb)->start, (slot), ##__VA_ARGS__)
#define leaf_error(err, eb, slot, fmt, ...)				\
	leaf_error_at(err, block_loc(eb, slot), eb, slot, fmt, ##__VA_ARGS__)
#define leaf_found_error(err, eb, slot, field, found, fmt, ...)		\
	leaf_error_at(err, found_loc(eb, slot, field, found), eb, slot,	\
		      fmt, ##__VA_ARGS__)
#define leaf_value_error(err, eb, slot, field, found, expected, fmt, ...) \
	leaf_error_at(err, value_loc(eb, slot, field, found, expected),	\
		      eb, slot, fmt, ##__VA_ARGS__)

#define node_error_at(err, loc, eb, slot, fmt, ...)			\
	btrfs_record_error_at(err, -EUCLEAN, (loc),			\
		"corrupt node: root=%llu block=%llu slot=%d, " fmt,	\
		(unsigned long long)(eb)->owner,			\
		(unsigned long long)(eb)->start, (slot), ##__VA_ARGS__)
#define node_error(err, eb, slot, fmt, ...)				\
	node_error_at(err, block_loc(eb, slot), eb, slot, fmt, ##__VA_ARGS__)
#define node_found_error(err, eb, slot, field, found, fmt, ...)		\
	node_error_at(err, found_loc(eb, slot, field, found), eb, slot,	\
		      fmt, ##__VA_ARGS__)

/*
 * The three forms of a family whose message names the item's key (its
 * X_error_at() prints the prefix): where only, the field and the value
 * found, and the value expected too.
 */
#define keyed_error(family, err, eb, slot, key, fmt, ...)		\
	family##_error_at(err, block_loc(eb, slot), eb, slot, key, fmt,	\
			  ##__VA_ARGS__)
#define keyed_found_error(family, err, eb, slot, key, field, found, fmt, ...) \
	family##_error_at(err, found_loc(eb, slot, field, found), eb, slot, \
			  key, fmt, ##__VA_ARGS__)
#define keyed_value_error(family, err, eb, slot, key, field, found,	\
			  expected, fmt, ...)					\
	family##_error_at(err, value_loc(eb, slot, field, found, expected), \
			  eb, slot, key, fmt, ##__VA_ARGS__)

/* Out of line: only a corrupted block gets here */
__attribute__((noinline, cold))
static int key_order_error(struct btrfs_error *err,
			   const struct btrfs_tree_block *eb, int slot,
			   const struct btrfs_key *prev, const struct btrfs_key *key)
{
	if (eb->level)
		return node_error(err, eb, slot,
			"bad key order, prev (%llu %u %llu) current (%llu %u %llu)",
			(unsigned long long)prev->objectid, prev->type,
			(unsigned long long)prev->offset,
			(unsigned long long)key->objectid, key->type,
			(unsigned long long)key->offset);
	return leaf_error(err, eb, slot,
		"bad key order, prev (%llu %u %llu) current (%llu %u %llu)",
		(unsigned long long)prev->objectid, prev->type,
		(unsigned long long)prev->offset,
		(unsigned long long)key->objectid, key->type,
		(unsigned long long)key->offset);
}

/*
 * Fill @key with this slot's key pointer and check it against @prev, the
 * previous slot's.  check_node() alternates two key buffers instead of
 * copying a key from one to the other: a struct copy loads 16 bytes just
 * written as 8 + 1, which the CPU cannot forward from its store buffer.
 * (check_leaf() keeps its keys in registers.)  Inline: it runs for every
 * key pointer of every node read.
 */
static inline int check_key_order(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				  const struct btrfs_tree_block *eb, int slot,
				  const struct btrfs_key *prev, struct btrfs_key *key)
{
	btrfs_node_key_to_cpu(eb, slot, key);
	if (slot > 0 && btrfs_comp_keys(prev, key) >= 0)
		return key_order_error(err, eb, slot, prev, key);
	return 0;
}

/*
 * btrfs_is_fstree(): the fs tree and subvolume ids, which are below the
 * qgroup level bits.
 */
static bool is_fstree(u64 rootid)
{
	if (rootid == BTRFS_FS_TREE_OBJECTID)
		return true;
	if ((int64_t)rootid < (int64_t)BTRFS_FIRST_FREE_OBJECTID)
		return false;
	return (rootid >> BTRFS_QGROUP_LEVEL_SHIFT) == 0;
}

static int check_leaf_chunk(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    const struct btrfs_tree_block *eb, int slot,
			    const struct btrfs_key *key)
{
	struct btrfs_item_location loc = { "leaf", eb->start, slot };
	const struct btrfs_chunk *chunk;
	u32 size;

	chunk = btrfs_item_ptr(eb, slot, &size);
	return btrfs_check_chunk_valid(fs_info, err, chunk, size, key->offset, &loc);
}

/* dev_item_err(): names the key objectid as "devid", and has no comma */
#define dev_item_error_at(err, loc, eb, slot, key, fmt, ...)		\
	btrfs_record_error_at(err, -EUCLEAN, (loc),			\
		"corrupt leaf: root=%llu block=%llu slot=%d devid=%llu " fmt,	\
		(unsigned long long)(eb)->owner,			\
		(unsigned long long)(eb)->start, (slot),		\
		(unsigned long long)(key)->objectid,			\
		##__VA_ARGS__)
#define dev_item_error(...)		keyed_error(dev_item, __VA_ARGS__)
#define dev_item_found_error(...)	keyed_found_error(dev_item, __VA_ARGS__)
#define dev_item_value_error(...)	keyed_value_error(dev_item, __VA_ARGS__)

static int check_dev_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			  const struct btrfs_tree_block *eb, int slot,
			  const struct btrfs_key *key)
{
	const struct btrfs_dev_item *item;
	u32 size;

	if (key->objectid != BTRFS_DEV_ITEMS_OBJECTID)
		return dev_item_value_error(err, eb, slot, key,
			"key.objectid", key->objectid, BTRFS_DEV_ITEMS_OBJECTID,
			"invalid objectid: has=%llu expect=%llu",
			(unsigned long long)key->objectid,
			(unsigned long long)BTRFS_DEV_ITEMS_OBJECTID);
	item = btrfs_item_ptr(eb, slot, &size);
	if (size != sizeof(*item))
		return dev_item_value_error(err, eb, slot, key,
			"item size", size, sizeof(*item),
			"invalid item size: has %u expect %zu", size, sizeof(*item));
	if (btrfs_stack_device_id(item) != key->offset)
		return dev_item_value_error(err, eb, slot, key,
			"devid", btrfs_stack_device_id(item), key->offset,
			"devid mismatch: key has=%llu item has=%llu",
			(unsigned long long)key->offset,
			(unsigned long long)btrfs_stack_device_id(item));
	/* total_bytes itself is 0 while a device is being removed */
	if (btrfs_stack_device_bytes_used(item) > btrfs_stack_device_total_bytes(item))
		return dev_item_found_error(err, eb, slot, key,
			"bytes_used", btrfs_stack_device_bytes_used(item),
			"invalid bytes used: have %llu expect [0, %llu]",
			(unsigned long long)btrfs_stack_device_bytes_used(item),
			(unsigned long long)btrfs_stack_device_total_bytes(item));
	return 0;
}

static int check_dev_extent_fields(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				   const struct btrfs_tree_block *eb, int slot,
				   const struct btrfs_key *key,
				   const struct btrfs_dev_extent *de)
{
	const u32 sectorsize = fs_info->sectorsize;

	if (btrfs_stack_dev_extent_chunk_tree(de) != BTRFS_CHUNK_TREE_OBJECTID)
		return leaf_value_error(err, eb, slot, "chunk_tree",
			btrfs_stack_dev_extent_chunk_tree(de), BTRFS_CHUNK_TREE_OBJECTID,
			"invalid dev extent chunk tree id, has %llu expect %llu",
			(unsigned long long)btrfs_stack_dev_extent_chunk_tree(de),
			(unsigned long long)BTRFS_CHUNK_TREE_OBJECTID);
	if (btrfs_stack_dev_extent_chunk_objectid(de) != BTRFS_FIRST_CHUNK_TREE_OBJECTID)
		return leaf_value_error(err, eb, slot, "chunk_objectid",
			btrfs_stack_dev_extent_chunk_objectid(de),
			BTRFS_FIRST_CHUNK_TREE_OBJECTID,
			"invalid dev extent chunk objectid, has %llu expect %llu",
			(unsigned long long)btrfs_stack_dev_extent_chunk_objectid(de),
			(unsigned long long)BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	if (key->offset % sectorsize)
		return leaf_found_error(err, eb, slot,
			"key.offset", key->offset,
			"invalid dev extent key.offset, has %llu not aligned to %u",
			(unsigned long long)key->offset, sectorsize);
	if (btrfs_stack_dev_extent_chunk_offset(de) % sectorsize)
		return leaf_found_error(err, eb, slot,
			"chunk_offset", btrfs_stack_dev_extent_chunk_offset(de),
			"invalid dev extent chunk offset, has %llu not aligned to %u",
			(unsigned long long)btrfs_stack_dev_extent_chunk_offset(de),
			sectorsize);
	if (btrfs_stack_dev_extent_length(de) % sectorsize)
		return leaf_found_error(err, eb, slot,
			"length", btrfs_stack_dev_extent_length(de),
			"invalid dev extent length, has %llu not aligned to %u",
			(unsigned long long)btrfs_stack_dev_extent_length(de),
			sectorsize);
	return 0;
}

/*
 * The kernel reads the fields without a size check (its accessors stay
 * inside the block); here a short item could end at the block's end, so
 * the size is checked first.  Dev extents of one device are keyed by
 * their physical start, so key order alone does not rule out overlap.
 */
static int check_dev_extent(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    const struct btrfs_tree_block *eb, int slot,
			    const struct btrfs_key *key,
			    const struct btrfs_key *prev)
{
	const struct btrfs_dev_extent *de, *prev_de;
	u64 prev_len;
	u32 size;
	int ret;

	de = btrfs_item_ptr(eb, slot, &size);
	if (size != sizeof(*de))
		return leaf_value_error(err, eb, slot, "item size", size, sizeof(*de),
			"invalid dev extent item size, has %u expect %zu",
			size, sizeof(*de));
	ret = check_dev_extent_fields(fs_info, err, eb, slot, key, de);
	if (ret || !slot || prev->objectid != key->objectid ||
	    prev->type != key->type)
		return ret;
	/* The previous item passed this same check, size included */
	prev_de = btrfs_item_ptr(eb, slot - 1, &size);
	prev_len = btrfs_stack_dev_extent_length(prev_de);
	if (prev->offset + prev_len > key->offset)
		return leaf_found_error(err, eb, slot,
			"key.offset", key->offset,
			"dev extent overlap, prev offset %llu len %llu current offset %llu",
			(unsigned long long)prev->offset,
			(unsigned long long)prev_len,
			(unsigned long long)key->offset);
	return 0;
}

/*
 * check_root_key() for a ROOT_ITEM key.  Only subvolume trees get a reloc
 * tree, the others are just COWed.  Older kernels also gave one to the
 * data reloc tree; 6.5+ refuse such a leaf, and so does this reader,
 * although btrfs check accepts it (progs test fsck 020
 * tree_reloc_for_data_reloc): the kernel decides whether it mounts.
 */
static int check_root_key(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			  const struct btrfs_tree_block *eb, int slot,
			  const struct btrfs_key *key)
{
	if (key->objectid == BTRFS_TREE_RELOC_OBJECTID && !is_fstree(key->offset))
		return leaf_found_error(err, eb, slot,
			"key.offset", key->offset,
			"invalid reloc tree for root %lld, root id is not a subvolume tree",
			(long long)key->offset);
	if (key->objectid == 0)
		return leaf_found_error(err, eb, slot, "key.objectid", 0,
					"invalid root id 0");
	if (key->objectid == BTRFS_TREE_RELOC_OBJECTID && key->offset == 0)
		return leaf_found_error(err, eb, slot, "key.offset", 0,
					"invalid root id 0 for reloc tree");
	return 0;
}

/*
 * Super generation + 1: a log tree written after the last commit may
 * carry the next transaction's generation.
 */
static int check_root_generations(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				  const struct btrfs_tree_block *eb, int slot,
				  const struct btrfs_root_item_head *ri, u64 gen_v2)
{
	const u64 max_gen = fs_info->generation + 1;

	if (btrfs_root_generation(ri) > max_gen)
		return leaf_found_error(err, eb, slot,
			"generation", btrfs_root_generation(ri),
			"invalid root generation, have %llu expect (0, %llu]",
			(unsigned long long)btrfs_root_generation(ri),
			(unsigned long long)max_gen);
	if (gen_v2 > max_gen)
		return leaf_found_error(err, eb, slot,
			"generation_v2", gen_v2,
			"invalid root v2 generation, have %llu expect (0, %llu]",
			(unsigned long long)gen_v2, (unsigned long long)max_gen);
	if (btrfs_root_last_snapshot(ri) > max_gen)
		return leaf_found_error(err, eb, slot,
			"last_snapshot", btrfs_root_last_snapshot(ri),
			"invalid root last_snapshot, have %llu expect (0, %llu]",
			(unsigned long long)btrfs_root_last_snapshot(ri),
			(unsigned long long)max_gen);
	return 0;
}

/*
 * A legacy (pre-3.x) root item stops before generation_v2; the kernel
 * reads it as if the rest were zero, so generation_v2 passes as 0.
 * A bad drop_level is reported as "root level", as 6.18 does (later
 * kernels say "root drop_level").
 */
static int check_root_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   const struct btrfs_tree_block *eb, int slot,
			   const struct btrfs_key *key)
{
	const u64 valid_flags = BTRFS_ROOT_SUBVOL_RDONLY | BTRFS_ROOT_SUBVOL_DEAD;
	const struct btrfs_root_item *ri;
	u32 size;
	int ret;

	ret = check_root_key(fs_info, err, eb, slot, key);
	if (ret)
		return ret;
	ri = btrfs_item_ptr(eb, slot, &size);
	if (size != sizeof(*ri) && size != sizeof(ri->head))
		return leaf_found_error(err, eb, slot,
			"item size", size,
			"invalid root item size, have %u expect %zu or %zu",
			size, sizeof(*ri), sizeof(ri->head));
	ret = check_root_generations(fs_info, err, eb, slot, &ri->head,
			size == sizeof(*ri) ? btrfs_root_generation_v2(ri) : 0);
	if (ret)
		return ret;
	if (!sector_aligned(fs_info, btrfs_root_bytenr(&ri->head)))
		return leaf_found_error(err, eb, slot,
			"bytenr", btrfs_root_bytenr(&ri->head),
			"invalid root bytenr, have %llu expect to be aligned to %u",
			(unsigned long long)btrfs_root_bytenr(&ri->head),
			fs_info->sectorsize);
	if (btrfs_root_level(&ri->head) >= BTRFS_MAX_LEVEL)
		return leaf_found_error(err, eb, slot,
			"level", btrfs_root_level(&ri->head),
			"invalid root level, have %u expect [0, %u]",
			btrfs_root_level(&ri->head), BTRFS_MAX_LEVEL - 1);
	if (btrfs_root_drop_level(&ri->head) >= BTRFS_MAX_LEVEL)
		return leaf_found_error(err, eb, slot,
			"drop_level", btrfs_root_drop_level(&ri->head),
			"invalid root level, have %u expect [0, %u]",
			btrfs_root_drop_level(&ri->head), BTRFS_MAX_LEVEL - 1);
	if (btrfs_root_flags(&ri->head) & ~valid_flags)
		return leaf_found_error(err, eb, slot,
			"flags", btrfs_root_flags(&ri->head),
			"invalid root flags, have 0x%llx expect mask 0x%llx",
			(unsigned long long)btrfs_root_flags(&ri->head),
			(unsigned long long)valid_flags);
	return 0;
}

/*
 * extent_err(): no root, the extent's range instead, and no comma.  The
 * length of a tree block's item or keyed ref is the node size (the length
 * of @eb, the leaf that holds it); a data ref's key offset (a hash or
 * parent) is printed as the length.
 */
static inline u64 extent_error_len(const struct btrfs_tree_block *eb,
				   const struct btrfs_key *key)
{
	if (key->type == BTRFS_METADATA_ITEM_KEY ||
	    key->type == BTRFS_TREE_BLOCK_REF_KEY ||
	    key->type == BTRFS_SHARED_BLOCK_REF_KEY)
		return eb->len;
	return key->offset;
}

#define extent_error_at(err, loc, eb, slot, key, fmt, ...)		\
	btrfs_record_error_at(err, -EUCLEAN, (loc),			\
		"corrupt leaf: block=%llu slot=%d extent bytenr=%llu len=%llu " fmt,	\
		(unsigned long long)(eb)->start, (slot),		\
		(unsigned long long)(key)->objectid,			\
		(unsigned long long)extent_error_len(eb, key),		\
		##__VA_ARGS__)
#define extent_error(...)		keyed_error(extent, __VA_ARGS__)
#define extent_found_error(...)	keyed_found_error(extent, __VA_ARGS__)
#define extent_value_error(...)	keyed_value_error(extent, __VA_ARGS__)

/* What the key alone says: alignment, level, the skinny feature */
static int check_extent_key(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    const struct btrfs_tree_block *eb, int slot,
			    const struct btrfs_key *key)
{
	if (key->type == BTRFS_METADATA_ITEM_KEY &&
	    !btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA))
		return leaf_found_error(err, eb, slot, "key.type", key->type,
			"invalid key type, METADATA_ITEM type invalid when SKINNY_METADATA feature disabled");
	if (!sector_aligned(fs_info, key->objectid))
		return leaf_found_error(err, eb, slot,
			"key.objectid", key->objectid,
			"invalid key objectid, have %llu expect to be aligned to %u",
			(unsigned long long)key->objectid, fs_info->sectorsize);
	/* key.offset is the tree level for a METADATA_ITEM */
	if (key->type == BTRFS_METADATA_ITEM_KEY && key->offset >= BTRFS_MAX_LEVEL)
		return extent_found_error(err, eb, slot, key,
			"key.offset", key->offset,
			"invalid tree level, have %llu expect [0, %u]",
			(unsigned long long)key->offset, BTRFS_MAX_LEVEL - 1);
	return 0;
}

/*
 * Generation and flags of the btrfs_extent_item, and the length the
 * flags imply.  Unknown flag bits are not rejected (nor by the kernel).
 */
static int check_extent_head(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			     const struct btrfs_tree_block *eb, int slot,
			     const struct btrfs_key *key,
			     const struct btrfs_extent_item *ei)
{
	const u64 kinds = BTRFS_EXTENT_FLAG_DATA | BTRFS_EXTENT_FLAG_TREE_BLOCK;
	u64 flags = btrfs_stack_extent_flags(ei);

	if (btrfs_stack_extent_generation(ei) > fs_info->generation + 1)
		return extent_found_error(err, eb, slot, key,
			"generation", btrfs_stack_extent_generation(ei),
			"invalid generation, have %llu expect (0, %llu]",
			(unsigned long long)btrfs_stack_extent_generation(ei),
			(unsigned long long)fs_info->generation + 1);
	if ((flags & kinds) != BTRFS_EXTENT_FLAG_DATA &&
	    (flags & kinds) != BTRFS_EXTENT_FLAG_TREE_BLOCK)
		return extent_found_error(err, eb, slot, key,
			"flags", flags,
			"invalid extent flag, have 0x%llx expect 1 bit set in 0x%llx",
			(unsigned long long)flags, (unsigned long long)kinds);
	if (flags & BTRFS_EXTENT_FLAG_TREE_BLOCK) {
		if (key->type == BTRFS_EXTENT_ITEM_KEY && key->offset != fs_info->nodesize)
			return extent_value_error(err, eb, slot, key,
				"key.offset", key->offset, fs_info->nodesize,
			"invalid extent length, have %llu expect %u",
				(unsigned long long)key->offset, fs_info->nodesize);
		return 0;
	}
	if (key->type != BTRFS_EXTENT_ITEM_KEY)
		return extent_value_error(err, eb, slot, key,
			"key.type", key->type, BTRFS_EXTENT_ITEM_KEY,
			"invalid key type, have %u expect %u for data backref",
			key->type, BTRFS_EXTENT_ITEM_KEY);
	if (!sector_aligned(fs_info, key->offset))
		return extent_found_error(err, eb, slot, key,
			"key.offset", key->offset,
			"invalid extent length, have %llu expect aligned to %u",
			(unsigned long long)key->offset, fs_info->sectorsize);
	if (flags & BTRFS_BLOCK_FLAG_FULL_BACKREF)
		return extent_found_error(err, eb, slot, key,
			"flags", flags,
			"invalid extent flag, data has full backref set");
	return 0;
}

/* btrfs_extent_inline_ref_size(): 0 for a type that is not an inline ref */
static u32 inline_ref_size(u8 type)
{
	switch (type) {
	case BTRFS_TREE_BLOCK_REF_KEY:
	case BTRFS_SHARED_BLOCK_REF_KEY:
	case BTRFS_EXTENT_OWNER_REF_KEY:
		return sizeof(struct btrfs_extent_inline_ref);
	case BTRFS_SHARED_DATA_REF_KEY:
		return sizeof(struct btrfs_extent_inline_ref) + sizeof(struct btrfs_shared_data_ref);
	case BTRFS_EXTENT_DATA_REF_KEY:
		return 1 + sizeof(struct btrfs_extent_data_ref);
	default:
		return 0;
	}
}

/*
 * hash_extent_data_ref(): the order key of data refs, from the kernel's
 * raw crc32c (no inversion) of each little-endian u64.  With the crc32
 * instruction the three pieces take three instructions, not three calls:
 * a third of the leaf checks of an extent tree full of data refs.
 */
#ifdef CRC32C_HAVE_INSN
__attribute__((target("sse4.2")))
static u64 hash_extent_data_ref_insn(u64 root, u64 objectid, u64 offset)
{
	u32 high = crc32c_u64_insn(~0U, root);
	u32 low = crc32c_u64_insn(crc32c_u64_insn(~0U, objectid), offset);

	return ((u64)high << 31) ^ (u64)low;
}
#endif

u64 hash_extent_data_ref(u64 root, u64 objectid, u64 offset)
{
	u32 high, low;

#ifdef CRC32C_HAVE_INSN
	if (crc32c_have_insn())
		return hash_extent_data_ref_insn(root, objectid, offset);
#endif
	high = crc32c_u64(~0U, root);
	low = crc32c_u64(crc32c_u64(~0U, objectid), offset);
	return ((u64)high << 31) ^ (u64)low;
}

/* Data refs may name subvolumes, the data reloc tree, or the tree root (v1 space cache) */
static bool is_valid_dref_root(u64 rootid)
{
	return is_fstree(rootid) || rootid == BTRFS_DATA_RELOC_TREE_OBJECTID ||
	       rootid == BTRFS_ROOT_TREE_OBJECTID;
}

/* An inline EXTENT_DATA_REF: owner root, inode, file offset, count */
static int check_inline_data_ref(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				 const struct btrfs_tree_block *eb, int slot,
				 const struct btrfs_key *key,
				 const struct btrfs_extent_data_ref *dref,
				 u64 *refs)
{
	u64 root = btrfs_stack_extent_data_ref_root(dref);
	u64 objectid = btrfs_stack_extent_data_ref_objectid(dref);
	u64 offset = btrfs_stack_extent_data_ref_offset(dref);

	if (!is_valid_dref_root(root))
		return extent_found_error(err, eb, slot, key,
			"root", root,
			"invalid data ref root value %llu", (unsigned long long)root);
	if (objectid < BTRFS_FIRST_FREE_OBJECTID || objectid > BTRFS_LAST_FREE_OBJECTID)
		return extent_found_error(err, eb, slot, key,
			"objectid", objectid,
			"invalid data ref objectid value %llu",
			(unsigned long long)objectid);
	if (!sector_aligned(fs_info, offset))
		return extent_found_error(err, eb, slot, key,
			"offset", offset,
			"invalid data ref offset, have %llu expect aligned to %u",
			(unsigned long long)offset, fs_info->sectorsize);
	if (!btrfs_stack_extent_data_ref_count(dref))
		return extent_found_error(err, eb, slot, key,
			"count", 0,
			"invalid data ref count, should have non-zero value");
	*refs += btrfs_stack_extent_data_ref_count(dref);
	return 0;
}

/*
 * One inline ref, whose whole size is known to lie inside the item: the
 * checks of its type and the references it holds
 * (added to @refs).  An owner ref without SIMPLE_QUOTA only warns in the
 * kernel, so it passes here.
 */
static int check_inline_ref(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    const struct btrfs_tree_block *eb, int slot,
			    const struct btrfs_key *key,
			    const struct btrfs_extent_inline_ref *iref, u64 *refs)
{
	u8 type = btrfs_stack_extent_inline_ref_type(iref);
	u64 offset = btrfs_stack_extent_inline_ref_offset(iref);
	const struct btrfs_shared_data_ref *sref = (const void *)(iref + 1);

	switch (type) {
	case BTRFS_TREE_BLOCK_REF_KEY:
		*refs += 1;
		return 0;
	case BTRFS_SHARED_BLOCK_REF_KEY:
		if (!sector_aligned(fs_info, offset))
			return extent_found_error(err, eb, slot, key, "offset", offset,
				"invalid tree parent bytenr, have %llu expect aligned to %u",
				(unsigned long long)offset, fs_info->sectorsize);
		*refs += 1;
		return 0;
	case BTRFS_EXTENT_DATA_REF_KEY:
		return check_inline_data_ref(fs_info, err, eb, slot, key,
				(const void *)((const u8 *)iref + 1), refs);
	case BTRFS_SHARED_DATA_REF_KEY:
		if (!sector_aligned(fs_info, offset))
			return extent_found_error(err, eb, slot, key,
				"offset", offset,
			"invalid data parent bytenr, have %llu expect aligned to %u",
				(unsigned long long)offset, fs_info->sectorsize);
		if (!btrfs_stack_shared_data_ref_count(sref))
			return extent_found_error(err, eb, slot, key,
				"count", 0,
			"invalid shared data ref count, should have non-zero value");
		*refs += btrfs_stack_shared_data_ref_count(sref);
		return 0;
	case BTRFS_EXTENT_OWNER_REF_KEY:
		return 0;
	default:
		return extent_found_error(err, eb, slot, key,
			"type", type,
			"unknown inline ref type: %u", type);
	}
}

/*
 * Inline refs run from @p to the item's @end.  The kernel inserts them in
 * ascending type order and, within a type, in descending order of their
 * sequence (the ref's offset, or the hash for EXTENT_DATA_REF), and its
 * lookup relies on that order; an equal sequence is allowed.  Messages
 * give positions as offsets in the block, like the kernel's.  A sequence
 * is worked out only when a ref follows one of its type: most extent
 * items hold one ref, whose hash nothing compares.
 */
static u64 inline_ref_seq(const struct btrfs_extent_inline_ref *iref)
{
	const struct btrfs_extent_data_ref *dref = (const void *)((const u8 *)iref + 1);

	if (btrfs_stack_extent_inline_ref_type(iref) != BTRFS_EXTENT_DATA_REF_KEY)
		return btrfs_stack_extent_inline_ref_offset(iref);
	return hash_extent_data_ref(btrfs_stack_extent_data_ref_root(dref),
				    btrfs_stack_extent_data_ref_objectid(dref),
				    btrfs_stack_extent_data_ref_offset(dref));
}

static int check_inline_refs(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			     const struct btrfs_tree_block *eb, int slot,
			     const struct btrfs_key *key,
			     const u8 *p, const u8 *end, u64 *refs)
{
	const struct btrfs_extent_inline_ref *last = NULL;
	bool have_last_seq = false;
	u64 last_seq = 0;
	u8 last_type = 0;

	while (p < end) {
		const struct btrfs_extent_inline_ref *iref = (const void *)p;
		u64 seq;
		u32 size;
		u8 type;
		int ret;

		if ((size_t)(end - p) < sizeof(*iref))
			return extent_error(err, eb, slot, key,
				"inline ref item overflows extent item, ptr %lu iref size %zu end %lu",
				(unsigned long)(p - eb->data), sizeof(*iref),
				(unsigned long)(end - eb->data));
		type = btrfs_stack_extent_inline_ref_type(iref);
		size = inline_ref_size(type);
		if ((size_t)(end - p) < size)
			return extent_error(err, eb, slot, key,
				"inline ref item overflows extent item, ptr %lu iref size %u end %lu",
				(unsigned long)(p - eb->data), size,
				(unsigned long)(end - eb->data));
		ret = check_inline_ref(fs_info, err, eb, slot, key, iref, refs);
		if (ret)
			return ret;
		if (type < last_type)
			return extent_found_error(err, eb, slot, key,
				"type", type,
			"inline ref out-of-order: has type %u, prev type %u",
				type, last_type);
		if (type > last_type) {
			have_last_seq = false;
			last = iref;
			last_type = type;
			p += size;
			continue;
		}
		seq = inline_ref_seq(iref);
		if (!have_last_seq)
			last_seq = inline_ref_seq(last);
		if (seq > last_seq)
			return extent_found_error(err, eb, slot, key,
				"offset", btrfs_stack_extent_inline_ref_offset(iref),
			"inline ref out-of-order: has type %u offset %llu seq 0x%llx, prev type %u seq 0x%llx",
				type, (unsigned long long)btrfs_stack_extent_inline_ref_offset(iref),
				(unsigned long long)seq, last_type,
				(unsigned long long)last_seq);
		last = iref;
		last_seq = seq;
		have_last_seq = true;
		p += size;
	}
	return 0;
}

/*
 * Extent items of one leaf are sorted by bytenr; an item must start at or
 * after the end of the previous one (a METADATA_ITEM covers nodesize).
 */
static int check_extent_overlap(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				const struct btrfs_tree_block *eb, int slot,
				const struct btrfs_key *key,
				const struct btrfs_key *prev)
{
	u64 prev_end = prev->objectid;

	if (prev->type == BTRFS_METADATA_ITEM_KEY)
		prev_end += fs_info->nodesize;
	else if (prev->type == BTRFS_EXTENT_ITEM_KEY)
		prev_end += prev->offset;
	else
		return 0;
	if (prev_end > key->objectid)
		return extent_error(err, eb, slot, key,
			"previous extent [%llu %u %llu] overlaps current extent [%llu %u %llu]",
			(unsigned long long)prev->objectid, prev->type,
			(unsigned long long)prev->offset,
			(unsigned long long)key->objectid, key->type,
			(unsigned long long)key->offset);
	return 0;
}

/*
 * check_extent_item(): EXTENT_ITEM and METADATA_ITEM.  The item is a
 * btrfs_extent_item, then for a non-skinny tree block a
 * btrfs_tree_block_info, then inline refs up to the item's end exactly.
 * Keyed refs may hold further references, so the inline ones can only be
 * checked not to exceed the item's count.
 */
static int check_extent_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			     const struct btrfs_tree_block *eb, int slot,
			     const struct btrfs_key *key,
			     const struct btrfs_key *prev)
{
	const struct btrfs_extent_item *ei;
	const u8 *p, *end;
	u64 refs = 0;
	u32 size;
	int ret;

	ret = check_extent_key(fs_info, err, eb, slot, key);
	if (ret)
		return ret;
	ei = btrfs_item_ptr(eb, slot, &size);
	if (size < sizeof(*ei))
		return extent_found_error(err, eb, slot, key, "item size", size,
			"invalid item size, have %u expect [%zu, %u)",
			size, sizeof(*ei), btrfs_leaf_data_size(fs_info->nodesize));
	ret = check_extent_head(fs_info, err, eb, slot, key, ei);
	if (ret)
		return ret;
	p = (const u8 *)(ei + 1);
	end = (const u8 *)ei + size;
	if ((btrfs_stack_extent_flags(ei) & BTRFS_EXTENT_FLAG_TREE_BLOCK) &&
	    key->type == BTRFS_EXTENT_ITEM_KEY) {
		const struct btrfs_tree_block_info *info = (const void *)p;

		/*
		 * The kernel reads the level unchecked (inside its buffer)
		 * and then finds the refs start past the item's end.
		 */
		if ((size_t)(end - p) < sizeof(*info))
			return extent_found_error(err, eb, slot, key,
				"item size", size,
				"invalid extent item size, padding bytes found");
		if (btrfs_stack_tree_block_level(info) >= BTRFS_MAX_LEVEL)
			return extent_found_error(err, eb, slot, key,
				"level", btrfs_stack_tree_block_level(info),
			"invalid tree block info level, have %u expect [0, %u]",
				btrfs_stack_tree_block_level(info), BTRFS_MAX_LEVEL - 1);
		p += sizeof(*info);
	}
	ret = check_inline_refs(fs_info, err, eb, slot, key, p, end, &refs);
	if (ret)
		return ret;
	if (refs > btrfs_stack_extent_refs(ei))
		return extent_found_error(err, eb, slot, key,
			"refs", btrfs_stack_extent_refs(ei),
			"invalid extent refs, have %llu expect >= inline %llu",
			(unsigned long long)btrfs_stack_extent_refs(ei),
			(unsigned long long)refs);
	return check_extent_overlap(fs_info, err, eb, slot, key, prev);
}

/*
 * The item most extent-tree leaves are made of: a data extent's
 * EXTENT_ITEM holding exactly one inline EXTENT_DATA_REF (53 bytes).
 * True when every check check_extent_item() makes of such an item passes,
 * decided in one pass over its fields; false for any other item and for
 * every failure, which check_extent_item() then finds and reports in its
 * own words.  The per-field calls, the inline-ref loop and its switches
 * were half the leaf checks of a large extent tree (12 ns an item).
 */
/*
 * What plain_data_extent_ok() compares with, taken from fs_info once a
 * leaf: in the loop the compiler must load them again for every item, as
 * the loop's stores (note_other_slot()) might change them.
 */
/* An EXTENT_ITEM with one inline EXTENT_DATA_REF: 24 + 1 + 28 bytes */
#define BTRFS_PLAIN_DATA_EXTENT_SIZE	(sizeof(struct btrfs_extent_item) + 1 + \
					 sizeof(struct btrfs_extent_data_ref))

struct plain_extent_limits {
	u64 mask;			/* sectorsize - 1 */
	u64 max_generation;		/* the superblock's generation + 1 */
	u32 nodesize;
};

/*
 * The fields of a plain data extent item at @ptr (its size checked by the
 * caller), with the key's alignment: every check but the overlap with the
 * item before it
 */
static inline bool plain_data_extent_fields_ok(const struct plain_extent_limits *lim,
					       const u8 *ptr, u64 objectid, u64 offset)
{
	const struct btrfs_extent_item *ei = (const void *)ptr;
	const struct btrfs_extent_inline_ref *iref = (const void *)(ei + 1);
	const struct btrfs_extent_data_ref *dref = (const void *)(ptr + sizeof(*ei) + 1);
	const u64 kinds = BTRFS_EXTENT_FLAG_DATA | BTRFS_EXTENT_FLAG_TREE_BLOCK |
			  BTRFS_BLOCK_FLAG_FULL_BACKREF;
	u64 ino;
	u32 count;

	if (btrfs_stack_extent_inline_ref_type(iref) != BTRFS_EXTENT_DATA_REF_KEY ||
	    (btrfs_stack_extent_flags(ei) & kinds) != BTRFS_EXTENT_FLAG_DATA ||
	    btrfs_stack_extent_generation(ei) > lim->max_generation ||
	    ((objectid | offset | btrfs_stack_extent_data_ref_offset(dref)) & lim->mask))
		return false;
	ino = btrfs_stack_extent_data_ref_objectid(dref);
	count = btrfs_stack_extent_data_ref_count(dref);
	return is_valid_dref_root(btrfs_stack_extent_data_ref_root(dref)) &&
	       ino - BTRFS_FIRST_FREE_OBJECTID <=
			BTRFS_LAST_FREE_OBJECTID - BTRFS_FIRST_FREE_OBJECTID &&
	       (u64)count - 1 < btrfs_stack_extent_refs(ei);	/* 1 <= count <= refs */
}

static inline bool plain_data_extent_ok(const struct plain_extent_limits *lim,
					const u8 *ptr, u32 item_size,
					const struct btrfs_key key,
					const struct btrfs_key prev)
{
	u64 prev_end;

	if (item_size != BTRFS_PLAIN_DATA_EXTENT_SIZE ||
	    !plain_data_extent_fields_ok(lim, ptr, key.objectid, key.offset))
		return false;
	/* check_extent_overlap() */
	if (prev.type == BTRFS_EXTENT_ITEM_KEY)
		prev_end = prev.objectid + prev.offset;
	else if (prev.type == BTRFS_METADATA_ITEM_KEY)
		prev_end = prev.objectid + lim->nodesize;
	else
		return true;
	return prev_end <= key.objectid;
}

/* An item's data offset and size, side by side on disk, read as one: size << 32 | offset */
static inline u64 item_place(const struct btrfs_item *item)
{
	__le64 v;

	static_assert(offsetof(struct btrfs_item, size) ==
		      offsetof(struct btrfs_item, offset) + sizeof(item->offset),
		      "item size follows item offset");
	memcpy(&v, (const u8 *)item + offsetof(struct btrfs_item, offset), sizeof(v));
	return le64toh(v);
}

/*
 * A run of plain data extent items from @slot on, each after another one
 * (@prev, an EXTENT_ITEM key, is slot - 1's): the slot where the run ends,
 * with @prev and @expected_end moved to the slot before it.  Each slot
 * taken passes every check check_leaf_slot() makes of it, in a loop that
 * knows the previous key's type and the item's size: its key above the
 * previous one and past its extent (pobj < obj and pobj + poff <= obj:
 * the key order and check_extent_overlap()), its data right below the
 * previous item's and above the item headers, its fields
 * (plain_data_extent_fields_ok()).  The slot where any of that fails
 * goes to check_leaf_slot(), which checks it in the kernel's order and
 * words.  The extent items of a large extent tree were 67 instructions
 * each in check_leaf_slot(); here 42 (callgrind, a warm inspect of 3 TiB):
 * the item's data followed by a pointer and the previous extent's end
 * kept, where recomputing both from the place and the previous key was 45.
 */
static __attribute__((noinline)) u32 plain_data_extent_run(const struct plain_extent_limits *lim,
				 const struct btrfs_tree_block *eb, u32 slot,
				 struct btrfs_key *prev, u32 *expected_end)
{
	const u32 item_size = BTRFS_PLAIN_DATA_EXTENT_SIZE;
	const u32 header_size = sizeof(struct btrfs_item);
	const u8 *data = eb->data + sizeof(struct btrfs_header);
	u64 pobj = prev->objectid, poff = prev->offset;
	u32 end = *expected_end, last = eb->nritems;

	/*
	 * The k-th slot of the run (from 1) has its data at end - k *
	 * item_size, above its header's end (slot + k) * header_size while
	 * k <= (end - slot * header_size) / (item_size + header_size): the
	 * run stops there, and check_leaf_slot() reports the overlap.
	 */
	const struct btrfs_item *item, *stop;
	const u8 *ptr;
	u64 place, pend;

	if ((u64)slot * header_size > end)
		return slot;
	last = min_t(u32, last, slot + (end - slot * header_size) / (item_size + header_size));
	stop = (const struct btrfs_item *)data + last;
	/* the place item_place() reads when the item's data is where it must be */
	place = (u64)item_size << 32 | end;
	ptr = data + end;
	pend = pobj + poff;
	for (item = (const struct btrfs_item *)data + slot; item < stop; item++) {
		const u64 obj = btrfs_disk_key_objectid(&item->key);
		const u64 koff = btrfs_disk_key_offset(&item->key);

		place -= item_size;
		ptr -= item_size;
		if (item->key.type != BTRFS_EXTENT_ITEM_KEY || item_place(item) != place ||
		    obj <= pobj || pend > obj ||
		    !plain_data_extent_fields_ok(lim, ptr, obj, koff))
			break;
		pobj = obj;
		pend = obj + koff;
	}
	if (item > (const struct btrfs_item *)data + slot)
		poff = btrfs_disk_key_offset(&item[-1].key);
	end = (u32)place + (item < stop ? item_size : 0);
	slot = item - (const struct btrfs_item *)data;
	prev->objectid = pobj;
	prev->offset = poff;
	*expected_end = end;
	return slot;
}

/*
 * The fs-tree items: inodes, directory entries, back references, file
 * extents.  Their messages name the inode (dir_item_err(),
 * file_extent_err()) between the slot and the comma; @key is the key of
 * the slot reported.
 */
#define dir_item_error_at(err, loc, eb, slot, key, fmt, ...)		\
	btrfs_record_error_at(err, -EUCLEAN, (loc),			\
		"corrupt leaf: root=%llu block=%llu slot=%d ino=%llu, " fmt,	\
		(unsigned long long)(eb)->owner,			\
		(unsigned long long)(eb)->start, (slot),		\
		(unsigned long long)(key)->objectid,			\
		##__VA_ARGS__)
#define dir_item_error(...)		keyed_error(dir_item, __VA_ARGS__)
#define dir_item_found_error(...)	keyed_found_error(dir_item, __VA_ARGS__)
#define dir_item_value_error(...)	keyed_value_error(dir_item, __VA_ARGS__)

#define file_extent_error_at(err, loc, eb, slot, key, fmt, ...)		\
	btrfs_record_error_at(err, -EUCLEAN, (loc),			\
		"corrupt leaf: root=%llu block=%llu slot=%d ino=%llu file_offset=%llu, " fmt,	\
		(unsigned long long)(eb)->owner,			\
		(unsigned long long)(eb)->start, (slot),		\
		(unsigned long long)(key)->objectid,			\
		(unsigned long long)(key)->offset,			\
		##__VA_ARGS__)
#define file_extent_error(...)		keyed_error(file_extent, __VA_ARGS__)
#define file_extent_found_error(...)	keyed_found_error(file_extent, __VA_ARGS__)
#define file_extent_value_error(...)	keyed_value_error(file_extent, __VA_ARGS__)

/* An item's offset in the block, as the kernel prints pointers into a leaf */
static unsigned long item_block_offset(const struct btrfs_tree_block *eb, int slot)
{
	return sizeof(struct btrfs_header) + btrfs_raw_item_offset(btrfs_item_nr(eb, slot));
}

/*
 * A little-endian u16 at block offset @off.  The kernel's accessors stay
 * inside the extent buffer and give 0 for a field past its end; bytes
 * past the item but inside the block are read as they are.
 */
static u16 block_le16(const struct btrfs_tree_block *eb, unsigned long off)
{
	__le16 v;

	if (off + sizeof(v) > eb->len)
		return 0;
	memcpy(&v, eb->data + off, sizeof(v));
	return le16toh(v);
}

/*
 * check_prev_ino(): in a subvolume tree every item of an inode follows
 * another item of the same inode (at least its INODE_ITEM).  Log and
 * reloc trees do not keep that order, nor do the other trees.
 */
static int check_prev_ino(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			  const struct btrfs_tree_block *eb, int slot,
			  const struct btrfs_key *key, const struct btrfs_key *prev)
{
	if (slot == 0 || !is_fstree(eb->owner) || key->objectid == prev->objectid)
		return 0;
	return dir_item_value_error(err, eb, slot, key,
		"key.objectid", prev->objectid, key->objectid,
			"invalid previous key objectid, have %llu expect %llu",
		(unsigned long long)prev->objectid,
		(unsigned long long)key->objectid);
}

/*
 * check_inode_key(): the key of an INODE_ITEM, or the location key of a
 * directory entry pointing to an inode (@item_key is the slot's key).
 * An xattr's location must be all zero; there the kernel prints no
 * tree-checker line (only "read time tree block corruption detected"), so
 * that message is this tool's own.
 */
static int check_inode_key(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   const struct btrfs_tree_block *eb, int slot,
			   const struct btrfs_key *item_key,
			   const struct btrfs_key *key)
{
	bool is_inode_item = item_key->type == BTRFS_INODE_ITEM_KEY;

	if (item_key->type == BTRFS_XATTR_ITEM_KEY) {
		if (key->objectid || key->type || key->offset)
			return dir_item_found_error(err, eb, slot, item_key,
				"location.objectid", key->objectid,
			"invalid location key for xattr, have (%llu %u %llu) expect (0 0 0)",
				(unsigned long long)key->objectid, key->type,
				(unsigned long long)key->offset);
		return 0;
	}
	if ((key->objectid < BTRFS_FIRST_FREE_OBJECTID ||
	     key->objectid > BTRFS_LAST_FREE_OBJECTID) &&
	    key->objectid != BTRFS_ROOT_TREE_DIR_OBJECTID &&
	    key->objectid != BTRFS_FREE_INO_OBJECTID) {
		if (is_inode_item)
			return leaf_found_error(err, eb, slot,
				"key.objectid", key->objectid,
			"invalid key objectid: has %llu expect %llu or [%llu, %llu] or %llu",
				(unsigned long long)key->objectid,
				(unsigned long long)BTRFS_ROOT_TREE_DIR_OBJECTID,
				(unsigned long long)BTRFS_FIRST_FREE_OBJECTID,
				(unsigned long long)BTRFS_LAST_FREE_OBJECTID,
				(unsigned long long)BTRFS_FREE_INO_OBJECTID);
		return dir_item_found_error(err, eb, slot, item_key,
			"location.objectid", key->objectid,
			"invalid location key objectid: has %llu expect %llu or [%llu, %llu] or %llu",
			(unsigned long long)key->objectid,
			(unsigned long long)BTRFS_ROOT_TREE_DIR_OBJECTID,
			(unsigned long long)BTRFS_FIRST_FREE_OBJECTID,
			(unsigned long long)BTRFS_LAST_FREE_OBJECTID,
			(unsigned long long)BTRFS_FREE_INO_OBJECTID);
	}
	if (key->offset) {
		if (is_inode_item)
			return dir_item_value_error(err, eb, slot, item_key,
				"key.offset", key->offset, 0,
			"invalid key offset: has %llu expect 0",
				(unsigned long long)key->offset);
		return dir_item_value_error(err, eb, slot, item_key,
			"location.offset", key->offset, 0,
			"invalid location key offset:has %llu expect 0",
			(unsigned long long)key->offset);
	}
	return 0;
}

/*
 * The location-key half of the kernel's check_root_key(): a directory
 * entry may point to a subvolume (ROOT_ITEM) but to no other tree.
 */
static int check_location_root_key(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				   const struct btrfs_tree_block *eb, int slot,
				   const struct btrfs_key *item_key,
				   const struct btrfs_key *key)
{
	if (key->objectid == 0)
		return dir_item_found_error(err, eb, slot, item_key,
			"location.objectid", 0,
			"invalid location key root id 0");
	if (!is_fstree(key->objectid))
		return dir_item_found_error(err, eb, slot, item_key,
			"location.objectid", key->objectid,
			"invalid location key objectid, have %llu expect [%llu, %llu]",
			(unsigned long long)key->objectid,
			(unsigned long long)BTRFS_FIRST_FREE_OBJECTID,
			(unsigned long long)BTRFS_LAST_FREE_OBJECTID);
	return 0;
}

static int check_dir_location(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			      const struct btrfs_tree_block *eb, int slot,
			      const struct btrfs_key *key,
			      const struct btrfs_dir_item *di)
{
	struct btrfs_key loc;

	btrfs_disk_key_to_cpu(&loc, &di->location);
	if (loc.type == BTRFS_ROOT_ITEM_KEY)
		return check_location_root_key(fs_info, err, eb, slot, key, &loc);
	if (loc.type == BTRFS_INODE_ITEM_KEY || loc.type == 0)
		return check_inode_key(fs_info, err, eb, slot, key, &loc);
	return dir_item_found_error(err, eb, slot, key,
		"location.type", loc.type,
			"invalid location key type, have %u, expect %u or %u",
		loc.type, BTRFS_ROOT_ITEM_KEY, BTRFS_INODE_ITEM_KEY);
}

/* The type of one entry against the key type; 0 (UNKNOWN) is refused since 6.11 */
static int check_dir_type(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			  const struct btrfs_tree_block *eb, int slot,
			  const struct btrfs_key *key, u8 dir_type)
{
	if (dir_type <= BTRFS_FT_UNKNOWN || dir_type >= BTRFS_FT_MAX)
		return dir_item_found_error(err, eb, slot, key,
			"type", dir_type,
			"invalid dir item type, have %u expect (0, %u)",
			dir_type, BTRFS_FT_MAX);
	if (key->type == BTRFS_XATTR_ITEM_KEY && dir_type != BTRFS_FT_XATTR)
		return dir_item_value_error(err, eb, slot, key,
			"type", dir_type, BTRFS_FT_XATTR,
			"invalid dir item type for XATTR key, have %u expect %u",
			dir_type, BTRFS_FT_XATTR);
	if (dir_type == BTRFS_FT_XATTR && key->type != BTRFS_XATTR_ITEM_KEY)
		return dir_item_found_error(err, eb, slot, key,
			"type", dir_type,
			"xattr dir type found for non-XATTR key");
	return 0;
}

/*
 * One entry at @cur of an item of @item_size bytes; its whole size goes
 * to @total.  Name and data lengths are checked before the entry's end,
 * so the name read for the hash lies inside the item.
 */
static int check_dir_entry(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   const struct btrfs_tree_block *eb, int slot,
			   const struct btrfs_key *key, const u8 *item,
			   u32 cur, u32 item_size, u32 *total)
{
	const struct btrfs_dir_item *di = (const void *)(item + cur);
	const u32 max_size = btrfs_max_item_size(fs_info->nodesize) - sizeof(*di);
	u32 name_len, data_len, max_name_len;
	u8 dir_type;
	int ret;

	if ((u64)cur + sizeof(*di) > item_size)
		return dir_item_found_error(err, eb, slot, key,
			"item size", item_size,
			"dir item header crosses item boundary, have %zu boundary %u",
			cur + sizeof(*di), item_size);
	ret = check_dir_location(fs_info, err, eb, slot, key, di);
	if (ret)
		return ret;
	dir_type = btrfs_stack_dir_ftype(di);
	ret = check_dir_type(fs_info, err, eb, slot, key, dir_type);
	if (ret)
		return ret;
	max_name_len = dir_type == BTRFS_FT_XATTR ? BTRFS_XATTR_NAME_MAX : BTRFS_NAME_LEN;
	name_len = btrfs_stack_dir_name_len(di);
	data_len = btrfs_stack_dir_data_len(di);
	if (name_len > max_name_len)
		return dir_item_found_error(err, eb, slot, key,
			"name_len", name_len,
			"dir item name len too long, have %u max %u",
			name_len, max_name_len);
	if (name_len + data_len > max_size)
		return dir_item_found_error(err, eb, slot, key,
			"name_len", name_len + data_len,
			"dir item name and data len too long, have %u max %u",
			name_len + data_len, max_size);
	if (data_len && dir_type != BTRFS_FT_XATTR)
		return dir_item_value_error(err, eb, slot, key,
			"data_len", data_len, 0,
			"dir item with invalid data len, have %u expect 0", data_len);
	*total = sizeof(*di) + name_len + data_len;
	if (cur + *total > item_size)
		return dir_item_found_error(err, eb, slot, key,
			"item size", item_size,
			"dir item data crosses item boundary, have %u boundary %u",
			cur + *total, item_size);
	/* DIR_INDEX is keyed by the index; the others by the name's hash */
	if (key->type != BTRFS_DIR_INDEX_KEY) {
		u32 hash = btrfs_name_hash((const char *)(di + 1), name_len);

		if (key->offset != hash)
			return dir_item_value_error(err, eb, slot, key,
				"key.offset", key->offset, hash,
			"name hash mismatch with key, have 0x%016x expect 0x%016llx",
				hash, (unsigned long long)key->offset);
	}
	return 0;
}

/* check_dir_item(): DIR_ITEM, DIR_INDEX and XATTR_ITEM, entry by entry */
static int check_dir_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			  const struct btrfs_tree_block *eb, int slot,
			  const struct btrfs_key *key, const struct btrfs_key *prev)
{
	const u8 *item;
	u32 item_size, cur = 0;
	int ret;

	ret = check_prev_ino(fs_info, err, eb, slot, key, prev);
	if (ret)
		return ret;
	item = btrfs_item_ptr(eb, slot, &item_size);
	while (cur < item_size) {
		u32 total = 0;

		ret = check_dir_entry(fs_info, err, eb, slot, key, item, cur,
				      item_size, &total);
		if (ret)
			return ret;
		cur += total;
	}
	return 0;
}

/*
 * The file type bits: FIFO, CHR, DIR and REG are one bit each, BLK, LNK
 * and SOCK the only valid combinations.
 */
static bool inode_mode_type_valid(u32 mode)
{
	u32 fmt = mode & BTRFS_S_IFMT;

	if (fmt && !(fmt & (fmt - 1)))
		return true;
	return fmt == BTRFS_S_IFLNK || fmt == BTRFS_S_IFBLK || fmt == BTRFS_S_IFSOCK;
}

/*
 * check_inode_item().  Size and nbytes are not checked (nor by the
 * kernel).  Unknown read-only-compat flags are refused only on a
 * writeable mount, so not here: this tool reads as a read-only mount does.
 */
static int check_inode_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    const struct btrfs_tree_block *eb, int slot,
			    const struct btrfs_key *key)
{
	const u64 max_gen = fs_info->generation + 1;
	const u32 valid_mask = BTRFS_S_IFMT | 07777;
	const struct btrfs_inode_item *ii;
	u32 size, mode, flags;
	int ret;

	ret = check_inode_key(fs_info, err, eb, slot, key, key);
	if (ret)
		return ret;
	ii = btrfs_item_ptr(eb, slot, &size);
	if (size != sizeof(*ii))
		return leaf_value_error(err, eb, slot,
			"item size", size, sizeof(*ii),
			"invalid item size: has %u expect %zu", size, sizeof(*ii));
	if (btrfs_stack_inode_generation(ii) > max_gen)
		return dir_item_found_error(err, eb, slot, key,
			"generation", btrfs_stack_inode_generation(ii),
			"invalid inode generation: has %llu expect (0, %llu]",
			(unsigned long long)btrfs_stack_inode_generation(ii),
			(unsigned long long)max_gen);
	/* mkfs may leave the root tree dir's transid 0 */
	if (btrfs_stack_inode_transid(ii) > max_gen)
		return dir_item_found_error(err, eb, slot, key,
			"transid", btrfs_stack_inode_transid(ii),
			"invalid inode transid: has %llu expect [0, %llu]",
			(unsigned long long)btrfs_stack_inode_transid(ii),
			(unsigned long long)max_gen);
	mode = btrfs_stack_inode_mode(ii);
	if (mode & ~valid_mask)
		return dir_item_found_error(err, eb, slot, key,
			"mode", mode,
			"unknown mode bit detected: 0x%x", mode & ~valid_mask);
	if (!inode_mode_type_valid(mode))
		return dir_item_found_error(err, eb, slot, key,
			"mode", mode,
			"invalid mode: has 0%o expect valid S_IF* bit(s)",
			mode & BTRFS_S_IFMT);
	if (btrfs_mode_is(mode, BTRFS_S_IFDIR) && btrfs_stack_inode_nlink(ii) > 1)
		return dir_item_found_error(err, eb, slot, key,
			"nlink", btrfs_stack_inode_nlink(ii),
			"invalid nlink: has %u expect no more than 1 for dir",
			btrfs_stack_inode_nlink(ii));
	flags = (u32)btrfs_stack_inode_flags(ii);
	if (flags & ~BTRFS_INODE_FLAG_MASK)
		return dir_item_found_error(err, eb, slot, key,
			"flags", flags,
			"unknown incompat flags detected: 0x%x", flags);
	return 0;
}

/*
 * check_inode_ref(): entries of a u64 index, a u16 name length and the
 * name.  The kernel's first bound is sizeof() of a pointer (8 bytes), not
 * of the entry (10), and its message prints that 8; reproduced.
 */
static int check_inode_ref(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   const struct btrfs_tree_block *eb, int slot,
			   const struct btrfs_key *key, const struct btrfs_key *prev)
{
	const size_t ptr_size = 8;
	unsigned long ptr, end;
	u32 size;
	int ret;

	ret = check_prev_ino(fs_info, err, eb, slot, key, prev);
	if (ret)
		return ret;
	btrfs_item_ptr(eb, slot, &size);
	/* A name is never empty, so a bare header is too small */
	if (size <= sizeof(struct btrfs_inode_ref))
		return dir_item_found_error(err, eb, slot, key, "item size", size,
			"invalid item size, have %u expect (%zu, %u)",
			size, sizeof(struct btrfs_inode_ref),
			btrfs_leaf_data_size(fs_info->nodesize));
	ptr = item_block_offset(eb, slot);
	end = ptr + size;
	while (ptr < end) {
		u16 namelen;

		if (ptr + ptr_size > end)
			return dir_item_error(err, eb, slot, key,
				"inode ref overflow, ptr %lu end %lu inode_ref_size %zu",
				ptr, end, ptr_size);
		namelen = block_le16(eb, ptr + offsetof(struct btrfs_inode_ref, name_len));
		if (ptr + sizeof(struct btrfs_inode_ref) + namelen > end)
			return dir_item_error(err, eb, slot, key,
				"inode ref overflow, ptr %lu end %lu namelen %u",
				ptr, end, namelen);
		ptr += sizeof(struct btrfs_inode_ref) + namelen;
	}
	return 0;
}

/* check_inode_extref(), new in 6.18: the same walk over extended refs */
static int check_inode_extref(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			      const struct btrfs_tree_block *eb, int slot,
			      const struct btrfs_key *key, const struct btrfs_key *prev)
{
	const size_t head = sizeof(struct btrfs_inode_extref);
	unsigned long ptr, end;
	u32 size;
	int ret;

	ret = check_prev_ino(fs_info, err, eb, slot, key, prev);
	if (ret)
		return ret;
	btrfs_item_ptr(eb, slot, &size);
	ptr = item_block_offset(eb, slot);
	end = ptr + size;
	while (ptr < end) {
		u16 namelen;

		if (ptr + head > end)
			return dir_item_error(err, eb, slot, key,
				"inode extref overflow, ptr %lu end %lu inode_extref size %zu",
				ptr, end, head);
		namelen = block_le16(eb, ptr + offsetof(struct btrfs_inode_extref, name_len));
		if (ptr + head + namelen > end)
			return dir_item_error(err, eb, slot, key,
				"inode extref overflow, ptr %lu end %lu namelen %u",
				ptr, end, namelen);
		ptr += head + namelen;
	}
	return 0;
}

/*
 * file_extent_end(): an inline extent covers its ram_bytes rounded up to
 * a sector (wrapping as the kernel's ALIGN() does), the others num_bytes.
 */
static u64 file_extent_end(const struct btrfs_fs_info *fs_info,
			   const struct btrfs_key *key,
			   const struct btrfs_file_extent_item *fi)
{
	const u64 mask = (u64)fs_info->sectorsize - 1;

	if (btrfs_stack_file_extent_type(fi) == BTRFS_FILE_EXTENT_INLINE)
		return (key->offset + btrfs_stack_file_extent_ram_bytes(fi) + mask) & ~mask;
	return key->offset + btrfs_stack_file_extent_num_bytes(fi);
}

/* CHECK_FE_ALIGNED() */
static int check_fe_aligned(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    const struct btrfs_tree_block *eb, int slot,
			    const struct btrfs_key *key, const char *name, u64 value)
{
	if (sector_aligned(fs_info, value))
		return 0;
	return file_extent_found_error(err, eb, slot, key,
		name, value,
			"invalid %s for file extent, have %llu, should be aligned to %u",
		name, (unsigned long long)value, fs_info->sectorsize);
}

/* A regular or preallocated extent: every byte count on sector boundaries */
static int check_reg_file_extent(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				 const struct btrfs_tree_block *eb, int slot,
				 const struct btrfs_key *key,
				 const struct btrfs_file_extent_item *fi)
{
	u64 end;

	if (check_fe_aligned(fs_info, err, eb, slot, key, "ram_bytes",
			     btrfs_stack_file_extent_ram_bytes(fi)) ||
	    check_fe_aligned(fs_info, err, eb, slot, key, "disk_bytenr",
			     btrfs_stack_file_extent_disk_bytenr(fi)) ||
	    check_fe_aligned(fs_info, err, eb, slot, key, "disk_num_bytes",
			     btrfs_stack_file_extent_disk_num_bytes(fi)) ||
	    check_fe_aligned(fs_info, err, eb, slot, key, "offset",
			     btrfs_stack_file_extent_offset(fi)) ||
	    check_fe_aligned(fs_info, err, eb, slot, key, "num_bytes",
			     btrfs_stack_file_extent_num_bytes(fi)))
		return -EUCLEAN;
	if (__builtin_add_overflow(btrfs_stack_file_extent_num_bytes(fi),
				   key->offset, &end))
		return file_extent_found_error(err, eb, slot, key,
			"num_bytes", btrfs_stack_file_extent_num_bytes(fi),
			"extent end overflow, have file offset %llu extent num bytes %llu",
			(unsigned long long)key->offset,
			(unsigned long long)btrfs_stack_file_extent_num_bytes(fi));
	return 0;
}

/*
 * Two file extents of one inode in one leaf must not overlap; the kernel
 * reports it at the previous slot, which passed this same check.
 */
static int check_file_extent_overlap(struct btrfs_fs_info *fs_info,
				     struct btrfs_error *err,
				     const struct btrfs_tree_block *eb, int slot,
				     const struct btrfs_key *key,
				     const struct btrfs_key *prev)
{
	const struct btrfs_file_extent_item *prev_fi;
	u64 prev_end;
	u32 size;

	if (slot == 0 || prev->objectid != key->objectid ||
	    prev->type != BTRFS_EXTENT_DATA_KEY)
		return 0;
	prev_fi = btrfs_item_ptr(eb, slot - 1, &size);
	prev_end = file_extent_end(fs_info, prev, prev_fi);
	if (prev_end > key->offset)
		return file_extent_found_error(err, eb, slot - 1, prev,
			"extent end", prev_end,
			"file extent end range (%llu) goes beyond start offset (%llu) of the next file extent",
			(unsigned long long)prev_end, (unsigned long long)key->offset);
	return 0;
}

/* An inline extent starts the file; uncompressed, its data fills the item */
static int check_inline_file_extent(struct btrfs_fs_info *fs_info,
				    struct btrfs_error *err,
				    const struct btrfs_tree_block *eb, int slot,
				    const struct btrfs_key *key,
				    const struct btrfs_file_extent_item *fi, u32 size)
{
	const u64 expect = BTRFS_FILE_EXTENT_INLINE_DATA_START +
			   btrfs_stack_file_extent_ram_bytes(fi);

	if (key->offset)
		return file_extent_value_error(err, eb, slot, key,
			"key.offset", key->offset, 0,
			"invalid file_offset for inline file extent, have %llu expect 0",
			(unsigned long long)key->offset);
	if (btrfs_stack_file_extent_compression(fi) != BTRFS_COMPRESS_NONE)
		return 0;
	if (size != expect)
		return file_extent_value_error(err, eb, slot, key,
			"item size", size, expect,
			"invalid ram_bytes for uncompressed inline extent, have %u expect %llu",
			size, (unsigned long long)expect);
	return 0;
}

/* check_extent_data_item(): EXTENT_DATA */
static int check_extent_data_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				  const struct btrfs_tree_block *eb, int slot,
				  const struct btrfs_key *key,
				  const struct btrfs_key *prev)
{
	const struct btrfs_file_extent_item *fi;
	u32 size;
	int ret;

	if (!sector_aligned(fs_info, key->offset))
		return file_extent_found_error(err, eb, slot, key,
			"key.offset", key->offset,
			"unaligned file_offset for file extent, have %llu should be aligned to %u",
			(unsigned long long)key->offset, fs_info->sectorsize);
	ret = check_prev_ino(fs_info, err, eb, slot, key, prev);
	if (ret)
		return ret;
	fi = btrfs_item_ptr(eb, slot, &size);
	/* The kernel's upper bound in this message is a fixed 4 KiB */
	if (size < BTRFS_FILE_EXTENT_INLINE_DATA_START)
		return file_extent_found_error(err, eb, slot, key, "item size", size,
			"invalid item size, have %u expect [%zu, %u)",
			size, BTRFS_FILE_EXTENT_INLINE_DATA_START, 4096U);
	if (btrfs_stack_file_extent_type(fi) >= BTRFS_NR_FILE_EXTENT_TYPES)
		return file_extent_found_error(err, eb, slot, key,
			"type", btrfs_stack_file_extent_type(fi),
			"invalid type for file extent, have %u expect range [0, %u]",
			btrfs_stack_file_extent_type(fi), BTRFS_NR_FILE_EXTENT_TYPES - 1);
	if (btrfs_stack_file_extent_compression(fi) >= BTRFS_NR_COMPRESS_TYPES)
		return file_extent_found_error(err, eb, slot, key,
			"compression", btrfs_stack_file_extent_compression(fi),
			"invalid compression for file extent, have %u expect range [0, %u]",
			btrfs_stack_file_extent_compression(fi), BTRFS_NR_COMPRESS_TYPES - 1);
	if (btrfs_stack_file_extent_encryption(fi))
		return file_extent_value_error(err, eb, slot, key,
			"encryption", btrfs_stack_file_extent_encryption(fi), 0,
			"invalid encryption for file extent, have %u expect 0",
			btrfs_stack_file_extent_encryption(fi));
	if (btrfs_stack_file_extent_type(fi) == BTRFS_FILE_EXTENT_INLINE)
		return check_inline_file_extent(fs_info, err, eb, slot, key, fi, size);
	if (size != sizeof(*fi))
		return file_extent_value_error(err, eb, slot, key,
			"item size", size, sizeof(*fi),
			"invalid item size for reg/prealloc file extent, have %u expect %zu",
			size, sizeof(*fi));
	ret = check_reg_file_extent(fs_info, err, eb, slot, key, fi);
	if (ret)
		return ret;
	return check_file_extent_overlap(fs_info, err, eb, slot, key, prev);
}

/*
 * check_csum_item(): one checksum per sector from key.offset; the ranges
 * of two items in a leaf must not overlap (reported at the previous one).
 */
static int check_csum_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   const struct btrfs_tree_block *eb, int slot,
			   const struct btrfs_key *key, const struct btrfs_key *prev)
{
	const u32 csum_size = fs_info->csum_size;
	u32 size, prev_size;
	u64 prev_end;

	if (key->objectid != BTRFS_EXTENT_CSUM_OBJECTID)
		return leaf_value_error(err, eb, slot,
			"key.objectid", key->objectid, BTRFS_EXTENT_CSUM_OBJECTID,
			"invalid key objectid for csum item, have %llu expect %llu",
			(unsigned long long)key->objectid,
			(unsigned long long)BTRFS_EXTENT_CSUM_OBJECTID);
	if (!sector_aligned(fs_info, key->offset))
		return leaf_found_error(err, eb, slot,
			"key.offset", key->offset,
			"unaligned key offset for csum item, have %llu should be aligned to %u",
			(unsigned long long)key->offset, fs_info->sectorsize);
	btrfs_item_ptr(eb, slot, &size);
	/* The superblock check ruled out an unknown (sizeless) csum type */
	if (!csum_size)
		return 0;
	if (size % csum_size)
		return leaf_found_error(err, eb, slot,
			"item size", size,
			"unaligned item size for csum item, have %u should be aligned to %u",
			size, csum_size);
	if (slot == 0 || prev->type != BTRFS_EXTENT_CSUM_KEY)
		return 0;
	btrfs_item_ptr(eb, slot - 1, &prev_size);
	prev_end = prev->offset + (u64)(prev_size / csum_size) * fs_info->sectorsize;
	if (prev_end > key->offset)
		return leaf_found_error(err, eb, slot - 1,
			"csum end", prev_end,
			"csum end range (%llu) goes beyond the start range (%llu) of the next csum item",
			(unsigned long long)prev_end, (unsigned long long)key->offset);
	return 0;
}

/*
 * check_simple_keyed_refs(): TREE_BLOCK_REF and SHARED_BLOCK_REF carry no
 * data, SHARED_DATA_REF a count.  The kernel reads that count before the
 * size check (inside its buffer); here a count past the block reads as 0,
 * as the kernel's bounded accessor returns.
 */
static int check_simple_keyed_refs(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				   const struct btrfs_tree_block *eb, int slot,
				   const struct btrfs_key *key)
{
	u32 expect = 0, size;

	btrfs_item_ptr(eb, slot, &size);
	if (key->type == BTRFS_SHARED_DATA_REF_KEY) {
		unsigned long off = item_block_offset(eb, slot);
		__le32 count = 0;

		if (off + sizeof(count) <= eb->len)
			memcpy(&count, eb->data + off, sizeof(count));
		if (!count)
			return extent_found_error(err, eb, slot, key,
				"count", 0,
			"invalid shared data backref count, should have non-zero value");
		expect = sizeof(struct btrfs_shared_data_ref);
	}
	if (size != expect)
		return leaf_value_error(err, eb, slot,
			"item size", size, expect,
			"invalid item size, have %u expect %u for key type %u",
			size, expect, key->type);
	if (!sector_aligned(fs_info, key->objectid))
		return leaf_found_error(err, eb, slot,
			"key.objectid", key->objectid,
			"invalid key objectid for shared block ref, have %llu expect aligned to %u",
			(unsigned long long)key->objectid, fs_info->sectorsize);
	if (key->type != BTRFS_TREE_BLOCK_REF_KEY && !sector_aligned(fs_info, key->offset))
		return extent_found_error(err, eb, slot, key, "key.offset", key->offset,
			"invalid tree parent bytenr, have %llu expect aligned to %u",
			(unsigned long long)key->offset, fs_info->sectorsize);
	return 0;
}

/*
 * One keyed data ref.  Its hash (the key offset) is not checked: hash
 * collisions move refs to other keys.  6.18 prints the root in the
 * objectid message (fixed after 6.18); the line reproduces it, the error
 * record has the objectid the check read.
 */
static int check_keyed_data_ref(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				const struct btrfs_tree_block *eb, int slot,
				const struct btrfs_key *key,
				const struct btrfs_extent_data_ref *dref)
{
	u64 root = btrfs_stack_extent_data_ref_root(dref);
	u64 objectid = btrfs_stack_extent_data_ref_objectid(dref);
	u64 offset = btrfs_stack_extent_data_ref_offset(dref);

	if (!is_valid_dref_root(root))
		return extent_found_error(err, eb, slot, key,
			"root", root,
			"invalid extent data backref root value %llu",
			(unsigned long long)root);
	if (objectid < BTRFS_FIRST_FREE_OBJECTID || objectid > BTRFS_LAST_FREE_OBJECTID)
		return extent_found_error(err, eb, slot, key,
			"objectid", objectid,
			"invalid extent data backref objectid value %llu",
			(unsigned long long)root);
	if (!sector_aligned(fs_info, offset))
		return extent_found_error(err, eb, slot, key,
			"offset", offset,
			"invalid extent data backref offset, have %llu expect aligned to %u",
			(unsigned long long)offset, fs_info->sectorsize);
	if (!btrfs_stack_extent_data_ref_count(dref))
		return extent_found_error(err, eb, slot, key,
			"count", 0,
			"invalid extent data backref count, should have non-zero value");
	return 0;
}

/* check_extent_data_ref(): EXTENT_DATA_REF, an array of data refs */
static int check_extent_data_ref(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				 const struct btrfs_tree_block *eb, int slot,
				 const struct btrfs_key *key)
{
	const struct btrfs_extent_data_ref *dref;
	u32 size, i;

	dref = btrfs_item_ptr(eb, slot, &size);
	if (size % sizeof(*dref))
		return leaf_found_error(err, eb, slot,
			"item size", size,
			"invalid item size, have %u expect aligned to %zu for key type %u",
			size, sizeof(*dref), key->type);
	if (!sector_aligned(fs_info, key->objectid))
		return leaf_found_error(err, eb, slot,
			"key.objectid", key->objectid,
			"invalid key objectid for shared block ref, have %llu expect aligned to %u",
			(unsigned long long)key->objectid, fs_info->sectorsize);
	for (i = 0; i < size / sizeof(*dref); i++) {
		int ret = check_keyed_data_ref(fs_info, err, eb, slot, key, dref + i);

		if (ret)
			return ret;
	}
	return 0;
}

/* check_raid_stripe_extent(): since 6.12 the item has no encoding to check */
static int check_raid_stripe_extent(struct btrfs_fs_info *fs_info,
				    struct btrfs_error *err,
				    const struct btrfs_tree_block *eb, int slot,
				    const struct btrfs_key *key)
{
	if (!sector_aligned(fs_info, key->objectid))
		return leaf_found_error(err, eb, slot,
			"key.objectid", key->objectid,
			"invalid key objectid for raid stripe extent, have %llu expect aligned to %u",
			(unsigned long long)key->objectid, fs_info->sectorsize);
	if (!btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_RAID_STRIPE_TREE))
		return leaf_error(err, eb, slot,
			"RAID_STRIPE_EXTENT present but RAID_STRIPE_TREE incompat bit unset");
	return 0;
}

/* check_leaf_item(): the items whose contents are checked at read time */
static int check_leaf_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   const struct btrfs_tree_block *eb, int slot,
			   const struct btrfs_key *key,
			   const struct btrfs_key *prev)
{
	switch (key->type) {
	case BTRFS_EXTENT_DATA_KEY:
		return check_extent_data_item(fs_info, err, eb, slot, key, prev);
	case BTRFS_EXTENT_CSUM_KEY:
		return check_csum_item(fs_info, err, eb, slot, key, prev);
	case BTRFS_DIR_ITEM_KEY:
	case BTRFS_DIR_INDEX_KEY:
	case BTRFS_XATTR_ITEM_KEY:
		return check_dir_item(fs_info, err, eb, slot, key, prev);
	case BTRFS_INODE_REF_KEY:
		return check_inode_ref(fs_info, err, eb, slot, key, prev);
	case BTRFS_INODE_EXTREF_KEY:
		return check_inode_extref(fs_info, err, eb, slot, key, prev);
	case BTRFS_INODE_ITEM_KEY:
		return check_inode_item(fs_info, err, eb, slot, key);
	case BTRFS_TREE_BLOCK_REF_KEY:
	case BTRFS_SHARED_DATA_REF_KEY:
	case BTRFS_SHARED_BLOCK_REF_KEY:
		return check_simple_keyed_refs(fs_info, err, eb, slot, key);
	case BTRFS_EXTENT_DATA_REF_KEY:
		return check_extent_data_ref(fs_info, err, eb, slot, key);
	case BTRFS_RAID_STRIPE_KEY:
		return check_raid_stripe_extent(fs_info, err, eb, slot, key);
	case BTRFS_CHUNK_ITEM_KEY:
		return check_leaf_chunk(fs_info, err, eb, slot, key);
	case BTRFS_DEV_ITEM_KEY:
		return check_dev_item(fs_info, err, eb, slot, key);
	case BTRFS_DEV_EXTENT_KEY:
		return check_dev_extent(fs_info, err, eb, slot, key, prev);
	case BTRFS_BLOCK_GROUP_ITEM_KEY:
		return btrfs_check_block_group_item(fs_info, err, eb, slot);
	case BTRFS_ROOT_ITEM_KEY:
		return check_root_item(fs_info, err, eb, slot, key);
	case BTRFS_EXTENT_ITEM_KEY:
	case BTRFS_METADATA_ITEM_KEY:
		return check_extent_item(fs_info, err, eb, slot, key, prev);
	default:
		return 0;
	}
}

/*
 * An empty leaf is the whole of a tree (its root): the trees a filesystem
 * always has must not be empty, and owner 0 is no tree.  A reloc tree's
 * leaves carry the owner of the subvolume they copy, so they are exempt;
 * with extent-tree-v2 the extent trees may be empty.
 */
static int check_empty_leaf(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    const struct btrfs_tree_block *eb, u64 flags)
{
	const u64 owner = eb->owner;

	if (flags & BTRFS_HEADER_FLAG_RELOC)
		return 0;
	if (owner == BTRFS_ROOT_TREE_OBJECTID || owner == BTRFS_CHUNK_TREE_OBJECTID ||
	    owner == BTRFS_DEV_TREE_OBJECTID || owner == BTRFS_FS_TREE_OBJECTID ||
	    owner == BTRFS_DATA_RELOC_TREE_OBJECTID)
		return leaf_error(err, eb, 0,
			"invalid root, root %llu must never be empty",
			(unsigned long long)owner);
	if (owner == 0)
		return leaf_error(err, eb, 0, "invalid owner, root 0 is not defined");
	if (btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_EXTENT_TREE_V2))
		return 0;
	if (owner == BTRFS_EXTENT_TREE_OBJECTID)
		return leaf_error(err, eb, 0,
			"invalid root, root %llu must never be empty",
			(unsigned long long)owner);
	return 0;
}

/*
 * Items grow from the end of the block towards the item headers: item 0's
 * data ends at the end of the data area and every item's data ends where
 * the previous item's begins.  Checking exactly that (as the kernel does)
 * also proves that no item points outside the block, so the contents of
 * each item can be checked right after its bounds.  Contents are checked
 * only in a block whose header says it was written (a block caught half
 * way through a transaction need not be consistent yet).
 */
/*
 * The keys of check_leaf() go by value (the caller's stay in registers:
 * a key stored in one slot's pass and loaded in the next one's, each
 * item, was the hottest spot of the leaf checks); out of line, as only
 * corrupted blocks and the items plain_data_extent_ok() does not take
 * come here.
 */
__attribute__((noinline, cold))
static int leaf_key_order_error(struct btrfs_error *err, const struct btrfs_tree_block *eb,
				int slot, struct btrfs_key prev, struct btrfs_key key)
{
	return key_order_error(err, eb, slot, &prev, &key);
}

__attribute__((noinline))
static int check_leaf_item_keys(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				const struct btrfs_tree_block *eb, int slot,
				struct btrfs_key key, struct btrfs_key prev)
{
	return check_leaf_item(fs_info, err, eb, slot, &key, &prev);
}

/*
 * The slots plain_data_extent_ok() did not take, listed for the key-only
 * copy (extent_io.c), which keeps items of other types only: it then
 * visits these few instead of every item of the leaf again (a second pass
 * over 160,000 items, 1.9 M instructions of a warm inspect of 3 TiB).
 */
static inline void note_other_slot(struct btrfs_block_cache *cache, u32 slot)
{
	if (cache->nr_other < BTRFS_LEAF_OTHER_SLOTS)
		cache->other_slot[cache->nr_other++] = slot;
	else
		cache->other_complete = false;
}

static void start_other_slots(struct btrfs_block_cache *cache,
			      const struct btrfs_tree_block *eb, bool check_items)
{
	cache->other_data = check_items ? eb->data : NULL;
	cache->nr_other = 0;
	cache->other_complete = check_items;
}

/*
 * One item of a leaf: its key's order after @prev, where its data lies
 * and (with @check_items) its contents; *@expected_end moves to its data.
 */
static inline __attribute__((always_inline)) int
check_leaf_slot(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
		const struct btrfs_tree_block *eb, const struct plain_extent_limits *lim,
		u32 slot, struct btrfs_key *key, const struct btrfs_key *prev,
		u32 *expected_end, const bool check_items)
{
	const u8 *data = eb->data + sizeof(struct btrfs_header);
	const struct btrfs_item *item = (const struct btrfs_item *)data + slot;
	const u64 headers_end = (u64)(slot + 1) * sizeof(struct btrfs_item);
	u32 offset = btrfs_raw_item_offset(item);
	u32 size = btrfs_raw_item_size(item);
	int ret;

	btrfs_disk_key_to_cpu(key, &item->key);
	if (slot > 0 && btrfs_comp_keys(prev, key) >= 0)
		return leaf_key_order_error(err, eb, slot, *prev, *key);
	if ((u64)offset + size != *expected_end)
		return leaf_value_error(err, eb, slot,
			"item end", (u64)offset + size, *expected_end,
		"unexpected item end, have %llu expect %u",
			(unsigned long long)offset + size, *expected_end);
	if (headers_end > offset)
		return leaf_found_error(err, eb, slot,
			"offset", offset,
		"slot overlaps with its data, item data starts at %u, header ends at %zu",
			offset, (size_t)headers_end);
	*expected_end = offset;
	if (check_items &&
	    !(key->type == BTRFS_EXTENT_ITEM_KEY &&
	      plain_data_extent_ok(lim, data + offset, size, *key, *prev))) {
		ret = check_leaf_item_keys(fs_info, err, eb, slot, *key, *prev);
		if (ret)
			return ret;
		note_other_slot(&fs_info->cache, slot);
	}
	return 0;
}

/*
 * The items of a leaf, in one pass, two at a time: each pair's keys take
 * turns as the key and the one before it, so that no key is copied from
 * one item's pass to the next.  Only a leaf caught half written comes
 * here (@check_items false): keys and places, no contents; a written one
 * goes to check_written_leaf_slots().
 */
static inline __attribute__((always_inline)) int
check_leaf_slots(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
		 const struct btrfs_tree_block *eb, const bool check_items)
{
	const struct plain_extent_limits lim = {
		.mask = (u64)fs_info->sectorsize - 1,
		.max_generation = fs_info->generation + 1,
		.nodesize = fs_info->nodesize,
	};
	const u32 nritems = eb->nritems;
	struct btrfs_key even = { 0 }, odd = { 0 };	/* all zero before slot 0 */
	u32 expected_end = btrfs_leaf_data_size(eb->len);
	u32 slot;
	int ret;

	for (slot = 0; slot + 1 < nritems; slot += 2) {
		ret = check_leaf_slot(fs_info, err, eb, &lim, slot, &even, &odd,
				      &expected_end, check_items);
		if (ret)
			return ret;
		ret = check_leaf_slot(fs_info, err, eb, &lim, slot + 1, &odd, &even,
				      &expected_end, check_items);
		if (ret)
			return ret;
	}
	if (slot < nritems)
		return check_leaf_slot(fs_info, err, eb, &lim, slot, &even, &odd,
				       &expected_end, check_items);
	return 0;
}

/*
 * The items of a written leaf: runs of plain data extent items
 * (plain_data_extent_run()) and each other slot on its own.  Between runs
 * the key of the slot checked last is copied to be the one before the
 * next: a few items a leaf.
 */
static int check_written_leaf_slots(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				    const struct btrfs_tree_block *eb)
{
	const struct plain_extent_limits lim = {
		.mask = (u64)fs_info->sectorsize - 1,
		.max_generation = fs_info->generation + 1,
		.nodesize = fs_info->nodesize,
	};
	const u32 nritems = eb->nritems;
	struct btrfs_key key, prev = { 0 };	/* all zero before slot 0 */
	u32 expected_end = btrfs_leaf_data_size(eb->len);
	u32 slot = 0;
	int ret;

	while (slot < nritems) {
		if (prev.type == BTRFS_EXTENT_ITEM_KEY && slot > 0) {
			slot = plain_data_extent_run(&lim, eb, slot, &prev, &expected_end);
			if (slot == nritems)
				break;
		}
		ret = check_leaf_slot(fs_info, err, eb, &lim, slot, &key, &prev,
				      &expected_end, true);
		if (ret)
			return ret;
		prev = key;
		slot++;
	}
	return 0;
}

static int check_leaf(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
		      const struct btrfs_tree_block *eb)
{
	const u32 data_size = btrfs_leaf_data_size(eb->len);
	const u64 flags = btrfs_header_flags((const struct btrfs_header *)eb->data);
	const bool check_items = flags & BTRFS_HEADER_FLAG_WRITTEN;

	start_other_slots(&fs_info->cache, eb, check_items);
	if (eb->nritems == 0)
		return check_empty_leaf(fs_info, err, eb, flags);
	if ((u64)eb->nritems * sizeof(struct btrfs_item) > data_size)
		return leaf_found_error(err, eb, 0,
			"nritems", eb->nritems,
			"invalid nritems %u, the item headers alone need more than %u bytes",
			eb->nritems, data_size);
	return check_items ? check_written_leaf_slots(fs_info, err, eb) :
			     check_leaf_slots(fs_info, err, eb, false);
}

static int check_node(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
		      const struct btrfs_tree_block *eb)
{
	struct btrfs_key keys[2] = { 0 };	/* see check_key_order() */
	u32 slot;

	if (eb->nritems == 0 || eb->nritems > btrfs_node_max_ptrs(eb->len))
		return node_found_error(err, eb, 0,
			"nritems", eb->nritems,
			"invalid number of items, have %u expect [1, %u]",
			eb->nritems, btrfs_node_max_ptrs(eb->len));
	for (slot = 0; slot < eb->nritems; slot++) {
		u64 bytenr = btrfs_node_blockptr(eb, slot);
		int ret;

		if (!bytenr)
			return node_found_error(err, eb, slot,
				"blockptr", 0,
			"invalid NULL node pointer");
		if (!sector_aligned(fs_info, bytenr))
			return node_found_error(err, eb, slot,
				"blockptr", bytenr,
			"unaligned pointer, have %llu should be aligned to %u",
				(unsigned long long)bytenr, fs_info->sectorsize);
		ret = check_key_order(fs_info, err, eb, slot, &keys[!(slot & 1)],
				      &keys[slot & 1]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * btrfs_check_eb_owner(): a block of a subvolume tree may be shared with
 * other subvolumes (snapshots), so its owner need only be a subvolume; a
 * block of any other tree must be owned by that tree.  Log and reloc trees
 * name their owner in a key offset the caller does not have, and root 0
 * means the caller does not know the tree: those are not checked.
 */
int btrfs_check_eb_owner(struct btrfs_error *err, const struct btrfs_tree_block *eb,
			 u64 root_owner)
{
	const char *what = eb->level ? "node" : "leaf";

	if (root_owner == 0 || root_owner == BTRFS_TREE_LOG_OBJECTID ||
	    root_owner == BTRFS_TREE_RELOC_OBJECTID)
		return 0;
	if (!is_fstree(root_owner)) {
		if (eb->owner != root_owner)
			return btrfs_record_error(err, -EUCLEAN,
				"corrupted %s, root=%llu block=%llu owner mismatch, have %llu expect %llu",
				what, (unsigned long long)root_owner,
				(unsigned long long)eb->start,
				(unsigned long long)eb->owner,
				(unsigned long long)root_owner);
		return 0;
	}
	if (!is_fstree(eb->owner))
		return btrfs_record_error(err, -EUCLEAN,
			"corrupted %s, root=%llu block=%llu owner mismatch, have %llu expect [%llu, %llu]",
			what, (unsigned long long)root_owner,
			(unsigned long long)eb->start, (unsigned long long)eb->owner,
			(unsigned long long)BTRFS_FIRST_FREE_OBJECTID,
			(unsigned long long)BTRFS_LAST_FREE_OBJECTID);
	return 0;
}

int btrfs_check_tree_block(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   const struct btrfs_tree_block *eb)
{
	if (eb->level == 0)
		return check_leaf(fs_info, err, eb);
	return check_node(fs_info, err, eb);
}

/*
 * chunk_err(): a chunk item met by check_leaf() ("leaf") is reported as
 * the kernel reports it, as a leaf of the chunk tree whatever tree the
 * leaf belongs to.
 */
__attribute__ ((format (printf, 4, 5)))
static int chunk_error(struct btrfs_error *err,
		       const struct btrfs_item_location *loc, u64 logical,
		       const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!strcmp(loc->where, "leaf"))
		return btrfs_record_error(err, -EUCLEAN,
			"corrupt leaf: root=%llu block=%llu slot=%d chunk_start=%llu, %s",
			(unsigned long long)BTRFS_CHUNK_TREE_OBJECTID,
			(unsigned long long)loc->block, loc->slot,
			(unsigned long long)logical, msg);
	return btrfs_record_error(err, -EUCLEAN,
		"corrupt chunk item in %s: block=%llu slot=%d chunk_start=%llu, %s",
		loc->where, (unsigned long long)loc->block, loc->slot,
		(unsigned long long)logical, msg);
}

/*
 * The stripe count each profile allows, from its row of btrfs_raid_array as
 * btrfs_check_chunk_valid() reads it: a profile with a fixed device count
 * (devs_max) has exactly devs_max * dev_stripes stripes, the others at
 * least devs_min * dev_stripes in steps of devs_increment; a profile that
 * mirrors within stripe groups (RAID10) has its sub_stripes on disk.
 * @type has at most one profile bit (check_chunk_type()).
 */
static bool chunk_stripes_valid(u64 type, u16 num_stripes, u16 sub_stripes)
{
	const struct btrfs_raid_attr *attr =
		&btrfs_raid_array[btrfs_bg_flags_to_raid_index(type)];

	if (attr->sub_stripes > 1 && sub_stripes != attr->sub_stripes)
		return false;
	if (attr->devs_max)
		return num_stripes == attr->devs_max * attr->dev_stripes;
	return num_stripes >= attr->devs_min * attr->dev_stripes &&
	       num_stripes % attr->devs_increment == 0;
}

static int check_chunk_type(struct btrfs_fs_info *fs_info,
			    struct btrfs_error *err, u64 type, u64 logical,
			    const struct btrfs_item_location *loc)
{
	u64 profile = type & BTRFS_BLOCK_GROUP_PROFILE_MASK;

	if (type & ~(BTRFS_BLOCK_GROUP_TYPE_MASK | BTRFS_BLOCK_GROUP_PROFILE_MASK))
		return chunk_error(err, loc, logical,
			"unrecognized chunk type: 0x%llx",
			(unsigned long long)type);
	if (profile & (profile - 1))
		return chunk_error(err, loc, logical,
			"invalid chunk profile flag: 0x%llx, expect 0 or 1 bit set",
			(unsigned long long)profile);
	if (!(type & BTRFS_BLOCK_GROUP_TYPE_MASK))
		return chunk_error(err, loc, logical,
			"missing chunk type flag, have 0x%llx one bit must be set in mask 0x%llx",
			(unsigned long long)type,
			(unsigned long long)BTRFS_BLOCK_GROUP_TYPE_MASK);
	if ((type & BTRFS_BLOCK_GROUP_SYSTEM) &&
	    (type & (BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DATA)))
		return chunk_error(err, loc, logical,
			"system chunk with data or metadata type: 0x%llx",
			(unsigned long long)type);
	if ((type & BTRFS_BLOCK_GROUP_METADATA) && (type & BTRFS_BLOCK_GROUP_DATA) &&
	    !btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS))
		return chunk_error(err, loc, logical,
			"mixed chunk type in non-mixed mode: 0x%llx",
			(unsigned long long)type);
	return 0;
}

int btrfs_check_chunk_valid(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    const struct btrfs_chunk *chunk, u32 item_size,
			    u64 logical, const struct btrfs_item_location *loc)
{
	u64 length, stripe_len, type;
	u16 num_stripes, sub_stripes;

	if (item_size < offsetof(struct btrfs_chunk, stripe))
		return chunk_error(err, loc, logical,
			"invalid chunk item size, have %u expect at least %zu",
			item_size, offsetof(struct btrfs_chunk, stripe));
	num_stripes = btrfs_stack_chunk_num_stripes(chunk);
	if (!num_stripes)
		return chunk_error(err, loc, logical,
			"invalid chunk num_stripes, have %u", num_stripes);
	if (item_size != btrfs_chunk_item_size(num_stripes))
		return chunk_error(err, loc, logical,
			"invalid chunk item size, have %u expect %u for %u stripes",
			item_size, btrfs_chunk_item_size(num_stripes), num_stripes);
	length = btrfs_stack_chunk_length(chunk);
	stripe_len = btrfs_stack_chunk_stripe_len(chunk);
	type = btrfs_stack_chunk_type(chunk);
	sub_stripes = btrfs_stack_chunk_sub_stripes(chunk);
	if (!sector_aligned(fs_info, logical))
		return chunk_error(err, loc, logical,
			"invalid chunk logical, have %llu should be aligned to %u",
			(unsigned long long)logical, fs_info->sectorsize);
	if (btrfs_stack_chunk_sector_size(chunk) != fs_info->sectorsize)
		return chunk_error(err, loc, logical,
			"invalid chunk sectorsize, have %u expect %u",
			btrfs_stack_chunk_sector_size(chunk), fs_info->sectorsize);
	if (!length || !sector_aligned(fs_info, length))
		return chunk_error(err, loc, logical,
			"invalid chunk length, have %llu", (unsigned long long)length);
	if (logical + length < logical)
		return chunk_error(err, loc, logical,
			"invalid chunk logical start and length, have start=%llu length=%llu",
			(unsigned long long)logical, (unsigned long long)length);
	if (stripe_len != BTRFS_STRIPE_LEN)
		return chunk_error(err, loc, logical,
			"invalid chunk stripe length: %llu",
			(unsigned long long)stripe_len);
	if (check_chunk_type(fs_info, err, type, logical, loc))
		return -EUCLEAN;
	if (!chunk_stripes_valid(type, num_stripes, sub_stripes))
		return chunk_error(err, loc, logical,
			"invalid num_stripes:sub_stripes %u:%u for profile %s",
			num_stripes, sub_stripes, btrfs_bg_profile_name(type));
	if (length % btrfs_chunk_data_stripes(type, num_stripes))
		return chunk_error(err, loc, logical,
			"chunk length %llu is not a multiple of its %llu data stripes",
			(unsigned long long)length,
			(unsigned long long)btrfs_chunk_data_stripes(type, num_stripes));
	return 0;
}

#define bg_error_at(err, loc, eb, slot, key, fmt, ...)			\
	btrfs_record_error_at(err, -EUCLEAN, (loc),			\
		"corrupt leaf: root=%llu block=%llu slot=%d bg_start=%llu bg_len=%llu, " fmt,	\
		(unsigned long long)(eb)->owner,			\
		(unsigned long long)(eb)->start, (slot),		\
		(unsigned long long)(key)->objectid,			\
		(unsigned long long)(key)->offset,			\
		##__VA_ARGS__)
#define bg_error(...)		keyed_error(bg, __VA_ARGS__)
#define bg_found_error(...)	keyed_found_error(bg, __VA_ARGS__)
#define bg_value_error(...)	keyed_value_error(bg, __VA_ARGS__)

int btrfs_check_block_group_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				 const struct btrfs_tree_block *leaf, int slot)
{
	const struct btrfs_block_group_item *bgi;
	struct btrfs_key key;
	u64 flags, type, profile;
	u32 size;

	btrfs_item_key_to_cpu(leaf, slot, &key);
	bgi = btrfs_item_ptr(leaf, slot, &size);
	if (key.offset == 0)
		return bg_found_error(err, leaf, slot, &key,
			"key.offset", 0,
			"invalid block group size 0");
	if (size != sizeof(*bgi))
		return bg_value_error(err, leaf, slot, &key,
			"item size", size, sizeof(*bgi),
			"invalid item size, have %u expect %zu", size, sizeof(*bgi));
	if (btrfs_stack_block_group_chunk_objectid(bgi) != BTRFS_FIRST_CHUNK_TREE_OBJECTID)
		return bg_value_error(err, leaf, slot, &key,
			"chunk_objectid", btrfs_stack_block_group_chunk_objectid(bgi), BTRFS_FIRST_CHUNK_TREE_OBJECTID,
			"invalid block group chunk objectid, have %llu expect %llu",
			(unsigned long long)btrfs_stack_block_group_chunk_objectid(bgi),
			(unsigned long long)BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	if (btrfs_stack_block_group_used(bgi) > key.offset)
		return bg_found_error(err, leaf, slot, &key,
			"used", btrfs_stack_block_group_used(bgi),
			"invalid block group used, have %llu expect [0, %llu)",
			(unsigned long long)btrfs_stack_block_group_used(bgi),
			(unsigned long long)key.offset);
	flags = btrfs_stack_block_group_flags(bgi);
	profile = flags & BTRFS_BLOCK_GROUP_PROFILE_MASK;
	if (profile & (profile - 1))
		return bg_found_error(err, leaf, slot, &key,
			"flags", profile,
			"invalid profile flags, have 0x%llx (%d bits set) expect no more than 1 bit set",
			(unsigned long long)profile, __builtin_popcountll(profile));
	type = flags & BTRFS_BLOCK_GROUP_TYPE_MASK;
	if (type != BTRFS_BLOCK_GROUP_DATA && type != BTRFS_BLOCK_GROUP_METADATA &&
	    type != BTRFS_BLOCK_GROUP_SYSTEM &&
	    type != (BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DATA))
		return bg_found_error(err, leaf, slot, &key,
			"flags", type,
			"invalid type, have 0x%llx (%d bits set) expect either 0x%llx, 0x%llx, 0x%llx or 0x%llx",
			(unsigned long long)type, __builtin_popcountll(type),
			(unsigned long long)BTRFS_BLOCK_GROUP_DATA,
			(unsigned long long)BTRFS_BLOCK_GROUP_METADATA,
			(unsigned long long)BTRFS_BLOCK_GROUP_SYSTEM,
			(unsigned long long)(BTRFS_BLOCK_GROUP_METADATA |
					     BTRFS_BLOCK_GROUP_DATA));
	return 0;
}
