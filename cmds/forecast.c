// SPDX-License-Identifier: GPL-2.0
/*
 * forecast: what can still be written before ENOSPC, the chunks the
 * kernel will make on the way, and what no chunk can use
 * (kernel-shared/forecast.c; formulas.md section 21).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmds/commands.h"
#include "cmds/driver.h"
#include "cmds/forecast.h"
#include "cmds/report.h"
#include "common/help.h"
#include "common/messages.h"
#include "common/parse-utils.h"
#include "common/units.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/live.h"
#include "kernel-shared/volumes.h"

static const char * const cmd_forecast_usage[] = {
	"btrfs-space forecast [options] <device|image> [<device|image>...]",
	"Replay the kernel's chunk allocator: bytes writable before ENOSPC per type, the chunks made on the way, space no chunk can use",
	"",
	HELPINFO_GLOBALS,
	"--kernel VERSION   kernel whose allocator to replay: 5.12 or later (default 6.18)",
	"--data-profile P   what-if: new data chunks of profile P (single, dup, raid0, raid1,",
	"                   raid1c3, raid1c4, raid10, raid5, raid6)",
	"--metadata-profile P  what-if: new metadata chunks of profile P",
	"--balance FILTERS  what-if: the block groups a balance with these filters relocates,",
	"                   the bytes moved, whether it can start, unallocated space after;",
	"                   FILTERS: -d and/or -m parts as btrfs balance start takes them,",
	"                   e.g. '-dusage=50,limit=2 -mconvert=dup,soft': usage=N, usage=MIN..MAX,",
	"                   limit=N, convert=P, soft",
	"--mount-options OPTS  what-if: the mount's discard and commit options (nodiscard,",
	"                   discard, discard=sync, discard=async, commit=N); default: what the",
	"                   kernel picks for the devices (live: the mount's options)",
	"--cleaner-uncommitted  the fills start after the cleaner deleted the empty block",
	"                   groups but before its transaction commits (their dev extents",
	"                   free only at the commit the first ENOSPC makes)",
	"--workload W       the metadata workload whose last reservation ends the metadata",
	"                   fill: create-xattr (default: empty files, one xattr each, an LSM",
	"                   active), create-xattr-nolsm, setxattr (xattrs on existing files)",
	"--fail-below data=SIZE,metadata=SIZE",
	"                   exit 3 when a type's writable bytes are below its limit",
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

enum {
	OPT_KERNEL = GETOPT_VAL_EXTRA,
	OPT_DATA_PROFILE,
	OPT_METADATA_PROFILE,
	OPT_FAIL_BELOW,
	OPT_BALANCE,
	OPT_MOUNT_OPTIONS,
	OPT_WORKLOAD,
	OPT_CLEANER_UNCOMMITTED,
};

static const struct option forecast_longopts[] = {
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "data-profile", required_argument, NULL, OPT_DATA_PROFILE },
	{ "metadata-profile", required_argument, NULL, OPT_METADATA_PROFILE },
	{ "fail-below", required_argument, NULL, OPT_FAIL_BELOW },
	{ "balance", required_argument, NULL, OPT_BALANCE },
	{ "mount-options", required_argument, NULL, OPT_MOUNT_OPTIONS },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "cleaner-uncommitted", no_argument, NULL, OPT_CLEANER_UNCOMMITTED },
	{ NULL, 0, NULL, 0 }
};

static const struct cmd_option_expect forecast_option_expect[] = {
	{ OPT_KERNEL, "a kernel version 5.12 or later, such as 6.1 or 6.18" },
	{ OPT_DATA_PROFILE, "single, dup, raid0, raid1, raid1c3, raid1c4, raid10, raid5 or raid6" },
	{ OPT_METADATA_PROFILE, "single, dup, raid0, raid1, raid1c3, raid1c4, raid10, raid5 or raid6" },
	{ OPT_FAIL_BELOW, "data=SIZE,metadata=SIZE (either or both)" },
	{ OPT_BALANCE, "-d and/or -m filters: usage=N, usage=MIN..MAX, limit=N, convert=P, soft" },
	{ OPT_MOUNT_OPTIONS, "nodiscard, discard, discard=sync, discard=async, commit=N, comma-separated" },
	{ OPT_WORKLOAD, "create-xattr, create-xattr-nolsm or setxattr" },
	{ 0, NULL }
};

struct forecast_args {
	struct forecast_options fc;
	bool data_limit_set;
	u64 data_limit;
	bool metadata_limit_set;
	u64 metadata_limit;
};

static int parse_profile(const char *arg, u64 *bits)
{
	int i;

	for (i = 0; i < BTRFS_NR_RAID_TYPES; i++) {
		if (!strcmp(arg, btrfs_raid_array[i].name)) {
			*bits = btrfs_raid_array[i].bg_flag;
			return 0;
		}
	}
	return -EINVAL;
}

/* data=SIZE,metadata=SIZE, either part optional, each at most once */
static int parse_fail_below(const char *arg, struct forecast_args *a)
{
	char buf[128], *tok, *save = NULL;

	/* strtok_r() would skip an empty part: refuse it here */
	if (strlen(arg) >= sizeof(buf) || arg[0] == ',' || strstr(arg, ",,") ||
	    (arg[0] && arg[strlen(arg) - 1] == ','))
		return -EINVAL;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "data=", 5) && !a->data_limit_set) {
			if (parse_size(tok + 5, &a->data_limit))
				return -EINVAL;
			a->data_limit_set = true;
		} else if (!strncmp(tok, "metadata=", 9) && !a->metadata_limit_set) {
			if (parse_size(tok + 9, &a->metadata_limit))
				return -EINVAL;
			a->metadata_limit_set = true;
		} else {
			return -EINVAL;
		}
	}
	return a->data_limit_set || a->metadata_limit_set ? 0 : -EINVAL;
}

