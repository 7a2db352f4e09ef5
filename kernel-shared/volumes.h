/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_VOLUMES_H
#define BTRFS_SPACE_VOLUMES_H

#include "kernel-shared/fs.h"

/*
 * The index of a profile's row and of its block group list: since v5.19
 * ("btrfs: use ilog2() to replace if () branches for
 * btrfs_bg_flags_to_raid_index()") the order of the profile bits, SINGLE
 * (no bit) first, as BTRFS_BG_FLAG_TO_INDEX() computes it.
 * find_free_extent() and do_reclaim_sweep() walk the lists in this order.
 */
#define BTRFS_BG_FLAG_TO_INDEX(profile)	\
	(63 - __builtin_clzll((profile) >> (__builtin_ctzll(BTRFS_BLOCK_GROUP_RAID0) - 1)))

enum btrfs_raid_types {
	BTRFS_RAID_SINGLE = 0,
	BTRFS_RAID_RAID0 = BTRFS_BG_FLAG_TO_INDEX(BTRFS_BLOCK_GROUP_RAID0),
	BTRFS_RAID_RAID1 = BTRFS_BG_FLAG_TO_INDEX(BTRFS_BLOCK_GROUP_RAID1),
	BTRFS_RAID_DUP = BTRFS_BG_FLAG_TO_INDEX(BTRFS_BLOCK_GROUP_DUP),
	BTRFS_RAID_RAID10 = BTRFS_BG_FLAG_TO_INDEX(BTRFS_BLOCK_GROUP_RAID10),
	BTRFS_RAID_RAID5 = BTRFS_BG_FLAG_TO_INDEX(BTRFS_BLOCK_GROUP_RAID5),
	BTRFS_RAID_RAID6 = BTRFS_BG_FLAG_TO_INDEX(BTRFS_BLOCK_GROUP_RAID6),
	BTRFS_RAID_RAID1C3 = BTRFS_BG_FLAG_TO_INDEX(BTRFS_BLOCK_GROUP_RAID1C3),
	BTRFS_RAID_RAID1C4 = BTRFS_BG_FLAG_TO_INDEX(BTRFS_BLOCK_GROUP_RAID1C4),
	BTRFS_NR_RAID_TYPES
};

/*
 * The kernel's struct btrfs_raid_attr (fs/btrfs/volumes.h): one row of
 * btrfs_raid_array per profile, every fact the tool knows of a profile.
 * A new profile is an enum value above and one row in volumes.c; the
 * chunk reader, the tree checker, the allocator, the mkfs plan and the
 * balance model all read the row.
 */
struct btrfs_raid_attr {
	u8 sub_stripes;		/* stripes of one mirror group (RAID10: 2) */
	u8 dev_stripes;		/* stripes on each device (DUP: 2) */
	u8 devs_max;		/* devices at most; 0: BTRFS_MAX_DEVS() */
	u8 devs_min;		/* devices at least */
	u8 tolerated_failures;	/* devices that may be missing */
	u8 devs_increment;	/* device counts are a multiple of this */
	u8 ncopies;		/* copies of each byte */
	u8 nparity;		/* parity stripes (RAID5: 1, RAID6: 2) */
	const char *name;	/* the kernel's raid_name, lower case */
	u64 bg_flag;		/* BTRFS_BLOCK_GROUP_*; 0 for single */
};

extern const struct btrfs_raid_attr btrfs_raid_array[BTRFS_NR_RAID_TYPES];

enum btrfs_raid_types btrfs_bg_flags_to_raid_index(u64 flags);
int btrfs_bg_type_to_factor(u64 flags);
const char *btrfs_bg_type_name(u64 flags);
const char *btrfs_bg_profile_name(u64 flags);
const char *btrfs_bg_progs_name(u64 flags, char *buf, size_t len);
u64 btrfs_chunk_data_stripes(u64 type, u16 num_stripes);
int btrfs_chunk_max_errors(const struct btrfs_chunk_map *map);
int btrfs_num_copies(const struct btrfs_chunk_map *map);

