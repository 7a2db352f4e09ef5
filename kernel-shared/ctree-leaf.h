/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_CTREE_LEAF_H
#define BTRFS_SPACE_CTREE_LEAF_H

#include <stdbool.h>
#include <stdint.h>
#include "kernel-shared/ctree.h"
#include "kernel-shared/fs.h"

/*
 * Item inserts and deletes in one tree as a transaction makes them
 * (ctree.c: btrfs_insert_empty_item() with split_leaf(), push_leaf_right()
 * and push_leaf_left(); btrfs_del_items() with its pushes and
 * btrfs_del_leaf()), on the keys and sizes of the image's items: only
 * how many blocks the tree gains or loses is kept.  The leaves under each
 * level-1 node are loaded whole when a key first falls under it.
 */
struct btrfs_sim_item {
	struct btrfs_key key;
	u32 size;			/* item data bytes, header not counted */
};

struct btrfs_sim_items_leaf {
	u64 start;			/* the image's block; 0 = made by a split */
	struct btrfs_key image_key;	/* its first key in the image: the search path to it */
	struct btrfs_sim_item *items;
	u32 nr;
	u32 cap;
	bool touched;			/* changed, or COWed by a push that was tried */
	bool sibling_read;		/* read by a push as the path's sibling */
};

struct btrfs_sim_group {
	bool has_lo, has_hi;		/* keys routed here: [lo, hi) */
	struct btrfs_key lo, hi;
	bool has_parent;		/* false: the root is this one leaf */
	/*
	 * The level-1 node (with has_parent): the image's block (0: made by a
	 * split), a key whose search in the image reaches it, its parent (0:
	 * it is the root; a made-up id for a root a split made), the parent's
	 * pointers as changed, and whether it is its parent's first or last
	 */
	u64 node_start;
	struct btrfs_key image_key;
	u64 parent_id;
	u32 parent_nr;
	bool parent_root;		/* the parent is the tree's root */
	bool first, last;
	bool node_read;			/* read by a node push or reada_for_balance() */
	bool node_cowed;		/* copied by push_nodes_for_insert() */
	struct btrfs_sim_items_leaf **leaves;
	u32 nr;
	u32 cap;
};

/*
 * A node above level 1 (level 2 up to the root), loaded with the path of
 * the first group under it: its pointers' keys as changed, and the keys
 * routed to it.  The groups (level 1) and nodes one level down whose keys
 * fall in its range are its children.
 */
struct btrfs_sim_node {
	u64 id;				/* the image's block, or a made-up id */
	u64 start;			/* the image's block; 0 = made by a split */
	int level;
	bool root;			/* the tree's root */
	bool has_lo, has_hi;		/* keys routed here: [lo, hi) */
	struct btrfs_key lo, hi;
	struct btrfs_key image_key;	/* a key whose search in the image reaches it */
	struct btrfs_key *keys;		/* its pointers' keys */
	u32 nr;
	u32 cap;
	bool node_read;			/* read as a sibling (reada_for_balance()) */
	bool node_cowed;		/* copied by a push or balance_level() */
};

/*
 * What the transaction did to the tree's blocks, in the order it did it:
 * btrfs_cow_block() takes the next free place as each block is first
 * changed, so which copies a later btrfs_del_leaf() frees, and which
 * places keep their extent items, follow this order
 */
enum btrfs_sim_event_kind {
	SIM_EV_COW,			/* an image leaf first changed: its path, then it, copied */
	SIM_EV_COW_NODE,		/* an image node copied by a node push or balance */
	SIM_EV_NEW,			/* a split's new leaf or node, or a new root */
	SIM_EV_FREE,			/* an image leaf freed */
	SIM_EV_FREE_NODE,		/* an image node freed */
	SIM_EV_FREE_NEW,		/* a block the transaction made, freed */
};

struct btrfs_sim_event {
	u64 start;			/* the image block (COW and FREE kinds) */
	struct btrfs_key key;		/* an image key whose search passes its parents */
	u8 kind;
	u8 level;			/* COW_NODE, FREE_NODE: the node's level */
};

