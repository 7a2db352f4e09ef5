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
#include "kernel-shared/disk-io.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/tree-checker.h"

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
	fs_info->csum_size = 4;			/* crc32c */
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
	l->eb->data = (u8 *)(l->eb + 1);
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
	ret = btrfs_check_tree_block(fs_info, &fs_info->err, l->eb);
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

/*
 * After expect(): the error record names @field with @found, and with
 * @has_expected the one value the check wanted.
 */
static void expect_field(const struct btrfs_fs_info *fs_info, const char *what,
			 const char *field, u64 found, bool has_expected, u64 expected)
{
	const struct btrfs_error_loc *loc = &fs_info->err.loc;

	check(loc->field && !strcmp(loc->field, field) && loc->has_found &&
	      loc->found == found && loc->has_values == has_expected &&
	      (!has_expected || loc->expected == expected),
	      "%s: the record has %s %llu%s (got %s %llu, expected %s%llu)", what,
	      field, (unsigned long long)found, has_expected ? " and the value wanted" : "",
	      loc->field ? loc->field : "(none)", (unsigned long long)loc->found,
	      loc->has_values ? "" : "none ", (unsigned long long)loc->expected);
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
	expect_field(fs_info, "extent length", "key.offset", 12288, true, 4096);

	p = extent_head(buf, 1, GENERATION + 2, 1);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 4096, buf, 24);
	expect(fs_info, &l, "extent generation from the future",
	       "corrupt leaf: block=1048576 slot=0 extent bytenr=1048576 len=4096 invalid generation, have 102 expect (0, 101]");
	expect_field(fs_info, "extent generation", "generation", 102, false, 0);

	p = extent_head(buf, 1, 10, 1);
	leaf_init(&l, 2);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 8192, buf, 24);
	leaf_add(&l, (1 << 20) + 4096, BTRFS_EXTENT_ITEM_KEY, 4096, buf, 24);
	expect(fs_info, &l, "overlapping data extents",
	       "corrupt leaf: block=1048576 slot=1 extent bytenr=1052672 len=4096 previous extent [1048576 168 8192] overlaps current extent [1052672 168 4096]");
}

/*
 * Runs of plain data extent items (one inline EXTENT_DATA_REF) are checked
 * by a loop of their own (plain_data_extent_run()); an item of the run
 * that fails anything must still be reported at its slot in the kernel's
 * words, as when each item went through the per-type check.  A leaf of
 * @nr such items 8 KiB apart from 1 MiB, each 4 KiB long, root 5, inode
 * 257, count 1, with the item at @bad changed by @fault.
 */
enum run_fault { RUN_NONE, RUN_SAME_KEY, RUN_OVERLAP, RUN_COUNT_0, RUN_ROOT_0,
		 RUN_ITEM_END, RUN_FLAGS };

static void plain_run_leaf(struct leaf *l, u32 nr, u32 bad, enum run_fault fault)
{
	u8 buf[53], *p;
	u32 i;

	leaf_init(l, 2);
	for (i = 0; i < nr; i++) {
		u64 bytenr = (1 << 20) + (u64)i * 8192, len = 4096;
		u64 root = 5, flags = 1;
		u32 count = 1;

		if (i == bad && fault == RUN_SAME_KEY)
			bytenr -= 8192;
		if (i == bad && fault == RUN_OVERLAP)
			bytenr -= 4096;	/* 4 KiB into the one before, made 8 KiB long */
		if (i + 1 == bad && fault == RUN_OVERLAP)
			len = 8192;
		if (i == bad && fault == RUN_COUNT_0)
			count = 0;
		if (i == bad && fault == RUN_ROOT_0)
			root = 0;
		if (i == bad && fault == RUN_FLAGS)
			flags = 1 | 2;			/* DATA and TREE_BLOCK */
		p = extent_head(buf, 1, 10, flags);
		data_ref(p, root, 257, 0, count);
		leaf_add(l, bytenr, BTRFS_EXTENT_ITEM_KEY, len, buf, sizeof(buf));
		if (i == bad && fault == RUN_ITEM_END) {
			struct btrfs_item *item = (struct btrfs_item *)(l->eb->data +
					sizeof(struct btrfs_header)) + i;

			item->offset = htole32(le32toh(item->offset) - 1);
		}
	}
}

