// SPDX-License-Identifier: GPL-2.0
/*
 * Path lookups in a subvolume, read-only: the subvolume root items
 * (btrfs_find_root() of root-tree.c), directory entries by name hash
 * (btrfs_lookup_dir_item() and btrfs_match_dir_item_name() of dir-item.c),
 * the crossing into a subvolume when an entry's location is a ROOT_ITEM
 * (btrfs_lookup_dentry() of inode.c), inode items, and the way back from an
 * inode to its subvolume's top through INODE_REF/INODE_EXTREF items (what
 * btrfs_ref_to_path() of backref.c does).  Symlinks are never followed:
 * their target is data of the link's own inode, which this reader leaves
 * alone.  Behaviour reproduced: on-disk format, unchanged since 3.x.
 *
 * Every length comes from the image and is checked against the item that
 * holds it before a byte is read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/ctree.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/inode.h"
#include "kernel-shared/tree-block.h"

/*
 * After a search that did not find its key the slot may be one past the
 * leaf's last item; move to the first item of the next leaf.  Returns 0,
 * 1 at the end of the tree, <0 on error.
 */
static int path_to_item(struct btrfs_fs_info *fs_info,
			const struct btrfs_root_ref *root, struct btrfs_path *path)
{
	int ret;

	while (path->slots[0] >= (int)path->nodes[0]->nritems) {
		ret = btrfs_next_leaf(fs_info, root, path, BTRFS_IO_OTHER);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Search the first item at or after (@objectid, @type, @offset) and return
 * 0 with its key when it has that objectid and type, 1 when there is none.
 */
static int search_first(struct btrfs_fs_info *fs_info,
			const struct btrfs_root_ref *root, u64 objectid, u8 type,
			u64 offset, struct btrfs_path *path, struct btrfs_key *found)
{
	struct btrfs_key key = { objectid, type, offset };
	int ret;

	ret = btrfs_search_slot(fs_info, root, &key, path, BTRFS_IO_OTHER);
	if (ret < 0)
		return ret;
	ret = path_to_item(fs_info, root, path);
	if (ret)
		return ret;
	btrfs_item_key_to_cpu(path->nodes[0], path->slots[0], found);
	if (found->objectid != objectid || found->type != type)
		return 1;
	return 0;
}

static int check_subvol_root(struct btrfs_error *err,
			     const struct btrfs_tree_block *leaf, int slot,
			     u64 subvol_id, struct btrfs_subvol *sv)
{
	const struct btrfs_root_item_head *ri;
	u32 size;

	ri = btrfs_item_ptr(leaf, slot, &size);
	if (size < sizeof(*ri))
		return btrfs_record_error(err, -EUCLEAN,
			"corrupt leaf: root=1 block=%llu slot=%d, root item of subvolume %llu has size %u, expect at least %zu",
			(unsigned long long)leaf->start, slot,
			(unsigned long long)subvol_id, size, sizeof(*ri));
	if (!btrfs_stack_root_refs(ri))
		return btrfs_record_error(err, -ENOENT,
			"subvolume %llu is deleted: its root item has no references left",
			(unsigned long long)subvol_id);
	sv->root.objectid = subvol_id;
	sv->root.bytenr = btrfs_root_bytenr(ri);
	sv->root.level = btrfs_root_level(ri);
	sv->root.generation = btrfs_root_generation(ri);
	sv->root.bytes_used = btrfs_root_bytes_used(ri);
	sv->root.found = true;
	sv->dirid = btrfs_stack_root_dirid(ri);
	sv->last_snapshot = btrfs_root_last_snapshot(ri);
	if (sv->root.level >= BTRFS_MAX_LEVEL || sv->dirid < BTRFS_FIRST_FREE_OBJECTID)
		return btrfs_record_error(err, -EUCLEAN,
			"root item of subvolume %llu: invalid level %u or root directory %llu",
			(unsigned long long)subvol_id, sv->root.level,
			(unsigned long long)sv->dirid);
	return 0;
}

/*
 * The root item of subvolume @subvol_id.  A snapshot's ROOT_ITEM key has
 * the creation transid as offset, so take the first item of that objectid
 * and type whatever its offset.  Errors are recorded in @err.
 */
int btrfs_read_subvol(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
		      u64 subvol_id, struct btrfs_subvol *sv)
{
	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(fs_info);
	struct btrfs_path path = { .err = err };
	struct btrfs_key found;
	int ret;

	memset(sv, 0, sizeof(*sv));
	if (!btrfs_is_subvol_id(subvol_id))
		return btrfs_record_error(err, -EINVAL,
			"%llu is not a subvolume id: subvolumes are 5 and 256 to %llu",
			(unsigned long long)subvol_id,
			(unsigned long long)BTRFS_LAST_FREE_OBJECTID);
	ret = search_first(fs_info, &tree_root, subvol_id, BTRFS_ROOT_ITEM_KEY, 0,
			   &path, &found);
	if (ret == 1)
		ret = btrfs_record_error(err, -ENOENT,
			"subvolume %llu not found: the root tree has no ROOT_ITEM for it",
			(unsigned long long)subvol_id);
	if (!ret)
		ret = check_subvol_root(err, path.nodes[0], path.slots[0],
					subvol_id, sv);
	btrfs_release_path(&path);
	return ret;
}

void btrfs_inode_info_from_item(const struct btrfs_inode_item *ii, u64 ino,
				struct btrfs_inode_info *info)
{
	info->ino = ino;
	info->size = btrfs_stack_inode_size(ii);
	info->nbytes = btrfs_stack_inode_nbytes(ii);
	info->flags = btrfs_stack_inode_flags(ii);
	info->nlink = btrfs_stack_inode_nlink(ii);
	info->mode = btrfs_stack_inode_mode(ii);
}

/* Returns 0 and the inode's fields, 1 when it has no inode item, <0 on error */
int btrfs_read_inode_info(struct btrfs_fs_info *fs_info,
			  const struct btrfs_subvol *sv, u64 ino,
			  struct btrfs_inode_info *info)
{
	struct btrfs_key key = { ino, BTRFS_INODE_ITEM_KEY, 0 };
	struct btrfs_path path = { 0 };
	const struct btrfs_inode_item *ii;
	u32 size;
	int ret;

	ret = btrfs_search_slot(fs_info, &sv->root, &key, &path, BTRFS_IO_OTHER);
	if (ret) {
		btrfs_release_path(&path);
		return ret;
	}
	ii = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
	if (size < sizeof(*ii))
		ret = btrfs_fs_error(fs_info, -EUCLEAN,
			"corrupt inode item of inode %llu in subvolume %llu: size %u, expect %zu",
			(unsigned long long)ino, (unsigned long long)sv->root.objectid,
			size, sizeof(*ii));
	else
		btrfs_inode_info_from_item(ii, ino, info);
	btrfs_release_path(&path);
	return ret;
}

/* Where a directory entry leads */
struct dir_entry {
	struct btrfs_key location;
	u8 type;
};

/*
 * Walk the entries packed in one DIR_ITEM (names whose hashes collide share
 * it) for @name.  Returns 0 and the entry, 1 if absent, <0 if the entries
 * do not fit the item.
 */
static int match_dir_item_name(struct btrfs_fs_info *fs_info,
			       const struct btrfs_tree_block *leaf, int slot,
			       u64 subvol_id, const char *name, u32 len,
			       struct dir_entry *entry)
{
	struct btrfs_key key;
	const u8 *ptr;
	u32 size, cur = 0;

	btrfs_item_key_to_cpu(leaf, slot, &key);
	ptr = btrfs_item_ptr(leaf, slot, &size);
	while (cur < size) {
		const struct btrfs_dir_item *di = (const void *)(ptr + cur);
		u32 name_len, entry_len;

		if (size - cur < sizeof(*di))
			goto corrupt;
		name_len = btrfs_stack_dir_name_len(di);
		entry_len = sizeof(*di) + name_len + btrfs_stack_dir_data_len(di);
		if (name_len > BTRFS_NAME_LEN || entry_len > size - cur)
			goto corrupt;
		if (name_len == len && !memcmp(di + 1, name, len)) {
			btrfs_disk_key_to_cpu(&entry->location, &di->location);
			entry->type = btrfs_stack_dir_type(di) & ~BTRFS_FT_ENCRYPTED;
			return 0;
		}
		cur += entry_len;
	}
	return 1;
corrupt:
	return btrfs_fs_error(fs_info, -EUCLEAN,
		"corrupt dir item (%llu DIR_ITEM %llu) in subvolume %llu, block %llu slot %d: entry at byte %u overruns the item size %u",
		(unsigned long long)key.objectid, (unsigned long long)key.offset,
		(unsigned long long)subvol_id, (unsigned long long)leaf->start,
		slot, cur, size);
}

static int lookup_dir_item(struct btrfs_fs_info *fs_info,
			   const struct btrfs_subvol *sv, u64 dir,
			   const char *name, u32 len, struct dir_entry *entry)
{
	struct btrfs_key key = { dir, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(name, len) };
	struct btrfs_path path = { 0 };
	int ret;

	ret = btrfs_search_slot(fs_info, &sv->root, &key, &path, BTRFS_IO_OTHER);
	if (!ret)
		ret = match_dir_item_name(fs_info, path.nodes[0], path.slots[0],
					  sv->root.objectid, name, len, entry);
	btrfs_release_path(&path);
	return ret;
}

/* One step of a path walk: where it is and what the entry said it is */
struct walk_pos {
	struct btrfs_subvol sv;
	u64 ino;
	u8 type;
};

/* Follow @entry out of @cur: into the same tree, or into a subvolume */
static int enter_entry(struct btrfs_fs_info *fs_info, const struct walk_pos *cur,
		       const struct dir_entry *entry, const char *name,
		       struct walk_pos *next)
{
	int ret;

	next->type = entry->type;
	if (entry->location.type == BTRFS_INODE_ITEM_KEY) {
		next->sv = cur->sv;
		next->ino = entry->location.objectid;
		return 0;
	}
	if (entry->location.type != BTRFS_ROOT_ITEM_KEY)
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"entry '%s' in directory inode %llu of subvolume %llu: location key type %u is neither an inode nor a subvolume",
			name, (unsigned long long)cur->ino,
			(unsigned long long)cur->sv.root.objectid,
			entry->location.type);
	ret = btrfs_read_subvol(fs_info, &fs_info->err, entry->location.objectid,
				&next->sv);
	if (ret)
		return ret;
	next->ino = next->sv.dirid;
	next->type = BTRFS_FT_DIR;
	return 0;
}

/* Only a directory can be walked through, and symlinks are not followed */
static int check_walkable(struct btrfs_fs_info *fs_info,
			  const struct walk_pos *pos, const char *name)
{
	if (pos->type == BTRFS_FT_DIR)
		return 0;
	if (pos->type == BTRFS_FT_SYMLINK)
		return btrfs_fs_error(fs_info, -ELOOP,
			"path component '%s' (inode %llu of subvolume %llu) is a symlink: symlinks are not followed, give the path of its target",
			name, (unsigned long long)pos->ino,
			(unsigned long long)pos->sv.root.objectid);
	return btrfs_fs_error(fs_info, -ENOTDIR,
		"path component '%s' (inode %llu of subvolume %llu) is not a directory",
		name, (unsigned long long)pos->ino,
		(unsigned long long)pos->sv.root.objectid);
}

/*
 * @name holds the component, cut to BTRFS_NAME_LEN bytes and terminated;
 * @len is its length in the path, so that a longer one is refused here.
 */
static int lookup_component(struct btrfs_fs_info *fs_info,
			    const struct walk_pos *cur, const char *name,
			    u32 len, struct walk_pos *next)
{
	struct dir_entry entry = { 0 };
	int ret;

	if (len > BTRFS_NAME_LEN)
		return btrfs_fs_error(fs_info, -ENAMETOOLONG,
			"path component '%.32s...' is %u bytes long, a btrfs name has at most %d",
			name, len, BTRFS_NAME_LEN);
	ret = lookup_dir_item(fs_info, &cur->sv, cur->ino, name, len, &entry);
	if (ret == 1)
		return btrfs_fs_error(fs_info, -ENOENT,
			"path component '%s' not found in directory inode %llu of subvolume %llu",
			name, (unsigned long long)cur->ino,
			(unsigned long long)cur->sv.root.objectid);
	if (ret)
		return ret;
	return enter_entry(fs_info, cur, &entry, name, next);
}

/*
 * Walk @path, absolute from the top of subvolume @subvol_id, one DIR_ITEM
 * lookup per component.  ".." goes back up the components walked so far,
 * as it does in the kernel when no symlink was followed; it stays at the
 * top.  Returns 0 with the subvolume and inode @path names, or <0 with
 * the reason in fs_info->err.
 */
int btrfs_lookup_path(struct btrfs_fs_info *fs_info, u64 subvol_id,
		      const char *path, struct btrfs_subvol *sv, u64 *ino)
{
	struct walk_pos *stack;
	/* only the last component looked up can be a non-directory */
	char name[BTRFS_NAME_LEN + 1] = "/";
	const char *p = path;
	int depth = 0, components = 0, ret;

	if (path[0] != '/')
		return btrfs_fs_error(fs_info, -EINVAL,
			"path '%s' is not absolute: give it from the top of subvolume %llu, starting with /",
			path, (unsigned long long)subvol_id);
	stack = calloc(BTRFS_MAX_PATH_COMPONENTS + 1, sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	ret = btrfs_read_subvol(fs_info, &fs_info->err, subvol_id, &stack[0].sv);
	stack[0].ino = stack[0].sv.dirid;
	stack[0].type = BTRFS_FT_DIR;
	while (!ret) {
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		len = strcspn(p, "/");
		if (++components > BTRFS_MAX_PATH_COMPONENTS) {
			ret = btrfs_fs_error(fs_info, -ENAMETOOLONG,
				"path has more than %d components",
				BTRFS_MAX_PATH_COMPONENTS);
			break;
		}
		ret = check_walkable(fs_info, &stack[depth], name);
		if (ret)
			break;
		if (len == 2 && !memcmp(p, "..", 2)) {
			if (depth)
				depth--;
		} else if (!(len == 1 && *p == '.')) {
			snprintf(name, sizeof(name), "%.*s", (int)len, p);
			ret = lookup_component(fs_info, &stack[depth], name, len,
					       &stack[depth + 1]);
			depth++;
		}
		p += len;
	}
	if (!ret) {
		*sv = stack[depth].sv;
		*ino = stack[depth].ino;
	}
	free(stack);
	return ret;
}

/* A name from an inode back reference: the parent and where the name is */
struct back_ref {
	u64 parent;
	u64 index;
	const char *name;
	u32 name_len;
};

/*
 * The first back reference of @ino: an INODE_REF (key offset: the parent)
 * or, for names that did not fit there, an INODE_EXTREF.  Returns 0 with
 * @ref pointing into the leaf the path holds, 1 if there is none.
 */
static int first_back_ref(struct btrfs_fs_info *fs_info,
			  const struct btrfs_subvol *sv, u64 ino,
			  struct btrfs_path *path, struct back_ref *ref)
{
	const u8 *ptr;
	struct btrfs_key key = { 0 };
	u32 size, head;
	int ret;

	ret = search_first(fs_info, &sv->root, ino, BTRFS_INODE_REF_KEY, 0, path, &key);
	if (ret == 1 && key.objectid == ino && key.type == BTRFS_INODE_EXTREF_KEY)
		ret = 0;
	if (ret)
		return ret;
	ptr = btrfs_item_ptr(path->nodes[0], path->slots[0], &size);
	if (key.type == BTRFS_INODE_REF_KEY) {
		const struct btrfs_inode_ref *ir = (const void *)ptr;

		head = sizeof(*ir);
		if (size < head)
			goto corrupt;
		ref->parent = key.offset;
		ref->index = le64toh(ir->index);
		ref->name_len = btrfs_stack_inode_ref_name_len(ir);
	} else {
		const struct btrfs_inode_extref *ie = (const void *)ptr;

		head = sizeof(*ie);
		if (size < head)
			goto corrupt;
		ref->parent = btrfs_stack_inode_extref_parent(ie);
		ref->index = le64toh(ie->index);
		ref->name_len = btrfs_stack_inode_extref_name_len(ie);
	}
	if (ref->name_len > size - head || ref->name_len > BTRFS_NAME_LEN)
		goto corrupt;
	ref->name = (const char *)ptr + head;
	return 0;
corrupt:
	return btrfs_fs_error(fs_info, -EUCLEAN,
		"corrupt back reference (%llu %u %llu) in subvolume %llu, block %llu slot %d: item size %u too small for its name",
		(unsigned long long)key.objectid, key.type,
		(unsigned long long)key.offset, (unsigned long long)sv->root.objectid,
		(unsigned long long)path->nodes[0]->start, path->slots[0], size);
}

/* Prepend "/name" to the path being built backwards from @buf + *@pos */
static bool prepend_name(char *buf, size_t *pos, const struct back_ref *ref)
{
	if (!ref->name_len || memchr(ref->name, '/', ref->name_len) ||
	    memchr(ref->name, '\0', ref->name_len) || *pos < ref->name_len + 1)
		return false;
	*pos -= ref->name_len;
	memcpy(buf + *pos, ref->name, ref->name_len);
	buf[--(*pos)] = '/';
	return true;
}

/*
 * The path of @ino from the top of its subvolume, by following the first
 * back reference of each inode up to the subvolume's root directory (one
 * name of a file with hard links).  Returns 0 with the path in @buf, 1
 * when it cannot be had cheaply (no back reference, deeper than
 * BTRFS_MAX_PATH_COMPONENTS, longer than @size), <0 on a read error.
 */
int btrfs_inode_path(struct btrfs_fs_info *fs_info,
		     const struct btrfs_subvol *sv, u64 ino, char *buf,
		     size_t size)
{
	size_t pos = size - 1;
	int depth = 0, ret = 0;

	if (size < 2)
		return 1;
	buf[pos] = '\0';
	while (ino != sv->dirid && !ret) {
		struct btrfs_path path = { 0 };
		struct back_ref ref = { 0 };

		if (++depth > BTRFS_MAX_PATH_COMPONENTS)
			return 1;
		ret = first_back_ref(fs_info, sv, ino, &path, &ref);
		if (!ret && (ref.parent == ino || !prepend_name(buf, &pos, &ref)))
			ret = 1;
		if (!ret)
			ino = ref.parent;
		btrfs_release_path(&path);
	}
	if (ret)
		return ret;
	if (pos == size - 1)
		buf[--pos] = '/';
	memmove(buf, buf + pos, size - pos);
	return 0;
}

/*
 * The first name of @ino: its parent directory, its DIR_INDEX and the
 * name (at most BTRFS_NAME_LEN bytes into @name).  Returns 0, 1 when the
 * inode has no back reference, <0 on error.
 */
int btrfs_inode_first_name(struct btrfs_fs_info *fs_info,
			   const struct btrfs_subvol *sv, u64 ino,
			   struct btrfs_inode_name *out)
{
	struct btrfs_path path = { 0 };
	struct back_ref ref = { 0 };
	int ret;

	ret = first_back_ref(fs_info, sv, ino, &path, &ref);
	if (!ret) {
		out->parent = ref.parent;
		out->index = ref.index;
		out->name_len = ref.name_len;
		memcpy(out->name, ref.name, ref.name_len);
	}
	btrfs_release_path(&path);
	return ret;
}
