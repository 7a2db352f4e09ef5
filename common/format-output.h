/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One printer for text and JSON.  Callers describe their report once, as a
 * tree of groups, arrays and values; this layer decides how it looks.  In
 * JSON every value is raw (sizes are integers of bytes); in text, sizes
 * follow the unit mode, top-level values are "Label: value" lines aligned
 * in a column, and each element of an array is one greppable line.  A
 * table (fmt_table_start) is an array whose elements print in text as
 * aligned columns under a header, numbers right-aligned; an array inside
 * an element puts one element per line (a chunk's stripes).  A value
 * with a NULL key is for text only, one with a NULL label for JSON only.
 */
#ifndef BTRFS_SPACE_FORMAT_OUTPUT_H
#define BTRFS_SPACE_FORMAT_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "common/types.h"

#define FMT_MAX_DEPTH	12
#define FMT_JSON_VERSION "1"

enum fmt_mode {
	FMT_TEXT,
	FMT_JSON,
	FMT_OPENMETRICS,	/* only fmt_metric*() print; the rest goes nowhere */
	FMT_NAGIOS,		/* only fmt_nagios() prints */
};

struct fmt_table;

struct fmt_ctx {
	FILE *out;
	FILE *raw;		/* openmetrics, nagios: stdout, while out is /dev/null */
	enum fmt_mode mode;
	unsigned int units;
	int depth;
	int row_depth;		/* text: depth of the array element being printed as a row, or 0 */
	bool first[FMT_MAX_DEPTH];
	bool is_array[FMT_MAX_DEPTH];
	bool labelled[FMT_MAX_DEPTH];	/* text: the container's "Label:" line printed */
	struct fmt_table *table;	/* text: the table being collected, or NULL */
};

void fmt_start(struct fmt_ctx *ctx, FILE *out, enum fmt_mode mode,
	       unsigned int units, const char *command);
void fmt_end(struct fmt_ctx *ctx);

/* @key is the JSON key (ignored inside arrays), @label the text heading */
void fmt_group_start(struct fmt_ctx *ctx, const char *key, const char *label);
void fmt_group_end(struct fmt_ctx *ctx);
void fmt_array_start(struct fmt_ctx *ctx, const char *key, const char *label);
void fmt_array_end(struct fmt_ctx *ctx);

/*
 * An array printed in text as a table; in JSON the same as an array.
 * Tables do not nest; elements are fmt_group_start(ctx, NULL, NULL).
 */
void fmt_table_start(struct fmt_ctx *ctx, const char *key, const char *label);
void fmt_table_end(struct fmt_ctx *ctx);
/* Text: a dashed line between the table's elements (nothing in JSON) */
void fmt_table_rule(struct fmt_ctx *ctx);

void fmt_u64(struct fmt_ctx *ctx, const char *key, const char *label, u64 value);
void fmt_size(struct fmt_ctx *ctx, const char *key, const char *label, u64 value);
void fmt_size_or_dash(struct fmt_ctx *ctx, const char *key, const char *label,
		      u64 value);
void fmt_str(struct fmt_ctx *ctx, const char *key, const char *label,
	     const char *value);
void fmt_bool(struct fmt_ctx *ctx, const char *key, const char *label, bool value);
void fmt_ratio(struct fmt_ctx *ctx, const char *key, const char *label,
	       double value);
void fmt_seconds(struct fmt_ctx *ctx, const char *key, const char *label,
		 double value);
void fmt_str_list(struct fmt_ctx *ctx, const char *key, const char *label,
		  const char * const *values, int count);

/*
 * Text only: one free line, word-wrapped at FMT_TEXT_COLUMNS with the
 * following lines indented by 4 (the first screen of inspect)
 */
#define FMT_TEXT_COLUMNS	80
void fmt_text_line(struct fmt_ctx *ctx, const char *line);
/* How many lines fmt_text_line() makes of @line */
int fmt_text_lines(const char *line);

/*
 * OpenMetrics text (Prometheus' textfile collector): a family's
 * metadata, then its samples; fmt_end() writes "# EOF".  @unit may be
 * NULL; @labels is "name=\"value\",..." or NULL.
 */
void fmt_metric_family(struct fmt_ctx *ctx, const char *name, const char *type,
		       const char *unit, const char *help);
void fmt_metric(struct fmt_ctx *ctx, const char *name, const char *labels, double value);

/* The Nagios plugin line: "STATUS - text | perfdata" */
/* A Nagios plugin's text: '|' (the perfdata separator) and control characters become '?' */
void fmt_plugin_text(char *text);
void fmt_nagios(struct fmt_ctx *ctx, const char *line);

#endif
