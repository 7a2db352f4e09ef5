// SPDX-License-Identifier: GPL-2.0
/*
 * nofadvise.so: an LD_PRELOAD shim for warm-cache benchmarks of btrfs-progs.
 *
 * btrfs-progs (6.2 on Debian 12) calls posix_fadvise(fd, 0, 0,
 * POSIX_FADV_DONTNEED) on every device it opens and again when it closes it
 * (`strace -e trace=fadvise64 btrfs filesystem show IMG` shows three calls),
 * so each "warm" run drops the image from the page cache: it reads the disk
 * itself and empties the cache for whatever runs next.  With this shim the
 * DONTNEED advice is not passed on (the call returns 0, as it would have);
 * every other advice is.  Nothing else changes.
 *
 *   gcc -O2 -shared -fPIC -o nofadvise.so nofadvise.c -ldl
 *   LD_PRELOAD=./nofadvise.so btrfs filesystem show IMG
 *
 * With NOFADVISE_LOG=1 the number of calls dropped is printed on stderr at
 * exit, so a benchmark can show that the shim took effect.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

typedef int (*fadvise_fn)(int, off_t, off_t, int);

static unsigned long dropped;

static int pass_on(const char *name, int fd, off_t off, off_t len, int advice)
{
	fadvise_fn next = (fadvise_fn)dlsym(RTLD_NEXT, name);

	if (advice == POSIX_FADV_DONTNEED) {
		__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
		return 0;
	}
	return next ? next(fd, off, len, advice) : 0;
}

int posix_fadvise(int fd, off_t off, off_t len, int advice)
{
	return pass_on("posix_fadvise", fd, off, len, advice);
}

int posix_fadvise64(int fd, off_t off, off_t len, int advice)
{
	return pass_on("posix_fadvise64", fd, off, len, advice);
}

__attribute__((destructor)) static void report(void)
{
	const char *log = getenv("NOFADVISE_LOG");

	if (log && *log == '1')
		fprintf(stderr, "nofadvise: %lu POSIX_FADV_DONTNEED call(s) not passed on\n",
			dropped);
}
