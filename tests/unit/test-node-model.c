// SPDX-License-Identifier: GPL-2.0
/*
 * ctree-leaf.c: the node levels of the leaf-edit model, one named case a
 * row.  Each case builds level-1 nodes (groups of one-item leaves) side by
 * side under one level-2 node (or one root node) in memory, makes one
 * insert (that needs no leaf split) or delete, and compares the pointers
 * each node then holds, in key order, the nodes split, the pushes, the
 * new roots, and which sibling nodes were read and copied, with the
 * figures worked by hand from the 6.18 rules of setup_nodes_for_search(),
 * reada_for_balance(), split_node(), push_nodes_for_insert(),
 * balance_level(), push_node_left() and balance_node_right() (nodesize
 * 4096: 121 pointers a node, a split at 118, a balance at 30 or fewer).
 * No image, no root.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/ctree-leaf.h"

#define MAX_NODES	5
#define NODESIZE	4096
#define PARENT		(1ULL << 40)

enum node_op { OP_INSERT, OP_DELETE };

struct node_case {
	const char *name;
	bool root;			/* one node, the root (no parent) */
	bool deep;			/* the parent is not the root (a 4-level tree) */
	u32 nodes[MAX_NODES];		/* pointers (one-item leaves) of each node */
	u32 nr_nodes;
	enum node_op op;
	u32 node, leaf;			/* the change lands in leaf @leaf of node @node */
	bool second;			/* then one more insert, into leaf @leaf2 (counted over all nodes as built) */
	u32 leaf2;
	/* what the kernel's rules give */
	u32 want[MAX_NODES];		/* pointers of each node after, in key order */
	u32 want_nr_nodes;
	u32 node_splits;
	u32 node_pushes;
	u32 new_roots;
	u32 node_balances;		/* balance_level() that acted */
	u32 nodes_freed;		/* nodes it emptied or collapsed */
	u32 freed;			/* leaves freed (a delete empties its one-item leaf) */
	u32 read;			/* bit j: image node j read as a sibling */
	u32 cowed;			/* bit j: image node j copied by a push */
	bool inexact;
};

