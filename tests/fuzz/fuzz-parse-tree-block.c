// SPDX-License-Identifier: GPL-2.0
/*
 * parse-tree-block: the checks btrfs_read_tree_block() runs on a block it
 * read (bytenr, fsid, level, checksum, the tree checker for leaves and
 * nodes, then what the parent expects: level, transid, first key), on a
 * fuzzed block put in place of one of an opened template's blocks (every
 * copy, so a bad block is "all copies bad"), then the accessors on what
 * passed and bin_search_block() for the expected key.
 * Input (38 bytes, then the block; shorter: the rest zeros):
 *   u8 template, u8 flags, le16 which block of the template,
 *   u8 expected level, le64 expected root (for messages),
 *   le64 expected transid, first key (le64 objectid, u8 type, le64 offset)
 * Flags: PZ_NOFIX (keep the block's checksum), 0x02 write the right bytenr
 * and fsid into the header, 0x04 check the first key, 0x08 check transid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/accessors.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/volumes.h"
#include "tests/fuzz/parse-common.h"

#define TB_KEEP_ADDR	0x02
#define TB_FIRST_KEY	0x04
#define TB_TRANSID	0x08
#define TB_HEAD		38
#define MAX_BLOCKS	4096

struct tb_list {
	u64 *logical;
	u32 nr;
};

/* Blocks of template @t that the opened template maps */
static struct tb_list *blocks_of(struct pz_fs *fs)
{
	static struct tb_list *lists;
	static struct fz_block found[MAX_BLOCKS];
	struct tb_list *l;
	struct fz_image img;
	u32 nr, i;

	if (!lists) {
		lists = calloc(fz_nr_templates(), sizeof(*lists));
		if (!lists)
			abort();
	}
	l = &lists[fs->t];
	if (l->logical)
		return l;
	fz_clone(&img, fz_template(fs->t));
	nr = fz_find_blocks(&img, found, MAX_BLOCKS);
	l->logical = calloc(nr + 1, sizeof(u64));
	if (!l->logical)
		abort();
	for (i = 0; i < nr; i++) {
		const struct btrfs_chunk_map *map =
			btrfs_find_chunk_map(&fs->fs_info, found[i].logical, 1);

		if (map && map->start <= found[i].logical)
			l->logical[l->nr++] = found[i].logical;
	}
	fz_free(&img);
	return l;
}

static void dump_seeds(const char *dir, u32 t)
{
	static struct fz_block found[MAX_BLOCKS];
	struct pz_fs *fs = pz_open(t);
	struct tb_list *l;
	struct fz_image img;
	u32 nr, i, b, step;

	if (!fs)
		return;
	l = blocks_of(fs);
	fz_clone(&img, fz_template(t));
	nr = fz_find_blocks(&img, found, MAX_BLOCKS);
	/* a spread of each template's blocks, leaves and nodes */
	step = l->nr > 8 ? l->nr / 8 : 1;
	for (i = 0; i < l->nr; i += step) {
		u8 *seed = calloc(1, TB_HEAD + BTRFS_MAX_METADATA_BLOCKSIZE);
		const struct btrfs_header *h;
		struct btrfs_tree_block *eb;
		struct btrfs_key key = { 0 };

		for (b = 0; b < nr && found[b].logical != l->logical[i]; b++)
			;
		if (!seed || b == nr)
			abort();
		h = (const void *)found[b].data;
		eb = pz_block(found[b].data, found[b].len, found[b].logical);
		if (eb->nritems && eb->level)
			btrfs_node_key_to_cpu(eb, 0, &key);
		else if (eb->nritems)
			btrfs_item_key_to_cpu(eb, 0, &key);
		seed[0] = t;
		seed[1] = TB_KEEP_ADDR | TB_TRANSID | (eb->nritems ? TB_FIRST_KEY : 0);
		fz_put16(seed + 2, i);
		seed[4] = eb->level;
		fz_put64(seed + 5, btrfs_header_owner(h));
		fz_put64(seed + 13, btrfs_header_generation(h));
		fz_put64(seed + 21, key.objectid);
		seed[29] = key.type;
		fz_put64(seed + 30, key.offset);
		memcpy(seed + TB_HEAD, found[b].data, found[b].len);
		fz_write_template_seed(dir, t, seed, TB_HEAD + found[b].len,
				       "block%u-owner%llu-level%u", i,
				       (unsigned long long)eb->owner, eb->level);
		free(eb);
		free(seed);
	}
	fz_free(&img);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_dump_each_template(dump_seeds);
	return 0;
}

/* What a reader does with a block that passed: every key and pointer */
static void use_block(const struct btrfs_tree_block *eb, const struct btrfs_key *want)
{
	struct btrfs_key key;
	u32 slot, size;
	int found;

	for (slot = 0; slot < eb->nritems; slot++) {
		if (eb->level) {
			btrfs_node_key_to_cpu(eb, slot, &key);
			btrfs_node_blockptr(eb, slot);
			btrfs_node_ptr_generation(eb, slot);
		} else {
			btrfs_item_key_to_cpu(eb, slot, &key);
			btrfs_item_ptr(eb, slot, &size);
		}
	}
	bin_search_block(eb, want, &found);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static u8 block[BTRFS_MAX_METADATA_BLOCKSIZE];
	struct btrfs_tree_check check = { 0 };
	struct btrfs_tree_block *eb = NULL;
	struct btrfs_fs_info *fs_info;
	struct btrfs_header *h = (void *)block;
	struct tb_list *l;
	struct pz_fs *fs;
	u64 logical;
	u32 nodesize;
	int ret;

	if (size < TB_HEAD)
		return -1;
	fs = pz_open(data[0]);
	if (!fs)
		return 0;
	fs_info = &fs->fs_info;
	nodesize = fs_info->nodesize;
	l = blocks_of(fs);
	if (!l->nr)
		return 0;
	logical = l->logical[fz_get16(data + 2) % l->nr];
	memset(block, 0, nodesize);
	memcpy(block, data + TB_HEAD, size - TB_HEAD < nodesize ? size - TB_HEAD : nodesize);
	if (data[1] & TB_KEEP_ADDR) {
		memcpy(h->fsid, fs_info->metadata_uuid, BTRFS_FSID_SIZE);
		fz_put64(&h->bytenr, logical);
	}
	if (!(data[1] & PZ_NOFIX))
		pz_set_csum(fs_info->csum_type, block, nodesize);
	check.level = data[4];
	check.root = fz_get64(data + 5);
	if (data[1] & TB_TRANSID)
		check.transid = fz_get64(data + 13);
	check.has_first_key = data[1] & TB_FIRST_KEY;
	check.first_key.objectid = fz_get64(data + 21);
	check.first_key.type = data[29];
	check.first_key.offset = fz_get64(data + 30);
	if (pz_place(fs, logical, block)) {
		pz_restore(fs);
		return 0;
	}
	ret = btrfs_read_tree_block(fs_info, &fs_info->err, logical, &check, BTRFS_IO_OTHER,
				    &eb);
	pz_check(fs_info, ret);
	if (!ret) {
		use_block(eb, &check.first_key);
		btrfs_tree_block_put(eb);
	}
	btrfs_clear_notes(&fs_info->notes);
	pz_restore(fs);
	pz_end();
	return 0;
}
