// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the item checks of kernel-shared/tree-checker.c: leaves
 * built in memory, one item kind at a time, each checked for acceptance
 * or for the exact first error message.  Also crc32c_raw(), whose
 * expected values come from a bitwise CRC-32C in python3, not from ISA-L:
 * hash_extent_data_ref(5, 257, 0) = 0xdfb591fa80d95ea,
 * (5, 258, 0) = 0xdfb591fbbf5f519, (5, 257, 4096) = 0xdfb591f34566f4c.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "common/checksum.h"
#include "kernel-shared/tree-block.h"

#define NODESIZE	4096
#define SECTORSIZE	4096
#define LEAF_START	(1ULL << 20)
#define GENERATION	100
#define EXTENT_DATA_REF	178		/* inline ref types */
#define SHARED_DATA_REF	184
#define TREE_BLOCK_REF	176
#define SHARED_BLOCK_REF	182


/* A leaf under construction: items appended in key order */
struct leaf {
	struct btrfs_tree_block *eb;
	u32 data_end;			/* offset of the lowest item data so far */
};

static struct btrfs_fs_info *new_fs_info(u64 incompat)
{
	struct btrfs_fs_info *fs_info = calloc(1, sizeof(*fs_info));

	if (!fs_info)
		exit(2);
	fs_info->nodesize = NODESIZE;
	fs_info->sectorsize = SECTORSIZE;
	fs_info->generation = GENERATION;
	fs_info->incompat = incompat;
	return fs_info;
}

/* Item contents are checked only in a block flagged as written */
static void leaf_set_flags(struct leaf *l, u64 flags)
{
	struct btrfs_header *h = (struct btrfs_header *)l->eb->data;

	h->flags = htole64(flags);
}

static void leaf_init(struct leaf *l, u64 owner)
{
	l->eb = calloc(1, sizeof(*l->eb) + NODESIZE);
	if (!l->eb)
		exit(2);
	l->eb->start = LEAF_START;
	l->eb->len = NODESIZE;
	l->eb->owner = owner;
	l->data_end = btrfs_leaf_data_size(NODESIZE);
	leaf_set_flags(l, BTRFS_HEADER_FLAG_WRITTEN);
}

static void leaf_add(struct leaf *l, u64 objectid, u8 type, u64 offset,
		     const void *data, u32 size)
{
	struct btrfs_item *item = (struct btrfs_item *)(l->eb->data +
			sizeof(struct btrfs_header)) + l->eb->nritems;

	l->data_end -= size;
	item->key.objectid = htole64(objectid);
	item->key.type = type;
	item->key.offset = htole64(offset);
	item->offset = htole32(l->data_end);
	item->size = htole32(size);
	memcpy(l->eb->data + sizeof(struct btrfs_header) + l->data_end, data, size);
	l->eb->nritems++;
}

/* Check the leaf; @want NULL means it must pass */
static void expect(struct btrfs_fs_info *fs_info, struct leaf *l,
		   const char *what, const char *want)
{
	int ret;

	fs_info->err.err = 0;
	fs_info->err.msg[0] = 0;
	ret = btrfs_check_tree_block(fs_info, l->eb);
	if (!want)
		check(ret == 0, "%s: accepted%s%s", what, ret ? ", got: " : "",
		      ret ? fs_info->err.msg : "");
	else if (ret == -EUCLEAN && !strcmp(fs_info->err.msg, want))
		check(1, "%s: rejected", what);
	else
		check(0, "%s: rejected\n  want: %s\n  got:  %s", what, want,
		      ret ? fs_info->err.msg : "(accepted)");
	free(l->eb);
}

/* Little-endian writers for item payloads */
static u8 *put8(u8 *p, u8 v)
{
	*p = v;
	return p + 1;
}

static u8 *put32(u8 *p, u32 v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
	return p + 4;
}

static u8 *put64(u8 *p, u64 v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
	return p + 8;
}

static u8 *extent_head(u8 *p, u64 refs, u64 gen, u64 flags)
{
	p = put64(p, refs);
	p = put64(p, gen);
	return put64(p, flags);
}

static u8 *data_ref(u8 *p, u64 root, u64 objectid, u64 offset, u32 count)
{
	p = put8(p, EXTENT_DATA_REF);
	p = put64(p, root);
	p = put64(p, objectid);
	p = put64(p, offset);
	return put32(p, count);
}

