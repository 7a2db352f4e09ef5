// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include "common/decompress.h"
#include "common/image-dump.h"
#include "common/io.h"
#include "common/messages.h"

/*
 * The first bytes of a regular file, for its format; not counted.  A file
 * shorter than @len gives what it has; an I/O error, or less than the file
 * holds, fails the open: such a file is unreadable, not of another format.
 */
static int read_magic(struct io_dev *dev, const struct stat *st, u8 *buf,
		      size_t len, size_t *got)
{
	struct io_fault fault = { .offset = 0, .len = len };
	ssize_t ret;

	if ((u64)st->st_size < len)
		fault.len = st->st_size;
	while (fault.done < fault.len) {
		ret = pread(dev->fd, buf + fault.done, fault.len - fault.done,
			    fault.done);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0) {
			fault.err = ret < 0 ? -errno : 0;
			io_fault_describe(dev->path, &fault, dev->error,
					  sizeof(dev->error));
			return fault.err ? fault.err : -EIO;
		}
		fault.done += ret;
	}
	*got = fault.done;
	return 0;
}

/*
 * What a temporary copy of an input says: a warning when the input went on
 * past the device size its superblock gives (@stream names it), and with
 * -v where the copy of @source is and how large (@how: "decompressed",
 * "copied").
 */
static void note_temp_copy(const struct io_dev *dev, const struct stat *st,
			   const struct decompress_info *info, const char *stream,
			   const char *source, const char *how)
{
	const char *dir = getenv("TMPDIR");

	if (info->cut)
		warning("%s: %s goes on past the device size of its superblock (%llu bytes): the rest is not part of the filesystem and was not read",
			dev->path, stream, (unsigned long long)info->device_size);
	pr_verbose(LOG_VERBOSE,
		   "%s: %s, %s to a sparse temporary file in %s (%llu bytes, %llu allocated), deleted at exit\n",
		   dev->path, source, how, dir && *dir ? dir : "/tmp",
		   (unsigned long long)st->st_size,
		   (unsigned long long)st->st_blocks * 512);
}

static void note_decompressed(const struct io_dev *dev, const struct stat *st,
			      const struct decompress_info *info)
{
	char stream[64], source[64];

	snprintf(stream, sizeof(stream), "%s-compressed: the stream", dev->compression);
	snprintf(source, sizeof(source), "%s-compressed", dev->compression);
	note_temp_copy(dev, st, info, stream, source, "decompressed");
}

/* Replace dev->fd by a descriptor of the decompressed content */
static int open_compressed(struct io_dev *dev, struct stat *st,
			   enum compress_kind kind)
{
	struct decompress_info info;
	int fd = decompress_open(dev->fd, dev->path, st, kind, dev->format,
				 &info, dev->error, sizeof(dev->error));

	if (fd < 0)
		return fd;
	close(dev->fd);
	dev->fd = fd;
	dev->compression = compress_name(kind);
	if (fstat(fd, st) < 0)
		return -errno;
	if (info.fresh)
		note_decompressed(dev, st, &info);
	return 0;
}

static int open_dump(struct io_dev *dev, const struct stat *st)
{
	static bool noted;
	char err[256];
	int ret;

	ret = image_dump_open(dev->fd, st->st_size, dev->format->dump_layout,
			      &dev->dump, &dev->size, err, sizeof(err));
	if (ret) {
		snprintf(dev->error, sizeof(dev->error),
			 "%s: btrfs-image dump: %s", dev->path, err);
		return ret;
	}
	image_dump_describe(dev->dump, err, sizeof(err));
	pr_verbose(LOG_VERBOSE, "%s: %s, read as restored\n", dev->path, err);
	/* once a run: the not-btrfs check opens the path again */
	if (image_dump_note(dev->dump) && !noted) {
		warning("%s: %s", dev->path, image_dump_note(dev->dump));
		noted = true;
	}
	return 0;
}

/*
 * The head of the file in one read: its magic, and what lies behind it up
 * to IO_HEAD_BYTES (a btrfs image's superblock), kept for io_read().  Only
 * the magic must come: when the read fails or stops short of it, the
 * magic is read alone, which says where the fault is; past the magic the
 * head is what came, and the rest is read (and fails) in its own place.
 */
static int read_head(struct io_dev *dev, const struct stat *st, u8 *magic,
		     size_t magic_len, size_t *got)
{
	u64 want = (u64)st->st_size < IO_HEAD_BYTES ? (u64)st->st_size : IO_HEAD_BYTES;
	size_t need = want < magic_len ? want : magic_len;
	ssize_t ret;

	free(dev->head);
	dev->head = malloc(IO_HEAD_BYTES);
	dev->head_len = 0;
	if (dev->head) {
		do {
			ret = pread(dev->fd, dev->head, want, 0);
		} while (ret < 0 && errno == EINTR);
		if (ret >= (ssize_t)need) {
			dev->head_len = ret;
			memcpy(magic, dev->head, need);
			*got = need;
			return 0;
		}
	}
	return read_magic(dev, st, magic, magic_len, got);
}

