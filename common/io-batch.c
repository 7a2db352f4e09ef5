// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/io-batch.h"

struct batch_worker {
	pthread_t thread;
	struct io_request *reqs;
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
		struct io_request *req = &w->reqs[i];
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

static void read_serially(struct io_request *reqs, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		reqs[i].result = io_read(reqs[i].dev, reqs[i].buf, reqs[i].len,
					 reqs[i].offset, reqs[i].purpose);
}

/*
 * All requests must read from devices whose stats are the same struct
 * (one run's counters), which is how kernel-shared opens them.
 */
int io_read_batch(struct io_request *reqs, u32 nr, u32 max_threads)
{
	struct batch_worker *workers;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	u32 next = 0, nr_workers, i, started = 0;

	if (max_threads > IO_BATCH_MAX_THREADS)
		max_threads = IO_BATCH_MAX_THREADS;
	nr_workers = nr < max_threads ? nr : max_threads;
	if (nr_workers <= 1) {
		read_serially(reqs, nr);
		return 0;
	}
	workers = calloc(nr_workers, sizeof(*workers));
	if (!workers)
		return -ENOMEM;
	for (i = 0; i < nr_workers; i++) {
		workers[i] = (struct batch_worker) {
			.reqs = reqs, .nr = nr, .next = &next, .lock = &lock,
		};
		if (pthread_create(&workers[i].thread, NULL, batch_worker_fn, &workers[i]))
			break;
		started++;
	}
	if (!started)
		read_serially(reqs, nr);
	for (i = 0; i < started; i++) {
		pthread_join(workers[i].thread, NULL);
		if (reqs[0].dev->stats)
			merge_stats(reqs[0].dev->stats, &workers[i].stats);
	}
	free(workers);
	return 0;
}
