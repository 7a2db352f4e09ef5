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
	u32 mem;			/* bytes at data (nodesize unless keys_only) */
	struct btrfs_tree_block *hash_next;
	struct btrfs_tree_block *lru_prev;
	struct btrfs_tree_block *lru_next;
	/*
	 * The block's bytes: page-aligned in the cache's regions (see
	 * btrfs_alloc_tree_block()), right behind the header in a key-only
	 * copy.  A header keeps its data for life.
	 */
	u8 *data;
};

/* A zeroed block header with nodesize bytes of data; NULL: no memory */
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
 * From now on a leaf the budget evicts is kept as an exact packed copy (a
 * few bytes an item where items repeat a pattern) and a lookup unpacks it
 * into the cache again: a model that visits many leaves more than once
 * (csum-delete --file: the file's leaves forward and back, its extents'
 * leaves in the commit) reads each once, in the budget's memory plus the
 * packed copies.
 */
void btrfs_cache_pack_leaves(struct btrfs_fs_info *fs_info);
/*
 * From now on the leaves of tree @owner that the budget evicts are dropped,
 * not packed: the caller's walk of that tree is past them (two trees at a
 * time; 0 forgets both).  A lookup of one reads it again, and counts.
 */
void btrfs_cache_pack_stop(struct btrfs_fs_info *fs_info, u64 owner);
/*
 * The leaf at @bytenr will not be looked up again: its packed copy freed,
 * or the block dropped when cached whole and unheld
 */
void btrfs_cache_forget_leaf(struct btrfs_fs_info *fs_info, u64 bytenr);
/* Packed leaves now and their bytes (for -v and the benchmark) */
void btrfs_cache_packed_stats(const struct btrfs_fs_info *fs_info, u64 *nr, u64 *bytes);
/*
 * The packing itself: @leaf (@nodesize bytes, @nritems items) into @out,
 * which has room for btrfs_leaf_pack_bound() bytes; returns the packed
 * size.  Unpacking gives the leaf back byte for byte: 0, or -EUCLEAN for
 * bytes that are no packing of a @nodesize leaf.
 */
u32 btrfs_leaf_pack_bound(u32 nodesize);
u32 btrfs_leaf_pack(const u8 *leaf, u32 nodesize, u32 nritems, u8 *out);
int btrfs_leaf_unpack(const u8 *in, u32 len, u32 nodesize, u8 *leaf);
/* The leaf budget in bytes (BTRFS_LEAF_CACHE_BYTES, smaller in the fuzz build) */
u64 btrfs_cache_leaf_limit(void);
void btrfs_drop_block_cache(struct btrfs_fs_info *fs_info);
void btrfs_free_block_cache(struct btrfs_fs_info *fs_info);

#endif
