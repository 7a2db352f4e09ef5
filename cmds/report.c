// SPDX-License-Identifier: GPL-2.0
/*
 * The one place where report figures become output.  JSON keys are the
 * sysfs file names where the kernel has one (Documentation/dev/json-format.md).
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds/report.h"
#include "common/checksum.h"
#include "common/runs.h"
#include "common/units.h"
#include "common/uuid-text.h"
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

	uuid_text(fs_info->fsid, fsid);
	uuid_text(fs_info->metadata_uuid, metadata_uuid);
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
	fmt_u64(fctx, "node_pushes", "Node pushes (insert searches)", l->node_pushes);
	fmt_u64(fctx, "node_splits", "Node splits", l->node_splits);
	fmt_u64(fctx, "node_balances", "Node balances (delete searches)", l->node_balances);
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

/*
 * A chunk's stripes, one per line in text under the chunk's line, their
 * text labels those of the caller's layout (a table's or a run's)
 */
static void print_stripes(struct fmt_ctx *fctx, const struct btrfs_chunk_map *map,
			  const char *devid_label, const char *offset_label)
{
	u16 s;

	fmt_array_start(fctx, "stripes", "stripes");
	for (s = 0; s < map->num_stripes; s++) {
		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", devid_label, map->stripes[s].devid);
		fmt_u64(fctx, "offset", offset_label, map->stripes[s].physical);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

static void print_chunk_keys(struct fmt_ctx *fctx, const struct btrfs_chunk_map *map)
{
	fmt_u64(fctx, "logical", "logical", map->start);
	fmt_size(fctx, "length", "length", map->length);
	fmt_str(fctx, "type", "type", btrfs_bg_type_name(map->type));
	fmt_str(fctx, "profile", "profile", btrfs_bg_profile_name(map->type));
	fmt_u64(fctx, "flags", NULL, map->type);
	fmt_size(fctx, "stripe_size", "stripe_size", map->stripe_size);
	print_stripes(fctx, map, "devid", "offset");
}

void print_chunk(struct fmt_ctx *fctx, const char *key, const char *label,
			const struct btrfs_chunk_map *map)
{
	fmt_group_start(fctx, key, label);
	print_chunk_keys(fctx, map);
	fmt_group_end(fctx);
}

/*
 * A run (formulas.md section 21.11): its first chunk's keys, how many
 * chunks, and for more than one the period that repeats, the steps and
 * the last chunk.
 */
void print_run(struct fmt_ctx *fctx, const struct btrfs_chunk_run *run)
{
	u64 count = btrfs_chunk_run_count(run);
	struct btrfs_chunk_map *last;
	char key[24], label[32];
	u32 i;

	fmt_group_start(fctx, NULL, NULL);
	print_chunk_keys(fctx, run->pattern[0]);
	if (count > 1 || fctx->mode == FMT_JSON)
		fmt_u64(fctx, "count", "count", count);
	if (count > 1) {
		fmt_u64(fctx, "period", "period", run->period);
		fmt_size(fctx, "logical_step", "logical_step", run->logical_step);
		fmt_group_start(fctx, "device_steps", "device_steps");
		for (i = 0; i < run->nr_steps; i++) {
			snprintf(key, sizeof(key), "%llu", (unsigned long long)run->steps[i].devid);
			snprintf(label, sizeof(label), "devid %llu",
				 (unsigned long long)run->steps[i].devid);
			fmt_size(fctx, key, label, run->steps[i].step);
		}
		fmt_group_end(fctx);
		/* the text has the first chunk already: a pattern of one is it */
		if (run->period > 1 || fctx->mode == FMT_JSON) {
			fmt_array_start(fctx, "pattern", "pattern");
			for (i = 0; i < run->period; i++)
				print_chunk(fctx, NULL, NULL, run->pattern[i]);
			fmt_array_end(fctx);
		}
		last = btrfs_chunk_run_chunk(run, count - 1);
		if (last)
			print_chunk(fctx, "last", "last", last);
		free(last);
	}
	fmt_group_end(fctx);
}

/* --list-chunks: every chunk of every run */
void print_run_chunks(struct fmt_ctx *fctx, const struct btrfs_chunk_run *run)
{
	u64 i, count = btrfs_chunk_run_count(run);

	for (i = 0; i < count; i++) {
		struct btrfs_chunk_map *map = btrfs_chunk_run_chunk(run, i);

		if (!map)
			return;
		print_chunk(fctx, NULL, NULL, map);
		free(map);
	}
}

/*
 * Text: a table, the type and profile spelled as btrfs-progs does; JSON:
 * the sysfs names ("DATA", "raid1").
 */
static void print_each_chunk(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info)
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
		print_stripes(fctx, map, "Devid", "Physical");
		fmt_group_end(fctx);
	}
	fmt_table_end(fctx);
}

static void print_each_block_group(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info)
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

/* The starts of a run's first period: a JSON array, text one field */
static void print_item_pattern(struct fmt_ctx *fctx, const void *items, size_t size,
			       size_t start_off, const struct item_run *run)
{
	char text[RUNS_MAX_PERIOD * 21 + 1] = "";
	size_t len = 0;
	u32 j;

	if (fctx->mode == FMT_JSON) {
		fmt_array_start(fctx, "pattern", NULL);
		for (j = 0; j < run->period; j++)
			fmt_u64(fctx, "start", NULL, item_run_start(items, size, start_off, run, j));
		fmt_array_end(fctx);
		return;
	}
	for (j = 0; j < run->period && len < sizeof(text); j++)
		len += snprintf(text + len, sizeof(text) - len, "%s%llu", j ? "," : "",
				(unsigned long long)item_run_start(items, size, start_off,
								   run, j));
	fmt_str(fctx, NULL, "pattern", text);
}

/*
 * Runs of a list of items with a logical start (the forecast's what-ifs):
 * the fields of each run's first item (@print_item), its count and, for
 * more than one, the period, the step, the pattern's starts and the last
 * start
 */
void print_item_runs(struct fmt_ctx *fctx, const char *key, const char *label,
		     const void *items, u32 nr, size_t size, size_t start_off,
		     item_same_fn same, print_item_fn print_item)
{
	const char *base = items;
	struct item_run *runs = NULL;
	char k[64], l[160];
	long nr_runs, i;
	u32 j;

	nr_runs = item_runs(items, nr, size, start_off, same, &runs);
	if (nr_runs < 0) {
		fmt_array_start(fctx, key, label);
		for (j = 0; j < nr; j++) {
			fmt_group_start(fctx, NULL, NULL);
			print_item(fctx, base + j * size);
			fmt_group_end(fctx);
		}
		fmt_array_end(fctx);
		return;
	}
	snprintf(k, sizeof(k), "%s_runs", key);
	if (nr)
		snprintf(l, sizeof(l), "%s (%u in %ld run%s)", label, nr, nr_runs,
			 nr_runs == 1 ? "" : "s");
	else
		snprintf(l, sizeof(l), "%s", label);
	fmt_array_start(fctx, k, l);
	for (i = 0; i < nr_runs; i++) {
		const struct item_run *run = &runs[i];

		fmt_group_start(fctx, NULL, NULL);
		print_item(fctx, base + run->first * size);
		fmt_u64(fctx, "count", "count", run->count);
		if (run->count > 1) {
			fmt_u64(fctx, "period", "period", run->period);
			fmt_size(fctx, "step", "step", run->step);
			if (run->period > 1 || fctx->mode == FMT_JSON)
				print_item_pattern(fctx, items, size, start_off, run);
			fmt_u64(fctx, "last", "last",
				item_run_start(items, size, start_off, run, run->count - 1));
		}
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	free(runs);
}

static void print_logical(struct fmt_ctx *fctx, const void *item)
{
	fmt_u64(fctx, "logical", "logical", *(const u64 *)item);
}

void print_u64_runs(struct fmt_ctx *fctx, const char *key, const char *label,
		    const u64 *v, u32 nr, bool each)
{
	u32 j;

	if (!each) {
		print_item_runs(fctx, key, label, v, nr, sizeof(*v), 0, NULL, print_logical);
		return;
	}
	fmt_array_start(fctx, key, label);
	for (j = 0; j < nr; j++)
		fmt_u64(fctx, "logical", "logical", v[j]);
	fmt_array_end(fctx);
}

static u64 run_step_of(const struct btrfs_chunk_run *run, u64 devid)
{
	u32 i;

	for (i = 0; i < run->nr_steps; i++)
		if (run->steps[i].devid == devid)
			return run->steps[i].step;
	return 0;
}

static void chunk_shape_cells(struct fmt_ctx *fctx, const struct btrfs_chunk_map *map)
{
	char name[48];

	fmt_size(fctx, NULL, "Length", map->length);
	fmt_str(fctx, NULL, "Type, profile", btrfs_bg_progs_name(map->type, name, sizeof(name)));
	fmt_u64(fctx, NULL, "Stripes", map->num_stripes);
	fmt_size(fctx, NULL, "Stripe size", map->stripe_size);
}

/*
 * Text: a run is the table's rows of its pattern, a line per stripe, the
 * first with its count and, for more than one chunk, its period, the
 * steps and the last chunk's logical start
 */
static void chunk_run_row(struct fmt_ctx *fctx, const struct btrfs_chunk_run *run)
{
	u32 j, nr = run->count > 1 ? run->period : 1;
	u64 last = run->pattern[(run->count - 1) % run->period]->start +
		   (run->count - 1) / run->period * run->logical_step;
	u16 s;

	fmt_group_start(fctx, NULL, NULL);
	fmt_u64(fctx, NULL, "Logical", run->pattern[0]->start);
	fmt_u64(fctx, NULL, "Count", run->count);
	chunk_shape_cells(fctx, run->pattern[0]);
	fmt_array_start(fctx, NULL, "stripes");
	for (j = 0; j < nr; j++) {
		const struct btrfs_chunk_map *map = run->pattern[j];

		for (s = 0; s < map->num_stripes; s++) {
			fmt_group_start(fctx, NULL, NULL);
			if (j && !s) {
				fmt_u64(fctx, NULL, "Logical", map->start);
				chunk_shape_cells(fctx, map);
			}
			fmt_u64(fctx, NULL, "Devid", map->stripes[s].devid);
			fmt_u64(fctx, NULL, "Physical", map->stripes[s].physical);
			if (run->count > 1)
				fmt_size(fctx, NULL, "Device step",
					 run_step_of(run, map->stripes[s].devid));
			fmt_group_end(fctx);
		}
	}
	fmt_array_end(fctx);
	if (run->count > 1) {
		fmt_u64(fctx, NULL, "Period", run->period);
		fmt_size(fctx, NULL, "Logical step", run->logical_step);
		fmt_u64(fctx, NULL, "Last", last);
	}
	fmt_group_end(fctx);
}

void print_run_row(struct fmt_ctx *fctx, const struct btrfs_chunk_run *run)
{
	if (fctx->mode == FMT_JSON)
		print_run(fctx, run);
	else
		chunk_run_row(fctx, run);
}

/* Per type and profile (flags), in the order first met */
struct list_total {
	u64 flags;
	u64 count;
	u64 length;
	u64 disk_bytes;			/* chunks: stripe_size per stripe */
	u64 used;			/* block groups */
	u64 state[3];			/* block groups of each bg_state */
};

#define LIST_MAX_TOTALS		64

static struct list_total *total_of(struct list_total *t, u32 *nr, u64 flags)
{
	u32 i;

	for (i = 0; i < *nr; i++)
		if (t[i].flags == flags)
			return &t[i];
	if (*nr == LIST_MAX_TOTALS)
		return NULL;
	memset(&t[*nr], 0, sizeof(t[0]));
	t[*nr].flags = flags;
	return &t[(*nr)++];
}

static void print_total_name(struct fmt_ctx *fctx, u64 flags)
{
	char name[48];

	fmt_u64(fctx, "flags", NULL, flags);
	fmt_str(fctx, "type_name", NULL, btrfs_bg_type_name(flags));
	fmt_str(fctx, "profile", NULL, btrfs_bg_profile_name(flags));
	fmt_str(fctx, NULL, "Type, profile", btrfs_bg_progs_name(flags, name, sizeof(name)));
}

static void print_chunk_totals(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info)
{
	struct list_total t[LIST_MAX_TOTALS], *tot;
	u32 nr = 0, i;

	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];

		tot = total_of(t, &nr, map->type);
		if (!tot)
			continue;
		tot->count++;
		tot->length += map->length;
		tot->disk_bytes += map->stripe_size * map->num_stripes;
	}
	fmt_table_start(fctx, "chunk_totals", "Per type");
	for (i = 0; i < nr; i++) {
		fmt_group_start(fctx, NULL, NULL);
		print_total_name(fctx, t[i].flags);
		fmt_u64(fctx, "count", "Chunks", t[i].count);
		fmt_size(fctx, "length", "Length", t[i].length);
		fmt_size(fctx, "disk_bytes", "On devices", t[i].disk_bytes);
		fmt_group_end(fctx);
	}
	fmt_table_end(fctx);
}

