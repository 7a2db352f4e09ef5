/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What csum-delete reports, worked out here so the command only parses
 * and prints: the delayed-ref reservation for deleting N extents of one
 * size, one file (its whole deletion, file-item.c), or the files of a
 * subvolume that would cost the most.  Own file, no kernel twin.
 */
#ifndef BTRFS_SPACE_CSUM_DELETE_H
#define BTRFS_SPACE_CSUM_DELETE_H

#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/file-item.h"
#include "kernel-shared/inode.h"
#include "kernel-shared/kernel-version.h"

/* --top keeps this many files at most: each holds a path once resolved */
#define BTRFS_CSUM_DELETE_MAX_TOP	100000

enum btrfs_csum_delete_mode {
	BTRFS_CSUM_DELETE_EXTENTS,	/* N extents of one size */
	BTRFS_CSUM_DELETE_FILE,		/* one file of the image */
	BTRFS_CSUM_DELETE_TOP,		/* the costliest files of a subvolume */
};

/* How far a --top scan has got, for a progress line */
struct btrfs_csum_delete_progress {
	u64 subvol;
	u64 leaves;			/* read so far */
	u64 files;			/* regular files seen so far */
	u32 percent;			/* of the subvolume's leaves, at most 99 */
};

typedef void (*btrfs_csum_delete_progress_fn)(const struct btrfs_csum_delete_progress *p,
					      void *ctx);

struct btrfs_csum_delete_request {
	enum btrfs_csum_delete_mode mode;
	u32 kernel_version;
	u64 extents;			/* EXTENTS */
	u64 extent_size;
	const char *path;		/* FILE: absolute from the subvolume's top */
	u64 subvol;			/* FILE and TOP */
	u64 top;			/* TOP: 1 to BTRFS_CSUM_DELETE_MAX_TOP */
	btrfs_csum_delete_progress_fn progress_fn;	/* TOP, after each leaf; may be NULL */
	void *progress_ctx;
};

/* One file of the --top list */
struct btrfs_csum_top_entry {
	struct btrfs_inode_info info;
	struct btrfs_file_drop drop;
	char *path;			/* NULL: not resolvable cheaply */
};

struct btrfs_csum_delete_report {
	enum btrfs_csum_delete_mode mode;
	struct btrfs_kernel_model model;
	struct btrfs_csum_params params;	/* for the model's kernel */
	u64 subvol;			/* FILE and TOP: the subvolume read */
	/* EXTENTS */
	struct btrfs_csum_delete_calc calc;
	/* FILE */
	const char *path;
	struct btrfs_inode_info info;
	struct btrfs_file_drop drop;
	struct btrfs_deletion_model del;
	/* TOP: the scan, and its files costliest first (lower inode on a tie) */
	struct btrfs_subvol_scan scan;
	struct btrfs_csum_top_entry *top;
	u64 nr_top;
};

int btrfs_build_csum_delete_report(struct btrfs_fs_info *fs_info,
				   const struct btrfs_csum_delete_request *req,
				   struct btrfs_csum_delete_report *report);
void btrfs_free_csum_delete_report(struct btrfs_csum_delete_report *report);

#endif
