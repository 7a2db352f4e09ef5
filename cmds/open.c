// SPDX-License-Identifier: GPL-2.0
#include "cmds/commands.h"
#include "common/help.h"
#include "common/messages.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/mount-cost.h"

/*
 * Open the filesystem strictly read-only and, when asked, load its block
 * groups.  Any failure is printed here as the one line the user sees.
 */
int cmd_open_fs(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
		int nr_paths, char **paths, bool load_block_groups)
{
	struct btrfs_open_args args = {
		.paths = (const char * const *)paths,
		.nr_paths = nr_paths,
		.super_mirror = opts->super_mirror,
		.allow_degraded = opts->allow_degraded,
	};
	int ret;

	set_log_level(opts->verbose ? LOG_VERBOSE : LOG_DEFAULT);
	ret = btrfs_open_fs(fs_info, &args);
	fs_info->bg_search_scan = opts->bg_search_scan;
	fs_info->io_threads = opts->io_threads;
	if (!ret && load_block_groups)
		ret = btrfs_read_block_groups(fs_info);
	/* a bad copy is worth knowing even when another one served */
	if (fs_info->note[0])
		warning("%s", fs_info->note);
	if (ret) {
		if (fs_info->err.err)
			error("%s", fs_info->err.msg);
		else
			error("cannot read the filesystem: error %d", ret);
		return EXIT_FS_ERROR;
	}
	if (fs_info->degraded)
		warning("filesystem is degraded: some devices are missing, every chunk read was served by the devices present");
	return 0;
}

int cmd_missing_device(const struct cmd_struct *cmd)
{
	error("%s: need at least one device or image", cmd->token);
	usage_print(stderr, cmd->usagestr);
	return EXIT_USAGE;
}

int cmd_out_of_memory(void)
{
	error("out of memory");
	return EXIT_FS_ERROR;
}

int cmd_estimate_mount(struct btrfs_fs_info *fs_info, struct btrfs_mount_estimate *est)
{
	int ret = btrfs_estimate_mount(fs_info, est);

	if (!ret)
		return 0;
	if (fs_info->err.err)
		error("mount estimate: %s", fs_info->err.msg);
	else
		error("mount estimate: error %d", ret);
	return EXIT_FS_ERROR;
}
