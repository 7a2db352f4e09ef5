// SPDX-License-Identifier: GPL-2.0
/*
 * Shared parts of the parse-* targets; see parse-common.h and
 * Documentation/dev/fuzzing.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "common/checksum.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/volumes.h"
#include "tests/fuzz/parse-common.h"

#define PZ_MAX_COPIES	8	/* two blocks of up to four copies */

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		abort();
	return p;
}

/* --- templates opened once ------------------------------------------------ */

static void write_template(struct pz_fs *fs, const struct fz_image *img)
{
	u32 d, i;

	for (d = 0; d < img->ndev; d++) {
		fs->fds[d] = memfd_create("parse-dev", MFD_CLOEXEC);
		if (fs->fds[d] < 0 || ftruncate(fs->fds[d], img->dev_size[d]))
			abort();
		snprintf(fs->names[d], sizeof(fs->names[d]), "/proc/self/fd/%d",
			 fs->fds[d]);
	}
	for (i = 0; i < img->nrecs; i++) {
		const struct fz_rec *r = &img->recs[i];

		if (pwrite(fs->fds[r->dev], r->data, r->len, r->offset) != (ssize_t)r->len)
			abort();
	}
	fs->ndev = img->ndev;
}

struct pz_fs *pz_open(u32 t)
{
	static struct pz_fs **opened;
	static bool *failed;
	const char *paths[BFZ_MAX_DEVS];
	struct btrfs_open_args args = { .paths = paths };
	struct pz_fs *fs;
	u32 d;

	t %= fz_nr_templates();
	if (!opened) {
		opened = xcalloc(fz_nr_templates(), sizeof(*opened));
		failed = xcalloc(fz_nr_templates(), sizeof(*failed));
	}
	if (opened[t] || failed[t])
		return opened[t];
	fs = xcalloc(1, sizeof(*fs));
	fs->t = t;
	write_template(fs, fz_template(t));
	for (d = 0; d < fs->ndev; d++)
		paths[d] = fs->names[d];
	args.nr_paths = fs->ndev;
	if (btrfs_open_fs(&fs->fs_info, &args)) {
		/* the smoke test sees this: every template must open */
		fprintf(stderr, "fuzz: template %s does not open: %s\n",
			fz_template_name(t), fs->fs_info.err.msg);
		btrfs_close_fs(&fs->fs_info);
		for (d = 0; d < fs->ndev; d++)
			close(fs->fds[d]);
		free(fs);
		failed[t] = true;
		return NULL;
	}
	/* reads must reach the devices, where the fuzzed blocks go */
	btrfs_drop_block_cache(&fs->fs_info);
	opened[t] = fs;
	return fs;
}

void pz_work_init(struct btrfs_fs_info *work, const struct pz_fs *fs, bool dev_items)
{
	const struct btrfs_fs_info *base = &fs->fs_info;
	struct btrfs_block_cache cache;
	u32 i;

	/* the cache's memory stays from run to run (pz_work_free()) */
	cache = work->cache;
	memset(work, 0, sizeof(*work));
	work->cache = cache;
	work->super = base->super;
	work->super_mirror = base->super_mirror;
	work->nodesize = base->nodesize;
	work->sectorsize = base->sectorsize;
	work->csum_type = base->csum_type;
	work->csum_size = base->csum_size;
	work->generation = base->generation;
	work->incompat = base->incompat;
	work->compat_ro = base->compat_ro;
	memcpy(work->fsid, base->fsid, sizeof(work->fsid));
	memcpy(work->metadata_uuid, base->metadata_uuid, sizeof(work->metadata_uuid));
	for (i = 0; i < base->nr_devices; i++) {
		const struct btrfs_device *from = &base->devices[i];
		struct btrfs_device *dev;

		if (!from->present && !dev_items)
			continue;
		dev = btrfs_add_device(work, from->devid);
		if (!dev)
			abort();
		dev->present = from->present;
		dev->io = from->io;
		dev->sb_generation = from->sb_generation;
		memcpy(dev->uuid, from->uuid, sizeof(dev->uuid));
		if (!dev_items)
			continue;
		memcpy(dev->fsid, from->fsid, sizeof(dev->fsid));
		dev->total_bytes = from->total_bytes;
		dev->bytes_used = from->bytes_used;
		dev->in_chunk_tree = from->in_chunk_tree;
		dev->writeable = from->writeable;
	}
}

void pz_work_free(struct btrfs_fs_info *work)
{
	btrfs_drop_block_cache(work);
	btrfs_free_chunk_maps(work);
	free(work->devices);
	free(work->block_groups);
	work->devices = NULL;
	work->block_groups = NULL;
	work->nr_devices = 0;
	work->devices_cap = 0;
}