struct btrfs_device *btrfs_find_device(struct btrfs_fs_info *fs_info, u64 devid);
struct btrfs_device *btrfs_add_device(struct btrfs_fs_info *fs_info, u64 devid);
void btrfs_device_from_dev_item(struct btrfs_device *dev,
				const struct btrfs_dev_item *item);
struct btrfs_chunk_map *btrfs_find_chunk_map(struct btrfs_fs_info *fs_info,
					     u64 logical, u64 length);

int btrfs_read_sys_array(struct btrfs_fs_info *fs_info);
/*
 * What btrfs_scan_one_device() takes from a device's primary superblock
 * @sb to place it (fsid, devid, num_devices); false without btrfs magic.
 */
bool btrfs_scan_one_device(const void *sb, struct io_super_id *id);
int btrfs_read_chunk_tree(struct btrfs_fs_info *fs_info);

/* Live mode (live.c): chunk items the kernel's tree search returned */
struct btrfs_item_location;
int btrfs_add_chunk_item(struct btrfs_fs_info *fs_info, const struct btrfs_chunk *chunk,
			 u32 item_size, u64 logical, const struct btrfs_item_location *loc);
int btrfs_resolve_stripes(struct btrfs_fs_info *fs_info);

/* One contiguous piece of a logical range on one device */
struct btrfs_io_piece {
	struct btrfs_device *dev;
	u64 physical;
	u64 length;
};

/* Where @logical lives on @mirror; a @logical no chunk covers is recorded in @err */
int btrfs_map_block(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
		    u64 logical, u64 length, int mirror, struct btrfs_io_piece *piece);

int btrfs_verify_dev_extents(struct btrfs_fs_info *fs_info);
void btrfs_free_chunk_maps(struct btrfs_fs_info *fs_info);

/*
 * The chunk allocator replayed (volumes.c, last section): btrfs_create_chunk()
 * run forward on a copy of the devices' allocated ranges.
 */
#include "common/range-tree.h"
#include "kernel-shared/kernel-version.h"

struct btrfs_alloc_range {
	u64 start;
	u64 length;
};

/* A device on the allocator's alloc_list, with its allocated ranges */
struct btrfs_alloc_device {
	u64 devid;
	u64 total_bytes;
	u64 bytes_used;
	bool writeable;
	/*
	 * The dev extents, by start: find_free_dev_extent()'s walk over
	 * them, first fit, in O(log n) (common/range-tree.h)
	 */
	struct range_tree ranges;
};

struct btrfs_alloc_state {
	struct btrfs_alloc_device *devs;	/* devid order, as after a mount */
	u32 nr_devs;
	u32 rw_devices;
	u64 total_rw_bytes;
	u64 next_logical;			/* find_next_chunk() */
	u32 max_devs;				/* BTRFS_MAX_DEVS() */
	struct btrfs_alloc_model model;
};

/* The kernel's struct btrfs_device_info, by devid */
struct btrfs_device_info {
	u64 devid;
	u64 dev_offset;
	u64 max_avail;
	u64 total_avail;
};

/* The kernel's struct alloc_chunk_ctl */
struct btrfs_alloc_chunk_ctl {
	u64 type;
	u32 num_stripes;
	u32 sub_stripes;
	u32 dev_stripes;
	u32 devs_max;
	u32 devs_min;
	u32 devs_increment;
	u32 ncopies;
	u32 nparity;
	u64 max_stripe_size;
	u64 max_chunk_size;
	u64 dev_extent_min;
	u64 stripe_size;
	u64 chunk_size;
	u32 ndevs;
};

/*
 * What gather_device_info() saw of one device before a chunk: the hole
 * find_free_dev_extent() returned (start, size), max_avail, total_avail.
 */
struct btrfs_alloc_seen {
	u64 devid;
	u64 offset;
	u64 hole;
	u64 max_avail;
	u64 total_avail;
};

/*
 * The last chunks made and what the allocator saw before each, for
 * btrfs_alloc_take_run(): rings of max_period + 1 entries, chunk i (since
 * the last reset) at i % (max_period + 1).
 */
struct btrfs_alloc_history {
	u32 max_period;
	u32 nr_devs;
	u64 nr;					/* chunks recorded since the reset */
	struct btrfs_chunk_map **maps;		/* copies */
	struct btrfs_alloc_seen *seen;		/* nr_devs entries per chunk */
	u32 *nr_seen;
	u32 *match;	/* [p]: chunks in a row shaped as the one p before */
};

