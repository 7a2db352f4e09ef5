/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The forecast: what can still be written before ENOSPC, and the chunks
 * the kernel makes on the way, by the chunk allocator replayed
 * (volumes.c).  No kernel twin; formulas.md section 21 states the model.
 */
#ifndef BTRFS_SPACE_FORECAST_H
#define BTRFS_SPACE_FORECAST_H

#include "kernel-shared/discard.h"
#include "kernel-shared/report.h"

/* One fill: one type written until ENOSPC with nothing else growing */
struct forecast_fill {
	bool present;
	const char *name;		/* data, metadata, mixed */
	u64 type;			/* block group type bits */
	u64 profile;			/* profile bits of the new chunks */
	u64 chunk_size;			/* the space info's chunk_size */
	u64 free_existing;		/* free in the existing writable block groups */
	u64 new_chunk_bytes;		/* usable bytes of the new chunks */
	u64 global_rsv_held;		/* metadata: the global reserve's part */
	u64 writable_bytes;		/* free_existing + new_chunk_bytes - held */
	u64 writable_if_kept;		/* the same, empty block groups not deleted */
	/* metadata: where a named workload stops (its largest transaction start) */
	const char *workload;		/* NULL for data */
	u32 workload_items;		/* items of that transaction */
	u64 last_reservation;		/* what it reserves: the last one that fits */
	u64 workload_writable_bytes;	/* writable_bytes - last_reservation */
	struct btrfs_chunk_map **chunks;	/* new chunks in order, SYSTEM ones included */
	u32 nr_chunks;
	bool truncated;			/* stopped at the bound on chunks, not at ENOSPC */
	u64 *hard;			/* per device (forecast devids): no chunk of any profile */
	u64 *soft;			/* usable only by the other type's profile */
};

/*
 * One type's balance filters, the subset of struct btrfs_balance_args
 * (fs/btrfs/volumes.c, should_balance_chunk()) that forecast models
 */
#define FORECAST_BAL_USAGE		(1U << 0)	/* usage=N */
#define FORECAST_BAL_USAGE_RANGE	(1U << 1)	/* usage=MIN..MAX */
#define FORECAST_BAL_LIMIT		(1U << 2)
#define FORECAST_BAL_CONVERT		(1U << 3)
#define FORECAST_BAL_SOFT		(1U << 4)

struct forecast_balance_args {
	bool set;			/* -d or -m given */
	u32 flags;
	u64 usage;
	u32 usage_min;
	u32 usage_max;
	u64 limit;
	u64 target;			/* convert: profile bits, 0 = single */
};

/* The balance what-if: the chunks selected, relocated, and what is left */
struct forecast_balance {
	bool present;
	u64 *selected;			/* logical starts, in the order relocated */
	u32 nr_selected;
	u64 moved_bytes;		/* used bytes of the selected block groups */
	bool can_start;			/* a chunk of every target profile can be made */
	u64 *unallocated_after;		/* per device (forecast devids) */
	u32 nr_new_chunks;		/* chunks made for what did not fit */
	u64 new_chunk_bytes;		/* their usable bytes */
	u64 unplaced_bytes;		/* moved bytes no chunk could take: -ENOSPC */
	bool exact;			/* everything moved fits existing free space */
	u64 *may_differ;		/* per device: raw bytes of the new chunks */
};

/* The metadata workloads a fill can be named for */
enum forecast_workload {
	FORECAST_WORKLOAD_CREATE_XATTR,		/* empty files, one xattr each */
	FORECAST_WORKLOAD_CREATE_XATTR_NOLSM,	/* the same, no LSM xattr item */
	FORECAST_WORKLOAD_SETXATTR,		/* xattrs on existing files */
	FORECAST_NR_WORKLOADS,
};

const char *forecast_workload_name(enum forecast_workload w);

struct forecast_options {
	u32 kernel_version;
	enum forecast_workload workload;	/* --workload */
	bool data_profile_set;
	u64 data_profile;		/* profile bits, 0 = single */
	bool metadata_profile_set;
	u64 metadata_profile;
	struct forecast_balance_args bal_data;		/* -d */
	struct forecast_balance_args bal_meta;		/* -m, also SYSTEM as btrfs-progs does */
	struct btrfs_mount_discard mount;		/* --mount-options */
	bool cleaner_uncommitted;	/* --cleaner-uncommitted: fill before its commit */
};

struct btrfs_forecast {
	u32 kernel_version;
	u32 nr_devs;
	u64 *devids;			/* alloc_list order: devid */
	struct forecast_fill data;	/* data, or mixed */
	struct forecast_fill metadata;	/* absent on mixed block groups */
	/* the empty block groups a mount finds, by its discard mode (discard.c) */
	enum btrfs_discard_mode discard;
	const char *discard_why;	/* where the mode came from */
	u32 commit_interval;		/* commit=: the cleaner runs this often */
	bool cleaner_deletes;		/* not discard=async: unused_bgs are deleted */
	bool cleaner_uncommitted;	/* the fills start before the deletions commit */
	u32 nr_empty_bgs;		/* writable, used 0 (offline only) */
	const struct btrfs_live *live;	/* live mode: the sysfs reclaim files read */
	u64 *unused_bgs;		/* deleted by btrfs_delete_unused_bgs() after mount */
	u32 nr_unused_bgs;
	/* data with metadata growing at the current ratio: an estimate */
	bool mixed_estimate_present;
	double metadata_ratio;		/* metadata used / data used */
	u64 mixed_data_bytes;
	u64 mixed_metadata_bytes;
	struct forecast_balance balance;
};

void forecast_options_init(struct forecast_options *opts);
int btrfs_build_forecast(const struct space_report *report,
			 const struct forecast_options *opts,
			 struct btrfs_forecast *fc);
void btrfs_free_forecast(struct btrfs_forecast *fc);

/* A full chunk of @type|@profile, as made on empty devices of this filesystem */
u64 btrfs_forecast_full_chunk(const struct space_report *report, u64 type,
			      u64 chunk_size);

/* Chunks of @type alone until ENOSPC (no SYSTEM chunks): count, logical bytes */
u64 btrfs_forecast_count_chunks(const struct space_report *report, u64 type,
				u64 chunk_size, u64 *bytes);

#endif
