// SPDX-License-Identifier: GPL-2.0
/*
 * The inspect summary (summary.h).  The levels are the tool's rules, not
 * the kernel's: Documentation/formulas.md section 19 states each of them.
 * The chunk counts and the headroom come from the chunk allocator
 * replayed (volumes.c, through forecast.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/forecast.h"
#include "kernel-shared/live.h"
#include "kernel-shared/space-info.h"
#include "kernel-shared/summary.h"
#include "kernel-shared/root-tree.h"
#include "kernel-shared/volumes.h"

static const char * const level_names[] = {
	[SUMMARY_OK] = "ok", [SUMMARY_TIGHT] = "tight", [SUMMARY_CRITICAL] = "critical",
};

const char *btrfs_summary_level_name(enum summary_level level)
{
	return level_names[level];
}

int btrfs_summary_level_parse(const char *name, enum summary_level *level)
{
	int i;

	for (i = SUMMARY_OK; i <= SUMMARY_CRITICAL; i++) {
		if (!strcmp(name, level_names[i])) {
			*level = i;
			return 0;
		}
	}
	return -EINVAL;
}

static u32 count_writeable(const struct space_report *report)
{
	u32 i, n = 0;

	for (i = 0; i < report->nr_devices; i++)
		n += report->fs_info->devices[i].writeable && !report->devices[i].missing;
	return n;
}

/*
 * Section 19.2: one transaction's metadata reservation, the smallest that
 * matters: start_transaction() of a file create (5 items: inode item and
 * ref, two directory items, an xattr) and its delayed refs
 * (btrfs_calc_delayed_ref_bytes(), doubled with the free-space tree).
 */
#define SUMMARY_RESERVATION_ITEMS	5

static u64 transaction_reservation(const struct btrfs_fs_info *fs_info)
{
	bool fst = btrfs_fs_compat_ro(fs_info, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE);

	return btrfs_calc_insert_metadata_size(fs_info->nodesize, SUMMARY_RESERVATION_ITEMS) +
	       btrfs_calc_delayed_ref_bytes(fs_info->nodesize, fst, SUMMARY_RESERVATION_ITEMS);
}

static u64 min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

static u64 max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
}

/*
 * Section 19.2: the headroom H (the forecast's fill) against one full
 * chunk C and a share of what the type holds when full (held + H), with
 * two transactions' reservations R as the floor for metadata (a
 * reservation is taken while the last one is still held: the kernel's
 * metadata fills stop about one reservation short of H):
 * critical below min(C, max(2 R, cap / 10)), tight below
 * min(2 C, max(4 R, cap / 5)).  A type with more than two chunks, or more
 * than a fifth of its capacity, left is ok however its chunks lie.
 */
/*
 * The type's size the shares are taken of: its capacity, but at least a
 * tenth of the filesystem in its copies, so that a type the other squeezed
 * (metadata chunks holding nearly every device) is not ok with a MiB left
 */
static u64 weighed_capacity(const struct summary_space *s)
{
	return max_u64(s->capacity, s->size_share);
}

static u64 critical_bound(const struct summary_space *s)
{
	return min_u64(s->chunk_size, max_u64(2 * s->reservation, weighed_capacity(s) / 10));
}

static u64 tight_bound(const struct summary_space *s)
{
	return min_u64(2 * s->chunk_size, max_u64(4 * s->reservation, weighed_capacity(s) / 5));
}

void btrfs_summary_rate_headroom(struct summary_space *s)
{
	if (s->headroom < critical_bound(s)) {
		s->level = SUMMARY_CRITICAL;
		s->rule = s->reservation ?
			  "left < one chunk and < max(2 transactions' reservations, 10 % of the type when full)" :
			  "left < one chunk and < 10 % of the type when full";
	} else if (s->headroom < tight_bound(s)) {
		s->level = SUMMARY_TIGHT;
		s->rule = s->reservation ?
			  "left < 2 chunks and < max(4 reservations, 20 % of the type when full)" :
			  "left < 2 chunks and < 20 % of the type when full";
	} else {
		s->level = SUMMARY_OK;
		s->rule = "left >= 2 chunks or >= 20 % of the type when full";
	}
	s->critical_bound = critical_bound(s);
	s->tight_bound = tight_bound(s);
}

/*
 * Section 19.2, system: the chunk tree grows into it, one item per new
 * chunk; the fills of the forecast make the system chunks they need.
 */
void btrfs_summary_rate_system(struct summary_space *s, u32 nodesize)
{
	if (s->free < nodesize && !s->new_chunks) {
		s->level = SUMMARY_CRITICAL;
		s->rule = "free < one tree block and no new system chunk fits";
	} else {
		s->level = SUMMARY_OK;
		s->rule = "free >= one tree block, or a new system chunk fits";
	}
}

static void fill_space(const struct space_report *report,
		       const struct space_report_space_info *in,
		       struct summary_space *s)
{
	const struct btrfs_space_info *si = &in->info;
	u64 type = si->flags & BTRFS_BLOCK_GROUP_TYPE_MASK;

	s->name = in->name;
	s->profile = btrfs_get_alloc_profile(report->fs_info, type);
	s->total_bytes = si->total_bytes;
	s->held = btrfs_space_info_used(si, true);
	s->free = s->total_bytes > s->held ? s->total_bytes - s->held : 0;
	s->chunk_size = btrfs_forecast_full_chunk(report, s->profile, si->chunk_size);
	s->new_chunks = btrfs_forecast_count_chunks(report, s->profile, si->chunk_size,
						    &s->new_chunk_bytes);
}

/* The forecast's fill of the type: its headroom, and the level from it */
static void rate_space(const struct space_report *report, struct summary_space *s,
		       const struct forecast_fill *fill)
{
	if (fill && fill->present) {
		s->headroom_present = true;
		s->flags_metadata = fill->type & BTRFS_BLOCK_GROUP_METADATA;
		s->headroom = fill->writable_bytes;
		s->headroom_rsv = fill->global_rsv_held;
		s->headroom_new = min_u64(fill->new_chunk_bytes, s->headroom);
		s->headroom_existing = s->headroom - s->headroom_new;
		s->capacity = s->held + s->headroom;
		s->size_share = report->fs_info->total_rw_bytes /
				max_u64(btrfs_bg_type_to_factor(s->profile), 1) / 10;
		if (s->flags_metadata)
			s->reservation = transaction_reservation(report->fs_info);
	}
	if (!count_writeable(report)) {
		s->level = SUMMARY_CRITICAL;
		s->rule = "no writeable device: nothing can be allocated or written";
	} else if (s->headroom_present) {
		btrfs_summary_rate_headroom(s);
	} else {
		btrfs_summary_rate_system(s, report->fs_info->nodesize);
	}
	s->headroom_level = s->level;
	s->headroom_rule = s->rule;
}

static const struct forecast_fill *fill_of(const struct btrfs_forecast *fc, const char *name)
{
	if (fc->data.present && !strcmp(fc->data.name, name))
		return &fc->data;
	if (fc->metadata.present && !strcmp(fc->metadata.name, name))
		return &fc->metadata;
	return NULL;
}

/* The forecast's device index of @devid, or -1 */
static int forecast_dev(const struct btrfs_forecast *fc, u64 devid)
{
	u32 i;

	for (i = 0; i < fc->nr_devs; i++)
		if (fc->devids[i] == devid)
			return i;
	return -1;
}

/* Section 19.1: per device, the forecast's dead space (section 21.4) */
static void fill_dead(struct space_summary *sum)
{
	const struct btrfs_forecast *fc = &sum->forecast;
	u32 i;

	for (i = 0; i < sum->nr_devices; i++) {
		struct summary_dead *d = &sum->dead[i];
		int f = forecast_dev(fc, sum->devices[i].devid);

		d->devid = sum->devices[i].devid;
		if (f < 0)
			continue;
		if (fc->data.present) {
			d->hard = fc->data.hard[f];
			d->soft_data = fc->data.soft[f];
		}
		if (fc->metadata.present) {
			d->hard = max_u64(d->hard, fc->metadata.hard[f]);
			d->soft_metadata = fc->metadata.soft[f];
		}
	}
}

static int fill_devices(const struct space_report *report, struct space_summary *sum)
{
	u32 i, n = report->nr_devices ? report->nr_devices : 1;

	sum->devices = calloc(n, sizeof(*sum->devices));
	sum->dead = calloc(n, sizeof(*sum->dead));
	if (!sum->devices || !sum->dead)
		return -ENOMEM;
	for (i = 0; i < report->nr_devices; i++) {
		struct summary_device *d = &sum->devices[i];

		d->devid = report->devices[i].devid;
		d->unallocated = report->devices[i].unallocated;
		d->counted = report->fs_info->devices[i].writeable &&
			     !report->devices[i].missing;
		if (d->counted)
			sum->unallocated += d->unallocated;
	}
	sum->nr_devices = report->nr_devices;
	return 0;
}

/* The figures the preemptive-flush section weighs (section 9), no level */
static void fill_preempt(const struct space_report *report, struct space_summary *sum)
{
	const struct btrfs_preempt_result *p = &report->reserve.preempt;

	sum->overcommit_room = report->reserve.avail_flush_all;
	sum->bytes_may_use = report->reserve.state.bytes_may_use;
	sum->can_flush = p->can_flush;
	sum->flush_from = p->can_flush ? p->min_may_use_to_flush : 0;
	sum->flushing = p->verdict;
	sum->flush_headroom = p->can_flush && sum->flush_from > sum->bytes_may_use ?
			      sum->flush_from - sum->bytes_may_use : 0;
}

static double latency_of(const char *name)
{
	int i;

	for (i = 0; btrfs_latency_profiles[i].name; i++)
		if (!strcmp(btrfs_latency_profiles[i].name, name))
			return btrfs_latency_profiles[i].seconds;
	return 0;
}

