// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for 021-live-one-truth: every read of a block device
 * sleeps SLOW_READS_MS milliseconds first, so that commits land during a
 * live run's replay of the disk and the retry path runs.  Test use only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

ssize_t pread(int fd, void *buf, size_t len, off_t off);
ssize_t pread64(int fd, void *buf, size_t len, off_t off);
ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags);
ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags);

static void nap(int fd)
{
	const char *ms = getenv("SLOW_READS_MS");
	struct stat st;

	if (ms && !fstat(fd, &st) && S_ISBLK(st.st_mode))
		usleep(1000 * atoi(ms));
}

#define PREAD(name)							\
ssize_t name(int fd, void *buf, size_t len, off_t off)			\
{									\
	static ssize_t (*real)(int, void *, size_t, off_t);		\
									\
	if (!real)							\
		real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, #name); \
	nap(fd);							\
	return real(fd, buf, len, off);					\
}

#define PREADV2(name)							\
ssize_t name(int fd, const struct iovec *iov, int cnt, off_t off, int flags) \
{									\
	static ssize_t (*real)(int, const struct iovec *, int, off_t, int); \
									\
	if (!real)							\
		real = (ssize_t (*)(int, const struct iovec *, int, off_t, int))dlsym(RTLD_NEXT, #name); \
	nap(fd);							\
	return real(fd, iov, cnt, off, flags);				\
}

PREAD(pread)
PREAD(pread64)
PREADV2(preadv2)
PREADV2(preadv64v2)
