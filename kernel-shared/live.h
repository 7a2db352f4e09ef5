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
/*
 * allocation/<type>/ files of the kernel's own reclaim: bg_reclaim_threshold
 * (5.19), dynamic_reclaim, periodic_reclaim, reclaim_count, reclaim_bytes,
 * reclaim_errors (6.11)
 */
#define BTRFS_LIVE_NR_RECLAIM		6
extern const char * const btrfs_live_reclaim_files[BTRFS_LIVE_NR_RECLAIM];
/* size_classes: "none N", "small N", "medium N", "large N" */
#define BTRFS_LIVE_NR_SIZE_CLASSES	4
extern const char * const btrfs_live_size_classes[BTRFS_LIVE_NR_SIZE_CLASSES];

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
	u64 chunk_size;
	bool has_chunk_size;		/* allocation/<type>/chunk_size (6.0+) */
	/* the reclaim files (btrfs_live_reclaim_files[]) the kernel has */
	bool has_reclaim[BTRFS_LIVE_NR_RECLAIM];
	u64 reclaim[BTRFS_LIVE_NR_RECLAIM];
	/* size_classes (6.3+): block groups of each data size class */
	bool has_size_classes;
	u64 size_classes[BTRFS_LIVE_NR_SIZE_CLASSES];
};

/* Tries of a live read that races with the kernel's commits */
#define BTRFS_LIVE_ATTEMPTS	3

/* Flat (no pointers): btrfs_close_fs() frees it with free() */
struct btrfs_live {
	char mountpoint[PATH_MAX];
	char sysfs_dir[64];		/* /sys/fs/btrfs/<fsid> */
	bool read_only;			/* mounted read-only */
	/* the super options of its /proc/self/mountinfo line (discard, commit) */
	bool has_super_opts;
	char super_opts[1024];
	bool features_from_sysfs;	/* BTRFS_IOC_GET_FEATURES failed */
	bool super_from_device;		/* fs_info->super read from the devices */
	u64 searches;			/* BTRFS_IOC_TREE_SEARCH_V2 calls */
	u64 items;			/* items they returned */
	/*
	 * sysfs allocation/, read once right after the tree searches; with
	 * the block groups loaded these figures are fs_info's space infos
	 * and global reserve
	 */
	struct btrfs_live_space_info sysfs[BTRFS_NR_SPACE_INFOS];
	bool has_global_rsv;
	u64 global_rsv_size;
	u64 global_rsv_reserved;
};

struct btrfs_mount_estimate;

/* True for a directory on a mounted btrfs (statfs f_type) */
bool btrfs_live_path(const char *path);

/*
 * Fill @fs_info from the filesystem mounted at @path, as btrfs_open_fs()
 * and (@load_block_groups) btrfs_read_block_groups() fill it from the
 * devices, then put the kernel's space infos, global reserve and device
 * sizes of this moment in it (one snapshot of sysfs and DEV_INFO).  Needs
 * CAP_SYS_ADMIN (tree search).  A search that raced with a transaction
 * is started over, BTRFS_LIVE_ATTEMPTS times at most (then -EAGAIN).
 * 0 or -errno with the reason in fs_info->err; btrfs_close_fs() releases
 * it either way.
 */
int btrfs_live_open(struct btrfs_fs_info *fs_info, const char *path,
		    bool load_block_groups);

/* One EXTENT_ITEM or METADATA_ITEM key: <0 stops with that error, >0 stops */
typedef int (*btrfs_live_extent_fn)(void *arg, const struct btrfs_key *key);

/*
 * The extent tree's EXTENT_ITEM and METADATA_ITEM keys with an objectid
 * in [@start, @end), in key order, through the kernel's tree search
 * (CAP_SYS_ADMIN) of the mount fs_info was opened on: the tree in memory
 * now, which the filesystem may change between two searches.
 */
int btrfs_live_extent_items(struct btrfs_fs_info *fs_info, u64 start, u64 end,
			    btrfs_live_extent_fn fn, void *arg);

/* The devices' on-disk trees can be read (for the mount estimate) */
bool btrfs_live_on_disk_readable(const struct btrfs_fs_info *fs_info);

/*
 * btrfs_estimate_mount() of what is on the devices now: an offline open
 * of them and the replay on it.  One that fails while a superblock
 * changed raced with a commit and is tried again from the new
 * superblocks, BTRFS_LIVE_ATTEMPTS times at most.  0 with est->fs_changed
 * set when every attempt raced; <0 (the reason in fs_info->err) only for
 * a failure on unchanged superblocks: real corruption.
 */
int btrfs_live_estimate_mount(struct btrfs_fs_info *fs_info,
			      struct btrfs_mount_estimate *est);

/*
 * A path as an administrator types it (absolute or relative, through a
 * mount of the filesystem whose fsid is @fsid): the subvolume and inode
 * the kernel resolves it to.  The subvolume is what libbtrfsutil's
 * btrfs_util_subvolume_id() asks (BTRFS_IOC_INO_LOOKUP, treeid 0,
 * objectid BTRFS_FIRST_FREE_OBJECTID), the inode fstat()'s st_ino.
 * 0; -ENOENT (or another open() error): no such path here; -EXDEV: on
 * another filesystem than @fsid.
 */
int btrfs_live_resolve_path(const u8 *fsid, const char *path, u64 *subvol, u64 *ino);

#endif
