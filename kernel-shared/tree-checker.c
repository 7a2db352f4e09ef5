// SPDX-License-Identifier: GPL-2.0
/*
 * Checks on tree blocks and items before any field is used, after the
 * kernel's fs/btrfs/tree-checker.c: check_leaf() with the item checks of
 * check_leaf_item() for the items this tool can meet (chunk, dev item,
 * dev extent, block group, root item, extent and metadata items),
 * check_node() and btrfs_check_chunk_valid(), with the kernel's wording
 * where it has one.  Behaviour reproduced: 6.18.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "common/checksum.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/tree-checker.h"
#include "kernel-shared/volumes.h"

/*
 * Item layouts only the checker reads.  The names carry a chk_ prefix so
 * they cannot clash with the full definitions ctree.h may grow later.
 */
#ifndef BTRFS_TREE_RELOC_OBJECTID
#define BTRFS_TREE_RELOC_OBJECTID	((u64)-8)
#endif
#ifndef BTRFS_DATA_RELOC_TREE_OBJECTID
#define BTRFS_DATA_RELOC_TREE_OBJECTID	((u64)-9)
#endif
#ifndef BTRFS_FIRST_FREE_OBJECTID
#define BTRFS_FIRST_FREE_OBJECTID	256ULL
#endif
#ifndef BTRFS_LAST_FREE_OBJECTID
#define BTRFS_LAST_FREE_OBJECTID	((u64)-256)
#endif
#ifndef BTRFS_EXTENT_OWNER_REF_KEY
#define BTRFS_EXTENT_OWNER_REF_KEY	172
#endif
#ifndef BTRFS_TREE_BLOCK_REF_KEY
#define BTRFS_TREE_BLOCK_REF_KEY	176
#endif
#ifndef BTRFS_EXTENT_DATA_REF_KEY
#define BTRFS_EXTENT_DATA_REF_KEY	178
#endif
#ifndef BTRFS_SHARED_BLOCK_REF_KEY
#define BTRFS_SHARED_BLOCK_REF_KEY	182
#endif
#ifndef BTRFS_SHARED_DATA_REF_KEY
#define BTRFS_SHARED_DATA_REF_KEY	184
#endif

#define CHK_EXTENT_FLAG_DATA		(1ULL << 0)
#define CHK_EXTENT_FLAG_TREE_BLOCK	(1ULL << 1)
#define CHK_BLOCK_FLAG_FULL_BACKREF	(1ULL << 8)
#define CHK_ROOT_SUBVOL_RDONLY		(1ULL << 0)
#define CHK_ROOT_SUBVOL_DEAD		(1ULL << 48)
#define CHK_QGROUP_LEVEL_SHIFT		48

struct chk_root_item {
	struct btrfs_root_item_head head;
	__le64 generation_v2;
	u8 rest[192];			/* uuids, transids, times, reserved */
} __attribute__ ((__packed__));

struct chk_extent_item {
	__le64 refs;
	__le64 generation;
	__le64 flags;
} __attribute__ ((__packed__));

struct chk_tree_block_info {
	struct btrfs_disk_key key;
	u8 level;
} __attribute__ ((__packed__));

/* Every inline ref starts with its type; most carry one u64 after it */
struct chk_inline_ref {
	u8 type;
	__le64 offset;
} __attribute__ ((__packed__));

/* EXTENT_DATA_REF inline: these follow the type, with no offset field */
struct chk_extent_data_ref {
	__le64 root;
	__le64 objectid;
	__le64 offset;
	__le32 count;
} __attribute__ ((__packed__));

/* SHARED_DATA_REF inline: follows the type and the parent's bytenr */
struct chk_shared_data_ref {
	__le32 count;
} __attribute__ ((__packed__));

static_assert(sizeof(struct chk_root_item) == 439, "root item");
static_assert(offsetof(struct chk_root_item, generation_v2) == 239, "root item v2");
static_assert(sizeof(struct chk_extent_item) == 24, "extent item");
static_assert(sizeof(struct chk_tree_block_info) == 18, "tree block info");
static_assert(sizeof(struct chk_inline_ref) == 9, "inline ref");
static_assert(sizeof(struct chk_extent_data_ref) == 28, "extent data ref");

