// SPDX-License-Identifier: GPL-2.0
/*
 * Fixed-width integer names used throughout btrfs-space.  They are plain
 * aliases of the <stdint.h> types so that code reads like the kernel and
 * btrfs-progs without depending on either.
 */
#ifndef BTRFS_SPACE_COMMON_TYPES_H
#define BTRFS_SPACE_COMMON_TYPES_H

#include <stdint.h>

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;

/* A macro's value as a string literal, as the kernel's linux/stringify.h */
#define __stringify_1(x)	#x
#define __stringify(x)		__stringify_1(x)

#endif
