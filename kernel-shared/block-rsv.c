// SPDX-License-Identifier: GPL-2.0
/*
 * The global block reserve, after fs/btrfs/block-rsv.c:
 * btrfs_update_global_block_rsv() and btrfs_init_global_block_rsv(), with
 * the metadata size helpers of fs/btrfs/fs.h and
 * btrfs_calc_delayed_ref_bytes() of delayed-ref.h.
 * Behaviour reproduced: v6.4-6.18 and 6.1.112+ (floor with delayed refs);
 * up to v6.3 and 6.1.0-6.1.111 (floor of roots + 10 items) on request.
 * The reserve always takes its whole size (since v5.4).
 */
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/space-info.h"

/* Every level may be COWed and split: two blocks per level per item */
#define INSERT_BLOCKS_PER_LEVEL		2
/*
 * A delayed ref run with the free space tree on updates that tree too:
 * c18e3235646a "btrfs: reserve extra space for the free space tree" (v5.17)
 */
#define FREE_SPACE_TREE_REF_FACTOR	2

u64 btrfs_calc_insert_metadata_size(u32 nodesize, u32 num_items)
{
	return (u64)nodesize * BTRFS_MAX_LEVEL * INSERT_BLOCKS_PER_LEVEL * num_items;
}

/* Modify or delete: COW only, one block per level per item */
u64 btrfs_calc_metadata_size(u32 nodesize, u32 num_items)
{
	return (u64)nodesize * BTRFS_MAX_LEVEL * num_items;
}

u64 btrfs_calc_delayed_ref_bytes(u32 nodesize, bool free_space_tree_opt,
				 u32 num_updates)
{
	u64 bytes = btrfs_calc_insert_metadata_size(nodesize, num_updates);

	return free_space_tree_opt ? bytes * FREE_SPACE_TREE_REF_FACTOR : bytes;
}

#define UNLINK_UNITS	__stringify(BTRFS_UNLINK_METADATA_UNITS)
#define OLD_UNLINK	__stringify(BTRFS_GLOBAL_RSV_OLD_UNLINK_ITEMS)

/* Each floor as the report names it */
static const struct {
	const char *text;
	const char *short_text;
} floor_formulas[] = {
	[BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS] = {
		"insert(min_items + " UNLINK_UNITS ") + delayed_ref_bytes(" UNLINK_UNITS ")",
		"insert(min_items+" UNLINK_UNITS ")+delayed_ref_bytes(" UNLINK_UNITS ")",
	},
	[BTRFS_GLOBAL_RSV_FLOOR_PLUS_10_ITEMS] = {
		"insert(min_items + " OLD_UNLINK ")",
		"insert(min_items+" OLD_UNLINK ")",
	},
};

/* A root the filesystem may have: its bytes and one item more, when it has it */
static void add_rsv_root(struct btrfs_global_rsv_calc *out, bool present, u64 bytes_used)
{
	if (!present)
		return;
	out->num += bytes_used;
	out->min_items++;
}

void btrfs_calc_global_rsv(const struct btrfs_global_rsv_inputs *in,
			   enum btrfs_global_rsv_floor floor,
			   struct btrfs_global_rsv_calc *out)
{
	out->num = in->tree_root_bytes_used + in->extent_bytes_used;
	out->min_items = BTRFS_GLOBAL_RSV_BASE_ITEMS;
	add_rsv_root(out, in->has_csum_root, in->csum_bytes_used);
	add_rsv_root(out, in->has_free_space_root, in->free_space_bytes_used);
	add_rsv_root(out, in->has_block_group_root, in->block_group_bytes_used);
	add_rsv_root(out, in->has_stripe_root, in->stripe_bytes_used);
	out->floor_kind = floor;
	out->floor_formula = floor_formulas[floor].text;
	out->floor_formula_short = floor_formulas[floor].short_text;
	if (floor == BTRFS_GLOBAL_RSV_FLOOR_PLUS_10_ITEMS) {
		out->floor = btrfs_calc_insert_metadata_size(in->nodesize,
				out->min_items + BTRFS_GLOBAL_RSV_OLD_UNLINK_ITEMS);
	} else {
		out->floor = btrfs_calc_insert_metadata_size(in->nodesize,
					out->min_items + BTRFS_UNLINK_METADATA_UNITS) +
			     btrfs_calc_delayed_ref_bytes(in->nodesize,
					in->free_space_tree_opt,
					BTRFS_UNLINK_METADATA_UNITS);
	}
	out->cap = BTRFS_GLOBAL_RSV_MAX;
	out->size = max_t(u64, out->num, out->floor);
	out->size = min_t(u64, out->size, out->cap);
}

/*
 * Offline, the mount option FREE_SPACE_TREE follows the on-disk bit (it is
 * set at mount when compat_ro FREE_SPACE_TREE is, and no option says
 * otherwise), and the tree root's in-memory bytes_used is 0 at mount.
 */
