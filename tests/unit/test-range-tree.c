// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of common/range-tree.c, the walk of find_free_dev_extent()
 * (kernel-shared/volumes.c) in O(log n): against the plain walk it
 * replaced, a sorted array of ranges walked from the first MiB, range by
 * range (first fit, else the largest hole, the first of equal ones, the
 * tail up to total_bytes last).  A table of edge cases worked by hand,
 * then random devices: hole layouts, sizes, damaged (overlapping) ranges,
 * allocations and removals in between, every search compared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit-test.h"
#include "common/range-tree.h"

#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)
#define RESERVED	MiB		/* BTRFS_DEVICE_RANGE_RESERVED */

struct ref_range {
	u64 start;
	u64 length;
};

/* The reference: ranges in an array by start, ranges of one start in the order they came */
struct ref_dev {
	struct ref_range *r;
	u32 nr;
	u32 cap;
};

static int ref_insert(struct ref_dev *d, u64 start, u64 length, bool first)
{
	u32 i;

	if (d->nr == d->cap) {
		u32 cap = d->cap ? 2 * d->cap : 64;
		struct ref_range *r = realloc(d->r, cap * sizeof(*r));

		if (!r)
			return -1;
		d->r = r;
		d->cap = cap;
	}
	for (i = d->nr; i > 0 && (d->r[i - 1].start > start ||
				  (first && d->r[i - 1].start == start)); i--)
		d->r[i] = d->r[i - 1];
	d->r[i].start = start;
	d->r[i].length = length;
	d->nr++;
	return 0;
}

static bool ref_remove(struct ref_dev *d, u64 start)
{
	u32 i;

	for (i = 0; i < d->nr; i++) {
		if (d->r[i].start != start)
			continue;
		memmove(&d->r[i], &d->r[i + 1], (d->nr - i - 1) * sizeof(d->r[0]));
		d->nr--;
		return true;
	}
	return false;
}

/* The walk of find_free_dev_extent() as volumes.c had it, range by range */
static bool ref_first_fit(const struct ref_dev *d, u64 total, u64 num_bytes, u64 *start,
			  u64 *len)
{
	u64 search_start = RESERVED, search_end = total;
	u64 max_hole_start = search_start, max_hole_size = 0;
	u32 i;

	for (i = 0; i < d->nr && search_start < search_end; i++) {
		const struct ref_range *r = &d->r[i];

		if (r->start > search_end)
			break;
		if (r->start > search_start) {
			u64 hole = r->start - search_start;

			if (hole > max_hole_size) {
				max_hole_start = search_start;
				max_hole_size = hole;
			}
			if (hole >= num_bytes)
				goto out;
		}
		if (r->start + r->length > search_start)
			search_start = r->start + r->length;
	}
	if (search_end > search_start && search_end - search_start > max_hole_size) {
		max_hole_start = search_start;
		max_hole_size = search_end - search_start;
	}
out:
	*start = max_hole_start;
	*len = max_hole_size;
	return max_hole_size >= num_bytes;
}

struct pair {
	struct range_tree t;
	struct ref_dev ref;
	u64 total;
};

static int pair_insert(struct pair *p, u64 start, u64 length, bool first)
{
	if (first ? range_tree_insert_first(&p->t, start, length) :
		    range_tree_insert(&p->t, start, length))
		return -1;
	return ref_insert(&p->ref, start, length, first);
}

static void pair_free(struct pair *p)
{
	range_tree_free(&p->t);
	free(p->ref.r);
	memset(p, 0, sizeof(*p));
}

/* One search on both: true when they agree */
static bool same_search(const struct pair *p, u64 want)
{
	u64 s1, l1, s2, l2;
	bool f1 = range_tree_first_gap(&p->t, RESERVED, p->total, want, &s1, &l1);
	bool f2 = ref_first_fit(&p->ref, p->total, want, &s2, &l2);

	return f1 == f2 && s1 == s2 && l1 == l2;
}

/* The edge cases: a layout, a wanted size and the hole worked by hand */
struct edge_case {
	const char *what;
	u64 total;
	struct ref_range ranges[8];	/* length 0 ends, except a first at start 0 */
	u32 nr;
	u64 want;
	bool found;
	u64 start;
	u64 len;
};