static const struct node_case cases[] = {
	{
		.name = "node below the split threshold: nothing moves",
		.nr_nodes = 3, .nodes = { 60, 117, 60 }, .op = OP_INSERT, .node = 1, .leaf = 50,
		.want_nr_nodes = 3, .want = { 60, 117, 60 },
	},
	{
		/*
		 * 118 pointers: both siblings read ahead; the left one (60,
		 * below 120) is copied and takes min(118 - 8, 121 - 60) = 61;
		 * the path (slot 100) stays in the node, 57 pointers: no split
		 */
		.name = "full node pushes into its left sibling",
		.nr_nodes = 3, .nodes = { 60, 118, 60 }, .op = OP_INSERT, .node = 1, .leaf = 100,
		.want_nr_nodes = 3, .want = { 121, 57, 60 }, .node_pushes = 1,
		.read = 0x5, .cowed = 0x1,
	},
	{
		/* as above, but slot 10 moves with the push: the left node, 121, splits at 61 */
		.name = "push left takes the path into a full node, which splits",
		.nr_nodes = 3, .nodes = { 60, 118, 60 }, .op = OP_INSERT, .node = 1, .leaf = 10,
		.want_nr_nodes = 4, .want = { 61, 60, 57, 60 }, .node_pushes = 1, .node_splits = 1,
		.read = 0x5, .cowed = 0x1,
	},
	{
		/*
		 * the left node has 120 (BTRFS_NODEPTRS_PER_BLOCK - 1): read, not
		 * copied; the right one takes min(121 - 60, 118 / 2 + 1) = 60
		 */
		.name = "left sibling nearly full: balance_node_right() into the right one",
		.nr_nodes = 3, .nodes = { 120, 118, 60 }, .op = OP_INSERT, .node = 1, .leaf = 5,
		.want_nr_nodes = 3, .want = { 120, 58, 120 }, .node_pushes = 1,
		.read = 0x5, .cowed = 0x4,
	},
	{
		/*
		 * slot 70 of 118 is among the 60 moved: the path goes right,
		 * where 120 pointers are too many: that node splits at 60
		 */
		.name = "push right takes the path into a full node, which splits",
		.nr_nodes = 3, .nodes = { 120, 118, 60 }, .op = OP_INSERT, .node = 1, .leaf = 70,
		.want_nr_nodes = 4, .want = { 120, 58, 60, 60 }, .node_pushes = 1,
		.node_splits = 1, .read = 0x5, .cowed = 0x4,
	},
	{
		/* both siblings at 120: neither copied; split_node() at (118 + 1) / 2 */
		.name = "no room beside: the node splits",
		.nr_nodes = 3, .nodes = { 120, 118, 120 }, .op = OP_INSERT, .node = 1, .leaf = 5,
		.want_nr_nodes = 4, .want = { 120, 59, 59, 120 }, .node_splits = 1, .read = 0x5,
	},
	{
		/* first under its parent: no left sibling to read or push to */
		.name = "first node of its parent pushes right only",
		.nr_nodes = 2, .nodes = { 119, 70 }, .op = OP_INSERT, .node = 0, .leaf = 3,
		.want_nr_nodes = 2, .want = { 68, 121 }, .node_pushes = 1, .read = 0x2, .cowed = 0x2,
	},
	{
		/*
		 * the later search sees the new layout: the first insert moves
		 * 52 pointers left (121, 69); the second, into leaf 10, now
		 * under the full first node, moves min(121 - 69, 121 / 2 + 1)
		 * = 52 back right (balance_node_right()), copying that node
		 */
		.name = "a later insert meets the node the push filled",
		.nr_nodes = 2, .nodes = { 69, 121 }, .op = OP_INSERT, .node = 1, .leaf = 100,
		.second = true, .leaf2 = 10,
		.want_nr_nodes = 2, .want = { 69, 121 }, .node_pushes = 2, .read = 0x3, .cowed = 0x3,
	},
	{
		/* the root node: insert_new_root() above it, then the split, no push */
		.name = "root node splits under a new root",
		.root = true, .nr_nodes = 1, .nodes = { 118 }, .op = OP_INSERT, .node = 0, .leaf = 3,
		.want_nr_nodes = 2, .want = { 59, 59 }, .node_splits = 1, .new_roots = 1,
	},
	/*
	 * balance_level() on a deletion's search: a node of 121 / 4 = 30
	 * pointers or fewer, not the root; its siblings are read and copied
	 * (a node freed has no bit left in .read and .cowed)
	 */
	{
		/* the left (60) takes all 30 (push_node_left(), empty): the node is freed */
		.name = "deletion through a node of a quarter: the left sibling takes all",
		.nr_nodes = 2, .nodes = { 60, 30 }, .op = OP_DELETE, .node = 1, .leaf = 3,
		.want_nr_nodes = 1, .want = { 89 }, .node_balances = 1, .nodes_freed = 1,
		.freed = 1, .read = 0x1, .cowed = 0x1,
	},
	{
		.name = "deletion through a node above a quarter: nothing",
		.nr_nodes = 2, .nodes = { 60, 31 }, .op = OP_DELETE, .node = 1, .leaf = 3,
		.want_nr_nodes = 2, .want = { 60, 30 }, .freed = 1,
	},
	{
		/*
		 * the left (110) takes 11, the path's leaf (slot 3) with them;
		 * the node, 19, takes all 100 of the right, which is freed
		 */
		.name = "balance: left takes some, the right is emptied into the node",
		.nr_nodes = 3, .nodes = { 110, 30, 100 }, .op = OP_DELETE, .node = 1, .leaf = 3,
		.want_nr_nodes = 2, .want = { 120, 119 }, .node_balances = 1, .nodes_freed = 1,
		.freed = 1, .read = 0x1, .cowed = 0x3,
	},
	{
		/*
		 * the left (80) takes all 20, the emptied node then all 120 of
		 * the right: the right's block is the one freed
		 */
		.name = "balance: the node emptied left refills from the right",
		.nr_nodes = 3, .nodes = { 80, 20, 120 }, .op = OP_DELETE, .node = 1, .leaf = 3,
		.want_nr_nodes = 2, .want = { 99, 120 }, .node_balances = 1, .nodes_freed = 1,
		.freed = 1, .read = 0x1, .cowed = 0x3,
	},
	{
		/*
		 * left 120 takes 1 (19 left, at least 8), the right gives
		 * min(120, 121 - 19) = 102 leaving 18: nothing freed
		 */
		.name = "balance: full siblings, pointers move both ways, none freed",
		.nr_nodes = 3, .nodes = { 120, 20, 120 }, .op = OP_DELETE, .node = 1, .leaf = 3,
		.want_nr_nodes = 3, .want = { 121, 120, 18 }, .node_balances = 1,
		.freed = 1, .read = 0x5, .cowed = 0x7,
	},
	{
		/*
		 * one pointer and a full left (nothing moves left): it takes
		 * 121 / 2 + 1 = 61 back (balance_node_right())
		 */
		.name = "balance: a node of one pointer takes half of its left",
		.nr_nodes = 2, .nodes = { 121, 1 }, .op = OP_DELETE, .node = 1, .leaf = 0,
		.want_nr_nodes = 2, .want = { 60, 61 }, .node_balances = 1,
		.freed = 1, .read = 0x1, .cowed = 0x3,
	},
	{
		/* the first node: no left; the right (50) is emptied into it */
		.name = "balance: the first node takes its right sibling whole",
		.nr_nodes = 2, .nodes = { 25, 50 }, .op = OP_DELETE, .node = 0, .leaf = 3,
		.want_nr_nodes = 1, .want = { 74 }, .node_balances = 1, .nodes_freed = 1,
		.freed = 1, .cowed = 0x1,
	},
	{
		/* a root node of one pointer: its leaf becomes the root (the leaf stays) */
		.name = "balance: a root node of one pointer collapses",
		.root = true, .nr_nodes = 1, .nodes = { 1 }, .op = OP_DELETE, .node = 0, .leaf = 0,
		.want_nr_nodes = 1, .want = { 1 }, .node_balances = 1, .nodes_freed = 1,
	},
	{
		.name = "a root node of two pointers stays",
		.root = true, .nr_nodes = 1, .nodes = { 2 }, .op = OP_DELETE, .node = 0, .leaf = 0,
		.want_nr_nodes = 1, .want = { 1 }, .freed = 1,
	},
	{
		/* a level-2 node of a quarter or fewer, not the root, is balanced first */
		.name = "deletion under a small level-2 node: flagged",
		.deep = true, .nr_nodes = 2, .nodes = { 60, 31 }, .op = OP_DELETE, .node = 1,
		.leaf = 3, .want_nr_nodes = 2, .want = { 60, 30 }, .freed = 1, .inexact = true,
	},
};

