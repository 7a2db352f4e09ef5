/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which files own the data of a block group, by path: what
 * BTRFS_IOC_LOGICAL_INO and BTRFS_IOC_INO_PATHS answer for each of its
 * extents (btrfs inspect-internal logical-resolve), for the summary's
 * "delete the data in block group N" remedy (formulas.md 19.6).
 */
#ifndef BTRFS_SPACE_BACKREF_H
#define BTRFS_SPACE_BACKREF_H

#include <stdbool.h>
#include "common/types.h"

struct btrfs_fs_info;

#define BTRFS_BG_OWNERS_SHOWN	3
#define BTRFS_OWNER_PATH_MAX	256

/* One file's extents in the block group */
struct btrfs_data_owner {
	u64 root;			/* subvolume id */
	u64 ino;
	u64 bytes;			/* Σ lengths of the group's extents it refers to */
	char path[BTRFS_OWNER_PATH_MAX];	/* from the top level; "" when not found */
};

struct btrfs_bg_owners {
	bool read;			/* the extent tree's items of the group were read */
	char error[512];		/* when not read: the read's error (block, field) */
	struct btrfs_data_owner top[BTRFS_BG_OWNERS_SHOWN];	/* most bytes first */
	u32 nr_top;
	u64 nr_files;			/* distinct (subvolume, inode) pairs */
	u64 shared_bytes;		/* extents a second subvolume or a shared leaf
					   (a snapshot, COWed since or not) refers to as well */
	/* the subvolumes whose direct refs hold those extents, the first three */
	u64 shared_subvols[BTRFS_BG_OWNERS_SHOWN];
	char shared_paths[BTRFS_BG_OWNERS_SHOWN][BTRFS_OWNER_PATH_MAX];	/* "" top level */
	u32 nr_shared_subvols;
	bool more_shared_subvols;	/* more than BTRFS_BG_OWNERS_SHOWN */
	bool shared_leaf;		/* some through a snapshot's shared leaf */
};

/*
 * The files whose data lies in [@start, @start + @length): the direct
 * data refs (EXTENT_DATA_REF, inline or keyed) of every EXTENT_ITEM in
 * the range, summed per file, and the paths of the largest.  A read
 * error leaves owners->read false (the remedy is printed without them);
 * only -ENOMEM is returned.
 */
int btrfs_bg_data_owners(struct btrfs_fs_info *fs_info, u64 start, u64 length,
			 struct btrfs_bg_owners *owners);

#endif
