// SPDX-License-Identifier: GPL-2.0
/*
 * The one place where report figures become output.  JSON keys are the
 * sysfs file names where the kernel has one (Documentation/dev/json-format.md).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <uuid/uuid.h>
#include "cmds/report.h"
#include "common/checksum.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/live.h"
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

/*
 * JSON: "mode", "live" for a mount point read through the kernel, "image"
 * for devices and images read offline.  Text: a line in live mode only.
 */
void print_mode(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info)
{
	const struct btrfs_live *live = fs_info->live;
	char line[PATH_MAX + 64];

	if (fctx->mode == FMT_JSON) {
		fmt_str(fctx, "mode", NULL, live ? "live" : fs_info->planned ? "planned" : "image");
		return;
	}
	if (!live)
		return;
	snprintf(line, sizeof(line), "live, %s (the kernel's figures now)", live->mountpoint);
	fmt_str(fctx, "mode", "Mode", line);
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

/* JSON: the chunk types a device holds, raw bytes of each */
static void print_device_profiles_json(struct fmt_ctx *fctx, const struct space_report *r,
				       const struct space_report_device *dev)
{
	u32 p;

	fmt_array_start(fctx, "profiles", NULL);
	for (p = 0; p < r->nr_profiles; p++) {
		u64 flags = r->profiles[p].flags;

		if (!dev->profile_bytes[p])
			continue;
		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "flags", NULL, flags);
		fmt_str(fctx, "type_name", NULL, btrfs_bg_type_name(flags));
		fmt_str(fctx, "profile", NULL, btrfs_bg_profile_name(flags));
		fmt_u64(fctx, "bytes", NULL, dev->profile_bytes[p]);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

/*
 * Text: under a rule, the Total row (each chunk type's logical bytes, the
 * devices' sums) and the Used row, in the columns of the devices
 */
static void print_device_total_rows(struct fmt_ctx *fctx, const struct space_report *r,
				    const char (*names)[32])
{
	const struct space_report_device_totals *tot = &r->device_totals;
	u32 p;

	fmt_table_rule(fctx);
	fmt_group_start(fctx, NULL, NULL);
	fmt_str(fctx, NULL, "Devid", "Total");
	fmt_size(fctx, NULL, "Size", tot->size);
	for (p = 0; p < r->nr_profiles; p++)
		fmt_size(fctx, NULL, names[p], r->profiles[p].total);
	fmt_size(fctx, NULL, "Allocated", tot->allocated);
	fmt_size(fctx, NULL, "Unallocated", tot->unallocated);
	fmt_size(fctx, NULL, "Slack", tot->slack);
	fmt_group_end(fctx);
	fmt_group_start(fctx, NULL, NULL);
	fmt_str(fctx, NULL, "Devid", "Used");
	for (p = 0; p < r->nr_profiles; p++)
		fmt_size(fctx, NULL, names[p], r->profiles[p].used);
	fmt_group_end(fctx);
}

/* JSON: the same totals, and each chunk type's logical total and used */
static void print_device_totals_json(struct fmt_ctx *fctx, const struct space_report *r)
{
	const struct space_report_device_totals *tot = &r->device_totals;
	u32 p;

	fmt_group_start(fctx, "device_totals", NULL);
	fmt_u64(fctx, "size", NULL, tot->size);
	fmt_u64(fctx, "allocated", NULL, tot->allocated);
	fmt_u64(fctx, "unallocated", NULL, tot->unallocated);
	fmt_u64(fctx, "slack", NULL, tot->slack);
	fmt_array_start(fctx, "profiles", NULL);
	for (p = 0; p < r->nr_profiles; p++) {
		u64 flags = r->profiles[p].flags;

		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "flags", NULL, flags);
		fmt_str(fctx, "type_name", NULL, btrfs_bg_type_name(flags));
		fmt_str(fctx, "profile", NULL, btrfs_bg_profile_name(flags));
		fmt_u64(fctx, "total", NULL, r->profiles[p].total);
		fmt_u64(fctx, "used", NULL, r->profiles[p].used);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	fmt_group_end(fctx);
}

/*
 * Text: a table as "btrfs filesystem usage -T" lays it out, a column per
 * chunk type ("Data, RAID1") between the size and what is allocated, the
 * path "missing" for a missing device; JSON: an array, each device with
 * "missing" and its "profiles"
 */
void print_devices_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	char (*names)[32] = NULL;
	u32 i, p;

	if (fctx->mode != FMT_JSON && r->nr_profiles) {
		names = calloc(r->nr_profiles, sizeof(*names));
		for (p = 0; names && p < r->nr_profiles; p++)
			btrfs_bg_progs_name(r->profiles[p].flags, names[p], sizeof(names[p]));
	}
	fmt_table_start(fctx, "devices", "Devices");
	for (i = 0; i < r->nr_devices; i++) {
		const struct space_report_device *dev = &r->devices[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", "Devid", dev->devid);
		fmt_str(fctx, "path", NULL, dev->missing ? NULL : dev->path);
		fmt_size(fctx, "size", "Size", dev->size);
		/* the table's labels live until fmt_table_end() */
		for (p = 0; names && p < r->nr_profiles; p++)
			fmt_size_or_dash(fctx, NULL, names[p], dev->profile_bytes[p]);
		fmt_size(fctx, "allocated", "Allocated", dev->allocated);
		fmt_size(fctx, "unallocated", "Unallocated", dev->unallocated);
		fmt_size_or_dash(fctx, "slack", "Slack", dev->slack);
		fmt_bool(fctx, "missing", NULL, dev->missing);
		if (fctx->mode == FMT_JSON)
			print_device_profiles_json(fctx, r, dev);
		/* text: last, the one column of unbounded width; as progs, "missing" */
		fmt_str(fctx, NULL, "Path", dev->missing ? "missing" : dev->path);
		fmt_group_end(fctx);
	}
	if (names)
		print_device_total_rows(fctx, r, (const char (*)[32])names);
	fmt_table_end(fctx);
	free(names);
	if (fctx->mode == FMT_JSON)
		print_device_totals_json(fctx, r);
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

	fmt_group_start(fctx, "space_info", r->live ?
			"Space info (live, sysfs allocation/ now)" :
			"Space info (sysfs allocation/, right after mount)");
	for (i = 0; i < r->nr_space_infos; i++)
		print_one_space_info(fctx, &r->space_infos[i]);
	fmt_group_end(fctx);
}

void print_global_rsv_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	fmt_size(fctx, "global_rsv_size", "Global reserve", r->global_rsv_size);
	fmt_size(fctx, "global_rsv_reserved", "Global reserve reserved",
		 r->global_rsv_reserved);
}

/*
 * The log tree the mount replays: the space infos above already include
 * what the replay allocates and frees.  Text shows it only when there is
 * a log; JSON always has the group.
 */
void print_log_replay_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	const struct btrfs_log_replay *l = &r->log_replay;

	if (fctx->mode == FMT_TEXT && !l->present)
		return;
	fmt_group_start(fctx, "log_replay", "Log tree (replayed by the mount, included above)");
	fmt_bool(fctx, "present", "Present", l->present);
	fmt_u64(fctx, "log_root", "Log root", l->log_root);
	fmt_u64(fctx, "log_trees", "Log trees", l->log_trees);
	fmt_u64(fctx, "skipped_trees", "Skipped (subvolume gone)", l->skipped_trees);
	fmt_u64(fctx, "log_leaves", "Log leaves", l->log_leaves);
	fmt_u64(fctx, "extent_items", "Extent items replayed", l->extent_items);
	fmt_u64(fctx, "unchanged_items", "Already in the subvolume", l->unchanged_items);
	fmt_u64(fctx, "ignored_items", "Of inodes with 0 links", l->ignored_items);
	fmt_u64(fctx, "refs_added", "References added", l->refs_added);
	fmt_u64(fctx, "extents_allocated", "Extents allocated", l->extents_allocated);
	fmt_size(fctx, "bytes_allocated", "Bytes allocated", l->bytes_allocated);
	fmt_u64(fctx, "extents_freed", "Extents freed", l->extents_freed);
	fmt_size(fctx, "bytes_freed", "Bytes freed", l->bytes_freed);
	fmt_u64(fctx, "subvol_blocks_added", "Subvolume tree blocks added (splits)",
		l->subvol_blocks_added);
	fmt_u64(fctx, "subvol_blocks_freed", "Subvolume tree blocks freed",
		l->subvol_blocks_freed);
	fmt_u64(fctx, "extent_tree_blocks_added", "Extent tree blocks added (splits)",
		l->extent_tree_blocks_added);
	fmt_u64(fctx, "extent_tree_blocks_freed", "Extent tree blocks freed",
		l->extent_tree_blocks_freed);
	fmt_u64(fctx, "csum_tree_blocks_added", "Csum tree blocks added (splits)",
		l->csum_tree_blocks_added);
	fmt_u64(fctx, "csum_tree_blocks_freed", "Csum tree blocks freed",
		l->csum_tree_blocks_freed);
	fmt_bool(fctx, "tree_model_inexact", "Leaf model incomplete",
		 l->tree_model_inexact);
	fmt_bool(fctx, "mount_writes", "A mount writes (even -o ro)", l->present);
	fmt_str(fctx, "no_replay_option", "Not replayed with", "-o ro,rescue=nologreplay");
	fmt_group_end(fctx);
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

/* One stripe per line in text, under the chunk's line */
static void print_stripes(struct fmt_ctx *fctx, const struct btrfs_chunk_map *map)
{
	u16 s;

	fmt_array_start(fctx, "stripes", "stripes");
	for (s = 0; s < map->num_stripes; s++) {
		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", "Devid", map->stripes[s].devid);
		fmt_u64(fctx, "offset", "Physical", map->stripes[s].physical);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

/*
 * Text: a table, the type and profile spelled as btrfs-progs does; JSON:
 * the sysfs names ("DATA", "raid1").
 */
void print_chunk_list(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info)
{
	char name[48];
	u32 i;

	fmt_table_start(fctx, "chunks", "Chunks");
	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "logical", "Logical", map->start);
		fmt_size(fctx, "length", "Length", map->length);
		fmt_u64(fctx, "type", NULL, map->type);
		fmt_str(fctx, "type_name", NULL, btrfs_bg_type_name(map->type));
		fmt_str(fctx, "profile", NULL, btrfs_bg_profile_name(map->type));
		fmt_str(fctx, NULL, "Type, profile",
			btrfs_bg_progs_name(map->type, name, sizeof(name)));
		fmt_u64(fctx, "num_stripes", "Stripes", map->num_stripes);
		fmt_u64(fctx, "sub_stripes", NULL, map->sub_stripes);
		fmt_u64(fctx, "stripe_len", NULL, map->stripe_len);
		fmt_size(fctx, "stripe_size", "Stripe size", map->stripe_size);
		print_stripes(fctx, map);
		fmt_group_end(fctx);
	}
	fmt_table_end(fctx);
}

void print_block_group_list(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info)
{
	const char *tree = fs_info->bg_from_bg_tree ? "block-group-tree" : "extent-tree";
	char name[48];
	u32 i;

	fmt_table_start(fctx, "block_groups", "Block groups");
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "start", "Start", bg->start);
		fmt_size(fctx, "length", "Length", bg->length);
		fmt_size(fctx, "used", "Used", bg->used);
		/* the item says otherwise only when a log replay changes used */
		if (fctx->mode == FMT_JSON || bg->item_used != bg->used)
			fmt_size(fctx, "item_used", "Item used", bg->item_used);
		fmt_u64(fctx, "flags", NULL, bg->flags);
		fmt_str(fctx, "type_name", NULL, btrfs_bg_type_name(bg->flags));
		fmt_str(fctx, "profile", NULL, btrfs_bg_profile_name(bg->flags));
		fmt_str(fctx, NULL, "Type, profile",
			btrfs_bg_progs_name(bg->flags, name, sizeof(name)));
		fmt_str(fctx, "tree", NULL, tree);
		fmt_u64(fctx, "leaf", "Leaf", bg->leaf);
		fmt_bool(fctx, "read_only", "RO", bg->ro);
		fmt_size(fctx, "bytes_super", "Super", bg->bytes_super);
		fmt_group_end(fctx);
	}
	fmt_table_end(fctx);
}

