/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_DELAYED_REF_H
#define BTRFS_SPACE_DELAYED_REF_H

#include <stdbool.h>
#include <stdint.h>
#include "common/packed-refs.h"
#include "common/types.h"

struct btrfs_kernel_model;
struct btrfs_fs_info;

/* What the csum-deletion charge depends on: fixed per filesystem */
struct btrfs_csum_params {
	u32 nodesize;
	u32 sectorsize;
	u32 csum_size;
	bool free_space_tree_opt;
};

/* Running totals for the delayed-ref reservation of dropping data extents */
struct btrfs_csum_delete_calc {
	u64 extents;			/* delayed-ref heads: distinct extents */
	u64 disk_bytes;
	u64 csum_leaves;		/* summed per head, each rounded up */
	u64 refs;			/* ref nodes: merged ones count once */
	u64 drop_ref_bytes;		/* delayed_ref_bytes(1) per dropped ref */
	u64 csum_bytes;			/* the csum-deletion part */
	u64 csum_bytes_before;		/* same, as before v6.7 */
	u64 total;
	u64 total_before;
};

u32 btrfs_csums_per_leaf(const struct btrfs_csum_params *p);
u64 btrfs_csum_bytes_to_leaves(const struct btrfs_csum_params *p, u64 csum_bytes);
u64 btrfs_calc_delayed_ref_csum_bytes(const struct btrfs_csum_params *p,
				      u64 num_csum_items);
void btrfs_csum_params_from_fs(const struct btrfs_fs_info *fs_info,
			       struct btrfs_csum_params *p);
void btrfs_csum_params_for_kernel(const struct btrfs_fs_info *fs_info,
				  const struct btrfs_kernel_model *model,
				  struct btrfs_csum_params *p);
void btrfs_csum_delete_add_heads(const struct btrfs_csum_params *p,
				 const struct btrfs_kernel_model *model,
				 struct btrfs_csum_delete_calc *calc,
				 u64 disk_bytes, u64 count);
void btrfs_csum_delete_add_refs(const struct btrfs_csum_params *p,
				struct btrfs_csum_delete_calc *calc, u64 count);
void btrfs_csum_delete_add(const struct btrfs_csum_params *p,
			   const struct btrfs_kernel_model *model,
			   struct btrfs_csum_delete_calc *calc, u64 disk_bytes,
			   u64 count);

/*
 * The delayed refs one transaction has queued, as delayed-ref.c keeps them:
 * one head per bytenr with its total_ref_mod, one ref node per (bytenr,
 * type, root or parent, owner, offset) with its ref_mod.  The size of
 * delayed_refs_rsv follows every step the way add_delayed_ref() changes
 * it: +delayed_ref_bytes(1) for a node inserted, -delayed_ref_bytes(1) for
 * a node merged down to ref_mod 0 (drop_delayed_ref()), and the csum leaves
 * of a data head charged when its total_ref_mod goes below 0 and released
 * when it comes back (add_delayed_ref_head(), update_existing_head_ref()).
 */
#define BTRFS_DELAYED_REF_ADD		1
#define BTRFS_DELAYED_REF_DROP		(-1)

struct btrfs_sim_head {
	u64 bytenr;			/* 0: free slot */
	u64 num_bytes;
	int64_t ref_mod;		/* total_ref_mod, while queued */
	int64_t ran_mod;		/* what runs have written to the extent tree */
	u32 flags_to_set;		/* extent ops: BTRFS_BLOCK_FLAG_* (40 bytes a head) */
	bool is_data;
	bool queued;			/* false once run: the next ref makes a new head */
};

/*
 * A lone ref: the file's only ref to its extent.  When the deletion drops
 * it first of all refs to that extent, its head and node are new and
 * (unless another ref comes) alone: counted, not kept in the tables.
 */
enum btrfs_lone_state {
	BTRFS_LONE_NONE,		/* the file refers to its extent more than once */
	BTRFS_LONE_WAITING,		/* not dropped (yet) */
	BTRFS_LONE_DROPPED,		/* dropped: a head and a node, counted only */
	BTRFS_LONE_QUEUED,		/* another ref joined: in the tables, or noted */
};