static void test_plain_extent_runs(struct btrfs_fs_info *fs_info)
{
	struct btrfs_item *item;
	struct leaf l;
	u32 nr = 0;

	plain_run_leaf(&l, 10, 10, RUN_NONE);
	expect(fs_info, &l, "a run of plain data extents", NULL);
	plain_run_leaf(&l, 10, 5, RUN_SAME_KEY);
	expect(fs_info, &l, "a run with a key twice",
	       "corrupt leaf: root=2 block=1048576 slot=5, bad key order, prev (1081344 168 4096) current (1081344 168 4096)");
	plain_run_leaf(&l, 10, 5, RUN_OVERLAP);
	expect(fs_info, &l, "a run with an extent overlapping the one before",
	       "corrupt leaf: block=1048576 slot=5 extent bytenr=1085440 len=4096 previous extent [1081344 168 8192] overlaps current extent [1085440 168 4096]");
	plain_run_leaf(&l, 10, 5, RUN_COUNT_0);
	expect(fs_info, &l, "a run with a data ref of count 0",
	       "corrupt leaf: block=1048576 slot=5 extent bytenr=1089536 len=4096 invalid data ref count, should have non-zero value");
	plain_run_leaf(&l, 10, 5, RUN_ROOT_0);
	expect(fs_info, &l, "a run with a data ref of root 0",
	       "corrupt leaf: block=1048576 slot=5 extent bytenr=1089536 len=4096 invalid data ref root value 0");
	plain_run_leaf(&l, 10, 5, RUN_FLAGS);
	expect(fs_info, &l, "a run with a data extent flagged tree block",
	       "corrupt leaf: block=1048576 slot=5 extent bytenr=1089536 len=4096 invalid extent flag, have 0x3 expect 1 bit set in 0x3");
	plain_run_leaf(&l, 10, 5, RUN_ITEM_END);
	expect(fs_info, &l, "a run with an item one byte off",
	       "corrupt leaf: root=2 block=1048576 slot=5, unexpected item end, have 3729 expect 3730");

	/*
	 * Item headers meeting the data in the middle of a run: as many
	 * items as fit (25 + 53 bytes each), then one more whose data would
	 * lie under the headers (its header written alone: its data bytes
	 * are the headers')
	 */
	while ((nr + 1) * (sizeof(struct btrfs_item) + 53) <= btrfs_leaf_data_size(NODESIZE))
		nr++;
	plain_run_leaf(&l, nr, nr, RUN_NONE);
	item = (struct btrfs_item *)(l.eb->data + sizeof(struct btrfs_header)) + nr;
	item->key.objectid = htole64((1 << 20) + (u64)nr * 8192);
	item->key.type = BTRFS_EXTENT_ITEM_KEY;
	item->key.offset = htole64(4096);
	item->offset = htole32(l.data_end - 53);
	item->size = htole32(53);
	l.eb->nritems++;
	expect(fs_info, &l, "a run whose last item's data meets the headers",
	       "corrupt leaf: root=2 block=1048576 slot=51, slot overlaps with its data, item data starts at 1239, header ends at 1300");
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
	expect_field(fs_info, "root drop_level", "drop_level", 8, false, 0);

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
	expect_field(fs_info, "dev item bytes used", "bytes_used", 2147483648ULL, false, 0);

	leaf_init(&l, 3);
	leaf_add(&l, 1, BTRFS_DEV_ITEM_KEY, 2, &di, sizeof(di) - 1);
	expect(fs_info, &l, "short dev item",
	       "corrupt leaf: root=3 block=1048576 slot=0 devid=1 invalid item size: has 97 expect 98");
	expect_field(fs_info, "short dev item", "item size", 97, true, 98);

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
	check(fs_info->err.loc.field && !strcmp(fs_info->err.loc.field, "item size") &&
	      fs_info->err.loc.has_values && fs_info->err.loc.found == 40 &&
	      fs_info->err.loc.expected == 48 && fs_info->err.loc.slot == 0 &&
	      fs_info->err.loc.logical == 1048576 && fs_info->err.loc.tree == 4,
	      "short dev extent: the record names the field, 40 found, 48 expected");

	put64(de, 7);
	leaf_init(&l, 4);
	leaf_add(&l, 1, BTRFS_DEV_EXTENT_KEY, 1 << 20, de, 48);
	expect(fs_info, &l, "dev extent of another chunk tree",
	       "corrupt leaf: root=4 block=1048576 slot=0, invalid dev extent chunk tree id, has 7 expect 3");
	check(fs_info->err.loc.field && !strcmp(fs_info->err.loc.field, "chunk_tree") &&
	      fs_info->err.loc.found == 7 && fs_info->err.loc.expected == 3,
	      "dev extent chunk tree: the record has 7 found, 3 expected");
	put64(de, BTRFS_CHUNK_TREE_OBJECTID);

	put64(de + 24, 4097);
	leaf_init(&l, 4);
	leaf_add(&l, 1, BTRFS_DEV_EXTENT_KEY, 1 << 20, de, 48);
	expect(fs_info, &l, "dev extent length not aligned",
	       "corrupt leaf: root=4 block=1048576 slot=0, invalid dev extent length, has 4097 not aligned to 4096");
	expect_field(fs_info, "dev extent length", "length", 4097, false, 0);
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

/*
 * fs-tree items.  Name hashes are crc32c(~1) of the name, from the same
 * bitwise python3 CRC-32C as above: "file" 0x6e1f90f4, "user.x"
 * 0x092d3ea3.
 */
#define HASH_FILE	0x6e1f90f4ULL
#define HASH_USER_X	0x092d3ea3ULL
#define FS_TREE		5
#define LAST_FREE	"18446744073709551360"

static u8 *put16(u8 *p, u16 v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
	return p + 2;
}

/* An inode item: generation, transid, nlink, mode, flags; the rest zero */
static u32 inode_item(u8 *buf, u64 gen, u64 transid, u32 nlink, u32 mode, u64 flags)
{
	memset(buf, 0, 160);
	put64(buf, gen);
	put64(buf + 8, transid);
	put32(buf + 40, nlink);
	put32(buf + 52, mode);
	put64(buf + 64, flags);
	return 160;
}

static u8 *dir_entry(u8 *p, u64 loc_obj, u8 loc_type, u64 loc_off, u8 type,
		     const char *name, u16 name_len, u16 data_len)
{
	p = put64(p, loc_obj);
	p = put8(p, loc_type);
	p = put64(p, loc_off);
	p = put64(p, GENERATION);		/* transid */
	p = put16(p, data_len);
	p = put16(p, name_len);
	p = put8(p, type);
	memcpy(p, name, name_len);
	p += name_len;
	memset(p, 'v', data_len);
	return p + data_len;
}

static u8 *inode_ref(u8 *p, u64 index, const char *name)
{
	u16 len = strlen(name);

	p = put64(p, index);
	p = put16(p, len);
	memcpy(p, name, len);
	return p + len;
}

static u8 *inode_extref(u8 *p, u64 parent, u64 index, const char *name)
{
	p = put64(p, parent);
	return inode_ref(p, index, name);
}

/* A file extent item; an inline one stops after its 21-byte header */
static u32 file_extent(u8 *buf, u8 type, u8 compression, u64 ram,
		       u64 disk_bytenr, u64 disk_num, u64 offset, u64 num)
{
	u8 *p = buf;

	p = put64(p, GENERATION);
	p = put64(p, ram);
	p = put8(p, compression);
	p = put8(p, 0);				/* encryption */
	p = put16(p, 0);
	p = put8(p, type);
	if (type == BTRFS_FILE_EXTENT_INLINE)
		return p - buf;
	p = put64(p, disk_bytenr);
	p = put64(p, disk_num);
	p = put64(p, offset);
	p = put64(p, num);
	return p - buf;
}

/* A regular 4 KiB extent at @disk_bytenr */
static u32 reg_extent(u8 *buf, u64 disk_bytenr)
{
	return file_extent(buf, BTRFS_FILE_EXTENT_REG, 0, 4096, disk_bytenr,
			   4096, 0, 4096);
}

/* One leaf of a subvolume with an item of every fs-tree type, all valid */
static void test_valid_fs_leaf(struct btrfs_fs_info *fs_info)
{
	u8 buf[512], *p;
	struct leaf l;
	u32 size;

	leaf_init(&l, FS_TREE);
	size = inode_item(buf, 5, 5, 1, 040755, 0);
	leaf_add(&l, 256, BTRFS_INODE_ITEM_KEY, 0, buf, size);
	p = inode_ref(buf, 0, "..");
	leaf_add(&l, 256, BTRFS_INODE_REF_KEY, 256, buf, p - buf);
	p = dir_entry(buf, 257, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_REG_FILE, "file", 4, 0);
	leaf_add(&l, 256, BTRFS_DIR_ITEM_KEY, HASH_FILE, buf, p - buf);
	/* An fscrypt name (bit 7 of the type), and a subvolume entry */
	p = dir_entry(buf, 257, BTRFS_INODE_ITEM_KEY, 0,
		      BTRFS_FT_REG_FILE | BTRFS_FT_ENCRYPTED, "file", 4, 0);
	leaf_add(&l, 256, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf);
	p = dir_entry(buf, 256, BTRFS_ROOT_ITEM_KEY, (u64)-1, BTRFS_FT_DIR, "sub", 3, 0);
	leaf_add(&l, 256, BTRFS_DIR_INDEX_KEY, 3, buf, p - buf);
	/* Unknown ro-compat flags pass: the referee mounts read-only */
	size = inode_item(buf, 5, 101, 2, 0100644, 1ULL << 33);
	leaf_add(&l, 257, BTRFS_INODE_ITEM_KEY, 0, buf, size);
	p = inode_ref(buf, 2, "file");
	p = inode_ref(p, 4, "hardlink");
	leaf_add(&l, 257, BTRFS_INODE_REF_KEY, 256, buf, p - buf);
	p = inode_extref(buf, 300, 3, "file");
	leaf_add(&l, 257, BTRFS_INODE_EXTREF_KEY, 12345, buf, p - buf);
	p = dir_entry(buf, 0, 0, 0, BTRFS_FT_XATTR, "user.x", 6, 5);
	leaf_add(&l, 257, BTRFS_XATTR_ITEM_KEY, HASH_USER_X, buf, p - buf);
	size = reg_extent(buf, 1 << 20);
	leaf_add(&l, 257, BTRFS_EXTENT_DATA_KEY, 0, buf, size);
	size = file_extent(buf, BTRFS_FILE_EXTENT_PREALLOC, 0, 8192, 2 << 20, 8192, 0, 8192);
	leaf_add(&l, 257, BTRFS_EXTENT_DATA_KEY, 4096, buf, size);
	size = inode_item(buf, 5, 5, 1, 0120777, 0);
	leaf_add(&l, 258, BTRFS_INODE_ITEM_KEY, 0, buf, size);
	/* Uncompressed inline: the data fills the item; it ends at 4096 */
	size = file_extent(buf, BTRFS_FILE_EXTENT_INLINE, 0, 5, 0, 0, 0, 0);
	memcpy(buf + size, "hello", 5);
	leaf_add(&l, 258, BTRFS_EXTENT_DATA_KEY, 0, buf, size + 5);
	size = file_extent(buf, BTRFS_FILE_EXTENT_REG, 0, 4096, 0, 0, 0, 4096);
	leaf_add(&l, 258, BTRFS_EXTENT_DATA_KEY, 4096, buf, size);
	size = inode_item(buf, 5, 5, 1, 060600, 0);
	leaf_add(&l, 259, BTRFS_INODE_ITEM_KEY, 0, buf, size);
	/* Compressed inline: ram_bytes is the uncompressed length */
	size = file_extent(buf, BTRFS_FILE_EXTENT_INLINE, 3, 4000, 0, 0, 0, 0);
	leaf_add(&l, 259, BTRFS_EXTENT_DATA_KEY, 0, buf, size + 7);
	expect(fs_info, &l, "fs leaf with every fs-tree item type", NULL);

	/* Log trees do not keep an inode's items behind its INODE_ITEM */
	leaf_init(&l, BTRFS_TREE_LOG_OBJECTID);
	size = reg_extent(buf, 1 << 20);
	leaf_add(&l, 256, BTRFS_INODE_ITEM_KEY, 0, buf, inode_item(buf, 5, 5, 1, 040755, 0));
	leaf_add(&l, 257, BTRFS_EXTENT_DATA_KEY, 0, buf, reg_extent(buf, 1 << 20));
	expect(fs_info, &l, "log tree extent of an inode without its inode item", NULL);
}

/* A leaf of the fs tree: inode 257's item, then one extent item to test */
static void extent_leaf(struct leaf *l, u64 offset, const void *fi, u32 size)
{
	u8 buf[160];

	leaf_init(l, FS_TREE);
	leaf_add(l, 257, BTRFS_INODE_ITEM_KEY, 0, buf, inode_item(buf, 5, 5, 1, 0100644, 0));
	leaf_add(l, 257, BTRFS_EXTENT_DATA_KEY, offset, fi, size);
}

#define FE_PREFIX(slot, off) \
	"corrupt leaf: root=5 block=1048576 slot=" #slot " ino=257 file_offset=" #off ", "

static void test_file_extents(struct btrfs_fs_info *fs_info)
{
	u8 buf[128], ii[160];
	struct leaf l;
	u32 size;

	size = reg_extent(buf, 1 << 20);
	extent_leaf(&l, 1, buf, size);
	expect(fs_info, &l, "file extent at an unaligned offset",
	       FE_PREFIX(1, 1) "unaligned file_offset for file extent, have 1 should be aligned to 4096");

	leaf_init(&l, FS_TREE);
	leaf_add(&l, 257, BTRFS_INODE_ITEM_KEY, 0, ii, inode_item(ii, 5, 5, 1, 0100644, 0));
	leaf_add(&l, 258, BTRFS_EXTENT_DATA_KEY, 0, buf, size);
	expect(fs_info, &l, "file extent of an inode without its inode item",
	       "corrupt leaf: root=5 block=1048576 slot=1 ino=258, invalid previous key objectid, have 257 expect 258");

	extent_leaf(&l, 0, buf, 20);
	expect(fs_info, &l, "file extent shorter than its header",
	       FE_PREFIX(1, 0) "invalid item size, have 20 expect [21, 4096)");

	buf[20] = 3;
	extent_leaf(&l, 0, buf, size);
	expect(fs_info, &l, "file extent of type 3",
	       FE_PREFIX(1, 0) "invalid type for file extent, have 3 expect range [0, 2]");

	size = reg_extent(buf, 1 << 20);
	buf[16] = 4;
	extent_leaf(&l, 0, buf, size);
	expect(fs_info, &l, "file extent compressed by method 4",
	       FE_PREFIX(1, 0) "invalid compression for file extent, have 4 expect range [0, 3]");

	size = reg_extent(buf, 1 << 20);
	buf[17] = 1;
	extent_leaf(&l, 0, buf, size);
	expect(fs_info, &l, "encrypted file extent",
	       FE_PREFIX(1, 0) "invalid encryption for file extent, have 1 expect 0");

	size = file_extent(buf, BTRFS_FILE_EXTENT_INLINE, 0, 5, 0, 0, 0, 0);
	extent_leaf(&l, 4096, buf, size + 5);
	expect(fs_info, &l, "inline extent after the file start",
	       FE_PREFIX(1, 4096) "invalid file_offset for inline file extent, have 4096 expect 0");

	extent_leaf(&l, 0, buf, size + 6);
	expect(fs_info, &l, "inline extent longer than its ram_bytes",
	       FE_PREFIX(1, 0) "invalid ram_bytes for uncompressed inline extent, have 27 expect 26");
	expect_field(fs_info, "inline extent size", "item size", 27, true, 26);

	size = reg_extent(buf, 1 << 20);
	extent_leaf(&l, 0, buf, size - 1);
	expect(fs_info, &l, "regular extent one byte short",
	       FE_PREFIX(1, 0) "invalid item size for reg/prealloc file extent, have 52 expect 53");

	size = file_extent(buf, BTRFS_FILE_EXTENT_REG, 0, 4095, 1 << 20, 4096, 0, 4096);
	extent_leaf(&l, 0, buf, size);
	expect(fs_info, &l, "regular extent ram_bytes not aligned",
	       FE_PREFIX(1, 0) "invalid ram_bytes for file extent, have 4095, should be aligned to 4096");

	size = reg_extent(buf, (1 << 20) + 1);
	extent_leaf(&l, 0, buf, size);
	expect(fs_info, &l, "regular extent disk_bytenr not aligned",
	       FE_PREFIX(1, 0) "invalid disk_bytenr for file extent, have 1048577, should be aligned to 4096");
	expect_field(fs_info, "disk_bytenr alignment", "disk_bytenr", 1048577, false, 0);

	size = file_extent(buf, BTRFS_FILE_EXTENT_REG, 0, 4096, 1 << 20, 4096, 0, 100);
	extent_leaf(&l, 0, buf, size);
	expect(fs_info, &l, "regular extent num_bytes not aligned",
	       FE_PREFIX(1, 0) "invalid num_bytes for file extent, have 100, should be aligned to 4096");

	size = file_extent(buf, BTRFS_FILE_EXTENT_REG, 0, 8192, 1 << 20, 8192, 0, 8192);
	extent_leaf(&l, -4096ULL, buf, size);
	expect(fs_info, &l, "regular extent ending past 2^64",
	       FE_PREFIX(1, 18446744073709547520) "extent end overflow, have file offset 18446744073709547520 extent num bytes 8192");

	/* The overlap is reported at the earlier extent */
	extent_leaf(&l, 0, buf, size);
	leaf_add(&l, 257, BTRFS_EXTENT_DATA_KEY, 4096, buf, reg_extent(buf, 3 << 20));
	expect(fs_info, &l, "file extents overlapping",
	       FE_PREFIX(1, 0) "file extent end range (8192) goes beyond start offset (4096) of the next file extent");
	expect_field(fs_info, "file extent overlap", "extent end", 8192, false, 0);
}

#define CSUM_PREFIX(slot) "corrupt leaf: root=7 block=1048576 slot=" #slot ", "

static void test_csum_items(struct btrfs_fs_info *fs_info)
{
	const u64 csum_id = BTRFS_EXTENT_CSUM_OBJECTID;
	u8 csums[16] = { 0 };
	struct leaf l;

	leaf_init(&l, BTRFS_CSUM_TREE_OBJECTID);
	leaf_add(&l, csum_id, BTRFS_EXTENT_CSUM_KEY, 1 << 20, csums, 8);
	leaf_add(&l, csum_id, BTRFS_EXTENT_CSUM_KEY, (1 << 20) + 8192, csums, 4);
	expect(fs_info, &l, "adjacent csum items", NULL);

	leaf_init(&l, BTRFS_CSUM_TREE_OBJECTID);
	leaf_add(&l, 5, BTRFS_EXTENT_CSUM_KEY, 1 << 20, csums, 4);
	expect(fs_info, &l, "csum item of objectid 5",
	       CSUM_PREFIX(0) "invalid key objectid for csum item, have 5 expect 18446744073709551606");
	expect_field(fs_info, "csum objectid", "key.objectid", 5, true, BTRFS_EXTENT_CSUM_OBJECTID);

	leaf_init(&l, BTRFS_CSUM_TREE_OBJECTID);
	leaf_add(&l, csum_id, BTRFS_EXTENT_CSUM_KEY, (1 << 20) + 512, csums, 4);
	expect(fs_info, &l, "csum item at an unaligned start",
	       CSUM_PREFIX(0) "unaligned key offset for csum item, have 1049088 should be aligned to 4096");

	leaf_init(&l, BTRFS_CSUM_TREE_OBJECTID);
	leaf_add(&l, csum_id, BTRFS_EXTENT_CSUM_KEY, 1 << 20, csums, 6);
	expect(fs_info, &l, "csum item of 1.5 checksums",
	       CSUM_PREFIX(0) "unaligned item size for csum item, have 6 should be aligned to 4");

	leaf_init(&l, BTRFS_CSUM_TREE_OBJECTID);
	leaf_add(&l, csum_id, BTRFS_EXTENT_CSUM_KEY, 1 << 20, csums, 8);
	leaf_add(&l, csum_id, BTRFS_EXTENT_CSUM_KEY, (1 << 20) + 4096, csums, 4);
	expect(fs_info, &l, "overlapping csum items",
	       CSUM_PREFIX(0) "csum end range (1056768) goes beyond the start range (1052672) of the next csum item");
}

/* A leaf of the fs tree: directory 256's inode item, then one entry item */
static void dir_leaf(struct leaf *l, u8 type, u64 offset, const u8 *buf, u32 size)
{
	u8 ii[160];

	leaf_init(l, FS_TREE);
	leaf_add(l, 256, BTRFS_INODE_ITEM_KEY, 0, ii, inode_item(ii, 5, 5, 1, 040755, 0));
	leaf_add(l, 256, type, offset, buf, size);
}

#define DIR_PREFIX "corrupt leaf: root=5 block=1048576 slot=1 ino=256, "

static void test_dir_locations(struct btrfs_fs_info *fs_info)
{
	u8 buf[128], *p;
	struct leaf l;

	p = dir_entry(buf, 257, BTRFS_INODE_REF_KEY, 0, BTRFS_FT_REG_FILE, "file", 4, 0);
	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf);
	expect(fs_info, &l, "dir entry locating an inode ref",
	       DIR_PREFIX "invalid location key type, have 12, expect 132 or 1");

	p = dir_entry(buf, 5, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_REG_FILE, "file", 4, 0);
	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf);
	expect(fs_info, &l, "dir entry locating inode 5",
	       DIR_PREFIX "invalid location key objectid: has 5 expect 6 or [256, " LAST_FREE "] or 18446744073709551604");

	p = dir_entry(buf, 257, BTRFS_INODE_ITEM_KEY, 1, BTRFS_FT_REG_FILE, "file", 4, 0);
	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf);
	expect(fs_info, &l, "dir entry locating inode offset 1",
	       DIR_PREFIX "invalid location key offset:has 1 expect 0");

	p = dir_entry(buf, 0, BTRFS_ROOT_ITEM_KEY, (u64)-1, BTRFS_FT_DIR, "file", 4, 0);
	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf);
	expect(fs_info, &l, "dir entry locating root 0",
	       DIR_PREFIX "invalid location key root id 0");

	p = dir_entry(buf, 2, BTRFS_ROOT_ITEM_KEY, (u64)-1, BTRFS_FT_DIR, "file", 4, 0);
	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf);
	expect(fs_info, &l, "dir entry locating the extent tree",
	       DIR_PREFIX "invalid location key objectid, have 2 expect [256, " LAST_FREE "]");

	p = dir_entry(buf, 257, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_XATTR, "user.x", 6, 1);
	dir_leaf(&l, BTRFS_XATTR_ITEM_KEY, HASH_USER_X, buf, p - buf);
	expect(fs_info, &l, "xattr with a location",
	       DIR_PREFIX "invalid location key for xattr, have (257 1 0) expect (0 0 0)");
}