static void drop_head(struct io_dev *dev)
{
	free(dev->head);
	dev->head = NULL;
	dev->head_len = 0;
}

/* A regular file: raw, compressed, a dump, or a compressed dump */
static int open_regular(struct io_dev *dev, struct stat *st)
{
	enum compress_kind kind;
	u8 magic[8];
	size_t n;
	int ret;

	ret = read_head(dev, st, magic, sizeof(magic), &n);
	if (ret)
		return ret;
	kind = compress_detect(magic, n);
	if (kind != COMPRESS_NONE) {
		drop_head(dev);
		ret = open_compressed(dev, st, kind);
		if (!ret)
			ret = read_head(dev, st, magic, sizeof(magic), &n);
		if (ret)
			return ret;
	}
	dev->size = st->st_size & ~511ULL;
	if (image_dump_magic(magic, n)) {
		drop_head(dev);
		return open_dump(dev, st);
	}
	return 0;
}

static void note_stream(const struct io_dev *dev, const struct stat *st,
			const struct decompress_info *info)
{
	char source[64];

	snprintf(source, sizeof(source), "standard input%s%s",
		 dev->compression ? ", decompressed from " : "",
		 dev->compression ? dev->compression : "");
	note_temp_copy(dev, st, info, "standard input", source, "copied");
}

/*
 * Standard input that is a pipe ("xz -dc IMG.xz | btrfs-space inspect -"):
 * it can be read once only, so its head is read here for the format and
 * the whole goes to a sparse temporary file as a compressed image does
 * (decompress.c: bounded by the device size its superblock gives, or the
 * end of a btrfs-image dump); the file is then read as a regular one.  A
 * second open in the same run gets the same copy.
 */