static const struct edge_case edges[] = {
	{ "empty device: the tail from the first MiB", 10 * GiB, { { 0 } }, 0,
	  GiB, true, MiB, 10 * GiB - MiB },
	{ "exact fit of a middle hole", 10 * GiB,
	  { { MiB, GiB }, { GiB + 257 * MiB, GiB } }, 2,
	  256 * MiB, true, GiB + MiB, 256 * MiB },
	{ "one byte short: the larger tail after it", 10 * GiB,
	  { { MiB, GiB }, { GiB + 257 * MiB, GiB } }, 2,
	  256 * MiB + 1, true, 2 * GiB + 257 * MiB, 8 * GiB - 257 * MiB },
	{ "hole at the device's end fits exactly", 4 * GiB,
	  { { MiB, 3 * GiB + 511 * MiB } }, 1,
	  512 * MiB, true, 3 * GiB + 512 * MiB, 512 * MiB },
	{ "hole at the device's end too small: it, -ENOSPC", 4 * GiB,
	  { { MiB, 3 * GiB + 511 * MiB } }, 1,
	  GiB, false, 3 * GiB + 512 * MiB, 512 * MiB },
	{ "range over the reserved MiB", 4 * GiB, { { 0, 4 * MiB } }, 1,
	  GiB, true, 4 * MiB, 4 * GiB - 4 * MiB },
	{ "hole between the reserve and the first range", 4 * GiB,
	  { { 2 * MiB, 4 * GiB - 2 * MiB } }, 1,
	  MiB, true, MiB, MiB },
	{ "equal largest holes: the first", 10 * GiB,
	  { { MiB, GiB }, { GiB + 129 * MiB, GiB }, { 2 * GiB + 257 * MiB, GiB },
	    { 3 * GiB + 385 * MiB, 6 * GiB + 639 * MiB } }, 4,
	  GiB, false, GiB + MiB, 128 * MiB },
	{ "full device: the reserve's start, 0", 2 * GiB, { { MiB, 2 * GiB - MiB } }, 1,
	  MiB, false, MiB, 0 },
	{ "device under a MiB", 512 * 1024, { { 0 } }, 0, 4096, false, MiB, 0 },
	{ "range past the device's end (shrunk): not walked", 4 * GiB,
	  { { MiB, GiB }, { 8 * GiB, GiB } }, 2,
	  2 * GiB, true, GiB + MiB, 3 * GiB - MiB },
	{ "range past the device's end, no fit: the largest hole ends at the device's end",
	  4 * GiB, { { MiB, GiB }, { 4 * GiB + MiB, MiB } }, 2,
	  4 * GiB, false, GiB + MiB, 3 * GiB - MiB },
	{ "range across the device's end: no tail", 4 * GiB,
	  { { MiB, GiB }, { 2 * GiB, 4 * GiB } }, 2,
	  2 * GiB, false, GiB + MiB, GiB - MiB },
	{ "overlapping ranges (damaged): the hole after the furthest end", 8 * GiB,
	  { { MiB, 4 * GiB }, { 2 * GiB, 256 * MiB }, { 3 * GiB, GiB }, { 5 * GiB, GiB } }, 4,
	  512 * MiB, true, 4 * GiB + MiB, GiB - MiB },
};

static void test_edges(void)
{
	u32 i, j;

	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		const struct edge_case *e = &edges[i];
		struct pair p = { .total = e->total };
		u64 start, len;
		bool found;

		for (j = 0; j < e->nr; j++)
			pair_insert(&p, e->ranges[j].start, e->ranges[j].length, false);
		found = range_tree_first_gap(&p.t, RESERVED, e->total, e->want, &start, &len);
		check(found == e->found && start == e->start && len == e->len,
		      "%s: %s %llu+%llu (want %s %llu+%llu)", e->what, found ? "fit" : "no fit",
		      (unsigned long long)start, (unsigned long long)len,
		      e->found ? "fit" : "no fit", (unsigned long long)e->start,
		      (unsigned long long)e->len);
		check(same_search(&p, e->want), "%s: the plain walk agrees", e->what);
		pair_free(&p);
	}
}

