/* pread per block vs preadv per run of adjacent blocks, into NBUF rotating 16 KiB slots */
#include <fcntl.h>
#include <isa-l.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#define NBUF 64
#define BS 16384
int main(int argc, char **argv)
{
	static unsigned long long off[4096]; static unsigned long len[4096];
	int n = 0, fd = open(argv[1], O_RDONLY), mode = atoi(argv[3]), i, j, slot = 0;
	FILE *f = fopen(argv[2], "r");
	unsigned char *bufs; unsigned sink = 0; struct iovec iov[NBUF];
	struct timespec a, b;
	while (n < 4096 && fscanf(f, "%llu %lu", &off[n], &len[n]) == 2) n++;
	if (posix_memalign((void **)&bufs, 4096, NBUF * (size_t)BS)) return 1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (i = 0; i < n; ) {
		if (len[i] != BS) { /* odd-sized read: a single pread into a temp */
			unsigned char *t = malloc(len[i]); if (pread(fd, t, len[i], off[i]) < 0) return 1;
			sink ^= crc32_iscsi(t + 32, len[i] - 32, ~0u); free(t); i++; continue; }
		j = i + 1;
		if (mode) while (j < n && j - i < NBUF && len[j] == BS && off[j] == off[j - 1] + BS) j++;
		for (int k = i; k < j; k++) { iov[k - i].iov_base = bufs + (size_t)((slot + k - i) % NBUF) * BS; iov[k - i].iov_len = BS; }
		if (preadv(fd, iov, j - i, off[i]) != (ssize_t)(j - i) * BS) return 1;
		for (int k = i; k < j; k++) sink ^= crc32_iscsi((unsigned char *)iov[k - i].iov_base + 32, BS - 32, ~0u);
		slot = (slot + j - i) % NBUF; i = j;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("mode %d sink %08x cpu_ms %.3f\n", mode, sink, (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	return 0;
}
