/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model behind "btrfs-space map": the block groups summed up by type
 * and by fill, and the cells of the picture (one block group, or a run of
 * alike neighbours when there are many), with the bytes a square of the
 * grid stands for.  Nothing here draws: cmds/map.c turns this into SVG,
 * common/grid.c into pixels.
 */
#ifndef BTRFS_SPACE_MAP_LAYOUT_H
#define BTRFS_SPACE_MAP_LAYOUT_H

#include <stdbool.h>
#include "kernel-shared/fs.h"

enum map_type {
	MAP_DATA,
	MAP_METADATA,
	MAP_SYSTEM,
	MAP_MIXED,
	MAP_OTHER,
	MAP_NR_TYPES,
};

/* Block groups counted together: a type, a fill bucket, or a cell */
struct map_tally {
	u64 count;
	u64 length;
	u64 used;
	u64 read_only;
};

#define MAP_FILL_BUCKETS	10

/*
 * Raw bytes, on the devices: what the block groups' stripes take (the
 * chunk items' stripe size times their stripes), and the devices' sizes
 * and allocation as their DEV_ITEMs give them (btrfs device usage).
 */
struct map_raw {
	u64 stripes;		/* sum of stripe_size * num_stripes */
	u32 nr_devices;
	u64 size;		/* sum of DEV_ITEM total_bytes */
	u64 allocated;		/* sum of DEV_ITEM bytes_used */
	u64 unallocated;	/* sum of total_bytes - bytes_used */
};

struct map_summary {
	struct map_raw raw;
	struct map_tally all;
	struct map_tally types[MAP_NR_TYPES];
	struct map_tally fill[MAP_FILL_BUCKETS];
};

/* One drawn cell: one block group, or a run of them when there are many */
struct map_cell {
	u32 first;		/* index of its first block group */
	u32 count;
	u64 start;
	u64 end;		/* end of its last block group */
	u64 length;
	u64 used;
	u64 nr_ro;
	u64 type_length[MAP_NR_TYPES];
	u64 drawn;		/* the length it is drawn as: see map_widen_cells() */
	bool mixed;		/* its block groups differ in flags or read-only */
};

struct map_cells {
	struct map_cell *cells;
	u32 nr;
	u32 per_cell;		/* most block groups in one cell */
	bool mixed_kinds;	/* cells merge block groups of different kinds */
	u32 nr_widened;		/* cells drawn larger than their length */
	u64 drawn_total;
};

/*
 * A stretch of one device's physical space: stripes of block groups
 * (several when merged), or unallocated space.  Raw bytes throughout,
 * except @bg_length and @bg_used, the logical bytes of the block groups
 * whose stripes it holds (their fill).
 */
/*
 * Unallocated space that new chunks cannot use (the forecast's
 * unallocatable bytes, formulas.md section 21.4), see map_mark_dead()
 */
enum map_dead {
	MAP_LIVE,		/* new chunks can go there */
	MAP_DEAD_RESERVED,	/* the first MiB: never allocated */
	MAP_DEAD_HARD,		/* no chunk of either type's profile */
	MAP_DEAD_SOFT,		/* only the metadata profile's chunks */
};

struct map_dev_segment {
	u64 physical;
	u64 length;		/* raw: stripes, gaps folded in, or unallocated */
	bool unallocated;
	enum map_dead dead;	/* of an unallocated segment */
	u32 first;		/* index of its first block group */
	u32 count;		/* stripes in it */
	u64 gaps;		/* unallocated bytes folded into a merged segment */
	u64 bg_length;
	u64 bg_used;
	u64 nr_ro;
	u64 type_length[MAP_NR_TYPES];	/* raw */
	bool mixed;
};

struct map_device {
	const struct btrfs_device *dev;
	u64 devid;
	u64 size;		/* DEV_ITEM total_bytes */
	u64 allocated;		/* DEV_ITEM bytes_used */
	u64 stripes;		/* raw bytes of the stripes found on it */
	u64 free;		/* raw bytes of its unallocated segments */
	u64 dead_hard;		/* of them, what no new chunk can use (first MiB included) */
	u64 dead_soft;		/* what only metadata chunks can use */
	u32 nr_stripes;
	struct map_dev_segment *segs;
	u32 nr_segs;
	bool merged;		/* segments merge stripes, or fold in gaps */
	bool mixed_kinds;	/* merged whatever their type */
};

struct map_devices {
	struct map_device *devs;
	u32 nr;
	u64 largest;		/* the largest size: one scale for all */
};

/* Bounds of the map: cells and squares */
#define MAP_DEFAULT_CELLS	4096
/* ~350 bytes a cell: the largest map stays near 20 MiB */
#define MAP_MAX_CELLS		65536
/* Squares of the grid: few enough that a square stays large to the eye */
#define MAP_MAX_UNITS		4096
/* A typical cell is a short run of this many squares, not a thin line */
#define MAP_TYPICAL_UNITS	4
/* No cell is drawn thinner than this part of a square, to be seen and pointed at */
#define MAP_MIN_CELL_PART	8

enum map_type map_type_of(u64 flags);
/* Names as btrfs_bg_type_name() gives them */
const char *map_type_name(enum map_type type);
/* used / length, at most 1 */
double map_fill_ratio(u64 used, u64 length);

void map_summarize(const struct btrfs_fs_info *fs_info, struct map_summary *s);

/* At most @max cells; 0 or -ENOMEM.  map_free_cells() frees them */
int map_build_cells(const struct btrfs_fs_info *fs_info, u32 max, struct map_cells *mc);
void map_free_cells(struct map_cells *mc);
/* The type a cell is coloured as: the largest of its block groups' */
enum map_type map_cell_type(const struct map_cell *cell);

/*
 * The bytes of one square for @total bytes in @mc's cells, and each cell's
 * drawn length (a cell under a part of a square is drawn that large)
 */
/* The median cell length */
u64 map_typical_length(const struct map_cells *mc);
u64 map_square_size(const struct map_cells *mc, u64 total);
void map_widen_cells(struct map_cells *mc, u64 unit);

/*
 * Each device's stripes and gaps in physical order.  Touching stripes of
 * one kind merge while their segment is under @merge_below bytes; a
 * device with more than @max_segs segments gets merges of any kind and
 * its small gaps folded in.  0 or -ENOMEM; map_free_devices() frees.
 */
int map_build_devices(const struct btrfs_fs_info *fs_info, u64 merge_below,
		      u32 max_segs, struct map_devices *md);
void map_free_devices(struct map_devices *md);
enum map_type map_segment_type(const struct map_dev_segment *seg);

/*
 * Where the forecast's unallocatable bytes of each device lie: @hard[i]
 * and @soft[i] for @devids[i] (the data fill's hard and soft, forecast.h).
 * The part below 1 MiB is the reserved first MiB the allocator never
 * uses; the rest of the hard bytes is the highest addresses of the
 * unallocated space, which the allocator (first fit from 1 MiB, volumes.c
 * find_free_dev_extent()) reaches last, and the soft bytes the
 * unallocated space just below them.  Unallocated segments are split to
 * mark them.  0 or -ENOMEM.
 */
int map_mark_dead(struct map_devices *md, const u64 *devids, const u64 *hard,
		  const u64 *soft, u32 nr);

#endif
