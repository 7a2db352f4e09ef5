// SPDX-License-Identifier: GPL-2.0
/*
 * Tree block: a fuzzed block of nodesize bytes in place of one of a
 * template's tree blocks, checksum fixed up, read by the inspect pipeline:
 * header checks, the tree checker (item table, key order, every item
 * type it knows, node pointers), the parent's expectations, and whatever
 * reads the block's items.
 * Input: template and flags bytes, which block (index into the
 * template's blocks), mode (bit 0: keep the template's bytenr and fsid in
 * the header so the block is not refused for its address alone), then the
 * block (shorter: the rest zeros).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/fuzz/fuzz-common.h"

#define MAX_BLOCKS	4096
#define SEEDS_PER_TEMPLATE 12

static void dump_seeds(const char *dir, u32 t)
{
	static struct fz_block blocks[MAX_BLOCKS];
	struct fz_image img;
	u32 nr, i, step;

	fz_clone(&img, fz_template(t));
	nr = fz_find_blocks(&img, blocks, MAX_BLOCKS);
	/* a spread of each template's blocks, leaves and nodes */
	step = nr > SEEDS_PER_TEMPLATE ? nr / SEEDS_PER_TEMPLATE : 1;
	for (i = 0; i < nr && i < 256; i += step) {
		u8 *seed = malloc(4 + blocks[i].len);

		if (!seed)
			abort();
		seed[0] = t;
		seed[1] = 0;
		seed[2] = i;
		seed[3] = 1;
		memcpy(seed + 4, blocks[i].data, blocks[i].len);
		fz_write_template_seed(dir, t, seed, 4 + blocks[i].len,
				       "block%u-owner%llu-level%u", i,
				       (unsigned long long)blocks[i].owner, blocks[i].level);
		free(seed);
	}
	fz_free(&img);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_dump_each_template(dump_seeds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_block blocks[MAX_BLOCKS];
	struct fz_image img;
	struct fz_block *b;
	u8 keep[BTRFS_FSID_SIZE + 8];
	u32 nr;

	if (size < FZ_CONTROL + 2)
		return -1;
	fz_start(&img, data);
	nr = fz_find_blocks(&img, blocks, MAX_BLOCKS);
	data += FZ_CONTROL;
	size -= FZ_CONTROL;
	if (nr) {
		b = &blocks[data[0] % nr];
		/* fsid and bytenr are adjacent in the header */
		memcpy(keep, b->data + BTRFS_CSUM_SIZE, sizeof(keep));
		memset(b->data, 0, b->len);
		memcpy(b->data, data + 2, size - 2 < b->len ? size - 2 : b->len);
		if (data[1] & 1)
			memcpy(b->data + BTRFS_CSUM_SIZE, keep, sizeof(keep));
	}
	fz_fixup(&img);
	fz_run(&img);
	fz_free(&img);
	return 0;
}
