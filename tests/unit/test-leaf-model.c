// SPDX-License-Identifier: GPL-2.0
/*
 * ctree-leaf.c: the leaf-edit model's split and push rules, one named case
 * a row, as the kernel's fs/btrfs/tests/extent-buffer-tests.c tests
 * split_leaf() on a made-up leaf.  Each case builds the leaves under one
 * level-1 node (or a root leaf) in memory, makes one item change, and
 * compares the leaves' item counts, the splits, new roots and freed leaves
 * and the leaves a transaction would copy with the figures worked by hand
 * from the 6.18 rules of split_leaf(), push_leaf_right(),
 * push_leaf_left() and btrfs_del_items() (nodesize 4096: 3995 bytes of
 * leaf data, 25 bytes an item header).  No image, no root.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/ctree-leaf.h"

#define MAX_LEAVES	4
#define NODESIZE	4096

enum leaf_op { OP_INSERT, OP_DELETE };

/* Leaf j's item i has key (1000 * (j + 1) + 10 * i, 1, 0) */
struct leaf_fill {
	u32 nr;
	u32 size;			/* each item's data bytes */
};

struct leaf_case {
	const char *name;
	bool has_parent;		/* false: the root is one leaf */
	struct leaf_fill leaves[MAX_LEAVES];
	u32 nr_leaves;
	enum leaf_op op;
	u32 leaf, slot;			/* insert before, or delete, item @slot of @leaf */
	u32 size;			/* insert: the new item's data bytes */
	/* what the kernel's rules give */
	int ret;
	u32 want_nr_leaves;
	u32 want[MAX_LEAVES];
	u32 splits;
	u32 new_roots;
	u32 freed;
	u32 touched;			/* bit j: leaf j (after the change) copied */
	u32 read_only;			/* bit j: leaf j read by a push, not copied */
};

