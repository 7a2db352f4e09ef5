// SPDX-License-Identifier: GPL-2.0
/*
 * Fill the report from a loaded filesystem.  No formula lives here: each
 * figure is copied from the kernel-twin function that computed it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/report.h"
#include "kernel-shared/space-info.h"
#include "kernel-shared/volumes.h"

static int fill_devices(const struct btrfs_fs_info *fs_info,
			struct space_report *report)
{
	u32 i;

	report->devices = calloc(fs_info->nr_devices ? fs_info->nr_devices : 1,
				 sizeof(*report->devices));
	if (!report->devices)
		return -ENOMEM;
	for (i = 0; i < fs_info->nr_devices; i++) {
		const struct btrfs_device *dev = &fs_info->devices[i];
		struct space_report_device *out = &report->devices[i];

		out->devid = dev->devid;
		out->path = dev->present ? dev->io.path : NULL;
		out->missing = !dev->present;
		out->size = dev->total_bytes;
		out->allocated = dev->bytes_used;
		out->unallocated = dev->total_bytes > dev->bytes_used ?
				   dev->total_bytes - dev->bytes_used : 0;
		/* what a loop device of the file or the disk gives the kernel */
		out->slack = dev->present && dev->io.size > dev->total_bytes ?
			     dev->io.size - dev->total_bytes : 0;
		report->device_totals.size += out->size;
		report->device_totals.allocated += out->allocated;
		report->device_totals.unallocated += out->unallocated;
		report->device_totals.slack += out->slack;
	}
	report->nr_devices = fs_info->nr_devices;
	return 0;
}

/*
 * The order "btrfs filesystem usage" lists chunk types in (btrfs-progs
 * cmp_chunk_block_group()): system last, the others by type bits (data,
 * metadata, mixed), one type's profiles by their bits (single first).
 */
static int profile_cmp(const void *a, const void *b)
{
	u64 fa = ((const struct space_report_profile *)a)->flags;
	u64 fb = ((const struct space_report_profile *)b)->flags;
	u64 ta = fa & BTRFS_BLOCK_GROUP_TYPE_MASK, tb = fb & BTRFS_BLOCK_GROUP_TYPE_MASK;
	u64 ka, kb;

	if (ta == tb) {
		ka = fa & BTRFS_BLOCK_GROUP_PROFILE_MASK;
		kb = fb & BTRFS_BLOCK_GROUP_PROFILE_MASK;
	} else if ((ta & BTRFS_BLOCK_GROUP_SYSTEM) != (tb & BTRFS_BLOCK_GROUP_SYSTEM)) {
		return ta & BTRFS_BLOCK_GROUP_SYSTEM ? 1 : -1;
	} else {
		ka = ta;
		kb = tb;
	}
	return ka < kb ? -1 : ka > kb;
}

static int find_profile(const struct space_report *report, u64 flags)
{
	u32 i;

	for (i = 0; i < report->nr_profiles; i++)
		if (report->profiles[i].flags == flags)
			return i;
	return -1;
}

static int find_device(const struct space_report *report, u64 devid)
{
	u32 i;

	for (i = 0; i < report->nr_devices; i++)
		if (report->devices[i].devid == devid)
			return i;
	return -1;
}

/*
 * Per device, the raw bytes of each chunk type: every stripe of a chunk
 * on that device holds stripe_size bytes of it (a DUP chunk has both its
 * stripes there).  As "btrfs filesystem usage -T" adds them up from the
 * chunk items (formulas.md section 4).
 */
static int fill_device_profiles(const struct btrfs_fs_info *fs_info,
				struct space_report *report)
{
	u32 i;
	u16 s;

	/* at most one profile per chunk */
	report->profiles = calloc(fs_info->nr_chunks ? fs_info->nr_chunks : 1,
				  sizeof(*report->profiles));
	if (!report->profiles)
		return -ENOMEM;
	for (i = 0; i < fs_info->nr_chunks; i++) {
		u64 type = fs_info->chunks[i]->type;

		if (find_profile(report, type) < 0)
			report->profiles[report->nr_profiles++].flags = type;
	}
	qsort(report->profiles, report->nr_profiles, sizeof(*report->profiles),
	      profile_cmp);
	for (i = 0; i < report->nr_devices; i++) {
		report->devices[i].profile_bytes =
			calloc(report->nr_profiles ? report->nr_profiles : 1, sizeof(u64));
		if (!report->devices[i].profile_bytes)
			return -ENOMEM;
	}
	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];
		int p = find_profile(report, map->type);

		for (s = 0; s < map->num_stripes; s++) {
			int d = find_device(report, map->stripes[s].devid);

			if (d >= 0)
				report->devices[d].profile_bytes[p] += map->stripe_size;
		}
	}
	/* btrfs_ioc_space_info(): each profile's block groups, length and used */
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];
		int p = find_profile(report, bg->flags);

		if (p < 0)
			continue;
		report->profiles[p].total += bg->length;
		report->profiles[p].used += bg->used;
	}
	return 0;
}