/*
 * chunks: runs of chunks of one shape (formulas.md section 21.11) and
 * the totals per type, or with --list-chunks every chunk.  Text: a
 * table, the type and profile spelled as btrfs-progs does; JSON: the
 * sysfs names ("DATA", "raid1").
 */
void print_chunk_list(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info, bool each)
{
	struct btrfs_chunk_run *runs = NULL;
	long nr_runs, i;

	nr_runs = each ? -1 : btrfs_chunk_runs_of(fs_info->chunks, fs_info->nr_chunks, &runs);
	if (nr_runs < 0) {
		print_each_chunk(fctx, fs_info);
		return;
	}
	fmt_table_start(fctx, "chunk_runs", "Chunks, as runs (--list-chunks: each)");
	for (i = 0; i < nr_runs; i++)
		print_run_row(fctx, &runs[i]);
	fmt_table_end(fctx);
	btrfs_chunk_runs_free(runs, nr_runs);
	print_chunk_totals(fctx, fs_info);
}

/* What a run of block groups keeps the same: their used bytes' kind */
enum bg_state { BG_EMPTY, BG_PARTLY_USED, BG_FULL };

static const char * const bg_state_names[] = { "empty", "partly used", "full" };

static enum bg_state bg_state_of(const struct btrfs_block_group *bg)
{
	if (!bg->used)
		return BG_EMPTY;
	return bg->used + bg->bytes_super >= bg->length ? BG_FULL : BG_PARTLY_USED;
}

static bool bg_same_shape(const struct btrfs_block_group *a, const struct btrfs_block_group *b)
{
	return a->flags == b->flags && a->length == b->length && a->ro == b->ro &&
	       a->bytes_super == b->bytes_super && bg_state_of(a) == bg_state_of(b) &&
	       (a->item_used == a->used) == (b->item_used == b->used);
}

struct bg_runs_ctx {
	const struct btrfs_block_group *bgs;
	u64 step;
};

static bool bg_runs_begin(void *ctx, u64 first, u32 p)
{
	struct bg_runs_ctx *c = ctx;
	const struct btrfs_block_group *a = &c->bgs[first], *b = &c->bgs[first + 1];

	c->step = b->start - a->start;
	return p == 1 && bg_same_shape(a, b);
}

static bool bg_runs_repeats(void *ctx, u64 first, u32 p, u64 k)
{
	struct bg_runs_ctx *c = ctx;

	return bg_same_shape(&c->bgs[k], &c->bgs[k - 1]) &&
	       c->bgs[k].start - c->bgs[k - 1].start == c->step;
}

static const struct runs_ops bg_runs_ops = {
	.begin = bg_runs_begin,
	.repeats = bg_runs_repeats,
};

/* A run of @count block groups from @first, their used bytes summed */
static void bg_run_row(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
		       u64 first, u64 count)
{
	const struct btrfs_block_group *bg = &fs_info->block_groups[first];
	const struct btrfs_block_group *last = &fs_info->block_groups[first + count - 1];
	u64 used = 0, item_used = 0, i;
	char name[48];

	for (i = first; i < first + count; i++) {
		used += fs_info->block_groups[i].used;
		item_used += fs_info->block_groups[i].item_used;
	}
	fmt_group_start(fctx, NULL, NULL);
	fmt_u64(fctx, "start", "Start", bg->start);
	fmt_u64(fctx, "count", "Count", count);
	fmt_size(fctx, "length", "Length", bg->length);
	fmt_size(fctx, "used", "Used", used);
	if (fctx->mode == FMT_JSON || bg->item_used != bg->used)
		fmt_size(fctx, "item_used", "Item used", item_used);
	fmt_u64(fctx, "flags", NULL, bg->flags);
	fmt_str(fctx, "type_name", NULL, btrfs_bg_type_name(bg->flags));
	fmt_str(fctx, "profile", NULL, btrfs_bg_profile_name(bg->flags));
	fmt_str(fctx, NULL, "Type, profile", btrfs_bg_progs_name(bg->flags, name, sizeof(name)));
	fmt_str(fctx, "state", "State", bg_state_names[bg_state_of(bg)]);
	if (count == 1 || fctx->mode == FMT_JSON)
		fmt_u64(fctx, count == 1 ? "leaf" : "first_leaf", "Leaf", bg->leaf);
	fmt_bool(fctx, "read_only", "RO", bg->ro);
	fmt_size(fctx, "bytes_super", "Super", bg->bytes_super);
	if (count > 1) {
		fmt_size(fctx, "step", "Step", last->start - bg->start ?
			 (last->start - bg->start) / (count - 1) : 0);
		fmt_u64(fctx, "last", "Last", last->start);
	}
	fmt_group_end(fctx);
}

static void print_block_group_totals(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info)
{
	struct list_total t[LIST_MAX_TOTALS], *tot;
	u32 nr = 0, i;

	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		tot = total_of(t, &nr, bg->flags);
		if (!tot)
			continue;
		tot->count++;
		tot->length += bg->length;
		tot->used += bg->used;
		tot->state[bg_state_of(bg)]++;
	}
	fmt_table_start(fctx, "block_group_totals", "Per type");
	for (i = 0; i < nr; i++) {
		fmt_group_start(fctx, NULL, NULL);
		print_total_name(fctx, t[i].flags);
		fmt_u64(fctx, "count", "Block groups", t[i].count);
		fmt_size(fctx, "length", "Length", t[i].length);
		fmt_size(fctx, "used", "Used", t[i].used);
		fmt_u64(fctx, "full", "Full", t[i].state[BG_FULL]);
		fmt_u64(fctx, "partly_used", "Partly used", t[i].state[BG_PARTLY_USED]);
		fmt_u64(fctx, "empty", "Empty", t[i].state[BG_EMPTY]);
		fmt_group_end(fctx);
	}
	fmt_table_end(fctx);
}

/*
 * block-groups: runs of block groups of one shape (type, profile,
 * length, state, read-only, superblock bytes) a fixed step apart, and the
 * totals per type, or with --list-block-groups every block group
 */
