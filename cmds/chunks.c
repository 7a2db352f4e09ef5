// SPDX-License-Identifier: GPL-2.0
#include "cmds/list.h"
#include "cmds/report.h"
#include "common/help.h"

static const char * const cmd_chunks_usage[] = {
	"btrfs-space chunks [options] <device|image> [<device|image>...]",
	"Show the chunk map as runs of chunks of one shape, and the totals per type",
	"",
	"--list-chunks      every chunk, one by one, instead of runs of chunks",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

static int cmd_chunks(const struct cmd_struct *cmd, const struct cmd_options *global,
		      int argc, char **argv)
{
	return run_list_command(cmd, global, argc, argv, false, "list-chunks", print_chunk_list);
}
DEFINE_COMMAND(chunks, "chunks");
