// SPDX-License-Identifier: GPL-2.0
/*
 * Space infos as the kernel builds them at mount, after fs/btrfs/space-info.c:
 * btrfs_init_space_info(), create_space_info(), calc_chunk_size(),
 * btrfs_find_space_info(), btrfs_add_bg_to_space_info() and
 * btrfs_space_info_used().  Behaviour reproduced: 6.1-6.18 (non-zoned).
 * The figures are the ones /sys/fs/btrfs/<uuid>/allocation/ shows.
 */
#include "kernel-shared/space-info.h"
#include "kernel-shared/volumes.h"

static const char * const space_info_names[BTRFS_NR_SPACE_INFOS] = {
	[BTRFS_SPACE_DATA] = "data",
	[BTRFS_SPACE_METADATA] = "metadata",
	[BTRFS_SPACE_SYSTEM] = "system",
	[BTRFS_SPACE_MIXED] = "mixed",
};

const char *btrfs_space_info_name(enum btrfs_space_index index)
{
	return space_info_names[index];
}

/* calc_chunk_size(): the sysfs chunk_size, not the size chunks really get */
static u64 calc_chunk_size(const struct btrfs_fs_info *fs_info, u64 flags)
{
	if (flags & BTRFS_BLOCK_GROUP_DATA)
		return BTRFS_MAX_DATA_CHUNK_SIZE;
	if (flags & BTRFS_BLOCK_GROUP_SYSTEM)
		return SZ_32M;
	/* metadata: 1 GiB once the writeable devices exceed 50 GiB */
	if (fs_info->total_rw_bytes > 50ULL * SZ_1G)
		return SZ_1G;
	return SZ_256M;
}

static void create_space_info(struct btrfs_fs_info *fs_info,
			      enum btrfs_space_index index, u64 flags)
{
	struct btrfs_space_info *sinfo = &fs_info->space_info[index];

	sinfo->present = true;
	sinfo->flags = flags;
	sinfo->chunk_size = calc_chunk_size(fs_info, flags);
}

void btrfs_init_space_info(struct btrfs_fs_info *fs_info)
{
	create_space_info(fs_info, BTRFS_SPACE_SYSTEM, BTRFS_BLOCK_GROUP_SYSTEM);
	if (btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS)) {
		create_space_info(fs_info, BTRFS_SPACE_MIXED,
				  BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DATA);
		return;
	}
	create_space_info(fs_info, BTRFS_SPACE_METADATA, BTRFS_BLOCK_GROUP_METADATA);
	create_space_info(fs_info, BTRFS_SPACE_DATA, BTRFS_BLOCK_GROUP_DATA);
}

/* The first space info whose type bits meet @flags: mixed answers both */
struct btrfs_space_info *btrfs_find_space_info(struct btrfs_fs_info *fs_info,
					       u64 flags)
{
	static const enum btrfs_space_index order[] = {
		BTRFS_SPACE_SYSTEM, BTRFS_SPACE_MIXED, BTRFS_SPACE_METADATA,
		BTRFS_SPACE_DATA,
	};
	unsigned int i;

	flags &= BTRFS_BLOCK_GROUP_TYPE_MASK;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct btrfs_space_info *sinfo = &fs_info->space_info[order[i]];

		if (sinfo->present && (sinfo->flags & flags))
			return sinfo;
	}
	return NULL;
}

void btrfs_add_bg_to_space_info(struct btrfs_fs_info *fs_info,
				const struct btrfs_block_group *bg)
{
	struct btrfs_space_info *sinfo = btrfs_find_space_info(fs_info, bg->flags);
	u64 profile = bg->flags & BTRFS_BLOCK_GROUP_PROFILE_MASK;
	int factor = btrfs_bg_type_to_factor(bg->flags);

	if (!sinfo)
		return;
	sinfo->total_bytes += bg->length;
	sinfo->disk_total += bg->length * factor;
	sinfo->bytes_used += bg->used;
	sinfo->disk_used += bg->used * factor;
	sinfo->bytes_readonly += bg->bytes_super;
	sinfo->profile_bits |= profile ? profile : BTRFS_AVAIL_ALLOC_BIT_SINGLE;
	sinfo->nr_block_groups++;
}

u64 btrfs_space_info_used(const struct btrfs_space_info *sinfo,
			  bool may_use_included)
{
	return sinfo->bytes_used + sinfo->bytes_reserved + sinfo->bytes_pinned +
	       sinfo->bytes_readonly + sinfo->bytes_zone_unusable +
	       (may_use_included ? sinfo->bytes_may_use : 0);
}
