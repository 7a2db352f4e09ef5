// SPDX-License-Identifier: GPL-2.0
/*
 * parse-superblock: btrfs_validate_super() on 4096 fuzzed bytes, in
 * memory; a superblock it accepts then has its sys_chunk_array read
 * (btrfs_read_sys_array()), as the reader does next.
 * Input: template byte (only for the seeds' sake), flags (PZ_NOFIX:
 * keep the checksum; bits 4-5: the copy, 0-2, whose bytenr is expected),
 * then up to 4096 bytes of superblock (the rest zeros).
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
	fz_dump_template_seeds("super", FZ_SUPER_SEED, fz_super_seed);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct btrfs_fs_info fs_info;
	static struct btrfs_super_block sb;
	int mirror, ret;

	if (size < FZ_CONTROL)
		return -1;
	mirror = ((data[1] >> 4) & 3) % BTRFS_SUPER_MIRROR_MAX;
	memset(&sb, 0, sizeof(sb));
	memcpy(&sb, data + FZ_CONTROL,
	       size - FZ_CONTROL < sizeof(sb) ? size - FZ_CONTROL : sizeof(sb));
	if (!(data[1] & PZ_NOFIX))
		pz_set_csum(btrfs_super_csum_type(&sb), (u8 *)&sb, sizeof(sb));
	btrfs_fs_info_init(&fs_info);
	ret = btrfs_validate_super(&fs_info, &sb, "fuzz", mirror);
	pz_check(&fs_info, ret);
	if (!ret) {
		/* what the reader takes from an accepted superblock for the array */
		fs_info.super = sb;
		fs_info.nodesize = btrfs_super_nodesize(&sb);
		fs_info.sectorsize = btrfs_super_sectorsize(&sb);
		fs_info.csum_type = btrfs_super_csum_type(&sb);
		fs_info.csum_size = csum_algo_size(fs_info.csum_type);
		ret = btrfs_read_sys_array(&fs_info);
		pz_check(&fs_info, ret);
		btrfs_free_chunk_maps(&fs_info);
	}
	pz_end();
	return 0;
}
