// SPDX-License-Identifier: GPL-2.0
#include "cmds/list.h"
#include "cmds/report.h"
#include "common/help.h"

static const char * const cmd_block_groups_usage[] = {
	"btrfs-space block-groups [options] <device|image> [<device|image>...]",
	"Show the block groups as runs of one shape and state, and the totals per type",
	"",
	"--list-block-groups  every block group, one by one, instead of runs",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

static int cmd_block_groups(const struct cmd_struct *cmd,
			    const struct cmd_options *global, int argc, char **argv)
{
	return run_list_command(cmd, global, argc, argv, true, "list-block-groups",
				print_block_group_list);
}
DEFINE_COMMAND(block_groups, "block-groups");
