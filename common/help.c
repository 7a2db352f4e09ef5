// SPDX-License-Identifier: GPL-2.0
#include "common/help.h"

/*
 * A usage array is: one or more synopsis lines, a one-line description,
 * an empty line, then one line per option, NULL-terminated (btrfs-progs'
 * layout: further synopsis lines print as "   or: ...").
 */
void usage_print(FILE *out, const char * const *usagestr)
{
	int blank, i;

	for (blank = 0; usagestr[blank] && usagestr[blank][0]; blank++)
		;
	for (i = 0; i < blank - 1; i++)
		fprintf(out, "%s %s\n", i ? "   or:" : "usage:", usagestr[i]);
	if (blank > 1)
		fprintf(out, "\n%s\n", usagestr[blank - 1]);
	for (i = blank; usagestr[i]; i++)
		fprintf(out, "%s%s\n", usagestr[i][0] ? "    " : "", usagestr[i]);
}
