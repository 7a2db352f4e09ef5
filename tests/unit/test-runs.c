// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the runs of a list read (common/runs.c and
 * btrfs_chunk_runs_of(), formulas.md section 21.11): every run, expanded,
 * gives back the items it stands for, in order, and the counts sum to the
 * list's length; the expected runs are worked by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit-test.h"
#include "common/runs.h"
#include "kernel-shared/volumes.h"

#define MIB	(1ULL << 20)

/* @v as runs: the runs expanded are @v; returns the number of runs */
static long check_u64_runs(const char *what, const u64 *v, u64 nr, struct item_run **out)
{
	struct item_run *runs = NULL;
	long n = item_runs(v, nr, sizeof(*v), 0, NULL, &runs), i;
	u64 k = 0, j;
	int same = 1;

	check(n >= 0, "%s: runs found", what);
	for (i = 0; i < n; i++)
		for (j = 0; j < runs[i].count; j++, k++)
			same &= k < nr && item_run_start(v, sizeof(*v), 0, &runs[i], j) == v[k];
	check(same && k == nr, "%s: %ld runs expand to the %llu values", what, n,
	      (unsigned long long)nr);
	if (out)
		*out = runs;
	else
		free(runs);
	return n;
}

static void test_u64(void)
{
	u64 v[1000], d[5] = { 50, 40, 30, 20, 10 }, m[7] = { 1, 2, 3, 10, 20, 30, 31 };
	struct item_run *runs;
	u64 i;

	/* starts 0, 2, 3, 5, 6, ... (a relocation that leaves every third) */
	for (i = 0; i < 1000; i++)
		v[i] = 100 + (i / 2) * 3 + (i % 2) * 2;
	check_u64("period 2: runs", check_u64_runs("period 2", v, 1000, &runs), 1);
	check_u64("period 2: period", runs[0].period, 2);
	check_u64("period 2: step", runs[0].step, 3);
	free(runs);
	check_u64("descending: a run each", check_u64_runs("descending", d, 5, NULL), 5);
	/* 1, 2, 3 | 10, 20, 30 | 31: the longest from each start */
	check_u64("two steps: runs", check_u64_runs("two steps", m, 7, &runs), 3);
	check_u64("two steps: first count", runs[0].count, 3);
	check_u64("two steps: second step", runs[1].step, 10);
	free(runs);
	check_u64("empty list", check_u64_runs("empty", v, 0, NULL), 0);
	check_u64("one value", check_u64_runs("one", v, 1, NULL), 1);
}

static struct btrfs_chunk_map *chunk(u64 start, u64 len, u16 nr, const u64 *devids,
				     const u64 *physical)
{
	struct btrfs_chunk_map *map = calloc(1, sizeof(*map) + nr * sizeof(map->stripes[0]));
	u16 s;

	map->start = start;
	map->length = len;
	map->stripe_len = 65536;
	map->type = 1;
	map->stripe_size = len;
	map->num_stripes = nr;
	map->sub_stripes = 1;
	for (s = 0; s < nr; s++) {
		map->stripes[s].devid = devids[s];
		map->stripes[s].physical = physical[s];
	}
	return map;
}

/* The runs of @maps expanded are @maps; returns the number of runs */
static long check_chunk_runs(const char *what, struct btrfs_chunk_map **maps, u64 nr,
			     u32 *period)
{
	struct btrfs_chunk_run *runs = NULL;
	long n = btrfs_chunk_runs_of(maps, nr, &runs), i;
	u64 k = 0, j, bytes = 0, len = 0;
	int same = 1;

	check(n >= 0, "%s: runs found", what);
	for (i = 0; i < n; i++) {
		len += btrfs_chunk_run_length(&runs[i]);
		for (j = 0; j < runs[i].count; j++, k++) {
			struct btrfs_chunk_map *c = btrfs_chunk_run_chunk(&runs[i], j);
			u16 s;

			same &= k < nr && c->start == maps[k]->start &&
				c->length == maps[k]->length &&
				c->num_stripes == maps[k]->num_stripes;
			for (s = 0; same && s < c->num_stripes; s++)
				same &= c->stripes[s].devid == maps[k]->stripes[s].devid &&
					c->stripes[s].physical == maps[k]->stripes[s].physical;
			free(c);
		}
	}
	for (k = 0; k < nr; k++)
		bytes += maps[k]->length;
	check(same && k == nr, "%s: %ld runs expand to the %llu chunks", what, n,
	      (unsigned long long)nr);
	check_u64("summed length of the runs", len, bytes);
	if (period)
		*period = n ? runs[0].period : 0;
	btrfs_chunk_runs_free(runs, n);
	return n;
}

static void test_chunks(void)
{
	struct btrfs_chunk_map *maps[300];
	u64 i, dev, phys;
	u32 p;

	/* single over three devices in turn, a hole of 1 GiB logical after each */
	for (i = 0; i < 300; i++) {
		dev = i % 3 + 1;
		phys = MIB + i / 3 * 256 * MIB + (dev == 3 ? 0 : 64 * MIB);
		maps[i] = chunk(1024 * MIB + i * 1280 * MIB, 256 * MIB, 1, &dev, &phys);
	}
	check_u64("round robin: one run", check_chunk_runs("round robin", maps, 300, &p), 1);
	check_u64("round robin: period 3", p, 3);
	/* one chunk moved on its device: the run is cut around it */
	maps[150]->stripes[0].physical += 512 * MIB;
	check(check_chunk_runs("one moved", maps, 300, NULL) > 1, "a moved chunk cuts the run");
	for (i = 0; i < 300; i++)
		free(maps[i]);
	/* RAID1 on two devices, device 2 ahead: two stripes a chunk */
	for (i = 0; i < 50; i++) {
		u64 devs[2] = { 1, 2 }, ph[2] = { MIB + i * 128 * MIB, 9 * MIB + i * 128 * MIB };

		maps[i] = chunk(i * 128 * MIB, 128 * MIB, 2, devs, ph);
	}
	check_u64("raid1: one run", check_chunk_runs("raid1", maps, 50, &p), 1);
	check_u64("raid1: period 1", p, 1);
	/* a device stepping otherwise in the pattern's second chunk: no period 2 */
	for (i = 0; i < 50; i++) {
		maps[i]->stripes[1].devid = i % 2 ? 1 : 2;
		maps[i]->stripes[1].physical = 4096 * MIB + i * (i % 2 ? 64 : 128) * MIB;
	}
	check(check_chunk_runs("steps differ", maps, 50, NULL) > 1,
	      "a device with two steps is no run");
	for (i = 0; i < 50; i++)
		free(maps[i]);
	check_u64("no chunks", check_chunk_runs("none", maps, 0, NULL), 0);
}

int main(void)
{
	test_u64();
	test_chunks();
	return unit_failures != 0;
}
