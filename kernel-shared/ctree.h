/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What fs/btrfs/ctree.h gives every file beside the on-disk format
 * (uapi/btrfs_tree.h, included here): the in-memory key and its order,
 * where the superblock copies are, and the sizes that follow from the
 * node size.  The tree search itself is declared in tree-block.h.
 */
#ifndef BTRFS_SPACE_CTREE_H
#define BTRFS_SPACE_CTREE_H

#include "kernel-shared/uapi/btrfs_tree.h"

#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max_t(type, a, b) ((type)(a) > (type)(b) ? (type)(a) : (type)(b))

/* An in-memory key, compared in (objectid, type, offset) order */
struct btrfs_key {
	u64 objectid;
	u8 type;
	u64 offset;
};

static inline u64 btrfs_sb_offset(int mirror)
{
	u64 start = 16 * 1024;

	if (mirror)
		return start << (BTRFS_SUPER_MIRROR_SHIFT * mirror);
	return BTRFS_SUPER_INFO_OFFSET;
}

static inline u32 btrfs_leaf_data_size(u32 nodesize)
{
	return nodesize - sizeof(struct btrfs_header);
}

static inline u32 btrfs_max_item_size(u32 nodesize)
{
	return btrfs_leaf_data_size(nodesize) - sizeof(struct btrfs_item);
}

static inline u32 btrfs_node_max_ptrs(u32 nodesize)
{
	return btrfs_leaf_data_size(nodesize) / sizeof(struct btrfs_key_ptr);
}

static inline u32 btrfs_chunk_item_size(u16 num_stripes)
{
	return offsetof(struct btrfs_chunk, stripe) +
	       (u32)num_stripes * sizeof(struct btrfs_stripe);
}

/* btrfs_comp_cpu_keys(): objectid, then type, then offset */
static inline int btrfs_comp_keys(const struct btrfs_key *a, const struct btrfs_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

#endif
