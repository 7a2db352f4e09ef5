/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The read-only search over tree blocks: the parts of the kernel's
 * ctree.c (btrfs_search_slot, btrfs_next_leaf) and disk-io.c
 * (read_tree_block) that a reader needs.  The blocks themselves are in
 * extent_io.h.
 */
#ifndef BTRFS_SPACE_TREE_BLOCK_H
#define BTRFS_SPACE_TREE_BLOCK_H

#include "common/io-batch.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/fs.h"
#include "kernel-shared/extent_io.h"


/* What the parent (or the superblock / root item) says the block must be */
struct btrfs_tree_check {
	u64 root;			/* owner tree, for messages */
	int level;
	u64 transid;			/* 0: unknown */
	bool has_first_key;
	struct btrfs_key first_key;
};

struct btrfs_path {
	struct btrfs_tree_block *nodes[BTRFS_MAX_LEVEL];
	int slots[BTRFS_MAX_LEVEL];
};

int btrfs_read_tree_block(struct btrfs_fs_info *fs_info, u64 bytenr,
			  const struct btrfs_tree_check *check,
			  unsigned int purpose, struct btrfs_tree_block **ret);
int btrfs_read_tree_blocks(struct btrfs_fs_info *fs_info, const u64 *bytenrs,
			   const struct btrfs_tree_check *checks, u32 nr,
			   unsigned int purpose, u32 max_threads,
			   struct btrfs_tree_block **out);
/* The same, each block with its own purpose */
int btrfs_read_tree_blocks_tagged(struct btrfs_fs_info *fs_info, const u64 *bytenrs,
				  const struct btrfs_tree_check *checks,
				  const unsigned int *purposes, u32 nr, u32 max_threads,
				  struct btrfs_tree_block **out);

/*
 * One tree block read through the run's queue (btrfs_io_queue()), for a
 * caller that keeps reads in flight while it uses the ones that finish.
 * Fill bytenr, check and purpose; btrfs_block_read_start() returns 0 when
 * the first copy went to @q (finish it when io_queue_reap() hands back
 * &br->req: req.priv is @br), 1 when nothing went (cached, or not one
 * piece on a present device: finish it now), or -errno.  The purpose may
 * be raised while the read is in flight (set br->req.purpose too).
 * btrfs_block_read_finish() verifies and caches the copy read, or reads
 * the block the serial way (every copy, the error recorded), as
 * btrfs_read_tree_block() returns it: 0 and br->eb referenced, or -errno.
 */
struct btrfs_block_read {
	struct io_request req;
	struct btrfs_tree_block *eb;
	u64 bytenr;
	struct btrfs_tree_check check;
	unsigned int purpose;
	bool queued;
};

struct io_queue *btrfs_io_queue(struct btrfs_fs_info *fs_info);
int btrfs_block_read_start(struct btrfs_fs_info *fs_info, struct io_queue *q,
			   struct btrfs_block_read *br);
int btrfs_block_read_finish(struct btrfs_fs_info *fs_info, struct btrfs_block_read *br);

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

/* 0 and the slot of @key, or 1 and the slot of the first key above it */
int bin_search_block(const struct btrfs_tree_block *eb, const struct btrfs_key *key,
		     int *slot);
void btrfs_release_path(struct btrfs_path *path);
int btrfs_read_root_node(struct btrfs_fs_info *fs_info,
			 const struct btrfs_root_ref *root, unsigned int purpose,
			 struct btrfs_tree_block **eb);
int btrfs_search_slot(struct btrfs_fs_info *fs_info,
		      const struct btrfs_root_ref *root,
		      const struct btrfs_key *key, struct btrfs_path *path,
		      unsigned int purpose);
int btrfs_next_item(struct btrfs_fs_info *fs_info,
		    const struct btrfs_root_ref *root, struct btrfs_path *path,
		    unsigned int purpose);
int btrfs_next_leaf(struct btrfs_fs_info *fs_info,
		    const struct btrfs_root_ref *root, struct btrfs_path *path,
		    unsigned int purpose);

/*
 * Read ahead, through the queue of concurrent reads, the blocks that a
 * walk of @root (@key NULL) or a search for @key with the next_leaf()
 * steps to the end will read; with io_threads <= 1 nothing.  Errors are
 * left to the walk.
 */
void btrfs_prefetch_tree(struct btrfs_fs_info *fs_info,
			 const struct btrfs_root_ref *root,
			 const struct btrfs_key *key, unsigned int purpose);

/*
 * One search to read ahead: the path btrfs_search_slot() takes for @key,
 * and with @to_end every block right of it too (the next_leaf() steps to
 * the end of the tree: a whole walk from key 0).  @root->found false: none.
 */
struct btrfs_prefetch_search {
	const struct btrfs_root_ref *root;
	struct btrfs_key key;
	unsigned int purpose;		/* how the search itself counts its reads */
	bool root_only;			/* just the root node, no descent */
	bool to_end;
};

/*
 * Read ahead what @nr independent searches will read, kept in flight
 * together, a node's children submitted as soon as it is read (a block
 * two need is read once, for the purpose that counts first); only with
 * io_threads > 1.  Nothing is an error: the
 * searches themselves say.  Read observers are not told: the searches that
 * follow touch the blocks.
 */
void btrfs_prefetch_searches(struct btrfs_fs_info *fs_info,
			     const struct btrfs_prefetch_search *srch, u32 nr);
typedef int (*btrfs_leaf_fn)(struct btrfs_fs_info *fs_info,
			     const struct btrfs_tree_block *leaf, void *ctx);
int btrfs_walk_tree(struct btrfs_fs_info *fs_info,
		    const struct btrfs_root_ref *root, unsigned int purpose,
		    btrfs_leaf_fn leaf_fn, void *ctx);
/*
 * btrfs_walk_tree() for a tree read once: each leaf leaves the cache as
 * soon as @leaf_fn is done with it, so the walk holds its path and one
 * leaf, whatever the tree's size (csum-delete --top).
 */
int btrfs_stream_tree(struct btrfs_fs_info *fs_info,
		      const struct btrfs_root_ref *root, unsigned int purpose,
		      btrfs_leaf_fn leaf_fn, void *ctx);

/* Register @observer (NULL fn: none); returns the one it replaces */
struct btrfs_read_observer btrfs_set_read_observer(struct btrfs_fs_info *fs_info,
						   struct btrfs_read_observer observer);

/* tree-checker.c */
int btrfs_check_tree_block(struct btrfs_fs_info *fs_info,
			   const struct btrfs_tree_block *eb);
int btrfs_check_eb_owner(struct btrfs_fs_info *fs_info,
			 const struct btrfs_tree_block *eb, u64 root_owner);

#endif
