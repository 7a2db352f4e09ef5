// SPDX-License-Identifier: GPL-2.0
/*
 * The block groups as "btrfs-space map" shows them: sums by type and fill,
 * and the cells of the picture.  Own code, no kernel twin; the block
 * groups are those btrfs_read_block_groups() loaded (block-group.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/ctree.h"
#include "kernel-shared/map-layout.h"
#include "kernel-shared/volumes.h"
#include "common/array.h"

enum map_type map_type_of(u64 flags)
{
	switch (flags & BTRFS_BLOCK_GROUP_TYPE_MASK) {
	case BTRFS_BLOCK_GROUP_DATA: return MAP_DATA;
	case BTRFS_BLOCK_GROUP_METADATA: return MAP_METADATA;
	case BTRFS_BLOCK_GROUP_SYSTEM: return MAP_SYSTEM;
	case BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA: return MAP_MIXED;
	default: return MAP_OTHER;
	}
}

const char *map_type_name(enum map_type type)
{
	static const u64 flags[MAP_NR_TYPES] = {
		[MAP_DATA] = BTRFS_BLOCK_GROUP_DATA,
		[MAP_METADATA] = BTRFS_BLOCK_GROUP_METADATA,
		[MAP_SYSTEM] = BTRFS_BLOCK_GROUP_SYSTEM,
		[MAP_MIXED] = BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA,
	};

	return btrfs_bg_type_name(flags[type]);
}

double map_fill_ratio(u64 used, u64 length)
{
	double r = length ? (double)used / length : 0;

	return r > 1 ? 1 : r;
}

static void tally_add(struct map_tally *t, const struct btrfs_block_group *bg)
{
	t->count++;
	t->length += bg->length;
	t->used += bg->used;
	t->read_only += bg->ro;
}

/* Raw bytes of a block group's stripes, as its chunk item gives them */
static u64 bg_raw(const struct btrfs_block_group *bg)
{
	return bg->map ? bg->map->stripe_size * bg->map->num_stripes : 0;
}

static void summarize_raw(const struct btrfs_fs_info *fs_info, struct map_raw *raw)
{
	u32 i;

	for (i = 0; i < fs_info->nr_block_groups; i++)
		raw->stripes += bg_raw(&fs_info->block_groups[i]);
	for (i = 0; i < fs_info->nr_devices; i++) {
		const struct btrfs_device *dev = &fs_info->devices[i];

		raw->nr_devices++;
		raw->size += dev->total_bytes;
		raw->allocated += dev->bytes_used;
		if (dev->total_bytes > dev->bytes_used)
			raw->unallocated += dev->total_bytes - dev->bytes_used;
	}
}

void map_summarize(const struct btrfs_fs_info *fs_info, struct map_summary *s)
{
	u32 i;

	memset(s, 0, sizeof(*s));
	summarize_raw(fs_info, &s->raw);
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];
		int bucket = map_fill_ratio(bg->used, bg->length) * MAP_FILL_BUCKETS;

		if (bucket >= MAP_FILL_BUCKETS)
			bucket = MAP_FILL_BUCKETS - 1;
		tally_add(&s->all, bg);
		tally_add(&s->types[map_type_of(bg->flags)], bg);
		tally_add(&s->fill[bucket], bg);
	}
}

/* Cells merge only block groups that look alike, unless that is not enough */
static bool same_kind(const struct btrfs_block_group *a,
		      const struct btrfs_block_group *b)
{
	return a->flags == b->flags && a->ro == b->ro;
}

static u32 merge_cells(const struct btrfs_fs_info *fs_info, struct map_cell *cells,
		       u64 per_cell, bool by_kind)
{
	const struct btrfs_block_group *bgs = fs_info->block_groups;
	struct map_cell *cell = NULL;
	u32 i, nr = 0;

	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &bgs[i];

		if (!cell || cell->count >= per_cell ||
		    (by_kind && !same_kind(&bgs[cell->first], bg))) {
			cell = &cells[nr++];
			memset(cell, 0, sizeof(*cell));
			cell->first = i;
			cell->start = bg->start;
		}
		cell->mixed |= !same_kind(&bgs[cell->first], bg);
		cell->count++;
		cell->end = bg->start + bg->length;
		cell->length += bg->length;
		cell->used += bg->used;
		cell->nr_ro += bg->ro;
		cell->type_length[map_type_of(bg->flags)] += bg->length;
	}
	return nr;
}

static u32 largest_cell(const struct map_cells *mc)
{
	u32 i, most = 0;

	for (i = 0; i < mc->nr; i++)
		if (mc->cells[i].count > most)
			most = mc->cells[i].count;
	return most;
}

