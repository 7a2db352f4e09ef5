// SPDX-License-Identifier: GPL-2.0
/*
 * The delayed-ref reservation for deleting data: the drop refs plus the
 * csum-deletion charge of "btrfs: stop doing excessive space reservation
 * for csum deletion", before and after.
 */
#include <errno.h>
#include "cmds/commands.h"
#include "cmds/model-options.h"
#include "cmds/report.h"
#include "common/help.h"
#include "common/messages.h"
#include "common/parse-utils.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/disk-io.h"

static const char * const cmd_csum_delete_usage[] = {
	"btrfs-space csum-delete [options] --extents N --extent-size SIZE <device|image>...",
	"Show the delayed-ref reservation the kernel makes to delete data extents, with and without the 2023 csum-deletion change",
	"",
	"--extents N        number of extents deleted (each its own delayed-ref head)",
	"--extent-size SIZE on-disk size of each extent (compressed size for compressed data)",
	"--kernel VERSION   kernel whose formula to use (default 6.18)",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

enum {
	OPT_EXTENTS = GETOPT_VAL_EXTRA + 100,
	OPT_EXTENT_SIZE,
	OPT_CD_KERNEL,
};

struct csum_delete_args {
	u64 extents;
	u64 extent_size;
	u32 kernel_version;
};

static const struct option csum_delete_longopts[] = {
	{ "extents", required_argument, NULL, OPT_EXTENTS },
	{ "extent-size", required_argument, NULL, OPT_EXTENT_SIZE },
	{ "kernel", required_argument, NULL, OPT_CD_KERNEL },
	{ NULL, 0, NULL, 0 }
};

static int csum_delete_option(int opt, const char *arg, void *ctx)
{
	struct csum_delete_args *a = ctx;

	switch (opt) {
	case OPT_EXTENTS: return parse_u64(arg, &a->extents);
	case OPT_EXTENT_SIZE: return parse_size(arg, &a->extent_size);
	case OPT_CD_KERNEL: return btrfs_parse_kernel_version(arg, &a->kernel_version);
	default: return -EINVAL;
	}
}

static void print_csum_params(struct fmt_ctx *fctx, const struct btrfs_csum_params *p)
{
	fmt_group_start(fctx, "params", "Filesystem");
	fmt_u64(fctx, "nodesize", "Node size", p->nodesize);
	fmt_u64(fctx, "sectorsize", "Sector size", p->sectorsize);
	fmt_u64(fctx, "csum_size", "Checksum size", p->csum_size);
	fmt_u64(fctx, "csums_per_leaf", "Checksums per leaf", btrfs_csums_per_leaf(p));
	fmt_bool(fctx, "free_space_tree_option", "Free space tree option",
		 p->free_space_tree_opt);
	fmt_group_end(fctx);
}

void print_csum_delete_calc(struct fmt_ctx *fctx, const struct btrfs_csum_delete_calc *c);
void print_csum_delete_calc(struct fmt_ctx *fctx, const struct btrfs_csum_delete_calc *c)
{
	fmt_group_start(fctx, "csum_delete", "Delayed-ref reservation for the deletion");
	fmt_u64(fctx, "extents", "Extents (heads)", c->extents);
	fmt_size(fctx, "disk_bytes", "Disk bytes", c->disk_bytes);
	fmt_u64(fctx, "csum_leaves", "Csum leaves (per head)", c->csum_leaves);
	fmt_size(fctx, "drop_ref_bytes", "Drop refs", c->drop_ref_bytes);
	fmt_size(fctx, "csum_bytes", "Csum deletion", c->csum_bytes);
	fmt_size(fctx, "total", "Total", c->total);
	fmt_size(fctx, "csum_bytes_before", "Csum deletion before v6.7", c->csum_bytes_before);
	fmt_size(fctx, "total_before", "Total before v6.7", c->total_before);
	fmt_group_end(fctx);
}

static int cmd_csum_delete(const struct cmd_struct *cmd, const struct cmd_options *global,
			   int argc, char **argv)
{
	struct cmd_options opts = *global;
	struct csum_delete_args args = { .kernel_version = BTRFS_DEFAULT_KERNEL };
	struct cmd_extra_options extra = {
		.longopts = csum_delete_longopts,
		.handle = csum_delete_option,
		.ctx = &args,
	};
	struct btrfs_kernel_model model;
	struct btrfs_csum_delete_calc calc = { 0 };
	struct btrfs_csum_params params;
	struct btrfs_fs_info fs_info;
	struct fmt_ctx fctx;
	int first, ret;

	ret = cmd_parse_options(cmd, &opts, &extra, argc, argv, &first);
	if (ret)
		return ret == CMD_HELP_SHOWN ? 0 : ret;
	if (first >= argc)
		return cmd_missing_device(cmd);
	if (!args.extents || !args.extent_size) {
		error("csum-delete: give --extents and --extent-size");
		return EXIT_USAGE;
	}
	ret = cmd_open_fs(&fs_info, &opts, argc - first, argv + first, false);
	if (!ret) {
		btrfs_kernel_model(args.kernel_version, &model);
		btrfs_csum_params_from_fs(&fs_info, &params);
		btrfs_csum_delete_add(&params, &model, &calc, args.extent_size, args.extents);
		fmt_start(&fctx, stdout, opts.format, opts.units, cmd->token);
		print_csum_params(&fctx, &params);
		print_csum_delete_calc(&fctx, &calc);
		fmt_end(&fctx);
	}
	btrfs_close_fs(&fs_info);
	return ret;
}
DEFINE_COMMAND(csum_delete, "csum-delete");
