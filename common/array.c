// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "common/array.h"

int array_grow(void **array, u32 nr, u32 *cap, size_t size)
{
	u32 new_cap;
	void *p;

	if (nr < *cap)
		return 0;
	new_cap = *cap ? *cap * 2 : 16;
	if (new_cap <= *cap || new_cap > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*array, (size_t)new_cap * size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = new_cap;
	return 0;
}

int array_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}
