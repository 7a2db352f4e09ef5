// SPDX-License-Identifier: GPL-2.0
/*
 * parse-image-dump: the btrfs-image dump indexer alone (common/image-dump.c
 * with kernel-shared/image-restore.c's layout):
 * image_dump_open() on the input (cluster headers, item lists, superblock
 * items, zlib inflate, the chunk items that place the blocks, the layout),
 * then image_dump_read() of the superblock and of 64 KiB windows where
 * mkfs puts the first chunks and at the end of the restored device, and
 * the note and description.  The dump reader takes a file descriptor, so
 * the input goes into one memfd per run (one write); no pipeline.
 * Input: the dump file.  Seeds: tests/fuzz/corpus/parse-image-dump (the
 * image-dump target's dumps of btrfs-progs test images).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "common/image-dump.h"
#include "kernel-shared/image-restore.h"
#include "tests/fuzz/parse-common.h"

#define WINDOW		(64U << 10)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* no templates: the committed corpus is the seed set */
	if (fz_dump_dir())
		exit(0);
	return 0;
}

static void check_err(const char *err, int ret)
{
	if (ret && (!err[0] || strchr(err, '\n'))) {
		fprintf(stderr, "fuzz: error message is not one line: '%s'\n", err);
		abort();
	}
}

static void read_some(struct image_dump *dump, u64 dev_size)
{
	static u8 buf[WINDOW];
	/* superblock, then where mkfs places system, metadata and data chunks */
	static const u64 at[] = { 0, 1ULL << 20, 4ULL << 20, 5ULL << 20, 22ULL << 20,
				  30ULL << 20, 38ULL << 20 };
	u32 i;

	image_dump_read(dump, buf, 4096, 65536);
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		if (at[i] < dev_size)
			image_dump_read(dump, buf, dev_size - at[i] < WINDOW ?
					dev_size - at[i] : WINDOW, at[i]);
	if (dev_size >= WINDOW)
		image_dump_read(dump, buf, WINDOW, dev_size - WINDOW);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct image_dump *dump;
	char err[512], desc[512];
	u64 dev_size;
	int ret;

	if (fd < 0) {
		fd = memfd_create("parse-dump", MFD_CLOEXEC);
		if (fd < 0)
			abort();
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	ret = image_dump_open(fd, size, btrfs_image_restore_layout, &dump,
			      &dev_size, err, sizeof(err));
	check_err(err, ret);
	if (!ret) {
		image_dump_note(dump);
		image_dump_describe(dump, desc, sizeof(desc));
		read_some(dump, dev_size);
		image_dump_close(dump);
	}
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: %s%s\n", ret ? "error: " : "read fine", ret ? err : "");
	return 0;
}
