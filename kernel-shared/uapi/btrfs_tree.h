/* SPDX-License-Identifier: GPL-2.0 */
/*
 * On-disk format of btrfs: the structures this tool reads, as packed
 * little-endian layouts, with the object ids, key types and flag bits.
 * Field names follow the kernel's include/uapi/linux/btrfs_tree.h (and
 * btrfs-progs' kernel-shared/uapi/btrfs_tree.h) so a reviewer can hold them
 * side by side; every struct's size and the offset of every field read
 * are pinned by static_assert below.  No field is ever read directly, only
 * through the accessors in ../accessors.h.  Nothing here is code.
 */
#ifndef BTRFS_SPACE_UAPI_BTRFS_TREE_H
#define BTRFS_SPACE_UAPI_BTRFS_TREE_H

#include <assert.h>
#include <stddef.h>
#include "common/types.h"

typedef u16 __le16;
typedef u32 __le32;
typedef u64 __le64;

#define BTRFS_MAGIC			0x4D5F53665248425FULL	/* "_BHRfS_M" */
#define BTRFS_SUPER_INFO_OFFSET		65536
#define BTRFS_SUPER_INFO_SIZE		4096
#define BTRFS_SUPER_MIRROR_MAX		3
#define BTRFS_SUPER_MIRROR_SHIFT	12
#define BTRFS_SYSTEM_CHUNK_ARRAY_SIZE	2048
#define BTRFS_CSUM_SIZE			32
#define BTRFS_FSID_SIZE			16
#define BTRFS_UUID_SIZE			16
#define BTRFS_LABEL_SIZE		256
#define BTRFS_MAX_LEVEL			8
#define BTRFS_STRIPE_LEN		65536ULL
#define BTRFS_STRIPE_LEN_SHIFT		16
#define BTRFS_MIN_BLOCKSIZE		4096
#define BTRFS_MAX_METADATA_BLOCKSIZE	65536

/* Tree and object ids */
#define BTRFS_ROOT_TREE_OBJECTID	1ULL
#define BTRFS_EXTENT_TREE_OBJECTID	2ULL
#define BTRFS_CHUNK_TREE_OBJECTID	3ULL
#define BTRFS_DEV_TREE_OBJECTID		4ULL
#define BTRFS_FS_TREE_OBJECTID		5ULL
#define BTRFS_ROOT_TREE_DIR_OBJECTID	6ULL
#define BTRFS_CSUM_TREE_OBJECTID	7ULL
#define BTRFS_QUOTA_TREE_OBJECTID	8ULL
#define BTRFS_UUID_TREE_OBJECTID	9ULL
#define BTRFS_FREE_SPACE_TREE_OBJECTID	10ULL
#define BTRFS_BLOCK_GROUP_TREE_OBJECTID	11ULL
#define BTRFS_RAID_STRIPE_TREE_OBJECTID	12ULL
#define BTRFS_DEV_ITEMS_OBJECTID	1ULL
#define BTRFS_DEV_STATS_OBJECTID	0ULL
#define BTRFS_BALANCE_OBJECTID		((u64)-4)
#define BTRFS_ORPHAN_OBJECTID		((u64)-5)
#define BTRFS_TREE_LOG_OBJECTID		((u64)-6)
#define BTRFS_TREE_LOG_FIXUP_OBJECTID	((u64)-7)
#define BTRFS_TREE_RELOC_OBJECTID	((u64)-8)
#define BTRFS_DATA_RELOC_TREE_OBJECTID	((u64)-9)
#define BTRFS_EXTENT_CSUM_OBJECTID	((u64)-10)
#define BTRFS_FREE_INO_OBJECTID		((u64)-12)
#define BTRFS_FIRST_CHUNK_TREE_OBJECTID	256ULL
#define BTRFS_FIRST_FREE_OBJECTID	256ULL
#define BTRFS_LAST_FREE_OBJECTID	((u64)-256)

/* Item key types */
#define BTRFS_INODE_ITEM_KEY		1
#define BTRFS_INODE_REF_KEY		12
#define BTRFS_INODE_EXTREF_KEY		13
#define BTRFS_XATTR_ITEM_KEY		24
#define BTRFS_ORPHAN_ITEM_KEY		48
#define BTRFS_DIR_LOG_INDEX_KEY		72
#define BTRFS_DIR_ITEM_KEY		84
#define BTRFS_DIR_INDEX_KEY		96
#define BTRFS_EXTENT_DATA_KEY		108
#define BTRFS_EXTENT_CSUM_KEY		128
#define BTRFS_ROOT_ITEM_KEY		132
#define BTRFS_ROOT_BACKREF_KEY		144
#define BTRFS_ROOT_REF_KEY		156
#define BTRFS_EXTENT_OWNER_REF_KEY	172
#define BTRFS_TREE_BLOCK_REF_KEY	176
#define BTRFS_EXTENT_DATA_REF_KEY	178
#define BTRFS_SHARED_BLOCK_REF_KEY	182
#define BTRFS_SHARED_DATA_REF_KEY	184
#define BTRFS_EXTENT_ITEM_KEY		168
#define BTRFS_METADATA_ITEM_KEY		169
#define BTRFS_BLOCK_GROUP_ITEM_KEY	192
#define BTRFS_FREE_SPACE_INFO_KEY	198
#define BTRFS_FREE_SPACE_EXTENT_KEY	199
#define BTRFS_DEV_EXTENT_KEY		204
#define BTRFS_DEV_ITEM_KEY		216
#define BTRFS_CHUNK_ITEM_KEY		228
#define BTRFS_RAID_STRIPE_KEY		230
#define BTRFS_QGROUP_STATUS_KEY		240
#define BTRFS_QGROUP_INFO_KEY		242
#define BTRFS_QGROUP_LIMIT_KEY		244
#define BTRFS_QGROUP_RELATION_KEY	246
#define BTRFS_TEMPORARY_ITEM_KEY	248
#define BTRFS_PERSISTENT_ITEM_KEY	249
#define BTRFS_DEV_REPLACE_KEY		250

