// SPDX-License-Identifier: GPL-2.0
/*
 * What a mount reads, phase by phase, after open_ctree() in
 * fs/btrfs/disk-io.c (6.18): the searches the kernel makes are replayed on
 * the image through the same tree code, and every distinct tree block they
 * touch is one read of nodesize bytes (a mount reads each block once, in
 * its own bio, with no readahead).  The model and its check against the
 * kernel's traced reads are in Documentation/mount-estimate.md.
 * From the read-ahead to the end of the replay the block-group root's
 * leaves are cached key-only (extent_io.c): the searches counted here need
 * nothing else of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/checksum.h"
#include "common/hash.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/inode.h"
#include "kernel-shared/mount-cost.h"
#include "kernel-shared/reada.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/tree-log.h"


/*
 * Measured on the truth images (Linux 6.18, loop devices on a VM disk):
 * a cold mount costs about 11 ms plus 0.09 ms per read before any added
 * device latency (NOTES.md: 11-16 ms for 12-30 reads, 83-100 ms for 888).
 */
#define MOUNT_FIXED_SECONDS	0.011
#define MOUNT_PER_READ_SECONDS	0.00009

const struct btrfs_latency_profile btrfs_latency_profiles[] = {
	{ "nvme", 0.00008 },	/* 4 KiB random read at queue depth 1 */
	{ "ssd", 0.0002 },	/* SATA SSD */
	{ "hdd", 0.008 },	/* 7200 rpm: seek plus half a rotation */
	{ NULL, 0 }
};

static const char * const phase_names[MOUNT_NR_PHASES] = {
	[MOUNT_PHASE_SUPERBLOCK] = "superblock",
	[MOUNT_PHASE_CHUNK_TREE] = "chunk_tree",
	[MOUNT_PHASE_ROOT_TREE] = "root_tree",
	[MOUNT_PHASE_ROOTS] = "tree_roots",
	[MOUNT_PHASE_DEV_EXTENTS] = "dev_extents",
	[MOUNT_PHASE_BLOCK_GROUPS] = "block_groups",
	[MOUNT_PHASE_QUOTA] = "quota",
	[MOUNT_PHASE_LOG] = "log_replay",
	[MOUNT_PHASE_FS_ROOTS] = "fs_root",
};

const char *btrfs_mount_phase_name(enum btrfs_mount_phase phase)
{
	return phase_names[phase];
}

double btrfs_mount_seconds(u64 reads, double latency)
{
	return MOUNT_FIXED_SECONDS + reads * (latency + MOUNT_PER_READ_SECONDS);
}

const struct btrfs_latency_profile *btrfs_find_latency_profile(const char *name)
{
	int i;

	for (i = 0; btrfs_latency_profiles[i].name; i++)
		if (!strcmp(name, btrfs_latency_profiles[i].name))
			return &btrfs_latency_profiles[i];
	return NULL;
}

void btrfs_mount_time(const struct btrfs_mount_estimate *est, double latency,
		      struct btrfs_mount_time *t)
{
	t->latency = latency;
	t->seconds = btrfs_mount_seconds(est->now.total_reads, latency);
	t->bg_tree_seconds = btrfs_mount_seconds(est->bg_tree.total_reads, latency);
}

/*
 * Which tree blocks a sequence of searches touches, cache hits included:
 * the replay's read observer, counting distinct blocks.
 */
struct read_trace {
	u64 *slots;			/* open addressing, bytenr + 1, 0 = empty */
	u32 cap;
	u32 nr;
	u64 new_blocks;			/* first touches since the counter was reset */
};

/*
 * Tree blocks are node aligned: bytenr >> 12 alone would put a 16 KiB
 * node's blocks on every fourth slot, and linear probing then walks the
 * runs that piles up
 */
static u32 trace_slot(u64 value, u32 cap)
{
	return hash_mix64(value) % cap;
}

static int trace_grow(struct read_trace *trace)
{
	u32 cap = trace->cap ? trace->cap * 2 : 1024;
	u64 *slots = calloc(cap, sizeof(*slots));
	u32 i;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < trace->cap; i++) {
		u32 pos;

		if (!trace->slots[i])
			continue;
		for (pos = trace_slot(trace->slots[i], cap); slots[pos]; pos = (pos + 1) % cap)
			;
		slots[pos] = trace->slots[i];
	}
	free(trace->slots);
	trace->slots = slots;
	trace->cap = cap;
	return 0;
}

/* Whether @bytenr was read already (in memory: find_extent_buffer()) */
static bool trace_has(void *ctx, u64 bytenr)
{
	const struct read_trace *trace = ctx;
	u64 value = bytenr + 1;
	u32 pos;

	if (!trace->cap)
		return false;
	for (pos = trace_slot(value, trace->cap); trace->slots[pos]; pos = (pos + 1) % trace->cap)
		if (trace->slots[pos] == value)
			return true;
	return false;
}

/* The read observer: remember @bytenr; 0 or -ENOMEM */
static int trace_block(void *ctx, u64 bytenr)
{
	struct read_trace *trace = ctx;
	u64 value = bytenr + 1;
	u32 pos;

	if ((trace->nr + 1) * 2 > trace->cap && trace_grow(trace))
		return -ENOMEM;
	for (pos = trace_slot(value, trace->cap); trace->slots[pos];
	     pos = (pos + 1) % trace->cap)
		if (trace->slots[pos] == value)
			return 0;
	trace->slots[pos] = value;
	trace->nr++;
	trace->new_blocks++;
	return 0;
}

