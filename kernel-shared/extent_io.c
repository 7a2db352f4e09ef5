// SPDX-License-Identifier: GPL-2.0
/*
 * Tree block memory and the block cache, as the kernel keeps its
 * extent_buffers in fs/btrfs/extent_io.c (alloc_extent_buffer(),
 * find_extent_buffer(), free_extent_buffer()): the reader in disk-io.c
 * and the search in ctree.c both come here, so neither calls the other
 * for memory.
 *
 * Every block read is cached by logical address so that no block is read
 * twice in one run: internal nodes stay for the whole run (there are few
 * of them), leaves are kept up to BTRFS_LEAF_CACHE_BYTES and then the
 * oldest unreferenced ones are dropped, which bounds memory on any image.
 * The leaves the block-group searches read are kept as key-only copies
 * (btrfs_cache_keep_items(), below), so their blocks are read into again
 * at once instead of each taking fresh memory.
 * Nothing here is kernel behaviour a report depends on: only the I/O
 * counts do, and they count reads, not cache hits.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "common/hash.h"
#include "kernel-shared/extent_io.h"
#include "kernel-shared/tree-block.h"

/*
 * Both can be set at build time: the fuzz build makes them tiny so that
 * hash chains and leaf eviction run on every small image
 * (Documentation/dev/fuzzing.md).
 */
#ifndef BTRFS_CACHE_BUCKETS
#define BTRFS_CACHE_BUCKETS	65536
#endif

/*
 * The hash table starts at this many buckets (or the most allowed) and
 * doubles as blocks come, up to BTRFS_CACHE_BUCKETS: a run that reads a
 * few hundred blocks no longer faults in and zeroes 512 KiB of buckets.
 */
#define BTRFS_CACHE_MIN_BUCKETS	1024
#ifndef BTRFS_LEAF_CACHE_BYTES
#define BTRFS_LEAF_CACHE_BYTES	(64ULL << 20)
#endif

/*
 * Tree block memory.  A run keeps every node and up to 64 MiB of leaves:
 * thousands of blocks, each allocated once.  Taken from malloc one by
 * one, every 4 KiB page of them costs a page fault when the read fills
 * it: for the 3,000 leaves of a 3 TiB filesystem 13,000 faults, half the
 * time of a warm `inspect`.  They are carved from 2 MiB regions instead,
 * and a freed block's slot is reused, so memory stays what the cache holds
 * at its fullest.  The first region is not madvise()d for huge pages:
 * where THP defrag is "madvise" (most distributions' default), such a
 * fault compacts memory in place when the page cache has filled it, which
 * was 41 % of a warm `inspect` here (perf), while a run that loads the
 * block groups keeps a few dozen blocks (its leaves become key-only
 * copies) and touches a few hundred KiB.  The regions after it are: a run
 * that keeps thousands of leaves (the leaf cache's 64 MiB) took 35 % more
 * CPU in 4 KiB faults (Documentation/benchmark.md).
 *
 * A region holds headers from its start and data from its end, nodesize
 * bytes a block: the data of each block starts on a page.  The kernel's
 * copy out of the page cache (most of a warm read) is a page to a page
 * then; with the data right behind its header, 80 bytes into a slot, the
 * time inside pread() of a warm `inspect` of 3 TiB was 5-12 % more
 * (Documentation/benchmark.md, 2026-12-07).
 */
#define BTRFS_BLOCK_REGION	(2U << 20)

#if defined(__SANITIZE_ADDRESS__)
#define BTRFS_BLOCK_REDZONE	64
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BTRFS_BLOCK_REDZONE	64
#endif
#endif
#ifdef BTRFS_BLOCK_REDZONE
#include <sanitizer/asan_interface.h>
#else
#define BTRFS_BLOCK_REDZONE	0
#define ASAN_POISON_MEMORY_REGION(addr, size)	((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size)	((void)(addr), (void)(size))
#endif

/* A header's bytes in a region: 8-byte aligned, the redzone behind it */
static u32 header_slot_size(void)
{
	return (sizeof(struct btrfs_tree_block) + BTRFS_BLOCK_REDZONE + 7) & ~7U;
}

/* A block's data in a region: whole pages (nodesize is), the redzone behind it */
static u32 data_slot_size(const struct btrfs_fs_info *fs_info)
{
	return fs_info->nodesize + BTRFS_BLOCK_REDZONE;
}

/* One 2 MiB region, 2 MiB aligned so that a huge page can back it */
static u8 *map_block_region(bool huge)
{
	size_t len = 2 * (size_t)BTRFS_BLOCK_REGION;
	u8 *map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t start, end;

	if (map == MAP_FAILED)
		return NULL;
	start = ((uintptr_t)map + BTRFS_BLOCK_REGION - 1) & ~(uintptr_t)(BTRFS_BLOCK_REGION - 1);
	end = start + BTRFS_BLOCK_REGION;
	if (start > (uintptr_t)map)
		munmap(map, start - (uintptr_t)map);
	if ((uintptr_t)map + len > end)
		munmap((void *)end, (uintptr_t)map + len - end);
#ifdef MADV_HUGEPAGE
	/* only a hint: without huge pages it is ordinary memory */
	if (huge)
		madvise((void *)start, BTRFS_BLOCK_REGION, MADV_HUGEPAGE);
#endif
	ASAN_POISON_MEMORY_REGION((void *)start, BTRFS_BLOCK_REGION);
	return (u8 *)start;
}