/* Tree block header flags */
#define BTRFS_HEADER_FLAG_WRITTEN	(1ULL << 0)
#define BTRFS_HEADER_FLAG_RELOC		(1ULL << 1)

/* Extent item flags */
#define BTRFS_EXTENT_FLAG_DATA		(1ULL << 0)
#define BTRFS_EXTENT_FLAG_TREE_BLOCK	(1ULL << 1)
#define BTRFS_BLOCK_FLAG_FULL_BACKREF	(1ULL << 8)

/* Root item flags; qgroup ids carry their level above this shift */
#define BTRFS_ROOT_SUBVOL_RDONLY	(1ULL << 0)
#define BTRFS_ROOT_SUBVOL_DEAD		(1ULL << 48)
#define BTRFS_QGROUP_LEVEL_SHIFT	48

/* Names: a directory entry's (BTRFS_NAME_LEN) and an xattr's (XATTR_NAME_MAX) */
#define BTRFS_NAME_LEN			255
#define BTRFS_XATTR_NAME_MAX		255

/* Directory entry types (btrfs_dir_item::type); bit 7 marks fscrypt names */
#define BTRFS_FT_UNKNOWN		0
#define BTRFS_FT_REG_FILE		1
#define BTRFS_FT_DIR			2
#define BTRFS_FT_CHRDEV			3
#define BTRFS_FT_BLKDEV			4
#define BTRFS_FT_FIFO			5
#define BTRFS_FT_SOCK			6
#define BTRFS_FT_SYMLINK		7
#define BTRFS_FT_XATTR			8
#define BTRFS_FT_MAX			9
#define BTRFS_FT_ENCRYPTED		0x80

/* File extent types and compression (btrfs_file_extent_item) */
#define BTRFS_FILE_EXTENT_INLINE	0
#define BTRFS_FILE_EXTENT_REG		1
#define BTRFS_FILE_EXTENT_PREALLOC	2
#define BTRFS_NR_FILE_EXTENT_TYPES	3
#define BTRFS_COMPRESS_NONE		0
#define BTRFS_NR_COMPRESS_TYPES		4	/* none, zlib, lzo, zstd */

/*
 * Inode flags (btrfs_inode_item::flags): the low 32 bits are incompat
 * flags, the high 32 bits read-only-compat flags (fs/btrfs/btrfs_inode.h).
 */
#define BTRFS_INODE_FLAG_MASK		0x80000fffU	/* bits 0-11, ROOT_ITEM_INIT */
#define BTRFS_INODE_RO_FLAG_MASK	0x1U		/* VERITY */

/* Block group / chunk type and profile bits */
#define BTRFS_BLOCK_GROUP_DATA		(1ULL << 0)
#define BTRFS_BLOCK_GROUP_SYSTEM	(1ULL << 1)
#define BTRFS_BLOCK_GROUP_METADATA	(1ULL << 2)
#define BTRFS_BLOCK_GROUP_RAID0		(1ULL << 3)
#define BTRFS_BLOCK_GROUP_RAID1		(1ULL << 4)
#define BTRFS_BLOCK_GROUP_DUP		(1ULL << 5)
#define BTRFS_BLOCK_GROUP_RAID10	(1ULL << 6)
#define BTRFS_BLOCK_GROUP_RAID5		(1ULL << 7)
#define BTRFS_BLOCK_GROUP_RAID6		(1ULL << 8)
#define BTRFS_BLOCK_GROUP_RAID1C3	(1ULL << 9)
#define BTRFS_BLOCK_GROUP_RAID1C4	(1ULL << 10)
/* In-memory only: "single" as an explicit bit, as set_avail_alloc_bits keeps it */
#define BTRFS_AVAIL_ALLOC_BIT_SINGLE	(1ULL << 48)

#define BTRFS_BLOCK_GROUP_TYPE_MASK	(BTRFS_BLOCK_GROUP_DATA |	\
					 BTRFS_BLOCK_GROUP_SYSTEM |	\
					 BTRFS_BLOCK_GROUP_METADATA)
#define BTRFS_BLOCK_GROUP_RAID1_MASK	(BTRFS_BLOCK_GROUP_RAID1 |	\
					 BTRFS_BLOCK_GROUP_RAID1C3 |	\
					 BTRFS_BLOCK_GROUP_RAID1C4)
#define BTRFS_BLOCK_GROUP_RAID56_MASK	(BTRFS_BLOCK_GROUP_RAID5 |	\
					 BTRFS_BLOCK_GROUP_RAID6)