static int search_path(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root,
		       u64 objectid, u8 type, u64 offset)
{
	struct btrfs_key key = { objectid, type, offset };
	struct btrfs_path path = { 0 };
	int ret = btrfs_search_slot(fs_info, root, &key, &path, BTRFS_IO_OTHER);

	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

static int read_root_node(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root)
{
	struct btrfs_tree_block *eb;
	int ret;

	if (!root->found)
		return 0;
	ret = btrfs_read_root_node(fs_info, &fs_info->err, root, BTRFS_IO_OTHER, &eb);
	if (!ret)
		btrfs_tree_block_put(eb);
	return ret;
}

static int count_leaf(struct btrfs_fs_info *fs_info,
		      const struct btrfs_tree_block *leaf, void *ctx)
{
	return 0;
}

static int walk_all(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root)
{
	if (!root->found)
		return 0;
	return btrfs_walk_tree(fs_info, root, BTRFS_IO_OTHER, count_leaf, NULL);
}

/*
 * load_important_roots(), btrfs_read_roots(), btrfs_recover_balance() and
 * the orphan/default-subvolume lookups: every search path in the tree root.
 */
static int replay_root_tree(struct btrfs_fs_info *fs_info)
{
	static const u64 root_items[] = {
		BTRFS_EXTENT_TREE_OBJECTID, BTRFS_DEV_TREE_OBJECTID,
		BTRFS_CSUM_TREE_OBJECTID, BTRFS_QUOTA_TREE_OBJECTID,
		BTRFS_UUID_TREE_OBJECTID, BTRFS_FREE_SPACE_TREE_OBJECTID,
		BTRFS_BLOCK_GROUP_TREE_OBJECTID, BTRFS_RAID_STRIPE_TREE_OBJECTID,
	};
	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(fs_info);
	unsigned int i;
	int ret = 0;

	for (i = 0; i < sizeof(root_items) / sizeof(root_items[0]) && !ret; i++)
		ret = search_path(fs_info, &tree_root, root_items[i], BTRFS_ROOT_ITEM_KEY, 0);
	if (!ret)
		ret = search_path(fs_info, &tree_root, BTRFS_FS_TREE_OBJECTID,
				  BTRFS_ROOT_ITEM_KEY, (u64)-1);
	if (!ret)
		ret = search_path(fs_info, &tree_root, BTRFS_DATA_RELOC_TREE_OBJECTID,
				  BTRFS_ROOT_ITEM_KEY, (u64)-1);
	if (!ret)
		ret = search_path(fs_info, &tree_root, BTRFS_ROOT_TREE_DIR_OBJECTID,
				  BTRFS_DIR_ITEM_KEY, btrfs_name_hash("default", 7));
	if (!ret)
		ret = search_path(fs_info, &tree_root, BTRFS_BALANCE_OBJECTID,
				  BTRFS_TEMPORARY_ITEM_KEY, 0);
	if (!ret)
		ret = search_path(fs_info, &tree_root, BTRFS_ORPHAN_OBJECTID,
				  BTRFS_ORPHAN_ITEM_KEY, 0);
	return ret;
}

struct mount_roots {
	struct btrfs_root_ref quota;
	struct btrfs_root_ref uuid;
	struct btrfs_root_ref data_reloc;
	struct btrfs_root_ref fs_tree;
};

/*
 * What a mount reads after the root items, read ahead together, one level
 * of every search at a time, so that a slow device pays the trees' height
 * once instead of once per phase: the dev tree from its first DEV_EXTENT
 * (btrfs_verify_dev_extents), the block-group item searches (pinpoint for
 * loading, the kernel's own for the replay), every root node, the two
 * searches of btrfs_get_fs_root() (the root directory inode, the highest
 * objectid) in the data relocation and fs trees, and the quota tree.  The
 * blocks are those the phases then touch one by one; a block is counted
 * for the phase that reads it first (block-group loading before the
 * replay), so the counts do not change.
 */
#define MOUNT_ROOTS		9
#define FS_ROOT_SEARCHES	4
#define OTHER_SEARCHES		2	/* the dev tree, the quota tree */

struct read_ahead {
	struct btrfs_prefetch_search *srch;
	u32 nr;
};

static void add_search(struct read_ahead *ra, const struct btrfs_root_ref *root,
		       const struct btrfs_key *key, unsigned int purpose, bool to_end)
{
	struct btrfs_prefetch_search *s = &ra->srch[ra->nr++];

	*s = (struct btrfs_prefetch_search) {
		.root = root, .purpose = purpose, .to_end = to_end,
		.root_only = !key && !to_end,
	};
	if (key)
		s->key = *key;
}

/* (start, BLOCK_GROUP_ITEM, length) keys are loading's; the others the replay's */
static void add_block_group_searches(struct btrfs_fs_info *fs_info, struct read_ahead *ra,
				     const struct btrfs_key *keys, u32 nr, bool load)
{
	const struct btrfs_root_ref *root = btrfs_block_group_root(fs_info);
	u32 i;

	for (i = 0; i < nr; i++) {
		bool pinpoint = keys[i].offset != 0;

		add_search(ra, root, &keys[i],
			   load && pinpoint ? BTRFS_IO_BG_SEARCH : BTRFS_IO_OTHER, false);
	}
}

/*
 * A root item that cannot be read is the replay's error, not this one's:
 * @err keeps it from fs_info->err.
 */
static void add_mount_roots(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    struct read_ahead *ra, struct mount_roots *r,
			    const struct btrfs_root_ref *skip)
{
	const struct btrfs_root_ref *loaded[MOUNT_ROOTS] = {
		&fs_info->extent_root, &fs_info->csum_root, &fs_info->free_space_root,
		&fs_info->block_group_root, &fs_info->stripe_root, &fs_info->dev_root,
		&r->data_reloc, &r->quota, &r->uuid,
	};
	const struct btrfs_root_ref *fs_roots[] = { &r->data_reloc, &r->fs_tree };
	const struct btrfs_key inode = { BTRFS_FIRST_FREE_OBJECTID, BTRFS_INODE_ITEM_KEY, 0 };
	const struct btrfs_key last = { BTRFS_LAST_FREE_OBJECTID, 255, (u64)-1 };
	u32 i;

	btrfs_read_root_item(fs_info, err, BTRFS_QUOTA_TREE_OBJECTID, &r->quota);
	btrfs_read_root_item(fs_info, err, BTRFS_UUID_TREE_OBJECTID, &r->uuid);
	btrfs_read_fs_root_item(fs_info, err, BTRFS_DATA_RELOC_TREE_OBJECTID,
				&r->data_reloc);
	btrfs_read_fs_root_item(fs_info, err, BTRFS_FS_TREE_OBJECTID, &r->fs_tree);
	for (i = 0; i < MOUNT_ROOTS; i++)
		if (loaded[i] != skip)
			add_search(ra, loaded[i], NULL, BTRFS_IO_OTHER, false);
	for (i = 0; i < 2; i++) {
		add_search(ra, fs_roots[i], &inode, BTRFS_IO_OTHER, false);
		add_search(ra, fs_roots[i], &last, BTRFS_IO_OTHER, false);
	}
	add_search(ra, &r->quota, NULL, BTRFS_IO_OTHER, true);
}

/*
 * From the read-ahead to the end of the replay, the block-group root's
 * leaves are cached key-only (extent_io.c): loading the block groups, the
 * replay of the kernel's search for them and the root node reads need no
 * more of them.  Not with a log tree: its replay searches the extent tree
 * for other items in between (tree-log.c).
 */
static void keep_block_group_keys(struct btrfs_fs_info *fs_info)
{
	const struct btrfs_root_ref *root = btrfs_block_group_root(fs_info);

	if (root->found && !btrfs_super_log_root(&fs_info->super))
		btrfs_cache_keep_items(fs_info, root->objectid, BTRFS_BLOCK_GROUP_ITEM_KEY);
}

void btrfs_mount_read_ahead(struct btrfs_fs_info *fs_info, void *ctx)
{
	const bool *load_block_groups = ctx;
	bool scan = fs_info->read.bg_search_scan && *load_block_groups;
	const struct btrfs_key dev_key = { 1, BTRFS_DEV_EXTENT_KEY, 0 };
	u32 nr_bg = 2 * fs_info->nr_chunks + 1;
	u32 cap = MOUNT_ROOTS + FS_ROOT_SEARCHES + OTHER_SEARCHES + nr_bg;
	struct btrfs_error scratch = { 0 };
	struct read_ahead ra = { 0 };
	struct mount_roots r;
	struct btrfs_key *keys;

	keep_block_group_keys(fs_info);
	if (fs_info->read.io_threads <= 1)
		return;
	ra.srch = malloc(cap * sizeof(*ra.srch));
	keys = calloc(nr_bg, sizeof(*keys));
	if (ra.srch && keys) {
		add_search(&ra, &fs_info->dev_root, &dev_key, BTRFS_IO_DEV_TREE, true);
		/*
		 * --bg-search scan loads by the kernel's searches themselves,
		 * its root node included: all left to it
		 */
		if (scan) {
			add_mount_roots(fs_info, &scratch, &ra, &r,
					btrfs_block_group_root(fs_info));
		} else {
			nr_bg = btrfs_block_group_search_keys(fs_info, keys);
			add_block_group_searches(fs_info, &ra, keys, nr_bg, *load_block_groups);
			add_mount_roots(fs_info, &scratch, &ra, &r, NULL);
		}
		/* the read-ahead's from here */
		btrfs_prefetch_searches_deferred(fs_info, ra.srch, ra.nr, cap);
		ra.srch = NULL;
	}
	free(ra.srch);
	free(keys);
}

static int read_mount_roots(struct btrfs_fs_info *fs_info, struct mount_roots *r)
{
	const struct btrfs_root_ref *loaded[] = {
		&fs_info->extent_root, &fs_info->csum_root, &fs_info->free_space_root,
		&fs_info->block_group_root, &fs_info->stripe_root, &fs_info->dev_root,
		&r->data_reloc, &r->quota, &r->uuid,
	};
	struct btrfs_error *err = &fs_info->err;
	unsigned int i;
	int ret;

	ret = btrfs_read_root_item(fs_info, err, BTRFS_QUOTA_TREE_OBJECTID, &r->quota);
	if (!ret)
		ret = btrfs_read_root_item(fs_info, err, BTRFS_UUID_TREE_OBJECTID, &r->uuid);
	if (!ret)
		ret = btrfs_read_fs_root_item(fs_info, err, BTRFS_DATA_RELOC_TREE_OBJECTID,
					      &r->data_reloc);
	if (!ret)
		ret = btrfs_read_fs_root_item(fs_info, err, BTRFS_FS_TREE_OBJECTID, &r->fs_tree);
	for (i = 0; i < sizeof(loaded) / sizeof(loaded[0]) && !ret; i++)
		ret = read_root_node(fs_info, loaded[i]);
	return ret;
}

/*
 * btrfs_fill_super() gets the root directory (inode 256) of the fs tree;
 * without its INODE_ITEM the mount fails with ENOENT, which the kernel
 * logs as "error ... in btrfs_fill_super: errno=-2 No such entry".
 */
static int check_root_dir(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root)
{
	struct btrfs_key key = { BTRFS_FIRST_FREE_OBJECTID, BTRFS_INODE_ITEM_KEY, 0 };
	struct btrfs_path path = { 0 };
	int ret = btrfs_search_slot(fs_info, root, &key, &path, BTRFS_IO_OTHER);

	btrfs_release_path(&path);
	if (ret > 0 && root->objectid == BTRFS_FS_TREE_OBJECTID)
		return btrfs_fs_error(fs_info, -ENOENT,
			"mount fails in btrfs_fill_super: errno=-2 No such entry: the fs tree has no INODE_ITEM for its root directory (inode %llu)",
			(unsigned long long)BTRFS_FIRST_FREE_OBJECTID);
	return ret < 0 ? ret : 0;
}

/* btrfs_get_fs_root(): root node, root inode, highest objectid */
static int replay_fs_root(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root)
{
	int ret;

	if (!root->found)
		return 0;
	ret = read_root_node(fs_info, root);
	if (!ret)
		ret = check_root_dir(fs_info, root);
	if (!ret)
		ret = search_path(fs_info, root, BTRFS_LAST_FREE_OBJECTID, 255, (u64)-1);
	return ret;
}

/*
 * The item @key's exact search finds, copied into @buf (at most @len
 * bytes): its size, 0 if absent, <0 on error.  The search is the one the
 * kernel makes, so its reads count.
 */
static int copy_item(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root,
		     const struct btrfs_key *key, void *buf, u32 len)
{
	struct btrfs_path path = { 0 };
	const void *item;
	u32 size;
	int ret = btrfs_search_slot(fs_info, root, key, &path, BTRFS_IO_OTHER);

	if (ret == 0) {
		item = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		memcpy(buf, item, size < len ? size : len);
		ret = size < len ? size : len;
	} else if (ret > 0) {
		ret = 0;
	}
	btrfs_release_path(&path);
	return ret;
}

/*
 * The first item at or after @key of (@key's objectid, @key's type): the
 * backward searches of btrfs_search_backwards() with offset -1 read the
 * same leaf for a single item, which is all a subvolume or directory has
 * of ROOT_BACKREF and INODE_REF here (hard links aside).
 */
static int first_item(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root,
		      struct btrfs_key *key, void *buf, u32 len)
{
	struct btrfs_path path = { 0 };
	struct btrfs_key found;
	const void *item;
	u32 size;
	int ret = btrfs_search_slot(fs_info, root, key, &path, BTRFS_IO_OTHER);

	if (ret < 0)
		goto out;
	ret = 0;
	if (path.slots[0] >= (int)path.nodes[0]->nritems &&
	    btrfs_next_leaf(fs_info, root, &path, BTRFS_IO_OTHER))
		goto out;
	btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &found);
	if (found.objectid != key->objectid || found.type != key->type)
		goto out;
	item = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
	memcpy(buf, item, size < len ? size : len);
	*key = found;
	ret = size < len ? size : len;
out:
	btrfs_release_path(&path);
	return ret;
}