struct btrfs_tree_sim {
	struct btrfs_fs_info *fs_info;
	struct btrfs_root_ref root;
	struct btrfs_sim_group *groups;
	u32 nr_groups;
	u32 cap_groups;
	struct btrfs_sim_node *nodes;	/* the loaded nodes of level 2 and up */
	u32 nr_nodes;
	u32 cap_nodes;
	u64 made_nodes;			/* made-up ids given */
	u32 last_node[BTRFS_MAX_LEVEL];	/* per level, where the last key was found */
	int64_t blocks;			/* tree blocks added minus freed */
	u64 splits;			/* split_leaf() new leaves */
	u64 new_roots;			/* insert_new_root() */
	u64 leaves_freed;		/* btrfs_del_leaf() */
	u64 node_splits;		/* split_node() new nodes (counted in splits too) */
	u64 node_pushes;		/* push_nodes_for_insert() that moved pointers */
	u64 node_balances;		/* balance_level() that acted (siblings or root) */
	u64 nodes_freed;		/* nodes balance_level() emptied or collapsed */
	u64 *freed_node_starts;		/* the image nodes among them */
	int *freed_node_levels;		/* and their levels */
	u32 cap_freed_node_levels;
	u32 nr_freed_node_starts;
	u32 cap_freed_node_starts;
	u64 *freed_starts;		/* the image blocks among them */
	u32 nr_freed_starts;
	u32 cap_freed_starts;
	bool inexact;			/* a key was missing or a rule not followed */
	u64 changes;			/* calls that may have changed a leaf */
	u64 touch_marks;		/* leaves marked touched (each once) */
	u32 last_group;			/* where the last key was found */
	/*
	 * With log_events, every COW, new block and free in the order made
	 * (the commit replays them so: the log replay's trees, changed
	 * before its commit's first look); events_lost after -ENOMEM
	 */
	bool log_events;
	bool events_lost;
	struct btrfs_sim_event *events;
	u32 nr_events;
	u32 cap_events;
	/*
	 * When set, groups are copied from this simulation (which must keep
	 * the image's items: only ever preloaded) instead of read again.
	 */
	struct btrfs_tree_sim *source;
};

void btrfs_tree_sim_init(struct btrfs_tree_sim *ts, struct btrfs_fs_info *fs_info,
			 const struct btrfs_root_ref *root);
void btrfs_tree_sim_release(struct btrfs_tree_sim *ts);
/* 0 done, 1 the key exists (insert) or is absent (the others), or -errno */
int btrfs_tree_sim_insert(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			  u32 data_size);
int btrfs_tree_sim_insert_batch(struct btrfs_tree_sim *ts, const struct btrfs_key *keys,
				const u32 *sizes, u32 nr);
int btrfs_tree_sim_delete(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			  bool balance);
int btrfs_tree_sim_lookup(struct btrfs_tree_sim *ts, const struct btrfs_key *key, u32 *size);
int btrfs_tree_sim_set_key(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			   const struct btrfs_key *new_key);
int btrfs_tree_sim_extend(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			  u32 ins_len, u32 grow);
int btrfs_tree_sim_truncate(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			    u32 new_size);
/* A COW search of @key that changes nothing in the item (an update in place) */
int btrfs_tree_sim_touch(struct btrfs_tree_sim *ts, const struct btrfs_key *key);
/* Load the leaves under the level-1 node of @key, changing nothing */
int btrfs_tree_sim_preload(struct btrfs_tree_sim *ts, const struct btrfs_key *key);

/* What btrfs_tree_sim_neighbours() finds around an absent key */
struct btrfs_sim_neighbours {
	bool has_prev;			/* an item before it in its leaf */
	struct btrfs_sim_item prev;
	u32 leaf_free;			/* that leaf's free space */
	bool slot0;			/* the key would be the leaf's first */
	bool has_next;
	struct btrfs_key next;		/* the first key after it */
};

int btrfs_tree_sim_neighbours(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			      struct btrfs_sim_neighbours *nb);
/* The leaf btrfs_next_leaf() reads after the last item of a leaf: a key to search */
int btrfs_tree_sim_next_leaf(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			     struct btrfs_key *first);
/*
 * The leaf btrfs_read_locked_inode() of the inode item @key steps into
 * (btrfs_load_inode_props() past the end of its leaf): 0 and a key whose
 * search in the image reads it, 1 none
 */
int btrfs_tree_sim_inode_props_leaf(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
				    struct btrfs_key *first);
int btrfs_tree_sim_reserve(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			   u32 ins_len);
int btrfs_tree_sim_split_item(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			      const struct btrfs_key *new_key, u32 split_offset);

#endif
