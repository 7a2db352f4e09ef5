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

enum compress_kind {
	COMPRESS_NONE,
	COMPRESS_XZ,
	COMPRESS_ZSTD,
	COMPRESS_GZIP,
};

/* The format whose magic starts @buf (@len bytes of the file's start) */
enum compress_kind compress_detect(const void *buf, size_t len);
const char *compress_name(enum compress_kind kind);

/*
 * A descriptor of the decompressed content of the file open at @fd (stat
 * @st); *fresh says whether it was decompressed now or earlier in this
 * run.  Returns the descriptor, or -errno with a one-line reason in @err.
 */
int decompress_open(int fd, const struct stat *st, enum compress_kind kind,
		    bool *fresh, char *err, size_t errlen);

#endif
