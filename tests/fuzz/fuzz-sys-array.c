// SPDX-License-Identifier: GPL-2.0
/*
 * sys_chunk_array: a template's superblock with the fuzzed bytes as its
 * system chunk array, checksum fixed up, read through the inspect
 * pipeline: btrfs_validate_super(), btrfs_read_sys_array(), then the chunk
 * tree read through the chunks it maps.
 * Input: template and flags bytes, le16 sys_chunk_array_size (any
 * value, the superblock check decides), then up to 2048 bytes of array.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/accessors.h"
#include "tests/fuzz/fuzz-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_dump_template_seeds("sys-array", FZ_SYS_ARRAY_SEED, fz_sys_array_seed);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btrfs_super_block *sb;
	struct fz_image img;
	size_t len;

	if (size < FZ_CONTROL + 2)
		return -1;
	fz_start(&img, data);
	img.mirror = 0;
	sb = fz_super(&img, 0);
	if (sb) {
		data += FZ_CONTROL;
		size -= FZ_CONTROL;
		len = size - 2 < BTRFS_SYSTEM_CHUNK_ARRAY_SIZE ? size - 2 :
		      BTRFS_SYSTEM_CHUNK_ARRAY_SIZE;
		fz_put32(&sb->sys_chunk_array_size, fz_get16(data));
		memset(sb->sys_chunk_array, 0, BTRFS_SYSTEM_CHUNK_ARRAY_SIZE);
		memcpy(sb->sys_chunk_array, data + 2, len);
	}
	fz_fixup(&img);
	fz_run(&img);
	fz_free(&img);
	return 0;
}
