// SPDX-License-Identifier: GPL-2.0
/*
 * Unit table of the chunk allocator replayed in kernel-shared/volumes.c,
 * one chunk per case and every profile, in the manner of the kernel's
 * fs/btrfs/tests/chunk-allocation-tests.c (the cases are our own):
 *
 *   find_free_dev_extent()  the hole each kept device offers (the first
 *                           MiB reserved, the first hole that fits, else
 *                           the largest), seen through the allocator's
 *                           history of what gather_device_info() saw;
 *   gather_device_info()    which devices are kept (writeable, room for a
 *                           stripe) and their order: most max_avail, then
 *                           most total_avail;
 *   decide_stripe_size()    devices rounded to devs_increment and capped
 *                           at devs_max, the stripe of the last device
 *                           kept, the chunk cut to a tenth of the
 *                           writeable bytes (rounded up to 16 MiB), and
 *                           -ENOSPC below devs_min.
 *
 * Kernel 6.18's model (space info chunk_size, stripes of 1 GiB at most);
 * the expected values are worked by hand in each case's comment.  Device
 * sizes differ in every case where their order would otherwise rest on
 * the kernel's unstable sort (test-forecast-runs and kernel test 050
 * cover equal devices).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/volumes.h"

#define KiB	(1ULL << 10)
#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)

#define MAX_DEVS	6
#define MAX_RANGES	2
#define MAX_STRIPES	6
#define FIRST_LOGICAL	(1 * GiB)

struct alloc_dev {
	u64 size;
	bool readonly;
	struct btrfs_alloc_range ranges[MAX_RANGES];	/* length 0: none */
};

struct want_stripe {
	u64 devid;
	u64 physical;
};

struct alloc_case {
	const char *name;
	struct alloc_dev devs[MAX_DEVS];	/* size 0 ends the list */
	u64 type;
	u64 chunk_size;			/* the space info's chunk_size */
	u32 before;			/* chunks made first, alike */
	int ret;			/* 0 or -ENOSPC */
	u64 length;
	u64 stripe_size;
	struct want_stripe stripes[MAX_STRIPES];	/* devid 0 ends the list */
	/* find_free_dev_extent() on one device, as gather_device_info() saw it */
	u64 seen_devid;			/* 0: not checked */
	u64 seen_offset;
	u64 seen_hole;
};

#define DATA(p)		.type = BTRFS_BLOCK_GROUP_DATA | (p)
#define META(p)		.type = BTRFS_BLOCK_GROUP_METADATA | (p)
#define SYS(p)		.type = BTRFS_BLOCK_GROUP_SYSTEM | (p)
#define DEV(s)		{ .size = (s) }
#define RANGE(s, l)	{ .start = (s), .length = (l) }

