// SPDX-License-Identifier: GPL-2.0
/*
 * A picture of the block groups, in the spirit of btrfs-heatmap but from an
 * unmounted filesystem: every block group is a cell whose area is its
 * length, coloured by type and shaded by how full it is.  Without --svg,
 * the same block groups summed up by type and by fill.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>
#include "cmds/commands.h"
#include "cmds/report.h"
#include "common/grid.h"
#include "common/help.h"
#include "common/messages.h"
#include "common/output-file.h"
#include "common/parse-utils.h"
#include "common/svg.h"
#include "common/units.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/map-layout.h"
#include "kernel-shared/volumes.h"

static const char * const cmd_map_usage[] = {
	"btrfs-space map [options] <device|image> [<device|image>...]",
	"Draw every block group as a cell of an SVG map, or sum them up by type and fill",
	"",
	"--svg FILE         write the map to FILE (created or truncated, never an input)",
	"--max-cells N      merge runs of block groups to draw at most N cells (default 4096)",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

/* The drawing, in pixels */
#define MAP_MARGIN		20.0
#define MAP_GRID_W		1000.0
#define MAP_GRID_H		640.0	/* aimed at; a small map is shorter */
#define MAP_GRID_TOP		70.0
#define MAP_MIN_SIDE		8.0
#define MAP_MAX_SIDE		48.0
#define MAP_LEGEND_ROW		22.0
#define MAP_LEGEND_COLS		3
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

/* Colours of an empty and of a full block group of each type */
static const struct map_style {
	const char *id;
	u8 empty[3];
	u8 full[3];
} map_styles[MAP_NR_TYPES] = {
	[MAP_DATA]	= { "data",	{ 0xd6, 0xe6, 0xf7 }, { 0x17, 0x4a, 0x8c } },
	[MAP_METADATA]	= { "metadata",	{ 0xfd, 0xe3, 0xc4 }, { 0xc2, 0x51, 0x00 } },
	[MAP_SYSTEM]	= { "system",	{ 0xd4, 0xee, 0xd2 }, { 0x1b, 0x78, 0x37 } },
	[MAP_MIXED]	= { "mixed",	{ 0xe4, 0xd8, 0xef }, { 0x5b, 0x2a, 0x86 } },
	[MAP_OTHER]	= { "other",	{ 0xe0, 0xe0, 0xe0 }, { 0x4a, 0x4a, 0x4a } },
};