void btrfs_global_rsv_inputs_from_fs(const struct btrfs_fs_info *fs_info,
				     struct btrfs_global_rsv_inputs *in)
{
	*in = (struct btrfs_global_rsv_inputs) {
		.nodesize = fs_info->nodesize,
		.free_space_tree_opt = btrfs_fs_compat_ro(fs_info,
					BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE),
		.extent_bytes_used = fs_info->extent_root.bytes_used,
		.has_csum_root = fs_info->csum_root.found,
		.csum_bytes_used = fs_info->csum_root.bytes_used,
		.has_free_space_root = fs_info->free_space_root.found,
		.free_space_bytes_used = fs_info->free_space_root.bytes_used,
		.has_block_group_root = fs_info->block_group_root.found,
		.block_group_bytes_used = fs_info->block_group_root.bytes_used,
		.has_stripe_root = fs_info->stripe_root.found,
		.stripe_bytes_used = fs_info->stripe_root.bytes_used,
	};
}

/*
 * The FREE_SPACE_TREE option as the reservations of @model's kernel see
 * it.  Before v5.17 neither the global reserve nor the delayed refs
 * counted the free space tree: 9506f9538206 "btrfs: include the free
 * space tree in the global rsv minimum calculation" and c18e3235646a
 * "btrfs: reserve extra space for the free space tree" (both v5.17).
 * The one place the pre-5.17 rule is applied.
 */
bool btrfs_free_space_tree_accounted(const struct btrfs_fs_info *fs_info,
				     const struct btrfs_kernel_model *model)
{
	return model->free_space_tree_accounting &&
	       btrfs_fs_compat_ro(fs_info, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE);
}

/*
 * btrfs_start_transaction(root, n)'s metadata reservation, FLUSH_ALL:
 * btrfs_calc_insert_metadata_size(n) plus (6.7+, btrfs_reserve_trans_metadata())
 * btrfs_calc_delayed_ref_bytes(n), doubled with the free space tree;
 * before 6.7 insert(n) doubled (the delayed refs reserve not full).
 * 4.5 MiB for 6 items at 16 KiB nodes on 6.18.
 */
u64 btrfs_calc_start_trans_size(const struct btrfs_fs_info *fs_info,
				const struct btrfs_kernel_model *model, u32 num_items)
{
	bool fst = btrfs_free_space_tree_accounted(fs_info, model);
	u64 insert = btrfs_calc_insert_metadata_size(fs_info->nodesize, num_items);

	if (model->trans_delayed_ref_bytes)
		return insert + btrfs_calc_delayed_ref_bytes(fs_info->nodesize, fst, num_items);
	return 2 * insert;
}

/*
 * btrfs_update_global_block_rsv() of @model's kernel on @fs_info's roots:
 * its inputs (@in, pre-5.17 without the free space tree) and its floor.
 */
void btrfs_calc_global_rsv_for_kernel(const struct btrfs_fs_info *fs_info,
				      const struct btrfs_kernel_model *model,
				      struct btrfs_global_rsv_inputs *in,
				      struct btrfs_global_rsv_calc *calc)
{
	btrfs_global_rsv_inputs_from_fs(fs_info, in);
	if (!model->free_space_tree_accounting)
		in->has_free_space_root = false;
	in->free_space_tree_opt = btrfs_free_space_tree_accounted(fs_info, model);
	btrfs_calc_global_rsv(in, model->global_rsv_unlink_floor ?
			      BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS :
			      BTRFS_GLOBAL_RSV_FLOOR_PLUS_10_ITEMS, calc);
}

/*
 * What the global reserve holds right after mount for @model's kernel:
 * the whole size (since v5.4, d792b0f19711 "btrfs: always reserve our
 * entire size for the global reserve").  Live mode: what the running
 * kernel reserved, as sysfs showed it.
 */
u64 btrfs_global_rsv_after_mount(const struct btrfs_fs_info *fs_info,
				 const struct btrfs_kernel_model *model)
{
	struct btrfs_global_rsv_inputs in;
	struct btrfs_global_rsv_calc calc;

	if (fs_info->live && fs_info->global_rsv_size)
		return fs_info->global_rsv_reserved;
	btrfs_calc_global_rsv_for_kernel(fs_info, model, &in, &calc);
	return calc.size;
}

/*
 * btrfs_init_global_block_rsv() on a copy @si of one of @fs_info's space
 * infos: the reserve attaches to the metadata (or mixed) space info and
 * its @reserved bytes go into bytes_may_use.  The load keeps the space
 * infos raw, so this is the one place the reserve is added, once, with
 * the chosen kernel's size; live, sysfs bytes_may_use has it already.
 */
void btrfs_init_global_block_rsv(const struct btrfs_fs_info *fs_info, u64 reserved,
				 struct btrfs_space_info *si)
{
	if (fs_info->live || !(si->flags & BTRFS_BLOCK_GROUP_METADATA))
		return;
	si->bytes_may_use += reserved;
}
