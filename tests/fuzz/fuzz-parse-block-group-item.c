// SPDX-License-Identifier: GPL-2.0
/*
 * parse-block-group-item: a leaf of block group items (and whatever else
 * the input puts there) built in memory with the header of the template's
 * leaf that holds them (extent tree, or block group tree): the leaf checker,
 * then as the pinpoint loader does for each chunk of the opened template,
 * bin_search_block() for (chunk start, BLOCK_GROUP_ITEM, chunk length),
 * btrfs_check_block_group_item() and btrfs_set_block_group_item() against
 * the chunk; then btrfs_account_block_groups() (bytes_super, space infos,
 * read-only rules, global reserve) and btrfs_get_alloc_profile().
 * Input: template and flags (PZ_UNSORTED) bytes, then items
 * (parse-common.h); the seeds are the template's leaf.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/accessors.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/tree-checker.h"
#include "kernel-shared/volumes.h"
#include "tests/fuzz/parse-common.h"

static u64 bg_owner(u32 t)
{
	const struct fz_image *img = fz_template(t);
	struct fz_image copy = *img;
	const struct btrfs_super_block *sb = fz_super(&copy, 0);

	return btrfs_super_compat_ro_flags(sb) & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE ?
	       BTRFS_BLOCK_GROUP_TREE_OBJECTID : BTRFS_EXTENT_TREE_OBJECTID;
}

static size_t bg_seed(u32 t, u8 *seed, size_t cap)
{
	return pz_template_leaf_seed(t, bg_owner(t), BTRFS_BLOCK_GROUP_ITEM_KEY, seed, cap);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_dump_template_seeds("bg-leaf", FZ_CONTROL + BTRFS_MAX_METADATA_BLOCKSIZE, bg_seed);
	return 0;
}

/* The loader's per-chunk steps; the items of other chunks are not looked at */
static int load(struct btrfs_fs_info *fs_info, const struct btrfs_tree_block *eb,
		struct btrfs_block_group *bgs)
{
	u32 i, n = 0;
	int ret = 0;

	for (i = 0; i < fs_info->nr_chunks && !ret; i++) {
		struct btrfs_chunk_map *map = fs_info->chunks[i];
		struct btrfs_key key = { map->start, BTRFS_BLOCK_GROUP_ITEM_KEY, map->length };
		const struct btrfs_block_group_item *item;
		int slot;
		u32 size;

		if (bin_search_block(eb, &key, &slot))
			continue;
		ret = btrfs_check_block_group_item(fs_info, &fs_info->err, eb, slot);
		if (ret)
			break;
		item = btrfs_item_ptr(eb, slot, &size);
		ret = btrfs_set_block_group_item(fs_info, map, item, eb->start, &bgs[n]);
		if (!ret)
			n++;
	}
	fs_info->nr_block_groups = n;
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct btrfs_fs_info work;
	struct btrfs_block_group *bgs;
	struct btrfs_tree_block *eb;
	struct pz_fs *fs;
	int ret;

	if (size < FZ_CONTROL)
		return -1;
	fs = pz_open(data[0]);
	if (!fs)
		return 0;
	eb = pz_items_block(fs, bg_owner(fs->t), BTRFS_BLOCK_GROUP_ITEM_KEY, data, size);
	/* the opened template's chunks and devices, read only; our groups */
	work = fs->fs_info;
	bgs = calloc(work.nr_chunks + 1, sizeof(*bgs));
	if (!bgs)
		abort();
	work.block_groups = bgs;
	pz_check(&work, btrfs_check_tree_block(&work, &work.err, eb));
	ret = load(&work, eb, bgs);
	pz_check(&work, ret);
	if (!ret) {
		btrfs_account_block_groups(&work);
		btrfs_get_alloc_profile(&work, BTRFS_BLOCK_GROUP_DATA);
		btrfs_get_alloc_profile(&work, BTRFS_BLOCK_GROUP_METADATA);
		btrfs_get_alloc_profile(&work, BTRFS_BLOCK_GROUP_SYSTEM);
	}
	free(bgs);
	free(eb);
	pz_end();
	return 0;
}
