/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trees built in the block cache for unit tests of the search: a block
 * with a header as the reader leaves it, put in the cache as if read.
 */
#ifndef BTRFS_SPACE_UNIT_TREE_BUILD_H
#define BTRFS_SPACE_UNIT_TREE_BUILD_H

#include "kernel-shared/ctree.h"
#include "kernel-shared/extent_io.h"

/* A zeroed block of @level with @nritems, owned by @owner at @generation */
struct btrfs_tree_block *unit_new_tree_block(struct btrfs_fs_info *fs_info, u64 bytenr,
					     u8 level, u32 nritems, u64 owner,
					     u64 generation);
/* Into the block cache, as if read (the searches find it there); put */
void unit_cache_tree_block(struct btrfs_fs_info *fs_info, struct btrfs_tree_block *eb);

#endif
