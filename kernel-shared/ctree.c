// SPDX-License-Identifier: GPL-2.0
/*
 * Read-only tree search, mirroring fs/btrfs/ctree.c: btrfs_search_slot()
 * (0 found, 1 not found with the slot where the key would go, <0 error)
 * with the read-ahead of reada_for_balance() where the caller gives the
 * search's ins_len, btrfs_next_leaf(), btrfs_next_item(),
 * btrfs_read_node_slot(), the binary search in a block
 * (btrfs_bin_search()), and a whole-tree walk used for the chunk tree and
 * csum-delete --top.  Then the counts of the kernel's tree edits that
 * both edit models follow: the items push_leaf_right() and
 * push_leaf_left() move (the loops of __push_leaf_right() and
 * __push_leaf_left()), the pointers push_node_left() and
 * balance_node_right() move, and balance_level()'s moves in order (the
 * thresholds beside them are in ctree.h).
 * Behaviour reproduced: kernels 5.x-6.18 (search contract unchanged).
 *
 * The blocks it searches are read by disk-io.c and kept in the block
 * cache of extent_io.c.  What else the kernel's ctree.c does lives beside
 * it: the read-ahead of many searches in reada.c, the copy-on-write of a
 * search path and its refs on the image's blocks in ctree-cow.c (for
 * csum-delete), the item edits of a tree's leaves and nodes in
 * ctree-leaf.c (for the log replay and the commit).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/ctree.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/tree-block.h"


/*
 * Binary search over a block's keys.  Returns 0 and the slot of @key if it
 * is there, else 1 and the slot of the first key above it.
 */
/*
 * A key on disk against @key, in btrfs_comp_keys()'s order, the objectid
 * first: most steps of a search decide on it alone, and the type and
 * offset are then not read
 */
static inline int comp_disk_key(const struct btrfs_disk_key *disk,
				const struct btrfs_key *key)
{
	u64 objectid = btrfs_disk_key_objectid(disk), offset;

	if (objectid != key->objectid)
		return objectid < key->objectid ? -1 : 1;
	if (disk->type != key->type)
		return disk->type < key->type ? -1 : 1;
	offset = btrfs_disk_key_offset(disk);
	if (offset != key->offset)
		return offset < key->offset ? -1 : 1;
	return 0;
}

/* The binary search over @nr keys @stride bytes apart from @first */
static inline int bin_search_keys(const u8 *first, size_t stride, int nr,
				  const struct btrfs_key *key, int *slot)
{
	int low = 0, high = nr;

	while (low < high) {
		int mid = low + (high - low) / 2;
		int cmp = comp_disk_key((const struct btrfs_disk_key *)(first + mid * stride), key);

		if (cmp < 0) {
			low = mid + 1;
		} else if (cmp > 0) {
			high = mid;
		} else {
			*slot = mid;
			return 0;
		}
	}
	*slot = low;
	return 1;
}

int bin_search_block(const struct btrfs_tree_block *eb,
		     const struct btrfs_key *key, int *slot)
{
	const u8 *first = eb->data + sizeof(struct btrfs_header);

	/* a node's key pointers and a leaf's items both start with their key */
	static_assert(offsetof(struct btrfs_key_ptr, key) == 0 &&
		      offsetof(struct btrfs_item, key) == 0, "keys first");
	if (eb->level)
		return bin_search_keys(first, sizeof(struct btrfs_key_ptr), eb->nritems,
				       key, slot);
	return bin_search_keys(first, sizeof(struct btrfs_item), eb->nritems, key, slot);
}

void btrfs_release_path(struct btrfs_path *path)
{
	int i;

	for (i = 0; i < BTRFS_MAX_LEVEL; i++) {
		btrfs_tree_block_put(path->nodes[i]);
		path->nodes[i] = NULL;
		path->slots[i] = 0;
	}
}

/* Where a search's read errors go: the caller's record, or the filesystem's */
static struct btrfs_error *path_err(struct btrfs_fs_info *fs_info,
				    const struct btrfs_path *path)
{
	return path->err ? path->err : &fs_info->err;
}

/*
 * The child at @slot of @parent, checked against what the parent says of
 * it (level, generation, first key) as btrfs_read_node_slot() does; its
 * read error recorded in @err
 */
