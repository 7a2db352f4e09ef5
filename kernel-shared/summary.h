/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The summary at the top of inspect: what is really free per space info,
 * what the unallocated space can still become, the metadata over-commit
 * room, the preemptive-flush threshold, the mount time and how far each
 * type can grow before ENOSPC (the forecast), each with a
 * level (ok, tight, critical) and the rule that gave it.  Every figure is
 * taken from the report, so live mode's summary shows live figures.  The
 * rules are Documentation/formulas.md section 19.  No kernel twin.
 */
#ifndef BTRFS_SPACE_SUMMARY_H
#define BTRFS_SPACE_SUMMARY_H

#include "kernel-shared/forecast.h"
#include "kernel-shared/mount-cost.h"
#include "kernel-shared/report.h"

enum summary_level {
	SUMMARY_OK,
	SUMMARY_TIGHT,
	SUMMARY_CRITICAL,
};

struct summary_space {
	const char *name;		/* data, metadata, mixed, system */
	u64 profile;			/* allocation profile (bits) */
	u64 total_bytes;
	u64 held;			/* used + reserved + pinned + readonly + zone + may_use */
	u64 free;			/* total_bytes - held, 0 if negative */
	u64 chunk_size;			/* logical size of a full new chunk */
	u64 new_chunks;			/* chunks the unallocated space can make */
	u64 new_chunk_bytes;		/* their logical bytes */
	enum summary_level level;
	const char *rule;
	/* the forecast's fill of this type (section 19.7) */
	bool headroom_present;
	bool flags_metadata;		/* a metadata (or mixed) space info */
	u64 headroom;			/* writable_bytes */
	u64 headroom_rsv;		/* metadata: held by the global reserve */
	enum summary_level headroom_level;
	const char *headroom_rule;
};

struct summary_device {
	u64 devid;
	u64 unallocated;
	bool counted;			/* writeable: chunks can be made on it */
};

struct space_summary {
	enum summary_level level;	/* the worst of the lines below */
	struct summary_space spaces[BTRFS_NR_SPACE_INFOS];
	int nr_spaces;

	struct summary_device *devices;
	u32 nr_devices;
	u64 unallocated;		/* over the counted devices */
	enum summary_level unallocated_level;
	const char *unallocated_rule;

	u64 overcommit_room;		/* calc_available_free_space(FLUSH_ALL) */
	enum summary_level overcommit_level;
	const char *overcommit_rule;

	u64 bytes_may_use;
	bool can_flush;
	u64 flush_from;			/* min bytes_may_use that flushes */
	u64 flush_headroom;		/* flush_from - bytes_may_use, 0 if flushing */
	bool flushing;
	enum summary_level preempt_level;
	const char *preempt_rule;

	bool mount_available;
	u64 mount_reads;
	double mount_hdd_seconds;
	double mount_ssd_seconds;
	enum summary_level mount_level;
	const char *mount_rule;

	struct btrfs_forecast forecast;	/* the allocator replayed (forecast.c) */
};

/* The mount time thresholds of the rule, seconds on HDD */
#define SUMMARY_MOUNT_TIGHT_SECONDS	10.0
#define SUMMARY_MOUNT_CRITICAL_SECONDS	90.0

const char *btrfs_summary_level_name(enum summary_level level);
int btrfs_build_summary(const struct space_report *report,
			const struct btrfs_mount_estimate *est,
			struct space_summary *sum);
void btrfs_free_summary(struct space_summary *sum);

#endif
