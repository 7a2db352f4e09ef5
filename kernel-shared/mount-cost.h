/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_MOUNT_COST_H
#define BTRFS_SPACE_MOUNT_COST_H

#include "kernel-shared/fs.h"

enum btrfs_mount_phase {
	MOUNT_PHASE_SUPERBLOCK,
	MOUNT_PHASE_CHUNK_TREE,
	MOUNT_PHASE_ROOT_TREE,
	MOUNT_PHASE_ROOTS,
	MOUNT_PHASE_DEV_EXTENTS,
	MOUNT_PHASE_BLOCK_GROUPS,
	MOUNT_PHASE_QUOTA,
	MOUNT_PHASE_LOG,
	MOUNT_PHASE_FS_ROOTS,
	MOUNT_NR_PHASES,
};

struct btrfs_mount_reads {
	u64 phase[MOUNT_NR_PHASES];
	u64 total_reads;
	u64 total_bytes;
};

struct btrfs_mount_estimate {
	struct btrfs_mount_reads now;
	struct btrfs_mount_reads bg_tree;	/* after btrfstune --convert-to-block-group-tree */
	bool has_bg_tree;
	bool log_partial;			/* a log replay: the count may be low */
	u64 bg_tree_blocks;			/* blocks of the (would-be) block-group tree */
	u32 attempts;				/* replays run (live mode may retry) */
	bool fs_changed;			/* live: a commit during every attempt */
};

/* Device latency profiles, seconds per read (Documentation/mount-estimate.md) */
struct btrfs_latency_profile {
	const char *name;
	double seconds;
};

extern const struct btrfs_latency_profile btrfs_latency_profiles[];

/* The seconds of a mount at one latency, now and with the block-group tree */
struct btrfs_mount_time {
	double latency;				/* seconds per read */
	double seconds;
	double bg_tree_seconds;
};

const char *btrfs_mount_phase_name(enum btrfs_mount_phase phase);
/*
 * Read ahead, in one batch per tree level, what the mount's phases after
 * the root items will read (@ctx: a bool, whether block groups will be
 * loaded); for btrfs_read_args.after_roots.
 */
void btrfs_mount_read_ahead(struct btrfs_fs_info *fs_info, void *ctx);
int btrfs_estimate_mount(struct btrfs_fs_info *fs_info, struct btrfs_mount_estimate *est);
double btrfs_mount_seconds(u64 reads, double latency);
/* The profile named @name, or NULL */
const struct btrfs_latency_profile *btrfs_find_latency_profile(const char *name);
void btrfs_mount_time(const struct btrfs_mount_estimate *est, double latency,
		      struct btrfs_mount_time *t);

#endif
