// SPDX-License-Identifier: GPL-2.0
/*
 * The item edits of one tree as a transaction makes them, on the keys and
 * sizes of the image's items (struct btrfs_tree_sim), mirroring
 * fs/btrfs/ctree.c: btrfs_insert_empty_items() with split_leaf() (its
 * push_leaf_right() then push_leaf_left(), the split point rules,
 * push_for_double_split(), the split the search makes when the key
 * exists, insert_new_root()), btrfs_del_items() with its pushes and
 * btrfs_del_leaf(), btrfs_set_item_key_safe(), btrfs_extend_item() after a
 * search with search_for_extension, btrfs_truncate_item(),
 * btrfs_split_item() with setup_leaf_for_split(), and where a search
 * leaves its path.
 * At every node level, root first as the search meets them,
 * setup_nodes_for_search() of an insert's search: reada_for_balance(),
 * push_nodes_for_insert() (push_node_left(), balance_node_right()) and
 * split_node() with insert_new_root(); of a deletion's search:
 * balance_level() (its pointer moves, a node emptied and freed, a root
 * node of one pointer collapsed).  The kernel's code is the same at each
 * level, and so is the model's: one function an operation
 * (sim_push_nodes(), sim_split_level(), sim_balance_level(),
 * sim_insert_level(), sim_delete_level()) decides which sibling, how many
 * pointers, and when to split, merge or collapse, through the accessors
 * of struct sim_level: level 1 moves leaves between groups (struct
 * btrfs_sim_group), the levels above move pointers' keys between loaded
 * nodes (struct btrfs_sim_node).
 * Behaviour reproduced: 6.18 ctree.c, unchanged in substance since 5.x.
 *
 * Used by the log replay (tree-log.c) and the commit model
 * (transaction.c), which count the leaves marked touched.  The counts
 * of a push and of balance_level()'s moves are ctree.c's, the rules the
 * COW model of ctree-cow.c follows too.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/ctree-leaf.h"
#include "kernel-shared/tree-block.h"

/*
 * The item-level simulation of struct btrfs_tree_sim.  The kernel's rules
 * (6.18 ctree.c, unchanged in substance since 5.x):
 * - an insert of data_size + sizeof(struct btrfs_item) bytes into a leaf
 *   with less free space calls split_leaf(), which first tries
 *   push_leaf_right() and then push_leaf_left() into the siblings under
 *   the same parent, and otherwise splits at the middle item, or at the
 *   insertion slot when the half that would hold it is too full (a second
 *   split when even that does not fit), or into an empty new leaf when
 *   the key goes past either end;
 * - a delete that leaves a leaf below a third of its data area pushes all
 *   it can to the left sibling, then all or nothing to the right one, and
 *   an emptied leaf is freed (btrfs_del_leaf()); the root leaf stays.
 * Each group is the leaves under one level-1 node; an insert's search
 * through a node of BTRFS_NODEPTRS_PER_BLOCK - 3 pointers moves leaves
 * between groups or splits one (sim_setup_nodes()), so the leaves'
 * siblings are those of the kernel's tree.  The nodes above level 1 are
 * loaded with the path of the first group under them; a group's or
 * node's parent is the loaded node one level up whose key range holds
 * its own, so pointers moved between nodes move their children too.
 */
void btrfs_tree_sim_init(struct btrfs_tree_sim *ts, struct btrfs_fs_info *fs_info,
			 const struct btrfs_root_ref *root)
{
	memset(ts, 0, sizeof(*ts));
	ts->fs_info = fs_info;
	ts->root = *root;
}

static void sim_items_leaf_free(struct btrfs_sim_items_leaf *l)
{
	if (l)
		free(l->items);
	free(l);
}

void btrfs_tree_sim_release(struct btrfs_tree_sim *ts)
{
	u32 g, i;

	for (g = 0; g < ts->nr_groups; g++) {
		for (i = 0; i < ts->groups[g].nr; i++)
			sim_items_leaf_free(ts->groups[g].leaves[i]);
		free(ts->groups[g].leaves);
	}
	free(ts->groups);
	for (g = 0; g < ts->nr_nodes; g++)
		free(ts->nodes[g].keys);
	free(ts->nodes);
	free(ts->freed_starts);
	free(ts->freed_node_starts);
	free(ts->freed_node_levels);
	free(ts->events);
	memset(ts, 0, sizeof(*ts));
}

static u32 sim_lds(const struct btrfs_tree_sim *ts)
{
	return btrfs_leaf_data_size(ts->fs_info->nodesize);
}

/* leaf_space_used() of items [start, start + nr) */
static u32 sim_space(const struct btrfs_sim_items_leaf *l, u32 start, u32 nr)
{
	u32 used = 0, i;

	for (i = start; i < start + nr && i < l->nr; i++)
		used += l->items[i].size + sizeof(struct btrfs_item);
	return used;
}

static u32 sim_free(const struct btrfs_tree_sim *ts, const struct btrfs_sim_items_leaf *l)
{
	u32 used = sim_space(l, 0, l->nr);

	return used < sim_lds(ts) ? sim_lds(ts) - used : 0;
}