/* The next region to carve from: one already mapped after a drop, or a new one */
static int next_region(struct btrfs_block_cache *cache)
{
	u8 **regions;
	u8 *region;

	if (cache->nr_regions && cache->cur_region + 1 < cache->nr_regions) {
		cache->cur_region++;
		cache->region_used = 0;
		cache->region_data_used = 0;
		return 0;
	}
	regions = realloc(cache->regions, (cache->nr_regions + 1) * sizeof(*regions));
	if (!regions)
		return -ENOMEM;
	cache->regions = regions;
	region = map_block_region(cache->nr_regions > 0);
	if (!region)
		return -ENOMEM;
	cache->regions[cache->nr_regions] = region;
	cache->cur_region = cache->nr_regions++;
	cache->region_used = 0;
	cache->region_data_used = 0;
	return 0;
}

/* Room for one more header and its data between the two ends of the region */
static bool region_fits(const struct btrfs_block_cache *cache, u32 header, u32 data)
{
	return cache->nr_regions &&
	       (u64)cache->region_used + header + cache->region_data_used + data <=
			BTRFS_BLOCK_REGION;
}

/*
 * A new data slot of the first region is mapped in one call before the
 * read fills it: otherwise each of its pages faults inside the kernel's
 * copy out of the page cache, one exception a page.  33 preads of 16 KiB
 * into fresh slots took 104 us faulting and 70 us with the slot populated
 * first (min of 2,000; 64 us populating all 528 KiB at once, but a page
 * populated and not used costs 0.4 us: one slot at a time wastes none).
 * The later regions are not: behind MADV_HUGEPAGE one fault maps 2 MiB,
 * and a call per slot would cost more than it saves.  Only a hint: a
 * kernel before 5.14 fails it (EINVAL) and the pages fault as before.
 */
static void populate_slot(const struct btrfs_block_cache *cache, u8 *data, u32 len)
{
#ifdef MADV_POPULATE_WRITE
	if (cache->cur_region == 0)
		madvise(data, len, MADV_POPULATE_WRITE);
#endif
}

static struct btrfs_tree_block *carve_block(struct btrfs_block_cache *cache,
					    u32 header, u32 data)
{
	struct btrfs_tree_block *eb;
	u8 *region;

	if (!region_fits(cache, header, data) && next_region(cache))
		return NULL;
	region = cache->regions[cache->cur_region];
	eb = (struct btrfs_tree_block *)(region + cache->region_used);
	ASAN_UNPOISON_MEMORY_REGION(eb, sizeof(*eb));
	cache->region_used += header;
	cache->region_data_used += data;
	eb->data = region + BTRFS_BLOCK_REGION - cache->region_data_used;
	populate_slot(cache, eb->data, data);
	return eb;
}

/* A zeroed block header with nodesize bytes of data behind it */
struct btrfs_tree_block *btrfs_alloc_tree_block(struct btrfs_fs_info *fs_info, u64 bytenr)
{
	struct btrfs_block_cache *cache = &fs_info->cache;
	struct btrfs_tree_block *eb = cache->free_blocks;
	u8 *data;

	if (eb) {
		cache->free_blocks = eb->hash_next;
	} else {
		eb = carve_block(cache, header_slot_size(), data_slot_size(fs_info));
		if (!eb)
			return NULL;
	}
	ASAN_UNPOISON_MEMORY_REGION(eb, sizeof(*eb));
	ASAN_UNPOISON_MEMORY_REGION(eb->data, fs_info->nodesize);
	/* the data is what the read puts there; a reused slot's header is not zero */
	data = eb->data;
	memset(eb, 0, sizeof(*eb));
	eb->data = data;
	/* a slot listed by an earlier leaf check holds another block now */
	if (cache->other_data == eb->data)
		cache->other_data = NULL;
	eb->start = bytenr;
	eb->len = fs_info->nodesize;
	eb->mem = fs_info->nodesize;
	return eb;
}

void btrfs_free_tree_block(struct btrfs_fs_info *fs_info, struct btrfs_tree_block *eb)
{
	if (!eb)
		return;
	if (eb->keys_only) {
		free(eb);
		return;
	}
	eb->hash_next = fs_info->cache.free_blocks;
	fs_info->cache.free_blocks = eb;
	/* the free list link and the data pointer stay readable; the data is off limits */
	ASAN_POISON_MEMORY_REGION(eb->data, eb->len);
}

/* mixed: node-aligned bytenrs share their low bits (see hash_mix64()) */
static u32 cache_bucket(const struct btrfs_block_cache *cache, u64 bytenr)
{
	return hash_mix64(bytenr) % cache->nr_buckets;
}

static struct btrfs_tree_block *unpack_cached(struct btrfs_fs_info *fs_info, u64 bytenr);

struct btrfs_tree_block *btrfs_cache_lookup(struct btrfs_fs_info *fs_info,
					    u64 bytenr)
{
	struct btrfs_block_cache *cache = &fs_info->cache;
	struct btrfs_tree_block *eb;

	if (!cache->buckets)
		return NULL;
	for (eb = cache->buckets[cache_bucket(cache, bytenr)]; eb;
	     eb = eb->hash_next)
		if (eb->start == bytenr && (!eb->keys_only || cache->keep_root))
			return eb;
	return cache->nr_packed ? unpack_cached(fs_info, bytenr) : NULL;
}

static void lru_unlink(struct btrfs_block_cache *cache,
		       struct btrfs_tree_block *eb)
{
	if (eb->lru_prev)
		eb->lru_prev->lru_next = eb->lru_next;
	else
		cache->lru_head = eb->lru_next;
	if (eb->lru_next)
		eb->lru_next->lru_prev = eb->lru_prev;
	else
		cache->lru_tail = eb->lru_prev;
	eb->lru_prev = eb->lru_next = NULL;
}