void print_kernel_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	const char *unconfirmed[4];
	int n = btrfs_kernel_model_unconfirmed(&r->reserve.model, unconfirmed, 4);
	char version[32];

	fmt_group_start(fctx, "kernel", "Kernel model");
	fmt_str(fctx, "version", "Version",
		btrfs_kernel_version_str(r->reserve.kernel_version, version, sizeof(version)));
	fmt_str_list(fctx, "unconfirmed", "Unconfirmed", unconfirmed, n);
	fmt_group_end(fctx);
}

void print_global_rsv_detail(struct fmt_ctx *fctx, const struct space_report *r)
{
	const struct btrfs_global_rsv_inputs *in = &r->global_rsv_inputs;
	const struct btrfs_global_rsv_calc *c = &r->global_rsv;

	fmt_group_start(fctx, "global_rsv", "Global reserve (btrfs_update_global_block_rsv)");
	fmt_size(fctx, "size", "Size", c->size);
	fmt_size(fctx, "roots_bytes_used", "Roots bytes used", c->num);
	fmt_size(fctx, "tree_root_bytes_used", "Tree root (in memory)", in->tree_root_bytes_used);
	fmt_size(fctx, "extent_bytes_used", "Extent tree", in->extent_bytes_used);
	fmt_size(fctx, "csum_bytes_used", "Csum tree", in->csum_bytes_used);
	fmt_size(fctx, "free_space_bytes_used", "Free space tree", in->free_space_bytes_used);
	fmt_size(fctx, "block_group_bytes_used", "Block group tree", in->block_group_bytes_used);
	fmt_size(fctx, "raid_stripe_bytes_used", "Raid stripe tree", in->stripe_bytes_used);
	fmt_u64(fctx, "min_items", "Min items", c->min_items);
	fmt_bool(fctx, "free_space_tree_option", "Free space tree option", in->free_space_tree_opt);
	fmt_str(fctx, "floor_formula", "Floor formula", c->floor_formula);
	fmt_size(fctx, "floor", "Floor", c->floor);
	fmt_size(fctx, "cap", "Cap", c->cap);
	fmt_group_end(fctx);
}

