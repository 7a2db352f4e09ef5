// SPDX-License-Identifier: GPL-2.0
/*
 * An inode's io tree replayed from the btrfs_set_extent_bit /
 * btrfs_clear_extent_bit tracepoints: the splitting and merging of extent
 * states of fs/btrfs/extent-io-tree.c, __set_extent_bit() (split at both
 * ends, a new state for each gap, set_state_bits() calling the set hook on
 * every state of the range before its bits change, merge_state()) and
 * __clear_extent_bit() (split, clear_state_bit() calling the clear hook,
 * a state left with no bits freed, the rest merged; EXTENT_DELALLOC also
 * clears EXTENT_NORESERVE, EXTENT_CLEAR_ALL_BITS clears everything).
 * States with a lock bit or EXTENT_BOUNDARY never merge.  Behaviour
 * reproduced: 6.0-6.18 (the bit values are 6.18's).
 *
 * The kernel keeps states in an rbtree; a sorted array gives the same
 * states in the same order.  Not reproduced: the exclusive-bit failure of
 * a lock attempt (the retry is traced again, and the bits of the failed
 * part were set already, so the states come out the same), the waits.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "kernel-shared/extent-io-tree.h"

static const struct {
	const char *name;
	u32 bit;
} extent_bit_names[] = {
	{ "DIRTY", EXTENT_DIRTY },
	{ "LOCKED", EXTENT_LOCKED },
	{ "DIO_LOCKED", EXTENT_DIO_LOCKED },
	{ "DIRTY_LOG1", EXTENT_DIRTY_LOG1 },
	{ "DIRTY_LOG2", EXTENT_DIRTY_LOG2 },
	{ "DELALLOC", EXTENT_DELALLOC },
	{ "DEFRAG", EXTENT_DEFRAG },
	{ "BOUNDARY", EXTENT_BOUNDARY },
	{ "NODATASUM", EXTENT_NODATASUM },
	{ "CLEAR_META_RESV", EXTENT_CLEAR_META_RESV },
	{ "NEED_WAIT", EXTENT_NEED_WAIT },
	{ "NORESERVE", EXTENT_NORESERVE },
	{ "QGROUP_RESERVED", EXTENT_QGROUP_RESERVED },
	{ "CLEAR_DATA_RESV", EXTENT_CLEAR_DATA_RESV },
	{ "DELALLOC_NEW", EXTENT_DELALLOC_NEW },
};

static int parse_one_bit(const char *s, size_t len, u32 *bits)
{
	size_t i;

	if (len > 2 && s[0] == '0' && s[1] == 'x') {
		char buf[16], *end;
		unsigned long v;

		if (len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, s, len);
		buf[len] = '\0';
		v = strtoul(buf, &end, 16);
		if (*end || v > 0xffffffffUL)
			return -EINVAL;
		*bits |= v;
		return 0;
	}
	for (i = 0; i < sizeof(extent_bit_names) / sizeof(extent_bit_names[0]); i++) {
		if (strlen(extent_bit_names[i].name) == len &&
		    !strncmp(extent_bit_names[i].name, s, len)) {
			*bits |= extent_bit_names[i].bit;
			return 0;
		}
	}
	return -EINVAL;
}

int btrfs_parse_extent_bits(const char *str, u32 *bits)
{
	const char *p = str;

	*bits = 0;
	if (!*p)
		return 0;		/* print_flags prints nothing for 0 */
	for (;;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (!len || parse_one_bit(p, len, bits))
			return -EINVAL;
		if (!bar)
			return 0;
		p = bar + 1;
	}
}

/* The first state ending at or after @pos */
static u32 first_state_from(const struct extent_io_tree *tree, u64 pos)
{
	return array_lower_bound(tree->states, tree->nr, sizeof(*tree->states),
				 offsetof(struct extent_state, end), pos);
}

static int insert_state(struct extent_io_tree *tree, u32 idx,
			const struct extent_state *st)
{
	if (tree->live && *tree->live >= EXTENT_STATES_MAX)
		return -E2BIG;
	if (array_grow((void **)&tree->states, tree->nr, &tree->alloc, sizeof(*tree->states)))
		return -ENOMEM;
	memmove(&tree->states[idx + 1], &tree->states[idx],
		(tree->nr - idx) * sizeof(*st));
	tree->states[idx] = *st;
	tree->nr++;
	if (tree->live)
		(*tree->live)++;
	return 0;
}