/* Leaf @k (counted over all nodes) holds one item, key (1000 * (k + 1), 1, 0) */
static struct btrfs_key leaf_key(u32 k)
{
	return (struct btrfs_key){ 1000 * (k + 1), 1, 0 };
}

static int build_node(struct btrfs_sim_group *g, u32 first_leaf, u32 nr)
{
	u32 i;

	g->leaves = calloc(nr, sizeof(*g->leaves));
	if (!g->leaves)
		return -1;
	g->cap = nr;
	for (i = 0; i < nr; i++) {
		struct btrfs_sim_items_leaf *l = calloc(1, sizeof(*l));

		if (!l)
			return -1;
		g->leaves[g->nr++] = l;
		l->start = (u64)(first_leaf + i + 1) * NODESIZE;
		l->items = calloc(2, sizeof(*l->items));
		if (!l->items)
			return -1;
		l->cap = 2;
		l->items[0] = (struct btrfs_sim_item){ leaf_key(first_leaf + i), 100 };
		l->nr = 1;
	}
	return 0;
}

static int build(struct btrfs_tree_sim *ts, const struct node_case *c)
{
	u32 j, k = 0;

	ts->groups = calloc(MAX_NODES, sizeof(*ts->groups));
	if (!ts->groups)
		return -1;
	ts->cap_groups = MAX_NODES;
	for (j = 0; j < c->nr_nodes; j++) {
		struct btrfs_sim_group *g = &ts->groups[ts->nr_groups++];

		g->has_parent = true;
		g->node_start = PARENT + (u64)(j + 1) * NODESIZE;
		g->parent_id = c->root ? 0 : PARENT;
		g->parent_nr = c->nr_nodes;
		g->parent_root = !c->deep;
		g->first = j == 0;
		g->last = j + 1 == c->nr_nodes;
		g->has_lo = j > 0;
		g->lo = leaf_key(k);
		g->has_hi = j + 1 < c->nr_nodes;
		g->hi = leaf_key(k + c->nodes[j]);
		if (build_node(g, k, c->nodes[j]))
			return -1;
		k += c->nodes[j];
	}
	return 0;
}

static int cmp_groups(const void *a, const void *b)
{
	const struct btrfs_sim_group *x = *(const struct btrfs_sim_group * const *)a;
	const struct btrfs_sim_group *y = *(const struct btrfs_sim_group * const *)b;

	if (!x->has_lo || !y->has_lo)
		return (int)x->has_lo - (int)y->has_lo;
	return btrfs_comp_keys(&x->lo, &y->lo);
}

static void check_nodes(const struct btrfs_tree_sim *ts, const struct node_case *c)
{
	const struct btrfs_sim_group *order[2 * MAX_NODES];
	u32 j, read = 0, cowed = 0;

	check(ts->nr_groups == c->want_nr_nodes, "%s: %u nodes (want %u)", c->name,
	      ts->nr_groups, c->want_nr_nodes);
	if (ts->nr_groups > 2 * MAX_NODES)
		return;
	for (j = 0; j < ts->nr_groups; j++)
		order[j] = &ts->groups[j];
	qsort(order, ts->nr_groups, sizeof(*order), cmp_groups);
	for (j = 0; j < ts->nr_groups && j < MAX_NODES; j++) {
		const struct btrfs_sim_group *g = order[j];

		check(g->nr == c->want[j], "%s: node %u holds %u pointers (want %u)", c->name, j,
		      g->nr, c->want[j]);
		/* the keys routed to a node are those of its leaves */
		if (g->nr && g->has_lo)
			check(!btrfs_comp_keys(&g->lo, &g->leaves[0]->items[0].key),
			      "%s: node %u starts at its first leaf's key", c->name, j);
		if (g->node_start) {
			u32 bit = 1U << ((g->node_start - PARENT) / NODESIZE - 1);

			read |= g->node_read ? bit : 0;
			cowed |= g->node_cowed ? bit : 0;
		}
	}
	check(read == c->read, "%s: sibling nodes read 0x%x (want 0x%x)", c->name, read, c->read);
	check(cowed == c->cowed, "%s: sibling nodes copied 0x%x (want 0x%x)", c->name, cowed,
	      c->cowed);
}

