/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tree blocks in memory and their cache, after fs/btrfs/extent_io.h
 * (struct extent_buffer): what disk-io.c fills and ctree.c searches.
 */
#ifndef BTRFS_SPACE_EXTENT_IO_H
#define BTRFS_SPACE_EXTENT_IO_H

#include <stdbool.h>
#include "kernel-shared/fs.h"

struct btrfs_tree_block {
	u64 start;
	u32 len;
	u8 level;
	u32 nritems;
	u64 owner;
	u64 generation;
	int mirror;			/* copy that passed verification */
	u32 refs;			/* paths holding it; 0 = evictable leaf */
	bool keys_only;			/* a leaf's first item and kept items only */
	u32 mem;			/* bytes of data[] (nodesize unless keys_only) */
	struct btrfs_tree_block *hash_next;
	struct btrfs_tree_block *lru_prev;
	struct btrfs_tree_block *lru_next;
	u8 data[];
};

/* A zeroed block header with nodesize bytes of data behind it; NULL: no memory */
struct btrfs_tree_block *btrfs_alloc_tree_block(struct btrfs_fs_info *fs_info, u64 bytenr);
/* Back to the free list (a block never inserted, or one the cache dropped) */
void btrfs_free_tree_block(struct btrfs_fs_info *fs_info, struct btrfs_tree_block *eb);
/* The cached block at @bytenr, NULL if none */
struct btrfs_tree_block *btrfs_cache_lookup(struct btrfs_fs_info *fs_info,
					    u64 bytenr);
/*
 * Cache a block just read and verified; a leaf may evict older ones.  A
 * leaf btrfs_cache_keep_items() asks for is cached as its key-only copy:
 * *@eb is then that copy and the block read is freed.
 */
int btrfs_cache_insert(struct btrfs_fs_info *fs_info, struct btrfs_tree_block **eb);
/*
 * From now on, leaves of tree @root_id are cached as key-only copies: the
 * header, the first item's key and the items of key @type (with their
 * data), which is all a search for such items reads of them.  Key-only
 * leaves are found by lookups until it is called with @root_id 0; then
 * they stay for memory's sake only and a lookup reads the block again.
 */
void btrfs_cache_keep_items(struct btrfs_fs_info *fs_info, u64 root_id, u8 type);
/* A path lets go of @eb: an unreferenced leaf can be evicted */
void btrfs_tree_block_put(struct btrfs_tree_block *eb);
/*
 * An unreferenced cached leaf read once and not wanted again (a streaming
 * walk): out of the cache now, its block back to the free list, so the
 * next read takes its memory instead of growing the cache.
 */
void btrfs_cache_drop_leaf(struct btrfs_fs_info *fs_info, struct btrfs_tree_block *eb);
/*
 * A model that will visit @bytes of leaves more than once (csum-delete
 * --file: the file's leaves, then its extents' leaves) raises the budget
 * to that, so that each is read once: memory follows the leaves in play.
 */
void btrfs_cache_grow_leaf_limit(struct btrfs_fs_info *fs_info, u64 bytes);
/* The leaf budget in bytes (BTRFS_LEAF_CACHE_BYTES, smaller in the fuzz build) */
u64 btrfs_cache_leaf_limit(void);
void btrfs_drop_block_cache(struct btrfs_fs_info *fs_info);
void btrfs_free_block_cache(struct btrfs_fs_info *fs_info);

#endif
