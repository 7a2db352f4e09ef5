// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs_calc_block_group_size_class() (block-group.c, after the kernel's
 * of 6.3-6.18): an allocation of up to 128 KiB is small, up to 8 MiB
 * medium, larger large; find_free_extent() classes the allocation by its
 * size and load_block_group_size_class() a block group by the smallest of
 * its sampled extents.  Rows on each side of both bounds, and the ends
 * of u64 and a size past 32 bits.
 */
#include "tests/unit/unit-test.h"
#include "kernel-shared/block-group.h"

struct class_row {
	const char *what;
	u64 size;
	enum btrfs_block_group_size_class class;	/* worked by hand */
};

static const struct class_row rows[] = {
	{ "nothing", 0, BTRFS_BG_SZ_SMALL },
	{ "one byte", 1, BTRFS_BG_SZ_SMALL },
	{ "one sector", 4096, BTRFS_BG_SZ_SMALL },
	{ "a 64 KiB sector", 65536, BTRFS_BG_SZ_SMALL },
	{ "128 KiB", 131072, BTRFS_BG_SZ_SMALL },
	{ "128 KiB + 1", 131073, BTRFS_BG_SZ_MEDIUM },
	{ "128 KiB + a sector", 135168, BTRFS_BG_SZ_MEDIUM },
	{ "8 MiB", 8388608, BTRFS_BG_SZ_MEDIUM },
	{ "8 MiB + 1", 8388609, BTRFS_BG_SZ_LARGE },
	{ "128 MiB (the largest data extent)", 134217728, BTRFS_BG_SZ_LARGE },
	{ "4 GiB: past 32 bits", 4294967296ULL, BTRFS_BG_SZ_LARGE },
	{ "the top of u64", 18446744073709551615ULL, BTRFS_BG_SZ_LARGE },
};

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_u64(rows[i].what, btrfs_calc_block_group_size_class(rows[i].size),
			  rows[i].class);
	return unit_failures ? 1 : 0;
}
