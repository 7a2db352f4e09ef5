// SPDX-License-Identifier: GPL-2.0
/*
 * Log replay as the space accounting sees it, after fs/btrfs/tree-log.c:
 * btrfs_recover_log_trees(), walk_log_tree(), replay_one_buffer(),
 * replay_one_extent(), replay_dir_deletes(), replay_xattr_deletes(),
 * add_inode_ref(), fixup_inode_link_counts(), with btrfs_drop_extents()
 * of file.c, btrfs_lookup_csums_list(), btrfs_csum_file_blocks() and
 * btrfs_del_csums() of file-item.c, btrfs_lookup_data_extent(),
 * btrfs_alloc_logged_file_extent(), lookup_inline_extent_backref() and
 * __btrfs_free_extent() of extent-tree.c.  Behaviour reproduced:
 * 6.17-6.18 (an inode item with 0 links makes every stage skip that
 * inode's items: "btrfs: fix log tree replay failure due to file with 0
 * links and extents"); the data rules are the same since 5.x.
 *
 * A mount replays the log even with -o ro (not with rescue=nologreplay)
 * and commits, so sysfs shows the filesystem after replay.  Only data
 * extents change the block groups' used:
 *
 * - each logged EXTENT_DATA item of a regular or preallocated extent with
 *   disk_bytenr != 0 either adds a reference to an extent the extent tree
 *   already has, or allocates it (btrfs_alloc_logged_file_extent(): used
 *   grows by disk_num_bytes, once: later items find it in the tree);
 * - before that, btrfs_drop_extents() takes the logged range out of the
 *   subvolume's items: an item wholly inside loses its reference, an item
 *   split in two gains one, a trimmed item keeps its one;
 * - in the inode stage each logged regular file is first truncated to its
 *   (replayed) i_size: btrfs_drop_extents() from ALIGN(i_size) to the end;
 * - an item identical to the logged one (all 53 bytes) is left alone.
 *
 * Delayed refs run at the commit, adds before drops, so an extent is
 * freed only when its count ends at 0.  Inodes deleted by the replay
 * (link count 0) get an orphan item and keep their extents: orphan
 * cleanup does not run on a read-only mount, and eviction skips
 * truncation while the log is recovering.  The global reserve was
 * computed before the replay and is not updated by the commit.
 *
 * Metadata changes by the blocks the trees gain and lose: the items the
 * replay inserts, grows, shrinks and deletes in each subvolume tree
 * (overwrite_item() of inode items, refs and xattrs, replay_dir_deletes(),
 * link_to_fixup_dir(), add_inode_ref() with btrfs_add_link(),
 * insert_one_name() for names from dir index items alone, the file
 * extent items, fixup_inode_link_counts() with the orphan items, the
 * delayed dir index batches of the commit), in the extent tree
 * (alloc_reserved_file_extent() at replay time; at the commit the data
 * refs per extent in bytenr order, growing or shrinking the extent items,
 * the freed extents, the tree blocks' items) and in the csum tree (the
 * log's csums, the freed extents' csums) go through ctree.c's leaf model.
 * The commit is transaction.c's commit model, fed here with the data
 * extents' heads and the trees the replay changed: its runs take the
 * items of the blocks the transaction copies too, in bytenr order with
 * the data extents (btrfs_run_delayed_refs()):
 * a copy at a lower place goes in before its original goes out, which
 * can split a leaf on the way.  The free-space tree's items are not
 * replayed, only the copies its changes make (Documentation/formulas.md
 * 5.6).
 *
 * The subvolume's items of each inode the log touches and the extents
 * involved are loaded once and then changed here, in memory; nothing is
 * written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/hash.h"
#include "common/array.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/ctree-leaf.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/extent-tree.h"
#include "kernel-shared/file-item.h"
#include "kernel-shared/inode.h"
#include "kernel-shared/space-info.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/tree-checker.h"
#include "kernel-shared/tree-log.h"
#include "kernel-shared/transaction.h"
#include "kernel-shared/volumes.h"


/* The stages of btrfs_recover_log_trees() after the pin-only walk */
enum {
	LOG_WALK_REPLAY_INODES,
	LOG_WALK_REPLAY_DIR_INDEX,
	LOG_WALK_REPLAY_ALL,
	LOG_WALK_NR_STAGES,
};

/* One EXTENT_DATA item of a subvolume, as the replay has left it so far */
struct file_extent {
	u64 start;			/* key offset */
	u64 end;			/* start + num_bytes, inline: + ram_bytes */
	bool is_inline;
	struct btrfs_file_extent_item fi;	/* on-disk bytes (inline: header only) */
};

struct replay_inode {
	u64 root;
	u64 ino;
	u64 disk_i_size;		/* once the inode stage replayed the inode item */
	bool has_disk_i_size;
	struct file_extent *fe;		/* sorted by start, disjoint */
	u32 nr;
	u32 cap;
};

/* One EXTENT_DATA_REF back reference of an extent, and what the replay does to it */
struct replay_dref {
	u64 root;
	u64 owner;			/* inode */
	u64 offset;			/* file offset minus extent offset */
	u64 count;			/* in the extent item (inline) before the commit */
	int64_t delta;			/* the delayed refs' sum for it */
	bool is_inline;			/* an inline ref of the extent item */
};

struct replay_extent {
	u64 bytenr;
	u64 num_bytes;
	u64 refs;			/* the extent item's refs, then as changed */
	bool in_tree;			/* in the extent tree before the replay */
	bool allocated;			/* inserted by the replay */
	bool keyed_after;		/* keyed back references follow the item */
	struct replay_dref *drefs;
	u32 nr_drefs;
	u32 cap_drefs;
};

/* Open addressing from a (a, b) pair to an index, 0 = empty slot */
struct index_map {
	u64 *a;
	u64 *b;
	u32 *idx;			/* index + 1 */
	u32 cap;			/* a power of 2, or 0 */
	u32 used;
};

/* A DIR_INDEX item btrfs_insert_delayed_dir_index() queues for the commit */
struct delayed_index {
	u64 dir;
	u64 index;
	u32 size;
	u32 seq;			/* the order its delayed node was first used */
};

/* A subvolume's tree as the replay changes it (Documentation/formulas.md 5.6) */
struct subvol_sim {
	u64 subvol;
	struct btrfs_tree_sim ts;
	u64 *orphans;			/* inodes replay_dir_deletes() leaves with no link */
	u32 nr_orphans;
	u32 cap_orphans;
	struct delayed_index *dix;
	u32 nr_dix;
	u32 cap_dix;
	u64 *fixups;			/* inodes linked to the fixup dir, in order */
	u32 nr_fixups;
	u32 cap_fixups;
};

struct replay_ctx {
	struct btrfs_fs_info *fs_info;
	struct btrfs_log_replay *out;
	int stage;
	bool ignore_cur_inode;		/* wc->ignore_cur_inode: kept across leaves and stages */
	u64 subvol;
	struct btrfs_subvol sv;
	struct replay_inode *inodes;
	u32 nr_inodes;
	u32 inodes_cap;
	struct index_map inode_map;
	struct replay_extent *extents;
	u32 nr_extents;
	u32 extents_cap;
	struct index_map extent_map;
	struct btrfs_tree_sim extent_sim;	/* the extent tree's leaves */
	struct btrfs_tree_sim csum_sim;		/* the csum tree's leaves */
	struct subvol_sim *subvol_sims;
	u32 nr_subvol_sims;
	u32 cap_subvol_sims;
	struct subvol_sim *cur;		/* of rc->subvol */
	const struct btrfs_root_ref *log;	/* the log tree being walked */
	struct index_map seen;		/* blocks the walks met: taken */
	struct btrfs_read_observer prev_observer;
	struct btrfs_log_search_hook hook;	/* told of the kernel's searches */
	u64 *held;			/* blocks the pin walk pinned twice */
	u32 nr_held;
	u32 cap_held;
};

static u32 map_slot(const struct index_map *m, u64 a, u64 b)
{
	u32 mask = m->cap - 1;
	u32 i = (u32)(hash_mix64(a ^ hash_mix64(b)) & mask);

	while (m->idx[i] && (m->a[i] != a || m->b[i] != b))
		i = (i + 1) & mask;
	return i;
}

/* The index stored for (@a, @b), or -1 */
static long map_find(const struct index_map *m, u64 a, u64 b)
{
	u32 i;

	if (!m->cap)
		return -1;
	i = map_slot(m, a, b);
	return m->idx[i] ? (long)m->idx[i] - 1 : -1;
}

static int map_grow(struct index_map *m)
{
	struct index_map n = { .cap = m->cap ? m->cap * 2 : 64 };
	u32 i;

	if (n.cap < m->cap)
		return -ENOMEM;
	n.a = calloc(n.cap, sizeof(*n.a));
	n.b = calloc(n.cap, sizeof(*n.b));
	n.idx = calloc(n.cap, sizeof(*n.idx));
	if (!n.a || !n.b || !n.idx) {
		free(n.a);
		free(n.b);
		free(n.idx);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		u32 s;

		if (!m->idx[i])
			continue;
		s = map_slot(&n, m->a[i], m->b[i]);
		n.a[s] = m->a[i];
		n.b[s] = m->b[i];
		n.idx[s] = m->idx[i];
		n.used++;
	}
	free(m->a);
	free(m->b);
	free(m->idx);
	*m = n;
	return 0;
}

static int map_insert(struct index_map *m, u64 a, u64 b, u32 index)
{
	u32 i;

	if ((m->used + 1) * 2 > m->cap && map_grow(m))
		return -ENOMEM;
	i = map_slot(m, a, b);
	m->a[i] = a;
	m->b[i] = b;
	m->idx[i] = index + 1;
	m->used++;
	return 0;
}

static void map_free(struct index_map *m)
{
	free(m->a);
	free(m->b);
	free(m->idx);
	memset(m, 0, sizeof(*m));
}

/* An operation on the current subvolume's tree that the model cannot follow */
static int sim_result(struct replay_ctx *rc, int ret)
{
	if (ret == 1)
		rc->cur->ts.inexact = true;
	return ret < 0 ? ret : 0;
}

/*
 * The kernel's replay searches @key in @root here (with the same search,
 * or one landing in the same leaf): the mount estimate's hook is told.
 */
static int note_search(struct replay_ctx *rc, const struct btrfs_root_ref *root,
		       const struct btrfs_key *key)
{
	return rc->hook.fn ? rc->hook.fn(rc->hook.ctx, root, key) : 0;
}

static int note_subvol(struct replay_ctx *rc, u64 objectid, u8 type, u64 offset)
{
	return note_search(rc, &rc->sv.root, &(struct btrfs_key){ objectid, type, offset });
}

/*
 * A search of the kernel's replay without a transaction or COW (trans
 * NULL, or mod 0): its blocks are read, not copied
 */
static int note_read(struct replay_ctx *rc, u64 objectid, u8 type, u64 offset)
{
	if (!rc->hook.read)
		return 0;
	return rc->hook.read(rc->hook.ctx, &rc->sv.root,
			     &(struct btrfs_key){ objectid, type, offset });
}

/* A search of the kernel's replay with ins_len -1 (it deletes or may) */
static int note_delete(struct replay_ctx *rc, const struct btrfs_root_ref *root,
		       const struct btrfs_key *key)
{
	if (!rc->hook.del)
		return note_search(rc, root, key);
	return rc->hook.del(rc->hook.ctx, root, key);
}

/*
 * btrfs_drop_extents() walks slot by slot past the inode's last file
 * extent item (or from where its search lands) to the item that ends the
 * loop, the next inode's: when the inode's items end its leaf,
 * btrfs_next_leaf() reads the next leaf (a search without COW: it changes
 * nothing there).  On the tree as the replay has changed it so far.
 */
static int note_drop_walk_end(struct replay_ctx *rc, u64 ino)
{
	struct btrfs_key last = { ino, BTRFS_EXTENT_DATA_KEY, (u64)-1 }, next;
	int ret;

	if (!rc->hook.read)
		return 0;
	ret = btrfs_tree_sim_next_leaf(&rc->cur->ts, &last, &next);
	if (ret)
		return ret < 0 ? ret : 0;
	return rc->hook.read(rc->hook.ctx, &rc->sv.root, &next);
}

/*
 * btrfs_iget_logging() of @ino: during the mount the superblock is not
 * active yet, so every last iput() evicts the inode and each iget reads
 * it again (btrfs_read_locked_inode()), on the tree as changed so far;
 * when its props look runs off the end of the inode item's leaf,
 * btrfs_load_inode_props() reads the next leaf (no COW)
 */
static int note_iget(struct replay_ctx *rc, u64 ino)
{
	struct btrfs_key key = { ino, BTRFS_INODE_ITEM_KEY, 0 }, next;
	int ret;

	if (!rc->hook.read)
		return 0;
	ret = btrfs_tree_sim_inode_props_leaf(&rc->cur->ts, &key, &next);
	if (ret)
		return ret < 0 ? ret : 0;
	return rc->hook.read(rc->hook.ctx, &rc->sv.root, &next);
}

/* btrfs_cache_block_group(wait) of the block group of @bytenr */
static int note_cache_bg(void *ctx, u64 bytenr)
{
	struct replay_ctx *rc = ctx;

	return rc->hook.cache_bg ? rc->hook.cache_bg(rc->hook.ctx, bytenr) : 0;
}

/* A COW search of the commit: the blocks it reads */
static int note_commit_path(void *ctx, const struct btrfs_root_ref *root,
			    const struct btrfs_path *path, int min_level)
{
	struct replay_ctx *rc = ctx;

	return rc->hook.path ? rc->hook.path(rc->hook.ctx, root, path, min_level) : 0;
}

/* btrfs_lookup_csum() (@del false) or btrfs_del_csums()' search (@del) */
static int note_csum(struct replay_ctx *rc, u64 offset, bool del)
{
	struct btrfs_key key = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, offset };

	if (del)
		return note_delete(rc, &rc->fs_info->csum_root, &key);
	return note_search(rc, &rc->fs_info->csum_root, &key);
}