static int parse_percent(const char *s, const char *end, u32 *out)
{
	u64 v = 0;

	if (s == end)
		return -EINVAL;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (*s - '0');
		if (v > 100)
			return -EINVAL;
	}
	*out = (u32)v;
	return 0;
}

/* usage=N or usage=MIN..MAX, either end of the range optional (btrfs-progs) */
static int parse_usage(const char *val, struct forecast_balance_args *b)
{
	const char *dots = strstr(val, "..");
	u32 v;

	if (!dots) {
		if (parse_percent(val, val + strlen(val), &v))
			return -EINVAL;
		b->flags |= FORECAST_BAL_USAGE;
		b->usage = v;
		return 0;
	}
	b->usage_min = 0;
	b->usage_max = 100;
	if (dots != val && parse_percent(val, dots, &b->usage_min))
		return -EINVAL;
	if (dots[2] && parse_percent(dots + 2, dots + 2 + strlen(dots + 2), &b->usage_max))
		return -EINVAL;
	if (b->usage_min > b->usage_max)
		return -EINVAL;
	b->flags |= FORECAST_BAL_USAGE_RANGE;
	return 0;
}

static int parse_balance_filter(char *tok, struct forecast_balance_args *b)
{
	char *val = strchr(tok, '=');

	if (val)
		*val++ = 0;
	if (!strcmp(tok, "soft") && !val) {
		b->flags |= FORECAST_BAL_SOFT;
		return 0;
	}
	if (!val || !*val)
		return -EINVAL;
	if (!strcmp(tok, "usage"))
		return parse_usage(val, b);
	if (!strcmp(tok, "limit")) {
		if (parse_u64(val, &b->limit))
			return -EINVAL;
		b->flags |= FORECAST_BAL_LIMIT;
		return 0;
	}
	if (!strcmp(tok, "convert")) {
		b->flags |= FORECAST_BAL_CONVERT;
		return parse_profile(val, &b->target);
	}
	return -EINVAL;
}

