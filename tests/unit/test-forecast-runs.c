// SPDX-License-Identifier: GPL-2.0
/*
 * Forecast fills as runs (formulas.md section 21.11) against the replay
 * made one chunk at a time: over device sets (equal and unequal, 1 to 16
 * devices, 1 GiB to 15 TiB), every profile, empty devices and devices with
 * chunks and holes, and a SYSTEM room small enough that check_system_chunk()
 * makes SYSTEM chunks on the way, the runs expanded must be the replay's
 * chunks one for one (logical start, length, type, every stripe), with the
 * same usable bytes and the same devices at the end.  A read-only device
 * and a device whose bytes_used is above its extents (total_avail below
 * its hole) are in the table too.  Table-driven as the
 * kernel's fs/btrfs/tests/chunk-allocation-tests.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/forecast.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/volumes.h"

#define KiB	(1ULL << 10)
#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)
#define TiB	(1ULL << 40)

enum layout {
	EMPTY,		/* nothing allocated */
	MKFS,		/* mkfs's SYSTEM, METADATA and DATA chunks on devices 1 and 2 */
	HOLES,		/* chunks with holes between them on every device */
};

struct runs_case {
	const char *name;
	u32 nr_devs;
	u64 size[16];		/* 0: as the one before */
	enum layout layout;
	u64 type;		/* DATA or METADATA */
	u64 chunk_size;
	u32 nodesize;
	u64 system_left;	/* 0: room for every SYSTEM need */
	u64 system_chunk_size;
	bool big;		/* the runs must be few (output bounded) */
	u32 readonly;		/* bit d: device d + 1 not writeable */
	u64 extra_used;		/* device 1's bytes_used above its extents */
	u64 system_profile;	/* 0: RAID1 (DUP on one device) */
};

#define DEVS(n, ...)	.nr_devs = (n), .size = { __VA_ARGS__ }
#define DATA		.type = BTRFS_BLOCK_GROUP_DATA, .chunk_size = 10 * GiB
#define META(size)	.type = BTRFS_BLOCK_GROUP_METADATA, .chunk_size = (size)
/* 4 KiB nodes and small SYSTEM chunks: check_system_chunk() makes some on the way */
#define SYSTEM_ROOM(node, left, chunk) \
	.nodesize = (node), .system_left = (left), .system_chunk_size = (chunk)

