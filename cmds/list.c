// SPDX-License-Identifier: GPL-2.0
#include "cmds/list.h"
#include "cmds/report.h"
#include "kernel-shared/disk-io.h"

int run_list_command(const struct cmd_struct *cmd, const struct cmd_options *global,
		     int argc, char **argv, bool load_block_groups, list_print_fn print)
{
	struct cmd_options opts = *global;
	struct btrfs_fs_info fs_info;
	struct fmt_ctx fctx;
	int first, ret;

	ret = cmd_parse_options(cmd, &opts, NULL, argc, argv, &first);
	if (ret)
		return ret == CMD_HELP_SHOWN ? 0 : ret;
	if (first >= argc)
		return cmd_missing_device(cmd);
	ret = cmd_open_fs(&fs_info, &opts, argc - first, argv + first, load_block_groups);
	if (!ret) {
		fmt_start(&fctx, stdout, opts.format, opts.units, cmd->token);
		print_mode(&fctx, &fs_info);
		print(&fctx, &fs_info);
		fmt_end(&fctx);
	}
	cmd_close_fs(&fs_info);
	return ret;
}
