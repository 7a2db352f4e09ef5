// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "common/decompress.h"

#define BUF_SIZE	(1U << 20)
#define BLOCK		4096U

/* Files already decompressed in this run, by identity */
struct decompressed {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd;
	struct decompressed *next;
};

static struct decompressed *done_list;

struct sink {
	int fd;
	u64 pos;
	const char *dir;
};

struct source {
	int fd;
	u64 pos;
	u8 *buf;
	size_t len;
};

struct job {
	struct source in;
	struct sink out;
	u8 *obuf;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4)))
static int job_error(struct job *job, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(job->err, job->errlen, fmt, ap);
	va_end(ap);
	return err;
}

enum compress_kind compress_detect(const void *buf, size_t len)
{
	static const u8 xz[] = { 0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00 };
	static const u8 zstd[] = { 0x28, 0xb5, 0x2f, 0xfd };
	static const u8 gzip[] = { 0x1f, 0x8b };

	if (len >= sizeof(xz) && !memcmp(buf, xz, sizeof(xz)))
		return COMPRESS_XZ;
	if (len >= sizeof(zstd) && !memcmp(buf, zstd, sizeof(zstd)))
		return COMPRESS_ZSTD;
	if (len >= sizeof(gzip) && !memcmp(buf, gzip, sizeof(gzip)))
		return COMPRESS_GZIP;
	return COMPRESS_NONE;
}

const char *compress_name(enum compress_kind kind)
{
	switch (kind) {
	case COMPRESS_XZ: return "xz";
	case COMPRESS_ZSTD: return "zstd";
	case COMPRESS_GZIP: return "gzip";
	default: return "none";
	}
}

