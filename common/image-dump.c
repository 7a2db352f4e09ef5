// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs-image dumps read in place.  The format, as btrfs-progs image/
 * writes it: a sequence of 1 KiB-aligned clusters, each a header (magic,
 * its own file offset, item count, compression) with up to 83 item
 * entries (logical bytenr, stored size), followed by the items' bytes,
 * each item zlib-compressed on its own when the cluster says so.
 *
 * This file indexes the clusters and items and serves reads of the
 * restored device from the pieces a layout function places: where
 * "btrfs-image -r" writes each item is the filesystem's business, in
 * kernel-shared/image-restore.c.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/array.h"
#include "common/dynlib.h"
#include "common/image-dump.h"

#define CLUSTER_SIZE		((u64)IMAGE_DUMP_CLUSTER_SIZE)
#define CLUSTER_HEADER		IMAGE_DUMP_CLUSTER_HEADER
#define CLUSTER_ITEM		IMAGE_DUMP_CLUSTER_ITEM
#define ITEMS_PER_CLUSTER	IMAGE_DUMP_ITEMS_PER_CLUSTER
#define COMPRESS_ZLIB		1
#define ITEM_MAX		(256U << 20)	/* largest item of any dump version */
#define MAX_ITEMS		(1U << 24)
#define CACHE_SLOTS		8
#define CACHE_ITEM_MAX		(16U << 20)

