// SPDX-License-Identifier: GPL-2.0
#include "cmds/list.h"
#include "cmds/report.h"
#include "common/help.h"

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
	return run_list_command(cmd, global, argc, argv, true, print_block_group_list);
}
DEFINE_COMMAND(block_groups, "block-groups");
