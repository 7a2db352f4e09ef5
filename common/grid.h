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

/* The rectangles of the run of tiles from @p0 to @p1, in @rects; how many */
int grid_run_rects(const struct grid *g, double p0, double p1,
		   struct grid_rect rects[GRID_MAX_RECTS]);

#endif
