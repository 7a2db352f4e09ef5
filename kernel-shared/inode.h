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

#define BTRFS_NAME_LEN			255

/* Directory entry types (btrfs_dir_item::type); bit 7 marks fscrypt names */
#define BTRFS_FT_REG_FILE		1
#define BTRFS_FT_DIR			2
#define BTRFS_FT_SYMLINK		7
#define BTRFS_FT_ENCRYPTED		0x80

/* Deeper paths are refused, so a loop in a corrupted image cannot spin */
#define BTRFS_MAX_PATH_COMPONENTS	4096

/* One entry of a DIR_ITEM; name_len bytes of name and data_len of data follow */
struct btrfs_dir_item {
	struct btrfs_disk_key location;
	__le64 transid;
	__le16 data_len;
	__le16 name_len;
	u8 type;
} __attribute__ ((__packed__));

/* One entry of an INODE_REF (key offset: the parent); the name follows */
struct btrfs_inode_ref {
	__le64 index;
	__le16 name_len;
} __attribute__ ((__packed__));

/* One entry of an INODE_EXTREF (key offset: a hash); the name follows */
struct btrfs_inode_extref {
	__le64 parent_objectid;
	__le64 index;
	__le16 name_len;
} __attribute__ ((__packed__));

struct btrfs_timespec {
	__le64 sec;
	__le32 nsec;
} __attribute__ ((__packed__));

struct btrfs_inode_item {
	__le64 generation;
	__le64 transid;
	__le64 size;
	__le64 nbytes;
	__le64 block_group;
	__le32 nlink;
	__le32 uid;
	__le32 gid;
	__le32 mode;
	__le64 rdev;
	__le64 flags;
	__le64 sequence;
	__le64 reserved[4];
	struct btrfs_timespec atime;
	struct btrfs_timespec ctime;
	struct btrfs_timespec mtime;
	struct btrfs_timespec otime;
} __attribute__ ((__packed__));

static_assert(sizeof(struct btrfs_dir_item) == 30, "dir item");
static_assert(sizeof(struct btrfs_inode_ref) == 10, "inode ref");
static_assert(sizeof(struct btrfs_inode_extref) == 18, "inode extref");
static_assert(sizeof(struct btrfs_inode_item) == 160, "inode item");

BTRFS_SETGET_STACK_FUNCS(stack_dir_data_len, struct btrfs_dir_item, data_len, 16)
BTRFS_SETGET_STACK_FUNCS(stack_dir_name_len, struct btrfs_dir_item, name_len, 16)
BTRFS_SETGET_STACK_FUNCS(stack_dir_type, struct btrfs_dir_item, type, 8)
BTRFS_SETGET_STACK_FUNCS(stack_inode_ref_name_len, struct btrfs_inode_ref, name_len, 16)
BTRFS_SETGET_STACK_FUNCS(stack_inode_extref_parent, struct btrfs_inode_extref, parent_objectid, 64)
BTRFS_SETGET_STACK_FUNCS(stack_inode_extref_name_len, struct btrfs_inode_extref, name_len, 16)
BTRFS_SETGET_STACK_FUNCS(stack_inode_size, struct btrfs_inode_item, size, 64)
BTRFS_SETGET_STACK_FUNCS(stack_inode_nbytes, struct btrfs_inode_item, nbytes, 64)
BTRFS_SETGET_STACK_FUNCS(stack_inode_nlink, struct btrfs_inode_item, nlink, 32)
BTRFS_SETGET_STACK_FUNCS(stack_inode_mode, struct btrfs_inode_item, mode, 32)
BTRFS_SETGET_STACK_FUNCS(stack_inode_flags, struct btrfs_inode_item, flags, 64)
BTRFS_SETGET_STACK_FUNCS(stack_root_dirid, struct btrfs_root_item_head, root_dirid, 64)
BTRFS_SETGET_STACK_FUNCS(stack_root_refs, struct btrfs_root_item_head, refs, 32)

/* A subvolume's tree and the inode of its top directory */
struct btrfs_subvol {
	struct btrfs_root_ref root;
	u64 dirid;
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

/*
 * The on-disk mode is the Linux one; <sys/stat.h> is not used because it
 * drags in <linux/stat.h>, whose __le64 clashes with ctree.h's.
 */
#define BTRFS_S_IFMT			0170000
#define BTRFS_S_IFREG			0100000
#define BTRFS_S_IFDIR			0040000
#define BTRFS_S_IFLNK			0120000

static inline bool btrfs_mode_is(u32 mode, u32 type)
{
	return (mode & BTRFS_S_IFMT) == type;
}

static inline bool btrfs_is_subvol_id(u64 id)
{
	return id == BTRFS_FS_TREE_OBJECTID ||
	       (id >= BTRFS_FIRST_FREE_OBJECTID && id <= BTRFS_LAST_FREE_OBJECTID);
}

u32 btrfs_name_hash(const char *name, size_t len);
int btrfs_read_subvol(struct btrfs_fs_info *fs_info, u64 subvol_id,
		      struct btrfs_subvol *sv);
int btrfs_read_inode_info(struct btrfs_fs_info *fs_info,
			  const struct btrfs_subvol *sv, u64 ino,
			  struct btrfs_inode_info *info);
void btrfs_inode_info_from_item(const struct btrfs_inode_item *ii, u64 ino,
				struct btrfs_inode_info *info);
int btrfs_lookup_path(struct btrfs_fs_info *fs_info, u64 subvol_id,
		      const char *path, struct btrfs_subvol *sv, u64 *ino);
int btrfs_inode_path(struct btrfs_fs_info *fs_info,
		     const struct btrfs_subvol *sv, u64 ino, char *buf,
		     size_t size);

#endif
