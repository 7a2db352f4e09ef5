// SPDX-License-Identifier: GPL-2.0
/*
 * The delayed-ref reservation for dropping data extents, after
 * fs/btrfs/delayed-ref.c (add_delayed_ref_head, btrfs_update_delayed_refs_rsv),
 * delayed-ref.h (btrfs_calc_delayed_ref_bytes/_csum_bytes) and fs.h
 * (btrfs_csum_bytes_to_leaves).  Behaviour reproduced: 6.7-6.18 and,
 * for comparison, the kernels before "btrfs: stop doing excessive space
 * reservation for csum deletion" (charged as delayed ref updates).
 *
 * Also the delayed refs of one transaction (csum-delete --file): heads and
 * ref nodes as add_delayed_ref(), insert_delayed_ref() and
 * update_existing_head_ref() keep them, with the size changes of
 * delayed_refs_rsv they make, and btrfs_run_delayed_refs() of everything
 * queued (6.7-6.18).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/hash.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/fs.h"
#include "kernel-shared/kernel-version.h"

/* One csum item may fill a whole leaf: only one item header is taken off */
u32 btrfs_csums_per_leaf(const struct btrfs_csum_params *p)
{
	return btrfs_max_item_size(p->nodesize) / p->csum_size;
}

static u32 sectorsize_bits(u32 sectorsize)
{
	u32 bits = 0;

	while ((1U << bits) < sectorsize)
		bits++;
	return bits;
}

u64 btrfs_csum_bytes_to_leaves(const struct btrfs_csum_params *p, u64 csum_bytes)
{
	u64 sectors = csum_bytes >> sectorsize_bits(p->sectorsize);
	u32 per_leaf = btrfs_csums_per_leaf(p);

	return (sectors + per_leaf - 1) / per_leaf;
}

/* Deleting csums only COWs the path: no split, no free space tree update */
u64 btrfs_calc_delayed_ref_csum_bytes(const struct btrfs_csum_params *p,
				      u64 num_csum_items)
{
	return btrfs_calc_metadata_size(p->nodesize, 1) * num_csum_items;
}

void btrfs_csum_params_from_fs(const struct btrfs_fs_info *fs_info,
			       struct btrfs_csum_params *p)
{
	p->nodesize = fs_info->nodesize;
	p->sectorsize = fs_info->sectorsize;
	p->csum_size = fs_info->csum_size;
	p->free_space_tree_opt = btrfs_fs_compat_ro(fs_info,
				BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE);
}

/* The same for @model's kernel: before v5.17 no free-space-tree doubling */
void btrfs_csum_params_for_kernel(const struct btrfs_fs_info *fs_info,
				  const struct btrfs_kernel_model *model,
				  struct btrfs_csum_params *p)
{
	btrfs_csum_params_from_fs(fs_info, p);
	p->free_space_tree_opt = btrfs_free_space_tree_accounted(fs_info, model);
}

static void csum_delete_update_totals(struct btrfs_csum_delete_calc *calc)
{
	calc->total = calc->drop_ref_bytes + calc->csum_bytes;
	calc->total_before = calc->drop_ref_bytes + calc->csum_bytes_before;
}

/*
 * @count new delayed-ref heads for extents of @disk_bytes each, as
 * add_delayed_ref_head() charges a data head whose first action is a drop:
 * every head rounds its csum leaves up on its own, which is why the total
 * is not the rounding of the summed bytes.  The ref nodes are separate
 * (btrfs_csum_delete_add_refs): heads and refs only go one to one when
 * each extent has a single reference.
 */
void btrfs_csum_delete_add_heads(const struct btrfs_csum_params *p,
				 const struct btrfs_kernel_model *model,
				 struct btrfs_csum_delete_calc *calc,
				 u64 disk_bytes, u64 count)
{
	u64 leaves = btrfs_csum_bytes_to_leaves(p, disk_bytes);
	u64 before = leaves * btrfs_calc_delayed_ref_bytes(p->nodesize,
							   p->free_space_tree_opt, 1);
	u64 after = btrfs_calc_delayed_ref_csum_bytes(p, leaves);

	calc->extents += count;
	calc->disk_bytes += disk_bytes * count;
	calc->csum_leaves += leaves * count;
	calc->csum_bytes_before += before * count;
	calc->csum_bytes += (model->csum_delete_metadata_size ? after : before) * count;
	csum_delete_update_totals(calc);
}

/*
 * @count ref nodes that insert_delayed_ref() did not merge into an existing
 * one: each is one delayed_ref_updates, charged delayed_ref_bytes(1).
 */
