// SPDX-License-Identifier: GPL-2.0
/*
 * A picture of the block groups, in the spirit of btrfs-heatmap but from an
 * unmounted filesystem: every block group is a cell whose area is its
 * logical length, coloured by type and shaded by how full it is, and each
 * device a bar of its raw space with its stripes and unallocated space.
 * Without --svg, the same block groups summed up by type and by fill, and
 * the raw bytes of the devices.  The model is kernel-shared/map-layout.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cmds/commands.h"
#include "cmds/driver.h"
#include "cmds/report.h"
#include "common/grid.h"
#include "common/help.h"
#include "common/messages.h"
#include "common/output-file.h"
#include "common/parse-utils.h"
#include "common/svg.h"
#include "common/units.h"
#include "common/uuid-text.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/forecast.h"
#include "kernel-shared/map-layout.h"
#include "kernel-shared/volumes.h"

static const char * const cmd_map_usage[] = {
	"btrfs-space map [options] <device|image> [<device|image>...]",
	"Draw the block groups (logical) and the devices (raw) as an SVG map, or sum them up",
	"",
	"--svg FILE         write the map to FILE, - for standard output (never an input)",
	"--max-cells N      merge runs of block groups to draw at most N cells (default 4096)",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

/* The drawing, in pixels */
#define MAP_MARGIN		20.0
#define MAP_GRID_W		1000.0
#define MAP_GRID_H		560.0	/* aimed at; a small map is shorter */
#define MAP_HEADING		24.0	/* a section's heading above its drawing */
#define MAP_GRID_TOP		(94.0 + MAP_HEADING)
#define MAP_MIN_SIDE		8.0
#define MAP_MAX_SIDE		48.0
#define MAP_DEV_LABEL		16.0	/* a device's line above its bar */
#define MAP_DEV_BAR		24.0
#define MAP_DEV_ROW		(MAP_DEV_LABEL + MAP_DEV_BAR + 12.0)
/* A device's stripes are drawn at least this wide, to be seen */
#define MAP_DEV_MIN_PX		1.0
/* and merged while under this many pixels */
#define MAP_DEV_MERGE_PX	3.0
/* Segments of one device: every few pixels of the bar, and its gaps */
#define MAP_DEV_MAX_SEGS	((u32)(2 * MAP_GRID_W / MAP_DEV_MERGE_PX))
#define MAP_LEGEND_ROW		22.0
#define MAP_LEGEND_COLS		1
#define MAP_NOTE_ROW		18.0

enum {
	OPT_SVG = GETOPT_VAL_EXTRA + 400,
	OPT_MAX_CELLS,
};

static const struct option map_longopts[] = {
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "max-cells", required_argument, NULL, OPT_MAX_CELLS },
	{ NULL, 0, NULL, 0 }
};

static const struct cmd_option_expect map_option_expect[] = {
	{ OPT_SVG, "a file name, or - for standard output" },
	{ OPT_MAX_CELLS, "1 to 65536" },
	{ 0, NULL }
};

struct map_args {
	const char *svg_path;
	u32 max_cells;
};

static int map_option(int opt, const char *arg, void *ctx)
{
	struct map_args *args = ctx;
	u64 n;

	if (opt == OPT_SVG) {
		if (!*arg)
			return -EINVAL;
		args->svg_path = arg;
		return 0;
	}
	if (opt != OPT_MAX_CELLS || parse_u64(arg, &n) || !n || n > MAP_MAX_CELLS)
		return -EINVAL;
	args->max_cells = n;
	return 0;
}

/* Colours of an empty and of a full block group of each type */
static const struct map_style {
	const char *id;
	const char *colour;	/* its name in the legend */
	u8 empty[3];
	u8 full[3];
} map_styles[MAP_NR_TYPES] = {
	[MAP_DATA]	= { "data", "blue", { 0xd6, 0xe6, 0xf7 }, { 0x17, 0x4a, 0x8c } },
	[MAP_METADATA]	= { "metadata", "orange", { 0xfd, 0xe3, 0xc4 }, { 0xc2, 0x51, 0x00 } },
	[MAP_SYSTEM]	= { "system", "green", { 0xd4, 0xee, 0xd2 }, { 0x1b, 0x78, 0x37 } },
	[MAP_MIXED]	= { "mixed", "purple", { 0xe4, 0xd8, 0xef }, { 0x5b, 0x2a, 0x86 } },
	[MAP_OTHER]	= { "other", "grey", { 0xe0, 0xe0, 0xe0 }, { 0x4a, 0x4a, 0x4a } },
};

#define MAP_FREE_FILL		"#f2f2f2"
#define MAP_FREE_STROKE		"#8c8c8c"
#define MAP_DEAD_COLOUR		"#b00020"	/* hatched: no new chunk can use it */
#define MAP_SOFT_COLOUR		"#c25100"	/* hatched: only metadata chunks can */

/* Squares of @unit bytes on a grid of pixels, and where each cell starts */
struct map_layout {
	u64 unit;
	double units;		/* drawn in all */
	struct grid grid;
	double *pos;		/* per cell, in squares */
	u32 nr_wrapped;		/* cells longer than a row */
};

/* The devices' bars, all at one scale of @bpp bytes a pixel */
struct map_dev_layout {
	struct map_devices md;
	u64 bpp;
	u32 nr_segs;
};

/* Place the cells whole, and size the squares to fit the drawing */
static int compute_layout(struct map_cells *mc, u64 total, struct map_layout *l)
{
	double pos = 0, len;
	u32 i;

	memset(l, 0, sizeof(*l));
	l->unit = map_square_size(mc, total);
	map_widen_cells(mc, l->unit);
	l->units = (double)mc->drawn_total / l->unit;
	grid_fit(&l->grid, l->units, MAP_GRID_W, MAP_GRID_H, MAP_MIN_SIDE, MAP_MAX_SIDE);
	/* rows of whole typical cells, so that most rows end flush */
	grid_round_cols(&l->grid, (double)map_typical_length(mc) / l->unit, MAP_GRID_W);
	l->pos = calloc(mc->nr ? mc->nr : 1, sizeof(*l->pos));
	if (!l->pos)
		return -ENOMEM;
	for (i = 0; i < mc->nr; i++) {
		len = (double)mc->cells[i].drawn / l->unit;
		l->pos[i] = grid_place(&l->grid, pos, len);
		pos = l->pos[i] + len;
		l->nr_wrapped += len > l->grid.cols + 1e-6;
	}
	grid_set_end(&l->grid, pos);
	return 0;
}