void pz_map_chunks(struct btrfs_fs_info *fs_info)
{
	u32 i;

	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];
		u64 at[3] = { map->start, map->start + map->length / 2,
			      map->start + map->length - 1 };
		int copies = btrfs_num_copies(map), m, a;

		btrfs_chunk_max_errors(map);
		btrfs_bg_type_name(map->type);
		btrfs_bg_profile_name(map->type);
		for (a = 0; a < 3; a++)
			for (m = 0; m <= copies; m++) {
				struct btrfs_io_piece piece;

				btrfs_map_block(fs_info, &fs_info->err, at[a], fs_info->nodesize, m,
						&piece);
				fs_info->err.err = 0;
			}
	}
}

/* --- swapping a tree block in --------------------------------------------- */

static struct {
	int fd;
	u64 physical;
	u32 len;
	u8 *old;
} saved[PZ_MAX_COPIES];
static u32 nr_saved;

static int device_fd(struct pz_fs *fs, const struct btrfs_device *dev)
{
	u32 d;

	for (d = 0; d < fs->ndev; d++)
		if (dev->io.path && !strcmp(dev->io.path, fs->names[d]))
			return fs->fds[d];
	return -1;
}

int pz_place(struct pz_fs *fs, u64 logical, const u8 *block)
{
	struct btrfs_fs_info *fs_info = &fs->fs_info;
	struct btrfs_chunk_map *map;
	int copies, m;

	map = btrfs_find_chunk_map(fs_info, logical, fs_info->nodesize);
	if (!map || map->start > logical)
		return -1;
	copies = btrfs_num_copies(map);
	for (m = 0; m < copies && nr_saved < PZ_MAX_COPIES; m++) {
		struct btrfs_io_piece piece;
		int fd;

		if (btrfs_map_block(fs_info, &fs_info->err, logical, fs_info->nodesize, m,
				    &piece) ||
		    !piece.dev || piece.length != fs_info->nodesize)
			break;
		fd = device_fd(fs, piece.dev);
		if (fd < 0)
			break;
		if (!saved[nr_saved].old)
			saved[nr_saved].old = xcalloc(1, BTRFS_MAX_METADATA_BLOCKSIZE);
		saved[nr_saved].fd = fd;
		saved[nr_saved].physical = piece.physical;
		saved[nr_saved].len = piece.length;
		if (pread(fd, saved[nr_saved].old, piece.length, piece.physical) !=
		    (ssize_t)piece.length)
			abort();
		nr_saved++;
		if (pwrite(fd, block, piece.length, piece.physical) != (ssize_t)piece.length)
			abort();
	}
	fs_info->err.err = 0;
	btrfs_drop_block_cache(fs_info);
	return m == copies ? 0 : -1;
}

void pz_restore(struct pz_fs *fs)
{
	while (nr_saved) {
		nr_saved--;
		if (pwrite(saved[nr_saved].fd, saved[nr_saved].old, saved[nr_saved].len,
			   saved[nr_saved].physical) != (ssize_t)saved[nr_saved].len)
			abort();
	}
	if (fs)
		btrfs_drop_block_cache(&fs->fs_info);
}

int pz_read_block(struct pz_fs *fs, const struct btrfs_root_ref *root, u8 *out)
{
	struct btrfs_tree_block *eb;
	int ret;

	ret = btrfs_read_root_node(&fs->fs_info, &fs->fs_info.err, root, BTRFS_IO_OTHER,
				   &eb);
	fs->fs_info.err.err = 0;
	if (ret)
		return -1;
	memcpy(out, eb->data, eb->len);
	btrfs_tree_block_put(eb);
	btrfs_drop_block_cache(&fs->fs_info);
	return 0;
}

struct pz_fs *pz_open_root_leaf(u32 t, pz_root_fn get, struct pz_root_leaf **cache,
			       const struct pz_root_leaf **found)
{
	u32 k, n = fz_nr_templates();

	if (!*cache)
		*cache = xcalloc(n, sizeof(**cache));
	for (k = 0; k < n; k++) {
		u32 u = (t + k) % n;
		struct pz_root_leaf *c = &(*cache)[u];
		struct pz_fs *fs = pz_open(u);

		if (!fs)
			continue;
		if (!c->tried) {
			c->tried = true;
			c->leaf = xcalloc(1, fs->fs_info.nodesize);
			if (get(fs, &c->root) || c->root.level ||
			    pz_read_block(fs, &c->root, c->leaf)) {
				free(c->leaf);
				c->leaf = NULL;
			}
		}
		if (c->leaf) {
			*found = c;
			return fs;
		}
	}
	return NULL;
}

/* --- leaves built in memory ----------------------------------------------- */