static void cache_unhash(struct btrfs_block_cache *cache,
			 struct btrfs_tree_block *eb)
{
	struct btrfs_tree_block **p = &cache->buckets[cache_bucket(cache, eb->start)];

	while (*p && *p != eb)
		p = &(*p)->hash_next;
	if (*p) {
		*p = eb->hash_next;
		cache->nr_hashed--;
	}
}

static void hash_link(struct btrfs_tree_block **buckets, u32 bucket,
		      struct btrfs_tree_block *eb)
{
	eb->hash_next = buckets[bucket];
	buckets[bucket] = eb;
}

/* Twice the buckets, every chain moved over; on no memory the old ones serve */
static void cache_grow_buckets(struct btrfs_block_cache *cache)
{
	u32 nr = cache->nr_buckets * 2, i;
	struct btrfs_tree_block **old = cache->buckets;

	cache->buckets = calloc(nr, sizeof(*cache->buckets));
	if (!cache->buckets) {
		cache->buckets = old;
		return;
	}
	for (i = 0; i < cache->nr_buckets; i++) {
		struct btrfs_tree_block *eb = old[i], *next;

		for (; eb; eb = next) {
			next = eb->hash_next;
			hash_link(cache->buckets, hash_mix64(eb->start) % nr, eb);
		}
	}
	cache->nr_buckets = nr;
	free(old);
}

static int cache_hash(struct btrfs_block_cache *cache, struct btrfs_tree_block *eb)
{
	if (!cache->buckets) {
		u32 nr = BTRFS_CACHE_MIN_BUCKETS < BTRFS_CACHE_BUCKETS ?
			 BTRFS_CACHE_MIN_BUCKETS : BTRFS_CACHE_BUCKETS;

		cache->buckets = calloc(nr, sizeof(*cache->buckets));
		if (!cache->buckets)
			return -ENOMEM;
		cache->nr_buckets = nr;
	}
	if (cache->nr_hashed >= cache->nr_buckets &&
	    cache->nr_buckets * 2 <= BTRFS_CACHE_BUCKETS)
		cache_grow_buckets(cache);
	hash_link(cache->buckets, cache_bucket(cache, eb->start), eb);
	cache->nr_hashed++;
	return 0;
}

/*
 * Packed leaves.  csum-delete --file visits the file's leaves forward (the
 * count), then back (the truncation), and the extent tree's leaves of its
 * extents in the commit: each is read once only if all stay cached, 16 KiB
 * a leaf of 16 KiB nodes, two leaves a file leaf (572 MB at 3 M extents).
 * With btrfs_cache_pack_leaves(), a leaf the budget evicts is kept as a
 * packed copy instead, and a lookup unpacks it into a block of the cache:
 * nothing is read twice, and memory is the budget's leaves plus the packed
 * copies.
 *
 * The packing is exact, byte for byte, whatever the leaf holds, and pays
 * where items repeat a pattern (a file's extent items, the extent tree's
 * extent items): each item header is XORed with the one before it (25
 * bytes back), each byte of the items' data with the byte one item size
 * further (the data lies from the end of the leaf back, the previous
 * item's above), so a run of like items leaves a few changed bytes an item
 * (its key offset, its data offset, its disk_bytenr); then the zero bytes
 * are counted and the others copied: a varint count of zeros, a varint
 * count of bytes and the bytes, in turn.  The header, the first item and
 * the free space between items and data are left as they are (zeros where
 * the free space is clean).  Leaves of random data cost up to the leaf
 * plus a few bytes a run.  The same records are also tried as second
 * differences (below), and the shorter packing is kept.
 */
#define PACK_ITEM	((u32)sizeof(struct btrfs_item))
#define PACK_HEADER	((u32)sizeof(struct btrfs_header))
/* zeros shorter than this stay in the bytes copied: a run costs 2 bytes */
#define PACK_MIN_ZEROS	3
/* the largest node size btrfs has: the packing's scratch is on the stack */
#define PACK_MAX_NODESIZE	65536

struct btrfs_packed_leaf {
	struct btrfs_packed_leaf *next;
	u64 start;
	u64 owner;
	u64 generation;
	u32 nritems;
	int mirror;
	u32 len;			/* bytes of data[] */
	u8 data[];
};

/* Where the XORs apply: item headers [h, items_end), data [data_start, n) */
struct pack_layout {
	u32 items_end;
	u32 data_start;
	u32 stride;			/* the data's: the size of the lowest item */
};

static u32 clamp_u32(u64 v, u32 lo, u32 hi)
{
	return v < lo ? lo : v > hi ? hi : (u32)v;
}

/* From the leaf's bytes, trusting none of them: any layout unpacks */
static void pack_layout_of(const u8 *leaf, u32 nodesize, u32 nritems,
			   struct pack_layout *l)
{
	const struct btrfs_item *last;

	l->items_end = clamp_u32(PACK_HEADER + (u64)nritems * PACK_ITEM, PACK_HEADER,
				 nodesize);
	l->data_start = nodesize;
	l->stride = 1;
	if (!nritems || l->items_end < PACK_HEADER + (u64)nritems * PACK_ITEM)
		return;
	last = (const struct btrfs_item *)(leaf + l->items_end - PACK_ITEM);
	l->data_start = clamp_u32(PACK_HEADER + (u64)le32toh(last->offset),
				  l->items_end, nodesize);
	l->stride = clamp_u32(le32toh(last->size), 1, nodesize);
}

