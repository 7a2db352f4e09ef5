// SPDX-License-Identifier: GPL-2.0
/*
 * need_preemptive_reclaim() and calc_available_free_space() by kernel
 * version (space-info.c; Documentation/formulas.md sections 5 and 6), a
 * table worked by hand from fs/btrfs/space-info.c:
 *
 * 5.15-6.18  1. bytes_used + bytes_reserved + G >= total * 90 / 100: no
 *            2. G >= may_use + pinned: no   3. may_use + pinned - G <= 128 MiB: no
 *            4. reclaim_size: no
 *            5. thresh = avail(FLUSH_ALL) + (total - (used + reserved +
 *               readonly + G), when positive), >> clamp
 *            6. used = pinned + (ordered / 2 >= delalloc ? delayed refs rsv +
 *               delayed rsv : may_use - G);  flush when used >= thresh
 * 5.14       98 %, no steps 2 and 3
 * 5.12       98 % without G, thresh without G and unguarded (u64 wraps),
 *            ordered not halved, may_use with G
 * avail      free_chunk_space / copies, less the effective data chunk
 *            (6.9+; 0 when not above it), >> 3 for FLUSH_ALL, >> 1 else,
 *            zoned: aligned down to the zone size (6.10, 6.9.y)
 *
 * Every row starts from one state: a 1 GiB metadata space info with
 * 128 MiB used, a 64 MiB global reserve (G), nothing unallocated, clamp 1,
 * delalloc 1 and ordered 0 (step 6 weighs may_use).  So thresh_base is
 * 1024 - 128 - 64 = 832 MiB (896 MiB in 5.12) and clamp 1 halves it.
 */
#include <string.h>
#include "tests/unit/kernel-model.h"
#include "tests/unit/unit-test.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/space-info.h"

#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)
#define G	(64 * MiB)

static struct btrfs_reserve_state base_state(void)
{
	struct btrfs_reserve_state st;

	memset(&st, 0, sizeof(st));
	st.flags = BTRFS_BLOCK_GROUP_METADATA;
	st.total_bytes = GiB;
	st.bytes_used = 128 * MiB;
	st.global_rsv_reserved = G;
	st.bytes_may_use = G;
	st.profile_copies = 1;
	st.data_chunk_size = 10 * GiB;
	st.total_rw_bytes = 100 * GiB;
	st.delalloc_bytes = 1;
	st.clamp = 1;
	return st;
}

struct preempt_row {
	const char *what;
	const char *kernel;
	/* changes to the base state */
	u64 may_use;
	u64 pinned;
	u64 bytes_used;			/* 0: the base's 128 MiB */
	u64 readonly;
	u64 free_chunk_space;
	u64 ordered;
	u64 delayed_refs;
	u32 clamp;			/* 0: the base's 1 */
	u64 reclaim_size;
	/* worked by hand */
	u64 thresh_base;
	u64 used;
	bool verdict;
};