/*
 * At most @max cells.  Runs of alike neighbours are merged first, in ever
 * longer runs; a filesystem whose types alternate too often for that gets
 * fixed-size runs of any kind, each coloured as its largest type.
 */
int map_build_cells(const struct btrfs_fs_info *fs_info, u32 max, struct map_cells *mc)
{
	u32 n = fs_info->nr_block_groups;
	u64 per_cell;

	memset(mc, 0, sizeof(*mc));
	mc->cells = calloc(n ? n : 1, sizeof(*mc->cells));
	if (!mc->cells)
		return -ENOMEM;
	for (per_cell = 1; ; per_cell *= 2) {
		mc->nr = merge_cells(fs_info, mc->cells, per_cell, true);
		if (mc->nr <= max || per_cell >= n)
			break;
	}
	if (mc->nr > max) {
		mc->nr = merge_cells(fs_info, mc->cells, (n + max - 1) / max, false);
		mc->mixed_kinds = true;
	}
	mc->per_cell = largest_cell(mc);
	return 0;
}

void map_free_cells(struct map_cells *mc)
{
	free(mc->cells);
	mc->cells = NULL;
	mc->nr = 0;
}

/* The type of the most bytes: MAP_OTHER unless one has more, else the first of equals */
static enum map_type largest_type(const u64 type_length[MAP_NR_TYPES])
{
	enum map_type best = MAP_OTHER;
	int t;

	for (t = 0; t < MAP_NR_TYPES; t++)
		if (type_length[t] > type_length[best])
			best = t;
	return best;
}

enum map_type map_cell_type(const struct map_cell *cell)
{
	return largest_type(cell->type_length);
}

/* The median cell length, or 0 */
static u64 median_length(const struct map_cells *mc)
{
	u64 *len, median;
	u32 i;

	if (!mc->nr)
		return 0;
	len = malloc(mc->nr * sizeof(*len));
	if (!len)
		return mc->cells[0].length;
	for (i = 0; i < mc->nr; i++)
		len[i] = mc->cells[i].length;
	qsort(len, mc->nr, sizeof(*len), array_cmp_u64);
	median = len[mc->nr / 2];
	free(len);
	return median;
}

/*
 * A square is a power of two, a few of which make a typical cell, so that
 * the usual block group is a short bar, and its neighbours of other sizes
 * are visibly shorter or longer.
 */
u64 map_typical_length(const struct map_cells *mc)
{
	return median_length(mc);
}

u64 map_square_size(const struct map_cells *mc, u64 total)
{
	u64 typical = median_length(mc);
	u64 unit = 1;

	while (unit <= typical / MAP_TYPICAL_UNITS / 2)
		unit *= 2;
	while (total / unit > MAP_MAX_UNITS)
		unit *= 2;
	return unit;
}

/*
 * Area is length, except that a cell smaller than a part of a square (an
 * 8MiB system chunk among 1GiB data chunks) is drawn that large: a hair
 * of a pixel could neither be seen nor hovered.  The SVG says so.
 */
void map_widen_cells(struct map_cells *mc, u64 unit)
{
	u64 min = unit / MAP_MIN_CELL_PART;
	u32 i;

	mc->nr_widened = 0;
	mc->drawn_total = 0;
	for (i = 0; i < mc->nr; i++) {
		struct map_cell *cell = &mc->cells[i];

		cell->drawn = cell->length;
		if (cell->drawn < min) {
			cell->drawn = min;
			mc->nr_widened++;
		}
		mc->drawn_total += cell->drawn;
	}
}

/* One stripe of one block group on a device */
struct dev_stripe {
	u64 physical;
	u64 length;
	u32 bg;
};

static int cmp_stripe(const void *a, const void *b)
{
	const struct dev_stripe *x = a, *y = b;

	if (x->physical != y->physical)
		return x->physical < y->physical ? -1 : 1;
	return x->bg < y->bg ? -1 : x->bg > y->bg;
}

/* The stripes on @devid in physical order, in *@out; how many, or -ENOMEM */
static int64_t gather_stripes(const struct btrfs_fs_info *fs_info, u64 devid,
			      struct dev_stripe **out)
{
	struct dev_stripe *st;
	u64 n = 0, cap = 0;
	u32 i, s;

	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_chunk_map *map = fs_info->block_groups[i].map;

		for (s = 0; map && s < map->num_stripes; s++)
			cap += map->stripes[s].devid == devid;
	}
	st = calloc(cap ? cap : 1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_chunk_map *map = fs_info->block_groups[i].map;

		for (s = 0; map && s < map->num_stripes; s++) {
			if (map->stripes[s].devid != devid)
				continue;
			st[n].physical = map->stripes[s].physical;
			st[n].length = map->stripe_size;
			st[n].bg = i;
			n++;
		}
	}
	qsort(st, n, sizeof(*st), cmp_stripe);
	*out = st;
	return n;
}