void print_overcommit_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	const struct space_report_reserve *rs = &r->reserve;

	fmt_group_start(fctx, "overcommit", "Metadata over-commit (calc_available_free_space)");
	fmt_size(fctx, "free_chunk_space", "Free chunk space", rs->state.free_chunk_space);
	fmt_size(fctx, "total_rw_bytes", "Total rw bytes", rs->state.total_rw_bytes);
	fmt_str(fctx, "metadata_profile", "Metadata profile",
		btrfs_bg_profile_name(rs->state.profile));
	fmt_u64(fctx, "metadata_profile_copies", "Profile copies", rs->state.profile_copies);
	fmt_size(fctx, "effective_data_chunk_size", "Effective data chunk size",
		 rs->effective_data_chunk_size);
	fmt_size(fctx, "avail_flush_all", "Room, FLUSH_ALL", rs->avail_flush_all);
	fmt_size(fctx, "avail_other", "Room, other flush modes", rs->avail_other);
	fmt_size(fctx, "largest_reservation_flush_all", "Largest grant, FLUSH_ALL",
		 rs->largest_flush_all);
	fmt_size(fctx, "largest_reservation_other", "Largest grant, other modes",
		 rs->largest_other);
	fmt_group_end(fctx);
}

void print_preempt_section(struct fmt_ctx *fctx, const struct space_report *r)
{
	const struct btrfs_preempt_result *p = &r->reserve.preempt;
	static const char * const clamp_keys[] = {
		"0", "1", "2", "3", "4", "5", "6", "7", "8",
	};
	int clamp;

	fmt_group_start(fctx, "preempt", "Preemptive flushing (need_preemptive_reclaim)");
	fmt_size(fctx, "full_limit", "Plain full limit", p->full_limit);
	fmt_size(fctx, "full_used", "Used for that limit", p->full_used);
	fmt_size(fctx, "floor", "Non-global floor", p->floor);
	fmt_size(fctx, "thresh_base", "Threshold before clamp", p->thresh_base);
	fmt_group_start(fctx, "thresh_by_clamp", "Threshold by clamp");
	for (clamp = 1; clamp <= BTRFS_PREEMPT_MAX_CLAMP; clamp++)
		fmt_size(fctx, clamp_keys[clamp], clamp_keys[clamp], p->thresh_by_clamp[clamp]);
	fmt_group_end(fctx);
	fmt_u64(fctx, "clamp", "Clamp", r->reserve.state.clamp);
	fmt_size(fctx, "bytes_may_use", "Bytes may use", r->reserve.state.bytes_may_use);
	fmt_size(fctx, "used", "Weighed against threshold", p->used);
	fmt_str(fctx, "verdict", "Verdict", p->verdict ? "flush" : "no-flush");
	fmt_str(fctx, "reason", "Reason", p->reason);
	if (p->can_flush)
		fmt_size(fctx, "min_bytes_may_use_to_flush", "Flushes from bytes_may_use",
			 p->min_may_use_to_flush);
	else
		fmt_str(fctx, "min_bytes_may_use_to_flush", "Flushes from bytes_may_use", NULL);
	fmt_group_end(fctx);
}

