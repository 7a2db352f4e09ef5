/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tree blocks a transaction's commit copies outside the subvolume
 * trees, and the tree-block refs those copies queue: the extent, csum,
 * free-space, block-group, root and device trees as the delayed-ref runs
 * and commit_cowonly_roots() of transaction.c change them.
 */
#ifndef BTRFS_SPACE_TRANSACTION_H
#define BTRFS_SPACE_TRANSACTION_H

#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/fs.h"

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
	u64 cap_notes;
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
int btrfs_model_commit_refs(struct btrfs_fs_info *fs_info, u64 subvol,
			    const struct btrfs_delayed_refs_sim *refs,
			    struct btrfs_commit_refs *c);

#endif
