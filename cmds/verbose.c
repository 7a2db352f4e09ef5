// SPDX-License-Identifier: GPL-2.0
/*
 * What -v says at the end of a run, on stderr: the devices read, the trees
 * found, the reads and bytes the counting I/O layer saw (by purpose) and
 * the wall time.  Every figure is a count the run kept; nothing is
 * estimated here.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cmds/commands.h"
#include "common/units.h"
#include "kernel-shared/disk-io.h"

static struct timespec run_start;
static enum cmd_reads run_reads = CMD_READS_MOUNT;

void cmd_verbose_reads(enum cmd_reads reads)
{
	run_reads = reads;
}

/* What each level of enum cmd_reads reads, and what for */
static const char * const reads_said[] = {
	[CMD_READS_SUPER] = "the superblock only (sizes, checksum type, feature flags): no tree, no mount check",
	[CMD_READS_CHUNKS] = "superblock and chunk tree (the chunk map, the devices): no root tree, no mount check",
	[CMD_READS_ROOTS] = "superblock, chunk tree and the root tree's root items: no block groups, no mount check",
	[CMD_READS_MOUNT] = "what a mount reads (superblock, chunk tree, root items, dev extents, block-group search, root nodes, root directory, log), to check the kernel would mount it",
	[CMD_READS_BLOCK_GROUPS] = "what a mount reads, with the block groups loaded and the log replay accounted",
};

void cmd_verbose_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &run_start);
}

static double seconds_since_start(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - run_start.tv_sec) + (now.tv_nsec - run_start.tv_nsec) / 1e9;
}

static void verbose_devices(const struct btrfs_fs_info *fs_info)
{
	u32 i, present = 0;

	for (i = 0; i < fs_info->nr_devices; i++)
		present += fs_info->devices[i].present;
	pr_verbose(LOG_VERBOSE, "read: %u of %u devices\n", present, fs_info->nr_devices);
	for (i = 0; i < fs_info->nr_devices; i++) {
		const struct btrfs_device *dev = &fs_info->devices[i];
		char size[UNITS_BUF_LEN];

		/* the size is the chunk tree's DEV_ITEM's */
		if (run_reads == CMD_READS_SUPER) {
			pr_verbose(LOG_VERBOSE, "read:     devid %llu %s\n",
				   (unsigned long long)dev->devid,
				   dev->present ? dev->io.path : "missing");
			continue;
		}
		pr_verbose(LOG_VERBOSE, "read:     devid %llu %s (%s)\n",
			   (unsigned long long)dev->devid,
			   dev->present ? dev->io.path : "missing",
			   pretty_size_mode(dev->total_bytes, UNITS_DEFAULT, size, sizeof(size)));
	}
}

static void verbose_trees(const struct btrfs_fs_info *fs_info)
{
	const struct {
		const char *name;
		const struct btrfs_root_ref *ref;
	} trees[] = {
		{ "extent", &fs_info->extent_root },
		{ "csum", &fs_info->csum_root },
		{ "free-space", &fs_info->free_space_root },
		{ "block-group", &fs_info->block_group_root },
		{ "raid-stripe", &fs_info->stripe_root },
		{ "dev", &fs_info->dev_root },
	};
	char list[256] = "chunk, root";
	size_t n = strlen(list), i;

	if (run_reads == CMD_READS_SUPER) {
		pr_verbose(LOG_VERBOSE, "read: no tree; %u chunks in the superblock's system array\n",
			   fs_info->nr_chunks);
		return;
	}
	if (run_reads == CMD_READS_CHUNKS) {
		pr_verbose(LOG_VERBOSE, "read: trees chunk; %u chunks (block groups not loaded)\n",
			   fs_info->nr_chunks);
		return;
	}
	for (i = 0; i < sizeof(trees) / sizeof(trees[0]) && n < sizeof(list); i++)
		if (trees[i].ref->found)
			n += snprintf(list + n, sizeof(list) - n, ", %s", trees[i].name);
	if (fs_info->nr_block_groups || !fs_info->nr_chunks)
		pr_verbose(LOG_VERBOSE, "read: trees %s; %u chunks, %u block groups\n", list,
			   fs_info->nr_chunks, fs_info->nr_block_groups);
	else
		pr_verbose(LOG_VERBOSE, "read: trees %s; %u chunks (block groups not loaded)\n",
			   list, fs_info->nr_chunks);
}

static void verbose_io(const struct btrfs_fs_info *fs_info)
{
	static const char * const purpose_names[] = {
		[BTRFS_IO_SUPERBLOCK] = "superblock",
		[BTRFS_IO_CHUNK_TREE] = "chunk tree",
		[BTRFS_IO_ROOT_TREE] = "root tree",
		[BTRFS_IO_BG_SEARCH] = "block-group search",
		[BTRFS_IO_DEV_TREE] = "dev tree",
		[BTRFS_IO_OTHER] = "other trees",
		[BTRFS_IO_BACKREF] = "shared leaves",
	};
	const struct io_stats *st = &fs_info->io_stats;
	char bytes[UNITS_BUF_LEN];
	unsigned int p;

	pr_verbose(LOG_VERBOSE, "read: %llu reads, %llu bytes (%s), in %.3f s\n",
		   (unsigned long long)st->total.reads, (unsigned long long)st->total.bytes,
		   pretty_size_mode(st->total.bytes, UNITS_DEFAULT, bytes, sizeof(bytes)),
		   seconds_since_start());
	for (p = 0; p < sizeof(purpose_names) / sizeof(purpose_names[0]); p++) {
		if (!st->by_purpose[p].reads)
			continue;
		pr_verbose(LOG_VERBOSE, "read:     %-19s %6llu reads, %s\n", purpose_names[p],
			   (unsigned long long)st->by_purpose[p].reads,
			   pretty_size_mode(st->by_purpose[p].bytes, UNITS_DEFAULT, bytes,
					    sizeof(bytes)));
	}
}

void cmd_close_fs(struct btrfs_fs_info *fs_info)
{
	if (get_log_level() >= LOG_VERBOSE && fs_info->nr_devices) {
		pr_verbose(LOG_VERBOSE, "read: asked for %s\n", reads_said[run_reads]);
		verbose_devices(fs_info);
		verbose_trees(fs_info);
		verbose_io(fs_info);
	}
	btrfs_close_fs(fs_info);
}
