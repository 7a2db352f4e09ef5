// SPDX-License-Identifier: GPL-2.0
#include "cmds/driver.h"
#include "cmds/list.h"
#include "cmds/report.h"

struct list_ctx {
	bool load_block_groups;
	list_print_fn print;
};

/* chunks prints the chunk map: the chunk tree is all it reads */
static enum cmd_reads list_reads(const void *ctx)
{
	const struct list_ctx *l = ctx;

	return l->load_block_groups ? CMD_READS_BLOCK_GROUPS : CMD_READS_CHUNKS;
}

static void list_print(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
		       void *ctx)
{
	struct list_ctx *l = ctx;

	l->print(fctx, fs_info);
}

static const struct cmd_spec list_spec = {
	.reads = list_reads,
	.print = list_print,
};

int run_list_command(const struct cmd_struct *cmd, const struct cmd_options *global,
		     int argc, char **argv, bool load_block_groups, list_print_fn print)
{
	struct list_ctx l = { load_block_groups, print };

	return cmd_run(cmd, global, argc, argv, &list_spec, &l);
}