/* Squares of @unit bytes on a grid of pixels */
struct map_layout {
	u64 unit;
	double units;		/* drawn in all */
	struct grid grid;
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

/* The squares as large as fit the drawing */
static void compute_layout(struct map_cells *mc, u64 total, struct map_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->unit = map_square_size(mc, total);
	map_widen_cells(mc, l->unit);
	l->units = (double)mc->drawn_total / l->unit;
	grid_fit(&l->grid, l->units, MAP_GRID_W, MAP_GRID_H, MAP_MIN_SIDE, MAP_MAX_SIDE);
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

static void shade(enum map_type type, double ratio, char *buf, size_t len)
{
	const struct map_style *s = &map_styles[type];
	int c[3], i;

	for (i = 0; i < 3; i++)
		c[i] = lround(s->empty[i] + (s->full[i] - s->empty[i]) * ratio);
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

static void cell_tooltip(const struct btrfs_fs_info *fs_info, const struct map_cell *cell,
			 unsigned int units, char *buf, size_t len)
{
	const struct btrfs_block_group *bg = &fs_info->block_groups[cell->first];
	char l[UNITS_BUF_LEN], u[UNITS_BUF_LEN], s[UNITS_BUF_LEN];
	double pct = 100 * map_fill_ratio(cell->used, cell->length);
	size_t n = 0;
	int t;

	if (cell->count == 1) {
		snprintf(buf, len,
			 "block group %llu\nlength %s, used %s (%.1f%%)\n%s %s, flags 0x%llx%s%s%s",
			 (unsigned long long)bg->start, map_size(bg->length, units, l),
			 map_size(bg->used, units, u), pct, btrfs_bg_type_name(bg->flags),
			 btrfs_bg_profile_name(bg->flags), (unsigned long long)bg->flags,
			 bg->bytes_super ? "\nsuperblock copies " : "",
			 bg->bytes_super ? map_size(bg->bytes_super, units, s) : "",
			 bg->ro ? "\nread-only" : "");
		return;
	}
	append(buf, len, &n, "%u block groups, %llu to %llu\nlength %s, used %s (%.1f%%)",
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

static void draw_cell(struct svg *svg, const struct btrfs_fs_info *fs_info,
		      const struct map_layout *l, const struct map_cell *cell,
		      u64 offset, unsigned int units)
{
	const struct btrfs_block_group *bg = &fs_info->block_groups[cell->first];
	double p0 = (double)offset / l->unit;
	double p1 = (double)(offset + cell->drawn) / l->unit;
	char fill[8], num[32], tip[640];

	shade(map_cell_type(cell), map_fill_ratio(cell->used, cell->length), fill, sizeof(fill));
	cell_tooltip(fs_info, cell, units, tip, sizeof(tip));
	svg_shape_begin(svg, "bg", fill);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)cell->start);
	svg_shape_attr(svg, "data-start", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)cell->length);
	svg_shape_attr(svg, "data-length", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)cell->used);
	svg_shape_attr(svg, "data-used", num);
	if (cell->count == 1) {
		snprintf(num, sizeof(num), "0x%llx", (unsigned long long)bg->flags);
		svg_shape_attr(svg, "data-flags", num);
	}
	snprintf(num, sizeof(num), "%u", cell->count);
	svg_shape_attr(svg, "data-count", num);
	cell_rects(svg, l, p0, p1);
	svg_shape_end(svg, tip);
	if (!cell->nr_ro)
		return;
	/* hatching on top, transparent to the pointer so the tooltip stays */
	svg_shape_begin(svg, "ro", "url(#ro-hatch)");
	cell_rects(svg, l, p0, p1);
	svg_shape_end(svg, NULL);
}

static const char map_css[] =
	"text { font-family: sans-serif; fill: #222; }\n"
	".title { font-size: 18px; font-weight: bold; }\n"
	".subtitle, .legend { font-size: 13px; }\n"
	".note { font-size: 12px; fill: #555; }\n"
	".bg { stroke: #fff; stroke-width: 1; }\n"
	".bg:hover { stroke: #000; stroke-width: 1.5; }\n"
	".ro { pointer-events: none; }\n";

struct map_drawing {
	const struct btrfs_fs_info *fs_info;
	const struct map_summary *sum;
	const struct map_cells *mc;
	const struct map_layout *layout;
	unsigned int units;
	double width;
	double height;
	double legend_top;
	int nr_notes;
};

static int legend_entries(const struct map_summary *sum)
{
	int t, n = 1;		/* read-only */

	for (t = 0; t < MAP_NR_TYPES; t++)
		n += sum->types[t].count != 0;
	return n;
}

static void draw_header(struct svg *svg, const struct map_drawing *d)
{
	const struct btrfs_fs_info *fs_info = d->fs_info;
	char fsid[37], label[BTRFS_LABEL_SIZE + 1], line[BTRFS_LABEL_SIZE + 96];
	char a[UNITS_BUF_LEN], t[UNITS_BUF_LEN], u[UNITS_BUF_LEN];

	uuid_unparse(fs_info->fsid, fsid);
	snprintf(label, sizeof(label), "%.*s", BTRFS_LABEL_SIZE, fs_info->super.label);
	snprintf(line, sizeof(line), "Block groups of %s%s%s%s", fsid,
		 label[0] ? " (" : "", label, label[0] ? ")" : "");
	svg_text(svg, "title", MAP_MARGIN, 30, line);
	snprintf(line, sizeof(line),
		 "%llu block groups, %s allocated of %s, %s used (%.1f%%)",
		 (unsigned long long)d->sum->all.count, map_size(d->sum->all.length, d->units, a),
		 map_size(btrfs_super_total_bytes(&fs_info->super), d->units, t),
		 map_size(d->sum->all.used, d->units, u),
		 100 * map_fill_ratio(d->sum->all.used, d->sum->all.length));
	svg_text(svg, "subtitle", MAP_MARGIN, 52, line);
}

static void draw_legend(struct svg *svg, const struct map_drawing *d)
{
	const double col_w = MAP_GRID_W / MAP_LEGEND_COLS;
	char id[32], url[40], text[160], size[UNITS_BUF_LEN];
	double x, y;
	int t, i = 0;

	for (t = 0; t <= MAP_NR_TYPES; t++) {
		x = MAP_MARGIN + (i % MAP_LEGEND_COLS) * col_w;
		y = d->legend_top + (i / MAP_LEGEND_COLS) * MAP_LEGEND_ROW;
		if (t == MAP_NR_TYPES) {
			svg_rect_stroked(svg, x, y, 60, 14, "#fff", "#999");
			svg_rect(svg, NULL, x, y, 60, 14, "url(#ro-hatch)");
			svg_text(svg, "legend", x + 68, y + 12, "read-only");
			break;
		}
		if (!d->sum->types[t].count)
			continue;
		snprintf(id, sizeof(id), "fill-%s", map_styles[t].id);
		snprintf(url, sizeof(url), "url(#%s)", id);
		svg_rect_stroked(svg, x, y, 60, 14, url, "#999");
		snprintf(text, sizeof(text), "%s: %llu, %s", map_type_name(t),
			 (unsigned long long)d->sum->types[t].count,
			 map_size(d->sum->types[t].length, d->units, size));
		svg_text(svg, "legend", x + 68, y + 12, text);
		i++;
	}
}

#define MAP_MAX_NOTES	3
#define MAP_NOTE_LEN	320

/* The lines under the legend: how to read the map, and where it is not exact */
static int map_notes(const struct map_drawing *d, char notes[][MAP_NOTE_LEN])
{
	const struct map_cells *mc = d->mc;
	const struct map_layout *l = d->layout;
	char row[UNITS_BUF_LEN], size[UNITS_BUF_LEN];
	int n = 0;

	snprintf(notes[n++], MAP_NOTE_LEN,
		 "Logical order, row by row; area is length: a row is %s (%u squares of %s); "
		 "shade is used/length, light = empty, dark = full.",
		 map_size(l->unit * l->grid.cols, d->units, row), l->grid.cols,
		 map_size(l->unit, d->units, size));
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
	return n;
}

static void draw_notes(struct svg *svg, const struct map_drawing *d)
{
	char notes[MAP_MAX_NOTES][MAP_NOTE_LEN];
	double y = d->legend_top + ((legend_entries(d->sum) + MAP_LEGEND_COLS - 1) /
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
	int legend_rows = (legend_entries(d->sum) + MAP_LEGEND_COLS - 1) / MAP_LEGEND_COLS;
	char notes[MAP_MAX_NOTES][MAP_NOTE_LEN];

	d->nr_notes = map_notes(d, notes);
	d->width = MAP_GRID_W + 2 * MAP_MARGIN;
	d->legend_top = MAP_GRID_TOP + d->layout->grid.rows * d->layout->grid.side + 20;
	d->height = ceil(d->legend_top + legend_rows * MAP_LEGEND_ROW + 8 +
			 d->nr_notes * MAP_NOTE_ROW);
}

static int write_svg(FILE *out, struct map_drawing *d)
{
	struct svg svg;
	u64 offset = 0;
	u32 i;

	size_drawing(d);
	svg_begin(&svg, out, d->width, d->height);
	svg_style(&svg, map_css);
	draw_defs(&svg, d);
	svg_rect(&svg, NULL, 0, 0, d->width, d->height, "#fff");
	draw_header(&svg, d);
	svg_group_begin(&svg, "grid", MAP_MARGIN, MAP_GRID_TOP);
	for (i = 0; i < d->mc->nr; i++) {
		draw_cell(&svg, d->fs_info, d->layout, &d->mc->cells[i], offset, d->units);
		offset += d->mc->cells[i].drawn;
	}
	svg_group_end(&svg);
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

	uuid_unparse(fs_info->fsid, fsid);
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
	fmt_u64(fctx, "width", "Width (px)", (u64)d->width);
	fmt_u64(fctx, "height", "Height (px)", (u64)d->height);
	fmt_group_end(fctx);
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
		error("cannot create '%s': %s", args->svg_path, strerror(-ret));
		return EXIT_FS_ERROR;
	}
	ret = write_svg(out, d);
	if (fclose(out) || ret) {
		error("cannot write '%s': %s", args->svg_path, strerror(EIO));
		return EXIT_FS_ERROR;
	}
	return 0;
}

static int run_map(const struct map_args *args, const struct cmd_options *opts,
		   const struct btrfs_fs_info *fs_info, char **inputs, int nr_inputs)
{
	struct map_summary sum;
	struct map_cells mc = { 0 };
	struct map_layout layout = { 0 };
	struct map_drawing d = {
		.fs_info = fs_info,
		.sum = &sum,
		.mc = &mc,
		.layout = &layout,
		.units = opts->units,
	};
	struct fmt_ctx fctx;
	int ret = 0;

	map_summarize(fs_info, &sum);
	if (args->svg_path) {
		if (map_build_cells(fs_info, args->max_cells, &mc))
			return cmd_out_of_memory();
		compute_layout(&mc, sum.all.length, &layout);
		ret = map_write(args, fs_info, inputs, nr_inputs, &d);
	}
	if (!ret) {
		fmt_start(&fctx, stdout, opts->format, opts->units, "map");
		print_mode(&fctx, fs_info);
		print_summary(&fctx, fs_info, &sum);
		if (args->svg_path)
			print_svg_section(&fctx, args->svg_path, &d);
		fmt_end(&fctx);
	}
	map_free_cells(&mc);
	return ret;
}

static int cmd_map(const struct cmd_struct *cmd, const struct cmd_options *global,
		   int argc, char **argv)
{
	struct cmd_options opts = *global;
	struct map_args args = { .max_cells = MAP_DEFAULT_CELLS };
	struct cmd_extra_options extra = {
		.longopts = map_longopts,
		.handle = map_option,
		.ctx = &args,
		.expect = map_option_expect,
	};
	struct output_inputs in;
	struct btrfs_fs_info fs_info;
	int *fds;
	int first, ret;

	ret = cmd_parse_options(cmd, &opts, &extra, argc, argv, &first);
	if (ret)
		return ret == CMD_HELP_SHOWN ? 0 : ret;
	if (first >= argc)
		return cmd_missing_device(cmd);
	/* fail before reading anything; checked again on the opened file */
	map_inputs(NULL, argv + first, argc - first, &in, &fds);
	if (args.svg_path && output_is_input(args.svg_path, &in))
		return refuse_output(args.svg_path);
	ret = cmd_open_fs(&fs_info, &opts, argc - first, argv + first, true);
	if (!ret)
		ret = run_map(&args, &opts, &fs_info, argv + first, argc - first);
	btrfs_close_fs(&fs_info);
	return ret;
}
DEFINE_COMMAND(map, "map");
