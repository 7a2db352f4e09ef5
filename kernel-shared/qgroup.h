/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_QGROUP_H
#define BTRFS_SPACE_QGROUP_H

#include "kernel-shared/ctree.h"

struct btrfs_fs_info;

/* The limited qgroup with the fewest bytes left before EDQUOT */
struct btrfs_qgroup_tightest {
	bool found;
	u64 qgroupid;
	bool exclusive;		/* the exclusive limit (max_excl), else referenced */
	u64 limit;		/* max_rfer or max_excl */
	u64 counted;		/* rfer or excl as last committed */
	u64 left;		/* limit - counted, 0 if over */
};

struct btrfs_quota_state {
	bool enabled;		/* a quota tree whose status item has FLAG_ON */
	bool inconsistent;	/* STATUS_FLAG_INCONSISTENT: the counts are stale */
	bool simple;		/* STATUS_FLAG_SIMPLE_MODE (squota, 6.7) */
	u64 qgroups;		/* INFO items */
	u64 limited;		/* qgroups with a referenced or exclusive limit */
	struct btrfs_qgroup_tightest tightest;	/* found when limited > 0 */
	bool disabled;		/* a status version the kernel refuses: quotas off */
	/*
	 * The first item the kernel logs an error for at mount (leaf, slot,
	 * field, what the kernel does), or the item too short to read; "" if none
	 */
	char note[320];
};

/*
 * btrfs_read_qgroup_config(): the quota tree's status, info and limit
 * items, and the limit qgroup_check_limits() meets first.  No quota tree:
 * enabled false, 0.  A read error of the tree is returned; an item shorter
 * than its fields is -EUCLEAN, named in q->note (the kernel reads past it).
 */
int btrfs_read_quota_state(struct btrfs_fs_info *fs_info, struct btrfs_quota_state *q);

#endif
