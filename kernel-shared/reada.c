// SPDX-License-Identifier: GPL-2.0
/*
 * Read-ahead of many tree searches at once, the job of the kernel's
 * fs/btrfs/reada.c (btrfs_reada_add(), reada_start_machine(): kernels up
 * to 5.12, removed in 5.13) and of reada_for_search() in ctree.c: the
 * blocks that btrfs_search_slot() and the btrfs_next_leaf() steps after
 * it will read, kept in flight together through the run's queue of
 * concurrent reads (common/io-batch.c: io_uring, or threads).  The kernel
 * mount (6.18) reads these blocks one search at a time; the tool reads
 * the same blocks, each once, in fewer round trips, and the searches then
 * find them in the cache of extent_io.c.  What each search reads is
 * btrfs_search_slot()'s rule (ctree.c), unchanged since 5.x.
 *
 * It keeps at most twice the queue's depth of leaves out at a time, and
 * stops starting leaves while a reap's worth of reads wait finished (a
 * warm page cache finishes each as it is submitted), so that their blocks
 * are reused while the CPU's caches still hold them.
 *
 * The mount's read-ahead is deferred until a read misses the page cache
 * (struct btrfs_reada_pending): a warm cache serves each search's reads
 * as they come, and planning the read-ahead (sorting the steps, a record
 * per block, the map) was 1 ms of a 9 ms warm inspect that --io-threads 1
 * did not pay.  A cold cache misses at the first tree block, where the
 * read-ahead then starts: later by one preadv2(RWF_NOWAIT) call.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/reada.h"
#include "kernel-shared/tree-block.h"

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
	/*
	 * The reads' errors, kept from fs_info->err: a block that fails here
	 * is read again by the search that needs it, which records why
	 */
	struct btrfs_error read_err;
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

/*
 * Room for another leaf: fewer than max_leaves_out are out, and fewer
 * than a reap's worth of reads have finished unseen.  From a warm page
 * cache every read finishes as it is submitted, and going on would copy
 * up to twice the depth of leaves ahead of their checks and searches, each
 * into a block of its own (fresh memory, and out of the CPU's cache by
 * the time it is checked); a slow device keeps the depth full as before.
 */
static bool leaf_room(const struct prefetch_state *ps)
{
	return ps->leaves_out < ps->max_leaves_out && io_queue_ready(ps->q) < PF_REAP;
}

