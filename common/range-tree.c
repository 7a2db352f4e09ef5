// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/hash.h"
#include "common/range-tree.h"

static inline u64 max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
}

/*
 * The subtree's summary from its node and children.  Disjoint: in order,
 * each range starts at or after the end of the one before and does not
 * wrap past 2^64, so the furthest end so far is the last range's end and
 * a gap inside the subtree does not depend on where the walk came from.
 */
static void pull(struct range_tree *t, u32 i)
{
	struct range_node *n = &t->nodes[i];
	const struct range_node *l = n->left ? &t->nodes[n->left] : NULL;
	const struct range_node *r = n->right ? &t->nodes[n->right] : NULL;
	u64 end = n->start + n->length;

	n->first_start = l ? l->first_start : n->start;
	n->last_start = r ? r->last_start : n->start;
	n->disjoint = end >= n->start;
	n->max_end = end;
	n->max_gap = 0;
	if (l) {
		n->disjoint &= l->disjoint && l->max_end <= n->start;
		n->max_end = max_u64(l->max_end, n->max_end);
		if (n->disjoint)
			n->max_gap = max_u64(l->max_gap, n->start - l->max_end);
	}
	if (r) {
		n->disjoint &= r->disjoint && n->max_end <= r->first_start;
		if (n->disjoint)
			n->max_gap = max_u64(n->max_gap, max_u64(r->max_gap,
						r->first_start - n->max_end));
		n->max_end = max_u64(n->max_end, r->max_end);
	}
}

/* The left child up in node @i's place: the new subtree root */
static u32 rotate_right(struct range_tree *t, u32 i)
{
	u32 l = t->nodes[i].left;

	t->nodes[i].left = t->nodes[l].right;
	t->nodes[l].right = i;
	pull(t, i);
	pull(t, l);
	return l;
}

static u32 rotate_left(struct range_tree *t, u32 i)
{
	u32 r = t->nodes[i].right;

	t->nodes[i].right = t->nodes[r].left;
	t->nodes[r].left = i;
	pull(t, i);
	pull(t, r);
	return r;
}

/*
 * Node @x under subtree @i, after the ranges of its start (before them
 * when @first): the new root
 */
static u32 insert_at(struct range_tree *t, u32 i, u32 x, bool first)
{
	struct range_node *n;
	u64 start = t->nodes[x].start;

	if (!i)
		return x;
	n = &t->nodes[i];
	if (start < n->start || (first && start == n->start)) {
		n->left = insert_at(t, n->left, x, first);
		if (t->nodes[n->left].priority > n->priority)
			return rotate_right(t, i);
	} else {
		n->right = insert_at(t, n->right, x, first);
		if (t->nodes[n->right].priority > n->priority)
			return rotate_left(t, i);
	}
	pull(t, i);
	return i;
}

static int new_node(struct range_tree *t, u64 start, u64 length, u32 *idx)
{
	struct range_node *n;
	u32 i;

	if (t->free_list) {
		i = t->free_list;
		t->free_list = t->nodes[i].left;
	} else {
		if (!t->used)
			t->used = 1;
		if (array_grow((void **)&t->nodes, t->used, &t->cap, sizeof(*t->nodes)))
			return -ENOMEM;
		i = t->used++;
	}
	n = &t->nodes[i];
	memset(n, 0, sizeof(*n));
	n->start = start;
	n->length = length;
	/* a fixed sequence: the same shape, and the same cost, at every run */
	n->priority = hash_mix64(++t->seq) >> 32;
	pull(t, i);
	*idx = i;
	return 0;
}

static int insert(struct range_tree *t, u64 start, u64 length, bool first)
{
	u32 x;
	int ret = new_node(t, start, length, &x);

	if (ret)
		return ret;
	t->root = insert_at(t, t->root, x, first);
	t->nr++;
	return 0;
}

int range_tree_insert(struct range_tree *t, u64 start, u64 length)
{
	return insert(t, start, length, false);
}