static int read_node_slot(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			  u64 root_id, const struct btrfs_tree_block *parent, int slot,
			  unsigned int purpose, struct btrfs_tree_block **child)
{
	struct btrfs_tree_check check = {
		.root = root_id,
		.level = parent->level - 1,
		.transid = btrfs_node_ptr_generation(parent, slot),
		.has_first_key = true,
	};

	btrfs_node_key_to_cpu(parent, slot, &check.first_key);
	return btrfs_read_tree_block(fs_info, err, btrfs_node_blockptr(parent, slot),
				     &check, purpose, child);
}

int btrfs_read_node_slot(struct btrfs_fs_info *fs_info, u64 root_id,
			 const struct btrfs_tree_block *parent, int slot,
			 unsigned int purpose, struct btrfs_tree_block **child)
{
	return read_node_slot(fs_info, &fs_info->err, root_id, parent, slot,
			      purpose, child);
}

/* A tree's root block, as its root item or the superblock describes it */
int btrfs_read_root_node(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			 const struct btrfs_root_ref *root, unsigned int purpose,
			 struct btrfs_tree_block **eb)
{
	struct btrfs_tree_check check = {
		.root = root->objectid,
		.level = root->level,
		.transid = root->generation,
	};

	return btrfs_read_tree_block(fs_info, err, root->bytenr, &check, purpose, eb);
}

/* reada_for_search()'s bounds (6.18 ctree.c, unchanged since 5.x) */
#define READA_FORWARD_MAX_BYTES		SZ_64K
#define READA_FORWARD_MAX_DISTANCE	SZ_64K
#define READA_MAX_SCAN			32

/*
 * reada_for_search() of READA_FORWARD at level 1, called before the child
 * at @slot of @node (a leaf) is read: the slots after it whose blocks lie
 * within 64 KiB of it are read ahead (btrfs_readahead_node_child(): those
 * in memory are not read again, but count), until more than 64 KiB went
 * or 32 slots were looked at.  A read-ahead that fails is dropped, as the
 * kernel's is: the search that needs the block reads it again.
 */
static void reada_forward(struct btrfs_fs_info *fs_info, const struct btrfs_path *path,
			  u64 root_id, const struct btrfs_tree_block *node, int slot,
			  unsigned int purpose)
{
	const struct btrfs_reada_forward *ra = path->reada;
	u64 target = btrfs_node_blockptr(node, slot);
	u64 nread = 0;
	u32 nscan = 0;
	int nr;

	if (!ra || node->level != 1 || ra->in_memory(ra->ctx, target))
		return;
	for (nr = slot + 1; nr < (int)node->nritems; nr++) {
		u64 search = btrfs_node_blockptr(node, nr);
		u64 distance = search > target ? search - target : target - search;

		if (distance <= READA_FORWARD_MAX_DISTANCE) {
			struct btrfs_error err = { 0 };
			struct btrfs_tree_block *eb;

			if (!ra->in_memory(ra->ctx, search) &&
			    !read_node_slot(fs_info, &err, root_id, node, nr, purpose, &eb))
				btrfs_tree_block_put(eb);
			nread += fs_info->nodesize;
		}
		nscan++;
		if (nread > READA_FORWARD_MAX_BYTES || nscan > READA_MAX_SCAN)
			break;
	}
}

/*
 * setup_nodes_for_search() on node @eb of the path (not the root), before
 * the search reads its child: an insertion's search through a node with
 * BTRFS_NODEPTRS_PER_BLOCK - 3 pointers or more (split_node() follows), or
 * a deletion's through one with fewer than half (balance_level() follows,
 * which may return at once), first calls reada_for_balance(): the node's
 * left and right siblings under its parent are read ahead
 * (btrfs_readahead_node_child(), their children are not).  A read-ahead
 * that fails is dropped.
 */
static void reada_for_balance(struct btrfs_fs_info *fs_info, const struct btrfs_path *path,
			      u64 root_id, const struct btrfs_tree_block *eb,
			      unsigned int purpose)
{
	const struct btrfs_tree_block *parent = path->nodes[eb->level + 1];
	u32 max = btrfs_node_max_ptrs(fs_info->nodesize);
	int slot, i;

	if (!parent || eb->level == 0 || eb->level >= BTRFS_MAX_LEVEL - 1)
		return;
	if (!(path->ins_len > 0 && btrfs_node_split_on_insert(eb->nritems, max)) &&
	    !(path->ins_len < 0 && btrfs_node_balance_on_delete(eb->nritems, max)))
		return;
	slot = path->slots[eb->level + 1];
	for (i = slot - 1; i <= slot + 1; i += 2) {
		struct btrfs_error err = { 0 };
		struct btrfs_tree_block *sib;

		if (i >= 0 && i < (int)parent->nritems &&
		    !read_node_slot(fs_info, &err, root_id, parent, i, purpose, &sib))
			btrfs_tree_block_put(sib);
	}
}

