// SPDX-License-Identifier: GPL-2.0
/*
 * The worst-case sizes the reservations are made of, a table worked by hand
 * from the kernel's helpers (fs/btrfs/fs.h, delayed-ref.h, space-info.c):
 *
 *   insert_metadata_size(n)  = nodesize * BTRFS_MAX_LEVEL (8) * 2 * n
 *   metadata_size(n)         = nodesize * 8 * n
 *   delayed_ref_bytes(n)     = insert_metadata_size(n), twice with the
 *                              free space tree option (v5.17-6.18)
 *   delayed_ref_csum_bytes(n) = metadata_size(n) (v6.7-6.18)
 *   csums_per_leaf           = (nodesize - 101 - 25) / csum_size
 *                              (BTRFS_MAX_ITEM_SIZE: leaf data less one item)
 *   csum_bytes_to_leaves(b)  = DIV_ROUND_UP(b >> sectorsize_bits, per_leaf)
 *   effective_data_chunk     = zoned: the data chunk size; else
 *                              min(chunk size, total_rw * 10 / 100, 1 GiB)
 *                              (v6.9-6.18, calc_effective_data_chunk_size())
 *   chunk_size at mount      data (and mixed) 10 GiB, system 32 MiB, metadata
 *                              1 GiB above 50 GiB writeable, else 256 MiB
 *                              (calc_chunk_size(), non-zoned, 6.0-6.18);
 *                              with rows of truth images as 6.18's sysfs showed them
 *
 * The rows sit on each side of every bound: a sector less and more, a
 * leaf's worth of csums and one more, 10 % of the writeable bytes just
 * under and over 1 GiB, and counts that overflow 32 bits.
 */
#include "tests/unit/unit-test.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/space-info.h"

#define KiB	(1ULL << 10)
#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)

struct size_row {
	const char *what;
	u32 nodesize;
	u32 num_items;
	u64 insert;		/* worked by hand */
	u64 modify;
	u64 ref_no_fst;
	u64 ref_fst;
};

static const struct size_row size_rows[] = {
	{ "16K, 1 item", 16384, 1, 262144, 131072, 262144, 524288 },
	{ "16K, 5 items", 16384, 5, 1310720, 655360, 1310720, 2621440 },
	{ "4K, 1 item", 4096, 1, 65536, 32768, 65536, 131072 },
	{ "64K, 3 items", 65536, 3, 3145728, 1572864, 3145728, 6291456 },
	{ "16K, 0 items", 16384, 0, 0, 0, 0, 0 },
	/* 2^18 * (2^32 - 1): the product is taken in 64 bits */
	{ "16K, 2^32-1 items", 16384, 0xffffffffU, 1125899906580480ULL,
	  562949953290240ULL, 1125899906580480ULL, 2251799813160960ULL },
};

static void test_metadata_sizes(void)
{
	u32 i;

	for (i = 0; i < sizeof(size_rows) / sizeof(size_rows[0]); i++) {
		const struct size_row *r = &size_rows[i];

		check_u64(r->what, btrfs_calc_insert_metadata_size(r->nodesize, r->num_items),
			  r->insert);
		check_u64(r->what, btrfs_calc_metadata_size(r->nodesize, r->num_items),
			  r->modify);
		check_u64(r->what, btrfs_calc_delayed_ref_bytes(r->nodesize, false, r->num_items),
			  r->ref_no_fst);
		check_u64(r->what, btrfs_calc_delayed_ref_bytes(r->nodesize, true, r->num_items),
			  r->ref_fst);
	}
}

struct csum_row {
	const char *what;
	struct btrfs_csum_params p;
	u64 csum_bytes;
	u32 per_leaf;		/* worked by hand */
	u64 leaves;
	u64 delete_bytes;	/* delayed_ref_csum_bytes(leaves) */
};

static const struct csum_row csum_rows[] = {
	/* 16258 bytes of item: 16258 / 4 = 4064.5 */
	{ "crc32c 16K, nothing", { 16384, 4096, 4, true }, 0, 4064, 0, 0 },
	{ "crc32c 16K, a byte under a sector", { 16384, 4096, 4, true }, 4095, 4064, 0, 0 },
	{ "crc32c 16K, one sector", { 16384, 4096, 4, true }, 4096, 4064, 1, 131072 },
	{ "crc32c 16K, a full leaf", { 16384, 4096, 4, true }, 4064 * 4096, 4064, 1, 131072 },
	{ "crc32c 16K, a leaf and a sector", { 16384, 4096, 4, true }, 4065 * 4096,
	  4064, 2, 262144 },
	{ "crc32c 16K, 128 MiB", { 16384, 4096, 4, false }, 128 * MiB, 4064, 9, 1179648 },
	/* 16258 / 8 = 2032.25 */
	{ "xxhash 16K, a full leaf", { 16384, 4096, 8, true }, 2032 * 4096, 2032, 1, 131072 },
	{ "xxhash 16K, a leaf and a sector", { 16384, 4096, 8, true }, 2033 * 4096,
	  2032, 2, 262144 },
	/* 16258 / 32 = 508.06 */
	{ "sha256 16K, a leaf and a sector", { 16384, 4096, 32, true }, 509 * 4096,
	  508, 2, 262144 },
	/* 3970 / 4 = 992.5, 3970 / 32 = 124.06 */
	{ "crc32c 4K nodes, a leaf and a sector", { 4096, 4096, 4, true }, 993 * 4096,
	  992, 2, 65536 },
	{ "blake2 4K nodes, a full leaf", { 4096, 4096, 32, true }, 124 * 4096, 124, 1, 32768 },
	/* 65410 / 4 = 16352.5; 64 KiB sectors: the shift is 16 */
	{ "crc32c 64K nodes, 64K sectors, a full leaf", { 65536, 65536, 4, true },
	  16352 * 64 * KiB, 16352, 1, 524288 },
	{ "crc32c 64K nodes, 64K sectors, 4K short of a sector", { 65536, 65536, 4, true },
	  60 * KiB, 16352, 0, 0 },
	{ "crc32c 64K nodes, 64K sectors, a leaf and a sector", { 65536, 65536, 4, true },
	  16353 * 64 * KiB, 16352, 2, 1048576 },
};

