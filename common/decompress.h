/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compressed images given directly (IMAGE.xz, .zst, .gz, found by their
 * magic bytes): decompressed once into a sparse temporary file in $TMPDIR
 * that is unlinked as soon as it is made, so it is gone at exit whatever
 * happens.  Opening the same file again in one run reuses it.
 */
#ifndef BTRFS_SPACE_DECOMPRESS_H
#define BTRFS_SPACE_DECOMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include "common/types.h"

struct io_format;

enum compress_kind {
	COMPRESS_NONE,
	COMPRESS_XZ,
	COMPRESS_ZSTD,
	COMPRESS_GZIP,
};

/* The format whose magic starts @buf (@len bytes of the file's start) */
enum compress_kind compress_detect(const void *buf, size_t len);
const char *compress_name(enum compress_kind kind);

struct decompress_info {
	bool fresh;		/* decompressed now, not earlier in this run */
	/*
	 * The stream went on with data past the device size its superblock
	 * gives; that rest was not decompressed.
	 */
	bool cut;
	u64 device_size;	/* from the superblock; 0 when none was found */
	u64 written;		/* bytes of non-zero data in the temporary file */
	/* non-zero bytes left out: in data chunks or outside every chunk */
	u64 skipped;
};

/*
 * A descriptor of the decompressed content of the file @path open at @fd
 * (stat @st), what was done in @info.  The temporary file is never larger
 * than the device size of the superblock at 64 KiB (or of its copy at
 * 64 MiB) of the stream; without one (not btrfs) it ends after the last
 * copy looked at, and a btrfs-image dump ends with the first bad cluster
 * header, where its reader stops.  Once the chunk root is out and tells
 * the chunks (a leaf), only the first MiB, the superblock copies and the
 * metadata and system chunks are written: nothing else is ever read.  Returns the
 * descriptor, or -errno with a one-line reason naming @path in @err.
 */
int decompress_open(int fd, const char *path, const struct stat *st,
		    enum compress_kind kind, const struct io_format *fmt,
		    struct decompress_info *info, char *err, size_t errlen);

/*
 * decompress_open() of a stream read once from its start (standard input,
 * a pipe): the @head_len bytes of @head, read from @fd already, come
 * first, then read() until the content's end (the same bounds);
 * COMPRESS_NONE copies the stream into the temporary file as it is.
 */
int decompress_open_stream(int fd, const char *path, const struct stat *st,
			   enum compress_kind kind, const struct io_format *fmt,
			   const void *head, size_t head_len,
			   struct decompress_info *info, char *err, size_t errlen);

#endif
