// SPDX-License-Identifier: GPL-2.0
/* Trees built in the block cache for unit tests (tree-build.h) */
#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/tree-build.h"
#include "kernel-shared/fs.h"

struct btrfs_tree_block *unit_new_tree_block(struct btrfs_fs_info *fs_info, u64 bytenr,
					     u8 level, u32 nritems, u64 owner,
					     u64 generation)
{
	struct btrfs_tree_block *eb = btrfs_alloc_tree_block(fs_info, bytenr);
	struct btrfs_header *h;

	if (!eb)
		exit(2);
	memset(eb->data, 0, fs_info->nodesize);
	h = (struct btrfs_header *)eb->data;
	h->bytenr = htole64(bytenr);
	h->owner = htole64(owner);
	h->generation = htole64(generation);
	h->level = level;
	h->nritems = htole32(nritems);
	eb->owner = owner;
	eb->generation = generation;
	eb->level = level;
	eb->nritems = nritems;
	eb->refs = 1;
	return eb;
}

void unit_cache_tree_block(struct btrfs_fs_info *fs_info, struct btrfs_tree_block *eb)
{
	if (btrfs_cache_insert(fs_info, &eb))
		exit(2);
	btrfs_tree_block_put(eb);
}