static const struct alloc_case cases[] = {
	/*
	 * 10 GiB: a tenth is 1 GiB, the stripe the whole 1 GiB asked; the
	 * hole from the reserved first MiB to the end.
	 */
	{ "single, one empty device", { DEV(10 * GiB) }, DATA(0), 1 * GiB, 0,
	  0, 1 * GiB, 1 * GiB, { { 1, 1 * MiB } },
	  1, 1 * MiB, 10 * GiB - 1 * MiB },
	/* the second chunk starts where the first ended, on disk and in logical */
	{ "single, second chunk after the first", { DEV(10 * GiB) }, DATA(0), 1 * GiB, 1,
	  0, 1 * GiB, 1 * GiB, { { 1, 1 * MiB + 1 * GiB } },
	  1, 1 * MiB + 1 * GiB, 9 * GiB - 1 * MiB },
	/* 5 GiB: a tenth is 512 MiB, a multiple of 16 MiB already */
	{ "single, chunk cut to a tenth", { DEV(5 * GiB) }, DATA(0), 1 * GiB, 0,
	  0, 512 * MiB, 512 * MiB, { { 1, 1 * MiB } } },
	/*
	 * Device 1's largest hole is 32 KiB, under one 64 KiB stripe: not
	 * kept; device 2 takes the chunk (a tenth of 12 GiB is above 1 GiB).
	 */
	{ "single, a device without a stripe's room is skipped",
	  { { 10 * GiB, false, { RANGE(1 * MiB, 10 * GiB - 1 * MiB - 32 * KiB) } },
	    DEV(2 * GiB) }, DATA(0), 1 * GiB, 0,
	  0, 1 * GiB, 1 * GiB, { { 2, 1 * MiB } },
	  2, 1 * MiB, 2 * GiB - 1 * MiB },
	/* DUP: both stripes on the one device, one after the other */
	{ "dup, metadata 256 MiB", { DEV(10 * GiB) }, META(BTRFS_BLOCK_GROUP_DUP),
	  256 * MiB, 0, 0, 256 * MiB, 256 * MiB,
	  { { 1, 1 * MiB }, { 1, 257 * MiB } } },
	/*
	 * A 600 MiB hole at the start fits the 512 MiB DUP wants: the first
	 * hole that fits wins over the larger one after the extent.
	 */
	{ "dup, the first hole that fits",
	  { { 10 * GiB, false, { RANGE(601 * MiB, 1000 * MiB) } } },
	  META(BTRFS_BLOCK_GROUP_DUP), 256 * MiB, 0, 0, 256 * MiB, 256 * MiB,
	  { { 1, 1 * MiB }, { 1, 257 * MiB } },
	  1, 1 * MiB, 600 * MiB },
	/*
	 * Holes of 300 MiB at 1 MiB and 723 MiB at 9517 MiB: the first is too
	 * small, the second fits.
	 */
	{ "dup, a later hole that fits",
	  { { 10 * GiB, false, { RANGE(301 * MiB, 9 * GiB) } } },
	  META(BTRFS_BLOCK_GROUP_DUP), 256 * MiB, 0, 0, 256 * MiB, 256 * MiB,
	  { { 1, 9517 * MiB }, { 1, 9773 * MiB } },
	  1, 9517 * MiB, 723 * MiB },
	/*
	 * 2 GiB with holes of 200 MiB at 1 MiB and 100 MiB at 1201 MiB, none
	 * fits 512 MiB: the largest, halved for the two DUP stripes.
	 */
	{ "dup, no hole fits: the largest, halved",
	  { { 2 * GiB, false, { RANGE(201 * MiB, 1000 * MiB), RANGE(1301 * MiB, 747 * MiB) } } },
	  META(BTRFS_BLOCK_GROUP_DUP), 256 * MiB, 0, 0, 100 * MiB, 100 * MiB,
	  { { 1, 1 * MiB }, { 1, 101 * MiB } },
	  1, 1 * MiB, 200 * MiB },
	/* RAID1: two devices of three, the ones with the most total_avail */
	{ "raid1, the two largest of three", { DEV(10 * GiB), DEV(20 * GiB), DEV(30 * GiB) },
	  DATA(BTRFS_BLOCK_GROUP_RAID1), 1 * GiB, 0, 0, 1 * GiB, 1 * GiB,
	  { { 3, 1 * MiB }, { 2, 1 * MiB } } },
	/* one device: rounded down to devs_increment 2, none left */
	{ "raid1, one device: ENOSPC", { DEV(10 * GiB) }, DATA(BTRFS_BLOCK_GROUP_RAID1),
	  1 * GiB, 0, -ENOSPC },
	/* the read-only device 1 is not on the alloc list; its bytes do not count */
	{ "raid1, a read-only device is left out",
	  { { .size = 10 * GiB, .readonly = true }, DEV(11 * GiB), DEV(12 * GiB) },
	  DATA(BTRFS_BLOCK_GROUP_RAID1), 1 * GiB, 0, 0, 1 * GiB, 1 * GiB,
	  { { 3, 1 * MiB }, { 2, 1 * MiB } } },
	/* SYSTEM: 32 MiB chunks */
	{ "raid1, system 32 MiB", { DEV(10 * GiB), DEV(11 * GiB) },
	  SYS(BTRFS_BLOCK_GROUP_RAID1), 32 * MiB, 0, 0, 32 * MiB, 32 * MiB,
	  { { 2, 1 * MiB }, { 1, 1 * MiB } } },
	/* RAID0 over four: 4 x 1 GiB is within a tenth of 46 GiB */
	{ "raid0, four devices", { DEV(10 * GiB), DEV(11 * GiB), DEV(12 * GiB), DEV(13 * GiB) },
	  DATA(BTRFS_BLOCK_GROUP_RAID0), 10 * GiB, 0, 0, 4 * GiB, 1 * GiB,
	  { { 4, 1 * MiB }, { 3, 1 * MiB }, { 2, 1 * MiB }, { 1, 1 * MiB } } },
	/*
	 * A tenth of 12 GiB is 1288490188 bytes; over 3 data stripes that is
	 * 429496729, rounded up to 16 MiB: 26 x 16 MiB = 416 MiB a stripe, a
	 * chunk of 1248 MiB (above the tenth: the kernel rounds up).
	 */
	{ "raid0, a tenth rounded up to 16 MiB", { DEV(3 * GiB), DEV(4 * GiB), DEV(5 * GiB) },
	  DATA(BTRFS_BLOCK_GROUP_RAID0), 10 * GiB, 0, 0, 1248 * MiB, 416 * MiB,
	  { { 3, 1 * MiB }, { 2, 1 * MiB }, { 1, 1 * MiB } } },
	/* RAID10: five devices rounded down to four, two data stripes */
	{ "raid10, five devices use four",
	  { DEV(10 * GiB), DEV(11 * GiB), DEV(12 * GiB), DEV(13 * GiB), DEV(14 * GiB) },
	  DATA(BTRFS_BLOCK_GROUP_RAID10), 10 * GiB, 0, 0, 2 * GiB, 1 * GiB,
	  { { 5, 1 * MiB }, { 4, 1 * MiB }, { 3, 1 * MiB }, { 2, 1 * MiB } } },
	/*
	 * RAID5: device 1 has 823 MiB at most (holes of 200 MiB and, after a
	 * 9 GiB extent, 823 MiB): sorted last, its hole sets the stripe; two
	 * data stripes of 823 MiB.
	 */
	{ "raid5, the smallest hole sets the stripe",
	  { { 10 * GiB, false, { RANGE(201 * MiB, 9 * GiB) } }, DEV(10 * GiB), DEV(11 * GiB) },
	  DATA(BTRFS_BLOCK_GROUP_RAID5), 10 * GiB, 0, 0, 1646 * MiB, 823 * MiB,
	  { { 3, 1 * MiB }, { 2, 1 * MiB }, { 1, 9417 * MiB } },
	  1, 9417 * MiB, 823 * MiB },
	/* RAID6: three data stripes and two parity over five devices */
	{ "raid6, five devices",
	  { DEV(10 * GiB), DEV(11 * GiB), DEV(12 * GiB), DEV(13 * GiB), DEV(14 * GiB) },
	  DATA(BTRFS_BLOCK_GROUP_RAID6), 10 * GiB, 0, 0, 3 * GiB, 1 * GiB,
	  { { 5, 1 * MiB }, { 4, 1 * MiB }, { 3, 1 * MiB }, { 2, 1 * MiB }, { 1, 1 * MiB } } },
	{ "raid6, two devices: ENOSPC", { DEV(10 * GiB), DEV(11 * GiB) },
	  DATA(BTRFS_BLOCK_GROUP_RAID6), 10 * GiB, 0, -ENOSPC },
	/* RAID1C3: four devices rounded down to devs_increment 3 */
	{ "raid1c3, four devices use three",
	  { DEV(10 * GiB), DEV(11 * GiB), DEV(12 * GiB), DEV(13 * GiB) },
	  META(BTRFS_BLOCK_GROUP_RAID1C3), 1 * GiB, 0, 0, 1 * GiB, 1 * GiB,
	  { { 4, 1 * MiB }, { 3, 1 * MiB }, { 2, 1 * MiB } } },
	{ "raid1c4, five devices use four",
	  { DEV(10 * GiB), DEV(11 * GiB), DEV(12 * GiB), DEV(13 * GiB), DEV(14 * GiB) },
	  META(BTRFS_BLOCK_GROUP_RAID1C4), 1 * GiB, 0, 0, 1 * GiB, 1 * GiB,
	  { { 5, 1 * MiB }, { 4, 1 * MiB }, { 3, 1 * MiB }, { 2, 1 * MiB } } },
	{ "raid1c4, three devices: ENOSPC", { DEV(10 * GiB), DEV(11 * GiB), DEV(12 * GiB) },
	  META(BTRFS_BLOCK_GROUP_RAID1C4), 1 * GiB, 0, -ENOSPC },
};

