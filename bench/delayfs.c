// SPDX-License-Identifier: GPL-2.0
/*
 * delayfs: a FUSE filesystem with one file, "image", that forwards reads to a
 * backing image file and sleeps a fixed time per read first: a slow
 * parallel device (network or cloud block storage: many reads in flight,
 * each paying the delay) without device-mapper, for bench/run.sh.  Not a
 * spinning disk, which serves one read at a time whatever the queue depth.
 *
 *   delayfs MOUNTPOINT -o image=PATH[,delay_us=N] [fuse options]
 *
 * MOUNTPOINT/image   the backing file's bytes; every read request costs
 *                    delay_us microseconds (default 0) plus the pread
 * MOUNTPOINT/stats   "reads N bytes N writes_refused N delay_us N", counters
 *                    since the mount; reading it is not counted
 *
 * Files are opened with direct_io, so no page cache or readahead sits in
 * between: one read(2) / pread(2) of the caller, or one bio of a loop device
 * attached to MOUNTPOINT/image, is one request here and pays the delay once.
 * Requests are served by up to max_threads threads (default 128, with
 * clone_fd), so 64 concurrent readers overlap their delays; asynchronous
 * readers (io_uring) too, up to 256 (max_background, 12 by default).
 *
 * Read-only: "image" may be opened read-write (so that losetup can attach it
 * read-write, like a real disk, and the kernel does not mark block groups
 * read-only), but every write is refused with EROFS and counted in stats.
 * A "mount -o ro" of btrfs writes nothing.
 */
#define FUSE_USE_VERSION 35
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct {
	char *image;
	unsigned long delay_us;
	int fd;
	off_t size;
	unsigned long long reads, bytes, writes;
} g;

static const struct fuse_opt delayfs_opts[] = {
	{ "image=%s", offsetof(__typeof__(g), image), 0 },
	{ "delay_us=%lu", offsetof(__typeof__(g), delay_us), 0 },
	FUSE_OPT_END
};

static int stats_text(char *buf, size_t len)
{
	return snprintf(buf, len, "reads %llu bytes %llu writes_refused %llu delay_us %lu\n",
			__atomic_load_n(&g.reads, __ATOMIC_RELAXED),
			__atomic_load_n(&g.bytes, __ATOMIC_RELAXED),
			__atomic_load_n(&g.writes, __ATOMIC_RELAXED), g.delay_us);
}

static void *delayfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/*
	 * Asynchronous reads (io_uring, AIO) are FUSE background requests,
	 * of which the kernel keeps max_background in flight (default 12):
	 * as many as the threads may serve, so a deep queue overlaps them all
	 */
	conn->max_background = 256;
	conn->congestion_threshold = 256;
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	cfg->attr_timeout = 3600;
	cfg->entry_timeout = 3600;
	return NULL;
}

static int delayfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (!strcmp(path, "/image")) {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = g.size;
		st->st_blksize = 4096;
		st->st_blocks = g.size / 512;
	} else if (!strcmp(path, "/stats")) {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = 4096;
	} else {
		return -ENOENT;
	}
	return 0;
}

static int delayfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
			   struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off; (void)fi; (void)flags;
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, "image", NULL, 0, 0);
	fill(buf, "stats", NULL, 0, 0);
	return 0;
}

static int delayfs_open(const char *path, struct fuse_file_info *fi)
{
	if (!strcmp(path, "/stats")) {
		if ((fi->flags & O_ACCMODE) != O_RDONLY)
			return -EROFS;
	} else if (strcmp(path, "/image")) {
		return -ENOENT;
	}
	fi->direct_io = 1;
	fi->keep_cache = 0;
	return 0;
}

static void sleep_us(unsigned long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static int delayfs_read(const char *path, char *buf, size_t len, off_t off,
			struct fuse_file_info *fi)
{
	ssize_t ret;

	(void)fi;
	if (!strcmp(path, "/stats")) {
		char text[256];
		int n = stats_text(text, sizeof(text));

		if (off >= n)
			return 0;
		if (len > (size_t)(n - off))
			len = n - off;
		memcpy(buf, text + off, len);
		return len;
	}
	if (g.delay_us)
		sleep_us(g.delay_us);
	ret = pread(g.fd, buf, len, off);
	if (ret < 0)
		return -errno;
	__atomic_add_fetch(&g.reads, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g.bytes, ret, __ATOMIC_RELAXED);
	return ret;
}

static int delayfs_write(const char *path, const char *buf, size_t len, off_t off,
			 struct fuse_file_info *fi)
{
	(void)path; (void)buf; (void)len; (void)off; (void)fi;
	__atomic_add_fetch(&g.writes, 1, __ATOMIC_RELAXED);
	return -EROFS;
}

static int delayfs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)path; (void)size; (void)fi;
	return -EROFS;
}

static const struct fuse_operations delayfs_ops = {
	.init = delayfs_init,
	.getattr = delayfs_getattr,
	.readdir = delayfs_readdir,
	.open = delayfs_open,
	.read = delayfs_read,
	.write = delayfs_write,
	.truncate = delayfs_truncate,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct stat st;
	int i, have_threads = 0;

	if (fuse_opt_parse(&args, &g, delayfs_opts, NULL) == -1)
		return 2;
	if (!g.image) {
		fprintf(stderr, "usage: delayfs MOUNTPOINT -o image=PATH[,delay_us=N] [fuse options]\n");
		return 2;
	}
	g.fd = open(g.image, O_RDONLY);
	if (g.fd < 0 || fstat(g.fd, &st)) {
		perror(g.image);
		return 1;
	}
	g.size = st.st_size;
	/* 1 ns timer slack (inherited by the worker threads): the default 50 us
	 * would lengthen every sleep */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (i = 0; i < args.argc; i++)
		if (strstr(args.argv[i], "max_threads"))
			have_threads = 1;
	if (!have_threads)
		fuse_opt_add_arg(&args, "-omax_threads=128,max_idle_threads=128,clone_fd");
	fuse_opt_add_arg(&args, "-ofsname=delayfs,subtype=delayfs");
	i = fuse_main(args.argc, args.argv, &delayfs_ops, NULL);
	fuse_opt_free_args(&args);
	return i;
}
