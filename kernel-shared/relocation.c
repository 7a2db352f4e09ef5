// SPDX-License-Identifier: GPL-2.0
/*
 * Relocation replayed: fs/btrfs/relocation.c with the parts of
 * extent-tree.c, block-group.c, free-space-cache.c and volumes.c it runs
 * on, as Linux 6.18 has them (size classes per --kernel: 6.3+).
 *
 * - __btrfs_balance() and should_balance_chunk() (volumes.c): the chunks
 *   walked from the highest logical start down, the filters seeing `used`
 *   as it is when the walk reaches a chunk, btrfs_balance()'s refusals
 *   (a convert target the devices cannot hold, metadata redundancy
 *   reduced without -f); an -ENOSPC chunk is counted and the walk goes on;
 *   a limit per chunk type (-m sent as -s too).
 * - btrfs_shrink_device() and btrfs_rm_device() (volumes.c): the chunks
 *   with a dev extent past the new size, highest physical first, one retry
 *   of the ones that failed; btrfs_check_raid_min_devices() for a remove;
 *   a failure gives the device its old size and alloc list place back.
 * - btrfs_relocate_block_group() (relocation.c): btrfs_inc_block_group_ro()
 *   (block-group.c: a chunk of the new profile forced first when the
 *   profile changes; a group read-only already (the mount's single groups
 *   beside mirrored ones) passes; data turns read-only when the space info
 *   still holds what is used and reserved, metadata when it can
 *   over-commit, else a forced chunk), create_reloc_inode()'s
 *   transaction (6 items of metadata, FLUSH_ALL) before the group is
 *   logged, prepare_to_relocate()'s reserve, then each data extent
 *   preallocated whole (a 3-item transaction beside that reserve,
 *   __btrfs_prealloc_file_range()) in clusters of
 *   up to 128 contiguous extents (prealloc_file_extent_cluster(), the
 *   cluster's bytes reserved first, btrfs_alloc_data_chunk_ondemand(): a
 *   data chunk forced while the space info cannot hold them), each tree
 *   block moved as one nodesize allocation after the priority flusher's
 *   metadata chunk (should_alloc_chunk(), CHUNK_ALLOC_NO_FORCE); then
 *   btrfs_remove_chunk().  Not replayed: the COW copies of the paths, the
 *   reloc trees and the trees each transaction changes (which group keeps
 *   which copy); the groups they may have changed are in uncertain_raw.
 * - do_chunk_alloc() (block-group.c): a new chunk's item needs a system
 *   block group of the system profile; else a system chunk, else the
 *   transaction aborts (-EROFS).
 * - find_free_extent() (extent-tree.c): the hint (the end of the previous
 *   extent of the cluster) first, then the block groups of each RAID index
 *   in list order (mount order, new chunks appended), loops
 *   LOOP_CACHING_NOWAIT, LOOP_UNSET_SIZE_CLASS, LOOP_ALLOC_CHUNK,
 *   LOOP_WRONG_SIZE_CLASS; block_group_bits(); the size class check and
 *   btrfs_use_block_group_size_class() (6.3), a group a failed
 *   relocation leaves empty without a class (6.18.y); in a block group,
 *   btrfs_find_space_for_alloc(): from the block group's start the
 *   largest free extent (the bytes index, equal ones in the order they
 *   were linked: entry_less()), from a hint the first free
 *   extent that fits, by offset, from the hint's 128 MiB bitmap window;
 *   the start aligned to full_stripe_len (btrfs_full_stripe_len()).
 * - load_block_group_size_class() (block-group.c): five samples of the
 *   extent tree, the smallest extent's class, for the block groups that
 *   caching_thread() caches: those the mount found partly used
 *   (read_one_block_group() caches full and empty ones without it; the
 *   image is taken as the mount's state, --full-at-mount names block
 *   groups full at the mount and freed since).
 *
 * Free space comes from the extent tree (the gaps between EXTENT_ITEMs
 * and METADATA_ITEMs, less exclude_super_stripes()'s ranges): what the
 * free-space tree or the v1 cache hold on a committed filesystem.  In
 * live mode the extent tree is the kernel's in memory, through its tree
 * search (btrfs_live_extent_items()), checked against the block groups'
 * used and sysfs size_classes (formulas.md 21.14).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/forecast.h"
#include "kernel-shared/live.h"
#include "kernel-shared/relocation.h"
#include "kernel-shared/space-info.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/volumes.h"
#include "common/array.h"

#define RELOC_MAX_EXTENTS	128		/* relocation.c MAX_EXTENTS */
#define RELOC_BITMAP_WINDOW	(128ULL << 20)	/* BITS_PER_BITMAP sectors of 4 KiB */
#define RELOC_SZ_2M		(2ULL << 20)
/* a bound on the work: relocations of one what-if */
#define RELOC_MAX_STEPS		100000
#define RELOCATION_RESERVED_NODES	256		/* relocation.h */
#define RELOC_INODE_ITEMS	6		/* create_reloc_inode()'s transaction */
#define PREALLOC_ITEMS		3		/* __btrfs_prealloc_file_range()'s transaction */

enum reloc_loop {
	LOOP_CACHING_NOWAIT,
	LOOP_CACHING_WAIT,
	LOOP_UNSET_SIZE_CLASS,
	LOOP_ALLOC_CHUNK,
	LOOP_WRONG_SIZE_CLASS,
	LOOP_NO_EMPTY_SIZE,
};

struct reloc_range {
	u64 start;
	u64 len;
	u64 seq;	/* free space: when linked into the bytes index */
};

struct range_list {
	struct reloc_range *r;		/* sorted by start, not overlapping */
	u32 nr;
	u32 cap;
	u64 next_seq;
};

/*
 * A type's block groups summed, kept as they change (bg_changed()): what
 * type_totals() and type_free() would otherwise add up over every block
 * group at each relocation
 */
struct reloc_sums {
	u64 total;			/* length, not removed */
	u64 used;
	u64 readonly;			/* bytes_super, and the free of read-only ones */
	u64 rw_free;			/* the free of writable ones */
};

struct reloc_bg {
	u64 start;
	u64 length;
	u64 flags;
	u64 used;
	u64 bytes_super;
	bool ro;
	bool removed;
	bool is_new;
	bool took_copies;	/* tree blocks moved here by a relocation */
	u64 failed_copies;	/* tree block copies of a failed relocation, still in used */
	u8 size_class;
	struct range_list free;
	struct range_list extents;	/* what relocation moves */
	const struct btrfs_chunk_map *map;
	struct reloc_sums counted;	/* what it adds to its type's sums now */
};

/* One allocation made while relocating a block group, undone on -ENOSPC */
struct reloc_alloc {
	u32 bg;
	u64 start;
	u64 len;
};

struct reloc {
	const struct space_report *report;
	struct btrfs_fs_info *fs_info;
	struct btrfs_alloc_state st;
	struct system_room room;
	struct reloc_bg *bgs;		/* allocation list order */
	u32 nr_bgs;
	u32 cap_bgs;
	u32 nr_orig;			/* the first nr_orig are the mounted ones, by start */
	bool size_classes;
	bool size_class_reset;		/* an emptied block group loses its size class */
	u64 target[3];			/* alloc flags for data, metadata, system */
	u64 sys_alloc;			/* the chunk tree's blocks: system alloc flags */
	u32 chunks_at_commit;		/* new chunks when the transaction last committed */
	u64 may_use_meta;		/* the global reserve, held in metadata */
	/*
	 * btrfs_shrink_device() (a remove too) of shrink_devid: what its
	 * device gives free_chunk_space, max(new size, bytes_used at the
	 * start) - bytes_used (type_totals())
	 */
	u64 shrink_devid;
	u64 shrink_floor;
	struct reloc_alloc *allocs;
	u32 nr_allocs;
	u32 cap_allocs;
	/* the block groups holding failed_copies: forgotten without a sweep of all */
	u32 *failed_bgs;
	u32 nr_failed_bgs;
	u32 cap_failed_bgs;
	/*
	 * next_chunk_start()'s last answer: the block group that ended last
	 * and how many there were then (groups are only appended or removed)
	 */
	u32 last_end_bg;
	u32 last_end_nr;
	/* a writable system group chunk_tree_room() found: tried first */
	u32 sys_room_bg;
	struct btrfs_reloc_result *res;
	const struct forecast_options *opts;
	u32 overlaps;			/* live: extents read that overlapped the one before */
	u32 steps;
	bool moving_tree_blocks;	/* take() marks the block groups it fills */
	const struct btrfs_chunk_map **pending;	/* removed, dev extents not yet committed */
	u32 nr_pending;
	/*
	 * committed, their dev extents holes, but still in the devices'
	 * ranges: taken out (btrfs_alloc_remove_ranges()) before the next
	 * chunk allocation reads them
	 */
	const struct btrfs_chunk_map **committed;
	u32 nr_committed;
	u32 cap_committed;
	u64 meta_type;			/* metadata_type(), fixed by the mounted ones */
	/*
	 * The index: per type the sums, and a max tree over the list of the
	 * largest free extent of each writable block group, so the walks of
	 * find_free_extent() skip in O(log n) what cannot hold the
	 * allocation (removed, read-only, too full) instead of testing each:
	 * a sweep of n block groups is O(n log n), not O(n^2)
	 */
	bool indexed;
	struct reloc_sums sums[BTRFS_BLOCK_GROUP_TYPE_MASK + 1];
	/*
	 * the trees, one per block group type (flags & TYPE_MASK), NULL for
	 * a type no group has: a search of one type passes over the others
	 * in O(log n) (a tree block's walk over data groups was O(n))
	 */
	u64 *largest[BTRFS_BLOCK_GROUP_TYPE_MASK + 1];	/* leaves at seg_size + i */
	u32 seg_size;			/* a power of two >= nr_bgs */
	bool sorted;			/* bgs[] by start: lookup_bg() may bisect */
	u64 max_length;			/* the longest block group */
};

static void inexact(struct reloc *rc, const char *why)
{
	if (rc->res->exact) {
		rc->res->exact = false;
		rc->res->inexact_reason = why;
	}
}

static int range_insert(struct range_list *l, u32 at, u64 start, u64 len)
{
	if (array_grow((void **)&l->r, l->nr, &l->cap, sizeof(*l->r)))
		return -ENOMEM;
	memmove(&l->r[at + 1], &l->r[at], (l->nr - at) * sizeof(*l->r));
	l->r[at].start = start;
	l->r[at].len = len;
	l->r[at].seq = ++l->next_seq;
	l->nr++;
	return 0;
}

/*
 * A free space entry linked anew into the bytes index: tree_insert_bytes()
 * puts it after the entries of its size already there
 */
static void range_relink(struct range_list *l, struct reloc_range *r)
{
	r->seq = ++l->next_seq;
}

/* The mount's load: the entries linked by offset, lowest first */
static void range_renumber(struct range_list *l)
{
	u32 i;

	for (i = 0; i < l->nr; i++)
		l->r[i].seq = ++l->next_seq;
}

static int range_append(struct range_list *l, u64 start, u64 len)
{
	return range_insert(l, l->nr, start, len);
}

static void range_delete(struct range_list *l, u32 at)
{
	memmove(&l->r[at], &l->r[at + 1], (l->nr - at - 1) * sizeof(*l->r));
	l->nr--;
}

/* Take [start, start + len) out of the free ranges */
static int range_remove(struct range_list *l, u64 start, u64 len)
{
	u64 end = start + len;
	u32 i;

	for (i = 0; i < l->nr; i++) {
		struct reloc_range *r = &l->r[i];
		u64 rend = r->start + r->len;

		if (rend <= start || r->start >= end)
			continue;
		if (r->start < start && rend > end) {
			int ret;

			/* the rest linked again, then the alignment gap added */
			r->len = start - r->start;
			ret = range_insert(l, i + 1, end, rend - end);
			range_relink(l, &l->r[i]);
			return ret;
		}
		if (r->start < start) {
			r->len = start - r->start;
			range_relink(l, r);
		} else if (rend > end) {
			r->len = rend - end;
			r->start = end;
			range_relink(l, r);
		} else {
			range_delete(l, i);
			i--;
		}
	}
	return 0;
}

/* Give [start, start + len) back, merged with its neighbours */
static int range_add(struct range_list *l, u64 start, u64 len)
{
	u32 i = 0;

	while (i < l->nr && l->r[i].start < start)
		i++;
	if (i > 0 && l->r[i - 1].start + l->r[i - 1].len == start) {
		l->r[i - 1].len += len;
		if (i < l->nr && l->r[i].start == start + len) {
			l->r[i - 1].len += l->r[i].len;
			range_delete(l, i);
		}
		/* try_merge_free_space(): the merged entry is linked anew */
		range_relink(l, &l->r[i - 1]);
		return 0;
	}
	if (i < l->nr && l->r[i].start == start + len) {
		l->r[i].start = start;
		l->r[i].len += len;
		range_relink(l, &l->r[i]);
		return 0;
	}
	return range_insert(l, i, start, len);
}