/* "-dFILTERS -mFILTERS": each part once; an empty part selects every chunk */
static int parse_balance(const char *arg, struct forecast_options *fc)
{
	char buf[512], *part, *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	for (part = strtok_r(buf, " ", &save); part; part = strtok_r(NULL, " ", &save)) {
		struct forecast_balance_args *b;
		char *tok, *save2 = NULL;

		if (part[0] != '-' || (part[1] != 'd' && part[1] != 'm'))
			return -EINVAL;
		b = part[1] == 'd' ? &fc->bal_data : &fc->bal_meta;
		if (b->set)
			return -EINVAL;
		b->set = true;
		part += 2;
		if (*part == ',' || strstr(part, ",,") ||
		    (*part && part[strlen(part) - 1] == ','))
			return -EINVAL;
		for (tok = strtok_r(part, ",", &save2); tok; tok = strtok_r(NULL, ",", &save2))
			if (parse_balance_filter(tok, b))
				return -EINVAL;
		if ((b->flags & FORECAST_BAL_SOFT) && !(b->flags & FORECAST_BAL_CONVERT))
			return -EINVAL;
	}
	return fc->bal_data.set || fc->bal_meta.set ? 0 : -EINVAL;
}

static int forecast_option(int opt, const char *arg, void *ctx)
{
	struct forecast_args *a = ctx;
	enum forecast_workload w;
	u32 version;

	switch (opt) {
	case OPT_KERNEL:
		if (btrfs_parse_kernel_version(arg, &version) ||
		    version < KERNEL_VERSION(5, 12, 0))
			return -EINVAL;
		a->fc.kernel_version = version;
		return 0;
	case OPT_DATA_PROFILE:
		a->fc.data_profile_set = true;
		return parse_profile(arg, &a->fc.data_profile);
	case OPT_METADATA_PROFILE:
		a->fc.metadata_profile_set = true;
		return parse_profile(arg, &a->fc.metadata_profile);
	case OPT_FAIL_BELOW:
		return parse_fail_below(arg, a);
	case OPT_BALANCE:
		return parse_balance(arg, &a->fc);
	case OPT_MOUNT_OPTIONS:
		return btrfs_parse_mount_discard(arg, &a->fc.mount);
	case OPT_CLEANER_UNCOMMITTED:
		a->fc.cleaner_uncommitted = true;
		return 0;
	case OPT_WORKLOAD:
		for (w = 0; w < FORECAST_NR_WORKLOADS; w++) {
			if (strcmp(arg, forecast_workload_name(w)))
				continue;
			a->fc.workload = w;
			return 0;
		}
		return -EINVAL;
	default:
		return -EINVAL;
	}
}