static int make_state(const struct alloc_case *c, struct btrfs_alloc_state *st)
{
	u32 d, r;

	memset(st, 0, sizeof(*st));
	st->devs = calloc(MAX_DEVS, sizeof(*st->devs));
	if (!st->devs)
		return -1;
	/* BTRFS_MAX_DEVS() of 16 KiB nodes */
	st->max_devs = (16384 - 101 - 25 - 80) / 32 + 1;
	st->next_logical = FIRST_LOGICAL;
	btrfs_alloc_model(BTRFS_DEFAULT_KERNEL, &st->model);
	for (d = 0; d < MAX_DEVS && c->devs[d].size; d++) {
		struct btrfs_alloc_device *dev = &st->devs[d];

		dev->devid = d + 1;
		dev->total_bytes = c->devs[d].size;
		dev->writeable = !c->devs[d].readonly;
		for (r = 0; r < MAX_RANGES && c->devs[d].ranges[r].length; r++) {
			if (range_tree_insert(&dev->ranges, c->devs[d].ranges[r].start,
					      c->devs[d].ranges[r].length))
				return -1;
			dev->bytes_used += c->devs[d].ranges[r].length;
		}
		if (dev->writeable) {
			st->rw_devices++;
			st->total_rw_bytes += dev->total_bytes;
		}
		st->nr_devs++;
	}
	return 0;
}