/* From @eb (already in @path at its level) down to the leaf, for @key */
static int search_down(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root,
		       const struct btrfs_key *key, struct btrfs_path *path,
		       unsigned int purpose, struct btrfs_tree_block *eb)
{
	int ret, slot;

	while (1) {
		int level = eb->level;

		ret = bin_search_block(eb, key, &slot);
		path->nodes[level] = eb;
		if (level == 0) {
			path->slots[0] = slot;
			return ret;
		}
		/* descend into the child whose range holds the key */
		if (ret && slot > 0)
			slot--;
		path->slots[level] = slot;
		if (path->ins_len)
			reada_for_balance(fs_info, path, root->objectid, eb, purpose);
		reada_forward(fs_info, path, root->objectid, eb, slot, purpose);
		ret = read_node_slot(fs_info, path_err(fs_info, path), root->objectid,
				     eb, slot, purpose, &eb);
		if (ret < 0) {
			btrfs_release_path(path);
			return ret;
		}
	}
}

int btrfs_search_slot(struct btrfs_fs_info *fs_info,
		      const struct btrfs_root_ref *root,
		      const struct btrfs_key *key, struct btrfs_path *path,
		      unsigned int purpose)
{
	struct btrfs_tree_block *eb;
	int ret;

	btrfs_release_path(path);
	ret = btrfs_read_root_node(fs_info, path_err(fs_info, path), root, purpose, &eb);
	if (ret < 0)
		return ret;
	return search_down(fs_info, root, key, path, purpose, eb);
}

int btrfs_search_slot_again(struct btrfs_fs_info *fs_info,
			    const struct btrfs_root_ref *root,
			    const struct btrfs_key *key, struct btrfs_path *path,
			    unsigned int purpose)
{
	int level = root->level, slot, i;
	struct btrfs_tree_block *eb;

	if (level >= BTRFS_MAX_LEVEL || !path->nodes[level] ||
	    path->nodes[level]->start != root->bytenr || path->ins_len || path->reada)
		return btrfs_search_slot(fs_info, root, key, path, purpose);
	eb = path->nodes[level];
	/* the levels whose slot stays: the same child as the path holds */
	while (level > 0 && path->nodes[level - 1]) {
		if (bin_search_block(eb, key, &slot) && slot > 0)
			slot--;
		if (slot != path->slots[level])
			break;
		eb = path->nodes[--level];
	}
	/* below: let go as btrfs_release_path() would, then read on as a search */
	for (i = 0; i < level; i++) {
		btrfs_tree_block_put(path->nodes[i]);
		path->nodes[i] = NULL;
		path->slots[i] = 0;
	}
	return search_down(fs_info, root, key, path, purpose, eb);
}

/*
 * Move the path to the first item of the next leaf.  Returns 0, 1 when the
 * current leaf is the last one, <0 on error.
 */
int btrfs_next_leaf(struct btrfs_fs_info *fs_info,
		    const struct btrfs_root_ref *root, struct btrfs_path *path,
		    unsigned int purpose)
{
	struct btrfs_tree_block *eb;
	int level = 1;
	int ret;

	while (level < BTRFS_MAX_LEVEL && path->nodes[level] &&
	       path->slots[level] + 1 >= (int)path->nodes[level]->nritems)
		level++;
	if (level >= BTRFS_MAX_LEVEL || !path->nodes[level])
		return 1;
	path->slots[level]++;
	eb = path->nodes[level];
	while (level > 0) {
		struct btrfs_tree_block *child;

		reada_forward(fs_info, path, root->objectid, eb, path->slots[level], purpose);
		ret = read_node_slot(fs_info, path_err(fs_info, path), root->objectid,
				     eb, path->slots[level], purpose, &child);
		if (ret < 0)
			return ret;
		level--;
		btrfs_tree_block_put(path->nodes[level]);
		path->nodes[level] = child;
		path->slots[level] = 0;
		eb = child;
	}
	return 0;
}

