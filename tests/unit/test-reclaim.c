// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own reclaim (formulas.md section 21.14), a table worked by
 * hand from fs/btrfs/space-info.c and block-group.c of 6.11-6.18:
 *
 *   btrfs_calc_reclaim_threshold()  static: bg_reclaim_threshold as set;
 *       dynamic (calc_dynamic_reclaim_threshold()): 0 when the space
 *       info's unused bytes (total - used, may_use left out) are below one
 *       data chunk, else calc_pct_ratio(want, target) = 100 * want / target
 *       (0 for a target of 0), target = 10 data chunks
 *       (calc_unalloc_target()), want = target - unallocated, or 0
 *   should_reclaim_block_group()  thresh = length * pct / 100 (mult_perc);
 *       a free marks a group when old used >= thresh > new used, so the
 *       bytes to free are used - thresh + 1; never when thresh is 0
 *   do_reclaim_sweep()  with periodic reclaim the groups below thresh are
 *       taken by the second sweep (reclaim_mark set by the first), or the
 *       first one's second pass when unallocated < one chunk
 *       (is_reclaim_urgent()); never SYSTEM (btrfs_should_periodic_reclaim())
 *   btrfs_reclaim_bgs_work()  sorts by used, equal ones in raid-index order;
 *       checks each again with the threshold computed then
 *
 * Rows on each side of every bound: unallocated at, a byte under and a
 * chunk under the target, unused at and a byte under one chunk, used at
 * and a byte under the threshold.
 */
#include <stdlib.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/space-info.h"

#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)

struct thresh_row {
	const char *what;
	struct btrfs_reclaim_knobs knobs;
	u64 total_bytes;
	u64 bytes_used;
	u64 bytes_readonly;
	u64 bytes_may_use;
	u64 free_chunk_space;
	u64 chunk_size;
	u32 pct;		/* worked by hand */
	u64 want;
};

#define STATIC(p)	{ .bg_reclaim_threshold = (p) }
#define DYNAMIC		{ .dynamic_reclaim = true }

static const struct thresh_row thresh_rows[] = {
	{ "static 75", STATIC(75), 20 * GiB, 10 * GiB, 0, 0, 0, GiB, 75, 10 * GiB },
	{ "static 0 (off)", STATIC(0), 20 * GiB, 10 * GiB, 0, 0, 0, GiB, 0, 10 * GiB },
	/* static ignores unused: none here */
	{ "static 90, no unused", STATIC(90), 10 * GiB, 10 * GiB, 0, 0, 0, GiB, 90, 10 * GiB },
	{ "dynamic, target unallocated", DYNAMIC, 20 * GiB, 10 * GiB, 0, 0, 10 * GiB, GiB,
	  0, 0 },
	{ "dynamic, more than the target", DYNAMIC, 20 * GiB, 10 * GiB, 0, 0, 30 * GiB, GiB,
	  0, 0 },
	{ "dynamic, a byte under the target", DYNAMIC, 20 * GiB, 10 * GiB, 0, 0,
	  10 * GiB - 1, GiB, 0, 1 },
	{ "dynamic, a chunk under the target", DYNAMIC, 20 * GiB, 10 * GiB, 0, 0, 9 * GiB,
	  GiB, 10, GiB },
	{ "dynamic, a byte less than a chunk under", DYNAMIC, 20 * GiB, 10 * GiB, 0, 0,
	  9 * GiB + 1, GiB, 9, GiB - 1 },
	{ "dynamic, half a chunk unallocated", DYNAMIC, 20 * GiB, 10 * GiB, 0, 0, GiB / 2,
	  GiB, 95, 10 * GiB - GiB / 2 },
	{ "dynamic, nothing unallocated", DYNAMIC, 20 * GiB, 10 * GiB, 0, 0, 0, GiB, 100,
	  10 * GiB },
	/* unused (total - used) against one chunk */
	{ "dynamic, unused one chunk", DYNAMIC, 11 * GiB, 10 * GiB, 0, 0, 0, GiB, 100,
	  10 * GiB },
	{ "dynamic, unused a byte under a chunk", DYNAMIC, 11 * GiB - 1, 10 * GiB, 0, 0, 0,
	  GiB, 0, 10 * GiB },
	{ "dynamic, readonly bytes are used", DYNAMIC, 12 * GiB, 10 * GiB, GiB + 1, 0, 0,
	  GiB, 0, 10 * GiB },
	{ "dynamic, may_use is not", DYNAMIC, 12 * GiB, 10 * GiB, 0, 2 * GiB, 0, GiB, 100,
	  10 * GiB },
	/* a small filesystem: the effective chunk is a tenth of 5 GiB */
	{ "dynamic, 512M chunks, 3G unallocated", DYNAMIC, 2 * GiB, GiB, 0, 0, 3 * GiB,
	  512 * MiB, 40, 2 * GiB },
	{ "dynamic, no chunk: target 0", DYNAMIC, 2 * GiB, GiB, 0, 0, 0, 0, 0, 0 },
	/*
	 * kernel test 056's dynamic sweep (3 GiB, 320 MiB data block groups,
	 * chunk a tenth of 3 GiB), measured on 6.18.44: at the sweep, then
	 * when btrfs_reclaim_bgs_work() checks the next one again after the
	 * first relocation gave its 320 MiB back to unallocated.  A 192 MiB
	 * block group (0.6 of its length) is below 69 % and not below 58 %:
	 * the kernel left it, a threshold fixed at the sweep relocated it.
	 */
	{ "dynamic, 056 at the sweep", DYNAMIC, 1600 * MiB, 960 * MiB, 0, 0, 944 * MiB,
	  322122547, 69, 2231369726ULL },
	{ "dynamic, 056 after one relocation", DYNAMIC, 1280 * MiB, 960 * MiB, 0, 0,
	  1264 * MiB, 322122547, 58, 1895825406ULL },
};

