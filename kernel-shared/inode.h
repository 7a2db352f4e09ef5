/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding an inode in a subvolume without mounting: the subvolume roots
 * (root-tree.c), name lookups in directories (dir-item.c, and
 * btrfs_lookup_dentry() of inode.c crossing into subvolumes), inode items
 * and the back references from an inode to its parent (inode-item.c).
 */
#ifndef BTRFS_SPACE_INODE_H
#define BTRFS_SPACE_INODE_H

#include "kernel-shared/accessors.h"
#include "kernel-shared/fs.h"

/* Deeper paths are refused, so a loop in a corrupted image cannot spin */
#define BTRFS_MAX_PATH_COMPONENTS	4096

/* A subvolume's tree and the inode of its top directory */
struct btrfs_subvol {
	struct btrfs_root_ref root;
	u64 dirid;
	u64 last_snapshot;		/* btrfs_block_can_be_shared() */
};

/* The fields of an inode item that say what deleting it would drop */
struct btrfs_inode_info {
	u64 ino;
	u64 size;
	u64 nbytes;
	u64 flags;
	u32 nlink;
	u32 mode;
};

static inline bool btrfs_is_subvol_id(u64 id)
{
	return id == BTRFS_FS_TREE_OBJECTID ||
	       (id >= BTRFS_FIRST_FREE_OBJECTID && id <= BTRFS_LAST_FREE_OBJECTID);
}

/* The root item of subvolume @subvol_id; errors are recorded in @err */
int btrfs_read_subvol(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
		      u64 subvol_id, struct btrfs_subvol *sv);
int btrfs_read_inode_info(struct btrfs_fs_info *fs_info,
			  const struct btrfs_subvol *sv, u64 ino,
			  struct btrfs_inode_info *info);
void btrfs_inode_info_from_item(const struct btrfs_inode_item *ii, u64 ino,
				struct btrfs_inode_info *info);
int btrfs_lookup_path(struct btrfs_fs_info *fs_info, u64 subvol_id,
		      const char *path, struct btrfs_subvol *sv, u64 *ino);
/* One name of an inode: where it is in its parent directory */
struct btrfs_inode_name {
	u64 parent;
	u64 index;			/* DIR_INDEX key offset */
	u32 name_len;
	char name[BTRFS_NAME_LEN];
};

int btrfs_inode_first_name(struct btrfs_fs_info *fs_info,
			   const struct btrfs_subvol *sv, u64 ino,
			   struct btrfs_inode_name *out);
int btrfs_inode_path(struct btrfs_fs_info *fs_info,
		     const struct btrfs_subvol *sv, u64 ino, char *buf,
		     size_t size);

#endif
