// SPDX-License-Identifier: GPL-2.0
#include "cmds/commands.h"
#include "cmds/model-options.h"
#include "cmds/report.h"
#include "common/help.h"

static const char * const cmd_global_rsv_usage[] = {
	"btrfs-space global-rsv [options] <device|image> [<device|image>...]",
	"Show the global block reserve right after mount, its inputs, and how kernels differ",
	"",
	HELPINFO_GLOBALS,
	HELPINFO_MODEL,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

static void global_rsv_detail(struct fmt_ctx *fctx, const struct space_report *r)
{
	print_global_rsv_section(fctx, r);
	print_global_rsv_detail(fctx, r);
}

static void global_rsv_row(struct fmt_ctx *fctx, const struct space_report *r)
{
	fmt_str(fctx, "floor_formula", "floor", r->global_rsv.floor_formula_short);
	fmt_size(fctx, "floor", "floor_bytes", r->global_rsv.floor);
	fmt_size(fctx, "global_rsv_size", "size", r->global_rsv.size);
}

static int cmd_global_rsv(const struct cmd_struct *cmd, const struct cmd_options *global,
			  int argc, char **argv)
{
	return run_model_command(cmd, global, argc, argv, global_rsv_detail,
				 global_rsv_row, CMD_READS_ROOTS);
}
DEFINE_COMMAND(global_rsv, "global-rsv");