static void test_dir_entries(struct btrfs_fs_info *fs_info)
{
	u8 buf[4096], *p;
	char name[256];
	struct leaf l;

	p = dir_entry(buf, 257, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_REG_FILE, "file", 4, 0);
	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, 20);
	expect(fs_info, &l, "dir entry cut inside its header",
	       DIR_PREFIX "dir item header crosses item boundary, have 30 boundary 20");

	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf - 1);
	expect(fs_info, &l, "dir entry cut inside its name",
	       DIR_PREFIX "dir item data crosses item boundary, have 34 boundary 33");

	dir_leaf(&l, BTRFS_DIR_ITEM_KEY, 1, buf, p - buf);
	expect(fs_info, &l, "dir item keyed by another hash",
	       DIR_PREFIX "name hash mismatch with key, have 0x000000006e1f90f4 expect 0x0000000000000001");
	expect_field(fs_info, "name hash", "key.offset", 1, true, 0x6e1f90f4);

	p = dir_entry(buf, 257, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_UNKNOWN, "file", 4, 0);
	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf);
	expect(fs_info, &l, "dir entry of type unknown",
	       DIR_PREFIX "invalid dir item type, have 0 expect (0, 9)");

	p = dir_entry(buf, 0, 0, 0, BTRFS_FT_REG_FILE, "user.x", 6, 0);
	dir_leaf(&l, BTRFS_XATTR_ITEM_KEY, HASH_USER_X, buf, p - buf);
	expect(fs_info, &l, "xattr of a regular file's type",
	       DIR_PREFIX "invalid dir item type for XATTR key, have 1 expect 8");

	p = dir_entry(buf, 257, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_XATTR, "user.x", 6, 0);
	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf);
	expect(fs_info, &l, "dir index of the xattr type",
	       DIR_PREFIX "xattr dir type found for non-XATTR key");

	memset(name, 'n', sizeof(name));
	p = dir_entry(buf, 257, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_REG_FILE,
		      name, sizeof(name), 0);
	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf);
	expect(fs_info, &l, "dir entry of a 256-byte name",
	       DIR_PREFIX "dir item name len too long, have 256 max 255");

	/* 4096 - header 101 - item 25 - dir item 30 = 3940 */
	p = dir_entry(buf, 0, 0, 0, BTRFS_FT_XATTR, "user.x", 6, 3935);
	dir_leaf(&l, BTRFS_XATTR_ITEM_KEY, HASH_USER_X, buf, 3000);
	expect(fs_info, &l, "xattr name and value over an item's room",
	       DIR_PREFIX "dir item name and data len too long, have 3941 max 3940");

	p = dir_entry(buf, 257, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_REG_FILE, "file", 4, 1);
	dir_leaf(&l, BTRFS_DIR_INDEX_KEY, 2, buf, p - buf);
	expect(fs_info, &l, "dir entry with data",
	       DIR_PREFIX "dir item with invalid data len, have 1 expect 0");
	expect_field(fs_info, "dir data len", "data_len", 1, true, 0);

	/* The second entry of an item is checked as the first */
	p = dir_entry(buf, 257, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_REG_FILE, "file", 4, 0);
	p = dir_entry(p, 258, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_REG_FILE, "file", 4, 0);
	dir_leaf(&l, BTRFS_DIR_ITEM_KEY, HASH_FILE, buf, p - buf - 2);
	expect(fs_info, &l, "second dir entry cut short",
	       DIR_PREFIX "dir item data crosses item boundary, have 68 boundary 66");

	leaf_init(&l, FS_TREE);
	leaf_add(&l, 256, BTRFS_INODE_ITEM_KEY, 0, buf, inode_item(buf, 5, 5, 1, 040755, 0));
	p = dir_entry(buf, 258, BTRFS_INODE_ITEM_KEY, 0, BTRFS_FT_REG_FILE, "file", 4, 0);
	leaf_add(&l, 257, BTRFS_DIR_ITEM_KEY, HASH_FILE, buf, p - buf);
	expect(fs_info, &l, "dir item of a directory without its inode item",
	       "corrupt leaf: root=5 block=1048576 slot=1 ino=257, invalid previous key objectid, have 256 expect 257");
}