static int subvol_sim_get(struct replay_ctx *rc)
{
	struct subvol_sim *ss;
	u32 i;

	for (i = 0; i < rc->nr_subvol_sims; i++)
		if (rc->subvol_sims[i].subvol == rc->subvol) {
			rc->cur = &rc->subvol_sims[i];
			return 0;
		}
	if (array_grow((void **)&rc->subvol_sims, rc->nr_subvol_sims, &rc->cap_subvol_sims,
		       sizeof(*rc->subvol_sims)))
		return -ENOMEM;
	ss = &rc->subvol_sims[rc->nr_subvol_sims++];
	memset(ss, 0, sizeof(*ss));
	ss->subvol = rc->subvol;
	btrfs_tree_sim_init(&ss->ts, rc->fs_info, &rc->sv.root);
	/* changed before the commit's first look: the commit takes its COWs in order */
	ss->ts.log_events = true;
	rc->cur = ss;
	return 0;
}

struct btrfs_root_ref btrfs_log_root_tree_ref(const struct btrfs_fs_info *fs_info)
{
	/* btrfs_replay_log(): the log is one transaction past the super */
	return (struct btrfs_root_ref) {
		.objectid = BTRFS_TREE_LOG_OBJECTID,
		.bytenr = btrfs_super_log_root(&fs_info->super),
		.level = btrfs_super_log_root_level(&fs_info->super),
		.generation = fs_info->generation + 1,
		.found = btrfs_super_log_root(&fs_info->super) != 0,
	};
}

struct log_tree_list {
	u64 *subvol;
	struct btrfs_root_ref *root;
	u32 nr;
	u32 cap;
	u32 root_cap;
};

static int collect_log_trees(struct btrfs_fs_info *fs_info,
			     const struct btrfs_tree_block *leaf, void *ctx)
{
	struct log_tree_list *list = ctx;
	u32 slot;

	for (slot = 0; slot < leaf->nritems; slot++) {
		const struct btrfs_root_item_head *ri;
		struct btrfs_key key;
		u32 size;

		btrfs_item_key_to_cpu(leaf, slot, &key);
		if (key.objectid != BTRFS_TREE_LOG_OBJECTID || key.type != BTRFS_ROOT_ITEM_KEY)
			continue;
		ri = btrfs_item_ptr(leaf, slot, &size);
		if (size < sizeof(*ri))
			return btrfs_fs_error(fs_info, -EUCLEAN,
				"corrupt leaf: root=%llu block=%llu slot=%u, invalid root item size for the log tree of root %llu, have %u expect at least %zu",
				(unsigned long long)BTRFS_TREE_LOG_OBJECTID, (unsigned long long)leaf->start,
				slot, (unsigned long long)key.offset, size, sizeof(*ri));
		if (btrfs_root_level(ri) >= BTRFS_MAX_LEVEL)
			return btrfs_fs_error(fs_info, -EUCLEAN,
				"corrupt leaf: root=%llu block=%llu slot=%u, log tree of root %llu has level %u, max %d",
				(unsigned long long)BTRFS_TREE_LOG_OBJECTID, (unsigned long long)leaf->start,
				slot, (unsigned long long)key.offset, btrfs_root_level(ri),
				BTRFS_MAX_LEVEL - 1);
		if (array_grow((void **)&list->subvol, list->nr, &list->cap, sizeof(u64)) ||
		    array_grow((void **)&list->root, list->nr, &list->root_cap,
			       sizeof(*list->root)))
			return -ENOMEM;
		list->subvol[list->nr] = key.offset;
		list->root[list->nr] = (struct btrfs_root_ref) {
			.objectid = BTRFS_TREE_LOG_OBJECTID,
			.bytenr = btrfs_root_bytenr(ri),
			.level = btrfs_root_level(ri),
			.generation = btrfs_root_generation(ri),
			.found = true,
		};
		list->nr++;
	}
	return 0;
}

int btrfs_for_each_log_tree(struct btrfs_fs_info *fs_info, btrfs_log_tree_fn fn,
			    void *ctx)
{
	struct btrfs_root_ref log_root = btrfs_log_root_tree_ref(fs_info);
	struct log_tree_list list = { 0 };
	u32 i;
	int ret;

	if (!log_root.found)
		return 0;
	ret = btrfs_walk_tree(fs_info, &log_root, BTRFS_IO_OTHER, collect_log_trees, &list);
	/* keys rise through the walk: the kernel takes the highest offset first */
	for (i = list.nr; !ret && i > 0; i--)
		ret = fn(fs_info, list.subvol[i - 1], &list.root[i - 1], ctx);
	free(list.subvol);
	free(list.root);
	return ret;
}

/*
 * walk_log_tree() and walk_down_log_tree() (6.18): each child is read
 * with its parent's checks (level, generation, first key), except a child
 * the walk already holds, the node itself or one above it: then
 * btrfs_find_create_tree_block() returns the extent buffer in memory, up
 * to date, and nothing checks it.  Under a level-1 node the held block
 * goes to process_func() as level 0, i.e. as a leaf (@held_fn; since 6.18
 * replay_one_buffer() tests the level it is passed, not the header's);
 * the subtree the pointer stood for is never read.  Above level 1 the
 * walk would descend into the held node again and start over: it never
 * ends, and the tool refuses rather than loop (not mounted to confirm).
 * A block reached again from another node (a DAG: two nodes sharing a
 * child) is walked again, as walk_log_tree() follows every pointer (6.18.44
 * mounts such a log, its shared leaves replayed twice and pinned twice:
 * @again_fn).  Each level built
 * that way multiplies the walk, without bound in the image's size: past as
 * many blocks walked again as distinct ones, the walk is refused.
 */
struct log_walk {
	btrfs_leaf_fn leaf_fn;
	btrfs_leaf_fn held_fn;
	btrfs_leaf_fn again_fn;
	void *ctx;
	u64 root_id;
	const struct btrfs_tree_block *path[BTRFS_MAX_LEVEL];	/* held, by level */
	struct index_map reached;	/* every block read by this walk */
	u64 again;			/* blocks reached again, from another node */
};

static const struct btrfs_tree_block *held_block(const struct log_walk *lw,
						 const struct btrfs_tree_block *node, u64 bytenr)
{
	int level;

	for (level = node->level; level < BTRFS_MAX_LEVEL && lw->path[level]; level++)
		if (lw->path[level]->start == bytenr)
			return lw->path[level];
	return NULL;
}

static int walk_log_block(struct btrfs_fs_info *fs_info, struct log_walk *lw,
			  const struct btrfs_tree_block *eb)
{
	u32 slot;
	int ret = 0;

	if (eb->level == 0)
		return lw->leaf_fn(fs_info, eb, lw->ctx);
	lw->path[eb->level] = eb;
	for (slot = 0; slot < eb->nritems && !ret; slot++) {
		u64 bytenr = btrfs_node_blockptr(eb, slot);
		const struct btrfs_tree_block *held = held_block(lw, eb, bytenr);
		struct btrfs_tree_block *child;
		bool again = false;

		if (held && eb->level == 1) {
			ret = lw->held_fn ? lw->held_fn(fs_info, held, lw->ctx) : 0;
			continue;
		}
		if (held)
			return btrfs_fs_error(fs_info, -EUCLEAN,
				"log tree node %llu slot %u points to node %llu at or above it: walk_down_log_tree() would walk it again without end",
				(unsigned long long)eb->start, slot, (unsigned long long)bytenr);
		if (map_find(&lw->reached, bytenr, 0) < 0) {
			if (map_insert(&lw->reached, bytenr, 0, 0))
				return -ENOMEM;
		} else if (++lw->again > lw->reached.used) {
			return btrfs_fs_error(fs_info, -EUCLEAN,
				"log tree node %llu slot %u points to block %llu, reached before from another node: %llu blocks walked again for %u distinct ones, nodes sharing children multiply walk_log_tree()'s walk",
				(unsigned long long)eb->start, slot, (unsigned long long)bytenr,
				(unsigned long long)lw->again, lw->reached.used);
		} else {
			again = true;
		}
		ret = btrfs_read_node_slot(fs_info, lw->root_id, eb, slot, BTRFS_IO_OTHER, &child);
		if (ret < 0)
			break;
		if (again && lw->again_fn)
			ret = lw->again_fn(fs_info, child, lw->ctx);
		if (!ret)
			ret = walk_log_block(fs_info, lw, child);
		btrfs_tree_block_put(child);
	}
	lw->path[eb->level] = NULL;
	return ret;
}

int btrfs_walk_log_tree(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *log,
			btrfs_leaf_fn leaf_fn, btrfs_leaf_fn held_fn, btrfs_leaf_fn again_fn,
			void *ctx)
{
	struct log_walk lw = {
		.leaf_fn = leaf_fn, .held_fn = held_fn, .again_fn = again_fn, .ctx = ctx,
		.root_id = log->objectid,
	};
	struct btrfs_tree_block *eb;
	int ret;

	ret = btrfs_read_root_node(fs_info, &fs_info->err, log, BTRFS_IO_OTHER, &eb);
	if (ret < 0)
		return ret;
	ret = map_insert(&lw.reached, eb->start, 0, 0);
	if (!ret)
		ret = walk_log_block(fs_info, &lw, eb);
	btrfs_tree_block_put(eb);
	map_free(&lw.reached);
	return ret;
}

/*
 * An EXTENT_DATA item, with what check_extent_data_item() checks that this
 * file uses: the type, the item size of each type, the end of the range
 * within u64.  tree-checker.c already checked written blocks; these hold
 * for the others too, with the same words.
 */
static int read_file_extent(struct btrfs_fs_info *fs_info, u64 root,
			    const struct btrfs_tree_block *leaf, int slot,
			    const struct btrfs_key *key, struct file_extent *fe)
{
	const struct btrfs_file_extent_item *fi;
	u32 size;
	u8 type;

	fi = btrfs_item_ptr(leaf, slot, &size);
	memset(fe, 0, sizeof(*fe));
	fe->start = key->offset;
	if (size < BTRFS_FILE_EXTENT_INLINE_DATA_START)
		goto bad_size;
	type = btrfs_stack_file_extent_type(fi);
	if (type > BTRFS_FILE_EXTENT_PREALLOC)
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"corrupt leaf: root=%llu block=%llu slot=%d ino=%llu file_offset=%llu, invalid type for file extent, have %u expect range [0, %u]",
			(unsigned long long)root, (unsigned long long)leaf->start, slot,
			(unsigned long long)key->objectid, (unsigned long long)key->offset,
			type, BTRFS_FILE_EXTENT_PREALLOC);
	if (type == BTRFS_FILE_EXTENT_INLINE) {
		memcpy(&fe->fi, fi, BTRFS_FILE_EXTENT_INLINE_DATA_START);
		fe->is_inline = true;
		fe->end = key->offset + btrfs_stack_file_extent_ram_bytes(fi);
	} else {
		if (size != sizeof(*fi))
			return btrfs_fs_error(fs_info, -EUCLEAN,
				"corrupt leaf: root=%llu block=%llu slot=%d ino=%llu file_offset=%llu, invalid item size for reg/prealloc file extent, have %u expect %zu",
				(unsigned long long)root, (unsigned long long)leaf->start, slot,
				(unsigned long long)key->objectid,
				(unsigned long long)key->offset, size, sizeof(*fi));
		memcpy(&fe->fi, fi, sizeof(*fi));
		fe->end = key->offset + btrfs_stack_file_extent_num_bytes(fi);
	}
	if (fe->end < fe->start)
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"corrupt leaf: root=%llu block=%llu slot=%d ino=%llu file_offset=%llu, extent end range goes beyond u64 max",
			(unsigned long long)root, (unsigned long long)leaf->start, slot,
			(unsigned long long)key->objectid, (unsigned long long)key->offset);
	return 0;
bad_size:
	return btrfs_fs_error(fs_info, -EUCLEAN,
		"corrupt leaf: root=%llu block=%llu slot=%d ino=%llu file_offset=%llu, invalid item size, have %u expect [%zu, %u)",
		(unsigned long long)root, (unsigned long long)leaf->start, slot,
		(unsigned long long)key->objectid, (unsigned long long)key->offset, size,
		BTRFS_FILE_EXTENT_INLINE_DATA_START, 4096U);
}

static bool has_extent(const struct file_extent *fe)
{
	return !fe->is_inline && btrfs_stack_file_extent_disk_bytenr(&fe->fi) != 0;
}

static int insert_file_extent(struct replay_inode *ri, u32 pos,
			      const struct file_extent *fe)
{
	if (array_grow((void **)&ri->fe, ri->nr, &ri->cap, sizeof(*ri->fe)))
		return -ENOMEM;
	memmove(&ri->fe[pos + 1], &ri->fe[pos], (ri->nr - pos) * sizeof(*ri->fe));
	ri->fe[pos] = *fe;
	ri->nr++;
	return 0;
}