/* Many tiny holes, then a big one, then a bigger one: each size finds its own */
static void test_tiny_holes(void)
{
	struct pair p = { .total = 64 * GiB };
	u64 at = RESERVED, start, len;
	u32 i;

	for (i = 0; i < 20000; i++, at += 2 * MiB)
		pair_insert(&p, at + MiB, MiB, false);
	pair_insert(&p, at + 5 * GiB, GiB, false);
	check(range_tree_first_gap(&p.t, RESERVED, p.total, MiB, &start, &len) &&
	      start == RESERVED && len == MiB, "20,000 holes of 1 MiB: 1 MiB at the first");
	check(range_tree_first_gap(&p.t, RESERVED, p.total, 2 * MiB, &start, &len) &&
	      start == at && len == 5 * GiB, "a 2 MiB request passes them to the 5 GiB hole");
	check(range_tree_first_gap(&p.t, RESERVED, p.total, 6 * GiB, &start, &len) &&
	      start == at + 6 * GiB, "a 6 GiB request: the tail");
	check(!range_tree_first_gap(&p.t, RESERVED, p.total, 60 * GiB, &start, &len) &&
	      start == at + 6 * GiB && len == p.total - start, "too large: the tail, the largest");
	check(same_search(&p, MiB) && same_search(&p, 2 * MiB) && same_search(&p, 60 * GiB),
	      "20,000 tiny holes: the plain walk agrees");
	pair_free(&p);
}

/* Ranges of one start: removal takes the first in order */
static void test_same_start(void)
{
	struct pair p = { .total = 16 * GiB };
	u64 start, len;

	pair_insert(&p, GiB, GiB, false);
	pair_insert(&p, GiB, 4 * GiB, false);
	pair_insert(&p, GiB, 2 * GiB, true);
	check(range_tree_remove(&p.t, GiB) && ref_remove(&p.ref, GiB), "remove the first of three");
	check(range_tree_remove(&p.t, GiB) && ref_remove(&p.ref, GiB), "remove the second");
	range_tree_first_gap(&p.t, RESERVED, p.total, 8 * GiB, &start, &len);
	check(start == 5 * GiB && p.t.nr == 1, "the 4 GiB range is left: hole at %llu",
	      (unsigned long long)start);
	check(!range_tree_remove(&p.t, 2 * GiB) && range_tree_contains(&p.t, GiB) &&
	      !range_tree_contains(&p.t, 2 * GiB), "no range at 2 GiB, one at 1 GiB");
	check(same_search(&p, 8 * GiB), "same start: the plain walk agrees");
	pair_free(&p);
}

static u64 rnd(u64 *seed)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return *seed >> 17;
}

enum layout { DENSE_TINY, SPARSE, MIXED, DAMAGED, NR_LAYOUTS };

static const char *const layout_names[] = { "dense tiny holes", "sparse", "mixed", "damaged" };

/* A device's ranges: chunks with holes between them as @layout makes them */
static void lay_out(struct pair *p, enum layout layout, u64 *seed)
{
	u64 at = RESERVED + (rnd(seed) % 3 ? 0 : MiB * (rnd(seed) % 64));
	u32 i, n = 50 + rnd(seed) % 2000;

	for (i = 0; i < n && at < p->total; i++) {
		u64 len = (1 + rnd(seed) % 8) * 128 * MiB, hole;

		switch (layout) {
		case DENSE_TINY:
			hole = rnd(seed) % 4 ? 0 : (1 + rnd(seed) % 16) * MiB;
			break;
		case SPARSE:
			hole = (rnd(seed) % 40) * 256 * MiB;
			break;
		case DAMAGED:
			if (rnd(seed) % 8 == 0 && at > len) {
				pair_insert(p, at - len / 2 - rnd(seed) % len, len, rnd(seed) % 2);
				continue;
			}
			/* fallthrough */
		default:
			hole = rnd(seed) % 3 ? (rnd(seed) % 4) * MiB : (rnd(seed) % 12) * GiB;
			break;
		}
		at += hole;
		pair_insert(p, at, len, false);
		at += len;
	}
}

static const u64 wants[] = { 1, MiB, 16 * MiB, 256 * MiB, 257 * MiB, GiB, 3 * GiB, 10 * GiB };

/* After each step, every wanted size (and a random one) on both */
static u32 compare_all(const struct pair *p, u64 *seed, u32 *differ)
{
	u32 i;

	for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		*differ += !same_search(p, wants[i]);
	*differ += !same_search(p, 1 + rnd(seed) % (16 * GiB));
	return i + 1;
}

