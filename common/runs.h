/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Runs of a list (formulas.md section 21.11): a stretch of items in which
 * item k is item k - period moved by one shift, the same for the whole
 * stretch.  A list that repeats itself (chunks of one shape striped over
 * the devices in turn, block groups of one size end to end) is printed as
 * a few runs instead of an item per line: first items (the pattern),
 * count, the shift, the last item.  The caller says what an item, its
 * shape and its shift are; this finds the stretches.
 */
#ifndef BTRFS_SPACE_COMMON_RUNS_H
#define BTRFS_SPACE_COMMON_RUNS_H

#include <stdbool.h>
#include "common/types.h"

/* Periods tried by runs_next(): more devices than this repeat less */
#define RUNS_MAX_PERIOD		32

struct runs_ops {
	/*
	 * Items @first + period ... @first + 2 * period - 1 are the items
	 * of the period before them, each moved by one shift (the caller
	 * keeps it for repeats()).
	 */
	bool (*begin)(void *ctx, u64 first, u32 period);
	/* Item @k is item @k - period moved by the shift begin() found */
	bool (*repeats)(void *ctx, u64 first, u32 period, u64 k);
};

/*
 * The run starting at item @first of @nr: its count, and in *@period the
 * shortest period (at most @max_period) of the longest run of two periods
 * or more; 1 and period 1 when none is.
 */
u64 runs_next(const struct runs_ops *ops, void *ctx, u64 first, u64 nr,
	      u32 max_period, u32 *period);

/*
 * Runs of a list of items of @size bytes, each with a u64 start at byte
 * @start_off (a logical start): item i of a run is item
 * first + i % period, of the same shape (@same, NULL: any), its start
 * (i / period) steps further.  Steps are positive: a list in descending
 * order is a run of one per item.
 */
struct item_run {
	u64 first;			/* index in the list */
	u64 count;
	u32 period;
	u64 step;
};

typedef bool (*item_same_fn)(const void *a, const void *b);

/* The list cut into runs: the number of runs, or -ENOMEM; *@runs to free() */
long item_runs(const void *items, u64 nr, size_t size, size_t start_off, item_same_fn same,
	       struct item_run **runs);
/* The start of item @i of @run */
u64 item_run_start(const void *items, size_t size, size_t start_off,
		   const struct item_run *run, u64 i);

#endif
