// SPDX-License-Identifier: GPL-2.0
/*
 * Usage texts laid out as btrfs-progs lays them out: "usage:" and the
 * synopsis, the description indented, then the options, their
 * descriptions in one column, headings over each group, wrapped at 80
 * columns.  The global and unit options live here, written once.
 */
#include <stdbool.h>
#include <string.h>
#include "common/help.h"

#define USAGE_INDENT	4
#define USAGE_WIDTH	80
/* an option wider than this puts its description on the next line */
#define USAGE_MAX_OPT	26

static const char * const globals_usage[] = {
	"Global options (before or after the command and the devices; -- ends them):",
	"--format text|json|openmetrics|nagios  output format (default text; the last two: inspect only)",
	"--super N  read superblock copy N (0, 1 or 2) instead of the primary",
	"--scan  find the other devices of the filesystem (given paths, block devices)",
	"--degraded  read with devices missing, like mount -o degraded",
	"--readonly-device DEVID  model that device as read-only media (default: every present device is writeable)",
	"--bg-search pinpoint|scan  find block groups by exact key (default) or walk like the kernel",
	"--io-threads N  concurrent reads per tree level for pinpoint (default 16, 1 = one descent per block group)",
	"-v|--verbose  say on stderr what was read (devices, trees, reads, bytes, time) and which copy was used",
	"-q|--quiet  errors only: no warnings, no progress",
	"--version  show the version and exit",
	"--help  show this help, or with a command that command's",
	NULL
};

static const char * const units_usage[] = {
	"Units (text output; JSON is always in bytes):",
	"-b|--raw  raw numbers in bytes",
	"-h|--human-readable  human friendly numbers, base 1024 (default)",
	"-H  human friendly numbers, base 1000",
	"--iec  use 1024 as a base (KiB, MiB, GiB, TiB)",
	"--si  use 1000 as a base (kB, MB, GB, TB)",
	"-k|--kbytes  show sizes in KiB, or kB with --si",
	"-m|--mbytes  show sizes in MiB, or MB with --si",
	"-g|--gbytes  show sizes in GiB, or GB with --si",
	"-t|--tbytes  show sizes in TiB, or TB with --si",
	NULL
};

static const char globals_pointer[] =
	"Global and unit options (-b, -g, -v, ...): see 'btrfs-space help' or btrfs-space(8)";

/* Where the option of @line ends: at a tab or two blanks; 0 if it has none */
static size_t option_len(const char *line)
{
	const char *tab = strchr(line, '\t');
	const char *gap = strstr(line, "  ");

	if (tab && (!gap || tab < gap))
		return tab - line;
	return gap ? (size_t)(gap - line) : 0;
}

static bool is_heading(const char *line)
{
	size_t len = strlen(line);

	return len && line[len - 1] == ':' && line[0] != ' ' && !option_len(line);
}

/*
 * Print @text from column @col (the cursor is there), words wrapped at
 * USAGE_WIDTH onto lines indented to @col.
 */
static void print_wrapped(FILE *out, const char *text, int col)
{
	int pos = col;

	while (*text == ' ' || *text == '\t')
		text++;
	while (*text) {
		size_t word = strcspn(text, " ");

		if (pos > col && pos + 1 + (int)word > USAGE_WIDTH) {
			fprintf(out, "\n%*s", col, "");
			pos = col;
		} else if (pos > col) {
			fputc(' ', out);
			pos++;
		}
		fprintf(out, "%.*s", (int)word, text);
		pos += word;
		text += word;
		while (*text == ' ')
			text++;
	}
	fputc('\n', out);
}

/*
 * The column the descriptions of a group start at: after its widest
 * option that fits.  A group ends at a blank line, a heading or a marker.
 */
