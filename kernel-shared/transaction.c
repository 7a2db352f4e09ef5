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
 * each copy needs a METADATA_ITEM of its own, which may copy more.  The
 * set of copies is iterated until it stays the same.  New blocks take the
 * lowest free addresses of the metadata block groups (find_free_extent()
 * with the 1 GiB-aligned hint of btrfs_force_cow_block() and the metadata
 * cluster).  Behaviour reproduced: 6.7-6.18, measured on 6.18.44.
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
#define MAX_ROUNDS		16


struct u64_set {
	u64 *v;
	u32 nr;
	u32 cap;
	struct u64_index idx;		/* the values set_add() put in: no scan */
};

/*
 * What a run does to one extent item, as items of the tree simulation
 * (ctree.c struct btrfs_tree_sim) in the order the runs make them: heads
 * by bytenr, a head's ADD refs before its DROPs (select_delayed_ref()).
 */
enum ext_op_kind {
	EXT_TOUCH,			/* updated in place: only copied */
	EXT_INSERT,			/* alloc_reserved_tree_block() */
	EXT_DELETE,			/* __btrfs_free_extent(), last ref */
	EXT_EXTEND,			/* inline ref added, counted or removed */
};

struct ext_op {
	struct btrfs_key key;
	u64 seq;			/* order within a head */
	u32 phase;			/* 0, 1: the deletion's runs; 2: the commit's own */
	u32 search;			/* EXTEND: bytes the search asks for */
	int delta;			/* EXTEND: item size change */
	u32 size;			/* INSERT: item data bytes */
	u8 kind;
};

