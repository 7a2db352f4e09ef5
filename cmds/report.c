// SPDX-License-Identifier: GPL-2.0
/*
 * The one place where report figures become output.  JSON keys are the
 * sysfs file names where the kernel has one (Documentation/dev/json-format.md).
 */
#include <stdio.h>
#include <uuid/uuid.h>
#include "cmds/report.h"
#include "common/checksum.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/volumes.h"

static const char * const incompat_names[64] = {
	[0] = "MIXED_BACKREF", [1] = "DEFAULT_SUBVOL", [2] = "MIXED_GROUPS",
	[3] = "COMPRESS_LZO", [4] = "COMPRESS_ZSTD", [5] = "BIG_METADATA",
	[6] = "EXTENDED_IREF", [7] = "RAID56", [8] = "SKINNY_METADATA",
	[9] = "NO_HOLES", [10] = "METADATA_UUID", [11] = "RAID1C34",
	[12] = "ZONED", [13] = "EXTENT_TREE_V2", [14] = "RAID_STRIPE_TREE",
	[16] = "SIMPLE_QUOTA",
};

static const char * const compat_ro_names[64] = {
	[0] = "FREE_SPACE_TREE", [1] = "FREE_SPACE_TREE_VALID", [2] = "VERITY",
	[3] = "BLOCK_GROUP_TREE",
};

static int flag_names(u64 flags, const char * const table[64],
		      const char **out, char unknown[][24])
{
	int bit, n = 0;

	for (bit = 0; bit < 64; bit++) {
		if (!(flags & (1ULL << bit)))
			continue;
		if (table[bit]) {
			out[n++] = table[bit];
		} else {
			snprintf(unknown[bit], sizeof(unknown[bit]), "UNKNOWN_BIT_%d", bit);
			out[n++] = unknown[bit];
		}
	}
	return n;
}

static void print_flags(struct fmt_ctx *fctx, const char *key_flags,
			const char *key_names, const char *label, u64 flags,
			const char * const table[64])
{
	const char *names[64];
	char unknown[64][24];
	int n = flag_names(flags, table, names, unknown);

	fmt_u64(fctx, key_flags, NULL, flags);
	fmt_str_list(fctx, key_names, label, names, n);
}

void print_filesystem_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	const struct btrfs_fs_info *fs_info = r->fs_info;
	const struct btrfs_super_block *sb = &fs_info->super;
	char fsid[37], metadata_uuid[37], label[BTRFS_LABEL_SIZE + 1];

	uuid_unparse(fs_info->fsid, fsid);
	uuid_unparse(fs_info->metadata_uuid, metadata_uuid);
	snprintf(label, sizeof(label), "%.*s", BTRFS_LABEL_SIZE, sb->label);
	fmt_group_start(fctx, "filesystem", "Filesystem");
	fmt_str(fctx, "fsid", "UUID", fsid);
	fmt_str(fctx, "metadata_uuid", "Metadata UUID", metadata_uuid);
	fmt_str(fctx, "label", "Label", label);
	fmt_u64(fctx, "generation", "Generation", fs_info->generation);
	fmt_u64(fctx, "nodesize", "Node size", fs_info->nodesize);
	fmt_u64(fctx, "sectorsize", "Sector size", fs_info->sectorsize);
	fmt_str(fctx, "csum_type", "Checksum", csum_algo_name(fs_info->csum_type));
	print_flags(fctx, "compat_ro_flags", "compat_ro_names", "Compat RO features",
		    fs_info->compat_ro, compat_ro_names);
	print_flags(fctx, "incompat_flags", "incompat_names", "Incompat features",
		    fs_info->incompat, incompat_names);
	fmt_u64(fctx, "num_devices", "Devices", btrfs_super_num_devices(sb));
	fmt_size(fctx, "total_bytes", "Total bytes", btrfs_super_total_bytes(sb));
	fmt_size(fctx, "bytes_used", "Bytes used", btrfs_super_bytes_used(sb));
	fmt_u64(fctx, "superblock_mirror", "Superblock copy", fs_info->super_mirror);
	fmt_bool(fctx, "degraded", "Degraded", fs_info->degraded);
	fmt_group_end(fctx);
}

