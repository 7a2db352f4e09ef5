/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Item and key-pointer access of a tree block held in memory (the blocks
 * are in extent_io.h): the kernel's btrfs_item_key_to_cpu(),
 * btrfs_item_ptr(), btrfs_node_key_to_cpu(), btrfs_node_blockptr() and
 * btrfs_node_ptr_generation() of fs/btrfs/accessors.h and ctree.h, on
 * the getters of accessors.h.  The search over blocks is in ctree.h, the
 * reads in disk-io.h.
 */
#ifndef BTRFS_SPACE_TREE_BLOCK_H
#define BTRFS_SPACE_TREE_BLOCK_H

#include "kernel-shared/accessors.h"
#include "kernel-shared/extent_io.h"

/*
 * Item and pointer access, inline as the kernel's accessors are (every
 * leaf check and search step goes through them); bounds were checked by
 * tree-checker.c when the block was read.
 */
static inline const struct btrfs_item *btrfs_item_nr(const struct btrfs_tree_block *eb,
						     int slot)
{
	return (const struct btrfs_item *)(eb->data + sizeof(struct btrfs_header)) + slot;
}

static inline const struct btrfs_key_ptr *btrfs_key_ptr_nr(const struct btrfs_tree_block *eb,
							   int slot)
{
	return (const struct btrfs_key_ptr *)(eb->data + sizeof(struct btrfs_header)) + slot;
}

static inline void btrfs_item_key_to_cpu(const struct btrfs_tree_block *eb, int slot,
					 struct btrfs_key *key)
{
	btrfs_disk_key_to_cpu(key, &btrfs_item_nr(eb, slot)->key);
}

static inline const void *btrfs_item_ptr(const struct btrfs_tree_block *eb, int slot,
					 u32 *size)
{
	const struct btrfs_item *item = btrfs_item_nr(eb, slot);

	*size = btrfs_raw_item_size(item);
	return eb->data + sizeof(struct btrfs_header) + btrfs_raw_item_offset(item);
}

static inline void btrfs_node_key_to_cpu(const struct btrfs_tree_block *eb, int slot,
					 struct btrfs_key *key)
{
	btrfs_disk_key_to_cpu(key, &btrfs_key_ptr_nr(eb, slot)->key);
}

static inline u64 btrfs_node_blockptr(const struct btrfs_tree_block *eb, int slot)
{
	return btrfs_key_ptr_blockptr(btrfs_key_ptr_nr(eb, slot));
}

static inline u64 btrfs_node_ptr_generation(const struct btrfs_tree_block *eb, int slot)
{
	return btrfs_key_ptr_generation(btrfs_key_ptr_nr(eb, slot));
}

#endif