/* Step to the next item, crossing into the next leaf when needed */
int btrfs_next_item(struct btrfs_fs_info *fs_info,
		    const struct btrfs_root_ref *root, struct btrfs_path *path,
		    unsigned int purpose)
{
	int ret;

	path->slots[0]++;
	while (path->slots[0] >= (int)path->nodes[0]->nritems) {
		ret = btrfs_next_leaf(fs_info, root, path, purpose);
		if (ret)
			return ret;
	}
	return 0;
}

struct walk_state {
	btrfs_leaf_fn leaf_fn;
	void *ctx;
	unsigned int purpose;
	u64 root_id;
	bool have_last;
	struct btrfs_key last;
	bool stream;			/* each leaf out of the cache once done */
};

/*
 * Keys must rise strictly across the whole walk.  Besides being what the
 * kernel expects, this makes a block referenced twice (a cycle or a shared
 * subtree in a corrupted image) an error instead of repeated work.
 */
static int walk_check_order(struct btrfs_fs_info *fs_info,
			    struct walk_state *ws,
			    const struct btrfs_tree_block *leaf)
{
	struct btrfs_key first;

	if (!leaf->nritems)
		return 0;
	btrfs_item_key_to_cpu(leaf, 0, &first);
	if (ws->have_last && btrfs_comp_keys(&ws->last, &first) >= 0)
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"corrupt %s: leaf %llu first key (%llu %u %llu) is not above the previous leaf's last key (%llu %u %llu)",
			btrfs_root_name(ws->root_id), (unsigned long long)leaf->start,
			(unsigned long long)first.objectid, first.type,
			(unsigned long long)first.offset,
			(unsigned long long)ws->last.objectid, ws->last.type,
			(unsigned long long)ws->last.offset);
	btrfs_item_key_to_cpu(leaf, leaf->nritems - 1, &ws->last);
	ws->have_last = true;
	return 0;
}

static int walk_block(struct btrfs_fs_info *fs_info, struct walk_state *ws,
		      struct btrfs_tree_block *eb)
{
	u32 slot;
	int ret = 0;

	if (eb->level == 0) {
		ret = walk_check_order(fs_info, ws, eb);
		if (!ret)
			ret = ws->leaf_fn(fs_info, eb, ws->ctx);
		return ret;
	}
	for (slot = 0; slot < eb->nritems && !ret; slot++) {
		struct btrfs_tree_block *child;

		ret = btrfs_read_node_slot(fs_info, ws->root_id, eb, slot, ws->purpose, &child);
		if (ret < 0)
			break;
		ret = walk_block(fs_info, ws, child);
		btrfs_tree_block_put(child);
		if (ws->stream)
			btrfs_cache_drop_leaf(fs_info, child);
	}
	return ret;
}

static int walk_tree(struct btrfs_fs_info *fs_info,
		     const struct btrfs_root_ref *root, unsigned int purpose,
		     btrfs_leaf_fn leaf_fn, void *ctx, bool stream)
{
	struct walk_state ws = {
		.leaf_fn = leaf_fn,
		.ctx = ctx,
		.purpose = purpose,
		.root_id = root->objectid,
		.stream = stream,
	};
	struct btrfs_tree_block *eb;
	int ret;

	ret = btrfs_read_root_node(fs_info, &fs_info->err, root, purpose, &eb);
	if (ret < 0)
		return ret;
	ret = walk_block(fs_info, &ws, eb);
	btrfs_tree_block_put(eb);
	return ret;
}

int btrfs_walk_tree(struct btrfs_fs_info *fs_info,
		    const struct btrfs_root_ref *root, unsigned int purpose,
		    btrfs_leaf_fn leaf_fn, void *ctx)
{
	return walk_tree(fs_info, root, purpose, leaf_fn, ctx, false);
}

int btrfs_stream_tree(struct btrfs_fs_info *fs_info,
		      const struct btrfs_root_ref *root, unsigned int purpose,
		      btrfs_leaf_fn leaf_fn, void *ctx)
{
	return walk_tree(fs_info, root, purpose, leaf_fn, ctx, true);
}

/* ---- the split, push and balance rules both edit models follow ---- */

/*
 * The loops of __push_leaf_right() (@dir > 0: the pushing leaf's last
 * items, from its end) and __push_leaf_left() (its first), over @count
 * items: each moves while its bytes (item and header) and those counted
 * before fit in the sibling's free space.  With !empty none past the
 * slot, and the slot's item (with what the insert adds) only while the
 * leaf would keep at least as much free space as it moves (a leaf left
 * emptier is not worth the push).
 */
