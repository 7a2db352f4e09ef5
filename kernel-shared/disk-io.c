// SPDX-License-Identifier: GPL-2.0
/*
 * Opening a filesystem read-only, after fs/btrfs/disk-io.c: superblock
 * checks (btrfs_validate_super, btrfs_check_super_csum), tree block
 * verification (btrfs_validate_extent_buffer, verify_parent_transid, the
 * first-key check of read_tree_block) with retry on the other copies like
 * btrfs_read_extent_buffer(), and the root items open_ctree() loads.  A
 * block verified is handed to extent_io.c's cache, which may keep a
 * key-only copy of it instead: callers use the block it hands back.
 * Behaviour reproduced: 6.1-6.18.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "common/checksum.h"
#include "common/io-batch.h"
#include "common/uuid-text.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/image-restore.h"
#include "kernel-shared/reada.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/tree-checker.h"
#include "kernel-shared/volumes.h"

#ifndef BLKROGET
#define BLKROGET	_IO(0x12, 94)	/* linux/fs.h, which clashes with uapi/ */
#endif

#define BTRFS_SUPER_FLAG_SUPP	(BTRFS_SUPER_FLAG_SEEDING |		\
				 BTRFS_SUPER_FLAG_METADUMP |		\
				 BTRFS_SUPER_FLAG_METADUMP_V2 |		\
				 BTRFS_SUPER_FLAG_CHANGING_FSID |	\
				 BTRFS_SUPER_FLAG_CHANGING_FSID_V2 |	\
				 (1ULL << 2) /* BTRFS_SUPER_FLAG_ERROR */ | \
				 (1ULL << 0) /* BTRFS_HEADER_FLAG_WRITTEN */ | \
				 (1ULL << 1) /* BTRFS_HEADER_FLAG_RELOC */)

/* Incompat features a 6.18 kernel without experimental options mounts */
#define BTRFS_FEATURE_INCOMPAT_SUPP	(((1ULL << 13) - 1) |		\
					 BTRFS_FEATURE_INCOMPAT_ZONED |		\
					 BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA)
#define BTRFS_FEATURE_COMPAT_RO_SUPP	(BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE | \
					 BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID | \
					 BTRFS_FEATURE_COMPAT_RO_VERITY | \
					 BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE)

static void format_csum(char *buf, const u8 *csum, size_t size)
{
	size_t i;

	for (i = 0; i < size; i++)
		sprintf(buf + 2 * i, "%02x", csum[i]);
}

static bool csum_matches(u16 csum_type, const u8 *block, u32 len,
			 char *wanted, char *found)
{
	unsigned char result[CSUM_MAX_SIZE];
	size_t size = csum_algo_size(csum_type);

	if (csum_compute(csum_type, block + BTRFS_CSUM_SIZE,
			 len - BTRFS_CSUM_SIZE, result))
		return false;
	if (!memcmp(result, block, size))
		return true;
	format_csum(wanted, block, size);
	format_csum(found, result, size);
	return false;
}

static bool is_power_of_2(u64 n)
{
	return n && !(n & (n - 1));
}

/*
 * Where a superblock check failed: the device and the copy's offset, and
 * the superblock member with the value found (and the one expected).
 */
static const struct btrfs_error_loc *fill_super_loc(struct btrfs_error_loc *loc,
						    const char *path, int mirror,
						    const char *field, bool has_found,
						    u64 found, bool has_expected,
						    u64 expected)
{
	*loc = BTRFS_ERROR_LOC_NONE;
	loc->device = path;
	loc->physical = btrfs_sb_offset(mirror);
	if (has_expected)
		return btrfs_loc_value(loc, field, found, expected);
	if (has_found)
		return btrfs_loc_found(loc, field, found);
	return btrfs_loc_field(loc, field);
}

#define super_loc(path, mirror, field, has_found, found, has_expected, expected) \
	fill_super_loc(&(struct btrfs_error_loc){ 0 }, (path), (mirror),	\
		       (field), (has_found), (found), (has_expected), (expected))

