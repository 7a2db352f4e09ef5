// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs-space: what the kernel's space accounting would say about an
 * unmounted btrfs filesystem.  Global options, the command table, and the
 * only exit() of the program.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmds/commands.h"
#include "common/help.h"
#include "common/messages.h"
#include "common/output-file.h"
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
	&cmd_struct_forecast,
	&cmd_struct_replay,
	NULL
};

static const char * const btrfs_space_usage[] = {
	"btrfs-space [global options] <command> [options] <device|image>...",
	"Read a btrfs filesystem read-only, without mounting, and show the numbers the kernel's space accounting uses",
	"",
	"Commands:",
	"inspect  summary, devices, space info, reserves, block groups, I/O",
	"chunks  the chunk map: a table, one stripe per line",
	"block-groups  every block group, a table",
	"global-rsv  the global block reserve and its inputs, by kernel",
	"overcommit  metadata over-commit room, by kernel",
	"preempt  preemptive flushing thresholds and verdict, by kernel",
	"csum-delete  delayed-ref reservation for deleting data extents",
	"mount-estimate  reads and time of a mount, with a block-group tree",
	"map  block groups as an SVG picture, or by type and fill",
	"forecast  bytes writable before ENOSPC, the chunks made on the way",
	"replay  a recorded btrfs trace's decisions re-evaluated per kernel",
	"help [COMMAND]  this text, or the help of COMMAND",
	"",
	"A command may be shortened to any unambiguous prefix (insp, mount-e).",
	"Exit status: 0 ok, 1 the filesystem could not be read as asked, 2 usage",
	"error, 3 a limit given to forecast not met.",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

static const struct cmd_struct main_cmd = {
	.token = "",
	.usagestr = btrfs_space_usage,
};

/*
 * The command named @token, or the only one it is a prefix of ("insp",
 * "mount-e"), as btrfs-progs takes "btrfs fi us".  NULL and a message
 * when there is none or several.
 */
static const struct cmd_struct *find_command(const char *token)
{
	const struct cmd_struct *found = NULL;
	size_t len = strlen(token);
	int i, matches = 0;

	for (i = 0; commands[i]; i++)
		if (!strcmp(commands[i]->token, token))
			return commands[i];
	for (i = 0; len && commands[i]; i++) {
		if (strncmp(commands[i]->token, token, len))
			continue;
		found = commands[i];
		matches++;
	}
	if (matches == 1)
		return found;
	if (!matches && !access(token, F_OK)) {
		/* "btrfs-space /dev/sdb", as "btrfs filesystem usage" is not typed */
		error("unknown command '%s': a device or image comes after a command, as in 'btrfs-space inspect %s'",
		      token, token);
	} else if (!matches) {
		error("unknown command '%s'", token);
	} else {
		char names[256] = "";

		for (i = 0; commands[i]; i++)
			if (!strncmp(commands[i]->token, token, len))
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
					 "%s%s", names[0] ? ", " : "", commands[i]->token);
		error("ambiguous command '%s': %s", token, names);
	}
	fprintf(stderr, "Try 'btrfs-space --help' for more information.\n");
	return NULL;
}

/* "help" alone is --help; "help COMMAND" is that command's --help */
static int cmd_help(int argc, char **argv)
{
	const struct cmd_struct *cmd;

	if (argc < 2 || !strcmp(argv[1], "--help")) {
		usage_print_full(stdout, btrfs_space_usage);
		return 0;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return EXIT_USAGE;
	usage_print(stdout, cmd->usagestr);
	return 0;
}

/*
 * The report is only whole when standard output took every byte: a
 * failed write (a full disk) turns a success into exit 1, with the
 * reason, instead of exit 0 with a cut report.
 */
static int finish_output(int ret)
{
	int err = output_close_stdout();

	if (!err)
		return ret;
	error("cannot write the report to standard output: %s, the report is cut",
	      err == -ECANCELED ? "a write failed" : strerror(-err));
	return ret == 0 || ret == EXIT_BELOW_LIMIT ? EXIT_FS_ERROR : ret;
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

	cmd_verbose_start();
	ret = cmd_parse_options(&main_cmd, &opts, NULL, argc, argv, &first);
	if (ret)
		exit(finish_output(ret == CMD_HELP_SHOWN ? 0 : ret));
	if (first >= argc) {
		usage_print_full(stderr, btrfs_space_usage);
		exit(EXIT_USAGE);
	}
	if (!strcmp(argv[first], "help"))
		exit(finish_output(cmd_help(argc - first, argv + first)));
	cmd = find_command(argv[first]);
	if (!cmd)
		exit(EXIT_USAGE);
	set_log_level(cmd_log_level(&opts));
	ret = cmd->fn(cmd, &opts, argc - first, argv + first);
	exit(finish_output(ret));
}
