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
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/transaction.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/messages.h"

/* Copies of the simulation have addresses at or above this (extent-tree.c) */
#define STAND_IN_START		(1ULL << 62)
#define MAX_ROUNDS		16

/* The free space tree's item types (fs/btrfs/free-space-tree.h) */
#define FREE_SPACE_INFO_KEY	198
#define FREE_SPACE_EXTENT_KEY	199
#define DEV_STATS_OBJECTID	0ULL
#define PERSISTENT_ITEM_KEY	249

struct u64_set {
	u64 *v;
	u64 nr;
	u64 cap;
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
	/* extent-tree leaves whose items the commit inserts or deletes */
	struct u64_set leaf_start;
	struct u64_set leaf_free;			/* free bytes in the image */
	struct u64_set leaf_ins;			/* bytes inserted (headers too) */
	struct u64_set leaf_del;			/* bytes deleted */
};

static int set_push(struct u64_set *s, u64 v)
{
	if (s->nr == s->cap) {
		u64 cap = s->cap ? s->cap * 2 : 32;
		u64 *n = realloc(s->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->v = n;
		s->cap = cap;
	}
	s->v[s->nr++] = v;
	return 0;
}

static bool set_has(const struct u64_set *s, u64 v)
{
	u64 i;

	for (i = 0; i < s->nr; i++)
		if (s->v[i] == v)
			return true;
	return false;
}

/* Add @v once: 1 if added */
static int set_add(struct u64_set *s, u64 v)
{
	int ret;

	if (set_has(s, v))
		return 0;
	ret = set_push(s, v);
	return ret ? ret : 1;
}

static void set_free(struct u64_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void btrfs_commit_refs_release(struct btrfs_commit_refs *c)
{
	free(c->heads);
	c->heads = NULL;
	c->nr_heads = c->cap_heads = 0;
}

static struct btrfs_commit_head *find_noted(struct btrfs_commit_refs *c, u64 bytenr)
{
	u64 i;

	for (i = 0; i < c->nr_heads; i++)
		if (c->heads[i].bytenr == bytenr)
			return &c->heads[i];
	return NULL;
}

/* The inline ref an ADD of @type may add to the extent item */
static u32 inline_ref_bytes(u8 type)
{
	switch (type) {
	case BTRFS_EXTENT_DATA_REF_KEY:
		return 1 + sizeof(struct btrfs_extent_data_ref);
	case BTRFS_SHARED_DATA_REF_KEY:
		return 1 + 8 + sizeof(struct btrfs_shared_data_ref);
	default:
		return 1 + 8;
	}
}

static int note_head(struct btrfs_commit_refs *c, u64 bytenr, u64 num_bytes,
		     u64 level, bool is_data, u64 grow)
{
	struct btrfs_commit_head *h = find_noted(c, bytenr);

	if (h) {
		h->grow += grow;
		return 0;
	}
	if (c->nr_heads == c->cap_heads) {
		u64 cap = c->cap_heads ? c->cap_heads * 2 : 64;
		struct btrfs_commit_head *n = realloc(c->heads, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->heads = n;
		c->cap_heads = cap;
	}
	c->heads[c->nr_heads++] = (struct btrfs_commit_head){
		.bytenr = bytenr, .num_bytes = num_bytes, .level = level,
		.is_data = is_data, .grow = grow,
	};
	return 0;
}

/*
 * A head changes its extent item when it runs with a ref node left
 * (nodes merged down to 0 are dropped before) or with an extent op.
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
		ret = note_head(c, r->bytenr, h ? h->num_bytes : 0,
				r->type == BTRFS_TREE_BLOCK_REF_KEY ||
				r->type == BTRFS_SHARED_BLOCK_REF_KEY ? r->owner : 0,
				r->type == BTRFS_EXTENT_DATA_REF_KEY ||
				r->type == BTRFS_SHARED_DATA_REF_KEY,
				r->ref_mod > 0 ? inline_ref_bytes(r->type) : 0);
		if (ret)
			return ret;
	}
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

static const struct btrfs_block_group *bg_of(const struct btrfs_fs_info *fs_info, u64 bytenr)
{
	u32 lo = 0, hi = fs_info->nr_block_groups;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		const struct btrfs_block_group *bg = &fs_info->block_groups[mid];

		if (bytenr < bg->start)
			hi = mid;
		else if (bytenr >= bg->start + bg->length)
			lo = mid + 1;
		else
			return bg;
	}
	return NULL;
}

/* btrfs_add_to_free_space_tree() / btrfs_remove_from_free_space_tree() */
static int free_space_change(struct commit_state *st, u64 start, u64 len, bool add)
{
	const struct btrfs_block_group *bg = bg_of(st->fs_info, start);
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
	ret = cow_search(st, BTRFS_COMMIT_FREE_SPACE, bg->start, FREE_SPACE_INFO_KEY,
			 bg->length, NULL);
	if (ret < 0)
		return ret;
	if (add) {
		/* the extents left and right of the range, then the new one */
		ret = cow_search(st, BTRFS_COMMIT_FREE_SPACE, start - 1, (u8)-1, (u64)-1, NULL);
		if (ret >= 0)
			ret = cow_search(st, BTRFS_COMMIT_FREE_SPACE, start + len,
					 FREE_SPACE_EXTENT_KEY, (u64)-1, NULL);
	} else {
		/* the free extent (or bitmap) holding the range */
		ret = cow_search(st, BTRFS_COMMIT_FREE_SPACE, start, (u8)-1, (u64)-1, NULL);
	}
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

/* Account @ins bytes inserted and @del deleted in the extent-tree leaf @start */
static int leaf_account(struct commit_state *st, u64 start, u32 free, u32 ins, u32 del)
{
	u64 i;
	int ret;

	for (i = 0; i < st->leaf_start.nr; i++)
		if (st->leaf_start.v[i] == start)
			break;
	if (i == st->leaf_start.nr) {
		ret = set_push(&st->leaf_start, start);
		if (!ret)
			ret = set_push(&st->leaf_free, free);
		if (!ret)
			ret = set_push(&st->leaf_ins, 0);
		if (!ret)
			ret = set_push(&st->leaf_del, 0);
		if (ret)
			return ret;
	}
	st->leaf_ins.v[i] += ins;
	st->leaf_del.v[i] += del;
	return 0;
}

static int leaf_change(struct commit_state *st, const struct btrfs_tree_block *eb,
		       u32 ins, u32 del)
{
	return leaf_account(st, eb->start, leaf_free(st->fs_info, eb), ins, del);
}

/*
 * A leaf the inserts do not fit splits (split_leaf(): a new block, one ref
 * more); one the deletes leave under a third full pushes its items to its
 * siblings (btrfs_del_items()), which copies them.  Neither is replayed:
 * the figure is flagged.
 */
static void check_leaves(struct commit_state *st)
{
	const u32 lds = btrfs_leaf_data_size(st->fs_info->nodesize);
	u64 i;

	for (i = 0; i < st->leaf_start.nr; i++) {
		u64 used = lds - st->leaf_free.v[i];

		if (st->leaf_ins.v[i] > st->leaf_free.v[i])
			st->c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
		if (st->leaf_del.v[i] &&
		    used + st->leaf_ins.v[i] - min_t(u64, used, st->leaf_del.v[i]) < lds / 3)
			st->c->inexact |= BTRFS_COMMIT_INEXACT_SPLIT;
	}
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

static u8 tree_block_key(const struct btrfs_fs_info *fs_info, u64 level, u64 *offset)
{
	if (btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA)) {
		*offset = level;
		return BTRFS_METADATA_ITEM_KEY;
	}
	*offset = fs_info->nodesize;
	return BTRFS_EXTENT_ITEM_KEY;
}

/* The refs the image's extent item of @h holds, 0 if there is none */
static int image_refs(struct commit_state *st, const struct btrfs_commit_head *h,
		      u64 *refs, u32 *room, u64 *leaf, u32 *item_bytes)
{
	struct btrfs_fs_info *fs_info = st->fs_info;
	struct btrfs_key key = { .objectid = h->bytenr };
	struct btrfs_path path = { 0 };
	const struct btrfs_extent_item *ei;
	u32 size;
	int ret;

	*refs = 0;
	*room = 0;
	*leaf = 0;
	*item_bytes = 0;
	if (h->is_data) {
		key.type = BTRFS_EXTENT_ITEM_KEY;
		key.offset = h->num_bytes;
	} else {
		key.type = tree_block_key(fs_info, h->level, &key.offset);
	}
	ret = btrfs_search_slot(fs_info, &fs_info->extent_root, &key, &path, BTRFS_IO_OTHER);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		ei = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		if (size >= sizeof(*ei))
			*refs = btrfs_stack_extent_refs(ei);
		*item_bytes = size + sizeof(struct btrfs_item);
	}
	if (path.nodes[0]) {
		*room = leaf_free(fs_info, path.nodes[0]);
		*leaf = path.nodes[0]->start;
	}
	btrfs_release_path(&path);
	return 0;
}

/* The net ref change the transaction gives @bytenr's extent */
static int64_t head_net(const struct btrfs_delayed_refs_sim *refs, u64 bytenr)
{
	const struct btrfs_sim_head *h = btrfs_sim_find_head(refs, bytenr);

	return h ? h->ran_mod + h->ref_mod : 0;
}

/*
 * What the deletion's own heads change: extent items, csums and free
 * space of the extents that lose their last ref, block groups.  Counts
 * the new subvolume blocks.
 */
static int deletion_heads(struct commit_state *st)
{
	struct btrfs_fs_info *fs_info = st->fs_info;
	struct btrfs_commit_refs *c = st->c;
	u64 i, off;
	int ret;

	for (i = 0; i < c->nr_heads; i++) {
		const struct btrfs_commit_head *h = &c->heads[i];
		int64_t net = head_net(st->refs, h->bytenr);
		u64 refs, leaf;
		u32 room, item_bytes;
		u8 type;

		if (h->bytenr >= STAND_IN_START) {
			if (net > 0)
				c->new_blocks++;
			continue;
		}
		ret = image_refs(st, h, &refs, &room, &leaf, &item_bytes);
		if (ret)
			return ret;
		if (h->is_data)
			ret = cow_search(st, BTRFS_COMMIT_EXTENT, h->bytenr,
					 BTRFS_EXTENT_ITEM_KEY, h->num_bytes, NULL);
		else {
			type = tree_block_key(fs_info, h->level, &off);
			ret = cow_search(st, BTRFS_COMMIT_EXTENT, h->bytenr, type, off, NULL);
		}
		if (ret < 0)
			return ret;
		if ((int64_t)refs + net > 0) {
			/* the item stays and may gain inline refs */
			if (leaf && h->grow) {
				ret = leaf_account(st, leaf, room, h->grow, 0);
				if (ret)
					return ret;
			}
			continue;
		}
		if (leaf) {
			ret = leaf_account(st, leaf, room, 0, item_bytes);
			if (ret)
				return ret;
		}
		if (h->is_data) {
			c->freed_data++;
			ret = del_csums(st, h->bytenr, h->num_bytes);
			if (!ret)
				ret = free_space_change(st, h->bytenr, h->num_bytes, true);
		} else {
			c->freed_blocks++;
			ret = free_space_change(st, h->bytenr, fs_info->nodesize, true);
		}
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * One new block at @cur: its METADATA_ITEM inserted (the leaf must take
 * it), the place taken from the free space tree.
 */
static int new_block_at(struct commit_state *st, u64 cur)
{
	struct btrfs_fs_info *fs_info = st->fs_info;
	struct btrfs_path path = { 0 };
	u64 off;
	u8 type = tree_block_key(fs_info, 0, &off);
	u32 bytes = sizeof(struct btrfs_item) + sizeof(struct btrfs_extent_item) +
		sizeof(struct btrfs_extent_inline_ref) +
		(type == BTRFS_EXTENT_ITEM_KEY ? sizeof(struct btrfs_tree_block_info) : 0);
	int ret;

	ret = cow_search(st, BTRFS_COMMIT_EXTENT, cur, type, off, &path);
	if (ret < 0)
		return ret;
	if (path.nodes[0])
		ret = leaf_change(st, path.nodes[0], bytes, 0);
	btrfs_release_path(&path);
	if (ret < 0)
		return ret;
	return free_space_change(st, cur, fs_info->nodesize, false);
}

/* The free places of [*cur, end) in @bg, up to @nr in all */
static int fill_gap(struct commit_state *st, const struct btrfs_block_group *bg,
		    u64 *cur, u64 end, u64 *done, u64 nr)
{
	const u32 ns = st->fs_info->nodesize;
	int ret;

	while (*done < nr && *cur + ns <= end) {
		if (btrfs_block_group_super_overlap(bg, *cur, ns)) {
			*cur += st->fs_info->sectorsize;
			continue;
		}
		ret = new_block_at(st, *cur);
		if (ret)
			return ret;
		*cur += ns;
		(*done)++;
	}
	return 0;
}

/*
 * The lowest @nr free node-sized places of the metadata block groups, as
 * the image's extent items leave them.
 */
static int new_blocks(struct commit_state *st, u64 nr)
{
	struct btrfs_fs_info *fs_info = st->fs_info;
	const struct btrfs_root_ref *root = &fs_info->extent_root;
	u64 done = 0;
	u32 b;
	int ret = 0;

	for (b = 0; b < fs_info->nr_block_groups && done < nr; b++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[b];
		struct btrfs_key key = { .objectid = bg->start };
		struct btrfs_path path = { 0 };
		u64 cur = bg->start, bg_end = bg->start + bg->length;

		if (!(bg->flags & BTRFS_BLOCK_GROUP_METADATA) || bg->ro)
			continue;
		ret = btrfs_search_slot(fs_info, root, &key, &path, BTRFS_IO_OTHER);
		if (ret < 0)
			return ret;
		ret = 0;
		while (!ret && done < nr) {
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
				ret = fill_gap(st, bg, &cur, k.objectid, &done, nr);
				cur = max_t(u64, cur, used_end);
			}
			if (!ret)
				ret = btrfs_next_item(fs_info, root, &path, BTRFS_IO_OTHER);
		}
		btrfs_release_path(&path);
		if (ret < 0)
			return ret;
		ret = fill_gap(st, bg, &cur, bg_end, &done, nr);
		if (ret)
			return ret;
	}
	return 0;
}

/* The ROOT_ITEM of @objectid: the last one of that objectid */
static int update_root(struct commit_state *st, u64 objectid)
{
	return cow_search(st, BTRFS_COMMIT_ROOT, objectid, BTRFS_ROOT_ITEM_KEY, (u64)-1, NULL);
}

static const u64 cowonly_ids[BTRFS_COMMIT_NR_TREES] = {
	[BTRFS_COMMIT_EXTENT] = BTRFS_EXTENT_TREE_OBJECTID,
	[BTRFS_COMMIT_CSUM] = BTRFS_CSUM_TREE_OBJECTID,
	[BTRFS_COMMIT_FREE_SPACE] = BTRFS_FREE_SPACE_TREE_OBJECTID,
	[BTRFS_COMMIT_BLOCK_GROUP] = BTRFS_BLOCK_GROUP_TREE_OBJECTID,
	[BTRFS_COMMIT_ROOT] = 0,
	[BTRFS_COMMIT_DEV] = BTRFS_DEV_TREE_OBJECTID,
};

/* One round: everything the commit searches, given last round's copies */
static int commit_round(struct commit_state *st)
{
	struct btrfs_fs_info *fs_info = st->fs_info;
	u64 i, off;
	int t, ret;

	ret = deletion_heads(st);
	if (ret)
		return ret;
	/* the copies of the last round: their old blocks freed, new ones added */
	for (i = 0; i < st->prev.nr; i++) {
		u8 type = tree_block_key(fs_info, st->prev_level.v[i], &off);

		ret = cow_search(st, BTRFS_COMMIT_EXTENT, st->prev.v[i], type, off, NULL);
		if (ret >= 0)
			ret = free_space_change(st, st->prev.v[i], fs_info->nodesize, true);
		if (ret < 0)
			return ret;
	}
	ret = new_blocks(st, st->c->new_blocks + st->prev.nr);
	if (ret)
		return ret;
	/* btrfs_run_dev_stats(): the first commit after the mount */
	for (i = 0; i < fs_info->nr_devices; i++) {
		if (!fs_info->devices[i].present)
			continue;
		ret = cow_search(st, BTRFS_COMMIT_DEV, DEV_STATS_OBJECTID, PERSISTENT_ITEM_KEY,
				 fs_info->devices[i].devid, NULL);
		if (ret < 0)
			return ret;
	}
	/* update_block_group_item() of every dirty block group */
	for (i = 0; i < st->dirty_bgs.nr; i++) {
		const struct btrfs_block_group *bg = bg_of(fs_info, st->dirty_bgs.v[i]);

		ret = cow_search(st, bg_tree_index(fs_info), bg->start,
				 BTRFS_BLOCK_GROUP_ITEM_KEY, bg->length, NULL);
		if (ret < 0)
			return ret;
	}
	/* the root items of the subvolume and of the trees copied */
	ret = update_root(st, st->subvol);
	for (t = 0; !ret && t < BTRFS_COMMIT_NR_TREES; t++)
		if (cowonly_ids[t] && st->copied[t].nr)
			ret = update_root(st, cowonly_ids[t]);
	/* a root-tree copy changes nothing of the cow-only roots above */
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
		st->copied[t].nr = 0;
		st->copied_level[t].nr = 0;
	}
	st->dirty_bgs.nr = 0;
	st->leaf_start.nr = st->leaf_free.nr = st->leaf_ins.nr = st->leaf_del.nr = 0;
	st->c->new_blocks = 0;
	st->c->freed_blocks = 0;
	st->c->freed_data = 0;
}

/* Keep this round's copies (all trees) as the next round's input */
static int round_keep(struct commit_state *st)
{
	int t, ret;
	u64 i;

	st->prev.nr = 0;
	st->prev_level.nr = 0;
	for (t = 0; t < BTRFS_COMMIT_NR_TREES; t++)
		for (i = 0; i < st->copied[t].nr; i++) {
			ret = set_push(&st->prev, st->copied[t].v[i]);
			if (!ret)
				ret = set_push(&st->prev_level, st->copied_level[t].v[i]);
			if (ret)
				return ret;
		}
	return 0;
}

int btrfs_model_commit_refs(struct btrfs_fs_info *fs_info, u64 subvol,
			    const struct btrfs_delayed_refs_sim *refs,
			    struct btrfs_commit_refs *c)
{
	const struct btrfs_csum_params *p = refs->params;
	struct commit_state st = {
		.fs_info = fs_info, .c = c, .refs = refs, .subvol = subvol,
		.tree_root = btrfs_tree_root_ref(fs_info),
	};
	u64 last = (u64)-1, all = 0;
	int round, t, ret = 0;

	for (round = 0; round < MAX_ROUNDS; round++) {
		round_reset(&st);
		ret = commit_round(&st);
		if (ret)
			goto out;
		all = copies_of(&st);
		if (all == last)
			break;
		last = all;
		ret = round_keep(&st);
		if (ret)
			goto out;
	}
	if (round == MAX_ROUNDS)
		c->inexact |= BTRFS_COMMIT_INEXACT_ALLOC;
	check_leaves(&st);
	c->copies_total = 0;
	for (t = 0; t < BTRFS_COMMIT_NR_TREES; t++) {
		c->copies[t] = st.copied[t].nr;
		c->copies_total += st.copied[t].nr;
	}
	c->nodes = 2 * c->copies_total;
	c->bytes = c->nodes * btrfs_calc_delayed_ref_bytes(p->nodesize,
							    p->free_space_tree_opt, 1);
out:
	for (t = 0; t < BTRFS_COMMIT_NR_TREES; t++) {
		set_free(&st.copied[t]);
		set_free(&st.copied_level[t]);
	}
	set_free(&st.dirty_bgs);
	set_free(&st.prev);
	set_free(&st.prev_level);
	set_free(&st.leaf_start);
	set_free(&st.leaf_free);
	set_free(&st.leaf_ins);
	set_free(&st.leaf_del);
	return ret;
}