/* The subvolume's EXTENT_DATA items of @ino, in key order */
static int load_inode_extents(struct replay_ctx *rc, struct replay_inode *ri)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	struct btrfs_key key = { ri->ino, BTRFS_EXTENT_DATA_KEY, 0 };
	struct btrfs_path path = { 0 };
	int ret;

	ret = btrfs_search_slot(fs_info, &rc->sv.root, &key, &path, BTRFS_IO_OTHER);
	while (ret >= 0) {
		struct file_extent fe;

		if (path.slots[0] >= (int)path.nodes[0]->nritems) {
			ret = btrfs_next_leaf(fs_info, &rc->sv.root, &path, BTRFS_IO_OTHER);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		if (key.objectid != ri->ino || key.type != BTRFS_EXTENT_DATA_KEY) {
			ret = 0;
			break;
		}
		ret = read_file_extent(fs_info, ri->root, path.nodes[0], path.slots[0],
				       &key, &fe);
		if (!ret)
			ret = insert_file_extent(ri, ri->nr, &fe);
		path.slots[0]++;
	}
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

static int get_inode(struct replay_ctx *rc, u64 ino, struct replay_inode **out)
{
	long idx = map_find(&rc->inode_map, rc->subvol, ino);
	struct replay_inode *ri;
	int ret;

	if (idx >= 0) {
		*out = &rc->inodes[idx];
		return 0;
	}
	if (array_grow((void **)&rc->inodes, rc->nr_inodes, &rc->inodes_cap,
		       sizeof(*rc->inodes)))
		return -ENOMEM;
	ri = &rc->inodes[rc->nr_inodes];
	memset(ri, 0, sizeof(*ri));
	ri->root = rc->subvol;
	ri->ino = ino;
	ret = load_inode_extents(rc, ri);
	if (!ret)
		ret = map_insert(&rc->inode_map, rc->subvol, ino, rc->nr_inodes);
	if (ret) {
		free(ri->fe);
		return ret;
	}
	rc->nr_inodes++;
	*out = ri;
	return 0;
}

static struct replay_dref *find_dref(struct replay_extent *e, u64 root, u64 owner,
				     u64 offset)
{
	u32 i;

	for (i = 0; i < e->nr_drefs; i++)
		if (e->drefs[i].root == root && e->drefs[i].owner == owner &&
		    e->drefs[i].offset == offset)
			return &e->drefs[i];
	return NULL;
}

static int add_dref(struct replay_extent *e, u64 root, u64 owner, u64 offset,
		    struct replay_dref **out)
{
	if (array_grow((void **)&e->drefs, e->nr_drefs, &e->cap_drefs, sizeof(*e->drefs)))
		return -ENOMEM;
	*out = &e->drefs[e->nr_drefs++];
	**out = (struct replay_dref){ .root = root, .owner = owner, .offset = offset };
	return 0;
}

/*
 * The inline EXTENT_DATA_REFs of a data extent item (tree-checker.c has
 * checked the item in a block it read; a ref that runs past the end ends
 * the walk here)
 */
static int load_inline_drefs(struct replay_extent *e, const u8 *item, u32 size)
{
	const struct btrfs_extent_item *ei = (const void *)item;
	u32 ptr = sizeof(*ei);

	if (!(btrfs_stack_extent_flags(ei) & BTRFS_EXTENT_FLAG_DATA))
		return 0;
	while (ptr < size) {
		u8 type = item[ptr];
		u32 len;

		if (type == BTRFS_EXTENT_DATA_REF_KEY)
			len = 1 + sizeof(struct btrfs_extent_data_ref);
		else if (type == BTRFS_SHARED_DATA_REF_KEY)
			len = 1 + sizeof(__le64) + sizeof(struct btrfs_shared_data_ref);
		else if (type == BTRFS_EXTENT_OWNER_REF_KEY)
			len = 1 + sizeof(__le64);
		else
			break;
		if (ptr + len > size)
			break;
		if (type == BTRFS_EXTENT_DATA_REF_KEY) {
			const struct btrfs_extent_data_ref *dr = (const void *)(item + ptr + 1);
			struct replay_dref *d;

			if (add_dref(e, btrfs_stack_extent_data_ref_root(dr),
				     btrfs_stack_extent_data_ref_objectid(dr),
				     btrfs_stack_extent_data_ref_offset(dr), &d))
				return -ENOMEM;
			d->count = btrfs_stack_extent_data_ref_count(dr);
			d->is_inline = true;
		}
		ptr += len;
	}
	return 0;
}

/*
 * lookup_inline_extent_backref(): a new inline ref is not added when the
 * next key after the extent item is a keyed back reference of the same
 * extent (find_next_key(), types below BLOCK_GROUP_ITEM)
 */
static int keyed_refs_follow(struct replay_ctx *rc, struct btrfs_path *path,
			     struct replay_extent *e)
{
	struct btrfs_key key;
	int ret = 0;

	path->slots[0]++;
	if (path->slots[0] >= (int)path->nodes[0]->nritems)
		ret = btrfs_next_leaf(rc->fs_info, &rc->fs_info->extent_root, path,
				      BTRFS_IO_OTHER);
	if (ret)
		return ret < 0 ? ret : 0;
	btrfs_item_key_to_cpu(path->nodes[0], path->slots[0], &key);
	e->keyed_after = key.objectid == e->bytenr && key.type < BTRFS_BLOCK_GROUP_ITEM_KEY;
	return 0;
}

/* A delayed data ref for (@root, @owner, @offset): adds and drops of one ref merge */
static int dref_change(struct replay_extent *e, u64 root, u64 owner, u64 offset, int delta)
{
	struct replay_dref *d = find_dref(e, root, owner, offset);

	if (!d && add_dref(e, root, owner, offset, &d))
		return -ENOMEM;
	d->delta += delta;
	return 0;
}

static u64 dref_offset(const struct file_extent *fe)
{
	return fe->start - btrfs_stack_file_extent_offset(&fe->fi);
}

/* The extent item (bytenr, EXTENT_ITEM, num_bytes), as btrfs_lookup_data_extent() finds it */
static int get_extent(struct replay_ctx *rc, u64 bytenr, u64 num_bytes,
		      struct replay_extent **out)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	struct btrfs_key key = { bytenr, BTRFS_EXTENT_ITEM_KEY, num_bytes };
	struct btrfs_path path = { 0 };
	long idx = map_find(&rc->extent_map, bytenr, num_bytes);
	struct replay_extent *e;
	int ret;

	if (idx >= 0) {
		*out = &rc->extents[idx];
		return 0;
	}
	if (array_grow((void **)&rc->extents, rc->nr_extents, &rc->extents_cap,
		       sizeof(*rc->extents)))
		return -ENOMEM;
	e = &rc->extents[rc->nr_extents];
	memset(e, 0, sizeof(*e));
	e->bytenr = bytenr;
	e->num_bytes = num_bytes;
	ret = note_search(rc, &fs_info->extent_root, &key);
	if (ret)
		return ret;
	ret = btrfs_search_slot(fs_info, &fs_info->extent_root, &key, &path, BTRFS_IO_OTHER);
	if (ret == 0) {
		const struct btrfs_extent_item *ei;
		u32 size;

		ei = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		if (size < sizeof(*ei))
			ret = btrfs_fs_error(fs_info, -EUCLEAN,
				"corrupt leaf: root=2 block=%llu slot=%d, extent item %llu len %llu has size %u",
				(unsigned long long)path.nodes[0]->start, path.slots[0],
				(unsigned long long)bytenr, (unsigned long long)num_bytes, size);
		else {
			e->refs = btrfs_stack_extent_refs(ei);
			e->in_tree = true;
			ret = load_inline_drefs(e, (const u8 *)ei, size);
			if (!ret)
				ret = keyed_refs_follow(rc, &path, e);
		}
	} else if (ret > 0) {
		ret = 0;
	}
	btrfs_release_path(&path);
	if (!ret)
		ret = map_insert(&rc->extent_map, bytenr, num_bytes, rc->nr_extents);
	if (ret) {
		free(e->drefs);
		return ret;
	}
	rc->nr_extents++;
	*out = e;
	return 0;
}

/* A reference the subvolume gains or loses on an extent it already points at */
static int change_ref(struct replay_ctx *rc, const struct replay_inode *ri,
		      const struct file_extent *fe, bool add)
{
	u64 bytenr = btrfs_stack_file_extent_disk_bytenr(&fe->fi);
	u64 num_bytes = btrfs_stack_file_extent_disk_num_bytes(&fe->fi);
	struct replay_extent *e;
	int ret;

	ret = get_extent(rc, bytenr, num_bytes, &e);
	if (ret)
		return ret;
	/* the delayed ref would find no extent item and abort the commit */
	if ((!e->in_tree && !e->allocated) || (!add && e->refs == 0))
		return btrfs_fs_error(rc->fs_info, -EUCLEAN,
			"log replay: root %llu inode %llu file offset %llu points at extent %llu len %llu, which the extent tree %s",
			(unsigned long long)ri->root, (unsigned long long)ri->ino,
			(unsigned long long)fe->start, (unsigned long long)bytenr,
			(unsigned long long)num_bytes,
			e->in_tree || e->allocated ? "gives no reference left to drop" :
			"does not have");
	if (add)
		e->refs++;
	else
		e->refs--;
	return dref_change(e, ri->root, ri->ino, dref_offset(fe), add ? 1 : -1);
}

static int drop_error(struct replay_ctx *rc, const struct replay_inode *ri, u64 start,
		      u64 end)
{
	/* btrfs_drop_extents() returns -EOPNOTSUPP: the replay, and the mount, fail */
	return btrfs_fs_error(rc->fs_info, -EOPNOTSUPP,
		"log replay: dropping [%llu, %llu) of root %llu inode %llu would cut an inline extent",
		(unsigned long long)start, (unsigned long long)end,
		(unsigned long long)ri->root, (unsigned long long)ri->ino);
}

/*
 * btrfs_drop_extents()' search at @start: with modify_tree -1 (a
 * deletion's search) unless @start is at or past the inode's disk_i_size,
 * then a lookup, searched again with -1 at the first item it changes
 */
static int note_drop_search(struct replay_ctx *rc, const struct replay_inode *ri,
			    u64 start, bool del)
{
	struct btrfs_key key = { ri->ino, BTRFS_EXTENT_DATA_KEY, start };

	return del ? note_delete(rc, &rc->sv.root, &key) : note_search(rc, &rc->sv.root, &key);
}

/*
 * btrfs_drop_extents() on [@start, @end): the four cases of the kernel's
 * loop, with their reference changes (update_refs is set for subvolumes).
 */
static int drop_extents(struct replay_ctx *rc, struct replay_inode *ri, u64 start, u64 end)
{
	bool walk_ended = false;	/* an item ending at @end: the kernel's loop breaks */
	bool modify = !ri->has_disk_i_size || start < ri->disk_i_size;
	u32 i = 0;
	int ret = note_drop_search(rc, ri, start, modify);

	while (i < ri->nr && !ret) {
		struct file_extent *fe = &ri->fe[i];
		u64 offset = btrfs_stack_file_extent_offset(&fe->fi);

		/* the loop walks the items, into the next leaves */
		ret = note_subvol(rc, ri->ino, BTRFS_EXTENT_DATA_KEY, fe->start);
		if (ret)
			return ret;
		if (fe->start >= end)
			break;
		if (fe->end <= start) {
			i++;
			continue;
		}
		if (!modify) {
			/* found: "modify_tree = -1", the search again */
			modify = true;
			ret = note_drop_search(rc, ri, max_t(u64, fe->start, start), true);
			if (ret)
				return ret;
		}
		if (start > fe->start && end < fe->end) {
			/* split: the part after @end becomes a new item */
			struct file_extent tail = *fe;

			if (fe->is_inline)
				return drop_error(rc, ri, start, end);
			tail.start = end;
			tail.fi.offset = htole64(offset + (end - fe->start));
			tail.fi.num_bytes = htole64(fe->end - end);
			fe->fi.num_bytes = htole64(start - fe->start);
			fe->end = start;
			ret = insert_file_extent(ri, i + 1, &tail);
			if (!ret && has_extent(&tail))
				ret = change_ref(rc, ri, &tail, true);
			/* btrfs_duplicate_item(): the tail is a new item */
			if (!ret)
				ret = sim_result(rc, btrfs_tree_sim_insert(&rc->cur->ts,
					&(struct btrfs_key){ ri->ino, BTRFS_EXTENT_DATA_KEY, end },
					sizeof(struct btrfs_file_extent_item)));
			return ret;
		}
		if (start <= fe->start && end < fe->end) {
			/* the front goes, the item now starts at @end */
			if (fe->is_inline)
				return drop_error(rc, ri, start, end);
			fe->fi.offset = htole64(offset + (end - fe->start));
			fe->fi.num_bytes = htole64(fe->end - end);
			/* btrfs_set_item_key_safe(): the item keeps its place */
			ret = btrfs_tree_sim_set_key(&rc->cur->ts,
				&(struct btrfs_key){ ri->ino, BTRFS_EXTENT_DATA_KEY, fe->start },
				&(struct btrfs_key){ ri->ino, BTRFS_EXTENT_DATA_KEY, end });
			fe->start = end;
			return sim_result(rc, ret);
		}
		if (start > fe->start) {
			/* the back goes; the walk ends where the range does */
			bool last = fe->end == end;

			if (fe->is_inline)
				return drop_error(rc, ri, start, end);
			fe->fi.num_bytes = htole64(start - fe->start);
			fe->end = start;
			if (last)
				return 0;
			i++;
			continue;
		}
		/* wholly inside: the item and its reference go */
		if (fe->end == end)
			walk_ended = true;
		if (has_extent(fe)) {
			ret = change_ref(rc, ri, fe, false);
			if (ret)
				return ret;
		}
		ret = sim_result(rc, btrfs_tree_sim_delete(&rc->cur->ts,
			&(struct btrfs_key){ ri->ino, BTRFS_EXTENT_DATA_KEY, fe->start }, true));
		if (ret)
			return ret;
		memmove(fe, fe + 1, (ri->nr - i - 1) * sizeof(*fe));
		ri->nr--;
		if (walk_ended)
			return 0;
	}
	/* no item at or past @end stopped the walk: the next inode's does */
	return ret ? ret : note_drop_walk_end(rc, ri->ino);
}

/* Where an item starting at @start goes; *@exact when one starts there */
static u32 find_pos(const struct replay_inode *ri, u64 start, bool *exact)
{
	u32 lo = array_lower_bound(ri->fe, ri->nr, sizeof(*ri->fe),
				   offsetof(struct file_extent, start), start);

	*exact = lo < ri->nr && ri->fe[lo].start == start;
	return lo;
}

static struct btrfs_block_group *find_block_group(struct btrfs_fs_info *fs_info,
						  u64 bytenr, u64 len)
{
	struct btrfs_block_group *bg = btrfs_lookup_block_group(fs_info, bytenr);

	return bg && len <= bg->start + bg->length - bytenr ? bg : NULL;
}

/*
 * The extent item alloc_reserved_file_extent() inserts for a logged
 * extent: the item, one inline EXTENT_DATA_REF, and with simple quotas
 * the inline owner ref first.
 */
static u32 data_extent_item_size(const struct btrfs_fs_info *fs_info)
{
	u32 size = sizeof(struct btrfs_extent_item) + 1 + sizeof(struct btrfs_extent_data_ref);

	if (btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA))
		size += 1 + sizeof(__le64);
	return size;
}

/* MAX_CSUM_ITEMS(): the csums one EXTENT_CSUM item may hold */
static u32 max_csum_items(const struct btrfs_fs_info *fs_info)
{
	return (btrfs_leaf_data_size(fs_info->nodesize) - 2 * sizeof(struct btrfs_item)) /
	       fs_info->csum_size - 1;
}

/*
 * max_ordered_sum_bytes(): the bytes one struct btrfs_ordered_sum covers,
 * a 4 KiB page less its 32-byte header, in csums
 */
static u64 max_ordered_sum_bytes(const struct btrfs_fs_info *fs_info)
{
	return (u64)((4096 - 32) / fs_info->csum_size) * fs_info->sectorsize;
}

static int csum_error(struct replay_ctx *rc)
{
	return btrfs_fs_error(rc->fs_info, -EUCLEAN,
		"log replay: the csum tree's items in the model do not cover what the kernel's would");
}

