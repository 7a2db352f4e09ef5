/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live mode: the same fs_info as an offline open (disk-io.c), filled from
 * a mounted filesystem through the kernel (ioctls and sysfs) instead of
 * from its devices.  See live.c.
 */
#ifndef BTRFS_SPACE_LIVE_H
#define BTRFS_SPACE_LIVE_H

#include <limits.h>
#include <stdbool.h>
#include "kernel-shared/fs.h"

/* One space info as /sys/fs/btrfs/<fsid>/allocation/<type>/ shows it */
struct btrfs_live_space_info {
	bool present;
	u64 total_bytes;
	u64 bytes_used;
	u64 bytes_readonly;
	u64 bytes_zone_unusable;
	u64 bytes_may_use;
	u64 bytes_pinned;
	u64 bytes_reserved;
	u64 disk_total;
	u64 disk_used;
};

/* Flat (no pointers): btrfs_close_fs() frees it with free() */
struct btrfs_live {
	char mountpoint[PATH_MAX];
	char sysfs_dir[64];		/* /sys/fs/btrfs/<fsid> */
	bool read_only;			/* mounted read-only */
	bool features_from_sysfs;	/* BTRFS_IOC_GET_FEATURES failed */
	bool super_from_device;		/* fs_info->super read from the devices */
	u64 searches;			/* BTRFS_IOC_TREE_SEARCH_V2 calls */
	u64 items;			/* items they returned */
	/* sysfs allocation/, read once right after the tree searches */
	struct btrfs_live_space_info sysfs[BTRFS_NR_SPACE_INFOS];
	bool has_global_rsv;
	u64 global_rsv_size;
	u64 global_rsv_reserved;
	u32 runtime_set;		/* RT_* bits sysfs could give (report.h) */
};

struct report_options;

/* True for a directory on a mounted btrfs (statfs f_type) */
bool btrfs_live_path(const char *path);

/*
 * Fill @fs_info from the filesystem mounted at @path, as btrfs_open_fs()
 * and (@load_block_groups) btrfs_read_block_groups() fill it from the
 * devices.  Needs CAP_SYS_ADMIN (tree search).  0 or -errno with the
 * reason in fs_info->err; btrfs_close_fs() releases it either way.
 */
int btrfs_live_open(struct btrfs_fs_info *fs_info, const char *path,
		    bool load_block_groups);

/* The devices' on-disk trees can be read (for the mount estimate) */
bool btrfs_live_on_disk_readable(const struct btrfs_fs_info *fs_info);

/*
 * Set the runtime inputs of the reservation model that sysfs gives (those
 * @opts does not set already: the user's what-if wins).  Delalloc and
 * ordered bytes, the delayed reserves, tickets and the clamp are not in
 * sysfs and keep their defaults.
 */
void btrfs_live_report_options(const struct btrfs_fs_info *fs_info,
			       struct report_options *opts);

#endif
