// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the key-only leaves of kernel-shared/extent_io.c: a leaf of
 * extent items and block group items, built in a block of the cache, is
 * cached as its copy while btrfs_cache_keep_items() asks for it, and a
 * search for block group items finds in the copy what it finds in the
 * leaf; a leaf of another tree, or one whose items were not checked (not
 * flagged written), stays whole; once asked no more, the copy is not found.
 * And the packed leaves: a leaf packs and unpacks byte for byte (file
 * extent items, random bytes, item offsets that make no sense, an empty
 * leaf, every node size), a run of like items packs small, a damaged
 * packing is refused, and with btrfs_cache_pack_leaves() a leaf the budget
 * evicts is found again by a lookup, as it was.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/tree-block.h"

#define NODESIZE	16384
#define BG_ITEM		BTRFS_BLOCK_GROUP_ITEM_KEY
#define GIB		(1ULL << 30)

static u32 data_end;

static struct btrfs_tree_block *new_leaf(struct btrfs_fs_info *fs_info, u64 bytenr,
					 u64 owner, u64 flags)
{
	struct btrfs_tree_block *eb = btrfs_alloc_tree_block(fs_info, bytenr);
	struct btrfs_header *h;

	if (!eb)
		exit(2);
	memset(eb->data, 0, NODESIZE);
	h = (struct btrfs_header *)eb->data;
	h->bytenr = htole64(bytenr);
	h->flags = htole64(flags);
	h->owner = htole64(owner);
	h->generation = htole64(7);
	eb->owner = owner;
	eb->generation = 7;
	eb->refs = 1;
	data_end = btrfs_leaf_data_size(NODESIZE);
	return eb;
}

static void add_item(struct btrfs_tree_block *eb, u64 objectid, u8 type, u64 offset,
		     u32 size, u8 fill)
{
	struct btrfs_item *item = (struct btrfs_item *)(eb->data +
			sizeof(struct btrfs_header)) + eb->nritems;

	data_end -= size;
	item->key.objectid = htole64(objectid);
	item->key.type = type;
	item->key.offset = htole64(offset);
	item->offset = htole32(data_end);
	item->size = htole32(size);
	memset(eb->data + sizeof(struct btrfs_header) + data_end, fill, size);
	eb->nritems++;
	((struct btrfs_header *)eb->data)->nritems = htole32(eb->nritems);
}

/* Two block groups of 1 GiB, each after a run of its extent items */
static void fill_extent_leaf(struct btrfs_tree_block *eb)
{
	u64 bg, i;

	for (bg = 1; bg <= 2; bg++) {
		for (i = 0; i < 40; i++)
			add_item(eb, bg * GIB + i * 4096, BTRFS_EXTENT_ITEM_KEY, 4096, 53, 0xee);
		add_item(eb, bg * GIB, BG_ITEM, GIB, sizeof(struct btrfs_block_group_item),
			 (u8)bg);
	}
}

/* The first block group item at or after @key: find_first_block_group()'s answer */
static int first_bg_at(const struct btrfs_tree_block *eb, const struct btrfs_key *key,
		       struct btrfs_key *found)
{
	int slot;

	bin_search_block(eb, key, &slot);
	for (; slot < (int)eb->nritems; slot++) {
		btrfs_item_key_to_cpu(eb, slot, found);
		if (found->objectid >= key->objectid && found->type == BG_ITEM)
			return 0;
	}
	return 1;
}

static void test_copy(struct btrfs_fs_info *fs_info)
{
	struct btrfs_tree_block *eb = new_leaf(fs_info, 1 << 20, BTRFS_EXTENT_TREE_OBJECTID,
					       BTRFS_HEADER_FLAG_WRITTEN);
	struct btrfs_key key = { 2 * GIB, BG_ITEM, GIB }, found, first;
	const u8 *data;
	u32 size;
	int slot;

	fill_extent_leaf(eb);
	btrfs_cache_keep_items(fs_info, BTRFS_EXTENT_TREE_OBJECTID, BG_ITEM);
	check(!btrfs_cache_insert(fs_info, &eb), "a leaf of the kept tree is cached");
	check(eb->keys_only, "as its key-only copy");
	check_u64("items in the copy (the first and two block groups)", eb->nritems, 3);
	check_u64("copy bytes", eb->mem, sizeof(struct btrfs_header) + 3 * 25 + 2 * 24);
	check_u64("nritems in the copy's header",
		  btrfs_header_nritems((const struct btrfs_header *)eb->data), 3);
	btrfs_item_key_to_cpu(eb, 0, &first);
	check(first.objectid == GIB && first.type == BTRFS_EXTENT_ITEM_KEY,
	      "the leaf's first key is the copy's");
	check(!bin_search_block(eb, &key, &slot), "the pinpoint key is found in the copy");
	data = btrfs_item_ptr(eb, slot, &size);
	check(size == sizeof(struct btrfs_block_group_item) && data[0] == 2 && data[23] == 2,
	      "with its item's data");
	key = (struct btrfs_key) { GIB + 8192, BG_ITEM, 0 };
	check(!first_bg_at(eb, &key, &found) && found.objectid == 2 * GIB,
	      "a search between two block groups walks to the next one");
	key = (struct btrfs_key) { 3 * GIB, BG_ITEM, 0 };
	check(first_bg_at(eb, &key, &found), "and past the last one off the copy's end");
	check(btrfs_cache_lookup(fs_info, 1 << 20) == eb, "the copy is found while kept");
	btrfs_tree_block_put(eb);
	btrfs_cache_keep_items(fs_info, 0, 0);
	check(!btrfs_cache_lookup(fs_info, 1 << 20), "and not found once no more asked for");
}