#define INODE_PREFIX "corrupt leaf: root=5 block=1048576 slot=0 ino=256, "

static void inode_leaf(struct leaf *l, u64 objectid, u64 offset, const u8 *ii, u32 size)
{
	leaf_init(l, FS_TREE);
	leaf_add(l, objectid, BTRFS_INODE_ITEM_KEY, offset, ii, size);
}

static void test_inode_items(struct btrfs_fs_info *fs_info)
{
	u8 ii[160];
	struct leaf l;

	inode_leaf(&l, 5, 0, ii, inode_item(ii, 5, 5, 1, 040755, 0));
	expect(fs_info, &l, "inode item of inode 5",
	       "corrupt leaf: root=5 block=1048576 slot=0, invalid key objectid: has 5 expect 6 or [256, " LAST_FREE "] or 18446744073709551604");

	inode_leaf(&l, 256, 1, ii, inode_item(ii, 5, 5, 1, 040755, 0));
	expect(fs_info, &l, "inode item at key offset 1",
	       INODE_PREFIX "invalid key offset: has 1 expect 0");

	inode_leaf(&l, 256, 0, ii, 159);
	expect(fs_info, &l, "inode item one byte short",
	       "corrupt leaf: root=5 block=1048576 slot=0, invalid item size: has 159 expect 160");

	inode_leaf(&l, 256, 0, ii, inode_item(ii, 102, 5, 1, 040755, 0));
	expect(fs_info, &l, "inode generation past the next transaction",
	       INODE_PREFIX "invalid inode generation: has 102 expect (0, 101]");
	expect_field(fs_info, "inode generation", "generation", 102, false, 0);

	inode_leaf(&l, 256, 0, ii, inode_item(ii, 5, 102, 1, 040755, 0));
	expect(fs_info, &l, "inode transid past the next transaction",
	       INODE_PREFIX "invalid inode transid: has 102 expect [0, 101]");

	inode_leaf(&l, 256, 0, ii, inode_item(ii, 5, 5, 1, 0240755, 0));
	expect(fs_info, &l, "inode mode bit above S_IFMT",
	       INODE_PREFIX "unknown mode bit detected: 0x10000");

	inode_leaf(&l, 256, 0, ii, inode_item(ii, 5, 5, 1, 0644, 0));
	expect(fs_info, &l, "inode mode without a file type",
	       INODE_PREFIX "invalid mode: has 00 expect valid S_IF* bit(s)");

	inode_leaf(&l, 256, 0, ii, inode_item(ii, 5, 5, 1, 030644, 0));
	expect(fs_info, &l, "inode mode FIFO|CHR",
	       INODE_PREFIX "invalid mode: has 030000 expect valid S_IF* bit(s)");

	inode_leaf(&l, 256, 0, ii, inode_item(ii, 5, 5, 2, 040755, 0));
	expect(fs_info, &l, "directory with two links",
	       INODE_PREFIX "invalid nlink: has 2 expect no more than 1 for dir");
	expect_field(fs_info, "dir nlink", "nlink", 2, false, 0);

	inode_leaf(&l, 256, 0, ii, inode_item(ii, 5, 5, 1, 040755, 1 << 12));
	expect(fs_info, &l, "inode flag bit 12",
	       INODE_PREFIX "unknown incompat flags detected: 0x1000");
}