static void print_chunk(struct fmt_ctx *fctx, const struct btrfs_chunk_map *map)
{
	u16 s;

	fmt_group_start(fctx, NULL, NULL);
	fmt_u64(fctx, "logical", "logical", map->start);
	fmt_size(fctx, "length", "length", map->length);
	fmt_str(fctx, "type", "type", btrfs_bg_type_name(map->type));
	fmt_str(fctx, "profile", "profile", btrfs_bg_profile_name(map->type));
	fmt_u64(fctx, "flags", NULL, map->type);
	fmt_size(fctx, "stripe_size", "stripe_size", map->stripe_size);
	fmt_array_start(fctx, "stripes", "stripes");
	for (s = 0; s < map->num_stripes; s++) {
		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", "devid", map->stripes[s].devid);
		fmt_u64(fctx, "offset", "offset", map->stripes[s].physical);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	fmt_group_end(fctx);
}

static void print_per_device(struct fmt_ctx *fctx, const char *key, const char *label,
			     const struct btrfs_forecast *fc, const u64 *bytes)
{
	char k[24], l[32];
	u32 i;

	/* JSON: an object keyed by devid */
	fmt_group_start(fctx, key, label);
	for (i = 0; i < fc->nr_devs; i++) {
		snprintf(k, sizeof(k), "%llu", (unsigned long long)fc->devids[i]);
		snprintf(l, sizeof(l), "devid %llu", (unsigned long long)fc->devids[i]);
		fmt_size(fctx, k, l, bytes[i]);
	}
	fmt_group_end(fctx);
}

static void print_fill(struct fmt_ctx *fctx, const char *key, const char *label,
		       const struct btrfs_forecast *fc, const struct forecast_fill *fill)
{
	u32 i;

	if (!fill->present)
		return;
	fmt_group_start(fctx, key, label);
	fmt_str(fctx, "space_info", "Space info", fill->name);
	fmt_str(fctx, "profile", "Profile", btrfs_bg_profile_name(fill->profile));
	fmt_size(fctx, "writable_bytes", "Writable", fill->writable_bytes);
	fmt_size(fctx, "free_existing", "Free in block groups", fill->free_existing);
	fmt_size(fctx, "new_chunk_bytes", "In new chunks", fill->new_chunk_bytes);
	if (fill->type == BTRFS_BLOCK_GROUP_METADATA)
		fmt_size(fctx, "global_rsv_held", "Held by global reserve", fill->global_rsv_held);
	fmt_size(fctx, "writable_if_kept", "Writable if unused kept", fill->writable_if_kept);
	if (fill->workload) {
		fmt_str(fctx, "workload", "Workload", fill->workload);
		fmt_u64(fctx, "workload_items", "Items of its largest transaction",
			fill->workload_items);
		fmt_size(fctx, "last_reservation", "Its reservation (the last that fits)",
			 fill->last_reservation);
		fmt_size(fctx, "workload_writable_bytes", "Writable by the workload",
			 fill->workload_writable_bytes);
	}
	fmt_u64(fctx, "nr_new_chunks", "Number of new chunks", fill->nr_chunks);
	if (fill->truncated || fctx->mode == FMT_JSON)
		fmt_bool(fctx, "truncated", "Stopped before ENOSPC (chunk bound)", fill->truncated);
	fmt_array_start(fctx, "new_chunks", "New chunks");
	for (i = 0; i < fill->nr_chunks; i++)
		print_chunk(fctx, fill->chunks[i]);
	fmt_array_end(fctx);
	print_per_device(fctx, "unallocatable_hard", "Unallocatable, hard", fc, fill->hard);
	print_per_device(fctx, "unallocatable_soft", "Unallocatable, soft", fc, fill->soft);
	fmt_group_end(fctx);
}

static void print_balance(struct fmt_ctx *fctx, const struct btrfs_forecast *fc)
{
	const struct forecast_balance *bal = &fc->balance;
	u32 i;

	if (!bal->present)
		return;
	fmt_group_start(fctx, "balance", "Balance what-if (formulas.md section 21.8)");
	fmt_u64(fctx, "nr_selected", "Block groups selected", bal->nr_selected);
	fmt_array_start(fctx, "selected", "Selected, in relocation order");
	for (i = 0; i < bal->nr_selected; i++)
		fmt_u64(fctx, "logical", "logical", bal->selected[i]);
	fmt_array_end(fctx);
	fmt_size(fctx, "moved_bytes", "Bytes moved", bal->moved_bytes);
	fmt_bool(fctx, "can_start", "Can start (a chunk of each target profile fits)",
		 bal->can_start);
	fmt_u64(fctx, "nr_new_chunks", "New chunks for what does not fit", bal->nr_new_chunks);
	fmt_size(fctx, "new_chunk_bytes", "Their usable bytes", bal->new_chunk_bytes);
	fmt_size(fctx, "unplaced_bytes", "Moved bytes no chunk can take (ENOSPC)",
		 bal->unplaced_bytes);
	fmt_bool(fctx, "exact", "Exact (moved bytes fit existing free space)", bal->exact);
	fmt_str(fctx, "accuracy", "Accuracy", bal->exact ?
		"exact: the moved extents fit the free space of the block groups kept" :
		"estimate: per device the new chunks' bytes (may_differ) may be placed otherwise");
	print_per_device(fctx, "unallocated_after", "Unallocated after", fc,
			 bal->unallocated_after);
	print_per_device(fctx, "may_differ", "May differ by", fc, bal->may_differ);
	fmt_group_end(fctx);
}

/*
 * Live mode: each space info's reclaim and size-class files of sysfs
 * allocation/, as read (formulas.md section 21.4)
 */
static void print_reclaim(struct fmt_ctx *fctx, const struct btrfs_live *live)
{
	int i, k;

	if (!live)
		return;
	fmt_group_start(fctx, "reclaim", "The kernel's reclaim (sysfs allocation/TYPE, live)");
	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++) {
		const struct btrfs_live_space_info *s = &live->sysfs[i];

		if (!s->present)
			continue;
		fmt_group_start(fctx, btrfs_space_info_name(i), btrfs_space_info_name(i));
		for (k = 0; k < BTRFS_LIVE_NR_RECLAIM; k++)
			if (s->has_reclaim[k])
				fmt_u64(fctx, btrfs_live_reclaim_files[k],
					btrfs_live_reclaim_files[k], s->reclaim[k]);
		if (s->has_size_classes) {
			fmt_group_start(fctx, "size_classes", "size_classes");
			for (k = 0; k < BTRFS_LIVE_NR_SIZE_CLASSES; k++)
				fmt_u64(fctx, btrfs_live_size_classes[k],
					btrfs_live_size_classes[k], s->size_classes[k]);
			fmt_group_end(fctx);
		}
		fmt_group_end(fctx);
	}
	fmt_group_end(fctx);
}

