/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_BLOCK_GROUP_H
#define BTRFS_SPACE_BLOCK_GROUP_H

#include "kernel-shared/fs.h"

/* @progress: NULL, or told of the block groups loaded so far */
int btrfs_read_block_groups(struct btrfs_fs_info *fs_info,
			    const struct btrfs_progress *progress);
/* Live mode: block group items found by the kernel's tree search */
int btrfs_set_block_group_item(struct btrfs_fs_info *fs_info,
			       struct btrfs_chunk_map *map,
			       const struct btrfs_block_group_item *item, u64 leaf,
			       struct btrfs_block_group *bg);
void btrfs_account_block_groups(struct btrfs_fs_info *fs_info);
u64 btrfs_chunk_map_bytes_super(const struct btrfs_chunk_map *map);
u32 btrfs_super_exclude_ranges(const struct btrfs_chunk_map *map, u64 *start, u64 *len,
			       u32 max);
/* The block group holding @bytenr (btrfs_lookup_block_group()), or NULL */
struct btrfs_block_group *btrfs_lookup_block_group(const struct btrfs_fs_info *fs_info,
						    u64 bytenr);
bool btrfs_block_group_super_overlap(const struct btrfs_block_group *bg, u64 start, u64 len);
u64 btrfs_get_alloc_profile(const struct btrfs_fs_info *fs_info, u64 orig_flags);
int btrfs_replay_block_group_search(struct btrfs_fs_info *fs_info);
/* The keys that search makes, in order, when items match chunks: 2n + 1 */
u32 btrfs_block_group_search_keys(const struct btrfs_fs_info *fs_info,
				  struct btrfs_key *keys);
const struct btrfs_root_ref *btrfs_block_group_root(const struct btrfs_fs_info *fs_info);

#endif
