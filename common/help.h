/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_HELP_H
#define BTRFS_SPACE_HELP_H

#include <stdio.h>

/* Exit statuses, as the man page documents them */
#define EXIT_FS_ERROR	1
#define EXIT_USAGE	2

#define HELPINFO_UNITS_SHORT_LONG					\
	"-b|--raw           raw numbers in bytes",			\
	"-h|--human-readable human friendly numbers, base 1024 (default)", \
	"-H                 human friendly numbers, base 1000",	\
	"--iec              use 1024 as a base (KiB, MiB, GiB, TiB)",	\
	"--si               use 1000 as a base (kB, MB, GB, TB)",	\
	"-k|--kbytes        show sizes in KiB, or kB with --si",	\
	"-m|--mbytes        show sizes in MiB, or MB with --si",	\
	"-g|--gbytes        show sizes in GiB, or GB with --si",	\
	"-t|--tbytes        show sizes in TiB, or TB with --si"

#define HELPINFO_GLOBALS						\
	"--format text|json output format (default text)",		\
	"--super N          read superblock copy N (0, 1 or 2) instead of the primary", \
	"--scan             find the other devices of the filesystem (given paths, block devices)", \
	"--degraded         read with devices missing, like mount -o degraded", \
	"--readonly-device DEVID  model that device as read-only media (default: every present device is writeable)", \
	"--bg-search pinpoint|scan  find block groups by exact key (default) or walk like the kernel", \
	"--io-threads N     concurrent reads per tree level for pinpoint (default 16, 1 = one descent per block group)", \
	"-v|--verbose       say more on stderr (which copy was used, ...)", \
	"-q|--quiet         errors only: no warnings, no progress", \
	"--version          show the version and exit", \
	"--help             show this help"

void usage_print(FILE *out, const char * const *usagestr);

#endif
