// SPDX-License-Identifier: GPL-2.0
/*
 * parse-fs-items: the FS_TREE root leaf of an opened template replaced by a
 * leaf built from the input (INODE_ITEM, INODE_REF, INODE_EXTREF,
 * DIR_ITEM, DIR_INDEX, EXTENT_DATA and whatever else; the template's
 * header, checksum fixed unless PZ_NOFIX), then what csum-delete reads of
 * a subvolume: btrfs_read_subvol(), btrfs_scan_subvol_drops() (every
 * inode item and file extent item, the drop tracker), and for the first
 * DIR_ITEM/DIR_INDEX names of the input btrfs_lookup_path() of
 * "<directory's path>/<name>", btrfs_read_inode_info() and
 * btrfs_count_file_drop() on what it finds; for the first INODE_ITEMs
 * btrfs_inode_path() (INODE_REF/INODE_EXTREF back to the top).
 * Input: template and flags (PZ_NOFIX, PZ_UNSORTED) bytes, then items
 * (parse-common.h).  Templates whose fs tree is more than a leaf are
 * skipped for the next one.  Seeds: the templates' fs leaves, and every fs
 * tree leaf of 08-raid0-2dev (301 files) in the template with the largest
 * nodesize.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/accessors.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/file-item.h"
#include "kernel-shared/inode.h"
#include "kernel-shared/kernel-version.h"
#include "tests/fuzz/parse-common.h"

#define MAX_LOOKUPS	2	/* each allocates a 4097-entry stack: the cost of a run */
/* a directory's entries by index: the same item as DIR_ITEM, other key */
#define DIR_INDEX_KEY	96
#define MAX_BLOCKS	4096

static struct pz_root_leaf *cache;

static int fs_tree(struct pz_fs *fs, struct btrfs_root_ref *root)
{
	int ret = btrfs_read_root_item(&fs->fs_info, &fs->fs_info.err,
				       BTRFS_FS_TREE_OBJECTID, root);

	fs->fs_info.err.err = 0;
	return ret || !root->found ? -1 : 0;
}

static void seed_leaf(const char *dir, const char *name, u32 t, const u8 *leaf, u32 len)
{
	size_t cap = FZ_CONTROL + BTRFS_MAX_METADATA_BLOCKSIZE;
	u8 *seed = calloc(1, cap);

	if (!seed)
		abort();
	fz_write_seed(dir, name, seed, pz_leaf_seed(t, leaf, len, seed, cap));
	free(seed);
}

/*
 * An inode item may not be newer than the superblock (check_inode_item()):
 * a leaf from a template of a later generation gets its inode items'
 * generation and transid lowered to @generation, so that the seed reads
 * and the fuzzer starts from valid items.
 */
static void clamp_inode_generations(u8 *leaf, u32 len, u64 generation)
{
	const struct btrfs_header *h = (const struct btrfs_header *)leaf;
	struct btrfs_item *items = (struct btrfs_item *)(leaf + sizeof(*h));
	u32 nr = le32toh(h->nritems), slot;

	for (slot = 0; slot < nr && (slot + 1) * sizeof(*items) + sizeof(*h) <= len; slot++) {
		u32 off = le32toh(items[slot].offset) + sizeof(*h);
		struct btrfs_inode_item ii;

		if (items[slot].key.type != BTRFS_INODE_ITEM_KEY ||
		    le32toh(items[slot].size) < sizeof(ii) || off + sizeof(ii) > len)
			continue;
		memcpy(&ii, leaf + off, sizeof(ii));
		if (le64toh(ii.generation) > generation)
			ii.generation = htole64(generation);
		if (le64toh(ii.transid) > generation)
			ii.transid = htole64(generation);
		memcpy(leaf + off, &ii, sizeof(ii));
	}
}