static const struct runs_case cases[] = {
	{ .name = "1 x 1 GiB", DEVS(1, 1 * GiB), .layout = EMPTY, DATA },
	{ .name = "2 x 1 GiB mkfs", DEVS(2, 1 * GiB), .layout = MKFS, DATA },
	{ .name = "1 GiB + 3 GiB mkfs (21.6)", DEVS(2, 1 * GiB, 3 * GiB), .layout = MKFS, DATA },
	{ .name = "3 x 10 GiB metadata", DEVS(3, 10 * GiB), .layout = MKFS, META(256 * MiB) },
	{ "4 unequal 10-40 GiB, odd ends",
	  DEVS(4, 10 * GiB + 12345 * 4 * KiB, 20 * GiB + 777 * 64 * KiB, 30 * GiB + 3 * MiB,
	       40 * GiB + 4 * KiB), .layout = MKFS, DATA },
	{ .name = "16 x 1..16 GiB", DEVS(16, 1 * GiB, 2 * GiB, 3 * GiB, 4 * GiB, 5 * GiB, 6 * GiB,
	  7 * GiB, 8 * GiB, 9 * GiB, 10 * GiB, 11 * GiB, 12 * GiB, 13 * GiB, 14 * GiB, 15 * GiB,
	  16 * GiB), .layout = EMPTY, DATA },
	{ .name = "5 x 100-500 GiB with holes", DEVS(5, 100 * GiB + 64 * KiB, 200 * GiB + 3 * 64 * KiB,
	  300 * GiB, 400 * GiB + 5 * 64 * KiB, 500 * GiB), .layout = HOLES, DATA },
	{ .name = "6 x 300 GiB mkfs", DEVS(6, 300 * GiB), .layout = MKFS, DATA },
	{ .name = "3 x 1/2/3 TiB", DEVS(3, 1 * TiB, 2 * TiB, 3 * TiB), .layout = MKFS, DATA,
	  .big = true },
	{ .name = "8 x 2 TiB with holes", DEVS(8, 2 * TiB), .layout = HOLES, DATA, .big = true },
	{ .name = "7 x 1 TiB metadata 1 GiB", DEVS(7, 1 * TiB), .layout = MKFS, META(1 * GiB),
	  .big = true },
	{ .name = "4 x 15 TiB", DEVS(4, 15 * TiB), .layout = MKFS, DATA, .big = true },
	{ .name = "15 x 15 TiB + 1 TiB", DEVS(16, 15 * TiB, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	  1 * TiB), .layout = MKFS, DATA, .big = true },
	{ .name = "16 x 15 TiB", DEVS(16, 15 * TiB), .layout = MKFS, DATA, .big = true },
	{ .name = "5 x 100 GiB, devid 2 read-only", DEVS(5, 100 * GiB), .layout = MKFS, DATA,
	  .readonly = 1U << 1 },
	{ .name = "3 x 50 GiB, devid 1 used above its extents", DEVS(3, 50 * GiB), .layout = HOLES,
	  DATA, .extra_used = 7 * GiB + 64 * KiB },
	{ .name = "4 x 1 TiB, small SYSTEM room", DEVS(4, 1 * TiB), .layout = MKFS, DATA,
	  SYSTEM_ROOM(4096, 160 * KiB, 128 * KiB) },
	{ .name = "3 x 200 GiB, small SYSTEM room", DEVS(3, 200 * GiB), .layout = HOLES, DATA,
	  SYSTEM_ROOM(4096, 140 * KiB, 64 * KiB) },
	/* a SYSTEM chunk that cannot be made: check_system_chunk() tries before each chunk */
	{ .name = "2 x 2 TiB, SYSTEM raid1c3 cannot be made", DEVS(2, 2 * TiB), .layout = MKFS, DATA,
	  SYSTEM_ROOM(4096, 140 * KiB, 64 * KiB), .system_profile = BTRFS_BLOCK_GROUP_RAID1C3,
	  .big = true },
	{ .name = "9 x 3 TiB, SYSTEM room", DEVS(9, 3 * TiB), .layout = MKFS, DATA,
	  SYSTEM_ROOM(16384, 600 * KiB, 1 * MiB) },
};

static const u64 profiles[] = {
	0, BTRFS_BLOCK_GROUP_DUP, BTRFS_BLOCK_GROUP_RAID0, BTRFS_BLOCK_GROUP_RAID1,
	BTRFS_BLOCK_GROUP_RAID10, BTRFS_BLOCK_GROUP_RAID5, BTRFS_BLOCK_GROUP_RAID6,
	BTRFS_BLOCK_GROUP_RAID1C3, BTRFS_BLOCK_GROUP_RAID1C4,
};

static int add_range(struct btrfs_alloc_device *dev, u64 start, u64 length)
{
	if (start + length > dev->total_bytes)
		return 0;
	if (range_tree_insert(&dev->ranges, start, length))
		return -1;
	dev->bytes_used += length;
	return 0;
}

static int layout_device(const struct runs_case *c, u32 d, struct btrfs_alloc_device *dev)
{
	u64 at = MiB;
	u32 i;

	if (c->layout == MKFS && d < 2)
		return add_range(dev, MiB, 8 * MiB) || add_range(dev, 9 * MiB, 256 * MiB) ||
		       add_range(dev, 265 * MiB, 1 * GiB);
	if (c->layout != HOLES)
		return 0;
	/* holes of 100 MiB to 5 GiB between chunks of 1 GiB, per device */
	for (i = 0; i < 6; i++) {
		at += ((i * 7 + d * 3) % 6) * 1000 * MiB + 100 * MiB;
		if (add_range(dev, at, 1 * GiB))
			return -1;
		at += 1 * GiB;
	}
	return 0;
}