static void test_csum_sizes(void)
{
	u32 i;

	for (i = 0; i < sizeof(csum_rows) / sizeof(csum_rows[0]); i++) {
		const struct csum_row *r = &csum_rows[i];
		u64 leaves = btrfs_csum_bytes_to_leaves(&r->p, r->csum_bytes);

		check_u64(r->what, btrfs_csums_per_leaf(&r->p), r->per_leaf);
		check_u64(r->what, leaves, r->leaves);
		check_u64(r->what, btrfs_calc_delayed_ref_csum_bytes(&r->p, leaves),
			  r->delete_bytes);
	}
}

struct chunk_row {
	const char *what;
	bool zoned;
	u64 data_chunk_size;
	u64 total_rw_bytes;
	u64 effective;		/* worked by hand */
};

static const struct chunk_row chunk_rows[] = {
	{ "10G chunks, 200 GiB: the 1 GiB cap", false, 10 * GiB, 200 * GiB, GiB },
	{ "10G chunks, 5 GiB: a tenth", false, 10 * GiB, 5 * GiB, 512 * MiB },
	{ "10G chunks, 10 GiB: a tenth is the cap", false, 10 * GiB, 10 * GiB, GiB },
	{ "10G chunks, 10 GiB - 10", false, 10 * GiB, 10 * GiB - 10, GiB - 1 },
	{ "10G chunks, 10 GiB + 10", false, 10 * GiB, 10 * GiB + 10, GiB },
	{ "256M chunks (sysfs), 100 GiB: the chunk size", false, 256 * MiB, 100 * GiB,
	  256 * MiB },
	{ "10G chunks, 9 bytes: a tenth rounds to 0", false, 10 * GiB, 9, 0 },
	{ "zoned 256M zones, 1 GiB: the chunk size whole", true, 256 * MiB, GiB, 256 * MiB },
	{ "zoned 2G zones, 100 GiB: no 1 GiB cap", true, 2 * GiB, 100 * GiB, 2 * GiB },
};

static void test_effective_data_chunk(void)
{
	u32 i;

	for (i = 0; i < sizeof(chunk_rows) / sizeof(chunk_rows[0]); i++) {
		const struct chunk_row *r = &chunk_rows[i];
		struct btrfs_reserve_state st = {
			.zoned = r->zoned, .data_chunk_size = r->data_chunk_size,
			.total_rw_bytes = r->total_rw_bytes,
		};

		check_u64(r->what, btrfs_calc_effective_data_chunk_size(&st), r->effective);
	}
}

struct space_chunk_row {
	const char *what;
	u64 total_rw_bytes;
	u64 flags;
	u64 chunk_size;		/* worked by hand */
};

static const struct space_chunk_row space_chunk_rows[] = {
	{ "data, 1 GiB", GiB, BTRFS_BLOCK_GROUP_DATA, 10 * GiB },
	{ "mixed, 1 GiB: the data rule", GiB,
	  BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA, 10 * GiB },
	{ "system, 1 TiB", 1024 * GiB, BTRFS_BLOCK_GROUP_SYSTEM, 32 * MiB },
	{ "metadata, 50 GiB", 50 * GiB, BTRFS_BLOCK_GROUP_METADATA, 256 * MiB },
	{ "metadata, 50 GiB + 1", 50 * GiB + 1, BTRFS_BLOCK_GROUP_METADATA, GiB },
	{ "metadata DUP, 1 GiB", GiB, BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DUP,
	  256 * MiB },
	{ "metadata, nothing writeable", 0, BTRFS_BLOCK_GROUP_METADATA, 256 * MiB },
	{ "metadata, the top of u64", 18446744073709551615ULL, BTRFS_BLOCK_GROUP_METADATA, GiB },
	/*
	 * truth images: allocation/TYPE/chunk_size as sysfs showed it after a
	 * 6.18 mount, total_rw_bytes the devices' DEV_ITEM total_bytes summed
	 */
	{ "truth size-1t: metadata", 1024 * GiB, BTRFS_BLOCK_GROUP_METADATA, GiB },
	{ "truth size-10g: metadata", 10 * GiB, BTRFS_BLOCK_GROUP_METADATA, 256 * MiB },
	{ "truth raid10-4dev: metadata RAID10, 4 GiB", 4 * GiB,
	  BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_RAID10, 256 * MiB },
	{ "truth size-256m: data", 256 * MiB, BTRFS_BLOCK_GROUP_DATA, 10 * GiB },
	{ "truth mixed-256m: mixed", 256 * MiB,
	  BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA, 10 * GiB },
	{ "truth mixed-256m: system", 256 * MiB, BTRFS_BLOCK_GROUP_SYSTEM, 32 * MiB },
};

static void test_space_chunk_size(void)
{
	u32 i;

	for (i = 0; i < sizeof(space_chunk_rows) / sizeof(space_chunk_rows[0]); i++) {
		const struct space_chunk_row *r = &space_chunk_rows[i];

		check_u64(r->what, btrfs_calc_chunk_size(r->total_rw_bytes, r->flags),
			  r->chunk_size);
	}
}

int main(void)
{
	test_metadata_sizes();
	test_csum_sizes();
	test_effective_data_chunk();
	test_space_chunk_size();
	return unit_failures ? 1 : 0;
}