static u8 *put_varint(u8 *p, u32 v)
{
	while (v >= 0x80) {
		*p++ = (u8)(v | 0x80);
		v >>= 7;
	}
	*p++ = (u8)v;
	return p;
}

static const u8 *get_varint(const u8 *p, const u8 *end, u32 *v)
{
	u32 shift = 0;

	*v = 0;
	while (p < end && shift < 32) {
		u8 b = *p++;

		*v |= (u32)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return p;
		shift += 7;
	}
	return NULL;
}

/* The leaf with the XORs applied: what the zero runs are counted on */
static void pack_delta(const u8 *leaf, u32 nodesize, const struct pack_layout *l, u8 *d)
{
	u32 p, data_end = nodesize - (l->stride < nodesize - l->data_start ?
				      l->stride : nodesize - l->data_start);

	memcpy(d, leaf, nodesize);
	for (p = PACK_HEADER + PACK_ITEM; p < l->items_end; p++)
		d[p] = leaf[p] ^ leaf[p - PACK_ITEM];
	for (p = l->data_start; p < data_end; p++)
		d[p] = leaf[p] ^ leaf[p + l->stride];
}

static void pack_undo_delta(u8 *leaf, u32 nodesize, const struct pack_layout *l)
{
	u32 p;

	/* the XORs undone in the order they can be: from decoded bytes */
	for (p = PACK_HEADER + PACK_ITEM; p < l->items_end; p++)
		leaf[p] ^= leaf[p - PACK_ITEM];
	for (p = nodesize - l->stride; p-- > l->data_start;)
		leaf[p] ^= leaf[p + l->stride];
}

/*
 * The second packing: records of like items (the item headers from the
 * first, the items' data from the end of the leaf down, one stride each)
 * as second differences of their little-endian 64-bit words (the last
 * bytes of a record one by one), v[k] - 2 v[k - 1] + v[k - 2], record 0
 * as it is and record 1 less record 0.  A field that grows by the same
 * step from item to item (an extent's bytenr 8 KiB further each time, a
 * file extent's key offset, an item's data offset) then leaves zeros
 * where the XOR left a few changed bytes an item, and a u64 cut by a word
 * boundary stays linear in its lower part: only its carries show.
 */
struct pack_records {
	u32 first;			/* record 0's offset */
	int64_t step;			/* from record k to k + 1: +size or -size */
	u32 size;
	u32 nr;
};

