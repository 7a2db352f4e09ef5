/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reads kept in flight together, so that a device with high latency pays
 * it once per dependency step instead of once per read.  A queue takes
 * reads one by one (io_queue_submit()) and hands them back as they finish
 * (io_queue_reap()), so its caller can submit what a finished read points
 * to while the others are still on their way: no barrier between batches.
 * Reads go through io_uring where the build has liburing and the kernel
 * allows it, else through a pool of threads, with the same depth.  Each
 * request is counted by the I/O layer exactly as a single io_read() would
 * count it, in the thread that reaps it.
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
	void *priv;			/* the caller's */
	/* the queue's own */
	struct io_request *next;
	bool counted;
};

struct io_queue;

/* A queue keeping up to @depth reads in flight (1..IO_BATCH_MAX_THREADS) */
int io_queue_create(u32 depth, struct io_queue **q);
/* Every read must have been reaped */
void io_queue_destroy(struct io_queue *q);
/* "io_uring" or "threads" */
const char *io_queue_engine(const struct io_queue *q);

/*
 * Start reading @req, which stays the caller's memory until reaped.  What
 * the page cache already holds is read on the spot (and reaped next, as
 * every other read).  Reads past the depth wait inside the queue.
 */
void io_queue_submit(struct io_queue *q, struct io_request *req);
/*
 * Wait until at least one submitted read has finished; put up to @max
 * finished ones in @done and return how many.  0: nothing in flight.
 */
u32 io_queue_reap(struct io_queue *q, struct io_request **done, u32 max);
/*
 * Reads finished and not reaped yet.  A warm page cache finishes every
 * read in io_queue_submit(): a caller that goes on submitting then copies
 * blocks far ahead of the ones it works on, out of the CPU's caches.
 */
u32 io_queue_ready(const struct io_queue *q);

/* Submit @nr reads and reap them all; check each ->result */
void io_queue_read_all(struct io_queue *q, struct io_request *reqs, u32 nr);

/*
 * The same with a queue of its own of @max_threads: returns 0 when every
 * request was issued.  All requests must read from devices whose stats are
 * the same struct (one run's counters), which is how kernel-shared opens
 * them.
 */
int io_read_batch(struct io_request *reqs, u32 nr, u32 max_threads);

#endif
