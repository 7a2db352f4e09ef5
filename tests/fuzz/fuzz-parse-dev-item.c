// SPDX-License-Identifier: GPL-2.0
/*
 * parse-dev-item: the chunk tree's and the dev tree's root leaves of an
 * opened template replaced by leaves built from the input (the templates'
 * headers, checksums fixed unless PZ_NOFIX): DEV_EXTENT and PERSISTENT
 * items go to the dev tree leaf, every other item to the chunk tree leaf.
 * Then, on a fresh reader state with the template's devices as
 * open_devices() leaves them: btrfs_read_sys_array(), btrfs_read_chunk_tree()
 * (the leaf checker's DEV_ITEM and CHUNK_ITEM checks, read_one_dev(),
 * read_one_chunk(), btrfs_resolve_stripes()) and btrfs_verify_dev_extents()
 * (the DEV_EXTENT checks, every extent against its chunk and device).
 * Input: template and flags (PZ_NOFIX, PZ_UNSORTED) bytes, then items
 * (parse-common.h).  Templates whose chunk or dev tree is more than a leaf
 * are skipped for the next one.  Seeds: both leaves of each template.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/accessors.h"
#include "kernel-shared/volumes.h"
#include "tests/fuzz/parse-common.h"

/* PERSISTENT_ITEM (device stats): the dev tree's other item type */
#define PERSISTENT_ITEM_KEY	249

static struct pz_root_leaf *chunk_cache, *dev_cache;

static int chunk_tree(struct pz_fs *fs, struct btrfs_root_ref *root)
{
	const struct btrfs_super_block *sb = &fs->fs_info.super;

	root->objectid = BTRFS_CHUNK_TREE_OBJECTID;
	root->bytenr = btrfs_super_chunk_root(sb);
	root->level = btrfs_super_chunk_root_level(sb);
	root->generation = btrfs_super_chunk_root_generation(sb);
	return 0;
}

static int dev_tree(struct pz_fs *fs, struct btrfs_root_ref *root)
{
	*root = fs->fs_info.dev_root;
	return root->found ? 0 : -1;
}

/* A template from @t on with both roots leaves */
static struct pz_fs *pick(u32 t, const struct pz_root_leaf **chunk,
			  const struct pz_root_leaf **dev)
{
	u32 k;

	for (k = 0; k < fz_nr_templates(); k++) {
		struct pz_fs *fs = pz_open_root_leaf(t, chunk_tree, &chunk_cache, chunk);

		if (!fs)
			return NULL;
		if (pz_open_root_leaf(fs->t, dev_tree, &dev_cache, dev) == fs)
			return fs;
		t = fs->t + 1;
	}
	return NULL;
}

/* Both leaves' items in one seed */
static size_t dev_seed(u32 t, u8 *seed, size_t cap)
{
	const struct pz_root_leaf *chunk, *dev;
	struct pz_fs *fs = pick(t, &chunk, &dev);
	size_t len;

	if (!fs || fs->t != t)
		return 0;
	len = pz_leaf_seed(t, chunk->leaf, fs->fs_info.nodesize, seed, cap);
	return pz_dump_leaf_items(dev->leaf, fs->fs_info.nodesize, seed, len, cap);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_dump_template_seeds("dev-leaves", FZ_CONTROL + 2 * BTRFS_MAX_METADATA_BLOCKSIZE,
			       dev_seed);
	return 0;
}

static bool in_dev_tree(const struct pz_item *item)
{
	return item->key.type == BTRFS_DEV_EXTENT_KEY ||
	       item->key.type == PERSISTENT_ITEM_KEY;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pz_item items[PZ_MAX_ITEMS], chunk_items[PZ_MAX_ITEMS],
			      dev_items[PZ_MAX_ITEMS];
	static u8 chunk_leaf[BTRFS_MAX_METADATA_BLOCKSIZE], dev_leaf[BTRFS_MAX_METADATA_BLOCKSIZE];
	static struct btrfs_fs_info work;
	const struct pz_root_leaf *chunk, *dev;
	u32 nr, nr_chunk = 0, nr_dev = 0, nodesize, i;
	struct pz_fs *fs;
	int ret;

	if (size < FZ_CONTROL)
		return -1;
	fs = pick(data[0], &chunk, &dev);
	if (!fs)
		return 0;
	nodesize = fs->fs_info.nodesize;
	nr = pz_parse_items(data + FZ_CONTROL, size - FZ_CONTROL, items, PZ_MAX_ITEMS);
	for (i = 0; i < nr; i++) {
		if (in_dev_tree(&items[i]))
			dev_items[nr_dev++] = items[i];
		else
			chunk_items[nr_chunk++] = items[i];
	}
	pz_build_leaf(chunk_leaf, nodesize, chunk->leaf, chunk_items, nr_chunk,
		      data[1] & PZ_UNSORTED);
	pz_build_leaf(dev_leaf, nodesize, dev->leaf, dev_items, nr_dev,
		      data[1] & PZ_UNSORTED);
	if (!(data[1] & PZ_NOFIX)) {
		pz_set_csum(fs->fs_info.csum_type, chunk_leaf, nodesize);
		pz_set_csum(fs->fs_info.csum_type, dev_leaf, nodesize);
	}
	if (pz_place(fs, chunk->root.bytenr, chunk_leaf) ||
	    pz_place(fs, dev->root.bytenr, dev_leaf)) {
		pz_restore(fs);
		return 0;
	}
	pz_work_init(&work, fs, false);
	ret = btrfs_read_sys_array(&work);
	if (!ret)
		ret = btrfs_read_chunk_tree(&work);
	pz_check(&work, ret);
	if (!ret) {
		work.dev_root = dev->root;
		ret = btrfs_verify_dev_extents(&work);
		pz_check(&work, ret);
	}
	pz_work_free(&work);
	pz_restore(fs);
	pz_end();
	return 0;
}