/* The subvolume a mount without subvol= opens: the "default" DIR_ITEM's, else 5 */
static int default_subvolume(struct btrfs_fs_info *fs_info, u64 *subvol)
{
	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(fs_info);
	struct btrfs_key key = { BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_DIR_ITEM_KEY,
				 btrfs_name_hash("default", 7) };
	u8 buf[sizeof(struct btrfs_dir_item) + 7];
	const struct btrfs_dir_item *di = (const void *)buf;
	int ret = copy_item(fs_info, &tree_root, &key, buf, sizeof(buf));

	*subvol = BTRFS_FS_TREE_OBJECTID;
	if (ret < (int)sizeof(buf))
		return ret < 0 ? ret : 0;
	/* a hash collision put another name first: the kernel looks on, rare enough */
	if (btrfs_stack_dir_name_len(di) == 7 && !memcmp(di + 1, "default", 7))
		*subvol = btrfs_disk_key_objectid(&di->location);
	return 0;
}

#define MAX_SUBVOL_PATH	64

/* One step of the path walk from the fs tree's root directory to the subvolume */
struct path_step {
	u64 tree;	/* the subvolume the directory is in */
	u64 dir;
	u64 child;	/* a directory inode, or the subvolume when tree_step */
	bool tree_step;
	char name[BTRFS_NAME_LEN];
	u16 name_len;
};