static const struct preempt_row rows[] = {
	/* 5.15-6.18: each step, each side */
	{ "floor: 128 MiB besides G", "6.18", G + 128 * MiB, 0, 0, 0, 0, 0, 0, 0, 0,
	  832 * MiB, 128 * MiB, false },
	{ "floor passed, below thresh", "6.18", G + 128 * MiB + 1, 0, 0, 0, 0, 0, 0, 0, 0,
	  832 * MiB, 128 * MiB + 1, false },
	{ "a byte under thresh", "6.18", G + 416 * MiB - 1, 0, 0, 0, 0, 0, 0, 0, 0,
	  832 * MiB, 416 * MiB - 1, false },
	{ "at thresh", "6.18", G + 416 * MiB, 0, 0, 0, 0, 0, 0, 0, 0,
	  832 * MiB, 416 * MiB, true },
	{ "everything is G", "6.18", G, 0, 0, 0, 0, 0, 0, 0, 0, 832 * MiB, 0, false },
	{ "tickets queued", "6.18", G + 416 * MiB, 0, 0, 0, 0, 0, 0, 0, 1,
	  832 * MiB, 416 * MiB, false },
	/* 90 % of 1 GiB = 966367641: bytes_used + G at it, and a byte under */
	{ "plain full", "6.18", G + 416 * MiB, 0, 966367641 - G, 0, 0, 0, 0, 0, 0,
	  107374183, 416 * MiB, false },
	{ "a byte under plain full", "6.18", G + 416 * MiB, 0, 966367640 - G, 0, 0, 0, 0, 0, 0,
	  107374184, 416 * MiB, true },
	/* ordered / 2 against delalloc (1) */
	{ "ordered 2: delayed reserves, none", "6.18", G + 416 * MiB, 0, 0, 0, 0, 2, 0, 0, 0,
	  832 * MiB, 0, false },
	{ "ordered 2: delayed reserves at thresh", "6.18", G + 416 * MiB, 0, 0, 0, 0, 2,
	  416 * MiB, 0, 0, 832 * MiB, 416 * MiB, true },
	{ "ordered 1: halved below delalloc, may_use", "6.18", G + 416 * MiB, 0, 0, 0, 0, 1, 0,
	  0, 0, 832 * MiB, 416 * MiB, true },
	{ "clamp 8", "6.18", G + 128 * MiB + 1, 0, 0, 0, 0, 0, 0, 8, 0,
	  832 * MiB, 128 * MiB + 1, true },
	{ "pinned counts in both", "6.18", G + 128 * MiB + 1, 416 * MiB, 0, 0, 0, 0, 0, 0, 0,
	  832 * MiB, 544 * MiB + 1, true },
	{ "readonly lowers thresh", "6.18", G + 128 * MiB + 1, 0, 0, 800 * MiB, 0, 0, 0, 0, 0,
	  32 * MiB, 128 * MiB + 1, true },
	{ "hard above total: guarded to 0", "6.18", G + 128 * MiB + 1, 0, 0, 900 * MiB, 0, 0,
	  0, 0, 0, 0, 128 * MiB + 1, true },
	/* 9 GiB unallocated: (9G - 1G) >> 3 = 1 GiB in 6.9+, 9G >> 3 before */
	{ "unallocated, 6.18: 928 MiB", "6.18", G + 928 * MiB, 0, 0, 0, 9 * GiB, 0, 0, 0, 0,
	  1856 * MiB, 928 * MiB, true },
	{ "unallocated, 5.15: 992 MiB", "5.15", G + 928 * MiB, 0, 0, 0, 9 * GiB, 0, 0, 0, 0,
	  1984 * MiB, 928 * MiB, false },
	/* 5.14: no floor, 98 % */
	{ "5.14: no floor", "5.14", G + 128 * MiB, 0, 0, 0, 0, 0, 0, 8, 0,
	  832 * MiB, 128 * MiB, true },
	{ "6.18: the same under the floor", "6.18", G + 128 * MiB, 0, 0, 0, 0, 0, 0, 8, 0,
	  832 * MiB, 128 * MiB, false },
	{ "5.14: pinned alone at thresh", "5.14", G, 3407872, 0, 0, 0, 0, 0, 8, 0,
	  832 * MiB, 3407872, true },
	{ "5.14: 90 % is not full yet", "5.14", G + 416 * MiB, 0, 966367641 - G, 0, 0, 0, 0, 0,
	  0, 107374183, 416 * MiB, true },
	/* 5.12: G nowhere, ordered whole, thresh unguarded */
	{ "5.12: may_use with G", "5.12", G + 384 * MiB, 0, 0, 0, 0, 0, 0, 0, 0,
	  896 * MiB, 448 * MiB, true },
	{ "6.18: the same without G", "6.18", G + 384 * MiB, 0, 0, 0, 0, 0, 0, 0, 0,
	  832 * MiB, 384 * MiB, false },
	{ "5.12: ordered 1 not halved", "5.12", G + 416 * MiB, 0, 0, 0, 0, 1, 0, 0, 0,
	  896 * MiB, 0, false },
	/* 98 % of 1 GiB = 1052266987, without G */
	{ "5.12: plain full", "5.12", G + 416 * MiB, 0, 1052266987, 0, 0, 0, 0, 0, 0,
	  21474837, 480 * MiB, false },
	{ "5.12: a byte under plain full", "5.12", G + 416 * MiB, 0, 1052266986, 0, 0, 0, 0, 0,
	  0, 21474838, 480 * MiB, true },
	/* 1024 - 128 - 1000 MiB wraps: 2^64 - 104 MiB */
	{ "5.12: unguarded", "5.12", G + 416 * MiB, 0, 0, 1000 * MiB, 0, 0, 0, 0, 0,
	  18446744073600499712ULL, 480 * MiB, false },
};

static void test_preempt(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct preempt_row *r = &rows[i];
		struct btrfs_kernel_model m = unit_kernel_model(r->kernel);
		struct btrfs_reserve_state st = base_state();
		struct btrfs_preempt_result res;

		st.bytes_may_use = r->may_use;
		st.bytes_pinned = r->pinned;
		if (r->bytes_used)
			st.bytes_used = r->bytes_used;
		st.bytes_readonly = r->readonly;
		st.free_chunk_space = r->free_chunk_space;
		st.ordered_bytes = r->ordered;
		st.delayed_refs_rsv_reserved = r->delayed_refs;
		if (r->clamp)
			st.clamp = r->clamp;
		st.reclaim_size = r->reclaim_size;
		btrfs_need_preemptive_reclaim(&st, &m, &res);
		check_u64(r->what, res.thresh_base, r->thresh_base);
		check_u64(r->what, res.used, r->used);
		check(res.verdict == r->verdict, "%s (%s): %s, want %s", r->what, r->kernel,
		      res.verdict ? "flush" : "no flush", r->verdict ? "flush" : "no flush");
	}
}

