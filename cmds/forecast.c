// SPDX-License-Identifier: GPL-2.0
/*
 * forecast: what can still be written before ENOSPC, the chunks the
 * kernel will make on the way, and what no chunk can use
 * (kernel-shared/forecast.c; formulas.md section 21).
 */
#include <errno.h>
#include <stddef.h>
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
#include "kernel-shared/mkfs-layout.h"
#include "kernel-shared/live.h"
#include "kernel-shared/volumes.h"

static const char * const cmd_forecast_usage[] = {
	"btrfs-space forecast [options] <device|image> [<device|image>...]",
	"btrfs-space forecast [options] --devices SIZE[,SIZE...]",
	"Replay the kernel's chunk allocator: bytes writable before ENOSPC per type, the chunks made on the way, space no chunk can use",
	"",
	HELPINFO_GLOBALS,
	"--kernel VERSION   kernel whose allocator to replay: " BTRFS_MIN_KERNEL_STR " to " BTRFS_MAX_KERNEL_STR " (default " BTRFS_DEFAULT_KERNEL_STR ")",
	"--devices SIZE,...  plan: no device is read; the filesystem mkfs.btrfs " BTRFS_MKFS_LAYOUT_PROGS,
	"                   makes on empty devices of these sizes (devid 1 first),",
	"                   with --data-profile and --metadata-profile as its -d and",
	"                   -m (defaults as mkfs: single data, DUP or RAID1 metadata)",
	"--data-profile P   what-if: new data chunks of profile P (single, dup, raid0, raid1,",
	"                   raid1c3, raid1c4, raid10, raid5, raid6)",
	"--metadata-profile P  what-if: new metadata chunks of profile P",
	"--balance FILTERS  what-if: the block groups a balance with these filters relocates,",
	"                   the bytes moved, whether it can start, unallocated space after;",
	"                   FILTERS: -d and/or -m parts as btrfs balance start takes them,",
	"                   e.g. '-dusage=50,limit=2 -mconvert=dup,soft': usage=N, usage=MIN..MAX,",
	"                   limit=N, convert=P, soft; -f allows reducing metadata redundancy",
	"--remove DEVID     what-if: btrfs device remove DEVID: success or ENOSPC, the chunks",
	"                   relocated, unallocated space after",
	"--resize DEVID:SIZE  what-if: btrfs filesystem resize DEVID:SIZE shrinking the device",
	"--list-chunks      every new chunk, and every block group of the reclaim what-if,",
	"                   one by one, instead of runs",
	"--mount-options OPTS  what-if: the mount's discard and commit options (nodiscard,",
	"                   discard, discard=sync, discard=async, commit=N); default: what the",
	"                   kernel picks for the devices (live: the mount's options)",
	"--cleaner-uncommitted  the fills start after the cleaner deleted the empty block",
	"                   groups but before its transaction commits (their dev extents",
	"                   free only at the commit the first ENOSPC makes)",
	"--workload W       the metadata workload whose last reservation ends the metadata",
	"                   fill: create-xattr (default: empty files, one xattr each, an LSM",
	"                   active), create-xattr-nolsm, setxattr (xattrs on existing files)",
	"--reclaim-threshold TYPE=PCT  what-if: bg_reclaim_threshold of space info TYPE",
	"                   (data, metadata, system, mixed), 0 to 100 (5.19+)",
	"--dynamic-reclaim TYPE  what-if: dynamic_reclaim on for TYPE (6.11+)",
	"--periodic-reclaim TYPE  what-if: periodic_reclaim on for TYPE (6.11+)",
	"--reclaim-marked START[,START...]  what-if: these block groups are on the kernel's",
	"                   reclaim list (marked by frees made since): where their relocation",
	"                   puts the bytes, the block groups and unallocated space after",
	"--full-at-mount START[,START...]  what-if: these block groups were full when the",
	"                   filesystem was mounted and freed since: cached without their",
	"                   extents read, no size class until an allocation in them (the",
	"                   relocation replays skip them in find_free_extent()'s first loops)",
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
	OPT_DEVICES,
	OPT_LIST_CHUNKS,
	OPT_REMOVE,
	OPT_RESIZE,
	OPT_MOUNT_OPTIONS,
	OPT_WORKLOAD,
	OPT_CLEANER_UNCOMMITTED,
	OPT_RECLAIM_THRESHOLD,
	OPT_DYNAMIC_RECLAIM,
	OPT_PERIODIC_RECLAIM,
	OPT_RECLAIM_MARKED,
	OPT_FULL_AT_MOUNT,
};

