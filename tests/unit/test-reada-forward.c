// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of reada_for_search() with READA_FORWARD (kernel-shared/ctree.c,
 * used by the mount estimate's block-group caching): a search that reads a
 * leaf not in memory through its level-1 node reads the leaves of the
 * slots after it that lie within 64 KiB of it, until more than 64 KiB
 * went or 32 slots were looked at; a leaf in memory starts none; the step
 * of btrfs_next_leaf() into a leaf not in memory starts one too.  The
 * tree is built in the block cache: a level-1 root over leaves at chosen
 * addresses.
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

#define MAX_LEAVES	64
#define GEN		7
#define ROOT_ID		BTRFS_EXTENT_TREE_OBJECTID
#define NODE_AT		(1ULL << 30)

/* The blocks the observer was told of, in order */
struct reads {
	u64 v[4 * MAX_LEAVES];
	u32 nr;
};

static int observe(void *ctx, u64 bytenr)
{
	struct reads *r = ctx;

	if (r->nr < 4 * MAX_LEAVES)
		r->v[r->nr++] = bytenr;
	return 0;
}

/* In memory: told of already (the mount estimate's trace) */
static bool in_memory(void *ctx, u64 bytenr)
{
	const struct reads *r = ctx;
	u32 i;

	for (i = 0; i < r->nr; i++)
		if (r->v[i] == bytenr)
			return true;
	return false;
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

/* Leaf i holds the one key (i * 100, EXTENT_ITEM, 1), empty data */
static void build_tree(struct btrfs_fs_info *fs_info, const u64 *at, u32 nr)
{
	struct btrfs_tree_block *node = new_block(fs_info, NODE_AT, 1, nr);
	struct btrfs_key_ptr *ptr = (struct btrfs_key_ptr *)(node->data +
						sizeof(struct btrfs_header));
	u32 i;

	for (i = 0; i < nr; i++) {
		struct btrfs_tree_block *leaf = new_block(fs_info, at[i], 0, 1);
		struct btrfs_item *item = (struct btrfs_item *)(leaf->data +
						sizeof(struct btrfs_header));

		item->key.objectid = htole64(i * 100);
		item->key.type = BTRFS_EXTENT_ITEM_KEY;
		item->key.offset = htole64(1);
		item->offset = htole32(btrfs_leaf_data_size(fs_info->nodesize));
		ptr[i].key = item->key;
		ptr[i].blockptr = htole64(at[i]);
		ptr[i].generation = htole64(GEN);
		insert(fs_info, leaf);
	}
	insert(fs_info, node);
}

/* Search (slot * 100, EXTENT_ITEM, 1): the blocks read, node first */
static void search(struct btrfs_fs_info *fs_info, u32 slot, struct reads *r, bool next)
{
	const struct btrfs_root_ref root = {
		.objectid = ROOT_ID, .bytenr = NODE_AT, .level = 1, .generation = GEN,
		.found = true,
	};
	const struct btrfs_reada_forward ra = { in_memory, r };
	struct btrfs_path path = { .reada = &ra };
	struct btrfs_key key = { slot * 100ULL, BTRFS_EXTENT_ITEM_KEY, 1 };

	btrfs_set_read_observer(fs_info, (struct btrfs_read_observer){ observe, r });
	if (btrfs_search_slot(fs_info, &root, &key, &path, BTRFS_IO_OTHER) != 0)
		check(0, "search of slot %u finds its key", slot);
	if (next && btrfs_next_leaf(fs_info, &root, &path, BTRFS_IO_OTHER) != 0)
		check(0, "next leaf after slot %u", slot);
	btrfs_release_path(&path);
	btrfs_set_read_observer(fs_info, (struct btrfs_read_observer){ 0 });
}

static void check_reads(const char *what, const struct reads *r, const u64 *want, u32 nr)
{
	u32 i;

	check_u64(what, r->nr, nr);
	for (i = 0; i < nr && i < r->nr; i++)
		if (r->v[i] != want[i]) {
			check(0, "%s: read %u is %llu, want %llu", what, i,
			      (unsigned long long)r->v[i], (unsigned long long)want[i]);
			return;
		}
}

static void reset(struct btrfs_fs_info *fs_info, u32 nodesize)
{
	btrfs_drop_block_cache(fs_info);
	fs_info->nodesize = nodesize;
}

/*
 * 4 KiB leaves side by side: the 16 after the target lie within 64 KiB of
 * it (the 17th is 68 KiB away); 16 KiB leaves: 4
 */
static void test_adjacent(struct btrfs_fs_info *fs_info, u32 nodesize, u32 nr_ahead,
			  const char *what)
{
	u64 at[40], want[40];
	struct reads r = { 0 };
	u32 i;

	reset(fs_info, nodesize);
	for (i = 0; i < 40; i++)
		at[i] = (1ULL << 22) + (u64)i * nodesize;
	build_tree(fs_info, at, 40);
	want[0] = NODE_AT;
	for (i = 0; i < nr_ahead; i++)
		want[1 + i] = at[4 + i];
	want[1 + nr_ahead] = at[3];
	search(fs_info, 3, &r, false);
	check_reads(what, &r, want, nr_ahead + 2);

	/* the same leaf again: in memory, nothing more */
	search(fs_info, 3, &r, false);
	check_u64("a leaf in memory starts no read-ahead", r.nr, nr_ahead + 2 + 2);
}

/* Leaves on both sides of the target: more than 64 KiB read stops it */
static void test_bytes(struct btrfs_fs_info *fs_info)
{
	u64 at[40], want[40];
	struct reads r = { 0 };
	u32 i;

	reset(fs_info, 4096);
	/* alternately above and below it, 4 KiB further each pair */
	for (i = 0; i < 40; i++)
		at[i] = i % 2 ? (1ULL << 22) + (i + 1) / 2 * 4096ULL :
				(1ULL << 22) - i / 2 * 4096ULL;
	build_tree(fs_info, at, 40);
	want[0] = NODE_AT;
	for (i = 0; i < 17; i++)
		want[1 + i] = at[1 + i];
	want[18] = at[0];
	search(fs_info, 0, &r, false);
	check_reads("leaves on both sides: 17 ahead (68 KiB > 64 KiB), then the target", &r,
		    want, 19);
}

/*
 * Far leaves count as looked at, not read: of 40 leaves 1 MiB apart only
 * those placed within 64 KiB of the target are read, and the scan stops
 * after 33 slots (nscan > 32), below or above the target
 */
static void test_distance(struct btrfs_fs_info *fs_info)
{
	u64 at[40], want[5];
	struct reads r = { 0 };
	u32 i;

	reset(fs_info, 4096);
	for (i = 0; i < 40; i++)
		at[i] = (64ULL << 20) + i * (1ULL << 20);
	at[5] = at[0] - 65536;		/* below the target, at the bound: read */
	at[9] = at[0] + 65536 + 4096;	/* past the bound: not read */
	at[33] = at[0] + 8192;		/* the 33rd slot after it: read, then stop */
	at[34] = at[0] + 12288;		/* past 33 slots: not read */
	build_tree(fs_info, at, 40);
	want[0] = NODE_AT;
	want[1] = at[5];
	want[2] = at[33];
	want[3] = at[0];
	search(fs_info, 0, &r, false);
	check_reads("leaves 1 MiB apart: within 64 KiB only, 33 slots looked at", &r, want, 4);
}

/* btrfs_next_leaf() into a leaf not in memory reads ahead from it */
static void test_next_leaf(struct btrfs_fs_info *fs_info)
{
	u64 at[4], want[6];
	struct reads r = { 0 };
	u32 i;

	reset(fs_info, 4096);
	at[0] = 1ULL << 24;
	for (i = 1; i < 4; i++)
		at[i] = (2ULL << 24) + i * 4096;
	build_tree(fs_info, at, 4);
	want[0] = NODE_AT;
	want[1] = at[0];
	want[2] = at[2];
	want[3] = at[3];
	want[4] = at[1];
	search(fs_info, 0, &r, true);
	check_reads("next leaf: slots 2-3 ahead of slot 1, none ahead of a far slot 0", &r,
		    want, 5);
}

int main(void)
{
	struct btrfs_fs_info *fs_info = calloc(1, sizeof(*fs_info));

	if (!fs_info)
		return 2;
	fs_info->sectorsize = 4096;
	test_adjacent(fs_info, 4096, 16, "4K leaves side by side: node, slots 4-19 ahead, slot 3");
	test_adjacent(fs_info, 16384, 4, "16K leaves side by side: node, slots 4-7 ahead, slot 3");
	test_bytes(fs_info);
	test_distance(fs_info);
	test_next_leaf(fs_info);
	btrfs_free_block_cache(fs_info);
	free(fs_info);
	printf("%s\n", unit_failures ? "FAILED" : "PASSED");
	return unit_failures ? 1 : 0;
}
