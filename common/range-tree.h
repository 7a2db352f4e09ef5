/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A set of ranges [start, start + length) in start order (ranges of one
 * start in the order they came), and the gaps between them: a walk from a
 * point over the ranges in order, as a first-fit allocator makes it, in
 * O(log n) instead of a step per range.
 *
 * A treap (a binary search tree kept balanced by random priorities) whose
 * nodes know their subtree's first start, last start, furthest end and
 * largest gap between its ranges, so that a subtree with no gap long
 * enough is passed in one step.  Ranges may overlap (a damaged image has
 * them): a subtree holding an overlap is walked node by node, so the
 * answer stays the one of the plain walk, only slower there.
 */
#ifndef BTRFS_SPACE_COMMON_RANGE_TREE_H
#define BTRFS_SPACE_COMMON_RANGE_TREE_H

#include <stdbool.h>
#include "common/types.h"

struct range_node {
	u64 start;
	u64 length;
	u32 left;			/* node indexes, 0: none */
	u32 right;
	u32 priority;
	bool disjoint;			/* the subtree's ranges do not overlap */
	/* the subtree's */
	u64 first_start;
	u64 last_start;
	u64 max_end;
	u64 max_gap;			/* between its ranges, when disjoint */
};

struct range_tree {
	struct range_node *nodes;	/* [0] unused: index 0 is "none" */
	u32 cap;
	u32 used;			/* nodes[1, used) handed out once */
	u32 root;
	u32 free_list;			/* through ->left */
	u32 nr;				/* ranges held */
	u64 seq;			/* priorities: hashes of a counter */
};

/* @start, @length added after the ranges of the same start: 0 or -ENOMEM */
int range_tree_insert(struct range_tree *t, u64 start, u64 length);
/* The same, before the ranges of the same start */
int range_tree_insert_first(struct range_tree *t, u64 start, u64 length);
/* The first range (in order) starting at @start taken out: false if none */
bool range_tree_remove(struct range_tree *t, u64 start);
bool range_tree_contains(const struct range_tree *t, u64 start);

struct range_item {
	u64 start;
	u64 length;
};

/*
 * Empty @t made of @nr ranges: the tree range_tree_insert() of each in
 * turn makes, in O(n) when they come by start (a sort first when not):
 * 0, or -ENOMEM with @t empty
 */
int range_tree_build(struct range_tree *t, const struct range_item *items, u32 nr);
/* @dst a copy of @src (@dst's own nodes): 0 or -ENOMEM with @dst empty */
int range_tree_copy(struct range_tree *dst, const struct range_tree *src);
void range_tree_free(struct range_tree *t);

/*
 * The walk over the ranges from @from up to @to: a gap is where the next
 * range starts after @from and every range before it has ended; ranges
 * starting after @to end the walk, and [last end, @to) is the last gap.
 * True with the first gap of at least @min_len (at least 1); false with
 * the largest gap (the first of equal ones), or @from and 0 when there is
 * none.
 */
bool range_tree_first_gap(const struct range_tree *t, u64 from, u64 to, u64 min_len,
			  u64 *gap_start, u64 *gap_len);

#endif