static bool is_csum_key(const struct btrfs_key *key)
{
	return key->objectid == BTRFS_EXTENT_CSUM_OBJECTID && key->type == BTRFS_EXTENT_CSUM_KEY;
}

/*
 * The csum item btrfs_search_slot() finds for @key, or the one before it
 * in the leaf: 0 and *@item, or 1 (none, or not a csum item)
 */
static int csum_item_at(struct btrfs_tree_sim *ts, const struct btrfs_key *key,
			struct btrfs_sim_item *item)
{
	struct btrfs_sim_neighbours nb;
	int ret;

	ret = btrfs_tree_sim_neighbours(ts, key, &nb);
	if (ret < 0)
		return ret;
	if (ret == 1) {
		item->key = *key;
		ret = btrfs_tree_sim_lookup(ts, key, &item->size);
		return ret;
	}
	if (!nb.has_prev || !is_csum_key(&nb.prev.key))
		return 1;
	*item = nb.prev;
	return 0;
}

/*
 * btrfs_del_csums() on [@start, @start + @len), from the item at or
 * before the range's last byte down: items inside go (with the ones
 * before them in the leaf that are inside too, in one btrfs_del_items()),
 * an item around the range is split in two (btrfs_split_item()) and its
 * second half cut at the front, an item across an end is truncated
 * (truncate_one_csum(), btrfs_set_item_key_safe() for a front cut)
 */
static int del_csums(struct replay_ctx *rc, u64 start, u64 len)
{
	struct btrfs_tree_sim *ts = &rc->csum_sim;
	u64 ss = rc->fs_info->sectorsize, cs = rc->fs_info->csum_size, end = start + len;
	int guard, ret = 0;

	if (!cs || !len || end < start || !rc->fs_info->csum_root.found)
		return 0;
	for (guard = 0; guard < 1 << 20 && !ret; guard++) {
		struct btrfs_key key = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, end - 1 };
		struct btrfs_sim_item it;
		u64 csum_end;

		ret = note_csum(rc, key.offset, true) ?: csum_item_at(ts, &key, &it);
		if (ret)
			return ret < 0 ? ret : 0;
		if (it.key.offset >= end)
			return 0;
		csum_end = it.key.offset + it.size / cs * ss;
		if (csum_end <= start)
			return 0;
		if (it.key.offset >= start && csum_end <= end) {
			struct btrfs_sim_item prev = it;
			bool first = it.key.offset == start;

			/* the items before it in the leaf that the range covers go with it */
			while (!ret && prev.key.offset > start) {
				struct btrfs_sim_neighbours nb;

				ret = btrfs_tree_sim_neighbours(ts, &prev.key, &nb);
				if (ret == 1) {
					key = prev.key;
					key.offset--;
					ret = btrfs_tree_sim_neighbours(ts, &key, &nb);
				}
				if (ret < 0)
					return ret;
				if (!nb.has_prev || !is_csum_key(&nb.prev.key) ||
				    nb.prev.key.offset < start)
					break;
				ret = btrfs_tree_sim_result(ts, btrfs_tree_sim_delete(ts, &nb.prev.key, false));
				prev = nb.prev;
				first = prev.key.offset == start;
			}
			if (!ret)
				ret = btrfs_tree_sim_result(ts, btrfs_tree_sim_delete(ts, &it.key, true));
			if (ret || first)
				return ret;
		} else if (it.key.offset < start && csum_end > end) {
			key = it.key;
			key.offset = start;
			ret = btrfs_tree_sim_result(ts, btrfs_tree_sim_split_item(ts, &it.key, &key,
					(u32)((start - it.key.offset) / ss * cs)));
		} else if (it.key.offset < start) {
			ret = btrfs_tree_sim_result(ts, btrfs_tree_sim_truncate(ts, &it.key,
					(u32)((start - it.key.offset) / ss * cs)));
			return ret;
		} else {
			key = it.key;
			key.offset = end;
			ret = btrfs_tree_sim_truncate(ts, &it.key, (u32)((csum_end - end) / ss * cs));
			if (!ret)
				ret = btrfs_tree_sim_set_key(ts, &it.key, &key);
			ret = btrfs_tree_sim_result(ts, ret);
		}
	}
	if (!ret)
		ts->inexact = true;
	return ret;
}

/*
 * btrfs_csum_file_blocks() for the csums of [@start, +@len): from the
 * item found before each bytenr (btrfs_lookup_csum(): the csum is there,
 * or the item ends right there, -EFBIG, or neither), overwrite in place,
 * extend the item as far as the leaf, MAX_CSUM_ITEMS() and the range
 * allow (after a search that splits a leaf without room for one csum),
 * or insert an item sized for the range up to the next item.
 */
static int csum_file_blocks(struct replay_ctx *rc, u64 start, u64 len)
{
	struct btrfs_tree_sim *ts = &rc->csum_sim;
	const struct btrfs_fs_info *fs_info = rc->fs_info;
	u64 ss = fs_info->sectorsize, cs = fs_info->csum_size, done = 0;
	u64 max = max_csum_items(fs_info);
	int ret = 0;

	while (done < len && !ret) {
		u64 bytenr = start + done, left = (len - done) / ss, before = done;
		struct btrfs_key key = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, bytenr };
		struct btrfs_sim_neighbours nb;
		u64 n = 0, item_end = 0, next = (u64)-1, csum_offset, diff;
		bool csum_prev;

		ret = note_csum(rc, bytenr, false) ?: btrfs_tree_sim_neighbours(ts, &key, &nb);
		if (ret < 0)
			return ret;
		if (ret == 1) {
			/* a csum item starts here: its csums are overwritten */
			u32 size;

			ret = btrfs_tree_sim_lookup(ts, &key, &size);
			if (ret)
				return ret < 0 ? ret : csum_error(rc);
			done += (size / cs < left ? size / cs : left) * ss;
			if (done == before)
				break;
			continue;
		}
		csum_prev = nb.has_prev && nb.prev.key.objectid == BTRFS_EXTENT_CSUM_OBJECTID &&
			    nb.prev.key.type == BTRFS_EXTENT_CSUM_KEY;
		if (csum_prev) {
			n = nb.prev.size / cs;
			item_end = nb.prev.key.offset + n * ss;
		}
		if (csum_prev && bytenr < item_end) {
			done += ((item_end - bytenr) / ss < left ? (item_end - bytenr) / ss : left) * ss;
			if (done == before)
				break;
			continue;
		}
		if (csum_prev && bytenr == item_end && n < max && n * cs == nb.prev.size) {
			if (nb.leaf_free < cs) {
				/* search_for_extension: room for one csum, then look again */
				ret = btrfs_tree_sim_reserve(ts, &key, cs);
				if (ret == 0)
					ret = btrfs_tree_sim_neighbours(ts, &key, &nb);
				if (ret)
					return ret < 0 ? ret : csum_error(rc);
			}
			if (!nb.slot0 && nb.leaf_free >= cs) {
				csum_offset = n;
				diff = (csum_offset + left) * cs;
				if (diff > max * cs)
					diff = max * cs;
				diff -= nb.prev.size;
				if (diff > nb.leaf_free)
					diff = nb.leaf_free;
				diff = diff / cs * cs;
				ret = btrfs_tree_sim_extend(ts, &nb.prev.key, 0, (u32)diff);
				if (ret)
					return ret < 0 ? ret : csum_error(rc);
				done += diff / cs * ss;
				if (done == before)
					break;
				continue;
			}
		} else if (!(csum_prev && bytenr == item_end) && nb.has_next &&
			   nb.next.objectid == BTRFS_EXTENT_CSUM_OBJECTID &&
			   nb.next.type == BTRFS_EXTENT_CSUM_KEY) {
			/* no csum item ends here: the insert stops at the next one */
			next = nb.next.offset;
		}
		n = left;
		if (next != (u64)-1 && (next - bytenr) / ss < n)
			n = (next - bytenr) / ss;
		if (!n)
			n = 1;
		if (n > max)
			n = max;
		if (csum_prev && bytenr == item_end)
			n = 1;		/* found_next unset: one csum, then extended */
		ret = btrfs_tree_sim_result(ts, btrfs_tree_sim_insert(ts, &key, (u32)(n * cs)));
		done += n * ss;
	}
	/* an item the model cannot step over (sizes not in whole csums) */
	if (!ret && done < len)
		ts->inexact = true;
	return ret;
}

/*
 * replay_one_extent() for a regular extent: the log's csums of the range
 * the item uses (all of a compressed extent), by
 * btrfs_lookup_csums_list(): per log csum item, in pieces of
 * max_ordered_sum_bytes(); each deleted from the csum tree, then inserted
 */
static int replay_csums(struct replay_ctx *rc, const struct file_extent *fe)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	u64 ss = fs_info->sectorsize, cs = fs_info->csum_size;
	u64 start = btrfs_stack_file_extent_disk_bytenr(&fe->fi), end;
	struct btrfs_key key = { BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, 0 };
	struct btrfs_path path = { 0 };
	int ret;

	if (btrfs_stack_file_extent_type(&fe->fi) != BTRFS_FILE_EXTENT_REG || !cs ||
	    !fs_info->csum_root.found)
		return 0;
	if (btrfs_stack_file_extent_compression(&fe->fi)) {
		end = start + btrfs_stack_file_extent_disk_num_bytes(&fe->fi);
	} else {
		start += btrfs_stack_file_extent_offset(&fe->fi);
		end = start + btrfs_stack_file_extent_num_bytes(&fe->fi);
	}
	key.offset = start;
	ret = btrfs_search_slot(fs_info, rc->log, &key, &path, BTRFS_IO_OTHER);
	if (ret > 0 && path.slots[0] > 0) {
		struct btrfs_key prev;

		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0] - 1, &prev);
		if (prev.objectid == BTRFS_EXTENT_CSUM_OBJECTID &&
		    prev.type == BTRFS_EXTENT_CSUM_KEY &&
		    prev.offset + btrfs_raw_item_size(btrfs_item_nr(path.nodes[0],
				path.slots[0] - 1)) / cs * ss > start)
			path.slots[0]--;
	}
	while (ret >= 0) {
		u64 from, to;

		if (path.slots[0] >= (int)path.nodes[0]->nritems) {
			ret = btrfs_next_leaf(fs_info, rc->log, &path, BTRFS_IO_OTHER);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		if (key.objectid != BTRFS_EXTENT_CSUM_OBJECTID ||
		    key.type != BTRFS_EXTENT_CSUM_KEY || key.offset >= end) {
			ret = 0;
			break;
		}
		from = key.offset > start ? key.offset : start;
		to = key.offset + btrfs_raw_item_size(btrfs_item_nr(path.nodes[0],
				path.slots[0])) / cs * ss;
		if (to > end)
			to = end;
		path.slots[0]++;
		while (from < to && ret >= 0) {
			u64 piece = to - from < max_ordered_sum_bytes(fs_info) ?
				    to - from : max_ordered_sum_bytes(fs_info);

			ret = del_csums(rc, from, piece);
			if (!ret)
				ret = csum_file_blocks(rc, from, piece);
			from += piece;
		}
		if (ret < 0)
			break;
	}
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

/* replay_one_extent(): one EXTENT_DATA item of the log */
static int replay_one_extent(struct replay_ctx *rc, const struct btrfs_tree_block *leaf,
			     int slot, const struct btrfs_key *key)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	struct replay_inode *ri;
	struct file_extent fe;
	struct replay_extent *e;
	struct replay_dref *d;
	bool exact;
	u64 end, bytenr, num_bytes;
	u32 pos;
	int ret;

	ret = read_file_extent(fs_info, BTRFS_TREE_LOG_OBJECTID, leaf, slot, key, &fe);
	if (ret)
		return ret;
	end = fe.end;
	if (fe.is_inline) {
		u64 ss = fs_info->sectorsize;

		end = (fe.end + ss - 1) & ~(ss - 1);
	}
	ret = get_inode(rc, key->objectid, &ri);
	if (ret)
		return ret;
	pos = find_pos(ri, fe.start, &exact);
	/* the subvolume already has this exact item: nothing to do */
	if (!fe.is_inline && exact && !ri->fe[pos].is_inline &&
	    !memcmp(&ri->fe[pos].fi, &fe.fi, sizeof(fe.fi))) {
		rc->out->unchanged_items++;
		return 0;
	}
	ret = drop_extents(rc, ri, fe.start, end);
	if (ret)
		return ret;
	bytenr = btrfs_stack_file_extent_disk_bytenr(&fe.fi);
	if (!fe.is_inline && !bytenr &&
	    btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_NO_HOLES))
		return 0;
	pos = find_pos(ri, fe.start, &exact);
	ret = note_search(rc, &rc->sv.root, key) ?: insert_file_extent(ri, pos, &fe);
	if (!ret)
		ret = sim_result(rc, btrfs_tree_sim_insert(&rc->cur->ts, key,
				btrfs_raw_item_size(btrfs_item_nr(leaf, slot))));
	if (ret || !has_extent(&fe))
		return ret;
	rc->out->extent_items++;
	num_bytes = btrfs_stack_file_extent_disk_num_bytes(&fe.fi);
	ret = get_extent(rc, bytenr, num_bytes, &e);
	if (ret)
		return ret;
	if (e->in_tree || e->allocated) {
		/* btrfs_lookup_data_extent() found it: one more reference */
		e->refs++;
		rc->out->refs_added++;
		ret = dref_change(e, rc->subvol, key->objectid, dref_offset(&fe), 1);
		return ret ? ret : replay_csums(rc, &fe);
	}
	/*
	 * btrfs_alloc_logged_file_extent(): no block group is -EINVAL (the
	 * mount estimate's replay runs without them loaded: not checked)
	 */
	if (fs_info->nr_block_groups && !find_block_group(fs_info, bytenr, num_bytes))
		return btrfs_fs_error(fs_info, -EINVAL,
			"log tree of root %llu: leaf %llu slot %d: extent %llu len %llu of inode %llu lies in no block group",
			(unsigned long long)rc->subvol, (unsigned long long)leaf->start, slot,
			(unsigned long long)bytenr, (unsigned long long)num_bytes,
			(unsigned long long)key->objectid);
	/*
	 * __exclude_logged_extent() caches the block group first (on a mixed
	 * filesystem btrfs_exclude_logged_extents() did at the pin walk)
	 */
	if (!btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS)) {
		ret = note_cache_bg(rc, bytenr);
		if (ret)
			return ret;
	}
	e->allocated = true;
	e->refs = 1;
	ret = add_dref(e, rc->subvol, key->objectid, dref_offset(&fe), &d);
	if (ret)
		return ret;
	d->count = 1;
	d->is_inline = true;
	/* alloc_reserved_file_extent() inserts the item now, not at the commit */
	ret = btrfs_tree_sim_insert(&rc->extent_sim,
				    &(struct btrfs_key){ bytenr, BTRFS_EXTENT_ITEM_KEY, num_bytes },
				    data_extent_item_size(fs_info));
	ret = btrfs_tree_sim_result(&rc->extent_sim, ret);
	return ret ? ret : replay_csums(rc, &fe);
}