/*
 * btrfs_get_subvol_name_from_objectid(): from the subvolume up to the fs
 * tree, each ROOT_BACKREF (parent, directory, name) and, below a parent's
 * top directory, the INODE_REFs up to it, searched in the parent opened by
 * btrfs_get_fs_root().  The steps come out leaf first.
 */
static int subvolume_path(struct btrfs_fs_info *fs_info, u64 subvol,
			  struct path_step *steps, int *nr)
{
	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(fs_info);
	u8 buf[sizeof(struct btrfs_disk_root_ref) + BTRFS_NAME_LEN];
	const struct btrfs_disk_root_ref *rr = (const void *)buf;
	const struct btrfs_inode_ref *ir = (const void *)buf;
	struct btrfs_root_ref parent_root;
	struct btrfs_key key;
	int ret;

	*nr = 0;
	while (subvol != BTRFS_FS_TREE_OBJECTID) {
		struct path_step *st = &steps[(*nr)++];
		u64 dir;

		if (*nr > MAX_SUBVOL_PATH)
			return 0;
		key = (struct btrfs_key){ subvol, BTRFS_ROOT_BACKREF_KEY, 0 };
		ret = first_item(fs_info, &tree_root, &key, buf, sizeof(buf));
		if (ret < (int)sizeof(*rr))
			return ret < 0 ? ret : 0;
		dir = le64toh(rr->dirid);
		*st = (struct path_step){ .tree = key.offset, .dir = dir, .child = subvol,
					  .tree_step = true };
		st->name_len = btrfs_stack_root_ref_name_len(rr);
		if (st->name_len > ret - (int)sizeof(*rr))
			st->name_len = ret - sizeof(*rr);
		memcpy(st->name, rr + 1, st->name_len);
		subvol = key.offset;
		if (dir == BTRFS_FIRST_FREE_OBJECTID)
			continue;
		ret = btrfs_read_fs_root_item(fs_info, &fs_info->err, subvol, &parent_root);
		if (!ret)
			ret = replay_fs_root(fs_info, &parent_root);
		if (ret)
			return ret;
		while (dir != BTRFS_FIRST_FREE_OBJECTID && *nr <= MAX_SUBVOL_PATH) {
			st = &steps[(*nr)++];
			key = (struct btrfs_key){ dir, BTRFS_INODE_REF_KEY, 0 };
			ret = first_item(fs_info, &parent_root, &key, buf, sizeof(buf));
			if (ret < (int)sizeof(*ir))
				return ret < 0 ? ret : 0;
			*st = (struct path_step){ .tree = subvol, .dir = key.offset, .child = dir };
			st->name_len = btrfs_stack_inode_ref_name_len(ir);
			if (st->name_len > ret - (int)sizeof(*ir))
				st->name_len = ret - sizeof(*ir);
			memcpy(st->name, ir + 1, st->name_len);
			dir = key.offset;
		}
	}
	return 0;
}

