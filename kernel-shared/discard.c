// SPDX-License-Identifier: GPL-2.0
/*
 * The discard mode a mount runs with, and so what it does with the empty
 * block groups it finds (fs/btrfs/discard.c, block-group.c, disk-io.c,
 * super.c of Linux 6.2-6.18):
 *
 * - open_ctree() turns discard=async on when no discard option was given,
 *   the filesystem is not zoned and a device supports discard
 *   (fs_devices->discardable: bdev_max_discard_sectors() of any device,
 *   btrfs_open_one_device()); 6.2 "btrfs: auto enable discard=async when
 *   possible";
 * - read_one_block_group(), for a writable group with used == 0:
 *   discard=async queues it with btrfs_discard_queue_work(), whose
 *   add_to_discard_unused_list() does nothing while
 *   BTRFS_FS_DISCARD_RUNNING is clear, which it is until
 *   btrfs_discard_resume() after the block groups are read, and that
 *   punts only the unused_bgs list: the group is on no list, and the
 *   cleaner never sees it (until it is used and emptied again);
 *   otherwise btrfs_mark_bg_unused() puts it on unused_bgs, and the
 *   cleaner (woken by the transaction kthread, every commit= seconds)
 *   deletes it with btrfs_delete_unused_bgs().
 *
 * Own file beside forecast.c: the kernel's discard.c has no function the
 * tool runs, only this decision.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/discard-probe.h"
#include "kernel-shared/discard.h"
#include "kernel-shared/kernel-version.h"

void btrfs_mount_discard_init(struct btrfs_mount_discard *md)
{
	memset(md, 0, sizeof(*md));
	md->commit_interval = BTRFS_DEFAULT_COMMIT_INTERVAL;
}

static int parse_one(const char *opt, struct btrfs_mount_discard *md)
{
	char *end;
	unsigned long v;

	if (!strcmp(opt, "nodiscard")) {
		md->mode = BTRFS_DISCARD_NONE;
	} else if (!strcmp(opt, "discard") || !strcmp(opt, "discard=sync")) {
		md->mode = BTRFS_DISCARD_SYNC;
	} else if (!strcmp(opt, "discard=async")) {
		md->mode = BTRFS_DISCARD_ASYNC;
	} else if (!strncmp(opt, "commit=", 7)) {
		v = strtoul(opt + 7, &end, 10);
		if (end == opt + 7 || *end || v > 300000)
			return -EINVAL;
		/* btrfs_parse_param(): commit=0 is the default */
		md->commit_interval = v ? v : BTRFS_DEFAULT_COMMIT_INTERVAL;
		return 0;
	} else {
		return -EINVAL;
	}
	md->set = true;
	return 0;
}

int btrfs_parse_mount_discard(const char *opts, struct btrfs_mount_discard *md)
{
	char *copy = strdup(opts), *tok, *save = NULL;
	int ret = -EINVAL;	/* no option at all */

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		ret = parse_one(tok, md);
		if (ret)
			break;
	}
	free(copy);
	return ret;
}

/*
 * btrfs_show_options() prints ",discard" for DISCARD_SYNC,
 * ",discard=async" for DISCARD_ASYNC, nothing for neither, and
 * ",commit=N" when not the default: so a mount's options always say.
 */
void btrfs_mount_discard_from_super_opts(const char *opts, struct btrfs_mount_discard *md)
{
	char *copy = strdup(opts), *tok, *save = NULL;

	btrfs_mount_discard_init(md);
	md->set = true;
	if (!copy)
		return;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strncmp(tok, "discard", 7) || !strncmp(tok, "commit=", 7))
			parse_one(tok, md);
	free(copy);
}

enum btrfs_discard_mode btrfs_discard_at_mount(const struct btrfs_fs_info *fs_info,
					       const struct btrfs_mount_discard *md,
					       u32 kernel_version, const char **why)
{
	bool discardable = false;
	u32 i;

	if (md->set) {
		*why = "--mount-options";
		return md->mode;
	}
	if (kernel_version < BTRFS_DISCARD_ASYNC_DEFAULT) {
		*why = "default before 6.2: no discard";
		return BTRFS_DISCARD_NONE;
	}
	if (btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_ZONED)) {
		*why = "default: zoned, no automatic discard=async";
		return BTRFS_DISCARD_NONE;
	}
	/*
	 * bdev_max_discard_sectors() of each device; a regular file is
	 * mounted through a loop device, which supports discard when the
	 * file's filesystem punches holes (loop_config_discard()): assumed
	 */
	for (i = 0; i < fs_info->nr_devices; i++) {
		const struct btrfs_device *dev = &fs_info->devices[i];
		bool blockdev;

		if (!dev->present)
			continue;
		discardable |= blockdev_discards(dev->io.path, &blockdev);
		if (!blockdev)
			discardable = true;
	}
	if (!discardable) {
		*why = "default: no device supports discard, so no discard=async";
		return BTRFS_DISCARD_NONE;
	}
	/* one sentence for files and block devices: the same filesystem either way */
	*why = "default since 6.2 where a device supports discard (a block device: its "
	       "discard_max_bytes; an image file: assumed, through a loop device)";
	return BTRFS_DISCARD_ASYNC;
}

const char *btrfs_discard_mode_name(enum btrfs_discard_mode mode)
{
	switch (mode) {
	case BTRFS_DISCARD_SYNC:
		return "sync";
	case BTRFS_DISCARD_ASYNC:
		return "async";
	default:
		return "nodiscard";
	}
}