#define REF_PREFIX "corrupt leaf: root=5 block=1048576 slot=1 ino=257, "

/*
 * Inode 257's item (160 bytes at 3835), then a ref item; a ref of size S
 * starts at block offset 101 + 3835 - S.
 */
static void ref_leaf(struct leaf *l, u8 type, const u8 *buf, u32 size)
{
	u8 ii[160];

	leaf_init(l, FS_TREE);
	leaf_add(l, 257, BTRFS_INODE_ITEM_KEY, 0, ii, inode_item(ii, 5, 5, 1, 0100644, 0));
	leaf_add(l, 257, type, 256, buf, size);
}

static void test_inode_refs(struct btrfs_fs_info *fs_info)
{
	u8 buf[160], *p;
	struct leaf l;

	p = inode_ref(buf, 2, "");
	ref_leaf(&l, BTRFS_INODE_REF_KEY, buf, p - buf);
	expect(fs_info, &l, "inode ref with an empty name",
	       REF_PREFIX "invalid item size, have 10 expect (10, 3995)");

	p = inode_ref(buf, 2, "file");
	ref_leaf(&l, BTRFS_INODE_REF_KEY, buf, p - buf - 1);
	expect(fs_info, &l, "inode ref name past the item",
	       REF_PREFIX "inode ref overflow, ptr 3923 end 3936 namelen 4");

	/* 7 bytes after a 12-byte entry: short of the kernel's 8-byte bound */
	p = inode_ref(buf, 2, "ab");
	memset(p, 0, 7);
	ref_leaf(&l, BTRFS_INODE_REF_KEY, buf, p - buf + 7);
	expect(fs_info, &l, "inode ref followed by 7 bytes",
	       REF_PREFIX "inode ref overflow, ptr 3929 end 3936 inode_ref_size 8");

	p = inode_extref(buf, 256, 2, "file");
	ref_leaf(&l, BTRFS_INODE_EXTREF_KEY, buf, 17);
	expect(fs_info, &l, "inode extref cut inside its header",
	       REF_PREFIX "inode extref overflow, ptr 3919 end 3936 inode_extref size 18");

	ref_leaf(&l, BTRFS_INODE_EXTREF_KEY, buf, p - buf - 1);
	expect(fs_info, &l, "inode extref name past the item",
	       REF_PREFIX "inode extref overflow, ptr 3915 end 3936 namelen 4");

	leaf_init(&l, FS_TREE);
	leaf_add(&l, 256, BTRFS_INODE_ITEM_KEY, 0, buf, inode_item(buf, 5, 5, 1, 040755, 0));
	p = inode_extref(buf, 256, 2, "file");
	leaf_add(&l, 257, BTRFS_INODE_EXTREF_KEY, 1, buf, p - buf);
	expect(fs_info, &l, "inode extref of an inode without its inode item",
	       REF_PREFIX "invalid previous key objectid, have 256 expect 257");
}

