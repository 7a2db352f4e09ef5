// SPDX-License-Identifier: GPL-2.0
/*
 * Space infos as the kernel builds them at mount, after fs/btrfs/space-info.c:
 * btrfs_init_space_info(), create_space_info(), calc_chunk_size(),
 * btrfs_find_space_info(), btrfs_add_bg_to_space_info() and
 * btrfs_space_info_used().  Behaviour reproduced: 6.1-6.18 (non-zoned).
 * The figures are the ones /sys/fs/btrfs/<uuid>/allocation/ shows.
 *
 * Then the reservation decisions: calc_effective_data_chunk_size(),
 * calc_available_free_space(), btrfs_can_overcommit() and
 * need_preemptive_reclaim(), for 6.18 and, where a kernel commit changed
 * them, the kernels before (kernel-version.c names the commits).  The
 * flush mode is the kernel's enum btrfs_reserve_flush_enum.  And the
 * reclaim threshold: btrfs_calc_reclaim_threshold() and
 * calc_dynamic_reclaim_threshold() (6.11-6.18).
 */
#include <string.h>
#include "kernel-shared/block-group.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/space-info.h"
#include "kernel-shared/volumes.h"

static const char * const space_info_names[BTRFS_NR_SPACE_INFOS] = {
	[BTRFS_SPACE_DATA] = "data",
	[BTRFS_SPACE_METADATA] = "metadata",
	[BTRFS_SPACE_SYSTEM] = "system",
	[BTRFS_SPACE_MIXED] = "mixed",
};

const char *btrfs_space_info_name(enum btrfs_space_index index)
{
	return space_info_names[index];
}

/* calc_chunk_size(): metadata chunks of 1 GiB once the writeable devices exceed 50 GiB */
#define METADATA_BIG_CHUNK_MIN_RW_BYTES	(50ULL * SZ_1G)
#define METADATA_BIG_CHUNK_SIZE		SZ_1G
#define METADATA_CHUNK_SIZE		SZ_256M
#define SYSTEM_CHUNK_SIZE		SZ_32M

/* calc_chunk_size(): the sysfs chunk_size, not the size chunks really get */
u64 btrfs_calc_chunk_size(u64 total_rw_bytes, u64 flags)
{
	if (flags & BTRFS_BLOCK_GROUP_DATA)
		return BTRFS_MAX_DATA_CHUNK_SIZE;
	if (flags & BTRFS_BLOCK_GROUP_SYSTEM)
		return SYSTEM_CHUNK_SIZE;
	if (total_rw_bytes > METADATA_BIG_CHUNK_MIN_RW_BYTES)
		return METADATA_BIG_CHUNK_SIZE;
	return METADATA_CHUNK_SIZE;
}

static void create_space_info(struct btrfs_fs_info *fs_info,
			      enum btrfs_space_index index, u64 flags)
{
	struct btrfs_space_info *sinfo = &fs_info->space_info[index];

	sinfo->present = true;
	sinfo->flags = flags;
	sinfo->chunk_size = btrfs_calc_chunk_size(fs_info->total_rw_bytes, flags);
}

void btrfs_init_space_info(struct btrfs_fs_info *fs_info)
{
	create_space_info(fs_info, BTRFS_SPACE_SYSTEM, BTRFS_BLOCK_GROUP_SYSTEM);
	if (btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS)) {
		create_space_info(fs_info, BTRFS_SPACE_MIXED,
				  BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DATA);
		return;
	}
	create_space_info(fs_info, BTRFS_SPACE_METADATA, BTRFS_BLOCK_GROUP_METADATA);
	create_space_info(fs_info, BTRFS_SPACE_DATA, BTRFS_BLOCK_GROUP_DATA);
}

