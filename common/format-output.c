// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/format-output.h"
#include "common/messages.h"
#include "common/units.h"

#define TEXT_LABEL_WIDTH	32
#define TABLE_MAX_COLS		24
#define TABLE_COL_GAP		2

/* One printed line of a table: a cell per column, NULL when empty */
struct fmt_table_line {
	char *cell[TABLE_MAX_COLS];
	bool rule;			/* a dashed line, as under the header */
};

/*
 * A text table is collected whole and printed at its end, so that every
 * column is as wide as its widest cell.  Columns are the labels of the
 * values, in the order they first appear; one that first appears in a
 * later element goes after the value written before it.
 */
struct fmt_table {
	int depth;			/* ctx->depth of the table's array */
	int nr_cols;
	const char *header[TABLE_MAX_COLS];
	bool right[TABLE_MAX_COLS];	/* numbers are right-aligned */
	int order[TABLE_MAX_COLS];	/* display position -> column */
	struct fmt_table_line *lines;
	u32 nr_lines;
	u32 alloc_lines;
	u32 row_line;			/* line of the current element */
	u32 sub_line;			/* line of the current inner element */
	u32 sub_next;			/* line the next inner element goes to */
	int last_col;			/* column written last in this element */
	bool failed;			/* out of memory: cells were dropped */
};

static bool is_json(const struct fmt_ctx *ctx)
{
	return ctx->mode == FMT_JSON;
}

/* Two spaces a level, written without a format to parse (one per member) */
static void json_indent(const struct fmt_ctx *ctx)
{
	static const char spaces[] = "                                ";
	int n = ctx->depth * 2;

	for (; n > 0; n -= sizeof(spaces) - 1)
		fwrite(spaces, 1, n < (int)sizeof(spaces) - 1 ? n : (int)sizeof(spaces) - 1,
		       ctx->out);
}

/* Printable ASCII other than '"' and '\\': written as it is */
static bool json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/*
 * RFC 8259: a string is UTF-8 with control characters escaped.  A byte
 * that is not UTF-8 (a path as the system gave it) is written as the text
 * "\xNN", as the text output writes it.  Runs of plain characters go out
 * in one fwrite() (one a character was 4 % of a warm JSON inspect's
 * instructions: the keys are plain ASCII).
 */
static void json_escaped(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		const unsigned char *run = s;
		int len;

		while (json_plain(*s))
			s++;
		if (s > run)
			fwrite(run, 1, s - run, out);
		if (!*s)
			break;
		len = utf8_char_len(s);
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if (len == 1 && (*s < 0x20 || *s == 0x7f))
			fprintf(out, "\\u%04x", *s);
		else if (!len)
			fprintf(out, "\\\\x%02x", *s);
		else
			fwrite(s, 1, len, out);
		s += len ? len : 1;
	}
	fputc('"', out);
}

/* JSON: separator, newline, indent and key of the next member */
static void json_member(struct fmt_ctx *ctx, const char *key)
{
	if (!ctx->first[ctx->depth])
		fputc(',', ctx->out);
	ctx->first[ctx->depth] = false;
	fputc('\n', ctx->out);
	json_indent(ctx);
	if (!ctx->is_array[ctx->depth]) {
		json_escaped(ctx->out, key);
		fputs(": ", ctx->out);
	}
}

/* Text: start a "Label: value" line, or the next field of a row */
static void text_label(struct fmt_ctx *ctx, const char *label)
{
	int indent = (ctx->depth - 1) * 4, pad;

	if (ctx->row_depth) {
		if (!ctx->first[ctx->depth])
			fputs("  ", ctx->out);
		ctx->first[ctx->depth] = false;
		fprintf(ctx->out, "%s ", label);
		return;
	}
	/* the values in one column; a label longer than it keeps one space */
	pad = TEXT_LABEL_WIDTH - (int)strlen(label) - indent;
	fprintf(ctx->out, "%*s%s:%*s", indent, "", label, pad > 0 ? pad : 1, "");
}

static void text_value_end(struct fmt_ctx *ctx)
{
	if (!ctx->row_depth)
		fputc('\n', ctx->out);
}

static void push(struct fmt_ctx *ctx, bool array)
{
	if (ctx->depth + 1 < FMT_MAX_DEPTH)
		ctx->depth++;
	ctx->first[ctx->depth] = true;
	ctx->is_array[ctx->depth] = array;
}