static void print_level(struct fmt_ctx *fctx, enum summary_level level, const char *rule)
{
	fmt_str(fctx, "level", "Level", btrfs_summary_level_name(level));
	fmt_str(fctx, "rule", "Rule", rule);
}

static void print_summary_space(struct fmt_ctx *fctx, const struct summary_space *s)
{
	fmt_group_start(fctx, s->name, s->name);
	fmt_str(fctx, "profile", "Profile", btrfs_bg_profile_name(s->profile));
	fmt_size(fctx, "total_bytes", "Total", s->total_bytes);
	fmt_size(fctx, "held", "Held", s->held);
	fmt_size(fctx, "free", "Really free", s->free);
	fmt_size(fctx, "chunk_size", "One new chunk", s->chunk_size);
	fmt_u64(fctx, "new_chunks", "New chunks that fit", s->new_chunks);
	fmt_size(fctx, "new_chunk_bytes", "Their bytes", s->new_chunk_bytes);
	print_level(fctx, s->level, s->rule);
	if (s->headroom_present) {
		/* the forecast's fill: formulas.md section 21 */
		fmt_group_start(fctx, "headroom", "Headroom before ENOSPC");
		fmt_size(fctx, "bytes", "Can grow by", s->headroom);
		if (s->flags_metadata)
			fmt_size(fctx, "global_rsv_held", "Held by global reserve",
				 s->headroom_rsv);
		print_level(fctx, s->headroom_level, s->headroom_rule);
		fmt_group_end(fctx);
	}
	fmt_group_end(fctx);
}