static void test_threshold(void)
{
	u32 i;

	for (i = 0; i < sizeof(thresh_rows) / sizeof(thresh_rows[0]); i++) {
		const struct thresh_row *r = &thresh_rows[i];
		struct btrfs_space_info s = {
			.present = true, .flags = BTRFS_BLOCK_GROUP_DATA,
			.total_bytes = r->total_bytes, .bytes_used = r->bytes_used,
			.bytes_readonly = r->bytes_readonly, .bytes_may_use = r->bytes_may_use,
		};
		u64 target, want, unused;
		u32 pct = btrfs_calc_reclaim_threshold(&s, &r->knobs, r->free_chunk_space,
						       r->chunk_size, &target, &want, &unused);

		check_u64(r->what, pct, r->pct);
		check_u64(r->what, target, 10 * r->chunk_size);
		check_u64(r->what, want, r->want);
	}
}

#define DATA	BTRFS_BLOCK_GROUP_DATA
#define META	(BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DUP)
#define SYS	(BTRFS_BLOCK_GROUP_SYSTEM | BTRFS_BLOCK_GROUP_DUP)
#define R1	(BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_RAID1)

/* 1 GiB block groups at 75 %: thresh = 805306368 */
#define THRESH	805306368ULL

static struct btrfs_block_group groups[] = {
	{ .start = 1 * GiB, .length = GiB, .used = THRESH, .flags = DATA },
	{ .start = 2 * GiB, .length = GiB, .used = GiB, .flags = DATA },
	{ .start = 3 * GiB, .length = GiB, .used = THRESH - 1, .flags = DATA },
	{ .start = 4 * GiB, .length = GiB, .used = 0, .flags = DATA },
	{ .start = 5 * GiB, .length = GiB, .used = 100, .flags = DATA, .ro = true },
	{ .start = 6 * GiB, .length = 256 * MiB, .used = 1, .flags = META },
	{ .start = 7 * GiB, .length = GiB, .used = 100 * MiB, .flags = DATA },
	/* equal used: SINGLE (raid index 0) before RAID1 (2) */
	{ .start = 8 * GiB, .length = GiB, .used = 200 * MiB, .flags = DATA },
	{ .start = 9 * GiB, .length = GiB, .used = 200 * MiB, .flags = R1 },
	{ .start = 10 * GiB, .length = 32 * MiB, .used = 16384, .flags = SYS },
};

