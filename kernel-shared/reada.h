/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Read-ahead of tree searches through the run's queue of concurrent reads
 * (reada.c: the job of the kernel's reada.c and reada_for_search()).
 */
#ifndef BTRFS_SPACE_READA_H
#define BTRFS_SPACE_READA_H

#include <stdbool.h>
#include "kernel-shared/ctree.h"

struct btrfs_fs_info;
struct btrfs_root_ref;

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

/*
 * The same, deferred to the first tree block read that the page cache
 * cannot serve (btrfs_read_tree_block() then calls
 * btrfs_prefetch_run_deferred()): from a warm page cache the searches read
 * their blocks one by one as --io-threads 1 does, and the read-ahead's
 * planning is not paid.  Read-aheads asked while one is deferred join it.
 * Only with io_threads > 1.  @srch is a malloc'd array of @cap that
 * becomes the read-ahead's: it frees it.
 */
void btrfs_prefetch_searches_deferred(struct btrfs_fs_info *fs_info,
				      struct btrfs_prefetch_search *srch, u32 nr, u32 cap);
/* A read-ahead is deferred: the next read tries the page cache first */
bool btrfs_prefetch_deferred(const struct btrfs_fs_info *fs_info);
/* Run the deferred read-ahead now (a read missed the page cache) */
void btrfs_prefetch_run_deferred(struct btrfs_fs_info *fs_info);
/* Forget it: the searches it was for are done */
void btrfs_prefetch_drop_deferred(struct btrfs_fs_info *fs_info);

#endif