/* The allocator's steps: a chunk at the first fit, or a range taken out */
static void step(struct pair *p, u64 *seed)
{
	u64 want = (1 + rnd(seed) % 8) * 128 * MiB, start, len;

	if (p->ref.nr && rnd(seed) % 3 == 0) {
		u64 s = p->ref.r[rnd(seed) % p->ref.nr].start;

		range_tree_remove(&p->t, s);
		ref_remove(&p->ref, s);
		return;
	}
	range_tree_first_gap(&p->t, RESERVED, p->total, want, &start, &len);
	if (len)
		pair_insert(p, start, len < want ? len : want, false);
}

static void test_random(void)
{
	u32 differ = 0, searches = 0, devices = 0, layout, k, s;
	u64 seed = 27;

	for (layout = 0; layout < NR_LAYOUTS; layout++) {
		for (k = 0; k < 12; k++) {
			struct pair p = { .total = (k % 4 == 3 ? 64 * MiB : 0) +
					  (1 + rnd(&seed) % 4000) * GiB };
			struct range_tree copy;

			lay_out(&p, layout, &seed);
			searches += compare_all(&p, &seed, &differ);
			for (s = 0; s < 400; s++) {
				step(&p, &seed);
				searches += compare_all(&p, &seed, &differ);
			}
			/* a copy walks as the original */
			if (!range_tree_copy(&copy, &p.t)) {
				range_tree_free(&p.t);
				p.t = copy;
				searches += compare_all(&p, &seed, &differ);
			}
			check(p.t.nr == p.ref.nr, "%s device %u: %u ranges, reference %u",
			      layout_names[layout], k, p.t.nr, p.ref.nr);
			devices++;
			pair_free(&p);
		}
	}
	check(differ == 0, "%u devices, %u searches: %u differ from the plain walk", devices,
	      searches, differ);
}

/* Same answers from @a and @b for a spread of sizes */
static bool same_trees(const struct range_tree *a, const struct range_tree *b, u64 total)
{
	u64 s1, l1, s2, l2, want;
	bool same = a->nr == b->nr;

	for (want = MiB; want <= 64 * GiB; want *= 2) {
		bool f1 = range_tree_first_gap(a, RESERVED, total, want, &s1, &l1);
		bool f2 = range_tree_first_gap(b, RESERVED, total, want, &s2, &l2);

		same &= f1 == f2 && s1 == s2 && l1 == l2;
	}
	return same;
}

/*
 * range_tree_build() is the insertions in turn: sorted and unsorted
 * input, starts repeated, then the same removals from both
 */
static void test_build(void)
{
	u32 differ = 0, k, i, n;
	u64 seed = 90;

	for (k = 0; k < 40; k++) {
		struct range_tree built = { 0 }, inserted = { 0 };
		struct range_item *items;
		u64 total = 4000 * GiB;

		n = k ? 1 + rnd(&seed) % 3000 : 0;
		items = calloc(n ? n : 1, sizeof(*items));
		if (!items)
			break;
		for (i = 0; i < n; i++) {
			/* k even: by start, as the chunks of a filled device */
			items[i].start = k % 2 ? (rnd(&seed) % 4000) * GiB :
				 (i ? items[i - 1].start + items[i - 1].length : RESERVED) +
				 (rnd(&seed) % 4) * GiB;
			items[i].length = (1 + rnd(&seed) % 4) * 256 * MiB;
			if (k % 4 == 1 && i && rnd(&seed) % 5 == 0)
				items[i].start = items[i - 1].start;
			range_tree_insert(&inserted, items[i].start, items[i].length);
		}
		if (range_tree_build(&built, items, n)) {
			check(0, "build of %u ranges", n);
			break;
		}
		differ += !same_trees(&built, &inserted, total);
		for (i = 0; i < n; i += 3) {
			differ += range_tree_remove(&built, items[i].start) !=
				  range_tree_remove(&inserted, items[i].start);
			range_tree_insert(&built, items[i].start + GiB / 2, MiB);
			range_tree_insert(&inserted, items[i].start + GiB / 2, MiB);
		}
		differ += !same_trees(&built, &inserted, total);
		range_tree_free(&built);
		range_tree_free(&inserted);
		free(items);
	}
	check(differ == 0, "range_tree_build() = the insertions in turn, 40 sets: %u differ", differ);
}

int main(void)
{
	test_edges();
	test_tiny_holes();
	test_same_start();
	test_random();
	test_build();
	return unit_failures ? 1 : 0;
}