BTRFS_SETGET_STACK_FUNCS(chk_root_last_snapshot, struct btrfs_root_item_head, last_snapshot, 64)
BTRFS_SETGET_STACK_FUNCS(chk_root_flags, struct btrfs_root_item_head, flags, 64)
BTRFS_SETGET_STACK_FUNCS(chk_root_drop_level, struct btrfs_root_item_head, drop_level, 8)
BTRFS_SETGET_STACK_FUNCS(chk_root_generation_v2, struct chk_root_item, generation_v2, 64)
BTRFS_SETGET_STACK_FUNCS(chk_dev_extent_chunk_tree, struct btrfs_dev_extent, chunk_tree, 64)
BTRFS_SETGET_STACK_FUNCS(chk_dev_extent_chunk_objectid, struct btrfs_dev_extent, chunk_objectid, 64)
BTRFS_SETGET_STACK_FUNCS(chk_extent_refs, struct chk_extent_item, refs, 64)
BTRFS_SETGET_STACK_FUNCS(chk_extent_generation, struct chk_extent_item, generation, 64)
BTRFS_SETGET_STACK_FUNCS(chk_extent_flags, struct chk_extent_item, flags, 64)
BTRFS_SETGET_STACK_FUNCS(chk_tree_block_level, struct chk_tree_block_info, level, 8)
BTRFS_SETGET_STACK_FUNCS(chk_inline_ref_type, struct chk_inline_ref, type, 8)
BTRFS_SETGET_STACK_FUNCS(chk_inline_ref_offset, struct chk_inline_ref, offset, 64)
BTRFS_SETGET_STACK_FUNCS(chk_data_ref_root, struct chk_extent_data_ref, root, 64)
BTRFS_SETGET_STACK_FUNCS(chk_data_ref_objectid, struct chk_extent_data_ref, objectid, 64)
BTRFS_SETGET_STACK_FUNCS(chk_data_ref_offset, struct chk_extent_data_ref, offset, 64)
BTRFS_SETGET_STACK_FUNCS(chk_data_ref_count, struct chk_extent_data_ref, count, 32)
BTRFS_SETGET_STACK_FUNCS(chk_shared_data_ref_count, struct chk_shared_data_ref, count, 32)

const char *btrfs_root_name(u64 objectid)
{
	switch (objectid) {
	case BTRFS_ROOT_TREE_OBJECTID: return "root tree";
	case BTRFS_EXTENT_TREE_OBJECTID: return "extent tree";
	case BTRFS_CHUNK_TREE_OBJECTID: return "chunk tree";
	case BTRFS_DEV_TREE_OBJECTID: return "dev tree";
	case BTRFS_FS_TREE_OBJECTID: return "fs tree";
	case BTRFS_CSUM_TREE_OBJECTID: return "csum tree";
	case BTRFS_QUOTA_TREE_OBJECTID: return "quota tree";
	case BTRFS_UUID_TREE_OBJECTID: return "uuid tree";
	case BTRFS_FREE_SPACE_TREE_OBJECTID: return "free space tree";
	case BTRFS_BLOCK_GROUP_TREE_OBJECTID: return "block group tree";
	case BTRFS_RAID_STRIPE_TREE_OBJECTID: return "raid stripe tree";
	default: return "tree";
	}
}

