/* SPDX-License-Identifier: GPL-2.0 */
/* Arrays that grow by doubling, for the lists the models build */
#ifndef BTRFS_SPACE_COMMON_ARRAY_H
#define BTRFS_SPACE_COMMON_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include "common/types.h"

/*
 * Room for element @nr of @size bytes in *@array of *@cap elements: the
 * capacity doubles (from 16) when it is full.  0, or -ENOMEM with the
 * array unchanged (out of memory, or a capacity past u32).
 */
int array_grow(void **array, u32 nr, u32 *cap, size_t size);

/* qsort() and bsearch() order of u64s, ascending */
int array_cmp_u64(const void *a, const void *b);

/*
 * Binary search of @nr elements of @size bytes at @base, sorted by the u64
 * at byte @offset of each (offsetof() the field): the index of the first
 * whose field is at least @key (array_lower_bound()) or above @key
 * (array_upper_bound()), @nr when there is none.
 */
static inline u32 array_bound(const void *base, u32 nr, size_t size, size_t offset,
			      u64 key, bool upper)
{
	u32 lo = 0, hi = nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		u64 field = *(const u64 *)((const char *)base + (size_t)mid * size + offset);

		if (field < key || (upper && field == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline u32 array_lower_bound(const void *base, u32 nr, size_t size, size_t offset,
				    u64 key)
{
	return array_bound(base, nr, size, offset, key, false);
}

static inline u32 array_upper_bound(const void *base, u32 nr, size_t size, size_t offset,
				    u64 key)
{
	return array_bound(base, nr, size, offset, key, true);
}

/*
 * Of @nr elements of @size bytes at @base, sorted by a u64 start at byte
 * @start_off and not overlapping, each @key - start < the u64 length at
 * @len_off: the index of the one holding @key, @nr when none does.
 */
static inline u32 array_find_range(const void *base, u32 nr, size_t size, size_t start_off,
				   size_t len_off, u64 key)
{
	u32 i = array_upper_bound(base, nr, size, start_off, key);
	const char *e;

	if (!i)
		return nr;
	e = (const char *)base + (size_t)(i - 1) * size;
	return key - *(const u64 *)(e + start_off) < *(const u64 *)(e + len_off) ? i - 1 : nr;
}

#endif
