// SPDX-License-Identifier: GPL-2.0
/*
 * The reference side of copying a shared subvolume tree block, after
 * fs/btrfs/extent-tree.c: btrfs_lookup_extent_info() (the block's refs and
 * flags in the extent tree, plus what the transaction's delayed refs have
 * queued for it so far) and __btrfs_mod_ref() (btrfs_inc_ref() and
 * btrfs_dec_ref(): one data ref for every file extent item with an extent,
 * one tree ref for every child pointer, with the block's owner as root,
 * or with the block itself as parent for full backrefs).
 *
 * Behaviour reproduced: 5.x-6.18 (the rules have not changed since mixed
 * backrefs, 2.6.31); the skinny METADATA_ITEM and the old EXTENT_ITEM.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/ctree.h"
#include "kernel-shared/extent-tree.h"
#include "kernel-shared/file-item.h"

void btrfs_cow_sim_init(struct btrfs_cow_sim *cs, struct btrfs_fs_info *fs_info,
			struct btrfs_delayed_refs_sim *refs)
{
	memset(cs, 0, sizeof(*cs));
	cs->fs_info = fs_info;
	cs->refs = refs;
	/*
	 * Copies get addresses no block of the image can have: above any
	 * chunk's logical range, nodesize apart, so their heads never meet
	 * the image's.
	 */
	cs->next_bytenr = 1ULL << 62;
}

void btrfs_cow_sim_release(struct btrfs_cow_sim *cs)
{
	u64 i;

	for (i = 0; i < cs->nr_leaves; i++) {
		free(cs->leaves[i]->gone);
		free(cs->leaves[i]->moved_to);
		free(cs->leaves[i]);
	}
	free(cs->leaves);
	u64_index_free(&cs->leaf_index);
	u64_index_free(&cs->cowed_index);
	u64_index_free(&cs->node_index);
	free(cs->nodes);
	free(cs->node_nr);
	free(cs->emptied_into);
	cs->nodes = NULL;
	cs->node_nr = NULL;
	cs->emptied_into = NULL;
	cs->nr_nodes = cs->cap_nodes = 0;
	free(cs->copy_of);
	cs->leaves = NULL;
	cs->copy_of = NULL;
	cs->nr_cowed = cs->cap_cowed = 0;
	cs->nr_leaves = cs->cap_leaves = 0;
}

#define extent_item_error(fs_info, leaf, slot, bytenr, fmt, ...)		\
	btrfs_fs_error(fs_info, -EUCLEAN,					\
		"corrupt extent item of tree block %llu in extent tree block %llu slot %d: " fmt, \
		(unsigned long long)(bytenr), (unsigned long long)(leaf)->start, \
		(slot), ##__VA_ARGS__)

/*
 * The image's extent item of tree block @bytenr (the extent tree's half of
 * btrfs_lookup_extent_info(), no delayed refs): 0, 1 if there is none, <0.
 * Reads are counted for @purpose.
 */
int btrfs_read_block_extent_item(struct btrfs_fs_info *fs_info, u64 bytenr, int level,
				 u64 *refs, u64 *flags, unsigned int purpose)
{
	bool skinny = btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA);
	struct btrfs_key key = { bytenr, BTRFS_EXTENT_ITEM_KEY, fs_info->nodesize };
	const struct btrfs_extent_item *ei;
	struct btrfs_path path = { 0 };
	struct btrfs_key found;
	u32 size;
	int ret = 1, pass;	/* not found, should no pass run */

	/* the kernel tries the skinny key first, then the full one */
	for (pass = skinny ? 0 : 1; pass < 2; pass++) {
		if (pass == 0) {
			key.type = BTRFS_METADATA_ITEM_KEY;
			key.offset = level;
		} else {
			key.type = BTRFS_EXTENT_ITEM_KEY;
			key.offset = fs_info->nodesize;
		}
		ret = btrfs_search_slot(fs_info, &fs_info->extent_root, &key, &path, purpose);
		if (ret < 0)
			break;
		if (ret == 1 || path.slots[0] >= (int)path.nodes[0]->nritems) {
			btrfs_release_path(&path);
			ret = 1;
			continue;
		}
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &found);
		ei = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		if (size < sizeof(*ei)) {
			ret = extent_item_error(fs_info, path.nodes[0], path.slots[0],
				bytenr, "item size %u is below the %zu bytes of an extent item",
				size, sizeof(*ei));
			break;
		}
		*refs = btrfs_stack_extent_refs(ei);
		*flags = btrfs_stack_extent_flags(ei);
		if (!(*flags & BTRFS_EXTENT_FLAG_TREE_BLOCK)) {
			ret = extent_item_error(fs_info, path.nodes[0], path.slots[0],
				bytenr, "flags 0x%llx lack TREE_BLOCK for a tree block",
				(unsigned long long)*flags);
			break;
		}
		ret = 0;
		break;
	}
	btrfs_release_path(&path);
	return ret;
}