u32 pz_parse_items(const u8 *data, size_t size, struct pz_item *items, u32 max)
{
	size_t pos = 0;
	u32 nr = 0;

	while (size - pos >= PZ_ITEM_HEAD && nr < max) {
		u32 len = fz_get16(data + pos + sizeof(struct btrfs_disk_key));

		memcpy(&items[nr].key, data + pos, sizeof(items[nr].key));
		pos += PZ_ITEM_HEAD;
		if (len > size - pos)
			len = size - pos;
		items[nr].data = data + pos;
		items[nr].size = len;
		nr++;
		pos += len;
	}
	return nr;
}

static int cmp_keys(const void *a, const void *b)
{
	const struct pz_item *x = a, *y = b;
	int ret = fz_cmp_disk_keys(&x->key, &y->key);

	if (ret)
		return ret;
	/* equal keys keep their input order: the checker's to refuse */
	return x->data < y->data ? -1 : x->data > y->data;
}

u32 pz_build_leaf(u8 *out, u32 len, const u8 *header, struct pz_item *items,
		  u32 nr, bool unsorted)
{
	struct btrfs_header *h = (void *)out;
	u32 data_end = len - sizeof(*h), slot = 0, i;

	memcpy(out, header, sizeof(*h));
	if (!unsorted)
		qsort(items, nr, sizeof(items[0]), cmp_keys);
	for (i = 0; i < nr; i++) {
		if (!fz_leaf_put(out, &data_end, slot, &items[i].key, items[i].data,
				 items[i].size))
			break;
		slot++;
	}
	fz_leaf_end(out, data_end, slot);
	h->level = 0;
	return slot;
}

size_t pz_dump_leaf_items(const u8 *leaf, u32 len, u8 *out, size_t pos, size_t max)
{
	const struct btrfs_item *table = (const void *)(leaf + sizeof(struct btrfs_header));
	u32 nritems = btrfs_header_nritems((const void *)leaf), i;

	for (i = 0; i < nritems && (i + 1) * sizeof(*table) <= btrfs_leaf_data_size(len); i++) {
		u32 off = btrfs_raw_item_offset(&table[i]), size = btrfs_raw_item_size(&table[i]);

		if ((u64)off + size > btrfs_leaf_data_size(len) ||
		    pos + PZ_ITEM_HEAD + size > max)
			break;
		memcpy(out + pos, &table[i].key, sizeof(table[i].key));
		fz_put16(out + pos + sizeof(table[i].key), size);
		memcpy(out + pos + PZ_ITEM_HEAD, leaf + sizeof(struct btrfs_header) + off, size);
		pos += PZ_ITEM_HEAD + size;
	}
	return pos;
}

void pz_set_csum(u16 csum_type, u8 *block, u32 len)
{
	unsigned char out[CSUM_MAX_SIZE];

	if (csum_algo_valid(csum_type) &&
	    !csum_compute(csum_type, block + BTRFS_CSUM_SIZE, len - BTRFS_CSUM_SIZE, out))
		memcpy(block, out, BTRFS_CSUM_SIZE);
}

struct btrfs_tree_block *pz_block(const u8 *data, u32 len, u64 start)
{
	struct btrfs_tree_block *eb = xcalloc(1, sizeof(*eb) + len);
	const struct btrfs_header *h = (const void *)data;

	eb->data = (u8 *)(eb + 1);
	memcpy(eb->data, data, len);
	eb->start = start;
	eb->len = len;
	/* as the reader fills it after reading (disk-io.c) */
	eb->level = btrfs_header_level(h);
	eb->nritems = btrfs_header_nritems(h);
	eb->owner = btrfs_header_owner(h);
	eb->generation = btrfs_header_generation(h);
	eb->refs = 1;
	return eb;
}

const u8 *pz_template_leaf(u32 t, u64 owner, u8 type, u64 *logical, u32 *len)
{
	static struct fz_block blocks[4096];
	static struct fz_image img;
	const u8 *first = NULL;
	u32 nr, b, i;

	*logical = 0;
	*len = 0;

	/* one private copy per call: the caller copies what it keeps */
	fz_free(&img);
	fz_clone(&img, fz_template(t % fz_nr_templates()));
	nr = fz_find_blocks(&img, blocks, 4096);
	for (b = 0; b < nr; b++) {
		const struct btrfs_item *table =
			(const void *)(blocks[b].data + sizeof(struct btrfs_header));
		u32 nritems = btrfs_header_nritems((void *)blocks[b].data);

		if (blocks[b].owner != owner || blocks[b].level)
			continue;
		if (!first) {
			first = blocks[b].data;
			*logical = blocks[b].logical;
			*len = blocks[b].len;
		}
		for (i = 0; i < nritems && (i + 1) * sizeof(*table) < blocks[b].len; i++)
			if (table[i].key.type == type) {
				*logical = blocks[b].logical;
				*len = blocks[b].len;
				return blocks[b].data;
			}
	}
	return first;
}

