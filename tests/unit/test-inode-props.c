// SPDX-License-Identifier: GPL-2.0
/*
 * ctree-leaf.c: btrfs_tree_sim_inode_props_leaf(), the leaf
 * btrfs_read_locked_inode() steps into (6.18 inode.c: the slot after the
 * inode item skipped, acls_after_inode_item() from the next one, at most
 * 8 items, then btrfs_load_inode_props() from the first xattr or where
 * that look ended), and the event log of a simulation with log_events
 * (the order the commit gives places in).  One named case a row, leaves
 * built in memory under one level-1 node; no image.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/ctree-leaf.h"

#define NODESIZE	4096
#define INO		300
#define MAX_ITEMS	12

enum { II = BTRFS_INODE_ITEM_KEY, REF = BTRFS_INODE_REF_KEY, XA = BTRFS_XATTR_ITEM_KEY,
       EXT = BTRFS_EXTENT_DATA_KEY };

struct item_spec {
	u64 objectid;
	u8 type;
};

struct props_case {
	const char *name;
	struct item_spec first[MAX_ITEMS];	/* the inode's leaf, key order */
	u32 nr;
	bool next_touched;			/* the next leaf was copied (in memory) */
	bool last;				/* the inode's leaf is its node's last */
	int want;				/* 0 next leaf read, 1 none */
	u64 want_objectid;			/* the key given for it */
};

static const struct props_case cases[] = {
	{
		/* path->slots[0]++ then acls_after_inode_item() past the end */
		.name = "inode item last in its leaf",
		.first = { { 200, II }, { 200, REF }, { INO, II } }, .nr = 3,
		.want = 0, .want_objectid = 1000,
	},
	{
		/* the item after the inode item is skipped: the look starts past the end */
		.name = "inode item and its ref end the leaf",
		.first = { { 200, II }, { INO, II }, { INO, REF } }, .nr = 3,
		.want = 0, .want_objectid = 1000,
	},
	{
		/* the item after the ref is another inode's: no xattr, no walk */
		.name = "the next inode follows the ref",
		.first = { { INO, II }, { INO, REF }, { 301, II } }, .nr = 3, .want = 1,
	},
	{
		/* the skipped item is another inode's, the look starts at the one after */
		.name = "ref gone: the next inode's item skipped, its ref ends the look",
		.first = { { INO, II }, { 301, II }, { 301, REF } }, .nr = 3, .want = 1,
	},
	{
		/* an item past XATTR_ITEM ends the look: no walk */
		.name = "file extent items follow",
		.first = { { INO, II }, { INO, REF }, { INO, EXT }, { INO, EXT } }, .nr = 4,
		.want = 1,
	},
	{
		/* the xattrs run to the end of the leaf: the walk steps into the next */
		.name = "xattrs end the leaf",
		.first = { { INO, II }, { INO, REF }, { INO, XA }, { INO, XA } }, .nr = 4,
		.want = 0, .want_objectid = 1000,
	},
	{
		/* an xattr, then an extent item: the walk stops inside the leaf */
		.name = "xattr then file extent item",
		.first = { { INO, II }, { INO, REF }, { INO, XA }, { INO, EXT } }, .nr = 4,
		.want = 1,
	},
	{
		/* 8 refs looked at, none an xattr: the walk starts at a ref and stops */
		.name = "more than 8 refs before the end",
		.first = { { INO, II }, { INO, REF }, { INO, REF }, { INO, REF }, { INO, REF },
			   { INO, REF }, { INO, REF }, { INO, REF }, { INO, REF }, { INO, REF },
			   { INO, REF } }, .nr = 11, .want = 1,
	},
	{
		/* the next leaf was copied: in memory, no read */
		.name = "next leaf already copied",
		.first = { { 200, II }, { INO, II } }, .nr = 2, .next_touched = true, .want = 1,
	},
	{
		/* the node's last leaf: the next node's first key */
		.name = "last leaf of its node",
		.first = { { 200, II }, { INO, II } }, .nr = 2, .last = true,
		.want = 0, .want_objectid = 5000,
	},
};

static struct btrfs_sim_items_leaf *new_leaf(u64 start)
{
	struct btrfs_sim_items_leaf *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->start = start;
	l->items = calloc(MAX_ITEMS, sizeof(*l->items));
	l->cap = MAX_ITEMS;
	if (!l->items) {
		free(l);
		return NULL;
	}
	return l;
}

