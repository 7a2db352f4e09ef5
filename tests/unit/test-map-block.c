// SPDX-License-Identifier: GPL-2.0
/*
 * Unit table of btrfs_map_block() (kernel-shared/volumes.c) per profile:
 * where one mirror of a logical address lives, and how many bytes are
 * contiguous there.  Each case is one chunk at 1 GiB whose stripe i is on
 * devid i + 1 at physical (i + 1) GiB (DUP: both on devid 1); the expected
 * stripe, row and length are worked from the kernel's btrfs_map_block()
 * (fs/btrfs/volumes.c, 6.18) in the case's comment: the stripe number is
 * offset / 64 KiB, RAID0 and RAID10 go round the stripes (RAID10 by
 * mirror pairs), RAID5/6 rotate the parity by one stripe per full row.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit-test.h"
#include "common/kerncompat.h"
#include "kernel-shared/fs.h"
#include "kernel-shared/volumes.h"

#define CHUNK_START	SZ_1G
#define MAX_STRIPES	4

struct map_case {
	const char *name;
	u64 type;
	u16 num_stripes;
	u64 offset;		/* into the chunk */
	u64 length;		/* asked */
	int mirror;
	int ret;
	u16 want_stripe;	/* index into the chunk's stripes */
	u64 want_within;	/* bytes into that stripe */
	u64 want_length;
};

static const struct map_case map_cases[] = {
	/* single: the whole chunk on one stripe, contiguous to its end */
	{ "single", BTRFS_BLOCK_GROUP_DATA, 1, 100000, 4096, 0, 0,
	  0, 100000, 4096 },
	{ "single, length cut at the chunk's end", BTRFS_BLOCK_GROUP_DATA, 1,
	  SZ_1G - 4096, 65536, 0, 0, 0, SZ_1G - 4096, 4096 },
	{ "single, no second mirror", BTRFS_BLOCK_GROUP_DATA, 1, 0, 4096, 1,
	  -EINVAL, 0, 0, 0 },
	/* DUP and RAID1*: mirror m is stripe m, at the same offset */
	{ "DUP second copy", BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DUP,
	  2, 3 * SZ_64K + 16384, 16384, 1, 0, 1, 3 * SZ_64K + 16384, 16384 },
	{ "RAID1 mirror 1", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID1,
	  2, 12345, 100, 1, 0, 1, 12345, 100 },
	{ "RAID1C3 mirror 2", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID1C3,
	  3, 5 * SZ_64K, 8192, 2, 0, 2, 5 * SZ_64K, 8192 },
	{ "RAID1C4, no fifth mirror", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID1C4,
	  4, 0, 4096, 4, -EINVAL, 0, 0, 0 },
	/* RAID0 over 3: stripe_nr 5 -> stripe 5 % 3 = 2, row 5 / 3 = 1; cut at 64 KiB */
	{ "RAID0 row 1", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID0, 3,
	  5 * SZ_64K + 100, 2 * SZ_64K, 0, 0, 2, SZ_64K + 100, SZ_64K - 100 },
	{ "RAID0 first stripe", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID0, 3,
	  4096, 4096, 0, 0, 0, 4096, 4096 },
	/* RAID10 over 4 (2 pairs): stripe_nr 3 -> pair 3 % 2 = 1, row 1; mirror 1 -> stripe 3 */
	{ "RAID10 second pair, mirror 1", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID10,
	  4, 3 * SZ_64K + 8, 4096, 1, 0, 3, SZ_64K + 8, 4096 },
	{ "RAID10 first pair, mirror 0", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID10,
	  4, 2 * SZ_64K, 4096, 0, 0, 0, SZ_64K, 4096 },
	/* RAID5 over 3 (2 data): stripe_nr 3 -> row 1, (3 % 2 + 1) % 3 = 2 */
	{ "RAID5 row 1 rotated", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID5, 3,
	  3 * SZ_64K, 4096, 0, 0, 2, SZ_64K, 4096 },
	/* stripe_nr 4 -> row 2, (0 + 2) % 3 = 2 */
	{ "RAID5 row 2 rotated", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID5, 3,
	  4 * SZ_64K + 512, SZ_64K, 0, 0, 2, 2 * SZ_64K + 512, SZ_64K - 512 },
	{ "RAID5 row 0", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID5, 3,
	  SZ_64K, 4096, 0, 0, 1, 0, 4096 },
	/* RAID6 over 4 (2 data): stripe_nr 5 -> row 2, (5 % 2 + 2) % 4 = 3 */
	{ "RAID6 row 2 rotated", BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID6, 4,
	  5 * SZ_64K, 4096, 0, 0, 3, 2 * SZ_64K, 4096 },
};