/*
 * The path walk of mount_subtree(), root first: each name's DIR_ITEM in its
 * directory (btrfs_inode_by_name()), then either the directory's inode
 * (btrfs_iget()) or, for a subvolume, its ROOT_REF in the tree root
 * (fixup_tree_root_location()) and btrfs_get_fs_root().
 */
static int walk_subvolume_path(struct btrfs_fs_info *fs_info,
			       const struct path_step *steps, int nr)
{
	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(fs_info), dir_root, child;
	int i, ret = 0;

	for (i = nr - 1; i >= 0 && !ret; i--) {
		const struct path_step *st = &steps[i];

		ret = btrfs_read_fs_root_item(fs_info, &fs_info->err, st->tree, &dir_root);
		if (ret || !dir_root.found)
			return ret;
		ret = search_path(fs_info, &dir_root, st->dir, BTRFS_DIR_ITEM_KEY,
				  btrfs_name_hash(st->name, st->name_len));
		if (ret)
			return ret;
		if (!st->tree_step) {
			ret = search_path(fs_info, &dir_root, st->child, BTRFS_INODE_ITEM_KEY, 0);
			continue;
		}
		ret = search_path(fs_info, &tree_root, st->tree, BTRFS_ROOT_REF_KEY, st->child);
		if (!ret)
			ret = btrfs_read_fs_root_item(fs_info, &fs_info->err, st->child, &child);
		if (!ret)
			ret = replay_fs_root(fs_info, &child);
	}
	return ret;
}

/*
 * A default subvolume (btrfs subvolume set-default): a mount without
 * subvol= finds its name (btrfs_get_subvol_name_from_objectid()) and
 * walks the path to it from the fs tree's root directory, opening it.
 */
static int replay_default_subvolume(struct btrfs_fs_info *fs_info)
{
	struct path_step *steps;
	u64 subvol;
	int nr, ret;

	ret = default_subvolume(fs_info, &subvol);
	if (ret || subvol == BTRFS_FS_TREE_OBJECTID)
		return ret;
	steps = calloc(MAX_SUBVOL_PATH + 1, sizeof(*steps));
	if (!steps)
		return -ENOMEM;
	ret = subvolume_path(fs_info, subvol, steps, &nr);
	if (!ret)
		ret = walk_subvolume_path(fs_info, steps, nr);
	free(steps);
	return ret;
}

/* a node the walk holds and passes again is not read again (tree-log.c) */
static int walk_log_tree(struct btrfs_fs_info *fs_info, u64 subvol,
			 const struct btrfs_root_ref *log, void *ctx)
{
	(void)subvol;
	(void)ctx;
	return btrfs_walk_log_tree(fs_info, log, count_leaf, NULL, NULL, NULL);
}

