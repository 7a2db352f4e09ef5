// SPDX-License-Identifier: GPL-2.0
/*
 * readset-limit: what this machine needs at least to do the I/O work of one
 * btrfs-space run with a warm page cache: copy exactly the blocks the tool
 * read out of the page cache into one reused buffer, and crc32c each of
 * them (ISA-L, the library the tool checksums with; the csum field of the
 * header, its first 32 bytes, is not summed, as for a tree block).
 *
 *   readset-limit IMAGE READSET PASSES
 *
 * READSET has one read per line, "OFFSET LENGTH" in bytes (bench/run.sh
 * takes them from the tool's own pread64/preadv2 calls).  The blocks are
 * read PASSES times in the order given; the median pass is printed as
 *
 *   reads N bytes N copy_s S crc_s S sink X cpu_s S
 *
 * cpu_s is the CPU time (user + system) of that pass, copy and crc32c
 * together: what the load of other processes moves much less than the
 * wall times.
 * Process start-up is not in it: run.sh times /bin/true for that.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <isa-l.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_READS	(1u << 24)
#define MAX_LEN		(1u << 20)
#define MAX_PASSES	99

struct rd {
	unsigned long long off;
	unsigned long len;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct rd *load(const char *path, unsigned long *nr, unsigned long *maxlen)
{
	FILE *f = fopen(path, "r");
	struct rd *v = NULL;
	unsigned long cap = 0, n = 0;
	unsigned long long off;
	unsigned long len;

	if (!f) {
		perror(path);
		return NULL;
	}
	*maxlen = 0;
	while (fscanf(f, "%llu %lu", &off, &len) == 2) {
		if (len == 0 || len > MAX_LEN || n >= MAX_READS) {
			fprintf(stderr, "readset-limit: %s: read %lu: bad length %lu\n",
				path, n + 1, len);
			fclose(f);
			free(v);
			return NULL;
		}
		if (n == cap) {
			struct rd *nv;

			cap = cap ? cap * 2 : 4096;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				fclose(f);
				free(v);
				return NULL;
			}
			v = nv;
		}
		v[n].off = off;
		v[n].len = len;
		if (len > *maxlen)
			*maxlen = len;
		n++;
	}
	fclose(f);
	*nr = n;
	return v;
}

/* one pass: copy each block into @buf, then its crc32c; times added up apart */
static int pass(int fd, const struct rd *v, unsigned long n, unsigned char *buf,
		double *copy_s, double *crc_s, unsigned int *sink)
{
	double c = 0, s = 0, t0, t1, t2;
	unsigned long i;

	for (i = 0; i < n; i++) {
		ssize_t got;

		t0 = now();
		got = pread(fd, buf, v[i].len, v[i].off);
		t1 = now();
		if (got != (ssize_t)v[i].len) {
			fprintf(stderr, "readset-limit: read at %llu: %s\n", v[i].off,
				got < 0 ? strerror(errno) : "short read");
			return -1;
		}
		if (v[i].len > 32)
			*sink ^= crc32_iscsi(buf + 32, v[i].len - 32, ~0u);
		t2 = now();
		c += t1 - t0;
		s += t2 - t1;
	}
	*copy_s = c;
	*crc_s = s;
	return 0;
}

int main(int argc, char **argv)
{
	double copy[MAX_PASSES], crc[MAX_PASSES], total[MAX_PASSES], cpu[MAX_PASSES];
	double sorted[MAX_PASSES], mid;
	unsigned long n, maxlen, i, p, passes;
	unsigned long long bytes = 0;
	unsigned int sink = 0;
	unsigned char *buf;
	struct rd *v;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: readset-limit IMAGE READSET PASSES\n");
		return 2;
	}
	passes = strtoul(argv[3], NULL, 10);
	if (passes < 1 || passes > MAX_PASSES) {
		fprintf(stderr, "readset-limit: PASSES takes 1..%d\n", MAX_PASSES);
		return 2;
	}
	v = load(argv[2], &n, &maxlen);
	if (!v)
		return 1;
	if (!n) {
		fprintf(stderr, "readset-limit: %s: no reads\n", argv[2]);
		return 1;
	}
	for (i = 0; i < n; i++)
		bytes += v[i].len;
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (posix_memalign((void **)&buf, 4096, maxlen)) {
		fprintf(stderr, "readset-limit: out of memory\n");
		return 1;
	}
	for (p = 0; p < passes; p++) {
		double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);

		if (pass(fd, v, n, buf, &copy[p], &crc[p], &sink))
			return 1;
		cpu[p] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		total[p] = copy[p] + crc[p];
	}
	/* the pass whose total is the median, reported with its own parts */
	memcpy(sorted, total, passes * sizeof(double));
	qsort(sorted, passes, sizeof(double), cmp_double);
	mid = sorted[(passes - 1) / 2];
	for (p = 0; p < passes; p++)
		if (total[p] == mid)
			break;
	printf("reads %lu bytes %llu copy_s %.6f crc_s %.6f sink %08x cpu_s %.6f\n", n, bytes,
	       copy[p], crc[p], sink, cpu[p]);
	free(buf);
	free(v);
	close(fd);
	return 0;
}
