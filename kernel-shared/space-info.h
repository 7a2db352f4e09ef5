/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_SPACE_INFO_H
#define BTRFS_SPACE_SPACE_INFO_H

#include "kernel-shared/fs.h"

#define SZ_1M	(1ULL << 20)
#define SZ_32M	(32ULL << 20)
#define SZ_128M	(128ULL << 20)
#define SZ_256M	(256ULL << 20)
#define SZ_512M	(512ULL << 20)
#define SZ_1G	(1ULL << 30)
#define BTRFS_MAX_DATA_CHUNK_SIZE	(10ULL * SZ_1G)

void btrfs_init_space_info(struct btrfs_fs_info *fs_info);
struct btrfs_space_info *btrfs_find_space_info(struct btrfs_fs_info *fs_info,
					       u64 flags);
void btrfs_add_bg_to_space_info(struct btrfs_fs_info *fs_info,
				const struct btrfs_block_group *bg);
u64 btrfs_space_info_used(const struct btrfs_space_info *sinfo,
			  bool may_use_included);
const char *btrfs_space_info_name(enum btrfs_space_index index);

#endif
