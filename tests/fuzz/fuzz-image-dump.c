// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs-image dumps given as the image (common/image-dump.c): the input is
 * the dump file itself, as one device, read through io_open() (which finds
 * the dump by its magic and indexes it) and the inspect pipeline.  Nothing
 * is fixed up: the tree blocks inside a dump are compressed.  Seeds:
 * tests/fuzz/corpus/image-dump, small dumps of the btrfs-progs test images.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/fuzz/fuzz-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* no templates: the committed corpus is the seed set */
	if (fz_dump_dir())
		exit(0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_image img = { .ndev = 1, .dev_size = { size } };
	struct fz_rec rec = { .dev = 0, .offset = 0, .len = size };

	if (!size)
		return -1;
	rec.data = malloc(size);
	if (!rec.data)
		abort();
	memcpy(rec.data, data, size);
	img.recs = &rec;
	img.nrecs = 1;
	fz_run(&img);
	free(rec.data);
	return 0;
}
