// SPDX-License-Identifier: GPL-2.0
/*
 * Read-only tree search, mirroring fs/btrfs/ctree.c: btrfs_search_slot()
 * (0 found, 1 not found with the slot where the key would go, <0 error),
 * btrfs_next_leaf(), and a whole-tree walk used for the chunk tree.
 * Behaviour reproduced: kernels 5.x-6.18 (search contract unchanged).
 *
 * For csum-delete --file, also what one transaction's copy-on-write of a
 * subvolume's blocks queues as delayed refs (nothing is written, the image's
 * tree is searched): btrfs_block_can_be_shared(), update_ref_for_cow(),
 * btrfs_force_cow_block(), btrfs_search_slot() with cow = 1, and
 * btrfs_del_items() with push_leaf_left(), push_leaf_right() and
 * btrfs_del_leaf(), and the sibling copies of balance_level().  Not
 * replayed: pointer pushes between nodes and leaf splits.
 * Behaviour reproduced: the mixed-backref rules, 2.6.31-6.18.
 *
 * The blocks it searches are read by disk-io.c and kept in the block
 * cache of extent_io.c.  The read-ahead keeps at most twice the queue's
 * depth of leaves out at a time, so that their blocks are reused.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/extent-tree.h"

/*
 * Binary search over a block's keys.  Returns 0 and the slot of @key if it
 * is there, else 1 and the slot of the first key above it.
 */
