// SPDX-License-Identifier: GPL-2.0
/*
 * For csum-delete --file, what one transaction's copy-on-write of a
 * subvolume's blocks queues as delayed refs (nothing is written, the
 * image's tree is searched), mirroring fs/btrfs/ctree.c:
 * btrfs_block_can_be_shared(), update_ref_for_cow(),
 * btrfs_force_cow_block() (as btrfs_cow_block()), btrfs_search_slot()
 * with cow = 1 and the sibling copies of balance_level(), and the leaves
 * btrfs_del_items() and split_leaf() change: their pushes to the
 * siblings, btrfs_del_leaf(), the new leaf of a split.  Not replayed:
 * pointer pushes between nodes and node splits.
 * Behaviour reproduced: the mixed-backref rules, 2.6.31-6.18; which
 * items a push moves is counted by ctree.c's rule (5.x-6.18), on the
 * image leaf's items that are still there (items pushed in are followed
 * as bytes).
 *
 * The refs are queued through extent-tree.c (btrfs_lookup_extent_info(),
 * btrfs_mod_ref()) into delayed-ref.c's simulation.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/ctree.h"
#include "kernel-shared/ctree-cow.h"
#include "kernel-shared/tree-block.h"
#include "common/array.h"

/* ---- copy-on-write of a search path, as one transaction does it ----- */

/* The index of @bytenr in copy_of[], or -1 */
static int64_t cow_sim_find(const struct btrfs_cow_sim *cs, u64 bytenr)
{
	u64 i;

	return u64_index_get(&cs->cowed_index, bytenr, &i) ? (int64_t)i : -1;
}

