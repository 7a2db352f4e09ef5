/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_EXTENT_IO_TREE_H
#define BTRFS_SPACE_EXTENT_IO_TREE_H

#include <stdbool.h>
#include "common/types.h"

/*
 * The extent state bits of 6.18 (fs/btrfs/extent-io-tree.h), by the values
 * the btrfs_*_extent_bit tracepoints print by name (or in hex when the
 * trace has no name for them).
 */
#define EXTENT_DIRTY		(1U << 0)
#define EXTENT_LOCKED		(1U << 1)
#define EXTENT_DIO_LOCKED	(1U << 2)
#define EXTENT_DIRTY_LOG1	(1U << 3)
#define EXTENT_DIRTY_LOG2	(1U << 4)
#define EXTENT_DELALLOC		(1U << 5)
#define EXTENT_DEFRAG		(1U << 6)
#define EXTENT_BOUNDARY		(1U << 7)
#define EXTENT_NODATASUM	(1U << 8)
#define EXTENT_CLEAR_META_RESV	(1U << 9)
#define EXTENT_NEED_WAIT	(1U << 10)
#define EXTENT_NORESERVE	(1U << 11)
#define EXTENT_QGROUP_RESERVED	(1U << 12)
#define EXTENT_CLEAR_DATA_RESV	(1U << 13)
#define EXTENT_DELALLOC_NEW	(1U << 14)
#define EXTENT_ADD_INODE_BYTES	(1U << 15)
#define EXTENT_CLEAR_ALL_BITS	(1U << 16)
#define EXTENT_NOWAIT		(1U << 17)

#define EXTENT_CTLBITS		(EXTENT_ADD_INODE_BYTES | EXTENT_CLEAR_ALL_BITS | EXTENT_NOWAIT)
#define EXTENT_LOCK_BITS	(EXTENT_LOCKED | EXTENT_DIO_LOCKED)

/* "DELALLOC|LOCKED|0x4" -> bits; -EINVAL on an unknown name */
int btrfs_parse_extent_bits(const char *str, u32 *bits);

struct extent_state {
	u64 start;
	u64 end;		/* inclusive, as the kernel's */
	u32 state;
};

/* One io tree: its states sorted by start, never overlapping */
struct extent_io_tree {
	struct extent_state *states;
	u32 nr;
	u32 alloc;
	u64 *live;		/* states of all trees sharing the bound, or NULL */
};

/*
 * The set/clear hooks of an inode's io tree (btrfs_set_delalloc_extent(),
 * btrfs_clear_delalloc_extent()): called on each state of the range with
 * its bits before the change.
 */
struct extent_io_hooks {
	void (*set)(void *ctx, const struct extent_state *state, u32 bits);
	void (*clear)(void *ctx, const struct extent_state *state, u32 bits);
	void *ctx;
};

/* The most states all trees may hold together: the replay's memory bound */
#define EXTENT_STATES_MAX	(16U << 20)

int btrfs_set_extent_bit(struct extent_io_tree *tree, u64 start, u64 end,
			 u32 bits, const struct extent_io_hooks *hooks);
int btrfs_clear_extent_bit(struct extent_io_tree *tree, u64 start, u64 end,
			   u32 bits, const struct extent_io_hooks *hooks);
void extent_io_tree_release(struct extent_io_tree *tree);

#endif
