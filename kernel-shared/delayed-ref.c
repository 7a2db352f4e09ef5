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

/*
 * @count extents of @disk_bytes each are dropped, each its own delayed-ref
 * head (distinct bytenr): every head rounds its csum leaves up on its own,
 * which is why the total is not the rounding of the summed bytes.
 */
void btrfs_csum_delete_add(const struct btrfs_csum_params *p,
			   const struct btrfs_kernel_model *model,
			   struct btrfs_csum_delete_calc *calc, u64 disk_bytes,
			   u64 count)
{
	u64 leaves = btrfs_csum_bytes_to_leaves(p, disk_bytes);
	u64 ref = btrfs_calc_delayed_ref_bytes(p->nodesize, p->free_space_tree_opt, 1);
	u64 after = btrfs_calc_delayed_ref_csum_bytes(p, leaves);
	u64 before = leaves * ref;

	calc->extents += count;
	calc->disk_bytes += disk_bytes * count;
	calc->csum_leaves += leaves * count;
	calc->drop_ref_bytes += ref * count;
	calc->csum_bytes_before += before * count;
	calc->csum_bytes += (model->csum_delete_metadata_size ? after : before) * count;
	calc->total = calc->drop_ref_bytes + calc->csum_bytes;
	calc->total_before = calc->drop_ref_bytes + calc->csum_bytes_before;
}