static int open_stream(struct io_dev *dev, struct stat *st)
{
	static int copy = -1;
	static enum compress_kind copy_kind;
	struct decompress_info info;
	size_t len = 0;
	ssize_t n;
	u8 *head;
	int fd;

	if (copy < 0) {
		head = malloc(IO_HEAD_BYTES);
		if (!head)
			return -ENOMEM;
		while (len < IO_HEAD_BYTES) {
			n = read(dev->fd, head + len, IO_HEAD_BYTES - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			len += n;
		}
		if (n < 0) {
			fd = -errno;
			snprintf(dev->error, sizeof(dev->error),
				 "%s: read error on standard input at offset %zu: %s",
				 dev->path, len, strerror(errno));
			free(head);
			return fd;
		}
		copy_kind = compress_detect(head, len);
		copy = decompress_open_stream(dev->fd, dev->path, st, copy_kind, dev->format,
					      head, len, &info, dev->error,
					      sizeof(dev->error));
		free(head);
		if (copy < 0) {
			fd = copy;
			copy = -1;
			return fd;
		}
	}
	fd = fcntl(copy, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	close(dev->fd);
	dev->fd = fd;
	if (fstat(fd, st) < 0)
		return -errno;
	dev->compression = copy_kind == COMPRESS_NONE ? NULL : compress_name(copy_kind);
	if (len)	/* read now, not in an earlier open */
		note_stream(dev, st, &info);
	return open_regular(dev, st);
}

static int open_blockdev(struct io_dev *dev)
{
	dev->is_blockdev = true;
	return ioctl(dev->fd, BLKGETSIZE64, &dev->size) < 0 ? -errno : 0;
}

static int explain_tty(struct io_dev *dev)
{
	snprintf(dev->error, sizeof(dev->error),
		 "%s: standard input is a terminal: pipe an image into it (xz -dc IMG.xz | btrfs-space inspect -)",
		 dev->path);
	return -ENOTBLK;
}

/* Neither an image file nor a block device: say what it is instead */
static int explain_file_type(struct io_dev *dev, const struct stat *st)
{
	const char *what;

	if (S_ISDIR(st->st_mode))
		what = "a directory, not a mounted btrfs filesystem (a mount point reads live)";
	else if (S_ISCHR(st->st_mode))
		what = "a character device, not a block device or an image file";
	else if (S_ISFIFO(st->st_mode))
		what = "a FIFO: btrfs-space reads by offset, give an image file or a block device";
	else if (S_ISSOCK(st->st_mode))
		what = "a socket, not a block device or an image file";
	else
		what = "not a block device or an image file";
	snprintf(dev->error, sizeof(dev->error), "%s: %s", dev->path, what);
	return -ENOTBLK;
}

/*
 * Open strictly read-only: the tool must never be able to write to its
 * input, whatever a later bug might try.  O_CLOEXEC keeps the descriptor
 * out of any child.
 */
int io_open(struct io_dev *dev, const char *path, const struct io_format *fmt,
	    struct io_stats *stats)
{
	struct stat st;
	int ret;

	memset(dev, 0, sizeof(*dev));
	dev->fd = -1;
	dev->format = fmt;
	dev->path = strdup(path);
	if (!dev->path)
		return -ENOMEM;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	if (!strcmp(path, IO_STDIN))
		dev->fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
	else
		dev->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (dev->fd < 0)
		ret = -errno;
	else if (fstat(dev->fd, &st) < 0)
		ret = -errno;
	else if (!strcmp(path, IO_STDIN) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		ret = open_stream(dev, &st);
	else if (!strcmp(path, IO_STDIN) && isatty(dev->fd))
		ret = explain_tty(dev);
	else if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		ret = explain_file_type(dev, &st);
	else if (fcntl(dev->fd, F_SETFL, 0) < 0)
		ret = -errno;
	else if (S_ISBLK(st.st_mode))
		ret = open_blockdev(dev);
	else
		ret = open_regular(dev, &st);
	if (ret) {
		io_close(dev);
		return ret;
	}
	dev->stats = stats;
	/*
	 * Tree blocks are read one by one, scattered over the device: the
	 * page cache's readahead would pull several times the bytes asked
	 * for from a cold disk.  Random access reads just the blocks.
	 */
	posix_fadvise(dev->fd, 0, 0, POSIX_FADV_RANDOM);
	return 0;
}

void io_close(struct io_dev *dev)
{
	drop_head(dev);
	image_dump_close(dev->dump);
	dev->dump = NULL;
	if (dev->fd >= 0)
		close(dev->fd);
	dev->fd = -1;
	free(dev->path);
	dev->path = NULL;
}

void io_count_read(struct io_dev *dev, u64 len, unsigned int purpose)
{
	if (!dev->stats)
		return;
	dev->stats->total.reads++;
	dev->stats->total.bytes += len;
	if (purpose < IO_MAX_PURPOSES) {
		dev->stats->by_purpose[purpose].reads++;
		dev->stats->by_purpose[purpose].bytes += len;
	}
}

/*
 * Read exactly @len bytes at @offset.  Returns 0, -ERANGE when the range
 * lies (partly) beyond the end of the device, or -errno of a failed read;
 * a short read (the file ends before dev->size says) is -EIO.  @fault, if
 * given, says which and where.
 */
int io_read_fault(struct io_dev *dev, void *buf, u64 len, u64 offset,
		  unsigned int purpose, struct io_fault *fault)
{
	struct io_fault f = { .offset = offset, .len = len };
	int err;

	if (fault)
		*fault = f;
	if (offset > dev->size || len > dev->size - offset)
		return -ERANGE;
	io_count_read(dev, len, purpose);
	if (dev->dump) {
		/* a dump's item that cannot be inflated is its read error */
		err = image_dump_read(dev->dump, buf, len, offset);
		if (err && fault)
			fault->err = err;
		return err;
	}
	if (len <= dev->head_len && offset <= dev->head_len - len) {
		memcpy(buf, dev->head + offset, len);
		return 0;
	}
	while (f.done < len) {
		ssize_t ret = pread(dev->fd, (char *)buf + f.done, len - f.done,
				    offset + f.done);

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0) {
			f.err = ret < 0 ? -errno : 0;
			if (fault)
				*fault = f;
			return f.err ? f.err : -EIO;
		}
		f.done += ret;
	}
	return 0;
}

int io_read(struct io_dev *dev, void *buf, u64 len, u64 offset,
	    unsigned int purpose)
{
	return io_read_fault(dev, buf, len, offset, purpose, NULL);
}

void io_fault_describe(const char *path, const struct io_fault *fault,
		       char *buf, size_t len)
{
	if (fault->err)
		snprintf(buf, len, "read error on %s at offset %llu: %s", path,
			 (unsigned long long)fault->offset, strerror(-fault->err));
	else
		snprintf(buf, len, "short read on %s at offset %llu: got %llu of %llu bytes",
			 path, (unsigned long long)fault->offset,
			 (unsigned long long)fault->done,
			 (unsigned long long)fault->len);
}

/*
 * Read @len bytes at @offset only if the page cache already holds them all
 * (preadv2 with RWF_NOWAIT, Linux 4.14+): 0 and counted as io_read()
 * counts, or -EAGAIN with nothing counted when a read would have to wait
 * for the device (or cannot be tried: a dump, an old kernel).  A batch
 * takes what is cached on the spot and sends only the rest to its
 * threads, which a warm cache then never starts.
 */
int io_read_cached(struct io_dev *dev, void *buf, u64 len, u64 offset,
		   unsigned int purpose)
{
#ifdef RWF_NOWAIT
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	ssize_t ret;

	if (dev->dump || dev->no_nowait)
		return -EAGAIN;
	if (offset > dev->size || len > dev->size - offset)
		return -ERANGE;
	if (len <= dev->head_len && offset <= dev->head_len - len) {
		memcpy(buf, dev->head + offset, len);
		io_count_read(dev, len, purpose);
		return 0;
	}
	do {
		ret = preadv2(dev->fd, &iov, 1, offset, RWF_NOWAIT);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0 && (errno == EOPNOTSUPP || errno == EINVAL))
		dev->no_nowait = true;
	/* a partly cached range comes back short: read it all the usual way */
	if (ret < 0 || (u64)ret != len)
		return -EAGAIN;
	io_count_read(dev, len, purpose);
	return 0;
#else
	return -EAGAIN;
#endif
}
