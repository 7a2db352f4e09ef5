// SPDX-License-Identifier: GPL-2.0
/*
 * root-tree.c: the deleted subvolumes the cleaner has still to drop.
 *
 * Mirrors the search of the kernel's btrfs_find_orphan_roots()
 * (fs/btrfs/root-tree.c): "btrfs subvolume delete" leaves an ORPHAN_ITEM
 * (objectid BTRFS_ORPHAN_OBJECTID, offset the subvolume's id) in the tree
 * root, and btrfs_drop_snapshot() removes it when the last of the
 * subvolume's blocks is freed.  A mount finds these items and hands the
 * roots to the cleaner: until it is done, the extents only they hold are
 * still allocated, in bytes_used and in every figure of the report.
 * Behaviour reproduced: kernels 5.x-6.18 (item format unchanged).
 */
#include <errno.h>
#include "kernel-shared/root-tree.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/fs.h"
#include "kernel-shared/messages.h"
#include "kernel-shared/tree-block.h"

int btrfs_count_orphan_roots(struct btrfs_fs_info *fs_info, u64 *count)
{
	struct btrfs_root_ref tree = btrfs_tree_root_ref(fs_info);
	struct btrfs_key want = { .objectid = BTRFS_ORPHAN_OBJECTID,
				  .type = BTRFS_ORPHAN_ITEM_KEY };
	struct btrfs_error err = { 0 };
	struct btrfs_path path = { .err = &err };
	struct btrfs_key key;
	int ret;

	*count = 0;
	ret = btrfs_search_slot(fs_info, &tree, &want, &path, BTRFS_IO_OTHER);
	while (ret >= 0) {
		if (path.slots[0] >= (int)path.nodes[0]->nritems) {
			ret = btrfs_next_leaf(fs_info, &tree, &path, BTRFS_IO_OTHER);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		if (key.objectid != BTRFS_ORPHAN_OBJECTID || key.type != BTRFS_ORPHAN_ITEM_KEY)
			break;
		(*count)++;
		path.slots[0]++;
	}
	btrfs_release_path(&path);
	/* the end of the tree (1) is no error */
	return ret < 0 ? ret : 0;
}