#define super_error_at(fs_info, loc, path, mirror, fmt, ...)		\
	btrfs_fs_error_at(fs_info, -EUCLEAN, (loc),			\
		"superblock copy %d of %s: " fmt, (mirror), (path), ##__VA_ARGS__)
#define super_error(fs_info, path, mirror, fmt, ...)			\
	super_error_at(fs_info, super_loc(path, mirror, NULL, false, 0, false, 0), \
		       path, mirror, fmt, ##__VA_ARGS__)
/* a member whose value the message quotes in its own form (a checksum) */
#define super_field_error(fs_info, path, mirror, field, fmt, ...)		\
	super_error_at(fs_info, super_loc(path, mirror, field, false, 0, false, 0), \
		       path, mirror, fmt, ##__VA_ARGS__)
#define super_found_error(fs_info, path, mirror, field, found, fmt, ...)	\
	super_error_at(fs_info, super_loc(path, mirror, field, true, found, false, 0), \
		       path, mirror, fmt, ##__VA_ARGS__)
#define super_value_error(fs_info, path, mirror, field, found, expected, fmt, ...) \
	super_error_at(fs_info, super_loc(path, mirror, field, true, found, true,	\
					  expected),				\
		       path, mirror, fmt, ##__VA_ARGS__)

/* The first of the three roots not on a sector, for the error record */
static const char *unaligned_root(const struct btrfs_super_block *sb,
				  u32 sectorsize, u64 *bytenr)
{
	*bytenr = btrfs_super_root(sb);
	if (*bytenr % sectorsize)
		return "root";
	*bytenr = btrfs_super_chunk_root(sb);
	if (*bytenr % sectorsize)
		return "chunk_root";
	*bytenr = btrfs_super_log_root(sb);
	return "log_root";
}

/* The first of the three root levels out of range, for the error record */
static const char *bad_root_level(const struct btrfs_super_block *sb, u64 *level)
{
	*level = btrfs_super_root_level(sb);
	if (*level >= BTRFS_MAX_LEVEL)
		return "root_level";
	*level = btrfs_super_chunk_root_level(sb);
	if (*level >= BTRFS_MAX_LEVEL)
		return "chunk_root_level";
	*level = btrfs_super_log_root_level(sb);
	return "log_root_level";
}

/*
 * btrfs_supported_blocksize() (fs.c, 6.15 on; the same rule open-coded
 * in validate_super() before): 4K, or the page size of the machine.  The
 * kernels modelled agree on it without CONFIG_BTRFS_EXPERIMENTAL, which
 * alone (6.18) takes any size up to 64K; 5.12 to 5.14 mounted 4K sectors
 * on larger pages read-only only, which is what the model mounts.  The
 * page size is this machine's: the kernel to compare with runs here.
 */
static bool kernel_supports_sectorsize(u32 sectorsize)
{
	long page_size = sysconf(_SC_PAGESIZE);

	return sectorsize == 4096 || (page_size > 0 && sectorsize == (u64)page_size);
}

static int check_super_sizes(struct btrfs_fs_info *fs_info,
			     const struct btrfs_super_block *sb,
			     const char *path, int mirror)
{
	u32 sectorsize = btrfs_super_sectorsize(sb);
	u32 nodesize = btrfs_super_nodesize(sb);
	u64 value;

	if (!is_power_of_2(sectorsize) || sectorsize < BTRFS_MIN_BLOCKSIZE ||
	    sectorsize > BTRFS_MAX_METADATA_BLOCKSIZE)
		return super_found_error(fs_info, path, mirror,
			"sectorsize", sectorsize,
			"invalid sectorsize %u, expect a power of 2 in [4096, 65536]",
			sectorsize);
	if (!kernel_supports_sectorsize(sectorsize))
		return super_found_error(fs_info, path, mirror,
			"sectorsize", sectorsize,
			"sectorsize %u not yet supported for page size %ld (Linux 5.12 to 6.18, built without CONFIG_BTRFS_EXPERIMENTAL, mount a sector size of 4096 or the page size only)",
			sectorsize, sysconf(_SC_PAGESIZE));
	if (!is_power_of_2(nodesize) || nodesize < sectorsize ||
	    nodesize > BTRFS_MAX_METADATA_BLOCKSIZE)
		return super_found_error(fs_info, path, mirror,
			"nodesize", nodesize,
			"invalid nodesize %u, expect a power of 2 in [%u, 65536]",
			nodesize, sectorsize);
	if (nodesize != btrfs_super_leafsize(sb))
		return super_value_error(fs_info, path, mirror,
			"leafsize", btrfs_super_leafsize(sb), nodesize,
			"invalid leafsize %u, expect nodesize %u",
			btrfs_super_leafsize(sb), nodesize);
	/* only the power of two is checked: mkfs writes the sector size */
	if (!is_power_of_2(btrfs_super_stripesize(sb)))
		return super_found_error(fs_info, path, mirror,
			"stripesize", btrfs_super_stripesize(sb),
			"invalid stripesize %u", btrfs_super_stripesize(sb));
	if (btrfs_super_root(sb) % sectorsize ||
	    btrfs_super_chunk_root(sb) % sectorsize ||
	    btrfs_super_log_root(sb) % sectorsize) {
		const char *field = unaligned_root(sb, sectorsize, &value);

		return super_found_error(fs_info, path, mirror,
			field, value,
			"tree root %llu, chunk root %llu or log root %llu not aligned to sectorsize %u",
			(unsigned long long)btrfs_super_root(sb),
			(unsigned long long)btrfs_super_chunk_root(sb),
			(unsigned long long)btrfs_super_log_root(sb), sectorsize);
	}
	return 0;
}

static int check_super_counts(struct btrfs_fs_info *fs_info,
			      const struct btrfs_super_block *sb,
			      const char *path, int mirror)
{
	u32 array_size = btrfs_super_sys_array_size(sb);
	u64 value;

	if (btrfs_super_root_level(sb) >= BTRFS_MAX_LEVEL ||
	    btrfs_super_chunk_root_level(sb) >= BTRFS_MAX_LEVEL ||
	    btrfs_super_log_root_level(sb) >= BTRFS_MAX_LEVEL) {
		const char *field = bad_root_level(sb, &value);

		return super_found_error(fs_info, path, mirror,
			field, value,
			"invalid root level %u, chunk root level %u or log root level %u, max %d",
			btrfs_super_root_level(sb), btrfs_super_chunk_root_level(sb),
			btrfs_super_log_root_level(sb), BTRFS_MAX_LEVEL - 1);
	}
	if (btrfs_super_num_devices(sb) == 0)
		return super_found_error(fs_info, path, mirror, "num_devices", 0,
			"number of devices is 0");
	if (btrfs_super_total_bytes(sb) == 0)
		return super_found_error(fs_info, path, mirror, "total_bytes", 0,
			"total_bytes is 0");
	if (btrfs_super_bytes_used(sb) < 6ULL * btrfs_super_nodesize(sb))
		return super_found_error(fs_info, path, mirror,
			"bytes_used", btrfs_super_bytes_used(sb),
			"bytes_used is too small %llu, expect at least %llu",
			(unsigned long long)btrfs_super_bytes_used(sb),
			6ULL * btrfs_super_nodesize(sb));
	if (array_size > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE ||
	    array_size < sizeof(struct btrfs_disk_key) + sizeof(struct btrfs_chunk))
		return super_found_error(fs_info, path, mirror,
			"sys_chunk_array_size", array_size,
			"system chunk array size %u, expect [%zu, %u]", array_size,
			sizeof(struct btrfs_disk_key) + sizeof(struct btrfs_chunk),
			BTRFS_SYSTEM_CHUNK_ARRAY_SIZE);
	return 0;
}

static int check_super_features(struct btrfs_fs_info *fs_info,
				const struct btrfs_super_block *sb,
				const char *path, int mirror)
{
	u64 flags = btrfs_super_flags(sb);
	u64 incompat = btrfs_super_incompat_flags(sb);
	u64 compat_ro = btrfs_super_compat_ro_flags(sb);

	if (flags & ~BTRFS_SUPER_FLAG_SUPP)
		return super_found_error(fs_info, path, mirror,
			"flags", flags,
			"unrecognized or unsupported super flag 0x%llx",
			(unsigned long long)(flags & ~BTRFS_SUPER_FLAG_SUPP));
	if (incompat & ~BTRFS_FEATURE_INCOMPAT_SUPP)
		return super_found_error(fs_info, path, mirror,
			"incompat_flags", incompat,
			"unsupported incompat features 0x%llx",
			(unsigned long long)(incompat & ~BTRFS_FEATURE_INCOMPAT_SUPP));
	if (compat_ro & ~BTRFS_FEATURE_COMPAT_RO_SUPP)
		return super_found_error(fs_info, path, mirror,
			"compat_ro_flags", compat_ro,
			"unsupported compat_ro features 0x%llx",
			(unsigned long long)(compat_ro & ~BTRFS_FEATURE_COMPAT_RO_SUPP));
	if ((compat_ro & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE) &&
	    (!(compat_ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE) ||
	     !(incompat & BTRFS_FEATURE_INCOMPAT_NO_HOLES)))
		return super_found_error(fs_info, path, mirror,
			"compat_ro_flags", compat_ro,
			"block-group-tree feature requires free-space-tree and no-holes");
	return 0;
}

/* btrfs_validate_super() plus the checksum, for one copy */
int btrfs_validate_super(struct btrfs_fs_info *fs_info,
			 const struct btrfs_super_block *sb, const char *path,
			 int mirror)
{
	const u8 *metadata_fsid;
	char wanted[2 * CSUM_MAX_SIZE + 1], found[2 * CSUM_MAX_SIZE + 1];
	u16 csum_type = btrfs_super_csum_type(sb);
	int ret;

	if (btrfs_super_magic(sb) != BTRFS_MAGIC)
		return btrfs_fs_error(fs_info, -EINVAL,
			"%s: no btrfs superblock (bad magic) at offset %llu",
			path, (unsigned long long)btrfs_sb_offset(mirror));
	if (!csum_algo_valid(csum_type))
		return super_found_error(fs_info, path, mirror,
			"csum_type", csum_type,
			"unsupported checksum type %u", csum_type);
	if (csum_algo_unavailable(csum_type))
		return super_found_error(fs_info, path, mirror,
			"csum_type", csum_type, "%s checksums: %s",
			csum_algo_name(csum_type), csum_algo_unavailable(csum_type));
	if (!csum_matches(csum_type, (const u8 *)sb, BTRFS_SUPER_INFO_SIZE,
			  wanted, found))
		return super_field_error(fs_info, path, mirror, "csum",
			"%s checksum mismatch, stored %s computed %s",
			csum_algo_name(csum_type), wanted, found);
	if (btrfs_super_bytenr(sb) != btrfs_sb_offset(mirror))
		return super_value_error(fs_info, path, mirror,
			"bytenr", btrfs_super_bytenr(sb), btrfs_sb_offset(mirror),
			"super bytenr %llu, expect %llu",
			(unsigned long long)btrfs_super_bytenr(sb),
			(unsigned long long)btrfs_sb_offset(mirror));
	ret = check_super_features(fs_info, sb, path, mirror);
	if (!ret)
		ret = check_super_sizes(fs_info, sb, path, mirror);
	if (!ret)
		ret = check_super_counts(fs_info, sb, path, mirror);
	if (ret)
		return ret;
	metadata_fsid = (btrfs_super_incompat_flags(sb) & BTRFS_FEATURE_INCOMPAT_METADATA_UUID) ?
			sb->metadata_uuid : sb->fsid;
	if (memcmp(metadata_fsid, sb->dev_item.fsid, BTRFS_FSID_SIZE))
		return super_error(fs_info, path, mirror,
			"dev_item UUID does not match metadata fsid");
	return 0;
}

bool btrfs_super_device_size(const void *buf, u64 *size, u64 *used)
{
	const struct btrfs_super_block *sb = buf;
	u64 total = btrfs_super_total_bytes(sb);

	if (btrfs_super_magic(sb) != BTRFS_MAGIC)
		return false;
	*size = btrfs_stack_device_total_bytes(&sb->dev_item);
	if (total && total < *size)
		*size = total;
	*used = btrfs_stack_device_bytes_used(&sb->dev_item);
	return true;
}

#define CHUNK_ITEM_MIN	(offsetof(struct btrfs_chunk, stripe))
#define STRIPED_PROFILES (BTRFS_BLOCK_GROUP_RAID0 | BTRFS_BLOCK_GROUP_RAID10 | \
			  BTRFS_BLOCK_GROUP_RAID5 | BTRFS_BLOCK_GROUP_RAID6)

/* The chunk of @array (@size bytes) mapping @logical, NULL if none */
static const struct btrfs_chunk *sys_array_chunk(const u8 *array, u32 size, u64 logical)
{
	u32 off = 0;

	while (off + sizeof(struct btrfs_disk_key) + CHUNK_ITEM_MIN <= size) {
		const struct btrfs_disk_key *key = (const void *)(array + off);
		const struct btrfs_chunk *chunk = (const void *)(key + 1);
		u16 n = btrfs_stack_chunk_num_stripes(chunk);
		u32 len = sizeof(*key) + CHUNK_ITEM_MIN + n * sizeof(struct btrfs_stripe);
		u64 start = btrfs_disk_key_offset(key);

		if (btrfs_disk_key_type(key) != BTRFS_CHUNK_ITEM_KEY || !n || off + len > size)
			return NULL;
		if (logical >= start && logical - start < btrfs_stack_chunk_length(chunk))
			return chunk;
		off += len;
	}
	return NULL;
}

/*
 * The chunk root's copy on the device of @buf: its sys_chunk_array maps
 * it (single or DUP, whose stripes hold the chunk whole).
 */
static bool btrfs_chunk_root_at(const void *buf, u64 *physical, u32 *len)
{
	const struct btrfs_super_block *sb = buf;
	u32 size = btrfs_super_sys_array_size(sb);
	u64 logical = btrfs_super_chunk_root(sb);
	u64 devid = btrfs_stack_device_id(&sb->dev_item);
	const struct btrfs_chunk *chunk;
	u16 i;

	if (size > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE)
		return false;
	chunk = sys_array_chunk(sb->sys_chunk_array, size, logical);
	if (!chunk || (btrfs_stack_chunk_type(chunk) & STRIPED_PROFILES))
		return false;
	for (i = 0; i < btrfs_stack_chunk_num_stripes(chunk); i++) {
		const struct btrfs_stripe *st = &(&chunk->stripe)[i];
		u64 start = btrfs_disk_key_offset((const struct btrfs_disk_key *)chunk - 1);

		if (btrfs_stack_stripe_devid(st) != devid)
			continue;
		*physical = btrfs_stack_stripe_offset(st) + logical - start;
		*len = btrfs_super_nodesize(sb);
		return *len >= sizeof(struct btrfs_header) && *len <= BTRFS_MAX_METADATA_BLOCKSIZE;
	}
	return false;
}

static int add_range(struct io_range **ranges, u32 *nr, u32 *cap, u64 start, u64 end)
{
	if (*nr == *cap) {
		struct io_range *bigger = realloc(*ranges, 2 * *cap * sizeof(**ranges));

		if (!bigger)
			return -ENOMEM;
		*ranges = bigger;
		*cap *= 2;
	}
	(*ranges)[(*nr)++] = (struct io_range){ start, end < start ? UINT64_MAX : end };
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct io_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * What btrfs-space may read of the device of @buf: the first MiB (the
 * superblock and what precedes it), the superblock copies, and every
 * stripe on it of a chunk holding metadata or the system tree.  Data
 * chunks are never read (no command reads file data), nor space outside
 * chunks.  Told by a chunk root that is a leaf with a good checksum (a
 * small filesystem: all its chunks in one leaf); a stripe is taken as
 * long as its chunk, which covers every profile.
 */
static int btrfs_read_ranges(const void *buf, const void *block, u32 len,
			     struct io_range **ranges, u32 *nr)
{
	const struct btrfs_super_block *sb = buf;
	const struct btrfs_header *h = block;
	u64 devid = btrfs_stack_device_id(&sb->dev_item);
	u8 csum[CSUM_MAX_SIZE];
	u32 cap = 16, items, i;
	int mirror, ret = 0;

	if (!csum_algo_valid(btrfs_super_csum_type(sb)) ||
	    csum_compute(btrfs_super_csum_type(sb), (const u8 *)block + BTRFS_CSUM_SIZE,
			 len - BTRFS_CSUM_SIZE, csum) ||
	    memcmp(csum, block, csum_algo_size(btrfs_super_csum_type(sb))) ||
	    btrfs_header_bytenr(h) != btrfs_super_chunk_root(sb) ||
	    btrfs_header_level(h) != 0)
		return -EAGAIN;
	items = btrfs_header_nritems(h);
	if (items > (len - sizeof(*h)) / sizeof(struct btrfs_item))
		return -EAGAIN;
	*nr = 0;
	*ranges = malloc(cap * sizeof(**ranges));
	if (!*ranges)
		return -ENOMEM;
	ret = add_range(ranges, nr, &cap, 0, 1ULL << 20);
	for (mirror = 0; !ret && mirror < BTRFS_SUPER_MIRROR_MAX; mirror++)
		ret = add_range(ranges, nr, &cap, btrfs_sb_offset(mirror),
				btrfs_sb_offset(mirror) + BTRFS_SUPER_INFO_SIZE);
	for (i = 0; !ret && i < items; i++) {
		const struct btrfs_item *item = (const void *)((const u8 *)block + sizeof(*h) +
							       i * sizeof(*item));
		u32 off = btrfs_raw_item_offset(item), size = btrfs_raw_item_size(item);
		const struct btrfs_chunk *chunk;
		u16 s;

		if (btrfs_disk_key_type(&item->key) != BTRFS_CHUNK_ITEM_KEY)
			continue;
		if (size < CHUNK_ITEM_MIN || off > len - sizeof(*h) ||
		    size > len - sizeof(*h) - off)
			continue;
		chunk = (const void *)((const u8 *)block + sizeof(*h) + off);
		if (!(btrfs_stack_chunk_type(chunk) &
		      (BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_SYSTEM)))
			continue;
		for (s = 0; !ret && s < btrfs_stack_chunk_num_stripes(chunk); s++) {
			const struct btrfs_stripe *st = &(&chunk->stripe)[s];
			u64 start = btrfs_stack_stripe_offset(st);

			if ((const u8 *)(st + 1) > (const u8 *)chunk + size)
				break;
			if (btrfs_stack_stripe_devid(st) == devid)
				ret = add_range(ranges, nr, &cap, start,
						start + btrfs_stack_chunk_length(chunk));
		}
	}
	if (ret) {
		free(*ranges);
		*ranges = NULL;
		return ret;
	}
	qsort(*ranges, *nr, sizeof(**ranges), range_cmp);
	return 0;
}

const struct io_format btrfs_io_format = {
	/* btrfs_sb_offset(0) and btrfs_sb_offset(1) */
	.super_offset = { BTRFS_SUPER_INFO_OFFSET, 16384ULL << BTRFS_SUPER_MIRROR_SHIFT },
	.super_size = BTRFS_SUPER_INFO_SIZE,
	.super_device_size = btrfs_super_device_size,
	.super_id = btrfs_scan_one_device,
	.chunk_root_at = btrfs_chunk_root_at,
	.read_ranges = btrfs_read_ranges,
	.dump_layout = btrfs_image_restore_layout,
};

static int read_one_super(struct btrfs_fs_info *fs_info, struct io_dev *io,
			  int mirror, struct btrfs_super_block *sb)
{
	u64 offset = btrfs_sb_offset(mirror);
	struct io_fault fault;
	char what[400];
	int ret;

	/*
	 * btrfs_read_disk_super(): a copy that ends at the very end of the
	 * device is refused too (">=", so the kernel never scans a device of
	 * exactly 68 KiB).
	 */
	if (offset + BTRFS_SUPER_INFO_SIZE >= io->size)
		return btrfs_fs_error(fs_info, -EINVAL,
			"%s: too small for superblock copy %d at offset %llu (size %llu)",
			io->path, mirror, (unsigned long long)offset,
			(unsigned long long)io->size);
	ret = io_read_fault(io, sb, sizeof(*sb), offset, BTRFS_IO_SUPERBLOCK,
			    &fault);
	if (ret) {
		io_fault_describe(io->path, &fault, what, sizeof(what));
		return btrfs_fs_error(fs_info, ret, "%s", what);
	}
	return btrfs_validate_super(fs_info, sb, io->path, mirror);
}

/*
 * What validate_super() only warns about, for the superblock the mount
 * uses: the kernel mounts anyway, so these are warnings, not errors.
 */
static void warn_suspicious_super(struct btrfs_fs_info *fs_info,
				  const struct btrfs_super_block *sb)
{
	u64 generation = btrfs_super_generation(sb);
	u64 cache_gen = btrfs_super_cache_generation(sb);

	if (btrfs_super_num_devices(sb) > (1ULL << 31))
		btrfs_fs_warn(fs_info, "suspicious number of devices: %llu",
			      (unsigned long long)btrfs_super_num_devices(sb));
	if (generation < btrfs_super_chunk_root_generation(sb))
		btrfs_fs_warn(fs_info,
			"suspicious: generation < chunk_root_generation: %llu < %llu",
			(unsigned long long)generation,
			(unsigned long long)btrfs_super_chunk_root_generation(sb));
	if (generation < cache_gen && cache_gen != (u64)-1)
		btrfs_fs_warn(fs_info,
			"suspicious: generation < cache_generation: %llu < %llu",
			(unsigned long long)generation, (unsigned long long)cache_gen);
}

static void init_fs_from_super(struct btrfs_fs_info *fs_info,
			       const struct btrfs_super_block *sb, int mirror)
{
	fs_info->super = *sb;
	fs_info->super_mirror = mirror;
	warn_suspicious_super(fs_info, sb);
	fs_info->nodesize = btrfs_super_nodesize(sb);
	fs_info->sectorsize = btrfs_super_sectorsize(sb);
	fs_info->csum_type = btrfs_super_csum_type(sb);
	fs_info->csum_size = csum_algo_size(fs_info->csum_type);
	fs_info->generation = btrfs_super_generation(sb);
	fs_info->incompat = btrfs_super_incompat_flags(sb);
	fs_info->compat_ro = btrfs_super_compat_ro_flags(sb);
	memcpy(fs_info->fsid, sb->fsid, BTRFS_FSID_SIZE);
	if (fs_info->incompat & BTRFS_FEATURE_INCOMPAT_METADATA_UUID)
		memcpy(fs_info->metadata_uuid, sb->metadata_uuid, BTRFS_FSID_SIZE);
	else
		memcpy(fs_info->metadata_uuid, sb->fsid, BTRFS_FSID_SIZE);
}

/*
 * device_list_add(): a device whose metadata_uuid change (btrfstune -m)
 * was interrupted is refused at scan time, before any mount (v6.7+;
 * older kernels tried to pair it with its half-changed siblings).
 */
static int check_scanned_super(struct btrfs_fs_info *fs_info,
			       const struct btrfs_super_block *sb, const char *path)
{
	struct btrfs_error_loc loc = BTRFS_ERROR_LOC_NONE;

	loc.device = path;
	loc.physical = btrfs_sb_offset(0);
	if (btrfs_super_flags(sb) & BTRFS_SUPER_FLAG_CHANGING_FSID_V2)
		return btrfs_fs_error_at(fs_info, -EAGAIN,
			btrfs_loc_found(&loc, "flags", btrfs_super_flags(sb)),
			"device %s has incomplete metadata_uuid change, please use btrfstune to complete",
			path);
	return 0;
}

/* A device given for a devid already taken, with another device uuid */
static struct btrfs_device *add_unmatched(struct btrfs_fs_info *fs_info, u64 devid)
{
	struct btrfs_device *dev = realloc(fs_info->unmatched,
					   (fs_info->nr_unmatched + 1) * sizeof(*dev));

	if (!dev)
		return NULL;
	fs_info->unmatched = dev;
	dev = &fs_info->unmatched[fs_info->nr_unmatched++];
	memset(dev, 0, sizeof(*dev));
	dev->devid = devid;
	return dev;
}

/*
 * Open every path, read its superblock and match it to the others by
 * fsid; the newest generation wins as the filesystem's superblock, like
 * the kernel's latest_dev.  A device with the devid of one given before
 * and the same device uuid is a copy (refused); with another uuid both
 * are kept as the kernel's scan keeps them, until the sys_array says
 * which one the devid is (volumes.c).
 */
static int open_devices(struct btrfs_fs_info *fs_info,
			const struct btrfs_open_args *args)
{
	struct btrfs_super_block sb, latest;
	u64 latest_gen = 0;
	int i, ret;

	/* the first device sets latest: without one there is nothing to read */
	if (args->nr_paths < 1)
		return btrfs_fs_error(fs_info, -EINVAL, "no device given");
	for (i = 0; i < args->nr_paths; i++) {
		struct io_dev io;
		struct btrfs_device *dev;
		u64 devid;

		ret = io_open(&io, args->paths[i], &btrfs_io_format,
			      &fs_info->io_stats);
		if (ret && io.error[0])
			return btrfs_fs_error(fs_info, ret, "%s", io.error);
		if (ret)
			return btrfs_fs_error(fs_info, ret, "cannot open %s: %s",
					      args->paths[i], strerror(-ret));
		ret = read_one_super(fs_info, &io, args->super_mirror, &sb);
		if (!ret)
			ret = check_scanned_super(fs_info, &sb, args->paths[i]);
		if (ret) {
			io_close(&io);
			return ret;
		}
		if (i && memcmp(sb.fsid, latest.fsid, BTRFS_FSID_SIZE)) {
			io_close(&io);
			return btrfs_fs_error(fs_info, -EINVAL,
				"%s belongs to another filesystem than %s (fsid differs)",
				args->paths[i], args->paths[0]);
		}
		devid = btrfs_stack_device_id(&sb.dev_item);
		dev = btrfs_find_device(fs_info, devid);
		if (dev && memcmp(dev->uuid, sb.dev_item.uuid, BTRFS_UUID_SIZE))
			dev = add_unmatched(fs_info, devid);
		else if (dev) {
			io_close(&io);
			return btrfs_fs_error(fs_info, -EINVAL,
				"%s: devid %llu was already given as %s", args->paths[i],
				(unsigned long long)devid,
				btrfs_find_device(fs_info, devid)->io.path);
		} else {
			dev = btrfs_add_device(fs_info, devid);
		}
		if (!dev) {
			io_close(&io);
			return -ENOMEM;
		}
		dev->io = io;
		dev->present = true;
		dev->sb_generation = btrfs_super_generation(&sb);
		memcpy(dev->uuid, sb.dev_item.uuid, BTRFS_UUID_SIZE);
		if (!i || dev->sb_generation > latest_gen) {
			latest = sb;
			latest_gen = dev->sb_generation;
		}
	}
	init_fs_from_super(fs_info, &latest, args->super_mirror);
	return 0;
}

/*
 * read_block_copy()'s answer when a read-ahead is deferred and the page
 * cache does not hold the block: nothing was read or counted
 */
#define BLOCK_NOT_CACHED	1

static int read_block_copy(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   u64 bytenr, u8 *buf, int mirror, unsigned int purpose)
{
	u64 done = 0;

	while (done < fs_info->nodesize) {
		struct btrfs_io_piece piece;
		struct btrfs_error_loc loc = BTRFS_ERROR_LOC_NONE;
		struct io_fault fault;
		char what[400];
		int ret;

		ret = btrfs_map_block(fs_info, err, bytenr + done,
				      fs_info->nodesize - done, mirror, &piece);
		if (ret)
			return ret;
		if (!piece.dev)
			return -ENODEV;
		/*
		 * A deferred read-ahead (reada.c) starts where the page cache
		 * cannot serve a block in one piece; io_read_cached() counts
		 * as io_read() does, and anything but a miss reads again here
		 */
		ret = -EAGAIN;
		if (!done && piece.length == fs_info->nodesize &&
		    btrfs_prefetch_deferred(fs_info)) {
			ret = io_read_cached(&piece.dev->io, buf, piece.length,
					     piece.physical, purpose);
			if (ret == -EAGAIN)
				return BLOCK_NOT_CACHED;
		}
		if (ret)
			ret = io_read_fault(&piece.dev->io, buf + done, piece.length,
					    piece.physical, purpose, &fault);
		loc.device = piece.dev->io.path;
		loc.logical = bytenr + done;
		loc.physical = piece.physical;
		if (ret == -ERANGE)
			return btrfs_record_error_at(err, ret, &loc,
				"tree block %llu: cannot read %llu bytes at physical %llu of %s: beyond the end of the device",
				(unsigned long long)bytenr,
				(unsigned long long)piece.length,
				(unsigned long long)piece.physical,
				piece.dev->io.path);
		if (ret) {
			io_fault_describe(piece.dev->io.path, &fault, what,
					  sizeof(what));
			return btrfs_record_error_at(err, ret, &loc, "tree block %llu: %s",
						     (unsigned long long)bytenr, what);
		}
		done += piece.length;
	}
	return 0;
}

static void fill_block_header(struct btrfs_tree_block *eb)
{
	const struct btrfs_header *h = (const struct btrfs_header *)eb->data;

	eb->level = btrfs_header_level(h);
	eb->nritems = btrfs_header_nritems(h);
	eb->owner = btrfs_header_owner(h);
	eb->generation = btrfs_header_generation(h);
}

/* btrfs_validate_extent_buffer() + verify_parent_transid() + first key */
static int verify_header(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			 const struct btrfs_tree_block *eb, int mirror)
{
	const struct btrfs_header *h = (const struct btrfs_header *)eb->data;
	char wanted[2 * CSUM_MAX_SIZE + 1], found[2 * CSUM_MAX_SIZE + 1];
	struct btrfs_error_loc loc = BTRFS_ERROR_LOC_NONE;

	loc.logical = eb->start;
	loc.mirror = mirror;
	if (btrfs_header_bytenr(h) != eb->start)
		return btrfs_record_error_at(err, -EUCLEAN,
			btrfs_loc_value(&loc, "bytenr", btrfs_header_bytenr(h), eb->start),
			"bad tree block start, mirror %d want %llu have %llu",
			mirror + 1, (unsigned long long)eb->start,
			(unsigned long long)btrfs_header_bytenr(h));
	if (memcmp(h->fsid, fs_info->metadata_uuid, BTRFS_FSID_SIZE))
		return btrfs_record_error(err, -EUCLEAN,
			"bad fsid on logical %llu mirror %d", (unsigned long long)eb->start,
			mirror + 1);
	if (eb->level >= BTRFS_MAX_LEVEL)
		return btrfs_record_error(err, -EUCLEAN,
			"bad tree block level, mirror %d level %d on logical %llu",
			mirror + 1, eb->level, (unsigned long long)eb->start);
	if (!csum_matches(fs_info->csum_type, eb->data, eb->len, wanted, found))
		return btrfs_record_error(err, -EUCLEAN,
			"checksum verify failed on logical %llu mirror %d wanted 0x%s found 0x%s level %d",
			(unsigned long long)eb->start, mirror + 1, wanted, found, eb->level);
	return 0;
}

/*
 * report_unexpected() without its messages: true when the block is what its
 * parent says.  A search touches a cached node or leaf again and again
 * (4,700 times in a warm inspect of 3 TiB); building the error location
 * first made each check cost 57 instructions.
 */
static inline bool block_as_expected(const struct btrfs_tree_block *eb,
				     const struct btrfs_tree_check *check)
{
	struct btrfs_key first;

	if (eb->level != check->level ||
	    (check->transid && eb->generation != check->transid))
		return false;
	if (!check->has_first_key)
		return true;
	if (!eb->nritems)
		return false;
	if (eb->level)
		btrfs_node_key_to_cpu(eb, 0, &first);
	else
		btrfs_item_key_to_cpu(eb, 0, &first);
	return !btrfs_comp_keys(&first, &check->first_key);
}

__attribute__((noinline, cold))
static int report_unexpected(struct btrfs_error *err, const struct btrfs_tree_block *eb,
			     const struct btrfs_tree_check *check, int mirror)
{
	struct btrfs_error_loc loc = BTRFS_ERROR_LOC_NONE;
	struct btrfs_key first;

	loc.logical = eb->start;
	loc.tree = check->root;
	loc.mirror = mirror;
	if (eb->level != check->level)
		return btrfs_record_error_at(err, -EUCLEAN,
			btrfs_loc_value(&loc, "level", eb->level, check->level),
			"level verify failed on logical %llu mirror %d wanted %d found %d",
			(unsigned long long)eb->start, mirror + 1, check->level, eb->level);
	if (check->transid && eb->generation != check->transid)
		return btrfs_record_error_at(err, -EUCLEAN,
			btrfs_loc_value(&loc, "generation", eb->generation, check->transid),
			"parent transid verify failed on logical %llu mirror %d wanted %llu found %llu",
			(unsigned long long)eb->start, mirror + 1,
			(unsigned long long)check->transid,
			(unsigned long long)eb->generation);
	if (!check->has_first_key)
		return 0;
	if (!eb->nritems)
		return btrfs_record_error(err, -EUCLEAN,
			"invalid tree nritems, bytenr=%llu nritems=0 expect >0",
			(unsigned long long)eb->start);
	if (eb->level)
		btrfs_node_key_to_cpu(eb, 0, &first);
	else
		btrfs_item_key_to_cpu(eb, 0, &first);
	loc.slot = 0;
	loc.has_key = true;
	loc.key = first;		/* the key found; the message has the one expected */
	if (btrfs_comp_keys(&first, &check->first_key))
		return btrfs_record_error_at(err, -EUCLEAN, &loc,
			"tree first key mismatch detected, bytenr=%llu parent_transid %llu key expected=(%llu,%u,%llu) has=(%llu,%u,%llu)",
			(unsigned long long)eb->start,
			(unsigned long long)check->transid,
			(unsigned long long)check->first_key.objectid,
			check->first_key.type,
			(unsigned long long)check->first_key.offset,
			(unsigned long long)first.objectid, first.type,
			(unsigned long long)first.offset);
	return 0;
}

/* The block is what its parent says it is: level, generation, first key */
static int verify_expected(struct btrfs_error *err, const struct btrfs_tree_block *eb,
			   const struct btrfs_tree_check *check, int mirror)
{
	return block_as_expected(eb, check) ? 0 : report_unexpected(err, eb, check, mirror);
}

static int read_and_verify(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   struct btrfs_tree_block *eb,
			   const struct btrfs_tree_check *check, int mirror,
			   unsigned int purpose)
{
	int ret;

	ret = read_block_copy(fs_info, err, eb->start, eb->data, mirror, purpose);
	if (ret)
		return ret;
	fill_block_header(eb);
	/*
	 * btrfs_validate_extent_buffer() (6.2 on): the parent's level,
	 * generation and first key before the tree-checker, so a block in
	 * the wrong place (a node pointing to itself or an ancestor) is named
	 * by "level verify failed", not by what its items look like as a
	 * block of the level expected. 6.1 ran the tree-checker first.
	 */
	ret = verify_header(fs_info, err, eb, mirror);
	if (!ret)
		ret = verify_expected(err, eb, check, mirror);
	if (!ret)
		ret = btrfs_check_tree_block(fs_info, err, eb);
	return ret;
}

static int check_cached(struct btrfs_error *err, struct btrfs_tree_block *eb,
			const struct btrfs_tree_check *check)
{
	int ret = verify_expected(err, eb, check, eb->mirror);

	if (!ret)
		ret = btrfs_check_eb_owner(err, eb, check->root);
	if (!ret)
		eb->refs++;
	return ret;
}

static void count_block(struct btrfs_fs_info *fs_info,
			const struct btrfs_tree_block *eb, unsigned int purpose)
{
	if (purpose != BTRFS_IO_BG_SEARCH)
		return;
	if (eb->level)
		fs_info->bg_search.nodes++;
	else
		fs_info->bg_search.leaves++;
}

/* The bad copies of one block, for the message; the first few are kept */
#define BAD_COPIES_KEPT		4

struct bad_copies {
	int nr;
	int mirror[BAD_COPIES_KEPT];
	struct btrfs_error err[BAD_COPIES_KEPT];
};

/*
 * Why no copy served: every bad copy's own error (an I/O error on one and
 * a checksum on the other are different stories), or that all are on
 * missing devices.
 */
static void record_read_failure(struct btrfs_error *err, u64 bytenr,
				const struct btrfs_tree_check *check,
				const struct bad_copies *bad, int copies)
{
	char msg[sizeof(err->msg)];
	struct btrfs_error_loc first;
	int i, n, kept = bad->nr < BAD_COPIES_KEPT ? bad->nr : BAD_COPIES_KEPT;
	int share;

	if (!bad->nr) {
		struct btrfs_error_loc loc = BTRFS_ERROR_LOC_NONE;

		loc.logical = bytenr;
		loc.tree = check->root;
		btrfs_record_error_at(err, -ENODEV, &loc,
			"%s: tree block %llu: every copy is on a missing device",
			btrfs_root_name(check->root), (unsigned long long)bytenr);
		return;
	}
	/* the record's device was copied out of its loc: put it back */
	first = bad->err[0].loc;
	if (bad->err[0].device[0])
		first.device = bad->err[0].device;
	if (copies == 1) {
		btrfs_record_error_at(err, bad->err[0].err, &first, "%s",
				  bad->err[0].msg);
		return;
	}
	n = snprintf(msg, sizeof(msg), "all %d copies bad", copies);
	/* each copy gets an equal share of the line */
	share = (int)(sizeof(msg) - n) / kept - 12;
	for (i = 0; i < kept && n < (int)sizeof(msg); i++)
		n += snprintf(msg + n, sizeof(msg) - n, "; copy %d: %.*s",
			      bad->mirror[i] + 1, share, bad->err[i].msg);
	btrfs_record_error_at(err, bad->err[0].err, &first, "%s", msg);
}

/*
 * One copy read and verified, its error (if any) in @rec and not in the
 * read's record: a copy another one replaces is no error of the read.
 */
static int read_one_copy(struct btrfs_fs_info *fs_info, struct btrfs_tree_block *eb,
			 const struct btrfs_tree_check *check, int mirror,
			 unsigned int purpose, struct btrfs_error *rec)
{
	int ret;

	ret = read_and_verify(fs_info, rec, eb, check, mirror, purpose);
	if (ret && !rec->loc.logical) {
		rec->loc.logical = eb->start;
		rec->loc.tree = check->root;
	}
	rec->loc.mirror = mirror;
	return ret;
}

struct btrfs_read_observer btrfs_set_read_observer(struct btrfs_fs_info *fs_info,
						   struct btrfs_read_observer observer)
{
	struct btrfs_read_observer prev = fs_info->read_observer;

	fs_info->read_observer = observer;
	return prev;
}

static int observe_read(struct btrfs_fs_info *fs_info, u64 bytenr)
{
	const struct btrfs_read_observer *obs = &fs_info->read_observer;

	return obs->fn ? obs->fn(obs->ctx, bytenr) : 0;
}

/*
 * Read and verify a tree block, trying every copy the profile keeps until
 * one passes; a block already read is served from the cache.  A copy on a
 * missing device is skipped quietly; a bad copy that another one replaced
 * is kept as a note for the user, not an error; the error of a read that
 * fails is recorded in @err.
 */
int btrfs_read_tree_block(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			  u64 bytenr, const struct btrfs_tree_check *check,
			  unsigned int purpose, struct btrfs_tree_block **ret_eb)
{
	struct btrfs_tree_block *eb = btrfs_cache_lookup(fs_info, bytenr);
	struct bad_copies bad;		/* 2 KiB: not cleared for a cached block */
	struct btrfs_error rec;
	struct btrfs_chunk_map *map;
	int copies, mirror, ret = -EIO;

	ret = observe_read(fs_info, bytenr);
	if (ret)
		return ret;
again:
	if (eb) {
		ret = check_cached(err, eb, check);
		*ret_eb = ret ? NULL : eb;
		return ret;
	}
	if (!bytenr || bytenr % fs_info->sectorsize)
		return btrfs_record_error(err, -EUCLEAN,
			"%s: tree block bytenr %llu is not aligned to sectorsize %u",
			btrfs_root_name(check->root), (unsigned long long)bytenr,
			fs_info->sectorsize);
	map = btrfs_find_chunk_map(fs_info, bytenr, fs_info->nodesize);
	if (!map || map->start > bytenr)
		return btrfs_record_error(err, -EUCLEAN,
			"%s: tree block %llu is not covered by any chunk",
			btrfs_root_name(check->root), (unsigned long long)bytenr);
	eb = btrfs_alloc_tree_block(fs_info, bytenr);
	if (!eb)
		return -ENOMEM;
	copies = btrfs_num_copies(map);
	bad.nr = 0;			/* err[] and mirror[] are filled below nr */
	for (mirror = 0; mirror < copies; mirror++) {
		/* empty (not zeroed whole: 800 bytes of text a read, 90 k instructions a run) */
		rec.err = 0;
		rec.msg[0] = '\0';
		rec.device[0] = '\0';
		memset(&rec.loc, 0, sizeof(rec.loc));
		ret = read_one_copy(fs_info, eb, check, mirror, purpose, &rec);
		if (!ret)
			break;
		if (ret == BLOCK_NOT_CACHED) {
			/* the read-ahead reads it with the rest; then the cache serves */
			btrfs_free_tree_block(fs_info, eb);
			btrfs_prefetch_run_deferred(fs_info);
			eb = btrfs_cache_lookup(fs_info, bytenr);
			goto again;
		}
		if (ret == -ENODEV)
			continue;
		if (bad.nr < BAD_COPIES_KEPT) {
			bad.mirror[bad.nr] = mirror;
			bad.err[bad.nr] = rec;
		}
		bad.nr++;
	}
	if (ret) {
		record_read_failure(err, bytenr, check, &bad, copies);
		btrfs_free_tree_block(fs_info, eb);
		return ret;
	}
	/* read_tree_block(): the owner is checked on the copy that passed */
	ret = btrfs_check_eb_owner(err, eb, check->root);
	if (ret) {
		btrfs_free_tree_block(fs_info, eb);
		return ret;
	}
	if (bad.nr)
		btrfs_fs_note_bad_copy(fs_info,
			 "tree block %llu: %d bad cop%s (copy %d: %.400s), copy %d used",
			 (unsigned long long)bytenr, bad.nr, bad.nr > 1 ? "ies" : "y",
			 bad.mirror[0] + 1, bad.err[0].msg, mirror + 1);
	eb->mirror = mirror;
	eb->refs = 1;
	count_block(fs_info, eb, purpose);
	ret = btrfs_cache_insert(fs_info, &eb);
	if (ret) {
		btrfs_free_tree_block(fs_info, eb);
		return ret;
	}
	*ret_eb = eb;
	return 0;
}

struct btrfs_root_ref btrfs_tree_root_ref(const struct btrfs_fs_info *fs_info)
{
	struct btrfs_root_ref root = {
		.objectid = BTRFS_ROOT_TREE_OBJECTID,
		.bytenr = btrfs_super_root(&fs_info->super),
		.level = btrfs_super_root_level(&fs_info->super),
		.generation = btrfs_super_generation(&fs_info->super),
		.found = true,
	};

	return root;
}

/*
 * Exact search of (objectid, type, offset) in the tree root.  Returns 0 and
 * the item, 1 if absent, <0 on error.  The path keeps the leaf referenced
 * until released.
 */
static int find_tree_root_item(struct btrfs_fs_info *fs_info, u64 objectid,
			       u8 type, u64 offset, struct btrfs_path *path,
			       const void **item, u32 *size)
{
	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(fs_info);
	struct btrfs_key key = { objectid, type, offset };
	int ret;

	ret = btrfs_search_slot(fs_info, &tree_root, &key, path, BTRFS_IO_ROOT_TREE);
	if (ret)
		return ret;
	*item = btrfs_item_ptr(path->nodes[0], path->slots[0], size);
	return 0;
}

/*
 * btrfs_find_root() with offset -1, as btrfs_get_fs_root() asks for a
 * subvolume or the data relocation tree: the item just before the search
 * key's slot, in the same leaf only (slot 0 is "not found"), when it is
 * a ROOT_ITEM of @objectid.  btrfs-convert writes the data relocation
 * tree's at offset 2, mkfs at 0.
 */
static int find_newest_root_item(struct btrfs_fs_info *fs_info, u64 objectid,
				 struct btrfs_path *path, const void **item, u32 *size)
{
	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(fs_info);
	struct btrfs_key key = { objectid, BTRFS_ROOT_ITEM_KEY, (u64)-1 };
	struct btrfs_key found;
	int ret;

	ret = btrfs_search_slot(fs_info, &tree_root, &key, path, BTRFS_IO_ROOT_TREE);
	if (ret <= 0)
		return ret < 0 ? ret : 1;	/* an offset of -1 is no root's */
	if (path->slots[0] == 0)
		return 1;
	path->slots[0]--;
	btrfs_item_key_to_cpu(path->nodes[0], path->slots[0], &found);
	if (found.objectid != objectid || found.type != BTRFS_ROOT_ITEM_KEY)
		return 1;
	*item = btrfs_item_ptr(path->nodes[0], path->slots[0], size);
	return 0;
}

static int read_root_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			  u64 objectid, bool newest, struct btrfs_root_ref *root)
{
	const struct btrfs_root_item_head *ri;
	struct btrfs_path path = { .err = err };
	u32 size;
	int ret;

	memset(root, 0, sizeof(*root));
	root->objectid = objectid;
	if (newest)
		ret = find_newest_root_item(fs_info, objectid, &path,
					    (const void **)&ri, &size);
	else
		ret = find_tree_root_item(fs_info, objectid, BTRFS_ROOT_ITEM_KEY, 0,
					  &path, (const void **)&ri, &size);
	if (ret) {
		btrfs_release_path(&path);
		return ret < 0 ? ret : 0;
	}
	if (size < sizeof(*ri)) {
		struct btrfs_error_loc loc = BTRFS_ERROR_LOC_NONE;

		loc.logical = path.nodes[0]->start;
		loc.tree = BTRFS_ROOT_TREE_OBJECTID;
		loc.slot = path.slots[0];
		loc.has_key = true;
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &loc.key);
		ret = btrfs_record_error_at(err, -EUCLEAN, &loc,
			"corrupt leaf: root=1 block=%llu slot=%d, invalid root item size for %s, have %u expect at least %zu",
			(unsigned long long)path.nodes[0]->start, path.slots[0],
			btrfs_root_name(objectid), size, sizeof(*ri));
		btrfs_release_path(&path);
		return ret;
	}
	root->bytenr = btrfs_root_bytenr(ri);
	root->level = btrfs_root_level(ri);
	root->generation = btrfs_root_generation(ri);
	root->bytes_used = btrfs_root_bytes_used(ri);
	root->found = true;
	btrfs_release_path(&path);
	if (root->level >= BTRFS_MAX_LEVEL)
		return btrfs_record_error(err, -EUCLEAN,
			"root item of %s: invalid level %u", btrfs_root_name(objectid),
			root->level);
	return 0;
}

/* load_global_roots_objectid()/btrfs_read_tree_root() for one tree */
int btrfs_read_root_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			 u64 objectid, struct btrfs_root_ref *root)
{
	return read_root_item(fs_info, err, objectid, false, root);
}

/* btrfs_get_fs_root(): a subvolume's or the data relocation tree's root */
int btrfs_read_fs_root_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    u64 objectid, struct btrfs_root_ref *root)
{
	return read_root_item(fs_info, err, objectid, true, root);
}

static u64 balance_target(const struct btrfs_disk_balance_args *args)
{
	if (!(btrfs_balance_args_flags(args) & BTRFS_BALANCE_ARGS_CONVERT))
		return 0;
	return btrfs_balance_args_target(args);
}

/* The convert targets of a balance item; live.c finds the item by tree search */
void btrfs_set_balance_convert(struct btrfs_fs_info *fs_info,
			       const struct btrfs_balance_item *bi)
{
	/* like get_restripe_target(), only the per-type CONVERT flag counts */
	fs_info->balance_convert[BTRFS_SPACE_DATA] = balance_target(&bi->data);
	fs_info->balance_convert[BTRFS_SPACE_METADATA] = balance_target(&bi->meta);
	fs_info->balance_convert[BTRFS_SPACE_SYSTEM] = balance_target(&bi->sys);
}

/*
 * btrfs_recover_balance(): a paused balance that converts profiles makes
 * its target the allocation profile from mount on (spec-corrections §4.4).
 */
static int read_balance_item(struct btrfs_fs_info *fs_info)
{
	const struct btrfs_balance_item *bi;
	struct btrfs_path path = { 0 };
	u32 size;
	int ret;

	ret = find_tree_root_item(fs_info, BTRFS_BALANCE_OBJECTID,
				  BTRFS_TEMPORARY_ITEM_KEY, 0, &path,
				  (const void **)&bi, &size);
	if (ret) {
		btrfs_release_path(&path);
		return ret < 0 ? ret : 0;
	}
	if (size < sizeof(*bi)) {
		btrfs_release_path(&path);
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"balance item: invalid size %u, expect %zu", size, sizeof(*bi));
	}
	btrfs_set_balance_convert(fs_info, bi);
	btrfs_release_path(&path);
	return 0;
}

