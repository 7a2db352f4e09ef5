/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's helpers that btrfs-space's code reads like, written once
 * (btrfs-progs keeps the same in include/kerncompat.h): min_t()/max_t()
 * of linux/minmax.h and the SZ_* sizes of linux/sizes.h.
 */
#ifndef BTRFS_SPACE_COMMON_KERNCOMPAT_H
#define BTRFS_SPACE_COMMON_KERNCOMPAT_H

#include "common/types.h"

#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max_t(type, a, b) ((type)(a) > (type)(b) ? (type)(a) : (type)(b))

#define SZ_64K	(64ULL << 10)
#define SZ_128K	(128ULL << 10)
#define SZ_1M	(1ULL << 20)
#define SZ_8M	(8ULL << 20)
#define SZ_32M	(32ULL << 20)
#define SZ_128M	(128ULL << 20)

/* The kernel's mult_perc() (fs/btrfs/misc.h): @percent of @num, rounded down */
static inline u64 mult_perc(u64 num, u32 percent)
{
	return num * percent / 100;
}

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define SZ_256M	(256ULL << 20)
#define SZ_512M	(512ULL << 20)
#define SZ_1G	(1ULL << 30)

#endif
