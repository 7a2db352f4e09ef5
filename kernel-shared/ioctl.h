/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few btrfs ioctls live mode (live.c) issues on a mounted filesystem,
 * with their argument layouts as include/uapi/linux/btrfs.h defines them
 * (the ABI, unchanged since the ioctls appeared): FS_INFO, DEV_INFO,
 * TREE_SEARCH_V2 and GET_FEATURES.  Written out here so the
 * build needs no kernel headers of a particular version; the sizes are
 * checked below against the kernel's.
 */
#ifndef BTRFS_SPACE_IOCTL_H
#define BTRFS_SPACE_IOCTL_H

#include <assert.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include "common/types.h"
#include "kernel-shared/ctree.h"

#define BTRFS_IOCTL_MAGIC		0x94
#define BTRFS_SUPER_MAGIC_STATFS	0x9123683EU	/* statfs f_type */
#define BTRFS_DEVICE_PATH_NAME_MAX	1024

/* btrfs_ioctl_fs_info_args.flags: which optional fields to fill */
#define BTRFS_FS_INFO_FLAG_CSUM_INFO		(1U << 0)
#define BTRFS_FS_INFO_FLAG_GENERATION		(1U << 1)
#define BTRFS_FS_INFO_FLAG_METADATA_UUID	(1U << 2)

struct btrfs_ioctl_fs_info_args {
	u64 max_id;				/* out: highest devid */
	u64 num_devices;			/* out */
	u8 fsid[BTRFS_FSID_SIZE];		/* out */
	u32 nodesize;				/* out */
	u32 sectorsize;				/* out */
	u32 clone_alignment;			/* out */
	u16 csum_type;				/* out, with FLAG_CSUM_INFO */
	u16 csum_size;				/* out, with FLAG_CSUM_INFO */
	u64 flags;				/* in/out */
	u64 generation;				/* out, with FLAG_GENERATION */
	u8 metadata_uuid[BTRFS_FSID_SIZE];	/* out, with FLAG_METADATA_UUID */
	u8 reserved[944];
};
static_assert(sizeof(struct btrfs_ioctl_fs_info_args) == 1024, "fs_info_args");

struct btrfs_ioctl_dev_info_args {
	u64 devid;				/* in */
	u8 uuid[BTRFS_UUID_SIZE];		/* in/out: all zero matches any */
	u64 bytes_used;				/* out: in-memory device bytes_used */
	u64 total_bytes;			/* out */
	u64 unused[379];
	u8 path[BTRFS_DEVICE_PATH_NAME_MAX];	/* out: "" when missing */
};
static_assert(sizeof(struct btrfs_ioctl_dev_info_args) == 4096, "dev_info_args");
static_assert(offsetof(struct btrfs_ioctl_dev_info_args, path) == 3072, "dev_info path");

/*
 * BTRFS_IOC_INO_LOOKUP: with treeid 0 the tree of the open file is
 * answered in treeid; objectid BTRFS_FIRST_FREE_OBJECTID asks nothing
 * else, which needs no privilege (libbtrfsutil's
 * btrfs_util_subvolume_id())
 */
#define BTRFS_INO_LOOKUP_PATH_MAX	4080
struct btrfs_ioctl_ino_lookup_args {
	u64 treeid;				/* in/out */
	u64 objectid;				/* in */
	char name[BTRFS_INO_LOOKUP_PATH_MAX];	/* out */
};
static_assert(sizeof(struct btrfs_ioctl_ino_lookup_args) == 4096, "ino_lookup_args");

/*
 * The search range is the compound key interval [min, max], (objectid,
 * type, offset) compared in that order; the transid range filters tree
 * blocks by their generation.
 */
struct btrfs_ioctl_search_key {
	u64 tree_id;
	u64 min_objectid;
	u64 max_objectid;
	u64 min_offset;
	u64 max_offset;
	u64 min_transid;
	u64 max_transid;
	u32 min_type;
	u32 max_type;
	u32 nr_items;				/* in: at most; out: found */
	u32 unused;
	u64 unused1;
	u64 unused2;
	u64 unused3;
	u64 unused4;
};
static_assert(sizeof(struct btrfs_ioctl_search_key) == 104, "search_key");

/* Before each item in the result buffer; fields in CPU byte order */
struct btrfs_ioctl_search_header {
	u64 transid;
	u64 objectid;
	u64 offset;
	u32 type;
	u32 len;
} __attribute__ ((__may_alias__));
static_assert(sizeof(struct btrfs_ioctl_search_header) == 32, "search_header");

struct btrfs_ioctl_search_args_v2 {
	struct btrfs_ioctl_search_key key;	/* in/out */
	u64 buf_size;				/* in; out: needed on -EOVERFLOW */
	u64 buf[];				/* headers and items */
};
static_assert(sizeof(struct btrfs_ioctl_search_args_v2) == 112, "search_args_v2");

struct btrfs_ioctl_feature_flags {
	u64 compat_flags;
	u64 compat_ro_flags;
	u64 incompat_flags;
};

#define BTRFS_IOC_INO_LOOKUP		_IOWR(BTRFS_IOCTL_MAGIC, 18, \
					       struct btrfs_ioctl_ino_lookup_args)
#define BTRFS_IOC_TREE_SEARCH_V2	_IOWR(BTRFS_IOCTL_MAGIC, 17, \
					      struct btrfs_ioctl_search_args_v2)
#define BTRFS_IOC_DEV_INFO		_IOWR(BTRFS_IOCTL_MAGIC, 30, \
					      struct btrfs_ioctl_dev_info_args)
#define BTRFS_IOC_FS_INFO		_IOR(BTRFS_IOCTL_MAGIC, 31, \
					     struct btrfs_ioctl_fs_info_args)
#define BTRFS_IOC_GET_FEATURES		_IOR(BTRFS_IOCTL_MAGIC, 57, \
					     struct btrfs_ioctl_feature_flags)

#endif