/* The first space info whose type bits meet @flags: mixed answers both */
struct btrfs_space_info *btrfs_find_space_info(struct btrfs_fs_info *fs_info,
					       u64 flags)
{
	static const enum btrfs_space_index order[] = {
		BTRFS_SPACE_SYSTEM, BTRFS_SPACE_MIXED, BTRFS_SPACE_METADATA,
		BTRFS_SPACE_DATA,
	};
	unsigned int i;

	flags &= BTRFS_BLOCK_GROUP_TYPE_MASK;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct btrfs_space_info *sinfo = &fs_info->space_info[order[i]];

		if (sinfo->present && (sinfo->flags & flags))
			return sinfo;
	}
	return NULL;
}

void btrfs_add_bg_to_space_info(struct btrfs_fs_info *fs_info,
				const struct btrfs_block_group *bg)
{
	struct btrfs_space_info *sinfo = btrfs_find_space_info(fs_info, bg->flags);
	u64 profile = bg->flags & BTRFS_BLOCK_GROUP_PROFILE_MASK;
	int factor = btrfs_bg_type_to_factor(bg->flags);

	if (!sinfo)
		return;
	sinfo->total_bytes += bg->length;
	sinfo->disk_total += bg->length * factor;
	sinfo->bytes_used += bg->used;
	sinfo->disk_used += bg->used * factor;
	sinfo->bytes_readonly += bg->bytes_super;
	sinfo->profile_bits |= profile ? profile : BTRFS_AVAIL_ALLOC_BIT_SINGLE;
	sinfo->nr_block_groups++;
}

u64 btrfs_space_info_used(const struct btrfs_space_info *sinfo,
			  bool may_use_included)
{
	return sinfo->bytes_used + sinfo->bytes_reserved + sinfo->bytes_pinned +
	       sinfo->bytes_readonly + sinfo->bytes_zone_unusable +
	       (may_use_included ? sinfo->bytes_may_use : 0);
}

/*
 * calc_effective_data_chunk_size(): the room over-commit keeps free so a
 * data chunk can still be allocated, as btrfs_create_chunk() would size
 * it: at most 10 % of the writeable bytes and 1 GiB.  cb6cbab79055
 * "btrfs: adjust overcommit logic when very close to full" (v6.9).
 */
#define DATA_CHUNK_MAX_PERCENT		10
#define DATA_CHUNK_OVERCOMMIT_MAX	SZ_1G

u64 btrfs_calc_effective_data_chunk_size(const struct btrfs_reserve_state *st)
{
	u64 size;

	if (st->zoned)
		return st->data_chunk_size;
	size = min_t(u64, st->data_chunk_size,
		     mult_perc(st->total_rw_bytes, DATA_CHUNK_MAX_PERCENT));
	return min_t(u64, size, DATA_CHUNK_OVERCOMMIT_MAX);
}

/*
 * The share of the unallocated space over-commit may count on, as a right
 * shift: a FLUSH_ALL reservation can wait for flushing to make room, so it
 * gets an eighth; every other mode (FLUSH_ALL_STEAL and EMERGENCY too, in
 * 6.18) half.
 */
#define OVERCOMMIT_SHIFT_FLUSH_ALL	3
#define OVERCOMMIT_SHIFT_OTHER		1

static u32 overcommit_shift(enum btrfs_reserve_flush_enum flush)
{
	return flush == BTRFS_RESERVE_FLUSH_ALL ? OVERCOMMIT_SHIFT_FLUSH_ALL :
						  OVERCOMMIT_SHIFT_OTHER;
}

/*
 * calc_available_free_space(): how much unallocated space metadata may
 * count on for a reservation of mode @flush.
 */
u64 btrfs_calc_available_free_space(const struct btrfs_reserve_state *st,
				    enum btrfs_reserve_flush_enum flush,
				    const struct btrfs_kernel_model *model)
{
	u64 avail = st->free_chunk_space / max_t(u32, st->profile_copies, 1);

	if (avail == 0)
		return 0;
	if (model->overcommit_data_chunk) {
		u64 data_chunk = btrfs_calc_effective_data_chunk_size(st);

		if (avail <= data_chunk)
			return 0;
		avail -= data_chunk;
	}
	avail >>= overcommit_shift(flush);
	if (model->overcommit_data_chunk && st->zoned && st->zone_size)
		avail -= avail % st->zone_size;
	return avail;
}

