/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_SPACE_INFO_H
#define BTRFS_SPACE_SPACE_INFO_H

#include "common/kerncompat.h"
#include "kernel-shared/fs.h"

#define BTRFS_MAX_DATA_CHUNK_SIZE	(10ULL * SZ_1G)

void btrfs_init_space_info(struct btrfs_fs_info *fs_info);
struct btrfs_space_info *btrfs_find_space_info(struct btrfs_fs_info *fs_info,
					       u64 flags);
void btrfs_add_bg_to_space_info(struct btrfs_fs_info *fs_info,
				const struct btrfs_block_group *bg);
u64 btrfs_space_info_used(const struct btrfs_space_info *sinfo,
			  bool may_use_included);
const char *btrfs_space_info_name(enum btrfs_space_index index);
/* A space info's chunk_size at mount, non-zoned (6.0-6.18) */
u64 btrfs_calc_chunk_size(u64 total_rw_bytes, u64 flags);
struct btrfs_reclaim_knobs;
u32 btrfs_calc_reclaim_threshold(const struct btrfs_space_info *sinfo,
				 const struct btrfs_reclaim_knobs *knobs,
				 u64 free_chunk_space, u64 chunk_size, u64 *target,
				 u64 *want, u64 *unused);
u32 btrfs_dynamic_reclaim_pct(u64 want, u64 target);


struct btrfs_kernel_model;

/*
 * How far a reservation may go to make room, as fs/btrfs/space-info.h of
 * 6.18 orders them.  Here it only decides the over-commit room
 * (calc_available_free_space()); tickets and flushing are not modelled.
 */
enum btrfs_reserve_flush_enum {
	BTRFS_RESERVE_NO_FLUSH,			/* in a transaction: nothing */
	BTRFS_RESERVE_FLUSH_LIMIT,		/* some, without deadlocking */
	BTRFS_RESERVE_FLUSH_EVICT,		/* evict: may steal from the global rsv */
	BTRFS_RESERVE_FLUSH_DATA,		/* data space */
	BTRFS_RESERVE_FLUSH_FREE_SPACE_INODE,	/* free space cache inodes */
	BTRFS_RESERVE_FLUSH_ALL,		/* everything, a transaction commit too */
	BTRFS_RESERVE_FLUSH_ALL_STEAL,		/* FLUSH_ALL that may steal */
	BTRFS_RESERVE_FLUSH_EMERGENCY,		/* btrfs_use_block_rsv() only */
};

/*
 * The inputs of the reservation decisions for one space info (metadata,
 * or mixed): the space info's counters, the fs-wide figures they are
 * weighed against, and the runtime state, which defaults to its value
 * right after mount and can be set for what-if questions.
 */
struct btrfs_reserve_state {
	u64 flags;
	u64 total_bytes;
	u64 bytes_used;
	u64 bytes_reserved;
	u64 bytes_pinned;
	u64 bytes_readonly;
	u64 bytes_zone_unusable;
	u64 bytes_may_use;
	u64 free_chunk_space;
	u64 total_rw_bytes;
	u32 profile_copies;		/* ncopies of the allocation profile */
	u64 profile;
	u64 data_chunk_size;		/* data (or mixed) space info chunk_size */
	bool zoned;
	u64 zone_size;
	u32 max_active_zones;
	u64 global_rsv_reserved;
	u64 delalloc_bytes;
	u64 ordered_bytes;
	u64 delayed_refs_rsv_reserved;
	u64 delayed_block_rsv_reserved;
	u64 reclaim_size;
	u32 clamp;			/* [BTRFS_PREEMPT_MIN_CLAMP, _MAX_CLAMP] */
};

/* space_info->clamp: 1 after mount, raised to 8 by a flusher that falls behind */
#define BTRFS_PREEMPT_MIN_CLAMP	1
#define BTRFS_PREEMPT_MAX_CLAMP	8
/*
 * need_preemptive_reclaim(): no flushing while the reservations besides
 * the global reserve stay at or below this: 114623979405 "btrfs: do not
 * do preemptive flushing if the majority is global rsv" (v5.15).
 */
#define BTRFS_PREEMPT_NON_GLOBAL_FLOOR	SZ_128M
/* the zone size --zoned assumes unless --zone-size says otherwise */
#define BTRFS_DEFAULT_ZONE_SIZE		SZ_256M

struct btrfs_preempt_result {
	u64 full_limit;			/* "plain full": no flushing at or above */
	u64 full_used;			/* bytes_used + bytes_reserved (+ global rsv) */
	u64 floor;			/* BTRFS_PREEMPT_NON_GLOBAL_FLOOR, or 0 */
	u64 thresh_base;		/* threshold before the clamp shift */
	u64 thresh_by_clamp[BTRFS_PREEMPT_MAX_CLAMP + 1];
	u64 used;			/* what is weighed against the threshold */
	bool verdict;
	const char *reason;
	bool can_flush;			/* some bytes_may_use would flush */
	u64 min_may_use_to_flush;
};

u64 btrfs_calc_effective_data_chunk_size(const struct btrfs_reserve_state *st);
u64 btrfs_calc_available_free_space(const struct btrfs_reserve_state *st,
				    enum btrfs_reserve_flush_enum flush,
				    const struct btrfs_kernel_model *model);
bool btrfs_can_overcommit(const struct btrfs_reserve_state *st, u64 bytes,
			  enum btrfs_reserve_flush_enum flush,
			  const struct btrfs_kernel_model *model);
u64 btrfs_largest_reservation(const struct btrfs_reserve_state *st,
			      enum btrfs_reserve_flush_enum flush,
			      const struct btrfs_kernel_model *model);
/*
 * Step 6 of need_preemptive_reclaim(): the ordered bytes it weighs (halved
 * since v5.14), and whether they leave it weighing bytes_may_use (else the
 * delayed reserves)
 */
u64 btrfs_preempt_ordered(const struct btrfs_reserve_state *st,
			  const struct btrfs_kernel_model *model);
bool btrfs_preempt_counts_may_use(const struct btrfs_reserve_state *st,
				  const struct btrfs_kernel_model *model);
void btrfs_need_preemptive_reclaim(const struct btrfs_reserve_state *st,
				   const struct btrfs_kernel_model *model,
				   struct btrfs_preempt_result *res);
void btrfs_reserve_state_from_fs(const struct btrfs_fs_info *fs_info,
				 const struct btrfs_kernel_model *model,
				 struct btrfs_reserve_state *st);

#endif
