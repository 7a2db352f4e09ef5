// SPDX-License-Identifier: GPL-2.0
/*
 * The tree blocks a commit copies outside the subvolume trees, after
 * fs/btrfs/transaction.c: btrfs_commit_transaction() runs the delayed refs,
 * and commit_cowonly_roots() writes the dirty block groups, the device
 * stats and the root items of the changed trees, running the refs those
 * copies queue until none is left.  What each run changes:
 *
 * - extent-tree.c: run_delayed_data_ref() / run_delayed_tree_ref() change
 *   the extent item of every head with a ref left (EXTENT_ITEM or the
 *   skinny METADATA_ITEM); __btrfs_free_extent() deletes it when the last
 *   ref goes, and do_free_extent_accounting() deletes the data extent's
 *   csums (file-item.c btrfs_del_csums()), adds the range to the free space
 *   tree and dirties its block group; alloc_reserved_tree_block() inserts
 *   the METADATA_ITEM of a new block, takes it out of the free space tree
 *   and dirties its block group;
 * - free-space-tree.c: btrfs_add_to_free_space_tree() and
 *   btrfs_remove_from_free_space_tree() search the block group's
 *   FREE_SPACE_INFO and the extents beside the range;
 * - block-group.c: update_block_group_item() of every dirty block group;
 * - volumes.c: btrfs_run_dev_stats() rewrites the DEV_STATS item of every
 *   device whose counters changed: btrfs_device_init_dev_stats() sets them
 *   all at mount, so the first commit after a mount writes them;
 * - transaction.c: update_cowonly_root() and commit_fs_roots() rewrite the
 *   root item of every tree whose root node moved.
 *
 * Every search is a COW search: each block on its path not copied yet in
 * the transaction is copied once (btrfs_force_cow_block(): an ADD ref of
 * the copy and a DROP of the original, both for the cow-only root), and
 * each copy needs a METADATA_ITEM of its own, which may copy more.  New
 * blocks take the lowest free addresses of the metadata block groups
 * (find_free_extent() with the 1 GiB-aligned hint of
 * btrfs_force_cow_block() and the metadata cluster).
 *
 * This is the one commit model (struct btrfs_commit): a caller gives it
 * the trees the transaction changed (their leaf models: the leaves
 * touched are copied, the leaves splits made are new blocks, the leaves
 * freed go) and queues its own heads, with a function that runs one; the
 * model hands out the places, runs every head in the order
 * btrfs_select_ref_head() takes them (struct btrfs_head_queue: from the
 * cursor, wrapping; a run that finds none left stands at 0), the copies'
 * ADD and DROP heads with the caller's, then commit_cowonly_roots() until
 * nothing new is copied, and returns the places taken and the copies per
 * cow-only tree.  Its feeds: the log replay's commit (tree-log.c: the data
 * extents the replay changed, the subvolume, csum and extent trees) and
 * csum-delete's (last section here: the deletion's heads, run by run, an
 * extent item's inline refs changed on the extent tree's leaf model, a
 * freed data extent's csums searched with COW; the file's lone refs of
 * delayed-ref.c taken from its sorted refs as the first run reaches them).  Behaviour reproduced:
 * 6.7-6.18, measured on 6.18.44 (kernel tests 032 and 040).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/u64-index.h"
#include "kernel-shared/ctree-leaf.h"
#include "kernel-shared/transaction.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/extent-tree.h"
#include "kernel-shared/messages.h"

/* Copies of the simulation have addresses at or above this (extent-tree.c) */
#define STAND_IN_START		(1ULL << 62)

struct u64_set {
	u64 *v;
	u32 nr;
	u32 cap;
	struct u64_index idx;		/* the values set_add() put in: no scan */
};

/*
 * What a head's run does to its extent item, as items of the extent
 * tree's leaf model (ctree.c struct btrfs_tree_sim): a head's ADD refs
 * before its DROPs (select_delayed_ref()).
 */
enum ext_op_kind {
	EXT_TOUCH,			/* updated in place: only copied */
	EXT_INSERT,			/* alloc_reserved_tree_block() */
	EXT_DELETE,			/* __btrfs_free_extent(), last ref */
	EXT_EXTEND,			/* inline ref added, counted or removed */
};

struct ext_op {
	struct btrfs_key key;
	u32 search;			/* EXTEND: bytes the search asks for */
	int delta;			/* EXTEND: item size change */
	u32 size;			/* INSERT: item data bytes */
	u8 kind;
};

#define MAX_INLINE_REFS		64

struct inline_ref {
	u64 a;				/* root or parent */
	u64 owner;
	u64 offset;
	u64 count;
	u8 type;
};

/* An extent item as the runs change it */
struct extent_state {
	struct btrfs_key key;
	bool exists;
	u64 refs;
	u32 size;			/* item data bytes */
	struct inline_ref inl[MAX_INLINE_REFS];
	u32 nr;
	bool keyed;			/* refs outside the item, or too many to follow */
};

/* A head the runs met: its nodes are notes[first, first + nr) once sorted */
struct commit_head {
	u64 bytenr;
	u64 num_bytes;
	u64 level;			/* tree blocks: the first tree ref's owner */
	u64 first;
	u64 nr;
	bool is_data;
};

/* The deletion's commit as it feeds the commit model */
struct commit_state {
	struct btrfs_fs_info *fs_info;
	struct btrfs_commit_refs *c;
	const struct btrfs_delayed_refs_sim *refs;
	struct btrfs_commit *cm;
	struct btrfs_tree_sim ext;			/* the extent tree */
	struct extent_state es;				/* scratch: one extent item */
	struct commit_head *heads;			/* by bytenr */
	u64 nr_heads;
	u32 run;					/* the run the heads are in */
	bool emit;					/* false: an earlier run, replayed */
	u64 lone_pos;					/* the next lone ref to run */
	/* the image leaf the last extent item was found in, and its first key */
	u64 last_leaf;
	struct btrfs_key last_leaf_key;
	bool last_leaf_first;				/* its node's first leaf */
};

static int set_push(struct u64_set *s, u64 v)
{
	if (array_grow((void **)&s->v, s->nr, &s->cap, sizeof(*s->v)))
		return -ENOMEM;
	s->v[s->nr++] = v;
	return 0;
}

/* Add @v once: 1 if added */
static int set_add(struct u64_set *s, u64 v)
{
	u64 at;
	int ret;

	if (u64_index_get(&s->idx, v, &at))
		return 0;
	ret = u64_index_put(&s->idx, v, s->nr);
	if (!ret)
		ret = set_push(s, v);
	return ret ? ret : 1;
}

static void set_free(struct u64_set *s)
{
	free(s->v);
	u64_index_free(&s->idx);
	memset(s, 0, sizeof(*s));
}

void btrfs_commit_refs_release(struct btrfs_commit_refs *c)
{
	free(c->notes);
	c->notes = NULL;
	c->nr_notes = c->cap_notes = 0;
}

static int note_node(struct btrfs_commit_refs *c, const struct btrfs_sim_ref *r,
		     u64 num_bytes)
{
	if (array_grow((void **)&c->notes, c->nr_notes, &c->cap_notes, sizeof(*c->notes)))
		return -ENOMEM;
	c->notes[c->nr_notes] = (struct btrfs_commit_node){
		.bytenr = r->bytenr, .num_bytes = num_bytes,
		.root_or_parent = r->root_or_parent, .owner = r->owner,
		.offset = r->offset, .seq = c->nr_notes, .ref_mod = r->ref_mod,
		.run = c->runs, .type = r->type,
	};
	c->nr_notes++;
	return 0;
}

static bool is_data_ref(u8 type)
{
	return type == BTRFS_EXTENT_DATA_REF_KEY || type == BTRFS_SHARED_DATA_REF_KEY;
}

/*
 * A head changes its extent item when it runs with a ref node left
 * (nodes merged down to 0 are dropped before).  Called before each run.
 */
/*
 * A lone ref dropped before the first run (delayed-ref.c) that a later
 * ref's head meets again: the earlier run's node for that head's replay
 */
static bool lone_met_again(const struct btrfs_delayed_refs_sim *refs,
			   const struct btrfs_sim_ref *r, struct packed_ref *e, u64 *index)
{
	if (!refs->nr_lone || refs->lone_open || !r->used || !r->ref_mod ||
	    !is_data_ref(r->type))
		return false;
	*index = btrfs_sim_find_lone(refs, r->bytenr, e);
	return *index != UINT64_MAX && e->seq == BTRFS_LONE_DROPPED;
}

