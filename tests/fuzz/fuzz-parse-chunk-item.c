// SPDX-License-Identifier: GPL-2.0
/*
 * parse-chunk-item: chunk tree items in a leaf built in memory (header of
 * the template's chunk leaf): the leaf checker (btrfs_check_tree_block(),
 * CHUNK_ITEM, DEV_ITEM checks), then every CHUNK_ITEM through
 * btrfs_add_chunk_item() (btrfs_check_chunk_valid(), the chunk map, the
 * overlap rule) as live mode adds them, btrfs_resolve_stripes() against
 * the template's devices, and btrfs_map_block() on every chunk.
 * Input: template and flags (PZ_UNSORTED) bytes, then items
 * (parse-common.h); the seeds are the template's chunk leaf.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/accessors.h"
#include "kernel-shared/tree-checker.h"
#include "kernel-shared/volumes.h"
#include "tests/fuzz/parse-common.h"

static size_t chunk_seed(u32 t, u8 *seed, size_t cap)
{
	return pz_template_leaf_seed(t, BTRFS_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY,
				     seed, cap);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_dump_template_seeds("chunk-leaf", FZ_CONTROL + BTRFS_MAX_METADATA_BLOCKSIZE,
			       chunk_seed);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct btrfs_fs_info work;
	struct btrfs_tree_block *eb;
	struct pz_fs *fs;
	u32 slot;
	int ret;

	if (size < FZ_CONTROL)
		return -1;
	fs = pz_open(data[0]);
	if (!fs)
		return 0;
	eb = pz_items_block(fs, BTRFS_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, data, size);
	pz_work_init(&work, fs, true);
	pz_check(&work, btrfs_check_tree_block(&work, &work.err, eb));
	ret = 0;
	for (slot = 0; slot < eb->nritems && !ret; slot++) {
		struct btrfs_item_location loc = { "chunk tree", eb->start, slot };
		struct btrfs_key key;
		const void *chunk;
		u32 item_size;

		btrfs_item_key_to_cpu(eb, slot, &key);
		if (key.type != BTRFS_CHUNK_ITEM_KEY)
			continue;
		chunk = btrfs_item_ptr(eb, slot, &item_size);
		ret = btrfs_add_chunk_item(&work, chunk, item_size, key.offset, &loc);
	}
	pz_check(&work, ret);
	if (!ret) {
		ret = btrfs_resolve_stripes(&work);
		pz_check(&work, ret);
	}
	if (!ret)
		pz_map_chunks(&work);
	pz_work_free(&work);
	free(eb);
	pz_end();
	return 0;
}