static u64 get_le64(const u8 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static void put_le64(u8 *p, u64 v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static void records_of(const struct pack_layout *l, u32 nodesize, struct pack_records *hdr,
		       struct pack_records *data)
{
	*hdr = (struct pack_records){ .first = PACK_HEADER, .step = PACK_ITEM,
				      .size = PACK_ITEM,
				      .nr = (l->items_end - PACK_HEADER) / PACK_ITEM };
	*data = (struct pack_records){ .first = nodesize - l->stride, .step = -(int64_t)l->stride,
				       .size = l->stride,
				       .nr = (nodesize - l->data_start) / l->stride };
}

/* Record @k's second difference into @d, from the leaf's own records */
static void records_encode(const u8 *leaf, u8 *d, const struct pack_records *r)
{
	u32 k, w;

	for (k = 1; k < r->nr; k++) {
		const u8 *cur = leaf + r->first + (int64_t)k * r->step;
		const u8 *prev = cur - r->step, *prev2 = prev - r->step;
		u8 *out = d + (cur - leaf);

		for (w = 0; w + 8 <= r->size; w += 8) {
			u64 v = get_le64(cur + w) - get_le64(prev + w);

			if (k >= 2)
				v -= get_le64(prev + w) - get_le64(prev2 + w);
			put_le64(out + w, v);
		}
		for (; w < r->size; w++)
			out[w] = (u8)(cur[w] - prev[w] - (k >= 2 ? prev[w] - prev2[w] : 0));
	}
}

/* In record order: each record from the two before it, already decoded */
static void records_decode(u8 *leaf, const struct pack_records *r)
{
	u32 k, w;

	for (k = 1; k < r->nr; k++) {
		u8 *cur = leaf + r->first + (int64_t)k * r->step;
		const u8 *prev = cur - r->step, *prev2 = prev - r->step;

		for (w = 0; w + 8 <= r->size; w += 8) {
			u64 v = get_le64(cur + w) + get_le64(prev + w);

			if (k >= 2)
				v += get_le64(prev + w) - get_le64(prev2 + w);
			put_le64(cur + w, v);
		}
		for (; w < r->size; w++)
			cur[w] = (u8)(cur[w] + prev[w] + (k >= 2 ? prev[w] - prev2[w] : 0));
	}
}

/* Zero bytes from @p on, 8 at a time where it can */
static u32 zeros_from(const u8 *d, u32 p, u32 n)
{
	u64 w;

	while (p + 8 <= n) {
		memcpy(&w, d + p, 8);
		if (w)
			break;
		p += 8;
	}
	while (p < n && !d[p])
		p++;
	return p;
}

u32 btrfs_leaf_pack_bound(u32 nodesize)
{
	/* four varints, then at worst a run of bytes with its two counts */
	return 4 * 5 + nodesize + 2 * 5;
}

/* The zero runs and the bytes between them of @d into @o (NULL: only counted) */
static u32 pack_runs(const u8 *d, u32 nodesize, u8 *o)
{
	u8 v[5], *start = o;
	u32 p = 0, len = 0;

	while (p < nodesize) {
		u32 lit_start = zeros_from(d, p, nodesize), q = lit_start, run = 0;

		/* the bytes up to the next run of PACK_MIN_ZEROS zeros */
		for (; q < nodesize && run < PACK_MIN_ZEROS; q++)
			run = d[q] ? 0 : run + 1;
		q -= run;
		if (o) {
			o = put_varint(o, lit_start - p);
			o = put_varint(o, q - lit_start);
			memcpy(o, d + lit_start, q - lit_start);
			o += q - lit_start;
		} else {
			len += put_varint(v, lit_start - p) - v;
			len += put_varint(v, q - lit_start) - v + q - lit_start;
		}
		p = q;
	}
	return o ? (u32)(o - start) : len;
}

/* The two packings: the XORs, or the second differences of like records */
enum { PACK_XOR, PACK_SECOND_DIFF, PACK_MODES };

static void pack_mode_delta(const u8 *leaf, u32 nodesize, const struct pack_layout *l,
			    u32 mode, u8 *d)
{
	struct pack_records hdr, data;

	if (mode == PACK_XOR) {
		pack_delta(leaf, nodesize, l, d);
		return;
	}
	memcpy(d, leaf, nodesize);
	records_of(l, nodesize, &hdr, &data);
	records_encode(leaf, d, &hdr);
	records_encode(leaf, d, &data);
}

/*
 * @nodesize at most 64 KiB, as every btrfs node.  Both packings are
 * counted and the shorter kept: the second differences win on runs of
 * items whose fields step evenly (4 KiB extents 4 KiB apart: a few bytes
 * where the XORs left ten an item), the XORs on irregular ones.
 */
u32 btrfs_leaf_pack(const u8 *leaf, u32 nodesize, u32 nritems, u8 *out)
{
	u8 d[PACK_MAX_NODESIZE];
	struct pack_layout l;
	u32 mode, best = PACK_XOR, best_len = UINT32_MAX;
	u8 *o = out;

	pack_layout_of(leaf, nodesize, nritems, &l);
	for (mode = 0; mode < PACK_MODES; mode++) {
		u32 len;

		pack_mode_delta(leaf, nodesize, &l, mode, d);
		len = pack_runs(d, nodesize, NULL);
		if (len < best_len) {
			best = mode;
			best_len = len;
		}
	}
	if (best != PACK_MODES - 1)
		pack_mode_delta(leaf, nodesize, &l, best, d);
	o = put_varint(o, l.items_end);
	o = put_varint(o, l.data_start);
	o = put_varint(o, l.stride);
	o = put_varint(o, best);
	o += pack_runs(d, nodesize, o);
	return o - out;
}

int btrfs_leaf_unpack(const u8 *in, u32 len, u32 nodesize, u8 *leaf)
{
	const u8 *end = in + len;
	struct pack_records hdr, data;
	struct pack_layout l;
	u32 p = 0, zeros, lit, mode;

	in = get_varint(in, end, &l.items_end);
	in = in ? get_varint(in, end, &l.data_start) : NULL;
	in = in ? get_varint(in, end, &l.stride) : NULL;
	in = in ? get_varint(in, end, &mode) : NULL;
	if (!in || l.items_end < PACK_HEADER || l.items_end > l.data_start ||
	    l.data_start > nodesize || !l.stride || l.stride > nodesize ||
	    mode >= PACK_MODES)
		return -EUCLEAN;
	while (p < nodesize) {
		in = get_varint(in, end, &zeros);
		in = in ? get_varint(in, end, &lit) : NULL;
		if (!in || zeros > nodesize - p || lit > nodesize - p - zeros ||
		    lit > (u32)(end - in))
			return -EUCLEAN;
		memset(leaf + p, 0, zeros);
		p += zeros;
		memcpy(leaf + p, in, lit);
		p += lit;
		in += lit;
	}
	if (in != end)
		return -EUCLEAN;
	if (mode == PACK_XOR) {
		pack_undo_delta(leaf, nodesize, &l);
		return 0;
	}
	records_of(&l, nodesize, &hdr, &data);
	records_decode(leaf, &hdr);
	records_decode(leaf, &data);
	return 0;
}

static u32 packed_bucket(const struct btrfs_block_cache *cache, u64 bytenr)
{
	return hash_mix64(bytenr) & (cache->nr_packed_buckets - 1);
}

/* Twice the buckets once there are as many copies as buckets */
static void packed_grow(struct btrfs_block_cache *cache)
{
	u32 nr = cache->nr_packed_buckets ? cache->nr_packed_buckets * 2 : 1024, i;
	struct btrfs_packed_leaf **b = calloc(nr, sizeof(*b)), *pl, *next;

	if (!b)
		return;
	for (i = 0; i < cache->nr_packed_buckets; i++) {
		for (pl = cache->packed[i]; pl; pl = next) {
			next = pl->next;
			pl->next = b[hash_mix64(pl->start) & (nr - 1)];
			b[hash_mix64(pl->start) & (nr - 1)] = pl;
		}
	}
	free(cache->packed);
	cache->packed = b;
	cache->nr_packed_buckets = nr;
}

/* Keep @eb packed; false (the leaf is then only dropped) on no memory */
static bool pack_evicted(struct btrfs_block_cache *cache, const struct btrfs_tree_block *eb)
{
	struct btrfs_packed_leaf *pl;
	u32 len;

	if (eb->len > PACK_MAX_NODESIZE || eb->owner == cache->unpacked_owner[0] ||
	    eb->owner == cache->unpacked_owner[1])
		return false;
	if (cache->nr_packed >= cache->nr_packed_buckets)
		packed_grow(cache);
	if (!cache->nr_packed_buckets)
		return false;
	if (!cache->pack_buf)
		cache->pack_buf = malloc(btrfs_leaf_pack_bound(eb->len));
	if (!cache->pack_buf)
		return false;
	len = btrfs_leaf_pack(eb->data, eb->len, eb->nritems, cache->pack_buf);
	pl = malloc(sizeof(*pl) + len);
	if (!pl)
		return false;
	*pl = (struct btrfs_packed_leaf){
		.start = eb->start, .owner = eb->owner, .generation = eb->generation,
		.nritems = eb->nritems, .mirror = eb->mirror, .len = len,
	};
	memcpy(pl->data, cache->pack_buf, len);
	pl->next = cache->packed[packed_bucket(cache, eb->start)];
	cache->packed[packed_bucket(cache, eb->start)] = pl;
	cache->nr_packed++;
	cache->packed_bytes += len;
	return true;
}

/* The packed copy of @bytenr out of the table, or NULL */
static struct btrfs_packed_leaf *packed_take(struct btrfs_block_cache *cache, u64 bytenr)
{
	struct btrfs_packed_leaf **p = &cache->packed[packed_bucket(cache, bytenr)], *pl;

	for (; *p; p = &(*p)->next) {
		if ((*p)->start != bytenr)
			continue;
		pl = *p;
		*p = pl->next;
		cache->nr_packed--;
		cache->packed_bytes -= pl->len;
		return pl;
	}
	return NULL;
}

/*
 * The leaf at @bytenr unpacked into the cache, as its read left it, or
 * NULL (not packed, or no memory: then it is read again).
 */
static struct btrfs_tree_block *unpack_cached(struct btrfs_fs_info *fs_info, u64 bytenr)
{
	struct btrfs_packed_leaf *pl = packed_take(&fs_info->cache, bytenr);
	struct btrfs_tree_block *eb;

	if (!pl)
		return NULL;
	eb = btrfs_alloc_tree_block(fs_info, bytenr);
	if (eb && btrfs_leaf_unpack(pl->data, pl->len, eb->len, eb->data)) {
		btrfs_free_tree_block(fs_info, eb);
		eb = NULL;
	}
	if (eb) {
		eb->owner = pl->owner;
		eb->generation = pl->generation;
		eb->nritems = pl->nritems;
		eb->mirror = pl->mirror;
		/* held while inserted: the eviction it may run must not take it */
		eb->refs = 1;
		if (btrfs_cache_insert(fs_info, &eb)) {
			btrfs_free_tree_block(fs_info, eb);
			eb = NULL;
		} else {
			eb->refs = 0;
		}
	}
	free(pl);
	return eb;
}

static void free_packed(struct btrfs_block_cache *cache)
{
	struct btrfs_packed_leaf *pl, *next;
	u32 i;

	for (i = 0; i < cache->nr_packed_buckets; i++)
		for (pl = cache->packed[i]; pl; pl = next) {
			next = pl->next;
			free(pl);
		}
	free(cache->packed);
	free(cache->pack_buf);
	cache->packed = NULL;
	cache->pack_buf = NULL;
	cache->nr_packed_buckets = 0;
	cache->nr_packed = 0;
	cache->packed_bytes = 0;
	cache->pack = false;
	cache->unpacked_owner[0] = cache->unpacked_owner[1] = 0;
}

/*
 * Leaves kept whole while packing: the working set of a search path and of
 * a run of neighbouring items (a truncation's leaf, a run of the commit's
 * heads in one extent leaf), far from a budget's worth
 */
#ifndef BTRFS_PACK_WHOLE_BYTES
#define BTRFS_PACK_WHOLE_BYTES	(16ULL << 20)
#endif

void btrfs_cache_pack_leaves(struct btrfs_fs_info *fs_info)
{
	struct btrfs_block_cache *cache = &fs_info->cache;

	cache->pack = true;
	if (BTRFS_PACK_WHOLE_BYTES < BTRFS_LEAF_CACHE_BYTES)
		cache->leaf_limit = BTRFS_PACK_WHOLE_BYTES;
}

void btrfs_cache_pack_stop(struct btrfs_fs_info *fs_info, u64 owner)
{
	u64 *o = fs_info->cache.unpacked_owner;

	if (!owner)
		o[0] = o[1] = 0;
	else if (o[0] != owner && o[1] != owner)
		o[o[0] ? 1 : 0] = owner;
}

void btrfs_cache_forget_leaf(struct btrfs_fs_info *fs_info, u64 bytenr)
{
	struct btrfs_block_cache *cache = &fs_info->cache;
	struct btrfs_tree_block *eb;

	if (cache->nr_packed) {
		struct btrfs_packed_leaf *pl = packed_take(cache, bytenr);

		if (pl) {
			free(pl);
			return;
		}
	}
	if (!cache->buckets)
		return;
	for (eb = cache->buckets[cache_bucket(cache, bytenr)]; eb; eb = eb->hash_next)
		if (eb->start == bytenr && !eb->keys_only) {
			btrfs_cache_drop_leaf(fs_info, eb);
			return;
		}
}

void btrfs_cache_packed_stats(const struct btrfs_fs_info *fs_info, u64 *nr, u64 *bytes)
{
	*nr = fs_info->cache.nr_packed;
	*bytes = fs_info->cache.packed_bytes;
}

/*
 * Drop the oldest unreferenced leaves until the leaf budget holds again;
 * with packing on, each is kept packed (a key-only copy is only dropped)
 */
static void cache_evict_leaves(struct btrfs_fs_info *fs_info)
{
	struct btrfs_block_cache *cache = &fs_info->cache;
	struct btrfs_tree_block *eb = cache->lru_head;

	u64 limit = cache->leaf_limit ? cache->leaf_limit : BTRFS_LEAF_CACHE_BYTES;

	while (eb && cache->bytes > limit) {
		struct btrfs_tree_block *next = eb->lru_next;

		if (!eb->refs) {
			lru_unlink(cache, eb);
			cache_unhash(cache, eb);
			cache->bytes -= eb->mem;
			cache->nr_leaves--;
			if (cache->pack && !eb->keys_only)
				pack_evicted(cache, eb);
			btrfs_free_tree_block(fs_info, eb);
		}
		eb = next;
	}
}

/*
 * Key-only leaves.  Loading the block groups and replaying the kernel's
 * search for them read 3,000 extent-tree leaves on a 3 TiB filesystem,
 * each for its one block group item, and the replay comes after all of
 * them: kept whole, they are 50 MB of fresh memory, and the kernel zeroing
 * and faulting it in cost a third of a warm `inspect`.  What a search for
 * block group items reads of a leaf is its header, its first key (the
 * parent's key is checked against it) and, wherever it lands, the next
 * block group item at or after its key: keys in order, the items of that
 * type only.  So such a leaf is cached as a copy of just those, a few
 * hundred bytes, and the block read is freed at once; the next read takes
 * its slot, which is still in the CPU's cache.  The searches find the copy
 * as they would the leaf, each touch still goes through the read observer,
 * and nothing is read twice.
 *
 * Only leaves whose items were all checked when read (the header says
 * written) are copied: the item checks the load repeats then pass on the
 * copy as on the leaf, so no verdict can name a slot of the copy.  A copy
 * is made only when much smaller than the leaf (a block group tree's
 * leaves hold nothing else).  Copies are malloc'd, so AddressSanitizer
 * still sees a read past one or after its free.
 */
static bool keep_item(const struct btrfs_block_cache *cache,
		      const struct btrfs_item *item)
{
	return item->key.type == cache->keep_type;
}

static bool wants_keys_only(const struct btrfs_block_cache *cache,
			    const struct btrfs_tree_block *eb)
{
	const struct btrfs_header *h = (const struct btrfs_header *)eb->data;

	return cache->keep_root && !eb->level && !eb->keys_only && eb->nritems &&
	       eb->owner == cache->keep_root &&
	       (btrfs_header_flags(h) & BTRFS_HEADER_FLAG_WRITTEN);
}

/*
 * At most this many items in a copy: more would not be much smaller than
 * a 16 KiB leaf, and the slots are gathered in one pass on the stack.
 */
#define KEYS_ONLY_MAX_ITEMS	64

/*
 * The slots a copy keeps (item 0, whose data only if kept, and the kept
 * items, in order) into @slots; the copy's size, or 0 when there are more
 * than KEYS_ONLY_MAX_ITEMS.
 */
static bool keys_only_add(const struct btrfs_block_cache *cache,
			  const struct btrfs_tree_block *eb, u32 slot,
			  u16 *slots, u32 *nr, u32 *data)
{
	const struct btrfs_item *item = btrfs_item_nr(eb, slot);

	if (keep_item(cache, item))
		*data += btrfs_raw_item_size(item);
	else if (slot)
		return true;
	if (*nr == KEYS_ONLY_MAX_ITEMS)
		return false;
	slots[(*nr)++] = slot;
	return true;
}

/*
 * The leaf check just listed the slots that are not plain data
 * EXTENT_ITEMs (tree-checker.c): when it listed them all for this very
 * block and the kept type is not EXTENT_ITEM, the kept items are among
 * them, and slot 0 is visited in any case.
 */
static bool other_slots_serve(const struct btrfs_block_cache *cache,
			      const struct btrfs_tree_block *eb)
{
	return cache->other_data == eb->data && cache->other_complete &&
	       cache->keep_type != BTRFS_EXTENT_ITEM_KEY;
}

static u32 keys_only_slots(const struct btrfs_block_cache *cache,
			   const struct btrfs_tree_block *eb, u16 *slots, u32 *nr)
{
	u32 data = 0, slot, i;

	*nr = 0;
	if (other_slots_serve(cache, eb)) {
		if ((!cache->nr_other || cache->other_slot[0]) &&
		    !keys_only_add(cache, eb, 0, slots, nr, &data))
			return 0;
		for (i = 0; i < cache->nr_other; i++)
			if (!keys_only_add(cache, eb, cache->other_slot[i], slots, nr, &data))
				return 0;
	} else {
		for (slot = 0; slot < eb->nritems; slot++)
			if (!keys_only_add(cache, eb, slot, slots, nr, &data))
				return 0;
	}
	return sizeof(struct btrfs_header) + *nr * sizeof(struct btrfs_item) + data;
}

static struct btrfs_tree_block *keys_only_copy(const struct btrfs_block_cache *cache,
					       const struct btrfs_tree_block *eb)
{
	const u8 *from = eb->data + sizeof(struct btrfs_header);
	u16 slots[KEYS_ONLY_MAX_ITEMS];
	struct btrfs_tree_block *copy;
	struct btrfs_item *items;
	u32 nr, mem = keys_only_slots(cache, eb, slots, &nr), at, n;
	u8 *to;

	if (!mem || mem > eb->len / 4)
		return NULL;
	copy = malloc(sizeof(*copy) + mem);
	if (!copy)
		return NULL;		/* the leaf itself serves */
	*copy = *eb;
	copy->data = (u8 *)(copy + 1);
	copy->keys_only = true;
	copy->mem = mem;
	copy->nritems = nr;
	copy->hash_next = copy->lru_prev = copy->lru_next = NULL;
	memcpy(copy->data, eb->data, sizeof(struct btrfs_header));
	((struct btrfs_header *)copy->data)->nritems = htole32(nr);
	to = copy->data + sizeof(struct btrfs_header);
	items = (struct btrfs_item *)to;
	/* item offsets count from the end of the header, as in a leaf */
	at = nr * sizeof(struct btrfs_item);
	for (n = 0; n < nr; n++) {
		const struct btrfs_item *item = btrfs_item_nr(eb, slots[n]);
		u32 size = keep_item(cache, item) ? btrfs_raw_item_size(item) : 0;

		items[n].key = item->key;
		items[n].offset = htole32(at);
		items[n].size = htole32(size);
		memcpy(to + at, from + btrfs_raw_item_offset(item), size);
		at += size;
	}
	return copy;
}

void btrfs_cache_keep_items(struct btrfs_fs_info *fs_info, u64 root_id, u8 type)
{
	fs_info->cache.keep_root = root_id;
	fs_info->cache.keep_type = type;
}

int btrfs_cache_insert(struct btrfs_fs_info *fs_info, struct btrfs_tree_block **ebp)
{
	struct btrfs_block_cache *cache = &fs_info->cache;
	struct btrfs_tree_block *eb = *ebp;

	if (wants_keys_only(cache, eb)) {
		struct btrfs_tree_block *copy = keys_only_copy(cache, eb);

		cache->other_data = NULL;	/* used once: the slot is reused */

		if (copy) {
			btrfs_free_tree_block(fs_info, eb);
			*ebp = eb = copy;
		}
	}

	if (cache_hash(cache, eb))
		return -ENOMEM;
	if (eb->level == 0) {
		eb->lru_prev = cache->lru_tail;
		if (cache->lru_tail)
			cache->lru_tail->lru_next = eb;
		else
			cache->lru_head = eb;
		cache->lru_tail = eb;
		cache->bytes += eb->mem;
		cache->nr_leaves++;
		cache_evict_leaves(fs_info);
	}
	return 0;
}

void btrfs_tree_block_put(struct btrfs_tree_block *eb)
{
	if (eb && eb->refs)
		eb->refs--;
}

void btrfs_cache_drop_leaf(struct btrfs_fs_info *fs_info, struct btrfs_tree_block *eb)
{
	struct btrfs_block_cache *cache = &fs_info->cache;

	if (!eb || eb->level || eb->refs || btrfs_cache_lookup(fs_info, eb->start) != eb)
		return;
	lru_unlink(cache, eb);
	cache_unhash(cache, eb);
	cache->bytes -= eb->mem;
	cache->nr_leaves--;
	btrfs_free_tree_block(fs_info, eb);
}

/* The key-only copies are the only blocks outside the regions; all are leaves */
static void free_keys_only(struct btrfs_block_cache *cache)
{
	struct btrfs_tree_block *eb = cache->lru_head;

	while (eb) {
		struct btrfs_tree_block *next = eb->lru_next;

		if (eb->keys_only)
			free(eb);
		eb = next;
	}
}

/*
 * Forget every cached block but keep the memory: the next reads carve
 * their blocks from the same regions again, whatever their nodesize.  For
 * callers that open many small filesystems one after another with one
 * fs_info (the fuzz targets), where mapping a fresh region for each would
 * cost more than the reading.  No block may be held when it is called.
 */
void btrfs_drop_block_cache(struct btrfs_fs_info *fs_info)
{
	struct btrfs_block_cache *cache = &fs_info->cache;
	u32 i;

	free_keys_only(cache);
	free_packed(cache);
	if (cache->buckets)
		memset(cache->buckets, 0, cache->nr_buckets * sizeof(*cache->buckets));
	cache->nr_hashed = 0;
	for (i = 0; i < cache->nr_regions; i++)
		ASAN_POISON_MEMORY_REGION(cache->regions[i], BTRFS_BLOCK_REGION);
	cache->lru_head = NULL;
	cache->lru_tail = NULL;
	cache->nr_leaves = 0;
	cache->bytes = 0;
	cache->free_blocks = NULL;
	cache->keep_root = 0;
	cache->cur_region = 0;
	cache->region_used = 0;
	cache->region_data_used = 0;
}

void btrfs_free_block_cache(struct btrfs_fs_info *fs_info)
{
	struct btrfs_block_cache *cache = &fs_info->cache;
	u32 i;

	free_keys_only(cache);
	free_packed(cache);
	/* every other block, cached or on the free list, lives in a region */
	for (i = 0; i < cache->nr_regions; i++) {
		ASAN_UNPOISON_MEMORY_REGION(cache->regions[i], BTRFS_BLOCK_REGION);
		munmap(cache->regions[i], BTRFS_BLOCK_REGION);
	}
	free(cache->regions);
	free(cache->buckets);
	memset(cache, 0, sizeof(*cache));
}

/* Read-ahead keeps its leaves within it, so none is evicted before use */
u64 btrfs_cache_leaf_limit(void)
{
	return BTRFS_LEAF_CACHE_BYTES;
}
