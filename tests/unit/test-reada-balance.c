// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of reada_for_balance() (kernel-shared/ctree.c, after
 * setup_nodes_for_search()): a search given ins_len < 0 (a deletion's)
 * reads ahead the left and right siblings of each node of its path, not
 * the root, with fewer than half its pointers; one given ins_len > 0 (an
 * insertion's) those of each node with BTRFS_NODEPTRS_PER_BLOCK - 3 or
 * more; a lookup none.  Their children are not read.  The tree is built in
 * the block cache (4 KiB nodes, 121 pointers): a level-2 root over three
 * level-1 nodes of 3 (below half), 118 (nearly full) and 60 (half)
 * pointers; only the leaves the searches reach exist.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/tree-build.h"
#include "tests/unit/unit-test.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/tree-block.h"

#define GEN		7
#define ROOT_ID		BTRFS_FS_TREE_OBJECTID
#define ROOT_AT		(1ULL << 30)
#define NODE_AT(n)	(ROOT_AT + ((n) + 1) * 4096ULL)
#define LEAF_AT(n, j)	((1ULL << 28) * ((n) + 1) + (j) * 4096ULL)
#define KEY_OF(n, j)	((n) * 100000ULL + (j))

static const u32 node_ptrs[3] = { 3, 118, 60 };

struct reads {
	u64 v[16];
	u32 nr;
};

static int observe(void *ctx, u64 bytenr)
{
	struct reads *r = ctx;

	if (r->nr < 16)
		r->v[r->nr++] = bytenr;
	return 0;
}

static struct btrfs_tree_block *new_block(struct btrfs_fs_info *fs_info, u64 bytenr,
					  u8 level, u32 nritems)
{
	return unit_new_tree_block(fs_info, bytenr, level, nritems, ROOT_ID, GEN);
}

static void insert(struct btrfs_fs_info *fs_info, struct btrfs_tree_block *eb)
{
	unit_cache_tree_block(fs_info, eb);
}

static void set_ptr(struct btrfs_tree_block *node, u32 slot, u64 objectid, u64 bytenr)
{
	struct btrfs_key_ptr *ptr = (struct btrfs_key_ptr *)(node->data +
						sizeof(struct btrfs_header));

	ptr[slot].key.objectid = htole64(objectid);
	ptr[slot].key.type = BTRFS_INODE_ITEM_KEY;
	ptr[slot].blockptr = htole64(bytenr);
	ptr[slot].generation = htole64(GEN);
}

/* Leaf @j of node @n, with the one key (KEY_OF(n, j), INODE_ITEM, 0) */
static void add_leaf(struct btrfs_fs_info *fs_info, u32 n, u32 j)
{
	struct btrfs_tree_block *leaf = new_block(fs_info, LEAF_AT(n, j), 0, 1);
	struct btrfs_item *item = (struct btrfs_item *)(leaf->data +
					sizeof(struct btrfs_header));

	item->key.objectid = htole64(KEY_OF(n, j));
	item->key.type = BTRFS_INODE_ITEM_KEY;
	item->offset = htole32(btrfs_leaf_data_size(fs_info->nodesize));
	insert(fs_info, leaf);
}

static void build_tree(struct btrfs_fs_info *fs_info)
{
	struct btrfs_tree_block *root = new_block(fs_info, ROOT_AT, 2, 3);
	u32 n, j;

	for (n = 0; n < 3; n++) {
		struct btrfs_tree_block *node = new_block(fs_info, NODE_AT(n), 1, node_ptrs[n]);

		for (j = 0; j < node_ptrs[n]; j++)
			set_ptr(node, j, KEY_OF(n, j), LEAF_AT(n, j));
		set_ptr(root, n, KEY_OF(n, 0), NODE_AT(n));
		insert(fs_info, node);
		add_leaf(fs_info, n, 1);
	}
	insert(fs_info, root);
}

/* Search leaf 1 of node @n with @ins_len: the blocks read, in order */
static void search(struct btrfs_fs_info *fs_info, u32 n, int ins_len, struct reads *r)
{
	const struct btrfs_root_ref root = {
		.objectid = ROOT_ID, .bytenr = ROOT_AT, .level = 2, .generation = GEN,
		.found = true,
	};
	struct btrfs_path path = { .ins_len = ins_len };
	struct btrfs_key key = { KEY_OF(n, 1), BTRFS_INODE_ITEM_KEY, 0 };

	r->nr = 0;
	btrfs_set_read_observer(fs_info, (struct btrfs_read_observer){ observe, r });
	if (btrfs_search_slot(fs_info, &root, &key, &path, BTRFS_IO_OTHER) != 0)
		check(0, "search of node %u's leaf 1 finds its key", n);
	btrfs_release_path(&path);
	btrfs_set_read_observer(fs_info, (struct btrfs_read_observer){ 0 });
}

static void expect(struct btrfs_fs_info *fs_info, const char *what, u32 n, int ins_len,
		   const u64 *want, u32 nr)
{
	struct reads r;
	u32 i;

	search(fs_info, n, ins_len, &r);
	check_u64(what, r.nr, nr);
	for (i = 0; i < nr && i < r.nr; i++)
		if (r.v[i] != want[i]) {
			check(0, "%s: read %u is %llu, want %llu", what, i,
			      (unsigned long long)r.v[i], (unsigned long long)want[i]);
			return;
		}
}

int main(void)
{
	struct btrfs_fs_info *fs_info = calloc(1, sizeof(*fs_info));
	const u64 plain0[] = { ROOT_AT, NODE_AT(0), LEAF_AT(0, 1) };
	const u64 del0[] = { ROOT_AT, NODE_AT(0), NODE_AT(1), LEAF_AT(0, 1) };
	const u64 plain1[] = { ROOT_AT, NODE_AT(1), LEAF_AT(1, 1) };
	const u64 ins1[] = { ROOT_AT, NODE_AT(1), NODE_AT(0), NODE_AT(2), LEAF_AT(1, 1) };
	const u64 plain2[] = { ROOT_AT, NODE_AT(2), LEAF_AT(2, 1) };

	if (!fs_info)
		return 2;
	fs_info->sectorsize = 4096;
	fs_info->nodesize = 4096;
	build_tree(fs_info);
	expect(fs_info, "lookup through a node below half: its path only", 0, 0, plain0, 3);
	expect(fs_info, "deletion through a node below half (the first): its right sibling",
	       0, -1, del0, 4);
	expect(fs_info, "insertion through a node below half: its path only", 0, 1, plain0, 3);
	expect(fs_info, "insertion through a node of 118 pointers: both siblings",
	       1, 1, ins1, 5);
	expect(fs_info, "deletion through a node of 118 pointers: its path only",
	       1, -1, plain1, 3);
	expect(fs_info, "deletion through a node of half (60): its path only",
	       2, -1, plain2, 3);
	btrfs_free_block_cache(fs_info);
	free(fs_info);
	printf("%s\n", unit_failures ? "FAILED" : "PASSED");
	return unit_failures ? 1 : 0;
}