/*
 * The order the report names a space info's profiles in: the table's
 * before v5.19, kept so that the text stays as it was (the kernel's list
 * order since is the profile bits', which the allocator follows)
 */
static const enum btrfs_raid_types profile_name_order[BTRFS_NR_RAID_TYPES] = {
	BTRFS_RAID_RAID10, BTRFS_RAID_RAID1, BTRFS_RAID_DUP, BTRFS_RAID_RAID0,
	BTRFS_RAID_SINGLE, BTRFS_RAID_RAID5, BTRFS_RAID_RAID6, BTRFS_RAID_RAID1C3,
	BTRFS_RAID_RAID1C4,
};

static void add_profile_names(struct space_report_space_info *out)
{
	u64 bits = out->info.profile_bits;
	int i;

	for (i = 0; i < BTRFS_NR_RAID_TYPES; i++) {
		const struct btrfs_raid_attr *a = &btrfs_raid_array[profile_name_order[i]];

		if ((a->bg_flag && (bits & a->bg_flag)) ||
		    (!a->bg_flag && (bits & BTRFS_AVAIL_ALLOC_BIT_SINGLE)))
			out->profiles[out->nr_profiles++] = a->name;
	}
}

/*
 * sysfs order: data, metadata, mixed, system as `btrfs fi df` lists them;
 * the one holding the global reserve has the chosen kernel's in
 * bytes_may_use
 */
static void fill_space_infos(const struct btrfs_fs_info *fs_info,
			     struct space_report *report)
{
	static const enum btrfs_space_index order[] = {
		BTRFS_SPACE_DATA, BTRFS_SPACE_METADATA, BTRFS_SPACE_MIXED,
		BTRFS_SPACE_SYSTEM,
	};
	unsigned int i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const struct btrfs_space_info *sinfo = &fs_info->space_info[order[i]];
		struct space_report_space_info *out;

		if (!sinfo->present)
			continue;
		out = &report->space_infos[report->nr_space_infos++];
		out->name = btrfs_space_info_name(order[i]);
		out->info = *sinfo;
		btrfs_init_global_block_rsv(fs_info, report->global_rsv_reserved, &out->info);
		out->ratio = sinfo->total_bytes ?
			     (double)sinfo->disk_total / sinfo->total_bytes : 0.0;
		add_profile_names(out);
	}
}

void btrfs_report_fill_io(const struct btrfs_fs_info *fs_info, struct space_report *report)
{
	const struct io_stats *st = &fs_info->io_stats;

	report->io.blocks_read = st->total.reads;
	report->io.bytes_read = st->total.bytes;
	report->io.bg_blocks_read = st->by_purpose[BTRFS_IO_BG_SEARCH].reads;
	report->io.bg_bytes_read = st->by_purpose[BTRFS_IO_BG_SEARCH].bytes;
	report->io.bg_leaves = fs_info->bg_search.leaves;
	report->io.bg_nodes = fs_info->bg_search.nodes;
}

void report_options_init(struct report_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->kernel_version = BTRFS_DEFAULT_KERNEL;
	opts->clamp = BTRFS_PREEMPT_MIN_CLAMP;
}

