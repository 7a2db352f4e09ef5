/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A filesystem planned, not read: what mkfs.btrfs makes on empty devices
 * of given sizes (btrfs-progs v6.2: mkfs/main.c, mkfs/common.c
 * make_btrfs(), kernel-shared/volumes.c btrfs_alloc_chunk()), built as an
 * fs_info that every report reads as it reads an image.  No kernel twin;
 * Documentation/formulas.md section 21.10.
 */
#ifndef BTRFS_SPACE_MKFS_LAYOUT_H
#define BTRFS_SPACE_MKFS_LAYOUT_H

#include "kernel-shared/fs.h"

/* The btrfs-progs release whose mkfs.btrfs is replayed */
#define BTRFS_MKFS_LAYOUT_PROGS		"6.2"
/* at most this many devices: BTRFS_MAX_DEVS() of a 4 KiB leaf is 125 */
#define BTRFS_MKFS_MAX_DEVICES		125

struct btrfs_mkfs_args {
	const u64 *sizes;		/* device sizes in bytes, devid 1 first */
	u32 nr_devices;
	bool data_profile_set;
	u64 data_profile;		/* profile bits, 0 = single */
	bool metadata_profile_set;
	u64 metadata_profile;
	u32 nodesize;			/* 0: 16 KiB */
	u32 sectorsize;			/* 0: 4 KiB */
};

/*
 * Fill @fs_info (from btrfs_fs_info_init()) with the devices, chunks and
 * block groups mkfs.btrfs leaves, as a mount would find them.  Returns 0,
 * -ENOMEM, or -ENOSPC / -EINVAL where mkfs.btrfs refuses (the reason in
 * fs_info->err).
 */
int btrfs_plan_mkfs(const struct btrfs_mkfs_args *args, struct btrfs_fs_info *fs_info);

/* The profiles mkfs.btrfs picks when none is given (mkfs/main.c) */
u64 btrfs_mkfs_default_profile(u64 type, u32 nr_devices);
/* btrfs_min_dev_size() of btrfs-progs 6.2, not mixed, not zoned */
u64 btrfs_mkfs_min_dev_size(u64 data_profile, u64 meta_profile);

#endif
