// SPDX-License-Identifier: GPL-2.0
/*
 * The delayed-ref reservation for dropping data extents (delayed-ref.c:
 * btrfs_csum_params_for_kernel() then btrfs_csum_delete_add(), the
 * kernel's add_delayed_ref_head() and btrfs_update_delayed_refs_rsv()) as a
 * table by kernel, Documentation/formulas.md section 14 with the versions
 * of section 2:
 *
 *   csums_per_leaf  = (nodesize - 101 - 25) / csum_size
 *   leaves(D)       = DIV_ROUND_UP(D / sectorsize, csums_per_leaf), per head
 *   drop ref        = 16 * nodesize, twice with the free space tree (v5.17+)
 *   csum, 6.7+      = leaves * 8 * nodesize
 *   csum, before    = leaves * drop ref
 *   total           = count * (drop ref + csum)
 *
 * Worked by a python check written from that text, not by this code:
 * each side of v5.17 and v6.7, no free space tree, an empty extent and
 * one under a sector, many extents, 4, 16 and 64 KiB nodes with 4, 16 and
 * 64 KiB sectors and every csum size class, and sums near the top of u64.
 */
#include "tests/unit/kernel-model.h"
#include "tests/unit/unit-test.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/fs.h"

struct dref_row {
	const char *what;
	const char *kernel;
	u32 nodesize;
	u32 sectorsize;
	u16 csum_size;
	bool fst;
	u64 disk_bytes;
	u64 count;
	/* worked from the text */
	u64 leaves;
	u64 total;
	u64 total_before;
};

static const struct dref_row rows[] = {
	{ "6.18, 16K FST crc32c, one 128 KiB extent", "6.18", 16384, 4096, 4, true,
	  131072ULL, 1ULL, 1ULL, 655360ULL, 1048576ULL },
	{ "6.7: the change", "6.7", 16384, 4096, 4, true,
	  131072ULL, 1ULL, 1ULL, 655360ULL, 1048576ULL },
	{ "6.6: before it", "6.6", 16384, 4096, 4, true,
	  131072ULL, 1ULL, 1ULL, 1048576ULL, 1048576ULL },
	{ "5.17: FST doubled", "5.17", 16384, 4096, 4, true,
	  131072ULL, 1ULL, 1ULL, 1048576ULL, 1048576ULL },
	{ "5.15: FST not doubled", "5.15", 16384, 4096, 4, true,
	  131072ULL, 1ULL, 1ULL, 524288ULL, 524288ULL },
	{ "6.18, no FST", "6.18", 16384, 4096, 4, false,
	  131072ULL, 1ULL, 1ULL, 393216ULL, 524288ULL },
	{ "6.18, an empty extent", "6.18", 16384, 4096, 4, true,
	  0ULL, 1ULL, 0ULL, 524288ULL, 524288ULL },
	{ "6.18, a byte under a sector", "6.18", 16384, 4096, 4, true,
	  4095ULL, 1ULL, 0ULL, 524288ULL, 524288ULL },
	{ "6.18, 1000 extents of 128 MiB", "6.18", 16384, 4096, 4, true,
	  134217728ULL, 1000ULL, 9000ULL, 1703936000ULL, 5242880000ULL },
	{ "6.6, 1000 extents of 128 MiB", "6.6", 16384, 4096, 4, true,
	  134217728ULL, 1000ULL, 9000ULL, 5242880000ULL, 5242880000ULL },
	{ "6.18, 64K nodes, 64K sectors, 1 GiB", "6.18", 65536, 65536, 4, true,
	  1073741824ULL, 1ULL, 2ULL, 3145728ULL, 6291456ULL },
	{ "6.18, 4K nodes, sha256, 1 MiB", "6.18", 4096, 4096, 32, true,
	  1048576ULL, 1ULL, 3ULL, 229376ULL, 524288ULL },
	{ "6.18, 16K xxhash, 16K sectors, 64 MiB", "6.18", 16384, 16384, 8, true,
	  67108864ULL, 1ULL, 3ULL, 917504ULL, 2097152ULL },
	{ "6.18, one 1 PiB extent", "6.18", 16384, 4096, 4, true,
	  1125899906842624ULL, 1ULL, 67637281ULL, 8865354219520ULL, 35461415305216ULL },
	{ "6.18, 2^40 extents of 4 KiB", "6.18", 16384, 4096, 4, true,
	  4096ULL, 1099511627776ULL, 1099511627776ULL, 720575940379279360ULL, 1152921504606846976ULL },
};

int main(void)
{
	/* zeroed: each row sets what the model reads */
	static struct btrfs_fs_info fs_info_rows;
	struct btrfs_fs_info *fs_info = &fs_info_rows;
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct dref_row *r = &rows[i];
		struct btrfs_kernel_model m = unit_kernel_model(r->kernel);
		struct btrfs_csum_delete_calc calc = { 0 };
		struct btrfs_csum_params p;

		fs_info->nodesize = r->nodesize;
		fs_info->sectorsize = r->sectorsize;
		fs_info->csum_size = r->csum_size;
		fs_info->compat_ro = r->fst ? BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE : 0;
		btrfs_csum_params_for_kernel(fs_info, &m, &p);
		btrfs_csum_delete_add(&p, &m, &calc, r->disk_bytes, r->count);
		check_u64(r->what, calc.csum_leaves, r->leaves);
		check_u64(r->what, calc.total, r->total);
		check_u64(r->what, calc.total_before, r->total_before);
	}
	return unit_failures ? 1 : 0;
}
