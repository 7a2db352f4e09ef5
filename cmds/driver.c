// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "cmds/driver.h"
#include "cmds/report.h"
#include "common/help.h"
#include "common/messages.h"
#include "kernel-shared/disk-io.h"

bool cmd_want_block_groups(const void *ctx)
{
	return true;
}

static void print_report(const struct cmd_struct *cmd, const struct cmd_options *opts,
			 const struct cmd_spec *spec, struct btrfs_fs_info *fs_info,
			 void *ctx)
{
	struct fmt_ctx fctx;

	if (spec->prints && !spec->prints(ctx))
		return;
	fmt_start(&fctx, stdout, opts->format, opts->units, cmd->token);
	if (!spec->lead_arg)
		print_mode(&fctx, fs_info);
	spec->print(&fctx, fs_info, ctx);
	fmt_end(&fctx);
}

/*
 * The filesystem was refused: with --format json the record goes to
 * stdout as the command's object, the ERROR line is on stderr already.
 */
static void print_refusal(const struct cmd_struct *cmd, const struct cmd_options *opts,
			  const struct btrfs_fs_info *fs_info)
{
	struct fmt_ctx fctx;

	if (opts->format != FMT_JSON || !fs_info->err.err)
		return;
	fmt_start(&fctx, stdout, opts->format, opts->units, cmd->token);
	print_error_record(&fctx, &fs_info->err);
	fmt_end(&fctx);
}

/* Nagios: a filesystem that cannot be read is UNKNOWN (3), with why */
static int nagios_unknown(const struct btrfs_fs_info *fs_info)
{
	char why[sizeof(fs_info->err.msg) + 2] = "";

	if (fs_info->err.err)
		snprintf(why, sizeof(why), ": %s", fs_info->err.msg);
	fmt_plugin_text(why);
	printf("BTRFS-SPACE UNKNOWN - cannot read the filesystem%s\n", why);
	return NAGIOS_UNKNOWN;
}

/*
 * Whether the command line asks for --format nagios, read before (or
 * without) the option parser, which stops at the first bad option.
 */
static bool nagios_asked(const struct cmd_options *global, int argc, char **argv)
{
	int i;

	if (global->format == FMT_NAGIOS)
		return true;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--format=nagios"))
			return true;
		if (!strcmp(argv[i], "--format") && i + 1 < argc && !strcmp(argv[i + 1], "nagios"))
			return true;
	}
	return false;
}

/*
 * A usage error of a Nagios check: exit 2 would read as CRITICAL, and the
 * plugin guidelines make invalid arguments UNKNOWN (3), with a status line
 * on stdout (why is on stderr already).
 */
static int plugin_usage_error(bool plugin, const struct cmd_struct *cmd, int ret)
{
	if (!plugin || ret != EXIT_USAGE)
		return ret;
	printf("BTRFS-SPACE UNKNOWN - invalid arguments: see 'btrfs-space %s --help'\n", cmd->token);
	return NAGIOS_UNKNOWN;
}

/* The positional arguments are missing: a usage error */
static int missing_argument(const struct cmd_struct *cmd, const struct cmd_spec *spec)
{
	if (!spec->lead_arg)
		return cmd_missing_device(cmd);
	error("%s: no %s given", cmd->token, spec->lead_arg);
	usage_print(stderr, cmd->usagestr);
	return EXIT_USAGE;
}

/* Open the devices; with a lead argument and none given, nothing (NULL) */
static int open_devices(const struct cmd_options *opts, const struct cmd_spec *spec,
			void *ctx, int nr_paths, char **paths,
			struct btrfs_fs_info *fs_info, struct btrfs_fs_info **opened)
{
	bool block_groups = spec->block_groups && spec->block_groups(ctx);
	enum cmd_reads reads = block_groups ? CMD_READS_BLOCK_GROUPS : CMD_READS_MOUNT;

	if (spec->reads)
		reads = spec->reads(ctx);
	*opened = fs_info;
	if (spec->lead_arg && !nr_paths) {
		btrfs_fs_info_init(fs_info);
		*opened = NULL;
		return 0;
	}
	return cmd_open_fs(fs_info, opts, nr_paths, paths, reads);
}

/*
 * A planned filesystem: built by the command (spec->plan), never opened;
 * a device given with it is a usage error.
 */
static int run_planned(const struct cmd_struct *cmd, const struct cmd_options *opts,
		       const struct cmd_spec *spec, void *ctx, int nr_paths)
{
	struct btrfs_fs_info fs_info;
	int ret;

	if (nr_paths) {
		error("%s: devices are planned, not read: give no device", cmd->token);
		usage_print(stderr, cmd->usagestr);
		return EXIT_USAGE;
	}
	btrfs_fs_info_init(&fs_info);
	ret = spec->plan(&fs_info, ctx);
	if (!ret && spec->report)
		ret = spec->report(&fs_info, opts, ctx);
	if (ret == EXIT_FS_ERROR)
		print_refusal(cmd, opts, &fs_info);
	if (!ret) {
		print_report(cmd, opts, spec, &fs_info, ctx);
		if (spec->verdict)
			ret = spec->verdict(opts, ctx);
		if (spec->release)
			spec->release(ctx);
	}
	btrfs_close_fs(&fs_info);
	return ret;
}

int cmd_run(const struct cmd_struct *cmd, const struct cmd_options *global,
	    int argc, char **argv, const struct cmd_spec *spec, void *ctx)
{
	struct cmd_options opts = *global;
	struct cmd_extra_options extra = {
		.longopts = spec->longopts,
		.handle = spec->handle,
		.ctx = ctx,
		.expect = spec->expect,
	};
	bool plugin = spec->metrics && nagios_asked(global, argc, argv);
	struct btrfs_fs_info fs_info, *opened;
	int first, lead, ret;

	ret = cmd_parse_options(cmd, &opts, spec->longopts ? &extra : NULL, argc, argv,
				&first);
	if (ret)
		return ret == CMD_HELP_SHOWN ? 0 : plugin_usage_error(plugin, cmd, ret);
	if ((opts.format == FMT_OPENMETRICS || opts.format == FMT_NAGIOS) && !spec->metrics) {
		error("%s: --format openmetrics and nagios are for inspect only", cmd->token);
		return EXIT_USAGE;
	}
	if (spec->planned && spec->planned(ctx))
		return run_planned(cmd, &opts, spec, ctx, argc - first);
	if (first >= argc)
		return plugin_usage_error(plugin, cmd, missing_argument(cmd, spec));
	if (spec->check) {
		ret = spec->check(ctx, argc - first, argv + first);
		if (ret)
			return plugin_usage_error(plugin, cmd, ret);
	}
	lead = spec->lead_arg ? 1 : 0;
	ret = open_devices(&opts, spec, ctx, argc - first - lead, argv + first + lead,
			   &fs_info, &opened);
	if (!ret && spec->report)
		ret = spec->report(opened, &opts, ctx);
	if (ret == EXIT_FS_ERROR)
		print_refusal(cmd, &opts, &fs_info);
	if (ret && opts.format == FMT_NAGIOS)
		ret = nagios_unknown(&fs_info);
	if (!ret) {
		print_report(cmd, &opts, spec, opened, ctx);
		if (spec->verdict)
			ret = spec->verdict(&opts, ctx);
		if (spec->release)
			spec->release(ctx);
	}
	if (spec->close)
		spec->close(&fs_info);
	else
		cmd_close_fs(&fs_info);
	return ret;
}
