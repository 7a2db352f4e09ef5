// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>
#include "common/grid.h"

void grid_fit(struct grid *g, double tiles, double width, double height,
	      double min_side, double max_side)
{
	memset(g, 0, sizeof(*g));
	g->side = tiles > 0 ? sqrt(width * height / tiles) : max_side;
	if (g->side < min_side)
		g->side = min_side;
	if (g->side > max_side)
		g->side = max_side;
	g->cols = width / g->side;
	if (!g->cols)
		g->cols = 1;
	g->side = width / g->cols;
	g->rows = ceil(tiles / g->cols - 1e-9);
}

void grid_round_cols(struct grid *g, double run, double width)
{
	u32 n = grid_lround(run);

	if (n < 2 || fabs(run - n) > 1e-9 || g->cols < n)
		return;
	g->rows = ceil((double)g->rows * g->cols / (g->cols - g->cols % n) - 1e-9);
	g->cols -= g->cols % n;
	g->side = width / g->cols;
}

static void set_rect(struct grid_rect *r, double x, double y, double width,
		     double height)
{
	r->x = x;
	r->y = y;
	r->width = width;
	r->height = height;
}

int grid_run_rects(const struct grid *g, double p0, double p1,
		   struct grid_rect rects[GRID_MAX_RECTS])
{
	const double eps = 1e-6;
	double cols = g->cols, side = g->side;
	double r0 = floor(p0 / cols), r1 = floor(p1 / cols);
	double x0 = p0 - r0 * cols, x1 = p1 - r1 * cols;
	int n = 0;

	/* a run ending exactly at a row's end ends on that row */
	if (x1 < eps && r1 > r0) {
		r1--;
		x1 = cols;
	}
	if (r0 == r1) {
		set_rect(&rects[n++], x0 * side, r0 * side, (x1 - x0) * side, side);
		return n;
	}
	/* a run from a row's start takes that row into its block of whole rows */
	if (x0 < eps)
		r0--;
	else if (cols - x0 > eps)
		set_rect(&rects[n++], x0 * side, r0 * side, (cols - x0) * side, side);
	if (r1 - r0 > 1)
		set_rect(&rects[n++], 0, (r0 + 1) * side, cols * side,
			 (r1 - r0 - 1) * side);
	set_rect(&rects[n++], 0, r1 * side, x1 * side, side);
	return n;
}

double grid_place(const struct grid *g, double pos, double len)
{
	const double eps = 1e-6;
	double cols = g->cols;
	double row_start = floor(pos / cols + eps) * cols;
	double left = row_start + cols - pos;

	if (pos - row_start < eps || len <= left + eps)
		return pos;
	return row_start + cols;
}

void grid_set_end(struct grid *g, double end)
{
	g->rows = ceil(end / g->cols - 1e-9);
}
