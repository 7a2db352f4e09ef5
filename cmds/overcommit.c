// SPDX-License-Identifier: GPL-2.0
#include "cmds/commands.h"
#include "cmds/model-options.h"
#include "cmds/report.h"
#include "common/help.h"

static const char * const cmd_overcommit_usage[] = {
	"btrfs-space overcommit [options] <device|image> [<device|image>...]",
	"Show the metadata over-commit room and the largest reservation granted without flushing",
	"",
	HELPINFO_GLOBALS,
	HELPINFO_MODEL,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

static void overcommit_row(struct fmt_ctx *fctx, const struct space_report *r)
{
	const struct space_report_reserve *rs = &r->reserve;

	fmt_size(fctx, "avail_flush_all", "avail_flush_all", rs->avail_flush_all);
	fmt_size(fctx, "avail_other", "avail_other", rs->avail_other);
	fmt_size(fctx, "largest_reservation_flush_all", "largest_flush_all",
		 rs->largest_flush_all);
	fmt_size(fctx, "largest_reservation_other", "largest_other", rs->largest_other);
}

static int cmd_overcommit(const struct cmd_struct *cmd, const struct cmd_options *global,
			  int argc, char **argv)
{
	return run_model_command(cmd, global, argc, argv, print_overcommit_section,
				 overcommit_row, CMD_READS_BLOCK_GROUPS);
}
DEFINE_COMMAND(overcommit, "overcommit");
