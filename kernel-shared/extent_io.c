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

static u32 block_bytes(const struct btrfs_fs_info *fs_info)
{
	return sizeof(struct btrfs_tree_block) + fs_info->nodesize;
}

static u32 block_slot_size(const struct btrfs_fs_info *fs_info)
{
	/* 64-byte aligned so that no two blocks share a cache line */
	return (block_bytes(fs_info) + BTRFS_BLOCK_REDZONE + 63) & ~63U;
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
	return 0;
}

static struct btrfs_tree_block *carve_block(struct btrfs_block_cache *cache, u32 size)
{
	struct btrfs_tree_block *eb;

	if ((!cache->nr_regions || cache->region_used + size > BTRFS_BLOCK_REGION) &&
	    next_region(cache))
		return NULL;
	eb = (struct btrfs_tree_block *)(cache->regions[cache->cur_region] +
					 cache->region_used);
	cache->region_used += size;
	return eb;
}

/* A zeroed block header with nodesize bytes of data behind it */
struct btrfs_tree_block *btrfs_alloc_tree_block(struct btrfs_fs_info *fs_info, u64 bytenr)
{
	struct btrfs_block_cache *cache = &fs_info->cache;
	struct btrfs_tree_block *eb = cache->free_blocks;

	if (eb) {
		cache->free_blocks = eb->hash_next;
	} else {
		eb = carve_block(cache, block_slot_size(fs_info));
		if (!eb)
			return NULL;
	}
	ASAN_UNPOISON_MEMORY_REGION(eb, block_bytes(fs_info));
	/* the data is what the read puts there; a reused slot's header is not zero */
	memset(eb, 0, sizeof(*eb));
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
	/* the free list link stays readable; the rest is off limits */
	ASAN_POISON_MEMORY_REGION(eb->data, eb->len);
}

/* mixed: node-aligned bytenrs share their low bits (see hash_mix64()) */
static u32 cache_bucket(const struct btrfs_block_cache *cache, u64 bytenr)
{
	return hash_mix64(bytenr) % cache->nr_buckets;
}

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
	return NULL;
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

/* Drop the oldest unreferenced leaves until the leaf budget holds again */
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
static u32 keys_only_slots(const struct btrfs_block_cache *cache,
			   const struct btrfs_tree_block *eb, u16 *slots, u32 *nr)
{
	u32 data = 0, slot;

	*nr = 0;
	for (slot = 0; slot < eb->nritems; slot++) {
		const struct btrfs_item *item = btrfs_item_nr(eb, slot);

		if (keep_item(cache, item))
			data += btrfs_raw_item_size(item);
		else if (slot)
			continue;
		if (*nr == KEYS_ONLY_MAX_ITEMS)
			return 0;
		slots[(*nr)++] = slot;
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
}

void btrfs_free_block_cache(struct btrfs_fs_info *fs_info)
{
	struct btrfs_block_cache *cache = &fs_info->cache;
	u32 i;

	free_keys_only(cache);
	/* every other block, cached or on the free list, lives in a region */
	for (i = 0; i < cache->nr_regions; i++) {
		ASAN_UNPOISON_MEMORY_REGION(cache->regions[i], BTRFS_BLOCK_REGION);
		munmap(cache->regions[i], BTRFS_BLOCK_REGION);
	}
	free(cache->regions);
	free(cache->buckets);
	memset(cache, 0, sizeof(*cache));
}

void btrfs_cache_grow_leaf_limit(struct btrfs_fs_info *fs_info, u64 bytes)
{
	struct btrfs_block_cache *cache = &fs_info->cache;

	if (bytes > BTRFS_LEAF_CACHE_BYTES && bytes > cache->leaf_limit)
		cache->leaf_limit = bytes;
}

/* Read-ahead keeps its leaves within it, so none is evicted before use */
u64 btrfs_cache_leaf_limit(void)
{
	return BTRFS_LEAF_CACHE_BYTES;
}
