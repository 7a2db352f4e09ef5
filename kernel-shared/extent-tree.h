/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What one transaction's copy-on-write of subvolume tree blocks queues as
 * delayed refs: the state of the copies (struct btrfs_cow_sim) and
 * btrfs_lookup_extent_info() and __btrfs_mod_ref() of extent-tree.c, over
 * the image's blocks and the delayed refs queued so far.  The COW of a
 * search path that calls them (ctree.c in the kernel) is in ctree-cow.h.
 */
#ifndef BTRFS_SPACE_EXTENT_TREE_H
#define BTRFS_SPACE_EXTENT_TREE_H

#include "common/u64-index.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/inode.h"
#include "kernel-shared/tree-block.h"

/* The backref revision in the top byte of struct btrfs_header flags */
#define BTRFS_BACKREF_REV_SHIFT		56
#define BTRFS_MIXED_BACKREF_REV		1

/* A leaf whose items the transaction deleted or moved, against the image's */
struct btrfs_sim_leaf {
	u64 start;
	u32 nritems;			/* the image's */
	u8 *gone;			/* a bit a slot: deleted or pushed out */
	u32 nr_gone;			/* bits set in gone[] */
	u32 image_space;		/* the image's items and headers, bytes */
	u32 gone_space;			/* of which gone */
	u32 pushed_in;			/* bytes (items and headers) moved in */
	struct btrfs_sim_leaf **moved_to; /* per slot: the leaf a push moved it to */
	bool deleted;			/* emptied: btrfs_del_leaf() */
};

static inline bool btrfs_sim_leaf_slot_gone(const struct btrfs_sim_leaf *l, u32 slot)
{
	return l->gone[slot / 8] & (1U << (slot % 8));
}

/* The blocks one transaction has COWed and what their COW queued */
struct btrfs_cow_sim {
	struct btrfs_fs_info *fs_info;
	struct btrfs_delayed_refs_sim *refs;
	u64 nr_cowed;			/* original blocks already copied */
	u64 cap_cowed;
	u64 next_bytenr;		/* stand-in addresses of the copies */
	u64 *copy_of;			/* per block copied: its copy's stand-in address */
	struct u64_index cowed_index;	/* original block -> its index in copy_of[] */
	struct btrfs_sim_leaf **leaves;
	u64 nr_leaves;
	u32 cap_leaves;
	struct u64_index leaf_index;	/* leaf start -> its index in leaves[] */
	/*
	 * nodes whose pointers the transaction changed (deleted leaves,
	 * balance_level()'s pushes): their count now, and the node an
	 * emptied one's pointers went to (0: not emptied)
	 */
	u64 *nodes;
	u32 *node_nr;
	u64 *emptied_into;
	u64 nr_nodes;
	u64 cap_nodes;
	struct u64_index node_index;	/* node -> its index in nodes[] */
	/* what the copies were */
	u64 cows;
	u64 shared_cows;		/* refs > 1: items' refs added */
	u64 full_backref_cows;		/* refs == 1, FULL_BACKREF: moved */
	u64 neighbour_cows;		/* siblings copied by leaf pushes, node balancing */
	u64 leaves_deleted;		/* emptied leaves freed */
	u64 splits;			/* leaves an insert split */
};

void btrfs_cow_sim_init(struct btrfs_cow_sim *cs, struct btrfs_fs_info *fs_info,
			struct btrfs_delayed_refs_sim *refs);
void btrfs_cow_sim_release(struct btrfs_cow_sim *cs);
int btrfs_read_block_extent_item(struct btrfs_fs_info *fs_info, u64 bytenr, int level,
				 u64 *refs, u64 *flags, unsigned int purpose);
int btrfs_lookup_extent_info(struct btrfs_cow_sim *cs,
			     const struct btrfs_tree_block *eb, u64 *refs,
			     u64 *flags);
int btrfs_mod_ref(struct btrfs_cow_sim *cs, const struct btrfs_tree_block *eb,
		  u64 ref_root, bool inc, bool full_backref);

#endif
