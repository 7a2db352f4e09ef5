/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_HASH_H
#define BTRFS_SPACE_HASH_H

#include "common/types.h"

/*
 * splitmix64's finalizer, for the open-addressing tables keyed by
 * bytenrs: those share their low bits (sector or node aligned), which a
 * plain mask would map to a few slots.
 */
static inline u64 hash_mix64(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#endif