/* Start waiting leaves while there is room */
static int drain_waiting(struct prefetch_state *ps)
{
	struct pf_waiting *w = &ps->waiting;
	int ret = 0;

	if (ps->draining)
		return 0;		/* the loop further up goes on */
	ps->draining = true;
	while (!ret && !ps->err && w->head < w->nr && leaf_room(ps))
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
 * A leaf without room (leaf_room()) waits its turn (struct pf_waiting): the
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
	if (blk->br.check.level || (w->head == w->nr && leaf_room(ps)))
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
				blk->br.err = &ps->read_err;
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

			if (btrfs_read_tree_block(ps->fs_info, &ps->read_err, blk->br.bytenr,
						  &st->check, blk->br.purpose, &eb))
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

/*
 * A deferred read-ahead: the searches, and their roots by value (the
 * caller's may live on its stack), each root kept once for a run of
 * searches that share it, where srch[i].root points.
 */
struct reada_root {
	struct reada_root *next;
	struct btrfs_root_ref ref;
};

struct btrfs_reada_pending {
	struct btrfs_prefetch_search *srch;
	struct reada_root *roots;
	u32 nr;
	u32 cap;
};

static struct btrfs_reada_pending *pending_get(struct btrfs_fs_info *fs_info)
{
	if (!fs_info->reada_pending)
		fs_info->reada_pending = calloc(1, sizeof(*fs_info->reada_pending));
	return fs_info->reada_pending;
}

/*
 * srch[from, nr) pointed at roots of their own: a caller's root copied
 * once for each run of searches with the same pointer (valid while the
 * caller's call lasts, which is when this runs)
 */
static int own_roots(struct btrfs_reada_pending *p, u32 from)
{
	const struct btrfs_root_ref *last = NULL;
	struct reada_root *r = NULL;
	u32 i;

	for (i = from; i < p->nr; i++) {
		if (!p->srch[i].root)
			continue;
		if (p->srch[i].root != last) {
			last = p->srch[i].root;
			r = malloc(sizeof(*r));
			if (!r) {
				/* the rest never ran: no root to point at */
				p->nr = i;
				return -ENOMEM;
			}
			r->ref = *last;
			r->next = p->roots;
			p->roots = r;
		}
		p->srch[i].root = &r->ref;
	}
	return 0;
}

static int defer_searches(struct btrfs_fs_info *fs_info,
			  const struct btrfs_prefetch_search *srch, u32 nr)
{
	struct btrfs_reada_pending *p = pending_get(fs_info);
	u32 cap, from;

	if (!p)
		return -ENOMEM;
	if (p->nr + nr > p->cap) {
		struct btrfs_prefetch_search *s;

		/* room for the small read-aheads that join later (the dev tree's) */
		cap = p->nr + nr > 2 * p->cap ? p->nr + nr + 16 : 2 * p->cap;
		s = realloc(p->srch, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		p->srch = s;
		p->cap = cap;
	}
	from = p->nr;
	memcpy(&p->srch[p->nr], srch, nr * sizeof(*srch));
	p->nr += nr;
	return own_roots(p, from);
}

/*
 * The caller's malloc'd array of @cap searches handed over when nothing
 * is deferred yet (the mount's read-ahead: 1,563 searches on 3T, whose
 * copy cost fresh pages); joined by copy otherwise.
 */
static int defer_searches_take(struct btrfs_fs_info *fs_info,
			       struct btrfs_prefetch_search *srch, u32 nr, u32 cap)
{
	struct btrfs_reada_pending *p = fs_info->reada_pending;

	if (p) {
		int ret = defer_searches(fs_info, srch, nr);

		free(srch);
		return ret;
	}
	p = pending_get(fs_info);
	if (!p) {
		free(srch);
		return -ENOMEM;
	}
	p->srch = srch;
	p->cap = cap;
	p->nr = nr;
	return own_roots(p, 0);
}

void btrfs_prefetch_drop_deferred(struct btrfs_fs_info *fs_info)
{
	struct btrfs_reada_pending *p = fs_info->reada_pending;

	if (!p)
		return;
	fs_info->reada_pending = NULL;
	while (p->roots) {
		struct reada_root *r = p->roots;

		p->roots = r->next;
		free(r);
	}
	free(p->srch);
	free(p);
}

bool btrfs_prefetch_deferred(const struct btrfs_fs_info *fs_info)
{
	return fs_info->reada_pending != NULL;
}

void btrfs_prefetch_run_deferred(struct btrfs_fs_info *fs_info)
{
	struct btrfs_reada_pending *p = fs_info->reada_pending;

	if (!p)
		return;
	/* taken off first: the reads it makes try no cache and defer nothing */
	fs_info->reada_pending = NULL;
	btrfs_prefetch_searches(fs_info, p->srch, p->nr);
	fs_info->reada_pending = p;
	btrfs_prefetch_drop_deferred(fs_info);
}

void btrfs_prefetch_searches_deferred(struct btrfs_fs_info *fs_info,
				      struct btrfs_prefetch_search *srch, u32 nr, u32 cap)
{
	if (fs_info->read.io_threads <= 1 || !nr) {
		free(srch);
		return;
	}
	/*
	 * no memory to keep them: read ahead now, as before (what was kept,
	 * and the searches whose roots could not be copied)
	 */
	if (defer_searches_take(fs_info, srch, nr, cap))
		btrfs_prefetch_run_deferred(fs_info);
}

void btrfs_prefetch_searches(struct btrfs_fs_info *fs_info,
			     const struct btrfs_prefetch_search *srch, u32 nr)
{
	struct btrfs_read_observer quiet = { 0 }, observer;
	struct prefetch_state ps = {
		.fs_info = fs_info, .srch = srch, .leaf_bytes = fs_info->cache.bytes,
		.max_leaves_out = 2 * fs_info->read.io_threads,
	};
	u32 i;

	if (fs_info->read.io_threads <= 1 || !nr)
		return;
	/* one is deferred: this one joins it, or both run now */
	if (fs_info->reada_pending) {
		if (!defer_searches(fs_info, srch, nr))
			return;
		btrfs_prefetch_run_deferred(fs_info);
	}
	ps.q = btrfs_io_queue(fs_info);
	if (!ps.q)
		return;
	observer = btrfs_set_read_observer(fs_info, quiet);
	prefetch_run(&ps, nr);
	for (i = 0; i < ps.map_cap; i++)
		free(ps.map[i]);
	free(ps.map);
	free(ps.refs);
	free(ps.waiting.v);
	btrfs_set_read_observer(fs_info, observer);
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
