// SPDX-License-Identifier: GPL-2.0
/*
 * backref.c: the files that own a block group's data, and their paths.
 *
 * Mirrors two answers of the kernel's fs/btrfs/backref.c, for the files
 * an administrator would delete to empty a block group:
 * - iterate_extent_inodes() as BTRFS_IOC_LOGICAL_INO gives it, for the
 *   direct data refs only (EXTENT_DATA_REF: subvolume, inode): an extent
 *   reached through a shared leaf as well (SHARED_DATA_REF, after a
 *   snapshot COWed the leaf) or referred to by a second subvolume is
 *   counted as shared, not resolved further: deleting one file frees it
 *   only when the snapshots' copies go too;
 * - btrfs_is_data_extent_shared() for an extent only one subvolume refers
 *   to directly: shared when the leaf of a file extent item pointing to
 *   it is reached from another root as well, a snapshot that shares the
 *   leaf uncopied (no SHARED_DATA_REF: nothing was COWed since);
 * - btrfs_ref_to_path() as BTRFS_IOC_INO_PATHS gives it: inode.c's
 *   btrfs_inode_path() up to the subvolume's root directory, then the
 *   subvolume's ROOT_BACKREF up to the top level (what `btrfs subvolume
 *   list` shows as a path), so a path reads from the top level.
 * Behaviour reproduced: kernels 5.x-6.18 (item formats unchanged).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/backref.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/ctree-cow.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/fs.h"
#include "kernel-shared/inode.h"
#include "kernel-shared/tree-block.h"
#include "common/u64-index.h"

/* Past this many names a chain is a loop in a corrupted tree */
#define PATH_MAX_STEPS		1024

struct owner_ref {
	u64 root;
	u64 ino;
	u64 bytenr;
	u64 len;
	u64 offset;			/* file offset less the extent offset */
	u32 count;			/* file extent items of the ref */
};

struct owner_refs {
	struct owner_ref *r;
	size_t nr, alloc;
};

static int refs_add(struct owner_refs *refs, const struct btrfs_extent_data_ref *dr,
		    u64 bytenr, u64 len)
{
	if (refs->nr == refs->alloc) {
		size_t n = refs->alloc ? refs->alloc * 2 : 256;
		struct owner_ref *r = realloc(refs->r, n * sizeof(*r));

		if (!r)
			return -ENOMEM;
		refs->r = r;
		refs->alloc = n;
	}
	refs->r[refs->nr++] = (struct owner_ref){
		.root = btrfs_stack_extent_data_ref_root(dr),
		.ino = btrfs_stack_extent_data_ref_objectid(dr),
		.bytenr = bytenr,
		.len = len,
		.offset = btrfs_stack_extent_data_ref_offset(dr),
		.count = btrfs_stack_extent_data_ref_count(dr),
	};
	return 0;
}

/* One extent item's state while its keyed refs follow it */
struct extent_walk {
	u64 bytenr, len;
	u64 generation;			/* the transaction that wrote it */
	size_t first_ref;		/* its direct refs: refs->r[first_ref..] */
	u64 first_root;			/* of its first direct ref */
	bool direct, shared;		/* shared: a 2nd subvolume or a shared leaf */
	bool shared_leaf;		/* a SHARED_DATA_REF: a snapshot's leaf */
	u64 roots[BTRFS_BG_OWNERS_SHOWN + 1];	/* its direct refs' subvolumes */
	u32 nr_roots;
};

/* A direct ref: the file's, and whether a second subvolume shares the extent */
static int direct_ref(struct extent_walk *ew, const struct btrfs_extent_data_ref *dr,
		      struct owner_refs *refs)
{
	u64 root = btrfs_stack_extent_data_ref_root(dr);

	u32 i;

	if (ew->direct && root != ew->first_root)
		ew->shared = true;
	for (i = 0; i < ew->nr_roots && ew->roots[i] != root; i++)
		;
	if (i == ew->nr_roots && i < BTRFS_BG_OWNERS_SHOWN + 1)
		ew->roots[ew->nr_roots++] = root;
	if (!ew->direct)
		ew->first_root = root;
	ew->direct = true;
	return refs_add(refs, dr, ew->bytenr, ew->len);
}

/* A subvolume that holds a shared extent, once each */
static void note_shared_subvol(struct btrfs_bg_owners *owners, u64 root)
{
	u32 i;

	for (i = 0; i < owners->nr_shared_subvols; i++)
		if (owners->shared_subvols[i] == root)
			return;
	if (owners->nr_shared_subvols == BTRFS_BG_OWNERS_SHOWN)
		owners->more_shared_subvols = true;
	else
		owners->shared_subvols[owners->nr_shared_subvols++] = root;
}