/* One node: the case's leaf, then (unless ->last) a leaf from key (1000, 1, 0) */
static int build(struct btrfs_tree_sim *ts, const struct props_case *c)
{
	struct btrfs_sim_group *g;
	struct btrfs_sim_items_leaf *l;
	u32 i;

	ts->groups = calloc(1, sizeof(*ts->groups));
	if (!ts->groups)
		return -1;
	ts->cap_groups = 1;
	ts->nr_groups = 1;
	g = &ts->groups[0];
	g->has_parent = true;
	g->node_start = 100 * NODESIZE;
	g->has_hi = c->last;
	g->hi = (struct btrfs_key){ 5000, II, 0 };
	g->leaves = calloc(2, sizeof(*g->leaves));
	if (!g->leaves)
		return -1;
	g->cap = 2;
	l = new_leaf(NODESIZE);
	if (!l)
		return -1;
	g->leaves[g->nr++] = l;
	for (i = 0; i < c->nr; i++)
		l->items[l->nr++] = (struct btrfs_sim_item){
			{ c->first[i].objectid, c->first[i].type, 0 }, 10 };
	if (c->last)
		return 0;
	l = new_leaf(2 * NODESIZE);
	if (!l)
		return -1;
	g->leaves[g->nr++] = l;
	l->items[l->nr++] = (struct btrfs_sim_item){ { 1000, II, 0 }, 160 };
	l->touched = c->next_touched;
	return 0;
}

static void run_case(const struct props_case *c)
{
	struct btrfs_fs_info fs_info = { .nodesize = NODESIZE };
	struct btrfs_root_ref root = { .objectid = 5, .found = true };
	struct btrfs_key key = { INO, II, 0 }, first = { 0 };
	struct btrfs_tree_sim ts;
	int ret;

	btrfs_tree_sim_init(&ts, &fs_info, &root);
	if (build(&ts, c)) {
		check(0, "%s: out of memory", c->name);
		btrfs_tree_sim_release(&ts);
		return;
	}
	ret = btrfs_tree_sim_inode_props_leaf(&ts, &key, &first);
	check(ret == c->want, "%s: returns %d (want %d)", c->name, ret, c->want);
	if (!ret && !c->want)
		check(first.objectid == c->want_objectid, "%s: next leaf at %llu (want %llu)",
		      c->name, (unsigned long long)first.objectid,
		      (unsigned long long)c->want_objectid);
	btrfs_tree_sim_release(&ts);
}

/*
 * The event log: leaves are copied in the order first changed, not in
 * key order, and a delete that empties a one-item leaf copies it, then
 * frees it
 */
static void run_events(void)
{
	static const struct props_case two = {
		.name = "events", .first = { { INO, II } }, .nr = 1,
	};
	static const struct { u8 kind; u64 start; } want[] = {
		{ SIM_EV_COW, 2 * NODESIZE }, { SIM_EV_COW, NODESIZE }, { SIM_EV_FREE, NODESIZE },
	};
	struct btrfs_fs_info fs_info = { .nodesize = NODESIZE };
	struct btrfs_root_ref root = { .objectid = 5, .found = true };
	struct btrfs_tree_sim ts;
	u32 i;

	btrfs_tree_sim_init(&ts, &fs_info, &root);
	ts.log_events = true;
	if (build(&ts, &two)) {
		check(0, "events: out of memory");
		btrfs_tree_sim_release(&ts);
		return;
	}
	/* the second leaf first (a COW search), then the first one emptied */
	check(btrfs_tree_sim_touch(&ts, &(struct btrfs_key){ 1000, II, 0 }) == 0,
	      "events: touch");
	check(btrfs_tree_sim_delete(&ts, &(struct btrfs_key){ INO, II, 0 }, true) == 0,
	      "events: delete");
	check(ts.nr_events == 3, "events: %u events (want 3)", ts.nr_events);
	for (i = 0; i < ts.nr_events && i < 3; i++)
		check(ts.events[i].kind == want[i].kind && ts.events[i].start == want[i].start,
		      "events: event %u is %u at %llu (want %u at %llu)", i, ts.events[i].kind,
		      (unsigned long long)ts.events[i].start, want[i].kind,
		      (unsigned long long)want[i].start);
	btrfs_tree_sim_release(&ts);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	run_events();
	return unit_failures ? 1 : 0;
}