void print_forecast_section(struct fmt_ctx *fctx, const struct btrfs_forecast *fc)
{
	char version[32];
	u32 i;

	fmt_group_start(fctx, "forecast", "Forecast (formulas.md section 21)");
	fmt_str(fctx, "kernel", "Kernel",
		btrfs_kernel_version_str(fc->kernel_version, version, sizeof(version)));
	fmt_group_start(fctx, "mount", "After a mount (formulas.md section 21.4)");
	fmt_str(fctx, "discard", "Discard", btrfs_discard_mode_name(fc->discard));
	fmt_str(fctx, "discard_source", "Discard from", fc->discard_why);
	fmt_u64(fctx, "empty_block_groups", "Empty block groups", fc->nr_empty_bgs);
	fmt_str(fctx, "empty_block_groups_fate", "They are", fc->cleaner_deletes ?
		"marked unused: the cleaner deletes each it may (the rest of a profile's list, "
		"space reserved) within commit seconds" :
		"queued for discard before discard runs: on no list, kept until used");
	fmt_u64(fctx, "commit_interval", "Cleaner woken every (s, commit=)", fc->commit_interval);
	fmt_bool(fctx, "cleaner_committed", "Fills start after the deletions commit",
		 !fc->cleaner_uncommitted);
	fmt_group_end(fctx);
	print_reclaim(fctx, fc->live);
	fmt_array_start(fctx, "unused_block_groups", "Deleted by the cleaner after mount");
	for (i = 0; i < fc->nr_unused_bgs; i++) {
		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "start", "start", fc->unused_bgs[i]);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	print_fill(fctx, "data_fill", "Data fill (nothing else growing)", fc, &fc->data);
	print_fill(fctx, "metadata_fill", "Metadata fill (nothing else growing)", fc,
		   &fc->metadata);
	if (fc->mixed_estimate_present) {
		fmt_group_start(fctx, "mixed_estimate",
				"Data with metadata at the current ratio (an estimate)");
		fmt_ratio(fctx, "metadata_ratio", "Metadata per data byte", fc->metadata_ratio);
		fmt_size(fctx, "data_bytes", "Data", fc->mixed_data_bytes);
		fmt_size(fctx, "metadata_bytes", "Metadata", fc->mixed_metadata_bytes);
		fmt_group_end(fctx);
	}
	print_balance(fctx, fc);
	fmt_group_end(fctx);
}