static int sim_leaf_reserve(struct btrfs_sim_items_leaf *l, u32 nr)
{
	struct btrfs_sim_item *n;
	u32 cap;

	if (nr <= l->cap)
		return 0;
	cap = l->cap ? l->cap : 16;
	while (cap < nr)
		cap *= 2;
	n = realloc(l->items, (size_t)cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	l->items = n;
	l->cap = cap;
	return 0;
}

/* One more event of ts->events (with ts->log_events), in the order made */
static void sim_event(struct btrfs_tree_sim *ts, u8 kind, u64 start, const struct btrfs_key *key,
		      int level)
{
	if (!ts->log_events)
		return;
	if (array_grow((void **)&ts->events, ts->nr_events, &ts->cap_events, sizeof(*ts->events))) {
		ts->events_lost = true;
		return;
	}
	ts->events[ts->nr_events++] = (struct btrfs_sim_event){
		.start = start, .key = key ? *key : (struct btrfs_key){ 0 }, .kind = kind,
		.level = level,
	};
}

/* A block of @level freed: an image block, or one the transaction made */
static void sim_event_free(struct btrfs_tree_sim *ts, u8 kind, u64 start, int level)
{
	sim_event(ts, start ? kind : SIM_EV_FREE_NEW, start, NULL, level);
}

/* A leaf changed or COWed: counted the first time, for the commit's looks */
static void sim_mark_touched(struct btrfs_tree_sim *ts, struct btrfs_sim_items_leaf *l)
{
	if (!l->touched) {
		ts->touch_marks++;
		if (l->start)
			sim_event(ts, SIM_EV_COW, l->start, &l->image_key, 0);
	}
	l->touched = true;
}

/* Move items [from, from + nr) of @src to position @at of @dst */
static int sim_move(struct btrfs_tree_sim *ts, struct btrfs_sim_items_leaf *dst, u32 at,
		    struct btrfs_sim_items_leaf *src, u32 from, u32 nr)
{
	int ret = sim_leaf_reserve(dst, dst->nr + nr);

	if (ret)
		return ret;
	sim_mark_touched(ts, dst);
	sim_mark_touched(ts, src);
	memmove(&dst->items[at + nr], &dst->items[at], (dst->nr - at) * sizeof(*dst->items));
	memcpy(&dst->items[at], &src->items[from], nr * sizeof(*src->items));
	dst->nr += nr;
	memmove(&src->items[from], &src->items[from + nr],
		(src->nr - from - nr) * sizeof(*src->items));
	src->nr -= nr;
	return 0;
}

static int sim_group_insert_leaf(struct btrfs_sim_group *g, u32 at,
				 struct btrfs_sim_items_leaf *l)
{
	if (array_grow((void **)&g->leaves, g->nr, &g->cap, sizeof(*g->leaves)))
		return -ENOMEM;
	memmove(&g->leaves[at + 1], &g->leaves[at], (g->nr - at) * sizeof(*g->leaves));
	g->leaves[at] = l;
	g->nr++;
	return 0;
}

static int sim_load_leaf(const struct btrfs_tree_block *eb, struct btrfs_sim_items_leaf **out)
{
	struct btrfs_sim_items_leaf *l = calloc(1, sizeof(*l));
	u32 slot;

	/*
	 * as many as the leaf has: the commit's loaded leaves mostly lose
	 * items, and a power of two would hold a quarter more on average
	 */
	if (l) {
		l->cap = eb->nritems ? eb->nritems : 1;
		l->items = malloc((size_t)l->cap * sizeof(*l->items));
	}
	if (!l || !l->items) {
		sim_items_leaf_free(l);
		return -ENOMEM;
	}
	l->start = eb->start;
	if (eb->nritems)
		btrfs_item_key_to_cpu(eb, 0, &l->image_key);
	for (slot = 0; slot < eb->nritems; slot++) {
		btrfs_item_key_to_cpu(eb, slot, &l->items[slot].key);
		l->items[slot].size = btrfs_raw_item_size(btrfs_item_nr(eb, slot));
	}
	l->nr = eb->nritems;
	*out = l;
	return 0;
}

static bool sim_group_holds(const struct btrfs_sim_group *g, const struct btrfs_key *key)
{
	if (g->has_lo && btrfs_comp_keys(key, &g->lo) < 0)
		return false;
	return !g->has_hi || btrfs_comp_keys(key, &g->hi) < 0;
}

/* The key range of the node at @at of @path, from the levels above */
static void sim_path_range(const struct btrfs_path *path, int at, bool *has_lo,
			   struct btrfs_key *lo, bool *has_hi, struct btrfs_key *hi)
{
	int level;

	for (level = at + 1; level < BTRFS_MAX_LEVEL && path->nodes[level]; level++)
		if (path->slots[level] > 0) {
			btrfs_node_key_to_cpu(path->nodes[level], path->slots[level], lo);
			*has_lo = true;
			break;
		}
	for (level = at + 1; level < BTRFS_MAX_LEVEL && path->nodes[level]; level++)
		if (path->slots[level] + 1 < (int)path->nodes[level]->nritems) {
			btrfs_node_key_to_cpu(path->nodes[level], path->slots[level] + 1, hi);
			*has_hi = true;
			break;
		}
}

static int sim_load_group(struct btrfs_tree_sim *ts, const struct btrfs_path *path,
			  struct btrfs_sim_group *g)
{
	const struct btrfs_tree_block *parent = path->nodes[1];
	struct btrfs_sim_items_leaf *l;
	u32 slot;
	int ret;

	if (!parent)
		return sim_load_leaf(path->nodes[0], &l) ?: sim_group_insert_leaf(g, 0, l);
	g->has_parent = true;
	sim_path_range(path, 1, &g->has_lo, &g->lo, &g->has_hi, &g->hi);
	g->node_start = parent->start;
	g->first = g->last = true;
	if (path->nodes[2]) {
		g->parent_id = path->nodes[2]->start;
		g->parent_nr = path->nodes[2]->nritems;
		g->parent_root = !path->nodes[3];
		g->first = path->slots[2] == 0;
		g->last = path->slots[2] + 1 >= (int)path->nodes[2]->nritems;
	}
	for (slot = 0; slot < parent->nritems; slot++) {
		struct btrfs_tree_block *eb;

		ret = btrfs_read_node_slot(ts->fs_info, ts->root.objectid, parent, slot, BTRFS_IO_OTHER, &eb);
		if (ret < 0)
			return ret;
		/* the group owns the leaves inserted before: free only this one */
		l = NULL;
		ret = sim_load_leaf(eb, &l);
		btrfs_tree_block_put(eb);
		if (!ret)
			ret = sim_group_insert_leaf(g, g->nr, l);
		if (ret) {
			sim_items_leaf_free(l);
			return ret;
		}
	}
	return 0;
}

/* ---- nodes above level 1: their pointers' keys and the keys routed to them ---- */

/* The lowest key routed to a range starting at @lo (all keys without one) */
static struct btrfs_key sim_range_key(bool has_lo, const struct btrfs_key *lo)
{
	struct btrfs_key key = { 0 };

	if (has_lo)
		key = *lo;
	return key;
}

static bool sim_node_holds(const struct btrfs_sim_node *n, const struct btrfs_key *key)
{
	if (n->has_lo && btrfs_comp_keys(key, &n->lo) < 0)
		return false;
	return !n->has_hi || btrfs_comp_keys(key, &n->hi) < 0;
}

/*
 * The loaded node of @level whose range holds @key, NULL when none is:
 * the one found last at that level first (keys come in order)
 */
static struct btrfs_sim_node *sim_node_at(struct btrfs_tree_sim *ts, int level,
					  const struct btrfs_key *key)
{
	u32 *last, i;

	if (level < 2 || level >= BTRFS_MAX_LEVEL)
		return NULL;
	last = &ts->last_node[level];
	if (*last < ts->nr_nodes && ts->nodes[*last].level == level &&
	    sim_node_holds(&ts->nodes[*last], key))
		return &ts->nodes[*last];
	for (i = 0; i < ts->nr_nodes; i++)
		if (ts->nodes[i].level == level && sim_node_holds(&ts->nodes[i], key)) {
			*last = i;
			return &ts->nodes[i];
		}
	return NULL;
}

/* The slot of @n whose pointer routes @key: the last key not above it (0 below all) */
static u32 sim_node_slot(const struct btrfs_sim_node *n, const struct btrfs_key *key)
{
	u32 lo = 1, hi = n->nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (btrfs_comp_keys(&n->keys[mid], key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* The parent of node @n, NULL for the root (or one not loaded) */
static struct btrfs_sim_node *sim_node_parent(struct btrfs_tree_sim *ts,
					      const struct btrfs_sim_node *n)
{
	struct btrfs_key key = sim_range_key(n->has_lo, &n->lo);

	return n->root ? NULL : sim_node_at(ts, n->level + 1, &key);
}

/* The level-2 node above group @g, NULL when @g is the root or none is loaded */
static struct btrfs_sim_node *sim_group_node(struct btrfs_tree_sim *ts,
					     const struct btrfs_sim_group *g)
{
	struct btrfs_key key = sim_range_key(g->has_lo, &g->lo);

	if (!g->has_parent || !g->parent_id || !ts->nr_nodes)
		return NULL;
	return sim_node_at(ts, 2, &key);
}

/*
 * Group @g's parent fields (its id, pointers, whether it is the root and
 * where @g sits in it) as the loaded level-2 node now has them; left as
 * they are without one (a tree of two levels, or groups built without)
 */
static struct btrfs_sim_node *sim_group_parent(struct btrfs_tree_sim *ts,
					       struct btrfs_sim_group *g)
{
	struct btrfs_sim_node *p = sim_group_node(ts, g);
	struct btrfs_key key = sim_range_key(g->has_lo, &g->lo);
	u32 slot;

	if (!p)
		return NULL;
	slot = sim_node_slot(p, &key);
	g->parent_id = p->id;
	g->parent_nr = p->nr;
	g->parent_root = p->root;
	g->first = slot == 0;
	g->last = slot + 1 >= p->nr;
	return p;
}

/* A new node of @level (pointers into ts->nodes move: callers keep indexes) */
static struct btrfs_sim_node *sim_node_add(struct btrfs_tree_sim *ts, int level)
{
	struct btrfs_sim_node *n;

	if (array_grow((void **)&ts->nodes, ts->nr_nodes, &ts->cap_nodes, sizeof(*ts->nodes)))
		return NULL;
	n = &ts->nodes[ts->nr_nodes++];
	memset(n, 0, sizeof(*n));
	n->level = level;
	return n;
}

/* A made-up id for a node a split or a new root made, unique in this tree */
static u64 sim_made_id(struct btrfs_tree_sim *ts)
{
	return (u64)-1 - ((u64)1 << 32) - ts->made_nodes++;
}

static int sim_node_reserve(struct btrfs_sim_node *n, u32 nr)
{
	while (n->cap < nr)
		if (array_grow((void **)&n->keys, n->cap, &n->cap, sizeof(*n->keys)))
			return -ENOMEM;
	return 0;
}

static int sim_node_insert_key(struct btrfs_sim_node *n, u32 at, const struct btrfs_key *key)
{
	if (sim_node_reserve(n, n->nr + 1))
		return -ENOMEM;
	memmove(&n->keys[at + 1], &n->keys[at], (n->nr - at) * sizeof(*n->keys));
	n->keys[at] = *key;
	n->nr++;
	return 0;
}

static void sim_node_remove_key(struct btrfs_sim_node *n, u32 at)
{
	if (at >= n->nr)
		return;
	memmove(&n->keys[at], &n->keys[at + 1], (n->nr - at - 1) * sizeof(*n->keys));
	n->nr--;
}

/*
 * The nodes above level 1 of @path that no loaded node stands for at
 * their level (the ones holding @key): their pointers' keys as the image
 * has them
 */
static int sim_load_nodes(struct btrfs_tree_sim *ts, const struct btrfs_path *path,
			  const struct btrfs_key *key)
{
	int level;
	u32 slot;

	for (level = 2; level < BTRFS_MAX_LEVEL && path->nodes[level]; level++) {
		const struct btrfs_tree_block *eb = path->nodes[level];
		struct btrfs_sim_node *n;

		if (sim_node_at(ts, level, key))
			continue;
		n = sim_node_add(ts, level);
		if (!n || sim_node_reserve(n, eb->nritems ? eb->nritems : 1))
			return -ENOMEM;
		n->id = n->start = eb->start;
		n->root = level + 1 >= BTRFS_MAX_LEVEL || !path->nodes[level + 1];
		n->image_key = *key;
		sim_path_range(path, level, &n->has_lo, &n->lo, &n->has_hi, &n->hi);
		for (slot = 0; slot < eb->nritems; slot++)
			btrfs_node_key_to_cpu(eb, slot, &n->keys[slot]);
		n->nr = eb->nritems;
	}
	return 0;
}

/* The nodes above @key's group in @src (the image's: only preloaded) that @ts lacks */
static int sim_copy_nodes(struct btrfs_tree_sim *ts, struct btrfs_tree_sim *src,
			  const struct btrfs_key *key)
{
	int level;

	for (level = 2; level < BTRFS_MAX_LEVEL; level++) {
		const struct btrfs_sim_node *from = sim_node_at(src, level, key);
		struct btrfs_sim_node *n;

		if (!from)
			break;
		if (sim_node_at(ts, level, key))
			continue;
		n = sim_node_add(ts, level);
		if (!n)
			return -ENOMEM;
		*n = *from;
		n->keys = NULL;
		n->nr = n->cap = 0;
		n->node_read = n->node_cowed = false;
		if (sim_node_reserve(n, from->nr ? from->nr : 1))
			return -ENOMEM;
		memcpy(n->keys, from->keys, (size_t)from->nr * sizeof(*n->keys));
		n->nr = from->nr;
	}
	return 0;
}

/* A copy of @src's leaves as the image has them, for another simulation */
static int sim_copy_group(struct btrfs_sim_group *dst, const struct btrfs_sim_group *src)
{
	u32 i;
	int ret;

	*dst = *src;
	dst->leaves = NULL;
	dst->nr = dst->cap = 0;
	for (i = 0; i < src->nr; i++) {
		const struct btrfs_sim_items_leaf *from = src->leaves[i];
		struct btrfs_sim_items_leaf *l = calloc(1, sizeof(*l));

		if (!l || sim_leaf_reserve(l, from->nr ? from->nr : 1)) {
			sim_items_leaf_free(l);
			return -ENOMEM;
		}
		l->start = from->start;
		l->image_key = from->image_key;
		l->nr = from->nr;
		memcpy(l->items, from->items, (size_t)from->nr * sizeof(*l->items));
		ret = sim_group_insert_leaf(dst, dst->nr, l);
		if (ret) {
			sim_items_leaf_free(l);
			return ret;
		}
	}
	return 0;
}

/*
 * The group holding @key: the last one found (keys come in order), one
 * loaded before, or a new one, copied from ->source when there is one
 * (which loads it from the image once for every simulation that uses it).
 */
static int sim_find_group(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			  struct btrfs_sim_group **out)
{
	struct btrfs_path path = { 0 };
	struct btrfs_sim_group *g, *from;
	u32 i;
	int ret;

	if (ts->last_group < ts->nr_groups &&
	    sim_group_holds(&ts->groups[ts->last_group], key)) {
		*out = &ts->groups[ts->last_group];
		return 0;
	}
	for (i = 0; i < ts->nr_groups; i++)
		if (sim_group_holds(&ts->groups[i], key)) {
			ts->last_group = i;
			*out = &ts->groups[i];
			return 0;
		}
	if (array_grow((void **)&ts->groups, ts->nr_groups, &ts->cap_groups, sizeof(*ts->groups)))
		return -ENOMEM;
	g = &ts->groups[ts->nr_groups];
	memset(g, 0, sizeof(*g));
	if (ts->source) {
		ret = sim_find_group(ts->source, key, &from);
		if (!ret)
			ret = sim_copy_group(g, from);
		if (!ret)
			ret = sim_copy_nodes(ts, ts->source, key);
	} else {
		ret = btrfs_search_slot(ts->fs_info, &ts->root, key, &path, BTRFS_IO_OTHER);
		if (ret >= 0)
			ret = sim_load_group(ts, &path, g);
		if (!ret)
			ret = sim_load_nodes(ts, &path, key);
		btrfs_release_path(&path);
	}
	if (!ts->source)
		g->image_key = *key;
	/* a parent whose other children split has their count */
	for (i = 0; i < ts->nr_groups && g->parent_id; i++)
		if (ts->groups[i].parent_id == g->parent_id)
			g->parent_nr = ts->groups[i].parent_nr;
	/* the parent as the tree has it now, when it is loaded */
	if (!ret)
		sim_group_parent(ts, g);
	ts->last_group = ts->nr_groups;
	ts->nr_groups++;
	*out = g;
	return ret < 0 ? ret : 0;
}

int btrfs_tree_sim_preload(struct btrfs_tree_sim *ts, const struct btrfs_key *key)
{
	struct btrfs_sim_group *g;

	return sim_find_group(ts, key, &g);
}

/* The leaf of @g for @key (the last whose first key is not above it) and the slot */
static void sim_locate(const struct btrfs_sim_group *g, const struct btrfs_key *key,
		       u32 *leaf, u32 *slot, bool *found)
{
	const struct btrfs_sim_items_leaf *l;
	u32 i = 0, lo, hi;

	while (i + 1 < g->nr && (!g->leaves[i + 1]->nr ||
				 btrfs_comp_keys(&g->leaves[i + 1]->items[0].key, key) <= 0))
		i++;
	l = g->leaves[i];
	lo = 0;
	hi = l->nr;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (btrfs_comp_keys(&l->items[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*leaf = i;
	*slot = lo;
	*found = lo < l->nr && !btrfs_comp_keys(&l->items[lo].key, key);
}

/* sim_find_group() then sim_locate(): the group, leaf and slot of @key */
static int sim_lookup(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
		      struct btrfs_sim_group **g, u32 *leaf, u32 *slot, bool *found)
{
	int ret = sim_find_group(ts, key, g);

	if (ret)
		return ret;
	sim_locate(*g, key, leaf, slot, found);
	return 0;
}

static u32 sim_item_space(const void *leaf, u32 i)
{
	const struct btrfs_sim_items_leaf *l = leaf;

	return l->items[i].size + sizeof(struct btrfs_item);
}

/*
 * push_leaf_right(): @data_size must fit in the sibling, @min_data is what
 * the insert at the path's slot adds; 0 pushed (or moved the path), 1 not
 */
static int sim_push_right_items(struct btrfs_tree_sim *ts, struct btrfs_sim_group *g,
				u32 *leaf, u32 *slot, u32 min_data, u32 data_size,
				bool empty, u32 min_slot)
{
	struct btrfs_sim_items_leaf *left, *right;
	struct btrfs_leaf_push p;
	u32 push_items;
	int ret;

	if (!g->has_parent || *leaf + 1 >= g->nr)
		return 1;
	left = g->leaves[*leaf];
	right = g->leaves[*leaf + 1];
	/* push_leaf_right() reads the sibling before it looks at its free space */
	right->sibling_read = true;
	p = (struct btrfs_leaf_push){
		.item_space = sim_item_space, .leaf = left, .nr = left->nr, .slot = *slot,
		.min_data = min_data, .free_space = sim_free(ts, right), .empty = empty,
		.limit = min_slot,
	};
	if (p.free_space < data_size)
		return 1;
	/* push_leaf_right() COWs the sibling before it counts what fits */
	sim_mark_touched(ts, right);
	if (!left->nr)
		return 1;
	if (*slot == left->nr && !empty) {
		/* past the left's last key: the item goes first into the right */
		(*leaf)++;
		*slot = 0;
		return 0;
	}
	p.leaf_free = sim_free(ts, left);
	push_items = btrfs_leaf_push_right_nr(&p);
	if (!push_items)
		return 1;
	ret = sim_move(ts, right, 0, left, left->nr - push_items, push_items);
	if (ret)
		return ret;
	if (*slot >= left->nr) {
		*slot -= left->nr;
		(*leaf)++;
	}
	return 0;
}

/* push_leaf_left(), arguments as sim_push_right_items(); 0 pushed, 1 not */
static int sim_push_left_items(struct btrfs_tree_sim *ts, struct btrfs_sim_group *g,
			       u32 *leaf, u32 *slot, u32 min_data, u32 data_size,
			       bool empty, u32 max_slot)
{
	struct btrfs_sim_items_leaf *left, *right;
	struct btrfs_leaf_push p;
	u32 push_items, old_left;
	int ret;

	if (!g->has_parent || *leaf == 0)
		return 1;
	right = g->leaves[*leaf];
	left = g->leaves[*leaf - 1];
	if (!right->nr)
		return 1;
	/* push_leaf_left() reads the sibling after the check of the leaf's items */
	left->sibling_read = true;
	p = (struct btrfs_leaf_push){
		.item_space = sim_item_space, .leaf = right, .nr = right->nr, .slot = *slot,
		.min_data = min_data, .free_space = sim_free(ts, left), .empty = empty,
		.limit = max_slot,
	};
	if (p.free_space < data_size)
		return 1;
	/* push_leaf_left() COWs the sibling before it counts what fits */
	sim_mark_touched(ts, left);
	p.leaf_free = sim_free(ts, right);
	push_items = btrfs_leaf_push_left_nr(&p);
	if (!push_items)
		return 1;
	old_left = left->nr;
	ret = sim_move(ts, left, left->nr, right, 0, push_items);
	if (ret)
		return ret;
	if (*slot < push_items) {
		*slot += old_left;
		(*leaf)--;
	} else {
		*slot -= push_items;
	}
	return 0;
}

static int sim_new_leaf(struct btrfs_tree_sim *ts, struct btrfs_sim_group *g, u32 at,
			struct btrfs_sim_items_leaf **out)
{
	struct btrfs_sim_items_leaf *l = calloc(1, sizeof(*l));
	int ret;

	if (!l)
		return -ENOMEM;
	ret = sim_group_insert_leaf(g, at, l);
	if (ret) {
		free(l);
		return ret;
	}
	if (!g->has_parent) {
		/* insert_new_root(): the leaf root gets a node above it */
		g->has_parent = true;
		ts->new_roots++;
		ts->blocks++;
		sim_event(ts, SIM_EV_NEW, 0, NULL, 0);
	}
	sim_event(ts, SIM_EV_NEW, 0, NULL, 0);
	ts->splits++;
	ts->blocks++;
	*out = l;
	return 0;
}

/*
 * push_for_double_split(): the items after the slot to the right, then
 * (unless the slot is now at an end of its leaf, or the item fits) the
 * items before it to the left
 */
static int sim_push_for_double_split(struct btrfs_tree_sim *ts, struct btrfs_sim_group *g,
				     u32 *leaf, u32 *slot, u32 data_size)
{
	u32 need = btrfs_split_push_need(data_size, sim_free(ts, g->leaves[*leaf]),
					 *slot < g->leaves[*leaf]->nr);
	int ret;

	ret = sim_push_right_items(ts, g, leaf, slot, 1, need, false, *slot);
	if (ret < 0)
		return ret;
	if (*slot == 0 || *slot == g->leaves[*leaf]->nr ||
	    sim_free(ts, g->leaves[*leaf]) >= data_size)
		return 0;
	need = btrfs_split_push_need(data_size, sim_free(ts, g->leaves[*leaf]), *slot > 0);
	ret = sim_push_left_items(ts, g, leaf, slot, 1, need, false, *slot);
	return ret < 0 ? ret : 0;
}

/*
 * split_leaf() for an insert of @data_size bytes (item header included);
 * @extend: the key is there already (btrfs_search_slot() splits before it
 * finds that out, and overwrite_item() relies on it)
 */
static int sim_split_leaf(struct btrfs_tree_sim *ts, struct btrfs_sim_group *g,
			  u32 *leaf, u32 *slot, u32 data_size, bool extend)
{
	u32 lds = sim_lds(ts), doubles = 0;
	bool tried_avoid_double = false;
	int ret;

	if (g->has_parent) {
		u32 need = btrfs_split_push_need(data_size, sim_free(ts, g->leaves[*leaf]),
						 *slot < g->leaves[*leaf]->nr);

		ret = sim_push_right_items(ts, g, leaf, slot, need, need, false, 0);
		if (ret == 1) {
			need = btrfs_split_push_need(data_size, sim_free(ts, g->leaves[*leaf]),
						     *slot > 0);
			ret = sim_push_left_items(ts, g, leaf, slot, need, need, false, (u32)-1);
		}
		if (ret < 0)
			return ret;
		if (sim_free(ts, g->leaves[*leaf]) >= data_size)
			return 0;
	}
	for (;;) {
		struct btrfs_sim_items_leaf *l = g->leaves[*leaf], *right;
		u32 nritems = l->nr, mid = (nritems + 1) / 2;
		int split = 1;

		if (mid <= *slot) {
			if (nritems == 1 || sim_space(l, mid, nritems - mid) + data_size > lds) {
				if (*slot >= nritems) {
					split = 0;
				} else {
					mid = *slot;
					if (mid != nritems &&
					    sim_space(l, mid, nritems - mid) + data_size > lds)
						split = 2;
				}
			}
		} else if (sim_space(l, 0, mid) + data_size > lds) {
			if (!extend && *slot == 0) {
				split = 0;
			} else if (extend && *slot == 0) {
				mid = 1;
			} else {
				mid = *slot;
				if (mid != nritems &&
				    sim_space(l, mid, nritems - mid) + data_size > lds)
					split = 2;
			}
		}
		if (split == 2 && !tried_avoid_double) {
			tried_avoid_double = true;
			ret = sim_push_for_double_split(ts, g, leaf, slot, data_size);
			if (ret < 0)
				return ret;
			if (sim_free(ts, g->leaves[*leaf]) >= data_size)
				return 0;
			continue;
		}
		if (split == 0) {
			u32 at = mid <= *slot ? *leaf + 1 : *leaf;

			ret = sim_new_leaf(ts, g, at, &right);
			if (ret)
				return ret;
			*leaf = at;
			*slot = 0;
			return 0;
		}
		ret = sim_new_leaf(ts, g, *leaf + 1, &right);
		if (!ret)
			ret = sim_move(ts, right, 0, l, mid, nritems - mid);
		if (ret)
			return ret;
		if (mid <= *slot) {
			*slot -= mid;
			(*leaf)++;
		}
		/* the kernel splits twice at most (BUG_ON(num_doubles != 0)) */
		if (split == 1 || doubles++) {
			if (split != 1)
				ts->inexact = true;
			return 0;
		}
	}
}

/* ---- node levels: setup_nodes_for_search() of an insert's search ---- */

static u32 sim_max_ptrs(const struct btrfs_tree_sim *ts)
{
	return btrfs_node_max_ptrs(ts->fs_info->nodesize);
}

/* The key just below @k in key order; false for the smallest */
static bool sim_key_before(const struct btrfs_key *k, struct btrfs_key *out)
{
	*out = *k;
	if (out->offset) {
		out->offset--;
	} else if (out->type) {
		out->type--;
		out->offset = (u64)-1;
	} else if (out->objectid) {
		out->objectid--;
		out->type = (u8)-1;
		out->offset = (u64)-1;
	} else {
		return false;
	}
	return true;
}

/*
 * The key of @g's first pointer in its parent: its first leaf's first
 * key (fixup_low_keys() keeps them equal); an empty first leaf keeps a
 * key the model does not know, the next leaf's stands in (->inexact)
 */
static void sim_group_first_key(struct btrfs_tree_sim *ts, const struct btrfs_sim_group *g,
				struct btrfs_key *key)
{
	u32 i;

	for (i = 0; i < g->nr; i++)
		if (g->leaves[i]->nr) {
			*key = g->leaves[i]->items[0].key;
			if (i)
				ts->inexact = true;
			return;
		}
	ts->inexact = true;
}

/* Leaves [from, from + n) of @src to position @at of @dst */
static int sim_group_move(struct btrfs_tree_sim *ts, u32 di, u32 at, u32 si, u32 from, u32 n)
{
	struct btrfs_sim_group *dst = &ts->groups[di], *src = &ts->groups[si];

	while (dst->cap < dst->nr + n)
		if (array_grow((void **)&dst->leaves, dst->cap, &dst->cap, sizeof(*dst->leaves)))
			return -ENOMEM;
	memmove(&dst->leaves[at + n], &dst->leaves[at], (dst->nr - at) * sizeof(*dst->leaves));
	memcpy(&dst->leaves[at], &src->leaves[from], n * sizeof(*src->leaves));
	dst->nr += n;
	memmove(&src->leaves[from], &src->leaves[from + n],
		(src->nr - from - n) * sizeof(*src->leaves));
	src->nr -= n;
	return 0;
}

/*
 * Groups @left and @right, adjacent, now meet at @right's first key: the
 * key of @right's pointer in their level-2 node too
 */
static void sim_group_boundary(struct btrfs_tree_sim *ts, u32 li, u32 ri)
{
	struct btrfs_sim_group *left = &ts->groups[li], *right = &ts->groups[ri];
	struct btrfs_sim_node *p = sim_group_node(ts, left);
	struct btrfs_key key = right->lo, at = sim_range_key(left->has_lo, &left->lo);
	u32 slot;

	sim_group_first_key(ts, right, &key);
	left->has_hi = right->has_lo = true;
	left->hi = right->lo = key;
	if (p && (slot = sim_node_slot(p, &at) + 1) < p->nr)
		p->keys[slot] = key;
}

/*
 * A node's marks for the commit (read ahead by reada_for_balance(),
 * copied by a push or balance_level()) and what its copy logs: its image
 * block (0: made by a split), a key reaching it, its level
 */
struct sim_marks {
	bool *read;
	bool *cowed;
	u64 start;
	const struct btrfs_key *image_key;
	int level;
};

/*
 * The sibling node of group @gi under the same parent (@dir -1 the left,
 * 1 the right), its group loaded on first use: 0 and its index, 1 when
 * there is none
 */
static int sim_sibling_group(struct btrfs_tree_sim *ts, u32 gi, int dir, u32 *out)
{
	const struct btrfs_sim_group *g = &ts->groups[gi];
	struct btrfs_sim_group *s;
	u64 parent = g->parent_id;
	struct btrfs_key key;
	int ret;

	if (dir < 0 ? g->first : g->last)
		return 1;
	if (dir < 0 ? !g->has_lo || !sim_key_before(&g->lo, &key) : !g->has_hi) {
		ts->inexact = true;
		return 1;
	}
	if (dir > 0)
		key = g->hi;
	ret = sim_find_group(ts, &key, &s);
	if (ret)
		return ret;
	sim_group_parent(ts, s);
	if (s == &ts->groups[gi] || !s->has_parent || s->parent_id != parent) {
		ts->inexact = true;
		return 1;
	}
	*out = s - ts->groups;
	return 0;
}

/*
 * insert_new_root() above the root node of group @i: a level-2 node of
 * one pointer, the new root, under a made-up id, unique in this tree,
 * that the group now names as its parent
 */
static int sim_group_new_root(struct btrfs_tree_sim *ts, u32 i)
{
	struct btrfs_sim_group *c = &ts->groups[i];
	struct btrfs_sim_node *r = sim_node_add(ts, 2);
	struct btrfs_key first = { 0 };

	if (!r)
		return -ENOMEM;
	c->parent_id = (u64)-1 - ts->new_roots;
	c->parent_nr = 1;
	c->first = c->last = true;
	c->parent_root = true;
	r->id = c->parent_id;
	r->root = true;
	r->image_key = c->image_key;
	return sim_node_insert_key(r, 0, &first);
}

/* A new group of no leaves yet after group @i, under the same parent */
static int sim_group_add_after(struct btrfs_tree_sim *ts, u32 i, u32 *out)
{
	struct btrfs_sim_group *c, *n;

	if (array_grow((void **)&ts->groups, ts->nr_groups, &ts->cap_groups, sizeof(*ts->groups)))
		return -ENOMEM;
	c = &ts->groups[i];
	n = &ts->groups[ts->nr_groups];
	memset(n, 0, sizeof(*n));
	n->has_parent = true;
	n->image_key = c->image_key;
	n->parent_id = c->parent_id;
	n->parent_root = c->parent_root;
	*out = ts->nr_groups++;
	return 0;
}

/*
 * Group @ni, split off group @i, after it: its pointer after @i's in
 * their level-2 node, under its first key, and the parent's count
 */
static int sim_group_link(struct btrfs_tree_sim *ts, u32 i, u32 ni)
{
	struct btrfs_sim_group *c = &ts->groups[i], *n = &ts->groups[ni];
	struct btrfs_sim_node *p = sim_group_node(ts, c);
	struct btrfs_key at = sim_range_key(c->has_lo, &c->lo), first = c->hi;
	u32 g;

	sim_group_first_key(ts, n, &first);
	if (p && sim_node_insert_key(p, sim_node_slot(p, &at) + 1, &first))
		return -ENOMEM;
	n->last = c->last;
	c->last = false;
	n->has_hi = c->has_hi;
	n->hi = c->hi;
	sim_group_boundary(ts, i, ni);
	for (g = 0; g < ts->nr_groups; g++)
		if (ts->groups[g].parent_id == c->parent_id)
			ts->groups[g].parent_nr++;
	return 0;
}

/* Group @i's node's marks and what a copy of it logs */
static void sim_group_marks(struct btrfs_tree_sim *ts, u32 i, struct sim_marks *m)
{
	struct btrfs_sim_group *g = &ts->groups[i];

	m->read = &g->node_read;
	m->cowed = &g->node_cowed;
	m->start = g->node_start;
	m->image_key = &g->image_key;
	m->level = 1;
}

/* ---- nodes above level 1: the same rules, one level up ---- */

/* The level of the root over @key's group: 1 when no node above level 1 is loaded */
static int sim_top_level(struct btrfs_tree_sim *ts, const struct btrfs_key *key)
{
	const struct btrfs_sim_node *n;
	int level;

	for (level = 2; level < BTRFS_MAX_LEVEL; level++) {
		n = sim_node_at(ts, level, key);
		if (!n)
			return level - 1;
		if (n->root)
			return level;
	}
	return BTRFS_MAX_LEVEL - 1;
}

/* Node @i's marks and what a copy of it logs */
static void sim_upper_marks(struct btrfs_tree_sim *ts, u32 i, struct sim_marks *m)
{
	struct btrfs_sim_node *n = &ts->nodes[i];

	m->read = &n->node_read;
	m->cowed = &n->node_cowed;
	m->start = n->start;
	m->image_key = &n->image_key;
	m->level = n->level;
}

/* Keys [from, from + nr) of @src to position @at of @dst */
static int sim_upper_move(struct btrfs_tree_sim *ts, u32 di, u32 at, u32 si, u32 from, u32 nr)
{
	struct btrfs_sim_node *dst = &ts->nodes[di], *src = &ts->nodes[si];

	if (sim_node_reserve(dst, dst->nr + nr))
		return -ENOMEM;
	memmove(&dst->keys[at + nr], &dst->keys[at], (dst->nr - at) * sizeof(*dst->keys));
	memcpy(&dst->keys[at], &src->keys[from], nr * sizeof(*src->keys));
	dst->nr += nr;
	memmove(&src->keys[from], &src->keys[from + nr],
		(src->nr - from - nr) * sizeof(*src->keys));
	src->nr -= nr;
	return 0;
}

/* Nodes @left and @right, adjacent, now meet at @right's first key (and in their parent) */
static void sim_upper_boundary(struct btrfs_tree_sim *ts, u32 li, u32 ri)
{
	struct btrfs_sim_node *left = &ts->nodes[li], *right = &ts->nodes[ri];
	struct btrfs_sim_node *p = sim_node_parent(ts, left);
	struct btrfs_key at = sim_range_key(left->has_lo, &left->lo);
	u32 slot;

	if (!right->nr)
		return;
	left->has_hi = right->has_lo = true;
	left->hi = right->lo = right->keys[0];
	if (p && (slot = sim_node_slot(p, &at) + 1) < p->nr)
		p->keys[slot] = right->lo;
}

/*
 * The sibling of node @ni under the same parent (@dir -1 the left, 1 the
 * right), loaded with the group under its pointer's key on first use: 0
 * and its index, 1 when there is none
 */
static int sim_node_sibling(struct btrfs_tree_sim *ts, u32 ni, int dir, u32 *out)
{
	const struct btrfs_sim_node *n = &ts->nodes[ni], *p = sim_node_parent(ts, n);
	struct btrfs_key key = sim_range_key(n->has_lo, &n->lo);
	struct btrfs_sim_node *s;
	struct btrfs_sim_group *g;
	int level = n->level, ret;
	u32 slot;

	if (!p)
		return 1;
	slot = sim_node_slot(p, &key);
	if (dir < 0 ? slot == 0 : slot + 1 >= p->nr)
		return 1;
	key = p->keys[slot + dir];
	if (!sim_node_at(ts, level, &key)) {
		ret = sim_find_group(ts, &key, &g);
		if (ret)
			return ret;
	}
	s = sim_node_at(ts, level, &key);
	if (!s || s == &ts->nodes[ni]) {
		ts->inexact = true;
		return 1;
	}
	*out = s - ts->nodes;
	return 0;
}

/*
 * insert_new_root() above root node @i: one pointer, under its first key;
 * 1 when it cannot grow
 */
static int sim_upper_new_root(struct btrfs_tree_sim *ts, u32 i)
{
	struct btrfs_sim_node *r, *c;
	struct btrfs_key first = { 0 };

	/* a root at BTRFS_MAX_LEVEL - 1 cannot grow (the kernel would BUG) */
	if (ts->nodes[i].level + 1 >= BTRFS_MAX_LEVEL) {
		ts->inexact = true;
		return 1;
	}
	r = sim_node_add(ts, ts->nodes[i].level + 1);
	if (!r)
		return -ENOMEM;
	c = &ts->nodes[i];
	r->id = sim_made_id(ts);
	r->root = true;
	r->image_key = c->image_key;
	c->root = false;
	if (c->nr)
		first = c->keys[0];
	return sim_node_insert_key(r, 0, &first);
}

/* A new node of no pointers yet after node @i, at its level */
static int sim_upper_add_after(struct btrfs_tree_sim *ts, u32 i, u32 *out)
{
	struct btrfs_sim_node *n = sim_node_add(ts, ts->nodes[i].level);

	if (!n)
		return -ENOMEM;
	n->id = sim_made_id(ts);
	n->image_key = ts->nodes[i].image_key;
	*out = n - ts->nodes;
	return 0;
}

/* Node @ni, split off node @i, after it from its first key on, and in their parent */
static int sim_upper_link(struct btrfs_tree_sim *ts, u32 i, u32 ni)
{
	struct btrfs_sim_node *c = &ts->nodes[i], *n = &ts->nodes[ni], *p;
	struct btrfs_key at = sim_range_key(c->has_lo, &c->lo);

	n->has_hi = c->has_hi;
	n->hi = c->hi;
	n->has_lo = c->has_hi = true;
	n->lo = c->hi = n->keys[0];
	p = sim_node_parent(ts, c);
	if (p && sim_node_insert_key(p, sim_node_slot(p, &at) + 1, &n->lo))
		return -ENOMEM;
	return 0;
}

/* An image node of @level freed: the commit drops its extent item */
static int sim_note_freed_node(struct btrfs_tree_sim *ts, u64 start, int level)
{
	sim_event_free(ts, SIM_EV_FREE_NODE, start, level);
	if (!start)
		return 0;
	if (array_grow((void **)&ts->freed_node_starts, ts->nr_freed_node_starts,
		       &ts->cap_freed_node_starts, sizeof(*ts->freed_node_starts)) ||
	    array_grow((void **)&ts->freed_node_levels, ts->nr_freed_node_starts,
		       &ts->cap_freed_node_levels, sizeof(*ts->freed_node_levels)))
		return -ENOMEM;
	ts->freed_node_levels[ts->nr_freed_node_starts] = level;
	ts->freed_node_starts[ts->nr_freed_node_starts++] = start;
	return 0;
}

/* Group @gi's node freed (btrfs_del_ptr(), btrfs_free_tree_block()): it leaves its parent */
static int sim_group_drop(struct btrfs_tree_sim *ts, u32 gi)
{
	struct btrfs_sim_group *g = &ts->groups[gi];
	struct btrfs_sim_node *p = sim_group_node(ts, g);
	struct btrfs_key at = sim_range_key(g->has_lo, &g->lo);
	u64 parent = g->parent_id;
	u32 i;

	if (sim_note_freed_node(ts, g->node_start, 1))
		return -ENOMEM;
	if (p)
		sim_node_remove_key(p, sim_node_slot(p, &at));
	free(g->leaves);
	memmove(g, g + 1, (ts->nr_groups - gi - 1) * sizeof(*g));
	ts->nr_groups--;
	ts->last_group = 0;
	for (i = 0; i < ts->nr_groups; i++)
		if (ts->groups[i].parent_id == parent)
			ts->groups[i].parent_nr--;
	return 0;
}

/* Group @li takes the range of its right neighbour @gi */
static void sim_group_take_range(struct btrfs_tree_sim *ts, u32 li, u32 gi)
{
	struct btrfs_sim_group *l = &ts->groups[li], *g = &ts->groups[gi];

	l->has_hi = g->has_hi;
	l->hi = g->hi;
	l->last = g->last;
}

/*
 * balance_level() of a root node (level 1) of one pointer: its leaf
 * becomes the root, the node is freed
 */
static int sim_collapse_root(struct btrfs_tree_sim *ts, u32 gi, const struct btrfs_key *key)
{
	struct btrfs_sim_group *g = &ts->groups[gi];

	if (sim_note_freed_node(ts, g->node_start, 1))
		return -ENOMEM;
	g->has_parent = false;
	g->node_start = 0;
	g->has_lo = g->has_hi = false;
	return 0;
}

/* Node @ni out of the model */
static void sim_upper_remove(struct btrfs_tree_sim *ts, u32 ni)
{
	struct btrfs_sim_node *n = &ts->nodes[ni];

	free(n->keys);
	memmove(n, n + 1, (ts->nr_nodes - ni - 1) * sizeof(*n));
	ts->nr_nodes--;
}

/*
 * balance_level() of a root node of one pointer above level 1: its child
 * (the node or group holding @key) becomes the root, the node is freed
 */
static int sim_collapse_upper(struct btrfs_tree_sim *ts, u32 ni, const struct btrfs_key *key)
{
	struct btrfs_sim_node *n = &ts->nodes[ni], *c;
	struct btrfs_sim_group *g;
	int level = n->level;
	u64 start = n->start;
	int ret;

	if (level > 2 && (c = sim_node_at(ts, level - 1, key))) {
		c->root = true;
		c->has_lo = c->has_hi = false;
	} else if (level == 2) {
		ret = sim_find_group(ts, key, &g);
		if (ret)
			return ret;
		g->parent_id = 0;
		g->parent_nr = 0;
		g->parent_root = false;
		g->first = g->last = true;
		g->has_lo = g->has_hi = false;
	}
	ret = sim_note_freed_node(ts, start, level);
	if (!ret)
		sim_upper_remove(ts, ni);
	return ret;
}

/* Node @ni freed (btrfs_del_ptr(), btrfs_free_tree_block()): it leaves its parent */
static int sim_upper_drop(struct btrfs_tree_sim *ts, u32 ni)
{
	struct btrfs_sim_node *n = &ts->nodes[ni], *p = sim_node_parent(ts, n);
	struct btrfs_key at = sim_range_key(n->has_lo, &n->lo);

	if (sim_note_freed_node(ts, n->start, n->level))
		return -ENOMEM;
	if (p)
		sim_node_remove_key(p, sim_node_slot(p, &at));
	sim_upper_remove(ts, ni);
	return 0;
}

/* Node @li takes the range of its right neighbour @ni */
static void sim_upper_take_range(struct btrfs_tree_sim *ts, u32 li, u32 ni)
{
	struct btrfs_sim_node *l = &ts->nodes[li], *n = &ts->nodes[ni];

	l->has_hi = n->has_hi;
	l->hi = n->hi;
}

/* ---- the node operations of ctree.c, written once for every level ---- */

/*
 * One level of the tree as the model holds it, behind the few accessors
 * the kernel's node operations below need, nodes named by index: level 1
 * as groups of leaves (ts->groups, a leaf a pointer), the levels above as
 * loaded nodes of their pointers' keys (ts->nodes).  Which sibling, how
 * many pointers, and when to split, merge or collapse is decided once,
 * in sim_push_nodes(), sim_balance_level() and their callers.
 */
struct sim_level {
	u32 (*nr)(const struct btrfs_tree_sim *ts, u32 i);	/* its pointers */
	bool (*root)(const struct btrfs_tree_sim *ts, u32 i);
	/* the sibling under the same parent (@dir -1 the left, 1 the right): 0, 1 if none */
	int (*sibling)(struct btrfs_tree_sim *ts, u32 i, int dir, u32 *out);
	void (*marks)(struct btrfs_tree_sim *ts, u32 i, struct sim_marks *m);
	/* pointers [from, from + n) of @src to position @at of @dst */
	int (*move)(struct btrfs_tree_sim *ts, u32 dst, u32 at, u32 src, u32 from, u32 n);
	/* @left and @right, adjacent, now meet at @right's first key (and in their parent) */
	void (*boundary)(struct btrfs_tree_sim *ts, u32 left, u32 right);
	/* @left takes the range of its right neighbour @i */
	void (*take_range)(struct btrfs_tree_sim *ts, u32 left, u32 i);
	/* @i freed: it leaves its parent and the model */
	int (*drop)(struct btrfs_tree_sim *ts, u32 i);
	/* insert_new_root() above root @i, the counts left to the caller; 1: cannot grow */
	int (*new_root)(struct btrfs_tree_sim *ts, u32 i);
	/* a new node of no pointers after @i under the same parent, and its index */
	int (*add_after)(struct btrfs_tree_sim *ts, u32 i, u32 *out);
	/* @n, split off @i, after it: ranges, and its pointer in their parent */
	int (*link)(struct btrfs_tree_sim *ts, u32 i, u32 n);
	/* a root of one pointer freed, its child on @key's path the root (no counts) */
	int (*collapse)(struct btrfs_tree_sim *ts, u32 i, const struct btrfs_key *key);
	/* the node of @level on @key's path after a push moved it to @pushed */
	bool (*holder)(struct btrfs_tree_sim *ts, int level, const struct btrfs_key *key,
		       u32 pushed, u32 *out);
};

static u32 sim_group_nr(const struct btrfs_tree_sim *ts, u32 i)
{
	return ts->groups[i].nr;
}

static bool sim_group_root(const struct btrfs_tree_sim *ts, u32 i)
{
	return !ts->groups[i].parent_id;
}

/* at level 1 the push knows where the path's leaf went */
static bool sim_group_holder(struct btrfs_tree_sim *ts, int level, const struct btrfs_key *key,
			     u32 pushed, u32 *out)
{
	*out = pushed;
	return true;
}

static const struct sim_level sim_level_one = {
	.nr = sim_group_nr,
	.root = sim_group_root,
	.sibling = sim_sibling_group,
	.marks = sim_group_marks,
	.move = sim_group_move,
	.boundary = sim_group_boundary,
	.take_range = sim_group_take_range,
	.drop = sim_group_drop,
	.new_root = sim_group_new_root,
	.add_after = sim_group_add_after,
	.link = sim_group_link,
	.collapse = sim_collapse_root,
	.holder = sim_group_holder,
};

static u32 sim_upper_nr(const struct btrfs_tree_sim *ts, u32 i)
{
	return ts->nodes[i].nr;
}

static bool sim_upper_root(const struct btrfs_tree_sim *ts, u32 i)
{
	return ts->nodes[i].root;
}

/* above level 1 the path follows its key */
static bool sim_upper_holder(struct btrfs_tree_sim *ts, int level, const struct btrfs_key *key,
			     u32 pushed, u32 *out)
{
	const struct btrfs_sim_node *n = sim_node_at(ts, level, key);

	if (n)
		*out = n - ts->nodes;
	return n;
}

static const struct sim_level sim_level_upper = {
	.nr = sim_upper_nr,
	.root = sim_upper_root,
	.sibling = sim_node_sibling,
	.marks = sim_upper_marks,
	.move = sim_upper_move,
	.boundary = sim_upper_boundary,
	.take_range = sim_upper_take_range,
	.drop = sim_upper_drop,
	.new_root = sim_upper_new_root,
	.add_after = sim_upper_add_after,
	.link = sim_upper_link,
	.collapse = sim_collapse_upper,
	.holder = sim_upper_holder,
};

/* Node @i copied by a push or balance_level(): the commit's next look copies its path */
static void sim_cowed(struct btrfs_tree_sim *ts, const struct sim_level *lv, u32 i)
{
	struct sim_marks m;

	lv->marks(ts, i, &m);
	if (!*m.cowed) {
		ts->touch_marks++;
		if (m.start)
			sim_event(ts, SIM_EV_COW_NODE, m.start, m.image_key, m.level);
	}
	*m.cowed = true;
}

/* Both siblings of node @i, read ahead (reada_for_balance()) */
static int sim_siblings(struct btrfs_tree_sim *ts, const struct sim_level *lv, u32 i,
			bool *has_left, u32 *li, bool *has_right, u32 *ri)
{
	struct sim_marks m;
	int ret = lv->sibling(ts, i, -1, li);

	if (ret < 0)
		return ret;
	*has_left = !ret;
	ret = lv->sibling(ts, i, 1, ri);
	if (ret < 0)
		return ret;
	*has_right = !ret;
	if (*has_left) {
		lv->marks(ts, *li, &m);
		*m.read = true;
	}
	if (*has_right) {
		lv->marks(ts, *ri, &m);
		*m.read = true;
	}
	return 0;
}

/*
 * split_node() of node @i: a root first gets a new root above it
 * (insert_new_root(), one pointer); the pointers from (nr + 1) / 2 on go
 * to a new node after it under the same parent
 */
static int sim_split_level(struct btrfs_tree_sim *ts, const struct sim_level *lv, u32 i)
{
	u32 mid, n;
	int ret;

	if (lv->root(ts, i)) {
		ret = lv->new_root(ts, i);
		if (ret)
			return ret < 0 ? ret : 0;
		ts->new_roots++;
		ts->blocks++;
		sim_event(ts, SIM_EV_NEW, 0, NULL, 0);
	}
	ret = lv->add_after(ts, i, &n);
	if (ret)
		return ret;
	mid = (lv->nr(ts, i) + 1) / 2;
	ret = lv->move(ts, n, 0, i, mid, lv->nr(ts, i) - mid);
	if (!ret)
		ret = lv->link(ts, i, n);
	if (ret)
		return ret;
	ts->node_splits++;
	ts->splits++;
	ts->blocks++;
	sim_event(ts, SIM_EV_NEW, 0, NULL, 0);
	return 0;
}

/*
 * push_nodes_for_insert() for node @i, its path at pointer @slot: the
 * left sibling, unless nearly full (BTRFS_NODEPTRS_PER_BLOCK - 1), is
 * copied and takes pointers (push_node_left()); if none moved, the right
 * one the same way (balance_node_right()).  0 and the node now holding
 * the path's pointer, 1 when nothing moved.
 */
static int sim_push_nodes(struct btrfs_tree_sim *ts, const struct sim_level *lv, u32 i, u32 slot,
			  bool has_left, u32 li, bool has_right, u32 ri, u32 *ci)
{
	u32 max = sim_max_ptrs(ts), n;
	int ret;

	if (has_left && lv->nr(ts, li) < max - 1) {
		sim_cowed(ts, lv, li);
		n = btrfs_node_push_left_nr(lv->nr(ts, li), lv->nr(ts, i), max, false);
		if (n) {
			ret = lv->move(ts, li, lv->nr(ts, li), i, 0, n);
			if (ret)
				return ret;
			lv->boundary(ts, li, i);
			ts->node_pushes++;
			*ci = slot < n ? li : i;
			return 0;
		}
	}
	if (has_right && lv->nr(ts, ri) < max - 1) {
		sim_cowed(ts, lv, ri);
		n = btrfs_node_push_right_nr(lv->nr(ts, ri), lv->nr(ts, i), max);
		if (n) {
			ret = lv->move(ts, ri, 0, i, lv->nr(ts, i) - n, n);
			if (ret)
				return ret;
			lv->boundary(ts, i, ri);
			ts->node_pushes++;
			*ci = slot >= lv->nr(ts, i) ? ri : i;
			return 0;
		}
	}
	return 1;
}

/*
 * setup_nodes_for_search() of an insert's search (ins_len > 0, or
 * search_for_split) at node @i of @level on @key's path, at its pointer
 * @slot: a node of BTRFS_NODEPTRS_PER_BLOCK - 3 pointers or more reads
 * its left and right siblings ahead (reada_for_balance()), then
 * split_node(): the root gets a new root (insert_new_root()) and splits;
 * another first tries push_nodes_for_insert() and splits only the node
 * then holding the path if that still has BTRFS_NODEPTRS_PER_BLOCK - 3
 * or more.
 */
static int sim_insert_level(struct btrfs_tree_sim *ts, const struct sim_level *lv, int level,
			    u32 i, u32 slot, const struct btrfs_key *key)
{
	u32 max = sim_max_ptrs(ts), li = 0, ri = 0, ci = i;
	bool has_left, has_right;
	int ret;

	if (!btrfs_node_split_on_insert(lv->nr(ts, i), max))
		return 0;
	if (lv->root(ts, i))
		return sim_split_level(ts, lv, i);
	ret = sim_siblings(ts, lv, i, &has_left, &li, &has_right, &ri);
	if (!ret)
		ret = sim_push_nodes(ts, lv, i, slot, has_left, li, has_right, ri, &ci);
	if (ret == 1)
		return sim_split_level(ts, lv, i);
	if (ret || !lv->holder(ts, level, key, ci, &ci) || !btrfs_node_split_on_insert(lv->nr(ts, ci), max))
		return ret;
	return sim_split_level(ts, lv, ci);
}

/*
 * Node @i, emptied, is freed (btrfs_del_ptr(), btrfs_free_tree_block())
 * and its left neighbour @left takes its range
 */
static int sim_merge_level(struct btrfs_tree_sim *ts, const struct sim_level *lv, u32 left, u32 i)
{
	int ret;

	lv->take_range(ts, left, i);
	ret = lv->drop(ts, i);
	if (ret)
		return ret;
	ts->nodes_freed++;
	ts->blocks--;
	return 0;
}

/*
 * balance_level() of node @i, not the root, of a quarter of
 * BTRFS_NODEPTRS_PER_BLOCK or fewer: its left and right siblings are
 * copied; the left takes what it can of it (push_node_left(), empty), it
 * takes what it can of the right (a right emptied is freed); left with
 * one pointer it takes half of the left's back (balance_node_right()) or
 * gives its last (push_node_left()); emptied, it is freed
 */
static int sim_balance_level(struct btrfs_tree_sim *ts, const struct sim_level *lv, u32 i)
{
	struct btrfs_balance_moves mv;
	bool has_left, has_right;
	u32 li = 0, ri = 0;
	int ret;

	ret = sim_siblings(ts, lv, i, &has_left, &li, &has_right, &ri);
	if (ret)
		return ret;
	btrfs_balance_level_moves(has_left ? lv->nr(ts, li) : 0, lv->nr(ts, i),
				  has_right ? lv->nr(ts, ri) : 0, has_left, has_right,
				  sim_max_ptrs(ts), &mv);
	ts->node_balances++;
	sim_cowed(ts, lv, i);
	if (has_left) {
		sim_cowed(ts, lv, li);
		if (mv.mid_to_left && (ret = lv->move(ts, li, lv->nr(ts, li), i, 0, mv.mid_to_left)))
			return ret;
	}
	if (has_right) {
		sim_cowed(ts, lv, ri);
		if (mv.right_to_mid && (ret = lv->move(ts, i, lv->nr(ts, i), ri, 0, mv.right_to_mid)))
			return ret;
		if (mv.right_emptied) {
			ret = sim_merge_level(ts, lv, i, ri);
			if (ret)
				return ret;
			has_right = false;
			li -= li > ri;
			i -= i > ri;
		}
	}
	if (mv.one_without_left) {
		ts->inexact = true;	/* -EUCLEAN in the kernel */
		return 0;
	}
	if (mv.left_to_mid)
		ret = lv->move(ts, i, 0, li, lv->nr(ts, li) - mv.left_to_mid, mv.left_to_mid);
	else if (mv.last_to_left)
		ret = lv->move(ts, li, lv->nr(ts, li), i, 0, mv.last_to_left);
	if (ret)
		return ret;
	if (has_right)
		lv->boundary(ts, i, ri);
	if (!has_left)
		return 0;
	if (mv.mid_emptied)
		return sim_merge_level(ts, lv, li, i);
	lv->boundary(ts, li, i);
	return 0;
}

/*
 * setup_nodes_for_search() of a deletion's search (ins_len < 0) at node
 * @i on @key's path: a node of fewer than half of BTRFS_NODEPTRS_PER_BLOCK
 * pointers calls balance_level(), which acts on a root of one pointer
 * (collapsed: its child becomes the root) or another node of a quarter or
 * fewer (sim_balance_level())
 */
static int sim_delete_level(struct btrfs_tree_sim *ts, const struct sim_level *lv, u32 i,
			    const struct btrfs_key *key)
{
	u32 max = sim_max_ptrs(ts), nr = lv->nr(ts, i);
	int ret;

	if (!btrfs_node_balance_on_delete(nr, max))
		return 0;
	if (!lv->root(ts, i))
		return btrfs_balance_level_returns(nr, max) ? 0 : sim_balance_level(ts, lv, i);
	if (nr != 1)
		return 0;
	ret = lv->collapse(ts, i, key);
	if (ret)
		return ret;
	ts->nodes_freed++;
	ts->node_balances++;
	ts->blocks--;
	return 0;
}

/* sim_insert_level() at each level above 1, root first, as the search meets them */
static int sim_setup_upper(struct btrfs_tree_sim *ts, const struct btrfs_key *key)
{
	struct btrfs_sim_node *n;
	int level, ret;

	for (level = sim_top_level(ts, key); level >= 2; level--) {
		n = sim_node_at(ts, level, key);
		if (n && (ret = sim_insert_level(ts, &sim_level_upper, level, n - ts->nodes, 0, key)))
			return ret;
	}
	return 0;
}

/*
 * setup_nodes_for_search() of an insert's search, before the leaf is
 * looked at: the levels above 1 first, root first (sim_setup_upper()),
 * then level 1 (sim_insert_level()).  Later searches see the leaves under
 * their new nodes.
 */
static int sim_setup_nodes(struct btrfs_tree_sim *ts, const struct btrfs_key *key)
{
	u32 max = sim_max_ptrs(ts), leaf, slot;
	struct btrfs_sim_group *g;
	bool found;
	int ret;

	ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret || !g->has_parent)
		return ret;
	/* the levels above first (loading a sibling moves the groups) */
	ret = sim_setup_upper(ts, key);
	if (!ret)
		ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	/* a level-2 node not loaded (groups built without one) is not replayed */
	if (!sim_group_parent(ts, g) && g->parent_id &&
	    btrfs_node_split_on_insert(g->parent_nr, max))
		ts->inexact = true;
	return sim_insert_level(ts, &sim_level_one, 1, g - ts->groups, leaf, key);
}

/* sim_delete_level() at each level above 1, root first; the path follows @key */
static int sim_setup_upper_delete(struct btrfs_tree_sim *ts, const struct btrfs_key *key)
{
	struct btrfs_sim_node *n;
	int level, ret = 0;

	for (level = sim_top_level(ts, key); level >= 2 && !ret; level--) {
		n = sim_node_at(ts, level, key);
		if (n)
			ret = sim_delete_level(ts, &sim_level_upper, n - ts->nodes, key);
	}
	return ret;
}

/*
 * setup_nodes_for_search() of a deletion's search, before the leaf is
 * looked at: the levels above 1 first, root first
 * (sim_setup_upper_delete()), then level 1 (sim_delete_level(), the
 * siblings read ahead counted by the search itself, reada_for_balance()
 * in ctree.c), @key's group looked up again after.  Later searches see
 * the leaves under their new nodes.
 */
static int sim_setup_nodes_delete(struct btrfs_tree_sim *ts, const struct btrfs_key *key)
{
	u32 max = sim_max_ptrs(ts);
	struct btrfs_sim_group *g;
	int ret;

	ret = sim_find_group(ts, key, &g);
	if (ret || !g->has_parent)
		return ret;
	/* the levels above first (loading a sibling moves the groups) */
	ret = sim_setup_upper_delete(ts, key);
	if (!ret)
		ret = sim_find_group(ts, key, &g);
	if (ret || !g->has_parent)
		return ret;
	/* a level-2 node not loaded (groups built without one) is not replayed */
	if (g->parent_id && btrfs_node_balance_on_delete(g->nr, max) &&
	    !sim_group_parent(ts, g) &&
	    (g->parent_root ? g->parent_nr == 1 : !btrfs_balance_level_returns(g->parent_nr, max)))
		ts->inexact = true;
	return sim_delete_level(ts, &sim_level_one, g - ts->groups, key);
}

/*
 * btrfs_insert_empty_items(): @nr items with consecutive keys in one leaf,
 * as one insert of their summed size; 1 (-EEXIST) when the first exists,
 * after the split the search made for it
 */
int btrfs_tree_sim_insert_batch(struct btrfs_tree_sim *ts, const struct btrfs_key *keys,
				const u32 *sizes, u32 nr)
{
	struct btrfs_sim_group *g;
	struct btrfs_sim_items_leaf *l;
	u32 need = 0, leaf, slot, i;
	bool found;
	int ret;

	ts->changes++;
	for (i = 0; i < nr; i++)
		need += sizes[i] + sizeof(struct btrfs_item);
	if (!nr)
		return 0;
	if (need > sim_lds(ts))
		return -EOVERFLOW;
	ret = sim_setup_nodes(ts, &keys[0]);
	if (!ret)
		ret = sim_lookup(ts, &keys[0], &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	sim_mark_touched(ts, g->leaves[leaf]);
	if (found && need + g->leaves[leaf]->items[slot].size > sim_lds(ts))
		return 1;
	/*
	 * search_leaf(): for a key that exists the item would only grow, so
	 * the room asked for is without the item header
	 */
	if (found)
		need -= sizeof(struct btrfs_item);
	if (sim_free(ts, g->leaves[leaf]) < need) {
		ret = sim_split_leaf(ts, g, &leaf, &slot, need, found);
		if (ret)
			return ret;
	}
	if (found)
		return 1;
	l = g->leaves[leaf];
	sim_mark_touched(ts, l);
	ret = sim_leaf_reserve(l, l->nr + nr);
	if (ret)
		return ret;
	memmove(&l->items[slot + nr], &l->items[slot], (l->nr - slot) * sizeof(*l->items));
	for (i = 0; i < nr; i++)
		l->items[slot + i] = (struct btrfs_sim_item){ keys[i], sizes[i] };
	l->nr += nr;
	return 0;
}

int btrfs_tree_sim_insert(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			  u32 data_size)
{
	return btrfs_tree_sim_insert_batch(ts, key, &data_size, 1);
}

/* 0 and the item's size when @key is in the tree as changed so far, 1 if not */
int btrfs_tree_sim_lookup(struct btrfs_tree_sim *ts, const struct btrfs_key *key, u32 *size)
{
	struct btrfs_sim_group *g;
	u32 leaf, slot;
	bool found;
	int ret;

	ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	if (found && size)
		*size = g->leaves[leaf]->items[slot].size;
	return found ? 0 : 1;
}

/*
 * sim_lookup() as a COW search: the leaf it lands in is copied, the key
 * found or not.
 */
static int sim_cow_lookup(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			  struct btrfs_sim_group **g, u32 *leaf, u32 *slot,
			  bool *found)
{
	int ret = sim_lookup(ts, key, g, leaf, slot, found);

	if (!ret)
		sim_mark_touched(ts, (*g)->leaves[*leaf]);
	return ret;
}

/*
 * The start of an edit of the item at @key: one change more, the item
 * located (with @cow, its leaf copied); 1 when it is absent, and the edit
 * is not made
 */
static int sim_edit_lookup(struct btrfs_tree_sim *ts, const struct btrfs_key *key, bool cow,
			   struct btrfs_sim_group **g, u32 *leaf, u32 *slot)
{
	bool found;
	int ret;

	ts->changes++;
	if (cow)
		ret = sim_cow_lookup(ts, key, g, leaf, slot, &found);
	else
		ret = sim_lookup(ts, key, g, leaf, slot, &found);
	if (ret)
		return ret;
	return found ? 0 : 1;
}

/*
 * btrfs_set_item_key_safe(): the item keeps its place, only its key
 * changes (the new key sorts between the same neighbours); 1 if absent
 */
int btrfs_tree_sim_set_key(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			   const struct btrfs_key *new_key)
{
	struct btrfs_sim_group *g;
	u32 leaf, slot;
	int ret;

	ret = sim_edit_lookup(ts, key, false, &g, &leaf, &slot);
	if (ret)
		return ret;
	g->leaves[leaf]->items[slot].key = *new_key;
	return 0;
}

/* The leaf a COW search of @key lands in is copied; nothing moves */
int btrfs_tree_sim_touch(struct btrfs_tree_sim *ts, const struct btrfs_key *key)
{
	struct btrfs_sim_group *g;
	u32 leaf, slot;
	bool found;

	ts->changes++;
	return sim_cow_lookup(ts, key, &g, &leaf, &slot, &found);
}

/*
 * fixup_low_keys(): the first key of group @g's first leaf is now @key,
 * above the key its range starts at, which is also the pointer's key in
 * its level-2 node (and above, where it is a node's first).  Every loaded
 * pointer and range bound at the old key moves to @key, so that a later
 * search of a key between the two reaches the group on the left, as the
 * kernel's does (a fixup item's deletion at the start of a node, then
 * the orphan items inserted there).  Only when that group is loaded: a
 * key between the two would otherwise route to no loaded group, and one
 * loaded by the image's search would be @g's node again.
 */
static void sim_group_low_key(struct btrfs_tree_sim *ts, struct btrfs_sim_group *g,
			      const struct btrfs_key *key)
{
	struct btrfs_key old = g->lo;
	struct btrfs_sim_group *left = NULL;
	struct btrfs_sim_node *n;
	u32 i, j;

	if (!g->has_parent || !g->has_lo || btrfs_comp_keys(key, &old) <= 0)
		return;
	for (i = 0; i < ts->nr_groups && !left; i++)
		if (ts->groups[i].has_hi && !btrfs_comp_keys(&ts->groups[i].hi, &old))
			left = &ts->groups[i];
	if (!left)
		return;
	left->hi = g->lo = *key;
	for (i = 0; i < ts->nr_nodes; i++) {
		n = &ts->nodes[i];
		if (n->has_lo && !btrfs_comp_keys(&n->lo, &old))
			n->lo = *key;
		if (n->has_hi && !btrfs_comp_keys(&n->hi, &old))
			n->hi = *key;
		for (j = 0; j < n->nr; j++)
			if (!btrfs_comp_keys(&n->keys[j], &old))
				n->keys[j] = *key;
	}
}

static int sim_free_leaf(struct btrfs_tree_sim *ts, struct btrfs_sim_group *g, u32 leaf)
{
	struct btrfs_sim_items_leaf *l = g->leaves[leaf];

	if (l->start) {
		if (array_grow((void **)&ts->freed_starts, ts->nr_freed_starts,
			       &ts->cap_freed_starts, sizeof(*ts->freed_starts)))
			return -ENOMEM;
		ts->freed_starts[ts->nr_freed_starts++] = l->start;
	}
	sim_event_free(ts, SIM_EV_FREE, l->start, 0);
	memmove(&g->leaves[leaf], &g->leaves[leaf + 1], (g->nr - leaf - 1) * sizeof(*g->leaves));
	g->nr--;
	/* del_ptr() of the node's first pointer: the next leaf's key is the node's */
	if (!leaf && g->nr && g->leaves[0]->nr)
		sim_group_low_key(ts, g, &g->leaves[0]->items[0].key);
	sim_items_leaf_free(l);
	ts->leaves_freed++;
	ts->blocks--;
	return 0;
}

/*
 * btrfs_del_items() of one item; with !@balance the leaf is left as it is
 * (the kernel deletes a run of slots and balances once, after the last);
 * 1 when the key is not there
 */
int btrfs_tree_sim_delete(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			  bool balance)
{
	struct btrfs_sim_group *g;
	struct btrfs_sim_items_leaf *l;
	u32 leaf, slot, at;
	int ret;

	ret = sim_setup_nodes_delete(ts, key);
	if (ret)
		return ret;
	ret = sim_edit_lookup(ts, key, false, &g, &leaf, &slot);
	if (ret)
		return ret;
	l = g->leaves[leaf];
	sim_mark_touched(ts, l);
	memmove(&l->items[slot], &l->items[slot + 1], (l->nr - slot - 1) * sizeof(*l->items));
	l->nr--;
	/* btrfs_del_items() of slot 0: fixup_low_keys() before any push */
	if (!leaf && !slot && l->nr)
		sim_group_low_key(ts, g, &l->items[0].key);
	if (!balance && l->nr)
		return 0;
	/* the root leaf stays, however empty; a root node is not collapsed here */
	if (!g->has_parent ||
	    (l->nr && !btrfs_del_items_pushes(sim_space(l, 0, l->nr), sim_lds(ts))))
		return 0;
	if (l->nr) {
		/* the path stays at the deleted slot */
		at = leaf;
		ret = sim_push_left_items(ts, g, &at, &slot, 0,
					  l->items[0].size + sizeof(struct btrfs_item), true,
					  (u32)-1);
		if (ret < 0)
			return ret;
		/*
		 * push_leaf_left() moves the path to the left leaf when the
		 * items it took reach the deleted slot; btrfs_del_items()
		 * pushes the rest right only while the path is at the leaf
		 */
		if (l->nr && at == leaf) {
			ret = sim_push_right_items(ts, g, &at, &slot, 0,
						   sim_space(l, 0, l->nr), true, 0);
			if (ret < 0)
				return ret;
		}
	}
	if (l->nr)
		return 0;
	if (g->nr == 1)
		return 0;
	return sim_free_leaf(ts, g, leaf);
}

/*
 * btrfs_search_slot() with path->search_for_extension and @ins_len the
 * bytes an item will grow by (no item header), then btrfs_extend_item()
 * by @grow (0: the search only, as when the back reference is there
 * already and only its count changes); 1 if @key is absent
 */
int btrfs_tree_sim_extend(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			  u32 ins_len, u32 grow)
{
	struct btrfs_sim_group *g;
	u32 leaf, slot;
	bool found;
	int ret;

	if (ins_len) {
		ret = sim_setup_nodes(ts, key);
		if (ret)
			return ret;
	}
	ret = sim_edit_lookup(ts, key, true, &g, &leaf, &slot);
	if (ret)
		return ret;
	if (ins_len && sim_free(ts, g->leaves[leaf]) < ins_len) {
		/* split_leaf() with extend: the item stays whole on one side */
		ret = sim_split_leaf(ts, g, &leaf, &slot, ins_len, true);
		if (ret)
			return ret;
		sim_locate(g, key, &leaf, &slot, &found);
		if (!found)
			return 1;
	}
	if (grow > sim_free(ts, g->leaves[leaf])) {
		/* btrfs_extend_item() would BUG: the model lost track */
		ts->inexact = true;
		return 0;
	}
	g->leaves[leaf]->items[slot].size += grow;
	return 0;
}

/* btrfs_truncate_item(): the item shrinks to @new_size, the leaf is not balanced */
int btrfs_tree_sim_truncate(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			    u32 new_size)
{
	struct btrfs_sim_group *g;
	u32 leaf, slot;
	int ret;

	ret = sim_edit_lookup(ts, key, false, &g, &leaf, &slot);
	if (ret)
		return ret;
	if (new_size < g->leaves[leaf]->items[slot].size)
		g->leaves[leaf]->items[slot].size = new_size;
	sim_mark_touched(ts, g->leaves[leaf]);
	return 0;
}

/*
 * Where btrfs_search_slot() leaves a path for @key that is absent: the
 * item before it in the same leaf (none at slot 0: the kernel's callers
 * do not look into the previous leaf), its leaf's free space, and the
 * first key after it (in the next leaf, or the next group's first key);
 * 0, or 1 when @key exists
 */
int btrfs_tree_sim_neighbours(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			      struct btrfs_sim_neighbours *nb)
{
	struct btrfs_sim_group *g;
	struct btrfs_sim_items_leaf *l;
	u32 leaf, slot, i;
	bool found;
	int ret;

	memset(nb, 0, sizeof(*nb));
	ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	if (found)
		return 1;
	l = g->leaves[leaf];
	nb->leaf_free = sim_free(ts, l);
	if (slot > 0) {
		nb->has_prev = true;
		nb->prev = l->items[slot - 1];
	}
	nb->slot0 = slot == 0;
	if (slot < l->nr) {
		nb->has_next = true;
		nb->next = l->items[slot].key;
		return 0;
	}
	for (i = leaf + 1; i < g->nr; i++)
		if (g->leaves[i]->nr) {
			nb->has_next = true;
			nb->next = g->leaves[i]->items[0].key;
			return 0;
		}
	if (g->has_hi) {
		nb->has_next = true;
		nb->next = g->hi;
	}
	return 0;
}

/* The leaf btrfs_next_leaf() steps into from leaf @leaf of @g (see below) */
static int sim_leaf_after(const struct btrfs_sim_group *g, u32 leaf, struct btrfs_key *first)
{
	u32 i;

	for (i = leaf + 1; i < g->nr; i++) {
		const struct btrfs_sim_items_leaf *l = g->leaves[i];

		if (!l->nr)
			continue;
		if (!l->start || l->touched)
			return 1;
		*first = l->items[0].key;
		return 0;
	}
	if (!g->has_hi)
		return 1;
	*first = g->hi;
	return 0;
}

/*
 * A walk slot by slot (btrfs_drop_extents()' next_slot) that passes the
 * item before the absent @key and looks at the one after it: when @key's
 * slot is past the last item of its leaf, btrfs_next_leaf() moves the path
 * to the next leaf, and reads it unless the transaction made or copied it
 * (a split's new leaf, a touched one: in memory).  0 with *@first a key
 * whose search in the image reads that leaf (its first key; past the
 * group, the next level-1 node's, which is read too), 1 when nothing is
 * read: the item after @key is in the same leaf, or no item follows.
 */
int btrfs_tree_sim_next_leaf(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			     struct btrfs_key *first)
{
	struct btrfs_sim_group *g;
	u32 leaf, slot;
	bool found;
	int ret;

	ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	if (found || slot < g->leaves[leaf]->nr)
		return 1;
	return sim_leaf_after(g, leaf, first);
}

/*
 * btrfs_read_locked_inode() of the inode item @key: it steps past the
 * item after it (path->slots[0]++), then acls_after_inode_item() looks
 * from the next one at up to 8 of the inode's items, and
 * btrfs_load_inode_props() walks the inode's xattrs from the first it
 * found, or from where the look ended unless an item of another inode or
 * of a type past XATTR_ITEM ended it.  A walk that runs off the end of
 * the leaf steps into the next one (btrfs_next_leaf()).  0 with *@first
 * as btrfs_tree_sim_next_leaf() gives it, 1 when nothing more is read
 * (or the item is absent).
 */
int btrfs_tree_sim_inode_props_leaf(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
				    struct btrfs_key *first)
{
	const struct btrfs_sim_items_leaf *l;
	struct btrfs_sim_group *g;
	u32 leaf, slot, at, walk = UINT32_MAX, scanned = 0;
	bool found, ended = false;
	int ret;

	ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret || !found)
		return ret ? ret : 1;
	l = g->leaves[leaf];
	for (at = slot + 2; at < l->nr; ) {
		const struct btrfs_key *k = &l->items[at].key;

		if (k->objectid != key->objectid || k->type > BTRFS_XATTR_ITEM_KEY) {
			ended = true;
			break;
		}
		if (k->type == BTRFS_XATTR_ITEM_KEY && walk == UINT32_MAX)
			walk = at;
		at++;
		if (++scanned >= 8)
			break;
	}
	if (walk == UINT32_MAX) {
		if (ended)
			return 1;
		walk = at;
	}
	while (walk < l->nr && l->items[walk].key.objectid == key->objectid &&
	       l->items[walk].key.type == BTRFS_XATTR_ITEM_KEY)
		walk++;
	if (walk < l->nr)
		return 1;
	return sim_leaf_after(g, leaf, first);
}

/*
 * btrfs_search_slot() for an absent @key with @ins_len > 0 (no item
 * header with path->search_for_extension): split_leaf() when the leaf
 * lacks the room; 1 if @key exists
 */
int btrfs_tree_sim_reserve(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			   u32 ins_len)
{
	struct btrfs_sim_group *g;
	u32 leaf, slot;
	bool found;
	int ret;

	ts->changes++;
	ret = sim_setup_nodes(ts, key);
	if (!ret)
		ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	if (found)
		return 1;
	if (sim_free(ts, g->leaves[leaf]) >= ins_len)
		return 0;
	return sim_split_leaf(ts, g, &leaf, &slot, ins_len, false);
}

/*
 * btrfs_split_item(): the item at @key becomes two, [0, @split_offset)
 * under @key and the rest under @new_key right after it: one more item
 * header, so setup_leaf_for_split() first splits a leaf without room for
 * it (split_leaf() with extend); 1 if @key is absent
 */
int btrfs_tree_sim_split_item(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			      const struct btrfs_key *new_key, u32 split_offset)
{
	struct btrfs_sim_group *g;
	struct btrfs_sim_items_leaf *l;
	u32 leaf, slot, size;
	int ret;

	ret = btrfs_tree_sim_extend(ts, key, sizeof(struct btrfs_item), 0);
	if (ret)
		return ret;
	ret = sim_edit_lookup(ts, key, false, &g, &leaf, &slot);
	if (ret)
		return ret;
	l = g->leaves[leaf];
	size = l->items[slot].size;
	if (split_offset > size || sim_free(ts, l) < sizeof(struct btrfs_item)) {
		ts->inexact = true;
		return 0;
	}
	ret = sim_leaf_reserve(l, l->nr + 1);
	if (ret)
		return ret;
	memmove(&l->items[slot + 2], &l->items[slot + 1], (l->nr - slot - 1) * sizeof(*l->items));
	l->items[slot].size = split_offset;
	l->items[slot + 1] = (struct btrfs_sim_item){ *new_key, size - split_offset };
	l->nr++;
	return 0;
}
