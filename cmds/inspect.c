// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include "cmds/commands.h"
#include "cmds/forecast.h"
#include "cmds/model-options.h"
#include "cmds/mount-estimate.h"
#include "cmds/report.h"
#include "common/help.h"
#include "common/messages.h"
#include "kernel-shared/disk-io.h"

static const char * const cmd_inspect_usage[] = {
	"btrfs-space inspect [options] <device|image> [<device|image>...]",
	"Show what the kernel would report for a filesystem (unmounted, or a mount point: live mode): space info, global reserve, block groups",
	"",
	HELPINFO_GLOBALS,
	HELPINFO_MODEL,
	HELPINFO_MOUNT_ESTIMATE,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

/* inspect takes the model options and the mount-estimate options */
struct inspect_args {
	struct report_options report;
	struct mount_estimate_args mount;
};

static struct option inspect_longopts[32];
static struct cmd_option_expect inspect_option_expect[32];

static int build_inspect_longopts(void)
{
	int n = 0, i;

	for (i = 0; model_longopts[i].name; i++)
		inspect_longopts[n++] = model_longopts[i];
	for (i = 0; mount_estimate_longopts[i].name; i++)
		inspect_longopts[n++] = mount_estimate_longopts[i];
	memset(&inspect_longopts[n], 0, sizeof(inspect_longopts[n]));
	n = 0;
	for (i = 0; model_option_expect[i].val; i++)
		inspect_option_expect[n++] = model_option_expect[i];
	for (i = 0; mount_estimate_option_expect[i].val; i++)
		inspect_option_expect[n++] = mount_estimate_option_expect[i];
	memset(&inspect_option_expect[n], 0, sizeof(inspect_option_expect[n]));
	return n >= 32 ? -E2BIG : 0;
}

static int inspect_option(int opt, const char *arg, void *ctx)
{
	struct inspect_args *args = ctx;

	if (!model_handle_option(opt, arg, &args->report))
		return 0;
	return mount_estimate_option(opt, arg, &args->mount);
}

static int cmd_inspect(const struct cmd_struct *cmd, const struct cmd_options *global,
		       int argc, char **argv)
{
	struct cmd_options opts = *global;
	struct inspect_args args;
	struct cmd_extra_options extra = {
		.longopts = inspect_longopts,
		.handle = inspect_option,
		.ctx = &args,
		.expect = inspect_option_expect,
	};
	struct btrfs_mount_estimate est;
	struct btrfs_fs_info fs_info;
	struct space_report report;
	struct space_summary summary;
	struct fmt_ctx fctx;
	int first, ret;

	if (build_inspect_longopts())
		return EXIT_USAGE;
	report_options_init(&args.report);
	mount_estimate_args_init(&args.mount);
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
	if (btrfs_build_space_report(&fs_info, &args.report, &report)) {
		error("out of memory");
		ret = EXIT_FS_ERROR;
		goto out;
	}
	ret = cmd_estimate_mount(&fs_info, &est);
	if (ret) {
		btrfs_free_space_report(&report);
		goto out;
	}
	if (btrfs_build_summary(&report, &est, &summary)) {
		error("out of memory");
		btrfs_free_space_report(&report);
		ret = EXIT_FS_ERROR;
		goto out;
	}
	btrfs_report_fill_io(&fs_info, &report);
	fmt_start(&fctx, stdout, opts.format, opts.units, cmd->token);
	print_mode(&fctx, &fs_info);
	print_summary_section(&fctx, &summary);
	print_filesystem_section(&fctx, &report);
	print_devices_section(&fctx, &report);
	print_space_info_section(&fctx, &report);
	print_log_replay_section(&fctx, &report);
	print_global_rsv_section(&fctx, &report);
	print_kernel_section(&fctx, &report);
	print_global_rsv_detail(&fctx, &report);
	print_overcommit_section(&fctx, &report);
	print_preempt_section(&fctx, &report);
	print_block_groups_summary(&fctx, &report);
	print_forecast_section(&fctx, &summary.forecast);
	print_mount_estimate(&fctx, &est, &args.mount);
	print_io_section(&fctx, &report);
	fmt_end(&fctx);
	btrfs_free_summary(&summary);
	btrfs_free_space_report(&report);
out:
	cmd_close_fs(&fs_info);
	return ret;
}
DEFINE_COMMAND(inspect, "inspect");
