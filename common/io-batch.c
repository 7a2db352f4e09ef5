// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/dynlib.h"
#include "common/io-batch.h"

struct req_list {
	struct io_request *head;
	struct io_request *tail;
};

struct io_queue {
	u32 depth;
	u32 inflight;			/* submitted, not reaped yet */
	pthread_mutex_t lock;		/* guards what the threads share */
	struct req_list done;		/* finished, to be reaped */
	u32 nr_done;			/* on the done list */
	/* the thread engine */
	pthread_cond_t work_cond;
	pthread_cond_t done_cond;
	struct req_list work;		/* waiting for a thread */
	u32 busy;			/* handed to the threads, not finished */
	u32 nr_threads;
	bool stop;
	pthread_t threads[IO_BATCH_MAX_THREADS];
#ifdef HAVE_LIBURING
	bool uring;
	bool uring_wanted;		/* not started yet: no read has missed */
	struct io_uring ring;
	u32 ring_inflight;		/* in the ring or in the kernel */
	u32 unsubmitted;		/* in the ring, not given to the kernel */
	struct req_list backlog;	/* waiting for room: depth in flight */
#endif
};

static void list_push(struct req_list *l, struct io_request *req)
{
	req->next = NULL;
	if (l->tail)
		l->tail->next = req;
	else
		l->head = req;
	l->tail = req;
}

static struct io_request *list_pop(struct req_list *l)
{
	struct io_request *req = l->head;

	if (req) {
		l->head = req->next;
		if (!l->head)
			l->tail = NULL;
		req->next = NULL;
	}
	return req;
}

/* The read itself, counters off: the reaper counts (io_count_read()) */
static int read_uncounted(const struct io_request *req, u64 done)
{
	struct io_dev dev = *req->dev;

	dev.stats = NULL;
	/* the purpose is the reaper's to read: it may be raised meanwhile */
	return io_read(&dev, (char *)req->buf + done, req->len - done,
		       req->offset + done, 0);
}

static void push_done(struct io_queue *q, struct io_request *req)
{
	list_push(&q->done, req);
	__atomic_store_n(&q->nr_done, q->nr_done + 1, __ATOMIC_RELAXED);
}

static struct io_request *pop_done(struct io_queue *q)
{
	struct io_request *req = list_pop(&q->done);

	if (req)
		__atomic_store_n(&q->nr_done, q->nr_done - 1, __ATOMIC_RELAXED);
	return req;
}

static void finish(struct io_queue *q, struct io_request *req)
{
	pthread_mutex_lock(&q->lock);
	push_done(q, req);
	pthread_mutex_unlock(&q->lock);
}

/* ---- threads: each takes the next waiting read, blocks in it, hands it back */

static void *queue_thread(void *arg)
{
	struct io_queue *q = arg;
	struct io_request *req;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->work.head && !q->stop)
			pthread_cond_wait(&q->work_cond, &q->lock);
		req = list_pop(&q->work);
		if (!req)
			break;
		pthread_mutex_unlock(&q->lock);
		req->result = read_uncounted(req, 0);
		pthread_mutex_lock(&q->lock);
		q->busy--;
		push_done(q, req);
		pthread_cond_signal(&q->done_cond);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* Threads start as reads wait for them, up to the depth, and stay */
static void threads_submit(struct io_queue *q, struct io_request *req)
{
	pthread_mutex_lock(&q->lock);
	list_push(&q->work, req);
	q->busy++;
	if (q->nr_threads < q->depth && q->nr_threads < q->busy &&
	    !pthread_create(&q->threads[q->nr_threads], NULL, queue_thread, q))
		q->nr_threads++;
	if (!q->nr_threads) {
		/* no thread at all could start: read it here */
		list_pop(&q->work);
		q->busy--;
		pthread_mutex_unlock(&q->lock);
		req->result = read_uncounted(req, 0);
		finish(q, req);
		return;
	}
	pthread_cond_signal(&q->work_cond);
	pthread_mutex_unlock(&q->lock);
}