int bin_search_block(const struct btrfs_tree_block *eb,
		     const struct btrfs_key *key, int *slot)
{
	int low = 0, high = eb->nritems;

	while (low < high) {
		int mid = low + (high - low) / 2;
		struct btrfs_key found;
		int cmp;

		if (eb->level)
			btrfs_node_key_to_cpu(eb, mid, &found);
		else
			btrfs_item_key_to_cpu(eb, mid, &found);
		cmp = btrfs_comp_keys(&found, key);
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

void btrfs_release_path(struct btrfs_path *path)
{
	int i;

	for (i = 0; i < BTRFS_MAX_LEVEL; i++) {
		btrfs_tree_block_put(path->nodes[i]);
		path->nodes[i] = NULL;
		path->slots[i] = 0;
	}
}

static int read_child(struct btrfs_fs_info *fs_info, u64 root_id,
		      const struct btrfs_tree_block *parent, int slot,
		      unsigned int purpose, struct btrfs_tree_block **child)
{
	struct btrfs_tree_check check = {
		.root = root_id,
		.level = parent->level - 1,
		.transid = btrfs_node_ptr_generation(parent, slot),
		.has_first_key = true,
	};

	btrfs_node_key_to_cpu(parent, slot, &check.first_key);
	return btrfs_read_tree_block(fs_info, btrfs_node_blockptr(parent, slot),
				     &check, purpose, child);
}

/* A tree's root block, as its root item or the superblock describes it */
int btrfs_read_root_node(struct btrfs_fs_info *fs_info,
			 const struct btrfs_root_ref *root, unsigned int purpose,
			 struct btrfs_tree_block **eb)
{
	struct btrfs_tree_check check = {
		.root = root->objectid,
		.level = root->level,
		.transid = root->generation,
	};

	return btrfs_read_tree_block(fs_info, root->bytenr, &check, purpose, eb);
}

int btrfs_search_slot(struct btrfs_fs_info *fs_info,
		      const struct btrfs_root_ref *root,
		      const struct btrfs_key *key, struct btrfs_path *path,
		      unsigned int purpose)
{
	struct btrfs_tree_block *eb;
	int ret, slot;

	btrfs_release_path(path);
	ret = btrfs_read_root_node(fs_info, root, purpose, &eb);
	if (ret < 0)
		return ret;
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
		ret = read_child(fs_info, root->objectid, eb, slot, purpose, &eb);
		if (ret < 0) {
			btrfs_release_path(path);
			return ret;
		}
	}
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

		ret = read_child(fs_info, root->objectid, eb, path->slots[level],
				 purpose, &child);
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

		ret = read_child(fs_info, ws->root_id, eb, slot, ws->purpose, &child);
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

	ret = btrfs_read_root_node(fs_info, root, purpose, &eb);
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

/*
 * Read-ahead through the run's queue of concurrent reads: the blocks that
 * searches (and the next_leaf() steps after them) will touch are kept in
 * flight together, and the children a node leads to go out as soon as
 * that node is read and verified, while the other reads are still on
 * their way.  There is no barrier per level: a slow device costs the
 * trees' height in round trips and every other read overlaps them.  Only
 * blocks the searches themselves read are read, each once: they then find
 * them in the cache.  Nothing here is an error: a block that fails is left
 * out (with what lies below it) and the search reads it again, in its own
 * order, with its own message.  Read observers are not told.
 */

#define PF_NONE		UINT32_MAX
#define PF_REAP		16

/* One search passing through a block */
struct pf_ref {
	u32 search;
	bool leftmost;			/* on the search path itself */
	u32 next;			/* the block's next ref, or PF_NONE */
};

/* One block to read, and the searches that go through it */
struct pf_block {
	struct btrfs_block_read br;	/* br.req.priv: &br */
	u32 refs;			/* the first pf_ref, or PF_NONE */
	u32 round;			/* the take_steps() call that made it */
	bool done;			/* read (or left out) */
	bool ok;			/* read and verified */
	bool leaf_started;		/* counted in prefetch_state.leaves_out */
};

/*
 * Leaves started and not finished, at most twice the queue's depth: the
 * depth stays full, and the blocks the leaves are read into come back to
 * the free list (a leaf kept key-only, extent_io.c, frees its block at
 * once) to be read into again while still in the CPU's cache, instead of
 * every leaf of a level taking fresh memory at once.  The others wait in
 * order in a FIFO.
 */
struct pf_waiting {
	struct pf_block **v;
	u32 nr;
	u32 cap;
	u32 head;			/* the next to start */
};

/* One child to read for one search, and what its parent says of it */
struct pf_step {
	u64 bytenr;
	u32 search;
	bool leftmost;
	struct btrfs_tree_check check;
};

struct prefetch_state {
	struct btrfs_fs_info *fs_info;
	const struct btrfs_prefetch_search *srch;
	struct io_queue *q;
	struct pf_block **map;		/* open addressing by bytenr */
	u32 map_cap;			/* a power of two */
	u32 nr_blocks;
	struct pf_ref *refs;
	u32 nr_refs;
	u32 cap_refs;
	u32 round;
	u64 leaf_bytes;			/* leaves cached or on their way */
	u32 leaves_out;			/* leaves started, not finished */
	u32 max_leaves_out;
	struct pf_waiting waiting;	/* leaves past max_leaves_out */
	bool draining;
	int err;			/* -ENOMEM: nothing more is started */
};

static int finish_block(struct prefetch_state *ps, struct pf_block *blk);

static u32 pf_slot(const struct prefetch_state *ps, u64 bytenr)
{
	return (u32)(((bytenr >> 12) * 0x9e3779b97f4a7c15ULL) >> 32) & (ps->map_cap - 1);
}

static struct pf_block *pf_find(const struct prefetch_state *ps, u64 bytenr)
{
	u32 i;

	if (!ps->map_cap)
		return NULL;
	for (i = pf_slot(ps, bytenr); ps->map[i]; i = (i + 1) & (ps->map_cap - 1))
		if (ps->map[i]->br.bytenr == bytenr)
			return ps->map[i];
	return NULL;
}

static void pf_place(struct prefetch_state *ps, struct pf_block *blk)
{
	u32 i = pf_slot(ps, blk->br.bytenr);

	while (ps->map[i])
		i = (i + 1) & (ps->map_cap - 1);
	ps->map[i] = blk;
}

/* Half full at most, so that a probe ends soon */
static int pf_insert(struct prefetch_state *ps, struct pf_block *blk)
{
	if (2 * (ps->nr_blocks + 1) > ps->map_cap) {
		u32 old_cap = ps->map_cap, i;
		struct pf_block **old = ps->map;

		ps->map_cap = old_cap ? 2 * old_cap : 1024;
		ps->map = calloc(ps->map_cap, sizeof(*ps->map));
		if (!ps->map) {
			ps->map = old;
			ps->map_cap = old_cap;
			return -ENOMEM;
		}
		for (i = 0; i < old_cap; i++)
			if (old[i])
				pf_place(ps, old[i]);
		free(old);
	}
	pf_place(ps, blk);
	ps->nr_blocks++;
	return 0;
}

static int pf_add_ref(struct prefetch_state *ps, struct pf_block *blk,
		      const struct pf_step *st)
{
	if (array_grow((void **)&ps->refs, ps->nr_refs, &ps->cap_refs, sizeof(*ps->refs)))
		return -ENOMEM;
	ps->refs[ps->nr_refs] = (struct pf_ref) {
		.search = st->search, .leftmost = st->leftmost, .next = blk->refs,
	};
	blk->refs = ps->nr_refs++;
	return 0;
}

static bool pf_has_search(const struct prefetch_state *ps, const struct pf_block *blk,
			  u32 search)
{
	u32 r;

	for (r = blk->refs; r != PF_NONE; r = ps->refs[r].next)
		if (ps->refs[r].search == search)
			return true;
	return false;
}

/* Where a search for @key descends in @node: btrfs_search_slot()'s rule */
static int search_child_slot(const struct btrfs_tree_block *node,
			     const struct btrfs_key *key)
{
	int slot;

	if (bin_search_block(node, key, &slot) && slot > 0)
		slot--;
	return slot;
}

struct pf_steps {
	struct pf_step *v;
	u32 nr;
	u32 cap;
};

static int add_step(struct pf_steps *s, const struct pf_step *step)
{
	if (array_grow((void **)&s->v, s->nr, &s->cap, sizeof(*s->v)))
		return -ENOMEM;
	s->v[s->nr++] = *step;
	return 0;
}

/* The children one search reads from @node */
static int ref_steps(const struct prefetch_state *ps, const struct btrfs_tree_block *node,
		     const struct pf_ref *ref, struct pf_steps *s)
{
	const struct btrfs_prefetch_search *srch = &ps->srch[ref->search];
	int slot, first, last;

	if (!node->level || !node->nritems || srch->root_only)
		return 0;
	first = ref->leftmost ? search_child_slot(node, &srch->key) : 0;
	last = srch->to_end ? (int)node->nritems - 1 : first;
	for (slot = first; slot <= last; slot++) {
		struct pf_step step = {
			.bytenr = btrfs_node_blockptr(node, slot),
			.search = ref->search,
			.leftmost = ref->leftmost && slot == first,
			.check = {
				.root = srch->root->objectid,
				.level = node->level - 1,
				.transid = btrfs_node_ptr_generation(node, slot),
				.has_first_key = true,
			},
		};

		btrfs_node_key_to_cpu(node, slot, &step.check.first_key);
		if (add_step(s, &step))
			return -ENOMEM;
	}
	return 0;
}

/* The blocks that come first read them for the purpose that counts them */
static int purpose_rank(unsigned int purpose)
{
	switch (purpose) {
	case BTRFS_IO_CHUNK_TREE: return 0;
	case BTRFS_IO_ROOT_TREE: return 1;
	case BTRFS_IO_DEV_TREE: return 2;
	case BTRFS_IO_BG_SEARCH: return 3;
	default: return 4;
	}
}

static int cmp_step(const void *a, const void *b)
{
	const struct pf_step *x = a, *y = b;

	if (x->bytenr != y->bytenr)
		return x->bytenr < y->bytenr ? -1 : 1;
	return x->search < y->search ? -1 : x->search > y->search;
}

static void raise_purpose(struct pf_block *blk, unsigned int purpose)
{
	if (!blk->done && purpose_rank(purpose) < purpose_rank(blk->br.purpose)) {
		blk->br.purpose = purpose;
		blk->br.req.purpose = purpose;
	}
}

/* To the queue, or at once from the cache or the serial way */
static int submit_block(struct prefetch_state *ps, struct pf_block *blk)
{
	int ret;

	if (!blk->br.check.level) {
		blk->leaf_started = true;
		ps->leaves_out++;
	}
	ret = btrfs_block_read_start(ps->fs_info, ps->q, &blk->br);
	if (ret < 0) {
		blk->done = true;
		return ret;
	}
	return ret ? finish_block(ps, blk) : 0;
}

/* Start waiting leaves while fewer than max_leaves_out are out */
static int drain_waiting(struct prefetch_state *ps)
{
	struct pf_waiting *w = &ps->waiting;
	int ret = 0;

	if (ps->draining)
		return 0;		/* the loop further up goes on */
	ps->draining = true;
	while (!ret && !ps->err && w->head < w->nr && ps->leaves_out < ps->max_leaves_out)
		ret = submit_block(ps, w->v[w->head++]);
	ps->draining = false;
	return ret;
}

/*
 * Start a new block: from the cache at once, else to the queue.  Leaves
 * not cached yet go only while the leaf cache holds them with what it
 * holds: an eviction the searches would not have caused could make them
 * read a block twice.  A leaf past that is left to its search.  (Not
 * proven safe past the budget: when one read-ahead needs more leaves than
 * the cache holds, 4,096 of 16 KiB, those read ahead may be evicted by
 * the ones the searches read later before they are used.  The rule per
 * level before read none of such a level.  No image tested comes near.)
 * A leaf past max_leaves_out waits its turn (struct pf_waiting): the
 * budget is taken when it is made, so the leaves read are the same.
 */
static int start_block(struct prefetch_state *ps, struct pf_block *blk)
{
	struct btrfs_fs_info *fs_info = ps->fs_info;
	struct pf_waiting *w = &ps->waiting;

	if (!blk->br.check.level && !btrfs_cache_lookup(fs_info, blk->br.bytenr)) {
		if (ps->leaf_bytes + fs_info->nodesize > btrfs_cache_leaf_limit()) {
			blk->done = true;
			return 0;
		}
		ps->leaf_bytes += fs_info->nodesize;
	}
	if (blk->br.check.level || (ps->leaves_out < ps->max_leaves_out && w->head == w->nr))
		return submit_block(ps, blk);
	if (array_grow((void **)&w->v, w->nr, &w->cap, sizeof(*w->v))) {
		blk->done = true;
		return -ENOMEM;
	}
	w->v[w->nr++] = blk;
	return 0;
}

/*
 * The steps of one or more parents, sorted: each new block is made once
 * with the best purpose of the searches that need it, then started.  A
 * block met again by another search (a corrupted tree pointing at it
 * twice) takes that search too, and if it is read already its children
 * for that search follow from the cache.
 */
static int take_steps(struct prefetch_state *ps, struct pf_steps *s)
{
	u32 round = ++ps->round, i, nr_fresh = 0;
	struct pf_block **fresh = calloc(s->nr ? s->nr : 1, sizeof(*fresh));
	int ret = 0;

	if (!fresh)
		return -ENOMEM;
	if (s->nr)
		qsort(s->v, s->nr, sizeof(*s->v), cmp_step);
	for (i = 0; i < s->nr && !ret; i++) {
		const struct pf_step *st = &s->v[i];
		unsigned int purpose = ps->srch[st->search].purpose;
		struct pf_block *blk = pf_find(ps, st->bytenr);

		if (!blk) {
			blk = calloc(1, sizeof(*blk));
			if (blk) {
				blk->br.bytenr = st->bytenr;
				blk->br.check = st->check;
				blk->br.purpose = purpose;
				blk->refs = PF_NONE;
				blk->round = round;
			}
			if (!blk || pf_insert(ps, blk)) {
				free(blk);
				ret = -ENOMEM;
				break;
			}
			fresh[nr_fresh++] = blk;
		} else if (blk->round == round ? i && s->v[i - 1].bytenr == st->bytenr &&
			   s->v[i - 1].search == st->search : pf_has_search(ps, blk, st->search)) {
			continue;
		}
		raise_purpose(blk, purpose);
		ret = pf_add_ref(ps, blk, st);
		if (!ret && blk->round != round && blk->ok && st->check.level) {
			struct btrfs_tree_block *eb;
			struct pf_steps again = { 0 };

			if (btrfs_read_tree_block(ps->fs_info, blk->br.bytenr, &st->check,
						  blk->br.purpose, &eb))
				continue;
			ret = ref_steps(ps, eb, &ps->refs[blk->refs], &again);
			btrfs_tree_block_put(eb);
			if (!ret)
				ret = take_steps(ps, &again);
			free(again.v);
		}
	}
	for (i = 0; i < nr_fresh && !ret; i++)
		ret = start_block(ps, fresh[i]);
	for (; i < nr_fresh; i++)
		fresh[i]->done = true;
	free(fresh);
	return ret;
}

/* A block is in: verified and cached, its children for every search next */
static int finish_block(struct prefetch_state *ps, struct pf_block *blk)
{
	struct btrfs_tree_block *eb;
	struct pf_steps s = { 0 };
	int ret;
	u32 r;

	ret = btrfs_block_read_finish(ps->fs_info, &blk->br);
	blk->done = true;
	if (blk->leaf_started) {
		blk->leaf_started = false;
		ps->leaves_out--;
	}
	if (ret)
		return ret == -ENOMEM ? ret : 0;
	eb = blk->br.eb;
	blk->br.eb = NULL;
	blk->ok = true;
	for (r = blk->refs; r != PF_NONE && !ret && !ps->err; r = ps->refs[r].next) {
		struct pf_ref ref = ps->refs[r];

		ret = ref_steps(ps, eb, &ref, &s);
	}
	btrfs_tree_block_put(eb);
	if (!ret && !ps->err && s.nr)
		ret = take_steps(ps, &s);
	free(s.v);
	return ret;
}

static void prefetch_run(struct prefetch_state *ps, u32 nr)
{
	struct pf_steps roots = { 0 };
	struct io_request *done[PF_REAP];
	u32 i, n;

	/* the root nodes first, then what each read leads to */
	for (i = 0; i < nr && !ps->err; i++) {
		const struct btrfs_root_ref *root = ps->srch[i].root;
		struct pf_step step = {
			.bytenr = root->bytenr, .search = i, .leftmost = true,
			.check = {
				.root = root->objectid,
				.level = root->level,
				.transid = root->generation,
			},
		};

		if (root->found && add_step(&roots, &step))
			ps->err = -ENOMEM;
	}
	if (!ps->err)
		ps->err = take_steps(ps, &roots);
	free(roots.v);
	/* everything that went out comes back, whatever happened since */
	while (1) {
		if (!ps->err) {
			int ret = drain_waiting(ps);

			if (ret)
				ps->err = ret;
		}
		n = io_queue_reap(ps->q, done, PF_REAP);
		if (!n)
			break;
		for (i = 0; i < n; i++) {
			struct pf_block *blk = (struct pf_block *)((char *)done[i]->priv -
							   offsetof(struct pf_block, br));
			int ret = ps->err ? btrfs_block_read_finish(ps->fs_info, &blk->br) :
					    finish_block(ps, blk);

			if (ps->err) {
				blk->done = true;
				btrfs_tree_block_put(blk->br.eb);
				blk->br.eb = NULL;
			} else if (ret) {
				ps->err = ret;
			}
		}
	}
}

void btrfs_prefetch_searches(struct btrfs_fs_info *fs_info,
			     const struct btrfs_prefetch_search *srch, u32 nr)
{
	struct btrfs_error scratch = { 0 }, *prev;
	struct btrfs_read_observer quiet = { 0 }, observer;
	struct prefetch_state ps = {
		.fs_info = fs_info, .srch = srch, .leaf_bytes = fs_info->cache.bytes,
		.max_leaves_out = 2 * fs_info->read.io_threads,
	};
	u32 i;

	if (fs_info->read.io_threads <= 1 || !nr)
		return;
	ps.q = btrfs_io_queue(fs_info);
	if (!ps.q)
		return;
	prev = btrfs_error_redirect(fs_info, &scratch);
	observer = btrfs_set_read_observer(fs_info, quiet);
	prefetch_run(&ps, nr);
	for (i = 0; i < ps.map_cap; i++)
		free(ps.map[i]);
	free(ps.map);
	free(ps.refs);
	free(ps.waiting.v);
	btrfs_set_read_observer(fs_info, observer);
	btrfs_error_redirect(fs_info, prev);
}

void btrfs_prefetch_tree(struct btrfs_fs_info *fs_info,
			 const struct btrfs_root_ref *root,
			 const struct btrfs_key *key, unsigned int purpose)
{
	struct btrfs_prefetch_search srch = {
		.root = root, .purpose = purpose, .to_end = true,
	};

	if (key)
		srch.key = *key;
	btrfs_prefetch_searches(fs_info, &srch, 1);
}

/* ---- copy-on-write of a search path, as one transaction does it ----- */

/* The index of @bytenr in cowed[], or -1 */
static int64_t cow_sim_find(const struct btrfs_cow_sim *cs, u64 bytenr)
{
	u64 i;

	return u64_index_get(&cs->cowed_index, bytenr, &i) ? (int64_t)i : -1;
}

static int cow_sim_remember(struct btrfs_cow_sim *cs, u64 bytenr, u64 copy)
{
	if (cs->nr_cowed == cs->cap_cowed) {
		u64 cap = cs->cap_cowed ? cs->cap_cowed * 2 : 64;
		u64 *n, *c;

		if (cap > SIZE_MAX / sizeof(*n))
			return -ENOMEM;
		n = realloc(cs->cowed, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		cs->cowed = n;
		c = realloc(cs->copy_of, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		cs->copy_of = c;
		cs->cap_cowed = cap;
	}
	if (u64_index_put(&cs->cowed_index, bytenr, cs->nr_cowed))
		return -ENOMEM;
	cs->cowed[cs->nr_cowed] = bytenr;
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
static bool block_can_be_shared(const struct btrfs_subvol *sv,
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

	if (block_can_be_shared(sv, buf, is_root_node)) {
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

/* Pointers the transaction removed from node @bytenr (deleted leaves) */
static u32 node_shrunk_by(const struct btrfs_cow_sim *cs, u64 bytenr)
{
	u64 i;

	return u64_index_get(&cs->shrunk_index, bytenr, &i) ? cs->shrunk_by[i] : 0;
}

static int node_shrink(struct btrfs_cow_sim *cs, u64 bytenr)
{
	u64 i;

	if (u64_index_get(&cs->shrunk_index, bytenr, &i)) {
		cs->shrunk_by[i]++;
		return 0;
	}
	if (cs->nr_shrunk == cs->cap_shrunk) {
		u64 cap = cs->cap_shrunk ? cs->cap_shrunk * 2 : 16;
		u64 *b;
		u32 *n;

		b = realloc(cs->shrunk, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		cs->shrunk = b;
		n = realloc(cs->shrunk_by, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		cs->shrunk_by = n;
		cs->cap_shrunk = cap;
	}
	if (u64_index_put(&cs->shrunk_index, bytenr, cs->nr_shrunk))
		return -ENOMEM;
	cs->shrunk[cs->nr_shrunk] = bytenr;
	cs->shrunk_by[cs->nr_shrunk++] = 1;
	return 0;
}

/*
 * Copy the child of @parent at @slot, a sibling that balancing touches;
 * *@nr: its pointers as the transaction left them.
 */
static int cow_sibling(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
		       const struct btrfs_tree_block *parent, int slot, u64 *start,
		       u32 *nr)
{
	struct btrfs_tree_block *sib;
	int ret;

	ret = read_child(cs->fs_info, sv->root.objectid, parent, slot,
			 BTRFS_IO_OTHER, &sib);
	if (ret)
		return ret;
	cs->neighbour_cows += cow_sim_find(cs, sib->start) < 0;
	ret = btrfs_cow_block(cs, sv, sib, false);
	*start = sib->start;
	*nr = sib->nritems - min_t(u32, sib->nritems, node_shrunk_by(cs, sib->start));
	btrfs_tree_block_put(sib);
	return ret;
}

/*
 * A node merged once is not merged again: the replay keeps the image's
 * pointers, so it would see the same sparse node on every search.
 */
static bool node_balanced(const struct btrfs_cow_sim *cs, u64 bytenr)
{
	u64 i;

	return u64_index_get(&cs->balanced_index, bytenr, &i);
}

static int node_remember_balanced(struct btrfs_cow_sim *cs, u64 bytenr)
{
	if (cs->nr_balanced == cs->cap_balanced) {
		u64 cap = cs->cap_balanced ? cs->cap_balanced * 2 : 8;
		u64 *n = realloc(cs->balanced, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		cs->balanced = n;
		cs->cap_balanced = cap;
	}
	if (u64_index_put(&cs->balanced_index, bytenr, cs->nr_balanced))
		return -ENOMEM;
	cs->balanced[cs->nr_balanced++] = bytenr;
	return 0;
}

/* btrfs_free_tree_block() of the copy of @start: its ADD and this DROP cancel */
static int free_copy(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
		     u64 start, u8 level)
{
	int64_t i = cow_sim_find(cs, start);

	if (i < 0)
		return 0;
	return btrfs_sim_add_ref(cs->refs, false, BTRFS_DELAYED_REF_DROP,
				 cs->copy_of[i], cs->fs_info->nodesize, 0,
				 sv->root.objectid, level, 0);
}

/*
 * setup_nodes_for_search() of a deletion (ins_len < 0): a node, not the
 * root, with fewer than half its pointers goes to balance_level(), which
 * returns at once above a quarter and otherwise copies its left and right
 * siblings before pushing pointers between them.  The copies are replayed,
 * the pushes are not (the descent follows the image).
 */
static int balance_level_sim(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			     const struct btrfs_path *path, int level)
{
	const struct btrfs_tree_block *mid = path->nodes[level];
	const struct btrfs_tree_block *parent;
	u32 max = btrfs_node_max_ptrs(cs->fs_info->nodesize);
	u32 nr = mid->nritems - min_t(u32, mid->nritems, node_shrunk_by(cs, mid->start));
	u32 left_nr = 0, right_nr = 0;
	u64 left = 0, right = 0;
	int pslot, ret = 0;

	if (level >= BTRFS_MAX_LEVEL - 1 || !path->nodes[level + 1])
		return 0;
	/* below half goes to balance_level(), which stops above a quarter */
	if (nr > max / 4)
		return 0;
	parent = path->nodes[level + 1];
	pslot = path->slots[level + 1];
	if (pslot > 0)
		ret = cow_sibling(cs, sv, parent, pslot - 1, &left, &left_nr);
	if (!ret && pslot + 1 < (int)parent->nritems)
		ret = cow_sibling(cs, sv, parent, pslot + 1, &right, &right_nr);
	if (ret || !left || left_nr + nr > max || node_balanced(cs, mid->start))
		return ret;
	ret = node_remember_balanced(cs, mid->start);
	if (ret)
		return ret;
	/*
	 * push_node_left(left, mid) empties mid into left; then the right
	 * sibling's pointers fill the empty mid (push_node_left(mid, right))
	 * and the right node is freed, or, with no right sibling, mid is.
	 * Either way one copy is freed and the parent loses a pointer.
	 */
	if (right && right_nr <= max)
		ret = free_copy(cs, sv, right, mid->level);
	else
		ret = free_copy(cs, sv, mid->start, mid->level);
	if (!ret)
		ret = node_shrink(cs, parent->start);
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
	if (cs->nr_leaves == cs->cap_leaves) {
		u64 cap = cs->cap_leaves ? cs->cap_leaves * 2 : 16;
		struct btrfs_sim_leaf **n;

		n = realloc(cs->leaves, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		cs->leaves = n;
		cs->cap_leaves = cap;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->start = eb->start;
	l->nritems = eb->nritems;
	l->gone = calloc(eb->nritems ? eb->nritems : 1, 1);
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
	if (l->gone[slot])
		return;
	l->gone[slot] = 1;
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
	ret = node_shrink(cs, path->nodes[1]->start);
	if (ret || i < 0)
		return ret;
	return btrfs_sim_add_ref(cs->refs, false, BTRFS_DELAYED_REF_DROP,
				 cs->copy_of[i], cs->fs_info->nodesize, 0,
				 sv->root.objectid, 0, 0);
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
		ret = read_child(cs->fs_info, sv->root.objectid, parent, slot,
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
 * Items of @l that move to a sibling with @room bytes free: to the right
 * the last ones down to the insertion slot @at, to the left the first
 * ones up to it.  How many moved.
 */
static u32 sim_take_items(struct btrfs_sim_leaf *l, const struct btrfs_tree_block *leaf,
			  int at, int dir, u32 room, struct btrfs_sim_leaf *to)
{
	int slot = dir > 0 ? (int)l->nritems - 1 : 0;
	u32 moved = 0;

	for (; dir > 0 ? slot >= at : slot < at; slot -= dir) {
		if (l->gone[slot])
			continue;
		if (item_space(leaf, slot) > room)
			break;
		room -= item_space(leaf, slot);
		to->pushed_in += item_space(leaf, slot);
		sim_leaf_gone(l, leaf, slot);
		moved++;
	}
	return moved;
}

/*
 * push_leaf_left() with empty = 1: the left sibling under the same parent
 * is copied if it has room for the leaf's first item, then takes items
 * from the front while they fit.
 */
static int sim_push_left(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			 const struct btrfs_path *path, const struct btrfs_tree_block *leaf,
			 struct btrfs_sim_leaf *l)
{
	const u32 data = btrfs_leaf_data_size(cs->fs_info->nodesize);
	const struct btrfs_tree_block *parent = path->nodes[1];
	struct btrfs_tree_block *left;
	struct btrfs_sim_leaf *ll;
	u32 slot, free_space, first = 0;
	int ret;

	if (!parent)
		return 0;
	for (slot = 0; slot < l->nritems && l->gone[slot]; slot++)
		;
	if (slot == l->nritems)
		return 0;
	first = item_space(leaf, slot);
	ret = sim_sibling(cs, sv, parent, path->slots[1], -1, &left, &ll);
	if (ret || !left)
		return ret;
	free_space = data - sim_leaf_used(ll, left);
	if (free_space < first)
		goto out;
	cs->neighbour_cows += cow_sim_find(cs, left->start) < 0;
	ret = btrfs_cow_block(cs, sv, left, false);
	if (!ret)
		sim_take_items(l, leaf, (int)l->nritems, -1, free_space, ll);
out:
	btrfs_tree_block_put(left);
	return ret;
}

/*
 * push_leaf_right() with empty = 1 and the whole leaf as data_size: the
 * right sibling is copied, and takes every item, only if all of them fit.
 */
static int sim_push_right(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			  const struct btrfs_path *path, const struct btrfs_tree_block *leaf,
			  struct btrfs_sim_leaf *l)
{
	const u32 data = btrfs_leaf_data_size(cs->fs_info->nodesize);
	const struct btrfs_tree_block *parent = path->nodes[1];
	u32 used = sim_leaf_used(l, leaf), slot;
	struct btrfs_tree_block *right;
	struct btrfs_sim_leaf *rl;
	int ret;

	if (!parent)
		return 0;
	ret = sim_sibling(cs, sv, parent, path->slots[1], 1, &right, &rl);
	if (ret || !right)
		return ret;
	if (data - sim_leaf_used(rl, right) < used)
		goto out;
	cs->neighbour_cows += cow_sim_find(cs, right->start) < 0;
	ret = btrfs_cow_block(cs, sv, right, false);
	if (ret)
		goto out;
	rl->pushed_in += used;
	l->pushed_in = 0;
	for (slot = 0; slot < l->nritems; slot++)
		sim_leaf_gone(l, leaf, slot);
out:
	btrfs_tree_block_put(right);
	return ret;
}

/* ---- inserting an item: split_leaf()'s pushes ------------------------ */

/*
 * One sibling's push for an insert (push_leaf_right() or push_leaf_left()
 * with empty = 0): copied when it has @need bytes free, then it takes the
 * items beyond the insertion slot on its side while they fit.  1 when
 * nothing moved (the next push is tried), 0 when it did, <0.
 */
static int sim_insert_push(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			   const struct btrfs_path *path, struct btrfs_sim_leaf *l,
			   int dir, u32 need)
{
	const u32 data = btrfs_leaf_data_size(cs->fs_info->nodesize);
	const struct btrfs_tree_block *leaf = path->nodes[0];
	struct btrfs_tree_block *sib;
	struct btrfs_sim_leaf *sl;
	u32 free_space;
	int ret;

	ret = sim_sibling(cs, sv, path->nodes[1], path->slots[1], dir, &sib, &sl);
	if (ret || !sib)
		return ret ? ret : 1;
	free_space = data - sim_leaf_used(sl, sib);
	ret = 1;
	if (free_space >= need) {
		cs->neighbour_cows += cow_sim_find(cs, sib->start) < 0;
		ret = btrfs_cow_block(cs, sv, sib, false);
		/* past the last key the item goes first into the right sibling */
		if (!ret && dir > 0 && path->slots[0] >= (int)l->nritems)
			ret = 0;
		else if (!ret)
			ret = sim_take_items(l, leaf, path->slots[0], dir, free_space, sl) ? 0 : 1;
	}
	btrfs_tree_block_put(sib);
	return ret;
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
		need = data_size - (path->slots[0] < (int)l->nritems ? free_space : 0);
		ret = sim_insert_push(cs, sv, path, l, 1, need);
		if (ret == 1) {
			need = data_size - (path->slots[0] > 0 ? free_space : 0);
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
	if (ret || l->deleted)
		return ret;
	for (i = slot; i < slot + nr && i < (int)l->nritems; i++)
		sim_leaf_gone(l, leaf, i);
	/* the root leaf stays, however empty */
	if (sv->root.level == 0)
		return 0;
	if (!sim_leaf_items(l) && !l->pushed_in)
		return sim_del_leaf(cs, sv, path, l);
	if (sim_leaf_used(l, leaf) >= btrfs_leaf_data_size(cs->fs_info->nodesize) / 3)
		return 0;
	if (sim_leaf_items(l)) {
		ret = sim_push_left(cs, sv, path, leaf, l);
		if (!ret && sim_leaf_items(l))
			ret = sim_push_right(cs, sv, path, leaf, l);
	}
	if (!ret && !sim_leaf_items(l) && !l->pushed_in)
		ret = sim_del_leaf(cs, sv, path, l);
	return ret;
}

/* ---- inserting items: split_leaf() and the pushes before it -------- */

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
 * Node levels are not replayed: an insert under a level-1 node holding
 * BTRFS_NODEPTRS_PER_BLOCK - 3 pointers (which setup_nodes_for_search()
 * splits) sets ->inexact.
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
	free(ts->freed_starts);
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

/* Move items [from, from + nr) of @src to position @at of @dst */
static int sim_move(struct btrfs_sim_items_leaf *dst, u32 at,
		    struct btrfs_sim_items_leaf *src, u32 from, u32 nr)
{
	int ret = sim_leaf_reserve(dst, dst->nr + nr);

	if (ret)
		return ret;
	dst->touched = src->touched = true;
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

	if (!l || sim_leaf_reserve(l, eb->nritems ? eb->nritems : 1)) {
		sim_items_leaf_free(l);
		return -ENOMEM;
	}
	l->start = eb->start;
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

/* The key range of the level-1 node of @path, from the levels above */
static void sim_group_range(const struct btrfs_path *path, struct btrfs_sim_group *g)
{
	int level;

	for (level = 2; level < BTRFS_MAX_LEVEL && path->nodes[level]; level++)
		if (path->slots[level] > 0) {
			btrfs_node_key_to_cpu(path->nodes[level], path->slots[level], &g->lo);
			g->has_lo = true;
			break;
		}
	for (level = 2; level < BTRFS_MAX_LEVEL && path->nodes[level]; level++)
		if (path->slots[level] + 1 < (int)path->nodes[level]->nritems) {
			btrfs_node_key_to_cpu(path->nodes[level], path->slots[level] + 1, &g->hi);
			g->has_hi = true;
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
	sim_group_range(path, g);
	for (slot = 0; slot < parent->nritems; slot++) {
		struct btrfs_tree_block *eb;

		ret = read_child(ts->fs_info, ts->root.objectid, parent, slot, BTRFS_IO_OTHER, &eb);
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
	if (ts->nr_groups == ts->cap_groups) {
		u32 cap = ts->cap_groups ? ts->cap_groups * 2 : 4;
		struct btrfs_sim_group *n = realloc(ts->groups, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ts->groups = n;
		ts->cap_groups = cap;
	}
	g = &ts->groups[ts->nr_groups];
	memset(g, 0, sizeof(*g));
	if (ts->source) {
		ret = sim_find_group(ts->source, key, &from);
		if (!ret)
			ret = sim_copy_group(g, from);
	} else {
		ret = btrfs_search_slot(ts->fs_info, &ts->root, key, &path, BTRFS_IO_OTHER);
		if (ret >= 0)
			ret = sim_load_group(ts, &path, g);
		btrfs_release_path(&path);
	}
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

/*
 * push_leaf_right(): @data_size must fit in the sibling, @min_data is what
 * the insert at the path's slot adds; 0 pushed (or moved the path), 1 not
 */
static int sim_push_right_items(struct btrfs_tree_sim *ts, struct btrfs_sim_group *g,
				u32 *leaf, u32 *slot, u32 min_data, u32 data_size,
				bool empty, u32 min_slot)
{
	struct btrfs_sim_items_leaf *left, *right;
	u32 free_space, nr, push_space = 0, push_items = 0, i;
	int ret;

	if (!g->has_parent || *leaf + 1 >= g->nr)
		return 1;
	left = g->leaves[*leaf];
	right = g->leaves[*leaf + 1];
	free_space = sim_free(ts, right);
	if (free_space < data_size)
		return 1;
	/* push_leaf_right() COWs the sibling before it counts what fits */
	right->touched = true;
	if (!left->nr)
		return 1;
	if (*slot == left->nr && !empty) {
		/* past the left's last key: the item goes first into the right */
		(*leaf)++;
		*slot = 0;
		return 0;
	}
	nr = empty ? 0 : (min_slot > 1 ? min_slot : 1);
	if (*slot >= left->nr)
		push_space += min_data;
	for (i = left->nr - 1; i + 1 > nr; i--) {
		u32 this_size = left->items[i].size + sizeof(struct btrfs_item);

		if (!empty && push_items > 0) {
			if (*slot > i)
				break;
			if (*slot == i && sim_free(ts, left) + push_space * 2 > free_space)
				break;
		}
		if (*slot == i)
			push_space += min_data;
		if (this_size + push_space > free_space)
			break;
		push_items++;
		push_space += this_size;
		if (i == 0)
			break;
	}
	if (!push_items)
		return 1;
	ret = sim_move(right, 0, left, left->nr - push_items, push_items);
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
	u32 free_space, nr, push_space = 0, push_items = 0, i, old_left;
	int ret;

	if (!g->has_parent || *leaf == 0)
		return 1;
	right = g->leaves[*leaf];
	left = g->leaves[*leaf - 1];
	if (!right->nr)
		return 1;
	free_space = sim_free(ts, left);
	if (free_space < data_size)
		return 1;
	/* push_leaf_left() COWs the sibling before it counts what fits */
	left->touched = true;
	nr = empty ? right->nr : right->nr - 1;
	if (nr > max_slot)
		nr = max_slot;
	for (i = 0; i < nr; i++) {
		u32 this_size = right->items[i].size + sizeof(struct btrfs_item);

		if (!empty && push_items > 0) {
			if (*slot < i)
				break;
			if (*slot == i && sim_free(ts, right) + push_space * 2 > free_space)
				break;
		}
		if (*slot == i)
			push_space += min_data;
		if (this_size + push_space > free_space)
			break;
		push_items++;
		push_space += this_size;
	}
	if (!push_items)
		return 1;
	old_left = left->nr;
	ret = sim_move(left, left->nr, right, 0, push_items);
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
	if (g->nr + 1 >= btrfs_node_max_ptrs(ts->fs_info->nodesize) - 3)
		ts->inexact = true;
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
	}
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
	u32 need = data_size, have = sim_free(ts, g->leaves[*leaf]);
	int ret;

	if (*slot < g->leaves[*leaf]->nr)
		need = need > have ? need - have : 0;
	ret = sim_push_right_items(ts, g, leaf, slot, 1, need, false, *slot);
	if (ret < 0)
		return ret;
	if (*slot == 0 || *slot == g->leaves[*leaf]->nr ||
	    sim_free(ts, g->leaves[*leaf]) >= data_size)
		return 0;
	need = data_size;
	have = sim_free(ts, g->leaves[*leaf]);
	if (*slot > 0)
		need = need > have ? need - have : 0;
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
		u32 need = data_size, have = sim_free(ts, g->leaves[*leaf]);

		if (*slot < g->leaves[*leaf]->nr)
			need = need > have ? need - have : 0;
		ret = sim_push_right_items(ts, g, leaf, slot, need, need, false, 0);
		if (ret == 1) {
			need = data_size;
			have = sim_free(ts, g->leaves[*leaf]);
			if (*slot > 0)
				need = need > have ? need - have : 0;
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
			ret = sim_move(right, 0, l, mid, nritems - mid);
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
	ret = sim_lookup(ts, &keys[0], &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	g->leaves[leaf]->touched = true;
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
	l->touched = true;
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
 * btrfs_set_item_key_safe(): the item keeps its place, only its key
 * changes (the new key sorts between the same neighbours); 1 if absent
 */
int btrfs_tree_sim_set_key(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			   const struct btrfs_key *new_key)
{
	struct btrfs_sim_group *g;
	u32 leaf, slot;
	bool found;
	int ret;

	ts->changes++;
	ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	if (!found)
		return 1;
	g->leaves[leaf]->items[slot].key = *new_key;
	return 0;
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
		(*g)->leaves[*leaf]->touched = true;
	return ret;
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

static int sim_free_leaf(struct btrfs_tree_sim *ts, struct btrfs_sim_group *g, u32 leaf)
{
	struct btrfs_sim_items_leaf *l = g->leaves[leaf];

	if (l->start) {
		if (ts->nr_freed_starts == ts->cap_freed_starts) {
			u32 cap = ts->cap_freed_starts ? ts->cap_freed_starts * 2 : 8;
			u64 *n = realloc(ts->freed_starts, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			ts->freed_starts = n;
			ts->cap_freed_starts = cap;
		}
		ts->freed_starts[ts->nr_freed_starts++] = l->start;
	}
	memmove(&g->leaves[leaf], &g->leaves[leaf + 1], (g->nr - leaf - 1) * sizeof(*g->leaves));
	g->nr--;
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
	bool found;
	int ret;

	ts->changes++;
	ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	if (!found)
		return 1;
	l = g->leaves[leaf];
	l->touched = true;
	memmove(&l->items[slot], &l->items[slot + 1], (l->nr - slot - 1) * sizeof(*l->items));
	l->nr--;
	if (!balance && l->nr)
		return 0;
	/* the root leaf stays, however empty; a root node is not collapsed here */
	if (!g->has_parent || (l->nr && sim_space(l, 0, l->nr) >= sim_lds(ts) / 3))
		return 0;
	if (l->nr) {
		at = leaf;
		slot = 0;
		ret = sim_push_left_items(ts, g, &at, &slot, 0,
					  l->items[0].size + sizeof(struct btrfs_item), true,
					  (u32)-1);
		if (ret < 0)
			return ret;
		/* the leaf is at @leaf still when not all of it went left */
		if (l->nr) {
			at = leaf;
			slot = 0;
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

	ts->changes++;
	ret = sim_cow_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	if (!found)
		return 1;
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
	bool found;
	int ret;

	ts->changes++;
	ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	if (!found)
		return 1;
	if (new_size < g->leaves[leaf]->items[slot].size)
		g->leaves[leaf]->items[slot].size = new_size;
	g->leaves[leaf]->touched = true;
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
	bool found;
	int ret;

	ts->changes++;
	ret = btrfs_tree_sim_extend(ts, key, sizeof(struct btrfs_item), 0);
	if (ret)
		return ret;
	ret = sim_lookup(ts, key, &g, &leaf, &slot, &found);
	if (ret)
		return ret;
	if (!found)
		return 1;
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