int range_tree_insert_first(struct range_tree *t, u64 start, u64 length)
{
	return insert(t, start, length, true);
}

/* Subtrees @a and @b, every range of @a before those of @b, as one */
static u32 merge(struct range_tree *t, u32 a, u32 b)
{
	if (!a || !b)
		return a ? a : b;
	if (t->nodes[a].priority > t->nodes[b].priority) {
		t->nodes[a].right = merge(t, t->nodes[a].right, b);
		pull(t, a);
		return a;
	}
	t->nodes[b].left = merge(t, a, t->nodes[b].left);
	pull(t, b);
	return b;
}

static u32 remove_at(struct range_tree *t, u32 i, u64 start, bool *found)
{
	struct range_node *n;
	u32 left;

	if (!i)
		return 0;
	n = &t->nodes[i];
	left = n->left;
	/* an earlier range of the same start is in the left subtree */
	if (start < n->start || (start == n->start && left && t->nodes[left].last_start == start)) {
		n->left = remove_at(t, left, start, found);
	} else if (start > n->start) {
		n->right = remove_at(t, n->right, start, found);
	} else {
		u32 rest = merge(t, left, n->right);

		*found = true;
		n->left = t->free_list;
		t->free_list = i;
		return rest;
	}
	pull(t, i);
	return i;
}

bool range_tree_remove(struct range_tree *t, u64 start)
{
	bool found = false;

	t->root = remove_at(t, t->root, start, &found);
	if (found)
		t->nr--;
	return found;
}

bool range_tree_contains(const struct range_tree *t, u64 start)
{
	u32 i = t->root;

	while (i && t->nodes[i].start != start)
		i = start < t->nodes[i].start ? t->nodes[i].left : t->nodes[i].right;
	return i;
}

struct build_key {
	u64 start;
	u32 arrival;
};

static int cmp_build_key(const void *a, const void *b)
{
	const struct build_key *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->arrival < y->arrival ? -1 : x->arrival > y->arrival;
}

/* The summaries of subtree @i, from its leaves up */
static void pull_all(struct range_tree *t, u32 i)
{
	if (!i)
		return;
	pull_all(t, t->nodes[i].left);
	pull_all(t, t->nodes[i].right);
	pull(t, i);
}

/*
 * The treap of @keys (by start, then arrival) with the priorities the
 * insertions in arrival order would have given: each node in key order
 * goes on the right spine, below the last node of a higher priority, the
 * spine's lower nodes its left subtree (a Cartesian tree, O(n))
 */
static void link_sorted(struct range_tree *t, const struct range_item *items,
			const struct build_key *keys, u32 nr, u32 *spine)
{
	u32 i, top = 0;

	for (i = 0; i < nr; i++) {
		struct range_node *n = &t->nodes[i + 1];
		u32 last = 0;

		memset(n, 0, sizeof(*n));
		n->start = keys[i].start;
		n->length = items[keys[i].arrival].length;
		n->priority = hash_mix64(t->seq + keys[i].arrival + 1) >> 32;
		while (top && t->nodes[spine[top - 1]].priority < n->priority)
			last = spine[--top];
		n->left = last;
		if (top)
			t->nodes[spine[top - 1]].right = i + 1;
		spine[top++] = i + 1;
	}
	t->root = spine[0];
}

int range_tree_build(struct range_tree *t, const struct range_item *items, u32 nr)
{
	struct build_key *keys;
	u32 *spine, i;
	bool sorted = true;

	range_tree_free(t);
	if (!nr)
		return 0;
	keys = malloc((size_t)nr * sizeof(*keys));
	spine = malloc((size_t)nr * sizeof(*spine));
	t->nodes = malloc(((size_t)nr + 1) * sizeof(*t->nodes));
	if (!keys || !spine || !t->nodes || nr == UINT32_MAX) {
		free(keys);
		free(spine);
		range_tree_free(t);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		keys[i].start = items[i].start;
		keys[i].arrival = i;
		sorted &= !i || items[i - 1].start <= items[i].start;
	}
	if (!sorted)
		qsort(keys, nr, sizeof(*keys), cmp_build_key);
	link_sorted(t, items, keys, nr, spine);
	pull_all(t, t->root);
	t->cap = t->used = nr + 1;
	t->nr = nr;
	t->seq = nr;
	free(keys);
	free(spine);
	return 0;
}

