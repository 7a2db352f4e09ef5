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
	}
	report->nr_devices = fs_info->nr_devices;
	return 0;
}

static void add_profile_names(struct space_report_space_info *out)
{
	u64 bits = out->info.profile_bits;
	int i;

	for (i = 0; i < BTRFS_NR_RAID_TYPES; i++) {
		u64 flag = btrfs_raid_array[i].bg_flag;

		if ((flag && (bits & flag)) ||
		    (!flag && (bits & BTRFS_AVAIL_ALLOC_BIT_SINGLE)))
			out->profiles[out->nr_profiles++] = btrfs_raid_array[i].name;
	}
}

/* sysfs order: data, metadata, mixed, system as `btrfs fi df` lists them */
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
		out->ratio = sinfo->total_bytes ?
			     (double)sinfo->disk_total / sinfo->total_bytes : 0.0;
		add_profile_names(out);
	}
}

static void fill_io(const struct btrfs_fs_info *fs_info, struct space_report *report)
{
	const struct io_stats *st = &fs_info->io_stats;

	report->io.blocks_read = st->total.reads;
	report->io.bytes_read = st->total.bytes;
	report->io.bg_blocks_read = st->by_purpose[BTRFS_IO_BG_SEARCH].reads;
	report->io.bg_bytes_read = st->by_purpose[BTRFS_IO_BG_SEARCH].bytes;
	report->io.bg_leaves = fs_info->bg_search.leaves;
	report->io.bg_nodes = fs_info->bg_search.nodes;
}

int btrfs_build_space_report(const struct btrfs_fs_info *fs_info,
			     struct space_report *report)
{
	memset(report, 0, sizeof(*report));
	report->fs_info = fs_info;
	if (fill_devices(fs_info, report))
		return -ENOMEM;
	fill_space_infos(fs_info, report);
	btrfs_global_rsv_inputs_from_fs(fs_info, &report->global_rsv_inputs);
	btrfs_calc_global_rsv(&report->global_rsv_inputs,
			      BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS,
			      &report->global_rsv);
	report->global_rsv_reserved = fs_info->global_rsv_reserved;
	report->nr_block_groups = fs_info->nr_block_groups;
	report->block_group_source = fs_info->bg_from_bg_tree ?
				     "block-group-tree" : "extent-tree";
	fill_io(fs_info, report);
	return 0;
}

void btrfs_free_space_report(struct space_report *report)
{
	free(report->devices);
	report->devices = NULL;
}
