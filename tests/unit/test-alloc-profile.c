// SPDX-License-Identifier: GPL-2.0
/*
 * block-group.c: btrfs_get_alloc_profile(), the profile a new chunk of a
 * type gets, worked by hand from 6.18 get_alloc_profile() and
 * btrfs_reduce_alloc_profile() (fs/btrfs/block-group.c):
 *
 *   a conversion in progress (balance -dconvert/-mconvert/-sconvert) wins
 *       for its type, whatever the devices (get_restripe_target()), the
 *       single bit taken off (extended_to_chunk());
 *   else the type's profiles in use (avail_*_alloc_bits), less those whose
 *       devs_min the writeable devices do not reach, the most redundant
 *       first: RAID1C4, RAID6, RAID1C3, RAID5, RAID10, RAID1, DUP, RAID0,
 *       else single.
 *
 * On a filesystem of mixed block groups the one MIXED space info holds
 * them: a mixed group sets both avail_data_alloc_bits and
 * avail_metadata_alloc_bits (set_avail_alloc_bits()), so data and
 * metadata get the mixed groups' profile; a data conversion's target is
 * DATA | target for either (get_restripe_target() tests DATA first).
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/block-group.h"

#define DATA	BTRFS_BLOCK_GROUP_DATA
#define META	BTRFS_BLOCK_GROUP_METADATA
#define SYS	BTRFS_BLOCK_GROUP_SYSTEM
#define SINGLE	BTRFS_AVAIL_ALLOC_BIT_SINGLE
#define R1	BTRFS_BLOCK_GROUP_RAID1

struct profile_row {
	const char *what;
	u64 type;
	u64 in_use;			/* the space info's profiles */
	u32 rw_devices;
	u64 convert;			/* the type's balance target, 0: none */
	u64 profile;			/* worked by hand */
};

static const struct profile_row rows[] = {
	{ "single data", DATA, SINGLE, 1, 0, DATA },
	{ "half converted to RAID1, two devices", DATA, SINGLE | R1, 2, 0, DATA | R1 },
	{ "half converted to RAID1, one device left", DATA, SINGLE | R1, 1, 0, DATA },
	{ "DUP and RAID1 metadata, two devices", META, BTRFS_BLOCK_GROUP_DUP | R1, 2, 0,
	  META | R1 },
	{ "RAID6 before RAID1C3, three devices", DATA,
	  BTRFS_BLOCK_GROUP_RAID1C3 | BTRFS_BLOCK_GROUP_RAID6, 3, 0,
	  DATA | BTRFS_BLOCK_GROUP_RAID6 },
	{ "RAID1C4 on three devices: RAID1", DATA, BTRFS_BLOCK_GROUP_RAID1C4 | R1, 3, 0,
	  DATA | R1 },
	{ "RAID1C4 on four devices", DATA, BTRFS_BLOCK_GROUP_RAID1C4 | R1, 4, 0,
	  DATA | BTRFS_BLOCK_GROUP_RAID1C4 },
	{ "RAID0 on one device (devs_min 1)", DATA, BTRFS_BLOCK_GROUP_RAID0 | SINGLE, 1, 0,
	  DATA | BTRFS_BLOCK_GROUP_RAID0 },
	{ "RAID10 before RAID1", DATA, BTRFS_BLOCK_GROUP_RAID10 | R1, 4, 0,
	  DATA | BTRFS_BLOCK_GROUP_RAID10 },
	{ "converting to RAID1, one device", DATA, SINGLE, 1, R1, DATA | R1 },
	{ "converting to single: the bit taken off", DATA, R1, 2, SINGLE, DATA },
	{ "system: a metadata conversion is not its", SYS, R1, 2, 0, SYS | R1 },
};

#define MIXED	(DATA | META)

static const struct profile_row mixed_rows[] = {
	{ "mixed single, asked as mixed", MIXED, SINGLE, 1, 0, MIXED },
	{ "mixed single, asked as data", DATA, SINGLE, 1, 0, DATA },
	{ "mixed DUP, asked as metadata", META, BTRFS_BLOCK_GROUP_DUP, 1, 0,
	  META | BTRFS_BLOCK_GROUP_DUP },
	{ "mixed DUP, asked as mixed", MIXED, BTRFS_BLOCK_GROUP_DUP, 1, 0,
	  MIXED | BTRFS_BLOCK_GROUP_DUP },
	{ "mixed RAID1, one device left: single", MIXED, R1, 1, 0, MIXED },
	{ "mixed, converting to RAID1", MIXED, SINGLE, 2, R1, DATA | R1 },
};

/* A mixed filesystem: the MIXED and SYSTEM space infos, no DATA or METADATA */
static void test_mixed(struct btrfs_fs_info *fs_info)
{
	u32 i;

	for (i = 0; i < sizeof(mixed_rows) / sizeof(mixed_rows[0]); i++) {
		const struct profile_row *r = &mixed_rows[i];

		memset(fs_info, 0, sizeof(*fs_info));
		fs_info->space_info[BTRFS_SPACE_MIXED] = (struct btrfs_space_info) {
			.present = true, .flags = MIXED, .profile_bits = r->in_use,
		};
		fs_info->space_info[BTRFS_SPACE_SYSTEM] = (struct btrfs_space_info) {
			.present = true, .flags = SYS, .profile_bits = SINGLE,
		};
		fs_info->rw_devices = r->rw_devices;
		fs_info->balance_convert[BTRFS_SPACE_DATA] = r->convert;
		fs_info->balance_convert[BTRFS_SPACE_METADATA] = r->convert;
		check_u64(r->what, btrfs_get_alloc_profile(fs_info, r->type), r->profile);
	}
}

int main(void)
{
	struct btrfs_fs_info *fs_info = calloc(1, sizeof(*fs_info));
	static const enum btrfs_space_index index[] = {
		BTRFS_SPACE_DATA, BTRFS_SPACE_METADATA, BTRFS_SPACE_SYSTEM,
	};
	static const u64 types[] = { DATA, META, SYS };
	u32 i, s;

	if (!fs_info) {
		check(0, "calloc");
		return 1;
	}
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct profile_row *r = &rows[i];

		for (s = 0; s < 3; s++) {
			struct btrfs_space_info *si = &fs_info->space_info[index[s]];

			si->present = true;
			si->flags = types[s];
			si->profile_bits = types[s] == r->type ? r->in_use : SINGLE;
			fs_info->balance_convert[index[s]] = 0;
		}
		fs_info->rw_devices = r->rw_devices;
		fs_info->balance_convert[btrfs_bg_space_index(r->type)] = r->convert;
		/* a metadata conversion does not convert system chunks */
		if (r->type == SYS)
			fs_info->balance_convert[BTRFS_SPACE_METADATA] = BTRFS_BLOCK_GROUP_DUP;
		check_u64(r->what, btrfs_get_alloc_profile(fs_info, r->type), r->profile);
	}
	test_mixed(fs_info);
	free(fs_info);
	return unit_failures ? 1 : 0;
}