void fmt_start(struct fmt_ctx *ctx, FILE *out, enum fmt_mode mode,
	       unsigned int units, const char *command)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->out = out;
	ctx->mode = mode;
	ctx->units = units;
	ctx->first[0] = true;
	if (mode == FMT_OPENMETRICS || mode == FMT_NAGIOS) {
		/* the report's sections are written as text to nowhere */
		ctx->raw = out;
		ctx->out = fopen("/dev/null", "w");
		if (!ctx->out)
			ctx->out = tmpfile();
		if (!ctx->out) {
			ctx->out = out;
			ctx->raw = NULL;
		}
	}
	if (!is_json(ctx)) {
		ctx->depth = 1;
		return;
	}
	fputc('{', out);
	push(ctx, false);
	fmt_group_start(ctx, "__header", NULL);
	fmt_str(ctx, "version", NULL, FMT_JSON_VERSION);
	fmt_str(ctx, "tool", NULL, "btrfs-space");
	fmt_str(ctx, "command", NULL, command);
	fmt_group_end(ctx);
}

void fmt_end(struct fmt_ctx *ctx)
{
	if (is_json(ctx))
		fputs("\n}\n", ctx->out);
	if (ctx->raw) {
		if (ctx->mode == FMT_OPENMETRICS)
			fputs("# EOF\n", ctx->raw);
		fclose(ctx->out);
		ctx->out = ctx->raw;
		ctx->raw = NULL;
	}
	fflush(ctx->out);
}

/*
 * Word-wraps @line at FMT_TEXT_COLUMNS, the lines after the first indented
 * by 4: each cut at the last space that keeps the line within its room
 * (or at the room, in a word longer than a line).  Writes the lines to
 * @out unless it is NULL; returns how many there are.
 */
static int text_wrap(FILE *out, const char *line)
{
	const char *p = line;
	int indent = 0, n = 0;

	while (*p) {
		int room = FMT_TEXT_COLUMNS - indent, len = strlen(p), cut = len;

		if (len > room) {
			for (cut = room; cut > 0 && p[cut] != ' '; cut--)
				;
			if (cut == 0)
				cut = room;
		}
		if (out)
			fprintf(out, "%*s%.*s\n", indent, "", cut, p);
		n++;
		p += cut;
		while (*p == ' ')
			p++;
		indent = 4;
	}
	return n;
}

int fmt_text_lines(const char *line)
{
	int n = text_wrap(NULL, line);

	return n ? n : 1;
}

void fmt_text_line(struct fmt_ctx *ctx, const char *line)
{
	if (ctx->mode != FMT_TEXT)
		return;
	if (!*line)
		fputc('\n', ctx->out);
	text_wrap(ctx->out, line);
}

