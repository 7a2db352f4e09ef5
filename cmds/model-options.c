// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include "cmds/driver.h"
#include "cmds/model-options.h"
#include "cmds/report.h"
#include "common/parse-utils.h"
#include "kernel-shared/disk-io.h"

enum {
	OPT_KERNEL = GETOPT_VAL_EXTRA,
	OPT_MAY_USE,
	OPT_PINNED,
	OPT_RESERVED,
	OPT_DELALLOC,
	OPT_ORDERED,
	OPT_DELAYED_REFS_RSV,
	OPT_DELAYED_RSV,
	OPT_RECLAIM_SIZE,
	OPT_CLAMP,
	OPT_ZONED,
	OPT_ZONE_SIZE,
	OPT_MAX_ACTIVE_ZONES,
	OPT_TOTAL_BYTES,
	OPT_BYTES_USED,
	OPT_BYTES_READONLY,
	OPT_FREE_CHUNK_SPACE,
	OPT_GLOBAL_RSV,
};

const struct option model_longopts[] = {
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "may-use", required_argument, NULL, OPT_MAY_USE },
	{ "pinned", required_argument, NULL, OPT_PINNED },
	{ "reserved", required_argument, NULL, OPT_RESERVED },
	{ "delalloc", required_argument, NULL, OPT_DELALLOC },
	{ "ordered", required_argument, NULL, OPT_ORDERED },
	{ "delayed-refs-rsv", required_argument, NULL, OPT_DELAYED_REFS_RSV },
	{ "delayed-rsv", required_argument, NULL, OPT_DELAYED_RSV },
	{ "reclaim-size", required_argument, NULL, OPT_RECLAIM_SIZE },
	{ "clamp", required_argument, NULL, OPT_CLAMP },
	{ "zoned", no_argument, NULL, OPT_ZONED },
	{ "zone-size", required_argument, NULL, OPT_ZONE_SIZE },
	{ "max-active-zones", required_argument, NULL, OPT_MAX_ACTIVE_ZONES },
	{ "total-bytes", required_argument, NULL, OPT_TOTAL_BYTES },
	{ "bytes-used", required_argument, NULL, OPT_BYTES_USED },
	{ "bytes-readonly", required_argument, NULL, OPT_BYTES_READONLY },
	{ "free-chunk-space", required_argument, NULL, OPT_FREE_CHUNK_SPACE },
	{ "global-rsv", required_argument, NULL, OPT_GLOBAL_RSV },
	{ NULL, 0, NULL, 0 }
};

#define SIZE_EXPECT	"a size such as 4096, 512K or 1.5G"

const struct cmd_option_expect model_option_expect[] = {
	{ OPT_KERNEL, BTRFS_KERNEL_RANGE_STR ", such as 6.1 or 6.1.112" },
	{ OPT_MAY_USE, SIZE_EXPECT },
	{ OPT_PINNED, SIZE_EXPECT },
	{ OPT_RESERVED, SIZE_EXPECT },
	{ OPT_DELALLOC, SIZE_EXPECT },
	{ OPT_ORDERED, SIZE_EXPECT },
	{ OPT_DELAYED_REFS_RSV, SIZE_EXPECT },
	{ OPT_DELAYED_RSV, SIZE_EXPECT },
	{ OPT_RECLAIM_SIZE, SIZE_EXPECT },
	{ OPT_CLAMP, __stringify(BTRFS_PREEMPT_MIN_CLAMP) " to " __stringify(BTRFS_PREEMPT_MAX_CLAMP) },
	{ OPT_ZONE_SIZE, "a size above 0, such as 256M" },
	{ OPT_MAX_ACTIVE_ZONES, "0 (no limit) to 4294967295" },
	{ OPT_TOTAL_BYTES, SIZE_EXPECT },
	{ OPT_BYTES_USED, SIZE_EXPECT },
	{ OPT_BYTES_READONLY, SIZE_EXPECT },
	{ OPT_FREE_CHUNK_SPACE, SIZE_EXPECT },
	{ OPT_GLOBAL_RSV, SIZE_EXPECT },
	{ 0, NULL }
};

static int set_size(const char *arg, u64 *dst, u32 *set, u32 bit)
{
	if (parse_size(arg, dst))
		return -EINVAL;
	*set |= bit;
	return 0;
}

static int set_clamp(const char *arg, struct report_options *o)
{
	u64 v;

	if (parse_u64(arg, &v) || v < BTRFS_PREEMPT_MIN_CLAMP || v > BTRFS_PREEMPT_MAX_CLAMP)
		return -EINVAL;
	o->clamp = v;
	o->runtime_set |= RT_CLAMP;
	return 0;
}

static int set_kernel(const char *arg, struct report_options *o)
{
	return btrfs_parse_model_kernel(arg, &o->kernel_version);
}

static int set_zones(const char *arg, struct report_options *o)
{
	u64 v;

	if (parse_u64(arg, &v) || v > UINT32_MAX)
		return -EINVAL;
	o->max_active_zones = v;
	return 0;
}

