// SPDX-License-Identifier: GPL-2.0
/*
 * What deleting a file queues as delayed refs, from its EXTENT_DATA items.
 *
 * When the last link of an inode goes, btrfs_truncate_inode_items() drops
 * every file extent item that has an extent (not inline, disk_bytenr not
 * 0) with btrfs_free_extent(): a DROP data ref for (disk_bytenr,
 * disk_num_bytes) owned by (root, inode, file offset - extent offset).
 * In delayed-ref.c the first ref of a bytenr creates its head, charged the
 * csum deletion of disk_num_bytes (add_delayed_ref_head()); later refs of
 * the same bytenr join that head, and a ref node equal in (root, owner,
 * offset) to one already queued merges into it (insert_delayed_ref())
 * instead of adding a delayed_ref_updates.  Both are counted per file
 * here, merged once the file is read (sorted).  Other references to the same
 * extents (reflinks, snapshots) do not change the charge: it is made at
 * head creation whatever the extent's other refs.
 *
 * Behaviour reproduced: 6.7-6.18 for the charge (delayed-ref.c), the
 * truncation order does not matter for the counts.
 *
 * btrfs_model_deletion() follows one file's whole deletion in one
 * transaction instead, as btrfs_unlink(), btrfs_evict_inode() with
 * btrfs_truncate_inode_items() and the commit's delayed items run it, with
 * the copies of the subvolume blocks they touch (ctree.c, extent-tree.c):
 * where a snapshot shares those blocks, their items' refs are added and
 * drops can cancel.  Also what the deletion reserves into bytes_may_use
 * (btrfs_start_transaction(), evict_refill_and_join(),
 * btrfs_delayed_refs_rsv_refill()).  6.7-6.18, measured on 6.18.44.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/hash.h"
#include "common/array.h"
#include "common/varint.h"
#include "kernel-shared/ctree-cow.h"
#include "kernel-shared/file-item.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/extent-tree.h"
#include "kernel-shared/extent_io.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/space-info.h"

void btrfs_drop_tracker_init(struct btrfs_drop_tracker *t,
			     const struct btrfs_csum_params *params,
			     const struct btrfs_kernel_model *model)
{
	*t = (struct btrfs_drop_tracker){ .params = params, .model = model };
}

static void drop_runs_free(struct btrfs_drop_tracker *t)
{
	u32 i;

	for (i = 0; i < t->nr_runs; i++)
		packed_refs_free(&t->runs[i]);
	t->nr_runs = 0;
}

void btrfs_drop_tracker_release(struct btrfs_drop_tracker *t)
{
	drop_runs_free(t);
	free(t->runs);
	t->runs = NULL;
	t->cap_runs = 0;
	packed_refs_free(&t->keyed);
	packed_refs_free(&t->lone);
	t->lone_list = NULL;
	free(t->entries);
	free(t->stream);
	t->entries = NULL;
	t->stream = NULL;
	t->nr = t->cap = t->nr_entries = 0;
	t->stream_len = t->stream_cap = 0;
}

/* Forget the previous file: a new inode's deletion starts with no heads */
static void drop_tracker_next_file(struct btrfs_drop_tracker *t,
				   struct btrfs_file_drop *drop)
{
	drop_runs_free(t);
	packed_refs_clear(&t->keyed);
	packed_refs_clear(&t->lone);
	t->keyed.shift = t->lone.shift = t->shift;
	t->lone_list = NULL;
	t->nr_entries = 0;
	t->nr = 0;
	t->stream_len = 0;
	t->last_bytenr = 0;
	t->last_ref_offset = 0;
	t->rising = true;
	memset(drop, 0, sizeof(*drop));
}

/*
 * Packed refs.  A scan's largest file held its refs at 32 bytes each (96 MB
 * for 3 M extents).  Packed, a ref is the varints of its bytenr's and its
 * ref offset's differences from the ref before (zigzag: either way) and of
 * its disk_num_bytes: 7 bytes for 4 KiB extents 4 KiB apart.  Where every
 * bytenr is above the one before (a file written in order), no extent
 * comes back and each ref is its own head and node: counted from the
 * stream in order, which is bytenr order.  Otherwise the stream is
 * unpacked into the entries and merged as they are.
 */
#define DROP_STREAM_MAX_REF	(3 * VARINT_U64_MAX)

static int drop_stream_ref(struct btrfs_drop_tracker *t, u64 bytenr,
			   u64 disk_num_bytes, u64 ref_offset)
{
	u8 *p;

	if (t->stream_len + DROP_STREAM_MAX_REF > t->stream_cap) {
		u64 cap = t->stream_cap ? t->stream_cap * 2 : 4096;

		p = realloc(t->stream, cap);
		if (!p)
			return -ENOMEM;
		t->stream = p;
		t->stream_cap = cap;
	}
	p = t->stream + t->stream_len;
	p = put_varint(p, zigzag(bytenr - t->last_bytenr));
	p = put_varint(p, disk_num_bytes);
	p = put_varint(p, zigzag(ref_offset - t->last_ref_offset));
	t->stream_len = p - t->stream;
	t->rising = t->rising && bytenr > t->last_bytenr;
	t->last_bytenr = bytenr;
	t->last_ref_offset = ref_offset;
	t->nr++;
	return 0;
}

/* The next packed ref after @e's (zeroed before the first) */
static const u8 *drop_stream_next(const u8 *p, struct packed_ref *e)
{
	u64 v;

	p = get_varint(p, &v);
	e->bytenr += unzigzag(v);
	p = get_varint(p, &e->num_bytes);
	p = get_varint(p, &v);
	e->ref_offset += unzigzag(v);
	return p;
}

/* The packed refs as entries, for the sort: -ENOMEM, or 0 */
static int drop_stream_unpack(struct btrfs_drop_tracker *t)
{
	struct packed_ref e = { 0 };
	const u8 *p = t->stream;
	u64 i;

	if (t->nr > UINT32_MAX)
		return -ENOMEM;
	if (t->cap < t->nr) {
		struct packed_ref *n = realloc(t->entries, t->nr * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->entries = n;
		t->cap = t->nr;
	}
	for (i = 0; i < t->nr; i++) {
		p = drop_stream_next(p, &e);
		e.seq = i;
		t->entries[i] = e;
	}
	return 0;
}

/* Rising refs: each its own head and node, in bytenr order */
static void drop_stream_count(const struct btrfs_drop_tracker *t,
			      struct btrfs_file_drop *drop)
{
	struct packed_ref e = { 0 };
	const u8 *p = t->stream;
	u64 i;

	for (i = 0; drop && i < t->nr; i++) {
		p = drop_stream_next(p, &e);
		btrfs_csum_delete_add_heads(t->params, t->model, &drop->calc,
					    e.num_bytes, 1);
		btrfs_csum_delete_add_refs(t->params, &drop->calc, 1);
	}
}

static int drop_sorted_ref(struct btrfs_drop_tracker *t, u64 bytenr,
			   u64 disk_num_bytes, u64 ref_offset);

/* Queue the ref of one extent; merged and counted once the file is read */
static int drop_extent_ref(struct btrfs_drop_tracker *t, u64 bytenr,
			   u64 disk_num_bytes, u64 ref_offset)
{

	if (t->packed)
		return drop_stream_ref(t, bytenr, disk_num_bytes, ref_offset);
	return drop_sorted_ref(t, bytenr, disk_num_bytes, ref_offset);
}

static void drop_entry_swap(struct packed_ref *a, struct packed_ref *b)
{
	struct packed_ref tmp = *a;

	*a = *b;
	*b = tmp;
}

static void drop_entry_sift(struct packed_ref *e, u64 i, u64 n)
{
	struct packed_ref v = e[i];
	u64 c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && packed_ref_cmp(&e[c], &e[c + 1]) < 0)
			c++;
		if (packed_ref_cmp(&v, &e[c]) >= 0)
			break;
		e[i] = e[c];
		i = c;
	}
	e[i] = v;
}

