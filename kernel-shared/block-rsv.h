/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_BLOCK_RSV_H
#define BTRFS_SPACE_BLOCK_RSV_H

#include <stdbool.h>
#include "kernel-shared/fs.h"

/* BTRFS_UNLINK_METADATA_UNITS: orphan, dir item, dir index, inode ref, inode, parent */
#define BTRFS_UNLINK_METADATA_UNITS	6
/*
 * The global reserve's floor before f8f210dc8470 (v6.4, 6.1.112): room
 * for the fallback unlink on top of the roots, 5 items for the unlink
 * and 5 for its delayed ref updates.
 */
#define BTRFS_GLOBAL_RSV_OLD_UNLINK_ITEMS	10
/* The roots every filesystem counts in the reserve: tree root, extent root */
#define BTRFS_GLOBAL_RSV_BASE_ITEMS	2
/* btrfs_update_global_block_rsv(): the reserve never exceeds 512 MiB */
#define BTRFS_GLOBAL_RSV_MAX		(512ULL << 20)

/* Everything btrfs_update_global_block_rsv() reads, taken from the image */
struct btrfs_global_rsv_inputs {
	u32 nodesize;
	bool free_space_tree_opt;	/* FREE_SPACE_TREE mount option: the on-disk bit offline */
	u64 tree_root_bytes_used;	/* in memory only: 0 at mount */
	u64 extent_bytes_used;
	u64 csum_bytes_used;
	bool has_csum_root;
	bool has_free_space_root;
	u64 free_space_bytes_used;
	bool has_block_group_root;
	u64 block_group_bytes_used;
	bool has_stripe_root;
	u64 stripe_bytes_used;
};

/* Which floor formula: the kernel changed it in v6.4 (and 6.1.112) */
enum btrfs_global_rsv_floor {
	BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS,	/* v6.4+, 6.1.112+ */
	BTRFS_GLOBAL_RSV_FLOOR_PLUS_10_ITEMS,		/* up to v6.3, 6.1.0-6.1.111 */
};

struct btrfs_global_rsv_calc {
	u64 num;			/* summed root bytes_used */
	u32 min_items;
	enum btrfs_global_rsv_floor floor_kind;
	const char *floor_formula;	/* floor_kind as a formula */
	const char *floor_formula_short;	/* the same without spaces */
	u64 floor;
	u64 cap;			/* BTRFS_GLOBAL_RSV_MAX */
	u64 size;			/* min(max(num, floor), cap) */
};

u64 btrfs_calc_insert_metadata_size(u32 nodesize, u32 num_items);
u64 btrfs_calc_metadata_size(u32 nodesize, u32 num_items);
u64 btrfs_calc_delayed_ref_bytes(u32 nodesize, bool free_space_tree_opt,
				 u32 num_updates);
void btrfs_calc_global_rsv(const struct btrfs_global_rsv_inputs *in,
			   enum btrfs_global_rsv_floor floor,
			   struct btrfs_global_rsv_calc *out);
void btrfs_global_rsv_inputs_from_fs(const struct btrfs_fs_info *fs_info,
				     struct btrfs_global_rsv_inputs *in);
struct btrfs_kernel_model;

bool btrfs_free_space_tree_accounted(const struct btrfs_fs_info *fs_info,
				     const struct btrfs_kernel_model *model);
u64 btrfs_calc_start_trans_size(const struct btrfs_fs_info *fs_info,
				const struct btrfs_kernel_model *model, u32 num_items);
void btrfs_calc_global_rsv_for_kernel(const struct btrfs_fs_info *fs_info,
				      const struct btrfs_kernel_model *model,
				      struct btrfs_global_rsv_inputs *in,
				      struct btrfs_global_rsv_calc *calc);
u64 btrfs_global_rsv_after_mount(const struct btrfs_fs_info *fs_info,
				 const struct btrfs_kernel_model *model);
void btrfs_init_global_block_rsv(const struct btrfs_fs_info *fs_info, u64 reserved,
				 struct btrfs_space_info *si);

#endif