static void print_summary_unallocated(struct fmt_ctx *fctx, const struct space_summary *s)
{
	u32 i;

	fmt_group_start(fctx, "unallocated", "Unallocated");
	fmt_size(fctx, "bytes", "Writeable devices", s->unallocated);
	fmt_array_start(fctx, "devices", "Per device");
	for (i = 0; i < s->nr_devices; i++) {
		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", "devid", s->devices[i].devid);
		fmt_size(fctx, "unallocated", "unallocated", s->devices[i].unallocated);
		fmt_bool(fctx, "counted", "writeable", s->devices[i].counted);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	fmt_array_start(fctx, "chunks", "As new chunks");
	for (i = 0; i < (u32)s->nr_spaces; i++) {
		const struct summary_space *sp = &s->spaces[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_str(fctx, "type", "type", sp->name);
		fmt_str(fctx, "profile", "profile", btrfs_bg_profile_name(sp->profile));
		fmt_u64(fctx, "count", "chunks", sp->new_chunks);
		fmt_size(fctx, "chunk_size", "of up to", sp->chunk_size);
		fmt_size(fctx, "bytes", "bytes", sp->new_chunk_bytes);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	print_level(fctx, s->unallocated_level, s->unallocated_rule);
	fmt_group_end(fctx);
}

static void print_summary_preempt(struct fmt_ctx *fctx, const struct space_summary *s)
{
	fmt_group_start(fctx, "preempt", "Preemptive flushing");
	fmt_size(fctx, "bytes_may_use", "Metadata may_use", s->bytes_may_use);
	fmt_bool(fctx, "flushing", "Flushing now", s->flushing);
	if (s->can_flush) {
		fmt_size(fctx, "flush_from", "Flushes from may_use", s->flush_from);
		fmt_size(fctx, "headroom", "Headroom to flushing", s->flush_headroom);
	} else {
		fmt_str(fctx, "flush_from", "Flushes from may_use", NULL);
		fmt_str(fctx, "headroom", "Headroom to flushing", NULL);
	}
	print_level(fctx, s->preempt_level, s->preempt_rule);
	fmt_group_end(fctx);
}

/*
 * The summary at the top of inspect: one level per line and the rule that
 * gave it (formulas.md section 19), then the worst of them.
 */
void print_summary_section(struct fmt_ctx *fctx, const struct space_summary *s)
{
	int i;

	fmt_group_start(fctx, "summary", "Summary (levels: formulas.md section 19)");
	fmt_str(fctx, "level", "Overall", btrfs_summary_level_name(s->level));
	fmt_group_start(fctx, "space", "Really free, after the global reserve");
	for (i = 0; i < s->nr_spaces; i++)
		print_summary_space(fctx, &s->spaces[i]);
	fmt_group_end(fctx);
	print_summary_unallocated(fctx, s);
	fmt_group_start(fctx, "overcommit", "Metadata over-commit");
	fmt_size(fctx, "room", "Room, FLUSH_ALL", s->overcommit_room);
	print_level(fctx, s->overcommit_level, s->overcommit_rule);
	fmt_group_end(fctx);
	print_summary_preempt(fctx, s);
	fmt_group_start(fctx, "mount", "Mount time");
	fmt_bool(fctx, "available", NULL, s->mount_available);
	if (s->mount_available) {
		fmt_u64(fctx, "reads", "Reads", s->mount_reads);
		fmt_seconds(fctx, "hdd_seconds", "Seconds on HDD", s->mount_hdd_seconds);
		fmt_seconds(fctx, "ssd_seconds", "Seconds on SSD", s->mount_ssd_seconds);
	}
	print_level(fctx, s->mount_level, s->mount_rule);
	fmt_group_end(fctx);
	fmt_group_end(fctx);
}

/*
 * --format json and the filesystem refused: the error record as one
 * object, so that a pipeline reads where and which field without parsing
 * the ERROR line (which stays on stderr, the same words).  Only what the
 * check knew is there.
 */
void print_error_record(struct fmt_ctx *fctx, const struct btrfs_error *err)
{
	const struct btrfs_error_loc *loc = &err->loc;

	fmt_group_start(fctx, "error", "Error");
	fmt_u64(fctx, "errno", NULL, err->err < 0 ? -err->err : err->err);
	fmt_str(fctx, "message", NULL, err->msg);
	if (err->device[0])
		fmt_str(fctx, "device", NULL, err->device);
	if (loc->logical)
		fmt_u64(fctx, "logical", NULL, loc->logical);
	if (loc->physical)
		fmt_u64(fctx, "physical", NULL, loc->physical);
	if (loc->tree) {
		fmt_u64(fctx, "tree", NULL, loc->tree);
		fmt_str(fctx, "tree_name", NULL, btrfs_root_name(loc->tree));
	}
	if (loc->slot >= 0)
		fmt_u64(fctx, "slot", NULL, loc->slot);
	/* the kernel's mirror_num, as the message's "copy N" */
	if (loc->mirror >= 0)
		fmt_u64(fctx, "mirror", NULL, loc->mirror + 1);
	if (loc->has_key) {
		fmt_group_start(fctx, "key", NULL);
		fmt_u64(fctx, "objectid", NULL, loc->key.objectid);
		fmt_u64(fctx, "type", NULL, loc->key.type);
		fmt_u64(fctx, "offset", NULL, loc->key.offset);
		fmt_group_end(fctx);
	}
	if (loc->field)
		fmt_str(fctx, "field", NULL, loc->field);
	if (loc->has_found || loc->has_values)
		fmt_u64(fctx, "found", NULL, loc->found);
	if (loc->has_values)
		fmt_u64(fctx, "expected", NULL, loc->expected);
	fmt_group_end(fctx);
}
