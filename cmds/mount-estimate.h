/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_CMDS_MOUNT_ESTIMATE_H
#define BTRFS_SPACE_CMDS_MOUNT_ESTIMATE_H

#include "common/format-output.h"
#include "kernel-shared/mount-cost.h"

struct mount_estimate_args {
	const char *profile;		/* NULL when --latency was given */
	double latency;			/* seconds per read */
};

#define HELPINFO_MOUNT_ESTIMATE						\
	"Mount estimate:",						\
	"--latency TIME     device latency per read, e.g. 0.1ms, 80us, 8ms", \
	"--profile NAME     named latency: nvme (0.08ms, default), ssd (0.2ms), hdd (8ms)"

struct cmd_option_expect;
extern const struct option mount_estimate_longopts[];
extern const struct cmd_option_expect mount_estimate_option_expect[];
int mount_estimate_option(int opt, const char *arg, void *ctx);
void mount_estimate_args_init(struct mount_estimate_args *a);
void print_mount_estimate(struct fmt_ctx *fctx, const struct btrfs_mount_estimate *est,
			  const struct mount_estimate_args *args);

#endif
