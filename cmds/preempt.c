// SPDX-License-Identifier: GPL-2.0
#include "cmds/commands.h"
#include "cmds/model-options.h"
#include "cmds/report.h"
#include "common/help.h"

static const char * const cmd_preempt_usage[] = {
	"btrfs-space preempt [options] <device|image> [<device|image>...]",
	"Show when preemptive metadata flushing starts: thresholds per clamp and the verdict",
	"",
	HELPINFO_GLOBALS,
	HELPINFO_MODEL,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

static void preempt_row(struct fmt_ctx *fctx, const struct space_report *r)
{
	const struct btrfs_preempt_result *p = &r->reserve.preempt;

	fmt_size(fctx, "full_limit", "full_limit", p->full_limit);
	fmt_size(fctx, "thresh", "thresh", p->thresh_by_clamp[r->reserve.state.clamp]);
	fmt_size(fctx, "floor", "floor", p->floor);
	fmt_str(fctx, "verdict", "verdict", p->verdict ? "flush" : "no-flush");
}

static int cmd_preempt(const struct cmd_struct *cmd, const struct cmd_options *global,
		       int argc, char **argv)
{
	return run_model_command(cmd, global, argc, argv, print_preempt_section,
				 preempt_row, CMD_READS_BLOCK_GROUPS);
}
DEFINE_COMMAND(preempt, "preempt");
