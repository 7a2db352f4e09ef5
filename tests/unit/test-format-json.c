// SPDX-License-Identifier: GPL-2.0
/*
 * Unit table of the JSON printer (common/format-output.c): each case
 * writes a few values through the fmt_* calls into memory and compares
 * the document byte for byte.  Escaping (RFC 8259: '"' and '\' escaped,
 * control characters as \u00XX, valid UTF-8 whole, a byte that is not
 * UTF-8 as the text "\xNN"), numbers (raw integers, sizes in bytes
 * whatever the unit mode, two and six decimals), and nesting (groups,
 * arrays, tables as arrays, empty containers, keys ignored inside arrays,
 * text-only values left out).  Documentation/dev/json-format.md is the
 * contract these pin.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "common/format-output.h"
#include "common/units.h"

/* What fmt_start() and fmt_end() write around every report */
#define HEAD	"{\n  \"__header\": {\n    \"version\": \"1\",\n" \
		"    \"tool\": \"btrfs-space\",\n    \"command\": \"unit\"\n  }"
#define TAIL	"\n}\n"

struct json_case {
	const char *name;
	void (*emit)(struct fmt_ctx *ctx);
	const char *body;		/* between HEAD and TAIL */
};

static void emit_nothing(struct fmt_ctx *ctx)
{
	(void)ctx;
}

static void emit_quote_backslash(struct fmt_ctx *ctx)
{
	fmt_str(ctx, "s", "S", "a\"b\\c/d");
}

static void emit_controls(struct fmt_ctx *ctx)
{
	fmt_str(ctx, "s", "S", "t\tn\nr\r\x01\x1f\x7f");
}

