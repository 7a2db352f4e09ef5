/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The copy-on-write of a search path as one transaction does it, and the
 * leaf changes of its deletes and inserts (ctree-cow.c: the kernel's
 * btrfs_cow_block(), btrfs_search_slot() with cow = 1, btrfs_del_items(),
 * split_leaf()), queuing refs into struct btrfs_cow_sim (extent-tree.h).
 */
#ifndef BTRFS_SPACE_CTREE_COW_H
#define BTRFS_SPACE_CTREE_COW_H

#include "kernel-shared/ctree.h"
#include "kernel-shared/extent-tree.h"

/* btrfs_block_can_be_shared(): false for a block no snapshot can hold */
bool btrfs_block_can_be_shared(const struct btrfs_subvol *sv,
			       const struct btrfs_tree_block *buf, bool is_root_node);
int btrfs_cow_block(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
		    const struct btrfs_tree_block *buf, bool is_root_node);
/* split_leaf()'s pushes (and split) for an insert of @data_size bytes at the path */
int btrfs_insert_room_sim(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			  const struct btrfs_path *path, u32 data_size);
/* Whether the transaction deleted the image leaf at @bytenr */
bool btrfs_cow_sim_leaf_deleted(const struct btrfs_cow_sim *cs, u64 bytenr);
int btrfs_del_items_sim(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			const struct btrfs_path *path, int slot, int nr);
int btrfs_search_slot_cow(struct btrfs_cow_sim *cs,
			  const struct btrfs_subvol *sv,
			  const struct btrfs_key *key, struct btrfs_path *path,
			  bool del);

#endif
