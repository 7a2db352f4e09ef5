// SPDX-License-Identifier: GPL-2.0
/*
 * Superblock: btrfs_validate_super() on 4096 fuzzed bytes, then, put in
 * place of a template's superblock, the whole inspect pipeline (sizes,
 * levels, root pointers, generations and features decide what it reads).
 * Input: template and flags bytes, then up to 4096 bytes of
 * superblock (the rest zeros).  Its checksum is fixed up unless FZ_NOFIX.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/checksum.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/disk-io.h"
#include "tests/fuzz/fuzz-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_dump_template_seeds("super", FZ_SUPER_SEED, fz_super_seed);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct btrfs_fs_info fs_info;
	struct btrfs_super_block sb = { 0 };
	struct btrfs_super_block *place;
	struct fz_image img;
	unsigned char csum[CSUM_MAX_SIZE];

	if (size < FZ_CONTROL)
		return -1;
	memcpy(&sb, data + FZ_CONTROL,
	       size - FZ_CONTROL < sizeof(sb) ? size - FZ_CONTROL : sizeof(sb));
	fz_start(&img, data);
	if (!(img.flags & FZ_NOFIX) && csum_algo_valid(btrfs_super_csum_type(&sb)) &&
	    !csum_compute(btrfs_super_csum_type(&sb), (u8 *)&sb + BTRFS_CSUM_SIZE,
			  sizeof(sb) - BTRFS_CSUM_SIZE, csum))
		memcpy(sb.csum, csum, BTRFS_CSUM_SIZE);
	btrfs_fs_info_init(&fs_info);
	if (btrfs_validate_super(&fs_info, &sb, "fuzz", 0) && fs_info.err.err &&
	    strchr(fs_info.err.msg, '\n'))
		abort();
	/* copy 0 of the first device: what the reader takes */
	img.mirror = 0;
	place = fz_super(&img, 0);
	if (place)
		memcpy(place, &sb, sizeof(sb));
	/* the superblock's own checksum is done; the tree blocks follow its csum type */
	fz_fixup(&img);
	fz_run(&img);
	fz_free(&img);
	return 0;
}
