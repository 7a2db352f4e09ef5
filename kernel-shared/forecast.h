/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The forecast: what can still be written before ENOSPC, and the chunks
 * the kernel makes on the way, by the chunk allocator replayed
 * (volumes.c).  No kernel twin; formulas.md section 21 states the model.
 */
#ifndef BTRFS_SPACE_FORECAST_H
#define BTRFS_SPACE_FORECAST_H

#include "kernel-shared/block-group.h"
#include "kernel-shared/relocation.h"
#include "kernel-shared/discard.h"
#include "kernel-shared/report.h"
#include "kernel-shared/volumes.h"

/* One fill: one type written until ENOSPC with nothing else growing */
struct forecast_fill {
	bool present;
	const char *name;		/* data, metadata, mixed */
	u64 type;			/* block group type bits */
	u64 profile;			/* profile bits of the new chunks */
	u64 chunk_size;			/* the space info's chunk_size */
	u64 free_existing;		/* free in the existing writable block groups */
	u64 live_pending;		/* live data: promised since the last commit */
	u64 new_chunk_bytes;		/* usable bytes of the new chunks */
	u64 global_rsv_held;		/* metadata: the global reserve's part */
	u64 writable_bytes;		/* free_existing + new_chunk_bytes - held */
	u64 writable_if_kept;		/* the same, empty block groups not deleted */
	/* metadata: where a named workload stops (its largest transaction start) */
	const char *workload;		/* NULL for data */
	u32 workload_items;		/* items of that transaction */
	u64 last_reservation;		/* what it reserves: the last one that fits */
	u64 workload_writable_bytes;	/* writable_bytes - last_reservation */
	struct btrfs_chunk_run *runs;	/* new chunks in order as runs, SYSTEM ones included */
	u32 nr_runs;
	u32 runs_cap;
	u64 nr_chunks;			/* chunks in the runs */
	bool truncated;			/* stopped at the bound on work, not at ENOSPC */
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

/*
 * The balance what-if: relocation replayed (relocation.c) for the block
 * groups the filters select, in the kernel's order
 */
struct forecast_balance {
	bool present;
	u64 *selected;			/* logical starts, in the order relocated */
	u32 nr_selected;
	u64 moved_bytes;		/* used bytes of the relocated block groups */
	bool can_start;			/* btrfs_balance() does not refuse */
	const char *reason;		/* why it is refused, or how it ends */
	bool completes;			/* no -ENOSPC on the way */
	u64 *unallocated_after;		/* per device (forecast devids) */
	u32 nr_new_chunks;		/* chunks made on the way, SYSTEM included */
	u64 new_chunk_bytes;		/* their usable bytes */
	u64 unplaced_bytes;		/* used of the block groups that hit -ENOSPC */
	u64 data_free_after;		/* free in the data block groups after */
	bool exact;			/* every input of the kernel's choices known */
	u64 *may_differ;		/* per device: raw bytes of the new chunks when not exact */
	struct btrfs_reloc_result res;	/* relocation.c's account: chunks, block groups */
};

/*
 * What the kernel's reclaim relocates at its next run (formulas.md 21.14):
 * the reclaim list (--reclaim-marked, then the sweep candidates, sorted by
 * used) through relocation.c, each checked again when reached
 */
struct forecast_reclaim_after {
	bool present;
	u64 *list;			/* the reclaim list, in the order walked */
	u32 nr_list;
	u64 *skipped;			/* checked again and left: at or above it, empty */
	u32 nr_skipped;
	struct btrfs_reloc_result res;
};

/* The device remove / shrink what-if (--remove DEVID, --resize DEVID:SIZE) */
struct forecast_shrink {
	bool present;
	bool remove;
	u64 devid;
	u64 new_size;
	bool can_start;			/* not refused before relocating */
	const char *reason;
	bool completes;			/* every chunk beyond new_size relocated */
	struct btrfs_reloc_result res;
};

/*
 * What the chunk tree, in the SYSTEM space, has room for while chunks are
 * made; check_system_chunk() of fs/btrfs/block-group.c before each chunk,
 * shared with relocation.c
 */
struct system_room {
	u64 left;		/* total - used, readonly, reserved, may_use */
	u64 profile;
	u64 chunk_size;
	u64 item_bytes;		/* chunk items added to the chunk tree */
	u64 leaves_charged;
	u32 nodesize;
};

/* The metadata workloads a fill can be named for */
enum forecast_workload {
	FORECAST_WORKLOAD_CREATE_XATTR,		/* empty files, one xattr each */
	FORECAST_WORKLOAD_CREATE_XATTR_NOLSM,	/* the same, no LSM xattr item */
	FORECAST_WORKLOAD_SETXATTR,		/* xattrs on existing files */
	FORECAST_NR_WORKLOADS,
};

const char *forecast_workload_name(enum forecast_workload w);

/* --reclaim-marked: the block groups a command line names at most */
#define FORECAST_MAX_RECLAIM_MARKED	64

struct forecast_options {
	u32 kernel_version;
	enum forecast_workload workload;	/* --workload */
	bool data_profile_set;
	u64 data_profile;		/* profile bits, 0 = single */
	bool metadata_profile_set;
	u64 metadata_profile;
	struct forecast_balance_args bal_data;		/* -d */
	struct forecast_balance_args bal_meta;		/* -m, also SYSTEM as btrfs-progs does */
	bool bal_force;					/* -f */
	bool shrink_set;				/* --remove or --resize */
	bool shrink_remove;
	u64 shrink_devid;
	u64 shrink_size;
	struct btrfs_mount_discard mount;		/* --mount-options */
	bool cleaner_uncommitted;	/* --cleaner-uncommitted: fill before its commit */
	/* --reclaim-threshold, --dynamic-reclaim, --periodic-reclaim */
	bool reclaim_threshold_set[BTRFS_NR_SPACE_INFOS];
	bool dynamic_reclaim_set[BTRFS_NR_SPACE_INFOS];
	bool periodic_reclaim_set[BTRFS_NR_SPACE_INFOS];
	struct btrfs_reclaim_knobs reclaim[BTRFS_NR_SPACE_INFOS];
	u64 reclaim_marked[FORECAST_MAX_RECLAIM_MARKED];	/* --reclaim-marked */
	u32 nr_reclaim_marked;
	/* --full-at-mount: block groups full at the mount, freed since */
	u64 full_at_mount[FORECAST_MAX_RECLAIM_MARKED];
	u32 nr_full_at_mount;
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
	bool has_tree_block_bg;		/* an empty group kept: the first deletion's */
	u64 tree_block_bg;		/* tree blocks went there (first_tree_block_bg()) */
	/* data with metadata growing at the current ratio: an estimate */
	bool mixed_estimate_present;
	double metadata_ratio;		/* metadata used / data used */
	u64 mixed_data_bytes;
	u64 mixed_metadata_bytes;
	bool mixed_truncated;		/* stopped at the bound on work, not at ENOSPC */
	struct forecast_balance balance;
	bool list_chunks;		/* printed chunk by chunk, not as runs */
	struct forecast_shrink shrink;
	/* the kernel's own reclaim per space info (5.19+), formulas.md 21.14 */
	bool reclaim_modelled;		/* the kernel has per-space-info reclaim */
	struct btrfs_reclaim_plan reclaim[BTRFS_NR_SPACE_INFOS];
	const char *reclaim_source[BTRFS_NR_SPACE_INFOS];
	struct forecast_reclaim_after reclaim_after;
};

void forecast_options_init(struct forecast_options *opts);
void system_room_init(const struct space_report *report, struct system_room *room);
void system_room_charge(struct system_room *room, const struct btrfs_chunk_map *map);
/* A SYSTEM chunk first when the chunk tree has no room; it goes to @fill (or is dropped) */
int check_system_chunk(struct btrfs_alloc_state *st, struct system_room *room,
		       u64 type, struct forecast_fill *fill);
int btrfs_build_forecast(const struct space_report *report,
			 const struct forecast_options *opts,
			 struct btrfs_forecast *fc);
void btrfs_free_forecast(struct btrfs_forecast *fc);

/*
 * The balance what-if alone, for callers that try remedies: @opts from
 * forecast_options_init() with bal_data / bal_meta (and bal_force) set;
 * bal->selected, can_start, reason, completes, unallocated_after (per
 * bal->res.devids), data_free_after; free with btrfs_free_forecast_balance()
 */
int btrfs_forecast_balance(const struct space_report *report,
			   const struct forecast_options *opts, struct forecast_balance *bal);
void btrfs_free_forecast_balance(struct forecast_balance *bal);
int btrfs_forecast_shrink(const struct space_report *report,
			  const struct forecast_options *opts, struct forecast_shrink *sh);

/* A full chunk of @type|@profile, as made on empty devices of this filesystem */
u64 btrfs_forecast_full_chunk(const struct space_report *report, u64 type,
			      u64 chunk_size);

/* Chunks of @type alone until ENOSPC (no SYSTEM chunks): count, logical bytes */
u64 btrfs_forecast_count_chunks(const struct space_report *report, u64 type,
				u64 chunk_size, u64 *bytes);

/* The fill loop on an allocator state alone (tests): section 21.11 */
int btrfs_forecast_fill_alloc(struct btrfs_alloc_state *st, u32 nodesize, u64 system_left,
			      u64 system_type, u64 system_chunk_size, u64 type,
			      u64 chunk_size, bool runs, struct forecast_fill *fill);
void btrfs_forecast_fill_free(struct forecast_fill *fill);

/* Data written with metadata growing at a ratio (section 21.4) */
struct btrfs_mixed_walk {
	double ratio;			/* metadata per data byte, above 0 */
	u64 dfree;			/* data free (at the start: in the block groups) */
	u64 mfree;			/* metadata free, after the global reserve */
	u64 data_bytes;			/* written */
	u64 metadata_bytes;
	u64 chunks;			/* data and metadata chunks made */
	bool truncated;			/* stopped at the bound on work */
};

int btrfs_forecast_mixed_alloc(struct btrfs_alloc_state *st, u32 nodesize, u64 system_left,
			       u64 system_type, u64 system_chunk_size, u64 dtype,
			       u64 dchunk, u64 mtype, u64 mchunk, bool runs,
			       struct btrfs_mixed_walk *w);

#endif
