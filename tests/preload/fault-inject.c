// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD fault injector for the tests: reads of one file fail with EIO,
 * or come back short, where they cover chosen byte offsets.  It stands in
 * for a device-mapper "error" target, which needs root and a free dm
 * device, so the tests can run anywhere.
 *
 *   BS_FAULT_FILE=PATH        the file whose reads fail (matched by inode)
 *   BS_FAULT_OFFSETS=N[,N..]  a read whose range covers one of these fails
 *   BS_FAULT_MODE=eio|short   eio (default): -1 with errno EIO; short: the
 *                             bytes before the offset, 0 if the read starts
 *                             there (as a file cut at that offset)
 *   BS_FAULT_LOG=PATH         one line per fault: "CALL OFFSET LEN" (so a
 *                             test can tell the fault was met)
 *
 * What is intercepted is what the tool and its libraries call: read,
 * pread (pread64), preadv (preadv64), preadv2 (preadv64v2).  A preadv2
 * with RWF_NOWAIT over a fault fails with EAGAIN, as a bad sector is never
 * in the page cache.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_OFFSETS	16

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*preadv_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*preadv2_fn)(int, const struct iovec *, int, off_t, int);

static struct {
	bool on;
	bool short_mode;
	dev_t dev;
	ino_t ino;
	int nr;
	unsigned long long offsets[MAX_OFFSETS];
	const char *log;
	read_fn read;
	pread_fn pread;
	pread_fn pread64;
	preadv_fn preadv;
	preadv_fn preadv64;
	preadv2_fn preadv2;
	preadv2_fn preadv64v2;
} fi;

__attribute__((constructor))
static void fault_init(void)
{
	const char *file = getenv("BS_FAULT_FILE");
	const char *list = getenv("BS_FAULT_OFFSETS");
	const char *mode = getenv("BS_FAULT_MODE");
	struct stat st;
	char *end;

	fi.read = (read_fn)dlsym(RTLD_NEXT, "read");
	fi.pread = (pread_fn)dlsym(RTLD_NEXT, "pread");
	fi.pread64 = (pread_fn)dlsym(RTLD_NEXT, "pread64");
	fi.preadv = (preadv_fn)dlsym(RTLD_NEXT, "preadv");
	fi.preadv64 = (preadv_fn)dlsym(RTLD_NEXT, "preadv64");
	fi.preadv2 = (preadv2_fn)dlsym(RTLD_NEXT, "preadv2");
	fi.preadv64v2 = (preadv2_fn)dlsym(RTLD_NEXT, "preadv64v2");
	if (!file || !list || stat(file, &st))
		return;
	fi.dev = st.st_dev;
	fi.ino = st.st_ino;
	while (*list && fi.nr < MAX_OFFSETS) {
		fi.offsets[fi.nr++] = strtoull(list, &end, 0);
		if (end == list)
			return;
		list = *end == ',' ? end + 1 : end;
	}
	fi.short_mode = mode && !strcmp(mode, "short");
	fi.log = getenv("BS_FAULT_LOG");
	fi.on = fi.nr > 0;
}

static bool is_target(int fd)
{
	struct stat st;

	return fi.on && !fstat(fd, &st) && st.st_dev == fi.dev &&
	       st.st_ino == fi.ino;
}

static void log_fault(const char *call, unsigned long long off, size_t len)
{
	FILE *f;

	if (!fi.log)
		return;
	f = fopen(fi.log, "a");
	if (!f)
		return;
	fprintf(f, "%s %llu %zu\n", call, off, len);
	fclose(f);
}

/*
 * The first fault offset inside [off, off + len), or -1; how many bytes
 * before it a short read gives back is the difference.
 */
static long long fault_in(int fd, unsigned long long off, size_t len)
{
	long long first = -1;
	int i;

	if (!len || !is_target(fd))
		return -1;
	for (i = 0; i < fi.nr; i++)
		if (fi.offsets[i] >= off && fi.offsets[i] - off < len &&
		    (first < 0 || fi.offsets[i] < (unsigned long long)first))
			first = fi.offsets[i];
	return first;
}

static size_t iov_total(const struct iovec *iov, int cnt)
{
	size_t len = 0;
	int i;

	for (i = 0; i < cnt; i++)
		len += iov[i].iov_len;
	return len;
}

/* How much of the read may be done, or -1 with errno set for an error */
static ssize_t allowed(const char *call, int fd, unsigned long long off,
		       size_t len)
{
	long long at = fault_in(fd, off, len);

	if (at < 0)
		return len;
	log_fault(call, off, len);
	if (!fi.short_mode) {
		errno = EIO;
		return -1;
	}
	return at - off;
}

ssize_t read(int fd, void *buf, size_t len)
{
	off_t off = is_target(fd) ? lseek(fd, 0, SEEK_CUR) : -1;
	ssize_t n = off < 0 ? (ssize_t)len : allowed("read", fd, off, len);

	if (n < 0)
		return -1;
	return fi.read(fd, buf, n);
}

static ssize_t do_pread(pread_fn fn, const char *call, int fd, void *buf,
			size_t len, off_t off)
{
	ssize_t n = allowed(call, fd, off, len);

	if (n <= 0)
		return n;
	return fn(fd, buf, n, off);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	return do_pread(fi.pread, "pread", fd, buf, len, off);
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	return do_pread(fi.pread64, "pread64", fd, buf, len, off);
}

/* A vector read: cut at the fault by reading only the first n bytes */
static ssize_t do_preadv(const char *call, int fd, const struct iovec *iov,
			 int cnt, off_t off, int flags, bool has_flags,
			 preadv_fn fn, preadv2_fn fn2)
{
	size_t total = iov_total(iov, cnt);
	long long at = fault_in(fd, off, total);
	struct iovec cut[64];
	size_t want;
	int i;

	if (at < 0)
		return has_flags ? fn2(fd, iov, cnt, off, flags) : fn(fd, iov, cnt, off);
#ifdef RWF_NOWAIT
	if (has_flags && (flags & RWF_NOWAIT)) {
		errno = EAGAIN;
		return -1;
	}
#endif
	log_fault(call, off, total);
	if (!fi.short_mode) {
		errno = EIO;
		return -1;
	}
	want = at - off;
	if (!want)
		return 0;
	for (i = 0; i < cnt && i < 64 && want; i++) {
		cut[i] = iov[i];
		if (cut[i].iov_len > want)
			cut[i].iov_len = want;
		want -= cut[i].iov_len;
	}
	return has_flags ? fn2(fd, cut, i, off, flags) : fn(fd, cut, i, off);
}

ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return do_preadv("preadv", fd, iov, cnt, off, 0, false, fi.preadv, NULL);
}

ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return do_preadv("preadv64", fd, iov, cnt, off, 0, false, fi.preadv64, NULL);
}

ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return do_preadv("preadv2", fd, iov, cnt, off, flags, true, NULL, fi.preadv2);
}

ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return do_preadv("preadv64v2", fd, iov, cnt, off, flags, true, NULL,
			 fi.preadv64v2);
}
