// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
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

static void vprint_prefixed(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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