static int make_state(const struct runs_case *c, struct btrfs_alloc_state *st)
{
	u64 size = 0;
	u32 d;

	memset(st, 0, sizeof(*st));
	st->devs = calloc(c->nr_devs, sizeof(*st->devs));
	if (!st->devs)
		return -1;
	st->nr_devs = c->nr_devs;
	st->rw_devices = c->nr_devs;
	st->max_devs = ((c->nodesize ? c->nodesize : 16384) - 101 - 25 - 80) / 32 + 1;
	btrfs_alloc_model(BTRFS_DEFAULT_KERNEL, &st->model);
	for (d = 0; d < c->nr_devs; d++) {
		struct btrfs_alloc_device *dev = &st->devs[d];

		if (c->size[d])
			size = c->size[d];
		dev->devid = d + 1;
		dev->writeable = !(c->readonly & (1U << d));
		dev->total_bytes = size;
		if (dev->writeable)
			st->total_rw_bytes += size;
		else
			st->rw_devices--;
		if (layout_device(c, d, dev))
			return -1;
		if (!d)
			dev->bytes_used += c->extra_used;
		if (dev->ranges.nr)
			st->next_logical = 2 * GiB;
	}
	if (!st->next_logical)
		st->next_logical = 1 * MiB;
	return 0;
}

static bool same_chunk(const struct btrfs_chunk_map *a, const struct btrfs_chunk_map *b)
{
	u16 s;

	if (a->start != b->start || a->length != b->length || a->type != b->type ||
	    a->stripe_size != b->stripe_size || a->num_stripes != b->num_stripes)
		return false;
	for (s = 0; s < a->num_stripes; s++)
		if (a->stripes[s].devid != b->stripes[s].devid ||
		    a->stripes[s].physical != b->stripes[s].physical)
			return false;
	return true;
}

/* The chunks of @fill one by one */
struct chunk_walk {
	const struct forecast_fill *fill;
	u32 run;
	u64 i;
};

