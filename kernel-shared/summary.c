// SPDX-License-Identifier: GPL-2.0
/*
 * The inspect summary (summary.h).  The levels are the tool's rules, not
 * the kernel's: Documentation/formulas.md section 19 states each of them.
 * The chunk count replays the kernel's chunk sizing, gather_device_info()
 * and decide_stripe_size_regular() of fs/btrfs/volumes.c (6.18), on each
 * device's unallocated space taken as one hole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/block-group.h"
#include "kernel-shared/summary.h"
#include "kernel-shared/volumes.h"

#define SZ_64K			(64ULL << 10)
#define SZ_16M			(16ULL << 20)
#define DEVICE_RANGE_RESERVED	SZ_1M	/* never allocated: BTRFS_DEVICE_RANGE_RESERVED */
#define MAX_DEVS_SYS_CHUNK	16
#define MAX_ALLOC_STEPS		100000

/*
 * The two fields of the kernel's btrfs_raid_array that the tool's table in
 * volumes.c does not carry: devs_max (0: as many as there are) and
 * devs_increment.
 */
static const u8 raid_devs_max[BTRFS_NR_RAID_TYPES] = {
	[BTRFS_RAID_RAID10] = 0, [BTRFS_RAID_RAID1] = 2, [BTRFS_RAID_DUP] = 1,
	[BTRFS_RAID_RAID0] = 0, [BTRFS_RAID_SINGLE] = 1, [BTRFS_RAID_RAID5] = 0,
	[BTRFS_RAID_RAID6] = 0, [BTRFS_RAID_RAID1C3] = 3, [BTRFS_RAID_RAID1C4] = 4,
};

static const u8 raid_devs_increment[BTRFS_NR_RAID_TYPES] = {
	[BTRFS_RAID_RAID10] = 2, [BTRFS_RAID_RAID1] = 2, [BTRFS_RAID_DUP] = 1,
	[BTRFS_RAID_RAID0] = 1, [BTRFS_RAID_SINGLE] = 1, [BTRFS_RAID_RAID5] = 1,
	[BTRFS_RAID_RAID6] = 1, [BTRFS_RAID_RAID1C3] = 3, [BTRFS_RAID_RAID1C4] = 4,
};

static const char * const level_names[] = {
	[SUMMARY_OK] = "ok", [SUMMARY_TIGHT] = "tight", [SUMMARY_CRITICAL] = "critical",
};

const char *btrfs_summary_level_name(enum summary_level level)
{
	return level_names[level];
}

/* The limits init_alloc_chunk_ctl_policy_regular() sets for one chunk */
struct alloc_ctl {
	const struct btrfs_raid_attr *attr;
	u32 devs_max;
	u32 devs_increment;
	u64 max_chunk_size;
	u64 max_stripe_size;
};

static void init_alloc_ctl(const struct space_report *report, u64 type, u64 profile,
			   u64 chunk_size, u32 nr_writeable, struct alloc_ctl *ctl)
{
	enum btrfs_raid_types index = btrfs_bg_flags_to_raid_index(profile);
	u64 tenth = report->reserve.state.total_rw_bytes * 10 / 100;

	ctl->attr = &btrfs_raid_array[index];
	ctl->devs_max = raid_devs_max[index] ? raid_devs_max[index] : nr_writeable;
	if (type & BTRFS_BLOCK_GROUP_SYSTEM && ctl->devs_max > MAX_DEVS_SYS_CHUNK)
		ctl->devs_max = MAX_DEVS_SYS_CHUNK;
	ctl->devs_increment = raid_devs_increment[index];
	ctl->max_chunk_size = chunk_size < tenth ? chunk_size : tenth;
	ctl->max_stripe_size = ctl->max_chunk_size < SZ_1G ? ctl->max_chunk_size : SZ_1G;
}

static u64 round_up_u64(u64 x, u64 align)
{
	return (x + align - 1) / align * align;
}

/*
 * decide_stripe_size_regular(): the stripe size on @ndevs devices whose
 * smallest room is @min_avail; returns the chunk's logical size.
 */
