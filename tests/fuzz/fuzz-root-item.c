// SPDX-License-Identifier: GPL-2.0
/*
 * ROOT_ITEMs and the balance item (TEMPORARY_ITEM) of the root tree: the
 * leaf checker, btrfs_read_root_item(), read_balance_item() and every
 * tree the root items point the reader at.
 * Input: control byte (template, flags), then items (fuzz-common.h); the
 * items replace the template's own in their leaf, which is rebuilt and
 * checksummed, and the whole inspect pipeline reads the image, so every
 * item passes the leaf checker and then the code that uses it.
 */
#include <stdlib.h>
#include "tests/fuzz/fuzz-common.h"

static const struct fz_item_spec specs[] = {
	{ BTRFS_ROOT_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY },
	{ BTRFS_ROOT_TREE_OBJECTID, BTRFS_TEMPORARY_ITEM_KEY },
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
