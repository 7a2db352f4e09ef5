// SPDX-License-Identifier: GPL-2.0
#include "common/help.h"

/*
 * A usage array is: synopsis, one-line description, empty line, then one
 * line per option, NULL-terminated (btrfs-progs' layout).
 */
void usage_print(FILE *out, const char * const *usagestr)
{
	int i;

	fprintf(out, "usage: %s\n", usagestr[0]);
	for (i = 1; usagestr[i]; i++) {
		if (i <= 2)
			fprintf(out, "%s\n", usagestr[i]);
		else
			fprintf(out, "    %s\n", usagestr[i]);
	}
}