static void remove_state(struct extent_io_tree *tree, u32 idx)
{
	memmove(&tree->states[idx], &tree->states[idx + 1],
		(tree->nr - idx - 1) * sizeof(tree->states[0]));
	tree->nr--;
	if (tree->live)
		(*tree->live)--;
}

/* split_state(): make @pos the start of a state if a state spans it */
static int split_at(struct extent_io_tree *tree, u64 pos)
{
	u32 i = first_state_from(tree, pos);
	struct extent_state right;

	if (i >= tree->nr || tree->states[i].start >= pos)
		return 0;
	right = tree->states[i];
	right.start = pos;
	tree->states[i].end = pos - 1;
	return insert_state(tree, i + 1, &right);
}

static bool can_merge(const struct extent_state *a, const struct extent_state *b)
{
	if (a->state & (EXTENT_LOCK_BITS | EXTENT_BOUNDARY))
		return false;
	return a->end + 1 == b->start && a->state == b->state;
}

/*
 * merge_state() on the states touched, [lo + 1, hi), with their
 * neighbours: the pairs (lo, lo + 1) .. (hi - 1, hi)
 */
static void merge_range(struct extent_io_tree *tree, u32 lo, u32 hi)
{
	u32 j = lo + 1;

	while (j <= hi && j < tree->nr) {
		if (can_merge(&tree->states[j - 1], &tree->states[j])) {
			tree->states[j - 1].end = tree->states[j].end;
			remove_state(tree, j);
			hi--;
		} else {
			j++;
		}
	}
}

static int split_range(struct extent_io_tree *tree, u64 start, u64 end)
{
	int ret = split_at(tree, start);

	if (!ret && end != (u64)-1)
		ret = split_at(tree, end + 1);
	return ret;
}

int btrfs_set_extent_bit(struct extent_io_tree *tree, u64 start, u64 end,
			 u32 bits, const struct extent_io_hooks *hooks)
{
	u32 to_set = bits & ~EXTENT_CTLBITS;
	u32 first, i;
	u64 cur = start;
	int ret;

	if (end < start)
		return -EINVAL;
	ret = split_range(tree, start, end);
	if (ret)
		return ret;
	first = i = first_state_from(tree, start);
	for (;;) {
		struct extent_state *st;
		struct extent_state gap;

		if (i < tree->nr && tree->states[i].start == cur) {
			st = &tree->states[i];
		} else {
			gap.start = cur;
			gap.end = (i < tree->nr && tree->states[i].start <= end) ?
				  tree->states[i].start - 1 : end;
			gap.state = 0;
			if (!to_set) {
				cur = gap.end;
				goto next;
			}
			if (hooks && hooks->set)
				hooks->set(hooks->ctx, &gap, bits);
			gap.state = to_set;
			ret = insert_state(tree, i, &gap);
			if (ret)
				return ret;
			cur = gap.end;
			i++;
			goto next;
		}
		if (hooks && hooks->set)
			hooks->set(hooks->ctx, st, bits);
		st->state |= to_set;
		cur = st->end;
		i++;
next:
		if (cur >= end)
			break;
		cur++;
	}
	merge_range(tree, first ? first - 1 : 0, i);
	return 0;
}

int btrfs_clear_extent_bit(struct extent_io_tree *tree, u64 start, u64 end,
			   u32 bits, const struct extent_io_hooks *hooks)
{
	u32 to_clear, first, i;
	int ret;

	if (end < start)
		return -EINVAL;
	if (bits & EXTENT_DELALLOC)
		bits |= EXTENT_NORESERVE;
	to_clear = (bits & EXTENT_CLEAR_ALL_BITS) ? ~0U : bits & ~EXTENT_CTLBITS;
	ret = split_range(tree, start, end);
	if (ret)
		return ret;
	first = i = first_state_from(tree, start);
	while (i < tree->nr && tree->states[i].start <= end) {
		struct extent_state *st = &tree->states[i];

		if (hooks && hooks->clear)
			hooks->clear(hooks->ctx, st, bits);
		st->state &= ~to_clear;
		if (st->state)
			i++;
		else
			remove_state(tree, i);
	}
	merge_range(tree, first ? first - 1 : 0, i);
	return 0;
}

void extent_io_tree_release(struct extent_io_tree *tree)
{
	if (tree->live)
		*tree->live -= tree->nr;
	free(tree->states);
	tree->states = NULL;
	tree->nr = tree->alloc = 0;
}