static void threads_stop(struct io_queue *q)
{
	u32 i;

	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->work_cond);
	pthread_mutex_unlock(&q->lock);
	for (i = 0; i < q->nr_threads; i++)
		pthread_join(q->threads[i], NULL);
}

/* ---- io_uring: one thread, the kernel keeps depth reads in flight ----- */

#ifdef HAVE_LIBURING
#define URING_SUBMIT_BATCH	8

static bool uring_start(struct io_queue *q)
{
	/* regular files are io-wq's bounded work: by default 4 per CPU */
	unsigned int workers[2] = { q->depth, q->depth };

	/* not loadable: the threads read, as in a build without liburing */
	if (dynlib_load(&dynlib_uring, NULL) ||
	    uring_api.io_uring_queue_init(q->depth, &q->ring, 0))
		return false;
	uring_api.io_uring_register_iowq_max_workers(&q->ring, workers);
	q->uring = true;
	return true;
}

static void uring_prep(struct io_queue *q, struct io_request *req)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

	if (!sqe) {
		uring_api.io_uring_submit(&q->ring);
		q->unsubmitted = 0;
		sqe = io_uring_get_sqe(&q->ring);
	}
	if (!sqe) {
		req->result = read_uncounted(req, 0);
		push_done(q, req);
		return;
	}
	io_uring_prep_read(sqe, req->dev->fd, req->buf, req->len, req->offset);
	io_uring_sqe_set_data(sqe, req);
	q->ring_inflight++;
	/*
	 * Reads go to the kernel a few at a time: one system call each would
	 * cost more, and waiting for the next reap leaves the device idle
	 * while the caller works through what came back
	 */
	if (++q->unsubmitted >= URING_SUBMIT_BATCH && uring_api.io_uring_submit(&q->ring) >= 0)
		q->unsubmitted = 0;
}

static void uring_submit(struct io_queue *q, struct io_request *req)
{
	/* a dump's blocks are inflated, not read: no file offset to give */
	if (req->dev->dump || req->len > (1U << 30)) {
		req->result = read_uncounted(req, 0);
		finish(q, req);
	} else if (q->ring_inflight >= q->depth) {
		list_push(&q->backlog, req);
	} else {
		uring_prep(q, req);
	}
}

/* What the kernel says of one read, as io_read() would say it */
static void uring_result(struct io_request *req, int res)
{
	if (res == -EINTR || res == -EAGAIN)
		req->result = read_uncounted(req, 0);
	else if (res < 0)
		req->result = res;
	else if ((u64)res < req->len)	/* short: the rest the usual way */
		req->result = read_uncounted(req, res);
	else
		req->result = 0;
}

/* Move finished reads to q->done, waiting for one when none is there */
static void uring_reap(struct io_queue *q)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n;

	do {
		bool wait = !q->done.head && q->ring_inflight;
		int ret = 0;

		if (wait)
			ret = uring_api.io_uring_submit_and_wait(&q->ring, 1);
		else if (q->unsubmitted)
			ret = uring_api.io_uring_submit(&q->ring);
		if (ret >= 0)
			q->unsubmitted = 0;
		n = 0;
		io_uring_for_each_cqe(&q->ring, head, cqe) {
			struct io_request *req = io_uring_cqe_get_data(cqe);

			uring_result(req, cqe->res);
			push_done(q, req);
			n++;
		}
		io_uring_cq_advance(&q->ring, n);
		q->ring_inflight -= n;
		while (q->backlog.head && q->ring_inflight < q->depth)
			uring_prep(q, list_pop(&q->backlog));
		if (q->unsubmitted && uring_api.io_uring_submit(&q->ring) >= 0)
			q->unsubmitted = 0;
	} while (!q->done.head && q->ring_inflight);
}
#endif

/* ---- the queue ------------------------------------------------------- */