static u64 range_total(const struct range_list *l)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < l->nr; i++)
		sum += l->r[i].len;
	return sum;
}

/* btrfs_block_group_should_use_size_class(): data block groups, not mixed */
static bool uses_size_class(const struct reloc *rc, const struct reloc_bg *bg)
{
	return rc->size_classes && (bg->flags & BTRFS_BLOCK_GROUP_DATA) &&
	       !(bg->flags & BTRFS_BLOCK_GROUP_METADATA);
}

static int add_bg(struct reloc *rc, const struct btrfs_chunk_map *map, u64 flags,
		  u64 start, u64 length, u64 used, u64 bytes_super, bool ro)
{
	struct reloc_bg *bg;

	if (array_grow((void **)&rc->bgs, rc->nr_bgs, &rc->cap_bgs, sizeof(*rc->bgs)))
		return -ENOMEM;
	bg = &rc->bgs[rc->nr_bgs++];
	memset(bg, 0, sizeof(*bg));
	bg->start = start;
	bg->length = length;
	bg->flags = flags;
	bg->used = used;
	bg->bytes_super = bytes_super;
	bg->ro = ro;
	bg->map = map;
	return 0;
}

/* exclude_super_stripes(): the superblock copies never free */
static int exclude_super(struct reloc_bg *bg)
{
	u64 start[64], len[64];
	u32 n, i;
	int ret;

	n = btrfs_super_exclude_ranges(bg->map, start, len, 64);
	for (i = 0; i < n; i++) {
		ret = range_remove(&bg->free, start[i], len[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* The largest free extent of a writable block group, 0 for others */
static u64 bg_largest_free(const struct reloc_bg *bg)
{
	u64 largest = 0;
	u32 i;

	if (bg->removed || bg->ro)
		return 0;
	for (i = 0; i < bg->free.nr; i++)
		largest = max_t(u64, largest, bg->free.r[i].len);
	return largest;
}

static void sums_add(struct reloc_sums *to, const struct reloc_sums *v, int sign)
{
	to->total += sign * v->total;
	to->used += sign * v->used;
	to->readonly += sign * v->readonly;
	to->rw_free += sign * v->rw_free;
}

static u64 *type_tree(const struct reloc *rc, u64 flags)
{
	return rc->largest[flags & BTRFS_BLOCK_GROUP_TYPE_MASK];
}

static void seg_set(struct reloc *rc, u32 b, u64 value)
{
	u64 *t = type_tree(rc, rc->bgs[b].flags);
	u32 i = rc->seg_size + b;

	t[i] = value;
	for (i >>= 1; i; i >>= 1)
		t[i] = max_t(u64, t[2 * i], t[2 * i + 1]);
}

static void index_free(struct reloc *rc)
{
	u32 t;

	for (t = 0; t <= BTRFS_BLOCK_GROUP_TYPE_MASK; t++) {
		free(rc->largest[t]);
		rc->largest[t] = NULL;
	}
}

/* Block group @b changed (free space, used, read-only, removed): its index entries anew */
static void bg_changed(struct reloc *rc, u32 b)
{
	struct reloc_bg *bg = &rc->bgs[b];
	struct reloc_sums *sums = &rc->sums[bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK];
	u64 free = range_total(&bg->free);

	if (!rc->indexed)
		return;
	sums_add(sums, &bg->counted, -1);
	memset(&bg->counted, 0, sizeof(bg->counted));
	if (!bg->removed) {
		bg->counted.total = bg->length;
		bg->counted.used = bg->used;
		bg->counted.readonly = bg->bytes_super + (bg->ro ? free : 0);
		bg->counted.rw_free = bg->ro ? 0 : free;
	}
	sums_add(sums, &bg->counted, 1);
	seg_set(rc, b, bg_largest_free(bg));
}

/* The index built (again, when the list outgrew the tree) */
static int index_build(struct reloc *rc)
{
	u32 size = 1, i;
	u64 type;

	while (size < rc->nr_bgs)
		size <<= 1;
	index_free(rc);
	for (i = 0; i < rc->nr_bgs; i++) {
		type = rc->bgs[i].flags & BTRFS_BLOCK_GROUP_TYPE_MASK;
		if (rc->largest[type])
			continue;
		rc->largest[type] = calloc(2 * size, sizeof(u64));
		if (!rc->largest[type]) {
			index_free(rc);
			rc->indexed = false;
			return -ENOMEM;
		}
	}
	rc->seg_size = size;
	rc->indexed = true;
	memset(rc->sums, 0, sizeof(rc->sums));
	rc->sorted = true;
	rc->max_length = 0;
	for (i = 0; i < rc->nr_bgs; i++) {
		struct reloc_bg *bg = &rc->bgs[i];

		memset(&bg->counted, 0, sizeof(bg->counted));
		bg_changed(rc, i);
		if (i && bg->start < rc->bgs[i - 1].start)
			rc->sorted = false;
		rc->max_length = max_t(u64, rc->max_length, bg->length);
	}
	return 0;
}

/* A block group appended to the list (a new chunk) enters the index */
static int index_append(struct reloc *rc)
{
	u32 b = rc->nr_bgs - 1;

	if (!rc->indexed)
		return 0;
	if (b >= rc->seg_size || !type_tree(rc, rc->bgs[b].flags))
		return index_build(rc);
	if (b && rc->bgs[b].start < rc->bgs[b - 1].start)
		rc->sorted = false;
	rc->max_length = max_t(u64, rc->max_length, rc->bgs[b].length);
	bg_changed(rc, b);
	return 0;
}

/*
 * The first block group at or after @from in list order whose largest
 * free extent holds @bytes: no block group before it can take them
 * (btrfs_find_space_for_alloc() needs a free extent that long)
 */
static u32 next_fit(const struct reloc *rc, u64 type, u32 from, u64 bytes)
{
	const u64 *t = type_tree(rc, type);
	u32 i;

	if (!t)
		return rc->nr_bgs;
	if (from >= rc->nr_bgs || !bytes)
		return from;
	i = rc->seg_size + from;
	while (t[i] < bytes) {
		/* a right child: the rest of its parent is done, climb */
		while (i & 1)
			i >>= 1;
		if (!i)
			return rc->nr_bgs;
		i++;
	}
	while (i < rc->seg_size) {
		i *= 2;
		if (t[i] < bytes)
			i++;
	}
	return min_t(u32, i - rc->seg_size, rc->nr_bgs);
}

/* The mounted block group holding @bytenr, by start */
static struct reloc_bg *find_orig_bg(struct reloc *rc, u64 bytenr)
{
	u32 i = array_find_range(rc->bgs, rc->nr_orig, sizeof(*rc->bgs),
				 offsetof(struct reloc_bg, start),
				 offsetof(struct reloc_bg, length), bytenr);

	return i < rc->nr_orig ? &rc->bgs[i] : NULL;
}

/*
 * One EXTENT_ITEM or METADATA_ITEM into its mounted block group's list.
 * Keys come in order; one that overlaps the extent before it (a live
 * tree changed between two searches) is counted, not listed.
 */
static int add_extent_key(struct reloc *rc, const struct btrfs_key *key)
{
	struct reloc_bg *bg;
	const struct reloc_range *last;
	u64 len;

	if (key->type == BTRFS_EXTENT_ITEM_KEY)
		len = key->offset;
	else if (key->type == BTRFS_METADATA_ITEM_KEY)
		len = rc->fs_info->nodesize;
	else
		return 0;
	bg = find_orig_bg(rc, key->objectid);
	if (!bg || !len)
		return 0;
	last = bg->extents.nr ? &bg->extents.r[bg->extents.nr - 1] : NULL;
	if (last && last->start + last->len > key->objectid) {
		rc->overlaps++;
		return 0;
	}
	return range_append(&bg->extents, key->objectid, len);
}

static int extent_leaf(struct btrfs_fs_info *fs_info, const struct btrfs_tree_block *leaf,
		       void *ctx)
{
	u32 nr = btrfs_header_nritems((const struct btrfs_header *)leaf->data);
	u32 slot;
	int ret;

	for (slot = 0; slot < nr; slot++) {
		struct btrfs_key key;

		btrfs_item_key_to_cpu(leaf, slot, &key);
		ret = add_extent_key(ctx, &key);
		if (ret)
			return ret;
	}
	return 0;
}

static int live_extent_key(void *arg, const struct btrfs_key *key)
{
	return add_extent_key(arg, key);
}

/* The free ranges: the gaps between the extents, less the superblock copies */
static int derive_free(struct reloc_bg *bg)
{
	u64 pos = bg->start, end = bg->start + bg->length;
	u32 i;
	int ret;

	for (i = 0; i < bg->extents.nr; i++) {
		const struct reloc_range *e = &bg->extents.r[i];

		if (e->start > pos) {
			ret = range_append(&bg->free, pos, e->start - pos);
			if (ret)
				return ret;
		}
		if (e->start + e->len > pos)
			pos = e->start + e->len;
	}
	if (end > pos) {
		ret = range_append(&bg->free, pos, end - pos);
		if (ret)
			return ret;
	}
	ret = exclude_super(bg);
	range_renumber(&bg->free);
	return ret;
}

/*
 * load_block_group_size_class(): five samples at i * length / 5, each the
 * first extent item at or after it in the block group; the smallest one's
 * class, none when no sample found an extent.
 */
static void load_size_class(struct reloc *rc, struct reloc_bg *bg)
{
	u64 min_size = bg->length;
	bool found = false;
	u32 i, j = 0;

	if (!uses_size_class(rc, bg))
		return;
	for (i = 0; i < 5; i++) {
		u64 at = bg->start + i * (bg->length / 5);

		while (j < bg->extents.nr && bg->extents.r[j].start < at)
			j++;
		if (j == bg->extents.nr)
			break;
		found = true;
		if (bg->extents.r[j].len < min_size)
			min_size = bg->extents.r[j].len;
	}
	if (found)
		bg->size_class = btrfs_calc_block_group_size_class(min_size);
}

/*
 * The largest data extent the kernel writes (BTRFS_MAX_EXTENT_SIZE): what a
 * block group's used bytes are split into when its extents are unknown
 */
#define RELOC_UNKNOWN_DATA_EXTENT	SZ_128M

/*
 * A block group whose extents cannot be read (the extent tree unreadable,
 * or live mode): its used bytes as extents at its start, of 128 MiB for
 * data (no data extent is larger: each needs that much contiguous room when
 * moved, the hardest case) and of the node size for tree blocks (their true
 * size); its free space in one piece after them.  Without them a relocation
 * would move nothing and always complete.
 */
static int extents_unknown(struct reloc *rc, struct reloc_bg *bg)
{
	u64 piece = bg->flags & BTRFS_BLOCK_GROUP_DATA ? RELOC_UNKNOWN_DATA_EXTENT :
		    rc->fs_info->nodesize;
	u64 pos = bg->start, left = bg->used;
	int ret;

	bg->extents.nr = 0;
	bg->free.nr = 0;
	while (left) {
		u64 len = left < piece ? left : piece;

		ret = range_append(&bg->extents, pos, len);
		if (ret)
			return ret;
		pos += len;
		left -= len;
	}
	return derive_free(bg);
}

/* --full-at-mount names @bg */
static bool full_at_mount(const struct reloc *rc, const struct reloc_bg *bg)
{
	u32 i;

	for (i = 0; i < rc->opts->nr_full_at_mount; i++)
		if (rc->opts->full_at_mount[i] == bg->start)
			return true;
	return false;
}

/*
 * Each mounted block group's size class as the kernel will see it
 * (formulas.md 21.14, "cached since the mount"): read_one_block_group()
 * caches a block group full or empty at the mount without
 * caching_thread(), so load_block_group_size_class() never runs for it:
 * none until an allocation in it.  Any other one is cached by its first
 * free (btrfs_update_block_group()) or the first find_free_extent() walk
 * that reaches it, which samples its extents then.  Offline the image is
 * taken as the mount's state; --full-at-mount names block groups that
 * were full at the mount and freed since.
 */
static void load_size_classes(struct reloc *rc)
{
	u32 i;

	for (i = 0; i < rc->nr_orig; i++) {
		struct reloc_bg *bg = &rc->bgs[i];

		if (bg->used < bg->length && !full_at_mount(rc, bg))
			load_size_class(rc, bg);
	}
}

static void inexact_fmt(struct reloc *rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void inexact_fmt(struct reloc *rc, const char *fmt, ...)
{
	va_list ap;

	if (!rc->res->exact)
		return;
	va_start(ap, fmt);
	vsnprintf(rc->res->reason_buf, sizeof(rc->res->reason_buf), fmt, ap);
	va_end(ap);
	inexact(rc, rc->res->reason_buf);
}

/*
 * Live: the extent tree in memory now against the block group items of
 * the last commit; a difference is what changed since (or while read)
 */
static void live_check_extents(struct reloc *rc)
{
	u64 diff = 0;
	u32 i, j, groups = 0;

	for (i = 0; i < rc->nr_orig; i++) {
		const struct reloc_bg *bg = &rc->bgs[i];
		u64 sum = 0;

		for (j = 0; j < bg->extents.nr; j++)
			sum += bg->extents.r[j].len;
		if (sum == bg->used)
			continue;
		groups++;
		diff += sum > bg->used ? sum - bg->used : bg->used - sum;
	}
	if (groups || rc->overlaps)
		inexact_fmt(rc, "live: the extent tree read now and the block group items of the last commit differ by %llu bytes in %u block groups (%u extents overlapped: changed while read); the replay places the extents read",
			    (unsigned long long)diff, groups, rc->overlaps);
}

/*
 * Live: sysfs size_classes counts the block groups of each class now;
 * "none" holds the empty and uncached ones and those full at the mount
 * (including the full ones now).  A partly used one without a class is
 * either not cached yet (sampled when the walk reaches it, as modelled)
 * or was full at the mount (none: --full-at-mount), which the tool
 * cannot tell apart.
 */
static void live_check_size_classes(struct reloc *rc)
{
	const struct btrfs_live *live = rc->fs_info->live;
	const struct btrfs_live_space_info *s;
	u64 none, empty = 0, full = 0, named = 0, partly = 0, low, high;
	char count[48];
	u32 i;

	if (!live || !rc->size_classes)
		return;
	s = &live->sysfs[BTRFS_SPACE_DATA];
	if (!s->present || !s->has_size_classes)
		return;
	none = s->size_classes[0];
	for (i = 0; i < rc->nr_orig; i++) {
		const struct reloc_bg *bg = &rc->bgs[i];

		if (!uses_size_class(rc, bg))
			continue;
		if (!bg->used)
			empty++;
		else if (bg->used >= bg->length)
			full++;
		else if (full_at_mount(rc, bg))
			named++;
		else
			partly++;
	}
	/* the full ones may or may not have a class: a range */
	high = none > empty + named ? min_t(u64, partly, none - empty - named) : 0;
	low = none > empty + named + full ? min_t(u64, high, none - empty - named - full) : 0;
	if (!high)
		return;
	if (low == high)
		snprintf(count, sizeof(count), "%llu", (unsigned long long)high);
	else
		snprintf(count, sizeof(count), "%llu to %llu", (unsigned long long)low,
			 (unsigned long long)high);
	inexact_fmt(rc, "live: sysfs size_classes counts %llu data block groups without a size class (%llu empty, %llu full, %llu named by --full-at-mount): %s of the %llu other partly used ones have none, each either not cached since the mount (its class read when first reached, as modelled) or full at the mount (none until an allocation: --full-at-mount), which the kernel does not show",
		    (unsigned long long)none, (unsigned long long)empty,
		    (unsigned long long)full, (unsigned long long)named, count,
		    (unsigned long long)partly);
}

static int read_extents(struct reloc *rc)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	u32 i;
	int ret = -ENOENT;

	rc->res->extents_read = false;
	if (rc->report->live && rc->nr_orig) {
		const struct reloc_bg *last = &rc->bgs[rc->nr_orig - 1];

		ret = btrfs_live_extent_items(fs_info, rc->bgs[0].start,
					      last->start + last->length, live_extent_key, rc);
	} else if (fs_info->extent_root.found) {
		ret = btrfs_walk_tree(fs_info, &fs_info->extent_root, BTRFS_IO_OTHER,
				      extent_leaf, rc);
	}
	if (ret == -ENOMEM)
		return ret;
	if (!ret)
		rc->res->extents_read = true;
	else
		inexact(rc, "the extent tree was not read: each block group's used bytes moved as 128 MiB data extents (node-size tree blocks), its free space taken in one piece");
	for (i = 0; i < rc->nr_orig; i++) {
		struct reloc_bg *bg = &rc->bgs[i];

		if (!ret) {
			ret = derive_free(bg);
			if (ret)
				return ret;
			continue;
		}
		ret = extents_unknown(rc, bg);
		if (ret)
			return ret;
		ret = -ENOENT;
	}
	if (!rc->res->extents_read)
		return 0;
	load_size_classes(rc);
	if (rc->report->live) {
		live_check_extents(rc);
		live_check_size_classes(rc);
	}
	return 0;
}

static int reloc_init(struct reloc *rc, const struct space_report *report,
		      const struct forecast_options *opts, struct btrfs_reloc_result *res)
{
	/* the tree reads fill the block cache; nothing of the filesystem changes */
	struct btrfs_fs_info *fs_info = (struct btrfs_fs_info *)report->fs_info;
	int ret, s;
	u32 i;

	memset(rc, 0, sizeof(*rc));
	memset(res, 0, sizeof(*res));
	res->exact = true;
	rc->report = report;
	rc->fs_info = fs_info;
	rc->res = res;
	ret = btrfs_alloc_state_init(fs_info, opts->kernel_version, &rc->st);
	rc->opts = opts;
	if (ret)
		return ret;
	rc->size_classes = rc->st.model.size_classes;
	rc->size_class_reset = rc->st.model.size_class_reset;
	system_room_init(report, &rc->room);
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		ret = add_bg(rc, bg->map, bg->flags, bg->start, bg->length, bg->used,
			     bg->bytes_super, bg->ro);
		if (ret)
			return ret;
	}
	rc->nr_orig = rc->nr_bgs;
	/* the metadata space info's type: DATA|METADATA on a mixed filesystem */
	rc->meta_type = BTRFS_BLOCK_GROUP_METADATA;
	for (i = 0; i < rc->nr_orig; i++)
		if ((rc->bgs[i].flags & BTRFS_BLOCK_GROUP_DATA) &&
		    (rc->bgs[i].flags & BTRFS_BLOCK_GROUP_METADATA))
			rc->meta_type = BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA;
	rc->target[0] = btrfs_get_alloc_profile(fs_info, BTRFS_BLOCK_GROUP_DATA);
	rc->target[1] = btrfs_get_alloc_profile(fs_info, BTRFS_BLOCK_GROUP_METADATA);
	rc->target[2] = btrfs_get_alloc_profile(fs_info, BTRFS_BLOCK_GROUP_SYSTEM);
	rc->sys_alloc = BTRFS_BLOCK_GROUP_SYSTEM | rc->target[2];
	for (s = 0; s < report->nr_space_infos; s++)
		if (report->space_infos[s].info.flags & BTRFS_BLOCK_GROUP_METADATA)
			rc->may_use_meta = report->space_infos[s].info.bytes_may_use;
	res->nr_devs = rc->st.nr_devs;
	res->devids = calloc(rc->st.nr_devs ? rc->st.nr_devs : 1, sizeof(u64));
	if (!res->devids)
		return -ENOMEM;
	for (i = 0; i < rc->st.nr_devs; i++)
		res->devids[i] = rc->st.devs[i].devid;
	res->unallocated_after = calloc(rc->st.nr_devs ? rc->st.nr_devs : 1, sizeof(u64));
	res->uncertain_raw = calloc(rc->st.nr_devs ? rc->st.nr_devs : 1, sizeof(u64));
	/* the lists grow (push_start()): these are first sizes */
	res->cap_relocated = rc->nr_bgs ? rc->nr_bgs : 1;
	res->cap_failed = res->cap_selected = res->cap_started = 2 * res->cap_relocated;
	res->relocated = calloc(res->cap_relocated, sizeof(u64));
	res->failed = calloc(res->cap_failed, sizeof(u64));
	res->selected = calloc(res->cap_selected, sizeof(u64));
	res->started = calloc(res->cap_started, sizeof(u64));
	if (!res->unallocated_after || !res->uncertain_raw || !res->relocated || !res->failed || !res->selected ||
	    !res->started)
		return -ENOMEM;
	ret = read_extents(rc);
	return ret ? ret : index_build(rc);
}

static void reloc_release(struct reloc *rc)
{
	u32 i;

	for (i = 0; i < rc->nr_bgs; i++) {
		free(rc->bgs[i].free.r);
		free(rc->bgs[i].extents.r);
	}
	free(rc->bgs);
	index_free(rc);
	free(rc->allocs);
	free(rc->failed_bgs);
	free(rc->pending);
	free(rc->committed);
	btrfs_alloc_state_free(&rc->st);
}

static u32 type_index(u64 flags)
{
	if (flags & BTRFS_BLOCK_GROUP_DATA)
		return 0;
	if (flags & BTRFS_BLOCK_GROUP_METADATA)
		return 1;
	return 2;
}

static u64 chunk_size_of(const struct reloc *rc, u64 flags)
{
	const struct space_report *report = rc->report;
	int s;

	for (s = 0; s < report->nr_space_infos; s++) {
		const struct btrfs_space_info *si = &report->space_infos[s].info;

		if ((si->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) ==
		    (flags & BTRFS_BLOCK_GROUP_TYPE_MASK) && si->chunk_size)
			return si->chunk_size;
	}
	return btrfs_calc_chunk_size(rc->fs_info->total_rw_bytes, flags);
}

static int record_chunk(struct reloc *rc, struct btrfs_chunk_map *map)
{
	struct btrfs_reloc_result *res = rc->res;
	struct btrfs_chunk_map **n;
	struct reloc_bg *bg;
	int ret;

	n = realloc(res->new_chunks, (res->nr_new_chunks + 1) * sizeof(*n));
	if (!n) {
		free(map);
		return -ENOMEM;
	}
	res->new_chunks = n;
	res->new_chunks[res->nr_new_chunks++] = map;
	/* btrfs_make_block_group(): appended to its space info's list */
	ret = add_bg(rc, map, map->type, map->start, map->length, 0,
		     btrfs_chunk_map_bytes_super(map), false);
	if (ret)
		return ret;
	bg = &rc->bgs[rc->nr_bgs - 1];
	bg->is_new = true;
	ret = range_append(&bg->free, map->start, map->length);
	if (!ret)
		ret = exclude_super(bg);
	range_renumber(&bg->free);
	return ret ? ret : index_append(rc);
}

/*
 * find_next_chunk(): the end of the last chunk in the mapping tree, so a
 * new chunk takes the logical start of a removed one that was last
 */
static u64 bg_end(const struct reloc_bg *bg)
{
	return bg->start + bg->length;
}

/*
 * Only the groups appended since the last answer are scanned while the
 * group that ended last then is still there (removal is the only other
 * change): a sweep per new chunk made relocating n groups O(n^2)
 */
static void next_chunk_start(struct reloc *rc)
{
	u32 i = 0, last = rc->last_end_bg;
	u64 end = 0;

	if (rc->last_end_nr && !rc->bgs[last].removed) {
		i = rc->last_end_nr;
		end = bg_end(&rc->bgs[last]);
	}
	for (; i < rc->nr_bgs; i++)
		if (!rc->bgs[i].removed && bg_end(&rc->bgs[i]) > end) {
			end = bg_end(&rc->bgs[i]);
			last = i;
		}
	rc->last_end_bg = last;
	rc->last_end_nr = end ? rc->nr_bgs : 0;
	rc->st.next_logical = end;
}

/* A writable system block group the chunk tree's blocks may use (block_group_bits()) */
static bool chunk_tree_usable(const struct reloc *rc, const struct reloc_bg *bg)
{
	return !bg->removed && !bg->ro && (bg->flags & BTRFS_BLOCK_GROUP_SYSTEM) &&
	       (bg->flags & rc->sys_alloc) == rc->sys_alloc;
}

/* The group found last time first: a sweep per new chunk is O(n^2) */
static bool chunk_tree_room(struct reloc *rc)
{
	u32 i;

	if (rc->sys_room_bg < rc->nr_bgs && chunk_tree_usable(rc, &rc->bgs[rc->sys_room_bg]))
		return true;
	for (i = 0; i < rc->nr_bgs; i++) {
		if (chunk_tree_usable(rc, &rc->bgs[i])) {
			rc->sys_room_bg = i;
			return true;
		}
	}
	return false;
}

/*
 * do_chunk_alloc(): the new chunk's item goes into the chunk tree, whose
 * blocks take the system profile (during a balance with -sconvert, the
 * target).  Where no system block group has that profile the item's
 * insert fails, and a system chunk of that profile is made first; when
 * that fails too, btrfs_abort_transaction(): the filesystem turns
 * read-only, the operation ends with -EROFS and nothing of the aborted
 * transaction reaches the disk.  Returns 0, -EROFS or -ENOMEM.
 */
static int flush_removed(struct reloc *rc);

static int chunk_item_room(struct reloc *rc, struct btrfs_chunk_map *map)
{
	struct btrfs_chunk_map *sys;
	int ret;

	if ((map->type & BTRFS_BLOCK_GROUP_SYSTEM) || chunk_tree_room(rc))
		return 0;
	ret = flush_removed(rc);
	if (ret)
		return ret;
	sys = btrfs_alloc_create_chunk(&rc->st, rc->sys_alloc,
				       chunk_size_of(rc, BTRFS_BLOCK_GROUP_SYSTEM), &ret);
	if (!sys) {
		if (ret != -ENOSPC)
			return ret;
		btrfs_alloc_remove_chunk(&rc->st, map);
		rc->res->abort_reason = RELOC_ABORT_REASON;
		return -EROFS;
	}
	system_room_charge(&rc->room, sys);
	return record_chunk(rc, sys);
}

/*
 * btrfs_chunk_alloc(CHUNK_ALLOC_FORCE) of @flags, check_system_chunk()
 * first.  Returns 0, -ENOSPC, -EROFS (the transaction aborted) or -ENOMEM.
 */
static int force_chunk(struct reloc *rc, u64 flags)
{
	struct forecast_fill sys = { 0 };
	struct btrfs_chunk_map *map;
	u32 i;
	int ret;

	ret = flush_removed(rc);
	if (ret)
		return ret;
	next_chunk_start(rc);
	ret = check_system_chunk(&rc->st, &rc->room, flags, &sys);
	/* check_system_chunk() adds at most one SYSTEM chunk, a run of one */
	for (i = 0; !ret && i < sys.nr_runs; i++) {
		ret = record_chunk(rc, sys.runs[i].pattern[0]);
		sys.runs[i].pattern[0] = NULL;
	}
	for (i = 0; i < sys.nr_runs; i++)
		btrfs_chunk_run_free(&sys.runs[i]);
	free(sys.runs);
	if (ret)
		return ret;
	map = btrfs_alloc_create_chunk(&rc->st, flags, chunk_size_of(rc, flags), &ret);
	if (!map)
		return ret;
	ret = chunk_item_room(rc, map);
	if (ret) {
		free(map);
		return ret;
	}
	system_room_charge(&rc->room, map);
	return record_chunk(rc, map);
}

/* block_group_bits(): the block group has every bit asked for */
static bool bg_bits(const struct reloc_bg *bg, u64 flags)
{
	return (bg->flags & flags) == flags;
}

static bool check_size_class(const struct reloc *rc, const struct reloc_bg *bg,
			     int loop, u8 size_class)
{
	if (!uses_size_class(rc, bg))
		return true;
	if (loop >= LOOP_WRONG_SIZE_CLASS)
		return true;
	if (loop >= LOOP_UNSET_SIZE_CLASS && bg->size_class == BTRFS_BG_SZ_NONE)
		return true;
	return bg->size_class == size_class;
}

/*
 * The block group's full_stripe_len (btrfs_full_stripe_len()): what
 * find_free_space() aligns to, a whole stripe of data on RAID5/6
 */
static u64 full_stripe_len(const struct reloc *rc, const struct reloc_bg *bg)
{
	if (bg->flags & BTRFS_BLOCK_GROUP_RAID56_MASK)
		return (u64)BTRFS_STRIPE_LEN *
		       btrfs_chunk_data_stripes(bg->flags, bg->map->num_stripes);
	return rc->fs_info->sectorsize;
}

/* The start an extent of @bytes takes in @r, aligned, or false when it does not fit */
static bool fits(const struct reloc_bg *bg, const struct reloc_range *r, u64 bytes, u64 align,
		 u64 *at)
{
	u64 start = r->start;

	if (bytes >= align && align)
		start = bg->start + (r->start - bg->start + align - 1) / align * align;
	if (start - r->start + bytes > r->len)
		return false;
	*at = start;
	return true;
}

/*
 * The free extents of @len in the bytes index's order among equals, the
 * order they were linked (entry_less(): an equal one goes after): the
 * first that holds @bytes
 */
static bool equal_sized_fit(const struct reloc_bg *bg, u64 len, u64 bytes, u64 align,
			    u64 *found)
{
	const struct range_list *l = &bg->free;
	u64 after = 0;

	for (;;) {
		u32 next = l->nr, i;

		for (i = 0; i < l->nr; i++)
			if (l->r[i].len == len && l->r[i].seq > after &&
			    (next == l->nr || l->r[i].seq < l->r[next].seq))
				next = i;
		if (next == l->nr)
			return false;
		if (fits(bg, &l->r[next], bytes, align, found))
			return true;
		after = l->r[next].seq;
	}
}

/*
 * btrfs_find_space_for_alloc(): from the block group's start the free
 * extents largest first (the bytes index; equal ones in the order they
 * were linked), from @hint by offset from the hint's bitmap window on; the first that holds
 * @bytes at full_stripe_len alignment, the gap before it left free.
 */
static bool space_for_alloc(const struct reloc *rc, const struct reloc_bg *bg,
			    u64 search_start, u64 bytes, u64 *found)
{
	const struct range_list *l = &bg->free;
	u64 align = full_stripe_len(rc, bg), done = (u64)-1;
	u32 i;

	if (search_start == bg->start) {
		/* largest first: each pass takes the largest one below the last size */
		for (;;) {
			u32 best = l->nr;

			for (i = 0; i < l->nr; i++)
				if (l->r[i].len < done &&
				    (best == l->nr || l->r[i].len > l->r[best].len))
					best = i;
			if (best == l->nr || l->r[best].len < bytes)
				return false;
			if (equal_sized_fit(bg, l->r[best].len, bytes, align, found))
				return true;
			done = l->r[best].len;
		}
	}
	search_start = bg->start + (search_start - bg->start) / RELOC_BITMAP_WINDOW *
				   RELOC_BITMAP_WINDOW;
	for (i = 0; i < l->nr; i++) {
		if (l->r[i].start + l->r[i].len <= search_start)
			continue;
		if (fits(bg, &l->r[i], bytes, align, found))
			return true;
	}
	return false;
}

/* A moved extent joins its new block group: a later relocation of it moves it again */
static int extent_insert(struct range_list *l, u64 start, u64 len)
{
	u32 i = l->nr;

	while (i > 0 && l->r[i - 1].start > start)
		i--;
	return range_insert(l, i, start, len);
}

static void extent_delete(struct range_list *l, u64 start)
{
	u32 i;

	for (i = 0; i < l->nr; i++)
		if (l->r[i].start == start) {
			range_delete(l, i);
			return;
		}
}

static int take(struct reloc *rc, u32 b, u64 start, u64 len, int loop, u8 size_class)
{
	struct reloc_bg *bg = &rc->bgs[b];
	struct reloc_alloc *a;
	int ret;

	ret = range_remove(&bg->free, start, len);
	if (!ret)
		ret = extent_insert(&bg->extents, start, len);
	if (ret)
		return ret;
	bg->used += len;
	bg_changed(rc, b);
	if (rc->moving_tree_blocks)
		bg->took_copies = true;
	/* btrfs_add_reserved_bytes() -> btrfs_use_block_group_size_class() */
	if (uses_size_class(rc, bg) && bg->size_class == BTRFS_BG_SZ_NONE &&
	    loop < LOOP_WRONG_SIZE_CLASS)
		bg->size_class = size_class;
	if (array_grow((void **)&rc->allocs, rc->nr_allocs, &rc->cap_allocs, sizeof(*rc->allocs)))
		return -ENOMEM;
	a = &rc->allocs[rc->nr_allocs++];
	a->bg = b;
	a->start = start;
	a->len = len;
	return 0;
}

/* find_free_extent()'s answer: 1 found, or the error of recording it */
static int take_ret(int ret)
{
	return ret ? ret : 1;
}

static bool usable(const struct reloc_bg *bg, u64 flags)
{
	return !bg->removed && !bg->ro && bg_bits(bg, flags);
}

/* One pass over the list of RAID index @index from position @from */
static int search_index(struct reloc *rc, u64 flags, u64 bytes, int loop, u8 size_class,
			u32 index, u32 from, u64 *found)
{
	u32 b;

	/* the ones next_fit() passes over fail space_for_alloc() or usable() */
	for (b = next_fit(rc, flags, from, bytes); b < rc->nr_bgs;
	     b = next_fit(rc, flags, b + 1, bytes)) {
		struct reloc_bg *bg = &rc->bgs[b];
		u64 at;

		if (btrfs_bg_flags_to_raid_index(bg->flags) != index || !usable(bg, flags))
			continue;
		if ((bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) !=
		    (flags & BTRFS_BLOCK_GROUP_TYPE_MASK))
			continue;
		if (!check_size_class(rc, bg, loop, size_class))
			continue;
		if (!space_for_alloc(rc, bg, bg->start, bytes, &at))
			continue;
		*found = at;
		return take_ret(take(rc, b, at, bytes, loop, size_class));
	}
	return 0;
}

/*
 * The live block group holding @bytenr (live ones do not overlap).  While
 * the list is by start, from the last one starting at or below @bytenr
 * back to where no block group can reach it; else each in turn.
 */
static struct reloc_bg *lookup_bg(struct reloc *rc, u64 bytenr, u32 *b)
{
	u32 i;

	if (rc->indexed && rc->sorted) {
		i = array_upper_bound(rc->bgs, rc->nr_bgs, sizeof(*rc->bgs),
				      offsetof(struct reloc_bg, start), bytenr);
		while (i-- > 0) {
			struct reloc_bg *bg = &rc->bgs[i];

			if (bg->start + rc->max_length <= bytenr)
				break;
			if (!bg->removed && bytenr < bg->start + bg->length) {
				*b = i;
				return bg;
			}
		}
		return NULL;
	}
	for (i = 0; i < rc->nr_bgs; i++) {
		struct reloc_bg *bg = &rc->bgs[i];

		if (!bg->removed && bytenr >= bg->start && bytenr < bg->start + bg->length) {
			*b = i;
			return bg;
		}
	}
	return NULL;
}

/*
 * find_free_extent() for @bytes of @flags (type and profile): 1 with
 * *found, -ENOSPC, or -ENOMEM.
 */
static int find_free_extent(struct reloc *rc, u64 flags, u64 bytes, u64 hint, u64 *found)
{
	u8 size_class = btrfs_calc_block_group_size_class(bytes);
	u32 first = btrfs_bg_flags_to_raid_index(flags), index, from = 0, b;
	struct reloc_bg *bg;
	int loop = LOOP_CACHING_NOWAIT, ret;

	if (hint && (bg = lookup_bg(rc, hint, &b)) && usable(bg, flags)) {
		first = btrfs_bg_flags_to_raid_index(bg->flags);
		if (check_size_class(rc, bg, loop, size_class) &&
		    space_for_alloc(rc, bg, hint, bytes, found))
			return take_ret(take(rc, b, *found, bytes, loop, size_class));
		/* the walk goes on after the hinted block group */
		from = b + 1;
	}
	for (;;) {
		for (index = loop == LOOP_CACHING_NOWAIT ? first : 0;
		     index < BTRFS_NR_RAID_TYPES; index++) {
			ret = search_index(rc, flags, bytes, loop, size_class, index, from,
					   found);
			if (ret)
				return ret;
			from = 0;
		}
		/* every block group is cached: LOOP_CACHING_WAIT is skipped */
		loop += loop == LOOP_CACHING_NOWAIT ? 2 : 1;
		if (loop == LOOP_ALLOC_CHUNK) {
			ret = force_chunk(rc, flags);
			if (ret == -ENOSPC)
				loop++;
			else if (ret)
				return ret;
		}
		/* data: no empty_size, no cluster; metadata's cluster pass is the same here */
		if (loop >= LOOP_NO_EMPTY_SIZE)
			return -ENOSPC;
	}
}

/* Free in the writable block groups of @type: what a reservation can take */
static u64 type_free(const struct reloc *rc, u64 type)
{
	return rc->sums[type & BTRFS_BLOCK_GROUP_TYPE_MASK].rw_free;
}

/*
 * btrfs_alloc_data_chunk_ondemand() for a cluster: the data space info
 * must hold @bytes; the flusher forces data chunks until it does.
 */
static int reserve_data(struct reloc *rc, u64 flags, u64 bytes)
{
	u64 type = flags & BTRFS_BLOCK_GROUP_TYPE_MASK;
	int ret;

	while (type_free(rc, type) < bytes) {
		ret = force_chunk(rc, flags);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * prealloc_file_extent_cluster() per cluster of contiguous extents.  The
 * block group array grows as chunks are made: @s is an index, read anew.
 */
static int reserve_metadata(struct reloc *rc, u64 num_bytes);

/* prepare_to_relocate()'s block reserve: nodesize * RELOCATION_RESERVED_NODES */
u64 btrfs_reloc_block_rsv_size(u32 nodesize)
{
	return (u64)nodesize * RELOCATION_RESERVED_NODES;
}

/*
 * Data: each extent of a cluster is preallocated by
 * __btrfs_prealloc_file_range(), in a transaction of its own,
 * btrfs_start_transaction(data_reloc_root, 3) (FLUSH_ALL), while
 * prepare_to_relocate()'s reserve (nodesize * RELOCATION_RESERVED_NODES)
 * is still held: the extent needs both free at once.  On a 1 GiB
 * compress=zstd filesystem whose metadata was nearly full (5226496 bytes
 * free beside the 5.5 MiB global reserve) 6.18.44 failed -dusage=27 so,
 * traced: a FLUSH_ALL ticket of 2359296 bytes failed with -28 while
 * bytes_may_use was 9961472 (the global reserve and the 4 MiB); the
 * model without it moved the group.
 */
u64 btrfs_reloc_prealloc_size(const struct btrfs_fs_info *fs_info,
			      const struct btrfs_kernel_model *model)
{
	return btrfs_reloc_block_rsv_size(fs_info->nodesize) +
	       btrfs_calc_start_trans_size(fs_info, model, PREALLOC_ITEMS);
}

static int reserve_prealloc(struct reloc *rc)
{
	return reserve_metadata(rc, btrfs_reloc_prealloc_size(rc->fs_info,
							      &rc->report->reserve.model));
}

static int move_data(struct reloc *rc, u32 s, u64 flags)
{
	u32 i = 0;
	int ret;

	while (i < rc->bgs[s].extents.nr) {
		const struct reloc_range *ext = rc->bgs[s].extents.r;
		u32 nr = rc->bgs[s].extents.nr, n = 1;
		u64 end = ext[i].start + ext[i].len, hint = 0, found;

		while (i + n < nr && n < RELOC_MAX_EXTENTS && ext[i + n].start == end) {
			end += ext[i + n].len;
			n++;
		}
		ret = reserve_data(rc, flags, end - ext[i].start);
		if (ret)
			return ret;
		/* nothing lands in the read-only source: its extents stay where they are */
		for (; n; n--, i++) {
			u64 len = rc->bgs[s].extents.r[i].len;

			ret = reserve_prealloc(rc);
			if (ret)
				return ret;
			ret = find_free_extent(rc, flags, len, hint, &found);
			if (ret < 0)
				return ret;
			hint = found + len;
		}
	}
	return 0;
}

/*
 * Tree blocks: each moved as one allocation of its size.  Before each, and
 * once after the last, relocate_block_group()'s loop refills the
 * relocation's block reserve to its size (nodesize *
 * RELOCATION_RESERVED_NODES, FLUSH_ALL): the blocks moved so far are used
 * beside it and the read-only group, so the move needs its tree blocks
 * plus the reserve plus the global reserve free in the other groups, or
 * over-commit, or a chunk.  Without the refill a 91.66 MiB group was
 * predicted to move into 99.39 MiB free beside a 5.5 MiB global reserve;
 * 6.18.44 ended -ENOSPC (kernel test 077).
 */
static int move_tree_blocks(struct reloc *rc, u32 s, u64 flags)
{
	u64 rsv = btrfs_reloc_block_rsv_size(rc->fs_info->nodesize);
	u32 i;
	int ret = 0;

	if (rc->bgs[s].extents.nr)
		inexact(rc, "metadata relocation: the tree blocks' COW copies and the reloc trees are not replayed");
	rc->moving_tree_blocks = true;
	for (i = 0; i <= rc->bgs[s].extents.nr; i++) {
		u64 found;

		ret = reserve_metadata(rc, rsv);
		if (ret < 0 || i == rc->bgs[s].extents.nr)
			break;
		ret = find_free_extent(rc, flags, rc->bgs[s].extents.r[i].len, 0, &found);
		if (ret < 0)
			break;
	}
	rc->moving_tree_blocks = false;
	return ret < 0 ? ret : 0;
}

/* The space info of @type as the model stands: total, used, read-only */
static void type_totals(const struct reloc *rc, u64 type, struct btrfs_reserve_state *st)
{
	const struct reloc_sums *sums = &rc->sums[type & BTRFS_BLOCK_GROUP_TYPE_MASK];
	u32 i;

	st->total_bytes = sums->total;
	st->bytes_used = sums->used;
	st->bytes_readonly = sums->readonly;
	/*
	 * btrfs_shrink_device() takes the shrunk bytes off total_rw_bytes
	 * at once: calc_effective_data_chunk_size() keeps 10 % of what is
	 * left free, not of the mount's
	 */
	st->total_rw_bytes = rc->st.total_rw_bytes;
	st->free_chunk_space = 0;
	for (i = 0; i < rc->st.nr_devs; i++) {
		const struct btrfs_alloc_device *dev = &rc->st.devs[i];

		if (dev->devid == rc->shrink_devid) {
			if (rc->shrink_floor > dev->bytes_used)
				st->free_chunk_space += rc->shrink_floor - dev->bytes_used;
			continue;
		}
		if (dev->writeable && dev->total_bytes > dev->bytes_used)
			st->free_chunk_space += dev->total_bytes - dev->bytes_used;
	}
}

/*
 * inc_block_group_ro(): data when the space info without this group's
 * free space still holds what is used and reserved
 * (btrfs_space_info_used() + num_bytes <= total_bytes); metadata and
 * system by btrfs_can_overcommit(num_bytes, BTRFS_RESERVE_NO_FLUSH)
 * (space-info.c), bytes_may_use being the global reserve as after the
 * mount: what the running balance holds besides is not known.
 */
static bool can_set_ro(struct reloc *rc, const struct reloc_bg *bg)
{
	u64 type = bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK;
	u64 num_bytes = range_total(&bg->free);
	struct btrfs_reserve_state st = rc->report->reserve.state;

	/*
	 * inc_block_group_ro(): a block group already read-only only counts
	 * once more, no space test: the single and RAID0 groups the mount
	 * set read-only beside mirrored ones (a cancelled conversion's)
	 */
	if (bg->ro)
		return true;
	type_totals(rc, type, &st);
	if (type & BTRFS_BLOCK_GROUP_DATA)
		return st.bytes_used + st.bytes_readonly + num_bytes <= st.total_bytes;
	inexact(rc, "metadata: btrfs_can_overcommit() on bytes_may_use during the balance");
	st.flags = type;
	st.bytes_may_use = type & BTRFS_BLOCK_GROUP_METADATA ? rc->may_use_meta : 0;
	st.bytes_reserved = 0;
	st.bytes_pinned = 0;
	return btrfs_can_overcommit(&st, num_bytes, BTRFS_RESERVE_NO_FLUSH,
				    &rc->report->reserve.model);
}

/* The metadata space info's type: DATA|METADATA on a mixed filesystem */
static u64 metadata_type(const struct reloc *rc)
{
	return rc->meta_type;
}

/*
 * A FLUSH_ALL metadata reservation of @num_bytes: granted from free
 * metadata or the over-commit room, else by the flusher's chunk
 * allocation (ALLOC_CHUNK_FORCE), else -ENOSPC.  Two gates of a
 * relocation, each released before the next step:
 * - create_reloc_inode(): btrfs_start_transaction(data_reloc_root, 6)
 *   (btrfs_calc_start_trans_size(), 4.5 MiB at 16 KiB nodes), after the
 *   block group turned read-only and before describe_relocation() logs
 *   it: a group whose free space was the metadata's last room fails
 *   there, unlogged (kernel test 055's -musage=50 on a nearly full DUP
 *   filesystem: traced, a FLUSH_ALL ticket of 4718592 bytes failed
 *   with -28 after the forced 6 MiB chunk, nothing logged);
 * - prepare_to_relocate(): the relocation's block reserve refilled to
 *   nodesize * RELOCATION_RESERVED_NODES: a data balance on a filesystem
 *   whose metadata is full fails here if not before.
 */
static int reserve_metadata(struct reloc *rc, u64 num_bytes)
{
	struct btrfs_reserve_state st = rc->report->reserve.state;
	u64 type = metadata_type(rc);

	type_totals(rc, type, &st);
	st.flags = type;
	st.bytes_may_use = rc->may_use_meta;
	st.bytes_reserved = 0;
	st.bytes_pinned = 0;
	if (st.bytes_used + st.bytes_readonly + st.bytes_may_use + num_bytes <= st.total_bytes)
		return 0;
	if (btrfs_can_overcommit(&st, num_bytes, BTRFS_RESERVE_FLUSH_ALL,
				 &rc->report->reserve.model))
		return 0;
	/* flush_space(ALLOC_CHUNK_FORCE): a metadata chunk, if one can be made */
	inexact(rc, "metadata: a relocation reservation granted by the flusher's chunk");
	return force_chunk(rc, type | rc->target[1]);
}

/*
 * A metadata chunk the flusher may still make: a FLUSH_ALL refill of the
 * relocation's block reserve (its size doubled past the bytes reserved so
 * far, reserve_metadata_space()'s -EAGAIN) reaches ALLOC_CHUNK_FORCE
 * unless flushing the delayed refs frees enough (kernel test 072, another
 * aging: a 160 MiB group with 51.6 MiB of tree blocks, under the 80 %
 * rule, and the kernel made the chunk; a 76.75 MiB group with 12.8 MiB
 * did not).  Per device the chunk's stripes at most, DUP's two on one
 * device, within its unallocated bytes, go to the bound.
 */
static void possible_chunk(struct reloc *rc, u64 flags)
{
	u64 raw = chunk_size_of(rc, flags);
	u32 d;

	if (flags & BTRFS_BLOCK_GROUP_DUP)
		raw *= 2;
	for (d = 0; d < rc->st.nr_devs; d++) {
		const struct btrfs_alloc_device *dev = &rc->st.devs[d];
		u64 left = dev->total_bytes > dev->bytes_used ?
			   dev->total_bytes - dev->bytes_used : 0;

		if (dev->writeable)
			rc->res->uncertain_raw[d] += min_t(u64, raw, left);
	}
}

/*
 * Relocating tree blocks COWs each one and the path to it under the
 * relocation's block reserve (reserve_metadata_space(),
 * BTRFS_RESERVE_FLUSH_LIMIT) while the delayed refs reserve grows with
 * every COW (btrfs_calc_delayed_ref_bytes(): nodesize * BTRFS_MAX_LEVEL
 * * 2 a ref head, twice with the free space tree): a group of more than a
 * few hundred blocks leaves the over-commit room behind, and the
 * priority flusher's ALLOC_CHUNK state runs btrfs_chunk_alloc(
 * CHUNK_ALLOC_NO_FORCE): a chunk when should_alloc_chunk() finds
 * used + reserved + pinned + readonly + 2 MiB at or above 80 % of the
 * metadata total.  The group just turned read-only counts its free bytes
 * in readonly, so a large, lightly used group makes a chunk that the moved
 * blocks then mostly do not use (kernel test 072: -musage=30 on a DUP
 * filesystem, 20.7 MiB of a 160 MiB group moved into the other group, an
 * empty 160 MiB chunk left; the model without this step predicted 320 MiB
 * more unallocated).  Whether a reservation flushes depends on
 * bytes_may_use, which the disk does not hold: not exact.
 */
static int flusher_chunk(struct reloc *rc, u32 b, u64 flags)
{
	struct btrfs_reserve_state st = rc->report->reserve.state;
	u64 type = rc->bgs[b].flags & BTRFS_BLOCK_GROUP_TYPE_MASK;
	int ret;

	if (type != BTRFS_BLOCK_GROUP_METADATA || !rc->bgs[b].extents.nr)
		return 0;
	inexact(rc, "metadata relocation: the flusher's chunk depends on bytes_may_use");
	type_totals(rc, type, &st);
	if (st.bytes_used + st.bytes_readonly + RELOC_SZ_2M < mult_perc(st.total_bytes, 80)) {
		possible_chunk(rc, flags);
		return 0;
	}
	ret = force_chunk(rc, flags);
	return ret == -ENOSPC ? 0 : ret;
}

static struct btrfs_alloc_device *alloc_dev(struct reloc *rc, u64 devid);

/* btrfs_remove_chunk(), uncommitted until commit_removed() */
static int remove_chunk(struct reloc *rc, const struct btrfs_chunk_map *map)
{
	const struct btrfs_chunk_map **n;

	n = realloc(rc->pending, (rc->nr_pending + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	rc->pending = n;
	rc->pending[rc->nr_pending++] = map;
	btrfs_alloc_remove_chunk_uncommitted(&rc->st, map);
	return 0;
}

/*
 * A commit: the removed chunks' dev extents become holes
 * (btrfs_alloc_commit_removed_bytes()); the ranges go at the next
 * allocation, many commits' in one pass (flush_removed())
 */
static int commit_removed(struct reloc *rc)
{
	u32 i;

	rc->chunks_at_commit = rc->res->nr_new_chunks;
	for (i = 0; i < rc->nr_pending; i++) {
		const struct btrfs_chunk_map *map = rc->pending[i];

		btrfs_alloc_commit_removed_bytes(&rc->st, map);
		if (array_grow((void **)&rc->committed, rc->nr_committed, &rc->cap_committed,
			       sizeof(*rc->committed)))
			return -ENOMEM;
		rc->committed[rc->nr_committed++] = map;
	}
	rc->nr_pending = 0;
	return 0;
}

/* The committed removals' ranges out, before an allocation reads the devices */
static int flush_removed(struct reloc *rc)
{
	int ret = 0;

	if (rc->nr_committed)
		ret = btrfs_alloc_remove_ranges(&rc->st, rc->committed, rc->nr_committed);
	rc->nr_committed = 0;
	return ret;
}

/*
 * A failed relocation's preallocated extents are freed with the relocation
 * inode.  A block group they leave empty has no size class any more
 * (btrfs_maybe_reset_size_class(), 5870ec7c8fe5, in 6.18.y): the next
 * relocation takes it at LOOP_UNSET_SIZE_CLASS for any class, before a
 * group of another class at LOOP_WRONG_SIZE_CLASS.  Without it kernel test
 * 057's RAID6 remove put 31 MiB into the failed group (318.6 MiB used,
 * the kernel's 289.1 MiB): the new chunk the failure emptied kept the
 * class of its 24 MiB extents.
 */
/*
 * A metadata relocation that failed with -ENOSPC: prepare_to_merge()
 * marks its reloc trees orphan and merge_reloc_roots() drops them, but
 * the frees of their tree block copies reach the block groups' used only
 * when the delayed refs run, after __btrfs_balance() filtered the next
 * chunk: a usage filter sees them (6.18.44, kernel test 077: a 91.66 MiB
 * group failed into mkfs's group, 3 % used, which -musage=2..45 then left;
 * its used was back to 3.7 MiB at the end)
 */
static int keep_failed_copies(struct reloc *rc)
{
	u32 i;

	for (i = 0; i < rc->nr_allocs; i++) {
		if (array_grow((void **)&rc->failed_bgs, rc->nr_failed_bgs, &rc->cap_failed_bgs,
			       sizeof(*rc->failed_bgs)))
			return -ENOMEM;
		rc->failed_bgs[rc->nr_failed_bgs++] = rc->allocs[i].bg;
		rc->bgs[rc->allocs[i].bg].failed_copies += rc->allocs[i].len;
	}
	return 0;
}

/* The next relocation's commits ran those delayed refs */
static void forget_failed_copies(struct reloc *rc)
{
	while (rc->nr_failed_bgs)
		rc->bgs[rc->failed_bgs[--rc->nr_failed_bgs]].failed_copies = 0;
}

static void undo_allocs(struct reloc *rc)
{
	while (rc->nr_allocs) {
		struct reloc_alloc *a = &rc->allocs[--rc->nr_allocs];
		struct reloc_bg *bg = &rc->bgs[a->bg];

		range_add(&bg->free, a->start, a->len);
		extent_delete(&bg->extents, a->start);
		bg->used -= a->len;
		if (rc->size_class_reset && !bg->used && uses_size_class(rc, bg))
			bg->size_class = BTRFS_BG_SZ_NONE;
		bg_changed(rc, a->bg);
	}
}

/*
 * After btrfs_abort_transaction() the disk holds the last commit: the
 * aborted transaction's chunks and removals are not modelled away
 */
static void aborted(struct reloc *rc)
{
	if (rc->nr_pending || rc->res->nr_new_chunks != rc->chunks_at_commit)
		inexact(rc, "a transaction abort: what the aborted transaction changed is not on disk");
	rc->nr_pending = 0;
}

/*
 * A metadata group whose tree blocks find no room once it is read-only:
 * its reservations were granted by over-commit, which counts unallocated
 * bytes no chunk of the profile can use (a device remove's RAID1 or
 * RAID10 pool whose other devices are full), and when the metadata space
 * info holds no free byte besides the read-only group (used + readonly +
 * may_use >= total: the kernel's "is full"), the next commit's delayed
 * refs cannot COW the extent tree: __btrfs_free_extent() fails with
 * -ENOSPC and btrfs_run_delayed_refs() aborts the transaction, the
 * filesystem forced read-only (6.18.44: btrfs device remove of a full
 * 1/2/4 GiB RAID1's devid 2 ended "Read-only file system", kernel test
 * 076; a RAID10's abort came earlier, commit_starved()).  With room left
 * besides the group the relocation fails cleanly with -ENOSPC.
 */
static bool metadata_starved(struct reloc *rc, u32 b)
{
	struct btrfs_reserve_state st = rc->report->reserve.state;
	u64 type = rc->bgs[b].flags & BTRFS_BLOCK_GROUP_TYPE_MASK;

	if (type != BTRFS_BLOCK_GROUP_METADATA || !rc->bgs[b].ro)
		return false;
	type_totals(rc, type, &st);
	return st.bytes_used + st.bytes_readonly + rc->may_use_meta >= st.total_bytes;
}

/*
 * prepare_to_relocate()'s commit of metadata group @b, just turned
 * read-only: the commit runs the delayed refs of the relocations before
 * it (the removed chunks' items, dev extents, free space) and COWs the
 * extent tree, before its own removals' dev extents turn into holes.
 * With metadata full besides the read-only group those COWs need a new
 * chunk from the holes of the last commit; when none can be made,
 * __btrfs_free_extent() fails with -ENOSPC and the commit aborts (6.18.44:
 * a 4 x 1 GiB RAID10 at 59 % data, btrfs device remove 1 relocated four
 * data groups, then metadata 38797312: "Transaction aborted (error -28)"
 * in prepare_to_relocate()'s btrfs_commit_transaction(), metadata
 * readonly 127.7 MiB of 128 MiB, may_use 9.5 MiB; devids 3 and 4 had only
 * the holes of that transaction, kernel test 076).  0, -EROFS or -ENOMEM.
 */
static int commit_starved(struct reloc *rc, u32 b, u64 flags)
{
	int ret;

	if (!rc->nr_pending || !metadata_starved(rc, b))
		return 0;
	ret = force_chunk(rc, flags);
	if (ret != -ENOSPC)
		return ret;
	rc->res->abort_reason = RELOC_ABORT_STARVED;
	return -EROFS;
}

/*
 * Append @start to one of the result's lists: a block group may be tried
 * more than once (a DUP chunk's two dev extents past a shrink's new size,
 * the retry of the failed ones, groups made on the way), so the lists grow.
 */
static int push_start(u64 **list, u32 *nr, u32 *cap, u64 start)
{
	int ret = array_grow((void **)list, *nr, cap, sizeof(**list));

	if (ret)
		return ret;
	(*list)[(*nr)++] = start;
	return 0;
}

/*
 * btrfs_relocate_chunk() of block group @b with the allocation flags
 * @flags: 0, or -ENOSPC with the block group kept, -EROFS (the
 * transaction aborted: metadata_starved()), or -ENOMEM.
 */
static int relocate_one(struct reloc *rc, u32 b, u64 flags)
{
	struct btrfs_reloc_result *res = rc->res;
	u64 start = rc->bgs[b].start, used = rc->bgs[b].used;
	bool was_ro = rc->bgs[b].ro;
	int ret;

	/* force_chunk() grows rc->bgs: the block group is rc->bgs[b], read anew */
	rc->nr_allocs = 0;
	ret = push_start(&res->selected, &res->nr_selected, &res->cap_selected, start);
	if (ret)
		return ret;
	forget_failed_copies(rc);
	/*
	 * btrfs_inc_block_group_ro(do_chunk_alloc): a chunk of the new profile
	 * first.  Not for a system group: btrfs_chunk_alloc() refuses SYSTEM
	 * flags (-ENOSPC, since 5.16: a deadlock with chunk tree changes), and
	 * btrfs_inc_block_group_ro() takes that -ENOSPC as "the new profile may
	 * have room already" (kernel test 071: -mconvert=raid1 makes one RAID1
	 * system chunk, not two).  A system group short of room still gets
	 * check_system_chunk()'s chunk, modelled where its blocks move.
	 */
	if ((flags & ~BTRFS_BLOCK_GROUP_TYPE_MASK) !=
	    (rc->bgs[b].flags & BTRFS_BLOCK_GROUP_PROFILE_MASK) &&
	    !(flags & BTRFS_BLOCK_GROUP_SYSTEM)) {
		ret = force_chunk(rc, flags);
		if (ret == -EROFS)
			goto fail;
		if (ret && ret != -ENOSPC)
			return ret;
	}
	if (!can_set_ro(rc, &rc->bgs[b])) {
		ret = force_chunk(rc, flags);
		if (ret)
			goto fail;
		if (!can_set_ro(rc, &rc->bgs[b])) {
			ret = -ENOSPC;
			goto fail;
		}
	}
	rc->bgs[b].ro = true;
	bg_changed(rc, b);
	/* create_reloc_inode()'s transaction, then describe_relocation()'s log line */
	ret = reserve_metadata(rc, btrfs_calc_start_trans_size(rc->fs_info,
							       &rc->report->reserve.model,
							       RELOC_INODE_ITEMS));
	if (ret)
		goto fail;
	ret = push_start(&res->started, &res->nr_started, &res->cap_started, start);
	if (ret)
		return ret;
	/* prepare_to_relocate() commits: the chunks removed before are free now */
	ret = commit_starved(rc, b, flags);
	if (ret == -EROFS)
		goto fail;
	if (ret)
		return ret;
	ret = commit_removed(rc);
	if (ret)
		return ret;
	ret = reserve_metadata(rc, btrfs_reloc_block_rsv_size(rc->fs_info->nodesize));
	if (ret)
		goto fail;
	if (rc->bgs[b].flags & BTRFS_BLOCK_GROUP_DATA) {
		ret = move_data(rc, b, flags);
	} else {
		ret = flusher_chunk(rc, b, flags);
		if (!ret)
			ret = move_tree_blocks(rc, b, flags);
		if (ret == -ENOSPC && metadata_starved(rc, b)) {
			rc->res->abort_reason = RELOC_ABORT_STARVED;
			ret = -EROFS;
		}
	}
	if (ret)
		goto fail;
	/* btrfs_remove_chunk(), in a transaction the next relocation's read-only step joins */
	rc->bgs[b].removed = true;
	bg_changed(rc, b);
	ret = remove_chunk(rc, rc->bgs[b].map);
	if (ret)
		return ret;
	res->moved_bytes += used;
	return push_start(&res->relocated, &res->nr_relocated, &res->cap_relocated, start);
fail:
	if (ret != -ENOSPC && ret != -EROFS)
		return ret;
	if (!(rc->bgs[b].flags & BTRFS_BLOCK_GROUP_DATA) && keep_failed_copies(rc))
		return -ENOMEM;
	undo_allocs(rc);
	rc->bgs[b].ro = was_ro;
	bg_changed(rc, b);
	if (push_start(&res->failed, &res->nr_failed, &res->cap_failed, start))
		return -ENOMEM;
	if (ret == -EROFS)
		aborted(rc);
	return ret;
}

static void fill_after(struct reloc *rc)
{
	struct btrfs_reloc_result *res = rc->res;
	u32 i;

	/* the operation's end commits (res->bgs stays NULL on -ENOMEM) */
	if (commit_removed(rc))
		return;
	for (i = 0; i < rc->st.nr_devs; i++)
		res->unallocated_after[i] = rc->st.devs[i].total_bytes > rc->st.devs[i].bytes_used ?
			rc->st.devs[i].total_bytes - rc->st.devs[i].bytes_used : 0;
	res->bgs = calloc(rc->nr_bgs ? rc->nr_bgs : 1, sizeof(*res->bgs));
	if (!res->bgs)
		return;
	for (i = 0; i < rc->nr_bgs; i++) {
		const struct reloc_bg *bg = &rc->bgs[i];
		struct btrfs_reloc_bg_after *a;

		if (bg->removed)
			continue;
		a = &res->bgs[res->nr_bgs++];
		a->start = bg->start;
		a->length = bg->length;
		a->flags = bg->flags;
		a->used = bg->used;
		a->bytes_super = bg->bytes_super;
		a->ro = bg->ro;
		a->is_new = bg->is_new;
	}
}

void btrfs_free_reloc_result(struct btrfs_reloc_result *res)
{
	u32 i;

	for (i = 0; i < res->nr_new_chunks; i++)
		free(res->new_chunks[i]);
	free(res->new_chunks);
	free(res->selected);
	free(res->started);
	free(res->relocated);
	free(res->failed);
	free(res->bgs);
	free(res->unallocated_after);
	free(res->uncertain_raw);
	free(res->devids);
	memset(res, 0, sizeof(*res));
}

/*
 * should_balance_chunk() (volumes.c, 6.18) for the filters modelled: the
 * chunk type picks the arguments (DATA, also mixed; SYSTEM takes the
 * metadata ones, as btrfs-progs copies -m to -s), then
 * chunk_usage_filter() / chunk_usage_range_filter() with
 * mult_perc(length, N), then
 * chunk_soft_convert_filter(), then limit last.
 */
static bool usage_selects(const struct reloc_bg *bg, const struct forecast_balance_args *a)
{
	u64 used = bg->used + bg->failed_copies, lo, hi;

	if (a->flags & FORECAST_BAL_USAGE) {
		/* usage_min aliases the low half of usage in the kernel's union */
		if ((u32)a->usage == 0)
			hi = 1;
		else if (a->usage > 100)
			hi = bg->length;
		else
			hi = mult_perc(bg->length, a->usage);
		if (used >= hi)
			return false;
	}
	if (a->flags & FORECAST_BAL_USAGE_RANGE) {
		lo = a->usage_min ? mult_perc(bg->length, a->usage_min) : 0;
		if (a->usage_max == 0)
			hi = 1;
		else if (a->usage_max > 100)
			hi = bg->length;
		else
			hi = mult_perc(bg->length, a->usage_max);
		if (used < lo || used >= hi)
			return false;
	}
	return true;
}

/*
 * The arguments a chunk is filtered with, @left being the data, metadata
 * and system copies: btrfs-progs sends -m's filters as -s too, and the
 * kernel keeps a limit per type (bctl->sys.limit apart from
 * bctl->meta.limit), so -mlimit=1 relocates a metadata and a system chunk
 * (kernel test 072: 2 groups, the model with one counter 1, 368 MiB off)
 */
static struct forecast_balance_args *balance_args(const struct forecast_options *opts,
						  u64 flags, struct forecast_balance_args *left)
{
	if (flags & BTRFS_BLOCK_GROUP_DATA) {
		/* a mixed chunk is balanced by -d or -m, with the data arguments */
		if (!opts->bal_data.set && !((flags & BTRFS_BLOCK_GROUP_METADATA) &&
					     opts->bal_meta.set))
			return NULL;
		return &left[0];
	}
	if (!opts->bal_meta.set)
		return NULL;
	return flags & BTRFS_BLOCK_GROUP_SYSTEM ? &left[2] : &left[1];
}

/*
 * A metadata block group that took tree blocks from an earlier relocation
 * meets a usage filter with a `used` the kernel's may not have: the COW
 * copies of one transaction are freed when a later one copies the same
 * blocks again (kernel test 072: an 8 MiB group the cluster filled first
 * was back under 90 % when reached and relocated; the model kept it), and
 * the path copies free blocks of groups the model leaves alone.  Its raw
 * bytes per device go to the bound (may_differ).
 */
static void note_uncertain(struct reloc *rc, const struct reloc_bg *bg,
			   const struct forecast_balance_args *a)
{
	u16 s;
	u32 d;

	if (!bg->took_copies || (bg->flags & BTRFS_BLOCK_GROUP_DATA) ||
	    !(a->flags & (FORECAST_BAL_USAGE | FORECAST_BAL_USAGE_RANGE)))
		return;
	for (s = 0; s < bg->map->num_stripes; s++)
		for (d = 0; d < rc->res->nr_devs; d++)
			if (rc->res->devids[d] == bg->map->stripes[s].devid)
				rc->res->uncertain_raw[d] += bg->map->stripe_size;
}

static bool should_balance(const struct reloc_bg *bg, struct forecast_balance_args *a)
{
	if (!usage_selects(bg, a))
		return false;
	if ((a->flags & FORECAST_BAL_CONVERT) && (a->flags & FORECAST_BAL_SOFT) &&
	    btrfs_bg_flags_to_raid_index(bg->flags) == btrfs_bg_flags_to_raid_index(a->target))
		return false;
	if (a->flags & FORECAST_BAL_LIMIT) {
		if (a->limit == 0)
			return false;
		a->limit--;
	}
	return true;
}

static bool has_redundancy(u64 profile)
{
	const struct btrfs_raid_attr *attr =
		&btrfs_raid_array[btrfs_bg_flags_to_raid_index(profile)];

	return attr->ncopies >= 2 || attr->tolerated_failures >= 1;
}

/* The profiles in use for @type, from the block groups */
static u64 avail_bits(const struct reloc *rc, u64 type)
{
	u64 bits = 0;
	u32 i;

	for (i = 0; i < rc->nr_orig; i++)
		if (rc->bgs[i].flags & type)
			bits |= rc->bgs[i].flags & BTRFS_BLOCK_GROUP_PROFILE_MASK;
	return bits;
}

static bool profile_has_redundancy(u64 bits)
{
	u32 i;

	for (i = 0; i < BTRFS_NR_RAID_TYPES; i++)
		if ((bits & btrfs_raid_array[i].bg_flag) && has_redundancy(btrfs_raid_array[i].bg_flag))
			return true;
	return false;
}

static bool same_args(const struct forecast_balance_args *a, const struct forecast_balance_args *b)
{
	return a->set == b->set && a->flags == b->flags && a->usage == b->usage &&
	       a->usage_min == b->usage_min && a->usage_max == b->usage_max &&
	       a->limit == b->limit && a->target == b->target;
}

/* btrfs_balance()'s checks before any chunk moves */
static const char *balance_refused(const struct reloc *rc, const struct forecast_options *opts)
{
	const struct forecast_balance_args *args[2] = { &opts->bal_data, &opts->bal_meta };
	u64 types[2] = { BTRFS_BLOCK_GROUP_DATA, BTRFS_BLOCK_GROUP_METADATA };
	int i;

	/* mixed block groups: -d and -m both, with the same filters */
	if (btrfs_fs_incompat(rc->fs_info, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS) &&
	    (opts->bal_data.set || opts->bal_meta.set) &&
	    !same_args(&opts->bal_data, &opts->bal_meta))
		return "refused: mixed block groups need the same -d and -m filters (-EINVAL)";

	for (i = 0; i < 2; i++) {
		const struct forecast_balance_args *a = args[i];
		const struct btrfs_raid_attr *attr;

		if (!a->set || !(a->flags & FORECAST_BAL_CONVERT))
			continue;
		attr = &btrfs_raid_array[btrfs_bg_flags_to_raid_index(a->target)];
		/* validate_convert_profile(): devs_min among the writeable devices */
		if (attr->devs_min > rc->st.rw_devices)
			return "refused: the convert target needs more devices (-EINVAL)";
		/* metadata (and system) redundancy reduced needs --force */
		if (types[i] == BTRFS_BLOCK_GROUP_METADATA && !opts->bal_force &&
		    (profile_has_redundancy(avail_bits(rc, BTRFS_BLOCK_GROUP_METADATA)) ||
		     profile_has_redundancy(avail_bits(rc, BTRFS_BLOCK_GROUP_SYSTEM))) &&
		    !has_redundancy(a->target))
			return "refused: reduces metadata redundancy, use -f (-EINVAL)";
	}
	return NULL;
}

static u64 alloc_flags(const struct reloc *rc, u64 bg_flags, const struct forecast_balance_args *a)
{
	u64 type = bg_flags & BTRFS_BLOCK_GROUP_TYPE_MASK;

	/* get_restripe_target(): the convert target while the balance runs */
	if (a && (a->flags & FORECAST_BAL_CONVERT))
		return type | (a->target & BTRFS_BLOCK_GROUP_PROFILE_MASK);
	return type | (rc->target[type_index(bg_flags)] & BTRFS_BLOCK_GROUP_PROFILE_MASK);
}

/* The block at @start copied once in a commit: added to @set if not there */
static int add_copy(struct btrfs_cow_set *set, u64 start)
{
	u32 i;

	for (i = 0; i < set->nr && set->start[i] != start; i++)
		;
	if (i < set->nr)
		return 0;
	if (set->nr == set->cap) {
		u32 cap = set->cap ? set->cap * 2 : 16;
		u64 *start_new = realloc(set->start, cap * sizeof(*set->start));

		if (!start_new)
			return -ENOMEM;
		set->start = start_new;
		set->cap = cap;
	}
	set->start[set->nr++] = start;
	return 0;
}

int btrfs_cow_path(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root,
		   u64 objectid, u8 type, u64 offset, struct btrfs_cow_set *set)
{
	struct btrfs_key key = { objectid, type, offset };
	struct btrfs_path path = { 0 };
	int level, ret;

	if (!root->found || !root->bytenr)
		return 0;
	ret = btrfs_search_slot(fs_info, root, &key, &path, BTRFS_IO_OTHER);
	for (level = 0; ret >= 0 && level < BTRFS_MAX_LEVEL && path.nodes[level]; level++)
		ret = add_copy(set, path.nodes[level]->start);
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

int btrfs_cow_root_node(const struct btrfs_root_ref *root, struct btrfs_cow_set *set)
{
	if (!root->found || !root->bytenr)
		return 0;
	return add_copy(set, root->bytenr);
}

/*
 * A tree block allocated or freed at @bytenr in a commit: its extent item
 * and its block group's item change (the group's used), and the free-space
 * tree's ranges of that group: the paths to them are copied too.
 */
static int cow_changed_items(struct btrfs_fs_info *fs_info, u64 bytenr,
			     struct btrfs_cow_set *set)
{
	u32 i = array_find_range(fs_info->block_groups, fs_info->nr_block_groups,
				 sizeof(*fs_info->block_groups),
				 offsetof(struct btrfs_block_group, start),
				 offsetof(struct btrfs_block_group, length), bytenr);
	const struct btrfs_block_group *bg;
	int ret;

	ret = btrfs_cow_path(fs_info, &fs_info->extent_root, bytenr, BTRFS_METADATA_ITEM_KEY, 0,
			     set);
	if (ret || i >= fs_info->nr_block_groups)
		return ret;
	bg = &fs_info->block_groups[i];
	ret = btrfs_cow_path(fs_info, btrfs_block_group_root(fs_info), bg->start,
			     BTRFS_BLOCK_GROUP_ITEM_KEY, bg->length, set);
	if (ret)
		return ret;
	return btrfs_cow_path(fs_info, &fs_info->free_space_root, bg->start,
			      BTRFS_FREE_SPACE_INFO_KEY, bg->length, set);
}

int btrfs_cow_settle(struct btrfs_fs_info *fs_info, struct btrfs_cow_set *set,
		     int (*place)(void *ctx, u64 *found), void *ctx)
{
	u32 i;
	int ret = 0;

	for (i = 0; i < set->nr && !ret; i++) {
		u64 found = 0;

		ret = place(ctx, &found);
		if (ret >= 0)
			ret = cow_changed_items(fs_info, set->start[i], set);
		if (ret >= 0 && found)
			ret = cow_changed_items(fs_info, found, set);
		ret = ret < 0 ? ret : 0;
	}
	return ret;
}

/* Where find_free_extent() puts a tree block's copy */
static int place_copy(void *ctx, u64 *found)
{
	struct reloc *rc = ctx;

	return find_free_extent(rc, metadata_type(rc) | rc->target[1],
				rc->fs_info->nodesize, 0, found);
}

/*
 * btrfs_balance() -> insert_balance_item(), committed before any chunk is
 * walked: the balance item goes into the root tree; the commit writes the
 * root items of the trees it changed and, being the first commit since the
 * mount, each device's dev stats item (btrfs_device_init_dev_stats() set
 * them all at mount, marking them dirty: btrfs_run_dev_stats());
 * the extent tree gets the items of the new blocks, the free-space tree
 * their ranges: their root nodes are copied, not a path to a leaf (which
 * leaves is not known, and the leftmost one, of the first group, usually
 * the system group, is left alone: an aged --mixed filesystem, 6.18.44,
 * traced).  Each of those blocks is copied
 * and the old blocks are freed by that commit, so a metadata group that
 * held only such blocks (a one-leaf dev tree, say) is empty when the walk
 * reaches it: kernel test 071 meta-empty, -musage=0.  The copies go where
 * find_free_extent() puts tree blocks, every group being cached.
 */
static int balance_item_commit(struct reloc *rc)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(fs_info);
	static const u64 changed[] = {
		BTRFS_EXTENT_TREE_OBJECTID, BTRFS_DEV_TREE_OBJECTID,
		BTRFS_FREE_SPACE_TREE_OBJECTID, BTRFS_BLOCK_GROUP_TREE_OBJECTID,
	};
	struct btrfs_cow_set set = { 0 };
	u32 i, nodesize = fs_info->nodesize;
	int ret;

	ret = btrfs_cow_path(fs_info, &tree_root, BTRFS_BALANCE_OBJECTID,
			     BTRFS_TEMPORARY_ITEM_KEY, 0, &set);
	for (i = 0; i < sizeof(changed) / sizeof(changed[0]) && !ret; i++)
		ret = btrfs_cow_path(fs_info, &tree_root, changed[i], BTRFS_ROOT_ITEM_KEY, 0, &set);
	for (i = 0; i < rc->st.nr_devs && !ret; i++)
		ret = btrfs_cow_path(fs_info, &fs_info->dev_root, BTRFS_DEV_STATS_OBJECTID,
				     BTRFS_PERSISTENT_ITEM_KEY, rc->st.devs[i].devid, &set);
	if (!ret)
		ret = btrfs_cow_root_node(&fs_info->extent_root, &set);
	if (!ret)
		ret = btrfs_cow_root_node(&fs_info->free_space_root, &set);
	/* each copy changes items, whose leaves are copied too, until none is new */
	if (!ret)
		ret = btrfs_cow_settle(fs_info, &set, place_copy, rc);
	for (i = 0; i < set.nr && !ret; i++) {
		struct reloc_bg *bg = find_orig_bg(rc, set.start[i]);

		if (!bg || bg->used < nodesize)
			continue;
		ret = range_add(&bg->free, set.start[i], nodesize);
		extent_delete(&bg->extents, set.start[i]);
		bg->used -= nodesize;
		bg_changed(rc, bg - rc->bgs);
	}
	rc->nr_allocs = 0;
	free(set.start);
	return ret;
}

int btrfs_reloc_balance(const struct space_report *report,
			const struct forecast_options *opts,
			struct btrfs_reloc_result *res, const char **refused)
{
	struct forecast_balance_args left[3] = { opts->bal_data, opts->bal_meta, opts->bal_meta };
	struct reloc rc;
	u32 i;
	int ret;

	*refused = NULL;
	ret = reloc_init(&rc, report, opts, res);
	if (ret)
		goto out;
	*refused = balance_refused(&rc, opts);
	if (*refused)
		goto done;
	/* btrfs-progs copies -m to -s: get_restripe_target() for the chunk tree */
	if (opts->bal_meta.set && (opts->bal_meta.flags & FORECAST_BAL_CONVERT))
		rc.sys_alloc = BTRFS_BLOCK_GROUP_SYSTEM |
			       (opts->bal_meta.target & BTRFS_BLOCK_GROUP_PROFILE_MASK);
	ret = balance_item_commit(&rc);
	if (ret)
		goto out;
	/* __btrfs_balance(): the chunk tree from the highest logical start down */
	for (i = rc.nr_orig; i-- > 0;) {
		struct reloc_bg *bg = &rc.bgs[i];
		struct forecast_balance_args *a = balance_args(opts, bg->flags, left);

		if (a)
			note_uncertain(&rc, bg, a);
		if (!a || !should_balance(bg, a))
			continue;
		if (++rc.steps > RELOC_MAX_STEPS)
			break;
		ret = relocate_one(&rc, i, alloc_flags(&rc, bg->flags, a));
		if (ret == -ENOSPC) {
			res->ret = -ENOSPC;
		} else if (ret == -EROFS) {
			res->ret = -EROFS;
			break;
		} else if (ret) {
			goto out;
		}
	}
done:
	ret = 0;
	fill_after(&rc);
	if (!res->bgs)
		ret = -ENOMEM;
out:
	reloc_release(&rc);
	return ret;
}

/* btrfs_check_raid_min_devices(): every profile in use keeps its devs_min */
static bool raid_min_devices_ok(const struct reloc *rc, u32 num_devices)
{
	u64 bits = avail_bits(rc, BTRFS_BLOCK_GROUP_TYPE_MASK);
	u32 i;

	for (i = 0; i < BTRFS_NR_RAID_TYPES; i++) {
		u64 flag = btrfs_raid_array[i].bg_flag;

		if (i == BTRFS_RAID_SINGLE)
			continue;
		if ((bits & flag) && btrfs_raid_array[i].devs_min > num_devices)
			return false;
	}
	return true;
}

/* The block group with the highest dev extent of @devid ending past @size */
static int next_beyond(const struct reloc *rc, u64 devid, u64 size, u64 below, u32 *b,
		       u64 *physical)
{
	int found = 0;
	u32 i;
	u16 s;

	for (i = 0; i < rc->nr_bgs; i++) {
		const struct reloc_bg *bg = &rc->bgs[i];

		if (bg->removed)
			continue;
		for (s = 0; s < bg->map->num_stripes; s++) {
			u64 p = bg->map->stripes[s].physical;

			if (bg->map->stripes[s].devid != devid || p >= below ||
			    p + bg->map->stripe_size <= size)
				continue;
			if (!found || p > *physical) {
				*physical = p;
				*b = i;
				found = 1;
			}
		}
	}
	return found;
}

static struct btrfs_alloc_device *alloc_dev(struct reloc *rc, u64 devid)
{
	u32 i;

	for (i = 0; i < rc->st.nr_devs; i++)
		if (rc->st.devs[i].devid == devid)
			return &rc->st.devs[i];
	return NULL;
}

/*
 * btrfs_shrink_device(): the device's size set to @new_size (in memory,
 * so no new chunk goes past it), then its dev extents from the highest
 * offset down, each one ending past the new size relocated with its
 * chunk; -ENOSPC ones are counted and retried once after the walk.
 */
static int shrink_walk(struct reloc *rc, u64 devid, u64 new_size)
{
	bool retried = false;
	u32 failed;
	int ret;

again:
	failed = 0;
	{
		u64 below = (u64)-1, physical = 0;
		u32 b;

		while (next_beyond(rc, devid, new_size, below, &b, &physical)) {
			below = physical;
			if (++rc->steps > RELOC_MAX_STEPS)
				return 0;
			ret = relocate_one(rc, b, alloc_flags(rc, rc->bgs[b].flags, NULL));
			if (ret == -EROFS) {
				rc->res->ret = -EROFS;
				return 0;
			}
			if (ret == -ENOSPC)
				failed++;
			else if (ret)
				return ret;
		}
	}
	if (failed && !retried) {
		retried = true;
		goto again;
	}
	if (failed)
		rc->res->ret = -ENOSPC;
	return 0;
}

int btrfs_reloc_shrink(const struct space_report *report, const struct forecast_options *opts,
		       u64 devid, u64 new_size, bool remove,
		       struct btrfs_reloc_result *res, const char **refused)
{
	struct btrfs_alloc_device *dev;
	struct reloc rc;
	u64 old_size;
	int ret;

	*refused = NULL;
	ret = reloc_init(&rc, report, opts, res);
	if (ret)
		goto out;
	dev = alloc_dev(&rc, devid);
	if (!dev) {
		*refused = "refused: no such device in the filesystem (-ENOENT)";
		goto done;
	}
	if (remove) {
		if (!raid_min_devices_ok(&rc, rc.st.rw_devices - 1)) {
			*refused = "refused: a profile in use needs more devices than would be left";
			goto done;
		}
		if (rc.st.rw_devices <= 1) {
			*refused = "refused: the last writeable device (-EINVAL)";
			goto done;
		}
		/* off alloc_list before the shrink */
		dev->writeable = false;
		rc.st.rw_devices--;
		new_size = 0;
	} else if (new_size > dev->total_bytes) {
		*refused = "refused: not a shrink (grow is another path)";
		goto done;
	}
	old_size = dev->total_bytes;
	rc.st.total_rw_bytes -= min_t(u64, rc.st.total_rw_bytes, old_size - new_size);
	/*
	 * free_chunk_space loses old_size - max(new_size, bytes_used) of the
	 * device now, and btrfs_remove_chunk() gives back each dev extent
	 * freed on it, the removed device's too (its bytes_used > 0): the
	 * over-commit of the walk's read-only steps counts them
	 */
	rc.shrink_devid = devid;
	rc.shrink_floor = max_t(u64, new_size, dev->bytes_used);
	dev->total_bytes = new_size;
	ret = shrink_walk(&rc, devid, new_size);
	if (ret)
		goto out;
	if (res->ret) {
		/*
		 * btrfs_shrink_device() gives a failed shrink its old size back,
		 * and btrfs_rm_device()'s error_undo puts the device back on the
		 * alloc list: what moved stays moved, the device keeps its space
		 */
		dev->total_bytes = old_size;
		rc.st.total_rw_bytes += old_size - new_size;
		if (remove) {
			dev->writeable = true;
			rc.st.rw_devices++;
		}
	}
done:
	fill_after(&rc);
	if (!res->bgs)
		ret = -ENOMEM;
out:
	reloc_release(&rc);
	return ret;
}

/*
 * btrfs_reclaim_bgs_work() (block-group.c, 6.18) on the kernel's reclaim
 * list, @starts in the list's order (reclaim_bgs_cmp(): by used): each
 * block group checked again when the walk reaches it, with used as the
 * relocations before it left it.  Skipped when read-only, empty (the
 * unused path takes it) or no longer below its space info's threshold
 * (should_reclaim_block_group(bg, bg->length), reclaim_thresh_now()); else
 * relocated within its profile by btrfs_relocate_chunk().  The pinned and reserved bytes it
 * also checks are 0 on a committed filesystem.  An -ENOSPC one is counted
 * and the walk goes on (periodic reclaim does not retry it).  @gone: the
 * empty block groups btrfs_delete_unused_bgs() removes first, in the same
 * cleaner run; their dev extents free at the first relocation's commit.
 */
/*
 * should_reclaim_block_group()'s threshold in bytes when the walk reaches
 * @bg: btrfs_calc_reclaim_threshold() on the space info as the relocations
 * before it left it.  The fixed bg_reclaim_threshold does not move; the
 * dynamic one falls as each relocation gives a chunk back to unallocated
 * (btrfs_remove_chunk() adds its stripes to free_chunk_space at once) and
 * is 0 once the space info's unused bytes are below a chunk (a sweep
 * planned to wait for arm_bytes freed sees them freed).  The reserved
 * and pinned bytes are taken as 0, as the checks above take them.
 */
static u64 reclaim_thresh_now(const struct reloc *rc, const struct reloc_bg *bg,
			      const struct btrfs_reclaim_plan *plans)
{
	const struct btrfs_reclaim_plan *p = &plans[btrfs_bg_space_index(bg->flags)];
	struct btrfs_space_info sinfo = { 0 };
	struct btrfs_reserve_state st;
	u64 target, want, unused;
	u32 pct;

	if (!p->present)
		return 0;
	if (!p->knobs.dynamic_reclaim)
		return mult_perc(bg->length, p->thresh_pct);
	type_totals(rc, bg->flags, &st);
	sinfo.total_bytes = st.total_bytes;
	sinfo.bytes_used = st.bytes_used;
	sinfo.bytes_readonly = st.bytes_readonly;
	/* a sweep waiting to arm runs after arm_bytes freed: as the plan takes them */
	sinfo.bytes_used -= p->arm_bytes < sinfo.bytes_used ? p->arm_bytes : sinfo.bytes_used;
	pct = btrfs_calc_reclaim_threshold(&sinfo, &p->knobs, st.free_chunk_space,
					   p->chunk_size, &target, &want, &unused);
	return mult_perc(bg->length, pct);
}

int btrfs_reloc_reclaim(const struct space_report *report, const struct forecast_options *opts,
			const u64 *gone, u32 nr_gone, const u64 *starts,
			const struct btrfs_reclaim_plan *plans, u32 nr,
			struct btrfs_reloc_result *res)
{
	struct reloc rc;
	u32 i, b;
	int ret;

	ret = reloc_init(&rc, report, opts, res);
	if (ret)
		goto out;
	for (i = 0; i < nr_gone; i++) {
		struct reloc_bg *bg = lookup_bg(&rc, gone[i], &b);

		if (!bg || bg->start != gone[i] || bg->used)
			continue;
		bg->removed = true;
		bg_changed(&rc, b);
		ret = remove_chunk(&rc, bg->map);
		if (ret)
			goto out;
	}
	for (i = 0; i < nr; i++) {
		struct reloc_bg *bg = lookup_bg(&rc, starts[i], &b);

		if (!bg || bg->start != starts[i] || bg->ro || bg->used == 0 ||
		    bg->used >= reclaim_thresh_now(&rc, bg, plans))
			continue;
		if (++rc.steps > RELOC_MAX_STEPS)
			break;
		ret = relocate_one(&rc, b, alloc_flags(&rc, bg->flags, NULL));
		if (ret == -ENOSPC)
			res->ret = -ENOSPC;
		else if (ret)
			goto out;
	}
	ret = 0;
	fill_after(&rc);
	if (!res->bgs)
		ret = -ENOMEM;
out:
	reloc_release(&rc);
	return ret;
}
