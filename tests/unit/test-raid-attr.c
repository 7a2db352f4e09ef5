// SPDX-License-Identifier: GPL-2.0
/*
 * volumes.c: the RAID attribute table and what is read from it, a row per
 * profile worked by hand from fs/btrfs/volumes.c of 6.18:
 *
 *   btrfs_bg_flags_to_raid_index()  SINGLE (no profile bit) is 0, the others
 *       BTRFS_BG_FLAG_TO_INDEX(): ilog2(profile >> 2), so RAID0 1, RAID1 2,
 *       DUP 3, RAID10 4, RAID5 5, RAID6 6, RAID1C3 7, RAID1C4 8 (the order
 *       since "btrfs: use ilog2() to replace if () branches for
 *       btrfs_bg_flags_to_raid_index()", v5.19; find_free_extent() and
 *       the reclaim sweep walk the lists in it); the type bits are
 *       ignored, and of two profile bits the higher wins
 *   btrfs_bg_type_to_factor()       ncopies
 *   calc_data_stripes()             (num_stripes - nparity) / ncopies
 *   btrfs_chunk_max_errors()        tolerated_failures
 *   devs_max                        0 for no limit
 *   btrfs_num_copies()              ncopies; RAID5/6 1 here (the kernel's
 *       2 and 3 count rebuilds from parity, which the reader does not do)
 */
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/volumes.h"

#define DATA	BTRFS_BLOCK_GROUP_DATA

struct raid_row {
	const char *what;
	u64 flags;
	u16 num_stripes;
	/* worked by hand */
	u32 index;
	u32 factor;
	u64 data_stripes;
	u32 max_errors;
	u32 devs_max;
	u32 num_copies;
	const char *name;
};

static const struct raid_row rows[] = {
	{ "single", DATA, 1, 0, 1, 1, 0, 1, 1, "single" },
	{ "single, the avail bit", DATA | BTRFS_AVAIL_ALLOC_BIT_SINGLE, 1, 0, 1, 1, 0, 1, 1,
	  "single" },
	{ "raid0, 4 stripes", DATA | BTRFS_BLOCK_GROUP_RAID0, 4, 1, 1, 4, 0, 0, 1, "raid0" },
	{ "raid1", DATA | BTRFS_BLOCK_GROUP_RAID1, 2, 2, 2, 1, 1, 2, 2, "raid1" },
	{ "dup, metadata", BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DUP, 2, 3, 2, 1, 0, 1,
	  2, "dup" },
	{ "raid10, 4 stripes", DATA | BTRFS_BLOCK_GROUP_RAID10, 4, 4, 2, 2, 1, 0, 2, "raid10" },
	{ "raid10, 6 stripes", DATA | BTRFS_BLOCK_GROUP_RAID10, 6, 4, 2, 3, 1, 0, 2, "raid10" },
	{ "raid5, 3 stripes", DATA | BTRFS_BLOCK_GROUP_RAID5, 3, 5, 1, 2, 1, 0, 1, "raid5" },
	{ "raid6, 4 stripes", DATA | BTRFS_BLOCK_GROUP_RAID6, 4, 6, 1, 2, 2, 0, 1, "raid6" },
	{ "raid6, 6 stripes", DATA | BTRFS_BLOCK_GROUP_RAID6, 6, 6, 1, 4, 2, 0, 1, "raid6" },
	{ "raid1c3, system", BTRFS_BLOCK_GROUP_SYSTEM | BTRFS_BLOCK_GROUP_RAID1C3, 3, 7, 3, 1, 2,
	  3, 3, "raid1c3" },
	{ "raid1c4", DATA | BTRFS_BLOCK_GROUP_RAID1C4, 4, 8, 4, 1, 3, 4, 4, "raid1c4" },
	/* two profile bits (no valid item has them): the higher one */
	{ "raid1 and raid5: raid5", DATA | BTRFS_BLOCK_GROUP_RAID1 | BTRFS_BLOCK_GROUP_RAID5, 3,
	  5, 1, 2, 1, 0, 1, "raid5" },
	{ "raid0 and dup: dup", DATA | BTRFS_BLOCK_GROUP_RAID0 | BTRFS_BLOCK_GROUP_DUP, 2,
	  3, 2, 1, 0, 1, 2, "dup" },
};

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct raid_row *r = &rows[i];
		struct btrfs_chunk_map map;

		memset(&map, 0, sizeof(map));
		map.type = r->flags;
		map.num_stripes = r->num_stripes;
		check_u64(r->what, btrfs_bg_flags_to_raid_index(r->flags), r->index);
		check_u64(r->what, btrfs_bg_type_to_factor(r->flags), r->factor);
		check_u64(r->what, btrfs_chunk_data_stripes(r->flags, r->num_stripes),
			  r->data_stripes);
		check_u64(r->what, btrfs_chunk_max_errors(&map), r->max_errors);
		check_u64(r->what, btrfs_raid_devs_max(r->flags), r->devs_max);
		check_u64(r->what, btrfs_num_copies(&map), r->num_copies);
		check(!strcmp(btrfs_bg_profile_name(r->flags), r->name), "%s: name %s", r->what,
		      btrfs_bg_profile_name(r->flags));
	}
	check_u64("the kernel's raid types", BTRFS_NR_RAID_TYPES, 9);
	return unit_failures ? 1 : 0;
}