static inline u32 leaf_push_nr(const struct btrfs_leaf_push *p, int dir, u32 count)
{
	u32 push_space = 0, push_items = 0, k;

	if (dir > 0 && p->slot >= p->nr)
		push_space += p->min_data;
	for (k = 0; k < count; k++) {
		u32 i = dir > 0 ? p->nr - 1 - k : k;
		u32 this_size = p->item_space(p->leaf, i);

		if (!p->empty && push_items > 0) {
			if (dir > 0 ? p->slot > i : p->slot < i)
				break;
			if (p->slot == i && p->leaf_free + push_space * 2 > p->free_space)
				break;
		}
		if (p->slot == i)
			push_space += p->min_data;
		if (this_size + push_space > p->free_space)
			break;
		push_items++;
		push_space += this_size;
	}
	return push_items;
}

/*
 * push_leaf_right(): how many of the pushing leaf's last items go to its
 * right sibling; with !empty never item 0 nor any below max(@limit, 1)
 */
u32 btrfs_leaf_push_right_nr(const struct btrfs_leaf_push *p)
{
	u32 keep = p->empty ? 0 : max_t(u32, p->limit, 1);

	return leaf_push_nr(p, 1, p->nr > keep ? p->nr - keep : 0);
}

/*
 * push_leaf_left(): how many of the pushing leaf's first items go to its
 * left sibling, at most @limit; with !empty never the last item
 */
u32 btrfs_leaf_push_left_nr(const struct btrfs_leaf_push *p)
{
	if (!p->nr)
		return 0;
	return leaf_push_nr(p, -1, min_t(u32, p->empty ? p->nr : p->nr - 1, p->limit));
}

/*
 * push_node_left(dst, src, @empty): pointers moved from the start of @src
 * to the end of @dst.  With !@empty (an insert's push) all but 8 of @src
 * at most, nothing from 8 or fewer; with @empty (balance_level()) all if
 * they fit, else as many as fit but leaving @src 8 (none when that would
 * move 8 or fewer).
 */
u32 btrfs_node_push_left_nr(u32 dst_nr, u32 src_nr, u32 max, bool empty)
{
	u32 push;

	if ((!empty && src_nr <= 8) || dst_nr >= max)
		return 0;
	push = max - dst_nr;
	if (!empty)
		return min_t(u32, src_nr - 8, push);
	push = min_t(u32, src_nr, push);
	if (push < src_nr && src_nr - push < 8) {
		if (push <= 8)
			return 0;
		push -= 8;
	}
	return push;
}

/*
 * balance_node_right(dst, src): the last pointers of @src to the start of
 * @dst, up to half of @src plus one, never emptying it, nothing from
 * fewer than 4
 */
u32 btrfs_node_push_right_nr(u32 dst_nr, u32 src_nr, u32 max)
{
	if (dst_nr >= max || src_nr < 4 || src_nr / 2 + 1 >= src_nr)
		return 0;
	return min_t(u32, max - dst_nr, src_nr / 2 + 1);
}

/*
 * balance_level() on counts: the left takes what it can of the node, the
 * node what it can of the right; a node left with one pointer takes half
 * of the left's back, or gives it its last
 */
void btrfs_balance_level_moves(u32 left, u32 mid, u32 right, bool has_left, bool has_right,
			       u32 max, struct btrfs_balance_moves *mv)
{
	*mv = (struct btrfs_balance_moves){ 0 };
	if (has_left) {
		mv->mid_to_left = btrfs_node_push_left_nr(left, mid, max, true);
		left += mv->mid_to_left;
		mid -= mv->mid_to_left;
	}
	if (has_right) {
		mv->right_to_mid = btrfs_node_push_left_nr(mid, right, max, true);
		mid += mv->right_to_mid;
		mv->right_emptied = right == mv->right_to_mid;
	}
	if (mid == 1 && !has_left) {
		mv->one_without_left = true;
		return;
	}
	if (mid == 1) {
		mv->left_to_mid = btrfs_node_push_right_nr(mid, left, max);
		if (!mv->left_to_mid)
			mv->last_to_left = btrfs_node_push_left_nr(left, mid, max, true);
		mid += mv->left_to_mid;
		mid -= mv->last_to_left;
	}
	mv->mid_emptied = has_left && !mid;
}