/* Restore writes [physical, +len) from item @src at @src_off, in @seq order */
struct dump_piece {
	u64 physical;
	u64 len;
	u64 src_off;
	u32 src;
	u8 mirror;		/* 1, 2: a further patch copy (backup superblock) */
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
	struct image_dump_item *items;
	u32 nr_items;
	u32 max_items;
	u32 nr_zlib;
	u32 nr_chunks;		/* as the layout counted them */
	const char *note;	/* the layout's */
	u64 nr_clusters;
	u64 bad_header;		/* file offset of a bad cluster header, or -1 */
	u64 last_cluster;	/* file offset of the last good cluster */
	struct image_dump_item trunc;	/* the item cut short that ended the dump */
	bool truncated;
	struct dump_piece *pieces;
	u32 nr_pieces;
	u32 max_pieces;
	u64 max_piece_len;
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

static u64 add_sat(u64 a, u64 b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int image_dump_error(struct image_dump *d, int err, const char *fmt, ...)
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
static int refill(struct image_dump *d, const struct image_dump_item *it,
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
static int inflate_item(struct image_dump *d, const struct image_dump_item *it,
			u8 *out, u64 cap, u64 *outlen)
{
	u8 in[65536], scratch[65536];
	z_stream strm = { 0 };
	u64 pos = 0;
	int zret = Z_OK, ret = 0;
	const char *why;

	/* image_dump_open() said so already if it is missing */
	if (dynlib_load(&dynlib_zlib, &why))
		return d->err ? image_dump_error(d, -ENOSYS, "%s", why) : -ENOSYS;
	if (zlib_api.inflateInit_(&strm, ZLIB_VERSION, (int)sizeof(strm)) != Z_OK)
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
		zret = zlib_api.inflate(&strm, Z_NO_FLUSH);
		if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
			ret = -EUCLEAN;
		else if (strm.total_out > cap)
			ret = -EFBIG;
	}
	*outlen = strm.total_out;
	zlib_api.inflateEnd(&strm);
	return ret;
}

/* The whole restored content of an item, freshly allocated */
static int load_item(struct image_dump *d, const struct image_dump_item *it,
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
	struct image_dump_item *it;

	if (d->nr_items >= MAX_ITEMS)
		return image_dump_error(d, -E2BIG, "more than %u items", MAX_ITEMS);
	if (array_grow((void **)&d->items, d->nr_items, &d->max_items, sizeof(*d->items)))
		return -ENOMEM;
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
		return image_dump_error(d, -EUCLEAN,
			"bad header of the first cluster (file offset 0)");
	return 0;
}

/* ------------------------------------------------------------------------
 * What the layout asks
 */

struct image_dump_item *image_dump_items(struct image_dump *d, u32 *nr)
{
	*nr = d->nr_items;
	return d->items;
}

u64 image_dump_bad_header(const struct image_dump *d)
{
	return d->bad_header;
}

u64 image_dump_last_cluster(const struct image_dump *d)
{
	return d->last_cluster;
}

const struct image_dump_item *image_dump_truncated(const struct image_dump *d)
{
	return d->truncated ? &d->trunc : NULL;
}

int image_dump_load(struct image_dump *d, const struct image_dump_item *it,
		    u8 **data)
{
	return load_item(d, it, data);
}

int image_dump_peek(struct image_dump *d, const struct image_dump_item *it,
		    u8 *buf, u64 cap, u64 *size)
{
	if (it->zlib)
		return inflate_item(d, it, buf, cap, size);
	if (it->stored > cap)
		return -EFBIG;
	*size = it->stored;
	return pread_full(d->fd, buf, it->stored, it->file_off);
}

void image_dump_set_layout(struct image_dump *d, u64 dev_size, u32 nr_chunks,
			   const char *note)
{
	d->dev_size = dev_size;
	d->nr_chunks = nr_chunks;
	d->note = note;
}

/* ------------------------------------------------------------------------
 * Pieces: the physical layout
 */

int image_dump_add_piece(struct image_dump *d, u64 physical, u64 len,
			 u32 src, u64 src_off, u8 mirror)
{
	struct dump_piece *p;

	if (add_sat(physical, len) == UINT64_MAX)
		return image_dump_error(d, -EUCLEAN,
			"item %llu maps beyond the largest device offset",
			(unsigned long long)d->items[src].logical);
	if (d->nr_pieces >= d->max_pieces) {
		u64 cap = 2ULL * d->max_pieces + 16;
		void *n;

		if (cap > 4ULL * d->nr_items + (1U << 20))
			return image_dump_error(d, -E2BIG,
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

int image_dump_measure(struct image_dump *d, struct image_dump_item *it)
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
		return image_dump_error(d, -EUCLEAN,
			"item %llu at file offset %llu inflates to more than %u bytes",
			(unsigned long long)it->logical,
			(unsigned long long)it->file_off, ITEM_MAX);
	if (ret)
		return image_dump_error(d, ret == -ENOMEM ? ret : -EUCLEAN,
			"item %llu at file offset %llu: zlib data error",
			(unsigned long long)it->logical,
			(unsigned long long)it->file_off);
	it->len = len;
	it->measured = true;
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

static int build_index(struct image_dump *d, image_dump_layout_fn layout)
{
	int ret;

	ret = scan_clusters(d);
	if (!ret)
		ret = layout(d);
	if (!ret && d->nr_pieces > 1)
		qsort(d->pieces, d->nr_pieces, sizeof(*d->pieces), cmp_piece);
	return ret;
}

int image_dump_open(int fd, u64 file_size, image_dump_layout_fn layout,
		    struct image_dump **ret, u64 *dev_size, char *err,
		    size_t errlen)
{
	struct image_dump *d = calloc(1, sizeof(*d));
	const char *why;
	int rc;

	if (!d)
		return -ENOMEM;
	d->fd = fd;
	d->file_size = file_size;
	d->err = err;
	d->errlen = errlen;
	err[0] = 0;
	pthread_mutex_init(&d->lock, NULL);
	rc = build_index(d, layout);
	if (!rc && d->nr_zlib && dynlib_load(&dynlib_zlib, &why))
		rc = image_dump_error(d, -ENOSYS, "%s", why);
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
		free(d->items[i].patch);
	free(d->items);
	free(d->pieces);
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
	return d->note;
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
	const struct image_dump_item *it = &d->items[p->src];
	u64 src_off = p->src_off + off;
	const u8 *data;
	u8 *owned;
	int ret;

	if (p->mirror) {
		memcpy(dst, it->patch + (u64)p->mirror * it->patch_len + src_off, len);
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
	if (!ret && it->patch && src_off < it->patch_len)
		memcpy(dst, it->patch + src_off,
		       len < it->patch_len - src_off ? len : it->patch_len - src_off);
	return ret;
}

/* Index of the first piece starting at or after @pos */
static u32 first_piece_from(const struct image_dump *d, u64 pos)
{
	return array_lower_bound(d->pieces, d->nr_pieces, sizeof(*d->pieces),
				 offsetof(struct dump_piece, physical), pos);
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
		if (array_grow((void **)&list, n, &cap, sizeof(*list))) {
			free(list);
			return -ENOMEM;
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
