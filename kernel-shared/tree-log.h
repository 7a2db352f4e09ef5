/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_TREE_LOG_H
#define BTRFS_SPACE_TREE_LOG_H

#include "kernel-shared/ctree.h"
#include "kernel-shared/fs.h"

/*
 * btrfs_recover_log_trees() as the space infos see it: apply the replay
 * to the loaded block groups and space infos.  0, or -errno with the one
 * message recorded by btrfs_fs_error().  No log: nothing changes.
 */
int btrfs_replay_log_accounting(struct btrfs_fs_info *fs_info);

/*
 * Told of each search of a subvolume, extent or csum tree the kernel's
 * replay makes (the key, in the tree as the image has it), in the
 * kernel's order; a non-zero return (-errno) stops the replay.
 */
struct btrfs_path;

struct btrfs_log_search_hook {
	int (*fn)(void *ctx, const struct btrfs_root_ref *root, const struct btrfs_key *key);
	/*
	 * a deletion's search (ins_len -1: btrfs_drop_extents() inside
	 * i_size, btrfs_del_csums(), an unlink's, the fixup's orphan item):
	 * as @fn, and the nodes below half on its path read their siblings
	 * ahead (reada_for_balance(), ctree.c); NULL: @fn
	 */
	int (*del)(void *ctx, const struct btrfs_root_ref *root, const struct btrfs_key *key);
	/*
	 * a leaf of the image the replay or its commit changed or pushed
	 * items into (@cow), or that a push only read as the path's sibling
	 * and left, too full for the item (push_leaf_right(), push_leaf_left()
	 * look at its free space before btrfs_cow_block(): not copied)
	 */
	int (*leaf)(void *ctx, u64 bytenr, bool cow);
	/*
	 * a node of the image at @level (1 and up) a node balancing read (a
	 * sibling, reada_for_balance(), push_nodes_for_insert(),
	 * balance_level()); @cow: it took pointers, or was copied to
	 * (push_node_left(), balance_node_right()), or freed
	 */
	int (*node)(void *ctx, u64 bytenr, int level, bool cow);
	/* a search that reads and copies nothing (btrfs_next_leaf() of a walk) */
	int (*read)(void *ctx, const struct btrfs_root_ref *root, const struct btrfs_key *key);
	/* a COW search of the commit, on the image's tree: its blocks from @min_level up */
	int (*path)(void *ctx, const struct btrfs_root_ref *root, const struct btrfs_path *path,
		    int min_level);
	/*
	 * btrfs_cache_block_group(wait) of the block group holding @bytenr:
	 * btrfs_alloc_logged_file_extent() (__exclude_logged_extent()) and a
	 * free's btrfs_update_block_group()
	 */
	int (*cache_bg)(void *ctx, u64 bytenr);
	void *ctx;
};

/*
 * The replay of btrfs_replay_log_accounting() and its commit, changing
 * nothing: @hook is told of its searches and of the image leaves the
 * replay and the commit change (the mount estimate counts the blocks they
 * read).  The commit's new blocks take free places of the metadata block
 * groups: without the block groups loaded, their items are not placed.
 * 0, or -errno with btrfs_fs_error()'s message.
 */
int btrfs_replay_log_searches(struct btrfs_fs_info *fs_info, struct btrfs_log_search_hook hook);

/* The log root tree as btrfs_replay_log() reads it */
struct btrfs_root_ref btrfs_log_root_tree_ref(const struct btrfs_fs_info *fs_info);

/*
 * walk_log_tree() of 6.18 over one log tree: @leaf_fn for each leaf; a
 * level-1 node's pointer to a block the walk holds (the node or one above
 * it) gives that block, unchecked, to @held_fn (NULL: skipped) and its
 * subtree is not read; such a pointer above level 1 is an error (the
 * kernel's walk would not end).  A block reached again from another node
 * is given to @again_fn (NULL: none) and walked again, up to as many such
 * blocks as distinct ones (then an error: each level of shared children
 * multiplies the walk).
 */
int btrfs_walk_log_tree(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *log,
			btrfs_leaf_fn leaf_fn, btrfs_leaf_fn held_fn, btrfs_leaf_fn again_fn,
			void *ctx);

/*
 * Call @fn for each log tree of the log root tree (the ROOT_ITEMs with
 * objectid TREE_LOG_OBJECTID; key offset = the subvolume), highest
 * subvolume first as btrfs_recover_log_trees() takes them.
 */
typedef int (*btrfs_log_tree_fn)(struct btrfs_fs_info *fs_info, u64 subvol,
				 const struct btrfs_root_ref *log, void *ctx);
int btrfs_for_each_log_tree(struct btrfs_fs_info *fs_info, btrfs_log_tree_fn fn,
			    void *ctx);

#endif
