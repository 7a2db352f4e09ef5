/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_CMDS_LIST_H
#define BTRFS_SPACE_CMDS_LIST_H

#include "cmds/commands.h"

/* @each: every item (--list-chunks, --list-block-groups), not runs */
typedef void (*list_print_fn)(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
			      bool each);

/*
 * The body of a listing command: options (@each_option lists every item
 * instead of runs), open, print one list
 */
int run_list_command(const struct cmd_struct *cmd, const struct cmd_options *global,
		     int argc, char **argv, bool load_block_groups,
		     const char *each_option, list_print_fn print);

#endif
