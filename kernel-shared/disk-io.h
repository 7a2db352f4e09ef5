/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_DISK_IO_H
#define BTRFS_SPACE_DISK_IO_H

#include "common/io.h"
#include "common/io-batch.h"
#include "kernel-shared/fs.h"

struct btrfs_tree_block;

/*
 * The format as the I/O layer needs it (superblock copies, a decompressed
 * stream's device size, --scan's identity, btrfs-image restore's layout):
 * what every io_open() and device_scan() is given.
 */
extern const struct io_format btrfs_io_format;

/*
 * The device size superblock copy @sb says, at most the filesystem's total
 * (a device never holds more), and the bytes its chunks use; false without
 * btrfs magic.
 */
bool btrfs_super_device_size(const void *sb, u64 *size, u64 *used);

/*
 * How far btrfs_open_fs() goes: a command reads what its output needs.
 * 0 is all of it, the default.
 */
enum btrfs_open_depth {
	BTRFS_OPEN_ALL = 0,		/* + root items, read-ahead, dev extents */
	BTRFS_OPEN_SUPER,		/* devices and superblocks (sys chunk array) */
	BTRFS_OPEN_CHUNKS,		/* + the chunk tree and the device check */
	BTRFS_OPEN_ROOTS,		/* + the root tree's root items */
};

struct btrfs_open_args {
	const char * const *paths;
	int nr_paths;
	int super_mirror;		/* 0, 1 or 2 */
	bool allow_degraded;		/* like mount -o degraded */
	const u64 *readonly_devids;	/* present but not writeable (read-only media) */
	int nr_readonly_devids;
	struct btrfs_read_args read;	/* kept in fs_info->read */
	enum btrfs_open_depth depth;
};

/*
 * open_ctree() for a reader: devices, superblock, chunk map, root items
 * and the balance item.  Block groups are loaded separately
 * (block-group.c) so that commands that only need the chunk map skip it.
 */
int btrfs_open_fs(struct btrfs_fs_info *fs_info, const struct btrfs_open_args *args);
/*
 * An empty fs_info that btrfs_close_fs() can take: call it before anything
 * that can fail, so that every error path may close what it opened.
 */
void btrfs_fs_info_init(struct btrfs_fs_info *fs_info);
struct btrfs_root_ref btrfs_tree_root_ref(const struct btrfs_fs_info *fs_info);
/*
 * The ROOT_ITEM (objectid, ROOT_ITEM, 0) of the tree root; found=false if
 * absent.  A read error or a bad item is recorded in @err.
 */
int btrfs_read_root_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			 u64 objectid, struct btrfs_root_ref *root);
/* the newest ROOT_ITEM of a subvolume (btrfs_find_root() with offset -1) */
int btrfs_read_fs_root_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    u64 objectid, struct btrfs_root_ref *root);
typedef int (*btrfs_root_item_fn)(void *ctx, u64 objectid, struct btrfs_root_ref *root);
int btrfs_load_roots(struct btrfs_fs_info *fs_info, btrfs_root_item_fn read_item,
		     void *ctx);
void btrfs_close_fs(struct btrfs_fs_info *fs_info);
void btrfs_set_balance_convert(struct btrfs_fs_info *fs_info,
			       const struct btrfs_balance_item *bi);

int btrfs_validate_super(struct btrfs_fs_info *fs_info,
			 const struct btrfs_super_block *sb, const char *path,
			 int mirror);

/* Tree block reads: read_tree_block() and the read observer */
/* What the parent (or the superblock / root item) says the block must be */
struct btrfs_tree_check {
	u64 root;			/* owner tree, for messages */
	int level;
	u64 transid;			/* 0: unknown */
	bool has_first_key;
	struct btrfs_key first_key;
};

/*
 * read_tree_block(): @check is what the parent says, @err the record the
 * read's error goes to (fs_info->err, or the caller's own when it weighs
 * the error first), as the kernel passes its btrfs_tree_parent_check.
 */
int btrfs_read_tree_block(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			  u64 bytenr, const struct btrfs_tree_check *check,
			  unsigned int purpose, struct btrfs_tree_block **ret);
int btrfs_read_tree_blocks(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   const u64 *bytenrs,
			   const struct btrfs_tree_check *checks, u32 nr,
			   unsigned int purpose, u32 max_threads,
			   struct btrfs_tree_block **out);
/* The same, each block with its own purpose */
int btrfs_read_tree_blocks_tagged(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				  const u64 *bytenrs,
				  const struct btrfs_tree_check *checks,
				  const unsigned int *purposes, u32 nr, u32 max_threads,
				  struct btrfs_tree_block **out);

/*
 * One tree block read through the run's queue (btrfs_io_queue()), for a
 * caller that keeps reads in flight while it uses the ones that finish.
 * Fill bytenr, check, purpose and err (the record of the read's error);
 * btrfs_block_read_start() returns 0 when the first copy went to @q
 * (finish it when io_queue_reap() hands back &br->req: req.priv is @br),
 * 1 when nothing went (cached, or not one piece on a present device:
 * finish it now), or -errno.  The purpose may
 * be raised while the read is in flight (set br->req.purpose too).
 * btrfs_block_read_finish() verifies and caches the copy read, or reads
 * the block the serial way (every copy, the error recorded), as
 * btrfs_read_tree_block() returns it: 0 and br->eb referenced, or -errno.
 */
struct btrfs_block_read {
	struct io_request req;
	struct btrfs_tree_block *eb;
	u64 bytenr;
	struct btrfs_tree_check check;
	unsigned int purpose;
	struct btrfs_error *err;
	bool queued;
};

struct io_queue *btrfs_io_queue(struct btrfs_fs_info *fs_info);
int btrfs_block_read_start(struct btrfs_fs_info *fs_info, struct io_queue *q,
			   struct btrfs_block_read *br);
int btrfs_block_read_finish(struct btrfs_fs_info *fs_info, struct btrfs_block_read *br);

/* Register @observer (NULL fn: none); returns the one it replaces */
struct btrfs_read_observer btrfs_set_read_observer(struct btrfs_fs_info *fs_info,
						   struct btrfs_read_observer observer);

#endif
