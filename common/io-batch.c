// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/io-batch.h"

struct batch_worker {
	pthread_t thread;
	struct io_request *reqs;
	const u32 *pending;		/* indexes into reqs still to read */
	u32 nr;
	u32 *next;			/* shared cursor */
	pthread_mutex_t *lock;
	struct io_stats stats;		/* counted here, merged after the join */
};

static u32 take_next(struct batch_worker *w)
{
	u32 i;

	pthread_mutex_lock(w->lock);
	i = (*w->next)++;
	pthread_mutex_unlock(w->lock);
	return i;
}

/*
 * Each worker reads through a private copy of the device whose counters
 * are its own, so the shared counters are only touched by the caller.
 */
static void *batch_worker_fn(void *arg)
{
	struct batch_worker *w = arg;
	u32 i;

	while ((i = take_next(w)) < w->nr) {
		struct io_request *req = &w->reqs[w->pending[i]];
		struct io_dev dev = *req->dev;

		dev.stats = &w->stats;
		req->result = io_read(&dev, req->buf, req->len, req->offset,
				      req->purpose);
	}
	return NULL;
}

static void merge_stats(struct io_stats *into, const struct io_stats *from)
{
	int i;

	into->total.reads += from->total.reads;
	into->total.bytes += from->total.bytes;
	for (i = 0; i < IO_MAX_PURPOSES; i++) {
		into->by_purpose[i].reads += from->by_purpose[i].reads;
		into->by_purpose[i].bytes += from->by_purpose[i].bytes;
	}
}

/*
 * What the page cache already holds is read on the spot, without a
 * thread; returns how many requests are left, their indexes in @pending.
 */
static u32 read_cached(struct io_request *reqs, u32 nr, u32 *pending)
{
	u32 i, left = 0;

	for (i = 0; i < nr; i++) {
		reqs[i].result = io_read_cached(reqs[i].dev, reqs[i].buf, reqs[i].len,
						reqs[i].offset, reqs[i].purpose);
		if (reqs[i].result == -EAGAIN)
			pending[left++] = i;
	}
	return left;
}

static void read_serially(struct io_request *reqs, const u32 *pending, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		struct io_request *req = &reqs[pending[i]];

		req->result = io_read(req->dev, req->buf, req->len, req->offset,
				      req->purpose);
	}
}

/*
 * All requests must read from devices whose stats are the same struct
 * (one run's counters), which is how kernel-shared opens them.
 */
int io_read_batch(struct io_request *reqs, u32 nr, u32 max_threads)
{
	struct batch_worker *workers;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	u32 next = 0, nr_workers, i, started = 0, left;
	u32 *pending;

	if (max_threads > IO_BATCH_MAX_THREADS)
		max_threads = IO_BATCH_MAX_THREADS;
	pending = calloc(nr ? nr : 1, sizeof(*pending));
	if (!pending)
		return -ENOMEM;
	/* one at a time there is nothing to overlap: no need to look first */
	if (max_threads <= 1) {
		for (i = 0; i < nr; i++)
			pending[i] = i;
		left = nr;
	} else {
		left = read_cached(reqs, nr, pending);
	}
	nr_workers = left < max_threads ? left : max_threads;
	workers = nr_workers > 1 ? calloc(nr_workers, sizeof(*workers)) : NULL;
	for (i = 0; workers && i < nr_workers; i++) {
		workers[i] = (struct batch_worker) {
			.reqs = reqs, .pending = pending, .nr = left,
			.next = &next, .lock = &lock,
		};
		if (pthread_create(&workers[i].thread, NULL, batch_worker_fn, &workers[i]))
			break;
		started++;
	}
	if (!started)
		read_serially(reqs, pending, left);
	for (i = 0; i < started; i++) {
		pthread_join(workers[i].thread, NULL);
		if (reqs[0].dev->stats)
			merge_stats(reqs[0].dev->stats, &workers[i].stats);
	}
	free(workers);
	free(pending);
	return 0;
}