static const struct leaf_case cases[] = {
	{
		.name = "insert that fits: no push, no split",
		.has_parent = true, .nr_leaves = 1, .leaves = { { 10, 100 } },
		.op = OP_INSERT, .leaf = 0, .slot = 5, .size = 100,
		.want_nr_leaves = 1, .want = { 11 }, .touched = 0x1,
	},
	{
		/*
		 * 325 bytes asked, 245 free: push_leaf_right() with 80 needed
		 * moves items 29..15 (item 15 is the slot: free 245 + 2 * 1750
		 * is not above the sibling's 3745), the slot follows to the
		 * right leaf's slot 0
		 */
		.name = "full leaf pushes right, the slot follows",
		.has_parent = true, .nr_leaves = 2, .leaves = { { 30, 100 }, { 2, 100 } },
		.op = OP_INSERT, .leaf = 0, .slot = 15, .size = 300,
		.want_nr_leaves = 2, .want = { 15, 18 }, .touched = 0x3,
	},
	{
		/*
		 * the right sibling (120 free) cannot take item 29 (125) but is
		 * copied all the same; push_leaf_left() moves items 0..14 and
		 * stops at the slot (245 + 2 * 1875 > 3745)
		 */
		.name = "right sibling full: push left up to the slot",
		.has_parent = true, .nr_leaves = 3,
		.leaves = { { 2, 100 }, { 30, 100 }, { 31, 100 } },
		.op = OP_INSERT, .leaf = 1, .slot = 15, .size = 300,
		.want_nr_leaves = 3, .want = { 17, 16, 31 }, .touched = 0x7,
	},
	{
		/*
		 * the right sibling has 5 bytes free, under the 80 needed:
		 * push_leaf_right() reads it and leaves it before
		 * btrfs_cow_block() (its extent item stays as it is at the
		 * commit: kernel test 037's node-split), no left sibling, so
		 * the leaf splits at mid (30 + 1) / 2
		 */
		.name = "right sibling too full: read, not copied, the leaf splits",
		.has_parent = true, .nr_leaves = 2, .leaves = { { 30, 100 }, { 38, 80 } },
		.op = OP_INSERT, .leaf = 0, .slot = 15, .size = 300,
		.want_nr_leaves = 3, .want = { 15, 16, 38 }, .splits = 1, .touched = 0x3,
		.read_only = 0x4,
	},
	{
		/* no sibling: split at mid = (31 + 1) / 2, the slot stays left */
		.name = "no sibling: split at the middle item",
		.has_parent = true, .nr_leaves = 1, .leaves = { { 31, 100 } },
		.op = OP_INSERT, .leaf = 0, .slot = 5, .size = 100,
		.want_nr_leaves = 2, .want = { 17, 15 }, .splits = 1, .touched = 0x3,
	},
	{
		/* a root leaf splits at 16 and gets a node above it */
		.name = "root leaf: split and insert_new_root()",
		.has_parent = false, .nr_leaves = 1, .leaves = { { 31, 100 } },
		.op = OP_INSERT, .leaf = 0, .slot = 20, .size = 100,
		.want_nr_leaves = 2, .want = { 16, 16 }, .splits = 1, .new_roots = 1,
		.touched = 0x3,
	},
	{
		/* past the last key, and 1985 + 2025 > 3995: a new empty leaf */
		.name = "append past the end: the item alone in a new leaf",
		.has_parent = true, .nr_leaves = 1, .leaves = { { 2, 1960 } },
		.op = OP_INSERT, .leaf = 0, .slot = 2, .size = 2000,
		.want_nr_leaves = 2, .want = { 2, 1 }, .splits = 1, .touched = 0x3,
	},
	{
		/*
		 * 925 * 2 + 2225 > 3995 from the slot: split == 2, a split at
		 * the slot, then again at mid 1 of the right half
		 */
		.name = "big item in the middle: the double split",
		.has_parent = true, .nr_leaves = 1, .leaves = { { 4, 900 } },
		.op = OP_INSERT, .leaf = 0, .slot = 2, .size = 2200,
		.want_nr_leaves = 3, .want = { 2, 2, 1 }, .splits = 2, .touched = 0x7,
	},
	{
		/* 500 bytes left, under 3995 / 3: all of it fits to the left */
		.name = "delete under a third: all pushed left, the leaf freed",
		.has_parent = true, .nr_leaves = 2, .leaves = { { 10, 100 }, { 5, 100 } },
		.op = OP_DELETE, .leaf = 1, .slot = 0,
		.want_nr_leaves = 1, .want = { 14 }, .freed = 1, .touched = 0x1,
	},
	{
		/* the left has 120 free, not the first item's 125: all to the right */
		.name = "delete: left full, all pushed right",
		.has_parent = true, .nr_leaves = 3,
		.leaves = { { 31, 100 }, { 5, 100 }, { 20, 100 } },
		.op = OP_DELETE, .leaf = 1, .slot = 0,
		.want_nr_leaves = 2, .want = { 31, 24 }, .freed = 1, .touched = 0x2,
		.read_only = 0x1,	/* the left: read, too full, left as it is */
	},
	{
		/*
		 * the left has 245 free: it takes the first item (slot 0, the
		 * deleted one's), push_leaf_left() moves the path there, and
		 * btrfs_del_items() then does not push right (1495 free there
		 * would take the 3 items left): the right is not copied
		 */
		.name = "delete: one item left, the path follows, no push right",
		.has_parent = true, .nr_leaves = 3,
		.leaves = { { 30, 100 }, { 5, 100 }, { 20, 100 } },
		.op = OP_DELETE, .leaf = 1, .slot = 0,
		.want_nr_leaves = 3, .want = { 31, 3, 20 }, .touched = 0x3,
	},
	{
		/* the right has 370 free, not the 500 left: nothing moves */
		.name = "delete: right takes all or nothing",
		.has_parent = true, .nr_leaves = 3,
		.leaves = { { 31, 100 }, { 5, 100 }, { 29, 100 } },
		.op = OP_DELETE, .leaf = 1, .slot = 0,
		.want_nr_leaves = 3, .want = { 31, 4, 29 }, .touched = 0x2,
		.read_only = 0x5,	/* both siblings read, neither copied */
	},
	{
		/* a root leaf stays, however empty */
		.name = "delete in a root leaf: no push",
		.has_parent = false, .nr_leaves = 1, .leaves = { { 1, 100 } },
		.op = OP_DELETE, .leaf = 0, .slot = 0,
		.want_nr_leaves = 1, .want = { 0 }, .touched = 0x1,
	},
};