/*
 * btrfs_lookup_extent_info(): refs and flags of the block's extent item,
 * with the ref_mod of its delayed head and the flags of its extent ops
 * added, as a transaction sees them.  No refs at all is corruption: the
 * kernel says so and aborts the transaction.
 */
int btrfs_lookup_extent_info(struct btrfs_cow_sim *cs,
			     const struct btrfs_tree_block *eb, u64 *refs,
			     u64 *flags)
{
	const struct btrfs_sim_head *h;
	int64_t total;
	int ret;

	*refs = 0;
	*flags = 0;
	ret = btrfs_read_block_extent_item(cs->fs_info, eb->start, eb->level, refs, flags,
					   BTRFS_IO_OTHER);
	if (ret < 0)
		return ret;
	total = (int64_t)*refs;
	h = btrfs_sim_find_head(cs->refs, eb->start);
	if (h) {
		total += h->ran_mod + (h->queued ? h->ref_mod : 0);
		*flags |= h->flags_to_set;
	}
	if (total <= 0)
		return btrfs_fs_error(cs->fs_info, -EUCLEAN,
			"tree block %llu (level %u, owner %llu) has no extent item with refs in the extent tree",
			(unsigned long long)eb->start, eb->level,
			(unsigned long long)eb->owner);
	*refs = total;
	return 0;
}

static int mod_leaf_refs(struct btrfs_cow_sim *cs, const struct btrfs_tree_block *eb,
			 u64 ref_root, int action, u64 parent)
{
	u32 slot;
	int ret;

	for (slot = 0; slot < eb->nritems; slot++) {
		const struct btrfs_file_extent_item *fi;
		struct btrfs_key key;
		u64 bytenr;
		u32 size;

		btrfs_item_key_to_cpu(eb, slot, &key);
		if (key.type != BTRFS_EXTENT_DATA_KEY)
			continue;
		fi = btrfs_item_ptr(eb, slot, &size);
		if (size < BTRFS_FILE_EXTENT_INLINE_DATA_START)
			return btrfs_fs_error(cs->fs_info, -EUCLEAN,
				"corrupt file extent (%llu EXTENT_DATA %llu) in block %llu slot %u: item size %u is below %zu bytes",
				(unsigned long long)key.objectid,
				(unsigned long long)key.offset,
				(unsigned long long)eb->start, slot, size,
				BTRFS_FILE_EXTENT_INLINE_DATA_START);
		if (btrfs_stack_file_extent_type(fi) == BTRFS_FILE_EXTENT_INLINE)
			continue;
		if (size != sizeof(*fi))
			return btrfs_fs_error(cs->fs_info, -EUCLEAN,
				"corrupt file extent (%llu EXTENT_DATA %llu) in block %llu slot %u: size %u, expect %zu",
				(unsigned long long)key.objectid,
				(unsigned long long)key.offset,
				(unsigned long long)eb->start, slot, size, sizeof(*fi));
		bytenr = btrfs_stack_file_extent_disk_bytenr(fi);
		if (!bytenr)
			continue;
		ret = btrfs_sim_add_ref(cs->refs, true, action, bytenr,
				btrfs_stack_file_extent_disk_num_bytes(fi), parent,
				ref_root, key.objectid,
				key.offset - btrfs_stack_file_extent_offset(fi));
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * __btrfs_mod_ref(): every extent the block points to gets a ref added
 * (@inc) or dropped, owned by @ref_root (the block's owner; for the copy,
 * the root that copies) or, for @full_backref, by the block itself.
 */
int btrfs_mod_ref(struct btrfs_cow_sim *cs, const struct btrfs_tree_block *eb,
		  u64 ref_root, bool inc, bool full_backref)
{
	int action = inc ? BTRFS_DELAYED_REF_ADD : BTRFS_DELAYED_REF_DROP;
	u64 parent = full_backref ? eb->start : 0;
	u32 slot;
	int ret;

	if (eb->level == 0)
		return mod_leaf_refs(cs, eb, ref_root, action, parent);
	for (slot = 0; slot < eb->nritems; slot++) {
		ret = btrfs_sim_add_ref(cs->refs, false, action,
				btrfs_node_blockptr(eb, slot), cs->fs_info->nodesize,
				parent, ref_root, eb->level - 1, 0);
		if (ret)
			return ret;
	}
	return 0;
}
