/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one commit model (transaction.c): the tree blocks a transaction's
 * commit copies, given the delayed-ref heads it queued and the trees it
 * changed, run in the order btrfs_select_ref_head() takes them, then
 * commit_cowonly_roots() (extent, csum, free-space, block-group, root and
 * device trees).  Fed by the log replay (tree-log.c) and by csum-delete
 * (btrfs_model_commit_refs()).
 */
#ifndef BTRFS_SPACE_TRANSACTION_H
#define BTRFS_SPACE_TRANSACTION_H

#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/fs.h"

struct btrfs_tree_sim;
struct btrfs_path;

enum btrfs_commit_tree {
	BTRFS_COMMIT_EXTENT,
	BTRFS_COMMIT_CSUM,
	BTRFS_COMMIT_FREE_SPACE,
	BTRFS_COMMIT_BLOCK_GROUP,
	BTRFS_COMMIT_ROOT,
	BTRFS_COMMIT_DEV,
	BTRFS_COMMIT_NR_TREES,
};

/* Why a figure is not exact (bits of btrfs_commit_refs.inexact) */
#define BTRFS_COMMIT_INEXACT_SPLIT	(1U << 0)	/* a leaf may split or merge */
#define BTRFS_COMMIT_INEXACT_ALLOC	(1U << 1)	/* new blocks' items may cross leaves */
#define BTRFS_COMMIT_INEXACT_NO_FST	(1U << 2)	/* free space cache v1 written */
#define BTRFS_COMMIT_INEXACT_QUOTA	(1U << 3)	/* btrfs_run_qgroups() writes the quota tree */
#define BTRFS_COMMIT_INEXACT_REASONS	4

/* A ref node as a run of the heads met it (not merged away) */
struct btrfs_commit_node {
	u64 bytenr;
	u64 num_bytes;			/* its head's */
	u64 root_or_parent;
	u64 owner;
	u64 offset;
	u64 seq;			/* the order it was noted in */
	int64_t ref_mod;
	u32 run;			/* 0: the commit's first run, 1: the next */
	u8 type;
};

/* What the commit does outside the subvolume trees (transaction.c) */
struct btrfs_commit_refs {
	/* filled while the deletion runs: btrfs_commit_note_refs() */
	struct btrfs_commit_node *notes;
	u64 nr_notes;
	u32 cap_notes;
	u32 runs;
	/* the result: btrfs_model_commit_refs() */
	u64 copies[BTRFS_COMMIT_NR_TREES];
	u64 copies_total;
	u64 new_blocks;			/* tree blocks whose METADATA_ITEM goes in */
	u64 freed_blocks;		/* image tree blocks whose last ref goes */
	u64 freed_data;			/* data extents whose last ref goes */
	u64 splits;			/* extent-tree leaves (and roots) made by splits */
	u64 nodes;			/* tree-block ref nodes: 2 per copy, 1 per split */
	u64 bytes;			/* nodes * delayed_ref_bytes(1) */
	u32 inexact;			/* BTRFS_COMMIT_INEXACT_* */
};

void btrfs_commit_refs_release(struct btrfs_commit_refs *c);
/* Before each run of the heads and at the end: remember what they touch */
int btrfs_commit_note_refs(struct btrfs_commit_refs *c,
			   const struct btrfs_delayed_refs_sim *refs);
/*
 * The lowest @want free node-sized places of the writable metadata block
 * groups, as the image's extent items leave them (where find_free_extent()
 * puts new tree blocks, lowest first), less those @busy says are taken,
 * into *@places (*@nr of them, array_grow() capacity *@cap).
 */
int btrfs_free_block_places(struct btrfs_fs_info *fs_info, u32 want,
			    bool (*busy)(void *ctx, u64 bytenr), void *ctx,
			    u64 **places, u32 *nr, u32 *cap);
/*
 * The keys btrfs_add_to_free_space_tree() (@add) or
 * btrfs_remove_from_free_space_tree() searches for [@start, @start + @len)
 * of @bg, in order: its FREE_SPACE_INFO, then the free extents beside the
 * range (add) or the one holding it (remove).  How many are in @keys (3 at most).
 */
u32 btrfs_free_space_change_keys(const struct btrfs_block_group *bg, u64 start, u64 len,
				 bool add, struct btrfs_key *keys);
/*
 * csum-delete's commit: the deletion's heads (the notes, run by run) and
 * its new subvolume blocks fed to the commit model; the result into @c
 */
int btrfs_model_commit_refs(struct btrfs_fs_info *fs_info, u64 subvol,
			    const struct btrfs_delayed_refs_sim *refs,
			    struct btrfs_commit_refs *c);

/*
 * The key and the item data of a tree block's extent item
 * (alloc_reserved_tree_block()): the skinny METADATA_ITEM (bytenr, 169,
 * level), else (bytenr, EXTENT_ITEM, nodesize) with a tree_block_info;
 * one inline tree ref.
 */
struct btrfs_key btrfs_tree_block_item_key(const struct btrfs_fs_info *fs_info, u64 bytenr,
					   u64 level);
u32 btrfs_tree_block_item_size(const struct btrfs_fs_info *fs_info);

/* A leaf-model result: 1 (the model cannot follow) makes @ts inexact */
int btrfs_tree_sim_result(struct btrfs_tree_sim *ts, int ret);

/*
 * The delayed-ref heads of a transaction in the order the runs take them
 * (btrfs_run_delayed_refs(), btrfs_select_ref_head()): lowest bytenr
 * first from where the run stands (run_delayed_start: the end of the last
 * head taken, and since no other head starts inside it, its start here);
 * a head queued below that point waits for the run to wrap to 0 (a later
 * pass).  A run that finds no head left has looked again
 * from 0 and stands at 0 (btrfs_head_queue_run_end()).
 */