/*
 * btrfs_is_data_extent_shared()'s walk up the tree for the extents only
 * one subvolume refers to directly: the subvolume read last, and per tree
 * block whether it is reached from another root (1) or not (0), its own
 * extent item or a block above it deciding (lookup_backref_shared_cache():
 * the answer of a block holds for every block below it, so the leaves of
 * one node cost one walk).
 */
struct share_check {
	struct btrfs_fs_info *fs_info;
	struct btrfs_error *err;	/* the first read error: the walk's reads name it */
	struct btrfs_subvol sv;
	bool have_sv;
	/* a block's answer is its own: one ref means one parent, whatever the root */
	struct u64_index blocks;
	struct btrfs_bg_owners *owners;
};

/*
 * Whether the leaf of @path is reached from another root: a block is when
 * its extent item has more than one ref (the snapshot's tree ref beside
 * ours, or after a COW of its parent the old parent's full backref); with
 * one ref its only holder is its parent in this path, so the walk goes up.
 * The root node never is (a snapshot has its own copy), nor a block
 * written after the subvolume's last snapshot (btrfs_block_can_be_shared(),
 * no read).
 */
static int path_shared(struct share_check *sc, const struct btrfs_path *path, bool *shared)
{
	const struct btrfs_tree_block *eb;
	int top, level, i;
	u64 refs, flags, cached;
	int ret;

	*shared = false;
	for (top = 0; top < BTRFS_MAX_LEVEL && path->nodes[top]; top++)
		;
	for (level = 0; level < top - 1; level++) {
		eb = path->nodes[level];
		if (u64_index_get(&sc->blocks, eb->start, &cached)) {
			*shared = cached;
			break;
		}
		if (!btrfs_block_can_be_shared(&sc->sv, eb, false))
			continue;
		ret = btrfs_read_block_extent_item(sc->fs_info, eb->start, eb->level, &refs,
						   &flags, BTRFS_IO_BACKREF);
		/* its searches record into the filesystem's record, not a caller's */
		if (ret < 0) {
			if (!sc->err->msg[0])
				*sc->err = sc->fs_info->err;
			return ret;
		}
		if (!ret && refs > 1) {
			*shared = true;
			level++;
			break;
		}
	}
	for (i = 0; i < level && i < top - 1; i++)
		if (u64_index_put(&sc->blocks, path->nodes[i]->start, *shared))
			return -ENOMEM;
	return 0;
}

/* The file extent item at the path points to @r's extent at @r's offset */
static bool item_of_ref(const struct btrfs_path *path, const struct owner_ref *r)
{
	const struct btrfs_file_extent_item *fi;
	struct btrfs_key key;
	u32 size;

	btrfs_item_key_to_cpu(path->nodes[0], path->slots[0], &key);
	fi = btrfs_item_ptr(path->nodes[0], path->slots[0], &size);
	return size >= sizeof(*fi) &&
	       btrfs_stack_file_extent_type(fi) != BTRFS_FILE_EXTENT_INLINE &&
	       btrfs_stack_file_extent_disk_bytenr(fi) == r->bytenr &&
	       key.offset - btrfs_stack_file_extent_offset(fi) == r->offset;
}

/*
 * The leaves of @r's file extent items (add_all_parents(): from the ref's
 * key on, the inode's EXTENT_DATA items that point to the extent at the
 * ref's offset, until count of them), each checked up to the root.
 */