/*
 * The i_size the inode has once overwrite_item() copied the logged inode
 * item: the logged one, unless the item was logged with generation 0 (to
 * say the inode exists) over an existing one, whose size then stays
 * except for a regular file logged with a size.
 */
static int replayed_i_size(struct replay_ctx *rc, u64 ino,
			   const struct btrfs_inode_item *logged, u64 *size)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	struct btrfs_key key = { ino, BTRFS_INODE_ITEM_KEY, 0 };
	struct btrfs_path path = { 0 };
	const struct btrfs_inode_item *cur;
	u32 item_size;
	int ret;

	*size = btrfs_stack_inode_size(logged);
	if (btrfs_stack_inode_generation(logged) != 0)
		return 0;
	ret = note_search(rc, &rc->sv.root, &key) ?:
	      btrfs_search_slot(fs_info, &rc->sv.root, &key, &path, BTRFS_IO_OTHER);
	if (ret == 0) {
		cur = btrfs_item_ptr(path.nodes[0], path.slots[0], &item_size);
		if (item_size != sizeof(*cur))
			ret = btrfs_fs_error(fs_info, -EUCLEAN,
				"corrupt leaf: root=%llu block=%llu slot=%d, invalid item size for inode %llu, have %u expect %zu",
				(unsigned long long)rc->subvol,
				(unsigned long long)path.nodes[0]->start, path.slots[0],
				(unsigned long long)ino, item_size, sizeof(*cur));
		else if (!(btrfs_mode_is(btrfs_stack_inode_mode(logged), BTRFS_S_IFREG) &&
			   btrfs_mode_is(btrfs_stack_inode_mode(cur), BTRFS_S_IFREG) &&
			   *size != 0))
			*size = btrfs_stack_inode_size(cur);
	}
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

/*
 * Whether the subvolume's item at @key has the bytes of the log's item at
 * @slot: overwrite_item() leaves an identical item alone, and otherwise
 * calls btrfs_insert_empty_item(), whose search splits a leaf without
 * room for a new item of that size even though the key exists.  The
 * subvolume's bytes are the image's (an item the replay rewrote twice is
 * compared with its first bytes).  0 differ or absent, 1 equal.
 */
static int same_as_subvol(struct replay_ctx *rc, const struct btrfs_key *key,
			  const struct btrfs_tree_block *leaf, int slot)
{
	struct btrfs_path path = { 0 };
	const void *log_item, *item;
	u32 log_size, size;
	int ret;

	log_item = btrfs_item_ptr(leaf, slot, &log_size);
	ret = btrfs_search_slot(rc->fs_info, &rc->sv.root, key, &path, BTRFS_IO_OTHER);
	if (ret == 0) {
		item = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		ret = size == log_size && !memcmp(item, log_item, size);
	} else if (ret > 0) {
		ret = 0;
	}
	btrfs_release_path(&path);
	return ret;
}

/*
 * overwrite_item(): nothing for an identical item, else an insert (the
 * split happens even when the key exists, then -EEXIST); an item of
 * another size then grows (btrfs_extend_item(), in the room the search
 * made) or shrinks (btrfs_truncate_item()) to the logged size
 */
static int overwrite_item(struct replay_ctx *rc, const struct btrfs_key *key,
			  const struct btrfs_tree_block *leaf, int slot)
{
	struct btrfs_tree_sim *ts = &rc->cur->ts;
	u32 size = btrfs_raw_item_size(btrfs_item_nr(leaf, slot)), cur = 0;
	int ret;

	ret = note_search(rc, &rc->sv.root, key) ?: btrfs_tree_sim_lookup(ts, key, &cur);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		int same = same_as_subvol(rc, key, leaf, slot);

		if (same)
			return same < 0 ? same : 0;
	}
	ret = btrfs_tree_sim_insert(ts, key, size);
	if (ret == 1 && size > cur)
		ret = btrfs_tree_sim_extend(ts, key, 0, size - cur);
	else if (ret == 1)
		ret = btrfs_tree_sim_truncate(ts, key, size);
	return btrfs_tree_sim_result(ts, ret);
}

/*
 * link_to_fixup_dir(): an item (TREE_LOG_FIXUP, ORPHAN_ITEM, ino) of size
 * 0 that fixup_inode_link_counts() deletes after the last stage; a new
 * one raises the inode's link count, and btrfs_update_inode() (direct
 * while the log is recovering) copies the inode item's leaf
 */
static int link_to_fixup_dir(struct replay_ctx *rc, u64 ino)
{
	struct subvol_sim *ss = rc->cur;
	int ret;

	ret = note_subvol(rc, BTRFS_TREE_LOG_FIXUP_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, ino) ?:
	      btrfs_tree_sim_insert(&ss->ts, &(struct btrfs_key){ BTRFS_TREE_LOG_FIXUP_OBJECTID,
				    BTRFS_ORPHAN_ITEM_KEY, ino }, 0);
	if (!ret)
		ret = btrfs_tree_sim_touch(&ss->ts, &(struct btrfs_key){ ino, BTRFS_INODE_ITEM_KEY, 0 });
	if (ret)
		return ret < 0 ? ret : 0;
	if (array_grow((void **)&ss->fixups, ss->nr_fixups, &ss->cap_fixups, sizeof(u64)))
		return -ENOMEM;
	ss->fixups[ss->nr_fixups++] = ino;
	return 0;
}

/*
 * replay_xattr_deletes(): the subvolume's XATTR_ITEMs of @ino that the
 * log lacks are deleted.  The model only sees whether there are any: an
 * xattr item of the image's inode with no item of that key in the log
 * makes the result inexact (names that share a hash are not compared).
 */
