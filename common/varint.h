/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unsigned LEB128 varints and zigzag signs, for the packed lists the tool
 * keeps in memory (packed-refs.c, file-item.c's drop stream).  Only for
 * bytes the tool wrote itself: the decoder trusts its input to end.
 */
#ifndef BTRFS_SPACE_COMMON_VARINT_H
#define BTRFS_SPACE_COMMON_VARINT_H

#include <stdint.h>
#include "common/types.h"

/* a u64 as a varint takes at most this many bytes */
#define VARINT_U64_MAX		10

static inline u8 *put_varint(u8 *p, u64 v)
{
	while (v >= 0x80) {
		*p++ = (u8)(v | 0x80);
		v >>= 7;
	}
	*p++ = (u8)v;
	return p;
}

static inline const u8 *get_varint(const u8 *p, u64 *v)
{
	u32 shift = 0;

	*v = 0;
	do {
		*v |= (u64)(*p & 0x7f) << shift;
		shift += 7;
	} while (*p++ & 0x80);
	return p;
}

/* a signed difference as an unsigned one small in magnitude either way */
static inline u64 zigzag(u64 delta)
{
	return (delta << 1) ^ (u64)((int64_t)delta >> 63);
}

static inline u64 unzigzag(u64 v)
{
	return (v >> 1) ^ -(v & 1);
}

#endif
