// SPDX-License-Identifier: GPL-2.0
/*
 * The metadata a relocation holds (relocation.c), as a table,
 * Documentation/formulas.md 21.8 with the transaction sizes of section 14:
 *
 *   block reserve  = nodesize * 256            prepare_to_relocate(),
 *                                              RELOCATION_RESERVED_NODES
 *   prealloc       = block reserve + btrfs_start_transaction(root, 3)
 *                    6.7+: insert(3) + delayed_ref_bytes(3) (x2 with FST)
 *                    before: 2 * insert(3)
 *   insert(n)      = n * 16 * nodesize
 *
 * The 16 KiB row is what 6.18.44 was traced holding on a 1 GiB
 * compress=zstd filesystem (relocation.c, reserve_prealloc()): bytes_may_use
 * 9961472 with the 5767168 global reserve (so 4194304 of block reserve),
 * and a FLUSH_ALL ticket of 2359296 for the transaction.  The others were
 * worked by a python check from the text: 4 and 64 KiB nodes, no free space
 * tree, 6.6 and 5.12, and a node size whose product needs 64 bits.
 */
#include "tests/unit/kernel-model.h"
#include "tests/unit/unit-test.h"
#include "kernel-shared/relocation.h"

struct reserve_row {
	const char *what;
	const char *kernel;
	u32 nodesize;
	bool fst;
	u64 block_rsv;		/* worked from the text, or traced */
	u64 prealloc;
};

static const struct reserve_row rows[] = {
	{ "6.18.44 traced, 16K, FST", "6.18", 16384, true, 4194304, 4194304 + 2359296 },
	{ "6.18, 16K, no FST", "6.18", 16384, false, 4194304, 5767168 },
	{ "6.18, 4K, FST", "6.18", 4096, true, 1048576, 1638400 },
	{ "6.18, 64K, FST", "6.18", 65536, true, 16777216, 26214400 },
	{ "6.6, 16K, FST: the transaction doubled", "6.6", 16384, true, 4194304, 5767168 },
	{ "5.12, 64K, FST", "5.12", 65536, true, 16777216, 23068672 },
	{ "6.18, 2 GiB nodes: past 32 bits", "6.18", 2147483648U, true,
	  549755813888ULL, 858993459200ULL },
};

int main(void)
{
	/* zeroed: each row sets what the model reads */
	static struct btrfs_fs_info fs_info_rows;
	struct btrfs_fs_info *fs_info = &fs_info_rows;
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct reserve_row *r = &rows[i];
		struct btrfs_kernel_model m = unit_kernel_model(r->kernel);

		fs_info->nodesize = r->nodesize;
		fs_info->compat_ro = r->fst ? BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE : 0;
		check_u64(r->what, btrfs_reloc_block_rsv_size(r->nodesize), r->block_rsv);
		check_u64(r->what, btrfs_reloc_prealloc_size(fs_info, &m), r->prealloc);
	}
	return unit_failures ? 1 : 0;
}
