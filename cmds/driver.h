/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_CMDS_DRIVER_H
#define BTRFS_SPACE_CMDS_DRIVER_H

#include "cmds/commands.h"

/*
 * What a command that reads one filesystem and prints one report is made
 * of.  cmd_run() does the rest the same way for all of them: options,
 * the missing-device usage error, open, report, print, close, exit code.
 * Every callback gets the command's own @ctx; those marked optional may
 * be NULL.
 */
struct cmd_spec {
	/*
	 * optional: the name of a first positional argument that is not a
	 * device (replay's "trace").  The devices after it are then
	 * optional; without them nothing is opened and report() and print()
	 * get a NULL fs_info.  Such a report is about that argument, so it
	 * has no mode line.
	 */
	const char *lead_arg;
	/* the command's own options (optional: only the shared ones) */
	const struct option *longopts;
	const struct cmd_option_expect *expect;
	int (*handle)(int opt, const char *arg, void *ctx);
	/*
	 * optional: after parsing, before reading anything; 0 or exit
	 * status.  @paths are the positional arguments, the lead one first.
	 */
	int (*check)(void *ctx, int nr_paths, char **paths);
	/*
	 * optional: true when the filesystem is planned rather than opened
	 * (forecast --devices): no device may be given, and plan() fills
	 * the fs_info instead of the open; 0 or the exit status
	 */
	bool (*planned)(const void *ctx);
	int (*plan)(struct btrfs_fs_info *fs_info, void *ctx);
	/* optional: whether the open loads the block groups (NULL: no) */
	bool (*block_groups)(const void *ctx);
	/*
	 * optional: what the command reads, when it needs less than the
	 * default (block_groups() ? CMD_READS_BLOCK_GROUPS : CMD_READS_MOUNT);
	 * block_groups() is not asked then
	 */
	enum cmd_reads (*reads)(const void *ctx);
	/* optional: build the report; 0, or the exit status after saying why */
	int (*report)(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
		      void *ctx);
	/* optional: false when standard output is taken by something else */
	bool (*prints)(const void *ctx);
	/* the report's sections, between the mode line and the end */
	void (*print)(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
		      void *ctx);
	/* optional: the exit status once the report is printed */
	int (*verdict)(const struct cmd_options *opts, void *ctx);
	/* optional: free what report() built; only called when it returned 0 */
	void (*release)(void *ctx);
	/* --format openmetrics and nagios are for this command (inspect) */
	bool metrics;
	/* optional: how to close (NULL: cmd_close_fs, -v says what was read) */
	void (*close)(struct btrfs_fs_info *fs_info);
};

/*
 * A command's own options in its cmd_spec, by the names each command gives
 * them: NAME_longopts, NAME_option_expect and NAME_ctx_option()
 */
#define CMD_OWN_OPTIONS(name)			\
	.longopts = name##_longopts,		\
	.expect = name##_option_expect,		\
	.handle = name##_ctx_option

/* For cmd_spec.block_groups: the command always needs them */
bool cmd_want_block_groups(const void *ctx);

/* Parse, open, report, print, close; returns the exit status */
int cmd_run(const struct cmd_struct *cmd, const struct cmd_options *global,
	    int argc, char **argv, const struct cmd_spec *spec, void *ctx);

#endif
