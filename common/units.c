// SPDX-License-Identifier: GPL-2.0
/*
 * Human-readable sizes.  The output is meant to be digit-for-digit what
 * btrfs-progs prints for the same value and options, so that our output can
 * be compared with `btrfs filesystem usage` and friends.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/units.h"

#define UNITS_MAX_FIXED (UNITS_TBYTES >> UNITS_FIXED_SHIFT)
#define UNITS_NR_SUFFIXES 7

/* Seven entries: 2^64 - 1 is 16 EiB or 18.4 EB, so EiB/EB is the last. */
static const char *const binary_suffix[UNITS_NR_SUFFIXES] = {
	"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
};

static const char *const decimal_suffix[UNITS_NR_SUFFIXES] = {
	"B", "kB", "MB", "GB", "TB", "PB", "EB",
};

/*
 * Print size / base^power with two decimals.  Without a fixed unit the
 * power is the largest that leaves at least 1, and the value is taken from
 * the whole count of the next smaller unit (e.g. 1536 MiB for 1.5 GiB plus
 * a few bytes), as btrfs-progs does.
 *
 * The division is done in float, not double, on purpose: btrfs-progs does
 * so, and the rounding shows in its output (1073741824 bytes with
 * "--si --kbytes" is "1073741.88kB", not "...82kB").  For automatic units
 * the numerator is below base^2 and so exact in a float; only a fixed
 * unit on a large value loses digits, exactly as it does in btrfs-progs.
 */
static void format_scaled(u64 size, unsigned int base,
			  const char *const suffix[], unsigned int fixed,
			  char *buf, size_t buflen)
{
	u64 numer = size;
	u64 denom = 1;
	unsigned int power = 0;

	if (fixed) {
		if (fixed > UNITS_MAX_FIXED)
			return;
		for (power = 0; power < fixed; power++)
			denom *= base;
	} else {
		while (size >= base) {
			numer = size;
			size /= base;
			power++;
		}
		if (power)
			denom = base;
	}
	snprintf(buf, buflen, "%.2f%s", (float)numer / (float)denom,
		 suffix[power]);
}

const char *pretty_size_mode(u64 size, unsigned int mode, char *buf,
			     size_t buflen)
{
	unsigned int fixed = (mode & UNITS_FIXED_MASK) >> UNITS_FIXED_SHIFT;

	if (!buf || !buflen)
		return buf;
	buf[0] = '\0';
	if (mode & ~(UNITS_SCALE_MASK | UNITS_FIXED_MASK))
		return buf;

	switch (mode & UNITS_SCALE_MASK) {
	case UNITS_RAW:
		snprintf(buf, buflen, "%" PRIu64, size);
		break;
	case UNITS_BINARY:
		format_scaled(size, 1024, binary_suffix, fixed, buf, buflen);
		break;
	case UNITS_DECIMAL:
		format_scaled(size, 1000, decimal_suffix, fixed, buf, buflen);
		break;
	}
	return buf;
}

/*
 * Each option keeps part of the current mode and sets the rest, which is
 * what makes "-k --si" and "--si -k" mean the same thing.
 */
struct units_option {
	const char *name;
	unsigned int keep;
	unsigned int set;
};

static const struct units_option units_options[] = {
	{ "-b",			0,			UNITS_RAW },
	{ "--raw",		0,			UNITS_RAW },
	{ "-h",			0,			UNITS_BINARY },
	{ "--human-readable",	0,			UNITS_BINARY },
	{ "-H",			0,			UNITS_DECIMAL },
	{ "--iec",		UNITS_FIXED_MASK,	UNITS_BINARY },
	{ "--si",		UNITS_FIXED_MASK,	UNITS_DECIMAL },
	{ "-k",			UNITS_SCALE_MASK,	UNITS_KBYTES },
	{ "--kbytes",		UNITS_SCALE_MASK,	UNITS_KBYTES },
	{ "-m",			UNITS_SCALE_MASK,	UNITS_MBYTES },
	{ "--mbytes",		UNITS_SCALE_MASK,	UNITS_MBYTES },
	{ "-g",			UNITS_SCALE_MASK,	UNITS_GBYTES },
	{ "--gbytes",		UNITS_SCALE_MASK,	UNITS_GBYTES },
	{ "-t",			UNITS_SCALE_MASK,	UNITS_TBYTES },
	{ "--tbytes",		UNITS_SCALE_MASK,	UNITS_TBYTES },
};

int units_parse_option(const char *opt, unsigned int *mode)
{
	size_t i;

	if (!opt || !mode)
		return 0;
	for (i = 0; i < sizeof(units_options) / sizeof(units_options[0]); i++) {
		const struct units_option *u = &units_options[i];

		if (strcmp(opt, u->name))
			continue;
		*mode = (*mode & u->keep) | u->set;
		/* A caller that started from 0 still gets a printable mode. */
		if (!(*mode & UNITS_SCALE_MASK))
			*mode |= UNITS_DEFAULT;
		return 1;
	}
	return 0;
}
