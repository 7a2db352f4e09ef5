// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "cmds/commands.h"
#include "common/device-scan.h"
#include "common/help.h"
#include "common/io.h"
#include "common/messages.h"
#include "common/mounted.h"
#include "common/progress.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/live.h"
#include "kernel-shared/mount-cost.h"
#include "kernel-shared/tree-log.h"

/*
 * The one line for a failed open: what a path holds when it is not btrfs
 * at all, else the reader's own error (which says why a file could not be
 * read as a device: a broken dump, bad compressed data).
 */
static void print_open_error(struct btrfs_fs_info *fs_info, int ret,
			     const struct btrfs_open_args *args, const char *stage)
{
	struct btrfs_error *err = &fs_info->err;
	char msg[sizeof(err->msg)];
	int i;

	for (i = 0; i < args->nr_paths; i++) {
		if (device_explain_not_btrfs(&btrfs_io_format, args->paths[i],
					     msg, sizeof(msg))) {
			/* the record says what the line says, for --format json */
			memcpy(err->msg, msg, sizeof(msg));
			err->err = ret;
			err->loc = BTRFS_ERROR_LOC_NONE;
			snprintf(err->device, sizeof(err->device), "%s", args->paths[i]);
			break;
		}
	}
	if (!err->err) {
		err->err = ret;
		err->loc = BTRFS_ERROR_LOC_NONE;
		snprintf(err->msg, sizeof(err->msg),
			 "cannot read the filesystem: %s (error %d) while %s",
			 strerror(-ret), ret, stage);
	}
	error("%s", err->msg);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* --scan: the members found replace the paths given */
static int scan_devices(const struct cmd_options *opts, struct btrfs_open_args *args,
			char ***found, int *nr_found)
{
	int ret;

	if (!opts->scan_devices)
		return 0;
	ret = device_scan(&btrfs_io_format, (char * const *)args->paths,
			  args->nr_paths, found, nr_found);
	if (ret) {
		error("--scan: %s", strerror(-ret));
		return EXIT_FS_ERROR;
	}
	if (*found) {
		args->paths = (const char * const *)*found;
		args->nr_paths = *nr_found;
	}
	return 0;
}

/* Live mode: a mounted filesystem's directory, read through the kernel */
static int open_live(struct btrfs_fs_info *fs_info, const char *path,
		     bool load_block_groups)
{
	int ret = btrfs_live_open(fs_info, path, load_block_groups);

	if (ret) {
		error("%s", fs_info->err.err ? fs_info->err.msg : strerror(-ret));
		return EXIT_FS_ERROR;
	}
	pr_verbose(LOG_VERBOSE, "%s: live mode, %llu tree searches returned %llu items\n",
		   fs_info->live->mountpoint, (unsigned long long)fs_info->live->searches,
		   (unsigned long long)fs_info->live->items);
	if (fs_info->degraded)
		warning("filesystem is degraded: some devices are missing");
	return 0;
}

/*
 * A bad copy is worth knowing even when another one served; then what
 * the kernel would warn about while it mounts.
 */
static void print_fs_notes(const struct btrfs_fs_info *fs_info)
{
	const struct btrfs_notes *notes = &fs_info->notes;
	const struct btrfs_note *bad = btrfs_find_note(notes, BTRFS_NOTE_BAD_COPY);
	u32 i, shown = 0;

	if (bad)
		warning("%s", bad->msg);
	for (i = 0; i < notes->nr; i++) {
		if (notes->list[i].kind != BTRFS_NOTE_WARNING)
			continue;
		warning("%s", notes->list[i].msg);
		shown++;
	}
	if (notes->nr_warnings > shown)
		warning("%u more warnings not shown", notes->nr_warnings - shown);
}

/*
 * The rest of what a mount reads (root nodes, the root directory inode,
 * the log root, the block-group walk): every command checks what the
 * kernel checks before it would accept the filesystem, and the mount
 * estimate is this replay's count.
 */
static int check_mount(struct btrfs_fs_info *fs_info)
{
	fs_info->mount_est = calloc(1, sizeof(*fs_info->mount_est));
	if (!fs_info->mount_est)
		return -ENOMEM;
	return btrfs_estimate_mount(fs_info, fs_info->mount_est);
}

/*
 * A device the kernel has mounted holds its last commit, not what the
 * kernel counts now: one line says so, and where the live figures are.
 */
static void warn_if_mounted(const struct btrfs_open_args *args)
{
	char dev[NAME_MAX + 1], mnt[PATH_MAX], on[NAME_MAX + 32];
	int i;

	for (i = 0; i < args->nr_paths; i++) {
		if (device_mounted_btrfs(args->paths[i], dev, sizeof(dev), mnt, sizeof(mnt)) != 1)
			continue;
		on[0] = 0;
		if (strcmp(dev, basename_of(args->paths[i])))
			snprintf(on, sizeof(on), " (on /dev/%s)", dev);
		if (mnt[0])
			warning("%s%s is mounted at %s: this reads its last commit on disk, not the kernel's figures now; give the mount point %s for live figures",
				args->paths[i], on, mnt, mnt);
		else
			warning("%s%s is a device of a mounted btrfs: this reads its last commit on disk, not the kernel's figures now; give its mount point for live figures",
				args->paths[i], on);
		return;
	}
}

static void show_progress(u64 done, u64 total, void *ctx)
{
	progress_update(ctx, done, total);
}

/* How far btrfs_open_fs() goes for what the command reads */
static enum btrfs_open_depth open_depth(enum cmd_reads reads)
{
	switch (reads) {
	case CMD_READS_SUPER:
		return BTRFS_OPEN_SUPER;
	case CMD_READS_CHUNKS:
		return BTRFS_OPEN_CHUNKS;
	case CMD_READS_ROOTS:
		return BTRFS_OPEN_ROOTS;
	default:
		return BTRFS_OPEN_ALL;
	}
}

/*
 * Open the filesystem strictly read-only, reading what @reads says and no
 * more: the mount check (the rest of a mount's reads, the block-group
 * search among them) only for the commands that read that far.  Any
 * failure is printed here as the one line the user sees.
 */
int cmd_open_fs(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
		int nr_paths, char **paths, enum cmd_reads reads)
{
	bool load_block_groups = reads == CMD_READS_BLOCK_GROUPS;
	struct btrfs_open_args args = {
		.paths = (const char * const *)paths,
		.nr_paths = nr_paths,
		.super_mirror = opts->super_mirror,
		.allow_degraded = opts->allow_degraded,
		.readonly_devids = opts->readonly_devids,
		.nr_readonly_devids = opts->nr_readonly_devids,
		.read = {
			.bg_search_scan = opts->bg_search_scan,
			.io_threads = opts->io_threads,
			.after_roots = btrfs_mount_read_ahead,
			.after_roots_ctx = &load_block_groups,
		},
		.depth = open_depth(reads),
	};
	/* where an error without its own message happened, for its line */
	const char *stage = "opening the devices and reading the chunk and root trees";
	char **found = NULL;
	int nr_found = 0;
	int ret;

	/* the callers close fs_info whatever this returns, even before the open */
	btrfs_fs_info_init(fs_info);
	set_log_level(cmd_log_level(opts));
	cmd_verbose_reads(reads);
	if (nr_paths == 1 && btrfs_live_path(paths[0]))
		return open_live(fs_info, paths[0], load_block_groups);
	ret = scan_devices(opts, &args, &found, &nr_found);
	if (ret)
		return ret;
	warn_if_mounted(&args);
	ret = btrfs_open_fs(fs_info, &args);
	/*
	 * A log tree: the mount's replay commits, and the commit's new blocks
	 * take free places of the metadata block groups (the mount read the
	 * block groups before btrfs_replay_log()), so the mount's reads need
	 * them too
	 */
	if (!ret && reads >= CMD_READS_MOUNT && btrfs_log_root_tree_ref(fs_info).found)
		load_block_groups = true;
	stage = "loading the block groups";
	if (!ret && load_block_groups) {
		struct progress progress;
		const struct btrfs_progress cb = { show_progress, &progress };

		progress_init(&progress, "loading block groups");
		ret = btrfs_read_block_groups(fs_info, &cb);
		progress_clear(&progress);
		/* the mount replays the log before sysfs shows anything */
		if (!ret) {
			stage = "replaying the log tree";
			ret = btrfs_replay_log_accounting(fs_info);
		}
	}
	if (!ret && reads >= CMD_READS_MOUNT) {
		stage = "replaying the mount's reads";
		ret = check_mount(fs_info);
	}
	if (ret)
		print_open_error(fs_info, ret, &args, stage);
	device_scan_free(found, nr_found);
	if (ret)
		return EXIT_FS_ERROR;	/* the error is the one line said */
	print_fs_notes(fs_info);
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
	int ret;

	/* live mode replays the mount on the devices' on-disk trees, if readable */
	if (fs_info->live && !btrfs_live_on_disk_readable(fs_info)) {
		memset(est, 0, sizeof(*est));
		warning("mount estimate: the devices could not be read, nothing estimated");
		return 0;
	}
	/* the node moves of the replay's searches (formulas.md 5.6) */
	if (fs_info->log_replay.present)
		pr_verbose(LOG_VERBOSE,
			   "log replay: %llu node pushes, %llu node splits, %llu node balances\n",
			   (unsigned long long)fs_info->log_replay.node_pushes,
			   (unsigned long long)fs_info->log_replay.node_splits,
			   (unsigned long long)fs_info->log_replay.node_balances);
	if (fs_info->mount_est) {
		*est = *fs_info->mount_est;
		return 0;
	}
	if (fs_info->live) {
		ret = btrfs_live_estimate_mount(fs_info, est);
		if (!ret && est->attempts > 1)
			pr_verbose(LOG_VERBOSE, "mount estimate: %u attempts, the filesystem changed during %u\n",
				   est->attempts, est->attempts - !est->fs_changed);
	} else {
		ret = btrfs_estimate_mount(fs_info, est);
	}
	if (!ret)
		return 0;
	if (fs_info->err.err)
		error("mount estimate: %s", fs_info->err.msg);
	else
		error("mount estimate: %s (error %d) while replaying the mount's reads",
		      strerror(-ret), ret);
	return EXIT_FS_ERROR;
}
