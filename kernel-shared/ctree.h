/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What fs/btrfs/ctree.h gives every file beside the on-disk format
 * (uapi/btrfs_tree.h with the in-memory key, and its getters and sizes in
 * accessors.h, both included here): the order of keys, the on-disk inode
 * modes and name hash; and the functions of ctree.c, the tree search and
 * walk.  The item and pointer access of a block is in tree-block.h, the
 * reads in disk-io.h; the rest of the kernel's ctree.c is modelled in
 * ctree-cow.h and ctree-leaf.h, its read-ahead in reada.h.
 */
#ifndef BTRFS_SPACE_CTREE_H
#define BTRFS_SPACE_CTREE_H

#include <stdbool.h>
#include <stddef.h>
#include "common/checksum.h"
#include "common/kerncompat.h"
#include "kernel-shared/accessors.h"

/* btrfs_comp_cpu_keys(): objectid, then type, then offset */
static inline int btrfs_comp_keys(const struct btrfs_key *a, const struct btrfs_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

/*
 * The on-disk mode is the Linux one; <sys/stat.h> is not used because it
 * drags in <linux/stat.h>, whose __le64 clashes with ctree.h's.
 */
#define BTRFS_S_IFMT			0170000
#define BTRFS_S_IFREG			0100000
#define BTRFS_S_IFDIR			0040000
#define BTRFS_S_IFLNK			0120000
#define BTRFS_S_IFBLK			0060000
#define BTRFS_S_IFSOCK			0140000

static inline bool btrfs_mode_is(u32 mode, u32 type)
{
	return (mode & BTRFS_S_IFMT) == type;
}

/*
 * The key offset of a DIR_ITEM: the kernel's crc32c() of the name, seed ~1,
 * no final inversion (btrfs_name_hash(), fs/btrfs/ctree.h up to 6.1)
 */
static inline u32 btrfs_name_hash(const char *name, size_t len)
{
	return crc32c_raw((u32)~1, name, len);
}

struct btrfs_fs_info;
struct btrfs_root_ref;
struct btrfs_tree_block;

struct btrfs_error;

/*
 * The tree-edit rules of fs/btrfs/ctree.c (5.x-6.18) that the search's
 * read-ahead (ctree.c) and both edit models (ctree-cow.c, ctree-leaf.c)
 * follow, written once: setup_nodes_for_search() splits a node an
 * insertion's search passes with BTRFS_NODEPTRS_PER_BLOCK - 3 pointers or
 * more, and balances one a deletion's search passes with fewer than half;
 * balance_level() returns at once for a node of more than a quarter (not
 * the root); btrfs_del_items() pushes a leaf left with less than a third of
 * its data to its siblings.  @max is BTRFS_NODEPTRS_PER_BLOCK, @data_size
 * BTRFS_LEAF_DATA_SIZE.
 */
static inline bool btrfs_node_split_on_insert(u32 nritems, u32 max)
{
	return nritems >= max - 3;
}

static inline bool btrfs_node_balance_on_delete(u32 nritems, u32 max)
{
	return nritems < max / 2;
}

static inline bool btrfs_balance_level_returns(u32 nritems, u32 max)
{
	return nritems > max / 4;
}

static inline bool btrfs_del_items_pushes(u32 used, u32 data_size)
{
	return used < data_size / 3;
}

/*
 * split_leaf(), push_for_double_split(): the room a push must make for an
 * insert of @data_size; the leaf's @free counts when items stay beyond
 * the slot (after it for a push right, before it for a push left)
 */
static inline u32 btrfs_split_push_need(u32 data_size, u32 free, bool items_beyond)
{
	if (!items_beyond)
		return data_size;
	return data_size > free ? data_size - free : 0;
}

/*
 * One push of split_leaf() or btrfs_del_items() to a sibling, as
 * push_leaf_right() and push_leaf_left() count it: the one rule both the
 * leaf-edit model (ctree-leaf.c) and the COW model (ctree-cow.c) push by.
 * The pushing leaf's items are seen through @item_space.
 */
struct btrfs_leaf_push {
	u32 (*item_space)(const void *leaf, u32 i);	/* item @i's data and header */
	const void *leaf;
	u32 nr;				/* the pushing leaf's items */
	u32 slot;			/* the path's slot in it (@nr: past the last) */
	u32 min_data;			/* what the insert at the slot adds */
	u32 free_space;			/* the sibling's free bytes */
	u32 leaf_free;			/* the pushing leaf's free bytes */
	bool empty;			/* a delete's push: as many as fit */
	u32 limit;			/* right: min_slot; left: max_slot */
};

/* How many of the last (right) or first (left) items move */
u32 btrfs_leaf_push_right_nr(const struct btrfs_leaf_push *p);
u32 btrfs_leaf_push_left_nr(const struct btrfs_leaf_push *p);

/*
 * How many pointers push_node_left(dst, src, @empty) and
 * balance_node_right(dst, src) move between nodes of @max pointers: the
 * one rule of the leaf model's node levels and of ctree-cow.c's
 * balance_level()
 */
u32 btrfs_node_push_left_nr(u32 dst_nr, u32 src_nr, u32 max, bool empty);
u32 btrfs_node_push_right_nr(u32 dst_nr, u32 src_nr, u32 max);

/*
 * The pointer moves of balance_level(), in the kernel's order, for a node
 * of @mid pointers between siblings of @left and @right (@has_left,
 * @has_right: there is one): the one order the leaf model's node levels
 * and ctree-cow.c's pointer counts both follow
 */
struct btrfs_balance_moves {
	u32 mid_to_left;	/* push_node_left(left, mid, 1) */
	u32 right_to_mid;	/* push_node_left(mid, right, 1) */
	bool right_emptied;	/* then freed, its range the node's */
	bool one_without_left;	/* one pointer left and no left sibling: -EUCLEAN */
	u32 left_to_mid;	/* one pointer left: balance_node_right(mid, left) */
	u32 last_to_left;	/* or, that moving none, push_node_left(left, mid, 1) */
	bool mid_emptied;	/* then freed, its range the left's */
};

void btrfs_balance_level_moves(u32 left, u32 mid, u32 right, bool has_left, bool has_right,
			       u32 max, struct btrfs_balance_moves *mv);

/*
 * A search's blocks and slots from the root (nodes[level]) to the leaf,
 * and the record its read errors go to: NULL for the filesystem's
 * (fs_info->err), or the caller's own where it weighs the error first.
 */
struct btrfs_path {
	struct btrfs_tree_block *nodes[BTRFS_MAX_LEVEL];
	int slots[BTRFS_MAX_LEVEL];
	struct btrfs_error *err;
	/*
	 * path->reada = READA_FORWARD: set (with in_memory) where the kernel
	 * sets it and the caller counts what the kernel reads; NULL: none
	 */
	const struct btrfs_reada_forward *reada;
	/*
	 * The kernel search's ins_len, by its sign: < 0 a deletion's search,
	 * > 0 an insertion's, 0 a lookup.  Only its read-ahead is followed
	 * here (reada_for_balance(), ctree.c); nothing is balanced or split.
	 */
	int ins_len;
};

/*
 * reada_for_search() with READA_FORWARD: before a leaf that is not in
 * memory is read through its level-1 node, the leaves after it under that
 * node whose blocks lie within 64 KiB of it are read too (at most 64 KiB
 * of them, 32 slots looked at).  What is in memory is the caller's to say
 * (the kernel's find_extent_buffer()): the blocks its counted reads met.
 */
struct btrfs_reada_forward {
	bool (*in_memory)(void *ctx, u64 bytenr);
	void *ctx;
};

/* 0 and the slot of @key, or 1 and the slot of the first key above it */
int bin_search_block(const struct btrfs_tree_block *eb, const struct btrfs_key *key,
		     int *slot);
void btrfs_release_path(struct btrfs_path *path);
/* A tree's root block; its read error recorded in @err */
int btrfs_read_root_node(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			 const struct btrfs_root_ref *root, unsigned int purpose,
			 struct btrfs_tree_block **eb);
/* A node's child, its read error recorded in fs_info->err */
int btrfs_read_node_slot(struct btrfs_fs_info *fs_info, u64 root_id,
			 const struct btrfs_tree_block *parent, int slot,
			 unsigned int purpose, struct btrfs_tree_block **child);
int btrfs_search_slot(struct btrfs_fs_info *fs_info,
		      const struct btrfs_root_ref *root,
		      const struct btrfs_key *key, struct btrfs_path *path,
		      unsigned int purpose);
/*
 * btrfs_search_slot() on a path an earlier search of @root left (not
 * released): the nodes the new key reaches through the same slots are
 * not read again (the same block against the same parent pointer, which
 * passed and was seen by the read observer), the rest as
 * btrfs_search_slot() reads them; the path ends as that search's would.
 * The mount estimate's replay of 772 block-group searches (block-group.c)
 * read the root and a level-1 node again at each.  A released path, a
 * path of another root, or one with read-ahead or an insertion's or a
 * deletion's search: btrfs_search_slot().
 */
int btrfs_search_slot_again(struct btrfs_fs_info *fs_info,
			    const struct btrfs_root_ref *root,
			    const struct btrfs_key *key, struct btrfs_path *path,
			    unsigned int purpose);
int btrfs_next_item(struct btrfs_fs_info *fs_info,
		    const struct btrfs_root_ref *root, struct btrfs_path *path,
		    unsigned int purpose);
int btrfs_next_leaf(struct btrfs_fs_info *fs_info,
		    const struct btrfs_root_ref *root, struct btrfs_path *path,
		    unsigned int purpose);

typedef int (*btrfs_leaf_fn)(struct btrfs_fs_info *fs_info,
			     const struct btrfs_tree_block *leaf, void *ctx);
int btrfs_walk_tree(struct btrfs_fs_info *fs_info,
		    const struct btrfs_root_ref *root, unsigned int purpose,
		    btrfs_leaf_fn leaf_fn, void *ctx);
/*
 * btrfs_walk_tree() for a tree read once: each leaf leaves the cache as
 * soon as @leaf_fn is done with it, so the walk holds its path and one
 * leaf, whatever the tree's size (csum-delete --top).
 */
int btrfs_stream_tree(struct btrfs_fs_info *fs_info,
		      const struct btrfs_root_ref *root, unsigned int purpose,
		      btrfs_leaf_fn leaf_fn, void *ctx);

#endif