static struct map_dev_segment *new_segment(struct map_device *d, u64 physical)
{
	struct map_dev_segment *seg = &d->segs[d->nr_segs++];

	memset(seg, 0, sizeof(*seg));
	seg->physical = physical;
	return seg;
}

static void add_gap(struct map_device *d, u64 from, u64 to)
{
	struct map_dev_segment *seg;

	if (to <= from)
		return;
	seg = new_segment(d, from);
	seg->unallocated = true;
	seg->length = to - from;
	d->free += seg->length;
}

static bool stripe_joins(const struct btrfs_fs_info *fs_info,
			 const struct map_dev_segment *seg, const struct dev_stripe *st,
			 u64 merge_below, bool any_kind)
{
	const struct btrfs_block_group *a, *b;
	u64 end;

	if (!seg || seg->unallocated || seg->length >= merge_below)
		return false;
	end = seg->physical + seg->length;
	/* overlapping stripes (a corrupt image) start their own segment */
	if (st->physical < end || (st->physical > end && !any_kind))
		return false;
	if (any_kind)
		return true;
	a = &fs_info->block_groups[seg->first];
	b = &fs_info->block_groups[st->bg];
	return a->flags == b->flags && a->ro == b->ro;
}

static void add_stripe(const struct btrfs_fs_info *fs_info, struct map_dev_segment *seg,
		       const struct dev_stripe *st)
{
	const struct btrfs_block_group *bg = &fs_info->block_groups[st->bg];
	const struct btrfs_block_group *first = &fs_info->block_groups[seg->first];
	u64 end = seg->physical + seg->length;

	if (!seg->count)
		seg->first = st->bg;
	else if (st->physical > end)
		seg->gaps += st->physical - end;
	seg->mixed |= seg->count && (first->flags != bg->flags || first->ro != bg->ro);
	seg->count++;
	seg->length = st->physical + st->length - seg->physical;
	seg->bg_length += bg->length;
	seg->bg_used += bg->used;
	seg->nr_ro += bg->ro;
	seg->type_length[map_type_of(bg->flags)] += st->length;
}

/*
 * The segments of one device: every gap is unallocated space, except,
 * with @any_kind, one under @merge_below after a segment under that size;
 * stripes join the segment before them as stripe_joins() allows.
 */
static void build_segments(const struct btrfs_fs_info *fs_info, struct map_device *d,
			   const struct dev_stripe *st, u64 n, u64 merge_below,
			   bool any_kind)
{
	struct map_dev_segment *seg = NULL;
	u64 cursor = 0, i;

	d->nr_segs = 0;
	d->free = 0;
	for (i = 0; i < n; i++) {
		u64 gap = st[i].physical > cursor ? st[i].physical - cursor : 0;

		/* a small gap folds into a small merged segment before it */
		if (gap && !(any_kind && gap < merge_below && seg &&
			     !seg->unallocated && seg->length < merge_below)) {
			add_gap(d, cursor, st[i].physical);
			seg = NULL;
		}
		if (!stripe_joins(fs_info, seg, &st[i], merge_below, any_kind))
			seg = new_segment(d, st[i].physical);
		add_stripe(fs_info, seg, &st[i]);
		d->merged |= seg->count > 1 || seg->gaps;
		if (st[i].physical + st[i].length > cursor)
			cursor = st[i].physical + st[i].length;
	}
	add_gap(d, cursor, d->size);
}

static int build_device(const struct btrfs_fs_info *fs_info, const struct btrfs_device *dev,
			u64 merge_below, u32 max_segs, struct map_device *d)
{
	struct dev_stripe *st;
	int64_t n = gather_stripes(fs_info, dev->devid, &st);
	u64 i;

	if (n < 0)
		return n;
	d->dev = dev;
	d->devid = dev->devid;
	d->size = dev->total_bytes;
	d->allocated = dev->bytes_used;
	d->nr_stripes = n;
	for (i = 0; i < (u64)n; i++)
		d->stripes += st[i].length;
	/* each stripe and the gap before it, and the last gap */
	d->segs = calloc(2 * n + 1, sizeof(*d->segs));
	if (!d->segs) {
		free(st);
		return -ENOMEM;
	}
	build_segments(fs_info, d, st, n, merge_below, false);
	if (d->nr_segs > max_segs) {
		d->merged = false;
		d->mixed_kinds = true;
		build_segments(fs_info, d, st, n, merge_below, true);
	}
	free(st);
	return 0;
}