static void test_whole(struct btrfs_fs_info *fs_info, u64 owner, u64 flags, const char *what)
{
	struct btrfs_tree_block *eb = new_leaf(fs_info, 2 << 20, owner, flags);

	fill_extent_leaf(eb);
	btrfs_cache_keep_items(fs_info, BTRFS_EXTENT_TREE_OBJECTID, BG_ITEM);
	check(!btrfs_cache_insert(fs_info, &eb) && !eb->keys_only &&
	      eb->nritems == 82, "%s stays whole", what);
	btrfs_tree_block_put(eb);
	btrfs_cache_keep_items(fs_info, 0, 0);
	check(btrfs_cache_lookup(fs_info, 2 << 20) == eb, "and is found after");
	btrfs_drop_block_cache(fs_info);
}

static u64 rng_state = 0x9e3779b97f4a7c15ULL;

static u64 rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A file's leaf: EXTENT_DATA items of 4 KiB extents, 8 KiB apart */
static void fill_file_leaf(struct btrfs_tree_block *eb, u64 base, bool random_bytenr)
{
	struct btrfs_file_extent_item fi;
	u64 i;

	for (i = 0; data_end >= sizeof(struct btrfs_item) * (eb->nritems + 1) + sizeof(fi) + 2;
	     i++) {
		memset(&fi, 0, sizeof(fi));
		fi.generation = htole64(9);
		fi.ram_bytes = htole64(4096);
		fi.type = BTRFS_FILE_EXTENT_PREALLOC;
		fi.disk_bytenr = htole64(random_bytenr ? (rng() & ~4095ULL) : base + i * 4096);
		fi.disk_num_bytes = htole64(4096);
		fi.num_bytes = htole64(4096);
		add_item(eb, 257, BTRFS_EXTENT_DATA_KEY, i * 8192, sizeof(fi), 0);
		memcpy(eb->data + sizeof(struct btrfs_header) + data_end, &fi, sizeof(fi));
	}
}

/*
 * Extent items of 4 KiB data extents 8 KiB apart, each with its inline
 * data ref (root 5, inode 257, offset stepping 8 KiB), as a file written
 * in order leaves the extent tree; every @odd_every-th a 33-byte metadata
 * item instead (0: none), which breaks the items' even step
 */
static void fill_data_extent_leaf(struct btrfs_tree_block *eb, u32 odd_every)
{
	u8 data[53];
	u64 i, v;

	for (i = 0; data_end >= sizeof(struct btrfs_item) * (eb->nritems + 1) + sizeof(data) + 2;
	     i++) {
		bool odd = odd_every && i % odd_every == odd_every - 1;

		memset(data, 0, sizeof(data));
		v = htole64(1);			/* refs */
		memcpy(data, &v, 8);
		v = htole64(9);			/* generation */
		memcpy(data + 8, &v, 8);
		v = htole64(odd ? BTRFS_EXTENT_FLAG_TREE_BLOCK : BTRFS_EXTENT_FLAG_DATA);
		memcpy(data + 16, &v, 8);
		data[24] = odd ? BTRFS_TREE_BLOCK_REF_KEY : BTRFS_EXTENT_DATA_REF_KEY;
		v = htole64(5);			/* root */
		memcpy(data + 25, &v, 8);
		v = htole64(257);		/* inode */
		memcpy(data + 33, &v, 8);
		v = htole64(i * 8192);		/* offset */
		memcpy(data + 41, &v, 8);
		data[49] = 1;			/* count */
		add_item(eb, GIB + i * 8192, odd ? BTRFS_METADATA_ITEM_KEY : BTRFS_EXTENT_ITEM_KEY,
			 odd ? 0 : 4096, odd ? 33 : sizeof(data), 0);
		memcpy(eb->data + sizeof(struct btrfs_header) + data_end, data, odd ? 33 : sizeof(data));
	}
}