/* The hole find_free_dev_extent() gave @devid before the last chunk */
static const struct btrfs_alloc_seen *seen_of(const struct btrfs_alloc_history *h, u64 devid)
{
	u32 i;

	for (i = 0; i < h->nr_seen[0]; i++)
		if (h->seen[i].devid == devid)
			return &h->seen[i];
	return NULL;
}

static void check_chunk(const struct alloc_case *c, const struct btrfs_chunk_map *map,
			u64 start)
{
	char what[160];
	u32 s, n = 0;

	while (n < MAX_STRIPES && c->stripes[n].devid)
		n++;
	snprintf(what, sizeof(what), "%s: logical", c->name);
	check_u64(what, map->start, start);
	snprintf(what, sizeof(what), "%s: length", c->name);
	check_u64(what, map->length, c->length);
	snprintf(what, sizeof(what), "%s: stripe size", c->name);
	check_u64(what, map->stripe_size, c->stripe_size);
	snprintf(what, sizeof(what), "%s: stripes", c->name);
	check_u64(what, map->num_stripes, n);
	for (s = 0; s < n && s < map->num_stripes; s++) {
		snprintf(what, sizeof(what), "%s: stripe %u devid", c->name, s);
		check_u64(what, map->stripes[s].devid, c->stripes[s].devid);
		snprintf(what, sizeof(what), "%s: stripe %u physical", c->name, s);
		check_u64(what, map->stripes[s].physical, c->stripes[s].physical);
	}
}

static void check_seen(const struct alloc_case *c, const struct btrfs_alloc_history *h)
{
	const struct btrfs_alloc_seen *seen = seen_of(h, c->seen_devid);
	char what[160];

	check(seen != NULL, "%s: devid %llu kept", c->name,
	      (unsigned long long)c->seen_devid);
	if (!seen)
		return;
	snprintf(what, sizeof(what), "%s: devid %llu hole start", c->name,
		 (unsigned long long)c->seen_devid);
	check_u64(what, seen->offset, c->seen_offset);
	snprintf(what, sizeof(what), "%s: devid %llu hole size", c->name,
		 (unsigned long long)c->seen_devid);
	check_u64(what, seen->hole, c->seen_hole);
}

static void run_case(const struct alloc_case *c)
{
	struct btrfs_alloc_state st;
	struct btrfs_alloc_history h = { 0 };
	struct btrfs_chunk_map *map;
	u64 start = FIRST_LOGICAL;
	int err = 0;
	u32 i;

	if (make_state(c, &st)) {
		check(0, "%s: out of memory", c->name);
		goto out;
	}
	for (i = 0; i < c->before; i++) {
		map = btrfs_alloc_create_chunk(&st, c->type, c->chunk_size, &err);
		check(map != NULL, "%s: chunk %u before", c->name, i);
		if (!map)
			goto out;
		start += map->length;
		free(map);
	}
	if (btrfs_alloc_history_init(&st, &h)) {
		check(0, "%s: out of memory", c->name);
		goto out;
	}
	map = btrfs_alloc_create_chunk_logged(&st, c->type, c->chunk_size, &h, &err);
	check(err == c->ret, "%s: returns %d (want %d)", c->name, err, c->ret);
	if (map && !c->ret)
		check_chunk(c, map, start);
	if (map && c->seen_devid)
		check_seen(c, &h);
	free(map);
out:
	btrfs_alloc_history_free(&h);
	btrfs_alloc_state_free(&st);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	return unit_failures ? 1 : 0;
}
