/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_DELAYED_REF_H
#define BTRFS_SPACE_DELAYED_REF_H

#include <stdbool.h>
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

#endif