static int cow_sim_remember(struct btrfs_cow_sim *cs, u64 bytenr, u64 copy)
{
	if (cs->nr_cowed == cs->cap_cowed) {
		u64 cap = cs->cap_cowed ? cs->cap_cowed * 2 : 64;
		u64 *c;

		if (cap > SIZE_MAX / sizeof(*c))
			return -ENOMEM;
		c = realloc(cs->copy_of, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		cs->copy_of = c;
		cs->cap_cowed = cap;
	}
	if (u64_index_put(&cs->cowed_index, bytenr, cs->nr_cowed))
		return -ENOMEM;
	cs->copy_of[cs->nr_cowed++] = copy;
	return 0;
}

static u64 block_header_flags(const struct btrfs_tree_block *eb)
{
	const struct btrfs_header *h = (const struct btrfs_header *)eb->data;

	return le64toh(h->flags);
}

/*
 * btrfs_block_can_be_shared(): never the root node (a snapshot copies it),
 * never a block written after the last snapshot unless relocation wrote
 * it.  Only a subvolume's commit root can be the root node here: the
 * image is a committed state.
 */
bool btrfs_block_can_be_shared(const struct btrfs_subvol *sv,
			       const struct btrfs_tree_block *buf, bool is_root_node)
{
	if (is_root_node)
		return false;
	if (buf->generation > sv->last_snapshot &&
	    !(block_header_flags(buf) & BTRFS_HEADER_FLAG_RELOC))
		return false;
	return true;
}

/*
 * update_ref_for_cow(): a shared block owned by this root, not yet full
 * backref, gives every extent it points to a full backref (parent = the
 * block) and becomes FULL_BACKREF; a shared block of another root gives
 * the copy normal refs of this root.  A block whose last ref this is
 * moves its full backrefs to normal refs of the copy.  @cow_owner is the
 * copy's owner, this root.
 */
static int update_ref_for_cow(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			      const struct btrfs_tree_block *buf, bool is_root_node)
{
	u64 root_id = sv->root.objectid;
	u64 refs = 1, flags = 0;
	int ret;

	if (btrfs_block_can_be_shared(sv, buf, is_root_node)) {
		ret = btrfs_lookup_extent_info(cs, buf, &refs, &flags);
		if (ret)
			return ret;
	} else if ((block_header_flags(buf) >> BTRFS_BACKREF_REV_SHIFT) <
		   BTRFS_MIXED_BACKREF_REV) {
		flags = BTRFS_BLOCK_FLAG_FULL_BACKREF;
	}

	if (refs > 1) {
		cs->shared_cows++;
		if (buf->owner == root_id && !(flags & BTRFS_BLOCK_FLAG_FULL_BACKREF)) {
			ret = btrfs_mod_ref(cs, buf, buf->owner, true, true);
			if (ret)
				return ret;
			return btrfs_sim_set_extent_flags(cs->refs, buf->start,
					buf->len, BTRFS_BLOCK_FLAG_FULL_BACKREF);
		}
		return btrfs_mod_ref(cs, buf, root_id, true, false);
	}
	if (!(flags & BTRFS_BLOCK_FLAG_FULL_BACKREF))
		return 0;
	cs->full_backref_cows++;
	ret = btrfs_mod_ref(cs, buf, root_id, true, false);
	if (ret)
		return ret;
	return btrfs_mod_ref(cs, buf, buf->owner, false, true);
}

/*
 * btrfs_force_cow_block(): the copy is allocated (a new head with an ADD
 * tree ref of this root), refs are updated, and the old block's ref of
 * this root is dropped (btrfs_free_tree_block()).  A block is copied once
 * per transaction: should_cow_block() is false for the copy afterwards.
 */
int btrfs_cow_block(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
		    const struct btrfs_tree_block *buf, bool is_root_node)
{
	u64 root_id = sv->root.objectid;
	u64 copy;
	int ret;

	if (cow_sim_find(cs, buf->start) >= 0)
		return 0;
	copy = cs->next_bytenr;
	cs->next_bytenr += cs->fs_info->nodesize;
	ret = cow_sim_remember(cs, buf->start, copy);
	if (ret)
		return ret;
	cs->cows++;
	ret = btrfs_sim_add_ref(cs->refs, false, BTRFS_DELAYED_REF_ADD, copy,
				cs->fs_info->nodesize, 0, root_id, buf->level, 0);
	if (!ret)
		ret = update_ref_for_cow(cs, sv, buf, is_root_node);
	if (!ret)
		ret = btrfs_sim_add_ref(cs->refs, false, BTRFS_DELAYED_REF_DROP,
					buf->start, buf->len, 0, root_id,
					buf->level, 0);
	return ret;
}

/*
 * The entry of node @eb in the table of nodes whose pointers the
 * transaction changed, made with the image's count on first use.
 */
static int node_entry(struct btrfs_cow_sim *cs, const struct btrfs_tree_block *eb,
		      u64 *idx)
{
	if (u64_index_get(&cs->node_index, eb->start, idx))
		return 0;
	if (cs->nr_nodes == cs->cap_nodes) {
		u64 cap = cs->cap_nodes ? cs->cap_nodes * 2 : 16;
		u64 *b, *e;
		u32 *n;

		b = realloc(cs->nodes, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		cs->nodes = b;
		n = realloc(cs->node_nr, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		cs->node_nr = n;
		e = realloc(cs->emptied_into, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		cs->emptied_into = e;
		cs->cap_nodes = cap;
	}
	if (u64_index_put(&cs->node_index, eb->start, cs->nr_nodes))
		return -ENOMEM;
	*idx = cs->nr_nodes++;
	cs->nodes[*idx] = eb->start;
	cs->node_nr[*idx] = eb->nritems;
	cs->emptied_into[*idx] = 0;
	return 0;
}

/* The pointers node @eb holds as the transaction left it */
static u32 node_nritems(const struct btrfs_cow_sim *cs, const struct btrfs_tree_block *eb)
{
	u64 i;

	return u64_index_get(&cs->node_index, eb->start, &i) ? cs->node_nr[i] : eb->nritems;
}

/* Node @bytenr was emptied by balance_level() and freed */
static bool node_emptied(const struct btrfs_cow_sim *cs, u64 bytenr)
{
	u64 i;

	return u64_index_get(&cs->node_index, bytenr, &i) && cs->emptied_into[i];
}

/*
 * A pointer of node @eb deleted (a leaf or node freed below it).  The
 * replay follows the image's pointers: one in a node balance_level()
 * emptied is in the node it was pushed into.
 */
static int node_shrink(struct btrfs_cow_sim *cs, const struct btrfs_tree_block *eb)
{
	u64 i, hops = 0;
	int ret = node_entry(cs, eb, &i);

	if (ret)
		return ret;
	while (cs->emptied_into[i] && hops++ < cs->nr_nodes &&
	       u64_index_get(&cs->node_index, cs->emptied_into[i], &i))
		;
	if (cs->node_nr[i])
		cs->node_nr[i]--;
	return 0;
}

/*
 * Copy the child of @parent at @slot, a sibling that balancing touches;
 * *@idx: its entry in the node table.
 */
static int cow_sibling(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
		       const struct btrfs_tree_block *parent, int slot, u64 *idx)
{
	struct btrfs_tree_block *sib;
	int ret;

	ret = btrfs_read_node_slot(cs->fs_info, sv->root.objectid, parent, slot,
			 BTRFS_IO_OTHER, &sib);
	if (ret)
		return ret;
	cs->neighbour_cows += cow_sim_find(cs, sib->start) < 0;
	ret = btrfs_cow_block(cs, sv, sib, false);
	if (!ret)
		ret = node_entry(cs, sib, idx);
	btrfs_tree_block_put(sib);
	return ret;
}

/*
 * The slot next to @slot of @parent in direction @dir whose node is still
 * there (a node emptied by balancing lost its pointer), or -1
 */
static int node_sibling_slot(const struct btrfs_cow_sim *cs,
			     const struct btrfs_tree_block *parent, int slot, int dir)
{
	for (slot += dir; slot >= 0 && slot < (int)parent->nritems; slot += dir)
		if (!node_emptied(cs, btrfs_node_blockptr(parent, slot)))
			return slot;
	return -1;
}

static void move_ptrs(struct btrfs_cow_sim *cs, u64 from, u64 to, u32 n)
{
	cs->node_nr[from] -= n;
	cs->node_nr[to] += n;
}

/*
 * An emptied node's pointer leaves its parent and its copy is freed
 * (btrfs_del_ptr(), btrfs_free_tree_block(): the copy's ADD and this
 * DROP cancel)
 */
static int node_emptied_free(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			     const struct btrfs_tree_block *parent, u64 node,
			     u64 into, u8 level)
{
	int64_t i = cow_sim_find(cs, cs->nodes[node]);

	cs->emptied_into[node] = cs->nodes[into];
	if (i >= 0) {
		int ret = btrfs_sim_add_ref(cs->refs, false, BTRFS_DELAYED_REF_DROP,
					    cs->copy_of[i], cs->fs_info->nodesize, 0,
					    sv->root.objectid, level, 0);
		if (ret)
			return ret;
	}
	return node_shrink(cs, parent);
}

/*
 * balance_level() of a deletion's search (ins_len < 0): a node, not the
 * root, with fewer than half its pointers is balanced, which returns at
 * once above a quarter and otherwise copies its left and right siblings,
 * pushes its pointers into the left one (push_node_left(left, mid)),
 * then the right one's into it (push_node_left(mid, right)), frees the
 * right one if that emptied it, leaves it no single pointer
 * (balance_node_right(mid, left)) and frees it if emptied, the moves of
 * btrfs_balance_level_moves() (ctree.c).  The counts are followed;
 * the descent follows the image's pointers (a node emptied is not
 * balanced again: its pointers are in a neighbour).
 */
static int balance_level_sim(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			     const struct btrfs_path *path, int level)
{
	const struct btrfs_tree_block *mid = path->nodes[level];
	const struct btrfs_tree_block *parent;
	u32 max = btrfs_node_max_ptrs(cs->fs_info->nodesize);
	int pslot, lslot, rslot, ret = 0;
	struct btrfs_balance_moves mv;
	u64 m, left = 0, right = 0;
	bool has_left, has_right;

	if (level >= BTRFS_MAX_LEVEL - 1 || !path->nodes[level + 1])
		return 0;
	/* below half goes to balance_level(), which stops above a quarter */
	if (node_emptied(cs, mid->start) ||
	    btrfs_balance_level_returns(node_nritems(cs, mid), max))
		return 0;
	parent = path->nodes[level + 1];
	pslot = path->slots[level + 1];
	lslot = node_sibling_slot(cs, parent, pslot, -1);
	rslot = node_sibling_slot(cs, parent, pslot, 1);
	has_left = lslot >= 0;
	has_right = rslot >= 0;
	if (has_left)
		ret = cow_sibling(cs, sv, parent, lslot, &left);
	if (!ret && has_right)
		ret = cow_sibling(cs, sv, parent, rslot, &right);
	if (!ret)
		ret = node_entry(cs, mid, &m);
	if (ret)
		return ret;
	btrfs_balance_level_moves(has_left ? cs->node_nr[left] : 0, cs->node_nr[m],
				  has_right ? cs->node_nr[right] : 0, has_left, has_right, max, &mv);
	move_ptrs(cs, m, left, mv.mid_to_left);
	move_ptrs(cs, right, m, mv.right_to_mid);
	if (has_right && mv.right_emptied)
		ret = node_emptied_free(cs, sv, parent, right, m, mid->level);
	move_ptrs(cs, left, m, mv.left_to_mid);
	move_ptrs(cs, m, left, mv.last_to_left);
	if (!ret && mv.mid_emptied)
		ret = node_emptied_free(cs, sv, parent, m, left, mid->level);
	return ret;
}

/*
 * btrfs_search_slot() with cow = 1: every block of the path, root first,
 * is copied unless this transaction copied it already; with @del, nodes
 * are balanced on the way down as a deletion's search does.  The path is
 * the image's: splits, merges and pushes are not replayed.
 */
int btrfs_search_slot_cow(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			  const struct btrfs_key *key, struct btrfs_path *path,
			  bool del)
{
	int ret, found, level;

	found = btrfs_search_slot(cs->fs_info, &sv->root, key, path, BTRFS_IO_OTHER);
	if (found < 0)
		return found;
	for (level = BTRFS_MAX_LEVEL - 1; level >= 0; level--) {
		if (!path->nodes[level])
			continue;
		ret = btrfs_cow_block(cs, sv, path->nodes[level],
				      level == sv->root.level);
		if (!ret && del && level > 0)
			ret = balance_level_sim(cs, sv, path, level);
		if (ret) {
			btrfs_release_path(path);
			return ret;
		}
	}
	return found;
}

/* ---- deleting items: btrfs_del_items() and the pushes it tries ------ */

static u32 item_space(const struct btrfs_tree_block *eb, u32 slot)
{
	return btrfs_raw_item_size(btrfs_item_nr(eb, slot)) + sizeof(struct btrfs_item);
}

/*
 * The transaction's view of an image leaf, added on first use and found
 * again by its start (leaf_index: once per item, so no scan).  Each is
 * allocated on its own: a pointer stays valid while more are added.
 */
static int sim_leaf_get(struct btrfs_cow_sim *cs, const struct btrfs_tree_block *eb,
			struct btrfs_sim_leaf **ret)
{
	struct btrfs_sim_leaf *l;
	u64 i;

	if (u64_index_get(&cs->leaf_index, eb->start, &i)) {
		*ret = cs->leaves[i];
		return 0;
	}
	if (array_grow((void **)&cs->leaves, cs->nr_leaves, &cs->cap_leaves, sizeof(*cs->leaves)))
		return -ENOMEM;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->start = eb->start;
	l->nritems = eb->nritems;
	/* a bit a slot: a file's views are a byte a leaf of 208 items less */
	l->gone = calloc(eb->nritems ? (eb->nritems + 7) / 8 : 1, 1);
	for (i = 0; i < eb->nritems; i++)
		l->image_space += item_space(eb, i);
	if (!l->gone) {
		free(l);
		return -ENOMEM;
	}
	if (u64_index_put(&cs->leaf_index, l->start, cs->nr_leaves)) {
		free(l->gone);
		free(l);
		return -ENOMEM;
	}
	cs->leaves[cs->nr_leaves++] = l;
	*ret = l;
	return 0;
}

/*
 * leaf_space_used() of the whole leaf as the transaction left it, kept as
 * counts (a deletion asks once per batch, a refill makes a batch per item)
 */
static u32 sim_leaf_used(const struct btrfs_sim_leaf *l, const struct btrfs_tree_block *eb)
{
	return l->pushed_in + l->image_space - l->gone_space;
}

static u32 sim_leaf_items(const struct btrfs_sim_leaf *l)
{
	return l->nritems - l->nr_gone;
}

/* Slot @slot of the image's leaf @eb is deleted or pushed out */
static void sim_leaf_gone(struct btrfs_sim_leaf *l, const struct btrfs_tree_block *eb,
			  u32 slot)
{
	if (btrfs_sim_leaf_slot_gone(l, slot))
		return;
	l->gone[slot / 8] |= 1U << (slot % 8);
	l->nr_gone++;
	l->gone_space += item_space(eb, slot);
}

/*
 * btrfs_del_leaf(): the parent's pointer goes and the leaf's copy is
 * freed (btrfs_free_tree_block() of this root: its ADD and this DROP
 * merge to nothing).
 */
static int sim_del_leaf(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			const struct btrfs_path *path, struct btrfs_sim_leaf *l)
{
	int64_t i = cow_sim_find(cs, path->nodes[0]->start);
	int ret;

	l->deleted = true;
	cs->leaves_deleted++;
	ret = node_shrink(cs, path->nodes[1]);
	if (ret || i < 0)
		return ret;
	return btrfs_sim_add_ref(cs->refs, false, BTRFS_DELAYED_REF_DROP,
				 cs->copy_of[i], cs->fs_info->nodesize, 0,
				 sv->root.objectid, 0, 0);
}

bool btrfs_cow_sim_leaf_deleted(const struct btrfs_cow_sim *cs, u64 bytenr)
{
	u64 i;

	return u64_index_get(&cs->leaf_index, bytenr, &i) && cs->leaves[i]->deleted;
}

/*
 * The leaf next to slot @slot of @parent in direction @dir (-1 left, 1
 * right) as the transaction left the parent: leaves it deleted have lost
 * their pointer, so the next one over is the sibling.  *@eb NULL: none.
 */
static int sim_sibling(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
		       const struct btrfs_tree_block *parent, int slot, int dir,
		       struct btrfs_tree_block **eb, struct btrfs_sim_leaf **l)
{
	int ret = 0;

	*eb = NULL;
	for (slot += dir; slot >= 0 && slot < (int)parent->nritems; slot += dir) {
		/* a leaf it deleted is passed without its block (the truncation lets those go) */
		if (btrfs_cow_sim_leaf_deleted(cs, btrfs_node_blockptr(parent, slot)))
			continue;
		ret = btrfs_read_node_slot(cs->fs_info, sv->root.objectid, parent, slot,
				 BTRFS_IO_OTHER, eb);
		if (ret)
			return ret;
		ret = sim_leaf_get(cs, *eb, l);
		if (ret || !(*l)->deleted)
			break;
		btrfs_tree_block_put(*eb);
		*eb = NULL;
	}
	if (ret && *eb) {
		btrfs_tree_block_put(*eb);
		*eb = NULL;
	}
	return ret;
}

/*
 * The items an image leaf still holds, in order, as the push counts of
 * ctree.c see a leaf: the image's slots not deleted or pushed out
 * (items pushed in are kept as bytes only, and do not move again but
 * with the whole leaf)
 */
struct live_items {
	const struct btrfs_tree_block *eb;
	u32 *slots;
	u32 nr;
	u32 before;			/* of them, below the path's slot */
};

static u32 live_item_space(const void *leaf, u32 i)
{
	const struct live_items *li = leaf;

	return item_space(li->eb, li->slots[i]);
}

static int live_items_get(const struct btrfs_sim_leaf *l, const struct btrfs_tree_block *eb,
			  int path_slot, struct live_items *li)
{
	u32 slot;

	li->eb = eb;
	li->nr = li->before = 0;
	li->slots = malloc((l->nritems ? l->nritems : 1) * sizeof(*li->slots));
	if (!li->slots)
		return -ENOMEM;
	for (slot = 0; slot < l->nritems; slot++) {
		if (btrfs_sim_leaf_slot_gone(l, slot))
			continue;
		li->slots[li->nr++] = slot;
		li->before += (int)slot < path_slot;
	}
	return 0;
}

/* @nr of @li's items, its last (@dir > 0) or first, go to the sibling @to */
static int sim_move_items(struct btrfs_sim_leaf *l, const struct live_items *li, int dir,
			  u32 nr, struct btrfs_sim_leaf *to)
{
	u32 i;

	if (nr && !l->moved_to) {
		l->moved_to = calloc(l->nritems ? l->nritems : 1, sizeof(*l->moved_to));
		if (!l->moved_to)
			return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		u32 slot = li->slots[dir > 0 ? li->nr - 1 - i : i];

		to->pushed_in += item_space(li->eb, slot);
		l->moved_to[slot] = to;
		sim_leaf_gone(l, li->eb, slot);
	}
	return 0;
}

/*
 * An item a push moved out of @l's @slot deleted later (the truncation
 * walks the image's slots): it leaves the leaf it went to, which may then
 * be empty and deleted in its turn, as the kernel deletes it there
 */
static void sim_moved_item_deleted(struct btrfs_sim_leaf *l, const struct btrfs_tree_block *eb,
				   u32 slot)
{
	struct btrfs_sim_leaf *to;

	if (!l->moved_to || !l->moved_to[slot])
		return;
	to = l->moved_to[slot];
	to->pushed_in -= min_t(u32, to->pushed_in, item_space(eb, slot));
	l->moved_to[slot] = NULL;
}

/*
 * One push of @l's items to the sibling @sl, by the rule of
 * push_leaf_right() (@dir > 0) or push_leaf_left() (ctree.c), @p
 * holding the free space and data sizes: 0 when items moved, or an
 * insert past the leaf's last item goes first into the right sibling
 * (the path moves there), 1 when nothing moved, <0
 */
static int sim_push_items(struct btrfs_sim_leaf *l, const struct btrfs_tree_block *leaf,
			  int dir, struct btrfs_leaf_push *p, int path_slot,
			  struct btrfs_sim_leaf *sl)
{
	struct live_items li;
	u32 moved;
	int ret = live_items_get(l, leaf, path_slot, &li);

	if (ret)
		return ret;
	p->item_space = live_item_space;
	p->leaf = &li;
	p->nr = li.nr;
	p->slot = li.before;
	if (!li.nr) {
		ret = 1;
	} else if (dir > 0 && !p->empty && li.before == li.nr) {
		ret = 0;
	} else {
		moved = dir > 0 ? btrfs_leaf_push_right_nr(p) : btrfs_leaf_push_left_nr(p);
		ret = sim_move_items(l, &li, dir, moved, sl);
		if (!ret)
			ret = moved ? 0 : 1;
	}
	free(li.slots);
	return ret;
}

/*
 * One push of @l's items to its sibling in direction @dir (-1 left, 1
 * right) as push_leaf_left() and push_leaf_right() make it, @p holding
 * the rule's arguments: the sibling under the same parent is copied if
 * it has @need bytes free, then takes the items the rule of ctree.c
 * moves; a right push with empty = 1 that empties the leaf takes the
 * bytes pushed in before too.  0 when items moved (or an insert past the
 * leaf's last item moved the path right), 1 when nothing did, <0.
 */
static int sim_leaf_push(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			 const struct btrfs_path *path, struct btrfs_sim_leaf *l, int dir,
			 struct btrfs_leaf_push *p, u32 need, int path_slot)
{
	const u32 data = btrfs_leaf_data_size(cs->fs_info->nodesize);
	struct btrfs_tree_block *sib;
	struct btrfs_sim_leaf *sl;
	int ret;

	if (!path->nodes[1])
		return 1;
	ret = sim_sibling(cs, sv, path->nodes[1], path->slots[1], dir, &sib, &sl);
	if (ret || !sib)
		return ret ? ret : 1;
	p->free_space = data - sim_leaf_used(sl, sib);
	ret = 1;
	if (p->free_space >= need) {
		cs->neighbour_cows += cow_sim_find(cs, sib->start) < 0;
		ret = btrfs_cow_block(cs, sv, sib, false);
		if (!ret)
			ret = sim_push_items(l, path->nodes[0], dir, p, path_slot, sl);
	}
	if (!ret && dir > 0 && p->empty && !sim_leaf_items(l)) {
		sl->pushed_in += l->pushed_in;
		l->pushed_in = 0;
	}
	btrfs_tree_block_put(sib);
	return ret;
}

/*
 * btrfs_del_items()'s push_leaf_left() with empty = 1: the left sibling
 * takes items from the front while they fit, if it has room for the
 * first; 0 or <0
 */
static int sim_del_push_left(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			     const struct btrfs_path *path, struct btrfs_sim_leaf *l)
{
	struct btrfs_leaf_push p = { .empty = true, .limit = (u32)-1 };
	u32 slot;

	for (slot = 0; slot < l->nritems && btrfs_sim_leaf_slot_gone(l, slot); slot++)
		;
	if (slot == l->nritems)
		return 0;
	return min_t(int, sim_leaf_push(cs, sv, path, l, -1, &p,
					item_space(path->nodes[0], slot), 0), 0);
}

/* ---- inserting an item: split_leaf()'s pushes ------------------------ */

/*
 * One sibling's push for an insert (push_leaf_right() or push_leaf_left()
 * with empty = 0 and @need as both data sizes): copied when it has @need
 * bytes free, then it takes the items on its side of the insertion slot
 * that the rule of ctree.c moves.  1 when nothing moved (the next
 * push is tried), 0 when it did, <0.
 */
static int sim_insert_push(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			   const struct btrfs_path *path, struct btrfs_sim_leaf *l,
			   int dir, u32 need)
{
	const u32 data = btrfs_leaf_data_size(cs->fs_info->nodesize);
	struct btrfs_leaf_push p = {
		.min_data = need,
		.leaf_free = data - min_t(u32, data, sim_leaf_used(l, path->nodes[0])),
		.limit = dir > 0 ? 0 : (u32)-1,
	};

	return sim_leaf_push(cs, sv, path, l, dir, &p, need, path->slots[0]);
}

/*
 * btrfs_search_slot() with ins_len = @data_size (item and header) on the
 * path an insert's COW search left: a leaf without that room pushes to
 * its right sibling, then to its left one, as split_leaf() does, copying
 * the sibling it uses; if neither push makes room the leaf splits, and
 * the new leaf's ref is added.  Which items move is followed only as
 * bytes, for the room of later operations.
 */
int btrfs_insert_room_sim(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			  const struct btrfs_path *path, u32 data_size)
{
	const u32 data = btrfs_leaf_data_size(cs->fs_info->nodesize);
	const struct btrfs_tree_block *leaf = path->nodes[0];
	struct btrfs_sim_leaf *l;
	u32 free_space, need;
	u64 split;
	int ret;

	ret = sim_leaf_get(cs, leaf, &l);
	if (ret)
		return ret;
	free_space = data - min_t(u32, data, sim_leaf_used(l, leaf));
	if (free_space >= data_size)
		return 0;
	if (path->nodes[1]) {
		need = btrfs_split_push_need(data_size, free_space,
					     path->slots[0] < (int)l->nritems);
		ret = sim_insert_push(cs, sv, path, l, 1, need);
		if (ret == 1) {
			need = btrfs_split_push_need(data_size, free_space, path->slots[0] > 0);
			ret = sim_insert_push(cs, sv, path, l, -1, need);
		}
		if (ret < 0)
			return ret;
		if (data - min_t(u32, data, sim_leaf_used(l, leaf)) >= data_size || ret == 0)
			return 0;
	}
	/* split_leaf(): a new leaf (a new root above a root leaf is not followed) */
	split = cs->next_bytenr;
	cs->next_bytenr += cs->fs_info->nodesize;
	cs->splits++;
	return btrfs_sim_add_ref(cs->refs, false, BTRFS_DELAYED_REF_ADD, split,
				 cs->fs_info->nodesize, 0, sv->root.objectid, 0, 0);
}

/*
 * btrfs_del_items() of @nr items from @slot of the path's leaf (the
 * image's slots): an emptied leaf is deleted; one left less than a third
 * full pushes its items to the left sibling, then all the rest to the
 * right one if they fit there, and is deleted if that emptied it.
 */
int btrfs_del_items_sim(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			const struct btrfs_path *path, int slot, int nr)
{
	const struct btrfs_tree_block *leaf = path->nodes[0];
	struct btrfs_sim_leaf *l;
	int ret, i;

	ret = sim_leaf_get(cs, leaf, &l);
	if (ret)
		return ret;
	for (i = slot; i < slot + nr && i < (int)l->nritems; i++)
		sim_moved_item_deleted(l, leaf, i);
	if (l->deleted)
		return 0;
	for (i = slot; i < slot + nr && i < (int)l->nritems; i++)
		sim_leaf_gone(l, leaf, i);
	/* the root leaf stays, however empty */
	if (sv->root.level == 0)
		return 0;
	if (!sim_leaf_items(l) && !l->pushed_in)
		return sim_del_leaf(cs, sv, path, l);
	if (!btrfs_del_items_pushes(sim_leaf_used(l, leaf),
				    btrfs_leaf_data_size(cs->fs_info->nodesize)))
		return 0;
	if (sim_leaf_items(l)) {
		/* push_leaf_right() with empty = 1 and the whole leaf as data_size */
		struct btrfs_leaf_push right = { .empty = true };

		ret = sim_del_push_left(cs, sv, path, l);
		if (!ret && sim_leaf_items(l))
			ret = min_t(int, sim_leaf_push(cs, sv, path, l, 1, &right,
						       sim_leaf_used(l, leaf), path->slots[0]), 0);
	}
	if (!ret && !sim_leaf_items(l) && !l->pushed_in)
		ret = sim_del_leaf(cs, sv, path, l);
	return ret;
}
