// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/decompress.h"
#include "common/dynlib.h"
#include "common/image-dump.h"
#include "common/io-format.h"
#include "common/messages.h"

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

/*
 * Where the stream is looked at for the device size: the superblock copies
 * the format names (btrfs_sb_offset() 0 and 1; copy 2 at 256 GiB is too
 * far to decompress blindly for).
 */
#define NR_PROBES	2
#define NOTE_WRITTEN	(1ULL << 30)
/* beyond the device, how much of a run of zeros is taken to see it end */
#define ZERO_TAIL_MAX	(1ULL << 30)

/* The btrfs-image dump format, as common/image-dump.c reads it */
#define DUMP_CLUSTER	IMAGE_DUMP_CLUSTER_SIZE
#define DUMP_HEADER	IMAGE_DUMP_CLUSTER_HEADER
#define DUMP_ITEM	IMAGE_DUMP_CLUSTER_ITEM
#define DUMP_MAX_ITEMS	IMAGE_DUMP_ITEMS_PER_CLUSTER

enum sink_mode {
	SINK_UNKNOWN,		/* before the first KiB: a dump or an image? */
	SINK_IMAGE,		/* sized by a superblock copy */
	SINK_DUMP,		/* sized by its chain of clusters */
};

struct sink {
	int fd;
	const struct io_format *fmt;
	u64 pos;		/* bytes of the stream taken */
	u64 limit;		/* where the content ends, once known */
	u64 written;		/* non-zero bytes written (holes are not) */
	enum sink_mode mode;
	int probed;		/* superblock copies looked at */
	u64 cluster;		/* file offset of the next dump cluster */
	bool sized;		/* limit comes from a superblock */
	bool beyond;		/* data went on past the device size, not taken */
	bool noted;		/* the temporary file's size was noted */
	/*
	 * Once the chunk root is out (at chunk_at, chunk_len bytes, from the
	 * superblock sb), the ranges a reader may ever read: only those are
	 * written from then on, the rest stays holes.
	 */
	u8 *sb;
	u64 chunk_at;
	u32 chunk_len;
	bool ranges_known;
	struct io_range *ranges;
	u32 nr_ranges;
	u64 skipped;		/* non-zero bytes left out as never read */
	const char *dir;
	const char *path;
	const char *kind;
};

struct source {
	int fd;
	const char *path;	/* the compressed file */
	u64 pos;
	u8 *buf;
	size_t len;
	/* a stream (standard input): read() once, its first bytes read already */
	bool stream;
	const u8 *head;
	size_t head_len;
};

struct job {
	struct source in;
	struct sink out;
	u8 *obuf;
	char *err;
	size_t errlen;
};

