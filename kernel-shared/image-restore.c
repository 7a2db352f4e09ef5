// SPDX-License-Identifier: GPL-2.0
/*
 * "btrfs-image -r" of a single-device dump, as btrfs-progs image/ does
 * it (no kernel twin): finds the chunk items in the tree blocks that lie
 * in the system chunks of the superblock's array, moves chunks whose
 * physical ranges overlap to the end of the device, writes every item at
 * the physical address of its logical one (both copies for DUP; at the
 * logical address when no chunk covers it, and the superblock at 64 KiB),
 * adds the METADUMP_V2 flag to the superblock and re-checksums it with
 * crc32c, writes the backup copies that fit, and makes the file as large
 * as the device item says.  The layout below reproduces that, including
 * where restore fails or stops early; common/image-dump.c serves the
 * reads from it.
 *
 * The system chunk array is walked here, not by btrfs_read_sys_array():
 * restore skips a non-SYSTEM chunk where the kernel refuses it, and an
 * empty array fails later, so the checks and their messages are
 * restore's.  The structures and getters are the one format layer's
 * (ctree.h, accessors.h).
 */
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/checksum.h"
#include "common/image-dump.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/image-restore.h"

#define SEARCH_MAX		(512U * 1024)	/* restore's chunk search limit */
#define MAX_CHUNKS		(1U << 18)
#define MAX_SUPERS		64
#define SUPER_SIZE		BTRFS_SUPER_INFO_SIZE
#define SUPER_OFFSET		((u64)BTRFS_SUPER_INFO_OFFSET)
#define SUPER_COPIES		3	/* the item's own, then copies 1 and 2 */

struct dump_chunk {
	u64 logical;
	u64 bytes;
	u64 physical;
	u64 physical_dup;
};

struct dump_range {
	u64 start;
	u64 end;
};

struct restore_layout {
	struct image_dump *dump;
	struct image_dump_item *items;
	u32 nr_items;
	u32 nr_supers;
	struct dump_chunk *chunks;
	u32 nr_chunks;
	u32 *overlapping;
	u32 nr_overlapping;
	struct dump_range *phys;	/* sorted, chunks not moved */
	u32 nr_phys;
	u64 last_physical;
	bool clear_space_cache;
	struct dump_range *sys;
	u32 nr_sys;
	u32 nodesize;
	u16 csum_type;
	u8 fsid[BTRFS_FSID_SIZE];
	u64 dev_size;			/* the end of the pieces so far */
	const struct image_dump_item *last_super;	/* written at 64 KiB */
};