void print_devices_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	u32 i;

	fmt_array_start(fctx, "devices", "Devices");
	for (i = 0; i < r->nr_devices; i++) {
		const struct space_report_device *dev = &r->devices[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", "devid", dev->devid);
		fmt_str(fctx, "path", "path", dev->missing ? NULL : dev->path);
		fmt_size(fctx, "size", "size", dev->size);
		fmt_size(fctx, "allocated", "allocated", dev->allocated);
		fmt_size(fctx, "unallocated", "unallocated", dev->unallocated);
		fmt_bool(fctx, "missing", "missing", dev->missing);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

static void print_one_space_info(struct fmt_ctx *fctx,
				 const struct space_report_space_info *s)
{
	const struct btrfs_space_info *si = &s->info;

	fmt_group_start(fctx, s->name, s->name);
	fmt_u64(fctx, "flags", NULL, si->flags);
	fmt_str_list(fctx, "profiles", "Profiles", s->profiles, s->nr_profiles);
	fmt_size(fctx, "total_bytes", "Total", si->total_bytes);
	fmt_size(fctx, "bytes_used", "Used", si->bytes_used);
	fmt_size(fctx, "bytes_readonly", "Read-only", si->bytes_readonly);
	fmt_size(fctx, "bytes_zone_unusable", "Zone unusable", si->bytes_zone_unusable);
	fmt_size(fctx, "bytes_may_use", "May use", si->bytes_may_use);
	fmt_size(fctx, "bytes_pinned", "Pinned", si->bytes_pinned);
	fmt_size(fctx, "bytes_reserved", "Reserved", si->bytes_reserved);
	fmt_size(fctx, "disk_total", "Disk total", si->disk_total);
	fmt_size(fctx, "disk_used", "Disk used", si->disk_used);
	fmt_size(fctx, "chunk_size", "Chunk size", si->chunk_size);
	fmt_ratio(fctx, "ratio", "Ratio", s->ratio);
	fmt_group_end(fctx);
}

void print_space_info_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	int i;

	fmt_group_start(fctx, "space_info", "Space info (sysfs allocation/, right after mount)");
	for (i = 0; i < r->nr_space_infos; i++)
		print_one_space_info(fctx, &r->space_infos[i]);
	fmt_group_end(fctx);
}

void print_global_rsv_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	fmt_size(fctx, "global_rsv_size", "Global reserve", r->global_rsv.size);
	fmt_size(fctx, "global_rsv_reserved", "Global reserve reserved",
		 r->global_rsv_reserved);
}

void print_block_groups_summary(struct fmt_ctx *fctx, const struct space_report *r)
{
	fmt_group_start(fctx, "block_groups", "Block groups");
	fmt_u64(fctx, "count", "Count", r->nr_block_groups);
	fmt_str(fctx, "source", "Found in", r->block_group_source);
	fmt_group_end(fctx);
}

void print_io_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	fmt_group_start(fctx, "io", "I/O");
	fmt_u64(fctx, "blocks_read", "Blocks read", r->io.blocks_read);
	fmt_u64(fctx, "bytes_read", "Bytes read", r->io.bytes_read);
	fmt_group_start(fctx, "block_group_search", "Block-group search");
	fmt_u64(fctx, "blocks_read", "Blocks read", r->io.bg_blocks_read);
	fmt_u64(fctx, "bytes_read", "Bytes read", r->io.bg_bytes_read);
	fmt_u64(fctx, "leaves", "Leaves", r->io.bg_leaves);
	fmt_u64(fctx, "nodes", "Nodes", r->io.bg_nodes);
	fmt_group_end(fctx);
	fmt_group_end(fctx);
}

static void print_stripes(struct fmt_ctx *fctx, const struct btrfs_chunk_map *map)
{
	u16 s;

	fmt_array_start(fctx, "stripes", "stripes");
	for (s = 0; s < map->num_stripes; s++) {
		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", "devid", map->stripes[s].devid);
		fmt_u64(fctx, "offset", "offset", map->stripes[s].physical);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

void print_chunk_list(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info)
{
	u32 i;

	fmt_array_start(fctx, "chunks", "Chunks");
	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "logical", "logical", map->start);
		fmt_size(fctx, "length", "length", map->length);
		fmt_u64(fctx, "type", NULL, map->type);
		fmt_str(fctx, "type_name", "type", btrfs_bg_type_name(map->type));
		fmt_str(fctx, "profile", "profile", btrfs_bg_profile_name(map->type));
		fmt_u64(fctx, "num_stripes", "num_stripes", map->num_stripes);
		fmt_u64(fctx, "sub_stripes", "sub_stripes", map->sub_stripes);
		fmt_u64(fctx, "stripe_len", NULL, map->stripe_len);
		fmt_size(fctx, "stripe_size", "stripe_size", map->stripe_size);
		print_stripes(fctx, map);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

void print_block_group_list(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info)
{
	const char *tree = fs_info->bg_from_bg_tree ? "block-group-tree" : "extent-tree";
	u32 i;

	fmt_array_start(fctx, "block_groups", "Block groups");
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "start", "start", bg->start);
		fmt_size(fctx, "length", "length", bg->length);
		fmt_size(fctx, "used", "used", bg->used);
		fmt_u64(fctx, "flags", NULL, bg->flags);
		fmt_str(fctx, "type_name", "type", btrfs_bg_type_name(bg->flags));
		fmt_str(fctx, "profile", "profile", btrfs_bg_profile_name(bg->flags));
		fmt_str(fctx, "tree", NULL, tree);
		fmt_u64(fctx, "leaf", "leaf", bg->leaf);
		fmt_bool(fctx, "read_only", "ro", bg->ro);
		fmt_size(fctx, "bytes_super", "super", bg->bytes_super);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}