static void drop_entries_heapsort(struct packed_ref *e, u64 n)
{
	u64 i;

	for (i = n / 2; i-- > 0;)
		drop_entry_sift(e, i, n);
	for (i = n; i-- > 1;) {
		drop_entry_swap(&e[0], &e[i]);
		drop_entry_sift(e, 0, i);
	}
}

static void drop_entries_insertion_sort(struct packed_ref *e, u64 n)
{
	u64 i, j;

	for (i = 1; i < n; i++) {
		struct packed_ref v = e[i];

		for (j = i; j > 0 && packed_ref_cmp(&e[j - 1], &v) > 0; j--)
			e[j] = e[j - 1];
		e[j] = v;
	}
}

/* Hoare's partition around the median of the first, middle and last: its place */
static u64 drop_entries_partition(struct packed_ref *e, u64 n)
{
	u64 m = n / 2, i = 0, j = n;

	if (packed_ref_cmp(&e[m], &e[0]) < 0)
		drop_entry_swap(&e[m], &e[0]);
	if (packed_ref_cmp(&e[n - 1], &e[m]) < 0) {
		drop_entry_swap(&e[n - 1], &e[m]);
		if (packed_ref_cmp(&e[m], &e[0]) < 0)
			drop_entry_swap(&e[m], &e[0]);
	}
	drop_entry_swap(&e[0], &e[m]);
	while (1) {
		do
			i++;
		while (i < n && packed_ref_cmp(&e[i], &e[0]) < 0);
		do
			j--;
		while (packed_ref_cmp(&e[j], &e[0]) > 0);
		if (i >= j)
			break;
		drop_entry_swap(&e[i], &e[j]);
	}
	drop_entry_swap(&e[0], &e[j]);
	return j;
}

/*
 * The refs by (bytenr, ref offset, key order), in place (qsort() would
 * take a copy as large as the file's refs: glibc's merge sort): a
 * quicksort that recurses into the smaller side and turns to a heapsort
 * when it goes too deep, so O(n log n) at worst.
 */
static void drop_entries_sort(struct packed_ref *e, u64 n, u32 depth)
{
	while (n > 16) {
		u64 p;

		if (!depth--) {
			drop_entries_heapsort(e, n);
			return;
		}
		p = drop_entries_partition(e, n);
		if (p < n - p - 1) {
			drop_entries_sort(e, p, depth);
			e += p + 1;
			n -= p + 1;
		} else {
			drop_entries_sort(e + p + 1, n - p - 1, depth);
			n = p;
		}
	}
	drop_entries_insertion_sort(e, n);
}

/* ---- one file's refs by bytenr: packed runs, merged ------------------- */

/*
 * Refs that do not rise are sorted in runs of this many (2 MiB unpacked)
 * and packed: memory is the packed refs, a few bytes each, not 32.
 */
#define DROP_RUN_REFS		65536

/* The entries, sorted, as one more packed run */
static int drop_pack_run(struct btrfs_drop_tracker *t)
{
	struct packed_refs *run;
	u32 i;
	int ret;

	if (!t->nr_entries)
		return 0;
	if (array_grow((void **)&t->runs, t->nr_runs, &t->cap_runs, sizeof(*t->runs)))
		return -ENOMEM;
	drop_entries_sort(t->entries, t->nr_entries, 128);
	run = &t->runs[t->nr_runs++];
	packed_refs_init(run, t->shift, true);
	for (i = 0, ret = 0; i < t->nr_entries && !ret; i++)
		ret = packed_refs_append(run, &t->entries[i]);
	t->nr_entries = 0;
	return ret;
}

static int drop_sorted_ref(struct btrfs_drop_tracker *t, u64 bytenr,
			   u64 disk_num_bytes, u64 ref_offset)
{
	const struct packed_ref r = { bytenr, disk_num_bytes, ref_offset, t->nr };
	int ret;

	/* key order is bytenr order as long as each bytenr rises */
	if (!t->nr_runs && !t->nr_entries &&
	    (!t->keyed.nr || bytenr > t->keyed.last.bytenr)) {
		ret = packed_refs_append(&t->keyed, &r);
	} else {
		if (!t->entries) {
			t->entries = malloc(DROP_RUN_REFS * sizeof(*t->entries));
			if (!t->entries)
				return -ENOMEM;
			t->cap = DROP_RUN_REFS;
		}
		t->entries[t->nr_entries++] = r;
		ret = t->nr_entries == DROP_RUN_REFS ? drop_pack_run(t) : 0;
	}
	if (!ret)
		t->nr++;
	return ret;
}

/* The runs' cursors as a min-heap on their refs */
struct drop_merge {
	struct packed_refs_cursor *cur;
	u32 *heap;
	u32 nr;
};

