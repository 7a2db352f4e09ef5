// SPDX-License-Identifier: GPL-2.0
#include "cmds/commands.h"
#include "cmds/report.h"
#include "common/help.h"
#include "common/messages.h"
#include "kernel-shared/disk-io.h"

static const char * const cmd_chunks_usage[] = {
	"btrfs-space chunks [options] <device|image> [<device|image>...]",
	"Show the chunk map: logical start, length, type, profile and stripes",
	"",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

static int cmd_chunks(const struct cmd_struct *cmd, const struct cmd_options *global,
		      int argc, char **argv)
{
	struct cmd_options opts = *global;
	struct btrfs_fs_info fs_info;
	struct fmt_ctx fctx;
	int first, ret;

	ret = cmd_parse_options(cmd, &opts, NULL, argc, argv, &first);
	if (ret)
		return ret == CMD_HELP_SHOWN ? 0 : ret;
	if (first >= argc) {
		error("chunks: need at least one device or image");
		usage_print(stderr, cmd->usagestr);
		return EXIT_USAGE;
	}
	ret = cmd_open_fs(&fs_info, &opts, argc - first, argv + first, false);
	if (!ret) {
		fmt_start(&fctx, stdout, opts.format, opts.units, cmd->token);
		print_chunk_list(&fctx, &fs_info);
		fmt_end(&fctx);
	}
	btrfs_close_fs(&fs_info);
	return ret;
}
DEFINE_COMMAND(chunks, "chunks");