/* BTRFS_FS_NO_OVERCOMMIT / ACTIVE_ZONE_TRACKING in the kernels that had it */
static bool zoned_blocks_overcommit(const struct btrfs_reserve_state *st,
				    const struct btrfs_kernel_model *model)
{
	if (!st->zoned || !(st->flags & BTRFS_BLOCK_GROUP_METADATA))
		return false;
	if (model->zoned_overcommit == ZONED_OVERCOMMIT_NEVER)
		return true;
	if (model->zoned_overcommit == ZONED_OVERCOMMIT_UNLESS_ACTIVE_ZONES)
		return st->max_active_zones != 0;
	return false;
}

static u64 overcommit_room(const struct btrfs_reserve_state *st,
			   enum btrfs_reserve_flush_enum flush,
			   const struct btrfs_kernel_model *model)
{
	if (zoned_blocks_overcommit(st, model))
		return 0;
	return btrfs_calc_available_free_space(st, flush, model);
}

static u64 reserve_state_used(const struct btrfs_reserve_state *st)
{
	return st->bytes_used + st->bytes_reserved + st->bytes_pinned +
	       st->bytes_readonly + st->bytes_zone_unusable + st->bytes_may_use;
}

/* btrfs_can_overcommit(): data (and mixed) never over-commits */
bool btrfs_can_overcommit(const struct btrfs_reserve_state *st, u64 bytes,
			  enum btrfs_reserve_flush_enum flush,
			  const struct btrfs_kernel_model *model)
{
	if (st->flags & BTRFS_BLOCK_GROUP_DATA)
		return false;
	return reserve_state_used(st) + bytes <
	       st->total_bytes + overcommit_room(st, flush, model);
}

/*
 * The biggest single reservation reserve_bytes() grants now without
 * flushing: it fits in total_bytes (<=), or over-commit allows it (<).
 */
u64 btrfs_largest_reservation(const struct btrfs_reserve_state *st,
			      enum btrfs_reserve_flush_enum flush,
			      const struct btrfs_kernel_model *model)
{
	u64 used = reserve_state_used(st);
	u64 fits = st->total_bytes > used ? st->total_bytes - used : 0;
	u64 limit;

	if (st->flags & BTRFS_BLOCK_GROUP_DATA)
		return fits;
	limit = st->total_bytes + overcommit_room(st, flush, model);
	if (limit > used + 1)
		return max_t(u64, fits, limit - used - 1);
	return fits;
}

/*
 * The threshold before and after the 2021 "Preemptive flushing
 * improvements" series (v5.14): it counts the global reserve as used.
 */
static u64 preempt_thresh_base(const struct btrfs_reserve_state *st,
			       const struct btrfs_kernel_model *model)
{
	u64 thresh = btrfs_calc_available_free_space(st, BTRFS_RESERVE_FLUSH_ALL, model);
	u64 g = model->preempt_global_rsv_terms ? st->global_rsv_reserved : 0;
	u64 hard = st->bytes_used + st->bytes_reserved + st->bytes_readonly + g;

	if (!model->preempt_global_rsv_terms)
		return thresh + (st->total_bytes - hard);	/* unguarded in 5.12 */
	if (hard < st->total_bytes)
		thresh += st->total_bytes - hard;
	return thresh;
}

/*
 * What need_preemptive_reclaim() weighs against the threshold: ordered
 * extents that will finish soon make delalloc flushing pointless, so
 * either the delayed reserves or the flushable may_use count.  Since the
 * v5.14 series ordered bytes count half ("cut ordered in half, and if it's
 * still higher than delalloc then we can keep flushing").
 */
#define PREEMPT_ORDERED_SHIFT		1

u64 btrfs_preempt_ordered(const struct btrfs_reserve_state *st,
			  const struct btrfs_kernel_model *model)
{
	if (model->preempt_global_rsv_terms)
		return st->ordered_bytes >> PREEMPT_ORDERED_SHIFT;
	return st->ordered_bytes;
}