static int compute_dev_layout(const struct btrfs_fs_info *fs_info, u32 max_segs,
			      const struct btrfs_forecast *fc, struct map_dev_layout *dl)
{
	u64 largest = 0;
	u32 i;
	int ret;

	memset(dl, 0, sizeof(*dl));
	for (i = 0; i < fs_info->nr_devices; i++)
		if (fs_info->devices[i].total_bytes > largest)
			largest = fs_info->devices[i].total_bytes;
	dl->bpp = largest / (u64)MAP_GRID_W;
	if (!dl->bpp)
		dl->bpp = 1;
	ret = map_build_devices(fs_info, dl->bpp * MAP_DEV_MERGE_PX, max_segs, &dl->md);
	if (!ret && fc->data.present)
		ret = map_mark_dead(&dl->md, fc->devids, fc->data.hard, fc->data.soft,
				    fc->nr_devs);
	for (i = 0; i < dl->md.nr; i++)
		dl->nr_segs += dl->md.devs[i].nr_segs;
	return ret;
}

static void free_layouts(struct map_layout *l, struct map_dev_layout *dl)
{
	free(l->pos);
	l->pos = NULL;
	map_free_devices(&dl->md);
}

/* The run of squares from @p0 to @p1, wrapped row by row */
static void cell_rects(struct svg *svg, const struct map_layout *l,
		       double p0, double p1)
{
	struct grid_rect r[GRID_MAX_RECTS];
	int i, n = grid_run_rects(&l->grid, p0, p1, r);

	for (i = 0; i < n; i++)
		svg_shape_rect(svg, r[i].x, r[i].y, r[i].width, r[i].height);
}

/* Half the height of a wrap arrow on squares of @side pixels */
static double arrow_half(double side)
{
	return side * 0.28 > 7 ? 7 : side * 0.28;
}

/* A small arrow pointing right, its tip at (@x, @y) */
static void wrap_arrow(struct svg *svg, double x, double y, double side)
{
	double h = arrow_half(side);
	double xy[6] = { x - 1.4 * h, y - h, x, y, x - 1.4 * h, y + h };

	svg_polygon(svg, "wrap", "#000", xy, 3);
}

/*
 * A cell longer than a row starts a row and covers whole rows, drawn as
 * one rectangle; what is left goes on in the next row.  An arrow at the
 * end of its last whole row and one at the start of that next row say
 * that the two pieces are one block group.
 */
static void wrap_marks(struct svg *svg, const struct map_layout *l, double p0, double p1)
{
	double cols = l->grid.cols, side = l->grid.side;
	double rows = floor((p1 - p0) / cols + 1e-9);
	double last = floor(p0 / cols + 1e-9) + rows - 1;

	/* ending at a row's end, it is one rectangle */
	if (p1 - p0 - rows * cols < 1e-6)
		return;
	wrap_arrow(svg, cols * side - 3, (last + 0.5) * side, side);
	wrap_arrow(svg, 3 + 1.4 * arrow_half(side), (last + 1.5) * side, side);
}

static void shade(enum map_type type, double ratio, char *buf, size_t len)
{
	const struct map_style *s = &map_styles[type];
	int c[3], i;

	for (i = 0; i < 3; i++)
		c[i] = grid_lround(s->empty[i] + (s->full[i] - s->empty[i]) * ratio);
	snprintf(buf, len, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static const char *map_size(u64 bytes, unsigned int units, char *buf)
{
	return pretty_size_mode(bytes, units, buf, UNITS_BUF_LEN);
}

/* snprintf() at *@n of @buf, never past its end however much is written */
__attribute__ ((format (printf, 4, 5)))
static void append(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int ret;

	if (*n >= len)
		return;
	va_start(ap, fmt);
	ret = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (ret > 0)
		*n += ret;
}

#define MAP_TIP_STRIPES		4

/* Where a block group's stripes are: raw bytes on the devices */
static void append_stripes(char *buf, size_t len, size_t *n,
			   const struct btrfs_block_group *bg, unsigned int units)
{
	const struct btrfs_chunk_map *map = bg->map;
	char raw[UNITS_BUF_LEN], stripe[UNITS_BUF_LEN];
	u16 i;

	if (!map)
		return;
	append(buf, len, n, "\nraw %s: %u stripe%s of %s",
	       map_size(map->stripe_size * map->num_stripes, units, raw),
	       map->num_stripes, map->num_stripes == 1 ? "" : "s",
	       map_size(map->stripe_size, units, stripe));
	for (i = 0; i < map->num_stripes && i < MAP_TIP_STRIPES; i++)
		append(buf, len, n, "%s devid %llu at %llu", i ? "," : "",
		       (unsigned long long)map->stripes[i].devid,
		       (unsigned long long)map->stripes[i].physical);
	if (map->num_stripes > MAP_TIP_STRIPES)
		append(buf, len, n, ", ...");
}

static void cell_tooltip(const struct btrfs_fs_info *fs_info, const struct map_cell *cell,
			 unsigned int units, char *buf, size_t len)
{
	const struct btrfs_block_group *bg = &fs_info->block_groups[cell->first];
	char l[UNITS_BUF_LEN], u[UNITS_BUF_LEN], s[UNITS_BUF_LEN];
	double pct = 100 * map_fill_ratio(cell->used, cell->length);
	size_t n = 0;
	int t;

	if (cell->count == 1) {
		append(buf, len, &n,
		       "block group %llu\nlogical length %s, used %s (%.1f%%)\n%s %s, flags 0x%llx",
		       (unsigned long long)bg->start, map_size(bg->length, units, l),
		       map_size(bg->used, units, u), pct, btrfs_bg_type_name(bg->flags),
		       btrfs_bg_profile_name(bg->flags), (unsigned long long)bg->flags);
		append_stripes(buf, len, &n, bg, units);
		if (bg->bytes_super)
			append(buf, len, &n, "\nsuperblock copies %s",
			       map_size(bg->bytes_super, units, s));
		if (bg->ro)
			append(buf, len, &n, "\nread-only");
		return;
	}
	append(buf, len, &n, "%u block groups, %llu to %llu\nlogical length %s, used %s (%.1f%%)",
	       cell->count, (unsigned long long)cell->start,
	       (unsigned long long)cell->end, map_size(cell->length, units, l),
	       map_size(cell->used, units, u), pct);
	for (t = 0; t < MAP_NR_TYPES; t++) {
		if (!cell->type_length[t])
			continue;
		append(buf, len, &n, "\n%s %s", map_type_name(t),
		       map_size(cell->type_length[t], units, l));
		/* the profile of a run of one kind; a mixed run has several */
		if (!cell->mixed && t == (int)map_type_of(bg->flags))
			append(buf, len, &n, " %s", btrfs_bg_profile_name(bg->flags));
	}
	if (cell->nr_ro)
		append(buf, len, &n, "\n%llu read-only", (unsigned long long)cell->nr_ro);
}

static void shape_attr_u64(struct svg *svg, const char *name, u64 value)
{
	char num[32];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)value);
	svg_shape_attr(svg, name, num);
}

