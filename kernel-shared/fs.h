/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-memory picture of one filesystem, as the kernel's fs_info holds
 * it after open_ctree(): devices, chunk maps, block groups and space infos.
 * Everything here is filled from the image by disk-io.c, volumes.c and
 * block-group.c; the formulas in space-info.c and block-rsv.c read it.
 */
#ifndef BTRFS_SPACE_FS_H
#define BTRFS_SPACE_FS_H

#include <stdbool.h>
#include "common/io.h"
#include "common/types.h"
#include "kernel-shared/uapi/btrfs_tree.h"
#include "kernel-shared/messages.h"

/* What each read was for; the I/O layer counts reads per purpose */
enum btrfs_io_purpose {
	BTRFS_IO_SUPERBLOCK,
	BTRFS_IO_CHUNK_TREE,
	BTRFS_IO_ROOT_TREE,
	BTRFS_IO_BG_SEARCH,
	BTRFS_IO_DEV_TREE,
	BTRFS_IO_OTHER,
	BTRFS_IO_BACKREF,		/* the shared-leaf walk of backref.c */
};

struct btrfs_mount_estimate;
struct btrfs_alloc_state;

struct btrfs_device {
	u64 devid;
	u8 uuid[BTRFS_UUID_SIZE];
	u8 fsid[BTRFS_FSID_SIZE];	/* DEV_ITEM fsid: differs for a seed */
	u64 total_bytes;		/* DEV_ITEM */
	u64 bytes_used;			/* DEV_ITEM */
	bool in_chunk_tree;
	bool present;			/* given on the command line and matched */
	bool writeable;			/* present, not a seed, not read-only */
	struct io_dev io;
	u64 sb_generation;
};

struct btrfs_io_stripe {
	u64 devid;
	u64 physical;
	u8 dev_uuid[BTRFS_UUID_SIZE];	/* the kernel finds devices by devid and uuid */
	struct btrfs_device *dev;	/* NULL when the device is missing */
};

struct btrfs_chunk_map {
	u64 start;
	u64 length;
	u64 stripe_len;
	u64 type;
	u64 stripe_size;		/* bytes of each stripe on its device */
	u16 num_stripes;
	u16 sub_stripes;		/* from the profile table, not the disk */
	u16 disk_sub_stripes;
	bool from_sys_array;
	u16 verified_stripes;		/* dev extents found for it */
	struct btrfs_io_stripe stripes[];
};

struct btrfs_block_group {
	u64 start;
	u64 length;
	u64 used;			/* after the mount's log replay (tree-log.c) */
	u64 item_used;			/* BLOCK_GROUP_ITEM used, as on disk */
	u64 flags;
	u64 bytes_super;
	u64 leaf;			/* bytenr of the leaf holding its item */
	bool ro;
	struct btrfs_chunk_map *map;
};

enum btrfs_space_index {
	BTRFS_SPACE_DATA,
	BTRFS_SPACE_METADATA,
	BTRFS_SPACE_SYSTEM,
	BTRFS_SPACE_MIXED,
	BTRFS_NR_SPACE_INFOS,
};

struct btrfs_space_info {
	bool present;
	u64 flags;
	u64 total_bytes;
	u64 bytes_used;
	u64 bytes_readonly;
	u64 bytes_zone_unusable;
	u64 bytes_may_use;
	u64 bytes_pinned;
	u64 bytes_reserved;
	u64 disk_total;
	u64 disk_used;
	u64 chunk_size;
	u64 profile_bits;		/* profiles of its block groups, single as bit 48 */
	u32 nr_block_groups;
};

/* A tree root as the tree root's ROOT_ITEM (or the superblock) gives it */
struct btrfs_root_ref {
	u64 objectid;
	u64 bytenr;
	u64 generation;
	u64 bytes_used;
	u8 level;
	bool found;
};

/*
 * What the mount's log replay does to the data accounting: the counts
 * and bytes tree-log.c found, filled by btrfs_replay_log_accounting() (tree-log.c).
 */
