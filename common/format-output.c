// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include "common/format-output.h"
#include "common/units.h"

#define TEXT_LABEL_WIDTH	32

static bool is_json(const struct fmt_ctx *ctx)
{
	return ctx->mode == FMT_JSON;
}

static void json_indent(const struct fmt_ctx *ctx)
{
	fprintf(ctx->out, "%*s", ctx->depth * 2, "");
}

static void json_escaped(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
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
	if (ctx->row_depth) {
		if (!ctx->first[ctx->depth])
			fputs("  ", ctx->out);
		ctx->first[ctx->depth] = false;
		fprintf(ctx->out, "%s ", label);
		return;
	}
	fprintf(ctx->out, "%*s%s:%*s", (ctx->depth - 1) * 4, "", label,
		(int)(TEXT_LABEL_WIDTH - strlen(label) -
		      (ctx->depth - 1) * 4 > 0 ?
		      TEXT_LABEL_WIDTH - strlen(label) - (ctx->depth - 1) * 4 : 1),
		"");
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
	fflush(ctx->out);
}

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
	if (ctx->row_depth == depth) {
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

/* A label of NULL means the value has no place in text output */
static bool text_skip(const struct fmt_ctx *ctx, const char *label)
{
	return !is_json(ctx) && !label;
}

/* A value printed the same way in text and JSON */
__attribute__ ((format (printf, 4, 5)))
static void fmt_plain(struct fmt_ctx *ctx, const char *key, const char *label,
		      const char *fmt, ...)
{
	va_list ap;

	if (text_skip(ctx, label))
		return;
	if (is_json(ctx))
		json_member(ctx, key);
	else
		text_label(ctx, label);
	va_start(ap, fmt);
	vfprintf(ctx->out, fmt, ap);
	va_end(ap);
	if (!is_json(ctx))
		text_value_end(ctx);
}

void fmt_u64(struct fmt_ctx *ctx, const char *key, const char *label, u64 value)
{
	fmt_plain(ctx, key, label, "%" PRIu64, value);
}

void fmt_size(struct fmt_ctx *ctx, const char *key, const char *label, u64 value)
{
	char buf[64];

	if (is_json(ctx)) {
		fmt_u64(ctx, key, label, value);
		return;
	}
	if (text_skip(ctx, label))
		return;
	text_label(ctx, label);
	fputs(pretty_size_mode(value, ctx->units, buf, sizeof(buf)), ctx->out);
	text_value_end(ctx);
}

void fmt_str(struct fmt_ctx *ctx, const char *key, const char *label,
	     const char *value)
{
	if (text_skip(ctx, label))
		return;
	if (is_json(ctx)) {
		json_member(ctx, key);
		if (value)
			json_escaped(ctx->out, value);
		else
			fputs("null", ctx->out);
		return;
	}
	text_label(ctx, label);
	fputs(value ? value : "-", ctx->out);
	text_value_end(ctx);
}

void fmt_bool(struct fmt_ctx *ctx, const char *key, const char *label, bool value)
{
	if (text_skip(ctx, label))
		return;
	if (is_json(ctx)) {
		json_member(ctx, key);
		fputs(value ? "true" : "false", ctx->out);
		return;
	}
	text_label(ctx, label);
	fputs(value ? "yes" : "no", ctx->out);
	text_value_end(ctx);
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
	int i;

	if (text_skip(ctx, label))
		return;
	if (is_json(ctx)) {
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
	text_label(ctx, label);
	for (i = 0; i < count; i++)
		fprintf(ctx->out, "%s%s", i ? ", " : "", values[i]);
	if (!count)
		fputs("-", ctx->out);
	text_value_end(ctx);
}
