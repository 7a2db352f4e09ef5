/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a mount does with the empty block groups it finds, by its discard
 * mode (discard.c).  Documentation/formulas.md section 21.4.
 */
#ifndef BTRFS_SPACE_DISCARD_H
#define BTRFS_SPACE_DISCARD_H

#include <stdbool.h>
#include "kernel-shared/fs.h"

enum btrfs_discard_mode {
	BTRFS_DISCARD_NONE,		/* nodiscard */
	BTRFS_DISCARD_SYNC,		/* discard, discard=sync */
	BTRFS_DISCARD_ASYNC,		/* discard=async */
};

/* The mount options that decide it, as given (--mount-options) or read */
struct btrfs_mount_discard {
	bool set;			/* a discard option was given */
	enum btrfs_discard_mode mode;
	u32 commit_interval;		/* commit=N, seconds (30 by default) */
};

#define BTRFS_DEFAULT_COMMIT_INTERVAL	30

void btrfs_mount_discard_init(struct btrfs_mount_discard *md);
/* A comma-separated list; -EINVAL on an option it does not know */
int btrfs_parse_mount_discard(const char *opts, struct btrfs_mount_discard *md);
/* The super options of a mounted btrfs, as btrfs_show_options() prints them */
void btrfs_mount_discard_from_super_opts(const char *opts, struct btrfs_mount_discard *md);

/* The mode the mount runs with, and in @why where it came from */
enum btrfs_discard_mode btrfs_discard_at_mount(const struct btrfs_fs_info *fs_info,
					       const struct btrfs_mount_discard *md,
					       u32 kernel_version, const char **why);
const char *btrfs_discard_mode_name(enum btrfs_discard_mode mode);

#endif