static void emit_utf8(struct fmt_ctx *ctx)
{
	fmt_str(ctx, "s", "S", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe");
}

static void emit_not_utf8(struct fmt_ctx *ctx)
{
	/* a stray byte, an overlong form, a surrogate, a cut sequence */
	fmt_str(ctx, "s", "S", "a\xff" "b\xc0\xaf" "c\xed\xa0\x80" "d\xc3");
}

static void emit_key_escaped(struct fmt_ctx *ctx)
{
	fmt_u64(ctx, "k\"e\\y\n", "K", 1);
}

static void emit_null(struct fmt_ctx *ctx)
{
	fmt_str(ctx, "s", "S", NULL);
	fmt_str(ctx, "e", "E", "");
}

static void emit_integers(struct fmt_ctx *ctx)
{
	fmt_u64(ctx, "zero", "Zero", 0);
	fmt_u64(ctx, "max", "Max", UINT64_MAX);
	fmt_size(ctx, "size", "Size", 1536);
	fmt_size_or_dash(ctx, "dash", "Dash", 0);
	fmt_size_or_dash(ctx, "big", "Big", 1ULL << 40);
}

static void emit_decimals(struct fmt_ctx *ctx)
{
	fmt_ratio(ctx, "half", "Half", 2.5);
	fmt_ratio(ctx, "third", "Third", 1.0 / 3);
	fmt_ratio(ctx, "zero", "Zero", 0);
	fmt_seconds(ctx, "sec", "Sec", 1.25);
	fmt_seconds(ctx, "tiny", "Tiny", 0.0000004);
	fmt_bool(ctx, "yes", "Yes", true);
	fmt_bool(ctx, "no", "No", false);
}

static void emit_text_only(struct fmt_ctx *ctx)
{
	static const char * const list[] = { "x" };

	fmt_u64(ctx, NULL, "Text", 5);
	fmt_str(ctx, NULL, "Text", "t");
	fmt_bool(ctx, NULL, "Text", true);
	fmt_str_list(ctx, NULL, "Text", list, 1);
	fmt_text_line(ctx, "only text");
	fmt_u64(ctx, "kept", NULL, 6);
}

static void emit_nested_groups(struct fmt_ctx *ctx)
{
	fmt_group_start(ctx, "a", "A");
	fmt_group_start(ctx, "b", "B");
	fmt_u64(ctx, "n", "N", 1);
	fmt_group_end(ctx);
	fmt_u64(ctx, "m", "M", 2);
	fmt_group_end(ctx);
}

static void emit_empty(struct fmt_ctx *ctx)
{
	fmt_group_start(ctx, "g", "G");
	fmt_group_end(ctx);
	fmt_array_start(ctx, "a", "A");
	fmt_array_end(ctx);
}

static void emit_array_of_groups(struct fmt_ctx *ctx)
{
	fmt_array_start(ctx, "list", "List");
	fmt_group_start(ctx, NULL, NULL);
	fmt_u64(ctx, "x", "X", 1);
	fmt_group_end(ctx);
	/* a key inside an array is not printed */
	fmt_group_start(ctx, "ignored", NULL);
	fmt_u64(ctx, "x", "X", 2);
	fmt_array_start(ctx, "inner", "Inner");
	fmt_array_end(ctx);
	fmt_group_end(ctx);
	fmt_array_end(ctx);
}

static void emit_array_of_values(struct fmt_ctx *ctx)
{
	fmt_array_start(ctx, "v", "V");
	fmt_u64(ctx, "ignored", "I", 1);
	fmt_str(ctx, "ignored", "I", "s");
	fmt_bool(ctx, "ignored", "I", false);
	fmt_array_end(ctx);
}

static void emit_str_list(struct fmt_ctx *ctx)
{
	static const char * const list[] = { "a", "b\"c" };

	fmt_str_list(ctx, "l", "L", list, 2);
	fmt_str_list(ctx, "e", "E", list, 0);
}

static void emit_table(struct fmt_ctx *ctx)
{
	fmt_table_start(ctx, "t", "T");
	fmt_group_start(ctx, NULL, NULL);
	fmt_u64(ctx, "n", "N", 1);
	fmt_array_start(ctx, "s", "S");
	fmt_group_start(ctx, NULL, NULL);
	fmt_u64(ctx, "d", "D", 7);
	fmt_group_end(ctx);
	fmt_array_end(ctx);
	fmt_group_end(ctx);
	/* a rule is text only */
	fmt_table_rule(ctx);
	fmt_group_start(ctx, NULL, NULL);
	fmt_str(ctx, "n", "N", "x");
	fmt_group_end(ctx);
	fmt_table_end(ctx);
}

static const struct json_case cases[] = {
	{ "header only", emit_nothing, "" },
	{ "quote and backslash escaped, slash not", emit_quote_backslash,
	  ",\n  \"s\": \"a\\\"b\\\\c/d\"" },
	{ "control characters as \\u00XX", emit_controls,
	  ",\n  \"s\": \"t\\u0009n\\u000ar\\u000d\\u0001\\u001f\\u007f\"" },
	{ "UTF-8 of 2, 3 and 4 bytes whole", emit_utf8,
	  ",\n  \"s\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe\"" },
	{ "bytes that are not UTF-8 as the text \\xNN", emit_not_utf8,
	  ",\n  \"s\": \"a\\\\xffb\\\\xc0\\\\xafc\\\\xed\\\\xa0\\\\x80d\\\\xc3\"" },
	{ "keys escaped as strings", emit_key_escaped,
	  ",\n  \"k\\\"e\\\\y\\u000a\": 1" },
	{ "NULL string is null, empty string is \"\"", emit_null,
	  ",\n  \"s\": null,\n  \"e\": \"\"" },
	{ "integers raw, sizes in bytes", emit_integers,
	  ",\n  \"zero\": 0,\n  \"max\": 18446744073709551615,\n  \"size\": 1536,"
	  "\n  \"dash\": 0,\n  \"big\": 1099511627776" },
	{ "ratios of 2 decimals, seconds of 6, booleans", emit_decimals,
	  ",\n  \"half\": 2.50,\n  \"third\": 0.33,\n  \"zero\": 0.00,\n  \"sec\": 1.250000,"
	  "\n  \"tiny\": 0.000000,\n  \"yes\": true,\n  \"no\": false" },
	{ "text-only values left out", emit_text_only, ",\n  \"kept\": 6" },
	{ "groups nested and indented by two", emit_nested_groups,
	  ",\n  \"a\": {\n    \"b\": {\n      \"n\": 1\n    },\n    \"m\": 2\n  }" },
	{ "empty group and array on one line", emit_empty,
	  ",\n  \"g\": {},\n  \"a\": []" },
	{ "array of groups, keys inside ignored", emit_array_of_groups,
	  ",\n  \"list\": [\n    {\n      \"x\": 1\n    },\n    {\n      \"x\": 2,"
	  "\n      \"inner\": []\n    }\n  ]" },
	{ "array of values", emit_array_of_values,
	  ",\n  \"v\": [\n    1,\n    \"s\",\n    false\n  ]" },
	{ "string list on one line", emit_str_list,
	  ",\n  \"l\": [\"a\", \"b\\\"c\"],\n  \"e\": []" },
	{ "a table is an array, its rule text only", emit_table,
	  ",\n  \"t\": [\n    {\n      \"n\": 1,\n      \"s\": [\n        {\n"
	  "          \"d\": 7\n        }\n      ]\n    },\n    {\n      \"n\": \"x\"\n    }\n  ]" },
};

/* The first byte where @got and @want part, for the failure message */
static size_t first_difference(const char *got, const char *want)
{
	size_t i = 0;

	while (got[i] && got[i] == want[i])
		i++;
	return i;
}

static void run_case(const struct json_case *c)
{
	struct fmt_ctx ctx;
	char *got = NULL, *want;
	size_t len = 0;
	FILE *out = open_memstream(&got, &len);

	want = malloc(strlen(HEAD) + strlen(c->body) + strlen(TAIL) + 1);
	if (!out || !want) {
		check(0, "%s: out of memory", c->name);
		if (out)
			fclose(out);
		free(got);
		free(want);
		return;
	}
	sprintf(want, "%s%s%s", HEAD, c->body, TAIL);
	/* a unit mode that would print "1.50KiB" in text: JSON ignores it */
	fmt_start(&ctx, out, FMT_JSON, UNITS_BINARY, "unit");
	c->emit(&ctx);
	fmt_end(&ctx);
	fclose(out);
	if (!strcmp(got, want)) {
		check(1, "%s", c->name);
	} else {
		size_t at = first_difference(got, want);

		check(0, "%s: differs at byte %zu: got \"%.40s\", want \"%.40s\"", c->name,
		      at, got + at, want + at);
	}
	free(got);
	free(want);
}

/*
 * Text: an empty list or table says "none" under its label, and a label
 * longer than the value column keeps one space before its value
 */
static const char text_want[] =
	"Group:\n"
	"    Empty list:\n"
	"        none\n"
	"    Empty table:\n"
	"        none\n"
	"    A label longer than the value column: 5\n"
	"    Short:" "                       " "6\n"
	"\n";

static void test_text(void)
{
	struct fmt_ctx ctx;
	char *got = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&got, &len);

	if (!out) {
		check(0, "text: out of memory");
		return;
	}
	fmt_start(&ctx, out, FMT_TEXT, UNITS_BINARY, "unit");
	fmt_group_start(&ctx, "g", "Group");
	fmt_array_start(&ctx, "e", "Empty list");
	fmt_array_end(&ctx);
	fmt_table_start(&ctx, "t", "Empty table");
	fmt_table_end(&ctx);
	fmt_u64(&ctx, "l", "A label longer than the value column", 5);
	fmt_u64(&ctx, "s", "Short", 6);
	fmt_group_end(&ctx);
	fmt_end(&ctx);
	fclose(out);
	check(got && !strcmp(got, text_want), "text: empty lists say none, long labels one space:\n%s",
	      got ? got : "");
	free(got);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	test_text();
	return unit_failures ? 1 : 0;
}
