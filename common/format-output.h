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
};

struct fmt_table;

struct fmt_ctx {
	FILE *out;
	enum fmt_mode mode;
	unsigned int units;
	int depth;
	int row_depth;		/* text: depth of the array element being printed as a row, or 0 */
	bool first[FMT_MAX_DEPTH];
	bool is_array[FMT_MAX_DEPTH];
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

#endif