struct plan_row {
	const char *what;
	enum btrfs_space_index index;
	struct btrfs_reclaim_knobs knobs;
	u64 free_chunk_space;
	/* worked by hand */
	u32 nr_on_free;
	u64 first_free_to_mark;
	u32 nr_below_unswept;
	u32 nr_above_swept;
	u32 nr_sweep;
	u64 sweep_bytes;
	enum btrfs_reclaim_when when;
	u64 sweep_order[4];		/* starts, in the kernel's order */
	u64 bytes_used;			/* of the 20 GiB space info (0 unless said) */
};

static const struct plan_row plan_rows[] = {
	/* at the threshold: one byte freed marks it; the full one 256 MiB + 1 */
	{ "static 75, no sweeps", BTRFS_SPACE_DATA, STATIC(75), 5 * GiB,
	  2, 1, 4, 0, 0, 0, 0, { 0 }, 0 },
	{ "periodic, urgent", BTRFS_SPACE_DATA,
	  { .bg_reclaim_threshold = 75, .periodic_reclaim = true }, GiB - 1,
	  0, 0, 0, 2, 4, THRESH - 1 + 100 * MiB + 400 * MiB, BTRFS_RECLAIM_FIRST_SWEEP,
	  { 7 * GiB, 8 * GiB, 9 * GiB, 3 * GiB }, 0 },
	{ "periodic, one chunk unallocated", BTRFS_SPACE_DATA,
	  { .bg_reclaim_threshold = 75, .periodic_reclaim = true }, GiB,
	  0, 0, 0, 2, 4, THRESH - 1 + 100 * MiB + 400 * MiB, BTRFS_RECLAIM_SECOND_SWEEP,
	  { 7 * GiB, 8 * GiB, 9 * GiB, 3 * GiB }, 0 },
	{ "periodic, system never swept", BTRFS_SPACE_SYSTEM,
	  { .bg_reclaim_threshold = 75, .periodic_reclaim = true }, 0,
	  0, 0, 1, 0, 0, 0, 0, { 0 }, 0 },
	{ "threshold 0", BTRFS_SPACE_DATA,
	  { .bg_reclaim_threshold = 0, .periodic_reclaim = true }, 0,
	  0, 0, 0, 0, 0, 0, 0, { 0 }, 0 },
	/*
	 * dynamic and periodic, 512 MiB unused (less than the 1 GiB chunk):
	 * threshold 0 now, but the sweep waits for a chunk freed and sees
	 * the armed threshold, 75 % with 2.5 GiB unallocated (main: none)
	 */
	{ "dynamic periodic, less than a chunk unused", BTRFS_SPACE_DATA,
	  { .dynamic_reclaim = true, .periodic_reclaim = true }, 5 * GiB / 2,
	  0, 0, 0, 2, 4, THRESH - 1 + 100 * MiB + 400 * MiB, BTRFS_RECLAIM_SECOND_SWEEP,
	  { 7 * GiB, 8 * GiB, 9 * GiB, 3 * GiB }, 20 * GiB - 512 * MiB },
	/* urgent: a byte under a chunk unallocated, 90 %: THRESH is below it */
	{ "dynamic periodic, less than a chunk unused, urgent", BTRFS_SPACE_DATA,
	  { .dynamic_reclaim = true, .periodic_reclaim = true }, GiB - 1,
	  0, 0, 0, 1, 5, THRESH + THRESH - 1 + 100 * MiB + 400 * MiB, BTRFS_RECLAIM_FIRST_SWEEP,
	  { 7 * GiB, 8 * GiB, 9 * GiB, 3 * GiB }, 20 * GiB - 512 * MiB },
	/* a chunk unused: the threshold is in effect now, nothing to arm */
	{ "dynamic periodic, a chunk unused", BTRFS_SPACE_DATA,
	  { .dynamic_reclaim = true, .periodic_reclaim = true }, 5 * GiB / 2,
	  0, 0, 0, 2, 4, THRESH - 1 + 100 * MiB + 400 * MiB, BTRFS_RECLAIM_SECOND_SWEEP,
	  { 7 * GiB, 8 * GiB, 9 * GiB, 3 * GiB }, 19 * GiB },
};