void print_block_group_list(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
			    bool each)
{
	struct bg_runs_ctx c = { fs_info->block_groups, 0 };
	const char *tree = fs_info->bg_from_bg_tree ? "block-group-tree" : "extent-tree";
	u64 i = 0, count;
	u32 p;

	if (each) {
		print_each_block_group(fctx, fs_info);
		return;
	}
	fmt_str(fctx, "tree", NULL, tree);
	fmt_table_start(fctx, "block_group_runs",
			"Block groups, as runs (--list-block-groups: each)");
	while (i < fs_info->nr_block_groups) {
		count = runs_next(&bg_runs_ops, &c, i, fs_info->nr_block_groups, 1, &p);
		bg_run_row(fctx, fs_info, i, count);
		i += count;
	}
	fmt_table_end(fctx);
	print_block_group_totals(fctx, fs_info);
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

/* JSON only (the text is the first screen): one space info's figures */
static void print_summary_space(struct fmt_ctx *fctx, const struct summary_space *s)
{
	fmt_group_start(fctx, s->name, NULL);
	fmt_str(fctx, "profile", NULL, btrfs_bg_profile_name(s->profile));
	fmt_u64(fctx, "total_bytes", NULL, s->total_bytes);
	fmt_u64(fctx, "held", NULL, s->held);
	fmt_u64(fctx, "free", NULL, s->free);
	fmt_u64(fctx, "chunk_size", NULL, s->chunk_size);
	fmt_u64(fctx, "new_chunks", NULL, s->new_chunks);
	fmt_u64(fctx, "new_chunk_bytes", NULL, s->new_chunk_bytes);
	fmt_str(fctx, "level", NULL, btrfs_summary_level_name(s->level));
	fmt_str(fctx, "rule", NULL, s->rule);
	if (s->headroom_present) {
		/* the forecast's fill: formulas.md section 21 */
		fmt_group_start(fctx, "headroom", NULL);
		fmt_u64(fctx, "bytes", NULL, s->headroom);
		fmt_u64(fctx, "in_block_groups", NULL, s->headroom_existing);
		fmt_u64(fctx, "in_new_chunks", NULL, s->headroom_new);
		if (s->flags_metadata) {
			fmt_u64(fctx, "global_rsv_held", NULL, s->headroom_rsv);
			fmt_u64(fctx, "reservation", NULL, s->reservation);
		}
		fmt_u64(fctx, "capacity", NULL, s->capacity);
		fmt_u64(fctx, "size_share", NULL, s->size_share);
		fmt_u64(fctx, "critical_below", NULL, s->critical_bound);
		fmt_u64(fctx, "tight_below", NULL, s->tight_bound);
		fmt_str(fctx, "level", NULL, btrfs_summary_level_name(s->headroom_level));
		fmt_str(fctx, "rule", NULL, s->headroom_rule);
		fmt_group_end(fctx);
	}
	fmt_group_end(fctx);
}

static void print_summary_unallocated(struct fmt_ctx *fctx, const struct space_summary *s)
{
	u32 i;

	fmt_group_start(fctx, "unallocated", NULL);
	fmt_u64(fctx, "bytes", NULL, s->unallocated);
	fmt_array_start(fctx, "devices", NULL);
	for (i = 0; i < s->nr_devices; i++) {
		const struct summary_dead *d = &s->dead[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", NULL, s->devices[i].devid);
		fmt_u64(fctx, "unallocated", NULL, s->devices[i].unallocated);
		fmt_bool(fctx, "counted", NULL, s->devices[i].counted);
		fmt_u64(fctx, "dead_hard", NULL, d->hard);
		fmt_u64(fctx, "dead_soft_data", NULL, d->soft_data);
		fmt_u64(fctx, "dead_soft_metadata", NULL, d->soft_metadata);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	fmt_array_start(fctx, "chunks", NULL);
	for (i = 0; i < (u32)s->nr_spaces; i++) {
		const struct summary_space *sp = &s->spaces[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_str(fctx, "type", NULL, sp->name);
		fmt_str(fctx, "profile", NULL, btrfs_bg_profile_name(sp->profile));
		fmt_u64(fctx, "count", NULL, sp->new_chunks);
		fmt_u64(fctx, "chunk_size", NULL, sp->chunk_size);
		fmt_u64(fctx, "bytes", NULL, sp->new_chunk_bytes);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	fmt_group_end(fctx);
}

static void print_summary_preempt(struct fmt_ctx *fctx, const struct space_summary *s)
{
	fmt_group_start(fctx, "overcommit", NULL);
	fmt_u64(fctx, "room", NULL, s->overcommit_room);
	fmt_group_end(fctx);
	fmt_group_start(fctx, "preempt", NULL);
	fmt_u64(fctx, "bytes_may_use", NULL, s->bytes_may_use);
	fmt_bool(fctx, "flushing", NULL, s->flushing);
	if (s->can_flush) {
		fmt_u64(fctx, "flush_from", NULL, s->flush_from);
		fmt_u64(fctx, "headroom", NULL, s->flush_headroom);
	} else {
		fmt_str(fctx, "flush_from", NULL, NULL);
		fmt_str(fctx, "headroom", NULL, NULL);
	}
	fmt_group_end(fctx);
}

static void print_summary_mount(struct fmt_ctx *fctx, const struct space_summary *s)
{
	fmt_group_start(fctx, "mount", NULL);
	fmt_bool(fctx, "available", NULL, s->mount_available);
	if (s->mount_available) {
		fmt_u64(fctx, "reads", NULL, s->mount_reads);
		fmt_seconds(fctx, "hdd_seconds", NULL, s->mount_hdd_seconds);
		fmt_seconds(fctx, "ssd_seconds", NULL, s->mount_ssd_seconds);
	}
	fmt_str(fctx, "level", NULL, btrfs_summary_level_name(s->mount_level));
	fmt_str(fctx, "rule", NULL, s->mount_rule);
	fmt_group_end(fctx);
}

static const char *size_str(const struct fmt_ctx *fctx, u64 v, char *buf, size_t len)
{
	return pretty_size_mode(v, fctx->units, buf, len);
}

/* Text: a line of the first screen, and how many lines it took */
static int screen_put(struct fmt_ctx *fctx, const char *line)
{
	fmt_text_line(fctx, line);
	return fmt_text_lines(line);
}

/* The other of data and metadata, for "(data still has ...)" */
static const struct summary_space *other_space(const struct space_summary *sum,
					       const struct summary_space *s)
{
	int i;

	for (i = 0; i < sum->nr_spaces; i++) {
		const struct summary_space *o = &sum->spaces[i];

		if (o != s && o->headroom_present)
			return o;
	}
	return NULL;
}

/* What the finding means: the words of the first screen */
static void finding_text(const struct fmt_ctx *fctx, const struct space_summary *sum,
			 const struct summary_finding *f, char *out, size_t len)
{
	const char *lvl = btrfs_summary_level_name(f->level);
	const struct summary_space *s, *o;
	char a[32], b[32], c[32];
	size_t n;

	if (f->kind == SUMMARY_FIND_MOUNT) {
		snprintf(out, len, "%s: mount: %.1f s on HDD (%llu reads), %s", lvl,
			 sum->mount_hdd_seconds, (unsigned long long)sum->mount_reads,
			 f->level == SUMMARY_CRITICAL ?
			 "over systemd's 90 s mount timeout: the boot gives up on it" :
			 "over 10 s");
		return;
	}
	s = &sum->spaces[f->space];
	if (!s->headroom_present) {
		snprintf(out, len, "%s: %s: %s free: %s", lvl, s->name,
			 size_str(fctx, s->free, a, sizeof(a)), s->rule);
		return;
	}
	n = snprintf(out, len, "%s: %s: %s %s", lvl, s->name,
		     size_str(fctx, s->headroom, a, sizeof(a)),
		     s->flags_metadata ? "really free" : "left before ENOSPC");
	if (!s->new_chunks)
		n += snprintf(out + n, len - n, ", no new %s %s chunk fits",
			      btrfs_bg_profile_name(s->profile), s->name);
	else
		n += snprintf(out + n, len - n, ", %s of it in new chunks of up to %s",
			      size_str(fctx, s->headroom_new, b, sizeof(b)),
			      size_str(fctx, s->chunk_size, c, sizeof(c)));
	if (f->level == SUMMARY_CRITICAL && n < len)
		n += snprintf(out + n, len - n, ": %s%s fails with ENOSPC",
			      s->headroom ? "then " : "",
			      s->flags_metadata ? "creating files" : "writing data");
	else if (n < len)
		n += snprintf(out + n, len - n, ": tight below %s",
			      size_str(fctx, s->tight_bound, b, sizeof(b)));
	o = other_space(sum, s);
	if (o && n < len)
		snprintf(out + n, len - n, " (%s still has %s)", o->name,
			 size_str(fctx, o->headroom, a, sizeof(a)));
}

static int print_findings_text(struct fmt_ctx *fctx, const struct space_summary *sum)
{
	int used = 0, shared;
	char line[512], a[32];
	size_t n;
	int i;

	for (i = 0; i < sum->nr_findings; i++) {
		finding_text(fctx, sum, &sum->findings[i], line, sizeof(line));
		used += screen_put(fctx, line);
	}
	if (sum->nr_findings)
		return used;
	n = snprintf(line, sizeof(line), "ok:");
	for (i = 0; i < sum->nr_spaces && n < sizeof(line); i++) {
		const struct summary_space *s = &sum->spaces[i];

		if (s->headroom_present)
			n += snprintf(line + n, sizeof(line) - n, "%s %s can grow by %s",
				      n > 3 ? "," : "", s->name,
				      size_str(fctx, s->headroom, a, sizeof(a)));
	}
	if (n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - n, " before ENOSPC");
	/* each figure is the type alone: their new chunks take the same room */
	for (i = 0, shared = 0; i < sum->nr_spaces; i++)
		shared += sum->spaces[i].headroom_present && sum->spaces[i].headroom_new;
	if (shared > 1 && n < sizeof(line))
		snprintf(line + n, sizeof(line) - n,
			 " (each alone: their new chunks share the unallocated space)");
	used += screen_put(fctx, line);
	return used;
}

/* One line per type: what can be written, and where it goes */
static int print_types_text(struct fmt_ctx *fctx, const struct space_summary *sum)
{
	int used = 0;
	char line[160], a[32], b[32], c[32], d[32];
	int i;

	used += screen_put(fctx, "Before ENOSPC      can write  in block groups  in new chunks  global rsv");
	for (i = 0; i < sum->nr_spaces; i++) {
		const struct summary_space *s = &sum->spaces[i];

		if (s->headroom_present)
			snprintf(line, sizeof(line), "    %-10s %12s %15s %14s %11s  %s", s->name,
				 size_str(fctx, s->headroom, a, sizeof(a)),
				 size_str(fctx, s->headroom_existing, b, sizeof(b)),
				 size_str(fctx, s->headroom_new, c, sizeof(c)),
				 s->flags_metadata ? size_str(fctx, s->headroom_rsv, d, sizeof(d)) : "-",
				 btrfs_summary_level_name(s->level));
		else
			snprintf(line, sizeof(line), "    %-10s %12s free, %llu new chunk%s fit%s  %s",
				 s->name, size_str(fctx, s->free, a, sizeof(a)),
				 (unsigned long long)s->new_chunks,
				 s->new_chunks == 1 ? "" : "s", s->new_chunks == 1 ? "s" : "",
				 btrfs_summary_level_name(s->level));
		used += screen_put(fctx, line);
	}
	return used;
}

/* One part of a dead-space line: " SIZE what", comma-separated after the first */
static void append_dead_part(char *line, size_t size, const char *amount, const char *what)
{
	size_t n = strlen(line);

	snprintf(line + n, size - n, "%s %s %s", line[n - 1] == ':' ? "" : ",", amount, what);
}

/* Dead space per device: at most 3 lines, then a sum of the rest */
#define SUMMARY_DEAD_LINES	3

static int print_dead_text(struct fmt_ctx *fctx, const struct space_summary *sum)
{
	int used = 0;
	char line[256], a[32], b[32], c[32];
	u64 rest = 0;
	u32 i, shown = 0, more = 0;

	for (i = 0; i < sum->nr_devices; i++) {
		const struct summary_dead *d = &sum->dead[i];
		u64 soft = d->soft_data + d->soft_metadata;
		u64 hard = d->hard > SUMMARY_DEVICE_RESERVED ? d->hard - SUMMARY_DEVICE_RESERVED : 0;

		if (!hard && !soft)
			continue;
		if (shown == SUMMARY_DEAD_LINES) {
			rest += hard + soft;
			more++;
			continue;
		}
		shown++;
		if (!sum->devices[i].counted) {
			snprintf(line, sizeof(line), "Dead space, devid %llu: %s (read-only or missing: no chunk is made on it)",
				 (unsigned long long)d->devid, size_str(fctx, hard + soft, a, sizeof(a)));
			used += screen_put(fctx, line);
			continue;
		}
		/* a part that is 0 is left out: "0.00B hard (no chunk ... fits)" reads as a finding */
		snprintf(line, sizeof(line), "Dead space, devid %llu:", (unsigned long long)d->devid);
		if (hard)
			append_dead_part(line, sizeof(line), size_str(fctx, hard, a, sizeof(a)),
					 "hard (no chunk of the profiles in use fits: too few other devices with room)");
		if (d->soft_data)
			append_dead_part(line, sizeof(line), size_str(fctx, d->soft_data, b, sizeof(b)),
					 "only metadata's profile can use");
		if (d->soft_metadata)
			append_dead_part(line, sizeof(line), size_str(fctx, d->soft_metadata, c, sizeof(c)),
					 "only data's profile can use");
		used += screen_put(fctx, line);
	}
	if (more) {
		snprintf(line, sizeof(line), "Dead space on %u more devices: %s", more,
			 size_str(fctx, rest, a, sizeof(a)));
		used += screen_put(fctx, line);
	}
	if (!shown)
		used += screen_put(fctx, "Dead space: none (besides the first MiB of each device, which no chunk uses)");
	return used;
}

static int print_mount_text(struct fmt_ctx *fctx, const struct space_summary *sum)
{
	int used = 0;
	char line[160];

	if (!sum->mount_available) {
		used += screen_put(fctx, "Mount time: estimate not available");
		return used;
	}
	snprintf(line, sizeof(line), "Mount time: %llu reads, %.2f s on HDD, %.3f s on SSD  %s",
		 (unsigned long long)sum->mount_reads, sum->mount_hdd_seconds,
		 sum->mount_ssd_seconds, btrfs_summary_level_name(sum->mount_level));
	used += screen_put(fctx, line);
	return used;
}

/*
 * Deleted subvolumes not yet dropped: the figures above still hold their
 * extents, so an administrator who just deleted snapshots is told the
 * space comes back without deleting more
 */
static int print_deleted_text(struct fmt_ctx *fctx, const struct space_summary *sum)
{
	char line[256];

	if (!sum->deleted_subvolumes_known || !sum->deleted_subvolumes)
		return 0;
	snprintf(line, sizeof(line),
		 "Deleted subvolumes: %llu not yet dropped by the cleaner; the space only they hold is still counted above and comes back as it drops them (btrfs subvolume sync MNT waits)",
		 (unsigned long long)sum->deleted_subvolumes);
	return screen_put(fctx, line);
}

/* A qgroup id as btrfs qgroup show writes it, "LEVEL/ID" */
static const char *qgroup_text(u64 qgroupid, char *buf, size_t len)
{
	snprintf(buf, len, "%llu/%llu", (unsigned long long)(qgroupid >> BTRFS_QGROUP_LEVEL_SHIFT),
		 (unsigned long long)(qgroupid & ((1ULL << BTRFS_QGROUP_LEVEL_SHIFT) - 1)));
	return buf;
}

/*
 * Quota limits: a limited qgroup fails writes it counts with EDQUOT before
 * the headroom above is used up, so the figures alone would mislead the
 * administrator of a limited subvolume; the tightest limit is named
 */
static int print_quota_text(struct fmt_ctx *fctx, const struct space_summary *sum)
{
	const struct btrfs_qgroup_tightest *t = &sum->quota.tightest;
	char line[400], a[32], b[32], c[32], id[48];
	int used = 0;

	/* what the kernel would log about the quota tree at mount, or why it is not read */
	if (sum->quota.note[0]) {
		snprintf(line, sizeof(line), "Quotas %s: %s",
			 !sum->quota_known ? "not read" :
			 sum->quota.disabled ? "off at mount" : "noted", sum->quota.note);
		used = screen_put(fctx, line);
	}
	if (!sum->quota_known || !sum->quota.limited)
		return used;
	snprintf(line, sizeof(line),
		 "Quotas: %llu qgroup%s limited; the tightest, %s, has %s left of its %s %s limit (%s counted%s): writes it counts fail with EDQUOT (Disk quota exceeded) before the space above runs out",
		 (unsigned long long)sum->quota.limited, sum->quota.limited == 1 ? "" : "s",
		 qgroup_text(t->qgroupid, id, sizeof(id)),
		 size_str(fctx, t->left, a, sizeof(a)), size_str(fctx, t->limit, b, sizeof(b)),
		 t->exclusive ? "exclusive" : "referenced", size_str(fctx, t->counted, c, sizeof(c)),
		 sum->quota.inconsistent ? ", inconsistent: a rescan is due" : "");
	return used + screen_put(fctx, line);
}

static void print_quota_json(struct fmt_ctx *fctx, const struct space_summary *sum)
{
	const struct btrfs_qgroup_tightest *t = &sum->quota.tightest;

	if (!sum->quota_known) {
		fmt_str(fctx, "quota", NULL, NULL);
		return;
	}
	fmt_group_start(fctx, "quota", NULL);
	fmt_bool(fctx, "enabled", NULL, sum->quota.enabled);
	fmt_bool(fctx, "inconsistent", NULL, sum->quota.inconsistent);
	fmt_bool(fctx, "simple", NULL, sum->quota.simple);
	fmt_u64(fctx, "qgroups", NULL, sum->quota.qgroups);
	fmt_u64(fctx, "limited", NULL, sum->quota.limited);
	fmt_str(fctx, "note", NULL, sum->quota.note[0] ? sum->quota.note : NULL);
	if (t->found) {
		char id[48];

		fmt_group_start(fctx, "tightest", NULL);
		fmt_str(fctx, "qgroup", NULL, qgroup_text(t->qgroupid, id, sizeof(id)));
		fmt_str(fctx, "limit_kind", NULL, t->exclusive ? "exclusive" : "referenced");
		fmt_u64(fctx, "limit", NULL, t->limit);
		fmt_u64(fctx, "counted", NULL, t->counted);
		fmt_u64(fctx, "left", NULL, t->left);
		fmt_group_end(fctx);
	} else {
		fmt_str(fctx, "tightest", NULL, NULL);
	}
	fmt_group_end(fctx);
}

/* "DEV1 DEV2 ...": the devices of a device add (a profile's devs_min: at most 4) */
static const char *device_list(u32 count)
{
	static const char *const lists[] = { "DEV", "DEV", "DEV1 DEV2", "DEV1 DEV2 DEV3",
					     "DEV1 DEV2 DEV3 DEV4" };

	return count < ARRAY_SIZE(lists) ? lists[count] : "DEV1 ... DEVN";
}

/*
 * A balance filter as typed: "-dARGS" or "-mARGS"; on mixed block groups
 * "-dARGS -mARGS", since btrfs_balance() refuses (EINVAL, "mixed groups
 * data and metadata options must be the same") a balance of one alone
 */
static void balance_filter(const struct summary_remedy *r, char c, const char *args,
			   char *out, size_t len)
{
	if (r->mixed_filters)
		snprintf(out, len, "-d%s -m%s", args, args);
	else
		snprintf(out, len, "-%c%s", c, args);
}

/* The command of a remedy, as an administrator types it */
static void remedy_command(const struct summary_remedy *r, char *out, size_t len)
{
	char args[64], filter[136];

	if (r->kind == SUMMARY_REMEDY_BALANCE) {
		if (r->usage_min)
			snprintf(args, sizeof(args), "usage=%u..%llu", r->usage_min,
				 (unsigned long long)r->usage);
		else
			snprintf(args, sizeof(args), "usage=%llu", (unsigned long long)r->usage);
		balance_filter(r, r->type == BTRFS_BLOCK_GROUP_METADATA ? 'm' : 'd', args,
			       filter, sizeof(filter));
		snprintf(out, len, "btrfs balance start %s MNT", filter);
	} else if (r->kind == SUMMARY_REMEDY_DEVICE_ADD && r->add_count > 1)
		snprintf(out, len, "btrfs device add %s MNT", device_list(r->add_count));
	else if (r->kind == SUMMARY_REMEDY_DEVICE_ADD)
		snprintf(out, len, "btrfs device add DEV MNT");
	else if (r->kind == SUMMARY_REMEDY_DELETE_DATA)
		snprintf(out, len, "delete the data in block group %llu",
			 (unsigned long long)r->bg_start);
	else if (r->kind == SUMMARY_REMEDY_CONVERT) {
		int n = snprintf(args, sizeof(args), "convert=%s%s",
				 btrfs_bg_profile_name(r->to_profile), r->soft ? ",soft" : "");

		if (r->usage && n > 0 && (size_t)n < sizeof(args))
			snprintf(args + n, sizeof(args) - n, ",usage=%llu",
				 (unsigned long long)r->usage);
		balance_filter(r, r->type == BTRFS_BLOCK_GROUP_DATA ? 'd' : 'm', args,
			       filter, sizeof(filter));
		snprintf(out, len, "btrfs balance start %s%s MNT", r->force ? "-f " : "", filter);
	} else if (r->kind == SUMMARY_REMEDY_RESIZE)
		snprintf(out, len, "btrfs filesystem resize %llu:max MNT",
			 (unsigned long long)r->devid);
	else if (r->kind == SUMMARY_REMEDY_REPLACE)
		snprintf(out, len, "btrfs replace start %llu DEV MNT; btrfs filesystem resize %llu:max MNT",
			 (unsigned long long)r->devid, (unsigned long long)r->devid);
	else if (r->kind == SUMMARY_REMEDY_NODISCARD)
		snprintf(out, len, "umount MNT; mount -o nodiscard DEV MNT");
	else
		snprintf(out, len, "btrfstune --convert-to-block-group-tree DEV");
}

static const char *remedy_model(const struct summary_remedy *r)
{
	switch (r->kind) {
	case SUMMARY_REMEDY_BALANCE:
		return "balance what-if (forecast.c, formulas.md 21.8)";
	case SUMMARY_REMEDY_CONVERT:
		return "balance what-if (relocation.c, formulas.md 21.8), then the allocator from the devices it leaves (volumes.c, formulas.md 19.6)";
	case SUMMARY_REMEDY_DEVICE_ADD:
		return "allocator with the device added (volumes.c, formulas.md 19.6)";
	case SUMMARY_REMEDY_DELETE_DATA:
		return "allocator without the block group (volumes.c, btrfs_delete_unused_bgs(), formulas.md 19.6)";
	case SUMMARY_REMEDY_RESIZE:
		return "allocator with the device grown (volumes.c, btrfs_grow_device(), formulas.md 19.6)";
	case SUMMARY_REMEDY_REPLACE:
		return "allocator with the device replaced and grown (volumes.c, btrfs_dev_replace_start(), btrfs_grow_device(), formulas.md 19.6)";
	case SUMMARY_REMEDY_NODISCARD:
		return "fills after a nodiscard mount, its cleaner's deletions (discard.c, btrfs_delete_unused_bgs(), formulas.md 21.4)";
	default:
		return "block-group-tree what-if (mount-cost.c, formulas.md 11)";
	}
}

static const char *remedy_finding(const struct space_summary *sum,
				  const struct summary_remedy *r)
{
	const struct summary_finding *f;

	if (r->finding == SUMMARY_FINDING_DEAD)
		return "dead space";
	if (r->finding == SUMMARY_FINDING_SLACK)
		return "unused device space";
	if (r->finding == SUMMARY_FINDING_MIXED)
		return "mixed profiles";
	if (r->finding < 0)
		return "metadata profile";
	f = &sum->findings[r->finding];
	return f->kind == SUMMARY_FIND_MOUNT ? "mount" : sum->spaces[f->space].name;
}

/* Text: the model in two words (the JSON names it whole) */
static const char *remedy_tag(const struct summary_remedy *r)
{
	switch (r->kind) {
	case SUMMARY_REMEDY_BALANCE:
	case SUMMARY_REMEDY_CONVERT:
		return "balance what-if";
	case SUMMARY_REMEDY_DEVICE_ADD:
	case SUMMARY_REMEDY_DELETE_DATA:
	case SUMMARY_REMEDY_RESIZE:
	case SUMMARY_REMEDY_REPLACE:
		return "allocator what-if";
	case SUMMARY_REMEDY_NODISCARD:
		return "forecast with nodiscard";
	default:
		return "mount what-if";
	}
}

static bool remedy_advised(const struct summary_remedy *r)
{
	/* a conversion is kept only where it completes and helps */
	return r->kind == SUMMARY_REMEDY_BG_TREE || r->kind == SUMMARY_REMEDY_CONVERT ||
	       r->enough;
}

/* Dead bytes as the dead-space line shows them: without the first MiB */
static u64 dead_shown(u64 dead)
{
	return dead > SUMMARY_DEVICE_RESERVED ? dead - SUMMARY_DEVICE_RESERVED : 0;
}

/* A profile conversion: what it does to the type, and to dead space */
static void convert_text(const struct fmt_ctx *fctx, const struct space_summary *sum,
			 const struct summary_remedy *r, const char *cmd, char *line, size_t len)
{
	const char *type = r->type == BTRFS_BLOCK_GROUP_DATA ? "data" : "metadata";
	u32 from = btrfs_raid_array[btrfs_bg_flags_to_raid_index(r->from_profile)].ncopies;
	u32 to = btrfs_raid_array[btrfs_bg_flags_to_raid_index(r->to_profile)].ncopies;
	char a[32], b[32], c[32], d[32];
	size_t n;

	if (r->finding == SUMMARY_FINDING_DEAD)
		n = snprintf(line, len, "Remedy for dead space on devid %llu: %s: %s can write %s (now %s), %s left dead",
			     (unsigned long long)r->dead_devid, cmd, type,
			     size_str(fctx, r->writable_after, c, sizeof(c)),
			     size_str(fctx, r->writable_before, d, sizeof(d)),
			     size_str(fctx, dead_shown(r->dead_after), a, sizeof(a)));
	else if (r->finding == SUMMARY_FINDING_MIXED && r->usage)
		n = snprintf(line, len, "Advice for %s: %u block group%s (%s used) %s %s (%u cop%s) beside %s (%u), which new chunks get (a conversion not finished); converting all %s: %s converts the %u used below %llu%% (%s), %s can write %s (now %s)",
			     type, r->other_groups, r->other_groups == 1 ? "" : "s",
			     size_str(fctx, r->other_used, c, sizeof(c)),
			     r->other_groups == 1 ? "is" : "are", btrfs_bg_profile_name(r->from_profile),
			     from, from == 1 ? "y" : "ies", btrfs_bg_profile_name(r->to_profile), to,
			     r->whole_completes ? "leaves it critical" : "ends in ENOSPC",
			     cmd, r->nr_selected, (unsigned long long)r->usage,
			     size_str(fctx, r->moved_bytes, d, sizeof(d)), type,
			     size_str(fctx, r->writable_after, a, sizeof(a)),
			     size_str(fctx, r->writable_before, b, sizeof(b)));
	else if (r->finding == SUMMARY_FINDING_MIXED)
		n = snprintf(line, len, "Advice for %s: %u block group%s (%s used) %s %s (%u cop%s) beside %s (%u), which new chunks get (a conversion not finished): %s converts them, %s can write %s (now %s)",
			     type, r->nr_selected, r->nr_selected == 1 ? "" : "s",
			     size_str(fctx, r->moved_bytes, c, sizeof(c)),
			     r->nr_selected == 1 ? "is" : "are", btrfs_bg_profile_name(r->from_profile),
			     from, from == 1 ? "y" : "ies", btrfs_bg_profile_name(r->to_profile), to,
			     cmd, type,
			     size_str(fctx, r->writable_after, a, sizeof(a)),
			     size_str(fctx, r->writable_before, b, sizeof(b)));
	else if (r->finding < 0)
		n = snprintf(line, len, "Advice for metadata: DUP on %u devices keeps both copies on one; %s puts them on two, metadata can write %s (now %s)",
			     sum->nr_devices, cmd,
			     size_str(fctx, r->writable_after, a, sizeof(a)),
			     size_str(fctx, r->writable_before, b, sizeof(b)));
	else
		n = snprintf(line, len, "Remedy for %s: %s: %s can write %s (now %s)",
			     remedy_finding(sum, r), cmd, type,
			     size_str(fctx, r->writable_after, a, sizeof(a)),
			     size_str(fctx, r->writable_before, b, sizeof(b)));
	if (n < len && to < from)
		n += snprintf(line + n, len - n, ", %u cop%s of %s instead of %u", to,
			      to == 1 ? "y" : "ies", type, from);
	if (n < len && r->force)
		n += snprintf(line + n, len - n, " (-f: the kernel refuses less redundancy without it)");
	else if (n < len && (r->to_profile & BTRFS_BLOCK_GROUP_DUP) && sum->nr_devices > 1)
		n += snprintf(line + n, len - n, ", both copies on one device");
	else if (n < len && (r->to_profile & BTRFS_BLOCK_GROUP_RAID56_MASK))
		n += snprintf(line + n, len - n, ", %s: as many devices may fail (btrfs warns of RAID5/6's known problems)",
			      btrfs_bg_profile_name(r->to_profile));
	if (n < len)
		snprintf(line + n, len - n, " (%s)", remedy_tag(r));
}

/* The profile of the type a remedy's finding is about */
static const char *remedy_profile(const struct space_summary *sum,
				  const struct summary_remedy *r)
{
	return btrfs_bg_profile_name(sum->spaces[sum->findings[r->finding].space].profile);
}

/* A device add, for a type's finding or for dead space */
static void device_add_text(const struct fmt_ctx *fctx, const struct space_summary *sum,
			    const struct summary_remedy *r, char *line, size_t len)
{
	char a[32], b[32], c[32], d[32], e[32];

	size_str(fctx, r->add_size, a, sizeof(a));
	if (r->finding < 0)
		snprintf(line, len,
			 "Remedy for dead space on devid %llu: btrfs device add DEV MNT, DEV of %s: data can write %s (now %s), %s left dead (%s)",
			 (unsigned long long)r->dead_devid, a,
			 size_str(fctx, r->writable_after, d, sizeof(d)),
			 size_str(fctx, r->writable_before, e, sizeof(e)),
			 size_str(fctx, dead_shown(r->dead_after), b, sizeof(b)), remedy_tag(r));
	else if (r->enough && r->add_count > 1)
		snprintf(line, len,
			 "Remedy for %s: btrfs device add %s MNT, %u devices of %s: %u new %s chunk%s, %s more; one device of any size falls short (%s: room on %u devices) (%s)",
			 remedy_finding(sum, r), device_list(r->add_count), r->add_count, a, r->new_chunks,
			 remedy_finding(sum, r), r->new_chunks == 1 ? "" : "s",
			 size_str(fctx, r->new_bytes, b, sizeof(b)), remedy_profile(sum, r),
			 r->add_count, remedy_tag(r));
	else if (r->enough)
		snprintf(line, len,
			 "Remedy for %s: btrfs device add DEV MNT, a device of %s: %u new %s chunk%s, %s more (%s)",
			 remedy_finding(sum, r), a, r->new_chunks, remedy_finding(sum, r),
			 r->new_chunks == 1 ? "" : "s",
			 size_str(fctx, r->new_bytes, b, sizeof(b)), remedy_tag(r));
	else
		snprintf(line, len,
			 "No device add helps %s: with %u device%s of %s, %u new chunk%s, %s of the %s needed (%s)",
			 remedy_finding(sum, r), r->add_count, r->add_count == 1 ? "" : "s", a,
			 r->new_chunks, r->new_chunks == 1 ? "" : "s",
			 size_str(fctx, r->new_bytes, b, sizeof(b)),
			 size_str(fctx, r->room_needed, c, sizeof(c)), remedy_tag(r));
}

/* A device grown to its size (resize), or replaced by a larger one and grown */
static void device_size_text(const struct fmt_ctx *fctx, const struct space_summary *sum,
			     const struct summary_remedy *r, const char *cmd, char *line, size_t len)
{
	const char *type = r->type == BTRFS_BLOCK_GROUP_METADATA ? "metadata" : "data";
	char a[32], b[32], c[32], e[32];

	size_str(fctx, r->writable_after, a, sizeof(a));
	size_str(fctx, r->writable_before, b, sizeof(b));
	if (r->kind == SUMMARY_REMEDY_REPLACE)
		snprintf(line, len,
			 "Remedy for dead space on devid %llu: %s, DEV of %s: data can write %s (now %s), %s left dead (%s)",
			 (unsigned long long)r->dead_devid, cmd, size_str(fctx, r->new_size, c, sizeof(c)),
			 a, b, size_str(fctx, dead_shown(r->dead_after), e, sizeof(e)), remedy_tag(r));
	else if (r->finding == SUMMARY_FINDING_DEAD)
		snprintf(line, len, "Remedy for dead space on devid %llu: %s: devid %llu grows by %s to its device's size, data can write %s (now %s), %s left dead (%s)",
			 (unsigned long long)r->dead_devid, cmd, (unsigned long long)r->devid,
			 size_str(fctx, r->new_size - r->old_size, c, sizeof(c)), a, b,
			 size_str(fctx, dead_shown(r->dead_after), e, sizeof(e)), remedy_tag(r));
	else
		snprintf(line, len, "Remedy for %s: %s: devid %llu grows by %s to its device's size, %s can write %s (now %s) (%s)",
			 remedy_finding(sum, r), cmd, (unsigned long long)r->devid,
			 size_str(fctx, r->new_size - r->old_size, c, sizeof(c)), type, a, b,
			 remedy_tag(r));
}

/*
 * "; 20.00MiB of it is shared by sv and snap: ...": an extent is freed only
 * when no subvolume refers to it, and a read-only snapshot never lets go
 */
static void shared_text(struct fmt_ctx *fctx, const struct btrfs_bg_owners *o, char *out,
			size_t len)
{
	size_t n = 0;
	char sz[32];
	u32 i;

	n += snprintf(out + n, len - n, "; %s of it is shared by ",
		      size_str(fctx, o->shared_bytes, sz, sizeof(sz)));
	for (i = 0; i < o->nr_shared_subvols && n < len; i++) {
		const char *sep = !i ? "" : i + 1 < o->nr_shared_subvols ||
				  o->more_shared_subvols || o->shared_leaf ? ", " : " and ";

		if (o->shared_subvols[i] == BTRFS_FS_TREE_OBJECTID)
			n += snprintf(out + n, len - n, "%sthe top level", sep);
		else if (o->shared_paths[i][0])
			n += snprintf(out + n, len - n, "%s%s", sep, o->shared_paths[i]);
		else
			n += snprintf(out + n, len - n, "%ssubvolume %llu", sep,
				      (unsigned long long)o->shared_subvols[i]);
	}
	if (n < len && o->more_shared_subvols)
		n += snprintf(out + n, len - n, "%sothers", i ? " and " : "");
	if (n < len && o->shared_leaf)
		n += snprintf(out + n, len - n, "%ssnapshots", i ? " and " : "");
	if (n < len)
		snprintf(out + n, len - n,
			 ": it is freed only when gone from all of them, so deleting the files frees none of it while a snapshot holding it exists; delete that snapshot too");
}

/*
 * "; its files, from the top level: @home/a (30.00MiB on disk), @/b (2.00MiB
 * on disk) and 4 more" or "": the extents' bytes, a compressed file's smaller
 * than its size
 */
static void owners_text(struct fmt_ctx *fctx, const struct btrfs_bg_owners *o, char *out,
			size_t len)
{
	size_t n = 0;
	char sz[32];
	u32 i;

	out[0] = '\0';
	if (o && !o->read && o->error[0])
		snprintf(out, len, "; its files not read: %s", o->error);
	if (!o || !o->read || !o->nr_files)
		return;
	n += snprintf(out + n, len - n, "; its file%s, from the top level: ",
		      o->nr_files == 1 ? "" : "s");
	for (i = 0; i < o->nr_top && n < len; i++) {
		const struct btrfs_data_owner *f = &o->top[i];

		size_str(fctx, f->bytes, sz, sizeof(sz));
		if (f->path[0])
			n += snprintf(out + n, len - n, "%s%s (%s on disk)", i ? ", " : "", f->path,
				      sz);
		else
			n += snprintf(out + n, len - n, "%sinode %llu of subvolume %llu (%s on disk)",
				      i ? ", " : "", (unsigned long long)f->ino,
				      (unsigned long long)f->root, sz);
	}
	if (n < len && o->nr_files > o->nr_top)
		n += snprintf(out + n, len - n, " and %llu more",
			      (unsigned long long)(o->nr_files - o->nr_top));
	if (n < len && o->shared_bytes)
		shared_text(fctx, o, out + n, len - n);
}

static void delete_data_text(struct fmt_ctx *fctx, const struct space_summary *sum,
			     const struct summary_remedy *r, char *line, size_t len)
{
	char files[1024], a[32], b[32];

	owners_text(fctx, r->owners, files, sizeof(files));
	snprintf(line, len,
		 "%s %s: delete %s of data in block group %llu (the least used%s): the cleaner removes it, %u new %s chunk%s, %s more (%s)",
		 r->enough ? "Remedy for" : "Not enough for", remedy_finding(sum, r),
		 size_str(fctx, r->moved_bytes, a, sizeof(a)), (unsigned long long)r->bg_start,
		 files, r->new_chunks, remedy_finding(sum, r), r->new_chunks == 1 ? "" : "s",
		 size_str(fctx, r->new_bytes, b, sizeof(b)), remedy_tag(r));
}

/* Text: the remedies that fit in @budget lines, then how many did not */
static void print_remedies_text(struct fmt_ctx *fctx, const struct space_summary *sum,
				int budget)
{
	char line[1536], cmd[192], a[32], b[32], c[32], d[32];
	int i, left = 0;

	for (i = 0; i < sum->nr_remedies; i++) {
		const struct summary_remedy *r = &sum->remedies[i];

		remedy_command(r, cmd, sizeof(cmd));
		if (r->kind == SUMMARY_REMEDY_DEVICE_ADD)
			device_add_text(fctx, sum, r, line, sizeof(line));
		else if (r->kind == SUMMARY_REMEDY_RESIZE || r->kind == SUMMARY_REMEDY_REPLACE)
			device_size_text(fctx, sum, r, cmd, line, sizeof(line));
		else if (r->kind == SUMMARY_REMEDY_CONVERT)
			convert_text(fctx, sum, r, cmd, line, sizeof(line));
		else if (r->kind == SUMMARY_REMEDY_DELETE_DATA)
			delete_data_text(fctx, sum, r, line, sizeof(line));
		else if (r->kind == SUMMARY_REMEDY_NODISCARD)
			snprintf(line, sizeof(line),
				 "Remedy for %s: %s (a fresh mount; a remount does not do it): discard=async keeps the empty block groups it finds at mount, without it the cleaner deletes %u (%s): %s can write %s (now %s) (%s)",
				 remedy_finding(sum, r), cmd, r->nr_selected,
				 size_str(fctx, r->moved_bytes, a, sizeof(a)), remedy_finding(sum, r),
				 size_str(fctx, r->writable_after, b, sizeof(b)),
				 size_str(fctx, r->writable_before, c, sizeof(c)), remedy_tag(r));
		else if (r->kind == SUMMARY_REMEDY_BG_TREE)
			snprintf(line, sizeof(line),
				 "Remedy for mount: %s (unmounted): %llu reads instead of %llu, %.1f s on HDD (%s)",
				 cmd, (unsigned long long)r->reads_after,
				 (unsigned long long)r->reads_now, r->hdd_seconds_after,
				 remedy_tag(r));
		else if (r->enough)
			snprintf(line, sizeof(line),
				 "Remedy for %s: %s: relocates %u block group%s (%s used), gives back %s unallocated: %s can write %s (now %s) (%s)",
				 remedy_finding(sum, r), cmd, r->nr_selected, r->nr_selected == 1 ? "" : "s",
				 size_str(fctx, r->moved_bytes, a, sizeof(a)),
				 size_str(fctx, r->room_gained, b, sizeof(b)), remedy_finding(sum, r),
				 size_str(fctx, r->writable_after, c, sizeof(c)),
				 size_str(fctx, r->writable_before, d, sizeof(d)), remedy_tag(r));
		else if (!r->nr_selected)
			snprintf(line, sizeof(line),
				 "No balance helps %s: every data block group is full (%s selects none) (%s)",
				 remedy_finding(sum, r), cmd, remedy_tag(r));
		else if (!r->can_start)
			snprintf(line, sizeof(line),
				 "No balance helps %s: %s cannot start, no chunk can be made for the data it moves (%s)",
				 remedy_finding(sum, r), cmd, remedy_tag(r));
		else if (!r->completes)
			snprintf(line, sizeof(line),
				 "No balance helps %s: %s ends with ENOSPC, %u block group%s not relocated, %s given back (%s)",
				 remedy_finding(sum, r), cmd, r->nr_failed, r->nr_failed == 1 ? "" : "s",
				 size_str(fctx, r->room_gained, a, sizeof(a)), remedy_tag(r));
		else if (r->room_gained >= r->room_needed)
			snprintf(line, sizeof(line),
				 "No balance helps %s: %s gives back %s unallocated, but %s can still write only %s: that is its own free space, moved out of its block groups (%s)",
				 remedy_finding(sum, r), cmd,
				 size_str(fctx, r->room_gained, a, sizeof(a)), remedy_finding(sum, r),
				 size_str(fctx, r->writable_after, b, sizeof(b)), remedy_tag(r));
		else
			snprintf(line, sizeof(line),
				 "No balance helps %s: %s gives back %s of the %s one chunk needs (%s)",
				 remedy_finding(sum, r), cmd,
				 size_str(fctx, r->room_gained, a, sizeof(a)),
				 size_str(fctx, r->room_needed, b, sizeof(b)), remedy_tag(r));
		/* one line kept for "N more" when others follow */
		if (fmt_text_lines(line) > budget - (i + 1 < sum->nr_remedies)) {
			left = sum->nr_remedies - i;
			break;
		}
		budget -= fmt_text_lines(line);
		fmt_text_line(fctx, line);
	}
	if (left) {
		snprintf(line, sizeof(line), "(%d more %s: inspect --format json, summary.remedies)",
			 left, left == 1 ? "remedy" : "remedies");
		fmt_text_line(fctx, line);
	}
}

/*
 * JSON: a remedy's effect, one row a key, in the order printed; a row
 * names the remedy kinds it prints for, and DEAD rows print only for a
 * dead-space remedy, LIVE rows only for the others.
 */
enum effect_value {
	EFFECT_U64,
	EFFECT_U32,
	EFFECT_BOOL,
	EFFECT_SECONDS,
	EFFECT_TYPE,		/* a u64 block group type: "data" or "metadata" */
	EFFECT_PROFILE,		/* a u64 profile flag: its name */
	EFFECT_UNALLOCATED,	/* the per-device array */
	EFFECT_UNALLOCATED_BOUND, /* the same with may_differ per device */
};

enum effect_when { EFFECT_ALWAYS, EFFECT_DEAD, EFFECT_LIVE };

struct effect_field {
	const char *key;
	enum effect_value value;
	size_t offset;
	unsigned int kinds;	/* 1 << enum summary_remedy_kind */
	enum effect_when when;
};

#define BALANCE		(1U << SUMMARY_REMEDY_BALANCE)
#define BG_TREE		(1U << SUMMARY_REMEDY_BG_TREE)
#define DEVICE_ADD	(1U << SUMMARY_REMEDY_DEVICE_ADD)
#define DELETE_DATA	(1U << SUMMARY_REMEDY_DELETE_DATA)
#define CONVERT		(1U << SUMMARY_REMEDY_CONVERT)
/* a resize or a replace: one device's size changes */
#define DEVICE		(1U << SUMMARY_REMEDY_RESIZE | 1U << SUMMARY_REMEDY_REPLACE)
#define NODISCARD	(1U << SUMMARY_REMEDY_NODISCARD)
#define EFFECT(key, value, member, kinds, when) \
	{ key, EFFECT_##value, offsetof(struct summary_remedy, member), kinds, EFFECT_##when }

static const struct effect_field remedy_effects[] = {
	EFFECT("type", TYPE, type, CONVERT | DEVICE, ALWAYS),
	EFFECT("from_profile", PROFILE, from_profile, CONVERT, ALWAYS),
	EFFECT("to_profile", PROFILE, to_profile, CONVERT, ALWAYS),
	EFFECT("force", BOOL, force, CONVERT, ALWAYS),
	EFFECT("usage", U64, usage, BALANCE, ALWAYS),
	EFFECT("block_group", U64, bg_start, DELETE_DATA, ALWAYS),
	EFFECT("delete_bytes", U64, moved_bytes, DELETE_DATA, ALWAYS),
	EFFECT("device_size", U64, add_size, DEVICE_ADD, ALWAYS),
	EFFECT("device_count", U32, add_count, DEVICE_ADD, ALWAYS),
	EFFECT("device", U64, devid, DEVICE, ALWAYS),
	EFFECT("size_before", U64, old_size, DEVICE, ALWAYS),
	EFFECT("size_after", U64, new_size, DEVICE, ALWAYS),
	EFFECT("block_groups", U32, nr_selected, BALANCE | CONVERT | NODISCARD, ALWAYS),
	EFFECT("empty_bytes", U64, moved_bytes, NODISCARD, ALWAYS),
	EFFECT("moved_bytes", U64, moved_bytes, BALANCE | CONVERT, ALWAYS),
	EFFECT("can_start", BOOL, can_start, BALANCE | CONVERT, ALWAYS),
	EFFECT("completes", BOOL, completes, BALANCE | CONVERT, ALWAYS),
	EFFECT("writable_before", U64, writable_before, BALANCE | CONVERT | NODISCARD, ALWAYS),
	EFFECT("writable_after", U64, writable_after, BALANCE | CONVERT | NODISCARD, ALWAYS),
	EFFECT("new_chunks", U32, new_chunks, CONVERT | DELETE_DATA | DEVICE_ADD | DEVICE, ALWAYS),
	EFFECT("new_chunk_bytes", U64, new_bytes, CONVERT | DELETE_DATA | DEVICE_ADD | DEVICE, ALWAYS),
	EFFECT("writable_before", U64, writable_before, DEVICE, ALWAYS),
	EFFECT("writable_after", U64, writable_after, DEVICE, ALWAYS),
	EFFECT("devid", U64, dead_devid, CONVERT | DEVICE_ADD | DEVICE, DEAD),
	EFFECT("dead_before", U64, dead_before, CONVERT | DEVICE_ADD | DEVICE, DEAD),
	EFFECT("dead_after", U64, dead_after, CONVERT | DEVICE_ADD | DEVICE, DEAD),
	EFFECT("writable_before", U64, writable_before, DEVICE_ADD, DEAD),
	EFFECT("writable_after", U64, writable_after, DEVICE_ADD, DEAD),
	EFFECT("exact", BOOL, exact, CONVERT, ALWAYS),
	EFFECT("room_needed", U64, room_needed, BALANCE | DELETE_DATA, ALWAYS),
	EFFECT("room_needed", U64, room_needed, DEVICE_ADD, LIVE),
	EFFECT("room_gained", U64, room_gained, BALANCE, ALWAYS),
	EFFECT("unallocated_after", UNALLOCATED, unallocated_after, BALANCE, ALWAYS),
	EFFECT("unallocated_after", UNALLOCATED_BOUND, unallocated_after, CONVERT, ALWAYS),
	EFFECT("reads_now", U64, reads_now, BG_TREE, ALWAYS),
	EFFECT("reads_after", U64, reads_after, BG_TREE, ALWAYS),
	EFFECT("hdd_seconds_after", SECONDS, hdd_seconds_after, BG_TREE, ALWAYS),
};

#undef BALANCE
#undef BG_TREE
#undef DEVICE_ADD
#undef DELETE_DATA
#undef CONVERT
#undef DEVICE
#undef NODISCARD
#undef EFFECT

/* @may_differ: NULL, or per device how far the bytes may be off */
static void unallocated_after_json(struct fmt_ctx *fctx, const struct space_summary *sum,
				   const char *key, const u64 *after, const u64 *may_differ)
{
	u32 d;

	fmt_array_start(fctx, key, NULL);
	for (d = 0; d < sum->nr_devices; d++) {
		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", NULL, sum->devices[d].devid);
		fmt_u64(fctx, "bytes", NULL, after[d]);
		if (may_differ)
			fmt_u64(fctx, "may_differ", NULL, may_differ[d]);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

static void effect_field_json(struct fmt_ctx *fctx, const struct space_summary *sum,
			      const struct summary_remedy *r, const struct effect_field *f)
{
	const void *v = (const char *)r + f->offset;

	switch (f->value) {
	case EFFECT_U64:
		fmt_u64(fctx, f->key, NULL, *(const u64 *)v);
		break;
	case EFFECT_U32:
		fmt_u64(fctx, f->key, NULL, *(const u32 *)v);
		break;
	case EFFECT_BOOL:
		fmt_bool(fctx, f->key, NULL, *(const bool *)v);
		break;
	case EFFECT_SECONDS:
		fmt_seconds(fctx, f->key, NULL, *(const double *)v);
		break;
	case EFFECT_TYPE:
		fmt_str(fctx, f->key, NULL, *(const u64 *)v == BTRFS_BLOCK_GROUP_DATA ?
			"data" : "metadata");
		break;
	case EFFECT_PROFILE:
		fmt_str(fctx, f->key, NULL, btrfs_bg_profile_name(*(const u64 *)v));
		break;
	case EFFECT_UNALLOCATED:
		unallocated_after_json(fctx, sum, f->key, *(u64 *const *)v, NULL);
		break;
	case EFFECT_UNALLOCATED_BOUND:
		unallocated_after_json(fctx, sum, f->key, *(u64 *const *)v, r->may_differ);
		break;
	}
}

/* The delete remedy's files: null when the extent tree was not read, and why */
static void owners_json(struct fmt_ctx *fctx, const struct btrfs_bg_owners *o)
{
	u32 i;

	if (!o || !o->read) {
		fmt_str(fctx, "files", NULL, NULL);
		if (o && o->error[0])
			fmt_str(fctx, "files_error", NULL, o->error);
		return;
	}
	fmt_group_start(fctx, "files", NULL);
	fmt_u64(fctx, "count", NULL, o->nr_files);
	fmt_u64(fctx, "shared_bytes", NULL, o->shared_bytes);
	fmt_array_start(fctx, "largest", NULL);
	for (i = 0; i < o->nr_top; i++) {
		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "subvolume", NULL, o->top[i].root);
		fmt_u64(fctx, "inode", NULL, o->top[i].ino);
		fmt_u64(fctx, "bytes", NULL, o->top[i].bytes);
		if (o->top[i].path[0])
			fmt_str(fctx, "path", NULL, o->top[i].path);
		else
			fmt_str(fctx, "path", NULL, NULL);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	fmt_group_end(fctx);
}

static void print_remedies_json(struct fmt_ctx *fctx, const struct space_summary *sum)
{
	const struct effect_field *effects_end = remedy_effects +
		sizeof(remedy_effects) / sizeof(remedy_effects[0]);
	const struct effect_field *f;
	char cmd[192];
	int i;

	fmt_array_start(fctx, "remedies", NULL);
	for (i = 0; i < sum->nr_remedies; i++) {
		const struct summary_remedy *r = &sum->remedies[i];
		bool dead = r->finding == SUMMARY_FINDING_DEAD;

		remedy_command(r, cmd, sizeof(cmd));
		fmt_group_start(fctx, NULL, NULL);
		fmt_str(fctx, "finding", NULL, remedy_finding(sum, r));
		fmt_str(fctx, "command", NULL, cmd);
		fmt_bool(fctx, "advised", NULL, remedy_advised(r));
		fmt_str(fctx, "model", NULL, remedy_model(r));
		fmt_group_start(fctx, "effect", NULL);
		for (f = remedy_effects; f < effects_end; f++)
			if ((f->kinds & (1U << r->kind)) &&
			    (f->when == EFFECT_ALWAYS || (f->when == EFFECT_DEAD) == dead))
				effect_field_json(fctx, sum, r, f);
		if (r->kind == SUMMARY_REMEDY_DELETE_DATA)
			owners_json(fctx, r->owners);
		/* ,soft: the groups of other profiles only (formulas.md 19.6) */
		if (r->kind == SUMMARY_REMEDY_CONVERT && r->soft)
			fmt_bool(fctx, "soft", NULL, true);
		/* ,usage=N: the whole conversion did not fit (formulas.md 19.6) */
		if (r->kind == SUMMARY_REMEDY_CONVERT && r->usage) {
			fmt_u64(fctx, "usage", NULL, r->usage);
			fmt_bool(fctx, "whole_completes", NULL, r->whole_completes);
		}
		/* -musage=M..N, the system groups spared (formulas.md 19.6) */
		if (r->kind == SUMMARY_REMEDY_BALANCE && r->usage_min)
			fmt_u64(fctx, "usage_min", NULL, r->usage_min);
		fmt_group_end(fctx);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

static void print_findings_json(struct fmt_ctx *fctx, const struct space_summary *sum)
{
	int i;

	fmt_array_start(fctx, "findings", NULL);
	for (i = 0; i < sum->nr_findings; i++) {
		const struct summary_finding *f = &sum->findings[i];
		bool mount = f->kind == SUMMARY_FIND_MOUNT;

		fmt_group_start(fctx, NULL, NULL);
		fmt_str(fctx, "level", NULL, btrfs_summary_level_name(f->level));
		fmt_str(fctx, "what", NULL, mount ? "mount" : sum->spaces[f->space].name);
		fmt_str(fctx, "rule", NULL, mount ? sum->mount_rule : sum->spaces[f->space].rule);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

/*
 * The summary at the top of inspect (formulas.md section 19).  Text: the
 * first screen, at most 20 lines of 80 columns: the findings worst first,
 * one line per type, dead space, mount time, the remedies.  JSON: the
 * figures behind it.
 */
#define SUMMARY_SCREEN_LINES	20

void print_summary_section(struct fmt_ctx *fctx, const struct space_summary *s)
{
	int i;

	int used;

	used = print_findings_text(fctx, s);
	used += print_types_text(fctx, s);
	used += print_dead_text(fctx, s);
	used += print_mount_text(fctx, s);
	used += print_deleted_text(fctx, s);
	used += print_quota_text(fctx, s);
	/* the last line is the pointer to the rules */
	print_remedies_text(fctx, s, SUMMARY_SCREEN_LINES - 1 - used);
	fmt_text_line(fctx, "(levels and rules: formulas.md section 19; the sections below)");
	fmt_text_line(fctx, "");
	if (fctx->mode != FMT_JSON)
		return;
	fmt_group_start(fctx, "summary", NULL);
	fmt_str(fctx, "level", NULL, btrfs_summary_level_name(s->level));
	print_findings_json(fctx, s);
	fmt_group_start(fctx, "space", NULL);
	for (i = 0; i < s->nr_spaces; i++)
		print_summary_space(fctx, &s->spaces[i]);
	fmt_group_end(fctx);
	print_summary_unallocated(fctx, s);
	print_summary_preempt(fctx, s);
	print_summary_mount(fctx, s);
	if (s->deleted_subvolumes_known)
		fmt_u64(fctx, "deleted_subvolumes", NULL, s->deleted_subvolumes);
	else
		fmt_str(fctx, "deleted_subvolumes", NULL, NULL);
	print_quota_json(fctx, s);
	print_remedies_json(fctx, s);
	fmt_group_end(fctx);
}

/* The tightest quota limit's bytes left, when a qgroup is limited (19.9) */
static void print_quota_metric(struct fmt_ctx *fctx, const struct space_summary *s,
			       const char *fsid)
{
	const struct btrfs_qgroup_tightest *t = &s->quota.tightest;
	char labels[200], id[48];

	if (!s->quota_known || !t->found)
		return;
	fmt_metric_family(fctx, "btrfs_space_quota_left_bytes", "gauge", "bytes",
			  "Bytes the tightest limited qgroup can still count before EDQUOT");
	snprintf(labels, sizeof(labels), "fsid=\"%s\",qgroup=\"%s\",limit=\"%s\"", fsid,
		 qgroup_text(t->qgroupid, id, sizeof(id)), t->exclusive ? "exclusive" : "referenced");
	fmt_metric(fctx, "btrfs_space_quota_left_bytes", labels, t->left);
}

/*
 * --format openmetrics: the summary as gauges for node_exporter's textfile
 * collector (Documentation/dev/json-format.md, "OpenMetrics").
 */
void print_summary_metrics(struct fmt_ctx *fctx, const struct space_summary *s,
			   const struct space_report *r)
{
	char fsid[37], labels[160];
	int i;
	u32 d;

	if (fctx->mode != FMT_OPENMETRICS)
		return;
	uuid_text(r->fs_info->fsid, fsid);
	fmt_metric_family(fctx, "btrfs_space_headroom_bytes", "gauge", "bytes",
			  "Bytes a type can still be written before ENOSPC (forecast fill)");
	for (i = 0; i < s->nr_spaces; i++) {
		if (!s->spaces[i].headroom_present)
			continue;
		snprintf(labels, sizeof(labels), "fsid=\"%s\",type=\"%s\"", fsid, s->spaces[i].name);
		fmt_metric(fctx, "btrfs_space_headroom_bytes", labels, s->spaces[i].headroom);
	}
	fmt_metric_family(fctx, "btrfs_space_headroom_new_chunks_bytes", "gauge", "bytes",
			  "Of the headroom: bytes in chunks not made yet");
	for (i = 0; i < s->nr_spaces; i++) {
		if (!s->spaces[i].headroom_present)
			continue;
		snprintf(labels, sizeof(labels), "fsid=\"%s\",type=\"%s\"", fsid, s->spaces[i].name);
		fmt_metric(fctx, "btrfs_space_headroom_new_chunks_bytes", labels, s->spaces[i].headroom_new);
	}
	fmt_metric_family(fctx, "btrfs_space_level", "gauge", NULL,
			  "Level of a type or the mount time: 0 ok, 1 tight, 2 critical (formulas.md 19)");
	for (i = 0; i < s->nr_spaces; i++) {
		snprintf(labels, sizeof(labels), "fsid=\"%s\",what=\"%s\"", fsid, s->spaces[i].name);
		fmt_metric(fctx, "btrfs_space_level", labels, s->spaces[i].level);
	}
	snprintf(labels, sizeof(labels), "fsid=\"%s\",what=\"mount\"", fsid);
	fmt_metric(fctx, "btrfs_space_level", labels, s->mount_level);
	snprintf(labels, sizeof(labels), "fsid=\"%s\",what=\"overall\"", fsid);
	fmt_metric(fctx, "btrfs_space_level", labels, s->level);
	fmt_metric_family(fctx, "btrfs_space_device_unallocated_bytes", "gauge", "bytes",
			  "Device bytes in no chunk");
	for (d = 0; d < s->nr_devices; d++) {
		snprintf(labels, sizeof(labels), "fsid=\"%s\",devid=\"%llu\"", fsid,
			 (unsigned long long)s->devices[d].devid);
		fmt_metric(fctx, "btrfs_space_device_unallocated_bytes", labels, s->devices[d].unallocated);
	}
	fmt_metric_family(fctx, "btrfs_space_device_dead_bytes", "gauge", "bytes",
			  "Unallocated device bytes no chunk can use (hard), or only the other type's profile (soft_data, soft_metadata)");
	for (d = 0; d < s->nr_devices; d++) {
		const struct summary_dead *dd = &s->dead[d];
		const char *kinds[] = { "hard", "soft_data", "soft_metadata" };
		u64 vals[] = { dd->hard, dd->soft_data, dd->soft_metadata };

		for (i = 0; i < 3; i++) {
			snprintf(labels, sizeof(labels), "fsid=\"%s\",devid=\"%llu\",kind=\"%s\"", fsid,
				 (unsigned long long)dd->devid, kinds[i]);
			fmt_metric(fctx, "btrfs_space_device_dead_bytes", labels, vals[i]);
		}
	}
	print_quota_metric(fctx, s, fsid);
	if (!s->mount_available)
		return;
	fmt_metric_family(fctx, "btrfs_space_mount_reads", "gauge", NULL,
			  "Tree-block reads of a mount (mount-estimate)");
	snprintf(labels, sizeof(labels), "fsid=\"%s\"", fsid);
	fmt_metric(fctx, "btrfs_space_mount_reads", labels, s->mount_reads);
	fmt_metric_family(fctx, "btrfs_space_mount_seconds", "gauge", "seconds",
			  "Estimated mount time at the hdd and ssd latency profiles");
	snprintf(labels, sizeof(labels), "fsid=\"%s\",profile=\"hdd\"", fsid);
	fmt_metric(fctx, "btrfs_space_mount_seconds", labels, s->mount_hdd_seconds);
	snprintf(labels, sizeof(labels), "fsid=\"%s\",profile=\"ssd\"", fsid);
	fmt_metric(fctx, "btrfs_space_mount_seconds", labels, s->mount_ssd_seconds);
}

/*
 * --format nagios: "BTRFS-SPACE STATUS - the first finding | perfdata";
 * each headroom with its tight and critical limits as "N:" ranges (an
 * alert below N), in bytes.
 */
void print_summary_nagios(struct fmt_ctx *fctx, const struct space_summary *s)
{
	static const char * const status[] = { "OK", "WARNING", "CRITICAL" };
	char line[1024], text[512];
	size_t n;
	int i;

	if (fctx->mode != FMT_NAGIOS)
		return;
	if (s->nr_findings)
		finding_text(fctx, s, &s->findings[0], text, sizeof(text));
	else
		snprintf(text, sizeof(text), "no type is tight, mount time ok");
	fmt_plugin_text(text);
	n = snprintf(line, sizeof(line), "BTRFS-SPACE %s - %s |", status[s->level], text);
	for (i = 0; i < s->nr_spaces && n < sizeof(line); i++) {
		const struct summary_space *sp = &s->spaces[i];
		u64 crit = sp->critical_bound, tight = sp->tight_bound;

		if (!sp->headroom_present)
			continue;
		n += snprintf(line + n, sizeof(line) - n, " %s_headroom=%lluB;%llu:;%llu:;0;%llu",
			      sp->name, (unsigned long long)sp->headroom, (unsigned long long)tight,
			      (unsigned long long)crit, (unsigned long long)sp->capacity);
	}
	if (s->mount_available && n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, " mount_hdd=%.3fs;%.0f;%.0f;0;", s->mount_hdd_seconds,
			 SUMMARY_MOUNT_TIGHT_SECONDS, SUMMARY_MOUNT_CRITICAL_SECONDS);
	fmt_nagios(fctx, line);
}

/* A CI gate (--fail-on, --fail-below): its limit, the figure, the result */
void print_gate(struct fmt_ctx *fctx, const char *option, const char *what,
		const char *limit, const char *figure, bool failed)
{
	fmt_group_start(fctx, NULL, NULL);
	fmt_str(fctx, "option", NULL, option);
	fmt_str(fctx, "what", NULL, what);
	fmt_str(fctx, "limit", NULL, limit);
	fmt_str(fctx, "figure", NULL, figure);
	fmt_str(fctx, "result", NULL, failed ? "fail" : "pass");
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
