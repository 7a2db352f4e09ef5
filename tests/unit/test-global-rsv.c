// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs_calc_global_rsv() (block-rsv.c, the kernel's
 * btrfs_update_global_block_rsv()) as a table, Documentation/formulas.md
 * section 6:
 *
 *   num   = extent + csum + free space (FST) + block group (BGT) + raid stripe (RST)
 *   roots = 2 + 1 per tree of csum, FST, BGT, RST that is there
 *   floor = roots+6 inserts + 6 delayed refs (x2 with FST)  v6.4+, 6.1.112+
 *         = roots+10 inserts                                 up to v6.3
 *   insert(n) = n * 16 * nodesize
 *   size  = min(max(num, floor), 512 MiB)
 *
 * The first rows are truth images: the root items' bytes_used as dump-tree
 * printed them and the global_rsv_size sysfs showed after a 6.18 mount
 * (../shared/truth/NAME.json, on_disk.root_items_main and
 * sysfs.allocation), 4, 16 and 64 KiB nodes, with a block-group tree,
 * trees above the floor and mixed block groups.  The other rows were
 * worked from the formula text by a python check (not by this code): both
 * floors, trees missing, each side of the floor and of the cap, and a sum
 * at the top of u64.
 *
 * A second table takes the reserve per kernel from the image's fields
 * (btrfs_calc_global_rsv_for_kernel()), by section 2: before v5.17 the
 * free space tree counts neither in the sum nor in the roots, and its
 * delayed refs are not doubled; the unlink floor from v6.4 and in 6.1.112
 * up to 6.2.
 */
#include <stdio.h>
#include <stdlib.h>
#include "tests/unit/kernel-model.h"
#include "tests/unit/unit-test.h"
#include "kernel-shared/block-rsv.h"

#define NEW	BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS
#define OLD	BTRFS_GLOBAL_RSV_FLOOR_PLUS_10_ITEMS
#define CAP	(512ULL << 20)
#define TOP	18446744073709551615ULL

struct rsv_row {
	const char *what;
	enum btrfs_global_rsv_floor floor;
	u32 nodesize;
	bool fst;		/* the FST bit: the tree is there and the option on */
	bool csum;		/* the csum root item is there */
	bool bgt;
	bool rst;
	u64 extent;
	u64 csum_used;
	u64 fst_used;
	u64 bgt_used;
	u64 rst_used;
	u64 size;		/* the kernel's sysfs value, or worked from the text */
};

static const struct rsv_row rows[] = {
	/* truth images, 6.18: sysfs allocation/global_rsv_size */
	{ "truth ns4k-1g", NEW, 4096, true, true, false, false,
	  4096, 4096, 4096, 0, 0, 1441792 },
	{ "truth ns16k-1g", NEW, 16384, true, true, false, false,
	  16384, 16384, 16384, 0, 0, 5767168 },
	{ "truth ns64k-1g", NEW, 65536, true, true, false, false,
	  65536, 65536, 65536, 0, 0, 23068672 },
	{ "truth bgt-1g", NEW, 16384, true, true, true, false,
	  16384, 16384, 16384, 16384, 0, 6029312 },
	{ "truth many-bgs-1t-bgt", NEW, 16384, true, true, true, false,
	  131072, 16384, 16384, 16384, 0, 6029312 },
	{ "truth bg-spread-ns4k: trees above the floor", NEW, 4096, true, true, false, false,
	  2469888, 4096, 24576, 0, 0, 2498560 },
	{ "truth bg-spread-ns4k-50", NEW, 4096, true, true, false, false,
	  626688, 4096, 4096, 0, 0, 1441792 },
	{ "truth bg-spread-ns16k: 3.9 MiB of trees, the floor", NEW, 16384, true, true, false,
	  false, 4096000, 16384, 16384, 0, 0, 5767168 },
	{ "truth pop-smallfiles", NEW, 16384, true, true, false, false,
	  589824, 98304, 16384, 0, 0, 5767168 },
	{ "truth mixed-256m", NEW, 4096, true, true, false, false,
	  4096, 4096, 4096, 0, 0, 1441792 },
	/* worked from the text */
	{ "no free space tree, 16K", NEW, 16384, false, true, false, false,
	  16384, 16384, 0, 0, 0, 3932160 },
	{ "no csum root, 16K", NEW, 16384, true, false, false, false,
	  16384, 0, 16384, 0, 0, 5505024 },
	{ "FST+BGT+RST, 16K", NEW, 16384, true, true, true, true,
	  16384, 16384, 16384, 16384, 16384, 6291456 },
	{ "all trees empty, 4K", NEW, 4096, true, true, false, false, 0, 0, 0, 0, 0, 1441792 },
	{ "old floor, 4K FST", OLD, 4096, true, true, false, false,
	  4096, 4096, 4096, 0, 0, 917504 },
	{ "old floor, 64K FST", OLD, 65536, true, true, false, false,
	  65536, 65536, 65536, 0, 0, 14680064 },
	{ "old floor, 16K no FST", OLD, 16384, false, true, false, false,
	  16384, 16384, 0, 0, 0, 3407872 },
	{ "old floor, 64K no FST", OLD, 65536, false, true, false, false,
	  65536, 65536, 0, 0, 0, 13631488 },
	{ "trees at the floor, 16K", NEW, 16384, true, true, false, false,
	  5767168 - 32768, 16384, 16384, 0, 0, 5767168 },
	{ "trees a byte over the floor, 16K", NEW, 16384, true, true, false, false,
	  5767168 - 32768 + 1, 16384, 16384, 0, 0, 5767169 },
	{ "a byte under the cap", NEW, 16384, true, true, false, false,
	  CAP - 1 - 32768, 16384, 16384, 0, 0, CAP - 1 },
	{ "at the cap", NEW, 16384, true, true, false, false,
	  CAP - 32768, 16384, 16384, 0, 0, CAP },
	{ "a byte over the cap", NEW, 16384, true, true, false, false,
	  CAP + 1 - 32768, 16384, 16384, 0, 0, CAP },
	{ "trees summing to the top of u64", NEW, 16384, true, true, false, false,
	  TOP - 32768, 16384, 16384, 0, 0, CAP },
};

