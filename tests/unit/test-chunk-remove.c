// SPDX-License-Identifier: GPL-2.0
/*
 * A chunk removed in a transaction, before and after the commit, on the
 * allocator's devices (volumes.c), the one model the forecast's cleaner
 * and relocation's replay both use.  Worked by hand from 6.18
 * btrfs_remove_chunk() (fs/btrfs/volumes.c): each stripe's device has
 * bytes_used lowered at once (btrfs_device_set_bytes_used()), but
 * btrfs_free_dev_extent() deletes the dev extent in the transaction, and
 * find_free_dev_extent() searches the dev tree's commit root, so the range
 * stays allocated until the commit.  A stripe the state holds no range for
 * has its bytes back at the commit (nothing was freed).
 *
 * The devices: devid 1 of 10 GiB with a single chunk's stripe of 1 GiB at
 * 1 MiB and a DUP chunk's two stripes of 256 MiB at 1025 and 1281 MiB;
 * devid 2 of 10 GiB with one stripe of 256 MiB at 1 MiB.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/volumes.h"

#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)

static struct btrfs_alloc_range dev1_ranges[] = {
	{ .start = 1 * MiB, .length = GiB },
	{ .start = 1025 * MiB, .length = 256 * MiB },
	{ .start = 1281 * MiB, .length = 256 * MiB },
};

static struct btrfs_alloc_range dev2_ranges[] = {
	{ .start = 1 * MiB, .length = 256 * MiB },
};

struct chunk_of {
	u64 type;
	u64 stripe_size;
	u16 num_stripes;
	u64 devid[2];
	u64 physical[2];
};

static const struct chunk_of single_1g = {
	BTRFS_BLOCK_GROUP_DATA, GiB, 1, { 1 }, { 1 * MiB } };
static const struct chunk_of dup_256m = {
	BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DUP, 256 * MiB, 2, { 1, 1 },
	{ 1025 * MiB, 1281 * MiB } };
static const struct chunk_of alone_256m = {
	BTRFS_BLOCK_GROUP_DATA, 256 * MiB, 1, { 2 }, { 1 * MiB } };
/* a stripe at 5 GiB: the state holds no range there */
static const struct chunk_of no_range = {
	BTRFS_BLOCK_GROUP_DATA, 256 * MiB, 1, { 1 }, { 5 * GiB } };

struct remove_row {
	const char *what;
	const struct chunk_of *chunk;
	/* worked by hand: device 1 and 2 */
	u64 used_uncommitted[2];
	u32 ranges_uncommitted[2];
	u64 used_committed[2];
	u32 ranges_committed[2];
};

static const struct remove_row rows[] = {
	{ "single 1 GiB", &single_1g, { 512 * MiB, 256 * MiB }, { 3, 1 },
	  { 512 * MiB, 256 * MiB }, { 2, 1 } },
	{ "dup, both stripes on device 1", &dup_256m, { GiB, 256 * MiB }, { 3, 1 },
	  { GiB, 256 * MiB }, { 1, 1 } },
	/* device 2 left with nothing used: 0 at the commit too */
	{ "the only stripe of device 2", &alone_256m, { GiB + 512 * MiB, 0 }, { 3, 1 },
	  { GiB + 512 * MiB, 0 }, { 3, 0 } },
	{ "a stripe with no range: its bytes back", &no_range,
	  { GiB + 256 * MiB, 256 * MiB }, { 3, 1 }, { GiB + 512 * MiB, 256 * MiB }, { 3, 1 } },
};

static int add_ranges(struct btrfs_alloc_device *dev, const struct btrfs_alloc_range *r, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		if (range_tree_insert(&dev->ranges, r[i].start, r[i].length))
			return -1;
	return 0;
}

static int build_state(struct btrfs_alloc_state *st)
{
	memset(st, 0, sizeof(*st));
	st->devs = calloc(2, sizeof(*st->devs));
	if (!st->devs)
		return -1;
	st->nr_devs = 2;
	st->rw_devices = 2;
	st->devs[0] = (struct btrfs_alloc_device){ .devid = 1, .total_bytes = 10 * GiB,
		.bytes_used = GiB + 512 * MiB, .writeable = true };
	st->devs[1] = (struct btrfs_alloc_device){ .devid = 2, .total_bytes = 10 * GiB,
		.bytes_used = 256 * MiB, .writeable = true };
	st->total_rw_bytes = 20 * GiB;
	if (add_ranges(&st->devs[0], dev1_ranges, 3) || add_ranges(&st->devs[1], dev2_ranges, 1)) {
		btrfs_alloc_state_free(st);
		return -1;
	}
	return 0;
}

static void check_devs(const char *what, const char *when, const struct btrfs_alloc_state *st,
		       const u64 used[2], const u32 ranges[2])
{
	u32 d;

	for (d = 0; d < 2; d++) {
		check(st->devs[d].bytes_used == used[d], "%s, %s: device %u bytes_used %llu, want %llu",
		      what, when, d + 1, (unsigned long long)st->devs[d].bytes_used,
		      (unsigned long long)used[d]);
		check(st->devs[d].ranges.nr == ranges[d], "%s, %s: device %u ranges %u, want %u",
		      what, when, d + 1, st->devs[d].ranges.nr, ranges[d]);
	}
}

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct remove_row *r = &rows[i];
		struct btrfs_chunk_map *map = calloc(1, sizeof(*map) + 2 * sizeof(map->stripes[0]));
		const struct btrfs_chunk_map *maps[1] = { map };
		struct btrfs_alloc_state st;
		u16 s;

		if (!map || build_state(&st)) {
			check(0, "%s: state", r->what);
			free(map);
			continue;
		}
		map->type = r->chunk->type;
		map->stripe_size = r->chunk->stripe_size;
		map->num_stripes = r->chunk->num_stripes;
		for (s = 0; s < r->chunk->num_stripes; s++) {
			map->stripes[s].devid = r->chunk->devid[s];
			map->stripes[s].physical = r->chunk->physical[s];
		}
		btrfs_alloc_remove_chunk_uncommitted(&st, map);
		check_devs(r->what, "uncommitted", &st, r->used_uncommitted, r->ranges_uncommitted);
		btrfs_alloc_commit_removed_bytes(&st, map);
		check(!btrfs_alloc_remove_ranges(&st, maps, 1), "%s: ranges removed", r->what);
		check_devs(r->what, "committed", &st, r->used_committed, r->ranges_committed);
		btrfs_alloc_state_free(&st);
		free(map);
	}
	return unit_failures ? 1 : 0;
}
