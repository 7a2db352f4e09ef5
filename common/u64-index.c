// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/hash.h"
#include "common/u64-index.h"

#define U64_INDEX_MIN_SLOTS	64

static struct u64_index_slot *find_slot(struct u64_index_slot *slots, u64 cap, u64 key)
{
	u64 i = hash_mix64(key) & (cap - 1);

	while (slots[i].value_plus_one && slots[i].key != key)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

bool u64_index_get(const struct u64_index *idx, u64 key, u64 *value)
{
	const struct u64_index_slot *s;

	if (!idx->cap)
		return false;
	s = find_slot(idx->slots, idx->cap, key);
	if (!s->value_plus_one)
		return false;
	*value = s->value_plus_one - 1;
	return true;
}

static int grow(struct u64_index *idx)
{
	u64 cap = idx->cap ? idx->cap * 2 : U64_INDEX_MIN_SLOTS, i;
	struct u64_index_slot *slots;

	if (cap > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < idx->cap; i++)
		if (idx->slots[i].value_plus_one)
			*find_slot(slots, cap, idx->slots[i].key) = idx->slots[i];
	free(idx->slots);
	idx->slots = slots;
	idx->cap = cap;
	return 0;
}

int u64_index_put(struct u64_index *idx, u64 key, u64 value)
{
	struct u64_index_slot *s;
	int ret;

	if (value == UINT64_MAX)
		return -EOVERFLOW;
	if ((idx->used + 1) * 2 > idx->cap) {
		ret = grow(idx);
		if (ret)
			return ret;
	}
	s = find_slot(idx->slots, idx->cap, key);
	if (!s->value_plus_one)
		idx->used++;
	s->key = key;
	s->value_plus_one = value + 1;
	return 0;
}

void u64_index_clear(struct u64_index *idx)
{
	if (idx->used)
		memset(idx->slots, 0, idx->cap * sizeof(*idx->slots));
	idx->used = 0;
}

void u64_index_free(struct u64_index *idx)
{
	free(idx->slots);
	idx->slots = NULL;
	idx->cap = idx->used = 0;
}