void btrfs_csum_delete_add_refs(const struct btrfs_csum_params *p,
				struct btrfs_csum_delete_calc *calc, u64 count)
{
	u64 ref = btrfs_calc_delayed_ref_bytes(p->nodesize, p->free_space_tree_opt, 1);

	calc->refs += count;
	calc->drop_ref_bytes += ref * count;
	csum_delete_update_totals(calc);
}

/* @count extents of @disk_bytes each, each with one dropped ref */
void btrfs_csum_delete_add(const struct btrfs_csum_params *p,
			   const struct btrfs_kernel_model *model,
			   struct btrfs_csum_delete_calc *calc, u64 disk_bytes,
			   u64 count)
{
	btrfs_csum_delete_add_heads(p, model, calc, disk_bytes, count);
	btrfs_csum_delete_add_refs(p, calc, count);
}

/* ---- the delayed refs of one transaction ---------------------------- */

void btrfs_delayed_refs_sim_init(struct btrfs_delayed_refs_sim *sim,
				 const struct btrfs_csum_params *params,
				 const struct btrfs_kernel_model *model)
{
	*sim = (struct btrfs_delayed_refs_sim){ .params = params, .model = model };
}

void btrfs_delayed_refs_sim_release(struct btrfs_delayed_refs_sim *sim)
{
	free(sim->heads);
	free(sim->refs);
	sim->heads = NULL;
	sim->refs = NULL;
	sim->heads_cap = sim->refs_cap = 0;
	sim->heads_used = sim->refs_used = 0;
}

/*
 * The open-addressing tables of heads and ref nodes start at this many
 * slots and double whenever one more entry would fill them past three
 * quarters (linear probing stays short: 2.5 probes a miss on average).
 */
#define SIM_TABLE_MIN_SLOTS	256

static bool sim_table_full(u64 used, u64 cap)
{
	return (used + 1) * 4 > cap * 3;
}