struct kernel_row {
	const char *kernel;
	u32 nodesize;
	bool bgt;
	u64 size;		/* worked from the text */
};

/* every tree root one node, the free space tree on */
static const struct kernel_row kernel_rows[] = {
	{ "5.12", 16384, false, 3407872 },	/* insert(3 + 10) */
	{ "5.15", 16384, false, 3407872 },
	{ "5.16.255", 16384, false, 3407872 },
	{ "5.17", 16384, false, 3670016 },	/* insert(4 + 10) */
	{ "6.1", 16384, false, 3670016 },
	{ "6.1.111", 16384, false, 3670016 },
	{ "6.1.112", 16384, false, 5767168 },	/* insert(4 + 6) + 2 * insert(6) */
	{ "6.2", 16384, false, 3670016 },
	{ "6.3.255", 16384, false, 3670016 },
	{ "6.4", 16384, false, 5767168 },
	{ "6.18", 16384, false, 5767168 },
	{ "5.15", 4096, false, 851968 },
	{ "6.18", 4096, false, 1441792 },
	{ "5.17", 65536, false, 14680064 },
	{ "6.3", 16384, true, 3932160 },	/* insert(5 + 10) */
	{ "6.18", 16384, true, 6029312 },	/* insert(5 + 6) + 2 * insert(6) */
};

static void test_per_kernel(void)
{
	struct btrfs_fs_info *fs_info = calloc(1, sizeof(*fs_info));
	char what[64];
	u32 i;

	if (!fs_info) {
		check(0, "calloc");
		return;
	}
	for (i = 0; i < sizeof(kernel_rows) / sizeof(kernel_rows[0]); i++) {
		const struct kernel_row *r = &kernel_rows[i];
		struct btrfs_kernel_model m = unit_kernel_model(r->kernel);
		struct btrfs_global_rsv_inputs in;
		struct btrfs_global_rsv_calc c;

		fs_info->nodesize = r->nodesize;
		fs_info->compat_ro = BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE;
		fs_info->extent_root = (struct btrfs_root_ref) { .bytes_used = r->nodesize,
								 .found = true };
		fs_info->csum_root = fs_info->extent_root;
		fs_info->free_space_root = fs_info->extent_root;
		fs_info->block_group_root.found = r->bgt;
		fs_info->block_group_root.bytes_used = r->bgt ? r->nodesize : 0;
		btrfs_calc_global_rsv_for_kernel(fs_info, &m, &in, &c);
		snprintf(what, sizeof(what), "kernel %s, %u%s", r->kernel, r->nodesize,
			 r->bgt ? ", BGT" : "");
		check_u64(what, c.size, r->size);
		check_u64(what, btrfs_global_rsv_after_mount(fs_info, &m), r->size);
	}
	free(fs_info);
}

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct rsv_row *r = &rows[i];
		struct btrfs_global_rsv_inputs in = {
			.nodesize = r->nodesize, .free_space_tree_opt = r->fst,
			.extent_bytes_used = r->extent,
			.has_csum_root = r->csum, .csum_bytes_used = r->csum_used,
			.has_free_space_root = r->fst, .free_space_bytes_used = r->fst_used,
			.has_block_group_root = r->bgt, .block_group_bytes_used = r->bgt_used,
			.has_stripe_root = r->rst, .stripe_bytes_used = r->rst_used,
		};
		struct btrfs_global_rsv_calc c;

		btrfs_calc_global_rsv(&in, r->floor, &c);
		check_u64(r->what, c.size, r->size);
	}
	test_per_kernel();
	return unit_failures ? 1 : 0;
}