struct ext_ops {
	struct ext_op *v;
	u32 nr;
	u32 cap;
	u32 seq_base;			/* the image heads' ops come first */
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

/* One round of the commit: what it searches and what that copies */
struct commit_state {
	struct btrfs_fs_info *fs_info;
	struct btrfs_commit_refs *c;
	const struct btrfs_delayed_refs_sim *refs;
	u64 subvol;
	struct btrfs_root_ref tree_root;
	struct u64_set copied[BTRFS_COMMIT_NR_TREES];	/* image blocks */
	struct u64_set copied_level[BTRFS_COMMIT_NR_TREES];	/* same order */
	struct u64_set dirty_bgs;			/* block group starts */
	struct u64_set prev;				/* last round's copies */
	struct u64_set prev_level;
	u64 prev_new;					/* new blocks of the commit's copies */
	u64 freed_leaves;				/* extent leaves copied, then freed */
	struct u64_set addrs;				/* the new blocks' places */
	struct ext_ops ops;				/* the extent tree's item changes */
	struct extent_state es;				/* scratch: one extent item */
	struct commit_head *heads;			/* by bytenr */
	u64 nr_heads;
	/*
	 * What the image's heads do is the same in every round (their extent
	 * items, csums and free space are the image's): done in the first
	 * round, then taken from here.
	 */
	bool image_done;
	struct ext_ops image_ops;			/* sorted by ext_op_cmp() */
	struct u64_set image_copied[BTRFS_COMMIT_NR_TREES];
	struct u64_set image_copied_level[BTRFS_COMMIT_NR_TREES];
	struct u64_set image_dirty_bgs;
	u64 image_new_blocks, image_freed_blocks, image_freed_data;
	/*
	 * The extent tree's leaves as the image has them, loaded while the
	 * first round reads the heads' items (so each leaf is read once) and
	 * copied by every round's simulation.
	 */
	struct btrfs_tree_sim ext_image;
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

static void set_clear(struct u64_set *s)
{
	s->nr = 0;
	u64_index_clear(&s->idx);
}

/* @dst = @src, the values in the same order */
static int set_copy(struct u64_set *dst, const struct u64_set *src, bool unique)
{
	u32 i;
	int ret = 0;

	set_clear(dst);
	for (i = 0; i < src->nr && ret >= 0; i++)
		ret = unique ? set_add(dst, src->v[i]) : set_push(dst, src->v[i]);
	return ret < 0 ? ret : 0;
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
	if (c->nr_notes == c->cap_notes) {
		u64 cap = c->cap_notes ? c->cap_notes * 2 : 128;
		struct btrfs_commit_node *n;

		if (cap > SIZE_MAX / sizeof(*n))
			return -ENOMEM;
		n = realloc(c->notes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->notes = n;
		c->cap_notes = cap;
	}
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
int btrfs_commit_note_refs(struct btrfs_commit_refs *c,
			   const struct btrfs_delayed_refs_sim *refs)
{
	u64 i;
	int ret;

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

/* ---- searches ----------------------------------------------------------- */

static const struct btrfs_root_ref *tree_root(struct commit_state *st, int tree)
{
	struct btrfs_fs_info *fs_info = st->fs_info;

	switch (tree) {
	case BTRFS_COMMIT_EXTENT:
		return &fs_info->extent_root;
	case BTRFS_COMMIT_CSUM:
		return &fs_info->csum_root;
	case BTRFS_COMMIT_FREE_SPACE:
		return &fs_info->free_space_root;
	case BTRFS_COMMIT_BLOCK_GROUP:
		return btrfs_block_group_root(fs_info);
	case BTRFS_COMMIT_ROOT:
		return &st->tree_root;
	default:
		return &fs_info->dev_root;
	}
}

static int bg_tree_index(const struct btrfs_fs_info *fs_info)
{
	return btrfs_block_group_root(fs_info) == &fs_info->extent_root ?
		BTRFS_COMMIT_EXTENT : BTRFS_COMMIT_BLOCK_GROUP;
}

/*
 * The COW search of @key in @tree: every block on its path is copied (once).
 * @path is left holding it when given.
 */
static int cow_search(struct commit_state *st, int tree, u64 objectid, u8 type,
		      u64 offset, struct btrfs_path *keep)
{
	const struct btrfs_root_ref *root = tree_root(st, tree);
	struct btrfs_key key = { .objectid = objectid, .type = type, .offset = offset };
	struct btrfs_path path = { 0 };
	int level, ret;

	if (!root->found || !root->bytenr)
		return 0;
	ret = btrfs_search_slot(st->fs_info, root, &key, &path, BTRFS_IO_OTHER);
	if (ret < 0)
		return ret;
	for (level = 0; level < BTRFS_MAX_LEVEL; level++) {
		struct btrfs_tree_block *eb = path.nodes[level];
		int added;

		if (!eb)
			continue;
		added = set_add(&st->copied[tree], eb->start);
		if (added == 1)
			added = set_push(&st->copied_level[tree], eb->level);
		if (added < 0) {
			btrfs_release_path(&path);
			return added;
		}
	}
	if (keep)
		*keep = path;
	else
		btrfs_release_path(&path);
	return ret;
}

/* The nodes (level 1 and up) on the path of @key: copied, the leaf not */
static int cow_search_nodes(struct commit_state *st, int tree, const struct btrfs_key *key)
{
	const struct btrfs_root_ref *root = tree_root(st, tree);
	struct btrfs_path path = { 0 };
	int level, ret;

	ret = btrfs_search_slot(st->fs_info, root, key, &path, BTRFS_IO_OTHER);
	if (ret < 0)
		return ret;
	ret = 0;
	for (level = 1; level < BTRFS_MAX_LEVEL && !ret; level++) {
		struct btrfs_tree_block *eb = path.nodes[level];

		if (!eb)
			continue;
		ret = set_add(&st->copied[tree], eb->start);
		if (ret == 1)
			ret = set_push(&st->copied_level[tree], eb->level);
	}
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
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

/* btrfs_add_to_free_space_tree() / btrfs_remove_from_free_space_tree() */
static int free_space_change(struct commit_state *st, u64 start, u64 len, bool add)
{
	const struct btrfs_block_group *bg = btrfs_lookup_block_group(st->fs_info, start);
	struct btrfs_key keys[3];
	u32 i, n;
	int ret;

	if (!bg)
		return 0;
	ret = set_add(&st->dirty_bgs, bg->start);
	if (ret < 0)
		return ret;
	if (!btrfs_fs_compat_ro(st->fs_info, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE)) {
		st->c->inexact |= BTRFS_COMMIT_INEXACT_NO_FST;
		return 0;
	}
	n = btrfs_free_space_change_keys(bg, start, len, add, keys);
	for (i = 0, ret = 0; i < n && ret >= 0; i++)
		ret = cow_search(st, BTRFS_COMMIT_FREE_SPACE, keys[i].objectid, keys[i].type,
				 keys[i].offset, NULL);
	return ret < 0 ? ret : 0;
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

		ret = cow_search(st, BTRFS_COMMIT_CSUM, BTRFS_EXTENT_CSUM_OBJECTID,
				 BTRFS_EXTENT_CSUM_KEY, end - 1, &path);
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

static int ext_op_add(struct ext_ops *ops, u32 phase, u8 kind, const struct btrfs_key *key,
		      u32 search, int delta, u32 size)
{
	if (array_grow((void **)&ops->v, ops->nr, &ops->cap, sizeof(*ops->v)))
		return -ENOMEM;
	ops->v[ops->nr] = (struct ext_op){
		.key = *key, .seq = ops->seq_base + ops->nr, .phase = phase, .kind = kind,
		.search = search, .delta = delta, .size = size,
	};
	ops->nr++;
	return 0;
}

static int ext_op_cmp(const void *pa, const void *pb)
{
	const struct ext_op *a = pa, *b = pb;

	if (a->phase != b->phase)
		return a->phase < b->phase ? -1 : 1;
	if (a->key.objectid != b->key.objectid)
		return a->key.objectid < b->key.objectid ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

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
		return btrfs_tree_sim_preload(&st->ext_image, &es->key);
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
		   const struct btrfs_commit_node *n, u32 phase)
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
	return ext_op_add(&st->ops, phase, EXT_EXTEND, &es->key, sz, delta, 0);
}

/* __btrfs_free_extent() of one DROP node; 1 when the last ref went */
static int run_drop(struct commit_state *st, struct extent_state *es,
		    const struct btrfs_commit_node *n, u32 phase)
{
	u64 drop = (u64)-n->ref_mod;
	struct inline_ref *r = find_inline(es, n);
	int ret;

	if (es->refs <= drop) {
		es->refs = 0;
		es->exists = false;
		ret = ext_op_add(&st->ops, phase, EXT_DELETE, &es->key, 0, 0, 0);
		return ret ? ret : 1;
	}
	es->refs -= drop;
	if (!r) {
		if (es->keyed)
			st->c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
		return ext_op_add(&st->ops, phase, EXT_TOUCH, &es->key, 0, 0, 0);
	}
	if (r->count > drop) {
		r->count -= drop;
		return ext_op_add(&st->ops, phase, EXT_TOUCH, &es->key, 0, 0, 0);
	}
	/* the ref goes: btrfs_truncate_item() */
	es->size -= inline_ref_size(r->type);
	ret = ext_op_add(&st->ops, phase, EXT_EXTEND, &es->key, 0,
			 -(int)inline_ref_size(r->type), 0);
	*r = es->inl[--es->nr];
	return ret;
}

/* The freed extent's csums, free space and block group */
static int extent_freed(struct commit_state *st, const struct commit_head *h)
{
	if (h->is_data) {
		st->c->freed_data++;
		return del_csums(st, h->bytenr, h->num_bytes) ?:
			free_space_change(st, h->bytenr, h->num_bytes, true);
	}
	st->c->freed_blocks++;
	return free_space_change(st, h->bytenr, st->fs_info->nodesize, true);
}

/* The net ref change the transaction gives @bytenr's extent */
static int64_t head_net(const struct btrfs_delayed_refs_sim *refs, u64 bytenr)
{
	const struct btrfs_sim_head *h = btrfs_sim_find_head(refs, bytenr);

	return h ? h->ran_mod + h->ref_mod : 0;
}

/* One image extent's runs: its ADD nodes, then its DROPs, run by run */
static int image_head(struct commit_state *st, const struct commit_head *h)
{
	struct btrfs_commit_refs *c = st->c;
	struct extent_state *es = &st->es;
	u32 run;
	u64 i;
	int ret;

	ret = load_extent(st, h, es);
	if (ret)
		return ret;
	if (!es->exists) {
		c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
		return 0;
	}
	for (run = 0; run < c->runs; run++) {
		for (i = h->first; i < h->first + h->nr; i++) {
			const struct btrfs_commit_node *n = &c->notes[i];

			if (n->run == run && n->ref_mod > 0) {
				ret = run_add(st, es, n, run);
				if (ret)
					return ret;
			}
		}
		for (i = h->first; i < h->first + h->nr && es->exists; i++) {
			const struct btrfs_commit_node *n = &c->notes[i];

			if (n->run == run && n->ref_mod < 0) {
				ret = run_drop(st, es, n, run);
				if (ret == 1)
					return extent_freed(st, h);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

/* The run in which a new subvolume block's ADD ran */
static u32 stand_in_run(const struct btrfs_commit_refs *c, const struct commit_head *h)
{
	u64 i;

	for (i = h->first; i < h->first + h->nr; i++)
		if (c->notes[i].ref_mod > 0)
			return c->notes[i].run;
	return 0;
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

static int free_places(struct commit_state *st, u64 nr)
{
	if (nr > UINT32_MAX)
		return -ENOMEM;
	return btrfs_free_block_places(st->fs_info, (u32)nr, NULL, NULL,
				       &st->addrs.v, &st->addrs.nr, &st->addrs.cap);
}

/* A new block at @addr: its extent item, the place out of the free space */
static int new_block(struct commit_state *st, u64 addr, u32 phase)
{
	struct btrfs_key key = { .objectid = addr };

	key.type = tree_block_key(st->fs_info, 0, &key.offset);
	return ext_op_add(&st->ops, phase, EXT_INSERT, &key, 0, 0,
			  tree_block_item_size(st->fs_info)) ?:
		free_space_change(st, addr, st->fs_info->nodesize, false);
}

/*
 * The deletion's heads: image extents changed or freed, and the new
 * subvolume blocks, which take the first free places.
 */
static int image_heads(struct commit_state *st)
{
	struct btrfs_commit_refs *c = st->c;
	u64 i;
	int ret;

	for (i = 0; i < st->nr_heads; i++) {
		const struct commit_head *h = &st->heads[i];

		if (h->bytenr >= STAND_IN_START) {
			if (head_net(st->refs, h->bytenr) > 0)
				c->new_blocks++;
			continue;
		}
		ret = image_head(st, h);
		if (ret)
			return ret;
	}
	return 0;
}

/* The first round's image heads, kept for the next rounds */
static int image_heads_keep(struct commit_state *st)
{
	struct btrfs_commit_refs *c = st->c;
	int t, ret = 0;

	st->image_ops = st->ops;
	qsort(st->image_ops.v, st->image_ops.nr, sizeof(*st->image_ops.v), ext_op_cmp);
	memset(&st->ops, 0, sizeof(st->ops));
	st->ops.seq_base = st->image_ops.nr;
	for (t = 0; t < BTRFS_COMMIT_NR_TREES && !ret; t++)
		ret = set_copy(&st->image_copied[t], &st->copied[t], true) ?:
		      set_copy(&st->image_copied_level[t], &st->copied_level[t], false);
	if (!ret)
		ret = set_copy(&st->image_dirty_bgs, &st->dirty_bgs, true);
	st->image_new_blocks = c->new_blocks;
	st->image_freed_blocks = c->freed_blocks;
	st->image_freed_data = c->freed_data;
	st->image_done = true;
	return ret;
}

/* The next rounds start from what the image heads did */
static int image_heads_restore(struct commit_state *st)
{
	struct btrfs_commit_refs *c = st->c;
	int t, ret = 0;

	for (t = 0; t < BTRFS_COMMIT_NR_TREES && !ret; t++)
		ret = set_copy(&st->copied[t], &st->image_copied[t], true) ?:
		      set_copy(&st->copied_level[t], &st->image_copied_level[t], false);
	if (!ret)
		ret = set_copy(&st->dirty_bgs, &st->image_dirty_bgs, true);
	c->new_blocks = st->image_new_blocks;
	c->freed_blocks = st->image_freed_blocks;
	c->freed_data = st->image_freed_data;
	return ret;
}

static int deletion_heads(struct commit_state *st)
{
	struct btrfs_commit_refs *c = st->c;
	u64 i, k = 0;
	int ret;

	if (st->image_done) {
		ret = image_heads_restore(st);
	} else {
		ret = image_heads(st);
		if (!ret)
			ret = image_heads_keep(st);
	}
	if (ret)
		return ret;
	ret = free_places(st, c->new_blocks + st->prev_new);
	if (ret)
		return ret;
	/* stand-ins were handed out in allocation order */
	for (i = 0; i < st->nr_heads && k < st->addrs.nr; i++) {
		const struct commit_head *h = &st->heads[i];

		if (h->bytenr < STAND_IN_START || head_net(st->refs, h->bytenr) <= 0)
			continue;
		ret = new_block(st, st->addrs.v[k++], stand_in_run(c, h));
		if (ret)
			return ret;
	}
	return 0;
}

/* The image heads' ops and this round's, merged in ext_op_cmp() order */
static const struct ext_op *next_op(const struct commit_state *st, u64 *i, u64 *j)
{
	const struct ext_op *a = *i < st->image_ops.nr ? &st->image_ops.v[*i] : NULL;
	const struct ext_op *b = *j < st->ops.nr ? &st->ops.v[*j] : NULL;

	if (a && (!b || ext_op_cmp(a, b) < 0)) {
		(*i)++;
		return a;
	}
	(*j)++;
	return b;
}

/*
 * The extent tree's items changed in the simulation; the leaves they
 * touch (and the siblings the pushes COW) are the copies, with the nodes
 * above them.
 */
static int run_extent_ops(struct commit_state *st)
{
	struct btrfs_fs_info *fs_info = st->fs_info;
	struct btrfs_tree_sim ts;
	u64 i, j;
	u32 g, l;
	int ret = 0;

	qsort(st->ops.v, st->ops.nr, sizeof(*st->ops.v), ext_op_cmp);
	btrfs_tree_sim_init(&ts, fs_info, &fs_info->extent_root);
	ts.source = &st->ext_image;
	for (i = 0, j = 0; i + j < st->image_ops.nr + st->ops.nr && ret >= 0;) {
		const struct ext_op *op = next_op(st, &i, &j);

		switch (op->kind) {
		case EXT_TOUCH:
			ret = btrfs_tree_sim_touch(&ts, &op->key);
			break;
		case EXT_INSERT:
			ret = btrfs_tree_sim_insert(&ts, &op->key, op->size);
			break;
		case EXT_DELETE:
			ret = btrfs_tree_sim_delete(&ts, &op->key, true);
			break;
		default:
			ret = extent_item_resize(&ts, op);
			break;
		}
		if (ret == 1) {
			/* a key the image does not have where the model expects it */
			st->c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
			ret = 0;
		}
	}
	if (ret < 0)
		goto out;
	if (ts.inexact)
		st->c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
	ret = 0;
	for (g = 0; g < ts.nr_groups && !ret; g++) {
		const struct btrfs_sim_group *grp = &ts.groups[g];
		bool any = false;

		for (l = 0; l < grp->nr && !ret; l++) {
			const struct btrfs_sim_items_leaf *lf = grp->leaves[l];

			if (!lf->touched || !lf->start)
				continue;
			any = true;
			ret = set_add(&st->copied[BTRFS_COMMIT_EXTENT], lf->start);
			if (ret == 1)
				ret = set_push(&st->copied_level[BTRFS_COMMIT_EXTENT], 0);
		}
		if (!ret && any && grp->has_parent) {
			struct btrfs_key key = { 0 };

			if (grp->has_lo)
				key = grp->lo;
			ret = cow_search_nodes(st, BTRFS_COMMIT_EXTENT, &key);
		}
	}
	/* leaves freed were copied first: the copy's refs cancel */
	for (i = 0; i < ts.nr_freed_starts && ret >= 0; i++) {
		ret = set_add(&st->copied[BTRFS_COMMIT_EXTENT], ts.freed_starts[i]);
		if (ret == 1)
			ret = set_push(&st->copied_level[BTRFS_COMMIT_EXTENT], 0);
	}
	st->freed_leaves = ts.nr_freed_starts;
	st->c->splits = ts.splits + ts.new_roots;
	ret = ret < 0 ? ret : 0;
out:
	btrfs_tree_sim_release(&ts);
	return ret;
}

/* The ROOT_ITEM of @objectid: the last one of that objectid */
static int update_root(struct commit_state *st, u64 objectid)
{
	int ret = cow_search(st, BTRFS_COMMIT_ROOT, objectid, BTRFS_ROOT_ITEM_KEY, (u64)-1, NULL);

	return ret < 0 ? ret : 0;
}

static const u64 cowonly_ids[BTRFS_COMMIT_NR_TREES] = {
	[BTRFS_COMMIT_EXTENT] = BTRFS_EXTENT_TREE_OBJECTID,
	[BTRFS_COMMIT_CSUM] = BTRFS_CSUM_TREE_OBJECTID,
	[BTRFS_COMMIT_FREE_SPACE] = BTRFS_FREE_SPACE_TREE_OBJECTID,
	[BTRFS_COMMIT_BLOCK_GROUP] = BTRFS_BLOCK_GROUP_TREE_OBJECTID,
	[BTRFS_COMMIT_ROOT] = 0,
	[BTRFS_COMMIT_DEV] = BTRFS_DEV_TREE_OBJECTID,
};

/* One round: everything the commit changes, given last round's copies */
static int commit_round(struct commit_state *st)
{
	struct btrfs_fs_info *fs_info = st->fs_info;
	const u32 last = 2;
	u64 i, k;
	int t, ret;

	ret = deletion_heads(st);
	if (ret)
		return ret;
	/* the commit's own copies: the new ones after the subvolume's */
	for (k = st->c->new_blocks; k < st->addrs.nr; k++) {
		ret = new_block(st, st->addrs.v[k], last);
		if (ret)
			return ret;
	}
	/* ... and the originals freed */
	for (i = 0; i < st->prev.nr; i++) {
		struct btrfs_key key = { .objectid = st->prev.v[i] };

		key.type = tree_block_key(fs_info, st->prev_level.v[i], &key.offset);
		ret = ext_op_add(&st->ops, last, EXT_DELETE, &key, 0, 0, 0);
		if (!ret)
			ret = free_space_change(st, st->prev.v[i], fs_info->nodesize, true);
		if (ret < 0)
			return ret;
	}
	/* btrfs_run_dev_stats(): the first commit after the mount */
	for (i = 0; i < fs_info->nr_devices; i++) {
		if (!fs_info->devices[i].present)
			continue;
		ret = cow_search(st, BTRFS_COMMIT_DEV, BTRFS_DEV_STATS_OBJECTID, BTRFS_PERSISTENT_ITEM_KEY,
				 fs_info->devices[i].devid, NULL);
		if (ret < 0)
			return ret;
	}
	/* update_block_group_item() of every dirty block group */
	for (i = 0; i < st->dirty_bgs.nr; i++) {
		const struct btrfs_block_group *bg = btrfs_lookup_block_group(fs_info, st->dirty_bgs.v[i]);
		struct btrfs_key key = { .objectid = bg->start, .type = BTRFS_BLOCK_GROUP_ITEM_KEY,
					 .offset = bg->length };

		if (bg_tree_index(fs_info) == BTRFS_COMMIT_EXTENT)
			ret = ext_op_add(&st->ops, last, EXT_TOUCH, &key, 0, 0, 0);
		else
			ret = cow_search(st, BTRFS_COMMIT_BLOCK_GROUP, key.objectid, key.type,
					 key.offset, NULL);
		if (ret < 0)
			return ret;
	}
	ret = run_extent_ops(st);
	if (ret)
		return ret;
	/* the root items of the subvolume and of the trees copied */
	ret = update_root(st, st->subvol);
	for (t = 0; !ret && t < BTRFS_COMMIT_NR_TREES; t++)
		if (cowonly_ids[t] && st->copied[t].nr)
			ret = update_root(st, cowonly_ids[t]);
	return ret < 0 ? ret : 0;
}

static u64 copies_of(const struct commit_state *st)
{
	u64 n = 0;
	int t;

	for (t = 0; t < BTRFS_COMMIT_NR_TREES; t++)
		n += st->copied[t].nr;
	return n;
}

static void round_reset(struct commit_state *st)
{
	int t;

	for (t = 0; t < BTRFS_COMMIT_NR_TREES; t++) {
		set_clear(&st->copied[t]);
		set_clear(&st->copied_level[t]);
	}
	set_clear(&st->dirty_bgs);
	st->ops.nr = 0;
	st->freed_leaves = 0;
	st->c->new_blocks = 0;
	st->c->freed_blocks = 0;
	st->c->freed_data = 0;
	st->c->splits = 0;
}

/*
 * This round's copies (all trees) are the next round's blocks freed; the
 * next round's new blocks are their copies, less the extent leaves freed
 * (their copies went too), plus the leaves splits made.
 */
static int round_keep(struct commit_state *st)
{
	int t, ret;
	u64 i;

	set_clear(&st->prev);
	set_clear(&st->prev_level);
	for (t = 0; t < BTRFS_COMMIT_NR_TREES; t++)
		for (i = 0; i < st->copied[t].nr; i++) {
			ret = set_push(&st->prev, st->copied[t].v[i]);
			if (!ret)
				ret = set_push(&st->prev_level, st->copied_level[t].v[i]);
			if (ret)
				return ret;
		}
	st->prev_new = st->prev.nr - min_t(u64, st->prev.nr, st->freed_leaves) + st->c->splits;
	return 0;
}

/* Quotas on: the commit writes the quota tree too, not followed here */
static int check_quota(struct commit_state *st)
{
	struct btrfs_key key = { .objectid = BTRFS_QUOTA_TREE_OBJECTID,
				 .type = BTRFS_ROOT_ITEM_KEY };
	struct btrfs_path path = { 0 };
	int ret;

	ret = btrfs_search_slot(st->fs_info, &st->tree_root, &key, &path, BTRFS_IO_OTHER);
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

int btrfs_model_commit_refs(struct btrfs_fs_info *fs_info, u64 subvol,
			    const struct btrfs_delayed_refs_sim *refs,
			    struct btrfs_commit_refs *c)
{
	const struct btrfs_csum_params *p = refs->params;
	struct commit_state *st = calloc(1, sizeof(*st));
	u64 last = (u64)-1, all = 0;
	int round, t, ret = 0;

	if (!st)
		return -ENOMEM;
	st->fs_info = fs_info;
	st->c = c;
	st->refs = refs;
	st->subvol = subvol;
	st->tree_root = btrfs_tree_root_ref(fs_info);
	btrfs_tree_sim_init(&st->ext_image, fs_info, &fs_info->extent_root);
	ret = build_heads(st);
	if (!ret)
		ret = check_quota(st);
	if (ret)
		goto out;
	for (round = 0; round < MAX_ROUNDS; round++) {
		round_reset(st);
		ret = commit_round(st);
		if (ret)
			goto out;
		all = copies_of(st) + c->splits;
		if (all == last)
			break;
		last = all;
		ret = round_keep(st);
		if (ret)
			goto out;
	}
	if (round == MAX_ROUNDS)
		c->inexact |= BTRFS_COMMIT_INEXACT_ALLOC;
	c->copies_total = 0;
	for (t = 0; t < BTRFS_COMMIT_NR_TREES; t++) {
		c->copies[t] = st->copied[t].nr;
		c->copies_total += st->copied[t].nr;
	}
	c->nodes = 2 * c->copies_total - min_t(u64, c->copies_total, st->freed_leaves) +
		c->splits;
	c->bytes = c->nodes * btrfs_calc_delayed_ref_bytes(p->nodesize,
							    p->free_space_tree_opt, 1);
out:
	for (t = 0; t < BTRFS_COMMIT_NR_TREES; t++) {
		set_free(&st->copied[t]);
		set_free(&st->copied_level[t]);
	}
	set_free(&st->dirty_bgs);
	for (t = 0; t < BTRFS_COMMIT_NR_TREES; t++) {
		set_free(&st->image_copied[t]);
		set_free(&st->image_copied_level[t]);
	}
	set_free(&st->image_dirty_bgs);
	free(st->image_ops.v);
	btrfs_tree_sim_release(&st->ext_image);
	set_free(&st->prev);
	set_free(&st->prev_level);
	set_free(&st->addrs);
	free(st->ops.v);
	free(st->heads);
	free(st);
	return ret;
}