static u64 decide_chunk(const struct alloc_ctl *ctl, u32 ndevs, u64 min_avail,
			u64 *stripe_out)
{
	u32 num_stripes = ndevs * ctl->attr->dev_stripes;
	u64 data_stripes = (num_stripes - ctl->attr->nparity) / ctl->attr->ncopies;
	u64 stripe = min_avail / ctl->attr->dev_stripes;

	if (!data_stripes)
		return 0;
	if (stripe * data_stripes > ctl->max_chunk_size) {
		u64 reduced = round_up_u64(ctl->max_chunk_size / data_stripes, SZ_16M);

		stripe = reduced < stripe ? reduced : stripe;
	}
	if (stripe > SZ_1G)
		stripe = SZ_1G;
	stripe = stripe / SZ_64K * SZ_64K;
	*stripe_out = stripe;
	return stripe * data_stripes;
}

static u32 count_writeable(const struct space_report *report)
{
	u32 i, n = 0;

	for (i = 0; i < report->nr_devices; i++)
		n += report->fs_info->devices[i].writeable && !report->devices[i].missing;
	return n;
}

/*
 * A full chunk of @profile: what the allocator makes when every writeable
 * device has room for a whole stripe.
 */
u64 btrfs_summary_chunk_size(const struct space_report *report, u64 type,
			     u64 profile, u64 chunk_size)
{
	u32 nr = count_writeable(report);
	struct alloc_ctl ctl;
	u32 ndevs;
	u64 stripe;

	init_alloc_ctl(report, type, profile, chunk_size, nr, &ctl);
	ndevs = nr - nr % ctl.devs_increment;
	if (ndevs > ctl.devs_max)
		ndevs = ctl.devs_max;
	if (ndevs < ctl.attr->devs_min)
		ndevs = ctl.attr->devs_min;
	return decide_chunk(&ctl, ndevs, ctl.max_stripe_size * ctl.attr->dev_stripes,
			    &stripe);
}

struct dev_room {
	u64 avail;			/* max_avail of gather_device_info() */
	u64 total_avail;
};

static int cmp_room(const void *a, const void *b)
{
	const struct dev_room *x = a, *y = b;

	/* btrfs_cmp_device_info(): largest max_avail, then total_avail, first */
	if (x->avail != y->avail)
		return x->avail < y->avail ? 1 : -1;
	if (x->total_avail != y->total_avail)
		return x->total_avail < y->total_avail ? 1 : -1;
	return 0;
}

/* gather_device_info(): the devices that can take a stripe, largest first */
static u32 gather_rooms(const struct alloc_ctl *ctl, const u64 *left, u32 nr,
			struct dev_room *rooms)
{
	u64 want = ctl->max_stripe_size * ctl->attr->dev_stripes;
	u64 min = SZ_64K * ctl->attr->dev_stripes;
	u32 i, n = 0;

	for (i = 0; i < nr; i++) {
		if (left[i] < min)
			continue;
		rooms[n].avail = left[i] < want ? left[i] : want;
		rooms[n].total_avail = left[i];
		n++;
	}
	qsort(rooms, n, sizeof(*rooms), cmp_room);
	return n;
}

static int fill_left(const struct space_report *report, u64 **left_out, u32 *nr_out)
{
	u64 *left = calloc(report->nr_devices ? report->nr_devices : 1, sizeof(*left));
	u32 i, n = 0;

	if (!left)
		return -ENOMEM;
	for (i = 0; i < report->nr_devices; i++) {
		u64 unalloc = report->devices[i].unallocated;

		if (!report->fs_info->devices[i].writeable || report->devices[i].missing)
			continue;
		left[n++] = unalloc > DEVICE_RANGE_RESERVED ? unalloc - DEVICE_RANGE_RESERVED : 0;
	}
	*left_out = left;
	*nr_out = n;
	return 0;
}

/*
 * One allocation step: the rooms sorted as the kernel sorts them, the
 * stripe decided, and the stripe's bytes taken from the chosen devices.
 */
static u64 alloc_one(const struct alloc_ctl *ctl, u64 *left, u32 nr,
		     struct dev_room *rooms, u32 *idx)
{
	u32 n = gather_rooms(ctl, left, nr, rooms), ndevs, i, j;
	u64 stripe, bytes;

