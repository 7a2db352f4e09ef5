// SPDX-License-Identifier: GPL-2.0
/*
 * What mounting this filesystem will read, phase by phase, how long that
 * takes at a given device latency, and the same after conversion to the
 * block-group tree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds/commands.h"
#include "cmds/driver.h"
#include "cmds/mount-estimate.h"
#include "cmds/report.h"
#include "common/help.h"
#include "kernel-shared/disk-io.h"

static const char * const cmd_mount_estimate_usage[] = {
	"btrfs-space mount-estimate [options] <device|image> [<device|image>...]",
	"Estimate the tree-block reads and the time of a mount, and what the block-group tree would save",
	"",
	HELPINFO_MOUNT_ESTIMATE,
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

enum {
	OPT_LATENCY = GETOPT_VAL_EXTRA + 200,
	OPT_PROFILE,
};

const struct option mount_estimate_longopts[] = {
	{ "latency", required_argument, NULL, OPT_LATENCY },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_option_expect mount_estimate_option_expect[] = {
	{ OPT_LATENCY, "a time up to 10s, such as 0.1ms, 80us or 8ms" },
	{ OPT_PROFILE, "nvme, ssd or hdd" },
	{ 0, NULL }
};

/* "0.1ms", "80us", "0.008s", "2ms" */
static int parse_latency(const char *arg, double *seconds)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || v < 0)
		return -EINVAL;
	if (!strcmp(end, "ms"))
		v /= 1000;
	else if (!strcmp(end, "us"))
		v /= 1000000;
	else if (strcmp(end, "s") && *end)
		return -EINVAL;
	/* the unit first, then the range: "80us" and "10.5ms" are fine */
	if (v > 10)
		return -EINVAL;
	*seconds = v;
	return 0;
}

int mount_estimate_option(int opt, const char *arg, void *ctx)
{
	struct mount_estimate_args *a = ctx;
	const struct btrfs_latency_profile *p;

	if (opt == OPT_LATENCY) {
		a->profile = NULL;
		return parse_latency(arg, &a->latency);
	}
	p = opt == OPT_PROFILE ? btrfs_find_latency_profile(arg) : NULL;
	if (!p)
		return -EINVAL;
	a->profile = p->name;
	a->latency = p->seconds;
	return 0;
}

void mount_estimate_args_init(struct mount_estimate_args *a)
{
	a->profile = btrfs_latency_profiles[0].name;
	a->latency = btrfs_latency_profiles[0].seconds;
}

static void print_reads(struct fmt_ctx *fctx, const struct btrfs_mount_reads *r,
			double seconds)
{
	int i;

	fmt_u64(fctx, "total_reads", "Reads", r->total_reads);
	fmt_size(fctx, "total_bytes", "Bytes", r->total_bytes);
	fmt_seconds(fctx, "seconds", "Seconds", seconds);
	fmt_group_start(fctx, "phases", "Reads by phase");
	for (i = 0; i < MOUNT_NR_PHASES; i++)
		fmt_u64(fctx, btrfs_mount_phase_name(i), btrfs_mount_phase_name(i),
			r->phase[i]);
	fmt_group_end(fctx);
}

void print_mount_estimate(struct fmt_ctx *fctx, const struct btrfs_mount_estimate *est,
			  const struct mount_estimate_args *args)
{
	struct btrfs_mount_time time;

	fmt_group_start(fctx, "mount_estimate", "Mount estimate (open_ctree reads)");
	fmt_bool(fctx, "available", NULL, !est->fs_changed);
	fmt_u64(fctx, "attempts", est->attempts > 1 ? "Attempts" : NULL, est->attempts);
	if (est->fs_changed) {
		char why[96];

		/* live mode: each replay of the disk saw a commit land */
		snprintf(why, sizeof(why),
			 "the filesystem changed during %u attempts; estimate not available",
			 est->attempts);
		fmt_str(fctx, "reason", "Not available", why);
		fmt_group_end(fctx);
		return;
	}
	btrfs_mount_time(est, args->latency, &time);
	fmt_str(fctx, "profile", "Latency profile", args->profile);
	fmt_seconds(fctx, "latency_seconds", "Latency (s per read)", time.latency);
	print_reads(fctx, &est->now, time.seconds);
	fmt_bool(fctx, "log_replay_partial", "Log replay counted in part", est->log_partial);
	fmt_group_start(fctx, "block_group_tree", "After conversion to block-group tree");
	fmt_bool(fctx, "already", "Already has it", est->has_bg_tree);
	print_reads(fctx, &est->bg_tree, time.bg_tree_seconds);
	fmt_group_end(fctx);
	fmt_group_end(fctx);
}

struct mount_estimate_ctx {
	struct mount_estimate_args args;
	struct btrfs_mount_estimate est;
};

static int mount_estimate_ctx_option(int opt, const char *arg, void *ctx)
{
	struct mount_estimate_ctx *m = ctx;

	return mount_estimate_option(opt, arg, &m->args);
}

static int mount_estimate_report(struct btrfs_fs_info *fs_info,
				 const struct cmd_options *opts, void *ctx)
{
	struct mount_estimate_ctx *m = ctx;

	return cmd_estimate_mount(fs_info, &m->est);
}

static void mount_estimate_print(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
				 void *ctx)
{
	struct mount_estimate_ctx *m = ctx;

	print_mount_estimate(fctx, &m->est, &m->args);
}

static const struct cmd_spec mount_estimate_spec = {
	CMD_OWN_OPTIONS(mount_estimate),
	.report = mount_estimate_report,
	.print = mount_estimate_print,
};

static int cmd_mount_estimate(const struct cmd_struct *cmd,
			      const struct cmd_options *global, int argc, char **argv)
{
	struct mount_estimate_ctx m;

	mount_estimate_args_init(&m.args);
	return cmd_run(cmd, global, argc, argv, &mount_estimate_spec, &m);
}
DEFINE_COMMAND(mount_estimate, "mount-estimate");
