/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared parts of the parse-* targets (Documentation/dev/fuzzing.md): the
 * fuzzed bytes go straight to one parser, in memory, without the inspect
 * pipeline.  Where a parser needs a filesystem around it (nodesize, csum
 * type, fsid, devices, chunk maps, other trees), a template is opened once
 * per process and kept; a run only swaps the fuzzed tree block into the
 * template's device (every copy), drops the block cache and calls the
 * reader, then puts the template's bytes back.
 *
 * Item inputs are a list of
 *
 *   le64 objectid, u8 type, le64 offset (a btrfs_disk_key), le16 size, data
 *
 * built into one leaf, sorted by key unless PZ_UNSORTED.
 */
#ifndef BTRFS_SPACE_PARSE_COMMON_H
#define BTRFS_SPACE_PARSE_COMMON_H

#include "kernel-shared/fs.h"
#include "kernel-shared/tree-block.h"
#include "tests/fuzz/fuzz-common.h"

/* Flags of the parse-* targets: their second byte */
#define PZ_NOFIX	0x01	/* keep the checksum the input has */
#define PZ_UNSORTED	0x02	/* items in input order, not sorted by key */

#define PZ_ITEM_HEAD	19	/* disk key, le16 size */
#define PZ_MAX_ITEMS	1024

struct pz_item {
	struct btrfs_disk_key key;
	const u8 *data;
	u32 size;
};

/* A template opened once: the reader's state after btrfs_open_fs() */
struct pz_fs {
	struct btrfs_fs_info fs_info;
	u32 t;
	u32 ndev;
	int fds[BFZ_MAX_DEVS];
	char names[BFZ_MAX_DEVS][32];
};

/* Template @t opened (cached for the process), or NULL if it does not open */
struct pz_fs *pz_open(u32 t);

/*
 * A fresh reader state on @fs's superblock and devices, as open_devices()
 * leaves it, plus what the chunk tree said of the devices when @dev_items
 * (then stripes resolve).  No chunk maps, no roots.  pz_work_free() frees
 * what the parsers added; the devices' files stay @fs's.
 */
void pz_work_init(struct btrfs_fs_info *work, const struct pz_fs *fs, bool dev_items);
void pz_work_free(struct btrfs_fs_info *work);

/* btrfs_map_block() on the first, middle and last byte of every chunk, for
 * every copy and one too many (-EINVAL), and the profile helpers */
void pz_map_chunks(struct btrfs_fs_info *fs_info);

/*
 * Write @block (nodesize bytes) over every copy of the tree block at
 * @logical, keeping the old bytes (two blocks at most); pz_restore() puts
 * them all back.  Drops the block cache so the next read verifies the new
 * bytes.  0, or -1 when a copy is not one piece on a present device.
 */
int pz_place(struct pz_fs *fs, u64 logical, const u8 *block);
void pz_restore(struct pz_fs *fs);
/* The root block of @root as the template has it, into @out; 0 or -1 */
int pz_read_block(struct pz_fs *fs, const struct btrfs_root_ref *root, u8 *out);

/*
 * Targets that swap a tree's root leaf: the first template from @t on
 * (modulo their number) whose tree @get names has a leaf as its root.
 * @cache: one entry per template, allocated on first use.  NULL if none.
 */
struct pz_root_leaf {
	struct btrfs_root_ref root;
	u8 *leaf;			/* the template's bytes; NULL: not a leaf */
	bool tried;
};
typedef int (*pz_root_fn)(struct pz_fs *fs, struct btrfs_root_ref *root);
struct pz_fs *pz_open_root_leaf(u32 t, pz_root_fn get, struct pz_root_leaf **cache,
			       const struct pz_root_leaf **found);

/*
 * The run of a target that swaps a root leaf: template data[0]
 * (pz_open_root_leaf()), the items after the control bytes built into
 * @run->leaf on the template's header (sorted unless PZ_UNSORTED),
 * checksummed unless PZ_NOFIX, and put in place.  The template, or NULL
 * when there is none or the leaf could not be placed (nothing to restore);
 * else pz_restore() when done.  @run->nr: the items in the leaf.
 */
struct pz_leaf_run {
	const struct pz_root_leaf *found;
	struct pz_item items[PZ_MAX_ITEMS];
	u32 nr;
	u8 leaf[BTRFS_MAX_METADATA_BLOCKSIZE];
};
struct pz_fs *pz_swap_root_leaf(const u8 *data, size_t size, pz_root_fn get,
				struct pz_root_leaf **cache, struct pz_leaf_run *run);

/* Parse the item list at @data; returns how many (at most @max) */
u32 pz_parse_items(const u8 *data, size_t size, struct pz_item *items, u32 max);
/*
 * Build a leaf of @len bytes into @out: the header of @header (bytenr,
 * fsid, owner, generation, ...), level 0, the items (sorted unless
 * @unsorted; what does not fit is left out).  Returns the number of items.
 */
u32 pz_build_leaf(u8 *out, u32 len, const u8 *header, struct pz_item *items,
		  u32 nr, bool unsorted);
/* Append the items of leaf @leaf to @out in the input format; new length */
size_t pz_dump_leaf_items(const u8 *leaf, u32 len, u8 *out, size_t pos, size_t max);

/* The checksum of a block of @len bytes, with @csum_type */
void pz_set_csum(u16 csum_type, u8 *block, u32 len);

/* A tree block in memory (for the checkers); free() it */
struct btrfs_tree_block *pz_block(const u8 *data, u32 len, u64 start);

/* A leaf of template @t holding items of @type in tree @owner, or NULL */
const u8 *pz_template_leaf(u32 t, u64 owner, u8 type, u64 *logical, u32 *len);
/*
 * The input's items (after the control bytes) in a leaf on the header of
 * that leaf of template @fs (it must exist), sorted unless PZ_UNSORTED, as
 * a tree block in memory at its bytenr (for the checkers); free() it
 */
struct btrfs_tree_block *pz_items_block(const struct pz_fs *fs, u64 owner, u8 type,
				       const u8 *data, size_t size);
/* Seeds: template byte @t, then the items of @leaf (fz_dump_template_seeds()) */
size_t pz_leaf_seed(u32 t, const u8 *leaf, u32 len, u8 *seed, size_t cap);
/* The same of the leaf pz_template_leaf() finds (it must exist) */
size_t pz_template_leaf_seed(u32 t, u64 owner, u8 type, u8 *seed, size_t cap);

/*
 * The invariant of every run: an error leaves one non-empty line (else
 * abort).  Clears the error so the next parser starts clean; the first
 * error of the run is kept for pz_end().
 */
void pz_check(struct btrfs_fs_info *fs_info, int ret);
/* The same check for a parser whose error is no verdict on the input
 * (a lookup of a name the input may not hold) */
void pz_check_aside(struct btrfs_fs_info *fs_info, int ret);
/* FUZZ_VERBOSE=1: say how the run ended, in fz_run()'s words */
void pz_end(void);

#endif
