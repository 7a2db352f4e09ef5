/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_ROOT_TREE_H
#define BTRFS_SPACE_ROOT_TREE_H

#include "kernel-shared/ctree.h"

struct btrfs_fs_info;

/*
 * btrfs_find_orphan_roots(): the deleted subvolumes whose drop has not
 * finished, one ORPHAN_ITEM each in the tree root; their count in @count.
 * A read error of the tree root is returned and @count left at what was
 * counted; the error is the caller's to weigh (not the filesystem's).
 */
int btrfs_count_orphan_roots(struct btrfs_fs_info *fs_info, u64 *count);

#endif
