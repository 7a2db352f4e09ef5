/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_MODEL_OPTIONS_H
#define BTRFS_SPACE_MODEL_OPTIONS_H

#include "cmds/commands.h"
#include "kernel-shared/report.h"

/* --kernel and the runtime what-if options, shared by the model commands */
extern const struct option model_longopts[];
extern const struct cmd_option_expect model_option_expect[];
int model_handle_option(int opt, const char *arg, void *ctx);

#define HELPINFO_MODEL							\
	"Kernel model and what-if inputs:",				\
	"--kernel VERSION   kernel whose formulas to use: " BTRFS_COMPARE_KERNELS_STR " (default " BTRFS_DEFAULT_KERNEL_STR ")", \
	"--may-use SIZE     metadata bytes_may_use (default: the global reserve, as right after mount)", \
	"--pinned SIZE      metadata bytes_pinned (default 0)",	\
	"--reserved SIZE    metadata bytes_reserved (default 0)",	\
	"--delalloc SIZE    delalloc bytes (default 0)",		\
	"--ordered SIZE     ordered extent bytes (default 0)",	\
	"--delayed-refs-rsv SIZE  delayed refs reserve, reserved bytes (default 0)", \
	"--delayed-rsv SIZE  delayed block reserve, reserved bytes (default 0)", \
	"--reclaim-size SIZE  bytes of queued tickets (default 0)",	\
	"--clamp N          preemptive flushing clamp, " __stringify(BTRFS_PREEMPT_MIN_CLAMP) \
	" to " __stringify(BTRFS_PREEMPT_MAX_CLAMP) " (default " __stringify(BTRFS_PREEMPT_MIN_CLAMP) ")", \
	"--zoned            what-if: treat the filesystem as zoned",	\
	"--zone-size SIZE   zone size for --zoned (default 256M)",	\
	"--max-active-zones N  active zone limit of the device for --zoned (0: none)", \
	"--total-bytes SIZE, --bytes-used SIZE, --bytes-readonly SIZE", \
	"                   metadata space info figures recorded elsewhere (e.g. a tracepoint)", \
	"--free-chunk-space SIZE  unallocated device space (default: from the dev items)", \
	"--global-rsv SIZE  global reserve, reserved bytes (default: computed)"

typedef void (*model_print_fn)(struct fmt_ctx *fctx, const struct space_report *r);

/*
 * The body of a model command: open, build the report for the chosen
 * kernel, print @detail, then one @row per kernel of btrfs_compare_kernels
 * under "kernels" so each change's before/after can be read side by side.
 * @reads: what the figures need (global-rsv: root items; the others: the
 * block groups' space infos).
 */
int run_model_command(const struct cmd_struct *cmd, const struct cmd_options *global,
		      int argc, char **argv, model_print_fn detail, model_print_fn row,
		      enum cmd_reads reads);
#endif