static void run_case(const struct node_case *c)
{
	struct btrfs_fs_info fs_info = { .nodesize = NODESIZE };
	struct btrfs_root_ref root = { .objectid = 5, .found = true };
	struct btrfs_tree_sim ts;
	struct btrfs_key key;
	u32 k = c->leaf, j;
	int ret;

	for (j = 0; j < c->node; j++)
		k += c->nodes[j];
	key = leaf_key(k);
	btrfs_tree_sim_init(&ts, &fs_info, &root);
	if (build(&ts, c)) {
		check(0, "%s: out of memory", c->name);
		btrfs_tree_sim_release(&ts);
		return;
	}
	if (c->op == OP_INSERT) {
		key.objectid += 5;
		ret = btrfs_tree_sim_insert(&ts, &key, 10);
		if (!ret && c->second) {
			key = leaf_key(c->leaf2);
			key.objectid += 5;
			ret = btrfs_tree_sim_insert(&ts, &key, 10);
		}
	} else {
		ret = btrfs_tree_sim_delete(&ts, &key, true);
	}
	check(ret == 0, "%s: returns %d", c->name, ret);
	check_nodes(&ts, c);
	check_u64(c->name, ts.node_splits, c->node_splits);
	check(ts.node_pushes == c->node_pushes, "%s: %llu node pushes (want %u)", c->name,
	      (unsigned long long)ts.node_pushes, c->node_pushes);
	check(ts.new_roots == c->new_roots, "%s: %llu new roots (want %u)", c->name,
	      (unsigned long long)ts.new_roots, c->new_roots);
	check(ts.node_balances == c->node_balances, "%s: %llu node balances (want %u)", c->name,
	      (unsigned long long)ts.node_balances, c->node_balances);
	check(ts.nodes_freed == c->nodes_freed, "%s: %llu nodes freed (want %u)", c->name,
	      (unsigned long long)ts.nodes_freed, c->nodes_freed);
	check(ts.blocks == (int64_t)c->node_splits + c->new_roots - c->freed - c->nodes_freed,
	      "%s: %lld blocks gained",
	      c->name, (long long)ts.blocks);
	check(ts.inexact == c->inexact, "%s: inexact %d (want %d)", c->name, ts.inexact,
	      c->inexact);
	btrfs_tree_sim_release(&ts);
}

/*
 * The levels above: nodes of level 2 (struct btrfs_sim_node) side by side
 * under a level-3 root (or one level-2 root), each over level-1 nodes of
 * GROUP_LEAVES one-item leaves (below both thresholds of level 1: nothing
 * moves there), the same rules applied to pointers to level-1 nodes; and
 * with .level 3 the same one level higher, each level-2 node over one
 * level-1 node (one pointer: an insert's search leaves it as it is).
 */
#define MAX_UPPER	4
#define GROUP_LEAVES	60
#define UPPER		(1ULL << 44)

struct upper_case {
	const char *name;
	int level;			/* of the nodes side by side: 2 (0) or 3 */
	bool root;			/* one node of that level, the root */
	u32 nodes[MAX_UPPER];		/* children of each node of that level */
	u32 nr_nodes;
	enum node_op op;
	u32 node, child;		/* the change lands in level-1 node @child of node @node */
	u32 path_leaves;		/* that level-1 node's leaves (0: GROUP_LEAVES) */
	u32 want[MAX_UPPER];		/* pointers of each level-2 node after, in key order */
	u32 want_nr_nodes;
	u32 want_root_nr;		/* pointers of the level-3 root after (0: none) */
	u32 node_splits;
	u32 node_pushes;
	u32 new_roots;
	u32 node_balances;
	u32 nodes_freed;
	u32 read;			/* bit j: image level-2 node j read as a sibling */
	u32 cowed;			/* bit j: image level-2 node j copied */
	u32 freed_levels;		/* bit l: an image node of level l freed */
};