	ndevs = n - n % ctl->devs_increment;
	if (!ndevs || ndevs < ctl->attr->devs_min)
		return 0;
	if (ndevs > ctl->devs_max)
		ndevs = ctl->devs_max;
	bytes = decide_chunk(ctl, ndevs, rooms[ndevs - 1].avail, &stripe);
	if (!bytes)
		return 0;
	/* the chosen devices: the first ndevs of the sorted rooms */
	memset(idx, 0xff, nr * sizeof(*idx));
	for (i = 0; i < ndevs; i++) {
		for (j = 0; j < nr; j++) {
			if (idx[j] == (u32)-1 && left[j] == rooms[i].total_avail) {
				idx[j] = i;
				break;
			}
		}
	}
	for (j = 0; j < nr; j++)
		if (idx[j] != (u32)-1)
			left[j] -= stripe * ctl->attr->dev_stripes;
	return bytes;
}

/*
 * How many chunks of @profile the unallocated space makes if this type
 * alone allocates, as successive btrfs_create_chunk() calls would.
 */
u64 btrfs_summary_new_chunks(const struct space_report *report, u64 type,
			     u64 profile, u64 chunk_size, u64 *bytes)
{
	struct dev_room *rooms;
	struct alloc_ctl ctl;
	u64 *left, count = 0, one;
	u32 nr, *idx;

	*bytes = 0;
	if (fill_left(report, &left, &nr))
		return 0;
	rooms = calloc(nr ? nr : 1, sizeof(*rooms));
	idx = calloc(nr ? nr : 1, sizeof(*idx));
	if (!rooms || !idx)
		goto out;
	init_alloc_ctl(report, type, profile, chunk_size, nr, &ctl);
	while (count < MAX_ALLOC_STEPS) {
		one = alloc_one(&ctl, left, nr, rooms, idx);
		if (!one)
			break;
		count++;
		*bytes += one;
	}
out:
	free(idx);
	free(rooms);
	free(left);
	return count;
}

static u64 space_held(const struct btrfs_space_info *si)
{
	return si->bytes_used + si->bytes_reserved + si->bytes_pinned +
	       si->bytes_readonly + si->bytes_zone_unusable + si->bytes_may_use;
}

static enum summary_level worse(enum summary_level a, enum summary_level b)
{
	return a > b ? a : b;
}

