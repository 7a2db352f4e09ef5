// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs-image dumps read in place.  The format, as btrfs-progs image/
 * writes it: a sequence of 1 KiB-aligned clusters, each a header (magic,
 * its own file offset, item count, compression) with up to 83 item
 * entries (logical bytenr, stored size), followed by the items' bytes,
 * each item zlib-compressed on its own when the cluster says so.
 *
 * "btrfs-image -r" of a single-device dump: finds the chunk items in the
 * tree blocks that lie in the system chunks of the superblock's array,
 * moves chunks whose physical ranges overlap to the end of the device,
 * writes every item at the physical address of its logical one (both
 * copies for DUP; at the logical address when no chunk covers it, and the
 * superblock at 64 KiB), adds the METADUMP_V2 flag to the superblock and
 * re-checksums it with crc32c, writes the backup copies that fit, and
 * makes the file as large as the device item says.  The index below
 * reproduces that layout, including where restore fails or stops early.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "common/checksum.h"
#include "common/image-dump.h"

#define CLUSTER_SIZE		1024ULL
#define CLUSTER_HEADER		21
#define CLUSTER_ITEM		12
#define ITEMS_PER_CLUSTER	((CLUSTER_SIZE - CLUSTER_HEADER) / CLUSTER_ITEM)
#define COMPRESS_ZLIB		1
#define SEARCH_MAX		(512U * 1024)	/* restore's chunk search limit */
#define ITEM_MAX		(256U << 20)	/* largest item of any dump version */
#define MAX_ITEMS		(1U << 24)
#define MAX_CHUNKS		(1U << 18)
#define MAX_SUPERS		64
#define CACHE_SLOTS		8
#define CACHE_ITEM_MAX		(16U << 20)

/* On-disk offsets, btrfs_super_block / btrfs_header / btrfs_chunk */
#define SUPER_OFFSET		65536ULL
#define SUPER_SIZE		4096
#define SB_FSID			32
#define SB_BYTENR		48
#define SB_FLAGS		56
#define SB_MAGIC		64
#define SB_NUM_DEVICES		136
#define SB_SECTORSIZE		144
#define SB_NODESIZE		148
#define SB_SYS_ARRAY_SIZE	160
#define SB_INCOMPAT		188
#define SB_CSUM_TYPE		196
#define SB_DEV_TOTAL_BYTES	(201 + 8)
#define SB_CACHE_GENERATION	555
#define SB_METADATA_UUID	571
#define SB_SYS_ARRAY		811
#define SYS_ARRAY_MAX		2048
#define BTRFS_MAGIC_LE		0x4D5F53665248425FULL
#define FLAG_METADUMP_V2	(1ULL << 34)
#define INCOMPAT_METADATA_UUID	(1ULL << 10)
#define HDR_FSID		32
#define HDR_BYTENR		48
#define HDR_OWNER		88
#define HDR_NRITEMS		96
#define HDR_LEVEL		100
#define HDR_SIZE		101
#define ITEM_SIZE		25
#define DISK_KEY_SIZE		17
#define CHUNK_TYPE		24
#define CHUNK_NUM_STRIPES	44
#define CHUNK_STRIPES		48
#define STRIPE_SIZE		32
#define CHUNK_ITEM_KEY		228
#define CHUNK_TREE_OBJECTID	3
#define BG_SYSTEM		(1ULL << 1)
#define BG_DUP			(1ULL << 5)

struct dump_item {
	u64 logical;
	u64 file_off;
	u64 cluster;		/* file offset of its cluster */
	u32 stored;		/* bytes in the file */
	u32 len;		/* bytes restored */
	bool zlib;
	bool measured;		/* len is known */
	u8 *super;		/* superblock item: the fixed copies 0, 1, 2 */
};

/* Restore writes [physical, +len) from item @src at @src_off, in @seq order */
struct dump_piece {
	u64 physical;
	u64 len;
	u64 src_off;
	u32 src;
	u8 mirror;		/* 1, 2: a backup superblock copy */
};

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

struct cache_slot {
	u8 *data;
	u32 item;
	u32 len;
	u64 used;
};

struct image_dump {
	int fd;
	u64 file_size;
	u64 dev_size;
	struct dump_item *items;
	u32 nr_items;
	u32 max_items;
	u32 nr_zlib;
	u32 nr_supers;
	u64 nr_clusters;
	u64 bad_header;		/* file offset of a bad cluster header, or -1 */
	u64 last_cluster;	/* file offset of the last good cluster */
	struct dump_item trunc;	/* the item cut short that ended the dump */
	bool truncated;
	struct dump_piece *pieces;
	u32 nr_pieces;
	u32 max_pieces;
	u64 max_piece_len;
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
	u8 fsid[16];
	pthread_mutex_t lock;
	struct cache_slot cache[CACHE_SLOTS];
	u64 tick;
	char *err;
	size_t errlen;
};

