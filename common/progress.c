// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "common/messages.h"
#include "common/progress.h"

void progress_init(struct progress *p, const char *what)
{
	p->enabled = isatty(STDERR_FILENO) && get_log_level() >= LOG_DEFAULT;
	p->shown = false;
	p->what = what;
	clock_gettime(CLOCK_MONOTONIC, &p->last);
}

static double seconds_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) + (now.tv_nsec - t->tv_nsec) / 1e9;
}

bool progress_due(struct progress *p)
{
	if (!p->enabled || seconds_since(&p->last) < 0.2)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &p->last);
	p->shown = true;
	return true;
}

void progress_printf(struct progress *p, const char *fmt, ...)
{
	va_list ap;

	if (!progress_due(p))
		return;
	fputc('\r', stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

void progress_update(struct progress *p, u64 done, u64 total)
{
	progress_printf(p, "%s: %llu of %llu (%llu%%) ", p->what,
			(unsigned long long)done, (unsigned long long)total,
			(unsigned long long)(total ? done * 100 / total : 0));
}

void progress_clear(struct progress *p)
{
	if (p->shown)
		fprintf(stderr, "\r%78s\r", "");
	p->shown = false;
}