static int replay_xattr_deletes(struct replay_ctx *rc, u64 ino)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	struct btrfs_key key = { ino, BTRFS_XATTR_ITEM_KEY, 0 };
	struct btrfs_path path = { 0 };
	int ret;

	ret = note_search(rc, &rc->sv.root, &key) ?:
	      btrfs_search_slot(fs_info, &rc->sv.root, &key, &path, BTRFS_IO_OTHER);
	while (ret >= 0) {
		struct btrfs_path log_path = { 0 };

		if (path.slots[0] >= (int)path.nodes[0]->nritems) {
			ret = btrfs_next_leaf(fs_info, &rc->sv.root, &path, BTRFS_IO_OTHER);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		ret = note_search(rc, &rc->sv.root, &key);
		if (ret)
			break;
		if (key.objectid != ino || key.type != BTRFS_XATTR_ITEM_KEY) {
			ret = 0;
			break;
		}
		ret = btrfs_search_slot(fs_info, rc->log, &key, &log_path, BTRFS_IO_OTHER);
		btrfs_release_path(&log_path);
		if (ret > 0)
			rc->cur->ts.inexact = true;
		path.slots[0]++;
	}
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

static bool is_orphan(const struct subvol_sim *ss, u64 ino)
{
	u32 i;

	for (i = 0; i < ss->nr_orphans; i++)
		if (ss->orphans[i] == ino)
			return true;
	return false;
}

/*
 * An item that loses one entry of @len bytes: btrfs_truncate_item() if
 * it holds more, else btrfs_del_item()
 */
static int remove_entry(struct replay_ctx *rc, const struct btrfs_key *key, u32 len)
{
	struct btrfs_tree_sim *ts = &rc->cur->ts;
	u32 size;
	int ret;

	ret = note_delete(rc, &rc->sv.root, key) ?: btrfs_tree_sim_lookup(ts, key, &size);
	if (ret == 0 && size > len)
		ret = btrfs_tree_sim_truncate(ts, key, size - len);
	else if (ret == 0)
		ret = btrfs_tree_sim_delete(ts, key, true);
	return sim_result(rc, ret);
}

/*
 * Whether the log has the inode item of @ino, and whether it has the
 * DIR_INDEX (@dir, @index) with @name: 1 yes, 0 no
 */
static int in_log(struct replay_ctx *rc, const struct btrfs_key *key, const char *name,
		  u32 name_len)
{
	struct btrfs_path path = { 0 };
	int ret;

	ret = btrfs_search_slot(rc->fs_info, rc->log, key, &path, BTRFS_IO_OTHER);
	if (ret == 0 && name) {
		const struct btrfs_dir_item *di;
		u32 size;

		di = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		ret = size >= sizeof(*di) + name_len &&
		      btrfs_stack_dir_name_len(di) == name_len &&
		      !memcmp(di + 1, name, name_len) ? 0 : 1;
	}
	btrfs_release_path(&path);
	return ret < 0 ? ret : !ret;
}

/*
 * check_item_in_log() for one DIR_INDEX of the image that the log lacks:
 * the inode goes to the fixup dir, then unlink_inode_for_log_replay():
 * the DIR_ITEM, the INODE_REF (both lose the name, or go), and the
 * DIR_INDEX through the delayed items run at once.  An inode the log does
 * not have, left with no name, becomes an orphan at the fixup.
 */
static int delete_dir_entry(struct replay_ctx *rc, u64 dir, u64 index,
			    const struct btrfs_dir_item *di, u32 size, u32 *names_gone)
{
	struct subvol_sim *ss = rc->cur;
	u32 len = btrfs_stack_dir_name_len(di);
	const char *name = (const char *)(di + 1);
	u64 ino = le64toh(di->location.objectid);
	int ret;

	if (size < sizeof(*di) + len || di->location.type != BTRFS_INODE_ITEM_KEY) {
		/* a subvolume's link, or a short item: not followed */
		ss->ts.inexact = true;
		return 0;
	}
	/* check_item_in_log(): the inode is read, then linked to the fixup dir */
	ret = note_iget(rc, ino) ?: link_to_fixup_dir(rc, ino);
	if (!ret)
		ret = remove_entry(rc, &(struct btrfs_key){ dir, BTRFS_DIR_ITEM_KEY,
				   btrfs_name_hash(name, len) }, sizeof(*di) + len);
	if (!ret) {
		struct btrfs_key ref = { ino, BTRFS_INODE_REF_KEY, dir };

		ret = note_search(rc, &rc->sv.root, &ref);
		if (ret)
			return ret;
		if (btrfs_tree_sim_lookup(&ss->ts, &ref, NULL) == 0)
			ret = remove_entry(rc, &ref, sizeof(struct btrfs_inode_ref) + len);
		else
			ss->ts.inexact = true;	/* an INODE_EXTREF */
	}
	/* __btrfs_unlink_inode() ends with btrfs_update_inode() of the directory */
	if (!ret)
		ret = btrfs_tree_sim_touch(&ss->ts, &(struct btrfs_key){ dir, BTRFS_INODE_ITEM_KEY, 0 });
	/* the delayed item's deletion: btrfs_delete_delayed_items() */
	if (!ret)
		ret = note_delete(rc, &rc->sv.root,
				  &(struct btrfs_key){ dir, BTRFS_DIR_INDEX_KEY, index });
	if (!ret)
		ret = sim_result(rc, btrfs_tree_sim_delete(&ss->ts,
			&(struct btrfs_key){ dir, BTRFS_DIR_INDEX_KEY, index }, true));
	if (ret)
		return ret;
	(*names_gone)++;
	return 0;
}

/* An inode whose every image name replay_dir_deletes() took, not in the log */
static int note_orphan(struct replay_ctx *rc, u64 ino, u32 names_gone)
{
	struct subvol_sim *ss = rc->cur;
	struct btrfs_key key = { ino, BTRFS_INODE_ITEM_KEY, 0 };
	struct btrfs_path path = { 0 };
	const struct btrfs_inode_item *ii;
	u32 size, nlink = 0;
	int ret;

	ret = in_log(rc, &key, NULL, 0);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = note_search(rc, &rc->sv.root, &key) ?:
	      btrfs_search_slot(rc->fs_info, &rc->sv.root, &key, &path, BTRFS_IO_OTHER);
	if (ret == 0) {
		ii = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		if (size >= sizeof(*ii))
			nlink = btrfs_stack_inode_nlink(ii);
	}
	btrfs_release_path(&path);
	if (ret < 0)
		return ret;
	if (nlink > names_gone || is_orphan(ss, ino))
		return 0;
	if (array_grow((void **)&ss->orphans, ss->nr_orphans, &ss->cap_orphans, sizeof(u64)))
		return -ENOMEM;
	ss->orphans[ss->nr_orphans++] = ino;
	return 0;
}

/* The image's DIR_INDEX items of @dir in [@start, @end] that the log lacks go */
static int delete_range(struct replay_ctx *rc, u64 dir, u64 start, u64 end)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	struct btrfs_key key = { dir, BTRFS_DIR_INDEX_KEY, start };
	struct btrfs_path path = { 0 };
	int ret;

	ret = note_search(rc, &rc->sv.root, &key) ?:
	      btrfs_search_slot(fs_info, &rc->sv.root, &key, &path, BTRFS_IO_OTHER);
	while (ret >= 0) {
		const struct btrfs_dir_item *di;
		u32 size, gone = 0;

		if (path.slots[0] >= (int)path.nodes[0]->nritems) {
			ret = btrfs_next_leaf(fs_info, &rc->sv.root, &path, BTRFS_IO_OTHER);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		ret = note_search(rc, &rc->sv.root, &key);
		if (ret)
			break;
		if (key.objectid != dir || key.type != BTRFS_DIR_INDEX_KEY || key.offset > end) {
			ret = 0;
			break;
		}
		di = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		path.slots[0]++;
		if (size < sizeof(*di)) {
			rc->cur->ts.inexact = true;
			continue;
		}
		ret = in_log(rc, &key, (const char *)(di + 1),
			     size >= sizeof(*di) + btrfs_stack_dir_name_len(di) ?
			     btrfs_stack_dir_name_len(di) : 0);
		if (ret)
			continue;
		ret = delete_dir_entry(rc, dir, key.offset, di, size, &gone);
		if (!ret && gone)
			ret = note_orphan(rc, le64toh(di->location.objectid), gone);
		if (ret)
			break;
	}
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

/*
 * replay_dir_deletes() before a logged directory's inode item goes in:
 * the log's DIR_LOG_INDEX items (offset start, item: end) name the index
 * ranges it is authoritative for; a directory the image lacks has nothing
 * to delete.  Each image name is unlinked by itself, so an inode with
 * several of them is counted once per name (note_orphan() compares the
 * names of each entry with the image's link count).
 */
static int replay_dir_deletes(struct replay_ctx *rc, u64 dir)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	struct btrfs_key key = { dir, BTRFS_INODE_ITEM_KEY, 0 };
	struct btrfs_path path = { 0 };
	int ret;

	ret = note_search(rc, &rc->sv.root, &key) ?:
	      btrfs_search_slot(fs_info, &rc->sv.root, &key, &path, BTRFS_IO_OTHER);
	btrfs_release_path(&path);
	if (ret)
		return ret < 0 ? ret : 0;
	key = (struct btrfs_key){ dir, BTRFS_DIR_LOG_INDEX_KEY, 0 };
	ret = btrfs_search_slot(fs_info, rc->log, &key, &path, BTRFS_IO_OTHER);
	while (ret >= 0) {
		const __le64 *end;
		__le64 last;
		u32 size;

		if (path.slots[0] >= (int)path.nodes[0]->nritems) {
			ret = btrfs_next_leaf(fs_info, rc->log, &path, BTRFS_IO_OTHER);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		if (key.objectid != dir || key.type != BTRFS_DIR_LOG_INDEX_KEY) {
			ret = 0;
			break;
		}
		end = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		path.slots[0]++;
		if (size < sizeof(*end)) {
			rc->cur->ts.inexact = true;
			continue;
		}
		/* struct btrfs_dir_log_item: one __le64, at any alignment */
		memcpy(&last, end, sizeof(last));
		ret = delete_range(rc, dir, key.offset, le64toh(last));
		if (ret)
			break;
	}
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

/*
 * The inode stage: overwrite_item() inserts the inode item if the
 * subvolume lacks it (else it is rewritten in place, same size), a logged
 * regular file is truncated to its size, then the inode is linked to the
 * fixup dir.
 */
static int replay_inode_item(struct replay_ctx *rc, const struct btrfs_inode_item *ii,
			     const struct btrfs_tree_block *leaf, int slot)
{
	struct btrfs_key key;
	struct replay_inode *ri;
	u64 ss = rc->fs_info->sectorsize;
	u64 size, ino;
	int ret;

	btrfs_item_key_to_cpu(leaf, slot, &key);
	ino = key.objectid;
	ret = replay_xattr_deletes(rc, ino);
	if (!ret && btrfs_mode_is(btrfs_stack_inode_mode(ii), BTRFS_S_IFDIR))
		ret = replay_dir_deletes(rc, ino);
	if (!ret)
		ret = overwrite_item(rc, &key, leaf, slot);
	if (ret)
		return ret;
	if (btrfs_mode_is(btrfs_stack_inode_mode(ii), BTRFS_S_IFREG)) {
		ret = replayed_i_size(rc, ino, ii, &size);
		if (!ret)
			ret = get_inode(rc, ino, &ri);
		if (ret)
			return ret;
		/* btrfs_iget() after overwrite_item(): disk_i_size is i_size */
		ri->disk_i_size = size;
		ri->has_disk_i_size = true;
		ret = drop_extents(rc, ri, (size + ss - 1) & ~(ss - 1), (u64)-1);
		if (ret)
			return ret;
	}
	return link_to_fixup_dir(rc, ino);
}

static int queue_dir_index(struct replay_ctx *rc, u64 dir, u64 index, u32 size)
{
	struct subvol_sim *ss = rc->cur;
	u32 i, seq = ss->nr_dix;

	for (i = 0; i < ss->nr_dix; i++)
		if (ss->dix[i].dir == dir) {
			seq = ss->dix[i].seq;
			break;
		}
	if (array_grow((void **)&ss->dix, ss->nr_dix, &ss->cap_dix, sizeof(*ss->dix)))
		return -ENOMEM;
	ss->dix[ss->nr_dix++] = (struct delayed_index){ dir, index, size, seq };
	return 0;
}

/*
 * add_inode_ref(): each name of a logged INODE_REF or INODE_EXTREF (an
 * extref's entries name their parent) whose dir index the subvolume lacks
 * is linked (btrfs_add_link(): the DIR_ITEM now, the DIR_INDEX as a
 * delayed item), then overwrite_item() copies the ref.
 * Conflicting names (__add_inode_ref() unlinks them), hash collisions and
 * a ref that changes size are not replayed: ->inexact.
 */
static int replay_inode_ref(struct replay_ctx *rc, const struct btrfs_tree_block *leaf,
			    int slot, const struct btrfs_key *key)
{
	struct btrfs_tree_sim *ts = &rc->cur->ts;
	const u8 *p;
	u32 size, pos = 0;
	int ret;

	/*
	 * add_inode_ref(): btrfs_iget_logging() of the directory (of an
	 * INODE_REF: its key offset; of an extref: per name, below), then of
	 * the inode.  The directory's is a read (btrfs_iget() has no
	 * transaction): its inode item is copied only when a name is linked
	 * (btrfs_add_link() updates it, below); a rewritten file's names are
	 * in place, and its leaf stays as it is
	 */
	ret = key->type == BTRFS_INODE_EXTREF_KEY ? 0 :
	      note_read(rc, key->offset, BTRFS_INODE_ITEM_KEY, 0);
	ret = ret ?: note_subvol(rc, key->objectid, BTRFS_INODE_ITEM_KEY, 0);
	if (ret)
		return ret;
	p = btrfs_item_ptr(leaf, slot, &size);
	for (;;) {
		bool ext = key->type == BTRFS_INODE_EXTREF_KEY;
		u32 head = ext ? sizeof(struct btrfs_inode_extref) : sizeof(struct btrfs_inode_ref);
		u64 index, parent = key->offset;
		const char *name;
		u32 len, di_size;

		if (pos + head > size)
			break;
		if (ext) {
			const struct btrfs_inode_extref *ref = (const void *)(p + pos);

			len = le16toh(ref->name_len);
			index = le64toh(ref->index);
			parent = le64toh(ref->parent_objectid);
		} else {
			const struct btrfs_inode_ref *ref = (const void *)(p + pos);

			len = le16toh(ref->name_len);
			index = le64toh(ref->index);
		}
		name = (const char *)(p + pos + head);
		di_size = sizeof(struct btrfs_dir_item) + len;
		if (pos + head + len > size)
			break;
		pos += head + len;
		/*
		 * inode_in_dir(): the dir index, then the dir item of the
		 * name, both looked up without a transaction (read, not
		 * copied: a name already there changes neither leaf);
		 * __add_inode_ref()'s lookups of a new name are read-only too
		 */
		ret = (ext ? note_read(rc, parent, BTRFS_INODE_ITEM_KEY, 0) : 0) ?:
		      note_read(rc, parent, BTRFS_DIR_INDEX_KEY, index) ?:
		      note_read(rc, parent, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(name, len)) ?:
		      btrfs_tree_sim_lookup(ts, &(struct btrfs_key){ parent,
					    BTRFS_DIR_INDEX_KEY, index }, NULL);
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;
		/*
		 * btrfs_add_link(): the DIR_ITEM's insert copies its path, and
		 * btrfs_update_inode() of the directory copies its inode
		 * item's at the commit (the delayed inode's COW search)
		 */
		ret = note_subvol(rc, parent, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(name, len)) ?:
		      note_subvol(rc, parent, BTRFS_INODE_ITEM_KEY, 0) ?:
		      sim_result(rc, btrfs_tree_sim_insert(ts, &(struct btrfs_key){ parent,
				BTRFS_DIR_ITEM_KEY, btrfs_name_hash(name, len) }, di_size));
		if (!ret)
			ret = queue_dir_index(rc, parent, index, di_size);
		if (ret)
			return ret;
	}
	return overwrite_item(rc, key, leaf, slot);
}

/*
 * insert_one_name() with btrfs_add_link(): the INODE_REF gets the name
 * (a new item of 10 + len, or the existing one grows by that after the
 * search made room), the DIR_ITEM goes in, the DIR_INDEX is queued as a
 * delayed item, and a non-directory goes to the fixup dir, which counts
 * its links again (so it is no orphan).  A name whose DIR_ITEM hash is
 * taken is not replayed (a conflict or a collision: ->inexact).
 */
static int insert_one_name(struct replay_ctx *rc, const struct btrfs_key *key,
			   const struct btrfs_dir_item *di, u32 size)
{
	struct subvol_sim *ss = rc->cur;
	u32 len = btrfs_stack_dir_name_len(di), i;
	const char *name = (const char *)(di + 1);
	u64 ino = le64toh(di->location.objectid);
	struct btrfs_key ref = { ino, BTRFS_INODE_REF_KEY, key->objectid };
	struct btrfs_key dkey;
	int ret;

	if (size < sizeof(*di) + len || di->location.type != BTRFS_INODE_ITEM_KEY) {
		ss->ts.inexact = true;
		return 0;
	}
	dkey = (struct btrfs_key){ key->objectid, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(name, len) };
	/* replay_one_name(): a name whose inode does not exist is skipped */
	ret = note_subvol(rc, ino, BTRFS_INODE_ITEM_KEY, 0) ?: note_search(rc, &rc->sv.root, &dkey) ?:
	      note_search(rc, &rc->sv.root, &ref);
	if (ret)
		return ret;
	ret = btrfs_tree_sim_lookup(&ss->ts, &(struct btrfs_key){ ino, BTRFS_INODE_ITEM_KEY, 0 },
				    NULL);
	if (ret)
		return ret < 0 ? ret : 0;
	ret = btrfs_tree_sim_lookup(&ss->ts, &dkey, NULL);
	if (ret <= 0) {
		if (!ret)
			ss->ts.inexact = true;
		return ret;
	}
	ret = btrfs_tree_sim_insert(&ss->ts, &ref, sizeof(struct btrfs_inode_ref) + len);
	if (ret == 1)
		ret = btrfs_tree_sim_extend(&ss->ts, &ref, 0, sizeof(struct btrfs_inode_ref) + len);
	if (!ret)
		ret = sim_result(rc, btrfs_tree_sim_insert(&ss->ts, &dkey, sizeof(*di) + len));
	if (!ret)
		ret = queue_dir_index(rc, key->objectid, key->offset, sizeof(*di) + len);
	if (!ret && di->type != BTRFS_FT_DIR)
		ret = link_to_fixup_dir(rc, ino);
	/* the name counts at the fixup: no orphan item for it */
	i = 0;
	while (!ret && i < ss->nr_orphans) {
		if (ss->orphans[i] == ino)
			ss->orphans[i] = ss->orphans[--ss->nr_orphans];
		else
			i++;
	}
	return ret < 0 ? ret : 0;
}

/*
 * The dir-index stage (replay_one_dir_item(), replay_one_name()): a
 * logged name the subvolume already has changes nothing; a new one whose
 * INODE_REF is in the log is linked in the last stage (replay_inode_ref());
 * any other goes in by insert_one_name() (a directory logged without the
 * inodes it names: renames, new links).
 */
static int replay_dir_index(struct replay_ctx *rc, const struct btrfs_tree_block *leaf,
			    int slot, const struct btrfs_key *key)
{
	const struct btrfs_dir_item *di;
	struct btrfs_path path = { 0 };
	struct btrfs_key ref_key;
	u32 size;
	int ret;

	/* replay_one_name(): btrfs_iget_logging() of the directory first */
	ret = note_subvol(rc, key->objectid, BTRFS_INODE_ITEM_KEY, 0) ?:
	      note_search(rc, &rc->sv.root, key) ?: btrfs_tree_sim_lookup(&rc->cur->ts, key, NULL);
	if (ret <= 0)
		return ret;
	di = btrfs_item_ptr(leaf, slot, &size);
	if (size < sizeof(*di)) {
		rc->cur->ts.inexact = true;
		return 0;
	}
	ref_key = (struct btrfs_key){ le64toh(di->location.objectid), BTRFS_INODE_REF_KEY,
				      key->objectid };
	ret = btrfs_search_slot(rc->fs_info, rc->log, &ref_key, &path, BTRFS_IO_OTHER);
	btrfs_release_path(&path);
	if (ret > 0)
		return insert_one_name(rc, key, di, size);
	return ret < 0 ? ret : 0;
}

/*
 * fixup_inode_link_counts(): the fixup items go, highest inode first; an
 * inode left with no link gets an orphan item (btrfs_insert_orphan_item()),
 * which stays: orphan cleanup does not run on a read-only mount
 */
static int replay_fixups(struct replay_ctx *rc)
{
	struct subvol_sim *ss = rc->cur;
	int ret = 0;

	if (ss->nr_fixups)
		qsort(ss->fixups, ss->nr_fixups, sizeof(*ss->fixups), array_cmp_u64);
	while (ss->nr_fixups && !ret) {
		u64 ino = ss->fixups[--ss->nr_fixups];

		ret = note_delete(rc, &rc->sv.root, &(struct btrfs_key){
				BTRFS_TREE_LOG_FIXUP_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, ino }) ?:
		      note_subvol(rc, ino, BTRFS_INODE_ITEM_KEY, 0);
		if (!ret)
			ret = sim_result(rc, btrfs_tree_sim_delete(&ss->ts,
			&(struct btrfs_key){ BTRFS_TREE_LOG_FIXUP_OBJECTID, BTRFS_ORPHAN_ITEM_KEY,
					     ino }, true));
		/* then btrfs_iget_logging() of the inode */
		if (!ret)
			ret = note_iget(rc, ino);
		if (!ret && is_orphan(ss, ino)) {
			ret = btrfs_tree_sim_insert(&ss->ts, &(struct btrfs_key){
				BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, ino }, 0);
			ret = ret < 0 ? ret : 0;
		}
	}
	return ret;
}

static int cmp_dir_index(const void *a, const void *b)
{
	const struct delayed_index *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * btrfs_run_delayed_items() at the commit: per delayed node, in the order
 * they were first used, its DIR_INDEX items by index, inserted in batches
 * of consecutive indexes (log replay allows no gap) that fit in a leaf
 * (btrfs_insert_delayed_item())
 */
static int run_delayed_items(struct replay_ctx *rc, struct subvol_sim *ss)
{
	u32 lds = btrfs_leaf_data_size(rc->fs_info->nodesize), i = 0, n;
	struct btrfs_key *keys;
	u32 *sizes;
	int ret = 0;

	if (!ss->nr_dix)
		return 0;
	qsort(ss->dix, ss->nr_dix, sizeof(*ss->dix), cmp_dir_index);
	keys = calloc(ss->nr_dix, sizeof(*keys));
	sizes = calloc(ss->nr_dix, sizeof(*sizes));
	if (!keys || !sizes)
		ret = -ENOMEM;
	while (!ret && i < ss->nr_dix) {
		u32 total = 0;

		for (n = 0; i + n < ss->nr_dix; n++) {
			const struct delayed_index *d = &ss->dix[i + n];

			if (n && (d->seq != ss->dix[i].seq || d->index != ss->dix[i + n - 1].index + 1 ||
				  total + d->size + sizeof(struct btrfs_item) > lds))
				break;
			total += d->size + sizeof(struct btrfs_item);
			keys[n] = (struct btrfs_key){ d->dir, BTRFS_DIR_INDEX_KEY, d->index };
			sizes[n] = d->size;
		}
		ret = note_search(rc, &ss->ts.root, &keys[0]) ?:
		      btrfs_tree_sim_insert_batch(&ss->ts, keys, sizes, n);
		if (ret == 1)
			ss->ts.inexact = true;
		ret = ret < 0 ? ret : 0;
		i += n;
	}
	free(keys);
	free(sizes);
	return ret;
}

/* replay_one_buffer(): the items of one log leaf, for the current stage */
static int replay_one_buffer(struct btrfs_fs_info *fs_info,
			     const struct btrfs_tree_block *leaf, void *ctx)
{
	struct replay_ctx *rc = ctx;
	u32 slot;
	int ret = 0;

	if (rc->stage == LOG_WALK_REPLAY_INODES)
		rc->out->log_leaves++;
	for (slot = 0; slot < leaf->nritems && !ret; slot++) {
		const struct btrfs_inode_item *ii = NULL;
		struct btrfs_key key;
		u32 size;

		btrfs_item_key_to_cpu(leaf, slot, &key);
		if (key.type == BTRFS_INODE_ITEM_KEY) {
			ii = btrfs_item_ptr(leaf, slot, &size);
			if (size != sizeof(*ii))
				return btrfs_fs_error(fs_info, -EUCLEAN,
					"corrupt leaf: root=%llu block=%llu slot=%u, invalid item size for inode %llu, have %u expect %zu",
					(unsigned long long)BTRFS_TREE_LOG_OBJECTID,
					(unsigned long long)leaf->start, slot,
					(unsigned long long)key.objectid, size, sizeof(*ii));
			/* every stage: an inode logged with no links is skipped whole */
			rc->ignore_cur_inode = btrfs_stack_inode_nlink(ii) == 0;
		}
		if (rc->ignore_cur_inode) {
			if (key.type == BTRFS_EXTENT_DATA_KEY && rc->stage == LOG_WALK_REPLAY_ALL)
				rc->out->ignored_items++;
			continue;
		}
		if (ii && rc->stage == LOG_WALK_REPLAY_INODES)
			ret = replay_inode_item(rc, ii, leaf, slot);
		else if (key.type == BTRFS_EXTENT_DATA_KEY && rc->stage == LOG_WALK_REPLAY_ALL)
			ret = replay_one_extent(rc, leaf, slot, &key);
		else if ((key.type == BTRFS_INODE_REF_KEY || key.type == BTRFS_INODE_EXTREF_KEY) &&
			 rc->stage == LOG_WALK_REPLAY_ALL)
			ret = replay_inode_ref(rc, leaf, slot, &key);
		else if (key.type == BTRFS_XATTR_ITEM_KEY && rc->stage == LOG_WALK_REPLAY_ALL)
			ret = overwrite_item(rc, &key, leaf, slot);
		else if (rc->stage == LOG_WALK_REPLAY_DIR_INDEX && key.type == BTRFS_DIR_INDEX_KEY)
			ret = replay_dir_index(rc, leaf, slot, &key);
	}
	return ret;
}

/*
 * A u32 at @member of item @slot's data, as the kernel's accessor reads
 * it: 0 when it lies past the block (check_setget_bounds() warns "bad eb
 * member start/end" and returns 0)
 */
static u32 item_u32_or_zero(struct btrfs_fs_info *fs_info, const struct btrfs_tree_block *eb,
			    int slot, u32 member, bool warn)
{
	const struct btrfs_item *item = btrfs_item_nr(eb, slot);
	unsigned long ptr = sizeof(struct btrfs_header) + (unsigned long)btrfs_raw_item_offset(item);
	unsigned long at = ptr + member;
	u32 v;

	if (at + sizeof(v) <= eb->len) {
		memcpy(&v, eb->data + at, sizeof(v));
		return le32toh(v);
	}
	if (warn)
		btrfs_fs_warn(fs_info, "bad eb member %s: ptr 0x%lx start %llu member offset %lu size %zu",
			      at > eb->len ? "start" : "end", ptr, (unsigned long long)eb->start,
			      at, sizeof(u32));
	return 0;
}

static bool replay_takes(int stage, u8 type)
{
	if (stage == LOG_WALK_REPLAY_INODES)
		return type == BTRFS_INODE_ITEM_KEY;
	if (stage == LOG_WALK_REPLAY_DIR_INDEX)
		return type == BTRFS_DIR_INDEX_KEY;
	return type == BTRFS_EXTENT_DATA_KEY || type == BTRFS_INODE_REF_KEY ||
	       type == BTRFS_INODE_EXTREF_KEY || type == BTRFS_XATTR_ITEM_KEY;
}

/* A block the pin walk pinned a second time (apply_held_pins()) */
static int pin_again(struct replay_ctx *rc, u64 bytenr)
{
	if (array_grow((void **)&rc->held, rc->nr_held, &rc->cap_held, sizeof(*rc->held)))
		return -ENOMEM;
	rc->held[rc->nr_held++] = bytenr;
	return 0;
}

/*
 * A node walk_log_tree() passes as a leaf (6.18, see btrfs_walk_log_tree()):
 * replay_one_buffer() reads its bytes as item headers (they lie inside the
 * block: a node's 33-byte pointers outspan the 25-byte headers read).  An
 * inode item's nlink read as 0 (past the block, or zero bytes) skips that
 * inode and the items after it, as for any inode logged with no links;
 * an item the replay would take from a node's bytes is not modelled.
 * The kernel warns in each stage; the accounting's first stage warns
 * once here (not the searches' second run of the replay).
 */
static int replay_held_node(struct btrfs_fs_info *fs_info,
			    const struct btrfs_tree_block *node, void *ctx)
{
	struct replay_ctx *rc = ctx;
	u32 slot;

	for (slot = 0; slot < node->nritems; slot++) {
		struct btrfs_key key;

		btrfs_item_key_to_cpu(node, slot, &key);
		if (key.type == BTRFS_INODE_ITEM_KEY)
			rc->ignore_cur_inode = !item_u32_or_zero(fs_info, node, slot,
				offsetof(struct btrfs_inode_item, nlink),
				rc->stage == LOG_WALK_REPLAY_INODES && !rc->hook.fn);
		if (rc->ignore_cur_inode || !replay_takes(rc->stage, key.type))
			continue;
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"log tree node %llu read as a leaf by the replay: slot %u (%llu %u %llu) would be replayed from a node's bytes, not modelled",
			(unsigned long long)node->start, slot, (unsigned long long)key.objectid,
			key.type, (unsigned long long)key.offset);
	}
	if (rc->stage != LOG_WALK_REPLAY_INODES)
		return 0;
	rc->out->held_nodes++;
	return pin_again(rc, node->start);
}

/*
 * A block walk_log_tree() reached again from another node: the pin walk
 * pinned it once more (its bytes stay pinned, apply_held_pins()), the
 * replay replays it again
 */
static int replay_block_again(struct btrfs_fs_info *fs_info,
			      const struct btrfs_tree_block *eb, void *ctx)
{
	struct replay_ctx *rc = ctx;

	(void)fs_info;
	if (rc->stage != LOG_WALK_REPLAY_INODES)
		return 0;
	return pin_again(rc, eb->start);
}

static int replay_log_tree(struct btrfs_fs_info *fs_info, u64 subvol,
			   const struct btrfs_root_ref *log, void *ctx)
{
	struct replay_ctx *rc = ctx;
	struct btrfs_error rec = { 0 };
	int ret;

	if (rc->stage == LOG_WALK_REPLAY_INODES)
		rc->out->log_trees++;
	/* the subvolume's error is the replay's only if it is not skipped */
	ret = btrfs_read_subvol(fs_info, &rec, subvol, &rc->sv);
	if (ret == -ENOENT) {
		/* btrfs_get_fs_root() -ENOENT: the subvolume is gone, skip its log */
		if (rc->stage == LOG_WALK_REPLAY_INODES)
			rc->out->skipped_trees++;
		return 0;
	}
	if (ret && rec.err)
		return btrfs_fs_error_at(fs_info, rec.err, &rec.loc, "%s", rec.msg);
	if (ret)
		return ret;
	rc->subvol = subvol;
	rc->log = log;
	ret = subvol_sim_get(rc);
	if (!ret)
		ret = btrfs_walk_log_tree(fs_info, log, replay_one_buffer, replay_held_node,
					  replay_block_again, rc);
	if (!ret && rc->stage == LOG_WALK_REPLAY_ALL)
		ret = replay_fixups(rc);
	return ret;
}

/*
 * The commit: delayed refs run (adds first), an extent left with no
 * reference is freed; btrfs_update_block_group() moves used, and a freed
 * extent of a read-only block group becomes read-only space when unpinned.
 */
static int apply_extents(struct replay_ctx *rc)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	u32 i;

	for (i = 0; i < rc->nr_extents; i++) {
		const struct replay_extent *e = &rc->extents[i];
		u64 alloc = e->allocated ? e->num_bytes : 0;
		u64 freed = (e->in_tree || e->allocated) && !e->refs ? e->num_bytes : 0;
		struct btrfs_block_group *bg;
		struct btrfs_space_info *sinfo;
		int factor;

		if (!alloc && !freed)
			continue;
		rc->out->extents_allocated += !!alloc;
		rc->out->bytes_allocated += alloc;
		rc->out->extents_freed += !!freed;
		rc->out->bytes_freed += freed;
		bg = find_block_group(fs_info, e->bytenr, e->num_bytes);
		if (!bg)
			return btrfs_fs_error(fs_info, -EUCLEAN,
				"log replay: extent %llu len %llu lies in no block group",
				(unsigned long long)e->bytenr, (unsigned long long)e->num_bytes);
		bg->used = bg->used + alloc - freed;
		sinfo = btrfs_find_space_info(fs_info, bg->flags);
		if (!sinfo)
			continue;
		factor = btrfs_bg_type_to_factor(bg->flags);
		sinfo->bytes_used = sinfo->bytes_used + alloc - freed;
		sinfo->disk_used = sinfo->disk_used + (alloc - freed) * factor;
		if (bg->ro)
			sinfo->bytes_readonly += freed;
	}
	return 0;
}

/*
 * One delayed ref head of a data extent at the commit
 * (btrfs_run_delayed_refs_for_head()): an extent left with no reference
 * loses its item and its csums (btrfs_del_csums()); else its refs run,
 * adds first (select_delayed_ref()).  An add searches the extent item
 * with room for a new inline ref (the leaf splits if it lacks those 29
 * bytes, even when the ref is there and only its count changes), then a
 * new ref grows the item (btrfs_extend_item()), or goes in a keyed
 * EXTENT_DATA_REF item when the item would reach
 * BTRFS_MAX_EXTENT_ITEM_SIZE or keyed refs follow it.  A drop that leaves
 * an inline ref at 0 shrinks the item (btrfs_truncate_item()); the drop
 * of a keyed ref or of one through a shared block is not followed.
 */
static int run_data_ref_head(struct replay_ctx *rc, struct replay_extent *e)
{
	struct btrfs_tree_sim *ts = &rc->extent_sim;
	const u32 iref = 1 + sizeof(struct btrfs_extent_data_ref);
	const u32 max_item = (btrfs_leaf_data_size(rc->fs_info->nodesize) >> 4) -
			     sizeof(struct btrfs_item);
	struct btrfs_key key = { e->bytenr, BTRFS_EXTENT_ITEM_KEY, e->num_bytes };
	int pass, ret = 0;
	u32 i;

	if (!e->in_tree && !e->allocated)
		return 0;
	if (!e->refs) {
		/* __btrfs_free_extent(): the item, then the extent's csums */
		ret = btrfs_tree_sim_result(ts, btrfs_tree_sim_delete(ts, &key, true));
		return ret ? ret : del_csums(rc, e->bytenr, e->num_bytes);
	}
	for (pass = 0; pass < 2 && !ret; pass++) {
		for (i = 0; i < e->nr_drefs && !ret; i++) {
			struct replay_dref *d = &e->drefs[i];
			struct btrfs_key kkey = { e->bytenr, BTRFS_EXTENT_DATA_REF_KEY,
						  hash_extent_data_ref(d->root, d->owner, d->offset) };
			u32 size = 0;

			if (pass == 0 && d->delta > 0) {
				if (d->is_inline) {
					ret = btrfs_tree_sim_extend(ts, &key, iref, 0);
					ret = btrfs_tree_sim_result(ts, ret);
					continue;
				}
				ret = btrfs_tree_sim_lookup(ts, &key, &size);
				if (ret)
					return btrfs_tree_sim_result(ts, ret);
				if (btrfs_tree_sim_lookup(ts, &kkey, NULL) == 0 || e->keyed_after ||
				    size + iref >= max_item) {
					/* insert_extent_backref(): the keyed item */
					ret = btrfs_tree_sim_insert(ts, &kkey,
						sizeof(struct btrfs_extent_data_ref));
					ret = ret == 1 ? 0 : btrfs_tree_sim_result(ts, ret);
					e->keyed_after = true;
					continue;
				}
				ret = btrfs_tree_sim_result(ts, btrfs_tree_sim_extend(ts, &key, iref, iref));
				d->is_inline = true;
				d->count = 0;
			} else if (pass == 1 && d->delta < 0) {
				if (!d->is_inline) {
					/* a keyed ref, or one through a shared block: not followed */
					ts->inexact = true;
					continue;
				}
				if ((int64_t)d->count + d->delta > 0)
					continue;
				ret = btrfs_tree_sim_lookup(ts, &key, &size);
				if (!ret && size >= iref)
					ret = btrfs_tree_sim_truncate(ts, &key, size - iref);
				ret = btrfs_tree_sim_result(ts, ret);
			}
		}
	}
	return ret;
}

/* Read observer of the replay's walks: every block met is taken */
static int note_seen(void *ctx, u64 bytenr)
{
	struct replay_ctx *rc = ctx;

	if (map_find(&rc->seen, bytenr, 0) < 0 && map_insert(&rc->seen, bytenr, 0, 0))
		return -ENOMEM;
	return rc->prev_observer.fn ? rc->prev_observer.fn(rc->prev_observer.ctx, bytenr) : 0;
}

static bool place_taken(void *ctx, u64 bytenr)
{
	const struct replay_ctx *rc = ctx;

	return map_find(&rc->seen, bytenr, 0) >= 0;
}

/*
 * The commit (transaction.c's model): the heads are the data extents the
 * replay changed, the trees it touched the subvolume trees, the csum tree
 * and the extent tree; a data head runs its refs here.
 */
static int run_data_head(void *ctx, struct btrfs_commit *cm, u32 arg)
{
	struct replay_ctx *rc = ctx;
	struct replay_extent *e = &rc->extents[arg];
	int ret;

	ret = run_data_ref_head(rc, e);
	if (!ret && !e->refs)
		ret = btrfs_commit_free_space_change(cm, e->bytenr, e->num_bytes, true);
	return ret;
}

static int queue_data_heads(struct replay_ctx *rc, struct btrfs_commit *cm)
{
	u32 i;
	int ret = 0;

	for (i = 0; i < rc->nr_extents && !ret; i++) {
		const struct replay_extent *e = &rc->extents[i];

		if (!e->in_tree && !e->allocated)
			continue;
		/* btrfs_alloc_logged_file_extent() took it out of the free space */
		if (e->allocated)
			ret = btrfs_commit_free_space_change(cm, e->bytenr, e->num_bytes, false);
		if (!ret)
			ret = btrfs_commit_queue_head(cm, e->bytenr, i);
	}
	return ret;
}

static int commit_replay(struct replay_ctx *rc, struct btrfs_commit_result *res)
{
	struct btrfs_commit_feed feed = {
		.run_head = run_data_head, .place_taken = place_taken,
		.read_path = note_commit_path, .cache_bg = note_cache_bg, .ctx = rc,
		.extent = &rc->extent_sim, .nr_trees = rc->nr_subvol_sims + 1,
		.nr_subvols = rc->nr_subvol_sims,
	};
	struct btrfs_tree_sim **trees = calloc(feed.nr_trees, sizeof(*trees));
	u64 *subvols = calloc(feed.nr_subvols + 1, sizeof(*subvols));
	struct btrfs_commit *cm = NULL;
	u32 i;
	int ret = -ENOMEM;

	if (!trees || !subvols)
		goto out;
	trees[0] = &rc->csum_sim;
	for (i = 0; i < rc->nr_subvol_sims; i++) {
		trees[i + 1] = &rc->subvol_sims[i].ts;
		subvols[i] = rc->subvol_sims[i].subvol;
	}
	feed.trees = trees;
	feed.subvols = subvols;
	ret = btrfs_commit_start(rc->fs_info, &feed, &cm);
	if (!ret)
		ret = queue_data_heads(rc, cm);
	if (!ret)
		ret = btrfs_commit_run(cm, res);
	btrfs_commit_end(cm);
out:
	free(trees);
	free(subvols);
	return ret;
}

/* The node pushes, splits and balances of one tree's searches */
static void add_node_moves(struct btrfs_log_replay *out, const struct btrfs_tree_sim *ts)
{
	out->node_pushes += ts->node_pushes;
	out->node_splits += ts->node_splits;
	out->node_balances += ts->node_balances;
}

/* The extent tree through the commit; the csum tree's figures after it */
static int replay_extent_tree(struct replay_ctx *rc)
{
	struct btrfs_tree_sim *ts = &rc->extent_sim;
	const struct btrfs_tree_sim *cs = &rc->csum_sim;
	struct btrfs_commit_result res;
	int ret;

	ret = commit_replay(rc, &res);
	if (ret)
		return ret;
	if (res.inexact)
		ts->inexact = true;
	rc->out->csum_tree_blocks_added = cs->splits + cs->new_roots;
	rc->out->csum_tree_blocks_freed = cs->leaves_freed + cs->nodes_freed;
	add_node_moves(rc->out, cs);
	add_node_moves(rc->out, ts);
	rc->out->tree_model_inexact |= cs->inexact;
	rc->out->extent_tree_blocks_added = res.extent_gained;
	rc->out->extent_tree_blocks_freed = res.extent_freed;
	rc->out->tree_model_inexact |= ts->inexact;
	return 0;
}

/* The trees' blocks gained or lost, in the block group of the extent tree's root */
static int apply_metadata(struct replay_ctx *rc)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	const struct btrfs_log_replay *out = rc->out;
	u64 add = (out->extent_tree_blocks_added + out->subvol_blocks_added +
		   out->csum_tree_blocks_added) * fs_info->nodesize;
	u64 sub = (out->extent_tree_blocks_freed + out->subvol_blocks_freed +
		   out->csum_tree_blocks_freed) * fs_info->nodesize;
	struct btrfs_block_group *bg;
	struct btrfs_space_info *sinfo;
	int factor;

	if (add == sub)
		return 0;
	bg = find_block_group(fs_info, fs_info->extent_root.bytenr, fs_info->nodesize);
	if (!bg)
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"log replay: the extent tree root %llu lies in no block group",
			(unsigned long long)fs_info->extent_root.bytenr);
	bg->used = bg->used + add - sub;
	sinfo = btrfs_find_space_info(fs_info, bg->flags);
	if (!sinfo)
		return 0;
	factor = btrfs_bg_type_to_factor(bg->flags);
	sinfo->bytes_used = sinfo->bytes_used + add - sub;
	sinfo->disk_used = sinfo->disk_used + (add - sub) * factor;
	return 0;
}

