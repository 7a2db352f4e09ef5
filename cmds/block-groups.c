// SPDX-License-Identifier: GPL-2.0
#include "cmds/commands.h"
#include "cmds/report.h"
#include "common/help.h"
#include "common/messages.h"
#include "kernel-shared/disk-io.h"

static const char * const cmd_block_groups_usage[] = {
	"btrfs-space block-groups [options] <device|image> [<device|image>...]",
	"Show every block group: start, length, used, flags and the leaf it was found in",
	"",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

static int cmd_block_groups(const struct cmd_struct *cmd,
			    const struct cmd_options *global, int argc, char **argv)
{
	struct cmd_options opts = *global;
	struct btrfs_fs_info fs_info;
	struct fmt_ctx fctx;
	int first, ret;

	ret = cmd_parse_options(cmd, &opts, NULL, argc, argv, &first);
	if (ret)
		return ret == CMD_HELP_SHOWN ? 0 : ret;
	if (first >= argc) {
		error("block-groups: need at least one device or image");
		usage_print(stderr, cmd->usagestr);
		return EXIT_USAGE;
	}
	ret = cmd_open_fs(&fs_info, &opts, argc - first, argv + first, true);
	if (!ret) {
		fmt_start(&fctx, stdout, opts.format, opts.units, cmd->token);
		print_block_group_list(&fctx, &fs_info);
		fmt_end(&fctx);
	}
	btrfs_close_fs(&fs_info);
	return ret;
}
DEFINE_COMMAND(block_groups, "block-groups");