static struct btrfs_key item_key(u32 leaf, u32 slot)
{
	return (struct btrfs_key){ 1000 * (leaf + 1) + 10 * slot, 1, 0 };
}

static int build(struct btrfs_tree_sim *ts, const struct leaf_case *c)
{
	struct btrfs_sim_group *g = calloc(1, sizeof(*g));
	u32 j, i;

	if (!g)
		return -1;
	ts->groups = g;
	ts->nr_groups = ts->cap_groups = 1;
	g->has_parent = c->has_parent;
	g->leaves = calloc(MAX_LEAVES, sizeof(*g->leaves));
	if (!g->leaves)
		return -1;
	g->cap = MAX_LEAVES;
	for (j = 0; j < c->nr_leaves; j++) {
		struct btrfs_sim_items_leaf *l = calloc(1, sizeof(*l));

		if (!l)
			return -1;
		g->leaves[g->nr++] = l;
		l->start = (j + 1) * NODESIZE;
		l->cap = c->leaves[j].nr ? c->leaves[j].nr : 1;
		l->items = calloc(l->cap, sizeof(*l->items));
		if (!l->items)
			return -1;
		for (i = 0; i < c->leaves[j].nr; i++)
			l->items[i] = (struct btrfs_sim_item){ item_key(j, i), c->leaves[j].size };
		l->nr = c->leaves[j].nr;
	}
	return 0;
}

static void run_case(const struct leaf_case *c)
{
	struct btrfs_fs_info fs_info = { .nodesize = NODESIZE };
	struct btrfs_root_ref root = { .objectid = 5, .found = true };
	struct btrfs_tree_sim ts;
	struct btrfs_key key = item_key(c->leaf, c->slot);
	const struct btrfs_sim_group *g;
	u32 j, touched = 0, read_only = 0;
	int ret;

	btrfs_tree_sim_init(&ts, &fs_info, &root);
	if (build(&ts, c)) {
		check(0, "%s: out of memory", c->name);
		btrfs_tree_sim_release(&ts);
		return;
	}
	if (c->op == OP_INSERT) {
		key.objectid -= 5;
		ret = btrfs_tree_sim_insert(&ts, &key, c->size);
	} else {
		ret = btrfs_tree_sim_delete(&ts, &key, true);
	}
	g = &ts.groups[0];
	check(ret == c->ret, "%s: returns %d (want %d)", c->name, ret, c->ret);
	check(g->nr == c->want_nr_leaves, "%s: %u leaves (want %u)", c->name, g->nr,
	      c->want_nr_leaves);
	for (j = 0; j < g->nr && j < MAX_LEAVES; j++) {
		check(g->leaves[j]->nr == c->want[j], "%s: leaf %u holds %u items (want %u)",
		      c->name, j, g->leaves[j]->nr, c->want[j]);
		touched |= (u32)g->leaves[j]->touched << j;
		read_only |= (u32)(g->leaves[j]->sibling_read && !g->leaves[j]->touched) << j;
	}
	check_u64(c->name, ts.splits, c->splits);
	check(ts.new_roots == c->new_roots, "%s: %llu new roots (want %u)", c->name,
	      (unsigned long long)ts.new_roots, c->new_roots);
	check(ts.leaves_freed == c->freed, "%s: %llu leaves freed (want %u)", c->name,
	      (unsigned long long)ts.leaves_freed, c->freed);
	check(ts.blocks == (int64_t)c->splits + c->new_roots - c->freed,
	      "%s: %lld blocks gained", c->name, (long long)ts.blocks);
	check(touched == c->touched, "%s: leaves copied 0x%x (want 0x%x)", c->name, touched,
	      c->touched);
	check(read_only == c->read_only, "%s: leaves only read 0x%x (want 0x%x)", c->name,
	      read_only, c->read_only);
	check(!ts.inexact, "%s: exact", c->name);
	btrfs_tree_sim_release(&ts);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	return unit_failures ? 1 : 0;
}