/* Section 19.4: systemd gives a mount 90 s (DefaultTimeoutStartSec) */
static void rate_mount(const struct btrfs_mount_estimate *est, struct space_summary *sum)
{
	sum->mount_available = est && est->attempts && !est->fs_changed;
	if (!sum->mount_available) {
		sum->mount_level = SUMMARY_OK;
		sum->mount_rule = "estimate not available";
		return;
	}
	sum->mount_reads = est->now.total_reads;
	sum->mount_hdd_seconds = btrfs_mount_seconds(sum->mount_reads, latency_of("hdd"));
	sum->mount_ssd_seconds = btrfs_mount_seconds(sum->mount_reads, latency_of("ssd"));
	if (sum->mount_hdd_seconds >= SUMMARY_MOUNT_CRITICAL_SECONDS) {
		sum->mount_level = SUMMARY_CRITICAL;
		sum->mount_rule = "HDD mount >= 90 s (systemd's default mount timeout)";
	} else if (sum->mount_hdd_seconds >= SUMMARY_MOUNT_TIGHT_SECONDS) {
		sum->mount_level = SUMMARY_TIGHT;
		sum->mount_rule = "HDD mount >= 10 s";
	} else {
		sum->mount_level = SUMMARY_OK;
		sum->mount_rule = "HDD mount < 10 s";
	}
}

/*
 * Section 19.6: the -dusage=N (-musage=N for @type METADATA) values that
 * select one more block group of @type each, ascending: N = used * 100 /
 * length + 1 selects a group (should_balance_chunk()'s usage filter:
 * used < length * N / 100).
 */
static u32 usage_candidates(const struct btrfs_fs_info *fs_info, u64 type, u64 *out)
{
	bool seen[102] = { false };
	u32 i, n = 0;

	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];
		u64 usage;

		if ((bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) != type || bg->ro || !bg->length)
			continue;
		usage = bg->used ? bg->used * 100 / bg->length + 1 : 0;
		if (usage <= 100)
			seen[usage] = true;
	}
	for (i = 0; i <= 100; i++)
		if (seen[i])
			out[n++] = i;
	return n;
}

/* One -dusage=N (or -musage=N, r->type) what-if (forecast.c's balance) into @r */
static int alloc_state_after(const struct space_report *report, const struct space_summary *sum,
			     const struct btrfs_reloc_result *res, struct btrfs_alloc_state *st);
static u64 free_after(const struct btrfs_reloc_result *res, u64 type);
static const struct summary_space *space_named(const struct space_summary *sum, const char *name);
static int fill_chunks(struct btrfs_alloc_state *st, u64 type, u64 chunk_size,
		       u64 stop_at, u64 *bytes, u32 *count);
static const struct btrfs_space_info *space_info_of(const struct space_report *report,
						    const char *name);

/* The block group type bits of space @s: DATA, METADATA, or both (mixed) */
static u64 space_type(const struct summary_space *s)
{
	if (!strcmp(s->name, "mixed"))
		return BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA;
	return s->flags_metadata ? BTRFS_BLOCK_GROUP_METADATA : BTRFS_BLOCK_GROUP_DATA;
}

/*
 * A balance must raise what the finding's type can write by this much: a
 * relocated block group that held a superblock copy gives back its 64 KiB
 * and helps no one
 */
#define SUMMARY_BALANCE_MIN_GAIN	(1ULL << 20)

/*
 * Section 19.6: what the finding's type @s can write after the balance
 * @res: its free bytes in its block groups after, plus the chunks of its
 * profile the allocator makes from the devices the balance leaves, less
 * the global reserve's part.  Unallocated space given back is no remedy
 * when it is only the type's own free space moved out of its block groups
 * (single data: the same bytes, in a new chunk instead of the old ones).
 */
static int balance_writable_after(const struct space_report *report,
				  const struct space_summary *sum, const struct summary_space *s,
				  const struct btrfs_reloc_result *res, struct summary_remedy *r)
{
	const struct btrfs_space_info *si = space_info_of(report, s->name);
	struct btrfs_alloc_state st;
	u64 type = space_type(s), bytes;
	u32 count;
	int ret;

	if (!si)
		return 0;
	ret = alloc_state_after(report, sum, res, &st);
	if (ret)
		return ret;
	ret = fill_chunks(&st, type | s->profile, si->chunk_size, 0, &bytes, &count);
	btrfs_alloc_state_free(&st);
	if (ret)
		return ret;
	bytes += free_after(res, type);
	r->writable_after = bytes > s->headroom_rsv ? bytes - s->headroom_rsv : 0;
	return 0;
}

/*
 * The balance what-if @fc of remedy @r relocated every group it selected:
 * no -ENOSPC on the way, which an empty group's failure gives without a
 * byte left unplaced (create_reloc_inode()'s reservation, 21.8)
 */
static bool completes_of(const struct btrfs_forecast *fc, const struct summary_remedy *r)
{
	return r->can_start && fc->balance.completes && !fc->balance.unplaced_bytes &&
	       r->nr_selected;
}

/* should_balance_chunk()'s usage=N bound: a group is selected below it */
static u64 usage_bound(const struct btrfs_block_group *bg, u64 usage)
{
	return usage ? bg->length * usage / 100 : 1;
}

/*
 * Section 19.6: btrfs-progs sends -musage=N as -susage=N too, so the
 * system block groups, nearly empty, go with the metadata ones; a system
 * group's relocation needs a new system chunk, and on a full device that
 * fails with -ENOSPC after the metadata groups moved (6.18.44: the balance
 * ends with status -28 though data gained a chunk).  The largest M of
 * -musage=M..N that keeps every metadata group N selects (used >= length *
 * M / 100, chunk_usage_range_filter()) and leaves out a system group N
 * selects; 0 when none does.
 */
static u32 usage_floor_sparing_system(const struct btrfs_fs_info *fs_info, u64 usage)
{
	u64 floor = 100;
	bool spared = false;
	u32 i;

	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		if ((bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) != BTRFS_BLOCK_GROUP_METADATA ||
		    bg->ro || !bg->length || bg->used >= usage_bound(bg, usage))
			continue;
		if (bg->used * 100 / bg->length < floor)
			floor = bg->used * 100 / bg->length;
	}
	if (!floor || floor == 100)
		return 0;
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		if ((bg->flags & BTRFS_BLOCK_GROUP_SYSTEM) && !bg->ro && bg->length &&
		    bg->used < usage_bound(bg, usage) && bg->used < bg->length * floor / 100)
			spared = true;
	}
	return spared ? floor : 0;
}

/*
 * btrfs_balance() refuses a balance of data or metadata alone on mixed
 * block groups (EINVAL: "mixed groups data and metadata options must be
 * the same"): the filter of @args is given for both, as the remedy is typed
 */
static void mixed_filters(const struct space_report *report, struct forecast_options *opts,
			  const struct forecast_balance_args *args, struct summary_remedy *r)
{
	struct forecast_balance_args both = *args;

	if (!btrfs_fs_incompat(report->fs_info, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS))
		return;
	opts->bal_data = both;
	opts->bal_meta = both;
	r->mixed_filters = true;
}

static int try_balance(const struct space_report *report, const struct space_summary *sum,
		       u64 usage, u32 usage_min, struct summary_remedy *r)
{
	const struct summary_space *s = &sum->spaces[sum->findings[r->finding].space];
	struct forecast_balance_args *args;
	struct forecast_options opts;
	struct btrfs_forecast fc;
	u64 before = 0, after = 0;
	bool completes;
	u32 i;
	int f, ret;

	forecast_options_init(&opts);
	opts.kernel_version = report->reserve.kernel_version;
	args = r->type == BTRFS_BLOCK_GROUP_METADATA ? &opts.bal_meta : &opts.bal_data;
	args->set = true;
	if (usage_min) {
		args->flags = FORECAST_BAL_USAGE_RANGE;
		args->usage_min = usage_min;
		args->usage_max = usage;
	} else {
		args->flags = FORECAST_BAL_USAGE;
		args->usage = usage;
	}
	mixed_filters(report, &opts, args, r);
	ret = btrfs_build_forecast(report, &opts, &fc);
	if (ret) {
		btrfs_free_forecast(&fc);
		return ret;
	}
	r->usage = usage;
	r->usage_min = usage_min;
	r->nr_selected = fc.balance.nr_selected;
	r->moved_bytes = fc.balance.moved_bytes;
	r->nr_failed = fc.balance.res.nr_failed;
	r->can_start = fc.balance.can_start;
	for (i = 0; i < sum->nr_devices; i++) {
		f = forecast_dev(&fc, sum->devices[i].devid);
		r->unallocated_after[i] = f < 0 ? sum->devices[i].unallocated :
					  fc.balance.unallocated_after[f];
		if (!sum->devices[i].counted)
			continue;
		before += sum->devices[i].unallocated;
		after += r->unallocated_after[i];
	}
	r->room_gained = after > before ? after - before : 0;
	r->writable_before = s->headroom;
	r->writable_after = s->headroom;
	completes = r->completes = completes_of(&fc, r);
	if (completes)
		ret = balance_writable_after(report, sum, s, &fc.balance.res, r);
	r->enough = !ret && completes && r->room_gained >= r->room_needed &&
		    r->writable_after >= s->headroom + SUMMARY_BALANCE_MIN_GAIN;
	btrfs_free_forecast(&fc);
	return ret;
}

/*
 * Section 19.6: the smallest -dusage=N whose what-if gives back the raw
 * bytes of one full chunk of the finding's type, or the largest tried
 * (shown as not enough) when none does.
 */
static int remedy_balance(const struct space_report *report, struct space_summary *sum,
			  int finding)
{
	const struct summary_space *s = &sum->spaces[sum->findings[finding].space];
	struct summary_remedy *r = &sum->remedies[sum->nr_remedies];
	u64 cand[101], room_only = 0;
	u32 n, k;
	int ret;

	n = usage_candidates(report->fs_info, BTRFS_BLOCK_GROUP_DATA, cand);
	if (!n) {
		/* every data block group full: shown as not helping */
		cand[0] = 100;
		n = 1;
	}
	memset(r, 0, sizeof(*r));
	r->kind = SUMMARY_REMEDY_BALANCE;
	r->type = BTRFS_BLOCK_GROUP_DATA;
	r->finding = finding;
	r->room_needed = s->chunk_size * btrfs_bg_type_to_factor(s->profile);
	r->unallocated_after = calloc(sum->nr_devices ? sum->nr_devices : 1, sizeof(u64));
	if (!r->unallocated_after)
		return -ENOMEM;
	sum->nr_remedies++;
	/*
	 * Every candidate, ascending: each selects one more usage class, so
	 * at most 101 what-ifs whatever the size; a sample could skip the
	 * smallest that is enough (1,000 groups of 60-99 %: -dusage=65 of
	 * 12 tried where -dusage=63 moves 100 groups, not 150)
	 */
	for (k = 0; k < n; k++) {
		ret = try_balance(report, sum, cand[k], 0, r);
		if (ret || r->enough)
			return ret;
		/* the first that gives back the room but no more to write */
		if (!room_only && r->room_gained >= r->room_needed && r->nr_selected &&
		    r->can_start)
			room_only = r->usage;
	}
	/* shown as not helping: the smallest such N, not a balance of everything */
	if (room_only && room_only != r->usage)
		return try_balance(report, sum, room_only, 0, r);
	return 0;
}

