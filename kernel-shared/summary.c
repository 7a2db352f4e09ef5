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
#include "kernel-shared/block-group.h"
#include "kernel-shared/forecast.h"
#include "kernel-shared/space-info.h"
#include "kernel-shared/summary.h"
#include "kernel-shared/volumes.h"

static const char * const level_names[] = {
	[SUMMARY_OK] = "ok", [SUMMARY_TIGHT] = "tight", [SUMMARY_CRITICAL] = "critical",
};

const char *btrfs_summary_level_name(enum summary_level level)
{
	return level_names[level];
}

static u32 count_writeable(const struct space_report *report)
{
	u32 i, n = 0;

	for (i = 0; i < report->nr_devices; i++)
		n += report->fs_info->devices[i].writeable && !report->devices[i].missing;
	return n;
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
	s->held = btrfs_space_info_used(si, true);
	s->free = s->total_bytes > s->held ? s->total_bytes - s->held : 0;
	s->chunk_size = btrfs_forecast_full_chunk(report, s->profile, si->chunk_size);
	s->new_chunks = btrfs_forecast_count_chunks(report, s->profile, si->chunk_size,
						    &s->new_chunk_bytes);
	rate_space(s, count_writeable(report));
}

/*
 * Section 19.7: how far a type can grow before ENOSPC (the forecast's
 * fill), against one full chunk and a tenth of what the type could hold.
 */
static void rate_headroom(struct summary_space *s, const struct forecast_fill *fill)
{
	u64 could_hold;

	if (!fill || !fill->present)
		return;
	s->headroom_present = true;
	s->flags_metadata = fill->type & BTRFS_BLOCK_GROUP_METADATA;
	s->headroom = fill->writable_bytes;
	s->headroom_rsv = fill->global_rsv_held;
	could_hold = s->held + s->headroom;
	if (s->headroom < s->chunk_size) {
		s->headroom_level = SUMMARY_CRITICAL;
		s->headroom_rule = "can grow by less than one full chunk";
	} else if (s->headroom < 2 * s->chunk_size || s->headroom < could_hold / 10) {
		s->headroom_level = SUMMARY_TIGHT;
		s->headroom_rule = "can grow by less than 2 full chunks or 10 % of used + headroom";
	} else {
		s->headroom_level = SUMMARY_OK;
		s->headroom_rule = "can grow by 2 full chunks and 10 % of used + headroom";
	}
}

static const struct forecast_fill *fill_of(const struct btrfs_forecast *fc, const char *name)
{
	if (fc->data.present && !strcmp(fc->data.name, name))
		return &fc->data;
	if (fc->metadata.present && !strcmp(fc->metadata.name, name))
		return &fc->metadata;
	return NULL;
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

	struct forecast_options fopts;

	memset(sum, 0, sizeof(*sum));
	if (fill_devices(report, sum))
		return -ENOMEM;
	forecast_options_init(&fopts);
	fopts.kernel_version = report->reserve.kernel_version;
	if (btrfs_build_forecast(report, &fopts, &sum->forecast)) {
		btrfs_free_summary(sum);
		return -ENOMEM;
	}
	for (i = 0; i < report->nr_space_infos; i++) {
		struct summary_space *s = &sum->spaces[sum->nr_spaces++];

		fill_space(report, &report->space_infos[i], s);
		rate_headroom(s, fill_of(&sum->forecast, s->name));
	}
	rate_unallocated(sum);
	rate_overcommit(report, sum);
	rate_preempt(report, sum);
	rate_mount(est, sum);
	sum->level = SUMMARY_OK;
	for (i = 0; i < sum->nr_spaces; i++) {
		sum->level = worse(sum->level, sum->spaces[i].level);
		sum->level = worse(sum->level, sum->spaces[i].headroom_level);
	}
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
	btrfs_free_forecast(&sum->forecast);
}
