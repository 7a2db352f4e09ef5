// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "cmds/commands.h"
#include "cmds/model-options.h"
#include "cmds/report.h"
#include "common/help.h"
#include "common/messages.h"
#include "kernel-shared/disk-io.h"

static const char * const cmd_inspect_usage[] = {
	"btrfs-space inspect [options] <device|image> [<device|image>...]",
	"Show what the kernel would report for an unmounted filesystem: space info, global reserve, block groups",
	"",
	HELPINFO_GLOBALS,
	HELPINFO_MODEL,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

static int cmd_inspect(const struct cmd_struct *cmd, const struct cmd_options *global,
		       int argc, char **argv)
{
	struct cmd_options opts = *global;
	struct report_options ropts;
	struct cmd_extra_options extra = {
		.longopts = model_longopts,
		.handle = model_handle_option,
		.ctx = &ropts,
	};
	struct btrfs_fs_info fs_info;
	struct space_report report;
	struct fmt_ctx fctx;
	int first, ret;

	report_options_init(&ropts);
	ret = cmd_parse_options(cmd, &opts, &extra, argc, argv, &first);
	if (ret)
		return ret == CMD_HELP_SHOWN ? 0 : ret;
	if (first >= argc) {
		error("inspect: need at least one device or image");
		usage_print(stderr, cmd->usagestr);
		return EXIT_USAGE;
	}
	ret = cmd_open_fs(&fs_info, &opts, argc - first, argv + first, true);
	if (ret)
		goto out;
	if (btrfs_build_space_report(&fs_info, &ropts, &report)) {
		error("out of memory");
		ret = EXIT_FS_ERROR;
		goto out;
	}
	fmt_start(&fctx, stdout, opts.format, opts.units, cmd->token);
	print_filesystem_section(&fctx, &report);
	print_devices_section(&fctx, &report);
	print_space_info_section(&fctx, &report);
	print_global_rsv_section(&fctx, &report);
	print_kernel_section(&fctx, &report);
	print_global_rsv_detail(&fctx, &report);
	print_overcommit_section(&fctx, &report);
	print_preempt_section(&fctx, &report);
	print_block_groups_summary(&fctx, &report);
	print_io_section(&fctx, &report);
	fmt_end(&fctx);
	btrfs_free_space_report(&report);
out:
	btrfs_close_fs(&fs_info);
	return ret;
}
DEFINE_COMMAND(inspect, "inspect");
