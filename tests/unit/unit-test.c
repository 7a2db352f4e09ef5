// SPDX-License-Identifier: GPL-2.0
/* The one reporting helper of every unit-test program (linked into each) */
#include <stdarg.h>
#include <stdio.h>
#include "tests/unit/unit-test.h"

int unit_failures;

void check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		unit_failures++;
}

void check_u64(const char *what, unsigned long long got, unsigned long long want)
{
	if (got == want)
		check(1, "%s = %llu", what, got);
	else
		check(0, "%s: got %llu, want %llu", what, got, want);
}
