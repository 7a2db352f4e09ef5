// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/runs.h"

/* How far the run of period @p from @first reaches: its count, 0 if none */
static u64 run_reach(const struct runs_ops *ops, void *ctx, u64 first, u64 nr, u32 p)
{
	u64 k;

	if (nr - first < 2 * (u64)p || !ops->begin(ctx, first, p))
		return 0;
	for (k = first + 2 * (u64)p; k < nr; k++)
		if (!ops->repeats(ctx, first, p, k))
			break;
	return k - first;
}

/*
 * Every period is tried and the longest run kept: each try stops where
 * its run does, so the work is at most max_period times the run's count
 * (linear in the list, whatever its length).
 */
u64 runs_next(const struct runs_ops *ops, void *ctx, u64 first, u64 nr,
	      u32 max_period, u32 *period)
{
	u64 best = 1, count;
	u32 p;

	*period = 1;
	for (p = 1; p <= max_period && nr - first >= 2 * (u64)p; p++) {
		count = run_reach(ops, ctx, first, nr, p);
		if (count > best) {
			best = count;
			*period = p;
		}
	}
	return best;
}

struct item_runs_ctx {
	const char *items;
	size_t size;
	size_t start_off;
	item_same_fn same;
	u64 step;
};

static u64 item_start(const struct item_runs_ctx *c, u64 i)
{
	u64 start;

	memcpy(&start, c->items + i * c->size + c->start_off, sizeof(start));
	return start;
}

/* Item @k is item @k - @p of the same shape, @c->step further */
static bool item_moved(const struct item_runs_ctx *c, u64 k, u32 p)
{
	u64 a = item_start(c, k - p), b = item_start(c, k);

	return b > a && b - a == c->step &&
	       (!c->same || c->same(c->items + (k - p) * c->size, c->items + k * c->size));
}

static bool item_begin(void *ctx, u64 first, u32 p)
{
	struct item_runs_ctx *c = ctx;
	u32 j;

	c->step = item_start(c, first + p) - item_start(c, first);
	for (j = 0; j < p; j++)
		if (!item_moved(c, first + p + j, p))
			return false;
	return true;
}

static bool item_repeats(void *ctx, u64 first, u32 p, u64 k)
{
	return item_moved(ctx, k, p);
}

static const struct runs_ops item_runs_ops = {
	.begin = item_begin,
	.repeats = item_repeats,
};

long item_runs(const void *items, u64 nr, size_t size, size_t start_off, item_same_fn same,
	       struct item_run **runs)
{
	struct item_runs_ctx c = { items, size, start_off, same, 0 };
	struct item_run *out = NULL;
	u32 alloc = 0, nr_runs = 0, p;
	u64 i = 0, count;

	while (i < nr) {
		count = runs_next(&item_runs_ops, &c, i, nr, RUNS_MAX_PERIOD, &p);
		if (array_grow((void **)&out, nr_runs, &alloc, sizeof(*out))) {
			free(out);
			return -ENOMEM;
		}
		out[nr_runs].first = i;
		out[nr_runs].period = p;
		out[nr_runs].count = count;
		out[nr_runs].step = count > 1 ? item_start(&c, i + p) - item_start(&c, i) : 0;
		nr_runs++;
		i += count;
	}
	*runs = out;
	return nr_runs;
}

u64 item_run_start(const void *items, size_t size, size_t start_off,
		   const struct item_run *run, u64 i)
{
	struct item_runs_ctx c = { items, size, start_off, NULL, 0 };

	return item_start(&c, run->first + i % run->period) + i / run->period * run->step;
}
