/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Relocation replayed (relocation.c): what btrfs balance, btrfs device
 * remove and a shrinking btrfs filesystem resize do to the block groups
 * and the devices, extent by extent.  Documentation/formulas.md 21.8, 21.9, 21.13.
 */
#ifndef BTRFS_SPACE_RELOCATION_H
#define BTRFS_SPACE_RELOCATION_H

#include "kernel-shared/volumes.h"

struct space_report;
struct forecast_options;
struct btrfs_kernel_model;

/* One block group after the operation (removed ones left out) */
struct btrfs_reloc_bg_after {
	u64 start;
	u64 length;
	u64 flags;
	u64 used;
	u64 bytes_super;
	bool ro;
	bool is_new;			/* made during the operation */
};

/* What relocating some block groups did */
/* res->ret -EROFS: do_chunk_alloc() aborted the transaction */
#define RELOC_ABORT_REASON \
	"EROFS: transaction aborted: a new chunk's item needs a system block group of the system profile, none is writable and none can be made (do_chunk_alloc()); the filesystem turns read-only"
/* res->ret -EROFS: a metadata group read-only with metadata full besides it */
#define RELOC_ABORT_STARVED \
	"EROFS: transaction aborted: a metadata block group turned read-only (its reservations over-committed on unallocated space no metadata chunk can use), metadata has no free byte besides it, and the delayed refs find no room for the extent tree (__btrfs_free_extent(): -ENOSPC); the filesystem turns read-only"

struct btrfs_reloc_result {
	int ret;			/* 0, -ENOSPC, or -EROFS (transaction aborted) */
	const char *abort_reason;	/* -EROFS: RELOC_ABORT_REASON or _STARVED */
	u64 *selected;			/* logical starts, in the order tried */
	u32 nr_selected;
	u64 *started;			/* turned read-only: the kernel logs "relocating block group" */
	u32 nr_started;
	u64 *relocated;			/* logical starts, in the order relocated */
	u32 nr_relocated;
	u64 *failed;			/* -ENOSPC while relocating these */
	u32 nr_failed;
	/* the room of the four lists above: a shrink tries a block group once
	 * per dev extent past the new size, twice when it fails */
	u32 cap_selected, cap_started, cap_relocated, cap_failed;
	u64 moved_bytes;		/* used of the block groups relocated */
	struct btrfs_chunk_map **new_chunks;	/* in order, SYSTEM ones included */
	u32 nr_new_chunks;
	struct btrfs_reloc_bg_after *bgs;	/* after, allocation list order */
	u32 nr_bgs;
	u64 *unallocated_after;		/* per device, in devids' order */
	u64 *devids;			/* the devices, by devid (as forecast's) */
	u64 *uncertain_raw;		/* per device: raw bytes of the metadata block
					 * groups a usage filter may take or leave */
	u32 nr_devs;
	bool extents_read;		/* the extent tree gave every extent */
	bool exact;			/* every input of the kernel's choices known */
	const char *inexact_reason;	/* the first input that is not */
	char reason_buf[400];		/* inexact_reason when it has figures */
};

void btrfs_free_reloc_result(struct btrfs_reloc_result *res);

/*
 * The metadata relocation holds: the block reserve prepare_to_relocate()
 * fills (nodesize * RELOCATION_RESERVED_NODES), and beside it, for each
 * data extent preallocated, btrfs_start_transaction(data_reloc_root, 3)
 * of __btrfs_prealloc_file_range().  Formulas.md 21.8.
 */
u64 btrfs_reloc_block_rsv_size(u32 nodesize);
u64 btrfs_reloc_prealloc_size(const struct btrfs_fs_info *fs_info,
			      const struct btrfs_kernel_model *model);

/*
 * __btrfs_balance() with @opts' filters (bal_data, bal_meta, force):
 * *refused is set with a reason when btrfs_balance() refuses to start.
 */
int btrfs_reloc_balance(const struct space_report *report,
			const struct forecast_options *opts,
			struct btrfs_reloc_result *res, const char **refused);

/*
 * btrfs_shrink_device() of @devid to @new_size (remove: btrfs_rm_device(),
 * the device taken off the allocation list and shrunk to 0); *refused set
 * when the kernel refuses before relocating anything.
 */
int btrfs_reloc_shrink(const struct space_report *report, const struct forecast_options *opts,
		       u64 devid, u64 new_size, bool remove,
		       struct btrfs_reloc_result *res, const char **refused);

/*
 * A cleaner run: btrfs_delete_unused_bgs() on @gone, then
 * btrfs_reclaim_bgs_work() on the kernel's reclaim list (@starts, in its
 * order; @plans: each space info's reclaim plan, by space index), each
 * checked again when reached against its space info's threshold then,
 * then relocated within its profile or skipped
 */
struct btrfs_reclaim_plan;
int btrfs_reloc_reclaim(const struct space_report *report, const struct forecast_options *opts,
			const u64 *gone, u32 nr_gone, const u64 *starts,
			const struct btrfs_reclaim_plan *plans, u32 nr,
			struct btrfs_reloc_result *res);

/*
 * The tree blocks one transaction copies (COWs), each once: a search that
 * changes an item copies its path (btrfs_search_slot() with cow), and a
 * copy frees the old block at the commit.  Used for the commit of the
 * balance item (formulas.md 21.8) and the cleaner's first deletions (21.4).
 */
struct btrfs_cow_set {
	u64 *start;			/* the old blocks, in the order copied */
	u32 nr;
	u32 cap;
};

/* The blocks of @root's path to (@objectid, @type, @offset) not yet in @set */
int btrfs_cow_path(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root,
		   u64 objectid, u8 type, u64 offset, struct btrfs_cow_set *set);
/* @root's root node, if not yet in @set (a change whose leaf is not known) */
int btrfs_cow_root_node(const struct btrfs_root_ref *root, struct btrfs_cow_set *set);
/*
 * Each copy in @set (those it adds too) is placed by @place (*found: its
 * new start, 0 when not known) and frees its old block: the extent items,
 * block group items and free-space ranges of both change, and the paths
 * to them are copied, until no block is new.
 */
int btrfs_cow_settle(struct btrfs_fs_info *fs_info, struct btrfs_cow_set *set,
		     int (*place)(void *ctx, u64 *found), void *ctx);

#endif
