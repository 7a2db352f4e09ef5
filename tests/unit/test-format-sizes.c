// SPDX-License-Identifier: GPL-2.0
/*
 * The sizes that follow from the on-disk format alone (accessors.h), as
 * tables: the kernel's BTRFS_LEAF_DATA_SIZE, BTRFS_MAX_ITEM_SIZE and
 * BTRFS_NODEPTRS_PER_BLOCK (fs/btrfs/fs.h, ctree.h) per node size,
 * btrfs_sb_offset() (disk-io.h) per copy and btrfs_chunk_item_size()
 * (volumes.h) per stripe count.
 *
 * Worked by a python check from the structures' field lists in
 * include/uapi/linux/btrfs_tree.h, not from sizeof: header 101 bytes
 * (csum 32, fsid 16, bytenr 8, flags 8, chunk tree uuid 16, generation
 * 8, owner 8, nritems 4, level 1), item 25 (key 17, offset 4, size 4),
 * key pointer 33 (key 17, blockptr 8, generation 8), chunk 48 before its
 * stripes (length, owner, stripe_len, type 8 each; io_align, io_width,
 * sector_size 4 each; num_stripes, sub_stripes 2 each), stripe 32
 * (devid 8, offset 8, dev uuid 16).  Superblock copies at 64 KiB and at
 * 16 KiB << 12 and << 24 (BTRFS_SUPER_MIRROR_SHIFT 12).
 */
#include <stdio.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/accessors.h"

struct node_row {
	u32 nodesize;
	u32 leaf_data;		/* nodesize - header */
	u32 max_item;		/* leaf_data - item */
	u32 node_ptrs;		/* leaf_data / key pointer */
};

static const struct node_row node_rows[] = {
	{ 4096, 3995, 3970, 121 },
	{ 8192, 8091, 8066, 245 },
	{ 16384, 16283, 16258, 493 },
	{ 32768, 32667, 32642, 989 },
	{ 65536, 65435, 65410, 1982 },
};

struct chunk_row {
	u16 num_stripes;
	u32 item_size;
};

static const struct chunk_row chunk_rows[] = {
	{ 1, 80 }, { 2, 112 }, { 3, 144 }, { 4, 176 }, { 16, 560 },
	{ 65535, 2097168 },	/* the largest count the u16 holds */
};

static const u64 sb_offsets[] = { 65536, 67108864, 274877906944ULL };

int main(void)
{
	char what[64];
	u32 i;

	for (i = 0; i < sizeof(node_rows) / sizeof(node_rows[0]); i++) {
		const struct node_row *r = &node_rows[i];

		snprintf(what, sizeof(what), "%u: leaf data size", r->nodesize);
		check_u64(what, btrfs_leaf_data_size(r->nodesize), r->leaf_data);
		snprintf(what, sizeof(what), "%u: max item size", r->nodesize);
		check_u64(what, btrfs_max_item_size(r->nodesize), r->max_item);
		snprintf(what, sizeof(what), "%u: pointers per node", r->nodesize);
		check_u64(what, btrfs_node_max_ptrs(r->nodesize), r->node_ptrs);
	}
	for (i = 0; i < sizeof(chunk_rows) / sizeof(chunk_rows[0]); i++) {
		snprintf(what, sizeof(what), "chunk item of %u stripes", chunk_rows[i].num_stripes);
		check_u64(what, btrfs_chunk_item_size(chunk_rows[i].num_stripes),
			  chunk_rows[i].item_size);
	}
	for (i = 0; i < BTRFS_SUPER_MIRROR_MAX; i++) {
		snprintf(what, sizeof(what), "superblock copy %u", i);
		check_u64(what, btrfs_sb_offset(i), sb_offsets[i]);
	}
	return unit_failures ? 1 : 0;
}