struct btrfs_sim_ref {
	u64 bytenr;			/* 0: free slot */
	u64 root_or_parent;
	u64 owner;
	u64 offset;
	int32_t ref_mod;		/* an int, as btrfs_delayed_ref_node's: 40 bytes a node */
	u8 type;			/* BTRFS_*_REF_KEY */
	bool used;
};

/* Heads and nodes queued until they ran or the transaction ended, by kind */
struct btrfs_delayed_refs_totals {
	struct btrfs_csum_delete_calc data;	/* data heads and refs: "total" */
	u64 data_heads_uncharged;	/* data heads left at total_ref_mod >= 0 */
	u64 tree_heads;
	u64 tree_refs;			/* tree-block ref nodes alive */
	u64 tree_ref_bytes;
};

struct btrfs_delayed_refs_sim {
	const struct btrfs_csum_params *params;
	const struct btrfs_kernel_model *model;
	struct btrfs_sim_head *heads;
	u64 heads_cap;			/* a power of 2, or 0 */
	u64 heads_used;
	struct btrfs_sim_ref *refs;
	u64 refs_cap;
	u64 refs_used;
	/* the running size of delayed_refs_rsv and what it reached */
	int64_t size;
	int64_t peak;
	u64 ref_inserts;		/* nodes inserted (delayed_ref_updates) */
	u64 ref_zero_merges;		/* nodes merged down to 0 and released */
	struct btrfs_delayed_refs_totals ran;	/* what the heads run so far held */
	/* the lone refs of the file deleted (btrfs_sim_set_lone_refs()) */
	struct packed_refs *lone;	/* by bytenr, states enum btrfs_lone_state */
	u64 nr_lone;
	u64 lone_root;			/* the file's subvolume and inode */
	u64 lone_owner;
	bool lone_open;			/* until the first run of the heads */
};


void btrfs_delayed_refs_sim_init(struct btrfs_delayed_refs_sim *sim,
				 const struct btrfs_csum_params *params,
				 const struct btrfs_kernel_model *model);
void btrfs_delayed_refs_sim_release(struct btrfs_delayed_refs_sim *sim);
int btrfs_sim_add_ref(struct btrfs_delayed_refs_sim *sim, bool is_data,
		      int action, u64 bytenr, u64 num_bytes, u64 parent,
		      u64 root, u64 owner, u64 offset);
/*
 * Of the @nr refs the deletion of inode @owner of subvolume @root will
 * drop, @lone are those alone on their extent, by bytenr (file-item.c
 * finds them; the caller keeps the list): they are counted as they drop
 * instead of kept in the tables, until btrfs_sim_run_all().  Their states
 * are kept beside them in @lone.  More than BTRFS_SIM_MAX_LONE refs: none
 * is lone, all go to the tables.  0, or -ENOMEM.
 */
#define BTRFS_SIM_MAX_LONE	((1ULL << 31) - 1)	/* longer lists stay in the tables */
int btrfs_sim_set_lone_refs(struct btrfs_delayed_refs_sim *sim, struct packed_refs *lone,
			    u64 nr, u64 root, u64 owner);
/*
 * The lone ref of extent @bytenr into *@e, its state (enum
 * btrfs_lone_state) in e->seq: its index in sim->lone, or UINT64_MAX
 */
u64 btrfs_sim_find_lone(const struct btrfs_delayed_refs_sim *sim, u64 bytenr,
			struct packed_ref *e);
static inline int btrfs_sim_set_lone_state(const struct btrfs_delayed_refs_sim *sim,
					   u64 index, enum btrfs_lone_state state)
{
	return packed_refs_set_state(sim->lone, index, state);
}
int btrfs_sim_set_extent_flags(struct btrfs_delayed_refs_sim *sim, u64 bytenr,
			       u64 num_bytes, u64 flags);
const struct btrfs_sim_head *btrfs_sim_find_head(const struct btrfs_delayed_refs_sim *sim,
						  u64 bytenr);
int btrfs_sim_run_all(struct btrfs_delayed_refs_sim *sim);
void btrfs_delayed_refs_sim_totals(const struct btrfs_delayed_refs_sim *sim,
				   struct btrfs_delayed_refs_totals *t);

#endif