/* A line about the data: "IMG: xz-compressed: what" */
__attribute__((format(printf, 3, 4)))
static int job_error(struct job *job, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(job->err, job->errlen, "%s: %s-compressed: ", job->out.path,
		     job->out.kind);
	if (n < 0 || (size_t)n >= job->errlen)
		return err;
	va_start(ap, fmt);
	vsnprintf(job->err + n, job->errlen - n, fmt, ap);
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

/*
 * Said once a run per file when the temporary file may grow large: from
 * the superblock, when the device's chunks (dev_item.bytes_used, where
 * all its non-zero data lives) pass NOTE_WRITTEN; else when that much
 * non-zero data was written.
 */
static void note_large(struct sink *out, u64 chunks)
{
	const char *dir = out->dir;

	if (out->noted)
		return;
	out->noted = true;
	if (chunks)
		pr_note("%s: %s-compressed: decompressing to a sparse temporary file in %s: up to %llu bytes of non-zero data (the chunks of its %llu-byte device); set TMPDIR elsewhere if there is not room",
			out->path, out->kind, dir, (unsigned long long)chunks,
			(unsigned long long)out->limit);
	else
		pr_note("%s: %s-compressed: the sparse temporary file in %s holds more than %llu MiB of non-zero data; set TMPDIR elsewhere if there is not room",
			out->path, out->kind, dir,
			(unsigned long long)(NOTE_WRITTEN >> 20));
}

/*
 * Write the non-zero run @buf (@len bytes at @offset), only what lies in
 * the ranges a reader may read once they are known; returns the bytes
 * written or -errno.
 */
static int64_t put_wanted(struct sink *out, const u8 *buf, size_t len, u64 offset)
{
	u64 end = offset + len, done = offset, written = 0;
	u32 i;
	int ret;

	if (!out->ranges_known) {
		ret = pwrite_full(out->fd, buf, len, offset);
		return ret ? ret : (int64_t)len;
	}
	for (i = 0; i < out->nr_ranges; i++) {
		u64 from = out->ranges[i].start > done ? out->ranges[i].start : done;
		u64 to = out->ranges[i].end < end ? out->ranges[i].end : end;

		/* ranges may overlap (the superblock in the first MiB): each byte once */
		if (from >= to)
			continue;
		ret = pwrite_full(out->fd, buf + (from - offset), to - from, from);
		if (ret)
			return ret;
		written += to - from;
		done = to;
	}
	return written;
}

/* Write @len bytes at the stream's position; all-zero blocks stay holes */
static int sink_put(struct job *job, const u8 *buf, size_t len)
{
	struct sink *out = &job->out;
	size_t done = 0;

	while (done < len) {
		size_t run = 0;
		int64_t put;
		int ret = 0;

		while (done + run < len) {
			size_t n = len - done - run < BLOCK ? len - done - run : BLOCK;

			if (all_zero(buf + done + run, n))
				break;
			run += n;
		}
		put = run ? put_wanted(out, buf + done, run, out->pos + done) : 0;
		if (put < 0) {
			ret = put;
			return job_error(job, ret,
				"cannot write the decompressed image to %s: %s",
				out->dir, strerror(-ret));
		}
		out->skipped += run - put;
		if (out->written < NOTE_WRITTEN && out->written + put >= NOTE_WRITTEN)
			note_large(out, 0);
		out->written += put;
		done += run;
		if (done < len)
			done += len - done < BLOCK ? len - done : BLOCK;
	}
	out->pos += len;
	return 0;
}

static u32 get_le32(const u8 *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (u32)p[3] << 24;
}

static u64 get_le64(const u8 *p)
{
	u64 v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * Bytes the sink took, read back; zero blocks were not written, and past
 * the last one written the file has not grown yet: those read as zeros.
 */
static int sink_read_back(struct job *job, u8 *buf, size_t len, u64 at)
{
	size_t done = 0;
	ssize_t ret;

	while (done < len) {
		ret = pread(job->out.fd, buf + done, len - done, at + done);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return job_error(job, -errno,
				"cannot read back the temporary file in %s: %s",
				job->out.dir, strerror(errno));
		if (!ret)
			break;
		done += ret;
	}
	memset(buf + done, 0, len - done);
	return 0;
}

/*
 * The chunk root just decompressed: when it tells (a leaf, a good
 * checksum), the rest of the stream is written only where a reader may
 * read, so a stream whose superblock claims a large device full of
 * data (a forged one: 309 KB that wrote 8 GiB) costs what its metadata
 * chunks hold.  Data chunks and unallocated space stay holes.
 */
static int sink_ranges(struct job *job)
{
	struct sink *out = &job->out;
	u8 *block = malloc(out->chunk_len);
	int ret;

	out->ranges_known = false;
	if (!block)
		return -ENOMEM;
	ret = sink_read_back(job, block, out->chunk_len, out->chunk_at);
	if (!ret && !out->fmt->read_ranges(out->sb, block, out->chunk_len,
					    &out->ranges, &out->nr_ranges))
		out->ranges_known = true;
	free(block);
	free(out->sb);
	out->sb = NULL;
	out->chunk_len = 0;
	return ret;
}

/*
 * The superblock copy just decompressed (read back from the temporary
 * file, holes read as zeros): with btrfs magic, its device size bounds the
 * rest of the stream.  Without, the next copy is tried; after the last one
 * the content is not btrfs, and what is already out is all it needs.
 */
static int sink_probe(struct job *job)
{
	struct sink *out = &job->out;
	const struct io_format *fmt = out->fmt;
	u64 at = fmt->super_offset[out->probed++];
	u64 dev_total, chunks;
	u8 *sb = malloc(fmt->super_size);
	int ret;

	if (!sb)
		return -ENOMEM;
	ret = sink_read_back(job, sb, fmt->super_size, at);
	if (!ret && !fmt->super_device_size(sb, &dev_total, &chunks)) {
		if (out->probed == NR_PROBES)
			out->limit = out->pos;
		free(sb);
		return 0;
	}
	if (ret) {
		free(sb);
		return ret;
	}
	out->limit = dev_total > out->pos ? dev_total : out->pos;
	out->sized = true;
	out->probed = NR_PROBES;
	if (fmt->chunk_root_at && fmt->chunk_root_at(sb, &out->chunk_at, &out->chunk_len)) {
		out->sb = sb;
		/* already out (a backup copy sized the stream): look now */
		if (out->chunk_at + out->chunk_len <= out->pos)
			return sink_ranges(job);
	} else {
		free(sb);
	}
	if (chunks > NOTE_WRITTEN)
		note_large(out, chunks < out->limit ? chunks : out->limit);
	return 0;
}

/*
 * A dump cluster's header just decompressed: a good one says where the
 * next begins (the header KiB, its items, up to a KiB boundary).  The dump
 * reader, as restore, stops at the first bad header and reads nothing
 * past it, so the stream is kept up to and with that header, no further.
 */
static int sink_cluster(struct job *job)
{
	struct sink *out = &job->out;
	u8 cl[DUMP_CLUSTER];
	u64 next = out->cluster + DUMP_CLUSTER;
	u32 nritems, i;
	int ret;

	ret = sink_read_back(job, cl, sizeof(cl), out->cluster);
	if (ret)
		return ret;
	nritems = get_le32(cl + 16);
	if (!image_dump_magic(cl, sizeof(cl)) || get_le64(cl + 8) != out->cluster ||
	    nritems > DUMP_MAX_ITEMS) {
		out->limit = out->pos;
		return 0;
	}
	for (i = 0; i < nritems; i++)
		next += get_le32(cl + DUMP_HEADER + i * DUMP_ITEM + 8);
	out->cluster = (next + DUMP_CLUSTER - 1) / DUMP_CLUSTER * DUMP_CLUSTER;
	return 0;
}

/* Where the sink next looks back at what it wrote */
static u64 sink_checkpoint(const struct sink *out)
{
	switch (out->mode) {
	case SINK_UNKNOWN:
		return DUMP_CLUSTER;
	case SINK_DUMP:
		return out->cluster + DUMP_CLUSTER;
	default:
		if (out->probed < NR_PROBES)
			return out->fmt->super_offset[out->probed] + out->fmt->super_size;
		return out->chunk_len ? out->chunk_at + out->chunk_len : UINT64_MAX;
	}
}

static int sink_check(struct job *job)
{
	struct sink *out = &job->out;
	u8 magic[8];
	int ret;

	if (out->mode == SINK_UNKNOWN) {
		ret = sink_read_back(job, magic, sizeof(magic), 0);
		if (ret)
			return ret;
		out->mode = image_dump_magic(magic, sizeof(magic)) ? SINK_DUMP :
								     SINK_IMAGE;
		return out->mode == SINK_DUMP ? sink_cluster(job) : 0;
	}
	if (out->mode == SINK_DUMP)
		return sink_cluster(job);
	return out->probed < NR_PROBES ? sink_probe(job) : sink_ranges(job);
}

/*
 * Beyond the device size the stream is not part of the filesystem: the
 * kernel never reads there.  Zeros (an image file made larger than its
 * filesystem) are taken without a word, up to ZERO_TAIL_MAX; data stops
 * the decompression, and io_open() says so.  Returns 1 to stop.
 */
static int sink_beyond(struct job *job, const u8 *buf, size_t len)
{
	struct sink *out = &job->out;

	if (!out->sized || !all_zero(buf, len)) {
		out->beyond = out->sized;
		return 1;
	}
	out->pos += len;
	return out->pos - out->limit > ZERO_TAIL_MAX;
}

/*
 * Take @len bytes of output.  Bytes are written as they come up to the
 * next checkpoint (the first KiB, a superblock copy, a dump cluster's
 * header), where the sink looks back at them; once the content's end is
 * known, nothing past it is written.  Returns 0, 1 when the rest of the
 * stream is not wanted, or -errno.
 */
static int sink_write(struct job *job, const u8 *buf, size_t len)
{
	struct sink *out = &job->out;

	while (len) {
		u64 check = sink_checkpoint(out);
		u64 end = check < out->limit ? check : out->limit;
		size_t n;
		int ret;

		if (out->pos >= out->limit)
			return sink_beyond(job, buf, len);
		n = end - out->pos < len ? end - out->pos : len;
		ret = sink_put(job, buf, n);
		if (ret)
			return ret;
		buf += n;
		len -= n;
		if (out->pos == check) {
			ret = sink_check(job);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Next input bytes into in->buf; in->len 0 at the end */
static int source_fill(struct job *job)
{
	struct source *in = &job->in;
	ssize_t ret;

	if (in->head_len) {
		in->len = in->head_len < BUF_SIZE ? in->head_len : BUF_SIZE;
		memcpy(in->buf, in->head, in->len);
		in->head += in->len;
		in->head_len -= in->len;
		in->pos += in->len;
		return 0;
	}
	do {
		if (in->stream)
			ret = read(in->fd, in->buf, BUF_SIZE);
		else
			ret = pread(in->fd, in->buf, BUF_SIZE, in->pos);
	} while (ret < 0 && errno == EINTR);
	/* an I/O error says where, as io_read_fault() does, not what format */
	if (ret < 0) {
		snprintf(job->err, job->errlen, "read error on %s at offset %llu: %s",
			 in->path, (unsigned long long)in->pos, strerror(errno));
		return -errno;
	}
	in->len = ret;
	in->pos += ret;
	return 0;
}

/* A stream not compressed: copied as it comes, bounded as the others */
static int run_copy(struct job *job)
{
	int ret;

	do {
		ret = source_fill(job);
		if (!ret && job->in.len)
			ret = sink_write(job, job->in.buf, job->in.len);
	} while (!ret && job->in.len);
	return ret < 0 ? ret : 0;
}

static int run_xz(struct job *job)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	lzma_ret lret = LZMA_OK;
	const char *why;
	int ret = 0;

	if (dynlib_load(&dynlib_lzma, &why))
		return job_error(job, -ENOSYS, "%s", why);
	if (lzma_api.lzma_stream_decoder(&strm, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
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
		lret = lzma_api.lzma_code(&strm, action);
		if (lret == LZMA_BUF_ERROR)
			ret = job_error(job, -EUCLEAN, "xz data is cut short");
		else if (lret != LZMA_OK && lret != LZMA_STREAM_END)
			ret = job_error(job, -EUCLEAN, "xz data error (code %d)", lret);
		else
			ret = sink_write(job, job->obuf, BUF_SIZE - strm.avail_out);
	}
	lzma_api.lzma_end(&strm);
	return ret < 0 ? ret : 0;
}

static int run_zstd(struct job *job)
{
	ZSTD_DStream *strm;
	ZSTD_inBuffer zin = { NULL, 0, 0 };
	bool full = false;
	size_t zret = 1;
	const char *why;
	int ret = 0;

	if (dynlib_load(&dynlib_zstd, &why))
		return job_error(job, -ENOSYS, "%s", why);
	strm = zstd_api.ZSTD_createDStream();
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
		zret = zstd_api.ZSTD_decompressStream(strm, &zout, &zin);
		if (zstd_api.ZSTD_isError(zret))
			ret = job_error(job, -EUCLEAN, "zstd data error: %s",
					zstd_api.ZSTD_getErrorName(zret));
		else
			ret = sink_write(job, job->obuf, zout.pos);
		/* 0: a frame ended, flushed whole */
		full = zret && zout.pos == zout.size;
	}
	zstd_api.ZSTD_freeDStream(strm);
	if (!ret && zret)
		ret = job_error(job, -EUCLEAN, "zstd data is cut short");
	return ret < 0 ? ret : 0;
}

/* 0 more to do, 1 a member ended, 2 the rest is not wanted, or -errno */
static int gzip_step(struct job *job, z_stream *strm)
{
	int zret, ret;

	strm->next_out = job->obuf;
	strm->avail_out = BUF_SIZE;
	zret = zlib_api.inflate(strm, Z_NO_FLUSH);
	if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
		return job_error(job, -EUCLEAN, "gzip data error (code %d)", zret);
	ret = sink_write(job, job->obuf, BUF_SIZE - strm->avail_out);
	if (ret)
		return ret < 0 ? ret : 2;
	/* another member may follow */
	if (zret == Z_STREAM_END)
		return zlib_api.inflateReset(strm) == Z_OK ? 1 : -ENOMEM;
	return 0;
}

static int run_gzip(struct job *job)
{
	z_stream strm = { 0 };
	bool ended = false, pending = false;
	const char *why;
	int ret = 0;

	if (dynlib_load(&dynlib_zlib, &why))
		return job_error(job, -ENOSYS, "%s", why);
	/* inflateInit2() (15 + 16: gzip's header, not zlib's) */
	if (zlib_api.inflateInit2_(&strm, 15 + 16, ZLIB_VERSION, (int)sizeof(strm)) != Z_OK)
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
		if (ret == 2) {
			ret = 0;
			ended = true;
			break;
		}
		if (ret > 0)
			ended = true;
		else if (!ret && strm.total_in)
			ended = false;
	}
	zlib_api.inflateEnd(&strm);
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
	else if (kind == COMPRESS_NONE)
		ret = run_copy(job);
	else if (kind == COMPRESS_XZ)
		ret = run_xz(job);
	else if (kind == COMPRESS_ZSTD)
		ret = run_zstd(job);
	else
		ret = run_gzip(job);
	if (job->out.pos > job->out.limit)
		job->out.pos = job->out.limit;
	if (!ret && ftruncate(job->out.fd, job->out.pos) < 0)
		ret = job_error(job, -errno, "cannot size the temporary file: %s",
				strerror(errno));
	free(job->in.buf);
	free(job->obuf);
	free(job->out.sb);
	free(job->out.ranges);
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

static int open_job(struct job *job, const struct stat *st, enum compress_kind kind,
		    struct decompress_info *info, char *err)
{
	struct decompressed *d;
	int ret;

	err[0] = 0;
	memset(info, 0, sizeof(*info));
	for (d = done_list; d; d = d->next)
		if (same_file(d, st))
			return dup_fd(d->fd);
	ret = make_temp(job);
	if (!ret)
		ret = run_job(job, kind);
	if (!ret)
		ret = remember(job->out.fd, st);
	if (ret) {
		if (job->out.fd >= 0)
			close(job->out.fd);
		if (!err[0])
			job_error(job, ret, "%s", strerror(-ret));
		return ret;
	}
	*info = (struct decompress_info) {
		.fresh = true, .cut = job->out.beyond,
		.device_size = job->out.sized ? job->out.limit : 0,
		.written = job->out.written,
		.skipped = job->out.skipped,
	};
	return dup_fd(job->out.fd);
}

int decompress_open(int fd, const char *path, const struct stat *st,
		    enum compress_kind kind, const struct io_format *fmt,
		    struct decompress_info *info, char *err, size_t errlen)
{
	struct job job = {
		.in = { .fd = fd, .path = path },
		.out = { .fd = -1, .fmt = fmt, .limit = UINT64_MAX, .path = path,
			 .kind = compress_name(kind) },
		.err = err, .errlen = errlen,
	};

	return open_job(&job, st, kind, info, err);
}

int decompress_open_stream(int fd, const char *path, const struct stat *st,
			   enum compress_kind kind, const struct io_format *fmt,
			   const void *head, size_t head_len,
			   struct decompress_info *info, char *err, size_t errlen)
{
	struct job job = {
		.in = { .fd = fd, .path = path, .stream = true, .head = head,
			.head_len = head_len },
		.out = { .fd = -1, .fmt = fmt, .limit = UINT64_MAX, .path = path,
			 .kind = kind == COMPRESS_NONE ? "un" : compress_name(kind) },
		.err = err, .errlen = errlen,
	};

	return open_job(&job, st, kind, info, err);
}