/* The trees this filesystem's features make the mount load */
static bool root_wanted(const struct btrfs_fs_info *fs_info, u64 objectid)
{
	switch (objectid) {
	case BTRFS_FREE_SPACE_TREE_OBJECTID:
		return btrfs_fs_compat_ro(fs_info, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE);
	case BTRFS_BLOCK_GROUP_TREE_OBJECTID:
		return btrfs_fs_compat_ro(fs_info, BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE);
	case BTRFS_RAID_STRIPE_TREE_OBJECTID:
		return btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_RAID_STRIPE_TREE);
	default:
		return true;
	}
}

static int root_missing(struct btrfs_fs_info *fs_info, u64 objectid,
			const char *kernel_words)
{
	struct btrfs_error_loc loc = BTRFS_ERROR_LOC_NONE;

	loc.logical = btrfs_super_root(&fs_info->super);
	loc.tree = BTRFS_ROOT_TREE_OBJECTID;
	loc.has_key = true;
	loc.key = (struct btrfs_key){ objectid, BTRFS_ROOT_ITEM_KEY, 0 };
	return btrfs_fs_error_at(fs_info, -ENOENT, &loc,
		"%s: the root tree (root node %llu) has no ROOT_ITEM for the %s (%llu ROOT_ITEM); Linux mounts it only with -o rescue=ignorebadroots",
		kernel_words, (unsigned long long)loc.logical,
		btrfs_root_name(objectid), (unsigned long long)objectid);
}

