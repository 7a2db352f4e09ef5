// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of common/grid: fitting tiles, placing runs whole, and the
 * rectangles of a run.  The expected values are worked by hand: a grid
 * 100 pixels wide of 10 tiles a row has tiles of 10 pixels.
 */
#include <math.h>
#include <stdio.h>

#include "tests/unit/unit-test.h"
#include "common/grid.h"

static int near(double a, double b)
{
	return fabs(a - b) < 1e-6;
}

static void check_rect(const struct grid_rect *r, double x, double y, double w, double h)
{
	check(near(r->x, x) && near(r->y, y) && near(r->width, w) && near(r->height, h),
	      "rect %.1f,%.1f %.1fx%.1f (want %.1f,%.1f %.1fx%.1f)",
	      r->x, r->y, r->width, r->height, x, y, w, h);
}

static void test_fit(void)
{
	struct grid g;

	/* 100 tiles in 100x100: side 10, 10 a row, 10 rows */
	grid_fit(&g, 100, 100, 100, 1, 50);
	check_u64("cols", g.cols, 10);
	check_u64("rows", g.rows, 10);
	check(near(g.side, 10), "side 10 (got %f)", g.side);
	/* 2 tiles: clamped to the largest side, 2 columns of 50 */
	grid_fit(&g, 2, 100, 100, 1, 50);
	check_u64("cols, 2 tiles", g.cols, 2);
	check_u64("rows, 2 tiles", g.rows, 1);
	/* 12 columns rounded down to a multiple of a run of 4 */
	grid_fit(&g, 144, 120, 120, 1, 50);
	check_u64("cols before rounding", g.cols, 12);
	grid_fit(&g, 140, 130, 120, 1, 50);
	grid_round_cols(&g, 4, 130);
	check_u64("cols, multiple of 4", g.cols % 4, 0);
	check(near(g.side * g.cols, 130), "still 130 pixels wide");
}

static void test_place(void)
{
	struct grid g = { .cols = 10, .rows = 0, .side = 10 };

	check(near(grid_place(&g, 0, 4), 0), "the first run at 0");
	check(near(grid_place(&g, 4, 6), 4), "a run that ends at the row's end stays");
	check(near(grid_place(&g, 7, 4), 10), "a run that does not fit goes to the next row");
	check(near(grid_place(&g, 7, 25), 10), "a run longer than a row starts a row");
	check(near(grid_place(&g, 20, 25), 20), "at a row's start it stays");
	check(near(grid_place(&g, 9.5, 0.5), 9.5), "half a tile fits in half a tile");
	grid_set_end(&g, 45);
	check_u64("rows for 45 tiles", g.rows, 5);
	grid_set_end(&g, 40);
	check_u64("rows for 40 tiles", g.rows, 4);
}

static void test_rects(void)
{
	struct grid g = { .cols = 10, .rows = 5, .side = 10 };
	struct grid_rect r[GRID_MAX_RECTS];
	int n;

	n = grid_run_rects(&g, 2, 5, r);
	check_u64("one row: rects", n, 1);
	check_rect(&r[0], 20, 0, 30, 10);
	n = grid_run_rects(&g, 10, 20, r);
	check_u64("a whole row: rects", n, 1);
	check_rect(&r[0], 0, 10, 100, 10);
	n = grid_run_rects(&g, 10, 35, r);
	check_u64("two rows and a half: rects", n, 2);
	check_rect(&r[0], 0, 10, 100, 20);
	check_rect(&r[1], 0, 30, 50, 10);
	n = grid_run_rects(&g, 7, 35, r);
	check_u64("end of a row, rows, start of a row: rects", n, 3);
	check_rect(&r[0], 70, 0, 30, 10);
	check_rect(&r[1], 0, 10, 100, 20);
	check_rect(&r[2], 0, 30, 50, 10);
}

/* grid_lround() is lround() wherever lround() is defined */
static void test_lround(void)
{
	static const double v[] = {
		0, 0.5, -0.5, 1.5, -1.5, 2.5, 0.49999999999999994, -0.49999999999999994,
		4503599627370495.5, 4503599627370497.0, 9007199254740993.0, 1e15 + 0.5,
		-1e15 - 0.5, 127.49999999999999, 254.99999, 0.1, -0.1, 255.5,
	};
	unsigned int i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		check(grid_lround(v[i]) == lround(v[i]), "grid_lround(%.17g) = %ld, lround %ld",
		      v[i], grid_lround(v[i]), lround(v[i]));
}

int main(void)
{
	test_lround();
	test_fit();
	test_place();
	test_rects();
	return unit_failures != 0;
}
