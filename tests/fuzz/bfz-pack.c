// SPDX-License-Identifier: GPL-2.0
/*
 * bfz-pack OUT.bfz IMAGE... < RANGES
 *
 * Pack the parts of one filesystem's device images that a run reads into
 * a BFZ file (format: tests/fuzz/fuzz-common.h).  RANGES holds one read a
 * line, "PATH OFFSET LENGTH", PATH being one of the IMAGEs (make-templates.sh
 * takes them from strace).  Each read is widened to whole 4 KiB pages;
 * adjacent pages become one record.  Standalone: no project code, so it
 * can build the templates the fuzz targets embed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define PAGE		4096ULL
#define MAX_DEVS	4
#define MAX_REC_PAGES	256

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++, v >>= 8)
		p[i] = v & 0xff;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

int main(int argc, char **argv)
{
	uint64_t *pages[MAX_DEVS] = { 0 }, size[MAX_DEVS] = { 0 };
	size_t nr[MAX_DEVS] = { 0 }, cap[MAX_DEVS] = { 0 };
	int fds[MAX_DEVS], ndev = argc - 2, d;
	unsigned char head[40] = { 'B', 'F', 'Z', '1' };
	char path[4096];
	unsigned long long off, len;
	FILE *out;

	if (argc < 3 || ndev > MAX_DEVS) {
		fprintf(stderr, "usage: bfz-pack OUT.bfz IMAGE... (1 to %d) < RANGES\n", MAX_DEVS);
		return 2;
	}
	for (d = 0; d < ndev; d++) {
		struct stat st;

		fds[d] = open(argv[d + 2], O_RDONLY);
		if (fds[d] < 0 || fstat(fds[d], &st))
			die(argv[d + 2]);
		size[d] = st.st_size;
	}
	while (scanf("%4095s %llu %llu", path, &off, &len) == 3) {
		uint64_t p;

		for (d = 0; d < ndev && strcmp(path, argv[d + 2]); d++)
			;
		if (d == ndev) {
			fprintf(stderr, "bfz-pack: %s is not one of the images\n", path);
			return 1;
		}
		for (p = off / PAGE; p * PAGE < off + len; p++) {
			if (nr[d] == cap[d]) {
				cap[d] = cap[d] ? cap[d] * 2 : 256;
				pages[d] = realloc(pages[d], cap[d] * sizeof(**pages));
				if (!pages[d])
					die("realloc");
			}
			pages[d][nr[d]++] = p;
		}
	}
	out = fopen(argv[1], "wb");
	if (!out)
		die(argv[1]);
	head[5] = ndev;
	for (d = 0; d < ndev; d++)
		put_le(head + 8 + 8 * d, size[d], 8);
	fwrite(head, 1, sizeof(head), out);
	for (d = 0; d < ndev; d++) {
		size_t i = 0, j, k;

		qsort(pages[d], nr[d], sizeof(**pages), cmp_u64);
		for (j = k = 0; j < nr[d]; j++)		/* unique */
			if (!k || pages[d][k - 1] != pages[d][j])
				pages[d][k++] = pages[d][j];
		nr[d] = k;
		while (i < nr[d]) {
			unsigned char rec[16] = { d };
			static unsigned char buf[MAX_REC_PAGES * PAGE];
			size_t run = 1;

			while (i + run < nr[d] && run < MAX_REC_PAGES &&
			       pages[d][i + run] == pages[d][i] + run)
				run++;
			put_le(rec + 4, run, 4);
			put_le(rec + 8, pages[d][i] * PAGE, 8);
			memset(buf, 0, run * PAGE);
			if (pread(fds[d], buf, run * PAGE, pages[d][i] * PAGE) < 0)
				die(argv[d + 2]);
			fwrite(rec, 1, sizeof(rec), out);
			fwrite(buf, 1, run * PAGE, out);
			i += run;
		}
	}
	if (fclose(out))
		die(argv[1]);
	return 0;
}