/* Keyed back references of the extent at 1 MiB, in the extent tree */
static void keyed_leaf(struct leaf *l, u64 objectid, u8 type, u64 offset,
		       const u8 *buf, u32 size)
{
	leaf_init(l, BTRFS_EXTENT_TREE_OBJECTID);
	leaf_add(l, objectid, type, offset, buf, size);
}

static u8 *keyed_data_ref(u8 *p, u64 root, u64 objectid, u64 offset, u32 count)
{
	p = put64(p, root);
	p = put64(p, objectid);
	p = put64(p, offset);
	return put32(p, count);
}

#define EXT_PREFIX(len) "corrupt leaf: block=1048576 slot=0 extent bytenr=1048576 len=" #len " "
#define GEN_PREFIX "corrupt leaf: root=2 block=1048576 slot=0, "

static void test_keyed_refs(struct btrfs_fs_info *fs_info)
{
	u8 buf[128], *p;
	struct leaf l;

	leaf_init(&l, BTRFS_EXTENT_TREE_OBJECTID);
	p = extent_head(buf, 8, 10, 1);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_ITEM_KEY, 4096, buf, p - buf);
	leaf_add(&l, 1 << 20, BTRFS_TREE_BLOCK_REF_KEY, 5, buf, 0);
	p = keyed_data_ref(buf, 5, 257, 0, 3);
	p = keyed_data_ref(p, BTRFS_DATA_RELOC_TREE_OBJECTID, 257, 4096, 1);
	leaf_add(&l, 1 << 20, BTRFS_EXTENT_DATA_REF_KEY, 0x1234, buf, p - buf);
	leaf_add(&l, 1 << 20, BTRFS_SHARED_BLOCK_REF_KEY, 2 << 20, buf, 0);
	put32(buf, 2);
	leaf_add(&l, 1 << 20, BTRFS_SHARED_DATA_REF_KEY, 3 << 20, buf, 4);
	expect(fs_info, &l, "extent item with keyed refs of each type", NULL);

	keyed_leaf(&l, 1 << 20, BTRFS_TREE_BLOCK_REF_KEY, 5, buf, 4);
	expect(fs_info, &l, "tree block ref with data",
	       GEN_PREFIX "invalid item size, have 4 expect 0 for key type 176");

	keyed_leaf(&l, (1 << 20) + 1, BTRFS_TREE_BLOCK_REF_KEY, 5, buf, 0);
	expect(fs_info, &l, "tree block ref of an unaligned block",
	       "corrupt leaf: root=2 block=1048576 slot=0, invalid key objectid for shared block ref, have 1048577 expect aligned to 4096");

	keyed_leaf(&l, 1 << 20, BTRFS_SHARED_BLOCK_REF_KEY, (2 << 20) + 1, buf, 0);
	expect(fs_info, &l, "shared block ref to an unaligned parent",
	       EXT_PREFIX(4096) "invalid tree parent bytenr, have 2097153 expect aligned to 4096");

	put32(buf, 0);
	keyed_leaf(&l, 1 << 20, BTRFS_SHARED_DATA_REF_KEY, 3 << 20, buf, 4);
	expect(fs_info, &l, "shared data ref of count 0",
	       EXT_PREFIX(3145728) "invalid shared data backref count, should have non-zero value");

	put32(buf, 1);
	keyed_leaf(&l, 1 << 20, BTRFS_SHARED_DATA_REF_KEY, 3 << 20, buf, 8);
	expect(fs_info, &l, "shared data ref of 8 bytes",
	       GEN_PREFIX "invalid item size, have 8 expect 4 for key type 184");

	p = keyed_data_ref(buf, 5, 257, 0, 1);
	keyed_leaf(&l, 1 << 20, BTRFS_EXTENT_DATA_REF_KEY, 0x1234, buf, p - buf - 1);
	expect(fs_info, &l, "data ref one byte short",
	       GEN_PREFIX "invalid item size, have 27 expect aligned to 28 for key type 178");

	keyed_leaf(&l, (1 << 20) + 1, BTRFS_EXTENT_DATA_REF_KEY, 0x1234, buf, p - buf);
	expect(fs_info, &l, "data ref of an unaligned extent",
	       GEN_PREFIX "invalid key objectid for shared block ref, have 1048577 expect aligned to 4096");

	p = keyed_data_ref(buf, 5, 257, 0, 1);
	p = keyed_data_ref(p, 2, 257, 0, 1);
	keyed_leaf(&l, 1 << 20, BTRFS_EXTENT_DATA_REF_KEY, 0x1234, buf, p - buf);
	expect(fs_info, &l, "second data ref owned by the extent tree",
	       EXT_PREFIX(4660) "invalid extent data backref root value 2");

	/* 6.18 prints the root where it means the objectid */
	p = keyed_data_ref(buf, 256, 7, 0, 1);
	keyed_leaf(&l, 1 << 20, BTRFS_EXTENT_DATA_REF_KEY, 0x1234, buf, p - buf);
	expect(fs_info, &l, "data ref of inode 7",
	       EXT_PREFIX(4660) "invalid extent data backref objectid value 256");
	/* the record has the value the check read, not the kernel's slip */
	expect_field(fs_info, "data ref of inode 7", "objectid", 7, false, 0);

	p = keyed_data_ref(buf, 5, 257, 1, 1);
	keyed_leaf(&l, 1 << 20, BTRFS_EXTENT_DATA_REF_KEY, 0x1234, buf, p - buf);
	expect(fs_info, &l, "data ref at an unaligned file offset",
	       EXT_PREFIX(4660) "invalid extent data backref offset, have 1 expect aligned to 4096");

	p = keyed_data_ref(buf, 5, 257, 0, 0);
	keyed_leaf(&l, 1 << 20, BTRFS_EXTENT_DATA_REF_KEY, 0x1234, buf, p - buf);
	expect(fs_info, &l, "data ref of count 0",
	       EXT_PREFIX(4660) "invalid extent data backref count, should have non-zero value");
}

