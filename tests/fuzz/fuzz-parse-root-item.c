// SPDX-License-Identifier: GPL-2.0
/*
 * parse-root-item: the root tree's root leaf of an opened template replaced
 * by a leaf built from the input (the template's header, checksum fixed
 * unless PZ_NOFIX): read through btrfs_read_tree_block() (the leaf checker:
 * ROOT_ITEM key and generation checks), btrfs_load_roots() with
 * btrfs_read_root_item() as the image reader calls it, the balance item
 * (BALANCE_OBJECTID, TEMPORARY_ITEM) through btrfs_set_balance_convert()
 * with read_balance_item()'s size rule, and btrfs_read_subvol() for the
 * FS_TREE and the first subvolume ROOT_ITEMs of the input.
 * Input: template and flags (PZ_NOFIX, PZ_UNSORTED) bytes, then items
 * (parse-common.h).  Templates whose root tree is more than a leaf are
 * skipped for the next one.  Seeds: the templates' root leaves.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/accessors.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/inode.h"
#include "tests/fuzz/parse-common.h"

#define MAX_SUBVOLS	4
/* the root refs and balance targets btrfs_load_roots() and the balance fill */
#define ROOTS_SIZE	(offsetof(struct btrfs_fs_info, block_groups) - \
			 offsetof(struct btrfs_fs_info, extent_root))

static struct pz_root_leaf *cache;

static int root_tree(struct pz_fs *fs, struct btrfs_root_ref *root)
{
	*root = btrfs_tree_root_ref(&fs->fs_info);
	return 0;
}

static size_t root_seed(u32 t, u8 *seed, size_t cap)
{
	const struct pz_root_leaf *found;
	struct pz_fs *fs = pz_open_root_leaf(t, root_tree, &cache, &found);

	if (!fs || fs->t != t)
		return 0;
	return pz_leaf_seed(t, found->leaf, fs->fs_info.nodesize, seed, cap);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_dump_template_seeds("root-leaf", FZ_CONTROL + BTRFS_MAX_METADATA_BLOCKSIZE,
			       root_seed);
	return 0;
}

static int image_root_item(void *ctx, u64 objectid, struct btrfs_root_ref *root)
{
	struct btrfs_fs_info *fs_info = ctx;

	return btrfs_read_root_item(fs_info, &fs_info->err, objectid, root);
}

/* read_balance_item(): the item is optional, a short one is refused */
static int balance(struct btrfs_fs_info *fs_info, const struct btrfs_tree_block *eb)
{
	struct btrfs_key key = { BTRFS_BALANCE_OBJECTID, BTRFS_TEMPORARY_ITEM_KEY, 0 };
	const struct btrfs_balance_item *bi;
	int slot;
	u32 size;

	if (bin_search_block(eb, &key, &slot))
		return 0;
	bi = btrfs_item_ptr(eb, slot, &size);
	if (size < sizeof(*bi))
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"balance item: invalid size %u, expect %zu", size, sizeof(*bi));
	btrfs_set_balance_convert(fs_info, bi);
	return 0;
}

static void subvols(struct btrfs_fs_info *fs_info, const struct btrfs_tree_block *eb)
{
	struct btrfs_subvol sv;
	u32 slot, n = 0;

	pz_check(fs_info, btrfs_read_subvol(fs_info, &fs_info->err, BTRFS_FS_TREE_OBJECTID, &sv));
	for (slot = 0; slot < eb->nritems && n < MAX_SUBVOLS; slot++) {
		struct btrfs_key key;

		btrfs_item_key_to_cpu(eb, slot, &key);
		if (key.type != BTRFS_ROOT_ITEM_KEY || !btrfs_is_subvol_id(key.objectid) ||
		    key.objectid == BTRFS_FS_TREE_OBJECTID)
			continue;
		pz_check(fs_info, btrfs_read_subvol(fs_info, &fs_info->err, key.objectid, &sv));
		n++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pz_leaf_run run;
	static struct btrfs_fs_info saved;
	struct btrfs_fs_info *fs_info;
	struct btrfs_tree_block *eb;
	struct pz_fs *fs;
	int ret;

	if (size < FZ_CONTROL)
		return -1;
	fs = pz_swap_root_leaf(data, size, root_tree, &cache, &run);
	if (!fs)
		return 0;
	fs_info = &fs->fs_info;
	/* the roots this run loads replace the template's until restored */
	memcpy(&saved.extent_root, &fs_info->extent_root,
	       ROOTS_SIZE);
	ret = btrfs_load_roots(fs_info, image_root_item, fs_info);
	pz_check(fs_info, ret);
	if (!ret) {
		eb = pz_block(run.leaf, fs_info->nodesize, run.found->root.bytenr);
		pz_check(fs_info, balance(fs_info, eb));
		subvols(fs_info, eb);
		free(eb);
	}
	memcpy(&fs_info->extent_root, &saved.extent_root,
	       ROOTS_SIZE);
	pz_restore(fs);
	pz_end();
	return 0;
}