void fmt_metric_family(struct fmt_ctx *ctx, const char *name, const char *type,
		       const char *unit, const char *help)
{
	if (ctx->mode != FMT_OPENMETRICS || !ctx->raw)
		return;
	fprintf(ctx->raw, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	if (unit)
		fprintf(ctx->raw, "# UNIT %s %s\n", name, unit);
}

/*
 * A metric's value: a whole number (bytes, counts) in full, a fraction
 * (seconds, ratios) to 15 significant digits, which a double always
 * holds: 0.16471, not %.17g's 0.16471000000000002 from the sum of the
 * per-read latencies.
 */
static void metric_value(char *buf, size_t len, double value)
{
	/* 2^53: past it every double is whole and %.0f prints it exactly */
	if (value >= 9007199254740992.0 || value <= -9007199254740992.0 ||
	    value == (double)(long long)value)
		snprintf(buf, len, "%.0f", value);
	else
		snprintf(buf, len, "%.15g", value);
}

void fmt_metric(struct fmt_ctx *ctx, const char *name, const char *labels, double value)
{
	char num[40];

	if (ctx->mode != FMT_OPENMETRICS || !ctx->raw)
		return;
	metric_value(num, sizeof(num), value);
	if (labels && *labels)
		fprintf(ctx->raw, "%s{%s} %s\n", name, labels, num);
	else
		fprintf(ctx->raw, "%s %s\n", name, num);
}

/*
 * Nagios reads a plugin's output up to the first '|' as text and the rest
 * as perfdata, and only the first line as the status: a device path with
 * '|' or a newline in it would cut the text or the line.
 */
void fmt_plugin_text(char *text)
{
	for (; *text; text++)
		if (*text == '|' || (unsigned char)*text < 0x20 || *text == 0x7f)
			*text = '?';
}

void fmt_nagios(struct fmt_ctx *ctx, const char *line)
{
	if (ctx->mode != FMT_NAGIOS || !ctx->raw)
		return;
	fprintf(ctx->raw, "%s\n", line);
}

static void table_open(struct fmt_ctx *ctx, bool array);

static void open_container(struct fmt_ctx *ctx, const char *key,
			   const char *label, bool array)
{
	bool parent_is_array = ctx->is_array[ctx->depth];

	if (is_json(ctx)) {
		json_member(ctx, key);
		fputc(array ? '[' : '{', ctx->out);
		push(ctx, array);
		return;
	}
	if (ctx->table) {
		table_open(ctx, array);
		return;
	}
	if (ctx->row_depth) {
		if (label || key) {
			text_label(ctx, label ? label : key);
		} else {
			/* an element of a list inside a row */
			if (!ctx->first[ctx->depth])
				fputs(" ", ctx->out);
			ctx->first[ctx->depth] = false;
		}
		fputc(array ? '[' : '{', ctx->out);
		push(ctx, array);
		return;
	}
	/* text: the parent has something under its label now */
	ctx->first[ctx->depth] = false;
	if (parent_is_array && !array) {
		/* an element of a list: one line of "label value" fields */
		push(ctx, array);
		ctx->row_depth = ctx->depth;
		fprintf(ctx->out, "%*s", (ctx->depth - 2) * 4, "");
		return;
	}
	if (label)
		fprintf(ctx->out, "%*s%s:\n", (ctx->depth - 1) * 4, "", label);
	push(ctx, array);
	ctx->labelled[ctx->depth] = label != NULL;
}

static void close_container(struct fmt_ctx *ctx, bool array)
{
	bool empty = ctx->first[ctx->depth];
	int depth = ctx->depth;

	if (ctx->depth > 1)
		ctx->depth--;
	if (is_json(ctx)) {
		if (!empty) {
			fputc('\n', ctx->out);
			json_indent(ctx);
		}
		fputc(array ? ']' : '}', ctx->out);
		return;
	}
	if (ctx->table)
		return;
	if (array && empty && !ctx->row_depth && ctx->labelled[depth]) {
		/* a list with nothing in it says so, under its label */
		fprintf(ctx->out, "%*snone\n", (depth - 1) * 4, "");
	} else if (ctx->row_depth == depth) {
		ctx->row_depth = 0;
		fputc('\n', ctx->out);
	} else if (ctx->row_depth) {
		fputc(array ? ']' : '}', ctx->out);
	} else if (depth == 2 && !array) {
		fputc('\n', ctx->out);
	}
}

void fmt_group_start(struct fmt_ctx *ctx, const char *key, const char *label)
{
	open_container(ctx, key, label, false);
}

void fmt_group_end(struct fmt_ctx *ctx)
{
	close_container(ctx, false);
}

void fmt_array_start(struct fmt_ctx *ctx, const char *key, const char *label)
{
	open_container(ctx, key, label, true);
}

void fmt_array_end(struct fmt_ctx *ctx)
{
	close_container(ctx, true);
}

/* 0, or -1 with t->failed set: a new empty line at the end of @t */
static int table_new_line(struct fmt_table *t)
{
	if (array_grow((void **)&t->lines, t->nr_lines, &t->alloc_lines, sizeof(*t->lines))) {
		t->failed = true;
		return -1;
	}
	memset(&t->lines[t->nr_lines++], 0, sizeof(t->lines[0]));
	return 0;
}

/* A group or an array opened inside a table: an element, inner or outer */
static void table_open(struct fmt_ctx *ctx, bool array)
{
	struct fmt_table *t = ctx->table;
	int rel = ctx->depth - t->depth;

	if (!array && rel == 0 && !table_new_line(t)) {
		t->row_line = t->nr_lines - 1;
		t->sub_line = t->row_line;
		t->sub_next = t->row_line;
		t->last_col = -1;
	} else if (!array && rel == 2 && ctx->is_array[ctx->depth]) {
		/* the first inner element shares the element's line */
		if (t->sub_next < t->nr_lines || !table_new_line(t))
			t->sub_line = t->sub_next++;
	}
	push(ctx, array);
}

static int table_column(struct fmt_table *t, const char *label, bool number)
{
	int c, pos, after = -1;

	for (c = 0; c < t->nr_cols; c++)
		if (!strcmp(t->header[c], label))
			return c;
	if (t->nr_cols == TABLE_MAX_COLS)
		return -1;
	for (pos = 0; pos < t->nr_cols; pos++)
		if (t->order[pos] == t->last_col)
			after = pos;
	if (t->last_col < 0)
		after = t->nr_cols - 1;
	memmove(&t->order[after + 2], &t->order[after + 1],
		(t->nr_cols - after - 1) * sizeof(t->order[0]));
	t->order[after + 1] = c;
	t->header[c] = label;
	t->right[c] = number;
	t->nr_cols++;
	return c;
}

static void table_cell(struct fmt_ctx *ctx, const char *label, const char *text,
		       bool number)
{
	struct fmt_table *t = ctx->table;
	u32 line = ctx->depth - t->depth >= 3 ? t->sub_line : t->row_line;
	int c;

	if (!t->nr_lines)
		return;
	c = table_column(t, label, number);
	if (c < 0) {
		t->failed = true;
		return;
	}
	t->last_col = c;
	free(t->lines[line].cell[c]);
	t->lines[line].cell[c] = strdup(text);
	if (!t->lines[line].cell[c])
		t->failed = true;
}

static void table_print_line(FILE *out, const struct fmt_table *t, const int *width,
			     int indent, const char * const *cells)
{
	int pos, pad = indent;

	for (pos = 0; pos < t->nr_cols; pos++) {
		int c = t->order[pos];
		const char *text = cells[c] ? cells[c] : "";
		int fill = width[c] - (int)strlen(text);

		if (!*text) {
			pad += width[c] + TABLE_COL_GAP;
			continue;
		}
		fprintf(out, "%*s", pad + (t->right[c] ? fill : 0), "");
		fputs(text, out);
		pad = (t->right[c] ? 0 : fill) + TABLE_COL_GAP;
	}
	fputc('\n', out);
}

static void table_print(FILE *out, const struct fmt_table *t)
{
	const char *dashes[TABLE_MAX_COLS];
	char rule[TABLE_MAX_COLS][128];
	int width[TABLE_MAX_COLS] = { 0 };
	int indent = (t->depth - 1) * 4;
	u32 i;
	int c;

	if (!t->nr_lines)
		return;
	for (c = 0; c < t->nr_cols; c++) {
		width[c] = strlen(t->header[c]);
		for (i = 0; i < t->nr_lines; i++)
			if (t->lines[i].cell[c] && (int)strlen(t->lines[i].cell[c]) > width[c])
				width[c] = strlen(t->lines[i].cell[c]);
		snprintf(rule[c], sizeof(rule[c]), "%.*s",
			 width[c] < (int)sizeof(rule[c]) - 1 ? width[c] : (int)sizeof(rule[c]) - 1,
			 "--------------------------------------------------------------------------------"
			 "------------------------------------------------");
		dashes[c] = rule[c];
	}
	table_print_line(out, t, width, indent, t->header);
	table_print_line(out, t, width, indent, dashes);
	for (i = 0; i < t->nr_lines; i++)
		table_print_line(out, t, width, indent, t->lines[i].rule ? dashes :
				 (const char * const *)t->lines[i].cell);
	if (t->failed)
		fprintf(out, "%*s(out of memory: cells left out)\n", indent, "");
}

static void table_free(struct fmt_table *t)
{
	u32 i;
	int c;

	for (i = 0; i < t->nr_lines; i++)
		for (c = 0; c < TABLE_MAX_COLS; c++)
			free(t->lines[i].cell[c]);
	free(t->lines);
	free(t);
}

void fmt_table_start(struct fmt_ctx *ctx, const char *key, const char *label)
{
	struct fmt_table *t;

	if (is_json(ctx) || ctx->table || ctx->row_depth ||
	    !(t = calloc(1, sizeof(*t)))) {
		fmt_array_start(ctx, key, label);
		return;
	}
	if (label)
		fprintf(ctx->out, "%*s%s:\n", (ctx->depth - 1) * 4, "", label);
	ctx->first[ctx->depth] = false;
	push(ctx, true);
	ctx->labelled[ctx->depth] = label != NULL;
	t->depth = ctx->depth;
	ctx->table = t;
}

void fmt_table_rule(struct fmt_ctx *ctx)
{
	struct fmt_table *t = ctx->table;

	if (!t || t->depth != ctx->depth || table_new_line(t))
		return;
	t->lines[t->nr_lines - 1].rule = true;
}

void fmt_table_end(struct fmt_ctx *ctx)
{
	struct fmt_table *t = ctx->table;

	if (!t || t->depth != ctx->depth) {
		fmt_array_end(ctx);
		return;
	}
	if (t->nr_lines || !ctx->labelled[ctx->depth])
		table_print(ctx->out, t);
	else	/* a table with no row says so, under its label */
		fprintf(ctx->out, "%*snone\n", (ctx->depth - 1) * 4, "");
	/* a blank line closes a top-level section, as after a group */
	if (t->depth == 2 && t->nr_lines)
		fputc('\n', ctx->out);
	table_free(t);
	ctx->table = NULL;
	if (ctx->depth > 1)
		ctx->depth--;
}

/*
 * The text of a value: a "Label: value" line, a field of a row, or a
 * table cell.  A NULL label means the value has no place in text.
 */
static void text_value(struct fmt_ctx *ctx, const char *label, const char *raw,
		       bool number)
{
	/* a path may hold a terminal escape or a newline: never printed raw */
	char *text;

	/* a value hidden from text still makes its list not empty */
	if (!ctx->row_depth)
		ctx->first[ctx->depth] = false;
	if (!label)
		return;
	text = escape_text(raw);
	if (!text) {
		if (ctx->table)
			ctx->table->failed = true;
		return;
	}
	if (ctx->table) {
		table_cell(ctx, label, text, number);
	} else {
		text_label(ctx, label);
		fputs(text, ctx->out);
		text_value_end(ctx);
	}
	free(text);
}

/*
 * A value printed the same way in text and JSON, written as it is (a
 * number, or a word the caller made); a NULL key: text only
 */
static void plain_value(struct fmt_ctx *ctx, const char *key, const char *label,
			const char *text)
{
	if (!is_json(ctx)) {
		text_value(ctx, label, text, true);
	} else if (key) {
		json_member(ctx, key);
		fputs(text, ctx->out);
	}
}

__attribute__ ((format (printf, 4, 5)))
static void fmt_plain(struct fmt_ctx *ctx, const char *key, const char *label,
		      const char *fmt, ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	plain_value(ctx, key, label, buf);
}

/*
 * The digits of a u64, as "%" PRIu64 writes them, without vsnprintf():
 * 700 instructions a number there, and a JSON report writes 330 of them
 */
static const char *u64_digits(u64 value, char buf[21])
{
	char *p = buf + 20;

	*p = '\0';
	do {
		*--p = '0' + value % 10;
		value /= 10;
	} while (value);
	return p;
}

void fmt_u64(struct fmt_ctx *ctx, const char *key, const char *label, u64 value)
{
	char buf[21];

	plain_value(ctx, key, label, u64_digits(value, buf));
}

void fmt_size(struct fmt_ctx *ctx, const char *key, const char *label, u64 value)
{
	char buf[64];

	if (is_json(ctx)) {
		fmt_u64(ctx, key, label, value);
		return;
	}
	text_value(ctx, label, pretty_size_mode(value, ctx->units, buf, sizeof(buf)), true);
}

/* Text: "-" for 0, as a table cell with nothing in it (btrfs fi usage -T) */
void fmt_size_or_dash(struct fmt_ctx *ctx, const char *key, const char *label,
		      u64 value)
{
	if (!is_json(ctx) && !value) {
		text_value(ctx, label, "-", true);
		return;
	}
	fmt_size(ctx, key, label, value);
}

void fmt_str(struct fmt_ctx *ctx, const char *key, const char *label,
	     const char *value)
{
	if (!is_json(ctx)) {
		text_value(ctx, label, value ? value : "-", false);
		return;
	}
	if (!key)
		return;
	json_member(ctx, key);
	if (value)
		json_escaped(ctx->out, value);
	else
		fputs("null", ctx->out);
}

void fmt_bool(struct fmt_ctx *ctx, const char *key, const char *label, bool value)
{
	if (!is_json(ctx)) {
		text_value(ctx, label, value ? "yes" : "no", false);
	} else if (key) {
		json_member(ctx, key);
		fputs(value ? "true" : "false", ctx->out);
	}
}

void fmt_ratio(struct fmt_ctx *ctx, const char *key, const char *label,
	       double value)
{
	fmt_plain(ctx, key, label, "%.2f", value);
}

void fmt_seconds(struct fmt_ctx *ctx, const char *key, const char *label,
		 double value)
{
	fmt_plain(ctx, key, label, "%.6f", value);
}

void fmt_str_list(struct fmt_ctx *ctx, const char *key, const char *label,
		  const char * const *values, int count)
{
	char text[2048] = "";
	size_t n = 0;
	int i;

	if (is_json(ctx)) {
		if (!key)
			return;
		json_member(ctx, key);
		fputc('[', ctx->out);
		for (i = 0; i < count; i++) {
			if (i)
				fputs(", ", ctx->out);
			json_escaped(ctx->out, values[i]);
		}
		fputc(']', ctx->out);
		return;
	}
	for (i = 0; i < count && n < sizeof(text); i++)
		n += snprintf(text + n, sizeof(text) - n, "%s%s", i ? ", " : "", values[i]);
	text_value(ctx, label, count ? text : "-", false);
}