static void test_crc32c_raw(void)
{
	u32 crc = crc32c_raw(~0U, "123456789", 9);

	check(~crc == 0xe3069283, "crc32c_raw: ~crc32c_raw(~0, \"123456789\") = 0x%08x", ~crc);
	crc = crc32c_raw(0, "123456789", 9);
	check(crc == 0x58e3fa20, "crc32c_raw: seed 0, no inversion = 0x%08x", crc);
	crc = crc32c_raw(0x12345678, "btrfs", 5);
	check(crc == 0xd7eae67c, "crc32c_raw: seed 0x12345678 = 0x%08x", crc);
}

static void test_extent_data_refs(struct btrfs_fs_info *fs_info)
{
	u8 buf[256], *p;
	struct leaf l;

	/* Within a type the kernel keeps refs in descending hash order */
	p = extent_head(buf, 3, 10, 1);
	p = data_ref(p, 5, 258, 0, 1);		/* 0xdfb591fbbf5f519 */
	p = data_ref(p, 5, 257, 0, 1);		/* 0xdfb591fa80d95ea */
	p = data_ref(p, 5, 257, 4096, 1);	/* 0xdfb591f34566f4c */
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 8192, buf, p - buf);
	expect(fs_info, &l, "data refs in descending hash order", NULL);

	p = extent_head(buf, 2, 10, 1);
	p = data_ref(p, 5, 257, 0, 1);
	p = data_ref(p, 5, 258, 0, 1);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 8192, buf, p - buf);
	expect(fs_info, &l, "data refs in ascending hash order",
	       "corrupt leaf: block=1048576 slot=0 extent bytenr=1048576 len=8192 inline ref out-of-order: has type 178 offset 5 seq 0xdfb591fbbf5f519, prev type 178 seq 0xdfb591fa80d95ea");

	/* Shared data ref (184) after data refs (178), counts summed */
	p = extent_head(buf, 2, 10, 1);
	p = data_ref(p, 5, 257, 0, 1);
	p = put8(p, SHARED_DATA_REF);
	p = put64(p, 3 << 20);
	p = put32(p, 2);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 4096, buf, p - buf);
	expect(fs_info, &l, "inline refs holding more than refs",
	       "corrupt leaf: block=1048576 slot=0 extent bytenr=1048576 len=4096 invalid extent refs, have 2 expect >= inline 3");

	p = extent_head(buf, 1, 10, 1);
	p = data_ref(p, 2, 257, 0, 1);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 4096, buf, p - buf);
	expect(fs_info, &l, "data ref owned by the extent tree",
	       "corrupt leaf: block=1048576 slot=0 extent bytenr=1048576 len=4096 invalid data ref root value 2");

	p = extent_head(buf, 1, 10, 1);
	p = data_ref(p, 5, 257, 0, 1);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 4096, buf, p - buf - 1);
	expect(fs_info, &l, "data ref cut short by the item end",
	       "corrupt leaf: block=1048576 slot=0 extent bytenr=1048576 len=4096 inline ref item overflows extent item, ptr 4068 iref size 29 end 4096");
}

static void test_tree_block_extents(struct btrfs_fs_info *fs_info)
{
	u8 buf[256], *p;
	struct leaf l;

	/* Non-skinny tree block: key, level, then refs 176 < 182 */
	p = extent_head(buf, 2, 10, 2);
	memset(p, 0, 17);
	p = put8(p + 17, 0);
	p = put8(p, TREE_BLOCK_REF);
	p = put64(p, 5);
	p = put8(p, SHARED_BLOCK_REF);
	p = put64(p, 2 << 20);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, NODESIZE, buf, p - buf);
	leaf_add(&l, 2 << 20, BTRFS_METADATA_ITEM_KEY, 1, buf, 24);
	expect(fs_info, &l, "tree block extent and a refless metadata item", NULL);

	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, NODESIZE, buf, 24);
	expect(fs_info, &l, "tree block extent without its tree block info",
	       "corrupt leaf: block=1048576 slot=0 extent bytenr=1048576 len=4096 invalid extent item size, padding bytes found");

	p = extent_head(buf, 1, 10, 2);
	p = put8(p, 175);
	p = put64(p, 5);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_METADATA_ITEM_KEY, 0, buf, p - buf);
	expect(fs_info, &l, "unknown inline ref type",
	       "corrupt leaf: block=1048576 slot=0 extent bytenr=1048576 len=4096 unknown inline ref type: 175");

	p = extent_head(buf, 1, 10, 2);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_METADATA_ITEM_KEY, 0, buf, 24);
	leaf_add(&l, (1 << 20) + 2048, BTRFS_METADATA_ITEM_KEY, 0, buf, 24);
	expect(fs_info, &l, "metadata item not aligned",
	       "corrupt leaf: root=2 block=1048576 slot=1, invalid key objectid, have 1050624 expect to be aligned to 4096");

	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 3 * NODESIZE, buf, 24);
	expect(fs_info, &l, "tree block extent longer than a node",
	       "corrupt leaf: block=1048576 slot=0 extent bytenr=1048576 len=12288 invalid extent length, have 12288 expect 4096");

	p = extent_head(buf, 1, GENERATION + 2, 1);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 4096, buf, 24);
	expect(fs_info, &l, "extent generation from the future",
	       "corrupt leaf: block=1048576 slot=0 extent bytenr=1048576 len=4096 invalid generation, have 102 expect (0, 101]");

	p = extent_head(buf, 1, 10, 1);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 8192, buf, 24);
	leaf_add(&l, (1 << 20) + 4096, BTRFS_EXTENT_ITEM_KEY, 4096, buf, 24);
	expect(fs_info, &l, "overlapping data extents",
	       "corrupt leaf: block=1048576 slot=1 extent bytenr=1052672 len=4096 previous extent [1048576 168 8192] overlaps current extent [1052672 168 4096]");
}

