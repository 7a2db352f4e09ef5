/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A btrfs-image metadata dump read in place, as the device that
 * "btrfs-image -r" would restore from it.  The dump holds tree blocks (and
 * the superblock) by logical address; restore writes each one where the
 * dump's own chunk items place it, fixes up the superblock and enlarges
 * the file to the device size.  This reader builds the same layout as an
 * index over the dump and serves reads from it: what restore would leave
 * as a hole (data blocks, unused space) reads as zeroes.
 */
#ifndef BTRFS_SPACE_IMAGE_DUMP_H
#define BTRFS_SPACE_IMAGE_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include "common/types.h"

#define IMAGE_DUMP_MAGIC	0xbd5c25e27295668bULL

struct image_dump;

/* True when the first 8 bytes at @buf are the cluster magic of a dump */
bool image_dump_magic(const void *buf, size_t len);

/*
 * Index the dump open at @fd (@file_size bytes).  On success *ret holds
 * the reader and *dev_size the size of the restored device.  On failure
 * returns -errno and a one-line reason in @err.
 */
int image_dump_open(int fd, u64 file_size, struct image_dump **ret,
		    u64 *dev_size, char *err, size_t errlen);

/* Read @len bytes of the restored device at @offset; thread-safe */
int image_dump_read(struct image_dump *dump, void *buf, u64 len, u64 offset);

void image_dump_close(struct image_dump *dump);

/* A quirk of restore that the reader will meet, or NULL */
const char *image_dump_note(const struct image_dump *dump);

/* What was indexed, for a verbose note */
void image_dump_describe(const struct image_dump *dump, char *buf, size_t len);

#endif
