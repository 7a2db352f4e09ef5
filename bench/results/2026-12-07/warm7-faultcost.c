// faultcost2: min time of mapping 528 KiB, filling it with 33 preads of 16 KiB
// from a cached file (the slots from the end down, as the block cache carves
// them), and unmapping, with MADV_POPULATE_WRITE of BATCH KiB ahead of the
// slot that needs it (0: none, the pages fault inside the copy)
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
int main(int argc, char **argv)
{
	int fd = open(argv[1], O_RDONLY), trials = atoi(argv[2]), nb = argc - 3;
	size_t len = 2 << 20, slot = 16384, nslots = 33;
	double best[16];
	for (int b = 0; b < nb; b++) best[b] = 1e9;
	for (int t = 0; t < trials; t++)
		for (int b = 0; b < nb; b++) {
			size_t batch = strtoul(argv[3 + b], NULL, 0) << 10, done = 0;
			double t0 = now();
			char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			char *end = m + len;
			for (size_t i = 0; i < nslots; i++) {
				size_t used = (i + 1) * slot;
				if (batch && used > done) {
					size_t want = (used + batch - 1) / batch * batch;
					madvise(end - want, want - done, MADV_POPULATE_WRITE);
					done = want;
				}
				if (pread(fd, end - used, slot, (off_t)i * slot) != (ssize_t)slot)
					return 1;
			}
			munmap(m, len);
			double d = now() - t0;
			if (d < best[b]) best[b] = d;
		}
	printf("min of %d, 33 preads of 16 KiB into a fresh 2 MiB mapping:", trials);
	for (int b = 0; b < nb; b++) printf("  batch %s KiB %.1f us", argv[3 + b], best[b]);
	printf("\n");
	return 0;
}