int model_handle_option(int opt, const char *arg, void *ctx)
{
	struct report_options *o = ctx;

	switch (opt) {
	case OPT_KERNEL: return set_kernel(arg, o);
	case OPT_MAY_USE: return set_size(arg, &o->bytes_may_use, &o->runtime_set, RT_MAY_USE);
	case OPT_PINNED: return set_size(arg, &o->bytes_pinned, &o->runtime_set, RT_PINNED);
	case OPT_RESERVED: return set_size(arg, &o->bytes_reserved, &o->runtime_set, RT_RESERVED);
	case OPT_DELALLOC: return set_size(arg, &o->delalloc_bytes, &o->runtime_set, RT_DELALLOC);
	case OPT_ORDERED: return set_size(arg, &o->ordered_bytes, &o->runtime_set, RT_ORDERED);
	case OPT_DELAYED_REFS_RSV:
		return set_size(arg, &o->delayed_refs_rsv, &o->runtime_set, RT_DELAYED_REFS_RSV);
	case OPT_DELAYED_RSV:
		return set_size(arg, &o->delayed_rsv, &o->runtime_set, RT_DELAYED_RSV);
	case OPT_RECLAIM_SIZE:
		return set_size(arg, &o->reclaim_size, &o->runtime_set, RT_RECLAIM_SIZE);
	case OPT_CLAMP: return set_clamp(arg, o);
	case OPT_ZONED:
		o->zoned = true;
		if (!o->zone_size)
			o->zone_size = BTRFS_DEFAULT_ZONE_SIZE;
		return 0;
	case OPT_ZONE_SIZE:
		return parse_size(arg, &o->zone_size) || !o->zone_size ? -EINVAL : 0;
	case OPT_MAX_ACTIVE_ZONES: return set_zones(arg, o);
	case OPT_TOTAL_BYTES:
		return set_size(arg, &o->total_bytes, &o->runtime_set, RT_TOTAL_BYTES);
	case OPT_BYTES_USED:
		return set_size(arg, &o->bytes_used, &o->runtime_set, RT_BYTES_USED);
	case OPT_BYTES_READONLY:
		return set_size(arg, &o->bytes_readonly, &o->runtime_set, RT_BYTES_READONLY);
	case OPT_FREE_CHUNK_SPACE:
		return set_size(arg, &o->free_chunk_space, &o->runtime_set, RT_FREE_CHUNK_SPACE);
	case OPT_GLOBAL_RSV:
		return set_size(arg, &o->global_rsv, &o->runtime_set, RT_GLOBAL_RSV);
	default: return -EINVAL;
	}
}

static void print_compare(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
			  const struct report_options *chosen, model_print_fn row)
{
	int i;

	fmt_array_start(fctx, "kernels", "By kernel version");
	for (i = 0; btrfs_compare_kernels[i]; i++) {
		struct report_options o = *chosen;
		struct space_report r;
		char version[32];

		btrfs_parse_kernel_version(btrfs_compare_kernels[i], &o.kernel_version);
		if (btrfs_build_space_report(fs_info, &o, &r))
			break;
		fmt_group_start(fctx, NULL, NULL);
		fmt_str(fctx, "version", "kernel",
			btrfs_kernel_version_str(o.kernel_version, version, sizeof(version)));
		row(fctx, &r);
		fmt_group_end(fctx);
		btrfs_free_space_report(&r);
	}
	fmt_array_end(fctx);
}

struct model_ctx {
	struct report_options ropts;
	struct space_report report;
	model_print_fn detail;
	model_print_fn row;
	enum cmd_reads reads;
};

static enum cmd_reads model_reads(const void *ctx)
{
	const struct model_ctx *m = ctx;

	return m->reads;
}

static int model_ctx_option(int opt, const char *arg, void *ctx)
{
	struct model_ctx *m = ctx;

	return model_handle_option(opt, arg, &m->ropts);
}

static int model_report(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
			void *ctx)
{
	struct model_ctx *m = ctx;

	if (btrfs_build_space_report(fs_info, &m->ropts, &m->report))
		return cmd_out_of_memory();
	return 0;
}

static void model_print(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
			void *ctx)
{
	struct model_ctx *m = ctx;

	print_kernel_section(fctx, &m->report);
	m->detail(fctx, &m->report);
	print_compare(fctx, fs_info, &m->ropts, m->row);
}

static void model_release(void *ctx)
{
	struct model_ctx *m = ctx;

	btrfs_free_space_report(&m->report);
}

static const struct cmd_spec model_spec = {
	CMD_OWN_OPTIONS(model),
	.reads = model_reads,
	.report = model_report,
	.print = model_print,
	.release = model_release,
};

int run_model_command(const struct cmd_struct *cmd, const struct cmd_options *global,
		      int argc, char **argv, model_print_fn detail, model_print_fn row,
		      enum cmd_reads reads)
{
	struct model_ctx m = { .detail = detail, .row = row, .reads = reads };

	report_options_init(&m.ropts);
	return cmd_run(cmd, global, argc, argv, &model_spec, &m);
}