static bool all_zero(const u8 *p, size_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

static int pwrite_full(int fd, const u8 *buf, size_t len, u64 offset)
{
	while (len) {
		ssize_t ret = pwrite(fd, buf, len, offset);

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		buf += ret;
		len -= ret;
		offset += ret;
	}
	return 0;
}

/* Append @len bytes, leaving a hole for every all-zero block */
static int sink_write(struct job *job, const u8 *buf, size_t len)
{
	struct sink *out = &job->out;
	size_t done = 0;

	while (done < len) {
		size_t run = 0;
		int ret;

		while (done + run < len) {
			size_t n = len - done - run < BLOCK ? len - done - run : BLOCK;

			if (all_zero(buf + done + run, n))
				break;
			run += n;
		}
		ret = pwrite_full(out->fd, buf + done, run, out->pos + done);
		if (ret)
			return job_error(job, ret,
				"cannot write the decompressed image to %s: %s",
				out->dir, strerror(-ret));
		done += run;
		if (done < len)
			done += len - done < BLOCK ? len - done : BLOCK;
	}
	out->pos += len;
	return 0;
}

/* Next input bytes into in->buf; in->len 0 at the end */
static int source_fill(struct job *job)
{
	struct source *in = &job->in;
	ssize_t ret;

	do {
		ret = pread(in->fd, in->buf, BUF_SIZE, in->pos);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return job_error(job, -errno, "read error: %s", strerror(errno));
	in->len = ret;
	in->pos += ret;
	return 0;
}

static int run_xz(struct job *job)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	lzma_ret lret = LZMA_OK;
	int ret = 0;

	if (lzma_stream_decoder(&strm, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return -ENOMEM;
	while (!ret && lret != LZMA_STREAM_END) {
		lzma_action action = LZMA_RUN;

		if (!strm.avail_in) {
			ret = source_fill(job);
			if (ret)
				break;
			strm.next_in = job->in.buf;
			strm.avail_in = job->in.len;
			if (!job->in.len)
				action = LZMA_FINISH;
		}
		strm.next_out = job->obuf;
		strm.avail_out = BUF_SIZE;
		lret = lzma_code(&strm, action);
		if (lret == LZMA_BUF_ERROR)
			ret = job_error(job, -EUCLEAN, "xz data is cut short");
		else if (lret != LZMA_OK && lret != LZMA_STREAM_END)
			ret = job_error(job, -EUCLEAN, "xz data error (code %d)", lret);
		else
			ret = sink_write(job, job->obuf, BUF_SIZE - strm.avail_out);
	}
	lzma_end(&strm);
	return ret;
}

static int run_zstd(struct job *job)
{
	ZSTD_DStream *strm = ZSTD_createDStream();
	ZSTD_inBuffer zin = { NULL, 0, 0 };
	bool full = false;
	size_t zret = 1;
	int ret = 0;

	if (!strm)
		return -ENOMEM;
	while (!ret) {
		ZSTD_outBuffer zout = { job->obuf, BUF_SIZE, 0 };

		if (zin.pos == zin.size && !full) {
			ret = source_fill(job);
			if (ret || !job->in.len)
				break;
			zin = (ZSTD_inBuffer) { job->in.buf, job->in.len, 0 };
		}
		zret = ZSTD_decompressStream(strm, &zout, &zin);
		if (ZSTD_isError(zret))
			ret = job_error(job, -EUCLEAN, "zstd data error: %s",
					ZSTD_getErrorName(zret));
		else
			ret = sink_write(job, job->obuf, zout.pos);
		/* 0: a frame ended, flushed whole */
		full = zret && zout.pos == zout.size;
	}
	ZSTD_freeDStream(strm);
	if (!ret && zret)
		ret = job_error(job, -EUCLEAN, "zstd data is cut short");
	return ret;
}

static int gzip_step(struct job *job, z_stream *strm)
{
	int zret;

	strm->next_out = job->obuf;
	strm->avail_out = BUF_SIZE;
	zret = inflate(strm, Z_NO_FLUSH);
	if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
		return job_error(job, -EUCLEAN, "gzip data error (code %d)", zret);
	if (sink_write(job, job->obuf, BUF_SIZE - strm->avail_out))
		return -EIO;
	/* another member may follow */
	if (zret == Z_STREAM_END)
		return inflateReset(strm) == Z_OK ? 1 : -ENOMEM;
	return 0;
}

static int run_gzip(struct job *job)
{
	z_stream strm = { 0 };
	bool ended = false, pending = false;
	int ret = 0;

	if (inflateInit2(&strm, 15 + 16) != Z_OK)
		return -ENOMEM;
	while (ret >= 0) {
		/* input used up and the last output not full: nothing pending */
		if (!strm.avail_in && !pending) {
			ret = source_fill(job);
			if (ret || !job->in.len)
				break;
			strm.next_in = job->in.buf;
			strm.avail_in = job->in.len;
		}
		ret = gzip_step(job, &strm);
		pending = !strm.avail_out;
		if (ret > 0)
			ended = true;
		else if (!ret && strm.total_in)
			ended = false;
	}
	inflateEnd(&strm);
	if (!ret && !ended)
		ret = job_error(job, -EUCLEAN, "gzip data is cut short");
	return ret < 0 ? ret : 0;
}

static int make_temp(struct job *job)
{
	const char *dir = getenv("TMPDIR");
	char name[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	job->out.dir = dir;
	if (snprintf(name, sizeof(name), "%s/btrfs-space-XXXXXX", dir) >= (int)sizeof(name))
		return job_error(job, -ENAMETOOLONG, "TMPDIR path too long");
	fd = mkostemp(name, O_CLOEXEC);
	if (fd < 0)
		return job_error(job, -errno, "cannot make a temporary file in %s: %s",
				 dir, strerror(errno));
	unlink(name);
	job->out.fd = fd;
	return 0;
}

static int run_job(struct job *job, enum compress_kind kind)
{
	int ret;

	job->in.buf = malloc(BUF_SIZE);
	job->obuf = malloc(BUF_SIZE);
	if (!job->in.buf || !job->obuf)
		ret = -ENOMEM;
	else if (kind == COMPRESS_XZ)
		ret = run_xz(job);
	else if (kind == COMPRESS_ZSTD)
		ret = run_zstd(job);
	else
		ret = run_gzip(job);
	if (!ret && ftruncate(job->out.fd, job->out.pos) < 0)
		ret = job_error(job, -errno, "cannot size the temporary file: %s",
				strerror(errno));
	free(job->in.buf);
	free(job->obuf);
	return ret;
}

static void forget_all(void)
{
	while (done_list) {
		struct decompressed *next = done_list->next;

		close(done_list->fd);
		free(done_list);
		done_list = next;
	}
}

static bool same_file(const struct decompressed *d, const struct stat *st)
{
	return d->dev == st->st_dev && d->ino == st->st_ino &&
	       d->size == st->st_size &&
	       d->mtime.tv_sec == st->st_mtim.tv_sec &&
	       d->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static int remember(int fd, const struct stat *st)
{
	static bool registered;
	struct decompressed *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	if (!registered && !atexit(forget_all))
		registered = true;
	*d = (struct decompressed) { st->st_dev, st->st_ino, st->st_size,
				     st->st_mtim, fd, done_list };
	done_list = d;
	return 0;
}

static int dup_fd(int fd)
{
	int ret = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	return ret < 0 ? -errno : ret;
}

int decompress_open(int fd, const struct stat *st, enum compress_kind kind,
		    bool *fresh, char *err, size_t errlen)
{
	struct job job = { .in.fd = fd, .out.fd = -1, .err = err, .errlen = errlen };
	struct decompressed *d;
	int ret;

	err[0] = 0;
	*fresh = false;
	for (d = done_list; d; d = d->next)
		if (same_file(d, st))
			return dup_fd(d->fd);
	ret = make_temp(&job);
	if (!ret)
		ret = run_job(&job, kind);
	if (!ret)
		ret = remember(job.out.fd, st);
	if (ret) {
		if (job.out.fd >= 0)
			close(job.out.fd);
		if (!err[0])
			snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	*fresh = true;
	return dup_fd(job.out.fd);
}
