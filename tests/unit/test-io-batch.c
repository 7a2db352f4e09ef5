// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of common/io-batch: the queue of concurrent reads, with each
 * engine the build has (threads always, io_uring with liburing).  A file
 * of 256 blocks of 4 KiB, block i filled with the byte i, is read out of
 * the page cache (POSIX_FADV_DONTNEED after writing it), so the reads go
 * to the engine and not the RWF_NOWAIT path.  Checked: every buffer holds
 * its block, each read is counted once for its purpose as io_read() counts
 * it, a read past the end is -ERANGE and not counted, a read the file ends
 * within is -EIO and counted, reads submitted from what came back (a chain
 * through the blocks) all come back, and depth 1 reads one at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/unit-test.h"
#include "common/io-batch.h"
#include "kernel-shared/disk-io.h"

#define BLOCK		4096
#define NR_BLOCKS	256
#define FIRST		32	/* past the head io_open() keeps (68 KiB) */

static char path[] = "/tmp/btrfs-space-test-io-batch.XXXXXX";

static int make_file(void)
{
	static u8 buf[BLOCK];
	int fd = mkstemp(path), i;

	if (fd < 0)
		return -1;
	for (i = 0; i < NR_BLOCKS; i++) {
		memset(buf, i, sizeof(buf));
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return -1;
	}
	fdatasync(fd);
	close(fd);
	return 0;
}

static void uncache(void)
{
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
}

static int block_ok(const u8 *buf, int i)
{
	int j;

	for (j = 0; j < BLOCK; j++)
		if (buf[j] != (u8)i)
			return 0;
	return 1;
}

/* Every block from FIRST on, one request each, plus one past the end */
static void test_all(const char *engine, u32 depth)
{
	static u8 bufs[NR_BLOCKS][BLOCK];
	struct io_request reqs[NR_BLOCKS + 1];
	struct io_stats stats = { 0 };
	struct io_dev dev;
	struct io_queue *q;
	u32 nr = 0, i, bad = 0;

	uncache();
	check(!io_open(&dev, path, &btrfs_io_format, &stats), "%s: open", engine);
	check(!io_queue_create(depth, &q), "%s: queue of %u", engine, depth);
	for (i = FIRST; i < NR_BLOCKS; i++)
		reqs[nr++] = (struct io_request) {
			.dev = &dev, .buf = bufs[i], .len = BLOCK,
			.offset = (u64)i * BLOCK, .purpose = 2,
		};
	reqs[nr++] = (struct io_request) {
		.dev = &dev, .buf = bufs[0], .len = BLOCK,
		.offset = (u64)NR_BLOCKS * BLOCK, .purpose = 2,
	};
	io_queue_read_all(q, reqs, nr);
	for (i = 0; i + 1 < nr; i++)
		if (reqs[i].result || !block_ok(bufs[FIRST + i], FIRST + i))
			bad++;
	check(!bad, "%s depth %u: %u of %u blocks wrong", engine, depth, bad, nr - 1);
	check_u64("read past the end: -ERANGE", (u64)-reqs[nr - 1].result, ERANGE);
	check_u64("reads counted", stats.total.reads, NR_BLOCKS - FIRST);
	check_u64("bytes counted", stats.total.bytes, (u64)(NR_BLOCKS - FIRST) * BLOCK);
	check_u64("reads counted for their purpose", stats.by_purpose[2].reads,
		  NR_BLOCKS - FIRST);
	io_queue_destroy(q);
	io_close(&dev);
}

/* The file ends inside a read the device size allows: -EIO, counted */
static void test_short(const char *engine)
{
	static u8 buf[2 * BLOCK];
	struct io_request req;
	struct io_stats stats = { 0 };
	struct io_request *done[1];
	struct io_dev dev;
	struct io_queue *q;

	uncache();
	check(!io_open(&dev, path, &btrfs_io_format, &stats), "%s: open", engine);
	dev.size += 2 * BLOCK;
	io_queue_create(4, &q);
	req = (struct io_request) {
		.dev = &dev, .buf = buf, .len = 2 * BLOCK,
		.offset = (u64)(NR_BLOCKS - 1) * BLOCK,
	};
	io_queue_submit(q, &req);
	check_u64("short read: reaped", io_queue_reap(q, done, 1), 1);
	check(done[0] == &req, "%s: the request comes back", engine);
	check_u64("short read: -EIO", (u64)-req.result, EIO);
	check_u64("short read: counted", stats.total.reads, 1);
	check(block_ok(buf, NR_BLOCKS - 1), "%s: what the file had was read", engine);
	check_u64("nothing left in flight", io_queue_reap(q, done, 1), 0);
	io_queue_destroy(q);
	io_close(&dev);
}

/*
 * Each finished read submits the next block of its chain, while the other
 * chains are in flight: 8 chains through the blocks from FIRST on
 */
static void test_chains(const char *engine)
{
	static u8 bufs[8][BLOCK];
	struct io_request reqs[8], *done[8];
	struct io_stats stats = { 0 };
	struct io_dev dev;
	struct io_queue *q;
	u32 i, n, got = 0, bad = 0;

	uncache();
	check(!io_open(&dev, path, &btrfs_io_format, &stats), "%s: open", engine);
	io_queue_create(8, &q);
	for (i = 0; i < 8; i++) {
		reqs[i] = (struct io_request) {
			.dev = &dev, .buf = bufs[i], .len = BLOCK,
			.offset = (u64)(FIRST + i) * BLOCK,
		};
		io_queue_submit(q, &reqs[i]);
	}
	while ((n = io_queue_reap(q, done, 8))) {
		for (i = 0; i < n; i++) {
			struct io_request *r = done[i];
			u32 block = r->offset / BLOCK;

			got++;
			if (r->result || !block_ok(r->buf, block))
				bad++;
			if (block + 8 < NR_BLOCKS) {
				r->offset += 8 * BLOCK;
				io_queue_submit(q, r);
			}
		}
	}
	check(!bad, "%s chains: %u of %u blocks wrong", engine, bad, got);
	check_u64("chains: every block once", got, NR_BLOCKS - FIRST);
	check_u64("chains: reads counted", stats.total.reads, NR_BLOCKS - FIRST);
	io_queue_destroy(q);
	io_close(&dev);
}

static void run_engine(const char *engine)
{
	struct io_queue *q;

	if (engine)
		setenv("BTRFS_SPACE_IO_ENGINE", engine, 1);
	else
		unsetenv("BTRFS_SPACE_IO_ENGINE");
	io_queue_create(4, &q);
	printf("# engine %s\n", io_queue_engine(q));
	if (engine)
		check(!strcmp(io_queue_engine(q), engine), "engine %s chosen", engine);
	io_queue_destroy(q);
	test_all(engine ? engine : "default", 1);
	test_all(engine ? engine : "default", 4);
	test_all(engine ? engine : "default", 256);
	test_short(engine ? engine : "default");
	test_chains(engine ? engine : "default");
}

int main(void)
{
	if (make_file()) {
		check(0, "cannot make %s", path);
		return 1;
	}
	run_engine("threads");
	run_engine(NULL);
	unlink(path);
	return unit_failures != 0;
}