#define layout_error(l, err, fmt, ...)	\
	image_dump_error((l)->dump, (err), fmt, ##__VA_ARGS__)

static u64 add_sat(u64 a, u64 b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static const struct btrfs_super_block *item_super(const struct image_dump_item *it)
{
	return (const struct btrfs_super_block *)it->patch;
}

/* ------------------------------------------------------------------------
 * The superblock and the system chunk array
 */

static int check_super(struct restore_layout *l, const struct btrfs_super_block *sb)
{
	u8 csum[CSUM_MAX_SIZE];
	u16 type = btrfs_super_csum_type(sb);
	u32 nodesize = btrfs_super_nodesize(sb);
	u32 sectorsize = btrfs_super_sectorsize(sb);
	const u8 *raw = (const u8 *)sb;

	if (btrfs_super_magic(sb) != BTRFS_MAGIC)
		return layout_error(l, -EUCLEAN, "its superblock has no btrfs magic");
	if (!csum_algo_valid(type) ||
	    csum_compute(type, raw + BTRFS_CSUM_SIZE, SUPER_SIZE - BTRFS_CSUM_SIZE, csum) ||
	    memcmp(csum, sb->csum, csum_algo_size(type)))
		return layout_error(l, -EUCLEAN,
			"its superblock has a bad checksum (type %u)", type);
	if (sectorsize < 4096 || sectorsize > 65536 || (sectorsize & (sectorsize - 1)) ||
	    nodesize < sectorsize || nodesize > 65536 || (nodesize & (nodesize - 1)))
		return layout_error(l, -EUCLEAN,
			"its superblock has invalid nodesize %u or sectorsize %u",
			nodesize, sectorsize);
	if (btrfs_super_num_devices(sb) != 1)
		return layout_error(l, -EOPNOTSUPP,
			"a dump of a %llu-device filesystem: restore it with btrfs-image -r, which rewrites it to one device",
			(unsigned long long)btrfs_super_num_devices(sb));
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct dump_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int add_sys_range(struct restore_layout *l, u64 start, u64 len)
{
	void *p = realloc(l->sys, (l->nr_sys + 1) * sizeof(*l->sys));

	if (!p)
		return -ENOMEM;
	l->sys = p;
	l->sys[l->nr_sys].start = start;
	l->sys[l->nr_sys].end = add_sat(start, len);
	l->nr_sys++;
	return 0;
}

/* Sort, refuse overlaps (as restore's extent cache does), merge neighbours */
static int merge_sys_ranges(struct restore_layout *l)
{
	u32 i, n = 0;

	if (!l->nr_sys)
		return layout_error(l, -EUCLEAN,
			"no system chunk in the superblock's chunk array");
	qsort(l->sys, l->nr_sys, sizeof(*l->sys), cmp_range);
	for (i = 1; i < l->nr_sys; i++) {
		if (l->sys[i].start < l->sys[n].end)
			return layout_error(l, -EUCLEAN,
				"system chunks %llu and %llu overlap in the superblock",
				(unsigned long long)l->sys[n].start,
				(unsigned long long)l->sys[i].start);
		if (l->sys[i].start == l->sys[n].end)
			l->sys[n].end = l->sys[i].end;
		else
			l->sys[++n] = l->sys[i];
	}
	l->nr_sys = n + 1;
	return 0;
}

/* Restore's walk: room for a key and a one-stripe chunk before each entry */
static int read_sys_array(struct restore_layout *l, const struct btrfs_super_block *sb)
{
	const u32 min_entry = sizeof(struct btrfs_disk_key) + btrfs_chunk_item_size(1);
	u32 size = btrfs_super_sys_array_size(sb), cur = 0;
	int ret;

	if (size > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE)
		return layout_error(l, -EUCLEAN, "system chunk array size %u", size);
	while (cur < size) {
		const struct btrfs_disk_key *key = (const void *)(sb->sys_chunk_array + cur);
		const struct btrfs_chunk *chunk = (const void *)(key + 1);
		u16 num_stripes;
		u32 len;

		if (size - cur < min_entry)
			return layout_error(l, -EUCLEAN,
				"system chunk array too short at offset %u", cur);
		if (btrfs_disk_key_type(key) != BTRFS_CHUNK_ITEM_KEY)
			return layout_error(l, -EUCLEAN,
				"unexpected item type %u in the system chunk array",
				btrfs_disk_key_type(key));
		num_stripes = btrfs_stack_chunk_num_stripes(chunk);
		len = btrfs_chunk_item_size(num_stripes);
		if (!num_stripes || size - cur - sizeof(*key) < len)
			return layout_error(l, -EUCLEAN,
				"bad chunk in the system chunk array at offset %u", cur);
		if (btrfs_stack_chunk_type(chunk) & BTRFS_BLOCK_GROUP_SYSTEM) {
			ret = add_sys_range(l, btrfs_disk_key_offset(key),
					    btrfs_stack_chunk_length(chunk));
			if (ret)
				return ret;
		}
		cur += sizeof(*key) + len;
	}
	return merge_sys_ranges(l);
}

/* Whether [start, start + len) touches a system chunk, like restore asks */
static bool in_sys_chunks(const struct restore_layout *l, u64 start, u64 len)
{
	u32 lo = array_upper_bound(l->sys, l->nr_sys, sizeof(*l->sys),
				   offsetof(struct dump_range, start), start);

	if (lo && start < l->sys[lo - 1].end)
		return true;
	return lo < l->nr_sys && add_sat(start, len) > l->sys[lo].start;
}

static u64 sys_chunk_end(const struct restore_layout *l)
{
	return l->sys[l->nr_sys - 1].end - 1;
}

/* ------------------------------------------------------------------------
 * Chunk items found in the dump
 */

static bool phys_overlaps(const struct dump_range *r, u64 start, u64 end)
{
	return r->start == start || (start >= r->start && start < r->end) ||
	       (r->start >= start && r->start < end);
}

/* Insert into the sorted physical set; 1 if it overlaps one already there */
static int insert_phys(struct restore_layout *l, u64 start, u64 bytes)
{
	u64 end = add_sat(start, bytes);
	u32 lo = array_upper_bound(l->phys, l->nr_phys, sizeof(*l->phys),
				   offsetof(struct dump_range, start), start);
	void *p;

	if ((lo && phys_overlaps(&l->phys[lo - 1], start, end)) ||
	    (lo < l->nr_phys && phys_overlaps(&l->phys[lo], start, end)))
		return 1;
	p = realloc(l->phys, (l->nr_phys + 1) * sizeof(*l->phys));
	if (!p)
		return -ENOMEM;
	l->phys = p;
	memmove(&l->phys[lo + 1], &l->phys[lo], (l->nr_phys - lo) * sizeof(*l->phys));
	l->phys[lo].start = start;
	l->phys[lo].end = end;
	l->nr_phys++;
	return 0;
}

static int note_overlapping(struct restore_layout *l, u32 index)
{
	void *p = realloc(l->overlapping,
			  (l->nr_overlapping + 1) * sizeof(*l->overlapping));

	if (!p)
		return -ENOMEM;
	l->overlapping = p;
	l->overlapping[l->nr_overlapping++] = index;
	return 0;
}

/* The device end restore keeps, with its own arithmetic */
static void update_last_physical(struct restore_layout *l, const struct dump_chunk *c)
{
	if (add_sat(c->physical_dup, c->bytes) > l->last_physical)
		l->last_physical = add_sat(c->physical_dup, c->bytes);
	else if (add_sat(c->physical, c->bytes) > l->last_physical)
		l->last_physical = add_sat(c->physical, c->bytes);
}

static int add_chunk(struct restore_layout *l, const struct dump_chunk *c)
{
	void *p;
	int ret;

	if (l->nr_chunks >= MAX_CHUNKS)
		return layout_error(l, -E2BIG, "more than %u chunk items", MAX_CHUNKS);
	p = realloc(l->chunks, (l->nr_chunks + 1) * sizeof(*l->chunks));
	if (!p)
		return -ENOMEM;
	l->chunks = p;
	l->chunks[l->nr_chunks] = *c;
	ret = insert_phys(l, c->physical, c->bytes);
	if (ret == 1)
		ret = note_overlapping(l, l->nr_chunks);
	if (ret < 0)
		return ret;
	update_last_physical(l, c);
	l->nr_chunks++;
	return 0;
}

/*
 * The chunk items of a chunk tree leaf, as restore reads them: an item
 * header or chunk past the block is skipped, DUP's second stripe only
 * when it fits.
 */
static int read_chunk_leaf(struct restore_layout *l, const u8 *blk)
{
	const struct btrfs_header *hdr = (const void *)blk;
	u32 nritems = btrfs_header_nritems(hdr), i;

	for (i = 0; i < nritems; i++) {
		u64 item_off = sizeof(*hdr) + (u64)i * sizeof(struct btrfs_item), data;
		const struct btrfs_item *item = (const void *)(blk + item_off);
		const struct btrfs_chunk *chunk;
		struct dump_chunk c = { 0 };
		int ret;

		if (item_off + sizeof(*item) > l->nodesize)
			break;
		if (btrfs_disk_key_type(&item->key) != BTRFS_CHUNK_ITEM_KEY)
			continue;
		data = sizeof(*hdr) + (u64)btrfs_raw_item_offset(item);
		if (data + btrfs_chunk_item_size(1) > l->nodesize)
			continue;
		chunk = (const void *)(blk + data);
		c.logical = btrfs_disk_key_offset(&item->key);
		c.bytes = btrfs_stack_chunk_length(chunk);
		c.physical = btrfs_stack_stripe_offset(&chunk->stripe);
		if ((btrfs_stack_chunk_type(chunk) & BTRFS_BLOCK_GROUP_DUP) &&
		    data + btrfs_chunk_item_size(2) <= l->nodesize)
			c.physical_dup = btrfs_stack_stripe_offset(&chunk->stripe + 1);
		ret = add_chunk(l, &c);
		if (ret)
			return ret;
	}
	return 0;
}

/* One tree block in a system chunk: it must be a chunk tree block */
static int read_chunk_block(struct restore_layout *l, const u8 *blk, u64 bytenr)
{
	const struct btrfs_header *hdr = (const void *)blk;

	if (btrfs_header_bytenr(hdr) != bytenr)
		return layout_error(l, -EUCLEAN,
			"tree block %llu in a system chunk says bytenr %llu",
			(unsigned long long)bytenr,
			(unsigned long long)btrfs_header_bytenr(hdr));
	if (memcmp(hdr->fsid, l->fsid, sizeof(l->fsid)))
		return layout_error(l, -EUCLEAN,
			"tree block %llu in a system chunk has another fsid",
			(unsigned long long)bytenr);
	if (btrfs_header_owner(hdr) != BTRFS_CHUNK_TREE_OBJECTID)
		return layout_error(l, -EUCLEAN,
			"tree block %llu in a system chunk has owner %llu, not the chunk tree",
			(unsigned long long)bytenr,
			(unsigned long long)btrfs_header_owner(hdr));
	if (!btrfs_header_level(hdr))
		return read_chunk_leaf(l, blk);
	return 0;
}

/* Tree blocks of an item that lie in system chunks must be chunk tree blocks */
static int read_chunk_blocks(struct restore_layout *l,
			     const struct image_dump_item *it,
			     const u8 *buf, u64 size)
{
	u8 *blk = malloc(l->nodesize);
	u64 off;
	int ret = 0;

	if (!blk)
		return -ENOMEM;
	for (off = 0; off < size && !ret; off += l->nodesize) {
		u64 bytenr = it->logical + off;
		u64 n = size - off < l->nodesize ? size - off : l->nodesize;

		if (!in_sys_chunks(l, bytenr, l->nodesize))
			continue;
		memset(blk, 0, l->nodesize);
		memcpy(blk, buf + off, n);
		ret = read_chunk_block(l, blk, bytenr);
	}
	free(blk);
	return ret;
}

static bool searched(const struct restore_layout *l, const struct image_dump_item *it)
{
	return it->stored <= SEARCH_MAX && it->logical != SUPER_OFFSET &&
	       in_sys_chunks(l, it->logical, it->stored);
}

static int search_item(struct restore_layout *l, const struct image_dump_item *it)
{
	u8 *buf = malloc(SEARCH_MAX);
	u64 size = 0;
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = image_dump_peek(l->dump, it, buf, SEARCH_MAX, &size);
	if (ret)
		ret = layout_error(l, -EUCLEAN,
			"item %llu at file offset %llu: cannot decompress it",
			(unsigned long long)it->logical,
			(unsigned long long)it->file_off);
	else
		ret = read_chunk_blocks(l, it, buf, size);
	free(buf);
	return ret;
}

/* Where restore's chunk search would stop with an error */
static int check_search_end(struct restore_layout *l)
{
	const struct image_dump_item *trunc = image_dump_truncated(l->dump);
	u64 bad_header = image_dump_bad_header(l->dump);
	u64 end = sys_chunk_end(l);

	if (bad_header != UINT64_MAX && image_dump_last_cluster(l->dump) <= end)
		return layout_error(l, -EUCLEAN,
			"bad cluster header at file offset %llu",
			(unsigned long long)bad_header);
	if (trunc && trunc->cluster <= end && searched(l, trunc))
		return layout_error(l, -EUCLEAN,
			"item %llu in the cluster at file offset %llu is cut short by the end of the file",
			(unsigned long long)trunc->logical,
			(unsigned long long)trunc->cluster);
	return 0;
}

static int search_chunk_items(struct restore_layout *l)
{
	u64 end = sys_chunk_end(l);
	u32 i;
	int ret;

	for (i = 0; i < l->nr_items; i++) {
		const struct image_dump_item *it = &l->items[i];

		if (it->cluster > end)
			break;
		if (!searched(l, it))
			continue;
		ret = search_item(l, it);
		if (ret)
			return ret;
	}
	return check_search_end(l);
}

static bool range_has_super(u64 physical, u64 bytes)
{
	int i;

	for (i = 0; i < BTRFS_SUPER_MIRROR_MAX; i++)
		if (btrfs_sb_offset(i) >= physical && btrfs_sb_offset(i) - physical < bytes)
			return true;
	return false;
}

/* Chunks whose physical range overlaps another go to the end, last first */
static int remap_overlapping(struct restore_layout *l)
{
	u32 i;

	for (i = l->nr_overlapping; i-- > 0;) {
		struct dump_chunk *c = &l->chunks[l->overlapping[i]];
		int ret;

		if (range_has_super(c->physical, c->bytes))
			l->clear_space_cache = true;
		c->physical = l->last_physical;
		ret = insert_phys(l, c->physical, c->bytes);
		if (ret < 0)
			return ret;
		if (ret)
			return layout_error(l, -EUCLEAN,
				"cannot move chunk %llu past the others",
				(unsigned long long)c->logical);
		l->last_physical = add_sat(l->last_physical, c->bytes);
	}
	return 0;
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct dump_chunk *x = a, *y = b;

	return x->logical < y->logical ? -1 : x->logical > y->logical;
}

static int sort_chunks(struct restore_layout *l)
{
	u32 i;

	if (l->nr_chunks > 1)
		qsort(l->chunks, l->nr_chunks, sizeof(*l->chunks), cmp_chunk);
	for (i = 1; i < l->nr_chunks; i++)
		if (l->chunks[i].logical == l->chunks[i - 1].logical ||
		    l->chunks[i].logical - l->chunks[i - 1].logical < l->chunks[i - 1].bytes)
			return layout_error(l, -EUCLEAN,
				"chunk items %llu and %llu overlap",
				(unsigned long long)l->chunks[i - 1].logical,
				(unsigned long long)l->chunks[i].logical);
	return 0;
}

static const struct dump_chunk *find_chunk(const struct restore_layout *l, u64 logical)
{
	u32 i = array_find_range(l->chunks, l->nr_chunks, sizeof(*l->chunks),
				 offsetof(struct dump_chunk, logical),
				 offsetof(struct dump_chunk, bytes), logical);

	return i < l->nr_chunks ? &l->chunks[i] : NULL;
}

/* ------------------------------------------------------------------------
 * Superblock items as restore writes them
 */

static void csum_crc32c(struct btrfs_super_block *sb)
{
	const u8 *raw = (const u8 *)sb;
	__le32 crc = htole32(~crc32c_raw(~0U, raw + BTRFS_CSUM_SIZE,
					 SUPER_SIZE - BTRFS_CSUM_SIZE));

	memcpy(sb->csum, &crc, sizeof(crc));
}

/* The item's copy, then the backups at copies 1 and 2, as restore fixes them */
static void fix_super(struct restore_layout *l, u8 *copies)
{
	struct btrfs_super_block *sb = (struct btrfs_super_block *)copies;
	int i;

	sb->flags = htole64(btrfs_super_flags(sb) | BTRFS_SUPER_FLAG_METADUMP_V2);
	sb->num_devices = htole64(1);
	if (l->clear_space_cache)
		sb->cache_generation = htole64(0);
	csum_crc32c(sb);
	for (i = 1; i < SUPER_COPIES; i++) {
		struct btrfs_super_block *m = sb + i;

		memcpy(m, sb, SUPER_SIZE);
		m->bytenr = htole64(btrfs_sb_offset(i));
		csum_crc32c(m);
	}
}

static int load_super(struct restore_layout *l, struct image_dump_item *it)
{
	u8 *data, *copies;
	int ret;

	ret = image_dump_measure(l->dump, it);
	if (ret)
		return ret;
	if (l->nr_supers >= MAX_SUPERS)
		return layout_error(l, -E2BIG, "more than %d superblock items", MAX_SUPERS);
	if (it->len < SUPER_SIZE || (it->zlib && it->len != SUPER_SIZE))
		return layout_error(l, -EUCLEAN,
			"superblock item at file offset %llu has %u bytes",
			(unsigned long long)it->file_off, it->len);
	ret = image_dump_load(l->dump, it, &data);
	if (ret)
		return ret;
	copies = realloc(data, SUPER_COPIES * SUPER_SIZE);
	if (!copies) {
		free(data);
		return -ENOMEM;
	}
	it->patch = copies;
	it->patch_len = SUPER_SIZE;
	l->nr_supers++;
	return 0;
}

/* The superblock that restore reads first: in the first cluster */
static struct image_dump_item *first_super(struct restore_layout *l)
{
	u32 i;

	for (i = 0; i < l->nr_items && !l->items[i].cluster; i++)
		if (l->items[i].logical == SUPER_OFFSET)
			return &l->items[i];
	return NULL;
}

static int read_first_super(struct restore_layout *l)
{
	struct image_dump_item *it = first_super(l);
	const struct btrfs_super_block *sb;
	int ret;

	if (!it)
		return layout_error(l, -EUCLEAN,
			"no superblock item in the first cluster");
	ret = load_super(l, it);
	if (ret)
		return ret;
	sb = item_super(it);
	ret = check_super(l, sb);
	if (ret)
		return ret;
	l->nodesize = btrfs_super_nodesize(sb);
	l->csum_type = btrfs_super_csum_type(sb);
	if (btrfs_super_incompat_flags(sb) & BTRFS_FEATURE_INCOMPAT_METADATA_UUID)
		memcpy(l->fsid, sb->metadata_uuid, sizeof(l->fsid));
	else
		memcpy(l->fsid, sb->fsid, sizeof(l->fsid));
	return read_sys_array(l, sb);
}

/* ------------------------------------------------------------------------
 * Pieces: the physical layout
 */

static int add_piece(struct restore_layout *l, u64 physical, u64 len, u32 src,
		     u64 src_off, u8 mirror)
{
	int ret = image_dump_add_piece(l->dump, physical, len, src, src_off, mirror);

	if (ret)
		return ret;
	if (physical + len > l->dev_size)
		l->dev_size = physical + len;
	if (!mirror && l->items[src].patch && physical == SUPER_OFFSET)
		l->last_super = &l->items[src];
	return 0;
}

/* restore's logical_to_physical(), piece by piece of one item */
static int map_item(struct restore_layout *l, u32 index)
{
	const struct image_dump_item *it = &l->items[index];
	u64 done = 0;

	while (done < it->len) {
		u64 logical = it->logical + done, size = it->len - done;
		u64 physical = logical, dup = 0;
		const struct dump_chunk *c = NULL;
		int ret;

		if (logical != SUPER_OFFSET)
			c = find_chunk(l, logical);
		if (c) {
			u64 off = logical - c->logical;

			size = size < c->bytes - off ? size : c->bytes - off;
			physical = c->physical + off;
			dup = c->physical_dup ? c->physical_dup + off : 0;
		}
		ret = add_piece(l, physical, size, index, done, 0);
		if (!ret && dup)
			ret = add_piece(l, dup, size, index, done, 0);
		if (ret)
			return ret;
		done += size;
	}
	return 0;
}

static int map_items(struct restore_layout *l)
{
	u32 i;
	int ret;

	for (i = 0; i < l->nr_items; i++) {
		struct image_dump_item *it = &l->items[i];

		ret = image_dump_measure(l->dump, it);
		if (!ret && it->logical == SUPER_OFFSET && !it->patch)
			ret = load_super(l, it);
		if (!ret && it->patch)
			fix_super(l, it->patch);
		if (!ret)
			ret = map_item(l, i);
		if (ret)
			return ret;
	}
	return 0;
}

/* The device size, then the backup copies of the last superblock written */
static int finish_layout(struct restore_layout *l)
{
	const struct image_dump_item *last = l->last_super;
	int i;

	if (!last)
		return layout_error(l, -EUCLEAN, "no superblock written");
	if (btrfs_stack_device_total_bytes(&item_super(last)->dev_item) > l->dev_size)
		l->dev_size = btrfs_stack_device_total_bytes(&item_super(last)->dev_item);
	for (i = 1; i < SUPER_COPIES; i++) {
		int ret;

		if (btrfs_sb_offset(i) + SUPER_SIZE > l->dev_size)
			break;
		ret = image_dump_add_piece(l->dump, btrfs_sb_offset(i), SUPER_SIZE,
					   last - l->items, 0, i);
		if (ret)
			return ret;
	}
	return 0;
}

static const char *restore_note(const struct restore_layout *l)
{
	if (l->csum_type == CSUM_ALGO_CRC32C)
		return NULL;
	return "btrfs-image -r checksums the superblock it writes with crc32c whatever the filesystem's checksum type, so the restored superblock does not verify, and neither does this one";
}

/* The steps of the layout, in order; the first that fails ends it */
static int (*const restore_steps[])(struct restore_layout *l) = {
	read_first_super,
	search_chunk_items,
	remap_overlapping,
	sort_chunks,
	map_items,
	finish_layout,
};

int btrfs_image_restore_layout(struct image_dump *dump)
{
	struct restore_layout l = { .dump = dump };
	size_t i;
	int ret = 0;

	l.items = image_dump_items(dump, &l.nr_items);
	for (i = 0; !ret && i < sizeof(restore_steps) / sizeof(restore_steps[0]); i++)
		ret = restore_steps[i](&l);
	if (!ret)
		image_dump_set_layout(dump, l.dev_size, l.nr_chunks, restore_note(&l));
	free(l.chunks);
	free(l.phys);
	free(l.overlapping);
	free(l.sys);
	return ret;
}