/* A tree block the replay's searches read: the commit frees it (COW) */
struct copied_block {
	u64 bytenr;
	int level;
};

struct log_searches {
	struct btrfs_fs_info *fs_info;
	struct btrfs_read_observer counter;
	struct btrfs_reada_forward reada;	/* in memory: what the counter met */
	struct copied_block *blocks;
	u32 nr;
	u32 cap;
	u64 *cached;			/* block groups btrfs_cache_block_group() cached */
	u32 nr_cached;
	u32 cap_cached;
	u64 *pinned;			/* the log trees' blocks, as the pin walk meets them */
	u32 nr_pinned;
	u32 cap_pinned;
	bool unmodelled;		/* a caching the model does not follow */
};

static int remember_path(struct log_searches *ls, const struct btrfs_path *path)
{
	int level;

	for (level = 0; level < BTRFS_MAX_LEVEL && path->nodes[level]; level++) {
		if (array_grow((void **)&ls->blocks, ls->nr, &ls->cap, sizeof(*ls->blocks)))
			return -ENOMEM;
		ls->blocks[ls->nr++] = (struct copied_block){ path->nodes[level]->start, level };
	}
	return 0;
}

/*
 * One search of the replay, on the tree as the image has it: the blocks
 * the replay changes are copies of those its searches read first, and
 * the leaves its splits make are new, so the kernel reads the same ones
 */
static int log_search(struct log_searches *ls, const struct btrfs_root_ref *root,
		      const struct btrfs_key *key, int ins_len)
{
	struct btrfs_read_observer prev = btrfs_set_read_observer(ls->fs_info, ls->counter);
	struct btrfs_path path = { .ins_len = ins_len };
	int ret = btrfs_search_slot(ls->fs_info, root, key, &path, BTRFS_IO_OTHER);

	btrfs_set_read_observer(ls->fs_info, prev);
	if (ret >= 0)
		ret = remember_path(ls, &path);
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

static int count_log_search(void *ctx, const struct btrfs_root_ref *root,
			    const struct btrfs_key *key)
{
	return log_search(ctx, root, key, 0);
}

/*
 * A deletion's search: the nodes below half on its path read their
 * siblings ahead (reada_for_balance(): one level-1 node read and none of
 * its leaves, kernel test 037's large-4k)
 */
static int count_log_delete(void *ctx, const struct btrfs_root_ref *root,
			    const struct btrfs_key *key)
{
	return log_search(ctx, root, key, -1);
}

/* A search of the replay that changes nothing: read, not copied */
static int count_log_read(void *ctx, const struct btrfs_root_ref *root,
			  const struct btrfs_key *key)
{
	struct log_searches *ls = ctx;
	struct btrfs_read_observer prev = btrfs_set_read_observer(ls->fs_info, ls->counter);
	int ret = search_path(ls->fs_info, root, key->objectid, key->type, key->offset);

	btrfs_set_read_observer(ls->fs_info, prev);
	return ret;
}

/* A block the replay reads at @level: copied too when @cow */
static int count_log_block(struct log_searches *ls, u64 bytenr, bool cow, int level)
{
	int ret = ls->counter.fn(ls->counter.ctx, bytenr);

	if (ret || !cow)
		return ret;
	if (array_grow((void **)&ls->blocks, ls->nr, &ls->cap, sizeof(*ls->blocks)))
		return -ENOMEM;
	ls->blocks[ls->nr++] = (struct copied_block){ bytenr, level };
	return 0;
}

/*
 * A leaf the replay changed: read, and copied; a push's sibling too full
 * for the item: read only (its extent item stays as it is at the commit)
 */
static int count_log_leaf(void *ctx, u64 bytenr, bool cow)
{
	return count_log_block(ctx, bytenr, cow, 0);
}

/* A sibling node of a node balancing at @level: read, copied if it took pointers */
static int count_log_node(void *ctx, u64 bytenr, int level, bool cow)
{
	return count_log_block(ctx, bytenr, cow, level);
}

/* A COW search of the commit: its blocks from @min_level up are read */
static int count_commit_path(void *ctx, const struct btrfs_root_ref *root,
			     const struct btrfs_path *path, int min_level)
{
	struct log_searches *ls = ctx;
	int level, ret = 0;

	(void)root;
	for (level = min_level; level < BTRFS_MAX_LEVEL && path->nodes[level] && !ret; level++)
		ret = ls->counter.fn(ls->counter.ctx, path->nodes[level]->start);
	return ret;
}

/*
 * btrfs_cache_block_group(wait) of the block group holding @bytenr: the
 * first time, unless the mount found it empty or full, caching_thread()'s
 * searches (block-group.c) are read
 */
static int count_caching(void *ctx, u64 bytenr)
{
	struct log_searches *ls = ctx;
	struct btrfs_fs_info *fs_info = ls->fs_info;
	const struct btrfs_block_group *bg = btrfs_lookup_block_group(fs_info, bytenr);
	struct btrfs_read_observer prev;
	u32 i;
	int ret;

	if (!bg || !btrfs_block_group_needs_caching(bg))
		return 0;
	for (i = 0; i < ls->nr_cached; i++)
		if (ls->cached[i] == bg->start)
			return 0;
	if (array_grow((void **)&ls->cached, ls->nr_cached, &ls->cap_cached, sizeof(*ls->cached)))
		return -ENOMEM;
	ls->cached[ls->nr_cached++] = bg->start;
	prev = btrfs_set_read_observer(fs_info, ls->counter);
	ret = btrfs_caching_thread_searches(fs_info, bg, &ls->reada);
	btrfs_set_read_observer(fs_info, prev);
	if (ret == 1)
		ls->unmodelled = true;
	return ret == 1 ? 0 : ret;
}

/* The pin walk's observer: every log tree block is counted and pinned */
static int note_pinned(void *ctx, u64 bytenr)
{
	struct log_searches *ls = ctx;

	if (array_grow((void **)&ls->pinned, ls->nr_pinned, &ls->cap_pinned, sizeof(*ls->pinned)))
		return -ENOMEM;
	ls->pinned[ls->nr_pinned++] = bytenr;
	return ls->counter.fn(ls->counter.ctx, bytenr);
}

/*
 * walk_log_tree() with wc->pin reads the log root tree and every log
 * tree; btrfs_pin_extent_for_log_replay() caches the block group of each
 * block it pins (on a mixed filesystem btrfs_exclude_logged_extents()
 * caches those of the logged data extents too: not followed)
 */
static int pin_walk(struct log_searches *ls, const struct btrfs_root_ref *log_root)
{
	struct btrfs_fs_info *fs_info = ls->fs_info;
	struct btrfs_read_observer prev = btrfs_set_read_observer(fs_info,
		(struct btrfs_read_observer){ note_pinned, ls });
	u32 i;
	int ret = walk_all(fs_info, log_root);

	if (!ret)
		ret = btrfs_for_each_log_tree(fs_info, walk_log_tree, NULL);
	btrfs_set_read_observer(fs_info, prev);
	if (btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS))
		ls->unmodelled = true;
	for (i = 0; i < ls->nr_pinned && !ret; i++)
		ret = count_caching(ls, ls->pinned[i]);
	return ret;
}

