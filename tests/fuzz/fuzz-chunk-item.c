// SPDX-License-Identifier: GPL-2.0
/*
 * CHUNK_ITEMs of the chunk tree: btrfs_check_chunk_valid(), read_one_chunk(),
 * resolve_stripes(), the chunk map and btrfs_map_block() of every read.
 * Input: control byte (template, flags), then items (fuzz-common.h); the
 * items replace the template's own in their leaf, which is rebuilt and
 * checksummed, and the whole inspect pipeline reads the image, so every
 * item passes the leaf checker and then the code that uses it.
 */
#include <stdlib.h>
#include "tests/fuzz/fuzz-common.h"

static const struct fz_item_spec specs[] = {
	{ BTRFS_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY },
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (fz_dump_dir()) {
		fz_items_dump(fz_dump_dir(), specs, sizeof(specs) / sizeof(specs[0]));
		exit(0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fz_items_run(data, size, specs, sizeof(specs) / sizeof(specs[0]));
}