#define leaf_error(fs_info, eb, slot, fmt, ...)				\
	btrfs_fs_error(fs_info, -EUCLEAN,				\
		"corrupt leaf: root=%llu block=%llu slot=%d, " fmt,	\
		(unsigned long long)(eb)->owner,			\
		(unsigned long long)(eb)->start, (slot), ##__VA_ARGS__)

#define node_error(fs_info, eb, slot, fmt, ...)				\
	btrfs_fs_error(fs_info, -EUCLEAN,				\
		"corrupt node: root=%llu block=%llu slot=%d, " fmt,	\
		(unsigned long long)(eb)->owner,			\
		(unsigned long long)(eb)->start, (slot), ##__VA_ARGS__)

static int check_key_order(struct btrfs_fs_info *fs_info,
			   const struct btrfs_tree_block *eb, int slot,
			   struct btrfs_key *prev)
{
	struct btrfs_key key;

	if (eb->level)
		btrfs_node_key_to_cpu(eb, slot, &key);
	else
		btrfs_item_key_to_cpu(eb, slot, &key);
	if (slot > 0 && btrfs_comp_keys(prev, &key) >= 0) {
		if (eb->level)
			return node_error(fs_info, eb, slot,
				"bad key order, prev (%llu %u %llu) current (%llu %u %llu)",
				(unsigned long long)prev->objectid, prev->type,
				(unsigned long long)prev->offset,
				(unsigned long long)key.objectid, key.type,
				(unsigned long long)key.offset);
		return leaf_error(fs_info, eb, slot,
			"bad key order, prev (%llu %u %llu) current (%llu %u %llu)",
			(unsigned long long)prev->objectid, prev->type,
			(unsigned long long)prev->offset,
			(unsigned long long)key.objectid, key.type,
			(unsigned long long)key.offset);
	}
	*prev = key;
	return 0;
}

/*
 * Items grow from the end of the block towards the item headers: item 0's
 * data ends at the end of the data area and every item's data ends where
 * the previous item's begins.  Checking exactly that (as the kernel does)
 * also proves that no item points outside the block.
 */
static int check_leaf(struct btrfs_fs_info *fs_info,
		      const struct btrfs_tree_block *eb)
{
	const u32 data_size = btrfs_leaf_data_size(eb->len);
	const struct btrfs_item *items =
		(const struct btrfs_item *)(eb->data + sizeof(struct btrfs_header));
	struct btrfs_key prev = { 0 };
	u32 slot;

	if ((u64)eb->nritems * sizeof(struct btrfs_item) > data_size)
		return leaf_error(fs_info, eb, 0,
			"invalid nritems %u, the item headers alone need more than %u bytes",
			eb->nritems, data_size);
	for (slot = 0; slot < eb->nritems; slot++) {
		u32 expected_end = slot ? btrfs_raw_item_offset(&items[slot - 1]) : data_size;
		u32 offset = btrfs_raw_item_offset(&items[slot]);
		u32 size = btrfs_raw_item_size(&items[slot]);
		int ret;

		ret = check_key_order(fs_info, eb, slot, &prev);
		if (ret)
			return ret;
		if ((u64)offset + size != expected_end)
			return leaf_error(fs_info, eb, slot,
				"unexpected item end, have %llu expect %u",
				(unsigned long long)offset + size, expected_end);
		if ((u64)(slot + 1) * sizeof(struct btrfs_item) > offset)
			return leaf_error(fs_info, eb, slot,
				"slot overlaps with its data, item data starts at %u, header ends at %zu",
				offset, (size_t)(slot + 1) * sizeof(struct btrfs_item));
	}
	return 0;
}

static int check_node(struct btrfs_fs_info *fs_info,
		      const struct btrfs_tree_block *eb)
{
	struct btrfs_key prev = { 0 };
	u32 slot;

	if (eb->nritems == 0 || eb->nritems > btrfs_node_max_ptrs(eb->len))
		return node_error(fs_info, eb, 0,
			"invalid number of items, have %u expect [1, %u]",
			eb->nritems, btrfs_node_max_ptrs(eb->len));
	for (slot = 0; slot < eb->nritems; slot++) {
		u64 bytenr = btrfs_node_blockptr(eb, slot);
		int ret;

		if (!bytenr)
			return node_error(fs_info, eb, slot,
				"invalid NULL node pointer");
		if (bytenr % fs_info->sectorsize)
			return node_error(fs_info, eb, slot,
				"unaligned pointer, have %llu should be aligned to %u",
				(unsigned long long)bytenr, fs_info->sectorsize);
		ret = check_key_order(fs_info, eb, slot, &prev);
		if (ret)
			return ret;
	}
	return 0;
}

int btrfs_check_tree_block(struct btrfs_fs_info *fs_info,
			   const struct btrfs_tree_block *eb)
{
	if (eb->level == 0)
		return check_leaf(fs_info, eb);
	return check_node(fs_info, eb);
}

#define chunk_error(fs_info, loc, logical, fmt, ...)			\
	btrfs_fs_error(fs_info, -EUCLEAN,				\
		"corrupt chunk item in %s: block=%llu slot=%d chunk_start=%llu, " fmt, \
		(loc)->where, (unsigned long long)(loc)->block, (loc)->slot, \
		(unsigned long long)(logical), ##__VA_ARGS__)

/* The stripe count each profile allows (kernel: btrfs_check_chunk_valid) */
static bool chunk_stripes_valid(u64 type, u16 num_stripes, u16 sub_stripes)
{
	if (type & BTRFS_BLOCK_GROUP_RAID10)
		return sub_stripes == 2 && num_stripes >= 2 && num_stripes % 2 == 0;
	if (type & BTRFS_BLOCK_GROUP_RAID1)
		return num_stripes == 2;
	if (type & BTRFS_BLOCK_GROUP_RAID1C3)
		return num_stripes == 3;
	if (type & BTRFS_BLOCK_GROUP_RAID1C4)
		return num_stripes == 4;
	if (type & BTRFS_BLOCK_GROUP_RAID5)
		return num_stripes >= 2;
	if (type & BTRFS_BLOCK_GROUP_RAID6)
		return num_stripes >= 3;
	if (type & BTRFS_BLOCK_GROUP_DUP)
		return num_stripes == 2;
	if (type & BTRFS_BLOCK_GROUP_RAID0)
		return num_stripes >= 1;
	return num_stripes == 1;
}

static int check_chunk_type(struct btrfs_fs_info *fs_info, u64 type, u64 logical,
			    const struct btrfs_item_location *loc)
{
	u64 profile = type & BTRFS_BLOCK_GROUP_PROFILE_MASK;

	if (type & ~(BTRFS_BLOCK_GROUP_TYPE_MASK | BTRFS_BLOCK_GROUP_PROFILE_MASK))
		return chunk_error(fs_info, loc, logical,
			"unrecognized chunk type: 0x%llx",
			(unsigned long long)type);
	if (profile & (profile - 1))
		return chunk_error(fs_info, loc, logical,
			"invalid chunk profile flag: 0x%llx, expect 0 or 1 bit set",
			(unsigned long long)profile);
	if (!(type & BTRFS_BLOCK_GROUP_TYPE_MASK))
		return chunk_error(fs_info, loc, logical,
			"missing chunk type flag, have 0x%llx one bit must be set in mask 0x%llx",
			(unsigned long long)type,
			(unsigned long long)BTRFS_BLOCK_GROUP_TYPE_MASK);
	if ((type & BTRFS_BLOCK_GROUP_SYSTEM) &&
	    (type & (BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DATA)))
		return chunk_error(fs_info, loc, logical,
			"system chunk with data or metadata type: 0x%llx",
			(unsigned long long)type);
	if ((type & BTRFS_BLOCK_GROUP_METADATA) && (type & BTRFS_BLOCK_GROUP_DATA) &&
	    !btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS))
		return chunk_error(fs_info, loc, logical,
			"mixed chunk type in non-mixed mode: 0x%llx",
			(unsigned long long)type);
	return 0;
}

int btrfs_check_chunk_valid(struct btrfs_fs_info *fs_info,
			    const struct btrfs_chunk *chunk, u32 item_size,
			    u64 logical, const struct btrfs_item_location *loc)
{
	u64 length, stripe_len, type;
	u16 num_stripes, sub_stripes;

	if (item_size < offsetof(struct btrfs_chunk, stripe))
		return chunk_error(fs_info, loc, logical,
			"invalid chunk item size, have %u expect at least %zu",
			item_size, offsetof(struct btrfs_chunk, stripe));
	num_stripes = btrfs_stack_chunk_num_stripes(chunk);
	if (!num_stripes)
		return chunk_error(fs_info, loc, logical,
			"invalid chunk num_stripes, have %u", num_stripes);
	if (item_size != btrfs_chunk_item_size(num_stripes))
		return chunk_error(fs_info, loc, logical,
			"invalid chunk item size, have %u expect %u for %u stripes",
			item_size, btrfs_chunk_item_size(num_stripes), num_stripes);
	length = btrfs_stack_chunk_length(chunk);
	stripe_len = btrfs_stack_chunk_stripe_len(chunk);
	type = btrfs_stack_chunk_type(chunk);
	sub_stripes = btrfs_stack_chunk_sub_stripes(chunk);
	if (logical % fs_info->sectorsize)
		return chunk_error(fs_info, loc, logical,
			"invalid chunk logical, have %llu should be aligned to %u",
			(unsigned long long)logical, fs_info->sectorsize);
	if (btrfs_stack_chunk_sector_size(chunk) != fs_info->sectorsize)
		return chunk_error(fs_info, loc, logical,
			"invalid chunk sectorsize, have %u expect %u",
			btrfs_stack_chunk_sector_size(chunk), fs_info->sectorsize);
	if (!length || length % fs_info->sectorsize)
		return chunk_error(fs_info, loc, logical,
			"invalid chunk length, have %llu", (unsigned long long)length);
	if (logical + length < logical)
		return chunk_error(fs_info, loc, logical,
			"invalid chunk logical start and length, have start=%llu length=%llu",
			(unsigned long long)logical, (unsigned long long)length);
	if (stripe_len != BTRFS_STRIPE_LEN)
		return chunk_error(fs_info, loc, logical,
			"invalid chunk stripe length: %llu",
			(unsigned long long)stripe_len);
	if (check_chunk_type(fs_info, type, logical, loc))
		return -EUCLEAN;
	if (!chunk_stripes_valid(type, num_stripes, sub_stripes))
		return chunk_error(fs_info, loc, logical,
			"invalid num_stripes:sub_stripes %u:%u for profile %s",
			num_stripes, sub_stripes, btrfs_bg_profile_name(type));
	if (length % btrfs_chunk_data_stripes(type, num_stripes))
		return chunk_error(fs_info, loc, logical,
			"chunk length %llu is not a multiple of its %llu data stripes",
			(unsigned long long)length,
			(unsigned long long)btrfs_chunk_data_stripes(type, num_stripes));
	return 0;
}

#define bg_error(fs_info, leaf, slot, key, fmt, ...)			\
	btrfs_fs_error(fs_info, -EUCLEAN,				\
		"corrupt leaf: root=%llu block=%llu slot=%d bg_start=%llu bg_len=%llu, " fmt, \
		(unsigned long long)(leaf)->owner,			\
		(unsigned long long)(leaf)->start, (slot),		\
		(unsigned long long)(key)->objectid,			\
		(unsigned long long)(key)->offset, ##__VA_ARGS__)

int btrfs_check_block_group_item(struct btrfs_fs_info *fs_info,
				 const struct btrfs_tree_block *leaf, int slot)
{
	const struct btrfs_block_group_item *bgi;
	struct btrfs_key key;
	u64 flags, type, profile;
	u32 size;

	btrfs_item_key_to_cpu(leaf, slot, &key);
	bgi = btrfs_item_ptr(leaf, slot, &size);
	if (key.offset == 0)
		return bg_error(fs_info, leaf, slot, &key,
			"invalid block group size 0");
	if (size != sizeof(*bgi))
		return bg_error(fs_info, leaf, slot, &key,
			"invalid item size, have %u expect %zu", size, sizeof(*bgi));
	if (btrfs_stack_block_group_chunk_objectid(bgi) != BTRFS_FIRST_CHUNK_TREE_OBJECTID)
		return bg_error(fs_info, leaf, slot, &key,
			"invalid block group chunk objectid, have %llu expect %llu",
			(unsigned long long)btrfs_stack_block_group_chunk_objectid(bgi),
			(unsigned long long)BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	if (btrfs_stack_block_group_used(bgi) > key.offset)
		return bg_error(fs_info, leaf, slot, &key,
			"invalid block group used, have %llu expect [0, %llu]",
			(unsigned long long)btrfs_stack_block_group_used(bgi),
			(unsigned long long)key.offset);
	flags = btrfs_stack_block_group_flags(bgi);
	profile = flags & BTRFS_BLOCK_GROUP_PROFILE_MASK;
	if (profile & (profile - 1))
		return bg_error(fs_info, leaf, slot, &key,
			"invalid profile flags, have 0x%llx expect 0 or 1 bit set",
			(unsigned long long)profile);
	type = flags & BTRFS_BLOCK_GROUP_TYPE_MASK;
	if (type != BTRFS_BLOCK_GROUP_DATA && type != BTRFS_BLOCK_GROUP_METADATA &&
	    type != BTRFS_BLOCK_GROUP_SYSTEM &&
	    type != (BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DATA))
		return bg_error(fs_info, leaf, slot, &key,
			"invalid type, have 0x%llx expect either 0x%llx, 0x%llx, 0x%llx or 0x%llx",
			(unsigned long long)type,
			(unsigned long long)BTRFS_BLOCK_GROUP_DATA,
			(unsigned long long)BTRFS_BLOCK_GROUP_METADATA,
			(unsigned long long)BTRFS_BLOCK_GROUP_SYSTEM,
			(unsigned long long)(BTRFS_BLOCK_GROUP_METADATA |
					     BTRFS_BLOCK_GROUP_DATA));
	return 0;
}