/*
 * btrfs_check_chunk_valid()'s stripe counts per profile, read from the
 * profile's row of btrfs_raid_array: fixed counts for single, DUP and the
 * RAID1 family, at least devs_min (in pairs for RAID10, with sub_stripes
 * 2) for RAID0, RAID10, RAID5 and RAID6.
 */
struct chunk_stripes_case {
	const char *name;
	u64 profile;
	u16 num_stripes;
	u16 sub_stripes;
	bool valid;
};

static const struct chunk_stripes_case chunk_stripes_cases[] = {
	{ "single, 1 stripe", 0, 1, 1, true },
	{ "single, 2 stripes", 0, 2, 1, false },
	{ "DUP, 2 stripes", BTRFS_BLOCK_GROUP_DUP, 2, 1, true },
	{ "DUP, 1 stripe", BTRFS_BLOCK_GROUP_DUP, 1, 1, false },
	{ "DUP, 3 stripes", BTRFS_BLOCK_GROUP_DUP, 3, 1, false },
	{ "RAID0, 1 stripe", BTRFS_BLOCK_GROUP_RAID0, 1, 1, true },
	{ "RAID0, 7 stripes", BTRFS_BLOCK_GROUP_RAID0, 7, 0, true },
	{ "RAID1, 2 stripes", BTRFS_BLOCK_GROUP_RAID1, 2, 1, true },
	{ "RAID1, 3 stripes", BTRFS_BLOCK_GROUP_RAID1, 3, 1, false },
	{ "RAID1C3, 3 stripes", BTRFS_BLOCK_GROUP_RAID1C3, 3, 1, true },
	{ "RAID1C3, 2 stripes", BTRFS_BLOCK_GROUP_RAID1C3, 2, 1, false },
	{ "RAID1C4, 4 stripes", BTRFS_BLOCK_GROUP_RAID1C4, 4, 1, true },
	{ "RAID1C4, 5 stripes", BTRFS_BLOCK_GROUP_RAID1C4, 5, 1, false },
	{ "RAID10, 2 stripes", BTRFS_BLOCK_GROUP_RAID10, 2, 2, true },
	{ "RAID10, 6 stripes", BTRFS_BLOCK_GROUP_RAID10, 6, 2, true },
	{ "RAID10, 5 stripes", BTRFS_BLOCK_GROUP_RAID10, 5, 2, false },
	{ "RAID10, sub_stripes 1", BTRFS_BLOCK_GROUP_RAID10, 4, 1, false },
	{ "RAID5, 2 stripes", BTRFS_BLOCK_GROUP_RAID5, 2, 1, true },
	{ "RAID5, 1 stripe", BTRFS_BLOCK_GROUP_RAID5, 1, 1, false },
	{ "RAID6, 3 stripes", BTRFS_BLOCK_GROUP_RAID6, 3, 1, true },
	{ "RAID6, 2 stripes", BTRFS_BLOCK_GROUP_RAID6, 2, 1, false },
};

static void test_chunk_stripes(struct btrfs_fs_info *fs_info)
{
	const struct btrfs_item_location loc = { "leaf", 1 << 20, 0 };
	union {
		struct btrfs_chunk chunk;
		u8 bytes[sizeof(struct btrfs_chunk) + 8 * sizeof(struct btrfs_stripe)];
	} buf;
	size_t i;

	for (i = 0; i < sizeof(chunk_stripes_cases) / sizeof(chunk_stripes_cases[0]); i++) {
		const struct chunk_stripes_case *c = &chunk_stripes_cases[i];
		int ret;

		memset(&buf, 0, sizeof(buf));
		/* 5040 sectors: a multiple of every data stripe count here */
		buf.chunk.length = htole64(5040 * SECTORSIZE);
		buf.chunk.stripe_len = htole64(BTRFS_STRIPE_LEN);
		buf.chunk.type = htole64(BTRFS_BLOCK_GROUP_DATA | c->profile);
		buf.chunk.sector_size = htole32(SECTORSIZE);
		buf.chunk.num_stripes = htole16(c->num_stripes);
		buf.chunk.sub_stripes = htole16(c->sub_stripes);
		fs_info->err.err = 0;
		fs_info->err.msg[0] = 0;
		ret = btrfs_check_chunk_valid(fs_info, &fs_info->err, &buf.chunk,
					      btrfs_chunk_item_size(c->num_stripes), 1 << 20, &loc);
		if (c->valid)
			check(ret == 0, "chunk stripes, %s: accepted%s%s", c->name,
			      ret ? ", got: " : "", ret ? fs_info->err.msg : "");
		else
			check(ret == -EUCLEAN && strstr(fs_info->err.msg, "invalid num_stripes:sub_stripes"),
			      "chunk stripes, %s: rejected (%s)", c->name,
			      ret ? fs_info->err.msg : "accepted");
	}
}

