/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A map from u64 keys (bytenrs) to u64 values (an index into the caller's
 * own array): open addressing, linear probing, doubled when half full, so
 * that a model that looks a block up once per item stays linear in the
 * items instead of scanning every block it has seen.
 */
#ifndef BTRFS_SPACE_COMMON_U64_INDEX_H
#define BTRFS_SPACE_COMMON_U64_INDEX_H

#include <stdbool.h>
#include "common/types.h"

struct u64_index_slot {
	u64 key;
	u64 value_plus_one;		/* 0: the slot is free */
};

struct u64_index {
	struct u64_index_slot *slots;
	u64 cap;			/* a power of two, or 0 */
	u64 used;
};

/* true and *@value when @key is in @idx */
bool u64_index_get(const struct u64_index *idx, u64 key, u64 *value);
/* @key maps to @value from now on: 0, or -ENOMEM with @idx unchanged */
int u64_index_put(struct u64_index *idx, u64 key, u64 value);
/* Empty again, the slots kept for reuse */
void u64_index_clear(struct u64_index *idx);
void u64_index_free(struct u64_index *idx);

#endif