static void test_skinny_feature(void)
{
	struct btrfs_fs_info *fs_info = new_fs_info(0);
	u8 buf[24];
	struct leaf l;

	extent_head(buf, 1, 10, 2);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_METADATA_ITEM_KEY, 0, buf, 24);
	expect(fs_info, &l, "metadata item without SKINNY_METADATA",
	       "corrupt leaf: root=2 block=1048576 slot=0, invalid key type, METADATA_ITEM type invalid when SKINNY_METADATA feature disabled");
	free(fs_info);
}

/* A root item: @size 239 (legacy) or 439 */
static void root_item(u8 *buf, u32 size, u64 gen, u64 bytenr, u8 level,
		      u8 drop_level, u64 flags)
{
	struct btrfs_root_item_head *ri = (void *)buf;

	memset(buf, 0, size);
	ri->generation = htole64(gen);
	ri->bytenr = htole64(bytenr);
	ri->flags = htole64(flags);
	ri->level = level;
	ri->drop_level = drop_level;
	if (size > sizeof(*ri))
		put64(buf + sizeof(*ri), gen);
}

static void test_root_items(struct btrfs_fs_info *fs_info)
{
	u8 buf[439];
	struct leaf l;

	leaf_init(&l, 1);
	root_item(buf, 439, 90, 8 << 20, 1, 0, 1);
	leaf_add(&l, 2, BTRFS_ROOT_ITEM_KEY, 0, buf, 439);
	root_item(buf, 239, 90, 9 << 20, 0, 0, 0);
	leaf_add(&l, 5, BTRFS_ROOT_ITEM_KEY, 0, buf, 239);
	root_item(buf, 439, 90, 10 << 20, 0, 0, 0);
	leaf_add(&l, (u64)-8, BTRFS_ROOT_ITEM_KEY, 256, buf, 439);
	expect(fs_info, &l, "root items, legacy and full, reloc of a subvolume", NULL);

	leaf_init(&l, 1);
	leaf_add(&l, 2, BTRFS_ROOT_ITEM_KEY, 0, buf, 300);
	expect(fs_info, &l, "root item of odd size",
	       "corrupt leaf: root=1 block=1048576 slot=0, invalid root item size, have 300 expect 439 or 239");

	leaf_init(&l, 1);
	root_item(buf, 439, 90, 8 << 20, 0, 8, 0);
	leaf_add(&l, 2, BTRFS_ROOT_ITEM_KEY, 0, buf, 439);
	expect(fs_info, &l, "root drop_level 8",
	       "corrupt leaf: root=1 block=1048576 slot=0, invalid root level, have 8 expect [0, 7]");

	leaf_init(&l, 1);
	root_item(buf, 439, 90, 8 << 20, 0, 0, 1ULL << 2);
	leaf_add(&l, 2, BTRFS_ROOT_ITEM_KEY, 0, buf, 439);
	expect(fs_info, &l, "root flags unknown bit",
	       "corrupt leaf: root=1 block=1048576 slot=0, invalid root flags, have 0x4 expect mask 0x1000000000001");

	leaf_init(&l, 1);
	root_item(buf, 439, 102, 8 << 20, 0, 0, 0);
	leaf_add(&l, 2, BTRFS_ROOT_ITEM_KEY, 0, buf, 439);
	expect(fs_info, &l, "root generation from the future",
	       "corrupt leaf: root=1 block=1048576 slot=0, invalid root generation, have 102 expect (0, 101]");

	leaf_init(&l, 1);
	root_item(buf, 439, 90, 10 << 20, 0, 0, 0);
	leaf_add(&l, (u64)-8, BTRFS_ROOT_ITEM_KEY, 2, buf, 439);
	expect(fs_info, &l, "reloc tree of the extent tree",
	       "corrupt leaf: root=1 block=1048576 slot=0, invalid reloc tree for root 2, root id is not a subvolume tree");

	/* older kernels made one, 6.5+ refuse it (btrfs check accepts it) */
	leaf_init(&l, 1);
	root_item(buf, 439, 90, 10 << 20, 0, 0, 0);
	leaf_add(&l, (u64)-8, BTRFS_ROOT_ITEM_KEY, (u64)-9, buf, 439);
	expect(fs_info, &l, "reloc tree of the data reloc tree",
	       "corrupt leaf: root=1 block=1048576 slot=0, invalid reloc tree for root -9, root id is not a subvolume tree");
}

