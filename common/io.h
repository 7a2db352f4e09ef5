/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counted, read-only I/O.  Every byte this tool takes from a device or an
 * image goes through io_read(), so the counts it keeps are the whole truth
 * about what a run read.  Callers tag each read with a purpose (a small
 * integer they define) so the counts can be split, e.g. "superblock" vs
 * "block-group search"; this layer knows nothing of what they mean.
 */
#ifndef BTRFS_SPACE_IO_H
#define BTRFS_SPACE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include "common/io-format.h"
#include "common/types.h"

struct image_dump;

#define IO_MAX_PURPOSES	8
#define IO_STDIN	"-"		/* the path that names standard input */
#define IO_HEAD_BYTES	(68U << 10)	/* up to the end of the first btrfs superblock */

struct io_counter {
	u64 reads;
	u64 bytes;
};

struct io_stats {
	struct io_counter total;
	struct io_counter by_purpose[IO_MAX_PURPOSES];
};

struct io_dev {
	int fd;
	char *path;
	/*
	 * Bytes readable: the block device's size, or the file's size down
	 * to whole 512-byte sectors, which is what a loop device of the file
	 * gives the kernel (losetup ignores the rest).
	 */
	u64 size;
	bool is_blockdev;
	struct io_stats *stats;
	/* a btrfs-image dump, read as the device "btrfs-image -r" restores */
	struct image_dump *dump;
	/* "xz", "zstd" or "gzip" when the file was decompressed, else NULL */
	const char *compression;
	/* preadv2(RWF_NOWAIT) refused once: io_read_cached() stops trying */
	bool no_nowait;
	/*
	 * The first IO_HEAD_BYTES of a raw image file (or less, the whole
	 * file), read once at open for its format's magic: reads inside it
	 * are served from here, counted as reads.  A btrfs superblock lies at
	 * 64 KiB, so opening and reading it cost one round trip, not two.
	 */
	u8 *head;
	u32 head_len;
	/*
	 * Why io_open() failed, when it knows more than the errno (a broken
	 * dump, bad compressed data, a directory): one line, else empty.
	 * Kept by io_close().
	 */
	char error[512];
	const struct io_format *format;
};

/*
 * Open @path read-only.  The format is found by magic bytes: a compressed
 * file (xz, zstd, gzip) is read through a sparse temporary copy, a
 * btrfs-image dump through its index; either way @dev then reads like the
 * raw device.  @fmt sizes a decompressed stream and lays out a dump.  Returns 0 or -errno, and dev->error may say why.
 */
int io_open(struct io_dev *dev, const char *path, const struct io_format *fmt,
	    struct io_stats *stats);
void io_close(struct io_dev *dev);
int io_read(struct io_dev *dev, void *buf, u64 len, u64 offset,
	    unsigned int purpose);

/* What a failed read met: the range asked, how much came, and why not more */
struct io_fault {
	u64 offset;
	u64 len;
	u64 done;
	int err;		/* -errno of the failing call; 0 for a short read */
};

/* io_read(), and on an I/O error or a short read what it was in @fault */
int io_read_fault(struct io_dev *dev, void *buf, u64 len, u64 offset,
		  unsigned int purpose, struct io_fault *fault);
/*
 * The one-line account of @fault on @path: "read error on PATH at offset
 * X: Input/output error" or "short read on PATH at offset X: got N of M
 * bytes".
 */
void io_fault_describe(const char *path, const struct io_fault *fault,
		       char *buf, size_t len);
int io_read_cached(struct io_dev *dev, void *buf, u64 len, u64 offset,
		   unsigned int purpose);
/*
 * Count one read of @len bytes for @purpose as io_read() counts it, for a
 * read that went to the device another way (io-batch.c's queue reads with
 * counters off in its threads or io_uring, and counts in the reaper).
 */
void io_count_read(struct io_dev *dev, u64 len, unsigned int purpose);

#endif
