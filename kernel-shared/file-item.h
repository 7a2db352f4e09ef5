/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file's data extents and what deleting the file puts on the delayed-ref
 * queue: the file extent items (file-item.c) as btrfs_truncate_inode_items()
 * of inode-item.c drops them, merged the way delayed-ref.c merges heads and
 * ref nodes.
 */
#ifndef BTRFS_SPACE_FILE_ITEM_H
#define BTRFS_SPACE_FILE_ITEM_H

#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/inode.h"
#include "kernel-shared/transaction.h"

/*
 * The refs one file's deletion drops, merged into heads and ref nodes
 * once the file is read, in bytenr order.  One file (--file): packed by
 * bytenr (packed-refs.h, a few bytes a ref), in key order while each
 * bytenr rises, then in sorted runs of DROP_RUN_REFS, merged at the end;
 * the refs alone on their extent are the deletion model's lone refs.  A
 * subvolume scan (--top) keeps them packed in key order instead and sorts
 * them (32 bytes a ref) only for a file whose extents do not rise in key
 * order.
 */
struct btrfs_drop_tracker {
	const struct btrfs_csum_params *params;
	const struct btrfs_kernel_model *model;
	struct packed_ref *entries;	/* --top: unpacked to sort; --file: the run being filled */
	u64 nr;
	u32 cap;
	u64 conflict;			/* seq of an item giving an extent another size */
	u64 conflict_old;		/* the size the earlier item gave */
	/* one file's refs by bytenr (btrfs_count_file_drop()) */
	u32 shift;			/* sectorsize bits: bytenrs and sizes in sectors */
	struct packed_refs keyed;	/* in key order, while each bytenr rises */
	u32 nr_entries;			/* in entries, once one did not rise */
	struct packed_refs *runs;	/* entries sorted and packed, DROP_RUN_REFS each */
	u32 nr_runs;
	u32 cap_runs;
	struct packed_refs lone;	/* merged: the refs alone on their extent */
	struct packed_refs *lone_list;	/* keyed or lone once merged (no conflict), or NULL */
	/* packed refs (btrfs_scan_subvol_drops()): varint deltas in key order */
	bool packed;
	u8 *stream;
	u64 stream_len;
	u64 stream_cap;
	u64 last_bytenr;
	u64 last_ref_offset;
	bool rising;			/* each bytenr above the one before */
};

/* What dropping every data reference of one inode queues */
struct btrfs_file_drop {
	u64 items;			/* EXTENT_DATA items */
	u64 inline_items;		/* no extent, nothing queued */
	u64 holes;			/* disk_bytenr 0, nothing queued */
	u64 leaves;			/* leaves holding them (not printed) */
	struct btrfs_csum_delete_calc calc;	/* heads, refs and their charge */
};

void btrfs_drop_tracker_init(struct btrfs_drop_tracker *t,
			     const struct btrfs_csum_params *params,
			     const struct btrfs_kernel_model *model);
void btrfs_drop_tracker_release(struct btrfs_drop_tracker *t);

/*
 * For tests: one file's refs as btrfs_count_file_drop() queues them, in
 * key order (@shift: the sectorsize's bits), then merged into @drop: 0,
 * 1 on a conflict (t->conflict), <0 on error.  t->lone_list then holds
 * the refs alone on their extent.
 */
void btrfs_drop_tracker_start_file(struct btrfs_drop_tracker *t, u32 shift,
				   struct btrfs_file_drop *drop);
int btrfs_drop_tracker_add(struct btrfs_drop_tracker *t, u64 bytenr, u64 num_bytes,
			   u64 ref_offset);
int btrfs_drop_tracker_merge(struct btrfs_drop_tracker *t, struct btrfs_file_drop *drop);

int btrfs_count_file_drop(struct btrfs_fs_info *fs_info,
			  const struct btrfs_subvol *sv, u64 ino,
			  struct btrfs_drop_tracker *t, struct btrfs_file_drop *drop);

/* Called once per regular file of a subvolume scan, in inode order */
typedef int (*btrfs_file_drop_fn)(const struct btrfs_inode_info *info,
				  const struct btrfs_file_drop *drop, void *ctx);
/* Called after each leaf; may be NULL */
typedef void (*btrfs_scan_progress_fn)(u64 leaves, void *ctx);

struct btrfs_subvol_scan {
	btrfs_file_drop_fn file_fn;
	btrfs_scan_progress_fn progress_fn;
	void *ctx;
	/* filled by the scan */
	u64 leaves;
	u64 inodes;
	u64 files;
	u64 extent_items;
};

int btrfs_scan_subvol_drops(struct btrfs_fs_info *fs_info,
			    const struct btrfs_subvol *sv,
			    struct btrfs_drop_tracker *t,
			    struct btrfs_subvol_scan *scan);

/*
 * The whole deletion of one inode in one transaction, with the copies of
 * shared tree blocks it makes (extent-tree.h): unlink, evict, and the
 * delayed items the commit runs.  Figures are the rise of
 * delayed_refs_rsv.size and what is reserved into bytes_may_use.
 */
struct btrfs_deletion_model {
	struct btrfs_delayed_refs_totals totals;	/* data ("total") and tree refs */
	u64 peak;			/* highest running size reached */
	u64 reserved;			/* added to bytes_may_use for the deletion */
	u64 reserved_unlink;		/* btrfs_start_transaction(root, 6) */
	u64 reserved_evict;		/* evict_refill_and_join(): once, again per -EAGAIN, once more */
	u64 refills;			/* btrfs_delayed_refs_rsv_refill() during truncation */
	u64 refill_bytes;
	u64 cows;			/* subvolume tree blocks copied */
	u64 shared_cows;
	u64 full_backref_cows;
	u64 leaves;			/* leaves holding the inode's items */
	struct btrfs_commit_refs commit;	/* the commit's copies of the other trees */
	bool preempt_checked;		/* the space infos were there to ask */
	bool preempt_flush;		/* need_preemptive_reclaim() with it all held */
	bool reserve_flush;		/* over-commit cannot grant it all: the rm flushes */
};

/*
 * @t: the file's refs as btrfs_count_file_drop() left them (sorted), or
 * NULL; the model then marks in them the refs it only counts (delayed-ref.c
 * lone refs), so the tracker lives until the model is done.
 */
int btrfs_model_deletion(struct btrfs_fs_info *fs_info, const struct btrfs_subvol *sv,
			 u64 ino, struct btrfs_drop_tracker *t,
			 const struct btrfs_csum_params *params,
			 const struct btrfs_kernel_model *model,
			 struct btrfs_deletion_model *out);

#endif
