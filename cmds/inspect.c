// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include "cmds/commands.h"
#include "cmds/driver.h"
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
	"--fail-on tight|critical  exit 3 when the summary's level is at least this",
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

/* inspect takes the model options and the mount-estimate options */
struct inspect_args {
	struct report_options report;
	struct mount_estimate_args mount;
	bool fail_on_set;
	enum summary_level fail_on;
};

enum {
	OPT_FAIL_ON = GETOPT_VAL_EXTRA + 600,
};

static const struct option inspect_own_longopts[] = {
	{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
	{ NULL, 0, NULL, 0 }
};

static const struct cmd_option_expect inspect_own_expect[] = {
	{ OPT_FAIL_ON, "tight or critical" },
	{ 0, NULL }
};

static struct option inspect_longopts[32];
static struct cmd_option_expect inspect_option_expect[32];

static int build_inspect_longopts(void)
{
	/* the model options, then the mount-estimate options, then its own */
	const struct option *opts[] = {
		model_longopts, mount_estimate_longopts, inspect_own_longopts,
	};
	const struct cmd_option_expect *expects[] = {
		model_option_expect, mount_estimate_option_expect, inspect_own_expect,
	};
	int n = 0, e = 0, k, i;

	for (k = 0; k < 3; k++) {
		for (i = 0; opts[k][i].name; i++)
			inspect_longopts[n++] = opts[k][i];
		for (i = 0; expects[k][i].val; i++)
			inspect_option_expect[e++] = expects[k][i];
	}
	memset(&inspect_longopts[n], 0, sizeof(inspect_longopts[n]));
	memset(&inspect_option_expect[e], 0, sizeof(inspect_option_expect[e]));
	return e >= 32 ? -E2BIG : 0;
}

static int inspect_option(int opt, const char *arg, void *ctx)
{
	struct inspect_args *args = ctx;

	if (opt == OPT_FAIL_ON) {
		if (btrfs_summary_level_parse(arg, &args->fail_on) || args->fail_on == SUMMARY_OK)
			return -EINVAL;
		args->fail_on_set = true;
		return 0;
	}
	if (!model_handle_option(opt, arg, &args->report))
		return 0;
	return mount_estimate_option(opt, arg, &args->mount);
}

/* What inspect builds: the space report, the mount estimate, the summary */
struct inspect_ctx {
	struct inspect_args args;
	struct btrfs_mount_estimate est;
	struct space_report report;
	struct space_summary summary;
};

static int inspect_ctx_option(int opt, const char *arg, void *ctx)
{
	struct inspect_ctx *c = ctx;

	return inspect_option(opt, arg, &c->args);
}

static int inspect_report(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
			  void *ctx)
{
	struct inspect_ctx *c = ctx;
	int ret;

	if (btrfs_build_space_report(fs_info, &c->args.report, &c->report))
		return cmd_out_of_memory();
	ret = cmd_estimate_mount(fs_info, &c->est);
	if (ret) {
		btrfs_free_space_report(&c->report);
		return ret;
	}
	if (btrfs_build_summary(&c->report, &c->est, &c->summary)) {
		btrfs_free_space_report(&c->report);
		return cmd_out_of_memory();
	}
	btrfs_report_fill_io(fs_info, &c->report);
	return 0;
}

/* --fail-on: the summary's level at or over the limit */
static bool fail_on_hit(const struct inspect_args *a, const struct space_summary *sum)
{
	return a->fail_on_set && sum->level >= a->fail_on;
}

static void print_inspect_gates(struct fmt_ctx *fctx, const struct inspect_args *a,
				const struct space_summary *sum)
{
	if (fctx->mode != FMT_JSON || !a->fail_on_set)
		return;
	fmt_array_start(fctx, "gates", NULL);
	print_gate(fctx, "--fail-on", "summary.level below limit",
		   btrfs_summary_level_name(a->fail_on), btrfs_summary_level_name(sum->level),
		   fail_on_hit(a, sum));
	fmt_array_end(fctx);
}

static void inspect_print(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
			  void *ctx)
{
	struct inspect_ctx *c = ctx;
	const struct space_report *report = &c->report;

	print_summary_section(fctx, &c->summary);
	print_summary_metrics(fctx, &c->summary, report);
	print_summary_nagios(fctx, &c->summary);
	print_filesystem_section(fctx, report);
	print_devices_section(fctx, report);
	print_space_info_section(fctx, report);
	print_log_replay_section(fctx, report);
	print_global_rsv_section(fctx, report);
	print_kernel_section(fctx, report);
	print_global_rsv_detail(fctx, report);
	print_overcommit_section(fctx, report);
	print_preempt_section(fctx, report);
	print_block_groups_summary(fctx, report);
	print_forecast_section(fctx, &c->summary.forecast);
	print_mount_estimate(fctx, &c->est, &c->args.mount);
	print_io_section(fctx, report);
	print_inspect_gates(fctx, &c->args, &c->summary);
}

/* Nagios: 0/1/2 = ok/tight/critical; otherwise --fail-on's exit 3 */
static int inspect_verdict(const struct cmd_options *opts, void *ctx)
{
	struct inspect_ctx *c = ctx;

	if (opts->format == FMT_NAGIOS)
		return c->summary.level;
	if (fail_on_hit(&c->args, &c->summary)) {
		error("inspect: level %s, at or over --fail-on %s",
		      btrfs_summary_level_name(c->summary.level),
		      btrfs_summary_level_name(c->args.fail_on));
		return EXIT_BELOW_LIMIT;
	}
	return 0;
}

static void inspect_release(void *ctx)
{
	struct inspect_ctx *c = ctx;

	btrfs_free_summary(&c->summary);
	btrfs_free_space_report(&c->report);
}

static const struct cmd_spec inspect_spec = {
	CMD_OWN_OPTIONS(inspect),
	.block_groups = cmd_want_block_groups,
	.report = inspect_report,
	.print = inspect_print,
	.verdict = inspect_verdict,
	.release = inspect_release,
	.metrics = true,
};

static int cmd_inspect(const struct cmd_struct *cmd, const struct cmd_options *global,
		       int argc, char **argv)
{
	struct inspect_ctx c;

	if (build_inspect_longopts())
		return EXIT_USAGE;
	memset(&c, 0, sizeof(c));
	report_options_init(&c.args.report);
	mount_estimate_args_init(&c.args.mount);
	return cmd_run(cmd, global, argc, argv, &inspect_spec, &c);
}
DEFINE_COMMAND(inspect, "inspect");