/* The header of template @t's leaf of @type in tree @owner (it must exist) */
static const u8 *template_header(u32 t, u64 owner, u8 type, u64 *logical)
{
	static struct {
		u8 header[sizeof(struct btrfs_header)];
		u64 logical;
		u64 owner;
		u8 type;
	} *cache;
	u32 len;

	if (!cache)
		cache = xcalloc(fz_nr_templates(), sizeof(*cache));
	/* a fresh copy for a new leaf: pz_template_leaf() clones the image */
	if (!cache[t].logical || cache[t].owner != owner || cache[t].type != type) {
		const u8 *leaf = pz_template_leaf(t, owner, type, &cache[t].logical, &len);

		if (!leaf)
			abort();
		memcpy(cache[t].header, leaf, sizeof(cache[t].header));
		cache[t].owner = owner;
		cache[t].type = type;
	}
	*logical = cache[t].logical;
	return cache[t].header;
}

struct btrfs_tree_block *pz_items_block(const struct pz_fs *fs, u64 owner, u8 type,
				       const u8 *data, size_t size)
{
	static struct pz_item items[PZ_MAX_ITEMS];
	static u8 leaf[BTRFS_MAX_METADATA_BLOCKSIZE];
	const u8 *header;
	u64 logical;
	u32 nr;

	header = template_header(fs->t, owner, type, &logical);
	nr = pz_parse_items(data + FZ_CONTROL, size - FZ_CONTROL, items, PZ_MAX_ITEMS);
	pz_build_leaf(leaf, fs->fs_info.nodesize, header, items, nr,
		      data[1] & PZ_UNSORTED);
	return pz_block(leaf, fs->fs_info.nodesize, logical);
}

size_t pz_leaf_seed(u32 t, const u8 *leaf, u32 len, u8 *seed, size_t cap)
{
	seed[0] = t;
	return pz_dump_leaf_items(leaf, len, seed, FZ_CONTROL, cap);
}

size_t pz_template_leaf_seed(u32 t, u64 owner, u8 type, u8 *seed, size_t cap)
{
	const u8 *leaf;
	u64 logical;
	u32 len;

	leaf = pz_template_leaf(t, owner, type, &logical, &len);
	if (!leaf)
		abort();
	return pz_leaf_seed(t, leaf, len, seed, cap);
}

struct pz_fs *pz_swap_root_leaf(const u8 *data, size_t size, pz_root_fn get,
				struct pz_root_leaf **cache, struct pz_leaf_run *run)
{
	struct pz_fs *fs = pz_open_root_leaf(data[0], get, cache, &run->found);
	struct btrfs_fs_info *fs_info;

	if (!fs)
		return NULL;
	fs_info = &fs->fs_info;
	run->nr = pz_parse_items(data + FZ_CONTROL, size - FZ_CONTROL, run->items,
				 PZ_MAX_ITEMS);
	run->nr = pz_build_leaf(run->leaf, fs_info->nodesize, run->found->leaf,
				run->items, run->nr, data[1] & PZ_UNSORTED);
	if (!(data[1] & PZ_NOFIX))
		pz_set_csum(fs_info->csum_type, run->leaf, fs_info->nodesize);
	if (pz_place(fs, run->found->root.bytenr, run->leaf)) {
		pz_restore(fs);
		return NULL;
	}
	return fs;
}

/* --- the invariant -------------------------------------------------------- */

static struct btrfs_error first_error;

void pz_check_aside(struct btrfs_fs_info *fs_info, int ret)
{
	if (ret && fs_info->err.err &&
	    (!fs_info->err.msg[0] || strchr(fs_info->err.msg, '\n'))) {
		fprintf(stderr, "fuzz: error message is not one line: '%s'\n",
			fs_info->err.msg);
		abort();
	}
	if (ret && fs_info->err.err && getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: aside, %s\n", fs_info->err.msg);
	fs_info->err.err = 0;
	fs_info->err.msg[0] = 0;
}

void pz_check(struct btrfs_fs_info *fs_info, int ret)
{
	if (ret && fs_info->err.err) {
		if (!fs_info->err.msg[0] || strchr(fs_info->err.msg, '\n')) {
			fprintf(stderr, "fuzz: error message is not one line: '%s'\n",
				fs_info->err.msg);
			abort();
		}
		if (!first_error.err)
			first_error = fs_info->err;
	} else if (ret && !first_error.err) {
		first_error.err = ret;
		snprintf(first_error.msg, sizeof(first_error.msg), "(no message, %d)", ret);
	}
	fs_info->err.err = 0;
	fs_info->err.msg[0] = 0;
}

void pz_end(void)
{
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: %s%s\n", first_error.err ? "error: " : "read fine",
			first_error.err ? first_error.msg : "");
	memset(&first_error, 0, sizeof(first_error));
}
