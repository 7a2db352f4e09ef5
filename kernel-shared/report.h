/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one report every command prints from: each number the tool shows,
 * computed once from the image, with the inputs its formula used.  The
 * printer (cmds/report.c) only formats what is here.
 */
#ifndef BTRFS_SPACE_REPORT_H
#define BTRFS_SPACE_REPORT_H

#include "kernel-shared/block-rsv.h"
#include "kernel-shared/fs.h"

struct space_report_device {
	u64 devid;
	const char *path;		/* NULL when missing */
	u64 size;			/* DEV_ITEM total_bytes */
	u64 allocated;			/* DEV_ITEM bytes_used */
	u64 unallocated;
	bool missing;
};

struct space_report_space_info {
	const char *name;		/* sysfs directory: data, metadata, ... */
	struct btrfs_space_info info;
	const char *profiles[BTRFS_NR_SPACE_INFOS * 3];
	int nr_profiles;
	double ratio;			/* disk_total / total_bytes */
};

struct space_report_io {
	u64 blocks_read;
	u64 bytes_read;
	u64 bg_blocks_read;
	u64 bg_bytes_read;
	u64 bg_leaves;
	u64 bg_nodes;
};

struct space_report {
	const struct btrfs_fs_info *fs_info;
	struct space_report_device *devices;
	u32 nr_devices;
	struct space_report_space_info space_infos[BTRFS_NR_SPACE_INFOS];
	int nr_space_infos;
	struct btrfs_global_rsv_inputs global_rsv_inputs;
	struct btrfs_global_rsv_calc global_rsv;
	u64 global_rsv_reserved;
	u32 nr_block_groups;
	const char *block_group_source;
	struct space_report_io io;
};

int btrfs_build_space_report(const struct btrfs_fs_info *fs_info,
			     struct space_report *report);
void btrfs_free_space_report(struct space_report *report);

#endif