/*
 * Section 19.6: a -musage what-if that falls short of a full data chunk's
 * room but completes and lifts data out of its finding: a chunk of what
 * it gives back is still made, shrunk to the room (as a device add helps)
 */
static bool lifts_finding(const struct summary_space *s, const struct summary_remedy *r)
{
	return r->completes && r->writable_after >= s->tight_bound &&
	       r->writable_after >= s->headroom + SUMMARY_BALANCE_MIN_GAIN;
}

/*
 * One -musage=N what-if into @r; when it does not complete, -musage=M..N
 * with the floor that leaves the system groups out (the metadata groups
 * N selects kept), if there is one
 */
static int try_meta_balance(const struct space_report *report, const struct space_summary *sum,
			    u64 usage, struct summary_remedy *r)
{
	u32 floor;
	int ret;

	ret = try_balance(report, sum, usage, 0, r);
	if (ret || r->completes)
		return ret;
	floor = usage_floor_sparing_system(report->fs_info, usage);
	return floor ? try_balance(report, sum, usage, floor, r) : 0;
}

/*
 * Section 19.6: the empty block groups a discard=async mount keeps (21.4:
 * btrfs_discard_queue_work() before discard runs puts them on no list,
 * and the cleaner never sees them).  A fresh mount with nodiscard hands
 * them to btrfs_mark_bg_unused() and the cleaner deletes them (a remount
 * does not: btrfs_discard_cleanup() purges only the discard lists); the
 * forecast with that mount gives what the finding's type writes after.
 * Offline only: a live mount has decided.  Only where every group empty
 * at the mount that the cleaner would delete is a data group: the
 * forecast keeps the empty metadata group the cleaner's first tree blocks
 * go to (forecast.c, first_tree_block_bg(); kernel test 086), but where
 * empty metadata groups go, -musage=0 takes them all and is the better
 * advice; it is tried only when this one is not enough.  A metadata group
 * that the deletions' copies empty (find_emptied_bgs()) counts in the
 * bytes deleted, not against this.  Kept when it lifts the type out of its
 * finding.
 */
static int remedy_nodiscard(const struct space_report *report, struct space_summary *sum,
			    int finding)
{
	const struct summary_space *s = &sum->spaces[sum->findings[finding].space];
	const struct btrfs_fs_info *fs_info = report->fs_info;
	const struct forecast_fill *fill;
	struct forecast_options opts;
	struct summary_remedy *r;
	struct btrfs_forecast fc;
	bool data_only = true;
	u32 i;
	int ret;

	if (report->live || sum->forecast.discard != BTRFS_DISCARD_ASYNC ||
	    !sum->forecast.nr_empty_bgs || sum->nr_remedies >= SUMMARY_MAX_REMEDIES)
		return 0;
	forecast_options_init(&opts);
	opts.kernel_version = report->reserve.kernel_version;
	opts.mount.set = true;
	opts.mount.mode = BTRFS_DISCARD_NONE;
	ret = btrfs_build_forecast(report, &opts, &fc);
	fill = ret ? NULL : fill_of(&fc, s->name);
	r = &sum->remedies[sum->nr_remedies];
	memset(r, 0, sizeof(*r));
	r->kind = SUMMARY_REMEDY_NODISCARD;
	r->finding = finding;
	r->type = space_type(s);
	r->writable_before = s->headroom;
	r->writable_after = fill ? fill->writable_bytes : 0;
	r->nr_selected = ret ? 0 : fc.nr_unused_bgs;
	/* by bisection: a scan per empty group was O(n^2) in a big deletion's empty groups */
	for (i = 0; i < r->nr_selected; i++) {
		const struct btrfs_block_group *bg = btrfs_lookup_block_group(fs_info,
									      fc.unused_bgs[i]);

		if (!bg || bg->start != fc.unused_bgs[i])
			continue;
		r->moved_bytes += bg->length;
		/*
		 * an empty metadata group: -musage=0 is the advice; one the
		 * deletions' copies empty (used at the mount) is not
		 */
		if (!(bg->flags & BTRFS_BLOCK_GROUP_DATA) && !bg->used)
			data_only = false;
	}
	r->enough = fill && data_only && r->nr_selected && r->writable_after >= s->tight_bound &&
		    r->writable_after >= s->headroom + SUMMARY_BALANCE_MIN_GAIN;
	btrfs_free_forecast(&fc);
	if (!ret && r->enough)
		sum->nr_remedies++;
	return ret;
}

/*
 * Section 19.6, a data finding that no -dusage=N helps: room held in
 * metadata block groups.  The smallest -musage=N (or M..N) whose what-if
 * gives back one full data chunk's raw bytes, else the smallest that
 * lifts data out of its finding, kept only when one does.
 */
static int remedy_meta_balance(const struct space_report *report, struct space_summary *sum,
			       int finding)
{
	const struct summary_space *s = &sum->spaces[sum->findings[finding].space];
	struct summary_remedy *r;
	u64 cand[101], lifting = 0;
	u32 n, k;
	int ret = 0;

	if (strcmp(s->name, "data") || !sum->nr_remedies ||
	    sum->remedies[sum->nr_remedies - 1].enough ||
	    sum->nr_remedies >= SUMMARY_MAX_REMEDIES)
		return 0;
	n = usage_candidates(report->fs_info, BTRFS_BLOCK_GROUP_METADATA, cand);
	if (!n)
		return 0;
	r = &sum->remedies[sum->nr_remedies];
	memset(r, 0, sizeof(*r));
	r->kind = SUMMARY_REMEDY_BALANCE;
	r->type = BTRFS_BLOCK_GROUP_METADATA;
	r->finding = finding;
	r->room_needed = s->chunk_size * btrfs_bg_type_to_factor(s->profile);
	r->unallocated_after = calloc(sum->nr_devices ? sum->nr_devices : 1, sizeof(u64));
	if (!r->unallocated_after)
		return -ENOMEM;
	/* every candidate, ascending (remedy_balance()) */
	for (k = 0; k < n && !ret && !r->enough; k++) {
		ret = try_meta_balance(report, sum, cand[k], r);
		if (!ret && !lifting && lifts_finding(s, r))
			lifting = r->usage;
	}
	if (!ret && !r->enough && lifting) {
		ret = try_meta_balance(report, sum, lifting, r);
		r->enough = !ret && lifts_finding(s, r);
	}
	if (!ret && r->enough) {
		sum->nr_remedies++;
		return 0;
	}
	free(r->unallocated_after);
	r->unallocated_after = NULL;
	return ret;
}

static const struct btrfs_space_info *space_info_of(const struct space_report *report,
						    const char *name)
{
	int i;

	for (i = 0; i < report->nr_space_infos; i++)
		if (!strcmp(report->space_infos[i].name, name))
			return &report->space_infos[i].info;
	return NULL;
}

/*
 * The allocator's devices as the forecast starts from them: the chunks of
 * the block groups the cleaner deletes after mount already gone.
 */
static int summary_alloc_state(const struct space_report *report,
			       const struct space_summary *sum, struct btrfs_alloc_state *st)
{
	const struct btrfs_block_group *bg;
	u32 i;
	int ret;

	ret = btrfs_alloc_state_init(report->fs_info, report->reserve.kernel_version, st);
	for (i = 0; !ret && i < sum->forecast.nr_unused_bgs; i++) {
		bg = btrfs_lookup_block_group(report->fs_info, sum->forecast.unused_bgs[i]);
		if (bg && bg->map)
			btrfs_alloc_remove_chunk(st, bg->map);
	}
	return ret;
}

/*
 * Chunks of @type alone on @st until ENOSPC, or until their logical bytes
 * reach @stop_at (0: no stop): their bytes and count
 */
static int fill_chunks(struct btrfs_alloc_state *st, u64 type, u64 chunk_size,
		       u64 stop_at, u64 *bytes, u32 *count)
{
	struct btrfs_chunk_map *map;
	int err = 0;

	*bytes = 0;
	*count = 0;
	while (*count < 100000 && (!stop_at || *bytes < stop_at) &&
	       (map = btrfs_alloc_create_chunk(st, type, chunk_size, &err))) {
		*bytes += map->length;
		(*count)++;
		free(map);
	}
	return err == -ENOMEM ? err : 0;
}

/*
 * Section 19.6: does a data fill on @sum's filesystem make a metadata chunk
 * on the way?  When metadata's headroom is under one transaction's
 * reservation (a file create: 19.2's R), the fill's own transactions
 * cannot reserve from metadata's block groups, and a reservation waits
 * for flush_space()'s ALLOC_CHUNK (at the latest once
 * calc_available_free_space() leaves no over-commit room).  Returns the
 * metadata chunk's type, 0 when none is made.
 */
static u64 data_fill_metadata_chunk(const struct space_report *report,
				    const struct space_summary *sum, u64 type, u64 *chunk_size)
{
	const struct btrfs_space_info *si = space_info_of(report, "metadata");
	const struct summary_space *meta = space_named(sum, "metadata");

	if (!(type & BTRFS_BLOCK_GROUP_DATA) || (type & BTRFS_BLOCK_GROUP_METADATA) ||
	    !si || !meta || !meta->headroom_present ||
	    meta->headroom >= transaction_reservation(report->fs_info))
		return 0;
	*chunk_size = si->chunk_size;
	return (si->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) | meta->profile;
}

