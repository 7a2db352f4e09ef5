/* SPDX-License-Identifier: GPL-2.0 */
/* Arrays that grow by doubling, for the lists the models build */
#ifndef BTRFS_SPACE_COMMON_ARRAY_H
#define BTRFS_SPACE_COMMON_ARRAY_H

#include <stddef.h>
#include "common/types.h"

/*
 * Room for element @nr of @size bytes in *@array of *@cap elements: the
 * capacity doubles (from 16) when it is full.  0, or -ENOMEM with the
 * array unchanged (out of memory, or a capacity past u32).
 */
int array_grow(void **array, u32 nr, u32 *cap, size_t size);

#endif