static const struct option forecast_longopts[] = {
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "data-profile", required_argument, NULL, OPT_DATA_PROFILE },
	{ "metadata-profile", required_argument, NULL, OPT_METADATA_PROFILE },
	{ "fail-below", required_argument, NULL, OPT_FAIL_BELOW },
	{ "balance", required_argument, NULL, OPT_BALANCE },
	{ "devices", required_argument, NULL, OPT_DEVICES },
	{ "list-chunks", no_argument, NULL, OPT_LIST_CHUNKS },
	{ "remove", required_argument, NULL, OPT_REMOVE },
	{ "resize", required_argument, NULL, OPT_RESIZE },
	{ "mount-options", required_argument, NULL, OPT_MOUNT_OPTIONS },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "cleaner-uncommitted", no_argument, NULL, OPT_CLEANER_UNCOMMITTED },
	{ "reclaim-threshold", required_argument, NULL, OPT_RECLAIM_THRESHOLD },
	{ "dynamic-reclaim", required_argument, NULL, OPT_DYNAMIC_RECLAIM },
	{ "periodic-reclaim", required_argument, NULL, OPT_PERIODIC_RECLAIM },
	{ "reclaim-marked", required_argument, NULL, OPT_RECLAIM_MARKED },
	{ "full-at-mount", required_argument, NULL, OPT_FULL_AT_MOUNT },
	{ NULL, 0, NULL, 0 }
};

static const struct cmd_option_expect forecast_option_expect[] = {
	{ OPT_KERNEL, BTRFS_KERNEL_RANGE_STR ", such as 6.1 or 6.18" },
	{ OPT_DATA_PROFILE, "single, dup, raid0, raid1, raid1c3, raid1c4, raid10, raid5 or raid6" },
	{ OPT_METADATA_PROFILE, "single, dup, raid0, raid1, raid1c3, raid1c4, raid10, raid5 or raid6" },
	{ OPT_FAIL_BELOW, "data=SIZE,metadata=SIZE (either or both)" },
	{ OPT_BALANCE, "-d and/or -m filters: usage=N, usage=MIN..MAX, limit=N, convert=P, soft; -f" },
	{ OPT_REMOVE, "a devid" },
	{ OPT_RESIZE, "DEVID:SIZE, a size smaller than the device's" },
	{ OPT_DEVICES, "device sizes separated by commas, such as 1G,2G,5G" },
	{ OPT_MOUNT_OPTIONS, "nodiscard, discard, discard=sync, discard=async, commit=N, comma-separated" },
	{ OPT_WORKLOAD, "create-xattr, create-xattr-nolsm or setxattr" },
	{ OPT_RECLAIM_THRESHOLD, "TYPE=PCT: data, metadata, system or mixed, 0 to 100" },
	{ OPT_DYNAMIC_RECLAIM, "data, metadata, system or mixed" },
	{ OPT_PERIODIC_RECLAIM, "data, metadata, system or mixed" },
	{ 0, NULL }
};

struct forecast_args {
	struct forecast_options fc;
	bool list_chunks;
	bool data_limit_set;
	u64 data_limit;
	bool metadata_limit_set;
	u64 metadata_limit;
	/* --devices: the planned filesystem's device sizes */
	u64 plan_sizes[BTRFS_MKFS_MAX_DEVICES];
	u32 nr_plan_sizes;
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

/* SIZE,SIZE,...: each a size, at most BTRFS_MKFS_MAX_DEVICES */
static int parse_devices(const char *arg, struct forecast_args *a)
{
	char buf[4096], *tok, *save = NULL;

	if (a->nr_plan_sizes || strlen(arg) >= sizeof(buf) || arg[0] == ',' ||
	    strstr(arg, ",,") || (arg[0] && arg[strlen(arg) - 1] == ','))
		return -EINVAL;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (a->nr_plan_sizes == BTRFS_MKFS_MAX_DEVICES ||
		    parse_size(tok, &a->plan_sizes[a->nr_plan_sizes]))
			return -EINVAL;
		a->nr_plan_sizes++;
	}
	return a->nr_plan_sizes ? 0 : -EINVAL;
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