static void draw_cell(struct svg *svg, const struct btrfs_fs_info *fs_info,
		      const struct map_layout *l, const struct map_cell *cell,
		      double p0, unsigned int units)
{
	const struct btrfs_block_group *bg = &fs_info->block_groups[cell->first];
	double p1 = p0 + (double)cell->drawn / l->unit;
	char fill[8], num[32], tip[768];

	shade(map_cell_type(cell), map_fill_ratio(cell->used, cell->length), fill,
	      sizeof(fill));
	cell_tooltip(fs_info, cell, units, tip, sizeof(tip));
	svg_shape_begin(svg, "bg", fill);
	shape_attr_u64(svg, "data-start", cell->start);
	shape_attr_u64(svg, "data-length", cell->length);
	shape_attr_u64(svg, "data-used", cell->used);
	if (cell->count == 1) {
		snprintf(num, sizeof(num), "0x%llx", (unsigned long long)bg->flags);
		svg_shape_attr(svg, "data-flags", num);
	}
	shape_attr_u64(svg, "data-count", cell->count);
	cell_rects(svg, l, p0, p1);
	svg_shape_end(svg, tip);
	if (cell->nr_ro) {
		/* hatching on top, transparent to the pointer so the tooltip stays */
		svg_shape_begin(svg, "ro", "url(#ro-hatch)");
		cell_rects(svg, l, p0, p1);
		svg_shape_end(svg, NULL);
	}
	if (p1 - p0 > l->grid.cols + 1e-6)
		wrap_marks(svg, l, p0, p1);
}

/* Why new chunks cannot use a dead segment: the forecast's fills (formulas.md 21.4) */
static const char *dead_reason(const struct btrfs_forecast *fc, enum map_dead dead,
			       char *buf, size_t len)
{
	const char *data = btrfs_bg_profile_name(fc->data.profile);
	const char *meta = fc->metadata.present ?
			   btrfs_bg_profile_name(fc->metadata.profile) : data;

	switch (dead) {
	case MAP_DEAD_RESERVED:
		return "the first MiB of the device, which the allocator never uses";
	case MAP_DEAD_HARD:
		snprintf(buf, len,
			 "no new chunk can use it: once data and metadata are written to ENOSPC, neither a data (%s) nor a metadata (%s) chunk finds the devices and room its stripes need (forecast: unallocatable, hard)",
			 data, meta);
		return buf;
	case MAP_DEAD_SOFT:
		snprintf(buf, len,
			 "only metadata (%s) chunks can use it: no data (%s) chunk fits once data is written to ENOSPC (forecast: unallocatable, soft)",
			 meta, data);
		return buf;
	default:
		return "";
	}
}

static void segment_tooltip(const struct btrfs_fs_info *fs_info,
			    const struct btrfs_forecast *fc, const struct map_device *d,
			    const struct map_dev_segment *seg, unsigned int units,
			    char *buf, size_t len)
{
	char why[400];
	const struct btrfs_block_group *bg = &fs_info->block_groups[seg->first];
	char a[UNITS_BUF_LEN], b[UNITS_BUF_LEN];
	size_t n = 0;
	int t;

	append(buf, len, &n, "devid %llu, physical %llu to %llu\n",
	       (unsigned long long)d->devid, (unsigned long long)seg->physical,
	       (unsigned long long)(seg->physical + seg->length));
	if (seg->unallocated) {
		append(buf, len, &n, "unallocated %s (raw)", map_size(seg->length, units, a));
		if (seg->dead != MAP_LIVE)
			append(buf, len, &n, "\n%s: %s", seg->dead == MAP_DEAD_SOFT ?
			       "metadata only" : "dead", dead_reason(fc, seg->dead, why, sizeof(why)));
		return;
	}
	if (seg->count == 1) {
		append(buf, len, &n, "stripe %s (raw) of block group %llu\n%s %s, used %s of %s (%.1f%%, logical)",
		       map_size(seg->length, units, a), (unsigned long long)bg->start,
		       btrfs_bg_type_name(bg->flags), btrfs_bg_profile_name(bg->flags),
		       map_size(bg->used, units, b), map_size(bg->length, units, a),
		       100 * map_fill_ratio(bg->used, bg->length));
		if (bg->ro)
			append(buf, len, &n, "\nread-only");
		return;
	}
	append(buf, len, &n, "%u stripes, %s raw", seg->count, map_size(seg->length, units, a));
	if (seg->gaps)
		append(buf, len, &n, " (with %s unallocated between them)",
		       map_size(seg->gaps, units, a));
	for (t = 0; t < MAP_NR_TYPES; t++)
		if (seg->type_length[t])
			append(buf, len, &n, "\n%s %s raw", map_type_name(t),
			       map_size(seg->type_length[t], units, a));
	append(buf, len, &n, "\ntheir block groups: used %s of %s (%.1f%%, logical)",
	       map_size(seg->bg_used, units, a), map_size(seg->bg_length, units, b),
	       100 * map_fill_ratio(seg->bg_used, seg->bg_length));
	if (seg->nr_ro)
		append(buf, len, &n, "\n%llu read-only", (unsigned long long)seg->nr_ro);
}