static int note_lone(struct btrfs_commit_refs *c, const struct btrfs_delayed_refs_sim *refs,
		     const struct packed_ref *e, u64 index)
{
	const struct btrfs_sim_ref r = {
		.bytenr = e->bytenr, .root_or_parent = refs->lone_root,
		.owner = refs->lone_owner, .offset = e->ref_offset,
		.ref_mod = BTRFS_DELAYED_REF_DROP, .type = BTRFS_EXTENT_DATA_REF_KEY,
	};
	u32 runs = c->runs;
	int ret;

	/* dropped in the first run's refs */
	c->runs = 0;
	ret = note_node(c, &r, e->num_bytes);
	c->runs = runs;
	return ret ? ret : btrfs_sim_set_lone_state(refs, index, BTRFS_LONE_QUEUED);
}

int btrfs_commit_note_refs(struct btrfs_commit_refs *c,
			   const struct btrfs_delayed_refs_sim *refs)
{
	struct packed_ref e;
	u64 i, nr = 0, index;
	int ret;

	/* room for exactly these: a note a data extent, no doubling slack */
	for (i = 0; i < refs->refs_cap; i++)
		nr += (refs->refs[i].used && refs->refs[i].ref_mod) +
		      lone_met_again(refs, &refs->refs[i], &e, &index);
	if (nr && c->nr_notes + nr > c->cap_notes) {
		struct btrfs_commit_node *n;

		if (c->nr_notes + nr > SIZE_MAX / sizeof(*n))
			return -ENOMEM;
		n = realloc(c->notes, (c->nr_notes + nr) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->notes = n;
		c->cap_notes = c->nr_notes + nr;
	}
	/* noted before this run's nodes: they sort first in their head */
	for (i = 0; i < refs->refs_cap; i++) {
		if (lone_met_again(refs, &refs->refs[i], &e, &index)) {
			ret = note_lone(c, refs, &e, index);
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < refs->refs_cap; i++) {
		const struct btrfs_sim_ref *r = &refs->refs[i];
		const struct btrfs_sim_head *h;

		if (!r->used || !r->ref_mod)
			continue;
		h = btrfs_sim_find_head(refs, r->bytenr);
		ret = note_node(c, r, h ? h->num_bytes : 0);
		if (ret)
			return ret;
	}
	c->runs++;
	return 0;
}

u32 btrfs_free_space_change_keys(const struct btrfs_block_group *bg, u64 start, u64 len,
				 bool add, struct btrfs_key *keys)
{
	keys[0] = (struct btrfs_key){ bg->start, BTRFS_FREE_SPACE_INFO_KEY, bg->length };
	if (!add) {
		/* the free extent (or bitmap) holding the range */
		keys[1] = (struct btrfs_key){ start, (u8)-1, (u64)-1 };
		return 2;
	}
	/* the extents left and right of the range, then the new one */
	keys[1] = (struct btrfs_key){ start - 1, (u8)-1, (u64)-1 };
	keys[2] = (struct btrfs_key){ start + len, BTRFS_FREE_SPACE_EXTENT_KEY, (u64)-1 };
	return 3;
}

/* Free bytes of a leaf, and whether the search found its item */
static u32 leaf_free(const struct btrfs_fs_info *fs_info, const struct btrfs_tree_block *eb)
{
	u32 used = 0, i, size;

	for (i = 0; i < eb->nritems; i++) {
		btrfs_item_ptr(eb, i, &size);
		used += size + sizeof(struct btrfs_item);
	}
	return btrfs_leaf_data_size(fs_info->nodesize) - min_t(u32, used,
		btrfs_leaf_data_size(fs_info->nodesize));
}

/* A COW search of the csum tree: its path copied, and left in @path */
static int csum_cow_search(struct commit_state *st, u64 offset, struct btrfs_path *path)
{
	const struct btrfs_root_ref *root = &st->fs_info->csum_root;
	struct btrfs_key key = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, offset };
	int ret, cow;

	if (!root->found || !root->bytenr)
		return 0;
	ret = btrfs_search_slot(st->fs_info, root, &key, path, BTRFS_IO_OTHER);
	if (ret < 0)
		return ret;
	cow = btrfs_commit_cow_path(st->cm, root, path, 0);
	if (cow) {
		btrfs_release_path(path);
		return cow;
	}
	return ret;
}

/*
 * btrfs_del_csums() for one freed data extent: from the range's end back,
 * a COW search of (EXTENT_CSUM, end - 1), each item overlapping the range
 * cut or deleted, until the item that starts at or before the range.
 */
static int del_csums(struct commit_state *st, u64 start, u64 len)
{
	const u32 ss = st->fs_info->sectorsize, cs = st->fs_info->csum_size;
	u64 end = start + len;
	u32 round;

	for (round = 0; round < 1024 && end > start; round++) {
		struct btrfs_path path = { 0 };
		struct btrfs_tree_block *leaf;
		struct btrfs_key key;
		u64 csum_end;
		u32 size;
		int ret, slot;

		ret = csum_cow_search(st, end - 1, &path);
		if (ret < 0)
			return ret;
		leaf = path.nodes[0];
		slot = path.slots[0];
		if (!leaf || (ret > 0 && slot == 0)) {
			btrfs_release_path(&path);
			return 0;
		}
		if (ret > 0)
			slot--;
		btrfs_item_key_to_cpu(leaf, slot, &key);
		btrfs_item_ptr(leaf, slot, &size);
		csum_end = key.offset + (u64)(size / (cs ? cs : 1)) * ss;
		if (key.objectid != BTRFS_EXTENT_CSUM_OBJECTID ||
		    key.type != BTRFS_EXTENT_CSUM_KEY || csum_end <= start) {
			btrfs_release_path(&path);
			return 0;
		}
		/* a cut from the middle splits the item: one header more */
		if (key.offset < start && csum_end > end &&
		    leaf_free(st->fs_info, leaf) < sizeof(struct btrfs_item))
			st->c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
		btrfs_release_path(&path);
		if (key.offset <= start)
			return 0;
		end = key.offset;
	}
	return 0;
}

/* ---- the extent tree ---------------------------------------------------- */

/*
 * An extent item that grows (an inline ref added: the search asks for
 * the ref's size, then btrfs_extend_item()) or shrinks (the last of an
 * inline ref dropped: btrfs_truncate_item()); 1 when the key is absent
 */
static int extent_item_resize(struct btrfs_tree_sim *ts, const struct ext_op *op)
{
	u32 size;
	int ret;

	if (op->delta >= 0)
		return btrfs_tree_sim_extend(ts, &op->key, op->search, op->delta);
	ret = btrfs_tree_sim_extend(ts, &op->key, op->search, 0);
	if (ret)
		return ret;
	ret = btrfs_tree_sim_lookup(ts, &op->key, &size);
	if (ret)
		return ret;
	if ((u32)-op->delta > size)
		return -EOVERFLOW;
	return btrfs_tree_sim_truncate(ts, &op->key, size + op->delta);
}

/*
 * One change of an extent item, made on the extent tree's leaf model when
 * its head runs (nothing when an earlier run is only replayed)
 */
static int ext_op_run(struct commit_state *st, u8 kind, const struct btrfs_key *key,
		      u32 search, int delta, u32 size)
{
	const struct ext_op op = { .key = *key, .kind = kind, .search = search,
				   .delta = delta, .size = size };
	struct btrfs_tree_sim *ts = &st->ext;
	int ret;

	if (!st->emit)
		return 0;
	switch (kind) {
	case EXT_TOUCH:
		ret = btrfs_tree_sim_touch(ts, key);
		break;
	case EXT_DELETE:
		ret = btrfs_tree_sim_delete(ts, key, true);
		break;
	default:
		ret = extent_item_resize(ts, &op);
		break;
	}
	if (ret == 1) {
		/* a key the image does not have where the model expects it */
		st->c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
		ret = 0;
	}
	return ret;
}

static u8 tree_block_key(const struct btrfs_fs_info *fs_info, u64 level, u64 *offset)
{
	if (btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA)) {
		*offset = level;
		return BTRFS_METADATA_ITEM_KEY;
	}
	*offset = fs_info->nodesize;
	return BTRFS_EXTENT_ITEM_KEY;
}

/* The item data of a new tree block's extent item with its one inline ref */
static u32 tree_block_item_size(const struct btrfs_fs_info *fs_info)
{
	u64 off;
	u32 size = sizeof(struct btrfs_extent_item) + sizeof(struct btrfs_extent_inline_ref);

	if (tree_block_key(fs_info, 0, &off) == BTRFS_EXTENT_ITEM_KEY)
		size += sizeof(struct btrfs_tree_block_info);
	return size;
}

/* btrfs_extent_inline_ref_size() */
static u32 inline_ref_size(u8 type)
{
	if (type == BTRFS_EXTENT_DATA_REF_KEY)
		return 1 + sizeof(struct btrfs_extent_data_ref);
	if (type == BTRFS_SHARED_DATA_REF_KEY)
		return sizeof(struct btrfs_extent_inline_ref) + sizeof(struct btrfs_shared_data_ref);
	return sizeof(struct btrfs_extent_inline_ref);
}