/*
 * A tree the mount cannot go without: load_global_roots_objectid()
 * fails with "failed to load root NAME" for the extent, csum and free
 * space trees, btrfs_read_roots() with "failed to read root
 * (objectid=N): -2" for the block group, dev and raid stripe trees, both
 * -ENOENT, in this order (checked on 6.18 with each item removed).
 */
static int check_roots_found(struct btrfs_fs_info *fs_info)
{
	static const struct {
		u64 objectid;
		size_t offset;
		const char *kernel_words;
	} required[] = {
		{ BTRFS_EXTENT_TREE_OBJECTID, offsetof(struct btrfs_fs_info, extent_root),
		  "failed to load root extent" },
		{ BTRFS_CSUM_TREE_OBJECTID, offsetof(struct btrfs_fs_info, csum_root),
		  "failed to load root csum" },
		{ BTRFS_FREE_SPACE_TREE_OBJECTID, offsetof(struct btrfs_fs_info, free_space_root),
		  "failed to load root free space" },
		{ BTRFS_BLOCK_GROUP_TREE_OBJECTID, offsetof(struct btrfs_fs_info, block_group_root),
		  "failed to read root (objectid=11): -2" },
		{ BTRFS_DEV_TREE_OBJECTID, offsetof(struct btrfs_fs_info, dev_root),
		  "failed to read root (objectid=4): -2" },
		{ BTRFS_RAID_STRIPE_TREE_OBJECTID, offsetof(struct btrfs_fs_info, stripe_root),
		  "failed to read root (objectid=12): -2" },
	};
	size_t i;

	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		const struct btrfs_root_ref *root = (const void *)
			((const char *)fs_info + required[i].offset);

		if (!root_wanted(fs_info, required[i].objectid) || root->found)
			continue;
		return root_missing(fs_info, required[i].objectid,
				    required[i].kernel_words);
	}
	return 0;
}

