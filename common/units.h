// SPDX-License-Identifier: GPL-2.0
/*
 * Formatting byte counts for humans, the way btrfs-progs prints them.
 */
#ifndef BTRFS_SPACE_COMMON_UNITS_H
#define BTRFS_SPACE_COMMON_UNITS_H

#include <stddef.h>

#include "common/types.h"

/*
 * A units mode is a scale in the low byte plus an optional fixed unit in
 * the next byte:
 *
 *   UNITS_RAW      plain integer bytes; any fixed unit is ignored
 *   UNITS_BINARY   base 1024: B, KiB, MiB, GiB, TiB, PiB, EiB
 *   UNITS_DECIMAL  base 1000: B, kB, MB, GB, TB, PB, EB
 *
 * Without a fixed unit the largest unit that keeps the number >= 1 is
 * picked.  The fixed unit field holds the power of the base, so
 * UNITS_BINARY | UNITS_MBYTES prints MiB and UNITS_DECIMAL | UNITS_MBYTES
 * prints MB.
 */
#define UNITS_SCALE_MASK	0x00ffU
#define UNITS_RAW		0x0001U
#define UNITS_BINARY		0x0002U
#define UNITS_DECIMAL		0x0003U

#define UNITS_FIXED_SHIFT	8
#define UNITS_FIXED_MASK	(0xffU << UNITS_FIXED_SHIFT)
#define UNITS_KBYTES		(1U << UNITS_FIXED_SHIFT)
#define UNITS_MBYTES		(2U << UNITS_FIXED_SHIFT)
#define UNITS_GBYTES		(3U << UNITS_FIXED_SHIFT)
#define UNITS_TBYTES		(4U << UNITS_FIXED_SHIFT)

#define UNITS_DEFAULT		UNITS_BINARY

/* Big enough for any u64 in any mode, with the terminating NUL. */
#define UNITS_BUF_LEN		32

/*
 * Format @size according to @mode into @buf (at most @buflen bytes, always
 * NUL-terminated when @buflen > 0) and return @buf, so that calls can be
 * used directly as printf arguments.  An unknown mode gives "".
 * Non-raw modes print two decimals: "1.50GiB", "1536.00MiB".
 */
const char *pretty_size_mode(u64 size, unsigned int mode, char *buf,
			     size_t buflen);

/*
 * If @opt is a units option, update *@mode and return 1, else return 0
 * and leave *@mode alone:
 *   -b, --raw              raw bytes
 *   -h, --human-readable   automatic unit, base 1024
 *   -H                     automatic unit, base 1000
 *   --iec, --si            switch to base 1024 / 1000, keeping a fixed unit
 *   -k -m -g -t, --kbytes --mbytes --gbytes --tbytes
 *                          fixed unit, keeping the base
 * As in btrfs-progs, a fixed unit does not end raw mode: "--raw -k" is
 * still raw, while "--raw -k --si" prints kB.
 */
int units_parse_option(const char *opt, unsigned int *mode);

#endif