/* The inline refs of an extent item; ->keyed when they do not add up */
static void parse_inline(const u8 *p, u32 size, bool tree_info, struct extent_state *es)
{
	const struct btrfs_extent_item *ei = (const void *)p;
	u32 pos = sizeof(*ei) + (tree_info ? sizeof(struct btrfs_tree_block_info) : 0);
	u64 seen = 0;

	es->refs = btrfs_stack_extent_refs(ei);
	es->size = size;
	es->nr = 0;
	while (pos < size && es->nr < MAX_INLINE_REFS) {
		struct inline_ref *r = &es->inl[es->nr];
		const u8 *q = p + pos;

		memset(r, 0, sizeof(*r));
		r->type = q[0];
		if (pos + inline_ref_size(r->type) > size)
			break;
		if (r->type == BTRFS_EXTENT_DATA_REF_KEY) {
			const struct btrfs_extent_data_ref *dr = (const void *)(q + 1);

			r->a = btrfs_stack_extent_data_ref_root(dr);
			r->owner = btrfs_stack_extent_data_ref_objectid(dr);
			r->offset = btrfs_stack_extent_data_ref_offset(dr);
			r->count = btrfs_stack_extent_data_ref_count(dr);
		} else {
			r->a = btrfs_stack_extent_inline_ref_offset((const void *)q);
			r->count = 1;
			if (r->type == BTRFS_SHARED_DATA_REF_KEY)
				r->count = btrfs_stack_shared_data_ref_count((const void *)(q + 9));
			else if (r->type == BTRFS_EXTENT_OWNER_REF_KEY)
				r->count = 0;
		}
		seen += r->count;
		pos += inline_ref_size(r->type);
		es->nr++;
	}
	es->keyed = pos != size || seen != es->refs;
}

/*
 * Whether image leaf @start is among the leaves the extent tree's
 * simulation freed lately (the runs' heads empty them in bytenr order,
 * so one left behind was freed by the last few heads)
 */
static bool freed_lately(const struct btrfs_tree_sim *ts, u64 start)
{
	u32 i, n = min_t(u32, ts->nr_freed_starts, 64);

	for (i = 0; i < n; i++)
		if (ts->freed_starts[ts->nr_freed_starts - 1 - i] == start)
			return true;
	return false;
}

/*
 * Whether every key of an extent-tree leaf whose keys run from
 * @first_objectid to below (@next_objectid, ...) is a data block group's
 * extent, its block group item not among them: no search but the heads'
 * comes there (the free places are looked for among metadata extents,
 * the commit updates block group items)
 */
static bool leaf_in_data_bg(struct btrfs_fs_info *fs_info, u64 first_objectid,
			    u64 next_objectid)
{
	const struct btrfs_block_group *bg = btrfs_lookup_block_group(fs_info, first_objectid);

	return bg && (bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) == BTRFS_BLOCK_GROUP_DATA &&
	       first_objectid > bg->start && next_objectid < bg->start + bg->length;
}

/*
 * The heads' searches moved on to the image leaf of @path: the leaf
 * before it, when every key of it is behind the new one's, the
 * simulation freed it and it holds only data extents, is searched no
 * more (the heads run in bytenr order), so its cached copy goes: the
 * extent leaves of a deleted file are not all kept packed until the end.
 * A node's first leaf stays: the copy of its path (note_touched())
 * searches the node's first key.
 */
static void leave_leaf(struct commit_state *st, const struct btrfs_path *path)
{
	const struct btrfs_tree_block *eb = path->nodes[0];
	struct btrfs_key first;

	if (eb->start == st->last_leaf || !eb->nritems)
		return;
	btrfs_item_key_to_cpu(eb, 0, &first);
	if (st->last_leaf && !st->last_leaf_first &&
	    btrfs_comp_keys(&first, &st->last_leaf_key) > 0 &&
	    leaf_in_data_bg(st->fs_info, st->last_leaf_key.objectid, first.objectid) &&
	    freed_lately(&st->ext, st->last_leaf))
		btrfs_cache_forget_leaf(st->fs_info, st->last_leaf);
	st->last_leaf = eb->start;
	st->last_leaf_key = first;
	st->last_leaf_first = !path->nodes[1] || path->slots[1] == 0;
}

static int load_extent(struct commit_state *st, const struct commit_head *h,
		       struct extent_state *es)
{
	struct btrfs_fs_info *fs_info = st->fs_info;
	struct btrfs_path path = { 0 };
	const u8 *ptr;
	u32 size;
	int ret;

	memset(es, 0, sizeof(*es));
	es->key.objectid = h->bytenr;
	if (h->is_data) {
		es->key.type = BTRFS_EXTENT_ITEM_KEY;
		es->key.offset = h->num_bytes;
	} else {
		es->key.type = tree_block_key(fs_info, h->level, &es->key.offset);
	}
	if (es->key.type == BTRFS_METADATA_ITEM_KEY)
		es->key.offset = 0;	/* the level is the item's, not the ref's */
	ret = btrfs_search_slot(fs_info, &fs_info->extent_root, &es->key, &path, BTRFS_IO_OTHER);
	if (ret < 0)
		return ret;
	if (ret == 1 && es->key.type == BTRFS_METADATA_ITEM_KEY && path.nodes[0] &&
	    path.slots[0] < (int)path.nodes[0]->nritems) {
		struct btrfs_key found;

		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &found);
		if (found.objectid == es->key.objectid && found.type == es->key.type &&
		    found.offset < BTRFS_MAX_LEVEL) {
			es->key = found;
			ret = 0;
		}
	}
	if (path.nodes[0])
		leave_leaf(st, &path);
	if (ret == 0) {
		ptr = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		if (size >= sizeof(struct btrfs_extent_item)) {
			es->exists = true;
			parse_inline(ptr, size, !h->is_data && es->key.type == BTRFS_EXTENT_ITEM_KEY,
				     es);
		}
	}
	btrfs_release_path(&path);
	/* the runs change this item: its leaves for the simulation, while cached */
	if (es->exists)
		return btrfs_tree_sim_preload(&st->ext, &es->key);
	return 0;
}

static struct inline_ref *find_inline(struct extent_state *es, const struct btrfs_commit_node *n)
{
	u32 i;

	for (i = 0; i < es->nr; i++) {
		struct inline_ref *r = &es->inl[i];

		if (r->type != n->type || r->a != n->root_or_parent)
			continue;
		if (n->type != BTRFS_EXTENT_DATA_REF_KEY ||
		    (r->owner == n->owner && r->offset == n->offset))
			return r;
	}
	return NULL;
}

/* __btrfs_inc_extent_ref() of one ADD node: insert_inline_extent_backref() */
static int run_add(struct commit_state *st, struct extent_state *es,
		   const struct btrfs_commit_node *n)
{
	u32 sz = inline_ref_size(n->type);
	struct inline_ref *r = find_inline(es, n);
	int delta = 0;

	if (r) {
		r->count += n->ref_mod;
	} else if (es->nr < MAX_INLINE_REFS &&
		   es->size + sz < btrfs_max_item_size(st->fs_info->nodesize) / 16) {
		r = &es->inl[es->nr++];
		*r = (struct inline_ref){ .type = n->type, .a = n->root_or_parent,
					  .owner = n->owner, .offset = n->offset,
					  .count = n->ref_mod };
		delta = sz;
		es->size += sz;
	} else {
		/* a keyed backref item: not followed */
		st->c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
	}
	es->refs += n->ref_mod;
	return ext_op_run(st, EXT_EXTEND, &es->key, sz, delta, 0);
}

/* __btrfs_free_extent() of one DROP node; 1 when the last ref went */
static int run_drop(struct commit_state *st, struct extent_state *es,
		    const struct btrfs_commit_node *n)
{
	u64 drop = (u64)-n->ref_mod;
	struct inline_ref *r = find_inline(es, n);
	int ret;

	if (es->refs <= drop) {
		es->refs = 0;
		es->exists = false;
		ret = ext_op_run(st, EXT_DELETE, &es->key, 0, 0, 0);
		return ret ? ret : 1;
	}
	es->refs -= drop;
	if (!r) {
		if (es->keyed)
			st->c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
		return ext_op_run(st, EXT_TOUCH, &es->key, 0, 0, 0);
	}
	if (r->count > drop) {
		r->count -= drop;
		return ext_op_run(st, EXT_TOUCH, &es->key, 0, 0, 0);
	}
	/* the ref goes: btrfs_truncate_item() */
	es->size -= inline_ref_size(r->type);
	ret = ext_op_run(st, EXT_EXTEND, &es->key, 0,
			 -(int)inline_ref_size(r->type), 0);
	*r = es->inl[--es->nr];
	return ret;
}

/* The freed extent's csums, free space and block group */
static int extent_freed(struct commit_state *st, const struct commit_head *h)
{
	if (!st->emit)
		return 0;
	if (h->is_data) {
		st->c->freed_data++;
		return del_csums(st, h->bytenr, h->num_bytes) ?:
			btrfs_commit_free_space_change(st->cm, h->bytenr, h->num_bytes, true);
	}
	st->c->freed_blocks++;
	return btrfs_commit_free_space_change(st->cm, h->bytenr, st->fs_info->nodesize, true);
}