/*
 * Data chunks on @st until ENOSPC (or @stop_at), after the metadata chunk
 * the fill's transactions force (data_fill_metadata_chunk()).  When the
 * kernel makes it depends on timing: the flusher's ALLOC_CHUNK may run
 * before the fill's first data reservation or only once over-commit is
 * gone; made first it takes the most room, so the data figure is the
 * least the kernel gives.  Kernel 6.18, a 1 GiB single/DUP filesystem with
 * metadata full and a 256 MiB device added (kernel test 074): one run
 * made a 128 MiB data chunk and then a 63.5 MiB DUP metadata chunk,
 * another the 127.5 MiB metadata chunk first and no data chunk.
 */
static int fill_data_chunks(const struct space_report *report, const struct space_summary *sum,
			    struct btrfs_alloc_state *st, u64 type, u64 chunk_size,
			    u64 stop_at, u64 *bytes, u32 *count)
{
	struct btrfs_chunk_map *map;
	u64 meta_size = 0, meta_type = data_fill_metadata_chunk(report, sum, type, &meta_size);
	int err = 0;

	if (meta_type) {
		map = btrfs_alloc_create_chunk(st, meta_type, meta_size, &err);
		free(map);
		if (err == -ENOMEM)
			return err;
	}
	return fill_chunks(st, type, chunk_size, stop_at, bytes, count);
}

/*
 * A change of the devices the allocator is run with (section 19.6): one
 * more empty device of @add_size (btrfs device add), or device @devid's
 * size set to @new_size (btrfs filesystem resize DEVID:max, or a replace
 * by a larger device and that resize)
 */
struct dev_change {
	u64 add_size;
	u32 add_count;		/* devices of add_size added (0 counts as 1) */
	u64 devid;
	u64 new_size;
	bool replace;		/* devid replaced first (btrfs replace start) */
};

static bool chunk_on_device(const struct btrfs_chunk_map *map, u64 devid)
{
	u16 k;

	for (k = 0; map && k < map->num_stripes; k++)
		if (map->stripes[k].devid == devid)
			return true;
	return false;
}

/*
 * Section 19.6: btrfs replace start scrubs every chunk with a stripe on the
 * source device, its block group read-only meanwhile
 * (scrub_enumerate_chunks(): btrfs_inc_block_group_ro() with chunk
 * allocation); for a SYSTEM group that ends in check_system_chunk(), which
 * makes a SYSTEM chunk when the system room besides the read-only group
 * is short of a chunk item's reservation.  The chunk is made on the
 * devices as they are before the new device is grown, and its stripe on
 * the source moves to the new device at the same offset.
 */
static int replace_system_chunk(const struct space_report *report, struct btrfs_alloc_state *st,
				u64 devid)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	struct system_room room, ro;
	u64 free;
	u32 i;
	int ret;

	system_room_init(report, &room);
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		if (!(bg->flags & BTRFS_BLOCK_GROUP_SYSTEM) || bg->ro ||
		    !chunk_on_device(bg->map, devid))
			continue;
		free = bg->length - min_u64(bg->used + bg->bytes_super, bg->length);
		free = min_u64(free, room.left);
		ro = room;
		ro.left = room.left - free;
		ret = check_system_chunk(st, &ro, BTRFS_BLOCK_GROUP_SYSTEM | room.profile, NULL);
		if (ret)
			return ret;
		/* the group writable again, with the room of a chunk made */
		room = ro;
		room.left += free;
	}
	return 0;
}

/* @chg applied to @st; -ENOMEM */
static int apply_change(struct btrfs_alloc_state *st, const struct dev_change *chg)
{
	struct btrfs_alloc_device *devs;
	u64 devid = 0;
	u32 i, count;

	if (chg->devid) {
		for (i = 0; i < st->nr_devs; i++) {
			struct btrfs_alloc_device *d = &st->devs[i];

			if (d->devid != chg->devid)
				continue;
			/* btrfs_grow_device(): total_rw_bytes grows by the difference */
			if (d->writeable && chg->new_size > d->total_bytes)
				st->total_rw_bytes += chg->new_size - d->total_bytes;
			d->total_bytes = max_u64(d->total_bytes, chg->new_size);
		}
		return 0;
	}
	count = chg->add_count ? chg->add_count : 1;
	devs = realloc(st->devs, (st->nr_devs + count) * sizeof(*devs));
	if (!devs)
		return -ENOMEM;
	st->devs = devs;
	for (i = 0; i < st->nr_devs; i++)
		devid = max_u64(devid, st->devs[i].devid);
	/* btrfs_init_new_device(): the next devid, at the end of alloc_list */
	for (i = 0; i < count; i++) {
		memset(&st->devs[st->nr_devs], 0, sizeof(st->devs[0]));
		st->devs[st->nr_devs].devid = ++devid;
		st->devs[st->nr_devs].total_bytes = chg->add_size;
		st->devs[st->nr_devs].writeable = true;
		st->nr_devs++;
		st->rw_devices++;
		st->total_rw_bytes += chg->add_size;
	}
	return 0;
}

/*
 * Section 19.6: the allocator (volumes.c) with the devices changed by
 * @chg: chunks of @type alone until ENOSPC (or @stop_at bytes).  Their
 * logical bytes, their count, and what device @watch (a devid, 0: none)
 * has left unallocated after.
 */
static int whatif_devices(const struct space_report *report, const struct space_summary *sum,
			  u64 type, u64 chunk_size, const struct dev_change *chg, u64 stop_at,
			  u64 watch, u64 *bytes, u32 *count, u64 *watch_left)
{
	struct btrfs_alloc_state st;
	u32 i;
	int ret;

	ret = summary_alloc_state(report, sum, &st);
	if (!ret && chg->replace)
		ret = replace_system_chunk(report, &st, chg->devid);
	if (!ret)
		ret = apply_change(&st, chg);
	if (!ret)
		ret = fill_data_chunks(report, sum, &st, type, chunk_size, stop_at, bytes, count);
	for (i = 0; watch_left && i < st.nr_devs; i++)
		if (st.devs[i].devid == watch)
			*watch_left = st.devs[i].total_bytes - st.devs[i].bytes_used;
	btrfs_alloc_state_free(&st);
	return ret;
}

static int whatif_add_device(const struct space_report *report,
			     const struct space_summary *sum, u64 type, u64 chunk_size,
			     u64 size, u32 nr_added, u64 stop_at, u64 watch, u64 *bytes,
			     u32 *count, u64 *watch_left)
{
	struct dev_change chg = { .add_size = size, .add_count = nr_added };

	return whatif_devices(report, sum, type, chunk_size, &chg, stop_at, watch, bytes,
			      count, watch_left);
}

/*
 * The files to delete (backref.c): the group's data refs and the paths of
 * the largest.  Live, from the devices' last commit, when they can be read.
 */
static int name_owners(const struct space_report *report, const struct btrfs_block_group *bg,
		       struct summary_remedy *r)
{
	/* the tree reads fill the block cache; nothing of the filesystem changes */
	struct btrfs_fs_info *fs_info = (struct btrfs_fs_info *)report->fs_info;

	if (report->live && !btrfs_live_on_disk_readable(fs_info))
		return 0;
	r->owners = calloc(1, sizeof(*r->owners));
	if (!r->owners)
		return -ENOMEM;
	return btrfs_bg_data_owners(fs_info, bg->start, bg->length, r->owners);
}

/*
 * Section 19.6: the least used data block group (not read-only, not
 * deleted by the cleaner already): deleting the data in it empties it,
 * btrfs_delete_unused_bgs() removes its chunk, and the allocator makes
 * chunks of the finding's type from the room.
 */
static int remedy_delete_data(const struct space_report *report, struct space_summary *sum,
			      int finding)
{
	const struct summary_space *s = &sum->spaces[sum->findings[finding].space];
	const struct btrfs_space_info *si = space_info_of(report, s->name);
	const struct btrfs_fs_info *fs_info = report->fs_info;
	const struct btrfs_block_group *bg, *best = NULL;
	struct summary_remedy *r = &sum->remedies[sum->nr_remedies];
	struct btrfs_alloc_state st;
	u32 i, k;
	int ret;

	if (!si || (si->flags & BTRFS_BLOCK_GROUP_DATA))
		return 0;
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		bg = &fs_info->block_groups[i];
		if (!(bg->flags & BTRFS_BLOCK_GROUP_DATA) || bg->ro || !bg->used || !bg->map)
			continue;
		/* unused_bgs is by start (forecast.c): one bisection, not a scan */
		k = array_lower_bound(sum->forecast.unused_bgs, sum->forecast.nr_unused_bgs,
				      sizeof(u64), 0, bg->start);
		if ((k == sum->forecast.nr_unused_bgs || sum->forecast.unused_bgs[k] != bg->start) &&
		    (!best || bg->used < best->used))
			best = bg;
	}
	if (!best)
		return 0;
	ret = summary_alloc_state(report, sum, &st);
	if (ret)
		return ret;
	btrfs_alloc_remove_chunk(&st, best->map);
	memset(r, 0, sizeof(*r));
	r->kind = SUMMARY_REMEDY_DELETE_DATA;
	r->finding = finding;
	r->bg_start = best->start;
	r->moved_bytes = best->used;
	r->room_needed = s->tight_bound > s->headroom ? s->tight_bound - s->headroom : 0;
	ret = fill_chunks(&st, (si->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) | s->profile,
			  si->chunk_size, 0, &r->new_bytes, &r->new_chunks);
	btrfs_alloc_state_free(&st);
	r->enough = r->new_chunks && r->new_bytes >= r->room_needed;
	sum->nr_remedies++;
	if (ret)
		return ret;
	return name_owners(report, best, r);
}


/* The device sizes tried: 256 MiB, doubling, up to 16 times the filesystem */
#define SUMMARY_ADD_MIN		(256ULL << 20)

/*
 * The smallest size (256 MiB doubling) at which @nr_added devices lift
 * @r's type: new chunks reach r->room_needed.  r->add_size is left at the
 * size found, or at the largest tried.
 */