int range_tree_copy(struct range_tree *dst, const struct range_tree *src)
{
	*dst = *src;
	dst->nodes = NULL;
	if (!src->used)
		return 0;
	dst->nodes = malloc((size_t)src->used * sizeof(*dst->nodes));
	if (!dst->nodes) {
		memset(dst, 0, sizeof(*dst));
		return -ENOMEM;
	}
	memcpy(dst->nodes, src->nodes, (size_t)src->used * sizeof(*dst->nodes));
	dst->cap = src->used;
	return 0;
}

void range_tree_free(struct range_tree *t)
{
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}

struct gap_walk {
	u64 at;			/* the furthest end so far, at least where it began */
	u64 to;
	u64 min_len;
	u64 largest;		/* the largest gap passed */
	u64 gap_start;		/* the gap found */
	u64 gap_len;
};

/*
 * The walk through subtree @i: true when it stops there (a gap of min_len
 * found, or a range past @to), false when it went past the subtree.  A
 * disjoint subtree the walk enters before its first range, all of whose
 * ranges start by @to and with no gap of min_len, is passed in one step.
 */
static bool walk(const struct range_tree *t, u32 i, struct gap_walk *w)
{
	const struct range_node *n;

	if (!i)
		return false;
	n = &t->nodes[i];
	if (n->disjoint && w->at <= n->first_start && n->last_start <= w->to) {
		u64 lead = n->first_start - w->at;

		if (lead && lead >= w->min_len) {
			w->gap_start = w->at;
			w->gap_len = lead;
			return true;
		}
		if (n->max_gap < w->min_len) {
			w->largest = max_u64(w->largest, max_u64(lead, n->max_gap));
			w->at = n->max_end;
			return false;
		}
	}
	if (walk(t, n->left, w))
		return true;
	if (n->start > w->to) {
		w->gap_len = 0;
		return true;
	}
	if (n->start > w->at) {
		u64 gap = n->start - w->at;

		if (gap >= w->min_len) {
			w->gap_start = w->at;
			w->gap_len = gap;
			return true;
		}
		w->largest = max_u64(w->largest, gap);
	}
	w->at = max_u64(w->at, n->start + n->length);
	return walk(t, n->right, w);
}

/* The walk from @from for a gap of @min_len: its length, 0 when none */
static u64 walk_from(const struct range_tree *t, u64 from, struct gap_walk *w)
{
	w->at = from;
	w->largest = 0;
	w->gap_len = 0;
	walk(t, t->root, w);
	return w->gap_len;
}

bool range_tree_first_gap(const struct range_tree *t, u64 from, u64 to, u64 min_len,
			  u64 *gap_start, u64 *gap_len)
{
	struct gap_walk w = { .to = to, .min_len = min_len ? min_len : 1 };
	u64 tail;

	if (walk_from(t, from, &w)) {
		*gap_start = w.gap_start;
		*gap_len = w.gap_len;
		return true;
	}
	tail = to > w.at ? to - w.at : 0;
	if (tail >= w.min_len || tail > w.largest) {
		*gap_start = w.at;
		*gap_len = tail;
		return tail >= w.min_len;
	}
	*gap_start = from;
	*gap_len = 0;
	if (!w.largest)
		return false;
	/* the first gap as long as the largest */
	w.min_len = w.largest;
	walk_from(t, from, &w);
	*gap_start = w.gap_start;
	*gap_len = w.gap_len;
	return false;
}