static u64 get_le64(const u8 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static u32 get_le32(const u8 *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static u16 get_le16(const u8 *p)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static void put_le64(u8 *p, u64 v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static void put_le32(u8 *p, u32 v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static u64 add_sat(u64 a, u64 b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

__attribute__((format(printf, 3, 4)))
static int dump_error(struct image_dump *d, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, d->errlen, fmt, ap);
	va_end(ap);
	return err;
}

bool image_dump_magic(const void *buf, size_t len)
{
	return len >= 8 && get_le64(buf) == IMAGE_DUMP_MAGIC;
}

static int pread_full(int fd, void *buf, u64 len, u64 offset)
{
	u64 done = 0;

	while (done < len) {
		ssize_t ret = pread(fd, (char *)buf + done, len - done,
				    offset + done);

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == 0)
			return -EIO;
		done += ret;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * zlib items
 */

/* More of item @it's stored bytes into @in; -EUCLEAN when there are none */
static int refill(struct image_dump *d, const struct dump_item *it,
		  z_stream *strm, u8 *in, size_t size, u64 *pos)
{
	u64 n = it->stored - *pos;
	int ret;

	if (!n)
		return -EUCLEAN;
	n = n < size ? n : size;
	ret = pread_full(d->fd, in, n, it->file_off + *pos);
	if (ret)
		return ret;
	*pos += n;
	strm->next_in = in;
	strm->avail_in = n;
	return 0;
}

/*
 * Inflate item @it into @out (at most @cap bytes), or only count its bytes
 * when @out is NULL.  -EUCLEAN for a broken stream, -EFBIG past @cap.
 */
static int inflate_item(struct image_dump *d, const struct dump_item *it,
			u8 *out, u64 cap, u64 *outlen)
{
	u8 in[65536], scratch[65536];
	z_stream strm = { 0 };
	u64 pos = 0;
	int zret = Z_OK, ret = 0;

	if (inflateInit(&strm) != Z_OK)
		return -ENOMEM;
	while (!ret && zret != Z_STREAM_END) {
		if (!strm.avail_in)
			ret = refill(d, it, &strm, in, sizeof(in), &pos);
		if (ret)
			break;
		if (out && strm.total_out < cap) {
			u64 room = cap - strm.total_out;

			strm.next_out = out + strm.total_out;
			strm.avail_out = room < (1U << 30) ? room : (1U << 30);
		} else {
			strm.next_out = scratch;
			strm.avail_out = sizeof(scratch);
		}
		zret = inflate(&strm, Z_NO_FLUSH);
		if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
			ret = -EUCLEAN;
		else if (strm.total_out > cap)
			ret = -EFBIG;
	}
	*outlen = strm.total_out;
	inflateEnd(&strm);
	return ret;
}

/* The whole restored content of an item, freshly allocated */
static int load_item(struct image_dump *d, const struct dump_item *it,
		     u8 **data)
{
	u64 len;
	int ret;

	*data = malloc(it->len ? it->len : 1);
	if (!*data)
		return -ENOMEM;
	if (it->zlib)
		ret = inflate_item(d, it, *data, it->len, &len);
	else
		ret = pread_full(d->fd, *data, it->len, it->file_off);
	if (!ret && it->zlib && len != it->len)
		ret = -EUCLEAN;
	if (ret) {
		free(*data);
		*data = NULL;
	}
	return ret;
}

/* ------------------------------------------------------------------------
 * Clusters
 */

static int add_item(struct image_dump *d, const u8 *entry, u64 file_off,
		    u64 cluster, bool zlib)
{
	struct dump_item *it;

	if (d->nr_items >= MAX_ITEMS)
		return dump_error(d, -E2BIG, "more than %u items", MAX_ITEMS);
	if (d->nr_items == d->max_items) {
		u32 cap = d->max_items ? 2 * d->max_items : 64;
		void *p = realloc(d->items, (size_t)cap * sizeof(*d->items));

		if (!p)
			return -ENOMEM;
		d->items = p;
		d->max_items = cap;
	}
	it = &d->items[d->nr_items++];
	memset(it, 0, sizeof(*it));
	it->logical = get_le64(entry);
	it->stored = get_le32(entry + 8);
	it->len = it->stored;
	it->file_off = file_off;
	it->cluster = cluster;
	it->zlib = zlib;
	d->nr_zlib += zlib;
	return 0;
}

static void note_truncated(struct image_dump *d, const u8 *entry, u64 cluster)
{
	d->trunc.logical = get_le64(entry);
	d->trunc.stored = get_le32(entry + 8);
	d->trunc.cluster = cluster;
	d->truncated = true;
}

/*
 * One cluster at @off: its items are indexed and *next set past it.
 * Returns 1 when the dump ends here: a bad header (restore stops there
 * without complaint, unless its chunk search got there first) or an item
 * cut short by the end of the file.
 */
static int read_cluster(struct image_dump *d, u64 off, u64 *next)
{
	u8 cl[CLUSTER_SIZE];
	u64 cur = off + CLUSTER_SIZE;
	u32 nritems, i;
	int ret;

	ret = pread_full(d->fd, cl, CLUSTER_SIZE, off);
	if (ret)
		return ret == -EIO ? 1 : ret;
	nritems = get_le32(cl + 16);
	if (get_le64(cl) != IMAGE_DUMP_MAGIC || get_le64(cl + 8) != off ||
	    nritems > ITEMS_PER_CLUSTER) {
		d->bad_header = off;
		return 1;
	}
	d->last_cluster = off;
	d->nr_clusters++;
	for (i = 0; i < nritems; i++) {
		const u8 *entry = cl + CLUSTER_HEADER + i * CLUSTER_ITEM;

		if (get_le32(entry + 8) > d->file_size - cur) {
			note_truncated(d, entry, off);
			return 1;
		}
		ret = add_item(d, entry, cur, off, cl[20] == COMPRESS_ZLIB);
		if (ret)
			return ret;
		cur += get_le32(entry + 8);
	}
	cur = (cur + CLUSTER_SIZE - 1) & ~(CLUSTER_SIZE - 1);
	if (cur > d->file_size)
		return 1;
	*next = cur;
	return 0;
}

static int scan_clusters(struct image_dump *d)
{
	u64 off = 0;
	int ret = 0;

	d->bad_header = UINT64_MAX;
	while (!ret && off + CLUSTER_SIZE <= d->file_size)
		ret = read_cluster(d, off, &off);
	if (ret < 0)
		return ret;
	if (!d->nr_clusters)
		return dump_error(d, -EUCLEAN,
			"bad header of the first cluster (file offset 0)");
	return 0;
}

/* ------------------------------------------------------------------------
 * The superblock and the system chunk array
 */

static int check_super(struct image_dump *d, const u8 *sb)
{
	u8 csum[CSUM_MAX_SIZE];
	u16 type = get_le16(sb + SB_CSUM_TYPE);
	u32 nodesize = get_le32(sb + SB_NODESIZE);
	u32 sectorsize = get_le32(sb + SB_SECTORSIZE);

	if (get_le64(sb + SB_MAGIC) != BTRFS_MAGIC_LE)
		return dump_error(d, -EUCLEAN, "its superblock has no btrfs magic");
	if (!csum_algo_valid(type) ||
	    csum_compute(type, sb + CSUM_MAX_SIZE, SUPER_SIZE - CSUM_MAX_SIZE, csum) ||
	    memcmp(csum, sb, csum_algo_size(type)))
		return dump_error(d, -EUCLEAN,
			"its superblock has a bad checksum (type %u)", type);
	if (sectorsize < 4096 || sectorsize > 65536 || (sectorsize & (sectorsize - 1)) ||
	    nodesize < sectorsize || nodesize > 65536 || (nodesize & (nodesize - 1)))
		return dump_error(d, -EUCLEAN,
			"its superblock has invalid nodesize %u or sectorsize %u",
			nodesize, sectorsize);
	if (get_le64(sb + SB_NUM_DEVICES) != 1)
		return dump_error(d, -EOPNOTSUPP,
			"a dump of a %llu-device filesystem: restore it with btrfs-image -r, which rewrites it to one device",
			(unsigned long long)get_le64(sb + SB_NUM_DEVICES));
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct dump_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int add_sys_range(struct image_dump *d, u64 start, u64 len)
{
	void *p = realloc(d->sys, (d->nr_sys + 1) * sizeof(*d->sys));

	if (!p)
		return -ENOMEM;
	d->sys = p;
	d->sys[d->nr_sys].start = start;
	d->sys[d->nr_sys].end = add_sat(start, len);
	d->nr_sys++;
	return 0;
}

/* Sort, refuse overlaps (as restore's extent cache does), merge neighbours */
static int merge_sys_ranges(struct image_dump *d)
{
	u32 i, n = 0;

	if (!d->nr_sys)
		return dump_error(d, -EUCLEAN,
			"no system chunk in the superblock's chunk array");
	qsort(d->sys, d->nr_sys, sizeof(*d->sys), cmp_range);
	for (i = 1; i < d->nr_sys; i++) {
		if (d->sys[i].start < d->sys[n].end)
			return dump_error(d, -EUCLEAN,
				"system chunks %llu and %llu overlap in the superblock",
				(unsigned long long)d->sys[n].start,
				(unsigned long long)d->sys[i].start);
		if (d->sys[i].start == d->sys[n].end)
			d->sys[n].end = d->sys[i].end;
		else
			d->sys[++n] = d->sys[i];
	}
	d->nr_sys = n + 1;
	return 0;
}

static int read_sys_array(struct image_dump *d, const u8 *sb)
{
	u32 size = get_le32(sb + SB_SYS_ARRAY_SIZE), cur = 0;
	const u8 *array = sb + SB_SYS_ARRAY;
	int ret;

	if (size > SYS_ARRAY_MAX)
		return dump_error(d, -EUCLEAN, "system chunk array size %u", size);
	while (cur < size) {
		const u8 *key = array + cur, *chunk = key + DISK_KEY_SIZE;
		u32 len;

		if (size - cur < DISK_KEY_SIZE + CHUNK_STRIPES + STRIPE_SIZE)
			return dump_error(d, -EUCLEAN,
				"system chunk array too short at offset %u", cur);
		if (key[8] != CHUNK_ITEM_KEY)
			return dump_error(d, -EUCLEAN,
				"unexpected item type %u in the system chunk array", key[8]);
		len = CHUNK_STRIPES + STRIPE_SIZE * get_le16(chunk + CHUNK_NUM_STRIPES);
		if (len == CHUNK_STRIPES || size - cur - DISK_KEY_SIZE < len)
			return dump_error(d, -EUCLEAN,
				"bad chunk in the system chunk array at offset %u", cur);
		if (get_le64(chunk + CHUNK_TYPE) & BG_SYSTEM) {
			ret = add_sys_range(d, get_le64(key + 9), get_le64(chunk));
			if (ret)
				return ret;
		}
		cur += DISK_KEY_SIZE + len;
	}
	return merge_sys_ranges(d);
}

/* Whether [start, start + len) touches a system chunk, like restore asks */
static bool in_sys_chunks(const struct image_dump *d, u64 start, u64 len)
{
	u32 lo = 0, hi = d->nr_sys;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (d->sys[mid].start <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && start < d->sys[lo - 1].end)
		return true;
	return lo < d->nr_sys && add_sat(start, len) > d->sys[lo].start;
}

static u64 sys_chunk_end(const struct image_dump *d)
{
	return d->sys[d->nr_sys - 1].end - 1;
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
static int insert_phys(struct image_dump *d, u64 start, u64 bytes)
{
	u64 end = add_sat(start, bytes);
	u32 lo = 0, hi = d->nr_phys;
	void *p;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (d->phys[mid].start <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if ((lo && phys_overlaps(&d->phys[lo - 1], start, end)) ||
	    (lo < d->nr_phys && phys_overlaps(&d->phys[lo], start, end)))
		return 1;
	p = realloc(d->phys, (d->nr_phys + 1) * sizeof(*d->phys));
	if (!p)
		return -ENOMEM;
	d->phys = p;
	memmove(&d->phys[lo + 1], &d->phys[lo], (d->nr_phys - lo) * sizeof(*d->phys));
	d->phys[lo].start = start;
	d->phys[lo].end = end;
	d->nr_phys++;
	return 0;
}

static int note_overlapping(struct image_dump *d, u32 index)
{
	void *p = realloc(d->overlapping,
			  (d->nr_overlapping + 1) * sizeof(*d->overlapping));

	if (!p)
		return -ENOMEM;
	d->overlapping = p;
	d->overlapping[d->nr_overlapping++] = index;
	return 0;
}

/* The device end restore keeps, with its own arithmetic */
static void update_last_physical(struct image_dump *d, const struct dump_chunk *c)
{
	if (add_sat(c->physical_dup, c->bytes) > d->last_physical)
		d->last_physical = add_sat(c->physical_dup, c->bytes);
	else if (add_sat(c->physical, c->bytes) > d->last_physical)
		d->last_physical = add_sat(c->physical, c->bytes);
}

static int add_chunk(struct image_dump *d, const struct dump_chunk *c)
{
	void *p;
	int ret;

	if (d->nr_chunks >= MAX_CHUNKS)
		return dump_error(d, -E2BIG, "more than %u chunk items", MAX_CHUNKS);
	p = realloc(d->chunks, (d->nr_chunks + 1) * sizeof(*d->chunks));
	if (!p)
		return -ENOMEM;
	d->chunks = p;
	d->chunks[d->nr_chunks] = *c;
	ret = insert_phys(d, c->physical, c->bytes);
	if (ret == 1)
		ret = note_overlapping(d, d->nr_chunks);
	if (ret < 0)
		return ret;
	update_last_physical(d, c);
	d->nr_chunks++;
	return 0;
}

static int read_chunk_leaf(struct image_dump *d, const u8 *blk)
{
	u32 nritems = get_le32(blk + HDR_NRITEMS), i;

	for (i = 0; i < nritems; i++) {
		u64 item = HDR_SIZE + (u64)i * ITEM_SIZE, data;
		struct dump_chunk c = { 0 };
		int ret;

		if (item + ITEM_SIZE > d->nodesize)
			break;
		if (blk[item + 8] != CHUNK_ITEM_KEY)
			continue;
		data = HDR_SIZE + (u64)get_le32(blk + item + 17);
		if (data + CHUNK_STRIPES + STRIPE_SIZE > d->nodesize)
			continue;
		c.logical = get_le64(blk + item + 9);
		c.bytes = get_le64(blk + data);
		c.physical = get_le64(blk + data + CHUNK_STRIPES + 8);
		if ((get_le64(blk + data + CHUNK_TYPE) & BG_DUP) &&
		    data + CHUNK_STRIPES + 2 * STRIPE_SIZE <= d->nodesize)
			c.physical_dup = get_le64(blk + data + CHUNK_STRIPES +
						  STRIPE_SIZE + 8);
		ret = add_chunk(d, &c);
		if (ret)
			return ret;
	}
	return 0;
}

/* Tree blocks of an item that lie in system chunks must be chunk tree blocks */
static int read_chunk_blocks(struct image_dump *d, const struct dump_item *it,
			     const u8 *buf, u64 size)
{
	u8 *blk = malloc(d->nodesize);
	u64 off;
	int ret = 0;

	if (!blk)
		return -ENOMEM;
	for (off = 0; off < size && !ret; off += d->nodesize) {
		u64 bytenr = it->logical + off;
		u64 n = size - off < d->nodesize ? size - off : d->nodesize;

		if (!in_sys_chunks(d, bytenr, d->nodesize))
			continue;
		memset(blk, 0, d->nodesize);
		memcpy(blk, buf + off, n);
		if (get_le64(blk + HDR_BYTENR) != bytenr)
			ret = dump_error(d, -EUCLEAN,
				"tree block %llu in a system chunk says bytenr %llu",
				(unsigned long long)bytenr,
				(unsigned long long)get_le64(blk + HDR_BYTENR));
		else if (memcmp(blk + HDR_FSID, d->fsid, sizeof(d->fsid)))
			ret = dump_error(d, -EUCLEAN,
				"tree block %llu in a system chunk has another fsid",
				(unsigned long long)bytenr);
		else if (get_le64(blk + HDR_OWNER) != CHUNK_TREE_OBJECTID)
			ret = dump_error(d, -EUCLEAN,
				"tree block %llu in a system chunk has owner %llu, not the chunk tree",
				(unsigned long long)bytenr,
				(unsigned long long)get_le64(blk + HDR_OWNER));
		else if (!blk[HDR_LEVEL])
			ret = read_chunk_leaf(d, blk);
	}
	free(blk);
	return ret;
}

static bool searched(const struct image_dump *d, const struct dump_item *it)
{
	return it->stored <= SEARCH_MAX && it->logical != SUPER_OFFSET &&
	       in_sys_chunks(d, it->logical, it->stored);
}

static int search_item(struct image_dump *d, const struct dump_item *it)
{
	u64 size = it->stored;
	u8 *buf = malloc(SEARCH_MAX);
	int ret;

	if (!buf)
		return -ENOMEM;
	if (it->zlib)
		ret = inflate_item(d, it, buf, SEARCH_MAX, &size);
	else
		ret = pread_full(d->fd, buf, size, it->file_off);
	if (ret)
		ret = dump_error(d, -EUCLEAN,
			"item %llu at file offset %llu: cannot decompress it",
			(unsigned long long)it->logical,
			(unsigned long long)it->file_off);
	else
		ret = read_chunk_blocks(d, it, buf, size);
	free(buf);
	return ret;
}

/* Where restore's chunk search would stop with an error */
static int check_search_end(struct image_dump *d)
{
	u64 end = sys_chunk_end(d);

	if (d->bad_header != UINT64_MAX && d->last_cluster <= end)
		return dump_error(d, -EUCLEAN,
			"bad cluster header at file offset %llu",
			(unsigned long long)d->bad_header);
	if (d->truncated && d->trunc.cluster <= end && searched(d, &d->trunc))
		return dump_error(d, -EUCLEAN,
			"item %llu in the cluster at file offset %llu is cut short by the end of the file",
			(unsigned long long)d->trunc.logical,
			(unsigned long long)d->trunc.cluster);
	return 0;
}

static int search_chunk_items(struct image_dump *d)
{
	u64 end = sys_chunk_end(d);
	u32 i;
	int ret;

	for (i = 0; i < d->nr_items; i++) {
		const struct dump_item *it = &d->items[i];

		if (it->cluster > end)
			break;
		if (!searched(d, it))
			continue;
		ret = search_item(d, it);
		if (ret)
			return ret;
	}
	return check_search_end(d);
}

static bool range_has_super(u64 physical, u64 bytes)
{
	static const u64 mirrors[] = { 65536ULL, 64ULL << 20, 256ULL << 30 };
	int i;

	for (i = 0; i < 3; i++)
		if (mirrors[i] >= physical && mirrors[i] - physical < bytes)
			return true;
	return false;
}

/* Chunks whose physical range overlaps another go to the end, last first */
static int remap_overlapping(struct image_dump *d)
{
	u32 i;

	for (i = d->nr_overlapping; i-- > 0;) {
		struct dump_chunk *c = &d->chunks[d->overlapping[i]];
		int ret;

		if (range_has_super(c->physical, c->bytes))
			d->clear_space_cache = true;
		c->physical = d->last_physical;
		ret = insert_phys(d, c->physical, c->bytes);
		if (ret < 0)
			return ret;
		if (ret)
			return dump_error(d, -EUCLEAN,
				"cannot move chunk %llu past the others",
				(unsigned long long)c->logical);
		d->last_physical = add_sat(d->last_physical, c->bytes);
	}
	return 0;
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct dump_chunk *x = a, *y = b;

	return x->logical < y->logical ? -1 : x->logical > y->logical;
}

static int sort_chunks(struct image_dump *d)
{
	u32 i;

	if (d->nr_chunks > 1)
		qsort(d->chunks, d->nr_chunks, sizeof(*d->chunks), cmp_chunk);
	for (i = 1; i < d->nr_chunks; i++)
		if (d->chunks[i].logical == d->chunks[i - 1].logical ||
		    d->chunks[i].logical - d->chunks[i - 1].logical < d->chunks[i - 1].bytes)
			return dump_error(d, -EUCLEAN,
				"chunk items %llu and %llu overlap",
				(unsigned long long)d->chunks[i - 1].logical,
				(unsigned long long)d->chunks[i].logical);
	return 0;
}

static const struct dump_chunk *find_chunk(const struct image_dump *d, u64 logical)
{
	u32 lo = 0, hi = d->nr_chunks;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (d->chunks[mid].logical <= logical)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && logical - d->chunks[lo - 1].logical < d->chunks[lo - 1].bytes)
		return &d->chunks[lo - 1];
	return NULL;
}

/* ------------------------------------------------------------------------
 * Superblock items as restore writes them
 */

static void csum_crc32c(u8 *buf)
{
	put_le32(buf, ~crc32c_raw(~0U, buf + CSUM_MAX_SIZE, SUPER_SIZE - CSUM_MAX_SIZE));
}

static void fix_super(struct image_dump *d, u8 *copies)
{
	static const u64 mirrors[] = { 64ULL << 20, 256ULL << 30 };
	int i;

	put_le64(copies + SB_FLAGS, get_le64(copies + SB_FLAGS) | FLAG_METADUMP_V2);
	put_le64(copies + SB_NUM_DEVICES, 1);
	if (d->clear_space_cache)
		put_le64(copies + SB_CACHE_GENERATION, 0);
	csum_crc32c(copies);
	for (i = 0; i < 2; i++) {
		u8 *m = copies + (i + 1) * SUPER_SIZE;

		memcpy(m, copies, SUPER_SIZE);
		put_le64(m + SB_BYTENR, mirrors[i]);
		csum_crc32c(m);
	}
}

static int measure_item(struct image_dump *d, struct dump_item *it);

static int load_super(struct image_dump *d, struct dump_item *it)
{
	u8 *data;
	int ret;

	ret = measure_item(d, it);
	if (ret)
		return ret;
	if (d->nr_supers >= MAX_SUPERS)
		return dump_error(d, -E2BIG, "more than %d superblock items", MAX_SUPERS);
	if (it->len < SUPER_SIZE || (it->zlib && it->len != SUPER_SIZE))
		return dump_error(d, -EUCLEAN,
			"superblock item at file offset %llu has %u bytes",
			(unsigned long long)it->file_off, it->len);
	ret = load_item(d, it, &data);
	if (ret)
		return ret;
	it->super = realloc(data, 3 * SUPER_SIZE);
	if (!it->super) {
		free(data);
		return -ENOMEM;
	}
	d->nr_supers++;
	return 0;
}

/* The superblock that restore reads first: in the first cluster */
static struct dump_item *first_super(struct image_dump *d)
{
	u32 i;

	for (i = 0; i < d->nr_items && !d->items[i].cluster; i++)
		if (d->items[i].logical == SUPER_OFFSET)
			return &d->items[i];
	return NULL;
}

static int read_first_super(struct image_dump *d)
{
	struct dump_item *it = first_super(d);
	const u8 *sb;
	int ret;

	if (!it)
		return dump_error(d, -EUCLEAN,
			"no superblock item in the first cluster");
	ret = load_super(d, it);
	if (ret)
		return ret;
	sb = it->super;
	ret = check_super(d, sb);
	if (ret)
		return ret;
	d->nodesize = get_le32(sb + SB_NODESIZE);
	d->csum_type = get_le16(sb + SB_CSUM_TYPE);
	if (get_le64(sb + SB_INCOMPAT) & INCOMPAT_METADATA_UUID)
		memcpy(d->fsid, sb + SB_METADATA_UUID, sizeof(d->fsid));
	else
		memcpy(d->fsid, sb + SB_FSID, sizeof(d->fsid));
	return read_sys_array(d, sb);
}

/* ------------------------------------------------------------------------
 * Pieces: the physical layout
 */

static int add_piece(struct image_dump *d, u64 physical, u64 len, u32 src,
		     u64 src_off, u8 mirror)
{
	struct dump_piece *p;

	if (add_sat(physical, len) == UINT64_MAX)
		return dump_error(d, -EUCLEAN,
			"item %llu maps beyond the largest device offset",
			(unsigned long long)d->items[src].logical);
	if (d->nr_pieces >= d->max_pieces) {
		u64 cap = 2ULL * d->max_pieces + 16;
		void *n;

		if (cap > 4ULL * d->nr_items + (1U << 20))
			return dump_error(d, -E2BIG,
				"its items map to more than %llu pieces",
				(unsigned long long)cap / 2);
		n = realloc(d->pieces, cap * sizeof(*d->pieces));
		if (!n)
			return -ENOMEM;
		d->pieces = n;
		d->max_pieces = cap;
	}
	p = &d->pieces[d->nr_pieces++];
	*p = (struct dump_piece) { physical, len, src_off, src, mirror };
	if (len > d->max_piece_len)
		d->max_piece_len = len;
	return 0;
}

/* restore's logical_to_physical(), piece by piece of one item */
static int map_item(struct image_dump *d, u32 index)
{
	const struct dump_item *it = &d->items[index];
	u64 done = 0;

	while (done < it->len) {
		u64 logical = it->logical + done, size = it->len - done;
		u64 physical = logical, dup = 0;
		const struct dump_chunk *c = NULL;
		int ret;

		if (logical != SUPER_OFFSET)
			c = find_chunk(d, logical);
		if (c) {
			u64 off = logical - c->logical;

			size = size < c->bytes - off ? size : c->bytes - off;
			physical = c->physical + off;
			dup = c->physical_dup ? c->physical_dup + off : 0;
		}
		ret = add_piece(d, physical, size, index, done, 0);
		if (!ret && dup)
			ret = add_piece(d, dup, size, index, done, 0);
		if (ret)
			return ret;
		done += size;
	}
	return 0;
}

static int measure_item(struct image_dump *d, struct dump_item *it)
{
	u64 len;
	int ret;

	if (!it->zlib || it->measured)
		return 0;
	/* restore inflates nothing from an empty item, and writes nothing */
	if (!it->stored) {
		it->len = 0;
		it->measured = true;
		return 0;
	}
	ret = inflate_item(d, it, NULL, ITEM_MAX, &len);
	if (ret == -EFBIG)
		return dump_error(d, -EUCLEAN,
			"item %llu at file offset %llu inflates to more than %u bytes",
			(unsigned long long)it->logical,
			(unsigned long long)it->file_off, ITEM_MAX);
	if (ret)
		return dump_error(d, ret == -ENOMEM ? ret : -EUCLEAN,
			"item %llu at file offset %llu: zlib data error",
			(unsigned long long)it->logical,
			(unsigned long long)it->file_off);
	it->len = len;
	it->measured = true;
	return 0;
}

static int map_items(struct image_dump *d)
{
	u32 i;
	int ret;

	for (i = 0; i < d->nr_items; i++) {
		struct dump_item *it = &d->items[i];

		ret = measure_item(d, it);
		if (!ret && it->logical == SUPER_OFFSET && !it->super)
			ret = load_super(d, it);
		if (!ret && it->super)
			fix_super(d, it->super);
		if (!ret)
			ret = map_item(d, i);
		if (ret)
			return ret;
	}
	return 0;
}

/* The device size, then the backup copies of the last superblock written */
static int finish_layout(struct image_dump *d)
{
	static const u64 mirrors[] = { 64ULL << 20, 256ULL << 30 };
	const struct dump_item *last = NULL;
	u32 i;

	for (i = 0; i < d->nr_pieces; i++) {
		const struct dump_piece *p = &d->pieces[i];

		if (p->physical + p->len > d->dev_size)
			d->dev_size = p->physical + p->len;
		if (d->items[p->src].super && p->physical == SUPER_OFFSET)
			last = &d->items[p->src];
	}
	if (!last)
		return dump_error(d, -EUCLEAN, "no superblock written");
	if (get_le64(last->super + SB_DEV_TOTAL_BYTES) > d->dev_size)
		d->dev_size = get_le64(last->super + SB_DEV_TOTAL_BYTES);
	for (i = 0; i < 2; i++) {
		int ret;

		if (mirrors[i] + SUPER_SIZE > d->dev_size)
			break;
		ret = add_piece(d, mirrors[i], SUPER_SIZE, last - d->items, 0, i + 1);
		if (ret)
			return ret;
	}
	return 0;
}

/* By physical start; among equal starts, the order restore wrote them */
static int cmp_piece(const void *a, const void *b)
{
	const struct dump_piece *x = a, *y = b;

	if (x->physical != y->physical)
		return x->physical < y->physical ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->mirror < y->mirror ? -1 : x->mirror > y->mirror;
}

static int build_index(struct image_dump *d)
{
	int ret;

	ret = scan_clusters(d);
	if (!ret)
		ret = read_first_super(d);
	if (!ret)
		ret = search_chunk_items(d);
	if (!ret)
		ret = remap_overlapping(d);
	if (!ret)
		ret = sort_chunks(d);
	if (!ret)
		ret = map_items(d);
	if (!ret)
		ret = finish_layout(d);
	if (!ret && d->nr_pieces > 1)
		qsort(d->pieces, d->nr_pieces, sizeof(*d->pieces), cmp_piece);
	return ret;
}

int image_dump_open(int fd, u64 file_size, struct image_dump **ret,
		    u64 *dev_size, char *err, size_t errlen)
{
	struct image_dump *d = calloc(1, sizeof(*d));
	int rc;

	if (!d)
		return -ENOMEM;
	d->fd = fd;
	d->file_size = file_size;
	d->err = err;
	d->errlen = errlen;
	err[0] = 0;
	pthread_mutex_init(&d->lock, NULL);
	rc = build_index(d);
	free(d->phys);
	free(d->overlapping);
	free(d->sys);
	d->phys = NULL;
	d->overlapping = NULL;
	d->sys = NULL;
	d->err = NULL;
	if (rc) {
		if (!err[0])
			snprintf(err, errlen, "%s", strerror(-rc));
		image_dump_close(d);
		return rc;
	}
	*ret = d;
	*dev_size = d->dev_size;
	return 0;
}

void image_dump_close(struct image_dump *d)
{
	u32 i;

	if (!d)
		return;
	for (i = 0; i < CACHE_SLOTS; i++)
		free(d->cache[i].data);
	for (i = 0; i < d->nr_items; i++)
		free(d->items[i].super);
	free(d->items);
	free(d->pieces);
	free(d->chunks);
	free(d->phys);
	free(d->overlapping);
	free(d->sys);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

void image_dump_describe(const struct image_dump *d, char *buf, size_t len)
{
	snprintf(buf, len,
		 "btrfs-image dump: %llu clusters, %u items (%u zlib-compressed), %u chunk items, restored device size %llu",
		 (unsigned long long)d->nr_clusters, d->nr_items, d->nr_zlib,
		 d->nr_chunks, (unsigned long long)d->dev_size);
}

const char *image_dump_note(const struct image_dump *d)
{
	if (d->csum_type == CSUM_ALGO_CRC32C)
		return NULL;
	return "btrfs-image -r checksums the superblock it writes with crc32c whatever the filesystem's checksum type, so the restored superblock does not verify, and neither does this one";
}

/* ------------------------------------------------------------------------
 * Reads
 */

/* A zlib item's restored bytes, from the cache when there (lock held) */
static int cached_item(struct image_dump *d, u32 index, const u8 **data,
		       u8 **owned)
{
	struct cache_slot *slot = &d->cache[0];
	int i, ret;

	*owned = NULL;
	for (i = 0; i < CACHE_SLOTS; i++) {
		if (d->cache[i].data && d->cache[i].item == index) {
			d->cache[i].used = ++d->tick;
			*data = d->cache[i].data;
			return 0;
		}
		if (d->cache[i].used < slot->used)
			slot = &d->cache[i];
	}
	ret = load_item(d, &d->items[index], owned);
	if (ret)
		return ret;
	*data = *owned;
	if (d->items[index].len > CACHE_ITEM_MAX)
		return 0;
	free(slot->data);
	*slot = (struct cache_slot) { *owned, index, d->items[index].len, ++d->tick };
	*owned = NULL;
	return 0;
}

static int copy_piece(struct image_dump *d, const struct dump_piece *p,
		      u8 *dst, u64 off, u64 len)
{
	const struct dump_item *it = &d->items[p->src];
	u64 src_off = p->src_off + off;
	const u8 *data;
	u8 *owned;
	int ret;

	if (p->mirror) {
		memcpy(dst, it->super + p->mirror * SUPER_SIZE + src_off, len);
		return 0;
	}
	if (!it->zlib) {
		ret = pread_full(d->fd, dst, len, it->file_off + src_off);
	} else {
		ret = cached_item(d, p->src, &data, &owned);
		if (!ret)
			memcpy(dst, data + src_off, len);
		free(owned);
	}
	if (!ret && it->super && src_off < SUPER_SIZE)
		memcpy(dst, it->super + src_off,
		       len < SUPER_SIZE - src_off ? len : SUPER_SIZE - src_off);
	return ret;
}

/* Index of the first piece starting at or after @pos */
static u32 first_piece_from(const struct image_dump *d, u64 pos)
{
	u32 lo = 0, hi = d->nr_pieces;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (d->pieces[mid].physical < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_write_order(const void *a, const void *b)
{
	const struct dump_piece *x = *(const struct dump_piece * const *)a;
	const struct dump_piece *y = *(const struct dump_piece * const *)b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->mirror < y->mirror ? -1 : x->mirror > y->mirror;
}

/* Pieces that touch [offset, end), in the order restore wrote them */
static int collect_pieces(const struct image_dump *d, u64 offset, u64 end,
			  const struct dump_piece ***ret, u32 *nr)
{
	const struct dump_piece **list = NULL;
	u32 i = first_piece_from(d, end), n = 0, cap = 0;

	while (i-- > 0) {
		const struct dump_piece *p = &d->pieces[i];

		if (add_sat(p->physical, d->max_piece_len) <= offset)
			break;
		if (p->physical + p->len <= offset)
			continue;
		if (n == cap) {
			void *m;

			cap = cap ? 2 * cap : 16;
			m = realloc(list, cap * sizeof(*list));
			if (!m) {
				free(list);
				return -ENOMEM;
			}
			list = m;
		}
		list[n++] = p;
	}
	if (n > 1)
		qsort(list, n, sizeof(*list), cmp_write_order);
	*ret = list;
	*nr = n;
	return 0;
}

int image_dump_read(struct image_dump *d, void *buf, u64 len, u64 offset)
{
	const struct dump_piece **list = NULL;
	u64 end = offset + len;
	u32 i, nr;
	int ret;

	memset(buf, 0, len);
	pthread_mutex_lock(&d->lock);
	ret = collect_pieces(d, offset, end, &list, &nr);
	for (i = 0; !ret && i < nr; i++) {
		const struct dump_piece *p = list[i];
		u64 from = p->physical > offset ? p->physical : offset;
		u64 to = p->physical + p->len < end ? p->physical + p->len : end;

		ret = copy_piece(d, p, (u8 *)buf + (from - offset),
				 from - p->physical, to - from);
	}
	pthread_mutex_unlock(&d->lock);
	free(list);
	return ret;
}