static int device_add_size(const struct space_report *report, const struct space_summary *sum,
			   u64 type, u64 chunk_size, u32 nr_added, struct summary_remedy *r)
{
	u64 limit = 16 * max_u64(report->fs_info->total_rw_bytes, SUMMARY_ADD_MIN), size;
	int ret;

	r->add_count = nr_added;
	/* the search stops each fill at the room needed; the size found is filled whole */
	for (size = SUMMARY_ADD_MIN; size <= limit; size *= 2) {
		ret = whatif_add_device(report, sum, type, chunk_size, size, nr_added,
					max_u64(r->room_needed, 1), 0,
					&r->new_bytes, &r->new_chunks, NULL);
		if (ret)
			return ret;
		r->add_size = size;
		r->enough = r->new_bytes >= r->room_needed && r->new_chunks;
		if (r->enough)
			break;
	}
	return 0;
}

/*
 * Section 19.6: the fewest devices, then the smallest size (256 MiB
 * doubling), whose addition lifts the finding's type to ok: headroom plus
 * the new chunks of its type reach the tight bound of 19.2.  One device
 * first; more only when one of any size tried does not help (a profile
 * that needs room on several devices when the others are full: RAID1 needs
 * two), up to the profile's devs_min, with which a chunk always fits.
 */
static int remedy_device_add(const struct space_report *report, struct space_summary *sum,
			     int finding)
{
	const struct summary_space *s = &sum->spaces[sum->findings[finding].space];
	const struct btrfs_space_info *si = space_info_of(report, s->name);
	struct summary_remedy *r = &sum->remedies[sum->nr_remedies];
	u64 bound = s->tight_bound;
	u64 type = (si ? si->flags & BTRFS_BLOCK_GROUP_TYPE_MASK : 0) | s->profile;
	u32 nr_added, most;
	int ret;

	if (!si)
		return 0;
	memset(r, 0, sizeof(*r));
	r->kind = SUMMARY_REMEDY_DEVICE_ADD;
	r->finding = finding;
	r->room_needed = bound > s->headroom ? bound - s->headroom : 0;
	most = btrfs_raid_array[btrfs_bg_flags_to_raid_index(s->profile)].devs_min;
	if (!most)
		most = 1;
	for (nr_added = 1; nr_added <= most; nr_added++) {
		ret = device_add_size(report, sum, type, si->chunk_size, nr_added, r);
		if (ret)
			return ret;
		if (r->enough)
			break;
	}
	ret = whatif_add_device(report, sum, type, si->chunk_size, r->add_size, r->add_count,
				0, 0, &r->new_bytes, &r->new_chunks, NULL);
	if (ret)
		return ret;
	sum->nr_remedies++;
	return 0;
}

/* The device @devid of @st, or NULL */
static struct btrfs_alloc_device *alloc_dev(struct btrfs_alloc_state *st, u64 devid)
{
	u32 i;

	for (i = 0; i < st->nr_devs; i++)
		if (st->devs[i].devid == devid)
			return &st->devs[i];
	return NULL;
}

/*
 * A stripe of a chunk the relocation made, into @st's ranges (before any
 * of the same start, as this model has always put it)
 */
static int alloc_add_stripe(struct btrfs_alloc_state *st, u64 devid, u64 start, u64 length)
{
	struct btrfs_alloc_device *dev = alloc_dev(st, devid);
	int ret;

	if (!dev)
		return 0;
	ret = range_tree_insert_first(&dev->ranges, start, length);
	if (!ret)
		dev->bytes_used += length;
	return ret;
}

static int cmp_bg_after(const void *a, const void *b)
{
	return array_cmp_u64(&(*(const struct btrfs_reloc_bg_after *const *)a)->start,
		       &(*(const struct btrfs_reloc_bg_after *const *)b)->start);
}

/* @start among the @n sorted starts @v */
static bool sorted_has(const u64 *v, u32 n, u64 start)
{
	return n && bsearch(&start, v, n, sizeof(*v), array_cmp_u64);
}

/*
 * The relocation's block group after it that starts at @start, or NULL:
 * @by_start is res->bgs sorted by start (the live groups do not overlap,
 * so a start names one), a bisection per group instead of a scan
 */
static const struct btrfs_reloc_bg_after *bg_after(const struct btrfs_reloc_bg_after **by_start,
						   u32 n, u64 start)
{
	u32 lo = 0, hi = n;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (by_start[mid]->start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && by_start[lo]->start == start ? by_start[lo] : NULL;
}

/*
 * Section 19.6: the allocator's devices after a balance: the chunks of
 * the block groups it removed gone, the chunks it made (relocation.c's
 * new_chunks) placed, and the empty groups the cleaner deletes gone.
 */
static int alloc_state_after(const struct space_report *report, const struct space_summary *sum,
			     const struct btrfs_reloc_result *res, struct btrfs_alloc_state *st)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	const struct btrfs_reloc_bg_after **by_start, *a;
	u32 i, nr_unused = sum->forecast.nr_unused_bgs;
	u64 *unused;
	u16 k;
	int ret;

	/* sorted copies: each block group looked up in O(log n), not O(n) */
	by_start = malloc((res->nr_bgs ? res->nr_bgs : 1) * sizeof(*by_start));
	unused = malloc((nr_unused ? nr_unused : 1) * sizeof(*unused));
	if (!by_start || !unused) {
		free(by_start);
		free(unused);
		return -ENOMEM;
	}
	for (i = 0; i < res->nr_bgs; i++)
		by_start[i] = &res->bgs[i];
	qsort(by_start, res->nr_bgs, sizeof(*by_start), cmp_bg_after);
	if (nr_unused)
		memcpy(unused, sum->forecast.unused_bgs, nr_unused * sizeof(*unused));
	qsort(unused, nr_unused, sizeof(*unused), array_cmp_u64);
	ret = btrfs_alloc_state_init(fs_info, report->reserve.kernel_version, st);
	for (i = 0; !ret && i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		if (!bg->map)
			continue;
		a = bg_after(by_start, res->nr_bgs, bg->start);
		if (!a || (!a->used && sorted_has(unused, nr_unused, bg->start)))
			btrfs_alloc_remove_chunk(st, bg->map);
	}
	free(by_start);
	free(unused);
	for (i = 0; !ret && i < res->nr_new_chunks; i++) {
		const struct btrfs_chunk_map *map = res->new_chunks[i];

		for (k = 0; !ret && k < map->num_stripes; k++)
			ret = alloc_add_stripe(st, map->stripes[k].devid, map->stripes[k].physical,
					       map->stripe_size);
	}
	if (ret)
		btrfs_alloc_state_free(st);
	return ret;
}

/* Free bytes of @type's writable block groups after the relocation */
static u64 free_after(const struct btrfs_reloc_result *res, u64 type)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < res->nr_bgs; i++) {
		const struct btrfs_reloc_bg_after *bg = &res->bgs[i];
		u64 held = bg->used + bg->bytes_super;

		if ((bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) == type && !bg->ro && held < bg->length)
			sum += bg->length - held;
	}
	return sum;
}

/*
 * Section 19.6: btrfs balance start -dconvert / -mconvert replayed
 * (relocation.c through forecast.c: can_start with its -f rule, every
 * block group of the type relocated), then the allocator from the
 * devices it leaves: the type's free bytes in its block groups plus the
 * chunks of the target it can still make (less the global reserve's part
 * for metadata), and what device @watch has left unallocated after them.
 */
static int try_convert(const struct space_report *report, const struct space_summary *sum,
		       const struct summary_space *s, u64 type, u64 target, u64 watch,
		       struct summary_remedy *r)
{
	const struct btrfs_space_info *si = space_info_of(report, s->name);
	struct forecast_balance_args *args;
	struct forecast_options opts;
	struct forecast_balance bal;
	struct btrfs_alloc_state st;
	u64 before = 0, after = 0, bytes;
	u32 i, count;
	int f, ret;

	forecast_options_init(&opts);
	opts.kernel_version = report->reserve.kernel_version;
	args = type == BTRFS_BLOCK_GROUP_DATA ? &opts.bal_data : &opts.bal_meta;
	args->set = true;
	args->flags = FORECAST_BAL_CONVERT | (r->soft ? FORECAST_BAL_SOFT : 0);
	args->target = target;
	if (r->usage) {
		args->flags |= FORECAST_BAL_USAGE;
		args->usage = r->usage;
	}
	mixed_filters(report, &opts, args, r);
	opts.bal_force = r->force;
	ret = btrfs_forecast_balance(report, &opts, &bal);
	if (ret)
		goto out;
	r->kind = SUMMARY_REMEDY_CONVERT;
	r->type = type;
	if (!r->soft)
		r->from_profile = s->profile;
	r->to_profile = target;
	r->writable_before = s->headroom;
	r->can_start = bal.can_start;
	r->completes = bal.completes && !bal.unplaced_bytes;
	r->exact = bal.exact;
	r->nr_selected = bal.nr_selected;
	r->moved_bytes = bal.moved_bytes;
	for (i = 0; i < sum->nr_devices; i++) {
		for (f = 0; f < (int)bal.res.nr_devs; f++)
			if (bal.res.devids[f] == sum->devices[i].devid)
				break;
		r->unallocated_after[i] = f < (int)bal.res.nr_devs ? bal.unallocated_after[f] :
					  sum->devices[i].unallocated;
		r->may_differ[i] = f < (int)bal.res.nr_devs && !bal.exact ? bal.may_differ[f] : 0;
		if (!sum->devices[i].counted)
			continue;
		before += sum->devices[i].unallocated;
		after += r->unallocated_after[i];
	}
	r->room_gained = after > before ? after - before : 0;
	if (!r->completes || !si)
		goto out;
	ret = alloc_state_after(report, sum, &bal.res, &st);
	if (ret)
		goto out;
	ret = fill_chunks(&st, type | target, si->chunk_size, 0, &bytes, &count);
	r->new_bytes = bytes;
	r->new_chunks = count;
	for (i = 0; watch && i < st.nr_devs; i++)
		if (st.devs[i].devid == watch)
			r->dead_after = st.devs[i].total_bytes - st.devs[i].bytes_used;
	btrfs_alloc_state_free(&st);
	bytes += free_after(&bal.res, type);
	r->writable_after = bytes > s->headroom_rsv ? bytes - s->headroom_rsv : 0;
out:
	btrfs_free_forecast_balance(&bal);
	return ret;
}

static u32 profile_copies(u64 profile)
{
	return btrfs_raid_array[btrfs_bg_flags_to_raid_index(profile)].ncopies;
}

