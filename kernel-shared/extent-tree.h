/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What one transaction's copy-on-write of subvolume tree blocks queues as
 * delayed refs: btrfs_lookup_extent_info() and __btrfs_mod_ref() of
 * extent-tree.c, update_ref_for_cow() and the COW of a search path of
 * ctree.c, over the image's blocks and the delayed refs queued so far.
 */
#ifndef BTRFS_SPACE_EXTENT_TREE_H
#define BTRFS_SPACE_EXTENT_TREE_H

#include "common/u64-index.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/inode.h"
#include "kernel-shared/tree-block.h"

/* The backref revision in the top byte of struct btrfs_header flags */
#define BTRFS_BACKREF_REV_SHIFT		56
#define BTRFS_MIXED_BACKREF_REV		1

/* A leaf whose items the transaction deleted or moved, against the image's */
struct btrfs_sim_leaf {
	u64 start;
	u32 nritems;			/* the image's */
	u8 *gone;			/* per slot: deleted or pushed out */
	u32 nr_gone;			/* slots set in gone[] */
	u32 image_space;		/* the image's items and headers, bytes */
	u32 gone_space;			/* of which gone */
	u32 pushed_in;			/* bytes (items and headers) moved in */
	bool deleted;			/* emptied: btrfs_del_leaf() */
};

/* The blocks one transaction has COWed and what their COW queued */
struct btrfs_cow_sim {
	struct btrfs_fs_info *fs_info;
	struct btrfs_delayed_refs_sim *refs;
	u64 *cowed;			/* original blocks already copied */
	u64 nr_cowed;
	u64 cap_cowed;
	u64 next_bytenr;		/* stand-in addresses of the copies */
	u64 *copy_of;			/* per cowed[]: the copy's stand-in address */
	struct u64_index cowed_index;	/* original block -> its index in cowed[] */
	struct btrfs_sim_leaf **leaves;
	u64 nr_leaves;
	u64 cap_leaves;
	struct u64_index leaf_index;	/* leaf start -> its index in leaves[] */
	/* nodes that lost pointers to deleted leaves, and how many */
	u64 *shrunk;
	u32 *shrunk_by;
	u64 nr_shrunk;
	u64 cap_shrunk;
	struct u64_index shrunk_index;	/* node -> its index in shrunk[] */
	u64 *balanced;			/* nodes balance_level() merged */
	u64 nr_balanced;
	u64 cap_balanced;
	struct u64_index balanced_index; /* node -> its index in balanced[] */
	/* what the copies were */
	u64 cows;
	u64 shared_cows;		/* refs > 1: items' refs added */
	u64 full_backref_cows;		/* refs == 1, FULL_BACKREF: moved */
	u64 neighbour_cows;		/* siblings copied by leaf pushes, node balancing */
	u64 leaves_deleted;		/* emptied leaves freed */
	u64 splits;			/* leaves an insert split */
};

void btrfs_cow_sim_init(struct btrfs_cow_sim *cs, struct btrfs_fs_info *fs_info,
			struct btrfs_delayed_refs_sim *refs);
void btrfs_cow_sim_release(struct btrfs_cow_sim *cs);
int btrfs_lookup_extent_info(struct btrfs_cow_sim *cs,
			     const struct btrfs_tree_block *eb, u64 *refs,
			     u64 *flags);
int btrfs_mod_ref(struct btrfs_cow_sim *cs, const struct btrfs_tree_block *eb,
		  u64 ref_root, bool inc, bool full_backref);

/* ctree.c */
int btrfs_cow_block(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
		    const struct btrfs_tree_block *buf, bool is_root_node);
/* split_leaf()'s pushes (and split) for an insert of @data_size bytes at the path */
int btrfs_insert_room_sim(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			  const struct btrfs_path *path, u32 data_size);
int btrfs_del_items_sim(struct btrfs_cow_sim *cs, const struct btrfs_subvol *sv,
			const struct btrfs_path *path, int slot, int nr);
int btrfs_search_slot_cow(struct btrfs_cow_sim *cs,
			  const struct btrfs_subvol *sv,
			  const struct btrfs_key *key, struct btrfs_path *path,
			  bool del);

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
	struct btrfs_sim_item *items;
	u32 nr;
	u32 cap;
	bool touched;			/* changed, or COWed by a push that was tried */
};

struct btrfs_sim_group {
	bool has_lo, has_hi;		/* keys routed here: [lo, hi) */
	struct btrfs_key lo, hi;
	bool has_parent;		/* false: the root is this one leaf */
	struct btrfs_sim_items_leaf **leaves;
	u32 nr;
	u32 cap;
};

struct btrfs_tree_sim {
	struct btrfs_fs_info *fs_info;
	struct btrfs_root_ref root;
	struct btrfs_sim_group *groups;
	u32 nr_groups;
	u32 cap_groups;
	int64_t blocks;			/* tree blocks added minus freed */
	u64 splits;			/* split_leaf() new leaves */
	u64 new_roots;			/* insert_new_root() */
	u64 leaves_freed;		/* btrfs_del_leaf() */
	u64 *freed_starts;		/* the image blocks among them */
	u32 nr_freed_starts;
	u32 cap_freed_starts;
	bool inexact;			/* a node would split or a key was missing */
	u64 changes;			/* calls that may have changed a leaf */
	u32 last_group;			/* where the last key was found */
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
int btrfs_tree_sim_reserve(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			   u32 ins_len);
int btrfs_tree_sim_split_item(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			      const struct btrfs_key *new_key, u32 split_offset);

/* The key offset of a keyed EXTENT_DATA_REF (tree-checker.c) */
u64 hash_extent_data_ref(u64 root, u64 objectid, u64 offset);

#endif