static void drop_merge_sift(struct drop_merge *m, u32 i)
{
	u32 v = m->heap[i], c;

	while ((c = 2 * i + 1) < m->nr) {
		if (c + 1 < m->nr && packed_ref_cmp(&m->cur[m->heap[c + 1]].cur,
						    &m->cur[m->heap[c]].cur) < 0)
			c++;
		if (packed_ref_cmp(&m->cur[m->heap[c]].cur, &m->cur[v].cur) >= 0)
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	m->heap[i] = v;
}

/* The refs of one extent, seen one by one in (ref offset, seq) order */
struct drop_group {
	struct packed_ref first;	/* the first seen */
	u64 n;
	u64 refs;			/* distinct ref offsets: ref nodes */
	u64 last_offset;
	u64 head_seq;			/* the first item in key order ... */
	u64 head_bytes;			/* ... makes the head of this size */
	u64 conflict;			/* the first item in key order of another size */
};

static void drop_group_start(struct drop_group *g, const struct packed_ref *r)
{
	g->first = *r;
	g->n = g->refs = 1;
	g->last_offset = r->ref_offset;
	g->head_seq = r->seq;
	g->head_bytes = r->num_bytes;
	g->conflict = UINT64_MAX;
}

static void drop_group_add(struct drop_group *g, const struct packed_ref *r)
{
	g->n++;
	g->refs += r->ref_offset != g->last_offset;
	g->last_offset = r->ref_offset;
	if (r->seq < g->head_seq) {
		/* the head was earlier: every ref seen so far came after it */
		if (r->num_bytes != g->head_bytes)
			g->conflict = g->head_seq;
		g->head_seq = r->seq;
		g->head_bytes = r->num_bytes;
	} else if (r->num_bytes != g->head_bytes && r->seq < g->conflict) {
		g->conflict = r->seq;
	}
}

/*
 * One extent's refs are all seen: counted into @drop as drop_tracker_merge()
 * counts them, and kept in t->lone if it is the file's only ref to it
 */
static int drop_group_end(struct btrfs_drop_tracker *t, const struct drop_group *g,
			  struct btrfs_file_drop *drop, u64 *conflict)
{
	struct packed_ref r = g->first;

	if (g->conflict < *conflict) {
		*conflict = g->conflict;
		t->conflict_old = g->head_bytes;
	}
	if (drop && *conflict == UINT64_MAX) {
		btrfs_csum_delete_add_heads(t->params, t->model, &drop->calc,
					    g->head_bytes, 1);
		btrfs_csum_delete_add_refs(t->params, &drop->calc, g->refs);
	}
	if (g->n > 1 || *conflict != UINT64_MAX)
		return 0;
	r.seq = t->lone.nr;
	return packed_refs_append(&t->lone, &r);
}

/*
 * Every packed run (the key-order one first) merged by (bytenr, ref
 * offset, seq), one extent at a time; each run's memory goes as it ends.
 */
static int drop_runs_merge(struct btrfs_drop_tracker *t, struct btrfs_file_drop *drop,
			   u64 *conflict)
{
	struct drop_merge m = { 0 };
	struct drop_group g = { 0 };
	u32 nr_src = t->nr_runs + 1, i;
	bool any = false;
	int ret = -ENOMEM;

	m.cur = calloc(nr_src, sizeof(*m.cur));
	m.heap = calloc(nr_src, sizeof(*m.heap));
	if (!m.cur || !m.heap)
		goto out;
	if (packed_refs_first(&t->keyed, &m.cur[0]))
		m.heap[m.nr++] = 0;
	for (i = 1; i < nr_src; i++)
		if (packed_refs_first(&t->runs[i - 1], &m.cur[i]))
			m.heap[m.nr++] = i;
	for (i = m.nr / 2; i-- > 0;)
		drop_merge_sift(&m, i);
	ret = 0;
	while (m.nr && !ret) {
		struct packed_refs_cursor *c = &m.cur[m.heap[0]];

		if (any && c->cur.bytenr == g.first.bytenr) {
			drop_group_add(&g, &c->cur);
		} else {
			if (any)
				ret = drop_group_end(t, &g, drop, conflict);
			drop_group_start(&g, &c->cur);
			any = true;
		}
		if (!packed_refs_next(c)) {
			packed_refs_free((struct packed_refs *)c->l);
			m.heap[0] = m.heap[--m.nr];
		}
		if (m.nr)
			drop_merge_sift(&m, 0);
	}
	if (any && !ret)
		ret = drop_group_end(t, &g, drop, conflict);
out:
	free(m.cur);
	free(m.heap);
	return ret;
}

/*
 * drop_tracker_merge() of one file's sorted refs.  Where every bytenr rose
 * in key order each ref is its own head and node and alone on its extent:
 * counted from the key-order run, which is the lone list.
 */
static int drop_sorted_merge(struct btrfs_drop_tracker *t, struct btrfs_file_drop *drop)
{
	struct packed_refs_cursor c;
	u64 conflict = UINT64_MAX;
	int ret;

	if (!t->nr_runs && !t->nr_entries) {
		if (drop && packed_refs_first(&t->keyed, &c)) {
			do {
				btrfs_csum_delete_add_heads(t->params, t->model, &drop->calc,
							    c.cur.num_bytes, 1);
				btrfs_csum_delete_add_refs(t->params, &drop->calc, 1);
			} while (packed_refs_next(&c));
		}
		t->conflict = UINT64_MAX;
		t->lone_list = &t->keyed;
		return 0;
	}
	ret = drop_pack_run(t);
	if (!ret)
		ret = drop_runs_merge(t, drop, &conflict);
	drop_runs_free(t);
	if (ret)
		return ret;
	t->conflict = conflict;
	t->lone_list = conflict == UINT64_MAX ? &t->lone : NULL;
	return conflict != UINT64_MAX;
}

/*
 * The entries of one extent, @e[0..n): the first item's size makes the
 * head; the first later item giving another size is a conflict (its seq,
 * UINT64_MAX if none).
 */
static u64 drop_group_conflict(const struct packed_ref *e, u64 n, u64 *head_bytes)
{
	u64 i, first = 0, conflict = UINT64_MAX;

	for (i = 1; i < n; i++)
		if (e[i].seq < e[first].seq)
			first = i;
	*head_bytes = e[first].num_bytes;
	for (i = 0; i < n; i++)
		if (e[i].num_bytes != *head_bytes && e[i].seq < conflict)
			conflict = e[i].seq;
	return conflict;
}

/*
 * The refs of the file read so far merged as delayed-ref.c merges them:
 * one head per disk_bytenr, charged the disk_num_bytes of its first item
 * (add_delayed_ref_head()), one ref node per (disk_bytenr, ref offset)
 * (insert_delayed_ref()).  Sorted rather than hashed: 32 bytes a ref, and
 * the sums do not depend on the order.  Counted into @drop when @drop is
 * not NULL.  Returns 0, or 1 when an item gives an extent another size
 * than an earlier item: t->conflict names the first such in key order.
 */
static int drop_tracker_merge(struct btrfs_drop_tracker *t, struct btrfs_file_drop *drop)
{
	const struct packed_ref *e;
	u64 i = 0, conflict = UINT64_MAX;

	if (!t->packed)
		return drop_sorted_merge(t, drop);
	if (t->rising) {
		drop_stream_count(t, drop);
		t->conflict = UINT64_MAX;
		return 0;
	}
	if (drop_stream_unpack(t))
		return -ENOMEM;
	e = t->entries;
	drop_entries_sort(t->entries, t->nr, 128);
	while (i < t->nr) {
		u64 n = 1, head_bytes, c, refs = 1, j;

		while (i + n < t->nr && e[i + n].bytenr == e[i].bytenr)
			n++;
		c = drop_group_conflict(&e[i], n, &head_bytes);
		if (c < conflict) {
			conflict = c;
			t->conflict_old = head_bytes;
		}
		for (j = i + 1; j < i + n; j++)
			refs += e[j].ref_offset != e[j - 1].ref_offset;
		if (drop && conflict == UINT64_MAX) {
			btrfs_csum_delete_add_heads(t->params, t->model, &drop->calc,
						    head_bytes, 1);
			btrfs_csum_delete_add_refs(t->params, &drop->calc, refs);
		}
		i += n;
	}
	t->conflict = conflict;
	return conflict != UINT64_MAX;
}

void btrfs_drop_tracker_start_file(struct btrfs_drop_tracker *t, u32 shift,
				   struct btrfs_file_drop *drop)
{
	t->shift = shift;
	drop_tracker_next_file(t, drop);
}

int btrfs_drop_tracker_add(struct btrfs_drop_tracker *t, u64 bytenr, u64 num_bytes,
			   u64 ref_offset)
{
	return drop_extent_ref(t, bytenr, num_bytes, ref_offset);
}

int btrfs_drop_tracker_merge(struct btrfs_drop_tracker *t, struct btrfs_file_drop *drop)
{
	return drop_tracker_merge(t, drop);
}

#define file_extent_error(fs_info, subvol, leaf, slot, key, fmt, ...)	\
	btrfs_fs_error(fs_info, -EUCLEAN,					\
		"corrupt file extent (%llu EXTENT_DATA %llu) in subvolume %llu, block %llu slot %d: " fmt, \
		(unsigned long long)(key)->objectid,				\
		(unsigned long long)(key)->offset, (unsigned long long)(subvol), \
		(unsigned long long)(leaf)->start, (slot), ##__VA_ARGS__)

/*
 * An error at an item of the file: an earlier conflict found only now (the
 * refs are merged once the file is read) comes first, as in key order.
 */
#define drop_item_error(t, fs_info, subvol, leaf, slot, key, fmt, ...)		\
	(drop_tracker_merge((t), NULL) == 1 ? 1 :				\
	 file_extent_error(fs_info, subvol, leaf, slot, key, fmt, ##__VA_ARGS__))

/*
 * One EXTENT_DATA item of the file: checked, and its extent's ref queued.
 * 0, <0 on error, 1 when an earlier item's conflict is to be named
 * (drop_conflict_error()).
 */
static int drop_file_extent(struct btrfs_fs_info *fs_info, u64 subvol_id,
			    struct btrfs_drop_tracker *t,
			    const struct btrfs_tree_block *leaf, int slot,
			    const struct btrfs_key *key, struct btrfs_file_drop *drop)
{
	const struct btrfs_file_extent_item *fi;
	u64 bytenr, num_bytes;
	u32 size;
	u8 type;

	fi = btrfs_item_ptr(leaf, slot, &size);
	if (size < BTRFS_FILE_EXTENT_INLINE_DATA_START)
		return drop_item_error(t, fs_info, subvol_id, leaf, slot, key,
			"item size %u is below the %zu bytes every file extent has",
			size, BTRFS_FILE_EXTENT_INLINE_DATA_START);
	drop->items++;
	type = btrfs_stack_file_extent_type(fi);
	if (type == BTRFS_FILE_EXTENT_INLINE) {
		drop->inline_items++;
		return 0;
	}
	if (type != BTRFS_FILE_EXTENT_REG && type != BTRFS_FILE_EXTENT_PREALLOC)
		return drop_item_error(t, fs_info, subvol_id, leaf, slot, key,
			"invalid type %u, expect 0 to 2", type);
	if (size != sizeof(*fi))
		return drop_item_error(t, fs_info, subvol_id, leaf, slot, key,
			"invalid item size for reg/prealloc file extent, have %u expect %zu",
			size, sizeof(*fi));
	bytenr = btrfs_stack_file_extent_disk_bytenr(fi);
	num_bytes = btrfs_stack_file_extent_disk_num_bytes(fi);
	if (!bytenr) {
		drop->holes++;
		return 0;
	}
	if (!num_bytes || (bytenr | num_bytes) % fs_info->sectorsize)
		return drop_item_error(t, fs_info, subvol_id, leaf, slot, key,
			"disk_bytenr %llu or disk_num_bytes %llu is zero or not aligned to sectorsize %u",
			(unsigned long long)bytenr, (unsigned long long)num_bytes,
			fs_info->sectorsize);
	/* the ref's offset field, as truncation computes it (may wrap, as there) */
	return drop_extent_ref(t, bytenr, num_bytes,
			       key->offset - btrfs_stack_file_extent_offset(fi));
}

/*
 * A step of the walk of inode @ino's EXTENT_DATA items from @path (where
 * btrfs_search_slot() or the last step left it): on to the next leaf when
 * the slot is past this one's items; 0 with the item's key in @key, 1
 * past the inode's last, <0 on a read error.
 */
static int file_extent_next(struct btrfs_fs_info *fs_info, const struct btrfs_subvol *sv,
			    struct btrfs_path *path, u64 ino, struct btrfs_key *key)
{
	int ret;

	while (path->slots[0] >= (int)path->nodes[0]->nritems) {
		ret = btrfs_next_leaf(fs_info, &sv->root, path, BTRFS_IO_OTHER);
		if (ret)
			return ret;
	}
	btrfs_item_key_to_cpu(path->nodes[0], path->slots[0], key);
	return key->objectid != ino || key->type != BTRFS_EXTENT_DATA_KEY;
}

/*
 * The error of the item t->conflict of inode @ino (counting the items
 * that queued a ref, in key order), found again by a search: it gives
 * its extent another disk_num_bytes than an earlier item.
 */
static int drop_conflict_error(struct btrfs_fs_info *fs_info, const struct btrfs_subvol *sv,
			       u64 ino, const struct btrfs_drop_tracker *t)
{
	struct btrfs_key key = { ino, BTRFS_EXTENT_DATA_KEY, 0 };
	struct btrfs_path path = { 0 };
	u64 seq = 0;
	int ret;

	for (ret = btrfs_search_slot(fs_info, &sv->root, &key, &path, BTRFS_IO_OTHER);
	     ret >= 0; path.slots[0]++) {
		const struct btrfs_tree_block *leaf;
		const struct btrfs_file_extent_item *fi;
		u32 size;

		ret = file_extent_next(fs_info, sv, &path, ino, &key);
		if (ret)
			break;
		leaf = path.nodes[0];
		fi = btrfs_item_ptr(leaf, path.slots[0], &size);
		/* the items before it passed drop_file_extent()'s checks */
		if (btrfs_stack_file_extent_type(fi) != BTRFS_FILE_EXTENT_INLINE &&
		    btrfs_stack_file_extent_disk_bytenr(fi) && seq++ == t->conflict) {
			ret = file_extent_error(fs_info, sv->root.objectid, leaf,
				path.slots[0], &key,
				"extent %llu has disk_num_bytes %llu, an earlier item of the inode says %llu",
				(unsigned long long)btrfs_stack_file_extent_disk_bytenr(fi),
				(unsigned long long)btrfs_stack_file_extent_disk_num_bytes(fi),
				(unsigned long long)t->conflict_old);
			break;
		}
	}
	btrfs_release_path(&path);
	if (ret >= 0)
		ret = btrfs_fs_error(fs_info, -EUCLEAN,
			"inode %llu of subvolume %llu changed while it was read",
			(unsigned long long)ino, (unsigned long long)sv->root.objectid);
	return ret;
}

/*
 * The file's items are all read (@ret 0), or one of them ended the read
 * (@ret 1: an earlier conflict to name; <0: the error): the refs merged
 * into @drop, or the error.
 */
static int drop_finish_file(struct btrfs_fs_info *fs_info, const struct btrfs_subvol *sv,
			    u64 ino, struct btrfs_drop_tracker *t,
			    struct btrfs_file_drop *drop, int ret)
{
	if (!ret)
		ret = drop_tracker_merge(t, drop);
	if (ret == 1)
		ret = drop_conflict_error(fs_info, sv, ino, t);
	return ret;
}

/*
 * Count what deleting inode @ino of @sv queues: every EXTENT_DATA item of
 * the inode, one search then item by item.
 */
int btrfs_count_file_drop(struct btrfs_fs_info *fs_info,
			  const struct btrfs_subvol *sv, u64 ino,
			  struct btrfs_drop_tracker *t, struct btrfs_file_drop *drop)
{
	struct btrfs_key key = { ino, BTRFS_EXTENT_DATA_KEY, 0 };
	struct btrfs_path path = { 0 };
	u64 last_leaf = 0;
	int ret, item_ret = 0;

	btrfs_drop_tracker_start_file(t, __builtin_ctz(fs_info->sectorsize), drop);
	for (ret = btrfs_search_slot(fs_info, &sv->root, &key, &path, BTRFS_IO_OTHER);
	     ret >= 0; path.slots[0]++) {
		const struct btrfs_tree_block *leaf;

		ret = file_extent_next(fs_info, sv, &path, ino, &key);
		if (ret)
			break;
		leaf = path.nodes[0];
		/* the deletion model reads them again: csum-delete.c keeps them packed */
		drop->leaves += leaf->start != last_leaf;
		last_leaf = leaf->start;
		item_ret = drop_file_extent(fs_info, sv->root.objectid, t, leaf,
					    path.slots[0], &key, drop);
		if (item_ret)
			break;
	}
	btrfs_release_path(&path);
	if (item_ret)
		ret = item_ret;
	if (ret < 0)
		return ret;
	return drop_finish_file(fs_info, sv, ino, t, drop, item_ret);
}

/* Where a subvolume scan is: the inode whose items are being read */
struct scan_state {
	struct btrfs_fs_info *fs_info;
	const struct btrfs_subvol *sv;
	struct btrfs_drop_tracker *t;
	struct btrfs_subvol_scan *scan;
	u64 ino;			/* 0: none yet */
	bool is_file;			/* its inode item says regular file */
	struct btrfs_inode_info info;
	struct btrfs_file_drop drop;
};

/* The items of the current inode are all read: report it if it is a file */
static int scan_finish_inode(struct scan_state *ss)
{
	int ret;

	if (!ss->ino || !ss->is_file)
		return 0;
	ret = drop_tracker_merge(ss->t, &ss->drop);
	if (ret)
		return ret;	/* 1: named after the walk (drop_conflict_error()) */
	ss->scan->files++;
	return ss->scan->file_fn(&ss->info, &ss->drop, ss->scan->ctx);
}

static int scan_inode_item(struct scan_state *ss,
			   const struct btrfs_tree_block *leaf, int slot,
			   const struct btrfs_key *key)
{
	const struct btrfs_inode_item *ii;
	u32 size;

	ii = btrfs_item_ptr(leaf, slot, &size);
	if (size < sizeof(*ii))
		return btrfs_fs_error(ss->fs_info, -EUCLEAN,
			"corrupt inode item of inode %llu in subvolume %llu, block %llu slot %d: size %u, expect %zu",
			(unsigned long long)key->objectid,
			(unsigned long long)ss->sv->root.objectid,
			(unsigned long long)leaf->start, slot, size, sizeof(*ii));
	btrfs_inode_info_from_item(ii, key->objectid, &ss->info);
	ss->is_file = btrfs_mode_is(ss->info.mode, BTRFS_S_IFREG);
	ss->scan->inodes++;
	return 0;
}

static int scan_item(struct scan_state *ss, const struct btrfs_tree_block *leaf,
		     int slot)
{
	struct btrfs_key key;
	int ret;

	btrfs_item_key_to_cpu(leaf, slot, &key);
	/* orphan items, the old free-inode cache and the like are no files */
	if (key.objectid < BTRFS_FIRST_FREE_OBJECTID ||
	    key.objectid > BTRFS_LAST_FREE_OBJECTID)
		return 0;
	if (key.objectid != ss->ino) {
		ret = scan_finish_inode(ss);
		if (ret)
			return ret;
		ss->ino = key.objectid;
		ss->is_file = false;
		drop_tracker_next_file(ss->t, &ss->drop);
	}
	/* the inode item sorts first among an inode's items */
	if (key.type == BTRFS_INODE_ITEM_KEY)
		return scan_inode_item(ss, leaf, slot, &key);
	if (key.type != BTRFS_EXTENT_DATA_KEY || !ss->is_file)
		return 0;
	ss->scan->extent_items++;
	return drop_file_extent(ss->fs_info, ss->sv->root.objectid, ss->t, leaf,
				slot, &key, &ss->drop);
}

static int scan_leaf(struct btrfs_fs_info *fs_info,
		     const struct btrfs_tree_block *leaf, void *ctx)
{
	struct scan_state *ss = ctx;
	u32 slot;
	int ret;

	for (slot = 0; slot < leaf->nritems; slot++) {
		ret = scan_item(ss, leaf, slot);
		if (ret)
			return ret;
	}
	ss->scan->leaves++;
	if (ss->scan->progress_fn)
		ss->scan->progress_fn(ss->scan->leaves, ss->scan->ctx);
	return 0;
}

/*
 * Read the whole tree of @sv once, in key order, and report every regular
 * file with what deleting it would queue.  Each file is counted on its
 * own, as if deleted in its own transaction.
 */
int btrfs_scan_subvol_drops(struct btrfs_fs_info *fs_info,
			    const struct btrfs_subvol *sv,
			    struct btrfs_drop_tracker *t,
			    struct btrfs_subvol_scan *scan)
{
	struct scan_state ss = {
		.fs_info = fs_info,
		.sv = sv,
		.t = t,
		.scan = scan,
	};
	int ret;

	scan->leaves = scan->inodes = scan->files = scan->extent_items = 0;
	t->packed = true;
	ret = btrfs_stream_tree(fs_info, &sv->root, BTRFS_IO_OTHER, scan_leaf, &ss);
	if (!ret)
		ret = scan_finish_inode(&ss);
	/* the walk is over: the conflicting item can be searched for */
	if (ret == 1)
		ret = drop_conflict_error(fs_info, sv, ss.ino, t);
	return ret;
}

/* ---- the deletion as one transaction runs it ------------------------ */

#ifndef BTRFS_DIR_INDEX_KEY
#define BTRFS_DIR_INDEX_KEY		96
#endif

/*
 * delayed_refs_rsv as the deletion moves it, for its refills: the size
 * the refs grow it by, what is reserved in it (from the transaction's
 * local reserve, from released reserves, from refills), and the global
 * reserve btrfs_check_space_for_delayed_refs() compares with.
 */
struct deletion_state {
	struct btrfs_fs_info *fs_info;
	const struct btrfs_subvol *sv;
	const struct btrfs_csum_params *params;
	struct btrfs_delayed_refs_sim refs;
	struct btrfs_cow_sim cow;
	int64_t rsv_reserved;
	u64 local_rsv;			/* trans->delayed_rsv left */
	u64 global_reserved;
	u64 bytes_deleted;		/* by this evict join's truncation */
	u64 join_cows;			/* copies made before this join */
	struct btrfs_deletion_model *out;
};

/* btrfs_update_delayed_refs_rsv(): growth is paid from the local reserve */
static void deletion_take_local(struct deletion_state *ds, int64_t before)
{
	int64_t grown = ds->refs.size - before;
	u64 take;

	if (grown > 0) {
		take = (u64)grown < ds->local_rsv ? (u64)grown : ds->local_rsv;
		ds->local_rsv -= take;
		ds->rsv_reserved += take;
	}
	/* a release (merged refs, csums) frees what exceeds the new size */
	if (ds->rsv_reserved > ds->refs.size)
		ds->rsv_reserved = ds->refs.size > 0 ? ds->refs.size : 0;
}

/* A released reserve refills delayed_refs_rsv first (btrfs_block_rsv_release()) */
static void deletion_give_back(struct deletion_state *ds, u64 bytes)
{
	int64_t room = ds->refs.size - ds->rsv_reserved;

	if (room <= 0)
		return;
	ds->rsv_reserved += (u64)room < bytes ? (u64)room : bytes;
}

/*
 * A COW search for one key, balancing nodes on the way for a deletion
 * (@del): 0 found, 1 not found (the path holds the leaf), <0.
 */
static int deletion_cow_key(struct deletion_state *ds, u64 objectid, u8 type,
			    u64 offset, struct btrfs_path *path, bool del)
{
	struct btrfs_key key = { objectid, type, offset };
	int64_t before = ds->refs.size;
	int ret;

	ret = btrfs_search_slot_cow(&ds->cow, ds->sv, &key, path, del);
	deletion_take_local(ds, before);
	return ret;
}

/* btrfs_del_items() of @nr items at the path's slot */
static int deletion_del(struct deletion_state *ds, const struct btrfs_path *path,
			int nr)
{
	int64_t before = ds->refs.size;
	int ret;

	ret = btrfs_del_items_sim(&ds->cow, ds->sv, path, path->slots[0], nr);
	deletion_take_local(ds, before);
	return ret;
}

/*
 * A COW search for one key; with @del, the item found is deleted
 * (btrfs_del_item(): the dir index, the orphan item), which may push the
 * leaf's items into its siblings.  @del = -1: the item was inserted
 * earlier in the transaction and is not in the image, only the deletion's
 * checks run.
 */
static int deletion_cow_one(struct deletion_state *ds, u64 objectid, u8 type,
			    u64 offset, int del)
{
	struct btrfs_path path = { 0 };
	int ret;

	ret = deletion_cow_key(ds, objectid, type, offset, &path, del != 0);
	if (ret >= 0 && del)
		ret = deletion_del(ds, &path, del > 0 && ret == 0 ? 1 : 0);
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

/*
 * btrfs_insert_empty_item() of @data_size bytes (btrfs_insert_orphan_item():
 * none): the COW search, then the room split_leaf() makes for it
 */
static int deletion_insert_one(struct deletion_state *ds, u64 objectid, u8 type,
			       u64 offset, u32 data_size)
{
	struct btrfs_path path = { 0 };
	int64_t before;
	int ret;

	ret = deletion_cow_key(ds, objectid, type, offset, &path, false);
	if (ret == 1) {
		before = ds->refs.size;
		ret = btrfs_insert_room_sim(&ds->cow, ds->sv, &path,
					    data_size + sizeof(struct btrfs_item));
		deletion_take_local(ds, before);
	} else if (ret == 0) {
		ret = -EEXIST;
	}
	btrfs_release_path(&path);
	return ret;
}

/* Whether the item at the path holds only @name (a dir item or inode ref) */
static bool item_is_only_name(const struct btrfs_path *path, u8 type, u32 name_len)
{
	const struct btrfs_dir_item *di;
	u32 size;

	di = btrfs_item_ptr(path->nodes[0], path->slots[0], &size);
	if (type != BTRFS_DIR_ITEM_KEY)
		return size == sizeof(struct btrfs_inode_ref) + name_len;
	/* hash collisions share the item: then only this entry goes */
	return size >= sizeof(*di) &&
	       size == sizeof(*di) + btrfs_stack_dir_name_len(di) +
		       btrfs_stack_dir_data_len(di);
}

/*
 * btrfs_delete_one_dir_name() / btrfs_del_inode_ref(): the item goes if
 * the name was its only one, else it only shrinks (no push).
 */
static int deletion_unlink_name(struct deletion_state *ds, u64 objectid, u8 type,
				u64 offset, u32 name_len)
{
	struct btrfs_path path = { 0 };
	int ret;

	ret = deletion_cow_key(ds, objectid, type, offset, &path, true);
	if (ret == 0 && item_is_only_name(&path, type, name_len))
		ret = deletion_del(ds, &path, 1);
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

/*
 * btrfs_check_space_for_delayed_refs() after a btrfs_free_extent() of the
 * truncation: the reserve, with the global one, no longer covers its size.
 */
static bool deletion_space_short(const struct deletion_state *ds)
{
	return ds->refs.size >= (int64_t)ds->global_reserved + ds->rsv_reserved;
}

/*
 * btrfs_delayed_refs_rsv_refill(), once the pending items are deleted: up
 * to one ref's worth of what the reserve lacks now (the deletion's pushes
 * may have grown the size since the check).
 */
static void deletion_refill(struct deletion_state *ds)
{
	const struct btrfs_csum_params *p = ds->params;
	u64 limit = btrfs_calc_delayed_ref_bytes(p->nodesize, p->free_space_tree_opt, 1);
	int64_t need = ds->refs.size - ds->rsv_reserved;

	if (need <= 0)
		return;
	if ((u64)need > limit)
		need = limit;
	ds->rsv_reserved += need;
	ds->out->refills++;
	ds->out->refill_bytes += need;
}

/*
 * evict_refill_and_join(): the evict reserve refilled to one item and one
 * delayed ref, the ref moved to the handle.  The item's part is what the
 * copies since the last join took from it (as nodes, up to the item).
 */
static void deletion_evict_join(struct deletion_state *ds)
{
	const struct btrfs_csum_params *p = ds->params;
	u64 ref1 = btrfs_calc_delayed_ref_bytes(p->nodesize, p->free_space_tree_opt, 1);

	ds->out->reserved_evict += ref1 + min_t(u64, (ds->cow.cows - ds->join_cows) * p->nodesize,
						btrfs_calc_metadata_size(p->nodesize, 1));
	ds->join_cows = ds->cow.cows;
	ds->bytes_deleted = 0;
}

/*
 * At a new search btrfs_truncate_inode_items() returns -EAGAIN once more
 * than 32 MiB of extents (disk_num_bytes) were dropped and
 * btrfs_should_end_transaction() holds (delayed_refs_rsv short, as a
 * refill leaves it while the deletion outgrows one ref a drop):
 * btrfs_evict_inode() ends the handle, its ref going back to
 * delayed_refs_rsv, and joins again; the truncation goes on from the
 * inode's last key.
 */
static void deletion_maybe_rejoin(struct deletion_state *ds)
{
	const struct btrfs_csum_params *p = ds->params;

	if (ds->bytes_deleted <= SZ_32M || !deletion_space_short(ds))
		return;
	deletion_give_back(ds, btrfs_calc_delayed_ref_bytes(p->nodesize,
							    p->free_space_tree_opt, 1));
	deletion_evict_join(ds);
}

/* One leaf of the inode's items, as the truncation finds it */
struct trunc_leaf {
	u64 start;
	struct btrfs_key last;		/* the inode's last key in it */
};

/* Leaves holding items of @ino, in key order */
static int inode_leaves(struct deletion_state *ds, u64 ino,
			struct trunc_leaf **leaves, u64 *nr)
{
	struct btrfs_key key = { ino, BTRFS_INODE_ITEM_KEY, 0 };
	struct btrfs_path path = { 0 };
	struct trunc_leaf *list = NULL;
	u64 cap = 0, n = 0;
	int ret;

	ret = btrfs_search_slot(ds->fs_info, &ds->sv->root, &key, &path, BTRFS_IO_OTHER);
	while (ret >= 0) {
		const struct btrfs_tree_block *leaf = path.nodes[0];

		if (path.slots[0] >= (int)leaf->nritems) {
			ret = btrfs_next_leaf(ds->fs_info, &ds->sv->root, &path,
					      BTRFS_IO_OTHER);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(leaf, path.slots[0], &key);
		if (key.objectid != ino) {
			ret = 0;
			break;
		}
		if (!n || list[n - 1].start != leaf->start) {
			if (n == cap) {
				struct trunc_leaf *l;

				cap = cap ? cap * 2 : 16;
				l = realloc(list, cap * sizeof(*l));
				if (!l) {
					ret = -ENOMEM;
					break;
				}
				list = l;
			}
			list[n++].start = leaf->start;
		}
		list[n - 1].last = key;
		path.slots[0]++;
	}
	btrfs_release_path(&path);
	if (ret < 0) {
		free(list);
		return ret;
	}
	*leaves = list;
	*nr = n;
	return 0;
}

/* btrfs_del_items() of the truncation's pending items, slots @lo..@hi */
static int deletion_del_batch(struct deletion_state *ds, const struct btrfs_path *path,
			      int lo, int hi)
{
	int64_t before = ds->refs.size;
	int ret;

	ret = btrfs_del_items_sim(&ds->cow, ds->sv, path, lo, hi - lo + 1);
	deletion_take_local(ds, before);
	return ret;
}

/*
 * btrfs_truncate_inode_items() to size 0, every item type: from the last
 * key back, a COW search lands in each leaf, and every file extent item
 * with an extent is dropped with btrfs_free_extent() as its item goes.
 */
static int deletion_truncate(struct deletion_state *ds, u64 ino)
{
	struct trunc_leaf *leaves = NULL;
	u64 nr = 0, i;
	int ret;

	ret = inode_leaves(ds, ino, &leaves, &nr);
	if (ret)
		return ret;
	ds->out->leaves = nr;
	for (i = nr; i-- > 0 && !ret;) {
		struct btrfs_path path = { 0 };
		const struct btrfs_tree_block *leaf;
		int slot, lo = 0, hi;

		deletion_maybe_rejoin(ds);
		ret = deletion_cow_key(ds, ino, leaves[i].last.type,
				       leaves[i].last.offset, &path, true);
		if (ret < 0)
			break;
		ret = 0;
		leaf = path.nodes[0];
		hi = -1;
		for (slot = (int)leaf->nritems - 1; slot >= 0 && !ret; slot--) {
			const struct btrfs_file_extent_item *fi;
			struct btrfs_key key;
			int64_t before;
			u32 size;

			btrfs_item_key_to_cpu(leaf, slot, &key);
			if (key.objectid != ino) {
				if (key.objectid < ino)
					break;
				continue;
			}
			if (hi < 0)
				hi = slot;
			lo = slot;
			if (key.type != BTRFS_EXTENT_DATA_KEY)
				continue;
			fi = btrfs_item_ptr(leaf, slot, &size);
			/* drop_file_extent() has checked every item already */
			if (size != sizeof(*fi) ||
			    btrfs_stack_file_extent_type(fi) == BTRFS_FILE_EXTENT_INLINE ||
			    !btrfs_stack_file_extent_disk_bytenr(fi))
				continue;
			before = ds->refs.size;
			ret = btrfs_sim_add_ref(&ds->refs, true, BTRFS_DELAYED_REF_DROP,
					btrfs_stack_file_extent_disk_bytenr(fi),
					btrfs_stack_file_extent_disk_num_bytes(fi), 0,
					ds->sv->root.objectid, ino,
					key.offset - btrfs_stack_file_extent_offset(fi));
			ds->bytes_deleted += btrfs_stack_file_extent_disk_num_bytes(fi);
			/* a joined transaction has no local reserve to pay from */
			deletion_take_local(ds, before);
			/* short: delete the pending items, refill, search again */
			if (!ret && deletion_space_short(ds)) {
				ret = deletion_del_batch(ds, &path, lo, hi);
				hi = -1;
				deletion_refill(ds);
				deletion_maybe_rejoin(ds);
			}
		}
		if (!ret && hi >= 0)
			ret = deletion_del_batch(ds, &path, lo, hi);
		btrfs_release_path(&path);
		/*
		 * The leaf after this one held only the file's items: once
		 * deleted (not kept by items pushed into it), a push passes
		 * it by without its block, and nothing after the truncation
		 * looks it up (the first and the last leaf can hold other
		 * items and stay)
		 */
		if (i + 2 < nr && btrfs_cow_sim_leaf_deleted(&ds->cow, leaves[i + 1].start))
			btrfs_cache_forget_leaf(ds->fs_info, leaves[i + 1].start);
	}
	free(leaves);
	return ret;
}

/*
 * Whether the deletion's reservations, held together, are more than
 * over-commit grants (the rm's own reservations then flush), and whether
 * they make need_preemptive_reclaim() true: the preemptive flusher then runs delayed
 * refs while the file is being deleted, heads run early and come back, and
 * the figures stop being exact (they are what a deletion without flushing
 * queues).  Needs the block groups: without space infos nothing is said.
 */
static void deletion_check_preempt(struct btrfs_fs_info *fs_info,
				   const struct btrfs_kernel_model *model,
				   const struct deletion_state *ds,
				   struct btrfs_deletion_model *out)
{
	struct btrfs_preempt_result res;
	struct btrfs_reserve_state st;

	btrfs_reserve_state_from_fs(fs_info, model, &st);
	if (!st.total_bytes)
		return;
	out->preempt_checked = true;
	/*
	 * The refills are BTRFS_RESERVE_NO_FLUSH and the evict joins
	 * FLUSH_EVICT, both over-committed by half the room: past it a refill
	 * fails, btrfs_truncate_inode_items() returns -EAGAIN and the next
	 * join's ticket is flushed by the rm itself (FLUSH_DELAYED_REFS_NR)
	 */
	out->reserve_flush = !btrfs_can_overcommit(&st, out->reserved, BTRFS_RESERVE_NO_FLUSH,
						   model);
	st.bytes_may_use += out->reserved;
	st.delayed_refs_rsv_reserved = ds->rsv_reserved > 0 ? ds->rsv_reserved : 0;
	btrfs_need_preemptive_reclaim(&st, model, &res);
	out->preempt_flush = res.verdict;
}

/*
 * btrfs_read_locked_inode() sets dir_index when the inode has one link and
 * its INODE_REF (or INODE_EXTREF) is the next item of the inode item's
 * leaf; __btrfs_unlink_inode() then leaves the ref's deletion to the
 * delayed inode (btrfs_delayed_delete_inode_ref()), which the evict
 * writes, instead of deleting it in the unlink.
 */
static int iref_is_delayed(struct deletion_state *ds, u64 ino, bool *delayed)
{
	struct btrfs_key key = { ino, BTRFS_INODE_ITEM_KEY, 0 };
	const struct btrfs_inode_item *ii;
	struct btrfs_path path = { 0 };
	const struct btrfs_tree_block *leaf;
	u32 size;
	int ret;

	*delayed = false;
	ret = btrfs_search_slot(ds->fs_info, &ds->sv->root, &key, &path, BTRFS_IO_OTHER);
	if (ret < 0)
		return ret;
	leaf = path.nodes[0];
	if (ret == 0 && path.slots[0] + 1 < (int)leaf->nritems) {
		ii = btrfs_item_ptr(leaf, path.slots[0], &size);
		btrfs_item_key_to_cpu(leaf, path.slots[0] + 1, &key);
		*delayed = size >= sizeof(*ii) && btrfs_stack_inode_nlink(ii) == 1 &&
			   key.objectid == ino && (key.type == BTRFS_INODE_REF_KEY ||
						   key.type == BTRFS_INODE_EXTREF_KEY);
	}
	btrfs_release_path(&path);
	return 0;
}

/*
 * btrfs_unlink() (btrfs_start_transaction(root, 6): the dir item, the dir
 * index, the inode ref, the inode, the parent, the orphan item), the
 * orphan item of a last link, then btrfs_evict_inode() (a join, another
 * per -EAGAIN of the truncation and one for btrfs_orphan_del(), each
 * refilling its reserve to one item plus one delayed ref), and at commit
 * the delayed dir index deletion and parent inode update.
 */
int btrfs_model_deletion(struct btrfs_fs_info *fs_info, const struct btrfs_subvol *sv,
			 u64 ino, struct btrfs_drop_tracker *t,
			 const struct btrfs_csum_params *params,
			 const struct btrfs_kernel_model *model,
			 struct btrfs_deletion_model *out)
{
	const u32 ns = params->nodesize;
	const u64 ref1 = btrfs_calc_delayed_ref_bytes(ns, params->free_space_tree_opt, 1);
	struct deletion_state ds = {
		.fs_info = fs_info,
		.sv = sv,
		.params = params,
		.out = out,
	};
	struct btrfs_global_rsv_inputs rsv_in;
	struct btrfs_global_rsv_calc rsv;
	struct btrfs_inode_name name;
	bool iref_delayed = false;
	u64 trans_rsv, cows;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	/* the global reserve is full from the mount on: reserved = size */
	btrfs_calc_global_rsv_for_kernel(fs_info, model, &rsv_in, &rsv);
	ds.global_reserved = rsv.size;
	btrfs_delayed_refs_sim_init(&ds.refs, params, model);
	/* the truncation's refs alone on their extent are counted, not kept */
	if (t && t->nr && t->lone_list)
		ret = btrfs_sim_set_lone_refs(&ds.refs, t->lone_list, t->nr,
					      sv->root.objectid, ino);
	btrfs_cow_sim_init(&ds.cow, fs_info, &ds.refs);
	if (ret)
		goto out;
	ret = btrfs_inode_first_name(fs_info, sv, ino, &name);
	if (ret == 1)
		ret = btrfs_fs_error(fs_info, -EUCLEAN,
			"inode %llu of subvolume %llu has no INODE_REF or INODE_EXTREF: no name to unlink",
			(unsigned long long)ino, (unsigned long long)sv->root.objectid);
	if (ret)
		goto out;

	/* unlink */
	out->reserved_unlink = btrfs_calc_insert_metadata_size(ns, BTRFS_UNLINK_METADATA_UNITS) +
		btrfs_calc_delayed_ref_bytes(ns, params->free_space_tree_opt,
					     BTRFS_UNLINK_METADATA_UNITS);
	trans_rsv = btrfs_calc_insert_metadata_size(ns, BTRFS_UNLINK_METADATA_UNITS);
	ds.local_rsv = btrfs_calc_delayed_ref_bytes(ns, params->free_space_tree_opt,
						   BTRFS_UNLINK_METADATA_UNITS);
	ret = iref_is_delayed(&ds, ino, &iref_delayed);
	if (!ret)
		ret = deletion_unlink_name(&ds, name.parent, BTRFS_DIR_ITEM_KEY,
					   btrfs_name_hash(name.name, name.name_len),
					   name.name_len);
	if (!ret && !iref_delayed)
		ret = deletion_unlink_name(&ds, ino, BTRFS_INODE_REF_KEY, name.parent,
					   name.name_len);
	if (!ret)
		ret = deletion_insert_one(&ds, BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY,
					  ino, 0);
	if (ret)
		goto out;
	/*
	 * End of the unlink's transaction: what its reserves did not spend
	 * (a node per copy, the delayed dir index item and the two delayed
	 * inodes they moved out) goes back to delayed_refs_rsv first.
	 */
	cows = ds.cow.cows;
	trans_rsv -= min_t(u64, trans_rsv, cows * ns +
			   btrfs_calc_insert_metadata_size(ns, 1) +
			   2 * btrfs_calc_metadata_size(ns, 1));
	deletion_give_back(&ds, trans_rsv + ds.local_rsv);
	ds.local_rsv = 0;

	/*
	 * evict: btrfs_commit_inode_delayed_inode() writes the inode item
	 * (nlink 0) and a delayed inode ref deletion from the delayed inode's
	 * reserve, then releases it: btrfs_block_rsv_release() gives it to
	 * delayed_refs_rsv while that is not full (only delayed_refs_rsv's own
	 * releases go to the global reserve), as the trace's refills confirm.
	 */
	ret = deletion_cow_one(&ds, ino, BTRFS_INODE_ITEM_KEY, 0, 0);
	if (!ret && iref_delayed)
		ret = deletion_unlink_name(&ds, ino, BTRFS_INODE_REF_KEY, name.parent,
					   name.name_len);
	if (ret)
		goto out;
	deletion_give_back(&ds, btrfs_calc_metadata_size(ns, 1));
	out->reserved_evict = btrfs_calc_metadata_size(ns, 1) + ref1;
	ds.join_cows = ds.cow.cows;
	ret = deletion_truncate(&ds, ino);
	if (ret)
		goto out;
	deletion_give_back(&ds, ref1);
	/*
	 * The last join refills the ref the previous one gave away and the
	 * nodes the truncation's copies took from the evict reserve, then
	 * btrfs_orphan_del() runs in it.
	 */
	deletion_evict_join(&ds);
	ret = deletion_cow_one(&ds, BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, ino, -1);
	if (ret)
		goto out;
	deletion_give_back(&ds, ref1);

	/*
	 * commit: btrfs_commit_transaction() runs every delayed ref queued so
	 * far, then btrfs_run_delayed_items() copies the blocks of the dir
	 * index and of the parent's inode item.
	 */
	ret = btrfs_commit_note_refs(&out->commit, &ds.refs);
	if (!ret)
		ret = btrfs_sim_run_all(&ds.refs);
	if (!ret)
		ret = deletion_cow_one(&ds, name.parent, BTRFS_DIR_INDEX_KEY,
				       name.index, 1);
	if (!ret)
		ret = deletion_cow_one(&ds, name.parent, BTRFS_INODE_ITEM_KEY, 0, 0);
	if (ret)
		goto out;

	/*
	 * the commit's runs, then its cow-only trees (transaction.c).  The
	 * blocks of the subvolume they copy are those copied above, found
	 * by their addresses: none of its leaves is searched again.  (The
	 * extent tree's leaves are: a run's heads search them in bytenr
	 * order, but the cow-only trees' refs and later runs come back.)
	 */
	btrfs_cache_pack_stop(fs_info, sv->root.objectid);
	/*
	 * The subvolume's changes are over: the views of its leaves and the
	 * index of its copies go before the commit's model loads the extent
	 * tree's leaves (a view and a copy a leaf of the file, 9 MB at 10 M
	 * extents), its counts stay
	 */
	btrfs_cow_sim_release(&ds.cow);
	ret = btrfs_commit_note_refs(&out->commit, &ds.refs);
	if (!ret)
		ret = btrfs_model_commit_refs(fs_info, sv->root.objectid, &ds.refs,
					      &out->commit);
	btrfs_cache_pack_stop(fs_info, 0);
	btrfs_commit_refs_release(&out->commit);
	if (ret)
		goto out;
	btrfs_delayed_refs_sim_totals(&ds.refs, &out->totals);
	out->peak = ds.refs.peak > 0 ? (u64)ds.refs.peak : 0;
	out->reserved = out->reserved_unlink + out->reserved_evict + out->refill_bytes;
	deletion_check_preempt(fs_info, model, &ds, out);
	out->cows = ds.cow.cows;
	out->shared_cows = ds.cow.shared_cows;
	out->full_backref_cows = ds.cow.full_backref_cows;
out:
	btrfs_commit_refs_release(&out->commit);
	btrfs_cow_sim_release(&ds.cow);
	btrfs_delayed_refs_sim_release(&ds.refs);
	return ret;
}