static const struct summary_space *space_named(const struct space_summary *sum, const char *name)
{
	int k;

	for (k = 0; k < sum->nr_spaces; k++)
		if (!strcmp(sum->spaces[k].name, name) && sum->spaces[k].headroom_present)
			return &sum->spaces[k];
	return NULL;
}

/*
 * One conversion what-if as a remedy of @finding; kept when the balance
 * completes and the model says it helps (@helps: the rule of the caller)
 */
static int remedy_convert_usage(const struct space_report *report, struct space_summary *sum,
				int finding, const struct summary_space *s, u64 type, u64 target,
				u64 watch, bool force,
				bool (*helps)(const struct summary_remedy *r,
					      const struct summary_space *s),
				const u64 *soft_from, u64 usage)
{
	struct summary_remedy *r = &sum->remedies[sum->nr_remedies];
	u32 i;
	int ret;

	if (sum->nr_remedies >= SUMMARY_MAX_REMEDIES)
		return 0;
	memset(r, 0, sizeof(*r));
	r->usage = usage;
	r->finding = finding;
	r->force = force;
	r->soft = soft_from != NULL;
	r->from_profile = soft_from ? *soft_from : 0;
	r->dead_devid = watch;
	for (i = 0; watch && i < sum->nr_devices; i++)
		if (sum->dead[i].devid == watch)
			r->dead_before = sum->dead[i].hard;
	r->room_needed = s->tight_bound > s->headroom ? s->tight_bound - s->headroom : 0;
	r->unallocated_after = calloc(sum->nr_devices ? sum->nr_devices : 1, sizeof(u64));
	r->may_differ = calloc(sum->nr_devices ? sum->nr_devices : 1, sizeof(u64));
	if (!r->unallocated_after || !r->may_differ)
		ret = -ENOMEM;
	else
		ret = try_convert(report, sum, s, type, target, watch, r);
	if (!ret && r->completes && helps(r, s)) {
		sum->nr_remedies++;
		return 0;
	}
	free(r->unallocated_after);
	r->unallocated_after = NULL;
	free(r->may_differ);
	r->may_differ = NULL;
	return ret;
}

static int remedy_convert(const struct space_report *report, struct space_summary *sum,
			  int finding, const struct summary_space *s, u64 type, u64 target,
			  u64 watch, bool force, bool (*helps)(const struct summary_remedy *r,
							       const struct summary_space *s),
			  const u64 *soft_from)
{
	return remedy_convert_usage(report, sum, finding, s, type, target, watch, force, helps,
				    soft_from, 0);
}

/* A finding's conversion: the type's headroom lifted to ok (19.2's tight bound) */
static bool convert_lifts(const struct summary_remedy *r, const struct summary_space *s)
{
	return r->writable_after > s->headroom && r->writable_after >= s->tight_bound;
}

/* The kernel's has_redundancy() rule: two copies, or a device may fail */
static bool keeps_redundancy(u64 profile)
{
	const struct btrfs_raid_attr *a = &btrfs_raid_array[btrfs_bg_flags_to_raid_index(profile)];

	return a->ncopies >= 2 || a->tolerated_failures >= 1;
}

/* The single profile's bits: none */
#define SUMMARY_PROFILE_SINGLE	0ULL

/*
 * Section 19.6, a finding's conversions, the one that loses least first;
 * the first whose balance completes and lifts the type is kept.
 * Metadata: from RAID1C3/C4 or RAID5/6 to RAID1, from more than one
 * device's copies to DUP (both copies on one device), DUP on several
 * devices to RAID1, and last to single with -f (one copy: btrfs_balance()
 * refuses a metadata redundancy drop without it).  Data: RAID1 or RAID10
 * on three or more devices to RAID5, RAID1C3/C4 on four or more to RAID6
 * (a device, two, may still fail, in fewer bytes), then single.
 */
static int remedy_convert_finding(const struct space_report *report, struct space_summary *sum,
				  int finding)
{
	const struct summary_space *s = &sum->spaces[sum->findings[finding].space];
	u64 p = s->profile, type, cand[3];
	u32 devs = count_writeable(report);
	int n = 0, i, ret, before;

	if (s->flags_metadata && !strcmp(s->name, "metadata")) {
		type = BTRFS_BLOCK_GROUP_METADATA;
		if (!keeps_redundancy(p))
			return 0;
		if ((p & (BTRFS_BLOCK_GROUP_RAID1C3 | BTRFS_BLOCK_GROUP_RAID1C4 |
			  BTRFS_BLOCK_GROUP_RAID56_MASK)) && devs >= 2)
			cand[n++] = BTRFS_BLOCK_GROUP_RAID1;
		else if ((p & BTRFS_BLOCK_GROUP_DUP) && devs >= 2)
			cand[n++] = BTRFS_BLOCK_GROUP_RAID1;
		if (!(p & BTRFS_BLOCK_GROUP_DUP))
			cand[n++] = BTRFS_BLOCK_GROUP_DUP;
		cand[n++] = SUMMARY_PROFILE_SINGLE;
	} else if (!strcmp(s->name, "data") && profile_copies(p) >= 2) {
		type = BTRFS_BLOCK_GROUP_DATA;
		if ((p & (BTRFS_BLOCK_GROUP_RAID1 | BTRFS_BLOCK_GROUP_RAID10)) && devs >= 3)
			cand[n++] = BTRFS_BLOCK_GROUP_RAID5;
		else if ((p & (BTRFS_BLOCK_GROUP_RAID1C3 | BTRFS_BLOCK_GROUP_RAID1C4)) && devs >= 4)
			cand[n++] = BTRFS_BLOCK_GROUP_RAID6;
		cand[n++] = SUMMARY_PROFILE_SINGLE;
	} else {
		return 0;
	}
	for (i = 0; i < n; i++) {
		before = sum->nr_remedies;
		ret = remedy_convert(report, sum, finding, s, type, cand[i], 0,
				     type == BTRFS_BLOCK_GROUP_METADATA && !keeps_redundancy(cand[i]),
				     convert_lifts, NULL);
		if (ret || sum->nr_remedies > before)
			return ret;
	}
	return 0;
}

/* Dead space's conversion: the device's dead bytes at least halved */
static bool convert_stops_waste(const struct summary_remedy *r, const struct summary_space *s)
{
	return r->writable_after > s->headroom && r->dead_after < r->dead_before / 2;
}

/* Metadata DUP to RAID1: the type stays ok (or no worse than now) */
static bool convert_keeps_room(const struct summary_remedy *r, const struct summary_space *s)
{
	return r->writable_after >= min_u64(s->headroom, s->tight_bound);
}

/*
 * Section 19.6, no finding: metadata DUP on several writeable devices
 * keeps both copies on one device; -mconvert=raid1 when the model says
 * it completes and leaves metadata its room.
 */
static int remedy_dup_metadata(const struct space_report *report, struct space_summary *sum)
{
	const struct summary_space *s = space_named(sum, "metadata");
	int i;

	if (!s || !(s->profile & BTRFS_BLOCK_GROUP_DUP) || count_writeable(report) < 2)
		return 0;
	for (i = 0; i < sum->nr_remedies; i++)
		if (sum->remedies[i].kind == SUMMARY_REMEDY_CONVERT &&
		    sum->remedies[i].type == BTRFS_BLOCK_GROUP_METADATA)
			return 0;
	return remedy_convert(report, sum, SUMMARY_FINDING_PROFILE, s,
			      BTRFS_BLOCK_GROUP_METADATA, BTRFS_BLOCK_GROUP_RAID1, 0, false,
			      convert_keeps_room, NULL);
}

/* A conversion that finishes another: the type not left critical by it (or no worse) */
static bool convert_not_critical(const struct summary_remedy *r, const struct summary_space *s)
{
	return r->writable_after >= min_u64(s->headroom, s->critical_bound);
}

/*
 * The profile of @type's block groups that new chunks do not get
 * (@profile, btrfs_get_alloc_profile()), and how many there are: a
 * conversion cancelled, interrupted or run with a limit leaves both
 */
static u32 other_profile(const struct btrfs_fs_info *fs_info, u64 type, u64 profile, u64 *other,
			 u64 *used, u64 *cand, u32 *nr_cand)
{
	bool seen[102] = { false };
	u32 i, n = 0;

	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];
		u64 p = bg->flags & BTRFS_BLOCK_GROUP_PROFILE_MASK;

		/* read-only too: the mount sets single and RAID0 ones so beside mirrored ones */
		if ((bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) != type || p == profile)
			continue;
		if (!n++)
			*other = p;
		*used += bg->used;
		/* should_balance_chunk()'s usage=N: selected when used < length * N / 100 */
		if (bg->length && bg->used * 100 / bg->length + 1 <= 100)
			seen[bg->used * 100 / bg->length + 1] = true;
	}
	for (i = 1, *nr_cand = 0; i <= 100; i++)
		if (seen[i])
			cand[(*nr_cand)++] = i;
	return n;
}

/* A conversion of some groups only: it moves data and leaves the type not critical */
static bool converts_some(const struct summary_remedy *r, const struct summary_space *s)
{
	return r->moved_bytes && convert_not_critical(r, s);
}

/*
 * Section 19.6, no finding: data or metadata in block groups of a profile
 * beside the one new chunks get (a conversion not finished: those keep
 * their copies, fewer or more than the rest).  btrfs balance start
 * -dconvert=P,soft (-mconvert) with P the allocation profile relocates
 * only them (chunk_soft_convert_filter()); printed when the what-if
 * completes and does not leave the type critical: more copies take more
 * room, which the text shows (writable after and now).  When it does not
 * (the what-if ends in ENOSPC, or leaves the type critical), the same with
 * usage=N (should_balance_chunk() applies both filters): the largest N of
 * the groups' own thresholds (each tried, at most 100) whose
 * what-if completes, moves some data (converting empty groups changes
 * nothing) and passes the same rule; none when none does.
 */