		if (!strcmp(part, "-f") && !fc->bal_force) {
			fc->bal_force = true;
			continue;
		}
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

/* --remove DEVID or --resize DEVID:SIZE, one of them once */
static int parse_shrink(const char *arg, bool remove, struct forecast_options *fc)
{
	char buf[64], *colon;

	if (fc->shrink_set || strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	colon = strchr(buf, ':');
	if (remove == (colon != NULL))
		return -EINVAL;
	if (colon) {
		*colon = 0;
		if (parse_size(colon + 1, &fc->shrink_size))
			return -EINVAL;
	}
	if (parse_u64(buf, &fc->shrink_devid) || !fc->shrink_devid)
		return -EINVAL;
	fc->shrink_set = true;
	fc->shrink_remove = remove;
	return 0;
}

/* A space info by its sysfs name: data, metadata, system, mixed */
static int parse_space_info(const char *arg, size_t len)
{
	int i;

	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++) {
		const char *name = btrfs_space_info_name(i);

		if (strlen(name) == len && !strncmp(arg, name, len))
			return i;
	}
	return -EINVAL;
}

/* --reclaim-threshold TYPE=PCT, --dynamic-reclaim TYPE, --periodic-reclaim TYPE */
static int parse_reclaim(int opt, const char *arg, struct forecast_options *fc)
{
	const char *eq = strchr(arg, '=');
	unsigned long pct;
	char *end;
	int i;

	if (opt != OPT_RECLAIM_THRESHOLD) {
		i = parse_space_info(arg, strlen(arg));
		if (i < 0)
			return i;
		if (opt == OPT_DYNAMIC_RECLAIM)
			fc->dynamic_reclaim_set[i] = true;
		else
			fc->periodic_reclaim_set[i] = true;
		return 0;
	}
	if (!eq)
		return -EINVAL;
	i = parse_space_info(arg, eq - arg);
	if (i < 0 || !eq[1])
		return -EINVAL;
	errno = 0;
	pct = strtoul(eq + 1, &end, 10);
	if (errno || *end || pct > 100 || eq[1] == '-')
		return -EINVAL;
	fc->reclaim_threshold_set[i] = true;
	fc->reclaim[i].bg_reclaim_threshold = pct;
	return 0;
}

/* --reclaim-marked, --full-at-mount START[,START...]: logical starts, once */
static int parse_starts(const char *arg, u64 *starts, u32 *nr)
{
	const char *p = arg;

	if (*nr)
		return -EINVAL;
	for (;;) {
		char buf[32];
		size_t len = strcspn(p, ",");

		if (!len || len >= sizeof(buf) || *nr == FORECAST_MAX_RECLAIM_MARKED)
			return -EINVAL;
		memcpy(buf, p, len);
		buf[len] = 0;
		if (parse_u64(buf, &starts[(*nr)++]))
			return -EINVAL;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static int forecast_option(int opt, const char *arg, void *ctx)
{
	struct forecast_args *a = ctx;
	enum forecast_workload w;
	u32 version;

	switch (opt) {
	case OPT_KERNEL:
		if (btrfs_parse_model_kernel(arg, &version))
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
	case OPT_DEVICES:
		return parse_devices(arg, a);
	case OPT_LIST_CHUNKS:
		a->list_chunks = true;
		return 0;
	case OPT_REMOVE:
	case OPT_RESIZE:
		return parse_shrink(arg, opt == OPT_REMOVE, &a->fc);
	case OPT_MOUNT_OPTIONS:
		return btrfs_parse_mount_discard(arg, &a->fc.mount);
	case OPT_CLEANER_UNCOMMITTED:
		a->fc.cleaner_uncommitted = true;
		return 0;
	case OPT_RECLAIM_THRESHOLD:
	case OPT_DYNAMIC_RECLAIM:
	case OPT_PERIODIC_RECLAIM:
		return parse_reclaim(opt, arg, &a->fc);
	case OPT_RECLAIM_MARKED:
		return parse_starts(arg, a->fc.reclaim_marked, &a->fc.nr_reclaim_marked);
	case OPT_FULL_AT_MOUNT:
		return parse_starts(arg, a->fc.full_at_mount, &a->fc.nr_full_at_mount);
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
	fmt_u64(fctx, "nr_new_chunk_runs", "In runs", fill->nr_runs);
	if (fill->truncated || fctx->mode == FMT_JSON)
		fmt_bool(fctx, "truncated", "Stopped before ENOSPC (work bound)", fill->truncated);
	if (fc->list_chunks) {
		fmt_array_start(fctx, "new_chunks", "New chunks");
		for (i = 0; i < fill->nr_runs; i++)
			print_run_chunks(fctx, &fill->runs[i]);
		fmt_array_end(fctx);
	} else {
		/* the same table as the chunks command's */
		fmt_table_start(fctx, "new_chunks", "New chunks, as runs");
		for (i = 0; i < fill->nr_runs; i++)
			print_run_row(fctx, &fill->runs[i]);
		fmt_table_end(fctx);
	}
	print_per_device(fctx, "unallocatable_hard", "Unallocatable, hard", fc, fill->hard);
	print_per_device(fctx, "unallocatable_soft", "Unallocatable, soft", fc, fill->soft);
	fmt_group_end(fctx);
}

static void print_bg_after(struct fmt_ctx *fctx, const void *item)
{
	const struct btrfs_reloc_bg_after *bg = item;

	fmt_u64(fctx, "start", "start", bg->start);
	fmt_size(fctx, "length", "length", bg->length);
	fmt_str(fctx, "type", "type", btrfs_bg_type_name(bg->flags));
	fmt_str(fctx, "profile", "profile", btrfs_bg_profile_name(bg->flags));
	fmt_u64(fctx, "flags", NULL, bg->flags);
	fmt_size(fctx, "used", "used", bg->used);
	fmt_bool(fctx, "new", "new", bg->is_new);
}

static bool bg_after_same(const void *a, const void *b)
{
	const struct btrfs_reloc_bg_after *x = a, *y = b;

	return x->length == y->length && x->flags == y->flags && x->used == y->used &&
	       x->is_new == y->is_new;
}

/*
 * relocation.c's account: the chunks made, the block groups after; @each:
 * every block group, else runs of them (the reclaim what-if's, which may
 * hold every block group)
 */
static void print_reloc(struct fmt_ctx *fctx, const struct btrfs_forecast *fc,
			const struct btrfs_reloc_result *res, bool each)
{
	u32 i;

	print_u64_runs(fctx, "started", "Turned read-only",
		       res->started, res->nr_started, each);
	print_u64_runs(fctx, "relocated", "Relocated, in order", res->relocated,
		       res->nr_relocated, each);
	print_u64_runs(fctx, "failed", "ENOSPC while relocating", res->failed, res->nr_failed,
		       each);
	fmt_array_start(fctx, "new_chunks", "New chunks");
	for (i = 0; i < res->nr_new_chunks; i++)
		print_chunk(fctx, NULL, NULL, res->new_chunks[i]);
	fmt_array_end(fctx);
	if (!each) {
		print_item_runs(fctx, "block_groups_after", "Block groups after", res->bgs,
				res->nr_bgs, sizeof(*res->bgs),
				offsetof(struct btrfs_reloc_bg_after, start), bg_after_same,
				print_bg_after);
	} else {
		fmt_array_start(fctx, "block_groups_after", "Block groups after");
		for (i = 0; i < res->nr_bgs; i++) {
			fmt_group_start(fctx, NULL, NULL);
			print_bg_after(fctx, &res->bgs[i]);
			fmt_group_end(fctx);
		}
		fmt_array_end(fctx);
	}
	print_per_device(fctx, "unallocated_after", "Unallocated after", fc,
			 res->unallocated_after);
	fmt_bool(fctx, "extents_read", "Extents read", res->extents_read);
	fmt_str(fctx, "inexact_reason", "Not exact because",
		res->exact && res->extents_read ? "-" : res->inexact_reason);
}

static void print_balance(struct fmt_ctx *fctx, const struct btrfs_forecast *fc)
{
	const struct forecast_balance *bal = &fc->balance;

	if (!bal->present)
		return;
	fmt_group_start(fctx, "balance", "Balance what-if (formulas.md section 21.8)");
	fmt_u64(fctx, "nr_selected", "Block groups selected", bal->nr_selected);
	print_u64_runs(fctx, "selected", "Selected, in relocation order", bal->selected,
		       bal->nr_selected, true);
	fmt_size(fctx, "moved_bytes", "Bytes moved", bal->moved_bytes);
	fmt_bool(fctx, "can_start", "Can start", bal->can_start);
	fmt_bool(fctx, "completes", "Completes", bal->completes);
	fmt_str(fctx, "reason", "Outcome", bal->reason);
	fmt_u64(fctx, "nr_new_chunks", "Number of new chunks", bal->nr_new_chunks);
	fmt_size(fctx, "new_chunk_bytes", "Their usable bytes", bal->new_chunk_bytes);
	fmt_size(fctx, "unplaced_bytes", "Used in ENOSPC groups",
		 bal->unplaced_bytes);
	fmt_size(fctx, "data_free_after", "Data free after",
		 bal->data_free_after);
	fmt_bool(fctx, "exact", "Exact", bal->exact);
	fmt_str(fctx, "accuracy", "Accuracy", bal->exact ?
		"exact: each extent placed as find_free_extent() places it" :
		"estimate: per device the new chunks' bytes, and metadata groups a usage filter may take or leave (may_differ), may be placed otherwise");
	print_reloc(fctx, fc, &bal->res, true);
	print_per_device(fctx, "may_differ", "May differ by", fc, bal->may_differ);
	fmt_group_end(fctx);
}

static void print_shrink(struct fmt_ctx *fctx, const struct btrfs_forecast *fc)
{
	const struct forecast_shrink *sh = &fc->shrink;

	if (!sh->present)
		return;
	fmt_group_start(fctx, "shrink", sh->remove ?
			"Device remove what-if (formulas.md section 21.13)" :
			"Device shrink what-if (formulas.md section 21.13)");
	fmt_str(fctx, "operation", "Operation", sh->remove ? "remove" : "resize");
	fmt_u64(fctx, "devid", "Devid", sh->devid);
	fmt_size(fctx, "new_size", "New size", sh->new_size);
	fmt_bool(fctx, "can_start", "Can start", sh->can_start);
	fmt_bool(fctx, "completes", "Succeeds", sh->completes);
	fmt_str(fctx, "reason", "Outcome", sh->reason);
	print_u64_runs(fctx, "selected", "Tried, in relocation order", sh->res.selected,
		       sh->res.nr_selected, true);
	fmt_u64(fctx, "nr_relocated", "Chunks relocated", sh->res.nr_relocated);
	fmt_size(fctx, "moved_bytes", "Bytes moved", sh->res.moved_bytes);
	fmt_bool(fctx, "exact", "Exact",
		 sh->res.exact && sh->res.extents_read);
	print_reloc(fctx, fc, &sh->res, true);
	fmt_group_end(fctx);
}

static void print_candidate(struct fmt_ctx *fctx, const void *item)
{
	const struct btrfs_reclaim_candidate *c = item;

	fmt_u64(fctx, "start", "start", c->start);
	fmt_size(fctx, "length", "length", c->length);
	fmt_size(fctx, "used", "used (moved)", c->used);
	fmt_str(fctx, "profile", "profile", btrfs_bg_profile_name(c->flags));
	fmt_str(fctx, "when", "when", btrfs_reclaim_when_name(c->when));
	if (c->when == BTRFS_RECLAIM_ON_FREE || c->when == BTRFS_RECLAIM_ON_FREE_ARMED)
		fmt_size(fctx, "free_to_mark", "free to mark", c->free_to_mark);
	else
		fmt_bool(fctx, "may_be_skipped", "may be skipped", c->may_be_skipped);
}

static bool candidate_same(const void *a, const void *b)
{
	const struct btrfs_reclaim_candidate *x = a, *y = b;

	return x->length == y->length && x->used == y->used && x->flags == y->flags &&
	       x->when == y->when && x->free_to_mark == y->free_to_mark &&
	       x->may_be_skipped == y->may_be_skipped;
}

/* Each candidate, or (@each false) runs of candidates alike */
static void print_reclaim_candidates(struct fmt_ctx *fctx, const char *key,
				     const char *label,
				     const struct btrfs_reclaim_candidate *v, u32 nr,
				     bool each)
{
	u32 i;

	if (!each) {
		print_item_runs(fctx, key, label, v, nr, sizeof(*v),
				offsetof(struct btrfs_reclaim_candidate, start), candidate_same,
				print_candidate);
		return;
	}
	fmt_array_start(fctx, key, label);
	for (i = 0; i < nr; i++) {
		fmt_group_start(fctx, NULL, NULL);
		print_candidate(fctx, &v[i]);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

/* The sysfs files as read (live mode): reclaim and size classes */
static void print_reclaim_sysfs(struct fmt_ctx *fctx, const struct btrfs_live_space_info *s)
{
	int k;

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
}

/*
 * What the plan means for an administrator, in one sentence: what the
 * kernel relocates by itself and what sets it off (formulas.md 21.14)
 */
static void reclaim_outlook(const struct fmt_ctx *fctx, const struct btrfs_reclaim_plan *p,
			    char *out, size_t len)
{
	char size[64];

	if (p->arm_bytes && p->armed_pct && p->sweeps) {
		char which[160] = "any block group the frees take below it";

		if (p->nr_sweep)
			snprintf(which, sizeof(which), "%u block groups below it (%s), and any other once below",
				 p->nr_sweep,
				 pretty_size_mode(p->sweep_bytes, fctx->units, size, sizeof(size)));
		snprintf(out, len, "nothing yet (threshold 0: less than a data chunk unused); a sweep waits for a data chunk freed and committed and then sees %u %%: the cleaner's %s then relocates %s (it stays 0 if those frees empty block groups the cleaner deletes)",
			 p->armed_pct,
			 btrfs_reclaim_when_name(p->urgent ? BTRFS_RECLAIM_FIRST_SWEEP :
						 BTRFS_RECLAIM_SECOND_SWEEP), which);
	} else if (p->arm_bytes && p->armed_pct) {
		snprintf(out, len, "nothing yet (threshold 0: less than a data chunk unused); after %s more freed and committed it is %u %%: a free then taking one of %u block groups below it makes the kernel relocate that one",
			 pretty_size_mode(p->arm_bytes, fctx->units, size, sizeof(size)),
			 p->armed_pct, p->nr_on_free);
	} else if (!p->thresh_pct && !p->knobs.dynamic_reclaim) {
		snprintf(out, len, "off: the kernel relocates nothing by itself");
	} else if (!p->thresh_pct) {
		snprintf(out, len, "nothing: the dynamic threshold is 0");
	} else if (p->sweeps && !p->nr_sweep) {
		snprintf(out, len, "nothing now: no block group below %u %%; the cleaner's sweeps relocate any once below",
			 p->thresh_pct);
	} else if (p->sweeps) {
		snprintf(out, len, "the cleaner's %s relocates %u block groups below %u %% (%s), and any other once below",
			 btrfs_reclaim_when_name(p->urgent ? BTRFS_RECLAIM_FIRST_SWEEP :
						 BTRFS_RECLAIM_SECOND_SWEEP),
			 p->nr_sweep, p->thresh_pct,
			 pretty_size_mode(p->sweep_bytes, fctx->units, size, sizeof(size)));
	} else {
		snprintf(out, len, "nothing until a free takes one of %u block groups below %u %%: the kernel then relocates that one (the %u already below never)",
			 p->nr_on_free, p->thresh_pct, p->nr_below_unswept);
	}
}

static void print_reclaim_plan(struct fmt_ctx *fctx, const struct btrfs_reclaim_plan *p,
			       const char *source, bool each)
{
	char outlook[512];

	reclaim_outlook(fctx, p, outlook, sizeof(outlook));
	fmt_str(fctx, "outlook", "In short", outlook);
	fmt_str(fctx, "knobs_from", "Knobs from", source);
	fmt_u64(fctx, "threshold_knob", "bg_reclaim_threshold (%)",
		p->knobs.bg_reclaim_threshold);
	fmt_bool(fctx, "dynamic", "Dynamic reclaim", p->knobs.dynamic_reclaim);
	fmt_bool(fctx, "periodic", "Periodic reclaim", p->knobs.periodic_reclaim);
	if (p->knobs.dynamic_reclaim) {
		fmt_size(fctx, "dynamic_target", "Unallocated target", p->dyn_target);
		fmt_size(fctx, "dynamic_want", "Unallocated wanted", p->dyn_want);
		fmt_size(fctx, "unused", "Unused in the space info", p->unused);
	}
	fmt_u64(fctx, "threshold_pct", "Threshold in effect (%)", p->thresh_pct);
	if (p->arm_bytes) {
		fmt_size(fctx, "arm_bytes", "To free and commit before it is not 0",
			 p->arm_bytes);
		fmt_u64(fctx, "armed_pct", "Threshold then (%)", p->armed_pct);
	}
	fmt_size(fctx, "chunk_size", "Effective data chunk size", p->chunk_size);
	/* is_reclaim_urgent() only matters to a sweep: no alarm without one */
	if (p->sweeps || fctx->mode != FMT_TEXT)
		fmt_bool(fctx, "urgent", "Urgent (unallocated < chunk size)", p->urgent);
	fmt_bool(fctx, "sweeps", "Swept by the cleaner", p->sweeps);
	print_reclaim_candidates(fctx, "sweep", "Relocated by a sweep, in order",
				 p->sweep, p->nr_sweep, each);
	fmt_size(fctx, "sweep_bytes", "Bytes the sweep relocations move", p->sweep_bytes);
	print_reclaim_candidates(fctx, "on_free", "Marked when a free crosses the threshold",
				 p->on_free, p->nr_on_free, each);
	fmt_u64(fctx, "below_unswept", "Below the threshold, never marked",
		p->nr_below_unswept);
	fmt_u64(fctx, "above_swept", "At or above it, periodic: a sweep's once below",
		p->nr_above_swept);
}

/* The reclaim list replayed: where the relocations put the bytes */
static void print_reclaim_after(struct fmt_ctx *fctx, const struct btrfs_forecast *fc)
{
	const struct forecast_reclaim_after *ra = &fc->reclaim_after;

	if (!ra->present)
		return;
	fmt_group_start(fctx, "after", "At the next reclaim run (relocation replayed)");
	print_u64_runs(fctx, "list", "On the reclaim list, in order", ra->list, ra->nr_list,
		       fc->list_chunks);
	print_u64_runs(fctx, "skipped", "Left when checked again", ra->skipped, ra->nr_skipped,
		       fc->list_chunks);
	fmt_size(fctx, "moved_bytes", "Bytes moved", ra->res.moved_bytes);
	fmt_bool(fctx, "completes", "No ENOSPC", ra->res.ret == 0);
	print_reloc(fctx, fc, &ra->res, fc->list_chunks);
	fmt_group_end(fctx);
}

/*
 * The kernel's own reclaim per space info (formulas.md section 21.14);
 * live mode adds each space info's reclaim and size-class files of sysfs
 * allocation/ as read (section 21.4)
 */
static void print_reclaim(struct fmt_ctx *fctx, const struct btrfs_forecast *fc)
{
	const struct btrfs_live *live = fc->live;
	int i;

	if (!live && !fc->reclaim_modelled)
		return;
	fmt_group_start(fctx, "reclaim", "The kernel's reclaim (formulas.md section 21.14)");
	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++) {
		const struct btrfs_live_space_info *s = live ? &live->sysfs[i] : NULL;
		bool sysfs = s && s->present;

		if (!sysfs && !fc->reclaim[i].present)
			continue;
		fmt_group_start(fctx, btrfs_space_info_name(i), btrfs_space_info_name(i));
		if (sysfs)
			print_reclaim_sysfs(fctx, s);
		if (fc->reclaim[i].present)
			print_reclaim_plan(fctx, &fc->reclaim[i], fc->reclaim_source[i],
					   fc->list_chunks);
		fmt_group_end(fctx);
	}
	print_reclaim_after(fctx, fc);
	fmt_group_end(fctx);
}

void print_forecast_section(struct fmt_ctx *fctx, const struct btrfs_forecast *fc)
{
	char version[32];
	u32 i;

	fmt_group_start(fctx, "forecast", "Forecast (formulas.md section 21)");
	fmt_str(fctx, "kernel", "Kernel",
		btrfs_kernel_version_str(fc->kernel_version, version, sizeof(version)));
	/* the answer first: the what-if asked for, then what can be written */
	print_balance(fctx, fc);
	print_shrink(fctx, fc);
	print_fill(fctx, "data_fill", "Data fill (nothing else growing)", fc, &fc->data);
	print_fill(fctx, "metadata_fill", "Metadata fill (nothing else growing)", fc,
		   &fc->metadata);
	if (fc->mixed_estimate_present) {
		fmt_group_start(fctx, "mixed_estimate",
				"Data with metadata at the current ratio (an estimate)");
		fmt_ratio(fctx, "metadata_ratio", "Metadata per data byte", fc->metadata_ratio);
		fmt_size(fctx, "data_bytes", "Data", fc->mixed_data_bytes);
		fmt_size(fctx, "metadata_bytes", "Metadata", fc->mixed_metadata_bytes);
		if (fc->mixed_truncated)
			fmt_bool(fctx, "truncated", "Stopped before ENOSPC (work bound)", true);
		fmt_group_end(fctx);
	}
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
	if (fc->has_tree_block_bg)
		fmt_u64(fctx, "tree_block_group", "Empty, kept: the cleaner's tree blocks go to",
			fc->tree_block_bg);
	fmt_group_end(fctx);
	fmt_array_start(fctx, "unused_block_groups", "Deleted by the cleaner after mount");
	for (i = 0; i < fc->nr_unused_bgs; i++) {
		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "start", "start", fc->unused_bgs[i]);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	print_reclaim(fctx, fc);
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

/* The planned filesystem as mkfs.btrfs leaves it: its devices and chunks */
static void print_mkfs_layout(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info)
{
	u32 i;

	fmt_group_start(fctx, "mkfs_layout", "Planned: mkfs.btrfs on empty devices (formulas.md section 21.10)");
	fmt_str(fctx, "progs", "btrfs-progs", BTRFS_MKFS_LAYOUT_PROGS);
	fmt_u64(fctx, "nodesize", "Node size", fs_info->nodesize);
	fmt_u64(fctx, "sectorsize", "Sector size", fs_info->sectorsize);
	fmt_array_start(fctx, "devices", "Devices");
	for (i = 0; i < fs_info->nr_devices; i++) {
		const struct btrfs_device *dev = &fs_info->devices[i];

		fmt_group_start(fctx, NULL, NULL);
		fmt_u64(fctx, "devid", "devid", dev->devid);
		fmt_size(fctx, "size", "size", dev->total_bytes);
		fmt_size(fctx, "allocated", "allocated", dev->bytes_used);
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
	fmt_array_start(fctx, "chunks", "Chunks");
	for (i = 0; i < fs_info->nr_chunks; i++)
		print_chunk(fctx, NULL, NULL, fs_info->chunks[i]);
	fmt_array_end(fctx);
	fmt_group_end(fctx);
}

/* JSON: --fail-below's limits, the figures and the result, one gate each */
static void print_forecast_gates(struct fmt_ctx *fctx, const struct forecast_args *a,
				 const struct btrfs_forecast *fc)
{
	const struct forecast_fill *meta = fc->metadata.present ? &fc->metadata : &fc->data;
	char limit[32], figure[32];

	if (fctx->mode != FMT_JSON || (!a->data_limit_set && !a->metadata_limit_set))
		return;
	fmt_array_start(fctx, "gates", NULL);
	if (a->data_limit_set) {
		snprintf(limit, sizeof(limit), "%llu", (unsigned long long)a->data_limit);
		snprintf(figure, sizeof(figure), "%llu", (unsigned long long)fc->data.writable_bytes);
		print_gate(fctx, "--fail-below", "data writable_bytes >= limit", limit, figure,
			   fc->data.writable_bytes < a->data_limit);
	}
	if (a->metadata_limit_set) {
		snprintf(limit, sizeof(limit), "%llu", (unsigned long long)a->metadata_limit);
		snprintf(figure, sizeof(figure), "%llu", (unsigned long long)meta->writable_bytes);
		print_gate(fctx, "--fail-below", "metadata writable_bytes >= limit", limit, figure,
			   meta->writable_bytes < a->metadata_limit);
	}
	fmt_array_end(fctx);
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

/* bg_reclaim_threshold per space info came with 5.19, the other two with 6.11 */
static int check_reclaim_kernel(const struct forecast_options *fc)
{
	int i;

	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++) {
		if (fc->reclaim_threshold_set[i] &&
		    fc->kernel_version < BTRFS_RECLAIM_THRESHOLD_KERNEL) {
			error("--reclaim-threshold needs kernel " BTRFS_RECLAIM_THRESHOLD_KERNEL_STR
			      " or later");
			return -EINVAL;
		}
		if ((fc->dynamic_reclaim_set[i] || fc->periodic_reclaim_set[i]) &&
		    fc->kernel_version < BTRFS_DYNAMIC_RECLAIM_KERNEL) {
			error("--dynamic-reclaim and --periodic-reclaim need kernel "
			      BTRFS_DYNAMIC_RECLAIM_KERNEL_STR " or later");
			return -EINVAL;
		}
	}
	if (fc->nr_reclaim_marked && fc->kernel_version < BTRFS_RECLAIM_THRESHOLD_KERNEL) {
		error("--reclaim-marked needs kernel " BTRFS_RECLAIM_THRESHOLD_KERNEL_STR
		      " or later");
		return -EINVAL;
	}
	return 0;
}

/* --reclaim-marked and --full-at-mount name block groups by their logical start */
static int check_starts(const struct btrfs_fs_info *fs_info, const char *opt,
			const u64 *starts, u32 nr)
{
	const struct btrfs_block_group *bg;
	u32 i;

	for (i = 0; i < nr; i++) {
		bg = btrfs_lookup_block_group(fs_info, starts[i]);
		if (!bg || bg->start != starts[i]) {
			error("--%s: no block group starts at %llu", opt,
			      (unsigned long long)starts[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_reclaim_marked(const struct btrfs_fs_info *fs_info,
				const struct forecast_options *fc)
{
	int ret = check_starts(fs_info, "reclaim-marked", fc->reclaim_marked,
			       fc->nr_reclaim_marked);

	if (ret)
		return ret;
	return check_starts(fs_info, "full-at-mount", fc->full_at_mount, fc->nr_full_at_mount);
}

static int forecast_report(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
			   void *ctx)
{
	struct forecast_ctx *c = ctx;
	struct report_options ropts;
	int ret;

	if (check_reclaim_kernel(&c->args.fc) || check_reclaim_marked(fs_info, &c->args.fc))
		return EXIT_USAGE;
	report_options_init(&ropts);
	ropts.kernel_version = c->args.fc.kernel_version;
	if (btrfs_build_space_report(fs_info, &ropts, &c->report))
		return cmd_out_of_memory();
	ret = btrfs_build_forecast(&c->report, &c->args.fc, &c->fc);
	if (ret) {
		/* what the what-ifs built before the error, then why */
		btrfs_free_forecast(&c->fc);
		btrfs_free_space_report(&c->report);
		if (ret == -ENOMEM)
			return cmd_out_of_memory();
		if (fs_info->err.err)
			error("forecast: %s", fs_info->err.msg);
		else
			error("forecast: cannot read the filesystem: %s (error %d)",
			      strerror(-ret), ret);
		return EXIT_FS_ERROR;
	}
	c->fc.list_chunks = c->args.list_chunks;
	return 0;
}

static void forecast_print(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
			   void *ctx)
{
	struct forecast_ctx *c = ctx;

	/* a plan answers first too: what the devices hold, then how mkfs lays them out */
	print_forecast_section(fctx, &c->fc);
	print_forecast_gates(fctx, &c->args, &c->fc);
	if (fs_info->planned)
		print_mkfs_layout(fctx, fs_info);
}

static bool forecast_planned(const void *ctx)
{
	const struct forecast_ctx *c = ctx;

	return c->args.nr_plan_sizes > 0;
}

/*
 * --devices: mkfs.btrfs's filesystem, its profiles those given; the
 * forecast then reads them as the filesystem's own, not as a what-if
 */
static int forecast_plan(struct btrfs_fs_info *fs_info, void *ctx)
{
	struct forecast_ctx *c = ctx;
	struct btrfs_mkfs_args margs = {
		.sizes = c->args.plan_sizes,
		.nr_devices = c->args.nr_plan_sizes,
		.data_profile_set = c->args.fc.data_profile_set,
		.data_profile = c->args.fc.data_profile,
		.metadata_profile_set = c->args.fc.metadata_profile_set,
		.metadata_profile = c->args.fc.metadata_profile,
	};
	int ret;

	c->args.fc.data_profile_set = false;
	c->args.fc.metadata_profile_set = false;
	ret = btrfs_plan_mkfs(&margs, fs_info);
	if (ret == -ENOMEM)
		return cmd_out_of_memory();
	if (ret) {
		error("forecast: %s", fs_info->err.msg);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FS_ERROR;
	}
	return 0;
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
	CMD_OWN_OPTIONS(forecast),
	.planned = forecast_planned,
	.plan = forecast_plan,
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