/*
 * A node the walk passed as a leaf was pinned twice by the pin walk
 * (btrfs_pin_extent_for_log_replay() of the node, then of its "child"),
 * and so was a block reached from two nodes (6.18.44, 8 shared leaves of
 * tests/fuzz/log-shared-subtree.py: bytes_pinned 131072):
 * pin_down_extent() counts it twice, the commit's unpin_extent_range()
 * frees the range once, so its bytes stay pinned (6.18.44: metadata
 * bytes_pinned 16384 after the mount, 0 without the loop)
 */
static void apply_held_pins(struct replay_ctx *rc)
{
	struct btrfs_fs_info *fs_info = rc->fs_info;
	struct btrfs_block_group *bg;
	struct btrfs_space_info *sinfo;
	u32 i;

	for (i = 0; i < rc->nr_held; i++) {
		bg = find_block_group(fs_info, rc->held[i], fs_info->nodesize);
		sinfo = bg ? btrfs_find_space_info(fs_info, bg->flags) : NULL;
		if (sinfo)
			sinfo->bytes_pinned += fs_info->nodesize;
	}
}

static void free_ctx(struct replay_ctx *rc)
{
	u32 i;

	free(rc->held);
	for (i = 0; i < rc->nr_inodes; i++)
		free(rc->inodes[i].fe);
	free(rc->inodes);
	for (i = 0; i < rc->nr_extents; i++)
		free(rc->extents[i].drefs);
	free(rc->extents);
	btrfs_tree_sim_release(&rc->extent_sim);
	btrfs_tree_sim_release(&rc->csum_sim);
	for (i = 0; i < rc->nr_subvol_sims; i++) {
		btrfs_tree_sim_release(&rc->subvol_sims[i].ts);
		free(rc->subvol_sims[i].dix);
		free(rc->subvol_sims[i].fixups);
		free(rc->subvol_sims[i].orphans);
	}
	free(rc->subvol_sims);
	map_free(&rc->inode_map);
	map_free(&rc->extent_map);
	map_free(&rc->seen);
}