/* The net ref change the transaction gives @bytenr's extent */
static int64_t head_net(const struct btrfs_delayed_refs_sim *refs, u64 bytenr)
{
	const struct btrfs_sim_head *h = btrfs_sim_find_head(refs, bytenr);

	return h ? h->ran_mod + h->ref_mod : 0;
}

/* A run's ADD nodes of one head, then its DROPs: 1 when the last ref went */
static int run_nodes(struct commit_state *st, const struct btrfs_commit_node *nodes, u64 nr,
		     u32 run)
{
	struct extent_state *es = &st->es;
	u64 i;
	int ret;

	for (i = 0; i < nr; i++) {
		const struct btrfs_commit_node *n = &nodes[i];

		if (n->run == run && n->ref_mod > 0) {
			ret = run_add(st, es, n);
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < nr && es->exists; i++) {
		const struct btrfs_commit_node *n = &nodes[i];

		if (n->run == run && n->ref_mod < 0) {
			ret = run_drop(st, es, n);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * The head of image extent @arg in the current run: its item as the image
 * has it, the earlier runs' nodes replayed on it, then this run's changing
 * the leaf model (run_delayed_data_ref(), run_delayed_tree_ref())
 */
static int run_head_nodes(struct commit_state *st, const struct commit_head *h,
			  const struct btrfs_commit_node *nodes, u64 nr)
{
	u32 run;
	int ret;

	ret = load_extent(st, h, &st->es);
	if (ret)
		return ret;
	if (!st->es.exists) {
		st->c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
		return 0;
	}
	for (run = 0; run <= st->run; run++) {
		st->emit = run == st->run;
		ret = run_nodes(st, nodes, nr, run);
		if (ret == 1)
			return extent_freed(st, h);
		if (ret)
			return ret;
	}
	return 0;
}

/* Heads of lone refs (delayed-ref.c) have this bit in their argument */
#define LONE_HEAD		(1U << 31)

/* A lone ref's head: its one node, a drop of the first run */
static int run_lone_head(struct commit_state *st, u32 index)
{
	struct packed_ref e;
	struct commit_head h = { .nr = 1, .is_data = true };
	struct btrfs_commit_node n = {
		.root_or_parent = st->refs->lone_root, .owner = st->refs->lone_owner,
		.ref_mod = BTRFS_DELAYED_REF_DROP, .type = BTRFS_EXTENT_DATA_REF_KEY,
	};

	packed_refs_get(st->refs->lone, index, &e);
	h.bytenr = n.bytenr = e.bytenr;
	h.num_bytes = n.num_bytes = e.num_bytes;
	n.offset = e.ref_offset;
	return run_head_nodes(st, &h, &n, 1);
}

static int run_image_head(void *ctx, struct btrfs_commit *cm, u32 arg)
{
	struct commit_state *st = ctx;
	const struct commit_head *h;

	if (arg & LONE_HEAD)
		return run_lone_head(st, arg & ~LONE_HEAD);
	h = &st->heads[arg];
	return run_head_nodes(st, h, &st->c->notes[h->first], h->nr);
}

struct free_places {
	struct btrfs_fs_info *fs_info;
	const struct btrfs_block_group *bg;
	bool (*busy)(void *ctx, u64 bytenr);
	void *ctx;
	u64 **places;
	u32 *nr;
	u32 *cap;
	u32 want;
};

/* The free places of [*cur, end) into the list, up to fp->want */
static int fill_gap(struct free_places *fp, u64 *cur, u64 end)
{
	const u32 ns = fp->fs_info->nodesize;

	while (*fp->nr < fp->want && *cur + ns <= end) {
		if (btrfs_block_group_super_overlap(fp->bg, *cur, ns)) {
			*cur += fp->fs_info->sectorsize;
			continue;
		}
		if (!fp->busy || !fp->busy(fp->ctx, *cur)) {
			if (array_grow((void **)fp->places, *fp->nr, fp->cap, sizeof(**fp->places)))
				return -ENOMEM;
			(*fp->places)[(*fp->nr)++] = *cur;
		}
		*cur += ns;
	}
	return 0;
}

/* The places of one block group between the extent items of the image */
static int block_group_places(struct free_places *fp)
{
	struct btrfs_fs_info *fs_info = fp->fs_info;
	const struct btrfs_root_ref *root = &fs_info->extent_root;
	struct btrfs_key key = { .objectid = fp->bg->start };
	struct btrfs_path path = { 0 };
	u64 cur = fp->bg->start, bg_end = fp->bg->start + fp->bg->length;
	int ret;

	ret = btrfs_search_slot(fs_info, root, &key, &path, BTRFS_IO_OTHER);
	if (ret < 0)
		return ret;
	ret = 0;
	while (!ret && *fp->nr < fp->want) {
		struct btrfs_key k;
		u64 used_end = 0;

		if (!path.nodes[0] || path.slots[0] >= (int)path.nodes[0]->nritems)
			break;
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &k);
		if (k.objectid >= bg_end)
			break;
		if (k.type == BTRFS_EXTENT_ITEM_KEY)
			used_end = k.objectid + k.offset;
		else if (k.type == BTRFS_METADATA_ITEM_KEY)
			used_end = k.objectid + fs_info->nodesize;
		if (used_end) {
			ret = fill_gap(fp, &cur, k.objectid);
			cur = max_t(u64, cur, used_end);
		}
		if (!ret)
			ret = btrfs_next_item(fs_info, root, &path, BTRFS_IO_OTHER);
	}
	btrfs_release_path(&path);
	if (ret < 0)
		return ret;
	return fill_gap(fp, &cur, bg_end);
}

int btrfs_free_block_places(struct btrfs_fs_info *fs_info, u32 want,
			    bool (*busy)(void *ctx, u64 bytenr), void *ctx,
			    u64 **places, u32 *nr, u32 *cap)
{
	struct free_places fp = {
		.fs_info = fs_info, .busy = busy, .ctx = ctx,
		.places = places, .nr = nr, .cap = cap, .want = want,
	};
	u32 b;
	int ret = 0;

	*nr = 0;
	for (b = 0; b < fs_info->nr_block_groups && *nr < want && !ret; b++) {
		fp.bg = &fs_info->block_groups[b];
		if ((fp.bg->flags & BTRFS_BLOCK_GROUP_METADATA) && !fp.bg->ro)
			ret = block_group_places(&fp);
	}
	return ret;
}

/* Quotas on: the commit writes the quota tree too, not followed here */
static int check_quota(struct commit_state *st)
{
	struct btrfs_key key = { .objectid = BTRFS_QUOTA_TREE_OBJECTID,
				 .type = BTRFS_ROOT_ITEM_KEY };
	struct btrfs_path path = { 0 };
	int ret;

	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(st->fs_info);

	ret = btrfs_search_slot(st->fs_info, &tree_root, &key, &path, BTRFS_IO_OTHER);
	btrfs_release_path(&path);
	if (ret == 0)
		st->c->inexact |= BTRFS_COMMIT_INEXACT_QUOTA;
	return ret < 0 ? ret : 0;
}

static int note_cmp(const void *pa, const void *pb)
{
	const struct btrfs_commit_node *a = pa, *b = pb;

	if (a->bytenr != b->bytenr)
		return a->bytenr < b->bytenr ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The notes sorted by bytenr (then as noted), one head per bytenr */
static int build_heads(struct commit_state *st)
{
	struct btrfs_commit_refs *c = st->c;
	u64 i;

	if (!c->nr_notes)
		return 0;
	qsort(c->notes, c->nr_notes, sizeof(*c->notes), note_cmp);
	st->heads = calloc(c->nr_notes, sizeof(*st->heads));
	if (!st->heads)
		return -ENOMEM;
	for (i = 0; i < c->nr_notes; i++) {
		const struct btrfs_commit_node *n = &c->notes[i];
		struct commit_head *h = st->nr_heads ? &st->heads[st->nr_heads - 1] : NULL;

		if (!h || h->bytenr != n->bytenr) {
			h = &st->heads[st->nr_heads++];
			*h = (struct commit_head){
				.bytenr = n->bytenr, .num_bytes = n->num_bytes,
				.level = is_data_ref(n->type) ? 0 : n->owner,
				.first = i, .is_data = is_data_ref(n->type),
			};
		}
		h->nr++;
	}
	return 0;
}

/* ---- the commit model: heads in run order, copies at free places -------- */

struct btrfs_key btrfs_tree_block_item_key(const struct btrfs_fs_info *fs_info, u64 bytenr,
					   u64 level)
{
	struct btrfs_key key = { .objectid = bytenr };

	key.type = tree_block_key(fs_info, level, &key.offset);
	return key;
}

u32 btrfs_tree_block_item_size(const struct btrfs_fs_info *fs_info)
{
	return tree_block_item_size(fs_info);
}

int btrfs_tree_sim_result(struct btrfs_tree_sim *ts, int ret)
{
	if (ret == 1)
		ts->inexact = true;
	return ret < 0 ? ret : 0;
}

static bool head_before(const struct btrfs_head_run *a, const struct btrfs_head_run *b)
{
	if (a->pass != b->pass)
		return a->pass < b->pass;
	return a->bytenr < b->bytenr;
}

int btrfs_head_queue_push(struct btrfs_head_queue *q, u64 bytenr, u8 kind, u8 level, u32 arg)
{
	struct btrfs_head_run h = {
		.bytenr = bytenr, .pass = q->pass + (bytenr < q->cursor),
		.arg = arg, .kind = kind, .level = level,
	};
	u32 i;

	if (array_grow((void **)&q->heap, q->nr, &q->cap, sizeof(*q->heap)))
		return -ENOMEM;
	for (i = q->nr++; i && head_before(&h, &q->heap[(i - 1) / 2]); i = (i - 1) / 2)
		q->heap[i] = q->heap[(i - 1) / 2];
	q->heap[i] = h;
	return 0;
}

int btrfs_head_queue_attach(struct btrfs_head_queue *q, const struct btrfs_head_source *src)
{
	if (q->has_src || q->cursor)
		return -EINVAL;
	q->src = *src;
	q->src.pass = q->pass;
	q->has_src = true;
	return 0;
}

/* The source's next head, if it has one left */
static bool source_peek(struct btrfs_head_queue *q, struct btrfs_head_run *h)
{
	u64 bytenr;
	u32 arg;

	if (!q->has_src)
		return false;
	if (!q->src.peek(q->src.ctx, &bytenr, &arg)) {
		q->has_src = false;
		return false;
	}
	*h = (struct btrfs_head_run){ .bytenr = bytenr, .pass = q->src.pass, .arg = arg,
				      .kind = q->src.kind };
	return true;
}

bool btrfs_head_queue_empty(struct btrfs_head_queue *q)
{
	struct btrfs_head_run h;

	return !q->nr && !source_peek(q, &h);
}

struct btrfs_head_run btrfs_head_queue_pop(struct btrfs_head_queue *q)
{
	struct btrfs_head_run top, last;
	u32 i = 0, c;

	if (source_peek(q, &top) && (!q->nr || head_before(&top, &q->heap[0]))) {
		q->src.next(q->src.ctx);
		q->cursor = top.bytenr;
		q->pass = top.pass;
		return top;
	}
	top = q->heap[0];
	last = q->heap[--q->nr];

	while ((c = 2 * i + 1) < q->nr) {
		if (c + 1 < q->nr && head_before(&q->heap[c + 1], &q->heap[c]))
			c++;
		if (!head_before(&q->heap[c], &last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (q->nr)
		q->heap[i] = last;
	q->cursor = top.bytenr;
	q->pass = top.pass;
	return top;
}

void btrfs_head_queue_run_end(struct btrfs_head_queue *q)
{
	q->cursor = 0;
}

void btrfs_head_queue_release(struct btrfs_head_queue *q)
{
	free(q->heap);
	memset(q, 0, sizeof(*q));
}

enum commit_head_kind {
	HEAD_CALLER,			/* feed->run_head(arg) */
	HEAD_BLOCK_ADD,			/* the item of copies[arg] goes in */
	HEAD_BLOCK_DROP,		/* an original's goes out */
};

struct block_copy {
	u64 place;
	u8 tree;			/* enum btrfs_commit_tree of the original, or NR */
	bool cancelled;			/* freed before its head ran: ADD and DROP cancel */
	bool ran;			/* its ADD head ran */
};

/* What has been taken from one tree simulation so far */
struct sim_mark {
	struct btrfs_tree_sim *ts;
	u64 new_blocks;			/* splits and new roots */
	u32 freed;			/* freed_starts */
	u64 freed_new;			/* leaves freed that splits had made */
	u32 freed_nodes;		/* freed_node_starts */
	u64 freed_new_nodes;		/* nodes freed that splits had made */
	u64 changes;			/* ts->changes when its leaves were last looked at, + 1 */
	u64 touch_marks;		/* ts->touch_marks then, + 1 */
	u32 events;			/* ts->events replayed (with ts->log_events) */
};

struct btrfs_commit {
	struct btrfs_fs_info *fs_info;
	struct btrfs_commit_feed feed;
	struct btrfs_head_queue heads;
	struct u64_index copied;	/* original -> copies[] */
	struct block_copy *copies;
	u32 nr_copies;
	u32 cap_copies;
	u32 *fresh;			/* copies[] of the new leaves splits made */
	u32 nr_fresh;
	u32 cap_fresh;
	u64 *places;			/* the lowest free places, handed out in order */
	u32 nr_places;
	u32 cap_places;
	u32 next_place;
	struct u64_set dirty_bgs;	/* block groups whose free space changed, in order */
	u64 tree_copies[BTRFS_COMMIT_NR_TREES + 1];	/* image blocks copied; subvolumes last */
	bool no_fst;			/* free space changed without a free space tree */
	struct sim_mark *marks;
	u32 nr_marks;
	u32 budget;			/* copies before the model gives up */
	bool stopped;			/* out of places or budget: inexact */
	u32 copies_freed;		/* copies and new leaves freed again */
	u32 copies_cancelled;		/* of which before their ADD head ran */
};

/* The cow-only tree a root is (enum btrfs_commit_tree), or NR for a subvolume */
static u8 commit_tree_of(u64 objectid)
{
	switch (objectid) {
	case BTRFS_EXTENT_TREE_OBJECTID:
		return BTRFS_COMMIT_EXTENT;
	case BTRFS_CSUM_TREE_OBJECTID:
		return BTRFS_COMMIT_CSUM;
	case BTRFS_FREE_SPACE_TREE_OBJECTID:
		return BTRFS_COMMIT_FREE_SPACE;
	case BTRFS_BLOCK_GROUP_TREE_OBJECTID:
		return BTRFS_COMMIT_BLOCK_GROUP;
	case BTRFS_ROOT_TREE_OBJECTID:
		return BTRFS_COMMIT_ROOT;
	case BTRFS_DEV_TREE_OBJECTID:
		return BTRFS_COMMIT_DEV;
	default:
		return BTRFS_COMMIT_NR_TREES;
	}
}

/* The next free place; 1 when the metadata block groups have none left */
static int take_place(struct btrfs_commit *cm, u64 *place)
{
	if (cm->next_place == cm->nr_places) {
		u32 want = cm->nr_places ? 2 * cm->nr_places : 256;
		int ret;

		if (want <= cm->nr_places)
			return -ENOMEM;
		ret = btrfs_free_block_places(cm->fs_info, want, cm->feed.place_taken,
					      cm->feed.ctx, &cm->places, &cm->nr_places,
					      &cm->cap_places);
		if (ret)
			return ret;
		if (cm->next_place >= cm->nr_places)
			return 1;
	}
	*place = cm->places[cm->next_place++];
	return 0;
}

/* A block new in the transaction: a place, and its ADD head */
static int commit_new_block(struct btrfs_commit *cm, u8 level, u32 *index)
{
	struct block_copy *c;
	u64 place;
	int ret;

	if (cm->stopped)
		return 0;
	if (cm->nr_copies >= cm->budget) {
		cm->stopped = true;
		return 0;
	}
	ret = take_place(cm, &place);
	if (ret == 1)
		cm->stopped = true;
	if (ret)
		return ret < 0 ? ret : 0;
	if (array_grow((void **)&cm->copies, cm->nr_copies, &cm->cap_copies, sizeof(*cm->copies)))
		return -ENOMEM;
	c = &cm->copies[cm->nr_copies];
	*c = (struct block_copy){ .place = place, .tree = BTRFS_COMMIT_NR_TREES };
	if (index) {
		*index = cm->nr_copies;
	} else {
		if (array_grow((void **)&cm->fresh, cm->nr_fresh, &cm->cap_fresh, sizeof(*cm->fresh)))
			return -ENOMEM;
		cm->fresh[cm->nr_fresh++] = cm->nr_copies;
	}
	return btrfs_head_queue_push(&cm->heads, place, HEAD_BLOCK_ADD, level, cm->nr_copies++);
}

static bool was_copied(const struct btrfs_commit *cm, u64 orig, u64 *index)
{
	u64 unused;

	return u64_index_get(&cm->copied, orig, index ? index : &unused);
}

/* btrfs_cow_block() of the image's block @orig of tree @tree, once per transaction */
static int copy_block(struct btrfs_commit *cm, u8 tree, u64 orig, u8 level)
{
	u32 index = UINT32_MAX;
	int ret;

	if (cm->stopped || was_copied(cm, orig, NULL))
		return 0;
	ret = commit_new_block(cm, level, &index);
	if (!ret && index != UINT32_MAX) {
		cm->copies[index].tree = tree;
		cm->tree_copies[tree]++;
		ret = u64_index_put(&cm->copied, orig, index);
	}
	return ret ? ret : btrfs_head_queue_push(&cm->heads, orig, HEAD_BLOCK_DROP, level, 0);
}

/*
 * btrfs_free_tree_block() of a copy: before its head ran the ADD and the
 * DROP cancel (its place stays used: the cluster has moved past it)
 */
static int free_copy(struct btrfs_commit *cm, struct block_copy *c)
{
	cm->copies_freed++;
	if (!c->ran) {
		c->cancelled = true;
		cm->copies_cancelled++;
		return 0;
	}
	return btrfs_head_queue_push(&cm->heads, c->place, HEAD_BLOCK_DROP, 0, 0);
}

/* btrfs_del_leaf() of an image leaf: copied first, the copy freed */
static int free_leaf(struct btrfs_commit *cm, u8 tree, u64 orig, int level)
{
	u64 index;

	if (!was_copied(cm, orig, &index)) {
		/* copied and freed between two looks: the copy took a place */
		int ret = copy_block(cm, tree, orig, level);

		if (ret || !was_copied(cm, orig, &index))
			return ret;
	}
	if (index >= cm->nr_copies)
		return 0;
	return free_copy(cm, &cm->copies[index]);
}

/*
 * btrfs_del_leaf() of a leaf a split made: which one is not followed, the
 * last new block is taken
 */
static int free_new_leaf(struct btrfs_commit *cm)
{
	if (!cm->nr_fresh)
		return 0;
	return free_copy(cm, &cm->copies[cm->fresh[--cm->nr_fresh]]);
}

int btrfs_commit_cow_path(struct btrfs_commit *cm, const struct btrfs_root_ref *root,
			  const struct btrfs_path *path, int min_level)
{
	int level, ret = 0;

	for (level = min_level; level < BTRFS_MAX_LEVEL && !ret; level++)
		if (path->nodes[level])
			ret = copy_block(cm, commit_tree_of(root->objectid),
					 path->nodes[level]->start, path->nodes[level]->level);
	return ret;
}

/*
 * The blocks of the search path of @key in an image tree, from @min_level
 * up, or (@top_down) from the root down to @min_level, as
 * btrfs_search_slot() COWs each block on its way down
 */
static int copy_search_path(struct btrfs_commit *cm, const struct btrfs_root_ref *root,
			    const struct btrfs_key *key, int min_level, bool top_down)
{
	struct btrfs_path path = { 0 };
	int level, ret;

	if (!root->found || !root->bytenr || cm->stopped)
		return 0;
	ret = btrfs_search_slot(cm->fs_info, root, key, &path, BTRFS_IO_OTHER);
	if (ret < 0)
		return ret;
	ret = cm->feed.read_path ? cm->feed.read_path(cm->feed.ctx, root, &path, min_level) : 0;
	if (!ret && !top_down)
		ret = btrfs_commit_cow_path(cm, root, &path, min_level);
	for (level = BTRFS_MAX_LEVEL - 1; top_down && level >= min_level && !ret; level--)
		if (path.nodes[level])
			ret = copy_block(cm, commit_tree_of(root->objectid),
					 path.nodes[level]->start, path.nodes[level]->level);
	btrfs_release_path(&path);
	return ret;
}

static int copy_path(struct btrfs_commit *cm, const struct btrfs_root_ref *root,
		     const struct btrfs_key *key, int min_level)
{
	return copy_search_path(cm, root, key, min_level, false);
}

static int copy_path_down(struct btrfs_commit *cm, const struct btrfs_root_ref *root,
			  const struct btrfs_key *key, int min_level)
{
	return copy_search_path(cm, root, key, min_level, true);
}

/*
 * A simulation that logs its events (the log replay's subvolume trees):
 * its COWs, new blocks and frees in the order made, so each copy takes
 * the place the kernel's took (the copies btrfs_del_leaf() frees before
 * the commit give their places back without an extent item)
 */
static int note_events(struct btrfs_commit *cm, struct sim_mark *m)
{
	struct btrfs_tree_sim *ts = m->ts;
	const u8 tree = commit_tree_of(ts->root.objectid);
	int ret = ts->events_lost ? -ENOMEM : 0;

	for (; m->events < ts->nr_events && !ret; m->events++) {
		const struct btrfs_sim_event *ev = &ts->events[m->events];

		switch (ev->kind) {
		case SIM_EV_COW:
			if (!was_copied(cm, ev->start, NULL))
				ret = copy_path_down(cm, &ts->root, &ev->key, 1) ?:
				      copy_block(cm, tree, ev->start, 0);
			break;
		case SIM_EV_COW_NODE:
			ret = copy_path_down(cm, &ts->root, &ev->key, ev->level);
			break;
		case SIM_EV_NEW:
			ret = commit_new_block(cm, 0, NULL);
			break;
		case SIM_EV_FREE:
			ret = free_leaf(cm, tree, ev->start, 0);
			break;
		case SIM_EV_FREE_NODE:
			ret = free_leaf(cm, tree, ev->start, ev->level);
			break;
		default:
			ret = free_new_leaf(cm);
			break;
		}
	}
	return ret;
}

/* The leaves a tree simulation touched since the last look: copied */
static int note_touched(struct btrfs_commit *cm, struct sim_mark *m)
{
	struct btrfs_tree_sim *ts = m->ts;
	const u8 tree = commit_tree_of(ts->root.objectid);
	u32 g, l;
	int ret = 0;

	/*
	 * no change since the last look, or no leaf marked touched since:
	 * every touched leaf was copied then (a leaf is marked once, and
	 * nothing unmarks it)
	 */
	if (m->changes == ts->changes + 1 || m->touch_marks == ts->touch_marks + 1)
		return 0;
	m->changes = ts->changes + 1;
	m->touch_marks = ts->touch_marks + 1;
	for (g = 0; g < ts->nr_groups && !ret; g++) {
		const struct btrfs_sim_group *grp = &ts->groups[g];
		bool fresh = false;

		for (l = 0; l < grp->nr && !ret; l++) {
			const struct btrfs_sim_items_leaf *lf = grp->leaves[l];

			if (!lf->touched || !lf->start || was_copied(cm, lf->start, NULL))
				continue;
			fresh = true;
			ret = copy_block(cm, tree, lf->start, 0);
		}
		/* push_nodes_for_insert() copied a sibling node */
		if (grp->node_cowed && grp->node_start && !was_copied(cm, grp->node_start, NULL))
			fresh = true;
		if (!ret && fresh && grp->has_parent)
			ret = copy_path(cm, &ts->root, &grp->image_key, 1);
	}
	/* a node above level 1 a push or balance_level() copied: its path from it up */
	for (g = 0; g < ts->nr_nodes && !ret; g++) {
		const struct btrfs_sim_node *n = &ts->nodes[g];

		if (n->node_cowed && n->start && !was_copied(cm, n->start, NULL))
			ret = copy_path(cm, &ts->root, &n->image_key, n->level);
	}
	return ret;
}

/*
 * What one tree simulation changed since the last look: the leaves it
 * touched are copied first (btrfs_search_slot() COWs its path before
 * split_leaf() allocates the new leaf), then the leaves it freed go and
 * the splits' new blocks take their places.
 */
static int note_sim(struct btrfs_commit *cm, struct sim_mark *m)
{
	struct btrfs_tree_sim *ts = m->ts;
	const u8 tree = commit_tree_of(ts->root.objectid);
	int ret;

	if (ts->log_events)
		return note_events(cm, m);
	ret = note_touched(cm, m);

	for (; m->freed < ts->nr_freed_starts && !ret; m->freed++)
		ret = free_leaf(cm, tree, ts->freed_starts[m->freed], 0);
	/* balance_level() freed nodes of the image */
	for (; m->freed_nodes < ts->nr_freed_node_starts && !ret; m->freed_nodes++)
		ret = free_leaf(cm, tree, ts->freed_node_starts[m->freed_nodes],
				ts->freed_node_levels[m->freed_nodes]);
	for (; m->new_blocks < ts->splits + ts->new_roots && !ret; m->new_blocks++)
		ret = commit_new_block(cm, 0, NULL);
	for (; m->freed_new < ts->leaves_freed - ts->nr_freed_starts && !ret; m->freed_new++)
		ret = free_new_leaf(cm);
	for (; m->freed_new_nodes < ts->nodes_freed - ts->nr_freed_node_starts && !ret;
	     m->freed_new_nodes++)
		ret = free_new_leaf(cm);
	return ret;
}

static int note_sims(struct btrfs_commit *cm)
{
	u32 i;
	int ret = 0;

	for (i = 0; i < cm->nr_marks && !ret; i++)
		ret = note_sim(cm, &cm->marks[i]);
	return ret;
}

int btrfs_commit_free_space_change(struct btrfs_commit *cm, u64 start, u64 len, bool add)
{
	struct btrfs_fs_info *fs_info = cm->fs_info;
	const struct btrfs_block_group *bg = btrfs_lookup_block_group(fs_info, start);
	struct btrfs_key keys[3];
	u32 i, n;
	int ret;

	if (!bg)
		return 0;
	ret = set_add(&cm->dirty_bgs, bg->start);
	if (ret < 0)
		return ret;
	if (!btrfs_fs_compat_ro(fs_info, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE)) {
		/* free space cache v1: its inodes are written at commit, not followed */
		cm->no_fst = true;
		return 0;
	}
	n = btrfs_free_space_change_keys(bg, start, len, add, keys);
	for (i = 0, ret = 0; i < n && !ret; i++)
		ret = copy_path(cm, &fs_info->free_space_root, &keys[i], 0);
	/*
	 * do_free_extent_accounting(): the free space tree first, then
	 * btrfs_update_block_group(), which caches a block group not cached
	 * yet before it frees in it
	 */
	if (!ret && add && cm->feed.cache_bg)
		ret = cm->feed.cache_bg(cm->feed.ctx, start);
	return ret;
}

static int run_head(struct btrfs_commit *cm, const struct btrfs_head_run *h)
{
	struct btrfs_fs_info *fs_info = cm->fs_info;
	struct btrfs_tree_sim *ts = cm->feed.extent;
	struct btrfs_key key = btrfs_tree_block_item_key(fs_info, h->bytenr, h->level);
	int ret;

	switch (h->kind) {
	case HEAD_CALLER:
		return cm->feed.run_head(cm->feed.ctx, cm, h->arg);
	case HEAD_BLOCK_ADD:
		if (cm->copies[h->arg].cancelled)
			return 0;
		cm->copies[h->arg].ran = true;
		/* alloc_reserved_tree_block() */
		ret = btrfs_tree_sim_result(ts, btrfs_tree_sim_insert(ts, &key,
						btrfs_tree_block_item_size(fs_info)));
		break;
	default:
		/* __btrfs_free_extent(), the last ref */
		ret = btrfs_tree_sim_result(ts, btrfs_tree_sim_delete(ts, &key, true));
		break;
	}
	/* a new block leaves the free space, a freed one joins it */
	return ret ? ret : btrfs_commit_free_space_change(cm, h->bytenr, fs_info->nodesize,
							  h->kind == HEAD_BLOCK_DROP);
}

int btrfs_commit_run_heads(struct btrfs_commit *cm)
{
	int ret = 0;

	while (!btrfs_head_queue_empty(&cm->heads) && !ret) {
		struct btrfs_head_run h = btrfs_head_queue_pop(&cm->heads);

		ret = run_head(cm, &h);
		if (!ret)
			ret = note_sims(cm);
	}
	btrfs_head_queue_run_end(&cm->heads);
	return ret;
}

static int copy_root_item(struct btrfs_commit *cm, const struct btrfs_root_ref *tree_root,
			  u64 objectid)
{
	const struct btrfs_key key = { objectid, BTRFS_ROOT_ITEM_KEY, (u64)-1 };

	return copy_path(cm, tree_root, &key, 0);
}

/*
 * commit_cowonly_roots(): the dirty block groups' items
 * (update_block_group_item()), the device stats (btrfs_run_dev_stats():
 * all dirty after a mount) and the root items of the trees changed
 * (update_cowonly_root(), commit_fs_roots()).
 */
static int cowonly_roots(struct btrfs_commit *cm)
{
	struct btrfs_fs_info *fs_info = cm->fs_info;
	const struct btrfs_root_ref *bg_root = btrfs_block_group_root(fs_info);
	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(fs_info);
	static const u64 cowonly[] = {
		[BTRFS_COMMIT_EXTENT] = BTRFS_EXTENT_TREE_OBJECTID,
		[BTRFS_COMMIT_CSUM] = BTRFS_CSUM_TREE_OBJECTID,
		[BTRFS_COMMIT_FREE_SPACE] = BTRFS_FREE_SPACE_TREE_OBJECTID,
		[BTRFS_COMMIT_BLOCK_GROUP] = BTRFS_BLOCK_GROUP_TREE_OBJECTID,
		[BTRFS_COMMIT_ROOT] = 0,
		[BTRFS_COMMIT_DEV] = BTRFS_DEV_TREE_OBJECTID,
	};
	struct btrfs_tree_sim *ts = cm->feed.extent;
	u32 i;
	int ret = 0;

	for (i = 0; i < cm->dirty_bgs.nr && !ret; i++) {
		const struct btrfs_block_group *bg = btrfs_lookup_block_group(fs_info,
									      cm->dirty_bgs.v[i]);
		struct btrfs_key key;

		if (!bg)
			continue;
		key = (struct btrfs_key){ bg->start, BTRFS_BLOCK_GROUP_ITEM_KEY, bg->length };
		if (bg_root == &fs_info->extent_root)
			ret = btrfs_tree_sim_result(ts, btrfs_tree_sim_touch(ts, &key));
		else
			ret = copy_path(cm, bg_root, &key, 0);
	}
	for (i = 0; i < fs_info->nr_devices && !ret; i++)
		if (fs_info->devices[i].present)
			ret = copy_path(cm, &fs_info->dev_root,
					&(struct btrfs_key){ BTRFS_DEV_STATS_OBJECTID,
							     BTRFS_PERSISTENT_ITEM_KEY,
							     fs_info->devices[i].devid }, 0);
	for (i = 0; i < cm->feed.nr_subvols && !ret; i++)
		ret = copy_root_item(cm, &tree_root, cm->feed.subvols[i]);
	/* update_cowonly_root() of the dirty cow-only roots: those copied */
	for (i = 0; i < BTRFS_COMMIT_NR_TREES && !ret; i++)
		if (cowonly[i] && cm->tree_copies[i])
			ret = copy_root_item(cm, &tree_root, cowonly[i]);
	return ret ? ret : note_sims(cm);
}

/* The copies and new blocks the model follows before it gives up */
static u32 commit_budget(const struct btrfs_commit *cm)
{
	u64 budget = 0;
	u32 i, g;

	for (i = 0; i < cm->nr_marks; i++) {
		const struct btrfs_tree_sim *ts = cm->marks[i].ts;

		budget += ts->splits + ts->new_roots + ts->nr_freed_starts +
			  ts->nr_freed_node_starts;
		for (g = 0; g < ts->nr_groups; g++)
			budget += 2 * ts->groups[g].nr;
	}
	return (u32)(4 * budget + 4096);
}

int btrfs_commit_start(struct btrfs_fs_info *fs_info, const struct btrfs_commit_feed *feed,
		       struct btrfs_commit **out)
{
	struct btrfs_commit *cm = calloc(1, sizeof(*cm));
	u32 i;
	int ret;

	*out = NULL;
	if (!cm)
		return -ENOMEM;
	cm->fs_info = fs_info;
	cm->feed = *feed;
	cm->nr_marks = feed->nr_trees + 1;
	cm->marks = calloc(cm->nr_marks, sizeof(*cm->marks));
	if (!cm->marks) {
		free(cm);
		return -ENOMEM;
	}
	cm->marks[0].ts = feed->extent;
	for (i = 0; i < feed->nr_trees; i++)
		cm->marks[i + 1].ts = feed->trees[i];
	cm->budget = commit_budget(cm);
	/* the copies and new blocks of the transaction so far */
	ret = note_sims(cm);
	if (ret) {
		btrfs_commit_end(cm);
		return ret;
	}
	*out = cm;
	return 0;
}

/* A head or a new block may copy the path to its item: room for a few more copies */
static void commit_budget_grow(struct btrfs_commit *cm)
{
	if (cm->budget <= UINT32_MAX - 4)
		cm->budget += 4;
}

int btrfs_commit_queue_head(struct btrfs_commit *cm, u64 bytenr, u32 arg)
{
	commit_budget_grow(cm);
	return btrfs_head_queue_push(&cm->heads, bytenr, HEAD_CALLER, 0, arg);
}

int btrfs_commit_queue_sorted_heads(struct btrfs_commit *cm, u64 nr,
				    bool (*peek)(void *ctx, u64 *bytenr, u32 *arg),
				    void (*next)(void *ctx), void *ctx)
{
	const struct btrfs_head_source src = { .peek = peek, .next = next, .ctx = ctx,
					       .kind = HEAD_CALLER };
	u64 i;

	for (i = 0; i < nr && cm->budget <= UINT32_MAX - 4; i++)
		commit_budget_grow(cm);
	return btrfs_head_queue_attach(&cm->heads, &src);
}

/* A place a block took and gave back before the commit: no head */
static int skip_place(struct btrfs_commit *cm)
{
	u64 place;
	int ret;

	if (cm->stopped)
		return 0;
	ret = take_place(cm, &place);
	if (ret == 1)
		cm->stopped = true;
	return ret < 0 ? ret : 0;
}

int btrfs_commit_new_block(struct btrfs_commit *cm)
{
	/* not one free_new_leaf() may take: not a leaf of a tree simulation */
	u32 index;

	commit_budget_grow(cm);
	return commit_new_block(cm, 0, &index);
}

#define MAX_COWONLY_STAGES	8

int btrfs_commit_run(struct btrfs_commit *cm, struct btrfs_commit_result *res)
{
	const struct btrfs_tree_sim *ts = cm->feed.extent;
	u32 stage, before;
	int ret;

	ret = btrfs_commit_run_heads(cm);
	for (stage = 0; !ret && stage < MAX_COWONLY_STAGES; stage++) {
		before = cm->nr_copies;
		ret = cowonly_roots(cm);
		if (!ret)
			ret = btrfs_commit_run_heads(cm);
		if (cm->nr_copies == before)
			break;
	}
	if (ret)
		return ret;
	*res = (struct btrfs_commit_result){
		.blocks = cm->nr_copies,
		.extent_gained = ts->splits + ts->new_roots,
		.freed = cm->copies_freed,
		.cancelled = cm->copies_cancelled,
		.extent_freed = ts->leaves_freed + ts->nodes_freed,
		.inexact = stage == MAX_COWONLY_STAGES || cm->stopped,
		.no_free_space_tree = cm->no_fst,
	};
	memcpy(res->copies, cm->tree_copies, sizeof(res->copies));
	return 0;
}

void btrfs_commit_end(struct btrfs_commit *cm)
{
	if (!cm)
		return;
	btrfs_head_queue_release(&cm->heads);
	free(cm->copies);
	free(cm->fresh);
	free(cm->places);
	free(cm->marks);
	u64_index_free(&cm->copied);
	set_free(&cm->dirty_bgs);
	free(cm);
}

/* ---- csum-delete's commit: the deletion's heads fed to the commit model -- */

/* The run whose refs queued head @h first: the run that made the block */
static u32 head_first_run(const struct btrfs_commit_refs *c, const struct commit_head *h)
{
	u32 run = UINT32_MAX;
	u64 i;

	for (i = h->first; i < h->first + h->nr; i++)
		run = min_t(u32, run, c->notes[i].run);
	return run;
}

/*
 * The subvolume blocks run @run of the deletion copied take the next
 * places in copy order (their stand-in addresses), an ADD head each: the
 * unlink's and evict's copies first, those of the delayed items the
 * commit runs after its first run of the refs then.  A copy freed in the
 * transaction (a deleted leaf, a node balancing emptied) has no head
 * (check_ref_cleanup()) but its place stays taken, the cluster has moved
 * past it: it goes with the run of the copy before it.
 */
static int new_subvol_blocks(struct commit_state *st, u32 run)
{
	const u64 ns = st->fs_info->nodesize;
	u64 i, k, gap, prev = STAND_IN_START - ns;
	u32 prev_run = 0, r;
	int ret = 0;

	for (i = 0; i < st->nr_heads && !ret; i++) {
		const struct commit_head *h = &st->heads[i];

		if (h->bytenr < STAND_IN_START || head_net(st->refs, h->bytenr) <= 0)
			continue;
		r = head_first_run(st->c, h);
		gap = (h->bytenr - prev) / ns - 1;
		for (k = 0; prev_run == run && k < gap && !ret; k++)
			ret = skip_place(st->cm);
		prev = h->bytenr;
		prev_run = r;
		if (ret || r != run)
			continue;
		st->c->new_blocks++;
		ret = btrfs_commit_new_block(st->cm);
	}
	return ret;
}

static bool head_in_run(const struct btrfs_commit_refs *c, const struct commit_head *h,
			u32 run)
{
	u64 i;

	for (i = h->first; i < h->first + h->nr; i++)
		if (c->notes[i].run == run)
			return true;
	return false;
}

/* The next lone ref dropped and not met again (the first run's heads) */
static bool lone_peek(void *ctx, u64 *bytenr, u32 *arg)
{
	struct commit_state *st = ctx;
	const struct btrfs_delayed_refs_sim *refs = st->refs;

	struct packed_ref e;

	while (st->lone_pos < refs->nr_lone &&
	       packed_refs_state(refs->lone, st->lone_pos) != BTRFS_LONE_DROPPED)
		st->lone_pos++;
	if (st->lone_pos == refs->nr_lone)
		return false;
	packed_refs_get(refs->lone, st->lone_pos, &e);
	*bytenr = e.bytenr;
	*arg = LONE_HEAD | (u32)st->lone_pos;
	return true;
}

static void lone_next(void *ctx)
{
	struct commit_state *st = ctx;

	st->lone_pos++;
}

/*
 * The first run's lone heads: taken in bytenr order as the run reaches
 * them, from the deletion's own list
 */
static int queue_lone_heads(struct commit_state *st)
{
	const struct btrfs_delayed_refs_sim *refs = st->refs;
	u64 i, nr = 0;

	static_assert(BTRFS_SIM_MAX_LONE < LONE_HEAD, "a lone ref's index fits beside the bit");
	for (i = 0; i < refs->nr_lone; i++)
		nr += packed_refs_state(refs->lone, i) == BTRFS_LONE_DROPPED;
	st->lone_pos = 0;
	return nr ? btrfs_commit_queue_sorted_heads(st->cm, nr, lone_peek, lone_next, st) : 0;
}

/* One run of the deletion's heads (the image's extents) and of what they queue */
static int deletion_run(struct commit_state *st, u32 run)
{
	u64 i;
	int ret = 0;

	st->run = run;
	for (i = 0; i < st->nr_heads && !ret; i++) {
		const struct commit_head *h = &st->heads[i];

		if (h->bytenr < STAND_IN_START && head_in_run(st->c, h, run))
			ret = btrfs_commit_queue_head(st->cm, h->bytenr, (u32)i);
	}
	if (!ret && run == 0)
		ret = queue_lone_heads(st);
	return ret ? ret : btrfs_commit_run_heads(st->cm);
}

static void commit_refs_result(struct commit_state *st, const struct btrfs_commit_result *res)
{
	struct btrfs_commit_refs *c = st->c;
	const struct btrfs_csum_params *p = st->refs->params;
	int t;

	c->copies_total = 0;
	for (t = 0; t < BTRFS_COMMIT_NR_TREES; t++) {
		c->copies[t] = res->copies[t];
		c->copies_total += res->copies[t];
	}
	c->splits = st->ext.splits + st->ext.new_roots;
	/*
	 * a copy is an ADD and the original's DROP, a split's new leaf an
	 * ADD; one freed in the transaction (btrfs_del_leaf()) has its ADD
	 * cancelled by its DROP before its head ran, or after it a DROP of
	 * its own (a new head)
	 */
	c->nodes = 2 * c->copies_total + c->splits + res->freed -
		   2 * min_t(u64, res->freed, res->cancelled);
	c->bytes = c->nodes * btrfs_calc_delayed_ref_bytes(p->nodesize,
							    p->free_space_tree_opt, 1);
	if (st->ext.inexact)
		c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
	if (res->inexact)
		c->inexact |= BTRFS_COMMIT_INEXACT_ALLOC;
	if (res->no_free_space_tree)
		c->inexact |= BTRFS_COMMIT_INEXACT_NO_FST;
}

int btrfs_model_commit_refs(struct btrfs_fs_info *fs_info, u64 subvol,
			    const struct btrfs_delayed_refs_sim *refs,
			    struct btrfs_commit_refs *c)
{
	struct commit_state *st = calloc(1, sizeof(*st));
	struct btrfs_tree_sim *ext;
	struct btrfs_commit_feed feed = { .run_head = run_image_head, .subvols = &subvol,
					  .nr_subvols = 1 };
	struct btrfs_commit_result res;
	u32 run;
	int ret;

	if (!st)
		return -ENOMEM;
	st->fs_info = fs_info;
	st->c = c;
	st->refs = refs;
	ext = &st->ext;
	btrfs_tree_sim_init(ext, fs_info, &fs_info->extent_root);
	feed.ctx = st;
	feed.extent = ext;
	ret = build_heads(st);
	if (!ret)
		ret = check_quota(st);
	if (!ret)
		ret = btrfs_commit_start(fs_info, &feed, &st->cm);
	for (run = 0; run < c->runs && !ret; run++) {
		ret = new_subvol_blocks(st, run);
		if (!ret)
			ret = deletion_run(st, run);
	}
	if (!ret)
		ret = btrfs_commit_run(st->cm, &res);
	if (!ret)
		commit_refs_result(st, &res);
	btrfs_commit_end(st->cm);
	btrfs_tree_sim_release(ext);
	free(st->heads);
	free(st);
	return ret;
}