/*
 * The trees whose root items open_ctree() loads (btrfs_read_roots,
 * load_global_roots), whatever reads the items: the image, or the
 * kernel's tree search in live mode.
 */
int btrfs_load_roots(struct btrfs_fs_info *fs_info, btrfs_root_item_fn read_item,
		     void *ctx)
{
	int ret;

	ret = read_item(ctx, BTRFS_EXTENT_TREE_OBJECTID, &fs_info->extent_root);
	if (!ret)
		ret = read_item(ctx, BTRFS_DEV_TREE_OBJECTID, &fs_info->dev_root);
	if (!ret)
		ret = read_item(ctx, BTRFS_CSUM_TREE_OBJECTID, &fs_info->csum_root);
	if (!ret && btrfs_fs_compat_ro(fs_info, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE))
		ret = read_item(ctx, BTRFS_FREE_SPACE_TREE_OBJECTID,
				&fs_info->free_space_root);
	if (!ret && btrfs_fs_compat_ro(fs_info, BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE))
		ret = read_item(ctx, BTRFS_BLOCK_GROUP_TREE_OBJECTID,
				&fs_info->block_group_root);
	if (!ret && btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_RAID_STRIPE_TREE))
		ret = read_item(ctx, BTRFS_RAID_STRIPE_TREE_OBJECTID, &fs_info->stripe_root);
	if (!ret)
		ret = check_roots_found(fs_info);
	return ret;
}