static void test_plan(void)
{
	struct btrfs_fs_info *fs_info = calloc(1, sizeof(*fs_info));
	u32 i, j;

	if (!fs_info) {
		check(0, "calloc");
		return;
	}
	fs_info->block_groups = groups;
	fs_info->nr_block_groups = sizeof(groups) / sizeof(groups[0]);
	for (i = 0; i < sizeof(plan_rows) / sizeof(plan_rows[0]); i++) {
		const struct plan_row *r = &plan_rows[i];
		struct btrfs_space_info s = {
			.present = true, .total_bytes = 20 * GiB, .bytes_used = r->bytes_used,
		};
		struct btrfs_reclaim_plan p;

		if (btrfs_plan_reclaim(fs_info, r->index, &s, r->free_chunk_space, GiB,
				       &r->knobs, &p)) {
			check(0, "%s: btrfs_plan_reclaim", r->what);
			continue;
		}
		check_u64(r->what, p.nr_on_free, r->nr_on_free);
		if (r->nr_on_free) {
			check_u64(r->what, p.on_free[0].free_to_mark, r->first_free_to_mark);
			check_u64(r->what, p.on_free[1].free_to_mark, GiB - THRESH + 1);
		}
		check_u64(r->what, p.nr_below_unswept, r->nr_below_unswept);
		check_u64(r->what, p.nr_above_swept, r->nr_above_swept);
		check_u64(r->what, p.nr_sweep, r->nr_sweep);
		check_u64(r->what, p.sweep_bytes, r->sweep_bytes);
		for (j = 0; j < p.nr_sweep && j < 4; j++) {
			check_u64(r->what, p.sweep[j].start, r->sweep_order[j]);
			check(p.sweep[j].when == r->when, "%s: sweep %u when", r->what, j);
			check(p.sweep[j].may_be_skipped == (j > 0), "%s: sweep %u may be skipped",
			      r->what, j);
		}
		btrfs_free_reclaim_plan(&p);
	}
	free(fs_info);
}

/*
 * Dynamic, marked on free, with 512 MiB unused (less than the 1 GiB
 * chunk): threshold 0 now, so no free marks anything until 512 MiB more
 * are freed and committed (unpinned); then, with 2.5 GiB unallocated
 * (want 7.5 of the 10 GiB target), 75 %: the block groups at or above it
 * (1 GiB at THRESH, 2 GiB full) are marked by a free of their
 * free_to_mark after that, the four below never.  With a chunk unused,
 * nothing waits to arm; with periodic reclaim no free marks, and the sweep
 * (after a chunk freed) sees 75 %.
 */