int map_build_devices(const struct btrfs_fs_info *fs_info, u64 merge_below,
		      u32 max_segs, struct map_devices *md)
{
	u32 i;
	int ret;

	memset(md, 0, sizeof(*md));
	md->devs = calloc(fs_info->nr_devices ? fs_info->nr_devices : 1, sizeof(*md->devs));
	if (!md->devs)
		return -ENOMEM;
	for (i = 0; i < fs_info->nr_devices; i++) {
		ret = build_device(fs_info, &fs_info->devices[i], merge_below, max_segs,
				   &md->devs[md->nr]);
		if (ret)
			return ret;
		if (md->devs[md->nr].size > md->largest)
			md->largest = md->devs[md->nr].size;
		md->nr++;
	}
	return 0;
}

void map_free_devices(struct map_devices *md)
{
	u32 i;

	for (i = 0; md->devs && i < md->nr; i++)
		free(md->devs[i].segs);
	free(md->devs);
	md->devs = NULL;
	md->nr = 0;
}

enum map_type map_segment_type(const struct map_dev_segment *seg)
{
	return largest_type(seg->type_length);
}

#define MAP_RESERVED_END	(1ULL << 20)	/* BTRFS_DEVICE_RANGE_RESERVED */

/* How much of each unallocated segment is dead, and of which kind */
struct dead_split {
	u64 reserved;		/* at its start, below 1 MiB */
	u64 soft;		/* before the hard part */
	u64 hard;		/* at its end */
};

static void plan_dead(const struct map_device *d, u64 hard, u64 soft, struct dead_split *sp)
{
	u32 i;

	for (i = 0; i < d->nr_segs && hard; i++) {
		const struct map_dev_segment *seg = &d->segs[i];
		u64 end = min_t(u64, seg->physical + seg->length, MAP_RESERVED_END);

		if (!seg->unallocated || seg->physical >= end)
			continue;
		sp[i].reserved = min_t(u64, hard, end - seg->physical);
		hard -= sp[i].reserved;
	}
	for (i = d->nr_segs; i-- > 0 && hard;) {
		if (!d->segs[i].unallocated)
			continue;
		sp[i].hard = min_t(u64, hard, d->segs[i].length - sp[i].reserved);
		hard -= sp[i].hard;
	}
	for (i = d->nr_segs; i-- > 0 && soft;) {
		if (!d->segs[i].unallocated)
			continue;
		sp[i].soft = min_t(u64, soft, d->segs[i].length - sp[i].reserved - sp[i].hard);
		soft -= sp[i].soft;
	}
}

static void put_piece(struct map_dev_segment *out, u32 *n, const struct map_dev_segment *seg,
		      u64 physical, u64 length, enum map_dead dead)
{
	if (!length)
		return;
	out[*n] = *seg;
	out[*n].physical = physical;
	out[*n].length = length;
	out[*n].dead = dead;
	(*n)++;
}

static int mark_device(struct map_device *d, u64 hard, u64 soft)
{
	struct dead_split *sp = calloc(d->nr_segs ? d->nr_segs : 1, sizeof(*sp));
	struct map_dev_segment *out = calloc(4 * (size_t)d->nr_segs + 1, sizeof(*out));
	u32 i, n = 0;

	if (!sp || !out) {
		free(sp);
		free(out);
		return -ENOMEM;
	}
	hard = min_t(u64, hard, d->free);
	soft = min_t(u64, soft, d->free - hard);
	plan_dead(d, hard, soft, sp);
	for (i = 0; i < d->nr_segs; i++) {
		const struct map_dev_segment *seg = &d->segs[i];
		u64 p = seg->physical, live;

		if (!seg->unallocated) {
			out[n++] = *seg;
			continue;
		}
		live = seg->length - sp[i].reserved - sp[i].soft - sp[i].hard;
		put_piece(out, &n, seg, p, sp[i].reserved, MAP_DEAD_RESERVED);
		p += sp[i].reserved;
		put_piece(out, &n, seg, p, live, MAP_LIVE);
		p += live;
		put_piece(out, &n, seg, p, sp[i].soft, MAP_DEAD_SOFT);
		p += sp[i].soft;
		put_piece(out, &n, seg, p, sp[i].hard, MAP_DEAD_HARD);
	}
	free(sp);
	free(d->segs);
	d->segs = out;
	d->nr_segs = n;
	d->dead_hard = hard;
	d->dead_soft = soft;
	return 0;
}

int map_mark_dead(struct map_devices *md, const u64 *devids, const u64 *hard,
		  const u64 *soft, u32 nr)
{
	u32 i, j;
	int ret;

	for (i = 0; i < md->nr; i++) {
		for (j = 0; j < nr && devids[j] != md->devs[i].devid; j++)
			;
		if (j == nr)
			continue;
		ret = mark_device(&md->devs[i], hard[j], soft[j]);
		if (ret)
			return ret;
	}
	return 0;
}