static const struct upper_case upper_cases[] = {
	{
		.name = "level 2: below the split threshold, nothing moves",
		.nr_nodes = 3, .nodes = { 60, 117, 60 }, .op = OP_INSERT, .node = 1, .child = 50,
		.want_nr_nodes = 3, .want = { 60, 117, 60 }, .want_root_nr = 3,
	},
	{
		/* left takes min(118 - 8, 121 - 60) = 61; the path (100) stays, 57 */
		.name = "level 2: a full node pushes into its left sibling",
		.nr_nodes = 3, .nodes = { 60, 118, 60 }, .op = OP_INSERT, .node = 1, .child = 100,
		.want_nr_nodes = 3, .want = { 121, 57, 60 }, .want_root_nr = 3, .node_pushes = 1,
		.read = 0x5, .cowed = 0x1,
	},
	{
		/*
		 * level 2 first as above (121, 57, 60); then the path's level-1
		 * node, 118 leaves, gives 61 to its left neighbour (60, both now
		 * under the middle node) with its leaf 0: that one, 121, splits
		 * and the middle level-2 node gets the new pointer, 58
		 */
		.name = "level 2 then level 1 on one search: both push, the level-1 node splits",
		.nr_nodes = 3, .nodes = { 60, 118, 60 }, .op = OP_INSERT, .node = 1, .child = 100,
		.path_leaves = 118, .want_nr_nodes = 3, .want = { 121, 58, 60 }, .want_root_nr = 3,
		.node_pushes = 2, .node_splits = 1, .read = 0x5, .cowed = 0x1,
	},
	{
		/* the path (10) moves left with the push: that node, 121, splits at 61 */
		.name = "level 2: the push takes the path into a full node, which splits",
		.nr_nodes = 3, .nodes = { 60, 118, 60 }, .op = OP_INSERT, .node = 1, .child = 10,
		.want_nr_nodes = 4, .want = { 61, 60, 57, 60 }, .want_root_nr = 4,
		.node_pushes = 1, .node_splits = 1, .read = 0x5, .cowed = 0x1,
	},
	{
		/* left at 120: read, not copied; right takes min(121 - 60, 118 / 2 + 1) = 60 */
		.name = "level 2: left nearly full, balance_node_right() into the right",
		.nr_nodes = 3, .nodes = { 120, 118, 60 }, .op = OP_INSERT, .node = 1, .child = 5,
		.want_nr_nodes = 3, .want = { 120, 58, 120 }, .want_root_nr = 3, .node_pushes = 1,
		.read = 0x5, .cowed = 0x4,
	},
	{
		.name = "level 2: no room beside, the node splits",
		.nr_nodes = 3, .nodes = { 120, 118, 120 }, .op = OP_INSERT, .node = 1, .child = 5,
		.want_nr_nodes = 4, .want = { 120, 59, 59, 120 }, .want_root_nr = 4,
		.node_splits = 1, .read = 0x5,
	},
	{
		/* insert_new_root() above the level-2 root, then its split */
		.name = "level 2: the root splits under a new level-3 root",
		.root = true, .nr_nodes = 1, .nodes = { 118 }, .op = OP_INSERT, .node = 0,
		.child = 3, .want_nr_nodes = 2, .want = { 59, 59 }, .want_root_nr = 2,
		.node_splits = 1, .new_roots = 1,
	},
	{
		/* the left (60) takes all 30: the node is freed, the root keeps one pointer */
		.name = "level 2: deletion through a node of a quarter, the left takes all",
		.nr_nodes = 2, .nodes = { 60, 30 }, .op = OP_DELETE, .node = 1, .child = 3,
		.want_nr_nodes = 1, .want = { 90 }, .want_root_nr = 1, .node_balances = 1,
		.nodes_freed = 1, .read = 0x1, .cowed = 0x1, .freed_levels = 0x4,
	},
	{
		.name = "level 2: deletion through a node above a quarter, nothing",
		.nr_nodes = 2, .nodes = { 60, 31 }, .op = OP_DELETE, .node = 1, .child = 3,
		.want_nr_nodes = 2, .want = { 60, 31 }, .want_root_nr = 2,
	},
	{
		/* left 110 takes 11, then the node (19) takes all 100 of the right */
		.name = "level 2: balance, the right emptied into the node",
		.nr_nodes = 3, .nodes = { 110, 30, 100 }, .op = OP_DELETE, .node = 1, .child = 3,
		.want_nr_nodes = 2, .want = { 121, 119 }, .want_root_nr = 2, .node_balances = 1,
		.nodes_freed = 1, .read = 0x1, .cowed = 0x3, .freed_levels = 0x4,
	},
	{
		/* nothing goes into the full left; the node takes 121 / 2 + 1 = 61 back */
		.name = "level 2: a node of one pointer takes half of its left",
		.nr_nodes = 2, .nodes = { 121, 1 }, .op = OP_DELETE, .node = 1, .child = 0,
		.want_nr_nodes = 2, .want = { 60, 62 }, .want_root_nr = 2, .node_balances = 1,
		.read = 0x1, .cowed = 0x3,
	},
	{
		/* its level-1 node becomes the root */
		.name = "level 2: a root of one pointer collapses",
		.root = true, .nr_nodes = 1, .nodes = { 1 }, .op = OP_DELETE, .node = 0, .child = 0,
		.want_nr_nodes = 0, .node_balances = 1, .nodes_freed = 1, .freed_levels = 0x4,
	},
	{
		.name = "level 3: a full node pushes into its left sibling",
		.level = 3, .nr_nodes = 3, .nodes = { 60, 118, 60 }, .op = OP_INSERT, .node = 1,
		.child = 100, .want_nr_nodes = 3, .want = { 121, 57, 60 }, .want_root_nr = 3,
		.node_pushes = 1, .read = 0x5, .cowed = 0x1,
	},
	{
		.name = "level 3: the root splits under a new level-4 root",
		.level = 3, .root = true, .nr_nodes = 1, .nodes = { 119 }, .op = OP_INSERT,
		.node = 0, .child = 70, .want_nr_nodes = 2, .want = { 60, 59 }, .want_root_nr = 2,
		.node_splits = 1, .new_roots = 1,
	},
	{
		/*
		 * the left takes all 30 and the node is freed; then, one level
		 * down on the same search, the path's level-2 node (one
		 * pointer) gives it to its left neighbour, takes its right
		 * one's (that node freed), and gives it left again: freed too
		 */
		.name = "level 3: deletion through a node of a quarter, then level 2 below it",
		.level = 3, .nr_nodes = 2, .nodes = { 60, 30 }, .op = OP_DELETE, .node = 1,
		.child = 3, .want_nr_nodes = 1, .want = { 88 }, .want_root_nr = 1,
		.node_balances = 2, .nodes_freed = 3, .read = 0x1, .cowed = 0x1,
		.freed_levels = 0xc,
	},
};