static int remedy_mixed_profiles(const struct space_report *report, struct space_summary *sum)
{
	static const char *const names[] = { "data", "metadata" };
	static const u64 types[] = { BTRFS_BLOCK_GROUP_DATA, BTRFS_BLOCK_GROUP_METADATA };
	const struct summary_space *s;
	u64 other = 0, target, used, cand[100];
	u32 groups, n, k;
	int i, before, ret = 0;
	bool force, whole_completes;

	for (i = 0; i < 2 && !ret; i++) {
		s = space_named(sum, names[i]);
		if (!s)
			continue;
		target = s->profile & BTRFS_BLOCK_GROUP_PROFILE_MASK;
		used = 0;
		groups = other_profile(report->fs_info, types[i], target, &other, &used, cand, &n);
		if (!groups)
			continue;
		force = types[i] == BTRFS_BLOCK_GROUP_METADATA && !keeps_redundancy(target);
		before = sum->nr_remedies;
		ret = remedy_convert(report, sum, SUMMARY_FINDING_MIXED, s, types[i], target, 0,
				     force, convert_not_critical, &other);
		/* not kept: its slot still holds the what-if's outcome */
		whole_completes = before < SUMMARY_MAX_REMEDIES && sum->remedies[before].completes;
		/* the largest first: it converts the most that still fits; every one */
		for (k = n; !ret && sum->nr_remedies == before && k > 0; k--)
			ret = remedy_convert_usage(report, sum, SUMMARY_FINDING_MIXED, s, types[i],
						   target, 0, force, converts_some, &other,
						   cand[k - 1]);
		if (sum->nr_remedies > before) {
			sum->remedies[before].other_groups = groups;
			sum->remedies[before].other_used = used;
			sum->remedies[before].whole_completes = whole_completes;
		}
	}
	return ret;
}

/* Dead bytes as the summary shows them: without the first MiB */
static u64 dead_shown(u64 dead)
{
	return dead > SUMMARY_DEVICE_RESERVED ? dead - SUMMARY_DEVICE_RESERVED : 0;
}

/*
 * Section 19.6: a device change stops the waste when the data fill after
 * it leaves under 256 MiB (the steps sizes are tried in) and under half
 * of the dead bytes unused on the device
 */
static bool waste_stopped(u64 before, u64 after)
{
	return dead_shown(after) < min_u64(SUMMARY_ADD_MIN, dead_shown(before) / 2 + 1);
}

/* The type's headroom with @new_bytes in new chunks: the fill's free bytes in block groups besides */
static u64 writable_with(const struct space_summary *sum, const struct summary_space *s,
			 u64 new_bytes)
{
	const struct forecast_fill *fill = fill_of(&sum->forecast, s->name);
	u64 all = (fill ? fill->free_existing : 0) + new_bytes;

	return all > s->headroom_rsv ? all - s->headroom_rsv : 0;
}

/* One device change of @size (@chg: added, or @chg->devid's new size), run into @r */
static int try_change(const struct space_report *report, const struct space_summary *sum,
		      const struct summary_space *s, u64 type, u64 chunk_size,
		      struct dev_change *chg, u64 size, struct summary_remedy *r)
{
	int ret;

	if (chg->devid)
		chg->new_size = size;
	else
		chg->add_size = size;
	ret = whatif_devices(report, sum, type | s->profile, chunk_size, chg, 0, r->dead_devid,
			     &r->new_bytes, &r->new_chunks, &r->dead_after);
	r->writable_before = s->headroom;
	r->writable_after = writable_with(sum, s, r->new_bytes);
	return ret;
}

/* Sizes are tried in 256 MiB steps */
#define SUMMARY_SIZE_STEP	SUMMARY_ADD_MIN

static u64 round_up_step(u64 bytes)
{
	return (bytes + SUMMARY_SIZE_STEP - 1) / SUMMARY_SIZE_STEP * SUMMARY_SIZE_STEP;
}

/*
 * Section 19.6: the smallest size from @from in 256 MiB steps, at most
 * @limit, whose change stops the waste of the dead device r->dead_devid
 * (the data fill's leftover on it falls as the size grows: bisection),
 * run into @r; false when even @limit does not (then @r is @limit's).
 */
static int search_dead_size(const struct space_report *report, const struct space_summary *sum,
			    const struct summary_space *s, u64 type, u64 chunk_size,
			    struct dev_change *chg, u64 from, u64 limit,
			    struct summary_remedy *r, bool *found)
{
	u64 lo = 0, hi = (limit - from) / SUMMARY_SIZE_STEP, mid;
	int ret;

	*found = false;
	ret = try_change(report, sum, s, type, chunk_size, chg, from + hi * SUMMARY_SIZE_STEP, r);
	if (ret || !waste_stopped(r->dead_before, r->dead_after))
		return ret;
	ret = try_change(report, sum, s, type, chunk_size, chg, from, r);
	if (ret)
		return ret;
	if (!waste_stopped(r->dead_before, r->dead_after)) {
		/* from fails, from + hi * step stops it */
		while (hi - lo > 1) {
			mid = (lo + hi) / 2;
			ret = try_change(report, sum, s, type, chunk_size, chg,
					 from + mid * SUMMARY_SIZE_STEP, r);
			if (ret)
				return ret;
			if (waste_stopped(r->dead_before, r->dead_after))
				hi = mid;
			else
				lo = mid;
		}
		ret = try_change(report, sum, s, type, chunk_size, chg,
				 from + hi * SUMMARY_SIZE_STEP, r);
	}
	*found = true;
	return ret;
}

/*
 * Section 19.6: btrfs replace start makes each block group with a stripe
 * on the source read-only while it copies it (scrub_enumerate_chunks(),
 * btrfs_inc_block_group_ro()).  The check there is btrfs_can_overcommit(),
 * which counts the unallocated space of every device, even where no chunk
 * of the profile fits; a metadata group made read-only then leaves the
 * transactions nothing to allocate from, and the next commit aborts with
 * -ENOSPC (seen on 6.18: metadata free -5.50MiB, readonly 71.20MiB, the
 * filesystem forced read-only).  Safe when each such group leaves a
 * transaction's reservation free in the others, or a new metadata chunk
 * fits.
 */
static bool replace_metadata_safe(const struct space_report *report,
				  const struct space_summary *sum, u64 devid)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	const struct summary_space *meta = NULL;
	u64 bg_free;
	u32 i;

	for (i = 0; i < (u32)sum->nr_spaces; i++)
		if (sum->spaces[i].flags_metadata)
			meta = &sum->spaces[i];
	if (!meta || meta->new_chunks)
		return true;
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		if (!(bg->flags & BTRFS_BLOCK_GROUP_METADATA) || bg->ro ||
		    !chunk_on_device(bg->map, devid))
			continue;
		bg_free = bg->length - min_u64(bg->used + bg->bytes_super, bg->length);
		if (meta->free < bg_free + meta->reservation)
			return false;
	}
	return true;
}

/*
 * Section 19.6: the smallest writeable device other than the dead one
 * replaced by a larger device (btrfs replace start keeps the dev extents
 * where they are and the old size, btrfs filesystem resize DEVID:max then
 * gives the rest): the smallest size that stops the waste
 */
static int remedy_replace(const struct space_report *report, struct space_summary *sum,
			  const struct summary_space *data, u64 chunk_size, u64 watch, u64 dead)
{
	struct summary_remedy *r = &sum->remedies[sum->nr_remedies];
	struct dev_change chg = { 0 };
	u64 from;
	bool found;
	u32 i, pick = sum->nr_devices;
	int ret;

	if (sum->nr_remedies >= SUMMARY_MAX_REMEDIES)
		return 0;
	for (i = 0; i < sum->nr_devices; i++) {
		if (!sum->devices[i].counted || sum->devices[i].devid == watch)
			continue;
		if (pick == sum->nr_devices || report->devices[i].size < report->devices[pick].size)
			pick = i;
	}
	if (pick == sum->nr_devices ||
	    !replace_metadata_safe(report, sum, sum->devices[pick].devid))
		return 0;
	memset(r, 0, sizeof(*r));
	r->kind = SUMMARY_REMEDY_REPLACE;
	r->finding = SUMMARY_FINDING_DEAD;
	r->type = BTRFS_BLOCK_GROUP_DATA;
	r->dead_devid = watch;
	r->dead_before = dead;
	r->devid = sum->devices[pick].devid;
	r->old_size = report->devices[pick].size;
	chg.devid = r->devid;
	chg.replace = true;
	/* btrfs_dev_replace_start(): the new device at least the old one's size */
	from = round_up_step(r->old_size + 1);
	ret = search_dead_size(report, sum, data, BTRFS_BLOCK_GROUP_DATA, chunk_size, &chg, from,
			       from + round_up_step(2 * dead_shown(dead)), r, &found);
	r->new_size = chg.new_size;
	r->enough = found;
	if (!ret && found && r->writable_after > r->writable_before)
		sum->nr_remedies++;
	return ret;
}

/* The writeable device with the most hard dead space, if at least the first MiB and one data chunk */
static bool dead_device(const struct space_summary *sum, const struct summary_space *data,
			u32 *pick, u64 *best)
{
	u32 i;

	*best = 0;
	*pick = 0;
	for (i = 0; i < sum->nr_devices; i++) {
		if (sum->devices[i].counted && sum->dead[i].hard > *best) {
			*best = sum->dead[i].hard;
			*pick = i;
		}
	}
	return *best >= SUMMARY_DEVICE_RESERVED + data->chunk_size;
}

/*
 * Section 19.6: a device with hard dead space of at least one data chunk
 * (an unequal pool): the smallest device (256 MiB steps) whose addition
 * stops the waste, the smallest device replaced by a larger one, or the
 * data in one copy.
 */