static int image_root_item(void *ctx, u64 objectid, struct btrfs_root_ref *root)
{
	struct btrfs_fs_info *fs_info = ctx;

	return btrfs_read_root_item(fs_info, &fs_info->err, objectid, root);
}

static int read_roots(struct btrfs_fs_info *fs_info)
{
	int ret = btrfs_load_roots(fs_info, image_root_item, fs_info);

	if (!ret)
		ret = read_balance_item(fs_info);
	return ret;
}

static bool listed(u64 devid, const u64 *devids, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (devids[i] == devid)
			return true;
	return false;
}

/*
 * The end of btrfs_read_chunk_tree(): the DEV_ITEM count only warns
 * (since 5.18 and stable 4.14+; it failed the mount before), a
 * superblock total_bytes below the writeable devices' sum fails it.
 */
static int check_device_totals(struct btrfs_fs_info *fs_info)
{
	u64 super_total = btrfs_super_total_bytes(&fs_info->super);
	u64 super_devices = btrfs_super_num_devices(&fs_info->super);
	struct btrfs_error_loc loc = BTRFS_ERROR_LOC_NONE;
	u64 dev_items = 0;
	u32 i;

	for (i = 0; i < fs_info->nr_devices; i++)
		dev_items += fs_info->devices[i].in_chunk_tree;
	if (dev_items != super_devices)
		btrfs_fs_warn(fs_info,
			"super block num_devices %llu mismatch with DEV_ITEM count %llu, will be repaired on next transaction commit",
			(unsigned long long)super_devices,
			(unsigned long long)dev_items);
	if (super_total < fs_info->total_rw_bytes)
		return btrfs_fs_error_at(fs_info, -EINVAL,
			btrfs_loc_found(&loc, "total_bytes", super_total),
			"super_total_bytes %llu mismatch with fs_devices total_rw_bytes %llu",
			(unsigned long long)super_total,
			(unsigned long long)fs_info->total_rw_bytes);
	return 0;
}