static void test_raid_stripes(void)
{
	struct btrfs_fs_info *rst = new_fs_info(BTRFS_FEATURE_INCOMPAT_RAID_STRIPE_TREE);
	struct btrfs_fs_info *plain = new_fs_info(0);
	u8 buf[32] = { 0 };
	struct leaf l;

	leaf_init(&l, BTRFS_RAID_STRIPE_TREE_OBJECTID);
	leaf_add(&l, 1 << 20, BTRFS_RAID_STRIPE_KEY, 4096, buf, 16);
	expect(rst, &l, "raid stripe extent", NULL);

	leaf_init(&l, BTRFS_RAID_STRIPE_TREE_OBJECTID);
	leaf_add(&l, (1 << 20) + 1, BTRFS_RAID_STRIPE_KEY, 4096, buf, 16);
	expect(rst, &l, "raid stripe extent at an unaligned start",
	       "corrupt leaf: root=12 block=1048576 slot=0, invalid key objectid for raid stripe extent, have 1048577 expect aligned to 4096");

	leaf_init(&l, BTRFS_RAID_STRIPE_TREE_OBJECTID);
	leaf_add(&l, 1 << 20, BTRFS_RAID_STRIPE_KEY, 4096, buf, 16);
	expect(plain, &l, "raid stripe extent without RAID_STRIPE_TREE",
	       "corrupt leaf: root=12 block=1048576 slot=0, RAID_STRIPE_EXTENT present but RAID_STRIPE_TREE incompat bit unset");
	free(rst);
	free(plain);
}

static void test_leaf_rules(struct btrfs_fs_info *fs_info)
{
	struct btrfs_fs_info *v2 = new_fs_info(BTRFS_FEATURE_INCOMPAT_EXTENT_TREE_V2);
	u8 ii[160];
	struct leaf l;

	leaf_init(&l, FS_TREE);
	expect(fs_info, &l, "empty fs tree",
	       "corrupt leaf: root=5 block=1048576 slot=0, invalid root, root 5 must never be empty");
	leaf_init(&l, BTRFS_EXTENT_TREE_OBJECTID);
	expect(fs_info, &l, "empty extent tree",
	       "corrupt leaf: root=2 block=1048576 slot=0, invalid root, root 2 must never be empty");
	leaf_init(&l, BTRFS_EXTENT_TREE_OBJECTID);
	expect(v2, &l, "empty extent tree with extent-tree-v2", NULL);
	leaf_init(&l, 0);
	expect(fs_info, &l, "empty leaf of owner 0",
	       "corrupt leaf: root=0 block=1048576 slot=0, invalid owner, root 0 is not defined");
	leaf_init(&l, BTRFS_CSUM_TREE_OBJECTID);
	expect(fs_info, &l, "empty csum tree", NULL);
	leaf_init(&l, FS_TREE);
	leaf_set_flags(&l, BTRFS_HEADER_FLAG_WRITTEN | BTRFS_HEADER_FLAG_RELOC);
	expect(fs_info, &l, "empty reloc copy of the fs tree", NULL);

	/* Item contents are not checked in a block never written */
	inode_leaf(&l, 256, 0, ii, inode_item(ii, 5, 5, 2, 040755, 0));
	leaf_set_flags(&l, 0);
	expect(fs_info, &l, "bad inode item in an unwritten leaf", NULL);
	free(v2);
}

/* btrfs_check_eb_owner(): the block's owner against the tree it is read for */
static void expect_owner(struct btrfs_fs_info *fs_info, u64 block_owner,
			 u64 root, const char *what, const char *want)
{
	struct leaf l;
	u8 ii[160];
	int ret;

	inode_leaf(&l, 256, 0, ii, inode_item(ii, 5, 5, 1, 040755, 0));
	l.eb->owner = block_owner;
	fs_info->err.err = 0;
	fs_info->err.msg[0] = 0;
	ret = btrfs_check_eb_owner(&fs_info->err, l.eb, root);
	if (!want)
		check(ret == 0, "%s: accepted%s%s", what, ret ? ", got: " : "",
		      ret ? fs_info->err.msg : "");
	else if (ret == -EUCLEAN && !strcmp(fs_info->err.msg, want))
		check(1, "%s: rejected", what);
	else
		check(0, "%s: rejected\n  want: %s\n  got:  %s", what, want,
		      ret ? fs_info->err.msg : "(accepted)");
	free(l.eb);
}

static void test_eb_owner(struct btrfs_fs_info *fs_info)
{
	expect_owner(fs_info, 2, 2, "extent tree block owned by the extent tree", NULL);
	expect_owner(fs_info, 5, 2, "extent tree block owned by the fs tree",
		     "corrupted leaf, root=2 block=1048576 owner mismatch, have 5 expect 2");
	expect_owner(fs_info, 257, 5, "fs tree block shared with subvolume 257", NULL);
	expect_owner(fs_info, 2, 5, "fs tree block owned by the extent tree",
		     "corrupted leaf, root=5 block=1048576 owner mismatch, have 2 expect [256, " LAST_FREE "]");
	expect_owner(fs_info, 5, BTRFS_TREE_LOG_OBJECTID, "log tree block (owner not known)", NULL);
	expect_owner(fs_info, 5, BTRFS_TREE_RELOC_OBJECTID, "reloc tree block (owner not known)", NULL);
	expect_owner(fs_info, 7, 0, "block of an unknown tree", NULL);
}

int main(void)
{
	struct btrfs_fs_info *fs_info =
		new_fs_info(BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA);

	test_crc32c_raw();
	test_extent_data_refs(fs_info);
	test_tree_block_extents(fs_info);
	test_plain_extent_runs(fs_info);
	test_skinny_feature();
	test_root_items(fs_info);
	test_dev_items(fs_info);
	test_chunk_in_leaf(fs_info);
	test_chunk_stripes(fs_info);
	test_valid_fs_leaf(fs_info);
	test_file_extents(fs_info);
	test_csum_items(fs_info);
	test_dir_locations(fs_info);
	test_dir_entries(fs_info);
	test_inode_items(fs_info);
	test_inode_refs(fs_info);
	test_keyed_refs(fs_info);
	test_raid_stripes();
	test_leaf_rules(fs_info);
	test_eb_owner(fs_info);
	free(fs_info);
	printf("%s\n", unit_failures ? "FAILED" : "PASSED");
	return unit_failures ? 1 : 0;
}
