/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_TREE_CHECKER_H
#define BTRFS_SPACE_TREE_CHECKER_H

#include "kernel-shared/fs.h"

struct btrfs_tree_block;

/* Where a chunk item came from, for messages */
struct btrfs_item_location {
	const char *where;		/* "sys_array", "chunk tree" or "leaf" */
	u64 block;			/* leaf bytenr, or array offset */
	int slot;
};

/*
 * Each check records what it finds wrong in @err, the record of the read
 * that met the item or block (fs_info->err, a copy's own record, or NULL
 * for a read made again the way that reports), and returns -EUCLEAN.
 */
int btrfs_check_chunk_valid(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    const struct btrfs_chunk *chunk, u32 item_size,
			    u64 logical, const struct btrfs_item_location *loc);
int btrfs_check_block_group_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				 const struct btrfs_tree_block *leaf, int slot);

int btrfs_check_tree_block(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   const struct btrfs_tree_block *eb);
int btrfs_check_eb_owner(struct btrfs_error *err, const struct btrfs_tree_block *eb,
			 u64 root_owner);


/* The key offset of a keyed EXTENT_DATA_REF (hash_extent_data_ref()) */
u64 hash_extent_data_ref(u64 root, u64 objectid, u64 offset);

#endif
