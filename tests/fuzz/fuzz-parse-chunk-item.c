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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fz_dump_dir();
	u32 t;

	if (!dir)
		return 0;
	for (t = 0; t < fz_nr_templates(); t++) {
		u8 *seed = calloc(1, FZ_CONTROL + BTRFS_MAX_METADATA_BLOCKSIZE);
		const u8 *leaf;
		char name[128];
		size_t len;
		u64 logical;
		u32 nodesize;

		leaf = pz_template_leaf(t, BTRFS_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY,
					&logical, &nodesize);
		if (!seed || !leaf)
			abort();
		seed[0] = t;
		len = pz_dump_leaf_items(leaf, nodesize, seed, FZ_CONTROL,
					 FZ_CONTROL + BTRFS_MAX_METADATA_BLOCKSIZE);
		snprintf(name, sizeof(name), "%s.chunk-leaf", fz_template_name(t));
		fz_write_seed(dir, name, seed, len);
		free(seed);
	}
	exit(0);
}

/* Per template: the header of its chunk leaf */
static const u8 *chunk_header(u32 t, u64 *logical)
{
	static u8 (*headers)[sizeof(struct btrfs_header)];
	static u64 *where;
	u32 nodesize;

	if (!headers) {
		headers = calloc(fz_nr_templates(), sizeof(*headers));
		where = calloc(fz_nr_templates(), sizeof(*where));
		if (!headers || !where)
			abort();
	}
	if (!where[t]) {
		const u8 *leaf = pz_template_leaf(t, BTRFS_CHUNK_TREE_OBJECTID,
						  BTRFS_CHUNK_ITEM_KEY, &where[t], &nodesize);

		if (!leaf)
			abort();
		memcpy(headers[t], leaf, sizeof(headers[t]));
	}
	*logical = where[t];
	return headers[t];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pz_item items[PZ_MAX_ITEMS];
	static struct btrfs_fs_info work;
	static u8 leaf[BTRFS_MAX_METADATA_BLOCKSIZE];
	struct btrfs_tree_block *eb;
	struct pz_fs *fs;
	const u8 *header;
	u64 logical;
	u32 nr, slot;
	int ret;

	if (size < FZ_CONTROL)
		return -1;
	fs = pz_open(data[0]);
	if (!fs)
		return 0;
	header = chunk_header(fs->t, &logical);
	nr = pz_parse_items(data + FZ_CONTROL, size - FZ_CONTROL, items, PZ_MAX_ITEMS);
	pz_build_leaf(leaf, fs->fs_info.nodesize, header, items, nr,
		      data[1] & PZ_UNSORTED);
	eb = pz_block(leaf, fs->fs_info.nodesize, logical);
	pz_work_init(&work, fs, true);
	pz_check(&work, btrfs_check_tree_block(&work, eb));
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