/* The fs tree leaves of templates whose fs tree is larger, into template @into */
static void seed_other_leaves(const char *dir, u32 into)
{
	static struct fz_block blocks[MAX_BLOCKS];
	static u8 leaf[BTRFS_MAX_METADATA_BLOCKSIZE];
	const struct pz_fs *target = pz_open(into);
	u32 t, nr, b;

	if (!target)
		return;

	for (t = 0; t < fz_nr_templates(); t++) {
		struct fz_image img;

		if (cache[t].leaf)
			continue;
		fz_clone(&img, fz_template(t));
		nr = fz_find_blocks(&img, blocks, MAX_BLOCKS);
		for (b = 0; b < nr; b++) {
			char name[128];

			if (blocks[b].owner != BTRFS_FS_TREE_OBJECTID || blocks[b].level)
				continue;
			snprintf(name, sizeof(name), "%s.fs-leaf-%llu.in-%s", fz_template_name(t),
				 (unsigned long long)blocks[b].logical, fz_template_name(into));
			if (blocks[b].len > sizeof(leaf))
				continue;
			memcpy(leaf, blocks[b].data, blocks[b].len);
			clamp_inode_generations(leaf, blocks[b].len, target->fs_info.generation);
			seed_leaf(dir, name, into, leaf, blocks[b].len);
		}
		fz_free(&img);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fz_dump_dir();
	u32 t, largest = 0, best = 0;

	if (!dir)
		return 0;
	for (t = 0; t < fz_nr_templates(); t++) {
		const struct pz_root_leaf *found;
		struct pz_fs *fs = pz_open_root_leaf(t, fs_tree, &cache, &found);
		char name[128];

		if (!fs || fs->t != t)
			continue;
		snprintf(name, sizeof(name), "%s.fs-leaf", fz_template_name(t));
		seed_leaf(dir, name, t, found->leaf, fs->fs_info.nodesize);
		if (fs->fs_info.nodesize > largest) {
			largest = fs->fs_info.nodesize;
			best = t;
		}
	}
	if (largest)
		seed_other_leaves(dir, best);
	exit(0);
}

static int count_file(const struct btrfs_inode_info *info,
		      const struct btrfs_file_drop *drop, void *ctx)
{
	return 0;
}

/* "<path of the directory>/<name>" for a DIR_ITEM or DIR_INDEX */
static bool entry_path(struct btrfs_fs_info *fs_info, const struct btrfs_subvol *sv,
		       const struct pz_item *item, char *path, size_t size)
{
	const struct btrfs_dir_item *di = (const void *)item->data;
	u32 name_len;
	size_t len;

	if (item->size < sizeof(*di))
		return false;
	name_len = btrfs_stack_dir_name_len(di);
	if (name_len > item->size - sizeof(*di))
		name_len = item->size - sizeof(*di);
	if (name_len > BTRFS_NAME_LEN)
		name_len = BTRFS_NAME_LEN;
	if (btrfs_inode_path(fs_info, sv, fz_get64(&item->key.objectid), path,
			     size - BTRFS_NAME_LEN - 2))
		strcpy(path, "");
	fs_info->err.err = 0;
	len = strlen(path);
	if (!len || path[len - 1] != '/')
		path[len++] = '/';
	memcpy(path + len, di + 1, name_len);
	path[len + name_len] = 0;
	/*
	 * The path is the user's argument in the CLI, and the lookup's
	 * messages quote it: a newline there is the user's, not the image's.
	 * Here the names come from the input (DIR_ITEM, INODE_REFs).
	 */
	return !strchr(path, '\n');
}

static void look_up(struct btrfs_fs_info *fs_info, const struct btrfs_subvol *sv,
		    const struct pz_item *items, u32 nr, struct btrfs_drop_tracker *tracker)
{
	static char path[4096 + BTRFS_NAME_LEN + 2];
	u32 i, n = 0;

	for (i = 0; i < nr && n < MAX_LOOKUPS; i++) {
		struct btrfs_inode_info info;
		struct btrfs_file_drop drop;
		struct btrfs_subvol found;
		u8 type = items[i].key.type;
		u64 ino;
		int ret;

		if (type != BTRFS_DIR_ITEM_KEY && type != DIR_INDEX_KEY)
			continue;
		if (!entry_path(fs_info, sv, &items[i], path, sizeof(path)))
			continue;
		n++;
		ret = btrfs_lookup_path(fs_info, BTRFS_FS_TREE_OBJECTID, path, &found, &ino);
		pz_check_aside(fs_info, ret);
		if (ret)
			continue;
		ret = btrfs_read_inode_info(fs_info, &found, ino, &info);
		pz_check_aside(fs_info, ret);
		memset(&drop, 0, sizeof(drop));
		pz_check_aside(fs_info, btrfs_count_file_drop(fs_info, &found, ino, tracker,
							      &drop));
	}
	for (i = 0, n = 0; i < nr && n < MAX_LOOKUPS; i++) {
		if (items[i].key.type != BTRFS_INODE_ITEM_KEY)
			continue;
		n++;
		pz_check_aside(fs_info, btrfs_inode_path(fs_info, sv,
				fz_get64(&items[i].key.objectid), path, sizeof(path)));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pz_leaf_run run;
	struct btrfs_drop_tracker tracker;
	struct btrfs_subvol_scan scan = { .file_fn = count_file };
	struct btrfs_kernel_model model;
	struct btrfs_csum_params params;
	struct btrfs_fs_info *fs_info;
	struct btrfs_subvol sv;
	struct pz_fs *fs;
	int ret;

	if (size < FZ_CONTROL)
		return -1;
	fs = pz_swap_root_leaf(data, size, fs_tree, &cache, &run);
	if (!fs)
		return 0;
	fs_info = &fs->fs_info;
	ret = btrfs_read_subvol(fs_info, &fs_info->err, BTRFS_FS_TREE_OBJECTID, &sv);
	pz_check(fs_info, ret);
	if (!ret) {
		/* as csum-delete sets them up (cmds/csum-delete.c) */
		btrfs_kernel_model(BTRFS_DEFAULT_KERNEL, &model);
		btrfs_csum_params_from_fs(fs_info, &params);
		btrfs_drop_tracker_init(&tracker, &params, &model);
		pz_check(fs_info, btrfs_scan_subvol_drops(fs_info, &sv, &tracker, &scan));
		look_up(fs_info, &sv, run.items, run.nr, &tracker);
		btrfs_drop_tracker_release(&tracker);
	}
	pz_restore(fs);
	pz_end();
	return 0;
}
