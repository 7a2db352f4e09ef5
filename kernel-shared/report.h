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
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/space-info.h"

struct space_report_device {
	u64 devid;
	const char *path;		/* NULL when missing */
	u64 size;			/* DEV_ITEM total_bytes */
	u64 allocated;			/* DEV_ITEM bytes_used */
	u64 unallocated;
	bool missing;
	/*
	 * The device's own size past DEV_ITEM total_bytes (a file or disk
	 * grown, the filesystem not resized): 0 when missing
	 */
	u64 slack;
	/* raw bytes in chunks of each report->profiles[] on this device */
	u64 *profile_bytes;
};

/* The devices added up: the Total row of "btrfs filesystem usage -T" */
struct space_report_device_totals {
	u64 size;
	u64 allocated;
	u64 unallocated;
	u64 slack;
};

/*
 * A chunk type (block group type and profile bits) that some chunk has:
 * one column of "btrfs filesystem usage -T", in its order
 */
struct space_report_profile {
	u64 flags;
	/*
	 * Logical bytes of its block groups and of what they use, as
	 * BTRFS_IOC_SPACE_INFO gives them per profile (the Total and Used
	 * rows of "btrfs filesystem usage -T")
	 */
	u64 total;
	u64 used;
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

/* Runtime inputs of the reservation model; each applies when its bit is set */
enum {
	RT_MAY_USE = 1 << 0,
	RT_PINNED = 1 << 1,
	RT_RESERVED = 1 << 2,
	RT_DELALLOC = 1 << 3,
	RT_ORDERED = 1 << 4,
	RT_DELAYED_REFS_RSV = 1 << 5,
	RT_DELAYED_RSV = 1 << 6,
	RT_RECLAIM_SIZE = 1 << 7,
	RT_CLAMP = 1 << 8,
	RT_TOTAL_BYTES = 1 << 9,
	RT_BYTES_USED = 1 << 10,
	RT_BYTES_READONLY = 1 << 11,
	RT_FREE_CHUNK_SPACE = 1 << 12,
	RT_GLOBAL_RSV = 1 << 13,
};

struct report_options {
	u32 kernel_version;
	u32 runtime_set;
	u64 bytes_may_use;
	u64 bytes_pinned;
	u64 bytes_reserved;
	u64 delalloc_bytes;
	u64 ordered_bytes;
	u64 delayed_refs_rsv;
	u64 delayed_rsv;
	u64 reclaim_size;
	u32 clamp;
	u64 total_bytes;		/* the space info as recorded elsewhere */
	u64 bytes_used;
	u64 bytes_readonly;
	u64 free_chunk_space;
	u64 global_rsv;
	bool zoned;			/* what-if: the same figures on a zoned fs */
	u64 zone_size;
	u32 max_active_zones;
};

struct space_report_reserve {
	u32 kernel_version;
	struct btrfs_kernel_model model;
	struct btrfs_reserve_state state;
	u64 effective_data_chunk_size;
	u64 avail_flush_all;
	u64 avail_other;
	u64 largest_flush_all;
	u64 largest_other;
	struct btrfs_preempt_result preempt;
};

struct space_report {
	const struct btrfs_fs_info *fs_info;
	struct space_report_device *devices;
	u32 nr_devices;
	struct space_report_device_totals device_totals;
	struct space_report_profile *profiles;
	u32 nr_profiles;
	struct space_report_space_info space_infos[BTRFS_NR_SPACE_INFOS];
	int nr_space_infos;
	struct btrfs_global_rsv_inputs global_rsv_inputs;
	struct btrfs_global_rsv_calc global_rsv;
	bool live;			/* live mode: the kernel's figures now */
	u64 global_rsv_size;		/* live: sysfs; offline: global_rsv.size */
	u64 global_rsv_reserved;
	u32 nr_block_groups;
	const char *block_group_source;
	struct btrfs_log_replay log_replay;	/* included in the space infos */
	struct space_report_io io;
	struct space_report_reserve reserve;
};

void report_options_init(struct report_options *opts);
int btrfs_build_space_report(const struct btrfs_fs_info *fs_info,
			     const struct report_options *opts,
			     struct space_report *report);
/* Take the I/O counters again, e.g. after more work in the same run */
void btrfs_report_fill_io(const struct btrfs_fs_info *fs_info, struct space_report *report);
void btrfs_free_space_report(struct space_report *report);

#endif
