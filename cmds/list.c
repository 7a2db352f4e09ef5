// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <getopt.h>
#include "cmds/driver.h"
#include "cmds/list.h"
#include "cmds/report.h"

enum { OPT_EACH = GETOPT_VAL_EXTRA };

struct list_ctx {
	bool load_block_groups;
	bool each;
	list_print_fn print;
};

/* chunks prints the chunk map: the chunk tree is all it reads */
static enum cmd_reads list_reads(const void *ctx)
{
	const struct list_ctx *l = ctx;

	return l->load_block_groups ? CMD_READS_BLOCK_GROUPS : CMD_READS_CHUNKS;
}

static int list_option(int opt, const char *arg, void *ctx)
{
	struct list_ctx *l = ctx;

	if (opt != OPT_EACH)
		return -EINVAL;
	l->each = true;
	return 0;
}

static void list_print(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
		       void *ctx)
{
	struct list_ctx *l = ctx;

	l->print(fctx, fs_info, l->each);
}

int run_list_command(const struct cmd_struct *cmd, const struct cmd_options *global,
		     int argc, char **argv, bool load_block_groups,
		     const char *each_option, list_print_fn print)
{
	const struct option longopts[] = {
		{ each_option, no_argument, NULL, OPT_EACH },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd_spec spec = {
		.longopts = longopts,
		.handle = list_option,
		.reads = list_reads,
		.print = list_print,
	};
	struct list_ctx l = { load_block_groups, false, print };

	return cmd_run(cmd, global, argc, argv, &spec, &l);
}
