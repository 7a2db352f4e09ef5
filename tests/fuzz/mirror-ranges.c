// SPDX-License-Identifier: GPL-2.0
/*
 * mirror-ranges IMAGE... < RANGES > MORE_RANGES
 *
 * For make-templates.sh: a run reads the first copy of each tree block;
 * this adds, for every read range ("PATH OFFSET LENGTH") that lies in a
 * stripe of a DUP, RAID1* or RAID10 chunk, the same range in the stripes
 * holding the other copies, so that the templates carry them and the
 * fuzzers reach the retry on another copy.  Opens the filesystem with the
 * project's own reader (btrfs_open_fs).  Not a fuzz target.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/disk-io.h"
#include "kernel-shared/volumes.h"

static void print_copy(const struct btrfs_io_stripe *s, u64 rel, unsigned long long len)
{
	if (s->dev)
		printf("%s %llu %llu\n", s->dev->io.path,
		       (unsigned long long)(s->physical + rel), len);
}

int main(int argc, char **argv)
{
	static struct btrfs_fs_info fs_info;
	struct btrfs_open_args args = {
		.paths = (const char * const *)argv + 1,
		.nr_paths = argc - 1,
	};
	unsigned long long off, len;
	char path[4096];
	u32 c;
	u16 s, p;

	if (argc < 2) {
		fprintf(stderr, "usage: mirror-ranges IMAGE... < RANGES\n");
		return 2;
	}
	if (btrfs_open_fs(&fs_info, &args)) {
		fprintf(stderr, "mirror-ranges: %s\n", fs_info.err.msg);
		return 1;
	}
	while (scanf("%4095s %llu %llu", path, &off, &len) == 3) {
		for (c = 0; c < fs_info.nr_chunks; c++) {
			const struct btrfs_chunk_map *map = fs_info.chunks[c];

			if (!(map->type & (BTRFS_BLOCK_GROUP_DUP | BTRFS_BLOCK_GROUP_RAID1_MASK |
					   BTRFS_BLOCK_GROUP_RAID10)))
				continue;
			for (s = 0; s < map->num_stripes; s++) {
				const struct btrfs_io_stripe *st = &map->stripes[s];

				if (!st->dev || strcmp(st->dev->io.path, path) ||
				    off < st->physical || off >= st->physical + map->stripe_size)
					continue;
				if (map->type & BTRFS_BLOCK_GROUP_RAID10) {
					print_copy(&map->stripes[s ^ 1], off - st->physical, len);
					continue;
				}
				for (p = 0; p < map->num_stripes; p++)
					if (p != s)
						print_copy(&map->stripes[p], off - st->physical, len);
			}
		}
	}
	btrfs_close_fs(&fs_info);
	return 0;
}