static int cmp_copied(const void *a, const void *b)
{
	const struct copied_block *x = a, *y = b;

	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

/*
 * The commit's delayed refs drop the extent item of every block the
 * replay copied, in bytenr order (btrfs_run_delayed_refs()): a search of
 * the extent tree for each
 */
static int search_copied_items(struct log_searches *ls)
{
	struct btrfs_fs_info *fs_info = ls->fs_info;
	bool skinny = btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA);
	u32 i;
	int ret = 0;

	if (ls->nr)
		qsort(ls->blocks, ls->nr, sizeof(*ls->blocks), cmp_copied);
	for (i = 0; i < ls->nr && !ret; i++) {
		const struct copied_block *b = &ls->blocks[i];

		if (i && b->bytenr == ls->blocks[i - 1].bytenr)
			continue;
		ret = search_path(fs_info, &fs_info->extent_root, b->bytenr,
				  skinny ? BTRFS_METADATA_ITEM_KEY : BTRFS_EXTENT_ITEM_KEY,
				  skinny ? (u64)b->level : fs_info->nodesize);
	}
	return ret;
}

/*
 * Log replay: walk_log_tree() reads the log root tree and every block of
 * every log tree, then the replay searches the subvolume, extent and csum
 * trees (tree-log.c, whose own reads of whole leaf groups are not the
 * kernel's and are not counted: only the searches it names are, and the
 * leaves its pushes moved items into or only read as siblings, and the
 * next leaves its walks step into without copying them), and the commit
 * the extent items of the blocks they copied, the extent-tree leaves its
 * runs change (the items of its new blocks, at the places the allocator
 * gives them: the block groups are loaded for this, cmds/open.c) and the
 * paths of its other COW searches; every block group the replay caches
 * reads what caching_thread() reads (block-group.c).  Counted in part
 * (log_partial) only where the model does not follow the replay.
 */
static int replay_log(struct btrfs_fs_info *fs_info, struct read_trace *trace,
		      struct btrfs_mount_estimate *est)
{
	struct btrfs_root_ref log_root = btrfs_log_root_tree_ref(fs_info);
	struct log_searches ls = {
		.fs_info = fs_info, .counter = fs_info->read_observer,
		.reada = { trace_has, trace },
	};
	const struct btrfs_log_search_hook hook = {
		.fn = count_log_search, .del = count_log_delete, .leaf = count_log_leaf,
		.node = count_log_node, .read = count_log_read,
		.path = count_commit_path, .cache_bg = count_caching, .ctx = &ls,
	};
	struct btrfs_read_observer prev;
	int ret;

	if (!log_root.found || !ls.counter.fn)
		return 0;
	ret = pin_walk(&ls, &log_root);
	if (!ret) {
		prev = btrfs_set_read_observer(fs_info, (struct btrfs_read_observer){ 0 });
		ret = btrfs_replay_log_searches(fs_info, hook);
		btrfs_set_read_observer(fs_info, prev);
	}
	if (!ret)
		ret = search_copied_items(&ls);
	est->log_partial = ls.unmodelled || fs_info->log_replay.tree_model_inexact;
	free(ls.blocks);
	free(ls.cached);
	free(ls.pinned);
	return ret;
}

/*
 * A block-group tree holds only the 24-byte items, appended in key order:
 * full leaves (appends split off an empty right leaf), then full nodes.
 */
