/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_CMDS_LIST_H
#define BTRFS_SPACE_CMDS_LIST_H

#include "cmds/commands.h"

typedef void (*list_print_fn)(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info);

/* The body of a listing command: options, open, print one list */
int run_list_command(const struct cmd_struct *cmd, const struct cmd_options *global,
		     int argc, char **argv, bool load_block_groups, list_print_fn print);

#endif
