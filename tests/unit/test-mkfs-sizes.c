// SPDX-License-Identifier: GPL-2.0
/*
 * mkfs-layout.c: what mkfs.btrfs of btrfs-progs 6.2 picks and refuses
 * before it lays anything out, worked by hand from its mkfs/main.c and
 * mkfs/common.c:
 *
 *   default profiles   data single, metadata DUP on one device and RAID1
 *                      on more (BTRFS_MKFS_DEFAULT_{DATA,META}_*)
 *   btrfs_min_dev_size()  1 MiB reserved + the 4 MiB system group + two
 *                      temporary 8 MiB chunks, then metadata 8 + 32 MiB
 *                      (8 + 8 single) and data 64 MiB (8 single), each
 *                      twice for DUP (not mixed, not zoned)
 */
#include "tests/unit/unit-test.h"
#include "kernel-shared/mkfs-layout.h"

#define MiB	(1ULL << 20)
#define DATA	BTRFS_BLOCK_GROUP_DATA
#define META	BTRFS_BLOCK_GROUP_METADATA

struct default_row {
	const char *what;
	u64 type;
	u32 nr_devices;
	u64 profile;		/* worked by hand */
};

static const struct default_row default_rows[] = {
	{ "data, one device", DATA, 1, 0 },
	{ "data, two devices", DATA, 2, 0 },
	{ "metadata, one device", META, 1, BTRFS_BLOCK_GROUP_DUP },
	{ "metadata, two devices", META, 2, BTRFS_BLOCK_GROUP_RAID1 },
	{ "metadata, four devices", META, 4, BTRFS_BLOCK_GROUP_RAID1 },
};

struct min_row {
	const char *what;
	u64 data_profile;
	u64 meta_profile;
	u64 min_size;		/* worked by hand: 21 MiB + metadata + data */
};

static const struct min_row min_rows[] = {
	{ "single, single", 0, 0, (21 + 16 + 8) * MiB },
	{ "single, DUP (one device's default)", 0, BTRFS_BLOCK_GROUP_DUP, (21 + 80 + 8) * MiB },
	{ "single, RAID1 (the multi-device default)", 0, BTRFS_BLOCK_GROUP_RAID1,
	  (21 + 40 + 8) * MiB },
	{ "RAID1, RAID1", BTRFS_BLOCK_GROUP_RAID1, BTRFS_BLOCK_GROUP_RAID1, (21 + 40 + 64) * MiB },
	{ "DUP, DUP", BTRFS_BLOCK_GROUP_DUP, BTRFS_BLOCK_GROUP_DUP, (21 + 80 + 128) * MiB },
	{ "RAID0, single", BTRFS_BLOCK_GROUP_RAID0, 0, (21 + 16 + 64) * MiB },
	{ "single by its avail bit", BTRFS_AVAIL_ALLOC_BIT_SINGLE, BTRFS_AVAIL_ALLOC_BIT_SINGLE,
	  (21 + 16 + 8) * MiB },
};

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(default_rows) / sizeof(default_rows[0]); i++) {
		const struct default_row *r = &default_rows[i];

		check_u64(r->what, btrfs_mkfs_default_profile(r->type, r->nr_devices), r->profile);
	}
	for (i = 0; i < sizeof(min_rows) / sizeof(min_rows[0]); i++) {
		const struct min_row *r = &min_rows[i];

		check_u64(r->what, btrfs_mkfs_min_dev_size(r->data_profile, r->meta_profile),
			  r->min_size);
	}
	return unit_failures ? 1 : 0;
}