static void apply_runtime(const struct report_options *o,
			  struct btrfs_reserve_state *st)
{
	if (o->runtime_set & RT_MAY_USE)
		st->bytes_may_use = o->bytes_may_use;
	if (o->runtime_set & RT_PINNED)
		st->bytes_pinned = o->bytes_pinned;
	if (o->runtime_set & RT_RESERVED)
		st->bytes_reserved = o->bytes_reserved;
	if (o->runtime_set & RT_DELALLOC)
		st->delalloc_bytes = o->delalloc_bytes;
	if (o->runtime_set & RT_ORDERED)
		st->ordered_bytes = o->ordered_bytes;
	if (o->runtime_set & RT_DELAYED_REFS_RSV)
		st->delayed_refs_rsv_reserved = o->delayed_refs_rsv;
	if (o->runtime_set & RT_DELAYED_RSV)
		st->delayed_block_rsv_reserved = o->delayed_rsv;
	if (o->runtime_set & RT_RECLAIM_SIZE)
		st->reclaim_size = o->reclaim_size;
	if (o->runtime_set & RT_CLAMP)
		st->clamp = o->clamp;
	if (o->runtime_set & RT_TOTAL_BYTES)
		st->total_bytes = o->total_bytes;
	if (o->runtime_set & RT_BYTES_USED)
		st->bytes_used = o->bytes_used;
	if (o->runtime_set & RT_BYTES_READONLY)
		st->bytes_readonly = o->bytes_readonly;
	if (o->runtime_set & RT_FREE_CHUNK_SPACE)
		st->free_chunk_space = o->free_chunk_space;
	if (o->runtime_set & RT_GLOBAL_RSV)
		st->global_rsv_reserved = o->global_rsv;
	st->zoned = o->zoned;
	st->zone_size = o->zone_size;
	st->max_active_zones = o->max_active_zones;
}

/*
 * The reservation model for the chosen kernel: the state right after that
 * kernel's mount (its global reserve the only thing in bytes_may_use),
 * then the what-if inputs.  In live mode the state is the kernel's now,
 * as the space infos show it.
 */
static void fill_reserve(const struct btrfs_fs_info *fs_info,
			 const struct report_options *opts,
			 struct space_report *report)
{
	struct space_report_reserve *r = &report->reserve;

	r->kernel_version = opts->kernel_version;
	btrfs_kernel_model(opts->kernel_version, &r->model);
	btrfs_reserve_state_from_fs(fs_info, &r->model, &r->state);
	apply_runtime(opts, &r->state);
	r->effective_data_chunk_size = r->model.overcommit_data_chunk ?
				       btrfs_calc_effective_data_chunk_size(&r->state) : 0;
	r->avail_flush_all = btrfs_calc_available_free_space(&r->state,
					BTRFS_RESERVE_FLUSH_ALL, &r->model);
	r->largest_flush_all = btrfs_largest_reservation(&r->state,
					BTRFS_RESERVE_FLUSH_ALL, &r->model);
	/* every other mode gets the same room: NO_FLUSH stands for them */
	r->avail_other = btrfs_calc_available_free_space(&r->state,
					BTRFS_RESERVE_NO_FLUSH, &r->model);
	r->largest_other = btrfs_largest_reservation(&r->state,
					BTRFS_RESERVE_NO_FLUSH, &r->model);
	btrfs_need_preemptive_reclaim(&r->state, &r->model, &r->preempt);
}

int btrfs_build_space_report(const struct btrfs_fs_info *fs_info,
			     const struct report_options *opts,
			     struct space_report *report)
{
	struct btrfs_kernel_model model;

	memset(report, 0, sizeof(*report));
	btrfs_kernel_model(opts->kernel_version, &model);
	report->fs_info = fs_info;
	if (fill_devices(fs_info, report) || fill_device_profiles(fs_info, report)) {
		btrfs_free_space_report(report);
		return -ENOMEM;
	}
	btrfs_calc_global_rsv_for_kernel(fs_info, &model, &report->global_rsv_inputs,
					 &report->global_rsv);
	/* live mode: the kernel's reserve (sysfs), the formula's offline */
	report->live = fs_info->live != NULL;
	report->global_rsv_size = report->live && fs_info->global_rsv_size ?
				  fs_info->global_rsv_size : report->global_rsv.size;
	report->global_rsv_reserved = btrfs_global_rsv_after_mount(fs_info, &model);
	fill_space_infos(fs_info, report);
	report->nr_block_groups = fs_info->nr_block_groups;
	report->block_group_source = fs_info->bg_from_bg_tree ?
				     "block-group-tree" : "extent-tree";
	report->log_replay = fs_info->log_replay;
	btrfs_report_fill_io(fs_info, report);
	fill_reserve(fs_info, opts, report);
	return 0;
}

void btrfs_free_space_report(struct space_report *report)
{
	u32 i;

	for (i = 0; report->devices && i < report->nr_devices; i++)
		free(report->devices[i].profile_bytes);
	free(report->profiles);
	report->profiles = NULL;
	free(report->devices);
	report->devices = NULL;
}