/* A --readonly-device must name a device of this filesystem */
static int check_readonly_devids(struct btrfs_fs_info *fs_info,
				 const struct btrfs_open_args *args)
{
	int i;

	for (i = 0; i < args->nr_readonly_devids; i++) {
		const struct btrfs_device *dev =
			btrfs_find_device(fs_info, args->readonly_devids[i]);

		if (!dev || !dev->in_chunk_tree)
			return btrfs_fs_error(fs_info, -EINVAL,
				"--readonly-device %llu: the filesystem has no devid %llu (its chunk tree lists %u device%s)",
				(unsigned long long)args->readonly_devids[i],
				(unsigned long long)args->readonly_devids[i],
				fs_info->nr_devices, fs_info->nr_devices == 1 ? "" : "s");
	}
	return 0;
}

/*
 * btrfs_open_one_device() sets BTRFS_DEV_STATE_WRITEABLE only when
 * !bdev_read_only(): a read-only block device (losetup -r, a write-
 * protected disk) is not writeable even for the kernel, and every block
 * group with a stripe on it is read-only, as --readonly-device models.
 */
static bool read_only_blockdev(struct btrfs_fs_info *fs_info, const struct btrfs_device *dev)
{
	int ro = 0;

	if (!dev->io.is_blockdev || ioctl(dev->io.fd, BLKROGET, &ro) || !ro)
		return false;
	btrfs_fs_warn(fs_info,
		"%s (devid %llu) is a read-only block device: the kernel does not write to it, so every block group with a stripe on it is read-only, modelled as --readonly-device %llu",
		dev->io.path, (unsigned long long)dev->devid, (unsigned long long)dev->devid);
	return true;
}

/*
 * Devices the chunk tree knows but the command line did not give, and the
 * fs-wide figures read_one_dev() keeps for writeable devices only.  Every
 * present device counts as writeable unless the user says it is not
 * (spec-corrections §2: a read-only device changes §4 and §5).
 */
static int check_devices(struct btrfs_fs_info *fs_info,
			 const struct btrfs_open_args *args)
{
	bool allow_degraded = args->allow_degraded;
	char uuid[37];
	u32 i;
	int ret;

	/* btrfs_free_extra_devids(): a device no stripe named is dropped */
	for (i = 0; i < fs_info->nr_unmatched; i++) {
		uuid_text(fs_info->unmatched[i].uuid, uuid);
		btrfs_fs_warn(fs_info,
			"%s: devid %llu with device uuid %s, which no chunk names: not used, as the kernel drops it",
			fs_info->unmatched[i].io.path,
			(unsigned long long)fs_info->unmatched[i].devid, uuid);
	}
	for (i = 0; i < fs_info->nr_devices; i++) {
		struct btrfs_device *dev = &fs_info->devices[i];

		if (!dev->in_chunk_tree)
			return btrfs_fs_error(fs_info, -EINVAL,
				"%s: devid %llu is not a device of this filesystem (no dev item in the chunk tree)",
				dev->io.path, (unsigned long long)dev->devid);
		if (!dev->present && !allow_degraded) {
			uuid_text(dev->uuid, uuid);
			return btrfs_fs_error(fs_info, -ENOENT,
				"devid %llu uuid %s is missing: the superblock lists %llu devices: give all of them, or --degraded to read what the present ones hold",
				(unsigned long long)dev->devid, uuid,
				(unsigned long long)btrfs_super_num_devices(&fs_info->super));
		}
		if (!dev->present) {
			/* read_one_dev() -> add_missing_dev(), -o degraded: the kernel's warning */
			uuid_text(dev->uuid, uuid);
			btrfs_fs_warn(fs_info, "devid %llu uuid %s is missing",
				      (unsigned long long)dev->devid, uuid);
			fs_info->degraded = true;
			continue;
		}
		/*
		 * A seed device's dev item carries the seed's fsid, and the
		 * kernel must find that filesystem among the scanned devices
		 * (open_seed_devices()); the devices given here all belong
		 * to this filesystem, so it never does.
		 */
		if (memcmp(dev->fsid, fs_info->metadata_uuid, BTRFS_FSID_SIZE)) {
			struct btrfs_error_loc seed_loc = BTRFS_ERROR_LOC_NONE;

			if (allow_degraded)
				continue;
			uuid_text(dev->fsid, uuid);
			/* the dev item's fsid: the chunk tree's DEV_ITEM of devid */
			seed_loc.tree = BTRFS_CHUNK_TREE_OBJECTID;
			return btrfs_fs_error_at(fs_info, -ENOENT,
				btrfs_loc_field(&seed_loc, "fsid"),
				"failed to find fsid %s when attempting to open seed devices (the dev item of devid %llu names it; btrfs-space is given this filesystem's devices only)",
				uuid, (unsigned long long)dev->devid);
		}
		if (listed(dev->devid, args->readonly_devids, args->nr_readonly_devids) ||
		    read_only_blockdev(fs_info, dev))
			continue;
		dev->writeable = true;
		fs_info->rw_devices++;
		fs_info->total_rw_bytes += dev->total_bytes;
		if (dev->total_bytes > dev->bytes_used)
			fs_info->free_chunk_space += dev->total_bytes - dev->bytes_used;
	}
	ret = check_readonly_devids(fs_info, args);
	if (ret)
		return ret;
	return check_device_totals(fs_info);
}

static bool device_present(struct btrfs_fs_info *fs_info, u64 devid)
{
	const struct btrfs_device *dev = btrfs_find_device(fs_info, devid);

	return dev && dev->present;
}

/*
 * btrfs_init_dev_replace(): a replace left STARTED or SUSPENDED needs its
 * source and its target (devid 0, which has no DEV_ITEM until the
 * replace finishes) unless the mount is degraded; else -EIO.  An item of
 * another size is ignored, as the kernel ignores it (with a warning).
 */
static int check_dev_replace(struct btrfs_fs_info *fs_info)
{
	struct btrfs_key key = { 0, BTRFS_DEV_REPLACE_KEY, 0 };
	const struct btrfs_dev_replace_item *item;
	struct btrfs_path path = { 0 };
	u64 state, src;
	bool src_ok, tgt_ok;
	u32 size;
	int ret;

	if (!fs_info->dev_root.found)
		return 0;
	ret = btrfs_search_slot(fs_info, &fs_info->dev_root, &key, &path, BTRFS_IO_DEV_TREE);
	if (ret) {
		btrfs_release_path(&path);
		return ret < 0 ? ret : 0;
	}
	item = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
	if (size != sizeof(*item)) {
		btrfs_release_path(&path);
		btrfs_fs_warn(fs_info, "dev_replace entry found has unexpected size, ignore entry");
		return 0;
	}
	state = le64toh(item->replace_state);
	src = le64toh(item->src_devid);
	btrfs_release_path(&path);
	if (state != BTRFS_IOCTL_DEV_REPLACE_STATE_STARTED &&
	    state != BTRFS_IOCTL_DEV_REPLACE_STATE_SUSPENDED)
		return 0;
	src_ok = device_present(fs_info, src);
	tgt_ok = device_present(fs_info, BTRFS_DEV_REPLACE_DEVID);
	if (src_ok && tgt_ok)
		return 0;
	if (fs_info->allow_degraded) {
		btrfs_fs_warn(fs_info,
			"device replace operation is ongoing and its %s (devid %llu) is missing: read as -o degraded mounts it",
			src_ok ? "target" : "source",
			(unsigned long long)(src_ok ? BTRFS_DEV_REPLACE_DEVID : src));
		return 0;
	}
	return btrfs_fs_error(fs_info, -EIO,
		"cannot mount because device replace operation is ongoing and %s (devid %llu) is missing, need to run 'btrfs dev scan'?%s (the dev tree's DEV_REPLACE item is %s; give the device, or --degraded to read it as -o degraded mounts it)",
		src_ok ? "tgtdev" : "srcdev",
		(unsigned long long)(src_ok ? BTRFS_DEV_REPLACE_DEVID : src),
		!src_ok && !tgt_ok ? " tgtdev (devid 0) is missing too." : "",
		state == BTRFS_IOCTL_DEV_REPLACE_STATE_STARTED ? "STARTED" : "SUSPENDED");
}

/*
 * How a kernel mounts a zoned filesystem depends on its build, not its
 * version: without CONFIG_BLK_DEV_ZONED btrfs_is_zoned() is false and
 * the filesystem is mounted as a regular one (6.18 here: every
 * allocation figure equal, kernel test 031); with it (5.12 on) a regular
 * device gets emulated zones, whose accounting (bytes_zone_unusable,
 * active zones) is not modelled.  The tool reads it as the first does.
 */
static void warn_zoned(struct btrfs_fs_info *fs_info)
{
	if (!btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_ZONED))
		return;
	btrfs_fs_warn(fs_info,
		"zoned filesystem: read as a kernel built without CONFIG_BLK_DEV_ZONED mounts it, as a regular filesystem; a kernel with zoned support mounts it in zoned mode, whose zone accounting is not modelled");
}