static int ref_leaves_shared(struct share_check *sc, const struct owner_ref *r,
			     bool *shared)
{
	struct btrfs_path path = { .err = sc->err };
	struct btrfs_key key = { r->ino, BTRFS_EXTENT_DATA_KEY, r->offset };
	u32 found = 0;
	int ret;

	ret = btrfs_search_slot(sc->fs_info, &sc->sv.root, &key, &path, BTRFS_IO_BACKREF);
	while (ret >= 0 && found < r->count && !*shared) {
		if (path.slots[0] >= (int)path.nodes[0]->nritems) {
			ret = btrfs_next_leaf(sc->fs_info, &sc->sv.root, &path, BTRFS_IO_BACKREF);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		if (key.objectid != r->ino || key.type != BTRFS_EXTENT_DATA_KEY)
			break;
		if (item_of_ref(&path, r)) {
			found++;
			ret = path_shared(sc, &path, shared);
		}
		path.slots[0]++;
	}
	btrfs_release_path(&path);
	return ret < 0 ? ret : 0;
}

/*
 * An extent whose direct refs are all one subvolume's: shared when a
 * leaf holding one of its file extent items is.  One written after the
 * subvolume's last snapshot is in leaves COWed since: no snapshot holds
 * them (the data_extent_gen test of find_parent_nodes()), nothing is read.
 */
static int shared_through_leaf(struct share_check *sc, const struct extent_walk *ew,
			       const struct owner_refs *refs, bool *shared)
{
	struct btrfs_error err = { 0 };
	size_t i;
	int ret;

	*shared = false;
	if (!sc->have_sv || sc->sv.root.objectid != ew->first_root) {
		sc->have_sv = false;
		ret = btrfs_read_subvol(sc->fs_info, &err, ew->first_root, &sc->sv);
		/* no such subvolume: nothing to walk, as resolve_indirect_refs() skips it */
		if (ret == -ENOENT || ret == -EINVAL)
			return 0;
		if (ret) {
			*sc->err = err;
			return ret;
		}
		sc->have_sv = true;
	}
	if (ew->generation > sc->sv.last_snapshot)
		return 0;
	for (i = ew->first_ref; i < refs->nr && !*shared; i++) {
		ret = ref_leaves_shared(sc, &refs->r[i], shared);
		if (ret)
			return ret;
	}
	return 0;
}

static int extent_done(struct share_check *sc, struct extent_walk *ew,
		       const struct owner_refs *refs)
{
	struct btrfs_bg_owners *owners = sc->owners;
	bool through_leaf;
	u32 i;
	int ret;

	if (ew->len && ew->direct && !ew->shared) {
		ret = shared_through_leaf(sc, ew, refs, &through_leaf);
		if (ret)
			return ret;
		if (through_leaf)
			ew->shared = ew->shared_leaf = true;
	}
	if (ew->len && ew->shared) {
		owners->shared_bytes += ew->len;
		for (i = 0; i < ew->nr_roots; i++)
			note_shared_subvol(owners, ew->roots[i]);
		if (ew->nr_roots > BTRFS_BG_OWNERS_SHOWN)
			owners->more_shared_subvols = true;
		if (ew->shared_leaf)
			owners->shared_leaf = true;
	}
	memset(ew, 0, sizeof(*ew));
	ew->first_ref = refs->nr;
	return 0;
}

/* The inline refs of a data EXTENT_ITEM (btrfs_extent_inline_ref_size()) */
static int inline_data_refs(const u8 *p, u32 size, struct extent_walk *ew,
			    struct owner_refs *refs)
{
	u32 pos = sizeof(struct btrfs_extent_item);
	int ret;

	while (pos < size) {
		u8 type = p[pos];

		if (type == BTRFS_EXTENT_DATA_REF_KEY) {
			const struct btrfs_extent_data_ref *dr = (const void *)(p + pos + 1);

			if (pos + 1 + sizeof(*dr) > size)
				break;
			ret = direct_ref(ew, dr, refs);
			if (ret)
				return ret;
			pos += 1 + sizeof(*dr);
		} else if (type == BTRFS_SHARED_DATA_REF_KEY) {
			ew->shared = ew->shared_leaf = true;
			pos += sizeof(struct btrfs_extent_inline_ref) +
			       sizeof(struct btrfs_shared_data_ref);
		} else {
			/* EXTENT_OWNER_REF (simple quotas) and anything unknown: stop */
			pos += sizeof(struct btrfs_extent_inline_ref);
			if (type != BTRFS_EXTENT_OWNER_REF_KEY)
				break;
		}
	}
	return 0;
}

static int one_item(const struct btrfs_tree_block *leaf, int slot, struct extent_walk *ew,
		    struct owner_refs *refs, struct share_check *sc)
{
	struct btrfs_key key;
	const u8 *p;
	u32 size;
	int ret;

	btrfs_item_key_to_cpu(leaf, slot, &key);
	p = btrfs_item_ptr(leaf, slot, &size);
	if (key.type == BTRFS_EXTENT_ITEM_KEY) {
		ret = extent_done(sc, ew, refs);
		if (ret)
			return ret;
		if (size < sizeof(struct btrfs_extent_item) ||
		    !(btrfs_stack_extent_flags((const void *)p) & BTRFS_EXTENT_FLAG_DATA))
			return 0;
		ew->bytenr = key.objectid;
		ew->len = key.offset;
		ew->generation = btrfs_stack_extent_generation((const void *)p);
		return inline_data_refs(p, size, ew, refs);
	}
	if (key.objectid != ew->bytenr || !ew->len)
		return 0;
	if (key.type == BTRFS_SHARED_DATA_REF_KEY) {
		ew->shared = ew->shared_leaf = true;
	} else if (key.type == BTRFS_EXTENT_DATA_REF_KEY &&
		   size >= sizeof(struct btrfs_extent_data_ref)) {
		const struct btrfs_extent_data_ref *dr = (const void *)p;

		return direct_ref(ew, dr, refs);
	}
	return 0;
}

/* Every item of the extent tree with an objectid in [start, end); errors into @err */
static int collect_refs(struct btrfs_fs_info *fs_info, u64 start, u64 end,
			struct owner_refs *refs, struct btrfs_bg_owners *owners,
			struct btrfs_error *err)
{
	struct share_check sc = { .fs_info = fs_info, .err = err, .owners = owners };
	struct btrfs_path path = { .err = err };
	struct btrfs_key key = { .objectid = start };
	struct extent_walk ew = { 0 };
	int ret;

	ret = btrfs_search_slot(fs_info, &fs_info->extent_root, &key, &path, BTRFS_IO_OTHER);
	while (ret >= 0) {
		if (path.slots[0] >= (int)path.nodes[0]->nritems) {
			ret = btrfs_next_leaf(fs_info, &fs_info->extent_root, &path, BTRFS_IO_OTHER);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		if (key.objectid >= end) {
			ret = 1;
			break;
		}
		ret = one_item(path.nodes[0], path.slots[0], &ew, refs, &sc);
		if (ret)
			break;
		path.slots[0]++;
	}
	if (ret >= 0)
		ret = extent_done(&sc, &ew, refs);
	btrfs_release_path(&path);
	u64_index_free(&sc.blocks);
	return ret < 0 ? ret : 0;
}

/* Put "/@name" in front of the path built backwards from buf + *pos */
static bool prepend(char *buf, size_t *pos, const char *name, size_t len)
{
	if (len + 1 > *pos)
		return false;
	*pos -= len;
	memcpy(buf + *pos, name, len);
	buf[--*pos] = '/';
	return true;
}

/*
 * Subvolume @*root's name in its parent (its ROOT_BACKREF in the root
 * tree: key offset the parent subvolume, the item the directory there),
 * prepended; @*root and @*dirid become the parent and that directory.
 */
static int subvol_backref(struct btrfs_fs_info *fs_info, char *buf, size_t *pos, u64 *root,
			  u64 *dirid, struct btrfs_error *err)
{
	struct btrfs_root_ref tree = btrfs_tree_root_ref(fs_info);
	struct btrfs_key want = { .objectid = *root, .type = BTRFS_ROOT_BACKREF_KEY };
	struct btrfs_path path = { .err = err };
	struct btrfs_key key;
	const struct btrfs_disk_root_ref *rr;
	u32 size, len;
	int ret;

	/* 1 (no exact key: the offset is the parent's id) is a place, too */
	ret = btrfs_search_slot(fs_info, &tree, &want, &path, BTRFS_IO_OTHER);
	if (ret >= 0 && path.slots[0] >= (int)path.nodes[0]->nritems)
		ret = btrfs_next_leaf(fs_info, &tree, &path, BTRFS_IO_OTHER) ? -ENOENT : 0;
	if (ret >= 0) {
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		rr = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		len = size >= sizeof(*rr) ? btrfs_stack_root_ref_name_len(rr) : 0;
		ret = -ENOENT;
		if (key.objectid == *root && key.type == BTRFS_ROOT_BACKREF_KEY &&
		    size >= sizeof(*rr) && len <= size - sizeof(*rr) &&
		    prepend(buf, pos, (const char *)(rr + 1), len)) {
			*root = key.offset;
			*dirid = btrfs_stack_root_ref_dirid(rr);
			ret = 0;
		}
	}
	btrfs_release_path(&path);
	return ret ? -ENOENT : 0;
}

/*
 * btrfs_ref_to_path() from the top level: the path inside each subvolume
 * (inode.c's btrfs_inode_path()), then the subvolume's name in its
 * parent, up to the top level; "" when a name is missing.
 */
static void owner_path(struct btrfs_fs_info *fs_info, struct btrfs_data_owner *o)
{
	char buf[BTRFS_OWNER_PATH_MAX], part[BTRFS_OWNER_PATH_MAX];
	size_t pos = sizeof(buf) - 1;
	u64 root = o->root, ino = o->ino;
	struct btrfs_error err = { 0 };
	struct btrfs_subvol sv;
	int steps;

	buf[pos] = '\0';
	o->path[0] = '\0';
	for (steps = 0; steps < PATH_MAX_STEPS; steps++) {
		if (!btrfs_is_subvol_id(root) || btrfs_read_subvol(fs_info, &err, root, &sv) ||
		    btrfs_inode_path(fs_info, &sv, ino, part, sizeof(part)))
			return;
		/* part is "/a/b", or "/" for the subvolume's own directory */
		if (part[1] && !prepend(buf, &pos, part + 1, strlen(part + 1)))
			return;
		if (root == BTRFS_FS_TREE_OBJECTID)
			break;
		if (subvol_backref(fs_info, buf, &pos, &root, &ino, &err))
			return;
	}
	if (steps < PATH_MAX_STEPS) {
		const char *from = buf + pos + (buf[pos] == '/');

		memcpy(o->path, from, strlen(from) + 1);
	}
}

/* A subvolume's path from the top level: its root directory's; "" for the top level */
static void subvol_path(struct btrfs_fs_info *fs_info, u64 root, char *path)
{
	struct btrfs_data_owner o = { .root = root, .ino = BTRFS_FIRST_FREE_OBJECTID };

	owner_path(fs_info, &o);
	memcpy(path, o.path, sizeof(o.path));
}

static int cmp_file_extent(const void *a, const void *b)
{
	const struct owner_ref *x = a, *y = b;

	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

/* Keep @o among the largest: more bytes first, then the lower (root, ino) */
static void keep_top(struct btrfs_bg_owners *owners, const struct btrfs_data_owner *o)
{
	u32 i = owners->nr_top;

	if (i == BTRFS_BG_OWNERS_SHOWN) {
		if (o->bytes <= owners->top[i - 1].bytes)
			return;
		i--;
	} else {
		owners->nr_top++;
	}
	while (i > 0 && owners->top[i - 1].bytes < o->bytes) {
		owners->top[i] = owners->top[i - 1];
		i--;
	}
	owners->top[i] = *o;
}

/* Σ bytes per file, each extent once per file (a file may refer to it twice) */
static void sum_per_file(struct owner_refs *refs, struct btrfs_bg_owners *owners)
{
	struct btrfs_data_owner cur = { 0 };
	size_t i;

	qsort(refs->r, refs->nr, sizeof(*refs->r), cmp_file_extent);
	for (i = 0; i < refs->nr; i++) {
		const struct owner_ref *r = &refs->r[i];

		if (i && r->root == refs->r[i - 1].root && r->ino == refs->r[i - 1].ino) {
			if (r->bytenr != refs->r[i - 1].bytenr)
				cur.bytes += r->len;
			continue;
		}
		if (i)
			keep_top(owners, &cur);
		cur = (struct btrfs_data_owner){ .root = r->root, .ino = r->ino, .bytes = r->len };
		owners->nr_files++;
	}
	if (refs->nr)
		keep_top(owners, &cur);
}

int btrfs_bg_data_owners(struct btrfs_fs_info *fs_info, u64 start, u64 length,
			 struct btrfs_bg_owners *owners)
{
	struct owner_refs refs = { 0 };
	struct btrfs_error err = { 0 };
	u32 i;
	int ret;

	memset(owners, 0, sizeof(*owners));
	if (!fs_info->extent_root.found)
		return 0;
	ret = collect_refs(fs_info, start, start + length, &refs, owners, &err);
	if (ret == -ENOMEM) {
		free(refs.r);
		return ret;
	}
	if (ret) {
		/* not read, and why: a corrupt block is named with its field */
		memset(owners, 0, sizeof(*owners));
		snprintf(owners->error, sizeof(owners->error), "%s",
			 err.msg[0] ? err.msg : strerror(-ret));
	}
	if (!ret) {
		owners->read = true;
		sum_per_file(&refs, owners);
		for (i = 0; i < owners->nr_top; i++)
			owner_path(fs_info, &owners->top[i]);
		for (i = 0; i < owners->nr_shared_subvols; i++)
			subvol_path(fs_info, owners->shared_subvols[i], owners->shared_paths[i]);
	}
	free(refs.r);
	return 0;
}