static struct btrfs_sim_head *head_slot(struct btrfs_sim_head *tab, u64 cap,
					u64 bytenr)
{
	u64 i = hash_mix64(bytenr) & (cap - 1);

	while (tab[i].bytenr && tab[i].bytenr != bytenr)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

const struct btrfs_sim_head *btrfs_sim_find_head(const struct btrfs_delayed_refs_sim *sim,
						  u64 bytenr)
{
	const struct btrfs_sim_head *h;

	if (!sim->heads_cap)
		return NULL;
	h = head_slot(sim->heads, sim->heads_cap, bytenr);
	return h->bytenr ? h : NULL;
}

static int grow_heads(struct btrfs_delayed_refs_sim *sim)
{
	u64 cap = sim->heads_cap ? sim->heads_cap * 2 : SIM_TABLE_MIN_SLOTS, i;
	struct btrfs_sim_head *tab;

	if (cap > SIZE_MAX / sizeof(*tab))
		return -ENOMEM;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (i = 0; i < sim->heads_cap; i++)
		if (sim->heads[i].bytenr)
			*head_slot(tab, cap, sim->heads[i].bytenr) = sim->heads[i];
	free(sim->heads);
	sim->heads = tab;
	sim->heads_cap = cap;
	return 0;
}

/* The head of @bytenr, created with ref_mod 0 if new (*@created) */
static int sim_get_head(struct btrfs_delayed_refs_sim *sim, u64 bytenr,
			u64 num_bytes, bool is_data, struct btrfs_sim_head **ret,
			bool *created)
{
	struct btrfs_sim_head *h;
	int err;

	if (sim_table_full(sim->heads_used, sim->heads_cap)) {
		err = grow_heads(sim);
		if (err)
			return err;
	}
	h = head_slot(sim->heads, sim->heads_cap, bytenr);
	if (!h->bytenr) {
		h->bytenr = bytenr;
		h->is_data = is_data;
		sim->heads_used++;
	}
	*created = !h->queued;
	if (*created) {
		h->num_bytes = num_bytes;
		h->ref_mod = 0;
		h->queued = true;
	}
	*ret = h;
	return 0;
}

/* Data refs compare (root, owner, offset), shared ones their parent only */
static bool sim_ref_equal(const struct btrfs_sim_ref *a, const struct btrfs_sim_ref *b)
{
	if (a->bytenr != b->bytenr || a->type != b->type ||
	    a->root_or_parent != b->root_or_parent)
		return false;
	if (a->type != BTRFS_EXTENT_DATA_REF_KEY)
		return true;
	return a->owner == b->owner && a->offset == b->offset;
}

static struct btrfs_sim_ref *ref_slot(struct btrfs_sim_ref *tab, u64 cap,
				      const struct btrfs_sim_ref *key)
{
	u64 h = hash_mix64(key->bytenr ^ hash_mix64(key->root_or_parent ^
			hash_mix64(key->owner ^ hash_mix64(key->offset + key->type))));
	u64 i = h & (cap - 1);

	while (tab[i].used && !sim_ref_equal(&tab[i], key))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int grow_refs(struct btrfs_delayed_refs_sim *sim)
{
	u64 cap = sim->refs_cap ? sim->refs_cap * 2 : SIM_TABLE_MIN_SLOTS, i;
	struct btrfs_sim_ref *tab;

	if (cap > SIZE_MAX / sizeof(*tab))
		return -ENOMEM;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (i = 0; i < sim->refs_cap; i++)
		if (sim->refs[i].used)
			*ref_slot(tab, cap, &sim->refs[i]) = sim->refs[i];
	free(sim->refs);
	sim->refs = tab;
	sim->refs_cap = cap;
	return 0;
}

static void sim_resize(struct btrfs_delayed_refs_sim *sim, int64_t bytes)
{
	sim->size += bytes;
	if (sim->size > sim->peak)
		sim->peak = sim->size;
}

static u64 sim_csum_charge(const struct btrfs_delayed_refs_sim *sim, u64 num_bytes)
{
	const struct btrfs_csum_params *p = sim->params;
	u64 leaves = btrfs_csum_bytes_to_leaves(p, num_bytes);

	if (sim->model->csum_delete_metadata_size)
		return btrfs_calc_delayed_ref_csum_bytes(p, leaves);
	return leaves * btrfs_calc_delayed_ref_bytes(p->nodesize,
						     p->free_space_tree_opt, 1);
}

int btrfs_sim_set_lone_refs(struct btrfs_delayed_refs_sim *sim, struct packed_refs *lone,
			    u64 nr, u64 root, u64 owner)
{
	int ret;

	if (nr > BTRFS_SIM_MAX_LONE || !lone->nr)
		return 0;
	/* complete now: held to the commit, at its length */
	packed_refs_trim(lone);
	ret = packed_refs_init_states(lone, BTRFS_LONE_WAITING);
	if (ret)
		return ret;
	sim->lone = lone;
	sim->nr_lone = lone->nr;
	sim->lone_root = root;
	sim->lone_owner = owner;
	sim->lone_open = true;
	return 0;
}

u64 btrfs_sim_find_lone(const struct btrfs_delayed_refs_sim *sim, u64 bytenr,
			struct packed_ref *e)
{
	u64 index;

	if (!sim->nr_lone)
		return UINT64_MAX;
	index = packed_refs_find(sim->lone, bytenr, e);
	if (index != UINT64_MAX)
		e->seq = packed_refs_state(sim->lone, index);
	return index;
}

/*
 * Another ref of a dropped lone ref's extent: its head and node go into
 * the tables as its drop left them (already charged), the ref then joins
 * them as it would have
 */
static int lone_to_tables(struct btrfs_delayed_refs_sim *sim, u64 index,
			  const struct packed_ref *e)
{
	struct btrfs_sim_ref key = {
		.bytenr = e->bytenr, .root_or_parent = sim->lone_root,
		.owner = sim->lone_owner, .offset = e->ref_offset,
		.ref_mod = BTRFS_DELAYED_REF_DROP, .type = BTRFS_EXTENT_DATA_REF_KEY,
		.used = true,
	};
	struct btrfs_sim_head *h;
	bool created;
	int err;

	err = sim_get_head(sim, e->bytenr, e->num_bytes, true, &h, &created);
	if (err)
		return err;
	h->ref_mod = BTRFS_DELAYED_REF_DROP;
	if (sim_table_full(sim->refs_used, sim->refs_cap)) {
		err = grow_refs(sim);
		if (err)
			return err;
	}
	*ref_slot(sim->refs, sim->refs_cap, &key) = key;
	sim->refs_used++;
	return btrfs_sim_set_lone_state(sim, index, BTRFS_LONE_QUEUED);
}

/*
 * A data ref while lone refs are open: 1 when it was a lone ref dropped
 * first of its extent's refs (counted here), 0 to go on with the tables
 */
static int lone_ref(struct btrfs_delayed_refs_sim *sim, int action, u64 bytenr,
		    u64 num_bytes, u64 parent, u64 root, u64 owner, u64 offset,
		    u64 ref_bytes)
{
	struct packed_ref e;
	u64 index = btrfs_sim_find_lone(sim, bytenr, &e);
	const struct btrfs_sim_head *h;
	int err;

	if (index == UINT64_MAX)
		return 0;
	if (e.seq == BTRFS_LONE_DROPPED)
		return lone_to_tables(sim, index, &e);
	h = btrfs_sim_find_head(sim, bytenr);
	if (e.seq != BTRFS_LONE_WAITING || (h && h->queued) ||
	    action != BTRFS_DELAYED_REF_DROP || parent || root != sim->lone_root ||
	    owner != sim->lone_owner || offset != e.ref_offset ||
	    num_bytes != e.num_bytes)
		return 0;
	err = btrfs_sim_set_lone_state(sim, index, BTRFS_LONE_DROPPED);
	if (err)
		return err;
	/* a new head, charged, and a new node: as add_delayed_ref() sizes them */
	sim_resize(sim, sim_csum_charge(sim, num_bytes));
	sim->ref_inserts++;
	sim_resize(sim, ref_bytes);
	return 1;
}

/*
 * add_delayed_ref(): the head first (add_delayed_ref_head() or
 * update_existing_head_ref()), then the node (insert_delayed_ref()), then
 * btrfs_update_delayed_refs_rsv().  A slot whose node went to ref_mod 0
 * stays in the table with ref_mod 0: a later equal ref inserts anew.
 */
int btrfs_sim_add_ref(struct btrfs_delayed_refs_sim *sim, bool is_data,
		      int action, u64 bytenr, u64 num_bytes, u64 parent,
		      u64 root, u64 owner, u64 offset)
{
	const u64 ref_bytes = btrfs_calc_delayed_ref_bytes(sim->params->nodesize,
				sim->params->free_space_tree_opt, 1);
	struct btrfs_sim_ref key = {
		.bytenr = bytenr,
		.root_or_parent = parent ? parent : root,
		.owner = is_data && !parent ? owner : 0,
		.offset = is_data && !parent ? offset : 0,
		.used = true,
	};
	struct btrfs_sim_head *h;
	struct btrfs_sim_ref *r;
	int64_t old_mod;
	bool created;
	int err;

	if (is_data && sim->lone_open) {
		err = lone_ref(sim, action, bytenr, num_bytes, parent, root, owner,
			       offset, ref_bytes);
		if (err)
			return err < 0 ? err : 0;
	}
	if (is_data)
		key.type = parent ? BTRFS_SHARED_DATA_REF_KEY : BTRFS_EXTENT_DATA_REF_KEY;
	else
		key.type = parent ? BTRFS_SHARED_BLOCK_REF_KEY : BTRFS_TREE_BLOCK_REF_KEY;
	err = sim_get_head(sim, bytenr, num_bytes, is_data, &h, &created);
	if (err)
		return err;
	old_mod = h->ref_mod;
	h->ref_mod += action;
	if (is_data && h->ref_mod < 0 && (created || old_mod >= 0))
		sim_resize(sim, sim_csum_charge(sim, h->num_bytes));
	else if (is_data && !created && h->ref_mod >= 0 && old_mod < 0)
		sim_resize(sim, -(int64_t)sim_csum_charge(sim, h->num_bytes));

	if (sim_table_full(sim->refs_used, sim->refs_cap)) {
		err = grow_refs(sim);
		if (err)
			return err;
	}
	r = ref_slot(sim->refs, sim->refs_cap, &key);
	if (!r->used) {
		*r = key;
		sim->refs_used++;
	}
	if (r->ref_mod == 0) {
		r->ref_mod = action;
		sim->ref_inserts++;
		sim_resize(sim, ref_bytes);
		return 0;
	}
	r->ref_mod += action;
	if (r->ref_mod == 0) {
		sim->ref_zero_merges++;
		sim_resize(sim, -(int64_t)ref_bytes);
	}
	return 0;
}

/*
 * btrfs_set_disk_extent_flags(): an extent op on the block's head, no ref
 * node, so no charge; btrfs_lookup_extent_info() sees the flags.
 */
int btrfs_sim_set_extent_flags(struct btrfs_delayed_refs_sim *sim, u64 bytenr,
			       u64 num_bytes, u64 flags)
{
	struct btrfs_sim_head *h;
	bool created;
	int err;

	/* the extent flags are 1, 2 and 1 << 8 */
	if (flags >> 32)
		return -EINVAL;
	err = sim_get_head(sim, bytenr, num_bytes, false, &h, &created);
	if (err)
		return err;
	h->flags_to_set |= (u32)flags;
	return 0;
}

/* Add what is queued now to @t */
static void sim_add_queued(const struct btrfs_delayed_refs_sim *sim,
			   struct btrfs_delayed_refs_totals *t)
{
	const struct btrfs_csum_params *p = sim->params;
	const u64 ref_bytes = btrfs_calc_delayed_ref_bytes(p->nodesize,
				p->free_space_tree_opt, 1);
	struct packed_refs_cursor c;
	u64 i;

	for (i = 0; i < sim->heads_cap; i++) {
		const struct btrfs_sim_head *h = &sim->heads[i];

		if (!h->bytenr || !h->queued)
			continue;
		if (!h->is_data) {
			t->tree_heads++;
			continue;
		}
		/* a head charges its csum leaves only while total_ref_mod < 0 */
		if (h->ref_mod < 0)
			btrfs_csum_delete_add_heads(p, sim->model, &t->data,
						    h->num_bytes, 1);
		else
			t->data_heads_uncharged++;
	}
	/* lone refs dropped: a head charged (total_ref_mod -1) and a node each */
	if (sim->lone_open && sim->nr_lone && packed_refs_first(sim->lone, &c)) {
		do {
			if (packed_refs_state(sim->lone, c.index) != BTRFS_LONE_DROPPED)
				continue;
			btrfs_csum_delete_add_heads(p, sim->model, &t->data, c.cur.num_bytes, 1);
			btrfs_csum_delete_add_refs(p, &t->data, 1);
		} while (packed_refs_next(&c));
	}
	for (i = 0; i < sim->refs_cap; i++) {
		const struct btrfs_sim_ref *r = &sim->refs[i];

		if (!r->used || !r->ref_mod)
			continue;
		if (r->type == BTRFS_EXTENT_DATA_REF_KEY ||
		    r->type == BTRFS_SHARED_DATA_REF_KEY) {
			btrfs_csum_delete_add_refs(p, &t->data, 1);
		} else {
			t->tree_refs++;
			t->tree_ref_bytes += ref_bytes;
		}
	}
}

/*
 * What the transaction queued, before any head runs: the heads run so far
 * count as they were when they ran (their release is not a rise), plus
 * what is queued now.
 */
void btrfs_delayed_refs_sim_totals(const struct btrfs_delayed_refs_sim *sim,
				   struct btrfs_delayed_refs_totals *t)
{
	*t = sim->ran;
	sim_add_queued(sim, t);
}

/*
 * btrfs_run_delayed_refs() of everything queued, as the commit does
 * before it runs the delayed items: each head's ref_mod goes to the extent
 * tree (btrfs_lookup_extent_info() sees it there) and its refs are gone,
 * so a later ref of the same extent makes a new head and a new node.
 */
int btrfs_sim_run_all(struct btrfs_delayed_refs_sim *sim)
{
	struct btrfs_sim_head *old = sim->heads, *kept;
	u64 old_cap = sim->heads_cap, nr = 0, cap = 0, i;

	sim_add_queued(sim, &sim->ran);
	/* the lone refs dropped ran with the rest: a later ref makes a new head */
	sim->lone_open = false;
	/*
	 * Only tree blocks' heads are looked up once run (their refs in the
	 * extent tree, extent-tree.c): a data head leaves with its run, and a
	 * later ref of its extent makes a new head, as it would anyway.  The
	 * ref nodes are gone.  What one transaction's data heads took is given
	 * back here, before the commit model needs its own.  The tree heads
	 * are set aside packed, the old table freed, and the new one made at
	 * the size adding them one by one would have grown it to: a copy of
	 * them beside one table, not three tables at once.
	 */
	free(sim->refs);
	sim->refs = NULL;
	sim->refs_cap = sim->refs_used = 0;
	for (i = 0; i < old_cap; i++)
		nr += old[i].bytenr && !old[i].is_data;
	kept = malloc((nr ? nr : 1) * sizeof(*kept));
	if (!kept)
		return -ENOMEM;
	for (i = 0, nr = 0; i < old_cap; i++) {
		struct btrfs_sim_head *h = &old[i];

		if (!h->bytenr || h->is_data)
			continue;
		if (h->queued) {
			h->ran_mod += h->ref_mod;
			h->ref_mod = 0;
			h->queued = false;
		}
		kept[nr++] = *h;
	}
	free(old);
	sim->heads = NULL;
	sim->heads_cap = sim->heads_used = 0;
	if (nr) {
		for (cap = SIM_TABLE_MIN_SLOTS; sim_table_full(nr - 1, cap); cap *= 2)
			;
		sim->heads = calloc(cap, sizeof(*sim->heads));
		if (!sim->heads) {
			free(kept);
			return -ENOMEM;
		}
		sim->heads_cap = cap;
	}
	for (i = 0; i < nr; i++)
		*head_slot(sim->heads, cap, kept[i].bytenr) = kept[i];
	sim->heads_used = nr;
	free(kept);
	return 0;
}