static int upper_level(const struct upper_case *c)
{
	return c->level ? c->level : 2;
}

static u32 upper_total(const struct upper_case *c)
{
	u32 i, n = 0;

	for (i = 0; i < c->nr_nodes; i++)
		n += c->nodes[i];
	return n;
}

/* Level-1 node @g's first leaf: each has GROUP_LEAVES, but the path's may have more */
static u32 group_first_leaf(const struct upper_case *c, u32 g)
{
	u32 path = c->child, i, extra = c->path_leaves > GROUP_LEAVES ?
					c->path_leaves - GROUP_LEAVES : 0;

	for (i = 0; i < c->node; i++)
		path += c->nodes[i];
	return g * GROUP_LEAVES + (g > path ? extra : 0);
}

static struct btrfs_key group_key(const struct upper_case *c, u32 g)
{
	return leaf_key(group_first_leaf(c, g));
}

static struct btrfs_sim_node *add_upper_node(struct btrfs_tree_sim *ts, int level, u64 start,
					     u32 nr)
{
	struct btrfs_sim_node *n = &ts->nodes[ts->nr_nodes++];

	n->level = level;
	n->id = n->start = start;
	n->keys = calloc(nr ? nr : 1, sizeof(*n->keys));
	n->cap = nr ? nr : 1;
	return n->keys ? n : NULL;
}

/* A node of level 2 over its level-1 node @gi, built with the level-1 node itself */
static int add_group(struct btrfs_tree_sim *ts, const struct upper_case *c,
		     struct btrfs_sim_node *n, u32 gi, u32 total)
{
	struct btrfs_sim_group *g = &ts->groups[ts->nr_groups++];
	u32 first = group_first_leaf(c, gi);

	n->keys[n->nr++] = group_key(c, gi);
	g->has_parent = true;
	g->node_start = PARENT + (u64)(gi + 1) * NODESIZE;
	g->parent_id = n->id;
	g->has_lo = gi > 0;
	g->lo = group_key(c, gi);
	g->has_hi = gi + 1 < total;
	g->hi = group_key(c, gi + 1);
	return build_node(g, first, group_first_leaf(c, gi + 1) - first);
}

/*
 * Node i of the case's level (at UPPER + (i + 1) * NODESIZE) over its
 * children: level-1 nodes (level 2), or level-2 nodes over one each
 */
static int build_upper(struct btrfs_tree_sim *ts, const struct upper_case *c)
{
	u32 total = upper_total(c), cap = total + MAX_UPPER + 2, i, j, gi = 0;
	int level = upper_level(c);
	struct btrfs_sim_node *top = NULL, *n, *m;

	ts->groups = calloc(total, sizeof(*ts->groups));
	ts->nodes = calloc(cap, sizeof(*ts->nodes));
	if (!ts->groups || !ts->nodes)
		return -1;
	ts->cap_groups = total;
	ts->cap_nodes = cap;
	if (!c->root) {
		top = add_upper_node(ts, level + 1, UPPER, c->nr_nodes);
		if (!top)
			return -1;
		top->root = true;
	}
	for (i = 0; i < c->nr_nodes; i++) {
		n = add_upper_node(ts, level, UPPER + (u64)(i + 1) * NODESIZE, c->nodes[i]);
		if (!n)
			return -1;
		n->root = c->root;
		n->has_lo = i > 0;
		n->lo = group_key(c, gi);
		n->has_hi = i + 1 < c->nr_nodes;
		n->hi = group_key(c, gi + c->nodes[i]);
		if (top)
			top->keys[top->nr++] = group_key(c, gi);
		for (j = 0; j < c->nodes[i]; j++, gi++) {
			m = n;
			if (level == 3) {
				n->keys[n->nr++] = group_key(c, gi);
				m = add_upper_node(ts, 2, UPPER + (u64)(MAX_UPPER + 1 + gi) * NODESIZE, 1);
				if (!m)
					return -1;
				m->has_lo = gi > 0;
				m->lo = group_key(c, gi);
				m->has_hi = gi + 1 < total;
				m->hi = group_key(c, gi + 1);
			}
			if (add_group(ts, c, m, gi, total))
				return -1;
		}
	}
	return 0;
}