struct avail_row {
	const char *what;
	const char *kernel;
	u64 free_chunk_space;
	u32 copies;
	bool zoned;
	u64 data_chunk_size;
	u64 flush_all;		/* worked by hand */
	u64 other;
};

static const struct avail_row avail_rows[] = {
	{ "6.8, DUP, 9 GiB", "6.8", 9 * GiB, 2, false, 10 * GiB, 576 * MiB, 2304 * MiB },
	{ "6.9, DUP, 9 GiB: less a 1 GiB chunk", "6.9", 9 * GiB, 2, false, 10 * GiB,
	  448 * MiB, 1792 * MiB },
	{ "6.18, DUP, 2 GiB: one chunk, none left", "6.18", 2 * GiB, 2, false, 10 * GiB, 0, 0 },
	{ "6.8, DUP, 2 GiB", "6.8", 2 * GiB, 2, false, 10 * GiB, 128 * MiB, 512 * MiB },
	{ "6.18, DUP, 2 GiB + 16: 8 bytes over", "6.18", 2 * GiB + 16, 2, false, 10 * GiB,
	  1, 4 },
	{ "6.18, nothing unallocated", "6.18", 0, 1, false, 10 * GiB, 0, 0 },
	/* zoned: the 256 MiB zone is the chunk; 8960 MiB >> 3 = 1120 -> 1024 */
	{ "6.18 zoned, 9 GiB", "6.18", 9 * GiB, 1, true, 256 * MiB, 1024 * MiB, 4352 * MiB },
};

static void test_avail(void)
{
	u32 i;

	for (i = 0; i < sizeof(avail_rows) / sizeof(avail_rows[0]); i++) {
		const struct avail_row *r = &avail_rows[i];
		struct btrfs_kernel_model m = unit_kernel_model(r->kernel);
		struct btrfs_reserve_state st = base_state();

		st.free_chunk_space = r->free_chunk_space;
		st.profile_copies = r->copies;
		st.zoned = r->zoned;
		st.zone_size = r->zoned ? 256 * MiB : 0;
		st.data_chunk_size = r->data_chunk_size;
		check_u64(r->what,
			  btrfs_calc_available_free_space(&st, BTRFS_RESERVE_FLUSH_ALL, &m),
			  r->flush_all);
		check_u64(r->what,
			  btrfs_calc_available_free_space(&st, BTRFS_RESERVE_NO_FLUSH, &m),
			  r->other);
	}
}

/*
 * Step 6 alone: ordered bytes as weighed (halved since 5.14), and whether
 * they leave may_use weighed (ordered < delalloc) or the delayed reserves
 */
struct ordered_row {
	const char *what;
	const char *kernel;
	u64 ordered;
	u64 delalloc;
	u64 weighed;		/* worked by hand */
	bool may_use;
};

#define TOP	18446744073709551615ULL

static const struct ordered_row ordered_rows[] = {
	{ "step 6: nothing in flight", "6.18", 0, 0, 0, false },
	{ "step 6: delalloc only", "6.18", 0, 1, 0, true },
	{ "step 6: 3 ordered halved to 1, delalloc 1", "6.18", 3, 1, 1, false },
	{ "step 6: 3 ordered halved to 1, delalloc 2", "6.18", 3, 2, 1, true },
	{ "step 6: 5.14 halves", "5.14", 3, 2, 1, true },
	{ "step 6: 5.12 does not", "5.12", 3, 2, 3, false },
	{ "step 6: the top of u64, halved", "6.18", TOP, TOP, TOP >> 1, true },
	{ "step 6: the top of u64, whole", "5.12", TOP, TOP, TOP, false },
};

static void test_ordered(void)
{
	u32 i;

	for (i = 0; i < sizeof(ordered_rows) / sizeof(ordered_rows[0]); i++) {
		const struct ordered_row *r = &ordered_rows[i];
		struct btrfs_kernel_model m = unit_kernel_model(r->kernel);
		struct btrfs_reserve_state st = base_state();

		st.ordered_bytes = r->ordered;
		st.delalloc_bytes = r->delalloc;
		check_u64(r->what, btrfs_preempt_ordered(&st, &m), r->weighed);
		check(btrfs_preempt_counts_may_use(&st, &m) == r->may_use, "%s: weighs %s",
		      r->what, r->may_use ? "may_use" : "the delayed reserves");
	}
}

int main(void)
{
	test_preempt();
	test_avail();
	test_ordered();
	return unit_failures ? 1 : 0;
}
