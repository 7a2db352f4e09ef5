/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the I/O layer needs to know of the filesystem it reads and does not
 * know itself: the format lives above it, in kernel-shared
 * (btrfs_io_format, kernel-shared/disk-io.c), and is handed down to
 * io_open(), decompress_open() and device_scan().
 */
#ifndef BTRFS_SPACE_IO_FORMAT_H
#define BTRFS_SPACE_IO_FORMAT_H

#include <stdbool.h>
#include "common/image-dump.h"
#include "common/types.h"

/* What a primary superblock says of its device, for --scan */
struct io_super_id {
	u8 fsid[16];
	u64 devid;
	u64 num_devices;
};

/* A byte range [start, end) of a device */
struct io_range {
	u64 start;
	u64 end;
};

struct io_format {
	/* the superblock copies a decompressed stream is sized by; [0] the primary */
	u64 super_offset[2];
	u32 super_size;
	/*
	 * The device size a superblock copy @sb says (at most the whole
	 * filesystem's), and the bytes of it in chunks; false when @sb is
	 * not the format's.
	 */
	bool (*super_device_size)(const void *sb, u64 *size, u64 *used);
	/* The identity of primary superblock @sb; false when not the format's */
	bool (*super_id)(const void *sb, struct io_super_id *id);
	/*
	 * Where on the device of superblock @sb its chunk root's copy lies
	 * (@len bytes at @physical); false when that cannot be told from
	 * @sb alone.
	 */
	bool (*chunk_root_at)(const void *sb, u64 *physical, u32 *len);
	/*
	 * From that chunk root, @block: the ranges of the device a reader of
	 * the format may ever read, sorted, in *@ranges (malloc'ed, *@nr of
	 * them).  0, or -errno when @block does not tell (a bad checksum, a
	 * node): then every byte may be read.
	 */
	int (*read_ranges)(const void *sb, const void *block, u32 len,
			   struct io_range **ranges, u32 *nr);
	/* Where "btrfs-image -r" writes a dump's items */
	image_dump_layout_fn dump_layout;
};

#endif