static bool pack_roundtrip(const u8 *leaf, u32 nodesize, u32 nritems, u32 *len)
{
	u8 *packed = malloc(btrfs_leaf_pack_bound(nodesize)), *back = malloc(nodesize);
	bool same;

	if (!packed || !back)
		exit(2);
	*len = btrfs_leaf_pack(leaf, nodesize, nritems, packed);
	same = *len <= btrfs_leaf_pack_bound(nodesize) &&
	       !btrfs_leaf_unpack(packed, *len, nodesize, back) &&
	       !memcmp(leaf, back, nodesize);
	/* damaged: one byte short, and a count past the leaf */
	check(btrfs_leaf_unpack(packed, *len - 1, nodesize, back) == -EUCLEAN,
	      "a packing one byte short is refused");
	packed[0] = 0xff;
	packed[1] = 0xff;
	packed[2] = 0x7f;
	check(btrfs_leaf_unpack(packed, *len, nodesize, back) == -EUCLEAN,
	      "a packing whose layout is past the leaf is refused");
	free(packed);
	free(back);
	return same;
}

static void test_pack(struct btrfs_fs_info *fs_info)
{
	struct btrfs_tree_block *eb = new_leaf(fs_info, 3 << 20, 5, BTRFS_HEADER_FLAG_WRITTEN);
	u8 *raw = malloc(65536);
	u32 len, i, ns;
	bool same;

	if (!raw)
		exit(2);
	fill_file_leaf(eb, 1ULL << 30, false);
	same = pack_roundtrip(eb->data, NODESIZE, eb->nritems, &len);
	check(same, "a leaf of %u file extent items unpacks byte for byte", eb->nritems);
	check(len < eb->nritems, "in %u bytes, under 1 an item (their fields step evenly)", len);
	btrfs_free_tree_block(fs_info, eb);
	eb = new_leaf(fs_info, 3 << 20, BTRFS_EXTENT_TREE_OBJECTID, BTRFS_HEADER_FLAG_WRITTEN);
	fill_data_extent_leaf(eb, 0);
	same = pack_roundtrip(eb->data, NODESIZE, eb->nritems, &len);
	check(same, "a leaf of %u data extent items unpacks byte for byte", eb->nritems);
	check(len < eb->nritems, "in %u bytes, under 1 an item", len);
	btrfs_free_tree_block(fs_info, eb);
	eb = new_leaf(fs_info, 3 << 20, BTRFS_EXTENT_TREE_OBJECTID, BTRFS_HEADER_FLAG_WRITTEN);
	fill_data_extent_leaf(eb, 7);
	same = pack_roundtrip(eb->data, NODESIZE, eb->nritems, &len);
	check(same, "with a metadata item every 7th (%u bytes)", len);
	btrfs_free_tree_block(fs_info, eb);
	eb = new_leaf(fs_info, 3 << 20, 5, BTRFS_HEADER_FLAG_WRITTEN);
	fill_file_leaf(eb, 0, true);
	same = pack_roundtrip(eb->data, NODESIZE, eb->nritems, &len);
	check(same, "with random disk_bytenrs too (%u bytes)", len);
	btrfs_free_tree_block(fs_info, eb);
	for (ns = 4096; ns <= 65536; ns *= 2) {
		for (i = 0; i < ns; i++)
			raw[i] = (u8)rng();
		check(pack_roundtrip(raw, ns, 0, &len) && pack_roundtrip(raw, ns, 77, &len) &&
		      pack_roundtrip(raw, ns, 1000000, &len),
		      "random %u bytes, any item count, unpack as they were", ns);
		memset(raw, 0, ns);
		same = pack_roundtrip(raw, ns, 0, &len);
		check(same && len < 16, "an empty %u-byte leaf packs in %u bytes", ns, len);
	}
	free(raw);
}

