// SPDX-License-Identifier: GPL-2.0
#include "cmds/driver.h"
#include "cmds/report.h"

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
	print_mode(&fctx, fs_info);
	spec->print(&fctx, fs_info, ctx);
	fmt_end(&fctx);
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
	struct btrfs_fs_info fs_info;
	bool block_groups;
	int first, ret;

	ret = cmd_parse_options(cmd, &opts, spec->longopts ? &extra : NULL, argc, argv,
				&first);
	if (ret)
		return ret == CMD_HELP_SHOWN ? 0 : ret;
	if (first >= argc)
		return cmd_missing_device(cmd);
	if (spec->check) {
		ret = spec->check(ctx, argc - first, argv + first);
		if (ret)
			return ret;
	}
	block_groups = spec->block_groups && spec->block_groups(ctx);
	ret = cmd_open_fs(&fs_info, &opts, argc - first, argv + first, block_groups);
	if (!ret && spec->report)
		ret = spec->report(&fs_info, &opts, ctx);
	if (!ret) {
		print_report(cmd, &opts, spec, &fs_info, ctx);
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
