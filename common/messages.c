// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/messages.h"

static int log_level = LOG_DEFAULT;

void set_log_level(int level)
{
	log_level = level;
}

int get_log_level(void)
{
	return log_level;
}

static bool continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

int utf8_char_len(const unsigned char *s)
{
	unsigned int cp;
	int len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < len; i++) {
		if (!continuation(s[i]))
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

char *escape_text(const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	char *out = malloc(4 * strlen(src) + 1), *o = out;

	if (!out)
		return NULL;
	while (*s) {
		int len = utf8_char_len(s);
		/* U+0080..U+009F: C1 controls, CSI among them */
		bool c1 = len == 2 && s[0] == 0xc2 && s[1] < 0xa0;

		if (len == 1 && *s >= 0x20 && *s != 0x7f) {
			*o++ = *s++;
		} else if (len > 1 && !c1) {
			memcpy(o, s, len);
			o += len;
			s += len;
		} else {
			o += sprintf(o, "\\x%02x", *s++);
		}
	}
	*o = 0;
	return out;
}

/* One line, whatever the paths in it hold */
static void vprint_prefixed(const char *prefix, const char *fmt, va_list ap)
{
	char *line = NULL, *text = NULL;

	fputs(prefix, stderr);
	if (vasprintf(&line, fmt, ap) >= 0)
		text = escape_text(line);
	fputs(text ? text : "(out of memory)", stderr);
	fputc('\n', stderr);
	free(text);
	free(line);
}

void error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint_prefixed("ERROR: ", fmt, ap);
	va_end(ap);
}

void warning(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_DEFAULT)
		return;
	va_start(ap, fmt);
	vprint_prefixed("WARNING: ", fmt, ap);
	va_end(ap);
}

void pr_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint_prefixed("NOTE: ", fmt, ap);
	va_end(ap);
}

/* Verbose notes go to stderr so they never mix into text or JSON output */
void pr_verbose(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
