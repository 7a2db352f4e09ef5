// SPDX-License-Identifier: GPL-2.0
/*
 * block-rsv.c: btrfs_calc_start_trans_size(), the metadata
 * btrfs_start_transaction(root, n) reserves at once, worked by hand from
 * start_transaction() (fs/btrfs/transaction.c):
 *
 *   6.7-6.18  insert(n) + delayed_ref_bytes(n) (btrfs_reserve_trans_metadata()),
 *             the delayed-ref part doubled with the free space tree
 *   before    insert(n) doubled, the delayed refs reserve taken as not full
 *
 * insert(n) = nodesize * 8 * 2 * n.
 */
#include "tests/unit/kernel-model.h"
#include "tests/unit/unit-test.h"
#include "kernel-shared/block-rsv.h"

struct trans_row {
	const char *what;
	const char *kernel;
	u32 nodesize;
	bool free_space_tree;
	u32 num_items;
	u64 bytes;		/* worked by hand */
};

static const struct trans_row rows[] = {
	{ "6.18, 16K, FST, 6 items (a create)", "6.18", 16384, true, 6, 4718592 },
	{ "6.18, 16K, no FST, 6 items", "6.18", 16384, false, 6, 3145728 },
	{ "6.7, 16K, FST, 6 items", "6.7", 16384, true, 6, 4718592 },
	{ "6.6, 16K, FST, 6 items: doubled", "6.6", 16384, true, 6, 3145728 },
	{ "6.18, 4K, FST, 1 item", "6.18", 4096, true, 1, 196608 },
	{ "5.12, 4K, FST, 1 item", "5.12", 4096, true, 1, 131072 },
	{ "6.18, 64K, FST, 0 items", "6.18", 65536, true, 0, 0 },
};

int main(void)
{
	/* zeroed: each row sets what the model reads */
	static struct btrfs_fs_info fs_info_rows;
	struct btrfs_fs_info *fs_info = &fs_info_rows;
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct trans_row *r = &rows[i];
		struct btrfs_kernel_model m = unit_kernel_model(r->kernel);

		fs_info->nodesize = r->nodesize;
		fs_info->compat_ro = r->free_space_tree ? BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE : 0;
		check_u64(r->what, btrfs_calc_start_trans_size(fs_info, &m, r->num_items), r->bytes);
	}
	return unit_failures ? 1 : 0;
}