struct btrfs_head_run {
	u64 bytenr;
	u32 pass;			/* wraps of the run before it is taken */
	u32 arg;			/* the caller's */
	u8 kind;
	u8 level;
};

/*
 * Heads a caller hands over in bytenr order, all in the run's current
 * pass, taken when the run reaches them instead of kept in the heap
 */
struct btrfs_head_source {
	bool (*peek)(void *ctx, u64 *bytenr, u32 *arg);	/* false: none left */
	void (*next)(void *ctx);			/* past the one peeked */
	void *ctx;
	u32 pass;
	u8 kind;
};

struct btrfs_head_queue {
	struct btrfs_head_run *heap;	/* by (pass, bytenr) */
	u32 nr;
	u32 cap;
	u64 cursor;			/* run_delayed_start */
	u32 pass;
	struct btrfs_head_source src;
	bool has_src;
};

int btrfs_head_queue_push(struct btrfs_head_queue *q, u64 bytenr, u8 kind, u8 level, u32 arg);
/* The heads of @src join the queue; the run must stand at 0 */
int btrfs_head_queue_attach(struct btrfs_head_queue *q, const struct btrfs_head_source *src);
bool btrfs_head_queue_empty(struct btrfs_head_queue *q);
/* The next head the run takes (@q not empty); the cursor moves to it */
struct btrfs_head_run btrfs_head_queue_pop(struct btrfs_head_queue *q);
/* No head left: the run stands at 0 */
void btrfs_head_queue_run_end(struct btrfs_head_queue *q);
void btrfs_head_queue_release(struct btrfs_head_queue *q);

/*
 * The commit model: what a transaction's commit copies, given the heads
 * it queued and the trees it touched (their leaf models).  Every block a
 * change lands in is copied once (btrfs_cow_block()), each copy and each
 * new block at the lowest free place of the metadata block groups
 * (btrfs_free_block_places(), less what @place_taken says), its item
 * inserted when its head runs and the original's deleted when its own
 * does; the runs change the extent tree, the free space tree and what the
 * caller's heads change; then commit_cowonly_roots() (dirty block groups,
 * device stats, the root items of the subvolumes and of the cow-only
 * trees copied) until nothing new is copied.
 */
struct btrfs_commit;

struct btrfs_commit_feed {
	/*
	 * Run the caller's head @arg (queued by btrfs_commit_queue_head()):
	 * change the trees, and btrfs_commit_free_space_change() what it frees.
	 */
	int (*run_head)(void *ctx, struct btrfs_commit *cm, u32 arg);
	bool (*place_taken)(void *ctx, u64 bytenr);	/* NULL: none */
	/* told of each COW search's path on the image's tree, from @min_level up (NULL: none) */
	int (*read_path)(void *ctx, const struct btrfs_root_ref *root,
			 const struct btrfs_path *path, int min_level);
	/* a free's btrfs_update_block_group() caches its block group (NULL: none) */
	int (*cache_bg)(void *ctx, u64 bytenr);
	void *ctx;
	struct btrfs_tree_sim *extent;	/* the extent tree, as the runs change it */
	struct btrfs_tree_sim **trees;	/* the other trees the transaction changed */
	u32 nr_trees;
	const u64 *subvols;		/* the subvolumes whose root items it rewrites */
	u32 nr_subvols;
};

/* What the commit did: the places its blocks took and the extent tree's change */
struct btrfs_commit_result {
	u64 copies[BTRFS_COMMIT_NR_TREES];	/* image blocks copied, per cow-only tree */
	u64 blocks;			/* copies and new blocks, each one place */
	u64 extent_gained;		/* extent-tree leaves and roots splits made */
	u64 extent_freed;		/* extent-tree leaves and nodes freed */
	u64 freed;			/* copies and new leaves freed again */
	u64 cancelled;			/* of which before their ADD head ran */
	bool inexact;			/* did not settle, or ran out of places */
	bool no_free_space_tree;	/* free space changed under free space cache v1 */
};

/* The trees' copies so far are noted: the caller then queues its heads */
int btrfs_commit_start(struct btrfs_fs_info *fs_info, const struct btrfs_commit_feed *feed,
		       struct btrfs_commit **out);
int btrfs_commit_queue_head(struct btrfs_commit *cm, u64 bytenr, u32 arg);
/*
 * @nr of the caller's heads at once, in bytenr order from @peek and @next
 * (struct btrfs_head_source): as btrfs_commit_queue_head() of each, without
 * keeping them; the run must stand at 0 (none run since the last ended)
 */
int btrfs_commit_queue_sorted_heads(struct btrfs_commit *cm, u64 nr,
				    bool (*peek)(void *ctx, u64 *bytenr, u32 *arg),
				    void (*next)(void *ctx), void *ctx);
/* A block the transaction allocated (not a copy the model makes): a place, its ADD head */
int btrfs_commit_new_block(struct btrfs_commit *cm);
/* A COW search's @path in @root: its blocks from @min_level up copied */
int btrfs_commit_cow_path(struct btrfs_commit *cm, const struct btrfs_root_ref *root,
			  const struct btrfs_path *path, int min_level);
/* One run: the heads queued and those they queue, until none is left */
int btrfs_commit_run_heads(struct btrfs_commit *cm);
/*
 * btrfs_add_to_free_space_tree() (@add) or
 * btrfs_remove_from_free_space_tree(): the searches copy their paths, and
 * the block group is dirty.
 */
int btrfs_commit_free_space_change(struct btrfs_commit *cm, u64 start, u64 len, bool add);
int btrfs_commit_run(struct btrfs_commit *cm, struct btrfs_commit_result *res);
void btrfs_commit_end(struct btrfs_commit *cm);

#endif