int io_queue_create(u32 depth, struct io_queue **ret)
{
	struct io_queue *q = calloc(1, sizeof(*q));
	const char *engine = getenv("BTRFS_SPACE_IO_ENGINE");

	if (!q)
		return -ENOMEM;
	q->depth = depth < 1 ? 1 : depth > IO_BATCH_MAX_THREADS ? IO_BATCH_MAX_THREADS : depth;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->work_cond, NULL);
	pthread_cond_init(&q->done_cond, NULL);
#ifdef HAVE_LIBURING
	/*
	 * The ring starts at the first read the page cache cannot serve: a
	 * warm run reads everything in io_queue_submit() and never needs it
	 * (io_uring_setup() and its teardown were 0.15 ms of a 10 ms run)
	 */
	q->uring_wanted = q->depth > 1 && !(engine && !strcmp(engine, "threads"));
#else
	(void)engine;
#endif
	*ret = q;
	return 0;
}

void io_queue_destroy(struct io_queue *q)
{
	if (!q)
		return;
	threads_stop(q);
#ifdef HAVE_LIBURING
	if (q->uring)
		uring_api.io_uring_queue_exit(&q->ring);
#endif
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->work_cond);
	pthread_cond_destroy(&q->done_cond);
	free(q);
}

const char *io_queue_engine(const struct io_queue *q)
{
#ifdef HAVE_LIBURING
	if (q->uring || q->uring_wanted)
		return "io_uring";
#endif
	return q->depth > 1 ? "threads" : "serial";
}

void io_queue_submit(struct io_queue *q, struct io_request *req)
{
	struct io_dev *dev = req->dev;

	req->counted = false;
	q->inflight++;
	if (req->offset > dev->size || req->len > dev->size - req->offset) {
		req->result = -ERANGE;	/* io_read() counts nothing then */
		req->counted = true;
		finish(q, req);
		return;
	}
	/* one at a time there is nothing to overlap: read it now */
	if (q->depth <= 1) {
		req->result = io_read(dev, req->buf, req->len, req->offset, req->purpose);
		req->counted = true;
		finish(q, req);
		return;
	}
	/* a warm cache is served on the spot, without a thread or a ring */
	req->result = io_read_cached(dev, req->buf, req->len, req->offset, req->purpose);
	if (req->result != -EAGAIN) {
		req->counted = true;
		finish(q, req);
		return;
	}
#ifdef HAVE_LIBURING
	if (q->uring_wanted) {
		q->uring_wanted = false;
		uring_start(q);
	}
	if (q->uring) {
		uring_submit(q, req);
		return;
	}
#endif
	threads_submit(q, req);
}

u32 io_queue_reap(struct io_queue *q, struct io_request **done, u32 max)
{
	struct io_request *req;
	u32 n = 0, i;

	if (!q->inflight || !max)
		return 0;
#ifdef HAVE_LIBURING
	if (q->uring)
		uring_reap(q);
#endif
	pthread_mutex_lock(&q->lock);
	while (!q->done.head)
		pthread_cond_wait(&q->done_cond, &q->lock);
	while (n < max && (req = pop_done(q)))
		done[n++] = req;
	pthread_mutex_unlock(&q->lock);
	for (i = 0; i < n; i++) {
		if (!done[i]->counted)
			io_count_read(done[i]->dev, done[i]->len, done[i]->purpose);
		done[i]->counted = true;
	}
	q->inflight -= n;
	return n;
}

u32 io_queue_ready(const struct io_queue *q)
{
	return __atomic_load_n(&q->nr_done, __ATOMIC_RELAXED);
}

void io_queue_read_all(struct io_queue *q, struct io_request *reqs, u32 nr)
{
	struct io_request *done[64];
	u32 i;

	for (i = 0; i < nr; i++)
		io_queue_submit(q, &reqs[i]);
	while (io_queue_reap(q, done, 64))
		;
}

int io_read_batch(struct io_request *reqs, u32 nr, u32 max_threads)
{
	struct io_queue *q;
	int ret = io_queue_create(max_threads, &q);

	if (ret)
		return ret;
	io_queue_read_all(q, reqs, nr);
	io_queue_destroy(q);
	return 0;
}