/*
 * The image's leaves @ts changed and the siblings its pushes read (a
 * sibling too full for the item is read and left: not copied), and
 * the sibling nodes an insert's node balancing read (and copied), and
 * the nodes a deletion's balance_level() copied or freed:
 * push_leaf_right() and push_leaf_left() read the sibling under the same
 * parent before they look at its free space, and split_leaf() tries the
 * left one only when nothing went right, so a split leaf's left
 * neighbour is read only then.  A split's new leaves are in memory.  The
 * image leaves and nodes freed were copied before, so read.  The kernel
 * read each of these once.
 */
static int note_touched_leaves(struct replay_ctx *rc, const struct btrfs_tree_sim *ts)
{
	u32 g, i;
	int ret = 0;

	for (g = 0; g < ts->nr_groups && !ret; g++) {
		const struct btrfs_sim_group *grp = &ts->groups[g];

		for (i = 0; i < grp->nr && !ret; i++) {
			const struct btrfs_sim_items_leaf *l = grp->leaves[i];

			if ((l->touched || l->sibling_read) && l->start)
				ret = rc->hook.leaf(rc->hook.ctx, l->start, l->touched);
		}
		if (!ret && grp->node_read && grp->node_start && rc->hook.node)
			ret = rc->hook.node(rc->hook.ctx, grp->node_start, 1, grp->node_cowed);
	}
	/* the same for the nodes above level 1 */
	for (i = 0; i < ts->nr_nodes && !ret && rc->hook.node; i++) {
		const struct btrfs_sim_node *n = &ts->nodes[i];

		if (n->node_read && n->start)
			ret = rc->hook.node(rc->hook.ctx, n->start, n->level, n->node_cowed);
	}
	/*
	 * the image leaves emptied and freed (btrfs_del_leaf()): copied
	 * first, so read, though no search of the image may lead there (a
	 * leaf that took a neighbour's items before it emptied)
	 */
	for (i = 0; i < ts->nr_freed_starts && !ret; i++)
		ret = rc->hook.leaf(rc->hook.ctx, ts->freed_starts[i], true);
	/* the image nodes balance_level() copied, then freed (read ahead before) */
	for (i = 0; i < ts->nr_freed_node_starts && !ret && rc->hook.node; i++)
		ret = rc->hook.node(rc->hook.ctx, ts->freed_node_starts[i],
				    ts->freed_node_levels[i], true);
	return ret;
}

static int note_touched(struct replay_ctx *rc)
{
	u32 i;
	int ret = 0;

	if (!rc->hook.leaf)
		return 0;
	for (i = 0; i < rc->nr_subvol_sims && !ret; i++)
		ret = note_touched_leaves(rc, &rc->subvol_sims[i].ts);
	if (!ret)
		ret = note_touched_leaves(rc, &rc->csum_sim);
	return ret ? ret : note_touched_leaves(rc, &rc->extent_sim);
}

/*
 * btrfs_recover_log_trees()'s three walks and the delayed items of the
 * commit, on @rc's copies of the trees; 0 or -errno
 */
static int replay_stages(struct btrfs_fs_info *fs_info, struct replay_ctx *rc)
{
	u32 i;
	int ret = 0;

	rc->out->log_root = btrfs_super_log_root(&fs_info->super);
	rc->out->present = rc->out->log_root != 0;
	if (!rc->out->present)
		return 0;
	/* btrfs_replay_log(): no writeable device, no mount */
	if (!fs_info->rw_devices)
		return btrfs_fs_error(fs_info, -EIO, "log replay required on RO media");
	btrfs_tree_sim_init(&rc->extent_sim, fs_info, &fs_info->extent_root);
	btrfs_tree_sim_init(&rc->csum_sim, fs_info, &fs_info->csum_root);
	/* the blocks met are taken: the log trees' are pinned (not in the extent tree) */
	rc->prev_observer = btrfs_set_read_observer(fs_info,
		(struct btrfs_read_observer){ note_seen, rc });
	for (rc->stage = 0; rc->stage < LOG_WALK_NR_STAGES && !ret; rc->stage++)
		ret = btrfs_for_each_log_tree(fs_info, replay_log_tree, rc);
	btrfs_set_read_observer(fs_info, rc->prev_observer);
	for (i = 0; i < rc->nr_subvol_sims && !ret; i++) {
		struct subvol_sim *ss = &rc->subvol_sims[i];

		ret = run_delayed_items(rc, ss);
		rc->out->subvol_blocks_added += ss->ts.splits + ss->ts.new_roots;
		rc->out->subvol_blocks_freed += ss->ts.leaves_freed + ss->ts.nodes_freed;
		add_node_moves(rc->out, &ss->ts);
		rc->out->tree_model_inexact |= ss->ts.inexact;
	}
	return ret;
}

int btrfs_replay_log_accounting(struct btrfs_fs_info *fs_info)
{
	struct btrfs_log_replay *out = &fs_info->log_replay;
	struct replay_ctx rc = { .fs_info = fs_info, .out = out };
	int ret;

	memset(out, 0, sizeof(*out));
	ret = replay_stages(fs_info, &rc);
	if (!ret && out->present)
		ret = replay_extent_tree(&rc);
	if (!ret && out->present)
		ret = apply_extents(&rc);
	if (!ret && out->present)
		ret = apply_metadata(&rc);
	if (!ret && out->present)
		apply_held_pins(&rc);
	free_ctx(&rc);
	return ret;
}

/*
 * The replay's searches, then its commit: btrfs_run_delayed_refs() puts
 * the METADATA_ITEM of every block the transaction allocated
 * (alloc_reserved_tree_block()) at the place find_free_extent() gave it,
 * the lowest free ones of the metadata block groups, into extent-tree
 * leaves no search of the replay read; the commit model's extent tree
 * marks them touched with the rest of what the runs change.
 */
int btrfs_replay_log_searches(struct btrfs_fs_info *fs_info, struct btrfs_log_search_hook hook)
{
	struct btrfs_log_replay scratch = { 0 };
	struct replay_ctx rc = { .fs_info = fs_info, .out = &scratch, .hook = hook };
	struct btrfs_commit_result res;
	int ret = replay_stages(fs_info, &rc);

	if (!ret && scratch.present)
		ret = commit_replay(&rc, &res);
	if (!ret)
		ret = note_touched(&rc);
	free_ctx(&rc);
	return ret;
}
