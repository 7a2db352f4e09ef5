/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_HELP_H
#define BTRFS_SPACE_HELP_H

#include <stdio.h>

/* Exit statuses, as the man page documents them */
#define EXIT_FS_ERROR	1
#define EXIT_USAGE	2
#define EXIT_BELOW_LIMIT	3	/* forecast --fail-below: a limit not met */
#define NAGIOS_UNKNOWN		3	/* --format nagios: the plugin's UNKNOWN */

/*
 * A usage array (btrfs-progs' layout): one or more synopsis lines, a
 * one-line description, an empty line, then the options, NULL-terminated.
 * An option line is "OPTION  description": the option ends at the first
 * tab or run of two spaces; a line that starts with blanks continues the
 * description above; a line ending in ':' is a heading.  usage_print()
 * aligns the descriptions in one column and wraps at 80 columns.
 *
 * The global and unit options are written once, in common/help.c:
 * HELPINFO_GLOBALS and HELPINFO_UNITS_SHORT_LONG stand for them.  The
 * tool's own usage (usage_print_full()) prints them in full under their
 * headings; a command's usage prints one line saying where they are.
 */
#define HELPINFO_MARK_GLOBALS	"\001globals"
#define HELPINFO_MARK_UNITS	"\001units"
#define HELPINFO_GLOBALS	HELPINFO_MARK_GLOBALS
#define HELPINFO_UNITS_SHORT_LONG HELPINFO_MARK_UNITS

/* A command's usage: the global and unit options named only */
void usage_print(FILE *out, const char * const *usagestr);
/* The tool's usage: the global and unit options in full */
void usage_print_full(FILE *out, const char * const *usagestr);

#endif
