/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Several reads issued together, so that a device with high latency pays
 * it once per batch instead of once per read.  Each request is counted by
 * the I/O layer exactly as a single io_read() would count it.
 */
#ifndef BTRFS_SPACE_IO_BATCH_H
#define BTRFS_SPACE_IO_BATCH_H

#include "common/io.h"

#define IO_BATCH_MAX_THREADS	256

struct io_request {
	struct io_dev *dev;
	void *buf;
	u64 len;
	u64 offset;
	unsigned int purpose;
	int result;			/* filled: 0 or -errno as io_read returns */
};

/* Returns 0 when every request was issued; check each ->result */
int io_read_batch(struct io_request *reqs, u32 nr, u32 max_threads);

#endif