#define BTRFS_BLOCK_GROUP_PROFILE_MASK	(BTRFS_BLOCK_GROUP_RAID0 |	\
					 BTRFS_BLOCK_GROUP_RAID1_MASK |	\
					 BTRFS_BLOCK_GROUP_RAID56_MASK |\
					 BTRFS_BLOCK_GROUP_DUP |	\
					 BTRFS_BLOCK_GROUP_RAID10)

/* Superblock feature bits */
#define BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE		(1ULL << 0)
#define BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID	(1ULL << 1)
#define BTRFS_FEATURE_COMPAT_RO_VERITY			(1ULL << 2)
#define BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE	(1ULL << 3)

#define BTRFS_FEATURE_INCOMPAT_MIXED_BACKREF	(1ULL << 0)
#define BTRFS_FEATURE_INCOMPAT_DEFAULT_SUBVOL	(1ULL << 1)
#define BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS	(1ULL << 2)
#define BTRFS_FEATURE_INCOMPAT_COMPRESS_LZO	(1ULL << 3)
#define BTRFS_FEATURE_INCOMPAT_COMPRESS_ZSTD	(1ULL << 4)
#define BTRFS_FEATURE_INCOMPAT_BIG_METADATA	(1ULL << 5)
#define BTRFS_FEATURE_INCOMPAT_EXTENDED_IREF	(1ULL << 6)
#define BTRFS_FEATURE_INCOMPAT_RAID56		(1ULL << 7)
#define BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA	(1ULL << 8)
#define BTRFS_FEATURE_INCOMPAT_NO_HOLES		(1ULL << 9)
#define BTRFS_FEATURE_INCOMPAT_METADATA_UUID	(1ULL << 10)
#define BTRFS_FEATURE_INCOMPAT_RAID1C34		(1ULL << 11)
#define BTRFS_FEATURE_INCOMPAT_ZONED		(1ULL << 12)
#define BTRFS_FEATURE_INCOMPAT_EXTENT_TREE_V2	(1ULL << 13)
#define BTRFS_FEATURE_INCOMPAT_RAID_STRIPE_TREE	(1ULL << 14)
#define BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA	(1ULL << 16)

/* Superblock flags */
#define BTRFS_SUPER_FLAG_SEEDING		(1ULL << 32)
#define BTRFS_SUPER_FLAG_METADUMP		(1ULL << 33)
#define BTRFS_SUPER_FLAG_METADUMP_V2		(1ULL << 34)
#define BTRFS_SUPER_FLAG_CHANGING_FSID		(1ULL << 35)
#define BTRFS_SUPER_FLAG_CHANGING_FSID_V2	(1ULL << 36)
#define BTRFS_SUPER_FLAG_CHANGING_BG_TREE	(1ULL << 38)

/* Balance item and args flags (fs/btrfs/volumes.h, uapi) */
#define BTRFS_BALANCE_DATA		(1ULL << 0)
#define BTRFS_BALANCE_SYSTEM		(1ULL << 1)
#define BTRFS_BALANCE_METADATA		(1ULL << 2)
#define BTRFS_BALANCE_ARGS_CONVERT	(1ULL << 8)

struct btrfs_disk_key {
	__le64 objectid;
	u8 type;
	__le64 offset;
} __attribute__ ((__packed__));

/*
 * The same key in memory, in CPU order, beside its on-disk twin as in the
 * kernel's uapi header; never on disk, so not packed.  Compared in
 * (objectid, type, offset) order by btrfs_comp_keys() (ctree.h).
 */
struct btrfs_key {
	u64 objectid;
	u8 type;
	u64 offset;
};

struct btrfs_header {
	u8 csum[BTRFS_CSUM_SIZE];
	u8 fsid[BTRFS_FSID_SIZE];
	__le64 bytenr;
	__le64 flags;
	u8 chunk_tree_uuid[BTRFS_UUID_SIZE];
	__le64 generation;
	__le64 owner;
	__le32 nritems;
	u8 level;
} __attribute__ ((__packed__));

/* A leaf item header; offset is relative to the end of the block header */
struct btrfs_item {
	struct btrfs_disk_key key;
	__le32 offset;
	__le32 size;
} __attribute__ ((__packed__));

struct btrfs_key_ptr {
	struct btrfs_disk_key key;
	__le64 blockptr;
	__le64 generation;
} __attribute__ ((__packed__));

struct btrfs_dev_item {
	__le64 devid;
	__le64 total_bytes;
	__le64 bytes_used;
	__le32 io_align;
	__le32 io_width;
	__le32 sector_size;
	__le64 type;
	__le64 generation;
	__le64 start_offset;
	__le32 dev_group;
	u8 seek_speed;
	u8 bandwidth;
	u8 uuid[BTRFS_UUID_SIZE];
	u8 fsid[BTRFS_UUID_SIZE];
} __attribute__ ((__packed__));

struct btrfs_stripe {
	__le64 devid;
	__le64 offset;
	u8 dev_uuid[BTRFS_UUID_SIZE];
} __attribute__ ((__packed__));

struct btrfs_chunk {
	__le64 length;
	__le64 owner;
	__le64 stripe_len;
	__le64 type;
	__le32 io_align;
	__le32 io_width;
	__le32 sector_size;
	__le16 num_stripes;
	__le16 sub_stripes;
	struct btrfs_stripe stripe;	/* first of num_stripes */
} __attribute__ ((__packed__));