/* A device's stripes of a run advance by @step bytes per repeat */
struct btrfs_run_step {
	u64 devid;
	u64 step;
};

/*
 * A run (formulas.md section 21.11): @count chunks, chunk i being
 * pattern[i % period] moved i / period periods on, a period being
 * @logical_step further in logical and each device's step further on it.
 * A fill's runs are end to end (@logical_step is the pattern's summed
 * length); a run of the chunks read may leave gaps (btrfs_chunk_runs_of()).
 */
struct btrfs_chunk_run {
	struct btrfs_chunk_map **pattern;
	u32 period;
	u64 count;
	u64 logical_step;
	struct btrfs_run_step *steps;		/* by devid */
	u32 nr_steps;
};

u32 btrfs_raid_devs_max(u64 flags);
int btrfs_alloc_state_init(const struct btrfs_fs_info *fs_info, u32 kernel_version,
			   struct btrfs_alloc_state *st);
void btrfs_alloc_state_free(struct btrfs_alloc_state *st);
void btrfs_alloc_remove_chunk(struct btrfs_alloc_state *st,
			      const struct btrfs_chunk_map *map);
int btrfs_alloc_remove_ranges(struct btrfs_alloc_state *st,
			      const struct btrfs_chunk_map *const *maps, u32 nr);
/* A removal before its commit, then the commit: the ranges with the above */
void btrfs_alloc_remove_chunk_uncommitted(struct btrfs_alloc_state *st,
					  const struct btrfs_chunk_map *map);
void btrfs_alloc_commit_removed_bytes(struct btrfs_alloc_state *st,
				      const struct btrfs_chunk_map *map);
struct btrfs_chunk_map *btrfs_alloc_create_chunk(struct btrfs_alloc_state *st, u64 type,
						 u64 chunk_size, int *err);

int btrfs_alloc_history_init(const struct btrfs_alloc_state *st,
			     struct btrfs_alloc_history *h);
void btrfs_alloc_history_reset(struct btrfs_alloc_history *h);
void btrfs_alloc_history_free(struct btrfs_alloc_history *h);
/* btrfs_alloc_create_chunk(), the chunk and what the allocator saw kept in @h */
struct btrfs_chunk_map *btrfs_alloc_create_chunk_logged(struct btrfs_alloc_state *st,
							u64 type, u64 chunk_size,
							struct btrfs_alloc_history *h, int *err);
/*
 * The chunks that repeat the last period of @h, as many as the replay
 * would make in a row (at most @max_chunks): made in @st and returned in
 * @run.  1 when a run was taken, 0 when none is certain, -ENOMEM.
 */
int btrfs_alloc_take_run(struct btrfs_alloc_state *st, struct btrfs_alloc_history *h,
			 u64 type, u64 chunk_size, u64 max_chunks,
			 struct btrfs_chunk_run *run);

u64 btrfs_chunk_run_count(const struct btrfs_chunk_run *run);
/* The summed length of @run's chunks */
u64 btrfs_chunk_run_length(const struct btrfs_chunk_run *run);
/* Chunk @i of @run (0: the first), allocated; NULL on -ENOMEM */
struct btrfs_chunk_map *btrfs_chunk_run_chunk(const struct btrfs_chunk_run *run, u64 i);
/* The indexes of @run's chunks with a stripe on a superblock copy, sorted, unique */
u32 btrfs_chunk_run_super_chunks(const struct btrfs_chunk_run *run, u64 *idx, u32 max);
void btrfs_chunk_run_free(struct btrfs_chunk_run *run);
/*
 * @maps (by logical start, as read) cut into runs, each of the longest
 * period up to RUNS_MAX_PERIOD: the number of runs (their counts sum to
 * @nr), -ENOMEM; *@runs freed by btrfs_chunk_runs_free()
 */
long btrfs_chunk_runs_of(struct btrfs_chunk_map *const *maps, u64 nr,
			 struct btrfs_chunk_run **runs);
void btrfs_chunk_runs_free(struct btrfs_chunk_run *runs, long nr);

#endif