static void draw_segment(struct svg *svg, const struct btrfs_fs_info *fs_info,
			 const struct btrfs_forecast *fc, const struct map_dev_layout *dl,
			 const struct map_device *d, const struct map_dev_segment *seg,
			 double y, unsigned int units)
{
	double x = (double)seg->physical / dl->bpp;
	double w = (double)seg->length / dl->bpp;
	char fill[8], tip[768];

	if (seg->unallocated) {
		snprintf(fill, sizeof(fill), "%s", MAP_FREE_FILL);
	} else {
		shade(map_segment_type(seg), map_fill_ratio(seg->bg_used, seg->bg_length),
		      fill, sizeof(fill));
		if (w < MAP_DEV_MIN_PX)
			w = MAP_DEV_MIN_PX;
	}
	segment_tooltip(fs_info, fc, d, seg, units, tip, sizeof(tip));
	svg_shape_begin(svg, seg->unallocated ? "free" : "dev", fill);
	shape_attr_u64(svg, "data-devid", d->devid);
	shape_attr_u64(svg, "data-physical", seg->physical);
	shape_attr_u64(svg, "data-length", seg->length);
	shape_attr_u64(svg, "data-count", seg->count);
	svg_shape_rect(svg, x, y, w, MAP_DEV_BAR);
	svg_shape_end(svg, tip);
	if (seg->nr_ro) {
		svg_shape_begin(svg, "dev-ro", "url(#ro-hatch)");
		svg_shape_rect(svg, x, y, w, MAP_DEV_BAR);
		svg_shape_end(svg, NULL);
	}
	if (seg->unallocated && seg->dead != MAP_LIVE) {
		svg_shape_begin(svg, "dead", seg->dead == MAP_DEAD_SOFT ?
				"url(#soft-hatch)" : "url(#dead-hatch)");
		shape_attr_u64(svg, "data-devid", d->devid);
		shape_attr_u64(svg, "data-physical", seg->physical);
		shape_attr_u64(svg, "data-length", seg->length);
		svg_shape_rect(svg, x, y, w, MAP_DEV_BAR);
		svg_shape_end(svg, tip);
	}
}

static const char map_css[] =
	"text { font-family: sans-serif; fill: #222; }\n"
	".title { font-size: 18px; font-weight: bold; }\n"
	".heading { font-size: 14px; font-weight: bold; }\n"
	".subtitle, .legend { font-size: 13px; }\n"
	".device { font-size: 12px; }\n"
	".note { font-size: 12px; fill: #555; }\n"
	".bg { stroke: #fff; stroke-width: 1; }\n"
	".dev, .free { shape-rendering: crispEdges; }\n"
	".bg:hover, .dev:hover, .free:hover { stroke: #000; stroke-width: 1.5; }\n"
	".ro, .dev-ro, .wrap { pointer-events: none; }\n"
	".wrap { stroke: #fff; stroke-width: 1; }\n";

struct map_drawing {
	const struct btrfs_fs_info *fs_info;
	const struct btrfs_forecast *fc;	/* where new chunks cannot go */
	const struct map_summary *sum;
	struct map_cells *mc;
	struct map_layout *layout;
	struct map_dev_layout *devs;
	unsigned int units;
	double width;
	double height;
	double devs_top;	/* the devices' heading */
	double legend_top;
	int nr_notes;
};

