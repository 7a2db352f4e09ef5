// SPDX-License-Identifier: GPL-2.0
/*
 * falloc-loop: preallocate many extents of one size with small gaps, from one
 * process, so that building a benchmark image takes one fallocate(2) call per
 * extent and no fork per call.
 *
 *   falloc-loop FILE EXTENT GAP TOTAL
 *
 * Preallocates ranges [k*(EXTENT+GAP), +EXTENT) of FILE until TOTAL bytes are
 * preallocated or the filesystem is full (ENOSPC ends the loop, not an error).
 * Sizes take K, M, G, T suffixes (powers of 1024).  Prints progress every
 * 10 s on stderr and the final count on stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	switch (*end) {
	case 'T': case 't': v <<= 10; /* fall through */
	case 'G': case 'g': v <<= 10; /* fall through */
	case 'M': case 'm': v <<= 10; /* fall through */
	case 'K': case 'k': v <<= 10; end++; break;
	case '\0': break;
	default:
		fprintf(stderr, "falloc-loop: bad size '%s'\n", s);
		exit(2);
	}
	if (*end && strcmp(end, "iB") && strcmp(end, "B")) {
		fprintf(stderr, "falloc-loop: bad size '%s'\n", s);
		exit(2);
	}
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long extent, gap, total, done = 0, n = 0, off = 0;
	double start, last;
	int fd;

	if (argc != 5) {
		fprintf(stderr, "usage: falloc-loop FILE EXTENT GAP TOTAL\n");
		return 2;
	}
	extent = parse_size(argv[2]);
	gap = parse_size(argv[3]);
	total = parse_size(argv[4]);
	if (!extent) {
		fprintf(stderr, "falloc-loop: EXTENT must be > 0\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	start = last = now();
	while (done + extent <= total) {
		if (fallocate(fd, 0, off, extent)) {
			if (errno == ENOSPC)
				break;
			fprintf(stderr, "falloc-loop: fallocate at %llu: %s\n", off, strerror(errno));
			return 1;
		}
		done += extent;
		off += extent + gap;
		n++;
		if (now() - last >= 10) {
			last = now();
			fprintf(stderr, "falloc-loop: %llu extents, %.1f GiB, %.0f s\n",
				n, done / 1073741824.0, last - start);
		}
	}
	if (close(fd)) {
		perror("close");
		return 1;
	}
	printf("%llu extents %llu bytes %.1f s\n", n, done, now() - start);
	return 0;
}