static int cmp_upper(const void *a, const void *b)
{
	const struct btrfs_sim_node *x = *(const struct btrfs_sim_node * const *)a;
	const struct btrfs_sim_node *y = *(const struct btrfs_sim_node * const *)b;

	if (!x->has_lo || !y->has_lo)
		return (int)x->has_lo - (int)y->has_lo;
	return btrfs_comp_keys(&x->lo, &y->lo);
}

static bool range_holds(const struct btrfs_sim_node *n, bool has_lo, const struct btrfs_key *lo)
{
	struct btrfs_key key = { 0 };

	if (has_lo)
		key = *lo;
	return (!n->has_lo || btrfs_comp_keys(&key, &n->lo) >= 0) &&
	       (!n->has_hi || btrfs_comp_keys(&key, &n->hi) < 0);
}

/* A child's first key is one of @n's pointers' keys (the very first child has none) */
static bool child_keyed(const struct btrfs_sim_node *n, bool has_lo, const struct btrfs_key *lo)
{
	u32 i;

	for (i = 0; i < n->nr && has_lo; i++)
		if (!btrfs_comp_keys(lo, &n->keys[i]))
			return true;
	return !has_lo;
}

/*
 * The children whose keys @n routes to: as many as its pointers, each
 * under its key, the keys in order
 */
static void check_children(const struct btrfs_tree_sim *ts, const struct btrfs_sim_node *n,
			   const char *name, u32 j)
{
	u32 i, under = 0, keyed = 0, ordered = 1;

	for (i = 0; i < ts->nr_groups && n->level == 2; i++) {
		const struct btrfs_sim_group *g = &ts->groups[i];

		if (range_holds(n, g->has_lo, &g->lo)) {
			under++;
			keyed += child_keyed(n, g->has_lo, &g->lo);
		}
	}
	for (i = 0; i < ts->nr_nodes && n->level > 2; i++) {
		const struct btrfs_sim_node *m = &ts->nodes[i];

		if (m->level == n->level - 1 && range_holds(n, m->has_lo, &m->lo)) {
			under++;
			keyed += child_keyed(n, m->has_lo, &m->lo);
		}
	}
	for (i = 1; i < n->nr; i++)
		ordered &= btrfs_comp_keys(&n->keys[i - 1], &n->keys[i]) < 0;
	check(under == n->nr && keyed == under && ordered,
	      "%s: node %u routes %u children (%u under their keys), holds %u pointers%s",
	      name, j, under, keyed, n->nr, ordered ? "" : ", keys out of order");
}

static void check_upper(const struct btrfs_tree_sim *ts, const struct upper_case *c)
{
	const struct btrfs_sim_node *order[MAX_UPPER * 2], *top = NULL;
	u32 i, nr = 0, read = 0, cowed = 0, levels = 0;
	int level = upper_level(c);

	for (i = 0; i < ts->nr_nodes; i++) {
		const struct btrfs_sim_node *n = &ts->nodes[i];

		if (n->level == level + 1)
			top = n;
		else if (n->level == level && nr < MAX_UPPER * 2)
			order[nr++] = n;
		if (n->level == level && n->start) {
			u32 bit = 1U << ((n->start - UPPER) / NODESIZE - 1);

			read |= n->node_read ? bit : 0;
			cowed |= n->node_cowed ? bit : 0;
		}
	}
	check(nr == c->want_nr_nodes, "%s: %u nodes (want %u)", c->name, nr, c->want_nr_nodes);
	qsort(order, nr, sizeof(*order), cmp_upper);
	for (i = 0; i < nr && i < MAX_UPPER; i++) {
		check(order[i]->nr == c->want[i], "%s: node %u holds %u pointers (want %u)",
		      c->name, i, order[i]->nr, c->want[i]);
		check_children(ts, order[i], c->name, i);
	}
	check((top ? top->nr : 0) == c->want_root_nr, "%s: the root above holds %u (want %u)",
	      c->name, top ? top->nr : 0, c->want_root_nr);
	for (i = 0; i < ts->nr_freed_node_starts; i++)
		levels |= 1U << ts->freed_node_levels[i];
	check(read == c->read, "%s: nodes read 0x%x (want 0x%x)", c->name, read, c->read);
	check(cowed == c->cowed, "%s: nodes copied 0x%x (want 0x%x)", c->name, cowed, c->cowed);
	check(levels == c->freed_levels, "%s: levels of the image nodes freed 0x%x (want 0x%x)",
	      c->name, levels, c->freed_levels);
}