/* Free space of a type against its chunk size (section 19.2) */
static void rate_space(struct summary_space *s, u32 nr_writeable)
{
	if (!nr_writeable) {
		s->level = SUMMARY_CRITICAL;
		s->rule = "no writeable device: nothing can be allocated or written";
	} else if (s->free < s->chunk_size && !s->new_chunks) {
		s->level = SUMMARY_CRITICAL;
		s->rule = "free < 1 chunk and no new chunk fits";
	} else if (s->free + s->new_chunk_bytes < 2 * s->chunk_size) {
		s->level = SUMMARY_TIGHT;
		s->rule = "free + new chunks < 2 chunks";
	} else {
		s->level = SUMMARY_OK;
		s->rule = "free + new chunks >= 2 chunks";
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
	s->held = space_held(si);
	s->free = s->total_bytes > s->held ? s->total_bytes - s->held : 0;
	s->chunk_size = btrfs_summary_chunk_size(report, type, s->profile, si->chunk_size);
	s->new_chunks = btrfs_summary_new_chunks(report, type, s->profile,
						 si->chunk_size, &s->new_chunk_bytes);
	rate_space(s, count_writeable(report));
}

static const struct summary_space *find_space(const struct space_summary *sum,
					      const char *name)
{
	int i;

	for (i = 0; i < sum->nr_spaces; i++)
		if (!strcmp(sum->spaces[i].name, name))
			return &sum->spaces[i];
	return NULL;
}

/* The space info metadata lives in: metadata, or mixed */
static const struct summary_space *meta_space(const struct space_summary *sum)
{
	const struct summary_space *s = find_space(sum, "metadata");

	return s ? s : find_space(sum, "mixed");
}

static int fill_devices(const struct space_report *report, struct space_summary *sum)
{
	u32 i;

	sum->devices = calloc(report->nr_devices ? report->nr_devices : 1,
			      sizeof(*sum->devices));
	if (!sum->devices)
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

/* Section 19.3: unallocated space is what new metadata chunks come from */
static void rate_unallocated(struct space_summary *sum)
{
	const struct summary_space *meta = meta_space(sum);
	const struct summary_space *data = find_space(sum, "data");
	u64 meta_chunks = meta ? meta->new_chunks : 0;

	if (!meta_chunks) {
		sum->unallocated_level = SUMMARY_CRITICAL;
		sum->unallocated_rule = "no new metadata chunk fits";
	} else if (meta_chunks < 2 || (data && !data->new_chunks)) {
		sum->unallocated_level = SUMMARY_TIGHT;
		sum->unallocated_rule = "fewer than 2 new metadata chunks, or no new data chunk, fit";
	} else {
		sum->unallocated_level = SUMMARY_OK;
		sum->unallocated_rule = "2 or more new metadata chunks and a data chunk fit";
	}
}

/* Section 19.4: without over-commit room, reservations wait for flushing */
static void rate_overcommit(const struct space_report *report, struct space_summary *sum)
{
	const struct summary_space *meta = meta_space(sum);

	sum->overcommit_room = report->reserve.avail_flush_all;
	if (!sum->overcommit_room && meta && meta->free < meta->chunk_size) {
		sum->overcommit_level = SUMMARY_CRITICAL;
		sum->overcommit_rule = "no room, and free metadata < 1 chunk";
	} else if (!sum->overcommit_room) {
		sum->overcommit_level = SUMMARY_TIGHT;
		sum->overcommit_rule = "no room: reservations beyond free metadata wait for flushing";
	} else {
		sum->overcommit_level = SUMMARY_OK;
		sum->overcommit_rule = "room > 0";
	}
}

/* Section 19.5: the preemptive-flush threshold against bytes_may_use */
static void rate_preempt(const struct space_report *report, struct space_summary *sum)
{
	const struct btrfs_preempt_result *p = &report->reserve.preempt;

	sum->bytes_may_use = report->reserve.state.bytes_may_use;
	sum->can_flush = p->can_flush;
	sum->flush_from = p->can_flush ? p->min_may_use_to_flush : 0;
	sum->flushing = p->verdict;
	sum->flush_headroom = p->can_flush && sum->flush_from > sum->bytes_may_use ?
			      sum->flush_from - sum->bytes_may_use : 0;
	if (p->verdict) {
		sum->preempt_level = SUMMARY_TIGHT;
		sum->preempt_rule = "flushing now: bytes_may_use at or over the threshold";
	} else if (p->full_used >= p->full_limit) {
		sum->preempt_level = SUMMARY_TIGHT;
		sum->preempt_rule = "plain full: no preemptive flushing, reservations wait on tickets";
	} else {
		sum->preempt_level = SUMMARY_OK;
		sum->preempt_rule = "not flushing, not plain full";
	}
}

static double latency_of(const char *name)
{
	int i;

	for (i = 0; btrfs_latency_profiles[i].name; i++)
		if (!strcmp(btrfs_latency_profiles[i].name, name))
			return btrfs_latency_profiles[i].seconds;
	return 0;
}

/* Section 19.6: systemd gives a mount 90 s (DefaultTimeoutStartSec) */
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

int btrfs_build_summary(const struct space_report *report,
			const struct btrfs_mount_estimate *est,
			struct space_summary *sum)
{
	int i;

	memset(sum, 0, sizeof(*sum));
	if (fill_devices(report, sum))
		return -ENOMEM;
	for (i = 0; i < report->nr_space_infos; i++)
		fill_space(report, &report->space_infos[i], &sum->spaces[sum->nr_spaces++]);
	rate_unallocated(sum);
	rate_overcommit(report, sum);
	rate_preempt(report, sum);
	rate_mount(est, sum);
	sum->level = SUMMARY_OK;
	for (i = 0; i < sum->nr_spaces; i++)
		sum->level = worse(sum->level, sum->spaces[i].level);
	sum->level = worse(sum->level, sum->unallocated_level);
	sum->level = worse(sum->level, sum->overcommit_level);
	sum->level = worse(sum->level, sum->preempt_level);
	sum->level = worse(sum->level, sum->mount_level);
	return 0;
}

void btrfs_free_summary(struct space_summary *sum)
{
	free(sum->devices);
	sum->devices = NULL;
}
