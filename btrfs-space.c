// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs-space: what the kernel's space accounting would say about an
 * unmounted btrfs filesystem.  Global options, the command table, and the
 * only exit() of the program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds/commands.h"
#include "common/help.h"
#include "common/messages.h"
#include "common/units.h"

static const struct cmd_struct * const commands[] = {
	&cmd_struct_inspect,
	&cmd_struct_chunks,
	&cmd_struct_block_groups,
	&cmd_struct_global_rsv,
	&cmd_struct_overcommit,
	&cmd_struct_preempt,
	&cmd_struct_csum_delete,
	&cmd_struct_mount_estimate,
	&cmd_struct_map,
	NULL
};

static const char * const btrfs_space_usage[] = {
	"btrfs-space [global options] <command> [options] <device|image>...",
	"Read a btrfs filesystem read-only, without mounting, and show the numbers the kernel's space accounting uses",
	"",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	"",
	"Commands:",
	"inspect            filesystem, devices, space info, global reserve, block groups, I/O",
	"chunks             the chunk map",
	"block-groups       every block group",
	"global-rsv         the global block reserve, its inputs, by kernel version",
	"overcommit         metadata over-commit room, by kernel version",
	"preempt            preemptive flushing thresholds and verdict, by kernel version",
	"csum-delete        delayed-ref reservation for deleting data extents",
	"mount-estimate     tree-block reads and time of a mount, with and without block-group tree",
	"map                every block group as a cell of an SVG picture, or summed up by type and fill",
	"",
	"Exit status: 0 success, 1 the filesystem could not be read as asked, 2 usage error.",
	NULL
};

static const struct cmd_struct main_cmd = {
	.token = "",
	.usagestr = btrfs_space_usage,
};

static const struct cmd_struct *find_command(const char *token)
{
	int i;

	for (i = 0; commands[i]; i++)
		if (!strcmp(commands[i]->token, token))
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct cmd_options opts = {
		.format = FMT_TEXT,
		.units = UNITS_DEFAULT,
		.io_threads = DEFAULT_IO_THREADS,
	};
	const struct cmd_struct *cmd;
	int first, ret;

	ret = cmd_parse_options(&main_cmd, &opts, NULL, argc, argv, &first);
	if (ret)
		exit(ret == CMD_HELP_SHOWN ? 0 : ret);
	if (first >= argc) {
		usage_print(stderr, btrfs_space_usage);
		exit(EXIT_USAGE);
	}
	cmd = find_command(argv[first]);
	if (!cmd) {
		error("unknown command '%s'", argv[first]);
		fprintf(stderr, "Try 'btrfs-space --help' for more information.\n");
		exit(EXIT_USAGE);
	}
	set_log_level(opts.verbose ? LOG_VERBOSE : LOG_DEFAULT);
	ret = cmd->fn(cmd, &opts, argc - first, argv + first);
	exit(ret);
}