static double pct_of(u64 part, u64 whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/* Logical bytes are compared with logical bytes, raw with raw */
static void draw_header(struct svg *svg, const struct map_drawing *d)
{
	const struct btrfs_fs_info *fs_info = d->fs_info;
	const struct map_raw *raw = &d->sum->raw;
	char fsid[37], label[BTRFS_LABEL_SIZE + 1], line[BTRFS_LABEL_SIZE + 160];
	char a[UNITS_BUF_LEN], t[UNITS_BUF_LEN], u[UNITS_BUF_LEN];

	uuid_text(fs_info->fsid, fsid);
	snprintf(label, sizeof(label), "%.*s", BTRFS_LABEL_SIZE, fs_info->super.label);
	snprintf(line, sizeof(line), "Block groups of %s%s%s%s", fsid,
		 label[0] ? " (" : "", label, label[0] ? ")" : "");
	svg_text(svg, "title", MAP_MARGIN, 30, line);
	snprintf(line, sizeof(line),
		 "Logical: %llu block groups of %s in all, %s of it used (%.1f%%)",
		 (unsigned long long)d->sum->all.count, map_size(d->sum->all.length, d->units, a),
		 map_size(d->sum->all.used, d->units, u),
		 100 * map_fill_ratio(d->sum->all.used, d->sum->all.length));
	svg_text(svg, "subtitle", MAP_MARGIN, 52, line);
	snprintf(line, sizeof(line),
		 "Raw, on %u device%s: %s allocated of %s (%.1f%%), %s unallocated",
		 raw->nr_devices, raw->nr_devices == 1 ? "" : "s",
		 map_size(raw->allocated, d->units, a), map_size(raw->size, d->units, t),
		 pct_of(raw->allocated, raw->size), map_size(raw->unallocated, d->units, u));
	svg_text(svg, "subtitle", MAP_MARGIN, 70, line);
}

static void draw_grid(struct svg *svg, const struct map_drawing *d)
{
	const struct map_layout *l = d->layout;
	char line[256], sq[UNITS_BUF_LEN], row[UNITS_BUF_LEN];
	u32 i;

	snprintf(line, sizeof(line),
		 "Logical address space: block groups in logical order, row by row; "
		 "area is logical length (a square %s, a row %s)",
		 map_size(l->unit, d->units, sq),
		 map_size(l->unit * l->grid.cols, d->units, row));
	svg_text(svg, "heading", MAP_MARGIN, MAP_GRID_TOP - 10, line);
	svg_group_begin(svg, "grid", MAP_MARGIN, MAP_GRID_TOP);
	for (i = 0; i < d->mc->nr; i++)
		draw_cell(svg, d->fs_info, l, &d->mc->cells[i], l->pos[i], d->units);
	svg_group_end(svg);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static void draw_device(struct svg *svg, const struct map_drawing *d,
			const struct map_device *dev, double y)
{
	const struct map_dev_layout *dl = d->devs;
	char line[400], s[UNITS_BUF_LEN], a[UNITS_BUF_LEN], f[UNITS_BUF_LEN];
	char h[UNITS_BUF_LEN], o[UNITS_BUF_LEN];
	const char *name = dev->dev->present ? base_name(dev->dev->io.path) : "missing";
	size_t n = 0;
	u32 i;

	append(line, sizeof(line), &n,
	       "devid %llu (%.60s): %s raw, %s allocated (%.1f%%), %s unallocated",
	       (unsigned long long)dev->devid, name, map_size(dev->size, d->units, s),
	       map_size(dev->allocated, d->units, a), pct_of(dev->allocated, dev->size),
	       map_size(dev->size > dev->allocated ? dev->size - dev->allocated : 0,
			d->units, f));
	if (dev->dead_hard)
		append(line, sizeof(line), &n, ", of it %s dead",
		       map_size(dev->dead_hard, d->units, h));
	if (dev->dead_soft)
		append(line, sizeof(line), &n, ", %s for metadata only",
		       map_size(dev->dead_soft, d->units, o));
	svg_text(svg, "device", 0, y + MAP_DEV_LABEL - 4, line);
	for (i = 0; i < dev->nr_segs; i++)
		draw_segment(svg, d->fs_info, d->fc, dl, dev, &dev->segs[i],
			     y + MAP_DEV_LABEL, d->units);
	/* the device's end, even where its last bytes are a sliver */
	svg_rect_stroked(svg, 0, y + MAP_DEV_LABEL, (double)dev->size / dl->bpp,
			 MAP_DEV_BAR, "none", MAP_FREE_STROKE);
}

static void draw_devices(struct svg *svg, const struct map_drawing *d)
{
	char line[256], px[UNITS_BUF_LEN];
	u32 i;

	snprintf(line, sizeof(line),
		 "Devices: physical space from offset 0, raw bytes, one scale for all (a pixel %s)",
		 map_size(d->devs->bpp, d->units, px));
	svg_text(svg, "heading", MAP_MARGIN, d->devs_top + MAP_HEADING - 10, line);
	svg_group_begin(svg, "devices", MAP_MARGIN, d->devs_top + MAP_HEADING);
	for (i = 0; i < d->devs->md.nr; i++)
		draw_device(svg, d, &d->devs->md.devs[i], i * MAP_DEV_ROW);
	svg_group_end(svg);
}

enum {
	LEGEND_SHADE = MAP_NR_TYPES,
	LEGEND_RO,
	LEGEND_FREE,
	LEGEND_DEAD,
	LEGEND_SOFT,
	LEGEND_WRAP,
	LEGEND_NR,
};

/* Dead or metadata-only bytes on any device */
static bool any_dead(const struct map_drawing *d, bool soft)
{
	u32 i;

	for (i = 0; i < d->devs->md.nr; i++)
		if (soft ? d->devs->md.devs[i].dead_soft : d->devs->md.devs[i].dead_hard)
			return true;
	return false;
}

static bool legend_has(const struct map_drawing *d, int entry)
{
	if (entry < MAP_NR_TYPES)
		return d->sum->types[entry].count != 0;
	if (entry == LEGEND_WRAP)
		return d->layout->nr_wrapped != 0;
	if (entry == LEGEND_DEAD || entry == LEGEND_SOFT)
		return any_dead(d, entry == LEGEND_SOFT);
	return true;
}

static int legend_entries(const struct map_drawing *d)
{
	int e, n = 0;

	for (e = 0; e < LEGEND_NR; e++)
		n += legend_has(d, e);
	return n;
}

static void legend_text(const struct map_drawing *d, int e, char *buf, size_t len)
{
	const struct map_tally *t = &d->sum->types[e < MAP_NR_TYPES ? e : 0];
	char l[UNITS_BUF_LEN], u[UNITS_BUF_LEN];

	switch (e) {
	case LEGEND_SHADE:
		snprintf(buf, len,
			 "shade: how full a block group is (used / length), light = empty, dark = full");
		return;
	case LEGEND_RO:
		snprintf(buf, len, "hatched: a read-only block group, from which nothing is allocated");
		return;
	case LEGEND_FREE:
		snprintf(buf, len, "grey: unallocated device space (raw), where new block groups can go");
		return;
	case LEGEND_DEAD:
		snprintf(buf, len,
			 "red hatch: dead, no new data (%s) or metadata (%s) chunk can use it, or the first MiB (hover: why)",
			 btrfs_bg_profile_name(d->fc->data.profile),
			 btrfs_bg_profile_name(d->fc->metadata.present ? d->fc->metadata.profile :
					       d->fc->data.profile));
		return;
	case LEGEND_SOFT:
		snprintf(buf, len, "orange hatch: only metadata (%s) chunks can use it, no data (%s) chunk",
			 btrfs_bg_profile_name(d->fc->metadata.profile),
			 btrfs_bg_profile_name(d->fc->data.profile));
		return;
	case LEGEND_WRAP:
		snprintf(buf, len, "arrows at a row's end and start: one block group, longer than a row, going on in the next row");
		return;
	}
	snprintf(buf, len,
		 "%s, %s: %llu block group%s, %s logical, %s used",
		 map_type_name(e), map_styles[e].colour, (unsigned long long)t->count,
		 t->count == 1 ? "" : "s", map_size(t->length, d->units, l),
		 map_size(t->used, d->units, u));
}

static void legend_swatch(struct svg *svg, int e, double x, double y)
{
	char url[40];

	switch (e) {
	case LEGEND_SHADE:
		svg_rect_stroked(svg, x, y, 60, 14, "url(#fill-shade)", "#999");
		return;
	case LEGEND_RO:
		svg_rect_stroked(svg, x, y, 60, 14, "#fff", "#999");
		svg_rect(svg, NULL, x, y, 60, 14, "url(#ro-hatch)");
		return;
	case LEGEND_FREE:
		svg_rect_stroked(svg, x, y, 60, 14, MAP_FREE_FILL, MAP_FREE_STROKE);
		return;
	case LEGEND_DEAD:
	case LEGEND_SOFT:
		svg_rect_stroked(svg, x, y, 60, 14, MAP_FREE_FILL, MAP_FREE_STROKE);
		svg_rect(svg, NULL, x, y, 60, 14,
			 e == LEGEND_DEAD ? "url(#dead-hatch)" : "url(#soft-hatch)");
		return;
	case LEGEND_WRAP: {
		double xy[6] = { x + 26, y, x + 36, y + 7, x + 26, y + 14 };

		svg_rect_stroked(svg, x, y, 60, 14, "#6f8fb8", "#999");
		svg_polygon(svg, NULL, "#000", xy, 3);
		return;
	}
	}
	snprintf(url, sizeof(url), "url(#fill-%s)", map_styles[e].id);
	svg_rect_stroked(svg, x, y, 60, 14, url, "#999");
}

static void draw_legend(struct svg *svg, const struct map_drawing *d)
{
	const double col_w = MAP_GRID_W / MAP_LEGEND_COLS;
	char text[200];
	double x, y;
	int e, i = 0;

	for (e = 0; e < LEGEND_NR; e++) {
		if (!legend_has(d, e))
			continue;
		x = MAP_MARGIN + (i % MAP_LEGEND_COLS) * col_w;
		y = d->legend_top + (i / MAP_LEGEND_COLS) * MAP_LEGEND_ROW;
		legend_swatch(svg, e, x, y);
		legend_text(d, e, text, sizeof(text));
		svg_text(svg, "legend", x + 68, y + 12, text);
		i++;
	}
}

#define MAP_MAX_NOTES	4
#define MAP_NOTE_LEN	320

/* The lines under the legend: where the map is not exact */
static int map_notes(const struct map_drawing *d, char notes[][MAP_NOTE_LEN])
{
	const struct map_cells *mc = d->mc;
	const struct map_layout *l = d->layout;
	char size[UNITS_BUF_LEN];
	u32 i, merged = 0;
	int n = 0;

	snprintf(notes[n++], MAP_NOTE_LEN,
		 "A block group is never cut at a row's end unless it is longer than a row, "
		 "so a row may end short.");
	if (mc->nr != d->sum->all.count)
		snprintf(notes[n++], MAP_NOTE_LEN,
			 "%llu block groups drawn as %u cells: runs of up to %u neighbours %s.",
			 (unsigned long long)d->sum->all.count, mc->nr, mc->per_cell,
			 mc->mixed_kinds ?
			 "merged whatever their type, coloured as their largest type" :
			 "of the same type, profile and read-only state merged");
	if (mc->nr_widened)
		snprintf(notes[n++], MAP_NOTE_LEN,
			 "%u cell%s smaller than %s drawn that large, to be visible.",
			 mc->nr_widened, mc->nr_widened == 1 ? "" : "s",
			 map_size(l->unit / MAP_MIN_CELL_PART, d->units, size));
	for (i = 0; i < d->devs->md.nr; i++)
		merged += d->devs->md.devs[i].merged;
	if (merged)
		snprintf(notes[n++], MAP_NOTE_LEN,
			 "On %u device%s, touching stripes narrower than %.0f pixels are merged "
			 "(hover for what a segment holds); a stripe is at least %.0f pixel wide.",
			 merged, merged == 1 ? "" : "s", MAP_DEV_MERGE_PX, MAP_DEV_MIN_PX);
	return n;
}

static void draw_notes(struct svg *svg, const struct map_drawing *d)
{
	char notes[MAP_MAX_NOTES][MAP_NOTE_LEN];
	double y = d->legend_top + ((legend_entries(d) + MAP_LEGEND_COLS - 1) /
				    MAP_LEGEND_COLS) * MAP_LEGEND_ROW + 8;
	int i, n = map_notes(d, notes);

	for (i = 0; i < n; i++)
		svg_text(svg, "note", MAP_MARGIN, y + i * MAP_NOTE_ROW, notes[i]);
}

static void draw_defs(struct svg *svg, const struct map_drawing *d)
{
	char id[32], from[8], to[8];
	int t;

	svg_defs_begin(svg);
	svg_hatch_pattern(svg, "ro-hatch", 7, "#000", "#fff", 0.7);
	svg_hatch_pattern(svg, "dead-hatch", 6, MAP_DEAD_COLOUR, NULL, 0.9);
	svg_hatch_pattern(svg, "soft-hatch", 6, MAP_SOFT_COLOUR, NULL, 0.9);
	svg_linear_gradient(svg, "fill-shade", "#f4f4f4", "#303030");
	for (t = 0; t < MAP_NR_TYPES; t++) {
		if (!d->sum->types[t].count)
			continue;
		snprintf(id, sizeof(id), "fill-%s", map_styles[t].id);
		shade(t, 0, from, sizeof(from));
		shade(t, 1, to, sizeof(to));
		svg_linear_gradient(svg, id, from, to);
	}
	svg_defs_end(svg);
}

static void size_drawing(struct map_drawing *d)
{
	int legend_rows = (legend_entries(d) + MAP_LEGEND_COLS - 1) / MAP_LEGEND_COLS;
	char notes[MAP_MAX_NOTES][MAP_NOTE_LEN];

	d->nr_notes = map_notes(d, notes);
	d->width = MAP_GRID_W + 2 * MAP_MARGIN;
	d->devs_top = MAP_GRID_TOP + d->layout->grid.rows * d->layout->grid.side + 12;
	d->legend_top = d->devs_top + MAP_HEADING + d->devs->md.nr * MAP_DEV_ROW + 8;
	d->height = ceil(d->legend_top + legend_rows * MAP_LEGEND_ROW + 8 +
			 d->nr_notes * MAP_NOTE_ROW);
}

static int write_svg(FILE *out, struct map_drawing *d)
{
	struct svg svg;

	size_drawing(d);
	svg_begin(&svg, out, d->width, d->height);
	svg_style(&svg, map_css);
	draw_defs(&svg, d);
	svg_rect(&svg, NULL, 0, 0, d->width, d->height, "#fff");
	draw_header(&svg, d);
	draw_grid(&svg, d);
	draw_devices(&svg, d);
	draw_legend(&svg, d);
	draw_notes(&svg, d);
	return svg_end(&svg);
}

/* What the map must not be written over: the inputs, and what was opened */
static int map_inputs(const struct btrfs_fs_info *fs_info, char **paths, int nr_paths,
		      struct output_inputs *in, int **fds)
{
	u32 i;

	memset(in, 0, sizeof(*in));
	in->paths = paths;
	in->nr_paths = nr_paths;
	*fds = NULL;
	if (!fs_info || !fs_info->nr_devices)
		return 0;
	/* --scan opens members that were not named */
	*fds = calloc(fs_info->nr_devices, sizeof(**fds));
	if (!*fds)
		return -ENOMEM;
	for (i = 0; i < fs_info->nr_devices; i++)
		(*fds)[i] = fs_info->devices[i].present ? fs_info->devices[i].io.fd : -1;
	in->fds = *fds;
	in->nr_fds = fs_info->nr_devices;
	return 0;
}

static int refuse_output(const char *path)
{
	error("refusing to write the map to '%s': it is a block device or one of the inputs",
	      path);
	return EXIT_USAGE;
}

static void print_tally(struct fmt_ctx *fctx, const struct map_tally *t)
{
	fmt_u64(fctx, "block_groups", "block_groups", t->count);
	fmt_size(fctx, "length", "length", t->length);
	fmt_size(fctx, "used", "used", t->used);
	fmt_u64(fctx, "read_only", "read_only", t->read_only);
}

static void print_summary(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
			  const struct map_summary *s)
{
	char fsid[37], range[32];
	int t, b;

	uuid_text(fs_info->fsid, fsid);
	fmt_group_start(fctx, "map", "Block groups");
	fmt_str(fctx, "fsid", "UUID", fsid);
	fmt_u64(fctx, "block_groups", "Count", s->all.count);
	fmt_size(fctx, "length", "Length", s->all.length);
	fmt_size(fctx, "used", "Used", s->all.used);
	fmt_u64(fctx, "read_only", "Read-only", s->all.read_only);
	fmt_group_end(fctx);

	fmt_array_start(fctx, "types", "By type");
	for (t = 0; t < MAP_NR_TYPES; t++) {
		if (!s->types[t].count)
			continue;
		fmt_group_start(fctx, NULL, NULL);
		fmt_str(fctx, "type_name", "type", map_type_name(t));
		print_tally(fctx, &s->types[t]);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);

	fmt_array_start(fctx, "fill", "By fill (used / length)");
	for (b = 0; b < MAP_FILL_BUCKETS; b++) {
		snprintf(range, sizeof(range), "%d-%d%%", b * 100 / MAP_FILL_BUCKETS,
			 (b + 1) * 100 / MAP_FILL_BUCKETS);
		fmt_group_start(fctx, NULL, NULL);
		fmt_str(fctx, "range", "fill", range);
		fmt_u64(fctx, "min_percent", NULL, b * 100 / MAP_FILL_BUCKETS);
		fmt_u64(fctx, "max_percent", NULL, (b + 1) * 100 / MAP_FILL_BUCKETS);
		print_tally(fctx, &s->fill[b]);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

/* The forecast's figure of @devid in @bytes (per fc->devids) */
static u64 fc_dev_bytes(const struct btrfs_forecast *fc, const u64 *bytes, u64 devid)
{
	u32 i;

	for (i = 0; bytes && i < fc->nr_devs; i++)
		if (fc->devids[i] == devid)
			return bytes[i];
	return 0;
}

static void print_raw(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
		      const struct map_summary *s, const struct btrfs_forecast *fc)
{
	char why[400];
	u32 i;

	fmt_group_start(fctx, "raw", "Raw (on the devices)");
	fmt_u64(fctx, "devices", "Devices", s->raw.nr_devices);
	fmt_size(fctx, "size", "Size", s->raw.size);
	fmt_size(fctx, "allocated", "Allocated", s->raw.allocated);
	fmt_size(fctx, "unallocated", "Unallocated", s->raw.unallocated);
	fmt_size(fctx, "stripes", "Stripes of block groups", s->raw.stripes);
	fmt_group_end(fctx);

	fmt_array_start(fctx, "devices", "Devices (raw)");
	for (i = 0; i < fs_info->nr_devices; i++) {
		const struct btrfs_device *dev = &fs_info->devices[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", "devid", dev->devid);
		fmt_str(fctx, "path", "path", dev->present ? dev->io.path : "missing");
		fmt_size(fctx, "size", "size", dev->total_bytes);
		fmt_size(fctx, "allocated", "allocated", dev->bytes_used);
		fmt_size(fctx, "unallocated", "unallocated",
			 dev->total_bytes > dev->bytes_used ?
			 dev->total_bytes - dev->bytes_used : 0);
		fmt_size(fctx, "dead", "dead",
			 fc_dev_bytes(fc, fc->data.hard, dev->devid));
		fmt_size(fctx, "metadata_only", "metadata only",
			 fc_dev_bytes(fc, fc->data.soft, dev->devid));
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	fmt_group_start(fctx, "dead_space", "Dead space (forecast, formulas.md section 21.4)");
	fmt_str(fctx, "data_profile", "Data profile", btrfs_bg_profile_name(fc->data.profile));
	fmt_str(fctx, "metadata_profile", "Metadata profile",
		btrfs_bg_profile_name(fc->metadata.present ? fc->metadata.profile :
				      fc->data.profile));
	fmt_str(fctx, "dead", "Dead", dead_reason(fc, MAP_DEAD_HARD, why, sizeof(why)));
	fmt_str(fctx, "metadata_only", "Metadata only",
		dead_reason(fc, MAP_DEAD_SOFT, why, sizeof(why)));
	fmt_group_end(fctx);
}

static void print_svg_section(struct fmt_ctx *fctx, const char *path,
			      const struct map_drawing *d)
{
	fmt_group_start(fctx, "svg", "SVG");
	fmt_str(fctx, "file", "File", path);
	fmt_u64(fctx, "cells", "Cells", d->mc->nr);
	fmt_u64(fctx, "block_groups_per_cell", "Most block groups in a cell",
		d->mc->nr ? d->mc->per_cell : 0);
	fmt_bool(fctx, "mixed_cells", "Cells may mix types", d->mc->mixed_kinds);
	fmt_size(fctx, "square", "Square", d->layout->unit);
	fmt_u64(fctx, "wrapped_cells", "Cells longer than a row (whole rows)", d->layout->nr_wrapped);
	fmt_u64(fctx, "device_segments", "Device segments", d->devs->nr_segs);
	fmt_size(fctx, "device_pixel", "Device bytes a pixel", d->devs->bpp);
	fmt_u64(fctx, "width", "Width (px)", (u64)d->width);
	fmt_u64(fctx, "height", "Height (px)", (u64)d->height);
	fmt_group_end(fctx);
}

static const char *output_name(const char *path)
{
	return output_is_stdout(path) ? "standard output" : path;
}

/* Draw the map into args->svg_path; 0 or an exit status */
static int map_write(const struct map_args *args, const struct btrfs_fs_info *fs_info,
		     char **inputs, int nr_inputs, struct map_drawing *d)
{
	struct output_inputs in;
	FILE *out;
	int *fds;
	int ret;

	if (map_inputs(fs_info, inputs, nr_inputs, &in, &fds))
		return cmd_out_of_memory();
	ret = output_open(args->svg_path, &in, &out);
	free(fds);
	if (ret == -EPERM)
		return refuse_output(args->svg_path);
	if (ret) {
		error("cannot create '%s': %s", output_name(args->svg_path), strerror(-ret));
		return EXIT_FS_ERROR;
	}
	ret = write_svg(out, d);
	if (fclose(out) || ret) {
		error("cannot write '%s': %s", output_name(args->svg_path), strerror(EIO));
		return EXIT_FS_ERROR;
	}
	return 0;
}

static int draw_map(const struct map_args *args, const struct btrfs_fs_info *fs_info,
		    char **inputs, int nr_inputs, struct map_drawing *d)
{
	if (map_build_cells(fs_info, args->max_cells, d->mc) ||
	    compute_layout(d->mc, d->sum->all.length, d->layout) ||
	    compute_dev_layout(fs_info, MAP_DEV_MAX_SEGS, d->fc, d->devs))
		return cmd_out_of_memory();
	return map_write(args, fs_info, inputs, nr_inputs, d);
}

/* What map is asked, and the drawing it builds */
struct map_ctx {
	struct map_args args;
	char **inputs;
	int nr_inputs;
	struct map_summary sum;
	struct map_cells mc;
	struct map_layout layout;
	struct map_dev_layout devs;
	struct map_drawing d;
	struct space_report report;	/* for the forecast */
	struct btrfs_forecast fc;	/* where new chunks cannot go */
};

static int map_ctx_option(int opt, const char *arg, void *ctx)
{
	struct map_ctx *m = ctx;

	return map_option(opt, arg, &m->args);
}

/* fail before reading anything; checked again on the opened file */
static int map_check(void *ctx, int nr_paths, char **paths)
{
	struct map_ctx *m = ctx;
	struct output_inputs in;
	int *fds;

	m->inputs = paths;
	m->nr_inputs = nr_paths;
	map_inputs(NULL, paths, nr_paths, &in, &fds);
	if (m->args.svg_path && output_is_input(m->args.svg_path, &in))
		return refuse_output(m->args.svg_path);
	return 0;
}

static void map_release(void *ctx)
{
	struct map_ctx *m = ctx;

	map_free_cells(&m->mc);
	free_layouts(&m->layout, &m->devs);
	btrfs_free_forecast(&m->fc);
	btrfs_free_space_report(&m->report);
}

static int run_map(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
		   void *ctx)
{
	struct map_ctx *m = ctx;
	struct forecast_options fopts;
	struct report_options ropts;
	int ret = 0;

	report_options_init(&ropts);
	forecast_options_init(&fopts);
	if (btrfs_build_space_report(fs_info, &ropts, &m->report))
		return cmd_out_of_memory();
	if (btrfs_build_forecast(&m->report, &fopts, &m->fc)) {
		btrfs_free_space_report(&m->report);
		return cmd_out_of_memory();
	}
	m->d = (struct map_drawing) {
		.fs_info = fs_info,
		.fc = &m->fc,
		.sum = &m->sum,
		.mc = &m->mc,
		.layout = &m->layout,
		.devs = &m->devs,
		.units = opts->units,
	};
	map_summarize(fs_info, &m->sum);
	if (m->args.svg_path)
		ret = draw_map(&m->args, fs_info, m->inputs, m->nr_inputs, &m->d);
	if (ret)
		map_release(m);
	return ret;
}

/* the map on standard output is all that goes there */
static bool map_prints(const void *ctx)
{
	const struct map_ctx *m = ctx;

	return !(m->args.svg_path && output_is_stdout(m->args.svg_path));
}

static void map_print(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info, void *ctx)
{
	struct map_ctx *m = ctx;

	print_summary(fctx, fs_info, &m->sum);
	print_raw(fctx, fs_info, &m->sum, &m->fc);
	if (m->args.svg_path)
		print_svg_section(fctx, m->args.svg_path, &m->d);
}

static const struct cmd_spec map_spec = {
	CMD_OWN_OPTIONS(map),
	.check = map_check,
	.block_groups = cmd_want_block_groups,
	.report = run_map,
	.prints = map_prints,
	.print = map_print,
	.release = map_release,
};

static int cmd_map(const struct cmd_struct *cmd, const struct cmd_options *global,
		   int argc, char **argv)
{
	struct map_ctx m = { .args = { .max_cells = MAP_DEFAULT_CELLS } };

	return cmd_run(cmd, global, argc, argv, &map_spec, &m);
}
DEFINE_COMMAND(map, "map");
