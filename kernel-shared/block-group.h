/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_BLOCK_GROUP_H
#define BTRFS_SPACE_BLOCK_GROUP_H

#include "kernel-shared/fs.h"

/* @progress: NULL, or told of the block groups loaded so far */
int btrfs_read_block_groups(struct btrfs_fs_info *fs_info,
			    const struct btrfs_progress *progress);
/* Live mode: block group items found by the kernel's tree search */
int btrfs_set_block_group_item(struct btrfs_fs_info *fs_info,
			       struct btrfs_chunk_map *map,
			       const struct btrfs_block_group_item *item, u64 leaf,
			       struct btrfs_block_group *bg);
void btrfs_account_block_groups(struct btrfs_fs_info *fs_info);
int btrfs_block_group_root_check(struct btrfs_fs_info *fs_info,
				 const struct btrfs_root_ref *root);
/* Block groups from items that @item_of gives, chunk by chunk, then accounted */
int btrfs_build_block_groups(struct btrfs_fs_info *fs_info, void *ctx,
			     int (*item_of)(void *ctx, const struct btrfs_chunk_map *map,
					    struct btrfs_block_group_item *item));
u64 btrfs_chunk_map_bytes_super(const struct btrfs_chunk_map *map);
u32 btrfs_super_exclude_ranges(const struct btrfs_chunk_map *map, u64 *start, u64 *len,
			       u32 max);
/* The block group holding @bytenr (btrfs_lookup_block_group()), or NULL */
struct btrfs_block_group *btrfs_lookup_block_group(const struct btrfs_fs_info *fs_info,
						    u64 bytenr);
bool btrfs_block_group_super_overlap(const struct btrfs_block_group *bg, u64 start, u64 len);
u64 btrfs_get_alloc_profile(const struct btrfs_fs_info *fs_info, u64 orig_flags);
int btrfs_replay_block_group_search(struct btrfs_fs_info *fs_info, struct btrfs_error *err);
/* The keys that search makes, in order, when items match chunks: 2n + 1 */
u32 btrfs_block_group_search_keys(const struct btrfs_fs_info *fs_info,
				  struct btrfs_key *keys);
const struct btrfs_root_ref *btrfs_block_group_root(const struct btrfs_fs_info *fs_info);
/*
 * Whether btrfs_cache_block_group() of @bg runs caching_thread(): not for
 * a block group read_one_block_group() found empty or full (its item's
 * used), which is cached from the start
 */
struct btrfs_reada_forward;
bool btrfs_block_group_needs_caching(const struct btrfs_block_group *bg);
/*
 * The searches of caching_thread() for @bg on the trees as committed
 * (search_commit_root), each with @reada (READA_FORWARD): 1 when they are
 * not modelled (no free space tree: the v1 cache or the extent-tree walk)
 */
int btrfs_caching_thread_searches(struct btrfs_fs_info *fs_info,
				  const struct btrfs_block_group *bg,
				  const struct btrfs_reada_forward *reada);

/* The size classes of data block groups (6.3): an allocation keeps to its own */
enum btrfs_block_group_size_class {
	BTRFS_BG_SZ_NONE,
	BTRFS_BG_SZ_SMALL,		/* extents up to 128 KiB */
	BTRFS_BG_SZ_MEDIUM,		/* up to 8 MiB */
	BTRFS_BG_SZ_LARGE,
};

enum btrfs_block_group_size_class btrfs_calc_block_group_size_class(u64 size);

/*
 * The kernel's own reclaim (5.19 bg_reclaim_threshold, 6.11 dynamic and
 * periodic reclaim): the knobs of one space info, sysfs allocation/TYPE/
 */
struct btrfs_reclaim_knobs {
	u32 bg_reclaim_threshold;	/* percent of a block group's length, 0 = off */
	bool dynamic_reclaim;		/* calc_dynamic_reclaim_threshold() instead */
	bool periodic_reclaim;		/* do_reclaim_sweep() at each cleaner run */
};

/* When a block group's relocation comes */
enum btrfs_reclaim_when {
	BTRFS_RECLAIM_ON_FREE,		/* the free that takes used below the threshold */
	BTRFS_RECLAIM_ON_FREE_ARMED,	/* the same, once arm_bytes freed armed it */
	BTRFS_RECLAIM_FIRST_SWEEP,	/* urgent: the first sweep's second pass */
	BTRFS_RECLAIM_SECOND_SWEEP,	/* the sweep after the one that marks it */
};

struct btrfs_reclaim_candidate {
	u64 start;
	u64 length;
	u64 used;			/* the bytes its relocation moves */
	u64 flags;
	enum btrfs_reclaim_when when;
	u64 free_to_mark;		/* ON_FREE*: bytes to free before it is marked */
	bool may_be_skipped;		/* earlier relocations' bytes may lift it */
};

/* One space info's reclaim as the kernel would run it from now */
struct btrfs_reclaim_plan {
	bool present;
	struct btrfs_reclaim_knobs knobs;
	u32 thresh_pct;			/* btrfs_calc_reclaim_threshold() */
	u64 dyn_target;			/* dynamic: calc_unalloc_target() */
	u64 dyn_want;			/* dynamic: target - unallocated */
	u64 unused;			/* total - used (no may_use) */
	u64 chunk_size;			/* calc_effective_data_chunk_size() */
	u64 arm_bytes;			/* dynamic, on free: to free before it is not 0 */
	u32 armed_pct;			/* dynamic: the threshold once armed */
	bool urgent;			/* is_reclaim_urgent(): unallocated < chunk_size */
	bool sweeps;			/* btrfs_should_periodic_reclaim() can be true */
	struct btrfs_reclaim_candidate *sweep;	/* relocated by a sweep, kernel's order */
	u32 nr_sweep;
	u64 sweep_bytes;
	struct btrfs_reclaim_candidate *on_free;	/* marked by a later free */
	u32 nr_on_free;
	u32 nr_below_unswept;		/* below the threshold, no sweep to take them */
	u32 nr_above_swept;		/* periodic: at or above it, a sweep's once below */
};

/* The space info of a block group's flags (mixed: both bits) */
enum btrfs_space_index btrfs_bg_space_index(u64 flags);
const char *btrfs_reclaim_when_name(enum btrfs_reclaim_when when);
int btrfs_plan_reclaim(const struct btrfs_fs_info *fs_info, enum btrfs_space_index index,
		       const struct btrfs_space_info *sinfo, u64 free_chunk_space,
		       u64 chunk_size, const struct btrfs_reclaim_knobs *knobs,
		       struct btrfs_reclaim_plan *plan);
void btrfs_free_reclaim_plan(struct btrfs_reclaim_plan *plan);

#endif