/* Leaves past the budget are packed when evicted, and found again as they were */
static void test_pack_evicted(struct btrfs_fs_info *fs_info)
{
	const u32 nr = btrfs_cache_leaf_limit() / NODESIZE + 64;
	u8 *first = malloc(NODESIZE);
	struct btrfs_tree_block *eb;
	u64 packed, bytes;
	u32 i;

	if (!first)
		exit(2);
	btrfs_cache_pack_leaves(fs_info);
	for (i = 0; i < nr; i++) {
		eb = new_leaf(fs_info, (u64)(i + 16) << 20, 5, BTRFS_HEADER_FLAG_WRITTEN);
		fill_file_leaf(eb, (u64)i << 30, false);
		if (!i)
			memcpy(first, eb->data, NODESIZE);
		check(!btrfs_cache_insert(fs_info, &eb), "leaf %u cached", i) ;
		btrfs_tree_block_put(eb);
	}
	btrfs_cache_packed_stats(fs_info, &packed, &bytes);
	check(packed >= 64, "the leaves past the budget are packed (%llu, %llu bytes)",
	      (unsigned long long)packed, (unsigned long long)bytes);
	eb = btrfs_cache_lookup(fs_info, 16 << 20);
	check(eb && !memcmp(eb->data, first, NODESIZE) && eb->nritems == 208 &&
	      eb->owner == 5 && eb->generation == 7 && !eb->refs,
	      "the first leaf is found again, unpacked as it was");
	btrfs_cache_packed_stats(fs_info, &packed, &bytes);
	check(packed >= 64, "and another one packed in its place");
	free(first);
	btrfs_drop_block_cache(fs_info);
	btrfs_cache_packed_stats(fs_info, &packed, &bytes);
	check(!packed && !bytes, "dropping the cache drops the packed leaves");
}

/*
 * A leaf forgotten is gone, packed or whole; the leaves of a tree whose
 * packing stopped are dropped when evicted, those of other trees still packed
 */
static void test_pack_forget(struct btrfs_fs_info *fs_info)
{
	const u32 nr = btrfs_cache_leaf_limit() / NODESIZE + 64;
	struct btrfs_tree_block *eb;
	u64 packed, bytes, before;
	u32 i;

	btrfs_cache_pack_leaves(fs_info);
	for (i = 0; i < nr; i++) {
		eb = new_leaf(fs_info, (u64)(i + 16) << 20, 5, BTRFS_HEADER_FLAG_WRITTEN);
		fill_file_leaf(eb, (u64)i << 30, false);
		check(!btrfs_cache_insert(fs_info, &eb), "leaf %u cached", i);
		btrfs_tree_block_put(eb);
	}
	btrfs_cache_packed_stats(fs_info, &before, &bytes);
	btrfs_cache_forget_leaf(fs_info, 16 << 20);
	btrfs_cache_packed_stats(fs_info, &packed, &bytes);
	check(packed == before - 1 && !btrfs_cache_lookup(fs_info, 16 << 20),
	      "a packed leaf forgotten is not found again (%llu -> %llu packed)",
	      (unsigned long long)before, (unsigned long long)packed);
	btrfs_cache_forget_leaf(fs_info, (u64)(nr - 1 + 16) << 20);
	check(!btrfs_cache_lookup(fs_info, (u64)(nr - 1 + 16) << 20),
	      "a leaf cached whole and forgotten is not found again");
	btrfs_cache_pack_stop(fs_info, 5);
	for (i = nr; i < nr + 64; i++) {
		eb = new_leaf(fs_info, (u64)(i + 16) << 20, 5, BTRFS_HEADER_FLAG_WRITTEN);
		fill_file_leaf(eb, (u64)i << 30, false);
		check(!btrfs_cache_insert(fs_info, &eb), "leaf %u cached", i);
		btrfs_tree_block_put(eb);
	}
	btrfs_cache_packed_stats(fs_info, &before, &bytes);
	check(before == packed, "with packing stopped for tree 5 its evicted leaves are dropped");
	btrfs_cache_pack_stop(fs_info, 0);
	for (i = nr + 64; i < nr + 128; i++) {
		eb = new_leaf(fs_info, (u64)(i + 16) << 20, 5, BTRFS_HEADER_FLAG_WRITTEN);
		fill_file_leaf(eb, (u64)i << 30, false);
		check(!btrfs_cache_insert(fs_info, &eb), "leaf %u cached", i);
		btrfs_tree_block_put(eb);
	}
	btrfs_cache_packed_stats(fs_info, &packed, &bytes);
	check(packed > before, "packing again once no tree is stopped (%llu packed)",
	      (unsigned long long)packed);
	btrfs_drop_block_cache(fs_info);
}

int main(void)
{
	struct btrfs_fs_info *fs_info = calloc(1, sizeof(*fs_info));

	if (!fs_info)
		return 2;
	fs_info->nodesize = NODESIZE;
	fs_info->sectorsize = 4096;
	test_copy(fs_info);
	btrfs_drop_block_cache(fs_info);
	test_whole(fs_info, BTRFS_CSUM_TREE_OBJECTID, BTRFS_HEADER_FLAG_WRITTEN,
		   "a leaf of another tree");
	test_whole(fs_info, BTRFS_EXTENT_TREE_OBJECTID, 0,
		   "a leaf whose items were not checked");
	test_pack(fs_info);
	test_pack_evicted(fs_info);
	test_pack_forget(fs_info);
	btrfs_free_block_cache(fs_info);
	free(fs_info);
	printf("%s\n", unit_failures ? "FAILED" : "PASSED");
	return unit_failures ? 1 : 0;
}