struct btrfs_dev_extent {
	__le64 chunk_tree;
	__le64 chunk_objectid;
	__le64 chunk_offset;
	__le64 length;
	u8 chunk_tree_uuid[BTRFS_UUID_SIZE];
} __attribute__ ((__packed__));

struct btrfs_block_group_item {
	__le64 used;
	__le64 chunk_objectid;
	__le64 flags;
} __attribute__ ((__packed__));

struct btrfs_root_backup {
	__le64 tree_root;
	__le64 tree_root_gen;
	__le64 chunk_root;
	__le64 chunk_root_gen;
	__le64 extent_root;
	__le64 extent_root_gen;
	__le64 fs_root;
	__le64 fs_root_gen;
	__le64 dev_root;
	__le64 dev_root_gen;
	__le64 csum_root;
	__le64 csum_root_gen;
	__le64 total_bytes;
	__le64 bytes_used;
	__le64 num_devices;
	__le64 unused_64[4];
	u8 tree_root_level;
	u8 chunk_root_level;
	u8 extent_root_level;
	u8 fs_root_level;
	u8 dev_root_level;
	u8 csum_root_level;
	u8 unused_8[10];
} __attribute__ ((__packed__));

struct btrfs_super_block {
	u8 csum[BTRFS_CSUM_SIZE];
	u8 fsid[BTRFS_FSID_SIZE];
	__le64 bytenr;
	__le64 flags;
	__le64 magic;
	__le64 generation;
	__le64 root;
	__le64 chunk_root;
	__le64 log_root;
	__le64 __unused_log_root_transid;
	__le64 total_bytes;
	__le64 bytes_used;
	__le64 root_dir_objectid;
	__le64 num_devices;
	__le32 sectorsize;
	__le32 nodesize;
	__le32 __unused_leafsize;
	__le32 stripesize;
	__le32 sys_chunk_array_size;
	__le64 chunk_root_generation;
	__le64 compat_flags;
	__le64 compat_ro_flags;
	__le64 incompat_flags;
	__le16 csum_type;
	u8 root_level;
	u8 chunk_root_level;
	u8 log_root_level;
	struct btrfs_dev_item dev_item;
	char label[BTRFS_LABEL_SIZE];
	__le64 cache_generation;
	__le64 uuid_tree_generation;
	u8 metadata_uuid[BTRFS_FSID_SIZE];
	__le64 nr_global_roots;
	__le64 reserved[27];
	u8 sys_chunk_array[BTRFS_SYSTEM_CHUNK_ARRAY_SIZE];
	struct btrfs_root_backup super_roots[4];
	u8 padding[565];
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

/* The part of btrfs_root_item this tool reads (the rest follows on disk) */
struct btrfs_root_item_head {
	u8 inode[160];
	__le64 generation;
	__le64 root_dirid;
	__le64 bytenr;
	__le64 byte_limit;
	__le64 bytes_used;
	__le64 last_snapshot;
	__le64 flags;
	__le32 refs;
	struct btrfs_disk_key drop_progress;
	u8 drop_level;
	u8 level;
} __attribute__ ((__packed__));

/* The quota tree's items (key objectid 0, offset the qgroup id) */
#define BTRFS_QGROUP_STATUS_VERSION		1
#define BTRFS_QGROUP_STATUS_FLAG_ON		(1ULL << 0)
#define BTRFS_QGROUP_STATUS_FLAG_RESCAN		(1ULL << 1)
#define BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT	(1ULL << 2)
#define BTRFS_QGROUP_STATUS_FLAG_SIMPLE_MODE	(1ULL << 3)
#define BTRFS_QGROUP_LIMIT_MAX_RFER		(1ULL << 0)
#define BTRFS_QGROUP_LIMIT_MAX_EXCL		(1ULL << 1)

struct btrfs_qgroup_status_item {
	__le64 version;
	__le64 generation;
	__le64 flags;
	__le64 rescan;
} __attribute__ ((__packed__));

struct btrfs_qgroup_info_item {
	__le64 generation;
	__le64 rfer;
	__le64 rfer_cmpr;
	__le64 excl;
	__le64 excl_cmpr;
} __attribute__ ((__packed__));

struct btrfs_qgroup_limit_item {
	__le64 flags;
	__le64 max_rfer;
	__le64 max_excl;
	__le64 rsv_rfer;
	__le64 rsv_excl;
} __attribute__ ((__packed__));

/*
 * The whole root item.  A legacy (pre-3.x) item stops after the head:
 * its size is sizeof(struct btrfs_root_item_head).
 */
struct btrfs_root_item {
	struct btrfs_root_item_head head;
	__le64 generation_v2;
	u8 rest[192];			/* uuids, transids, times, reserved */
} __attribute__ ((__packed__));

/*
 * ROOT_REF and ROOT_BACKREF (the kernel's struct btrfs_root_ref: that
 * name is taken by fs.h's in-memory root reference); the name follows.
 */
struct btrfs_disk_root_ref {
	__le64 dirid;
	__le64 sequence;
	__le16 name_len;
} __attribute__ ((__packed__));

/* One entry of a DIR_ITEM, DIR_INDEX or XATTR_ITEM; name, then data follow */
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

struct btrfs_file_extent_item {
	__le64 generation;
	__le64 ram_bytes;
	u8 compression;
	u8 encryption;
	__le16 other_encoding;
	u8 type;
	/* the fields below are absent from inline extents */
	__le64 disk_bytenr;
	__le64 disk_num_bytes;
	__le64 offset;
	__le64 num_bytes;
} __attribute__ ((__packed__));

#define BTRFS_FILE_EXTENT_INLINE_DATA_START \
	offsetof(struct btrfs_file_extent_item, disk_bytenr)

/* EXTENT_CSUM: an array of checksums, one per sector from key.offset */
struct btrfs_csum_item {
	u8 csum;
} __attribute__ ((__packed__));

struct btrfs_extent_item {
	__le64 refs;
	__le64 generation;
	__le64 flags;
} __attribute__ ((__packed__));

/* Follows the extent item of a non-skinny tree block */
struct btrfs_tree_block_info {
	struct btrfs_disk_key key;
	u8 level;
} __attribute__ ((__packed__));

/* Every inline ref starts with its type; most carry one u64 after it */
struct btrfs_extent_inline_ref {
	u8 type;
	__le64 offset;
} __attribute__ ((__packed__));

/*
 * EXTENT_DATA_REF, keyed, or inline right after the type (no offset
 * field then).
 */
struct btrfs_extent_data_ref {
	__le64 root;
	__le64 objectid;
	__le64 offset;
	__le32 count;
} __attribute__ ((__packed__));

/* SHARED_DATA_REF, keyed, or inline after the type and parent bytenr */
struct btrfs_shared_data_ref {
	__le32 count;
} __attribute__ ((__packed__));

struct btrfs_disk_balance_args {
	__le64 profiles;
	__le64 usage;
	__le64 devid;
	__le64 pstart;
	__le64 pend;
	__le64 vstart;
	__le64 vend;
	__le64 target;
	__le64 flags;
	__le64 limit;
	__le32 stripes_min;
	__le32 stripes_max;
	__le64 unused[6];
} __attribute__ ((__packed__));

/* The dev tree's (0, DEV_REPLACE, 0): a device replace and how far it went */
#define BTRFS_DEV_REPLACE_DEVID				0ULL
#define BTRFS_IOCTL_DEV_REPLACE_STATE_STARTED		1
#define BTRFS_IOCTL_DEV_REPLACE_STATE_SUSPENDED		4

struct btrfs_dev_replace_item {
	__le64 src_devid;
	__le64 cursor_left;
	__le64 cursor_right;
	__le64 cont_reading_from_srcdev_mode;
	__le64 replace_state;
	__le64 time_started;
	__le64 time_stopped;
	__le64 num_write_errors;
	__le64 num_uncorrectable_read_errors;
} __attribute__ ((__packed__));

struct btrfs_balance_item {
	__le64 flags;
	struct btrfs_disk_balance_args data;
	struct btrfs_disk_balance_args meta;
	struct btrfs_disk_balance_args sys;
	__le64 unused[4];
} __attribute__ ((__packed__));

/* The sizes the kernel's format fixes; a wrong one here would misread every block */
static_assert(sizeof(struct btrfs_disk_key) == 17, "disk key");
static_assert(sizeof(struct btrfs_header) == 101, "header");
static_assert(sizeof(struct btrfs_item) == 25, "item");
static_assert(sizeof(struct btrfs_key_ptr) == 33, "key ptr");
static_assert(sizeof(struct btrfs_dev_item) == 98, "dev item");
static_assert(sizeof(struct btrfs_stripe) == 32, "stripe");
static_assert(sizeof(struct btrfs_chunk) == 80, "chunk");
static_assert(sizeof(struct btrfs_block_group_item) == 24, "bg item");
static_assert(sizeof(struct btrfs_dev_extent) == 48, "dev extent");
static_assert(sizeof(struct btrfs_root_backup) == 168, "root backup");
static_assert(sizeof(struct btrfs_super_block) == BTRFS_SUPER_INFO_SIZE, "super");
static_assert(offsetof(struct btrfs_super_block, sys_chunk_array) == 811, "sys array");
static_assert(offsetof(struct btrfs_root_item_head, bytes_used) == 192, "root bytes_used");
static_assert(sizeof(struct btrfs_root_item_head) == 239, "root item v0");
static_assert(sizeof(struct btrfs_disk_balance_args) == 136, "balance args");
static_assert(sizeof(struct btrfs_timespec) == 12, "timespec");
static_assert(sizeof(struct btrfs_inode_item) == 160, "inode item");
static_assert(offsetof(struct btrfs_inode_item, mode) == 52, "inode mode");
static_assert(offsetof(struct btrfs_inode_item, flags) == 64, "inode flags");
static_assert(offsetof(struct btrfs_inode_item, atime) == 112, "inode atime");
static_assert(sizeof(struct btrfs_root_item) == 439, "root item");
static_assert(offsetof(struct btrfs_root_item, generation_v2) == 239, "root item v2");
static_assert(sizeof(struct btrfs_disk_root_ref) == 18, "root ref");
static_assert(sizeof(struct btrfs_dir_item) == 30, "dir item");
static_assert(offsetof(struct btrfs_dir_item, type) == 29, "dir item type");
static_assert(sizeof(struct btrfs_inode_ref) == 10, "inode ref");
static_assert(sizeof(struct btrfs_inode_extref) == 18, "inode extref");
static_assert(BTRFS_FILE_EXTENT_INLINE_DATA_START == 21, "inline extent header");
static_assert(offsetof(struct btrfs_file_extent_item, num_bytes) == 45, "file extent num_bytes");
static_assert(sizeof(struct btrfs_file_extent_item) == 53, "file extent item");
static_assert(sizeof(struct btrfs_csum_item) == 1, "csum item");
static_assert(sizeof(struct btrfs_extent_item) == 24, "extent item");
static_assert(sizeof(struct btrfs_tree_block_info) == 18, "tree block info");
static_assert(sizeof(struct btrfs_extent_inline_ref) == 9, "inline ref");
static_assert(sizeof(struct btrfs_extent_data_ref) == 28, "extent data ref");
static_assert(sizeof(struct btrfs_shared_data_ref) == 4, "shared data ref");
static_assert(sizeof(struct btrfs_balance_item) == 448, "balance item");

/*
 * Field offsets, as xfsprogs' xfs_ondisk.h pins its own: each one the
 * uapi btrfs_tree.h layout gives, so a field moved or resized by an edit
 * here fails the build instead of misreading blocks.
 */
#define BTRFS_CHECK_OFFSET(type, member, off)				\
	static_assert(offsetof(struct type, member) == (off), #type "." #member)
BTRFS_CHECK_OFFSET(btrfs_disk_key, objectid, 0);
BTRFS_CHECK_OFFSET(btrfs_disk_key, type, 8);
BTRFS_CHECK_OFFSET(btrfs_disk_key, offset, 9);
BTRFS_CHECK_OFFSET(btrfs_header, fsid, 32);
BTRFS_CHECK_OFFSET(btrfs_header, bytenr, 48);
BTRFS_CHECK_OFFSET(btrfs_header, flags, 56);
BTRFS_CHECK_OFFSET(btrfs_header, chunk_tree_uuid, 64);
BTRFS_CHECK_OFFSET(btrfs_header, generation, 80);
BTRFS_CHECK_OFFSET(btrfs_header, owner, 88);
BTRFS_CHECK_OFFSET(btrfs_header, nritems, 96);
BTRFS_CHECK_OFFSET(btrfs_header, level, 100);
BTRFS_CHECK_OFFSET(btrfs_item, key, 0);
BTRFS_CHECK_OFFSET(btrfs_item, offset, 17);
BTRFS_CHECK_OFFSET(btrfs_item, size, 21);
BTRFS_CHECK_OFFSET(btrfs_key_ptr, blockptr, 17);
BTRFS_CHECK_OFFSET(btrfs_key_ptr, generation, 25);
BTRFS_CHECK_OFFSET(btrfs_dev_item, devid, 0);
BTRFS_CHECK_OFFSET(btrfs_dev_item, total_bytes, 8);
BTRFS_CHECK_OFFSET(btrfs_dev_item, bytes_used, 16);
BTRFS_CHECK_OFFSET(btrfs_dev_item, io_align, 24);
BTRFS_CHECK_OFFSET(btrfs_dev_item, sector_size, 32);
BTRFS_CHECK_OFFSET(btrfs_dev_item, type, 36);
BTRFS_CHECK_OFFSET(btrfs_dev_item, generation, 44);
BTRFS_CHECK_OFFSET(btrfs_dev_item, start_offset, 52);
BTRFS_CHECK_OFFSET(btrfs_dev_item, dev_group, 60);
BTRFS_CHECK_OFFSET(btrfs_dev_item, seek_speed, 64);
BTRFS_CHECK_OFFSET(btrfs_dev_item, uuid, 66);
BTRFS_CHECK_OFFSET(btrfs_dev_item, fsid, 82);
BTRFS_CHECK_OFFSET(btrfs_stripe, devid, 0);
BTRFS_CHECK_OFFSET(btrfs_stripe, offset, 8);
BTRFS_CHECK_OFFSET(btrfs_stripe, dev_uuid, 16);
BTRFS_CHECK_OFFSET(btrfs_chunk, length, 0);
BTRFS_CHECK_OFFSET(btrfs_chunk, owner, 8);
BTRFS_CHECK_OFFSET(btrfs_chunk, stripe_len, 16);
BTRFS_CHECK_OFFSET(btrfs_chunk, type, 24);
BTRFS_CHECK_OFFSET(btrfs_chunk, io_align, 32);
BTRFS_CHECK_OFFSET(btrfs_chunk, sector_size, 40);
BTRFS_CHECK_OFFSET(btrfs_chunk, num_stripes, 44);
BTRFS_CHECK_OFFSET(btrfs_chunk, sub_stripes, 46);
BTRFS_CHECK_OFFSET(btrfs_chunk, stripe, 48);
BTRFS_CHECK_OFFSET(btrfs_dev_extent, chunk_tree, 0);
BTRFS_CHECK_OFFSET(btrfs_dev_extent, chunk_objectid, 8);
BTRFS_CHECK_OFFSET(btrfs_dev_extent, chunk_offset, 16);
BTRFS_CHECK_OFFSET(btrfs_dev_extent, length, 24);
BTRFS_CHECK_OFFSET(btrfs_dev_extent, chunk_tree_uuid, 32);
BTRFS_CHECK_OFFSET(btrfs_block_group_item, used, 0);
BTRFS_CHECK_OFFSET(btrfs_block_group_item, chunk_objectid, 8);
BTRFS_CHECK_OFFSET(btrfs_block_group_item, flags, 16);
BTRFS_CHECK_OFFSET(btrfs_root_backup, tree_root, 0);
BTRFS_CHECK_OFFSET(btrfs_root_backup, chunk_root, 16);
BTRFS_CHECK_OFFSET(btrfs_root_backup, extent_root, 32);
BTRFS_CHECK_OFFSET(btrfs_root_backup, fs_root, 48);
BTRFS_CHECK_OFFSET(btrfs_root_backup, dev_root, 64);
BTRFS_CHECK_OFFSET(btrfs_root_backup, csum_root, 80);
BTRFS_CHECK_OFFSET(btrfs_root_backup, total_bytes, 96);
BTRFS_CHECK_OFFSET(btrfs_root_backup, bytes_used, 104);
BTRFS_CHECK_OFFSET(btrfs_root_backup, num_devices, 112);
BTRFS_CHECK_OFFSET(btrfs_root_backup, tree_root_level, 152);
BTRFS_CHECK_OFFSET(btrfs_root_backup, csum_root_level, 157);
BTRFS_CHECK_OFFSET(btrfs_root_backup, unused_8, 158);
BTRFS_CHECK_OFFSET(btrfs_super_block, fsid, 32);
BTRFS_CHECK_OFFSET(btrfs_super_block, bytenr, 48);
BTRFS_CHECK_OFFSET(btrfs_super_block, flags, 56);
BTRFS_CHECK_OFFSET(btrfs_super_block, magic, 64);
BTRFS_CHECK_OFFSET(btrfs_super_block, generation, 72);
BTRFS_CHECK_OFFSET(btrfs_super_block, root, 80);
BTRFS_CHECK_OFFSET(btrfs_super_block, chunk_root, 88);
BTRFS_CHECK_OFFSET(btrfs_super_block, log_root, 96);
BTRFS_CHECK_OFFSET(btrfs_super_block, total_bytes, 112);
BTRFS_CHECK_OFFSET(btrfs_super_block, bytes_used, 120);
BTRFS_CHECK_OFFSET(btrfs_super_block, root_dir_objectid, 128);
BTRFS_CHECK_OFFSET(btrfs_super_block, num_devices, 136);
BTRFS_CHECK_OFFSET(btrfs_super_block, sectorsize, 144);
BTRFS_CHECK_OFFSET(btrfs_super_block, nodesize, 148);
BTRFS_CHECK_OFFSET(btrfs_super_block, stripesize, 156);
BTRFS_CHECK_OFFSET(btrfs_super_block, sys_chunk_array_size, 160);
BTRFS_CHECK_OFFSET(btrfs_super_block, chunk_root_generation, 164);
BTRFS_CHECK_OFFSET(btrfs_super_block, compat_flags, 172);
BTRFS_CHECK_OFFSET(btrfs_super_block, compat_ro_flags, 180);
BTRFS_CHECK_OFFSET(btrfs_super_block, incompat_flags, 188);
BTRFS_CHECK_OFFSET(btrfs_super_block, csum_type, 196);
BTRFS_CHECK_OFFSET(btrfs_super_block, root_level, 198);
BTRFS_CHECK_OFFSET(btrfs_super_block, chunk_root_level, 199);
BTRFS_CHECK_OFFSET(btrfs_super_block, log_root_level, 200);
BTRFS_CHECK_OFFSET(btrfs_super_block, dev_item, 201);
BTRFS_CHECK_OFFSET(btrfs_super_block, label, 299);
BTRFS_CHECK_OFFSET(btrfs_super_block, cache_generation, 555);
BTRFS_CHECK_OFFSET(btrfs_super_block, uuid_tree_generation, 563);
BTRFS_CHECK_OFFSET(btrfs_super_block, metadata_uuid, 571);
BTRFS_CHECK_OFFSET(btrfs_super_block, nr_global_roots, 587);
BTRFS_CHECK_OFFSET(btrfs_super_block, super_roots, 2859);
BTRFS_CHECK_OFFSET(btrfs_super_block, padding, 3531);
BTRFS_CHECK_OFFSET(btrfs_timespec, sec, 0);
BTRFS_CHECK_OFFSET(btrfs_timespec, nsec, 8);
BTRFS_CHECK_OFFSET(btrfs_inode_item, generation, 0);
BTRFS_CHECK_OFFSET(btrfs_inode_item, transid, 8);
BTRFS_CHECK_OFFSET(btrfs_inode_item, size, 16);
BTRFS_CHECK_OFFSET(btrfs_inode_item, nbytes, 24);
BTRFS_CHECK_OFFSET(btrfs_inode_item, block_group, 32);
BTRFS_CHECK_OFFSET(btrfs_inode_item, nlink, 40);
BTRFS_CHECK_OFFSET(btrfs_inode_item, uid, 44);
BTRFS_CHECK_OFFSET(btrfs_inode_item, gid, 48);
BTRFS_CHECK_OFFSET(btrfs_inode_item, rdev, 56);
BTRFS_CHECK_OFFSET(btrfs_inode_item, sequence, 72);
BTRFS_CHECK_OFFSET(btrfs_inode_item, ctime, 124);
BTRFS_CHECK_OFFSET(btrfs_inode_item, mtime, 136);
BTRFS_CHECK_OFFSET(btrfs_inode_item, otime, 148);
BTRFS_CHECK_OFFSET(btrfs_root_item_head, generation, 160);
BTRFS_CHECK_OFFSET(btrfs_root_item_head, root_dirid, 168);
BTRFS_CHECK_OFFSET(btrfs_root_item_head, bytenr, 176);
BTRFS_CHECK_OFFSET(btrfs_root_item_head, byte_limit, 184);
BTRFS_CHECK_OFFSET(btrfs_root_item_head, last_snapshot, 200);
BTRFS_CHECK_OFFSET(btrfs_root_item_head, flags, 208);
BTRFS_CHECK_OFFSET(btrfs_root_item_head, refs, 216);
BTRFS_CHECK_OFFSET(btrfs_root_item_head, drop_progress, 220);
BTRFS_CHECK_OFFSET(btrfs_root_item_head, drop_level, 237);
BTRFS_CHECK_OFFSET(btrfs_root_item_head, level, 238);
BTRFS_CHECK_OFFSET(btrfs_disk_root_ref, dirid, 0);
BTRFS_CHECK_OFFSET(btrfs_disk_root_ref, sequence, 8);
BTRFS_CHECK_OFFSET(btrfs_disk_root_ref, name_len, 16);
BTRFS_CHECK_OFFSET(btrfs_dir_item, location, 0);
BTRFS_CHECK_OFFSET(btrfs_dir_item, transid, 17);
BTRFS_CHECK_OFFSET(btrfs_dir_item, data_len, 25);
BTRFS_CHECK_OFFSET(btrfs_dir_item, name_len, 27);
BTRFS_CHECK_OFFSET(btrfs_inode_ref, index, 0);
BTRFS_CHECK_OFFSET(btrfs_inode_ref, name_len, 8);
BTRFS_CHECK_OFFSET(btrfs_inode_extref, parent_objectid, 0);
BTRFS_CHECK_OFFSET(btrfs_inode_extref, index, 8);
BTRFS_CHECK_OFFSET(btrfs_inode_extref, name_len, 16);
BTRFS_CHECK_OFFSET(btrfs_file_extent_item, generation, 0);
BTRFS_CHECK_OFFSET(btrfs_file_extent_item, ram_bytes, 8);
BTRFS_CHECK_OFFSET(btrfs_file_extent_item, compression, 16);
BTRFS_CHECK_OFFSET(btrfs_file_extent_item, encryption, 17);
BTRFS_CHECK_OFFSET(btrfs_file_extent_item, other_encoding, 18);
BTRFS_CHECK_OFFSET(btrfs_file_extent_item, type, 20);
BTRFS_CHECK_OFFSET(btrfs_file_extent_item, disk_bytenr, 21);
BTRFS_CHECK_OFFSET(btrfs_file_extent_item, disk_num_bytes, 29);
BTRFS_CHECK_OFFSET(btrfs_file_extent_item, offset, 37);
BTRFS_CHECK_OFFSET(btrfs_extent_item, refs, 0);
BTRFS_CHECK_OFFSET(btrfs_extent_item, generation, 8);
BTRFS_CHECK_OFFSET(btrfs_extent_item, flags, 16);
BTRFS_CHECK_OFFSET(btrfs_tree_block_info, key, 0);
BTRFS_CHECK_OFFSET(btrfs_tree_block_info, level, 17);
BTRFS_CHECK_OFFSET(btrfs_extent_inline_ref, type, 0);
BTRFS_CHECK_OFFSET(btrfs_extent_inline_ref, offset, 1);
BTRFS_CHECK_OFFSET(btrfs_extent_data_ref, root, 0);
BTRFS_CHECK_OFFSET(btrfs_extent_data_ref, objectid, 8);
BTRFS_CHECK_OFFSET(btrfs_extent_data_ref, offset, 16);
BTRFS_CHECK_OFFSET(btrfs_extent_data_ref, count, 24);
BTRFS_CHECK_OFFSET(btrfs_shared_data_ref, count, 0);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, profiles, 0);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, usage, 8);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, devid, 16);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, pstart, 24);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, pend, 32);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, vstart, 40);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, vend, 48);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, target, 56);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, flags, 64);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, limit, 72);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, stripes_min, 80);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, stripes_max, 84);
BTRFS_CHECK_OFFSET(btrfs_disk_balance_args, unused, 88);
BTRFS_CHECK_OFFSET(btrfs_balance_item, flags, 0);
BTRFS_CHECK_OFFSET(btrfs_balance_item, data, 8);
BTRFS_CHECK_OFFSET(btrfs_balance_item, meta, 144);
BTRFS_CHECK_OFFSET(btrfs_balance_item, sys, 280);
BTRFS_CHECK_OFFSET(btrfs_balance_item, unused, 416);
BTRFS_CHECK_OFFSET(btrfs_qgroup_status_item, rescan, 24);
BTRFS_CHECK_OFFSET(btrfs_qgroup_info_item, excl_cmpr, 32);
BTRFS_CHECK_OFFSET(btrfs_qgroup_limit_item, rsv_excl, 32);

#endif