/* One line naming what is below which limit; returns 3 when any is */
static int check_limits(const struct forecast_args *a, const struct btrfs_forecast *fc,
			unsigned int units)
{
	const struct forecast_fill *meta = fc->metadata.present ? &fc->metadata : &fc->data;
	char line[256] = "", have[64], limit[64];
	int ret = 0;

	if (a->data_limit_set && fc->data.writable_bytes < a->data_limit) {
		pretty_size_mode(fc->data.writable_bytes, units, have, sizeof(have));
		pretty_size_mode(a->data_limit, units, limit, sizeof(limit));
		snprintf(line, sizeof(line), "%s can grow by %s, below data=%s",
			 fc->data.name, have, limit);
		ret = EXIT_BELOW_LIMIT;
	}
	if (a->metadata_limit_set && meta->writable_bytes < a->metadata_limit) {
		size_t len = strlen(line);

		pretty_size_mode(meta->writable_bytes, units, have, sizeof(have));
		pretty_size_mode(a->metadata_limit, units, limit, sizeof(limit));
		snprintf(line + len, sizeof(line) - len, "%s%s can grow by %s, below metadata=%s",
			 len ? "; " : "", meta->name, have, limit);
		ret = EXIT_BELOW_LIMIT;
	}
	if (ret)
		error("forecast: %s", line);
	return ret;
}

/* What forecast is asked and what it builds */
struct forecast_ctx {
	struct forecast_args args;
	struct space_report report;
	struct btrfs_forecast fc;
};

static int forecast_ctx_option(int opt, const char *arg, void *ctx)
{
	struct forecast_ctx *c = ctx;

	return forecast_option(opt, arg, &c->args);
}

static int forecast_report(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
			   void *ctx)
{
	struct forecast_ctx *c = ctx;
	struct report_options ropts;

	report_options_init(&ropts);
	ropts.kernel_version = c->args.fc.kernel_version;
	if (btrfs_build_space_report(fs_info, &ropts, &c->report))
		return cmd_out_of_memory();
	if (btrfs_build_forecast(&c->report, &c->args.fc, &c->fc)) {
		btrfs_free_space_report(&c->report);
		return cmd_out_of_memory();
	}
	return 0;
}

static void forecast_print(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
			   void *ctx)
{
	struct forecast_ctx *c = ctx;

	print_forecast_section(fctx, &c->fc);
}

static int forecast_verdict(const struct cmd_options *opts, void *ctx)
{
	struct forecast_ctx *c = ctx;

	return check_limits(&c->args, &c->fc, opts->units);
}

static void forecast_release(void *ctx)
{
	struct forecast_ctx *c = ctx;

	btrfs_free_forecast(&c->fc);
	btrfs_free_space_report(&c->report);
}

static const struct cmd_spec forecast_spec = {
	.longopts = forecast_longopts,
	.expect = forecast_option_expect,
	.handle = forecast_ctx_option,
	.block_groups = cmd_want_block_groups,
	.report = forecast_report,
	.print = forecast_print,
	.verdict = forecast_verdict,
	.release = forecast_release,
	.close = btrfs_close_fs,	/* -v has never listed what forecast read */
};

static int cmd_forecast(const struct cmd_struct *cmd, const struct cmd_options *global,
			int argc, char **argv)
{
	struct forecast_ctx c = { 0 };

	forecast_options_init(&c.args.fc);
	return cmd_run(cmd, global, argc, argv, &forecast_spec, &c);
}
DEFINE_COMMAND(forecast, "forecast");
