// SPDX-License-Identifier: GPL-2.0
/*
 * stress-image IMAGE KIND COUNT
 *
 * Grow one tree of a single-device image (4 KiB or 16 KiB nodes, SYSTEM
 * chunk DUP or single; e.g. FUZZ_EXPORT of template 0) in place, for the
 * resource-bound measurements of Documentation/dev/fuzzing.md.  The new
 * tree blocks go at the end of the SYSTEM chunk (copy 1), checksums right:
 *
 *   devitems N   the chunk tree gets N more DEV_ITEMs (devids 2..N+1, all
 *                missing): what a device lookup per item costs
 *   chain N      the chunk tree root becomes a chain of N - 1 single-pointer
 *                nodes above the original leaf (N <= 8): the level checks
 *
 * Not a fuzz target (no LLVMFuzzerTestOneInput); built by make fuzz-build.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/checksum.h"
#include "kernel-shared/accessors.h"
#include "tests/fuzz/fuzz-common.h"

struct item {
	struct btrfs_disk_key key;
	u8 data[sizeof(struct btrfs_chunk) + 64 * sizeof(struct btrfs_stripe)];
	u32 size;
};

static int fd;
static struct btrfs_super_block sb;
static u32 nodesize;
static u64 chunk_logical, chunk_len, chunk_phys, next_free;

static __attribute__ ((noreturn)) void die(const char *msg)
{
	fprintf(stderr, "stress-image: %s\n", msg);
	exit(1);
}

static void rd(void *buf, size_t len, u64 off)
{
	if (pread(fd, buf, len, off) != (ssize_t)len)
		die("read failed");
}

static void wr(const void *buf, size_t len, u64 off)
{
	if (pwrite(fd, buf, len, off) != (ssize_t)len)
		die("write failed");
}

static void csum(u8 *block, u32 len)
{
	unsigned char out[CSUM_MAX_SIZE];

	if (csum_compute(btrfs_super_csum_type(&sb), block + BTRFS_CSUM_SIZE,
			 len - BTRFS_CSUM_SIZE, out))
		die("csum");
	memcpy(block, out, BTRFS_CSUM_SIZE);
}

/* Next block from the end of the SYSTEM chunk, downwards */
static u64 alloc_block(void)
{
	if (next_free < chunk_logical + nodesize * 64)
		die("the SYSTEM chunk is full: use a smaller count");
	next_free -= nodesize;
	return next_free;
}

static void write_block(u8 *block, const struct btrfs_header *like, u64 logical,
			u8 level, u32 nritems)
{
	struct btrfs_header *h = (void *)block;

	memcpy(h->fsid, like->fsid, sizeof(h->fsid));
	fz_put64(&h->bytenr, logical);
	h->flags = like->flags;
	memcpy(h->chunk_tree_uuid, like->chunk_tree_uuid, sizeof(h->chunk_tree_uuid));
	h->generation = like->generation;
	h->owner = like->owner;
	fz_put32(&h->nritems, nritems);
	h->level = level;
	csum(block, nodesize);
	wr(block, nodesize, chunk_phys + (logical - chunk_logical));
}

/* Leaves of @items in order, then nodes up to one root; returns the root */
static u64 build_tree(const struct btrfs_header *like, struct item *items, u32 nr,
		      u8 *root_level)
{
	u32 max_ptrs = btrfs_node_max_ptrs(nodesize), nr_blocks = 0, i = 0, level = 0;
	u64 *bytenr = malloc((nr + 1) * sizeof(u64)), root;
	struct btrfs_disk_key *first = malloc((nr + 1) * sizeof(*first));
	u8 *block = malloc(nodesize);

	if (!bytenr || !first || !block)
		die("out of memory");
	while (i < nr) {
		struct btrfs_item *hdr = (void *)(block + sizeof(struct btrfs_header));
		u32 end = btrfs_leaf_data_size(nodesize), n = 0;

		memset(block, 0, nodesize);
		first[nr_blocks] = items[i].key;
		while (i < nr && end >= items[i].size + (n + 1) * sizeof(*hdr)) {
			end -= items[i].size;
			hdr[n].key = items[i].key;
			fz_put32(&hdr[n].offset, end);
			fz_put32(&hdr[n].size, items[i].size);
			memcpy(block + sizeof(struct btrfs_header) + end, items[i].data,
			       items[i].size);
			n++;
			i++;
		}
		bytenr[nr_blocks] = alloc_block();
		write_block(block, like, bytenr[nr_blocks], 0, n);
		nr_blocks++;
	}
	while (nr_blocks > 1) {
		u32 out = 0, b = 0;

		level++;
		while (b < nr_blocks) {
			struct btrfs_key_ptr *ptrs = (void *)(block + sizeof(struct btrfs_header));
			u32 n = 0;

			memset(block, 0, nodesize);
			while (b < nr_blocks && n < max_ptrs) {
				ptrs[n].key = first[b];
				fz_put64(&ptrs[n].blockptr, bytenr[b]);
				ptrs[n].generation = like->generation;
				n++;
				b++;
			}
			first[out] = ptrs[0].key;
			bytenr[out] = alloc_block();
			write_block(block, like, bytenr[out], level, n);
			out++;
		}
		nr_blocks = out;
	}
	*root_level = level;
	root = bytenr[0];
	free(bytenr);
	free(first);
	free(block);
	return root;
}

