// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs_chunk_map_bytes_super() (block-group.c: the kernel's
 * exclude_super_stripes() with btrfs_rmap_block()) as a table,
 * Documentation/formulas.md section 5.3:
 *
 *   below 64 KiB logical: 64 KiB - start
 *   per copy P = 64 KiB, 64 MiB, 256 GiB and stripe k with
 *   physical <= P < physical + stripe_size:
 *     nr = (P - physical) >> 16, off = (P - physical) & 0xFFFF
 *     RAID0, RAID10: nr = (nr * num_stripes + k) / sub_stripes
 *     io = 64 KiB (data_stripes * 64 KiB for RAID5/6)
 *     logical = start + nr * io + off, each distinct value once
 *     bytes_super += min(io, start + length - logical)
 *
 * Expected values worked by a python check written from that text, not by
 * this code.  The "truth" rows are the metadata chunks of
 * ../shared/truth images that hold the 64 MiB copy (logical, length,
 * stripes as dump-tree printed them); the kernel shows no bytes_super,
 * so their values are the formula's too.  The others: a block group at
 * logical 0, each profile, copies on two stripes at one logical address
 * (counted once), a copy cut by the chunk's end, stripes ending at a copy,
 * the 256 GiB copy, and a chunk at the top of the logical space.
 */
#include <stdlib.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/volumes.h"

#define KiB	(1ULL << 10)
#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)
#define MAX_ROW_STRIPES	6

#define SINGLE	0ULL
#define DUP	BTRFS_BLOCK_GROUP_DUP
#define RAID0	BTRFS_BLOCK_GROUP_RAID0
#define RAID1	BTRFS_BLOCK_GROUP_RAID1
#define RAID1C3	BTRFS_BLOCK_GROUP_RAID1C3
#define RAID10	BTRFS_BLOCK_GROUP_RAID10
#define RAID5	BTRFS_BLOCK_GROUP_RAID5
#define RAID6	BTRFS_BLOCK_GROUP_RAID6

struct super_row {
	const char *what;
	u64 profile;
	u64 start;
	u64 length;
	u16 num_stripes;
	u64 physical[MAX_ROW_STRIPES];
	u64 bytes_super;	/* worked from the text */
};

static const struct super_row rows[] = {
	{ "truth ns16k-1g: metadata DUP", DUP, 30408704, 53673984, 2,
	  { 38797312, 92471296 }, 65536 },
	{ "truth raid0-2dev: metadata RAID0", RAID0, 38797312, 214695936, 2,
	  { 30408704, 9437184 }, 131072 },
	{ "truth raid10-4dev: metadata RAID10", RAID10, 38797312, 134217728, 4,
	  { 30408704, 9437184, 9437184, 9437184 }, 196608 },
	{ "truth raid5-3dev: metadata RAID5", RAID5, 38797312, 178913280, 3,
	  { 30408704, 9437184, 9437184 }, 262144 },
	{ "truth raid1-2dev: metadata RAID1", RAID1, 30408704, 107347968, 2,
	  { 30408704, 9437184 }, 131072 },
	{ "at logical 0, from 1 MiB physical", SINGLE, 0, 8 * MiB, 1, { MiB }, 65536 },
	{ "at logical 32 KiB", SINGLE, 32 * KiB, 8 * MiB, 1, { MiB }, 32768 },
	{ "on the 64 KiB copy", SINGLE, GiB, 8 * MiB, 1, { 0 }, 65536 },
	{ "both copies, the second whole", SINGLE, GiB, 64 * MiB + 64 * KiB, 1, { 0 }, 131072 },
	{ "stripe ends at the 64 MiB copy", SINGLE, GiB, 64 * MiB, 1, { 0 }, 65536 },
	{ "a byte of the 64 MiB copy", SINGLE, GiB, 64 * MiB + 1, 1, { 0 }, 65537 },
	{ "the 256 GiB copy", SINGLE, 5 * GiB, GiB, 1, { 256 * GiB - 512 * MiB }, 65536 },
	{ "no copy inside", SINGLE, 2 * GiB, GiB, 1, { GiB }, 0 },
	{ "RAID1: one logical address twice, counted once", RAID1, 2 * GiB, GiB, 2,
	  { 32 * MiB, 32 * MiB }, 65536 },
	{ "RAID1C3: two of three stripes on the copy", RAID1C3, 2 * GiB, GiB, 3,
	  { 32 * MiB, 32 * MiB, 200 * MiB }, 65536 },
	{ "DUP: the first stripe alone holds it", DUP, 2 * GiB, 32 * MiB, 2,
	  { 48 * MiB, 80 * MiB }, 65536 },
	{ "RAID0, 4 stripes from 0: 8 places", RAID0, 2 * GiB, 4 * GiB, 4,
	  { 0, 0, 0, 0 }, 524288 },
	{ "RAID0, 3 stripes, stripe 1 from 63 MiB + 4 KiB", RAID0, 2 * GiB, 3 * GiB, 3,
	  { 0, 63 * MiB + 4 * KiB, 512 * MiB }, 196608 },
	{ "RAID10, 4 stripes from 0", RAID10, 2 * GiB, 2 * GiB, 4, { 0, 0, 0, 0 }, 262144 },
	{ "RAID5, 3 stripes: a full stripe each copy", RAID5, 2 * GiB, 2 * GiB, 3,
	  { 0, 0, 0 }, 262144 },
	{ "RAID5: the 64 MiB copy cut to 64 KiB by the end", RAID5, 2 * GiB,
	  128 * MiB + 64 * KiB, 3, { 0, 0, 0 }, 196608 },
	{ "RAID6, 4 stripes", RAID6, 2 * GiB, 2 * GiB, 4, { 0, 0, 0, 0 }, 262144 },
	{ "RAID6, 5 stripes ending at 256 GiB", RAID6, 2 * GiB, 768 * GiB, 5,
	  { 0, 0, 0, 0, 0 }, 393216 },
	{ "RAID6, 6 stripes over all three copies", RAID6, 2 * GiB, 1200 * GiB, 6,
	  { 0, 0, 0, 0, 0, 0 }, 786432 },
	{ "top of the logical space", SINGLE, 18446744071562067968ULL, GiB, 1, { 0 }, 131072 },
};

static struct btrfs_chunk_map *row_map(const struct super_row *r)
{
	struct btrfs_chunk_map *map;
	u16 i;

	map = calloc(1, sizeof(*map) + MAX_ROW_STRIPES * sizeof(map->stripes[0]));
	if (!map)
		abort();
	map->start = r->start;
	map->length = r->length;
	map->stripe_len = BTRFS_STRIPE_LEN;
	map->type = BTRFS_BLOCK_GROUP_METADATA | r->profile;
	map->num_stripes = r->num_stripes;
	map->sub_stripes = r->profile == RAID10 ? 2 : 1;
	map->stripe_size = r->length / btrfs_chunk_data_stripes(map->type, r->num_stripes);
	for (i = 0; i < r->num_stripes; i++) {
		map->stripes[i].devid = i + 1;
		map->stripes[i].physical = r->physical[i];
	}
	return map;
}

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct btrfs_chunk_map *map = row_map(&rows[i]);

		check_u64(rows[i].what, btrfs_chunk_map_bytes_super(map), rows[i].bytes_super);
		free(map);
	}
	return unit_failures ? 1 : 0;
}