static u64 bg_tree_blocks(const struct btrfs_fs_info *fs_info)
{
	u64 per_leaf = btrfs_leaf_data_size(fs_info->nodesize) /
		       (sizeof(struct btrfs_item) + sizeof(struct btrfs_block_group_item));
	u64 per_node = btrfs_node_max_ptrs(fs_info->nodesize);
	u64 level_blocks = (fs_info->nr_chunks + per_leaf - 1) / per_leaf;
	u64 total = 0;

	if (!level_blocks)
		return 1;
	while (1) {
		total += level_blocks;
		if (level_blocks == 1)
			return total;
		level_blocks = (level_blocks + per_node - 1) / per_node;
	}
}

static void sum_reads(const struct btrfs_fs_info *fs_info, struct btrfs_mount_reads *r)
{
	int i;

	r->total_reads = 0;
	for (i = 0; i < MOUNT_NR_PHASES; i++)
		r->total_reads += r->phase[i];
	r->total_bytes = r->phase[MOUNT_PHASE_SUPERBLOCK] * BTRFS_SUPER_INFO_SIZE +
			 (r->total_reads - r->phase[MOUNT_PHASE_SUPERBLOCK]) * fs_info->nodesize;
}

/*
 * With a block-group tree the mount reads that whole small tree instead
 * of the extent-tree leaves; the extent root node is still read as a
 * global root, and the tree root path to item 11 is already counted.
 */
static void estimate_bg_tree(const struct btrfs_fs_info *fs_info,
			     struct btrfs_mount_estimate *est)
{
	est->bg_tree = est->now;
	if (est->has_bg_tree)
		return;
	est->bg_tree_blocks = bg_tree_blocks(fs_info);
	est->bg_tree.phase[MOUNT_PHASE_BLOCK_GROUPS] = est->bg_tree_blocks;
	sum_reads(fs_info, &est->bg_tree);
}

static int run_phase(struct read_trace *trace, struct btrfs_mount_estimate *est,
		     enum btrfs_mount_phase phase, int ret)
{
	est->now.phase[phase] += trace->new_blocks;
	trace->new_blocks = 0;
	return ret;
}

static int replay_phases(struct btrfs_fs_info *fs_info, struct read_trace *trace,
			 struct btrfs_mount_estimate *est)
{
	struct btrfs_root_ref chunk_root = {
		.objectid = BTRFS_CHUNK_TREE_OBJECTID,
		.bytenr = btrfs_super_chunk_root(&fs_info->super),
		.level = btrfs_super_chunk_root_level(&fs_info->super),
		.generation = btrfs_super_chunk_root_generation(&fs_info->super),
		.found = true,
	};
	struct mount_roots roots;
	int ret;

	ret = run_phase(trace, est, MOUNT_PHASE_CHUNK_TREE, walk_all(fs_info, &chunk_root));
	if (!ret)
		ret = run_phase(trace, est, MOUNT_PHASE_ROOT_TREE, replay_root_tree(fs_info));
	if (!ret)
		ret = run_phase(trace, est, MOUNT_PHASE_ROOTS, read_mount_roots(fs_info, &roots));
	if (!ret)
		ret = run_phase(trace, est, MOUNT_PHASE_DEV_EXTENTS,
				walk_all(fs_info, &fs_info->dev_root));
	if (!ret)
		ret = run_phase(trace, est, MOUNT_PHASE_BLOCK_GROUPS,
				btrfs_replay_block_group_search(fs_info, &fs_info->err));
	if (!ret)
		ret = run_phase(trace, est, MOUNT_PHASE_QUOTA, walk_all(fs_info, &roots.quota));
	if (!ret)
		ret = run_phase(trace, est, MOUNT_PHASE_LOG, replay_log(fs_info, trace, est));
	if (!ret)
		ret = replay_fs_root(fs_info, &roots.data_reloc);
	if (!ret)
		ret = run_phase(trace, est, MOUNT_PHASE_FS_ROOTS,
				replay_fs_root(fs_info, &roots.fs_tree));
	if (!ret)
		ret = run_phase(trace, est, MOUNT_PHASE_FS_ROOTS,
				replay_default_subvolume(fs_info));
	return ret;
}

/*
 * Superblock: each device's primary copy is read once at scan and once at
 * open, and the newest once more for the filesystem (2N + 1 in all).
 */
int btrfs_estimate_mount(struct btrfs_fs_info *fs_info, struct btrfs_mount_estimate *est)
{
	struct read_trace trace = { 0 };
	struct btrfs_read_observer observer = { trace_block, &trace }, prev;
	u32 present = 0, i;
	int ret;

	memset(est, 0, sizeof(*est));
	for (i = 0; i < fs_info->nr_devices; i++)
		present += fs_info->devices[i].present;
	est->now.phase[MOUNT_PHASE_SUPERBLOCK] = 2ULL * present + 1;
	est->has_bg_tree = btrfs_fs_compat_ro(fs_info,
				BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE);
	prev = btrfs_set_read_observer(fs_info, observer);
	ret = replay_phases(fs_info, &trace, est);
	btrfs_set_read_observer(fs_info, prev);
	/* what comes after may want whole leaves: the copies are not found */
	btrfs_cache_keep_items(fs_info, 0, 0);
	/*
	 * The page cache served every read of the mount: what comes after
	 * is not what the read-ahead was for
	 */
	btrfs_prefetch_drop_deferred(fs_info);
	free(trace.slots);
	if (ret)
		return ret;
	sum_reads(fs_info, &est->now);
	estimate_bg_tree(fs_info, est);
	est->attempts = 1;
	return 0;
}