struct btrfs_log_replay {
	bool present;			/* superblock log_root != 0 */
	u64 log_root;			/* bytenr of the log root tree */
	u32 log_trees;			/* TREE_LOG root items in it */
	u32 skipped_trees;		/* their subvolume is gone: not replayed */
	u64 log_leaves;			/* leaves of the log trees, each read by the replay */
	u64 extent_items;		/* EXTENT_DATA items with an extent, replayed */
	u64 unchanged_items;		/* identical item already in the subvolume: skipped */
	u64 ignored_items;		/* EXTENT_DATA of an inode logged with 0 links */
	u64 extents_allocated;		/* logged extents the extent tree lacked */
	u64 bytes_allocated;		/* their disk_num_bytes: data used grows */
	u64 refs_added;			/* references added to extents already there */
	u64 extents_freed;		/* extents whose last reference the replay drops */
	u64 bytes_freed;		/* their disk_num_bytes: used shrinks */
	u64 subvol_blocks_added;	/* subvolume tree leaves split off, new roots */
	u64 subvol_blocks_freed;	/* subvolume tree leaves emptied */
	u64 extent_tree_blocks_added;	/* the same in the extent tree */
	u64 extent_tree_blocks_freed;
	u64 csum_tree_blocks_added;	/* the same in the csum tree */
	u64 csum_tree_blocks_freed;
	/* node moves of the replay's searches, in all its trees (ctree-leaf.c) */
	u64 node_pushes;		/* push_nodes_for_insert() that moved pointers */
	u64 node_splits;		/* split_node() */
	u64 node_balances;		/* balance_level() that acted */
	bool tree_model_inexact;	/* an operation the leaf model does not replay */
	u32 held_nodes;			/* nodes the walk passed as leaves (btrfs_walk_log_tree()) */
};

struct btrfs_tree_block;
struct btrfs_live;
struct btrfs_packed_leaf;

/* At most this many slots in the leaf check's list of non-plain items */
#define BTRFS_LEAF_OTHER_SLOTS	64

/* Tree blocks read so far, by logical address; see ctree.c */
struct btrfs_block_cache {
	struct btrfs_tree_block **buckets;
	u32 nr_buckets;
	u64 nr_hashed;			/* blocks in the buckets */
	struct btrfs_tree_block *lru_head;	/* leaves, oldest first */
	struct btrfs_tree_block *lru_tail;
	u64 nr_leaves;
	u64 bytes;
	u64 leaf_limit;			/* leaf budget; 0: BTRFS_LEAF_CACHE_BYTES */
	/* where the blocks live: see btrfs_alloc_tree_block() */
	u8 **regions;
	u32 nr_regions;
	u32 cur_region;			/* the region being carved */
	u32 region_used;		/* header bytes carved from its start */
	u32 region_data_used;		/* data bytes carved from its end */
	struct btrfs_tree_block *free_blocks;	/* chained by hash_next */
	/* btrfs_cache_keep_items(): 0, or whose leaves are kept key-only */
	u64 keep_root;
	u8 keep_type;
	/*
	 * The leaf check's by-product for the key-only copy: the slots of the
	 * last leaf checked that were not plain data EXTENT_ITEMs, in order
	 * (tree-checker.c); valid for the block at @other_data only
	 */
	const u8 *other_data;
	u32 nr_other;
	bool other_complete;		/* every such slot listed */
	u16 other_slot[BTRFS_LEAF_OTHER_SLOTS];
	/* btrfs_cache_pack_leaves(): leaves the budget evicts, kept packed */
	bool pack;
	/* btrfs_cache_pack_stop(): trees whose evicted leaves are dropped */
	u64 unpacked_owner[2];
	struct btrfs_packed_leaf **packed;	/* buckets, by bytenr */
	u32 nr_packed_buckets;
	u64 nr_packed;
	u64 packed_bytes;
	u8 *pack_buf;			/* scratch: a leaf's packing */
};

/*
 * Told of every tree block a search asks for, cache hits included, before
 * it is used: the mount model (mount-cost.c) counts the distinct ones.  A
 * non-zero return (-errno) fails the read.  Registered with
 * btrfs_set_read_observer(); the reader knows nothing of who listens.
 */
struct btrfs_read_observer {
	int (*fn)(void *ctx, u64 bytenr);
	void *ctx;
};

/* How the reader reads: options of a run, given to btrfs_open_fs() */
struct io_queue;
struct btrfs_reada_pending;

struct btrfs_read_args {
	bool bg_search_scan;		/* kernel-style forward walk, not pinpoint */
	u32 io_threads;			/* >1: level-by-level batched reads */
	/*
	 * Called by btrfs_open_fs() once the root items are read, before the
	 * dev extents are verified: what the caller will read next can be
	 * read ahead together (mount-cost.c's btrfs_mount_read_ahead).
	 */
	void (*after_roots)(struct btrfs_fs_info *fs_info, void *ctx);
	void *after_roots_ctx;
};