int main(int argc, char **argv)
{
	struct btrfs_header like;
	const struct btrfs_chunk *chunk;
	struct btrfs_disk_key *key;
	struct item *items;
	u64 root = 0, count, phys;
	u32 nr = 0, i, nritems;
	u8 *leaf, level = 0;
	unsigned char out[CSUM_MAX_SIZE];

	if (argc != 4)
		die("usage: stress-image IMAGE devitems|chain COUNT");
	count = strtoull(argv[3], NULL, 0);
	fd = open(argv[1], O_RDWR);
	if (fd < 0)
		die("cannot open the image");
	rd(&sb, sizeof(sb), BTRFS_SUPER_INFO_OFFSET);
	nodesize = btrfs_super_nodesize(&sb);
	/* the first sys_array chunk: the SYSTEM chunk */
	key = (void *)sb.sys_chunk_array;
	chunk = (void *)(sb.sys_chunk_array + sizeof(*key));
	chunk_logical = fz_get64(&key->offset);
	chunk_len = btrfs_stack_chunk_length(chunk);
	chunk_phys = btrfs_stack_stripe_offset(&chunk->stripe);
	next_free = chunk_logical + chunk_len;
	leaf = malloc(nodesize);
	if (!leaf)
		die("out of memory");
	phys = chunk_phys + (btrfs_super_chunk_root(&sb) - chunk_logical);
	rd(leaf, nodesize, phys);
	memcpy(&like, leaf, sizeof(like));
	if (btrfs_super_chunk_root_level(&sb))
		die("the chunk tree must be one leaf");
	nritems = btrfs_header_nritems(&like);

	if (!strcmp(argv[2], "chain")) {
		u8 *node = calloc(1, nodesize);
		struct btrfs_key_ptr *ptr = (void *)(node + sizeof(struct btrfs_header));

		if (count < 1 || count > 8)
			die("chain: 1 to 8 levels");
		root = btrfs_super_chunk_root(&sb);
		ptr->key = ((struct btrfs_item *)(leaf + sizeof(like)))->key;
		for (level = 1; level < count; level++) {
			fz_put64(&ptr->blockptr, root);
			ptr->generation = like.generation;
			root = alloc_block();
			write_block(node, &like, root, level, 1);
		}
		level = count - 1;
		free(node);
	} else if (!strcmp(argv[2], "devitems")) {
		items = calloc(nritems + count, sizeof(*items));
		if (!items)
			die("out of memory");
		for (i = 0; i < nritems; i++) {
			const struct btrfs_item *it = (void *)(leaf + sizeof(like) + i * sizeof(*it));

			items[nr].key = it->key;
			items[nr].size = btrfs_raw_item_size(it);
			memcpy(items[nr].data, leaf + sizeof(like) + btrfs_raw_item_offset(it),
			       items[nr].size);
			nr++;
			if (it->key.type != BTRFS_DEV_ITEM_KEY)
				continue;
			/* devid 1 is first: the new ones follow it in key order */
			for (; count; count--, nr++) {
				struct btrfs_dev_item *dev = (void *)items[nr].data;

				items[nr] = items[nr - 1];
				fz_put64(&items[nr].key.offset, fz_get64(&items[nr].key.offset) + 1);
				fz_put64(&dev->devid, fz_get64(&items[nr].key.offset));
				fz_put64(dev->uuid, fz_get64(&items[nr].key.offset));
			}
		}
		root = build_tree(&like, items, nr, &level);
		free(items);
	} else {
		die("kind: devitems or chain");
	}
	fz_put64(&sb.chunk_root, root);
	sb.chunk_root_level = level;
	if (csum_compute(btrfs_super_csum_type(&sb), (u8 *)&sb + BTRFS_CSUM_SIZE,
			 sizeof(sb) - BTRFS_CSUM_SIZE, out))
		die("csum");
	memcpy(sb.csum, out, BTRFS_CSUM_SIZE);
	wr(&sb, sizeof(sb), BTRFS_SUPER_INFO_OFFSET);
	printf("chunk root %llu level %u, %u items\n", (unsigned long long)root, level, nr);
	free(leaf);
	return close(fd);
}