bool btrfs_preempt_counts_may_use(const struct btrfs_reserve_state *st,
				  const struct btrfs_kernel_model *model)
{
	return btrfs_preempt_ordered(st, model) < st->delalloc_bytes;
}

static u64 preempt_used(const struct btrfs_reserve_state *st,
			const struct btrfs_kernel_model *model)
{
	u64 g = model->preempt_global_rsv_terms ? st->global_rsv_reserved : 0;

	if (!btrfs_preempt_counts_may_use(st, model))
		return st->bytes_pinned + st->delayed_refs_rsv_reserved +
		       st->delayed_block_rsv_reserved;
	return st->bytes_pinned + (st->bytes_may_use > g ? st->bytes_may_use - g : 0);
}

/* The smallest bytes_may_use for which the predicate would say "flush" */
static void preempt_min_may_use(const struct btrfs_reserve_state *st,
				const struct btrfs_kernel_model *model,
				struct btrfs_preempt_result *res)
{
	u64 g = model->preempt_global_rsv_terms ? st->global_rsv_reserved : 0;
	u64 thresh = res->thresh_by_clamp[st->clamp];
	u64 need = 0;

	res->can_flush = false;
	if (res->full_used >= res->full_limit || st->reclaim_size)
		return;
	if (model->preempt_majority_global)
		need = g + res->floor + 1;	/* used - G > 128 MiB */
	if (btrfs_preempt_counts_may_use(st, model)) {
		need = max_t(u64, need, thresh + g);
	} else if (preempt_used(st, model) < thresh) {
		return;				/* may_use is not weighed at all */
	}
	res->can_flush = true;
	res->min_may_use_to_flush = need > st->bytes_pinned ? need - st->bytes_pinned : 0;
}

/*
 * need_preemptive_reclaim() after a successful metadata reservation, for
 * the given kernel: 6.18 (and 5.15+), the 2021 series alone (5.14), or
 * before it (5.12).  Closing and remounting states are taken as false.
 */
void btrfs_need_preemptive_reclaim(const struct btrfs_reserve_state *st,
				   const struct btrfs_kernel_model *model,
				   struct btrfs_preempt_result *res)
{
	u64 g = model->preempt_global_rsv_terms ? st->global_rsv_reserved : 0;
	u32 clamp;

	res->full_limit = mult_perc(st->total_bytes, model->preempt_full_percent);
	res->full_used = st->bytes_used + st->bytes_reserved + g;
	res->floor = model->preempt_majority_global ? BTRFS_PREEMPT_NON_GLOBAL_FLOOR : 0;
	res->thresh_base = preempt_thresh_base(st, model);
	res->thresh_by_clamp[0] = res->thresh_base;
	for (clamp = BTRFS_PREEMPT_MIN_CLAMP; clamp <= BTRFS_PREEMPT_MAX_CLAMP; clamp++)
		res->thresh_by_clamp[clamp] = res->thresh_base >> clamp;
	res->used = preempt_used(st, model);
	preempt_min_may_use(st, model, res);
	res->verdict = false;
	if (res->full_used >= res->full_limit) {
		res->reason = "the space info is nearly full (plain full limit reached)";
	} else if (model->preempt_majority_global &&
		   g >= st->bytes_may_use + st->bytes_pinned) {
		res->reason = "everything flushable is the global reserve";
	} else if (model->preempt_majority_global &&
		   st->bytes_may_use + st->bytes_pinned - g <= res->floor) {
		res->reason = "less than 128 MiB of reservations besides the global reserve";
	} else if (st->reclaim_size) {
		res->reason = "tickets are queued: the async flusher handles them";
	} else if (res->used < res->thresh_by_clamp[st->clamp]) {
		res->reason = "flushable reservations are below the threshold";
	} else {
		res->verdict = true;
		res->reason = "flushable reservations reached the threshold";
	}
}

