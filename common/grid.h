/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A grid of square tiles filled row by row, left to right, and the
 * rectangles that a run of tiles covers.  Positions are in tiles (a
 * fraction of a tile is allowed), rectangles in pixels from the grid's
 * top left corner.  Pure geometry: nothing here knows what is drawn.
 */
#ifndef BTRFS_SPACE_COMMON_GRID_H
#define BTRFS_SPACE_COMMON_GRID_H

#include "common/types.h"

struct grid {
	u32 cols;
	u32 rows;
	double side;		/* pixels of a tile */
};

struct grid_rect {
	double x;
	double y;
	double width;
	double height;
};

/* A run covers at most this many rectangles: a row's end, full rows, a row's start */
#define GRID_MAX_RECTS	3

/*
 * Tiles as large as fit @tiles of them in about @width x @height pixels,
 * their side clamped to @min_side..@max_side, and exactly @width wide.
 */
void grid_fit(struct grid *g, double tiles, double width, double height,
	      double min_side, double max_side);

/*
 * Fewer columns, a multiple of @run when @run is a whole number of tiles
 * (2 or more), so that rows of runs that long end flush; tiles grow to
 * keep the grid @width wide.
 */
void grid_round_cols(struct grid *g, double run, double width);

/* The rectangles of the run of tiles from @p0 to @p1, in @rects; how many */
int grid_run_rects(const struct grid *g, double p0, double p1,
		   struct grid_rect rects[GRID_MAX_RECTS]);

/*
 * Where a run of @len tiles starts when the run before it ended at @pos:
 * at @pos when it fits in what is left of that row or @pos starts a row,
 * else at the start of the next row.  A run no longer than a row is then
 * never cut in two, and a longer one covers whole rows from a row's start.
 */
double grid_place(const struct grid *g, double pos, double len);
/* The rows, for runs placed up to @end */
void grid_set_end(struct grid *g, double end);

/*
 * lround(): the nearest integer, halves away from zero, for a value in
 * range.  Exact: x minus its truncation is representable.  Here so that
 * the binary does not load libm for two roundings of map's drawing (and
 * sqrt() is one instruction with -fno-math-errno): a library loaded is
 * 21 k instructions, 7 page faults and 10 system calls of every run.
 */
static inline long grid_lround(double x)
{
	long r = (long)x;
	double frac = x - (double)r;

	if (frac >= 0.5)
		r++;
	else if (frac <= -0.5)
		r--;
	return r;
}

#endif