static void test_dev_items(struct btrfs_fs_info *fs_info)
{
	struct btrfs_dev_item di = { 0 };
	u8 de[48], *p;
	struct leaf l;

	di.devid = htole64(1);
	di.total_bytes = htole64(1 << 30);
	di.bytes_used = htole64(2ULL << 30);
	leaf_init(&l, 3);
	leaf_add(&l, 1, BTRFS_DEV_ITEM_KEY, 1, &di, sizeof(di));
	expect(fs_info, &l, "dev item using more than its size",
	       "corrupt leaf: root=3 block=1048576 slot=0 devid=1 invalid bytes used: have 2147483648 expect [0, 1073741824]");

	leaf_init(&l, 3);
	leaf_add(&l, 1, BTRFS_DEV_ITEM_KEY, 2, &di, sizeof(di) - 1);
	expect(fs_info, &l, "short dev item",
	       "corrupt leaf: root=3 block=1048576 slot=0 devid=1 invalid item size: has 97 expect 98");

	p = put64(de, 3);
	p = put64(p, 256);
	p = put64(p, 1 << 20);
	p = put64(p, 8 << 20);
	memset(p, 0, 16);
	leaf_init(&l, 4);
	leaf_add(&l, 1, BTRFS_DEV_EXTENT_KEY, 1 << 20, de, 48);
	leaf_add(&l, 1, BTRFS_DEV_EXTENT_KEY, 8 << 20, de, 48);
	expect(fs_info, &l, "overlapping dev extents",
	       "corrupt leaf: root=4 block=1048576 slot=1, dev extent overlap, prev offset 1048576 len 8388608 current offset 8388608");

	leaf_init(&l, 4);
	leaf_add(&l, 1, BTRFS_DEV_EXTENT_KEY, 1 << 20, de, 40);
	expect(fs_info, &l, "short dev extent",
	       "corrupt leaf: root=4 block=1048576 slot=0, invalid dev extent item size, has 40 expect 48");

	put64(de + 24, 4097);
	leaf_init(&l, 4);
	leaf_add(&l, 1, BTRFS_DEV_EXTENT_KEY, 1 << 20, de, 48);
	expect(fs_info, &l, "dev extent length not aligned",
	       "corrupt leaf: root=4 block=1048576 slot=0, invalid dev extent length, has 4097 not aligned to 4096");
}

static void test_chunk_in_leaf(struct btrfs_fs_info *fs_info)
{
	u8 chunk[80] = { 0 };
	struct leaf l;

	/* num_stripes 0 in a leaf of the root tree */
	leaf_init(&l, 1);
	leaf_add(&l, 256, BTRFS_CHUNK_ITEM_KEY, 1 << 20, chunk, 48);
	expect(fs_info, &l, "chunk item without stripes",
	       "corrupt leaf: root=3 block=1048576 slot=0 chunk_start=1048576, invalid chunk num_stripes, have 0");
}

int main(void)
{
	struct btrfs_fs_info *fs_info =
		new_fs_info(BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA);

	test_crc32c_raw();
	test_extent_data_refs(fs_info);
	test_tree_block_extents(fs_info);
	test_skinny_feature();
	test_root_items(fs_info);
	test_dev_items(fs_info);
	test_chunk_in_leaf(fs_info);
	free(fs_info);
	printf("%s\n", unit_failures ? "FAILED" : "PASSED");
	return unit_failures ? 1 : 0;
}