/*
 * The metadata (or mixed) space info right after @model's kernel mounted:
 * the raw space info with that kernel's global reserve added once.
 */
void btrfs_reserve_state_from_fs(const struct btrfs_fs_info *fs_info,
				 const struct btrfs_kernel_model *model,
				 struct btrfs_reserve_state *st)
{
	struct btrfs_fs_info *fs = (struct btrfs_fs_info *)fs_info;
	const struct btrfs_space_info *meta =
		btrfs_find_space_info(fs, BTRFS_BLOCK_GROUP_METADATA);
	const struct btrfs_space_info *data =
		btrfs_find_space_info(fs, BTRFS_BLOCK_GROUP_DATA);
	u64 profile = btrfs_get_alloc_profile(fs_info, BTRFS_BLOCK_GROUP_METADATA);

	memset(st, 0, sizeof(*st));
	st->global_rsv_reserved = btrfs_global_rsv_after_mount(fs_info, model);
	if (meta) {
		struct btrfs_space_info si = *meta;

		btrfs_init_global_block_rsv(fs_info, st->global_rsv_reserved, &si);
		st->flags = si.flags;
		st->total_bytes = si.total_bytes;
		st->bytes_used = si.bytes_used;
		st->bytes_reserved = si.bytes_reserved;
		st->bytes_pinned = si.bytes_pinned;
		st->bytes_readonly = si.bytes_readonly;
		st->bytes_zone_unusable = si.bytes_zone_unusable;
		st->bytes_may_use = si.bytes_may_use;
	}
	st->free_chunk_space = fs_info->free_chunk_space;
	st->total_rw_bytes = fs_info->total_rw_bytes;
	st->profile = profile;
	st->profile_copies = btrfs_bg_type_to_factor(profile);
	st->data_chunk_size = data ? data->chunk_size : BTRFS_MAX_DATA_CHUNK_SIZE;
	st->clamp = BTRFS_PREEMPT_MIN_CLAMP;
}

/*
 * btrfs_calc_reclaim_threshold() (6.11): the percent of a block group's
 * length below which reclaim takes it.  The fixed bg_reclaim_threshold,
 * or with dynamic_reclaim calc_dynamic_reclaim_threshold(): none while the
 * space info's unused bytes are less than a data chunk, else how far the
 * unallocated bytes are below ten data chunks (calc_unalloc_target()), as
 * a percent of those ten (calc_pct_ratio()).  formulas.md section 21.14.
 */
#define BTRFS_UNALLOC_BLOCK_GROUP_TARGET	10

u32 btrfs_calc_reclaim_threshold(const struct btrfs_space_info *sinfo,
				 const struct btrfs_reclaim_knobs *knobs,
				 u64 free_chunk_space, u64 chunk_size, u64 *target,
				 u64 *want, u64 *unused)
{
	u64 used = btrfs_space_info_used(sinfo, false);

	*target = BTRFS_UNALLOC_BLOCK_GROUP_TARGET * chunk_size;
	*want = *target > free_chunk_space ? *target - free_chunk_space : 0;
	*unused = sinfo->total_bytes > used ? sinfo->total_bytes - used : 0;
	if (!knobs->dynamic_reclaim)
		return knobs->bg_reclaim_threshold;
	if (*unused < chunk_size)
		return 0;
	return btrfs_dynamic_reclaim_pct(*want, *target);
}

/*
 * calc_pct_ratio(want, target): the dynamic threshold whenever the space
 * info's unused bytes are at least a data chunk.  When 100 * want does not
 * fit in u64 the kernel keeps the wrapped product (check_mul_overflow())
 * and drops 10 bits of it and of the target before dividing again; its
 * callers keep want <= target, far below that.
 */
u32 btrfs_dynamic_reclaim_pct(u64 want, u64 target)
{
	u64 product;

	if (!target)
		return 0;
	while (__builtin_mul_overflow(want, 100, &product)) {
		want = product >> 10;
		target = max_t(u64, target >> 10, 1);
	}
	return product / target;
}