static void run_upper_case(const struct upper_case *c)
{
	struct btrfs_fs_info fs_info = { .nodesize = NODESIZE };
	struct btrfs_root_ref root = { .objectid = 5, .found = true };
	struct btrfs_tree_sim ts;
	struct btrfs_key key;
	u32 g = c->child, j;
	int ret;

	for (j = 0; j < c->node; j++)
		g += c->nodes[j];
	key = group_key(c, g);
	btrfs_tree_sim_init(&ts, &fs_info, &root);
	if (build_upper(&ts, c)) {
		check(0, "%s: out of memory", c->name);
		btrfs_tree_sim_release(&ts);
		return;
	}
	if (c->op == OP_INSERT) {
		key.objectid += 5;
		ret = btrfs_tree_sim_insert(&ts, &key, 10);
	} else {
		ret = btrfs_tree_sim_delete(&ts, &key, true);
	}
	check(ret == 0, "%s: returns %d", c->name, ret);
	check_upper(&ts, c);
	check_u64(c->name, ts.node_splits, c->node_splits);
	check(ts.node_pushes == c->node_pushes, "%s: %llu node pushes (want %u)", c->name,
	      (unsigned long long)ts.node_pushes, c->node_pushes);
	check(ts.new_roots == c->new_roots, "%s: %llu new roots (want %u)", c->name,
	      (unsigned long long)ts.new_roots, c->new_roots);
	check(ts.node_balances == c->node_balances, "%s: %llu node balances (want %u)", c->name,
	      (unsigned long long)ts.node_balances, c->node_balances);
	check(ts.nodes_freed == c->nodes_freed, "%s: %llu nodes freed (want %u)", c->name,
	      (unsigned long long)ts.nodes_freed, c->nodes_freed);
	/* a delete empties its one-item leaf, freed (its level-1 node keeps others) */
	check(ts.blocks == (int64_t)c->node_splits + c->new_roots - c->nodes_freed -
			   (c->op == OP_DELETE),
	      "%s: %lld blocks gained", c->name, (long long)ts.blocks);
	check(!ts.inexact, "%s: inexact", c->name);
	btrfs_tree_sim_release(&ts);
}

/* btrfs_balance_level_moves(): the moves on counts, the order both models follow */
struct moves_case {
	const char *name;
	u32 left, mid, right;
	bool has_left, has_right;
	struct btrfs_balance_moves want;
};

static const struct moves_case moves_cases[] = {
	{ "moves: the left takes all, the node all of the right", 20, 20, 20, true, true,
	  { .mid_to_left = 20, .right_to_mid = 20, .right_emptied = true } },
	{ "moves: a left nearly full leaves the node 8 more", 110, 15, 0, true, false,
	  { .mid_to_left = 3 } },
	{ "moves: one pointer left takes half of a full left's", 121, 0, 1, true, true,
	  { .right_to_mid = 1, .right_emptied = true, .left_to_mid = 61 } },
	{ "moves: one pointer left goes to a left of three", 3, 0, 1, true, true,
	  { .right_to_mid = 1, .right_emptied = true, .last_to_left = 1, .mid_emptied = true } },
	{ "moves: one pointer and no left (-EUCLEAN)", 0, 1, 0, false, false,
	  { .one_without_left = true } },
};

static void run_moves_case(const struct moves_case *c)
{
	struct btrfs_balance_moves mv;

	btrfs_balance_level_moves(c->left, c->mid, c->right, c->has_left, c->has_right,
				  btrfs_node_max_ptrs(NODESIZE), &mv);
	check(mv.mid_to_left == c->want.mid_to_left && mv.right_to_mid == c->want.right_to_mid &&
	      mv.right_emptied == c->want.right_emptied &&
	      mv.one_without_left == c->want.one_without_left &&
	      mv.left_to_mid == c->want.left_to_mid && mv.last_to_left == c->want.last_to_left &&
	      mv.mid_emptied == c->want.mid_emptied,
	      "%s: %u to the left, %u from the right%s%s, %u from the left, %u back%s", c->name,
	      mv.mid_to_left, mv.right_to_mid, mv.right_emptied ? " (emptied)" : "",
	      mv.one_without_left ? ", one without a left" : "", mv.left_to_mid,
	      mv.last_to_left, mv.mid_emptied ? ", emptied" : "");
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(moves_cases) / sizeof(moves_cases[0]); i++)
		run_moves_case(&moves_cases[i]);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	for (i = 0; i < sizeof(upper_cases) / sizeof(upper_cases[0]); i++)
		run_upper_case(&upper_cases[i]);
	return unit_failures ? 1 : 0;
}