/* Told how far a long load got (cmds/ shows it on a tty) */
struct btrfs_progress {
	void (*fn)(u64 done, u64 total, void *ctx);
	void *ctx;
};

struct btrfs_block_search_stats {
	u64 leaves;
	u64 nodes;
};

struct btrfs_fs_info {
	struct btrfs_super_block super;
	int super_mirror;
	u32 nodesize;
	u32 sectorsize;
	u16 csum_type;
	u32 csum_size;
	u64 generation;
	u64 incompat;
	u64 compat_ro;
	u8 fsid[BTRFS_FSID_SIZE];
	u8 metadata_uuid[BTRFS_FSID_SIZE];

	struct io_stats io_stats;
	struct btrfs_error err;
	/* bad copies replaced, kernel warnings: printed by cmds/open.c */
	struct btrfs_notes notes;

	struct btrfs_device *devices;
	u32 nr_devices;
	u32 devices_cap;
	/*
	 * Given devices whose devid another given device has, with another
	 * device uuid: the kernel scans both (device_list_add() tells
	 * devices apart by devid and uuid), uses the one the metadata's
	 * stripes name and drops the other (btrfs_free_extra_devids())
	 */
	struct btrfs_device *unmatched;
	u32 nr_unmatched;
	bool allow_degraded;		/* -o degraded: missing devices are allowed */
	bool degraded;
	/* planned, not read: what mkfs.btrfs would make (mkfs-layout.c) */
	bool planned;
	/* read_one_dev(): only present, writeable, non-seed devices count */
	u64 total_rw_bytes;
	u64 free_chunk_space;
	u32 rw_devices;

	struct btrfs_chunk_map **chunks;	/* sorted by start, disjoint */
	u32 nr_chunks;
	u32 chunks_cap;
	u32 chunk_hint;			/* btrfs_find_chunk_map()'s last answer */

	struct btrfs_root_ref extent_root;
	struct btrfs_root_ref csum_root;
	struct btrfs_root_ref free_space_root;
	struct btrfs_root_ref block_group_root;
	struct btrfs_root_ref stripe_root;
	struct btrfs_root_ref dev_root;
	u64 balance_convert[BTRFS_NR_SPACE_INFOS];	/* target profile per type, 0 if none */

	struct btrfs_block_group *block_groups;	/* sorted by start */
	u32 nr_block_groups;
	bool bg_from_bg_tree;
	struct btrfs_read_args read;	/* given at open: btrfs_open_fs() */
	/* the concurrent reads (read.io_threads > 1), made at first use */
	struct io_queue *io_queue;	/* common/io-batch.h */
	/* the mount's read-ahead until a read misses the page cache (reada.c) */
	struct btrfs_reada_pending *reada_pending;
	struct btrfs_block_search_stats bg_search;

	/* raw: the global reserve is the chosen kernel's, added by the report */
	struct btrfs_space_info space_info[BTRFS_NR_SPACE_INFOS];
	/* live mode: the running kernel's reserve (sysfs); 0 offline */
	u64 global_rsv_size;
	u64 global_rsv_reserved;
	struct btrfs_block_cache cache;
	struct btrfs_read_observer read_observer;
	struct btrfs_live *live;	/* live mode (live.c): NULL offline */
	/* the mount's reads replayed at open, the kernel's verdict (mount-cost.c) */
	struct btrfs_mount_estimate *mount_est;
	/*
	 * The allocator's state after a mount, built from every chunk by the
	 * first btrfs_alloc_state_init() and copied by the later ones (an
	 * inspect asks for a dozen); allocated empty by a full open, NULL
	 * where the fs_info is made by hand (volumes.c)
	 */
	struct btrfs_alloc_state *alloc_base;
	struct btrfs_log_replay log_replay;	/* tree-log.c: what the mount's replay changes */
};

static inline bool btrfs_fs_incompat(const struct btrfs_fs_info *fs_info,
				     u64 bit)
{
	return (fs_info->incompat & bit) != 0;
}

static inline bool btrfs_fs_compat_ro(const struct btrfs_fs_info *fs_info,
				      u64 bit)
{
	return (fs_info->compat_ro & bit) != 0;
}

#endif