static void setup_chunk(struct btrfs_fs_info *fs_info, struct btrfs_chunk_map *map,
			const struct map_case *c)
{
	u16 i;

	memset(map, 0, sizeof(*map));
	map->start = CHUNK_START;
	map->length = SZ_1G;
	map->type = c->type;
	map->num_stripes = c->num_stripes;
	map->sub_stripes = (c->type & BTRFS_BLOCK_GROUP_RAID10) ? 2 : 1;
	for (i = 0; i < c->num_stripes; i++) {
		bool dup = c->type & BTRFS_BLOCK_GROUP_DUP;

		map->stripes[i].devid = dup ? 1 : i + 1;
		map->stripes[i].physical = (i + 1) * SZ_1G;
	}
	fs_info->nr_chunks = 1;
}

static void run_case(struct btrfs_fs_info *fs_info, struct btrfs_chunk_map *map,
		     const struct map_case *c)
{
	struct btrfs_io_piece piece = { 0 };
	const struct btrfs_io_stripe *want;
	int ret;

	setup_chunk(fs_info, map, c);
	ret = btrfs_map_block(fs_info, &fs_info->err, CHUNK_START + c->offset, c->length,
			      c->mirror, &piece);
	check(ret == c->ret, "%s: returns %d (want %d)", c->name, ret, c->ret);
	if (ret || c->ret)
		return;
	want = &map->stripes[c->want_stripe];
	check(piece.dev && piece.dev->devid == want->devid, "%s: devid %llu (want %llu)",
	      c->name, piece.dev ? (unsigned long long)piece.dev->devid : 0ULL,
	      (unsigned long long)want->devid);
	check_u64(c->name, piece.physical, want->physical + c->want_within);
	check_u64(c->name, piece.length, c->want_length);
}

int main(void)
{
	struct btrfs_fs_info fs_info = { 0 };
	struct btrfs_chunk_map *map;
	struct btrfs_io_piece piece;
	u64 devid;
	size_t i;

	map = calloc(1, sizeof(*map) + MAX_STRIPES * sizeof(map->stripes[0]));
	if (!map)
		return 1;
	for (devid = 1; devid <= MAX_STRIPES; devid++)
		btrfs_add_device(&fs_info, devid)->present = true;
	fs_info.chunks = &map;
	for (i = 0; i < sizeof(map_cases) / sizeof(map_cases[0]); i++)
		run_case(&fs_info, map, &map_cases[i]);

	/* an address before the chunk is covered by none */
	check(btrfs_map_block(&fs_info, &fs_info.err, CHUNK_START - 1, 1, 0, &piece) == -ENOENT,
	      "uncovered logical: -ENOENT");
	/* a missing device maps to no device, not to an error */
	btrfs_find_device(&fs_info, 2)->present = false;
	setup_chunk(&fs_info, map, &map_cases[4]);
	check(!btrfs_map_block(&fs_info, &fs_info.err, CHUNK_START, 4096, 1, &piece) && !piece.dev,
	      "mirror on a missing device: no device");

	fs_info.chunks = NULL;
	free(fs_info.devices);
	free(map);
	return unit_failures ? 1 : 0;
}
