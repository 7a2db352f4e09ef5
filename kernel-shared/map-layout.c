// SPDX-License-Identifier: GPL-2.0
/*
 * The block groups as "btrfs-space map" shows them: sums by type and fill,
 * and the cells of the picture.  Own code, no kernel twin; the block
 * groups are those btrfs_read_block_groups() loaded (block-group.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/ctree.h"
#include "kernel-shared/map-layout.h"
#include "kernel-shared/volumes.h"

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

void map_summarize(const struct btrfs_fs_info *fs_info, struct map_summary *s)
{
	u32 i;

	memset(s, 0, sizeof(*s));
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

enum map_type map_cell_type(const struct map_cell *cell)
{
	enum map_type best = MAP_OTHER;
	int t;

	for (t = 0; t < MAP_NR_TYPES; t++)
		if (cell->type_length[t] > cell->type_length[best])
			best = t;
	return best;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
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
	qsort(len, mc->nr, sizeof(*len), cmp_u64);
	median = len[mc->nr / 2];
	free(len);
	return median;
}

/*
 * A square is a power of two, a few of which make a typical cell, so that
 * the usual block group is a short bar, and its neighbours of other sizes
 * are visibly shorter or longer.
 */
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