static int description_column(const char * const *lines)
{
	int i, width = 0;

	for (i = 0; lines && lines[i] && lines[i][0] && lines[i][0] != '\001'; i++) {
		int len = option_len(lines[i]);

		if (i && is_heading(lines[i]))
			break;
		if (lines[i][0] != ' ' && len <= USAGE_MAX_OPT && len > width)
			width = len;
	}
	return USAGE_INDENT + width + 2;
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

/*
 * The option line lines[*i] and the lines continuing its description:
 * the description joined into one paragraph and wrapped in the column.
 * *i is left on the last line used.
 */
static void print_option_line(FILE *out, const char * const *lines, int *i, int col)
{
	const char *line = lines[*i];
	size_t len = option_len(line);
	char text[1024];
	size_t n;

	if (is_heading(line)) {
		fprintf(out, "%*s%s\n", USAGE_INDENT, "", line);
		return;
	}
	/* no gap: the whole line is the option */
	n = snprintf(text, sizeof(text), "%s", len ? line + len : "");
	while (lines[*i + 1] && lines[*i + 1][0] == ' ' && n < sizeof(text)) {
		(*i)++;
		n += snprintf(text + n, sizeof(text) - n, " %s", lines[*i]);
	}
	fprintf(out, "%*s%.*s", USAGE_INDENT, "", (int)(len ? len : strlen(line)), line);
	if (!len) {
		/* an option alone, its description on the lines below */
		fprintf(out, "\n%*s", col, "");
	} else if (USAGE_INDENT + (int)len + 2 > col) {
		fprintf(out, "\n%*s", col, "");
	} else {
		fprintf(out, "%*s", col - USAGE_INDENT - (int)len, "");
	}
	print_wrapped(out, text, col);
}

/* Plain text in the option part: wrapped at the indentation */
static void print_text_line(FILE *out, const char *line)
{
	fprintf(out, "%*s", USAGE_INDENT, "");
	print_wrapped(out, line, USAGE_INDENT);
}

/* A group of options (globals or units) with a blank line before it */
static void print_group(FILE *out, const char * const *lines, int col)
{
	int i;

	fputc('\n', out);
	for (i = 0; lines[i]; i++)
		print_option_line(out, lines, &i, col);
}

/*
 * The group of options a usage line stands for (HELPINFO_MARK_GLOBALS or
 * HELPINFO_MARK_UNITS), which it marks seen; NULL for any other line.
 */
static const char * const *marked_group(const char *line, bool *globals, bool *units)
{
	if (!strcmp(line, HELPINFO_MARK_GLOBALS)) {
		*globals = true;
		return globals_usage;
	}
	if (!strcmp(line, HELPINFO_MARK_UNITS)) {
		*units = true;
		return units_usage;
	}
	return NULL;
}

static void print_usage(FILE *out, const char * const *usagestr, bool full)
{
	bool globals = false, units = false, printed = false, blank_line = false;
	const char * const *group;
	int blank, i, col, full_col;

	for (blank = 0; usagestr[blank] && usagestr[blank][0]; blank++)
		;
	for (i = 0; i < blank - 1; i++)
		fprintf(out, "%s %s\n", i ? "   or:" : "usage:", usagestr[i]);
	if (blank > 1) {
		fprintf(out, "\n%*s", USAGE_INDENT, "");
		print_wrapped(out, usagestr[blank - 1], USAGE_INDENT);
	}
	if (!usagestr[blank])
		return;
	/* the global and unit options share one column */
	full_col = max_int(description_column(globals_usage), description_column(units_usage));
	col = description_column(usagestr + blank + 1);
	for (i = blank + 1; usagestr[i]; i++) {
		const char *line = usagestr[i];

		group = marked_group(line, &globals, &units);
		if (group) {
			if (full)
				print_group(out, group, full_col);
			printed |= full;
			continue;
		}
		/* a blank line, or a heading, starts a group */
		if (!line[0] || (is_heading(line) && printed)) {
			if (!blank_line)
				fputc('\n', out);
			blank_line = !line[0];
			if (!line[0])
				continue;
		} else if (!printed && !is_heading(line) && line[0] == '-') {
			fprintf(out, "\n%*sOptions:\n", USAGE_INDENT, "");
		} else if (!printed) {
			fputc('\n', out);
		}
		if (is_heading(line) || !printed || blank_line || usagestr[i - 1][0] == '\001')
			col = description_column(usagestr + i);
		printed = true;
		blank_line = false;
		if (is_heading(line) || option_len(line) || (line[0] == '-' &&
		    usagestr[i + 1] && usagestr[i + 1][0] == ' '))
			print_option_line(out, usagestr, &i, col);
		else
			print_text_line(out, line);
	}
	if (!full && (globals || units)) {
		fprintf(out, "\n%*s", USAGE_INDENT, "");
		print_wrapped(out, globals_pointer, USAGE_INDENT);
	}
}

void usage_print(FILE *out, const char * const *usagestr)
{
	print_usage(out, usagestr, false);
}

void usage_print_full(FILE *out, const char * const *usagestr)
{
	print_usage(out, usagestr, true);
}