void btrfs_fs_info_init(struct btrfs_fs_info *fs_info)
{
	/* every pointer NULL and every count 0: btrfs_close_fs() frees nothing */
	memset(fs_info, 0, sizeof(*fs_info));
}

int btrfs_open_fs(struct btrfs_fs_info *fs_info, const struct btrfs_open_args *args)
{
	int ret;

	btrfs_fs_info_init(fs_info);
	fs_info->allow_degraded = args->allow_degraded;
	fs_info->read = args->read;
	if (args->super_mirror < 0 || args->super_mirror >= BTRFS_SUPER_MIRROR_MAX)
		return btrfs_fs_error(fs_info, -EINVAL,
			"superblock mirror %d out of range [0, %d]",
			args->super_mirror, BTRFS_SUPER_MIRROR_MAX - 1);
	ret = open_devices(fs_info, args);
	if (!ret)
		warn_zoned(fs_info);
	if (!ret)
		ret = btrfs_read_sys_array(fs_info);
	if (ret || args->depth == BTRFS_OPEN_SUPER)
		return ret;
	ret = btrfs_read_chunk_tree(fs_info);
	if (!ret)
		ret = check_devices(fs_info, args);
	if (ret || args->depth == BTRFS_OPEN_CHUNKS)
		return ret;
	ret = read_roots(fs_info);
	if (ret || args->depth == BTRFS_OPEN_ROOTS)
		return ret;
	if (args->read.after_roots)
		args->read.after_roots(fs_info, args->read.after_roots_ctx);
	if (!ret)
		ret = btrfs_verify_dev_extents(fs_info);
	if (!ret)
		ret = check_dev_replace(fs_info);
	if (!ret) {
		fs_info->alloc_base = calloc(1, sizeof(*fs_info->alloc_base));
		if (!fs_info->alloc_base)
			ret = -ENOMEM;
	}
	return ret;
}

void btrfs_close_fs(struct btrfs_fs_info *fs_info)
{
	u32 i;

	btrfs_prefetch_drop_deferred(fs_info);
	btrfs_free_block_cache(fs_info);
	btrfs_free_chunk_maps(fs_info);
	free(fs_info->mount_est);
	fs_info->mount_est = NULL;
	if (fs_info->alloc_base)
		btrfs_alloc_state_free(fs_info->alloc_base);
	free(fs_info->alloc_base);
	fs_info->alloc_base = NULL;
	io_queue_destroy(fs_info->io_queue);
	fs_info->io_queue = NULL;
	for (i = 0; i < fs_info->nr_devices; i++)
		if (fs_info->devices[i].present)
			io_close(&fs_info->devices[i].io);
	for (i = 0; i < fs_info->nr_unmatched; i++)
		io_close(&fs_info->unmatched[i].io);
	free(fs_info->unmatched);
	fs_info->unmatched = NULL;
	fs_info->nr_unmatched = 0;
	free(fs_info->devices);
	free(fs_info->block_groups);
	free(fs_info->live);		/* flat: kernel-shared/live.h */
	fs_info->live = NULL;
	fs_info->devices = NULL;
	fs_info->nr_devices = 0;	/* a second close finds nothing to close */
	fs_info->block_groups = NULL;
	fs_info->nr_block_groups = 0;
}

/* Where the first copy of a block lives, if it is one piece on a present device */
static bool first_copy_request(struct btrfs_fs_info *fs_info, struct btrfs_tree_block *eb,
			       unsigned int purpose, struct io_request *req)
{
	struct btrfs_error unused = { 0 };
	struct btrfs_io_piece piece;
	int ret;

	if (!fs_info->nr_chunks || eb->start % fs_info->sectorsize)
		return false;
	/* a block this cannot map goes the serial way, which says why */
	ret = btrfs_map_block(fs_info, &unused, eb->start, fs_info->nodesize, 0, &piece);
	if (ret || !piece.dev || piece.length != fs_info->nodesize)
		return false;
	*req = (struct io_request) {
		.dev = &piece.dev->io, .buf = eb->data, .len = eb->len,
		.offset = piece.physical, .purpose = purpose,
	};
	return true;
}

/*
 * Verify a block the batch read, and cache it (*@ebp may become its
 * key-only copy, extent_io.c); false sends it the serial way, which reads
 * every copy and records the error if none serves: this copy's error is
 * kept apart, in a record of its own.
 */
static bool accept_batched(struct btrfs_fs_info *fs_info, struct btrfs_tree_block **ebp,
			   const struct btrfs_tree_check *check, unsigned int purpose)
{
	struct btrfs_tree_block *eb = *ebp;
	struct btrfs_error unused = { 0 };

	fill_block_header(eb);
	if (verify_header(fs_info, &unused, eb, 0) ||
	    btrfs_check_tree_block(fs_info, &unused, eb) ||
	    verify_expected(&unused, eb, check, 0) ||
	    btrfs_check_eb_owner(&unused, eb, check->root))
		return false;
	/*
	 * Referenced before it is cached, as in btrfs_read_tree_block():
	 * inserting a leaf evicts unreferenced leaves when the cache is over
	 * budget, and while the leaves of a batch window are held, a new leaf
	 * without a reference can be the one freed (found by fuzzing with a
	 * small leaf cache).
	 */
	eb->mirror = 0;
	eb->refs = 1;
	if (btrfs_cache_insert(fs_info, ebp))
		return false;
	count_block(fs_info, *ebp, purpose);
	return true;
}


/*
 * Read @nr distinct tree blocks together: the first copy of every block
 * not cached yet goes out in one batch of concurrent reads; each block is
 * then verified as btrfs_read_tree_block() does.  A block that fails, or
 * that spans stripes, is read again the serial way, which tries its other
 * copies and reports the error.  On error, blocks already returned in
 * @out are the caller's to put.  Block i is read for @purposes[i].  The
 * error of a block no copy serves is recorded in @err.
 */
int btrfs_read_tree_blocks_tagged(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				  const u64 *bytenrs,
				  const struct btrfs_tree_check *checks,
				  const unsigned int *purposes, u32 nr, u32 max_threads,
				  struct btrfs_tree_block **out)
{
	struct io_request *reqs = calloc(nr ? nr : 1, sizeof(*reqs));
	u32 *req_of = calloc(nr ? nr : 1, sizeof(*req_of));
	u32 i, nr_reqs = 0;
	int ret = 0;

	if (!reqs || !req_of) {
		free(reqs);
		free(req_of);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		out[i] = NULL;
		req_of[i] = nr;
	}
	for (i = 0; i < nr; i++) {
		if (btrfs_cache_lookup(fs_info, bytenrs[i]))
			continue;
		out[i] = btrfs_alloc_tree_block(fs_info, bytenrs[i]);
		if (!out[i]) {
			ret = -ENOMEM;
			break;
		}
		if (first_copy_request(fs_info, out[i], purposes[i], &reqs[nr_reqs]))
			req_of[i] = nr_reqs++;
	}
	if (!ret && max_threads == fs_info->read.io_threads && btrfs_io_queue(fs_info))
		io_queue_read_all(fs_info->io_queue, reqs, nr_reqs);
	else if (!ret)
		ret = io_read_batch(reqs, nr_reqs, max_threads);
	for (i = 0; i < nr; i++) {
		bool batched = !ret && req_of[i] < nr && !reqs[req_of[i]].result;

		if (batched && observe_read(fs_info, bytenrs[i]))
			batched = false;
		if (batched && accept_batched(fs_info, &out[i], &checks[i], purposes[i]))
			continue;
		btrfs_free_tree_block(fs_info, out[i]);
		out[i] = NULL;
		if (!ret)
			ret = btrfs_read_tree_block(fs_info, err, bytenrs[i], &checks[i],
						    purposes[i], &out[i]);
	}
	free(reqs);
	free(req_of);
	return ret;
}

struct io_queue *btrfs_io_queue(struct btrfs_fs_info *fs_info)
{
	if (!fs_info->io_queue && fs_info->read.io_threads > 1 &&
	    io_queue_create(fs_info->read.io_threads, &fs_info->io_queue))
		fs_info->io_queue = NULL;
	return fs_info->io_queue;
}

int btrfs_block_read_start(struct btrfs_fs_info *fs_info, struct io_queue *q,
			   struct btrfs_block_read *br)
{
	br->eb = NULL;
	br->queued = false;
	if (btrfs_cache_lookup(fs_info, br->bytenr))
		return 1;
	br->eb = btrfs_alloc_tree_block(fs_info, br->bytenr);
	if (!br->eb)
		return -ENOMEM;
	if (!first_copy_request(fs_info, br->eb, br->purpose, &br->req))
		return 1;
	br->req.priv = br;
	br->queued = true;
	io_queue_submit(q, &br->req);
	return 0;
}

int btrfs_block_read_finish(struct btrfs_fs_info *fs_info, struct btrfs_block_read *br)
{
	bool ok = br->queued && !br->req.result;

	/* a copy that went to the device: the purpose may have moved since */
	if (ok && observe_read(fs_info, br->bytenr))
		ok = false;
	if (ok && accept_batched(fs_info, &br->eb, &br->check, br->purpose))
		return 0;
	btrfs_free_tree_block(fs_info, br->eb);
	br->eb = NULL;
	return btrfs_read_tree_block(fs_info, br->err, br->bytenr, &br->check,
				     br->purpose, &br->eb);
}

int btrfs_read_tree_blocks(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			   const u64 *bytenrs,
			   const struct btrfs_tree_check *checks, u32 nr,
			   unsigned int purpose, u32 max_threads,
			   struct btrfs_tree_block **out)
{
	unsigned int *purposes = malloc((nr ? nr : 1) * sizeof(*purposes));
	u32 i;
	int ret;

	if (!purposes)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		purposes[i] = purpose;
	ret = btrfs_read_tree_blocks_tagged(fs_info, err, bytenrs, checks, purposes, nr,
					    max_threads, out);
	free(purposes);
	return ret;
}
