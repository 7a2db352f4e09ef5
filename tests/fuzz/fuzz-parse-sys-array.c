// SPDX-License-Identifier: GPL-2.0
/*
 * parse-sys-array: the template's superblock with the fuzzed system chunk
 * array and size (checksum fixed unless PZ_NOFIX), btrfs_validate_super(),
 * then btrfs_read_sys_array() on it, no reads: btrfs_check_chunk_valid()
 * and the chunk maps of every SYSTEM chunk, then btrfs_map_block() on the
 * start, middle and last byte of each chunk for every copy (and one copy
 * too many).
 * Input: template and flags bytes, le16 sys_chunk_array_size (any value,
 * the superblock check decides), then up to 2048 bytes of array.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/checksum.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/volumes.h"
#include "tests/fuzz/parse-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_dump_template_seeds("sys-array", FZ_SYS_ARRAY_SEED, fz_sys_array_seed);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct btrfs_fs_info fs_info;
	struct btrfs_super_block *sb = &fs_info.super;
	struct fz_image img;
	size_t len;
	int ret;

	if (size < FZ_CONTROL + 2)
		return -1;
	btrfs_fs_info_init(&fs_info);
	/* the template's superblock, parsed once: no copy of the image */
	img = *fz_template(data[0] % fz_nr_templates());
	memcpy(sb, fz_super(&img, 0), sizeof(*sb));
	len = size - FZ_CONTROL - 2;
	if (len > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE)
		len = BTRFS_SYSTEM_CHUNK_ARRAY_SIZE;
	fz_put32(&sb->sys_chunk_array_size, fz_get16(data + FZ_CONTROL));
	memset(sb->sys_chunk_array, 0, BTRFS_SYSTEM_CHUNK_ARRAY_SIZE);
	memcpy(sb->sys_chunk_array, data + FZ_CONTROL + 2, len);
	if (!(data[1] & PZ_NOFIX))
		pz_set_csum(btrfs_super_csum_type(sb), (u8 *)sb, sizeof(*sb));
	ret = btrfs_validate_super(&fs_info, sb, "fuzz", 0);
	pz_check(&fs_info, ret);
	if (!ret) {
		fs_info.nodesize = btrfs_super_nodesize(sb);
		fs_info.sectorsize = btrfs_super_sectorsize(sb);
		fs_info.csum_type = btrfs_super_csum_type(sb);
		fs_info.csum_size = csum_algo_size(fs_info.csum_type);
		ret = btrfs_read_sys_array(&fs_info);
		pz_check(&fs_info, ret);
		pz_map_chunks(&fs_info);
		btrfs_free_chunk_maps(&fs_info);
	}
	pz_end();
	return 0;
}