static void test_armed(void)
{
	static const struct btrfs_reclaim_knobs dyn = { .dynamic_reclaim = true };
	static const struct btrfs_reclaim_knobs dyn_periodic = {
		.dynamic_reclaim = true, .periodic_reclaim = true,
	};
	struct btrfs_fs_info *fs_info = calloc(1, sizeof(*fs_info));
	struct btrfs_space_info s = {
		.present = true, .total_bytes = 20 * GiB, .bytes_used = 20 * GiB - 512 * MiB,
	};
	struct btrfs_reclaim_plan p;

	if (!fs_info) {
		check(0, "calloc");
		return;
	}
	fs_info->block_groups = groups;
	fs_info->nr_block_groups = sizeof(groups) / sizeof(groups[0]);
	if (!btrfs_plan_reclaim(fs_info, BTRFS_SPACE_DATA, &s, 5 * GiB / 2, GiB, &dyn, &p)) {
		check_u64("armed: threshold now", p.thresh_pct, 0);
		check_u64("armed: arm_bytes", p.arm_bytes, 512 * MiB);
		check_u64("armed: armed_pct", p.armed_pct, 75);
		check_u64("armed: on_free", p.nr_on_free, 2);
		check_u64("armed: below", p.nr_below_unswept, 4);
		if (p.nr_on_free == 2) {
			check_u64("armed: first free_to_mark", p.on_free[0].free_to_mark, 1);
			check_u64("armed: second free_to_mark", p.on_free[1].free_to_mark,
				  GiB - THRESH + 1);
			check(p.on_free[0].when == BTRFS_RECLAIM_ON_FREE_ARMED, "armed: when");
		}
		btrfs_free_reclaim_plan(&p);
	}
	s.bytes_used = 19 * GiB;
	if (!btrfs_plan_reclaim(fs_info, BTRFS_SPACE_DATA, &s, 5 * GiB / 2, GiB, &dyn, &p)) {
		check_u64("a chunk unused: threshold now", p.thresh_pct, 75);
		check_u64("a chunk unused: arm_bytes", p.arm_bytes, 0);
		check(p.nr_on_free == 2 && p.on_free[0].when == BTRFS_RECLAIM_ON_FREE,
		      "a chunk unused: marked on free, no arming");
		btrfs_free_reclaim_plan(&p);
	}
	s.bytes_used = 20 * GiB - 512 * MiB;
	if (!btrfs_plan_reclaim(fs_info, BTRFS_SPACE_DATA, &s, 5 * GiB / 2, GiB,
				&dyn_periodic, &p)) {
		check_u64("periodic: threshold now", p.thresh_pct, 0);
		check_u64("periodic: arm_bytes", p.arm_bytes, 512 * MiB);
		check_u64("periodic: armed_pct, the sweep's", p.armed_pct, 75);
		check_u64("periodic: on_free", p.nr_on_free, 0);
		btrfs_free_reclaim_plan(&p);
	}
	free(fs_info);
}

/*
 * calc_pct_ratio() alone, worked by a python check written from its text
 * (6.11-6.18): 100 * want / target rounded down, 0 for a target of 0; when
 * 100 * want overflows u64 the kernel keeps the wrapped product, drops 10
 * bits of it and of the target (at least 1) and divides again.  Its
 * callers keep want <= target <= 10 data chunks; the rows at the top of
 * u64 pin the function itself.
 */
#define TOP	18446744073709551615ULL

struct pct_row {
	const char *what;
	u64 want;
	u64 target;
	u32 pct;
};

static const struct pct_row pct_rows[] = {
	{ "pct: target 0", 5, 0, 0 },
	{ "pct: want 0", 0, 10 * GiB, 0 },
	{ "pct: a third, rounded down", 1, 3, 33 },
	{ "pct: two thirds, rounded down", 2, 3, 66 },
	{ "pct: a byte under the target", 10 * GiB - 1, 10 * GiB, 99 },
	{ "pct: at the target", 10 * GiB, 10 * GiB, 100 },
	{ "pct: kernel test 056 at the sweep", 2231369726ULL, 3221225470ULL, 69 },
	{ "pct: the largest product that fits", TOP / 100, TOP / 100, 100 },
	{ "pct: the first product that wraps", TOP / 100 + 1, TOP / 100 + 1, 0 },
	{ "pct: both at the top of u64", TOP, TOP, 100 },
	{ "pct: half the top, the wrapped product", TOP / 2, TOP, 100 },
};

static void test_pct(void)
{
	u32 i;

	for (i = 0; i < sizeof(pct_rows) / sizeof(pct_rows[0]); i++)
		check_u64(pct_rows[i].what,
			  btrfs_dynamic_reclaim_pct(pct_rows[i].want, pct_rows[i].target),
			  pct_rows[i].pct);
}

int main(void)
{
	test_pct();
	test_threshold();
	test_plan();
	test_armed();
	return unit_failures ? 1 : 0;
}
