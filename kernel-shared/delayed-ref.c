// SPDX-License-Identifier: GPL-2.0
/*
 * The delayed-ref reservation for dropping data extents, after
 * fs/btrfs/delayed-ref.c (add_delayed_ref_head, btrfs_update_delayed_refs_rsv),
 * delayed-ref.h (btrfs_calc_delayed_ref_bytes/_csum_bytes) and fs.h
 * (btrfs_csum_bytes_to_leaves).  Behaviour reproduced: 6.7-6.18 and,
 * for comparison, the kernels before "btrfs: stop doing excessive space
 * reservation for csum deletion" (charged as delayed ref updates).
 */
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/fs.h"
#include "kernel-shared/kernel-version.h"

/* One csum item may fill a whole leaf: only one item header is taken off */
u32 btrfs_csums_per_leaf(const struct btrfs_csum_params *p)
{
	return btrfs_max_item_size(p->nodesize) / p->csum_size;
}

static u32 sectorsize_bits(u32 sectorsize)
{
	u32 bits = 0;

	while ((1U << bits) < sectorsize)
		bits++;
	return bits;
}

u64 btrfs_csum_bytes_to_leaves(const struct btrfs_csum_params *p, u64 csum_bytes)
{
	u64 sectors = csum_bytes >> sectorsize_bits(p->sectorsize);
	u32 per_leaf = btrfs_csums_per_leaf(p);

	return (sectors + per_leaf - 1) / per_leaf;
}

/* Deleting csums only COWs the path: no split, no free space tree update */
u64 btrfs_calc_delayed_ref_csum_bytes(const struct btrfs_csum_params *p,
				      u64 num_csum_items)
{
	return btrfs_calc_metadata_size(p->nodesize, 1) * num_csum_items;
}

void btrfs_csum_params_from_fs(const struct btrfs_fs_info *fs_info,
			       struct btrfs_csum_params *p)
{
	p->nodesize = fs_info->nodesize;
	p->sectorsize = fs_info->sectorsize;
	p->csum_size = fs_info->csum_size;
	p->free_space_tree_opt = btrfs_fs_compat_ro(fs_info,
				BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE);
}

static void csum_delete_update_totals(struct btrfs_csum_delete_calc *calc)
{
	calc->total = calc->drop_ref_bytes + calc->csum_bytes;
	calc->total_before = calc->drop_ref_bytes + calc->csum_bytes_before;
}

/*
 * @count new delayed-ref heads for extents of @disk_bytes each, as
 * add_delayed_ref_head() charges a data head whose first action is a drop:
 * every head rounds its csum leaves up on its own, which is why the total
 * is not the rounding of the summed bytes.  The ref nodes are separate
 * (btrfs_csum_delete_add_refs): heads and refs only go one to one when
 * each extent has a single reference.
 */
void btrfs_csum_delete_add_heads(const struct btrfs_csum_params *p,
				 const struct btrfs_kernel_model *model,
				 struct btrfs_csum_delete_calc *calc,
				 u64 disk_bytes, u64 count)
{
	u64 leaves = btrfs_csum_bytes_to_leaves(p, disk_bytes);
	u64 before = leaves * btrfs_calc_delayed_ref_bytes(p->nodesize,
							   p->free_space_tree_opt, 1);
	u64 after = btrfs_calc_delayed_ref_csum_bytes(p, leaves);

	calc->extents += count;
	calc->disk_bytes += disk_bytes * count;
	calc->csum_leaves += leaves * count;
	calc->csum_bytes_before += before * count;
	calc->csum_bytes += (model->csum_delete_metadata_size ? after : before) * count;
	csum_delete_update_totals(calc);
}

/*
 * @count ref nodes that insert_delayed_ref() did not merge into an existing
 * one: each is one delayed_ref_updates, charged delayed_ref_bytes(1).
 */
void btrfs_csum_delete_add_refs(const struct btrfs_csum_params *p,
				struct btrfs_csum_delete_calc *calc, u64 count)
{
	u64 ref = btrfs_calc_delayed_ref_bytes(p->nodesize, p->free_space_tree_opt, 1);

	calc->refs += count;
	calc->drop_ref_bytes += ref * count;
	csum_delete_update_totals(calc);
}

/* @count extents of @disk_bytes each, each with one dropped ref */
void btrfs_csum_delete_add(const struct btrfs_csum_params *p,
			   const struct btrfs_kernel_model *model,
			   struct btrfs_csum_delete_calc *calc, u64 disk_bytes,
			   u64 count)
{
	btrfs_csum_delete_add_heads(p, model, calc, disk_bytes, count);
	btrfs_csum_delete_add_refs(p, calc, count);
}