static struct btrfs_chunk_map *next_chunk(struct chunk_walk *w)
{
	while (w->run < w->fill->nr_runs) {
		const struct btrfs_chunk_run *run = &w->fill->runs[w->run];

		if (w->i < btrfs_chunk_run_count(run))
			return btrfs_chunk_run_chunk(run, w->i++);
		w->run++;
		w->i = 0;
	}
	return NULL;
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run_case(const struct runs_case *c, u64 profile)
{
	struct btrfs_alloc_state one, runs;
	struct forecast_fill a = { 0 }, b = { 0 };
	struct chunk_walk wa = { .fill = &a }, wb = { .fill = &b };
	u32 nodesize = c->nodesize ? c->nodesize : 16384;
	u64 left = c->system_left ? c->system_left : 1 * GiB;
	u64 sys_chunk = c->system_chunk_size ? c->system_chunk_size : 32 * MiB;
	u64 sys = BTRFS_BLOCK_GROUP_SYSTEM | (c->system_profile ? c->system_profile :
		  c->nr_devs > 1 ? BTRFS_BLOCK_GROUP_RAID1 : BTRFS_BLOCK_GROUP_DUP);
	u64 type = c->type | profile, n = 0, differ = 0, nsys = 0;
	const char *pname = btrfs_bg_profile_name(type);
	double t0, t1, t2;
	bool same_devs = true;
	u32 d;
	int ra, rb;

	if (make_state(c, &one) || make_state(c, &runs)) {
		check(0, "%s %s: allocator states", c->name, pname);
		return;
	}
	t0 = seconds();
	ra = btrfs_forecast_fill_alloc(&one, nodesize, left, sys, sys_chunk, type,
				       c->chunk_size, false, &a);
	t1 = seconds();
	rb = btrfs_forecast_fill_alloc(&runs, nodesize, left, sys, sys_chunk, type,
				       c->chunk_size, true, &b);
	t2 = seconds();
	for (;;) {
		struct btrfs_chunk_map *x = next_chunk(&wa), *y = next_chunk(&wb);

		if (!x && !y)
			break;
		if (!x || !y || !same_chunk(x, y)) {
			if (!differ && x && y)
				printf("# first difference at chunk %llu: logical %llu/%llu devid %llu/%llu offset %llu/%llu\n",
				       (unsigned long long)n, (unsigned long long)x->start,
				       (unsigned long long)y->start,
				       (unsigned long long)x->stripes[0].devid,
				       (unsigned long long)y->stripes[0].devid,
				       (unsigned long long)x->stripes[0].physical,
				       (unsigned long long)y->stripes[0].physical);
			differ++;
		}
		if (x && (x->type & BTRFS_BLOCK_GROUP_SYSTEM))
			nsys++;
		n++;
		free(x);
		free(y);
	}
	for (d = 0; d < c->nr_devs; d++)
		same_devs &= one.devs[d].bytes_used == runs.devs[d].bytes_used;
	check(!ra && !rb && !a.truncated && !b.truncated && !differ && same_devs &&
	      a.new_chunk_bytes == b.new_chunk_bytes && a.nr_chunks == b.nr_chunks &&
	      one.next_logical == runs.next_logical,
	      "%s %s: %llu chunks (%llu SYSTEM) in %u runs = one by one (%u), %llu differ, usable %llu = %llu, %.3f s against %.3f s",
	      c->name, pname, (unsigned long long)b.nr_chunks, (unsigned long long)nsys,
	      b.nr_runs, a.nr_runs, (unsigned long long)differ,
	      (unsigned long long)b.new_chunk_bytes, (unsigned long long)a.new_chunk_bytes,
	      t2 - t1, t1 - t0);
	if (c->big && b.nr_chunks > 1000)
		check(b.nr_runs <= 400, "%s %s: %llu chunks in %u runs (at most 400)", c->name,
		      pname, (unsigned long long)b.nr_chunks, b.nr_runs);
	if (c->system_left && !c->system_profile && profile == BTRFS_BLOCK_GROUP_RAID1)
		check(nsys >= 1, "%s %s: SYSTEM chunks made on the way: %llu", c->name, pname,
		      (unsigned long long)nsys);
	btrfs_forecast_fill_free(&a);
	btrfs_forecast_fill_free(&b);
	btrfs_alloc_state_free(&one);
	btrfs_alloc_state_free(&runs);
}

/*
 * Data written with metadata growing (section 21.4): the data chunks
 * written whole taken as runs against the loop made one chunk at a time,
 * over ratios from one metadata byte per 10^5 data bytes (long data runs)
 * to 1 (a metadata chunk per data chunk or more), data and metadata
 * profiles, and starts with free space in either type.
 */
struct mixed_case {
	u32 devs_case;		/* index in cases[]: the devices and their layout */
	u64 data_profile;
	u64 meta_profile;
	u64 meta_chunk;
	double ratio;
	u64 dfree;
	u64 mfree;
};

static const struct mixed_case mixed_cases[] = {
	{ 0, 0, BTRFS_BLOCK_GROUP_DUP, 256 * MiB, 0.01, 0, 0 },
	{ 2, BTRFS_BLOCK_GROUP_RAID1, BTRFS_BLOCK_GROUP_RAID1, 256 * MiB, 0.02, 100 * MiB, 3 * MiB },
	{ 4, BTRFS_BLOCK_GROUP_RAID0, BTRFS_BLOCK_GROUP_RAID1, 256 * MiB, 0.003, 0, 200 * MiB },
	{ 5, 0, BTRFS_BLOCK_GROUP_RAID1, 1 * GiB, 0.001, 5 * GiB, 0 },
	{ 6, BTRFS_BLOCK_GROUP_RAID5, BTRFS_BLOCK_GROUP_RAID1C3, 1 * GiB, 0.0125, 0, 0 },
	{ 7, BTRFS_BLOCK_GROUP_RAID10, BTRFS_BLOCK_GROUP_RAID1, 1 * GiB, 0.5, 1 * GiB, 1 * GiB },
	{ 7, BTRFS_BLOCK_GROUP_RAID6, BTRFS_BLOCK_GROUP_RAID1C4, 1 * GiB, 1.0, 0, 0 },
	{ 8, 0, BTRFS_BLOCK_GROUP_RAID1, 1 * GiB, 0.00001, 0, 7 * MiB },
	{ 9, BTRFS_BLOCK_GROUP_RAID1, BTRFS_BLOCK_GROUP_RAID1C3, 1 * GiB, 0.007, 0, 0 },
	{ 10, BTRFS_BLOCK_GROUP_RAID1, BTRFS_BLOCK_GROUP_RAID1, 1 * GiB, 0.05, 0, 0 },
	{ 11, BTRFS_BLOCK_GROUP_RAID10, BTRFS_BLOCK_GROUP_RAID1C3, 1 * GiB, 0.004, 0, 0 },
	{ 12, BTRFS_BLOCK_GROUP_RAID1, BTRFS_BLOCK_GROUP_RAID1C3, 1 * GiB, 0.0021, 0, 0 },
	{ 13, BTRFS_BLOCK_GROUP_RAID1, BTRFS_BLOCK_GROUP_RAID1C3, 1 * GiB, 0.01, 0, 0 },
	{ 13, 0, BTRFS_BLOCK_GROUP_DUP, 1 * GiB, 0.2, 0, 0 },
	{ 16, BTRFS_BLOCK_GROUP_RAID1, BTRFS_BLOCK_GROUP_RAID1, 1 * GiB, 0.01, 0, 0 },
	{ 18, BTRFS_BLOCK_GROUP_RAID0, BTRFS_BLOCK_GROUP_RAID1, 256 * MiB, 0.004, 0, 0 },
	{ 19, 0, BTRFS_BLOCK_GROUP_RAID1, 1 * GiB, 0.003, 0, 0 },
};

static void run_mixed_case(const struct mixed_case *m)
{
	const struct runs_case *c = &cases[m->devs_case];
	struct btrfs_mixed_walk a = { .ratio = m->ratio, .dfree = m->dfree, .mfree = m->mfree };
	struct btrfs_mixed_walk b = a;
	struct btrfs_alloc_state one, runs;
	u32 nodesize = c->nodesize ? c->nodesize : 16384;
	u64 left = c->system_left ? c->system_left : 1 * GiB;
	u64 sys_chunk = c->system_chunk_size ? c->system_chunk_size : 32 * MiB;
	u64 sys = BTRFS_BLOCK_GROUP_SYSTEM | (c->system_profile ? c->system_profile :
		  c->nr_devs > 1 ? BTRFS_BLOCK_GROUP_RAID1 : BTRFS_BLOCK_GROUP_DUP);
	u64 dtype = BTRFS_BLOCK_GROUP_DATA | m->data_profile;
	u64 mtype = BTRFS_BLOCK_GROUP_METADATA | m->meta_profile;
	double t0, t1, t2;
	bool same_devs = true;
	u32 d;
	int ra, rb;

	if (make_state(c, &one) || make_state(c, &runs)) {
		check(0, "mixed %s: allocator states", c->name);
		return;
	}
	t0 = seconds();
	ra = btrfs_forecast_mixed_alloc(&one, nodesize, left, sys, sys_chunk, dtype, 10 * GiB,
					mtype, m->meta_chunk, false, &a);
	t1 = seconds();
	rb = btrfs_forecast_mixed_alloc(&runs, nodesize, left, sys, sys_chunk, dtype, 10 * GiB,
					mtype, m->meta_chunk, true, &b);
	t2 = seconds();
	for (d = 0; d < c->nr_devs; d++)
		same_devs &= one.devs[d].bytes_used == runs.devs[d].bytes_used;
	check(!ra && !rb && !b.truncated && same_devs && a.data_bytes == b.data_bytes &&
	      a.metadata_bytes == b.metadata_bytes && a.chunks == b.chunks &&
	      a.dfree == b.dfree && a.mfree == b.mfree && one.next_logical == runs.next_logical,
	      "mixed %s, data %s, metadata %s, ratio %g: %llu chunks, data %llu = %llu, metadata %llu = %llu, %.3f s against %.3f s",
	      c->name, btrfs_bg_profile_name(dtype), btrfs_bg_profile_name(mtype), m->ratio,
	      (unsigned long long)b.chunks, (unsigned long long)b.data_bytes,
	      (unsigned long long)a.data_bytes, (unsigned long long)b.metadata_bytes,
	      (unsigned long long)a.metadata_bytes, t2 - t1, t1 - t0);
	btrfs_alloc_state_free(&one);
	btrfs_alloc_state_free(&runs);
}

int main(void)
{
	u32 i, p;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (p = 0; p < sizeof(profiles) / sizeof(profiles[0]); p++)
			run_case(&cases[i], profiles[p]);
	for (i = 0; i < sizeof(mixed_cases) / sizeof(mixed_cases[0]); i++)
		run_mixed_case(&mixed_cases[i]);
	return unit_failures ? 1 : 0;
}