static int remedy_dead_space(const struct space_report *report, struct space_summary *sum)
{
	const struct summary_space *data = NULL;
	const struct btrfs_space_info *si = space_info_of(report, "data");
	struct summary_remedy *r;
	struct dev_change chg = { 0 };
	u64 best = 0, limit;
	bool found;
	u32 pick = 0;
	int k, ret;

	for (k = 0; k < sum->nr_spaces; k++)
		if (!strcmp(sum->spaces[k].name, "data") && sum->spaces[k].headroom_present)
			data = &sum->spaces[k];
	if (!data || !si || sum->nr_remedies >= SUMMARY_MAX_REMEDIES)
		return 0;
	if (!dead_device(sum, data, &pick, &best))
		return 0;
	r = &sum->remedies[sum->nr_remedies];
	memset(r, 0, sizeof(*r));
	r->kind = SUMMARY_REMEDY_DEVICE_ADD;
	r->finding = SUMMARY_FINDING_DEAD;
	r->type = BTRFS_BLOCK_GROUP_DATA;
	/* one device of the size found stops the waste */
	r->add_count = 1;
	r->dead_devid = sum->devices[pick].devid;
	r->dead_before = best;
	limit = round_up_step(2 * dead_shown(best));
	ret = search_dead_size(report, sum, data, BTRFS_BLOCK_GROUP_DATA, si->chunk_size, &chg,
			       SUMMARY_SIZE_STEP, limit, r, &found);
	if (ret)
		return ret;
	r->add_size = chg.add_size;
	/* no size up to twice the dead bytes stops it: shown with the dead bytes' size */
	if (!found) {
		ret = try_change(report, sum, data, BTRFS_BLOCK_GROUP_DATA, si->chunk_size, &chg,
				 round_up_step(dead_shown(best)), r);
		if (ret)
			return ret;
		r->add_size = chg.add_size;
	}
	r->enough = found || r->dead_after < r->dead_before / 2;
	sum->nr_remedies++;
	ret = remedy_replace(report, sum, data, si->chunk_size, r->dead_devid, best);
	if (ret)
		return ret;
	/* or the data to one copy: the allocator then uses every device's room */
	if (profile_copies(data->profile) < 2)
		return 0;
	for (k = 0; k < sum->nr_remedies; k++)
		if (sum->remedies[k].kind == SUMMARY_REMEDY_CONVERT &&
		    sum->remedies[k].type == BTRFS_BLOCK_GROUP_DATA)
			return 0;	/* a data finding's conversion says it already */
	return remedy_convert(report, sum, SUMMARY_FINDING_DEAD, data, BTRFS_BLOCK_GROUP_DATA, 0,
			      r->dead_devid, false, convert_stops_waste, NULL);
}

/*
 * Section 19.6: a device larger than its DEV_ITEM (a partition or file
 * grown, the filesystem not resized; report.c's slack):
 * btrfs filesystem resize DEVID:max gives it the device's size, rounded
 * down to the sector size (btrfs_ioctl_resize(), btrfs_grow_device()).
 * For the first type finding, else data; kept when the type gains.
 */
static int remedy_slack(const struct space_report *report, struct space_summary *sum)
{
	const struct summary_space *s = NULL;
	const struct btrfs_space_info *si;
	struct summary_remedy *r;
	struct dev_change chg = { 0 };
	int finding = SUMMARY_FINDING_SLACK, k;
	u32 i, sectorsize = report->fs_info->sectorsize ? report->fs_info->sectorsize : 4096;
	int ret;

	u64 watch = 0, dead = 0;

	for (k = 0; k < sum->nr_findings && !s; k++)
		if (sum->findings[k].kind == SUMMARY_FIND_SPACE &&
		    sum->spaces[sum->findings[k].space].headroom_present) {
			s = &sum->spaces[sum->findings[k].space];
			finding = k;
		}
	/* no finding: for dead space, if there is some; the data fill watches it */
	if (!s && (s = space_named(sum, "data")) && dead_device(sum, s, &i, &dead)) {
		finding = SUMMARY_FINDING_DEAD;
		watch = sum->devices[i].devid;
	}
	si = s ? space_info_of(report, s->name) : NULL;
	if (!si)
		return 0;
	for (i = 0; i < sum->nr_devices && sum->nr_remedies < SUMMARY_MAX_REMEDIES; i++) {
		const struct space_report_device *dev = &report->devices[i];

		if (!sum->devices[i].counted || dev->slack < SUMMARY_DEVICE_RESERVED)
			continue;
		r = &sum->remedies[sum->nr_remedies];
		memset(r, 0, sizeof(*r));
		r->kind = SUMMARY_REMEDY_RESIZE;
		r->finding = finding;
		r->type = si->flags & BTRFS_BLOCK_GROUP_TYPE_MASK;
		r->devid = dev->devid;
		r->old_size = dev->size;
		r->dead_devid = watch;
		r->dead_before = dead;
		chg.devid = dev->devid;
		ret = try_change(report, sum, s, r->type, si->chunk_size, &chg,
				 (dev->size + dev->slack) / sectorsize * sectorsize, r);
		if (ret)
			return ret;
		r->new_size = chg.new_size;
		r->enough = r->writable_after > r->writable_before;
		if (r->enough)
			sum->nr_remedies++;
	}
	return 0;
}

/* Section 19.6: the block-group tree, for a slow mount (mount-cost.c) */
static void remedy_bg_tree(const struct btrfs_mount_estimate *est, struct space_summary *sum,
			   int finding)
{
	struct summary_remedy *r = &sum->remedies[sum->nr_remedies];

	if (est->has_bg_tree || est->bg_tree.total_reads >= est->now.total_reads)
		return;
	memset(r, 0, sizeof(*r));
	r->kind = SUMMARY_REMEDY_BG_TREE;
	r->finding = finding;
	r->reads_now = est->now.total_reads;
	r->reads_after = est->bg_tree.total_reads;
	r->hdd_seconds_after = btrfs_mount_seconds(r->reads_after, latency_of("hdd"));
	sum->nr_remedies++;
}

int btrfs_summary_remedies(const struct space_report *report,
			   const struct btrfs_mount_estimate *est,
			   struct space_summary *sum)
{
	int i, ret;

	for (i = 0; i < sum->nr_findings; i++) {
		const struct summary_finding *f = &sum->findings[i];

		if (f->kind == SUMMARY_FIND_MOUNT) {
			remedy_bg_tree(est, sum, i);
			continue;
		}
		if (!sum->spaces[f->space].headroom_present || !count_writeable(report))
			continue;
		ret = remedy_balance(report, sum, i);
		if (!ret)
			ret = remedy_meta_balance(report, sum, i);
		if (!ret)
			ret = remedy_nodiscard(report, sum, i);
		if (!ret)
			ret = remedy_delete_data(report, sum, i);
		if (!ret)
			ret = remedy_device_add(report, sum, i);
		if (!ret)
			ret = remedy_convert_finding(report, sum, i);
		if (ret)
			return ret;
	}
	/* a device's own unused size first: no hardware to buy */
	ret = remedy_slack(report, sum);
	if (!ret)
		ret = remedy_dead_space(report, sum);
	if (!ret)
		ret = remedy_dup_metadata(report, sum);
	return ret ? ret : remedy_mixed_profiles(report, sum);
}

/* Section 19.3: the tight and critical lines, worst first, stable */
static void collect_findings(struct space_summary *sum)
{
	int i, lvl;

	for (lvl = SUMMARY_CRITICAL; lvl > SUMMARY_OK; lvl--) {
		for (i = 0; i < sum->nr_spaces; i++) {
			if (sum->spaces[i].level != (enum summary_level)lvl)
				continue;
			sum->findings[sum->nr_findings++] = (struct summary_finding) {
				.level = lvl, .kind = SUMMARY_FIND_SPACE, .space = i,
			};
		}
		if (sum->mount_level == (enum summary_level)lvl)
			sum->findings[sum->nr_findings++] = (struct summary_finding) {
				.level = lvl, .kind = SUMMARY_FIND_MOUNT, .space = -1,
			};
	}
	sum->level = sum->nr_findings ? sum->findings[0].level : SUMMARY_OK;
}

/*
 * Section 19.7: the deleted subvolumes the cleaner has still to drop
 * (root-tree.c); live, from the devices' last commit
 */
static void count_deleted_subvolumes(const struct space_report *report,
				     struct space_summary *sum)
{
	/* the tree reads fill the block cache; nothing of the filesystem changes */
	struct btrfs_fs_info *fs_info = (struct btrfs_fs_info *)report->fs_info;

	if (report->live && !btrfs_live_on_disk_readable(fs_info))
		return;
	sum->deleted_subvolumes_known =
		!btrfs_count_orphan_roots(fs_info, &sum->deleted_subvolumes);
}

/*
 * Section 19.9: the quota limits, which stop writes with EDQUOT before
 * ENOSPC (qgroup.c); live, from the devices' last commit
 */
static void read_quotas(const struct space_report *report, struct space_summary *sum)
{
	/* the tree reads fill the block cache; nothing of the filesystem changes */
	struct btrfs_fs_info *fs_info = (struct btrfs_fs_info *)report->fs_info;

	if (report->live && !btrfs_live_on_disk_readable(fs_info))
		return;
	sum->quota_known = !btrfs_read_quota_state(fs_info, &sum->quota);
}

int btrfs_build_summary(const struct space_report *report,
			const struct btrfs_mount_estimate *est,
			struct space_summary *sum)
{
	struct forecast_options fopts;
	int i;

	memset(sum, 0, sizeof(*sum));
	if (fill_devices(report, sum))
		goto nomem;
	forecast_options_init(&fopts);
	fopts.kernel_version = report->reserve.kernel_version;
	if (btrfs_build_forecast(report, &fopts, &sum->forecast))
		goto nomem;
	fill_dead(sum);
	for (i = 0; i < report->nr_space_infos; i++) {
		struct summary_space *s = &sum->spaces[sum->nr_spaces++];

		fill_space(report, &report->space_infos[i], s);
		rate_space(report, s, fill_of(&sum->forecast, s->name));
	}
	fill_preempt(report, sum);
	rate_mount(est, sum);
	count_deleted_subvolumes(report, sum);
	read_quotas(report, sum);
	collect_findings(sum);
	if (btrfs_summary_remedies(report, est, sum))
		goto nomem;
	return 0;
nomem:
	btrfs_free_summary(sum);
	return -ENOMEM;
}

void btrfs_free_summary(struct space_summary *sum)
{
	int i;

	for (i = 0; i < sum->nr_remedies; i++) {
		free(sum->remedies[i].unallocated_after);
		free(sum->remedies[i].may_differ);
		free(sum->remedies[i].owners);
	}
	sum->nr_remedies = 0;
	free(sum->devices);
	sum->devices = NULL;
	free(sum->dead);
	sum->dead = NULL;
	btrfs_free_forecast(&sum->forecast);
}
