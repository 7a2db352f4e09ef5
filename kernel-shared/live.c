// SPDX-License-Identifier: GPL-2.0
/*
 * Live mode: read a mounted filesystem's metadata through the kernel
 * instead of its devices, into the same fs_info an offline open fills, so
 * the same accounting (block-group.c: bytes_super, the read-only rules,
 * space infos, the global reserve) and the same report run on it.
 *
 *   BTRFS_IOC_FS_INFO       fsid, metadata_uuid, nodesize, sectorsize,
 *                           checksum, generation, number of devices
 *   BTRFS_IOC_GET_FEATURES  compat_ro and incompat bits (sysfs features/
 *                           when the ioctl is refused)
 *   BTRFS_IOC_DEV_INFO      which devices the kernel has, and their paths
 *   BTRFS_IOC_TREE_SEARCH_V2 (CAP_SYS_ADMIN)
 *                           chunk tree: DEV_ITEMs, CHUNK_ITEMs, as
 *                             btrfs_read_chunk_tree() reads them;
 *                           tree root: the ROOT_ITEMs of the extent, dev,
 *                             csum, free-space, block-group and raid-stripe
 *                             trees and the BALANCE item, as read_roots();
 *                           extent or block-group tree: one exact search
 *                             per chunk for (start, BLOCK_GROUP_ITEM,
 *                             length), like the pinpoint search offline
 *                           extent tree (forecast's relocation replays,
 *                             btrfs_live_extent_items()): the EXTENT_ITEMs
 *                             and METADATA_ITEMs of a range of logical
 *                             addresses, as the kernel's tree holds them
 *                             now (not the commit root)
 *   /sys/fs/btrfs/<fsid>/   devinfo/<devid>/{missing,writeable}, label,
 *                           allocation/ (the runtime inputs of the model)
 *
 * The items come from the kernel's trees in memory.  On a read-write mount
 * the block group and root items are written back at transaction commit,
 * so the block groups are those of the last commit.  The space infos, the
 * global reserve and the devices' sizes are the kernel's figures of this
 * moment instead: sysfs allocation/ and BTRFS_IOC_DEV_INFO, read once, right
 * after the tree searches (live_snapshot()), replace what the accounting of
 * the block group items gave, so that every section of the report and every
 * input of the reservation model is the same snapshot.  The kernel ran the
 * tree checker on every leaf it read, so only the item sizes are checked
 * again here; read_one_chunk()'s checks still run.
 *
 * The superblock (label, total and used bytes) is read read-only from the
 * devices the kernel names, the newest generation winning as offline: on a
 * read-write mount that is the last commit's.  When no device can be read,
 * its fields are filled from the ioctls and sysfs and the mount estimate is
 * not available.  The mount estimate replays a mount of what is on disk:
 * an offline open of the devices, started over when it fails while a
 * commit changes the superblocks (btrfs_live_estimate_mount()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include "common/checksum.h"
#include "common/mounted.h"
#include "common/uuid-text.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/ioctl.h"
#include "kernel-shared/live.h"
#include "kernel-shared/mount-cost.h"
#include "kernel-shared/report.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/tree-checker.h"
#include "kernel-shared/volumes.h"

/* Any leaf item fits: nodesize is at most 64 KiB */
#define LIVE_SEARCH_BUF		(256 * 1024)

struct live_ctx {
	struct btrfs_fs_info *fs_info;
	struct btrfs_live *live;
	int fd;
	struct btrfs_ioctl_search_args_v2 *args;
};

typedef int (*live_item_fn)(struct live_ctx *ctx, const struct btrfs_key *key,
			    const void *item, u32 len, void *data);

bool btrfs_live_path(const char *path)
{
	struct statfs sfs;
	int fd, ret;

	/* only a directory: an image file may well live on a btrfs */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ret = fstatfs(fd, &sfs);
	close(fd);
	return !ret && (u32)sfs.f_type == BTRFS_SUPER_MAGIC_STATFS;
}

static int live_error(struct live_ctx *ctx, int err, const char *what)
{
	const char *hint = "";

	if (err == -EPERM || err == -EACCES)
		hint = " (live mode needs CAP_SYS_ADMIN: run as root)";
	else if (err == -ENOTTY)
		hint = " (not a btrfs mount, or the kernel lacks the ioctl)";
	return btrfs_fs_error(ctx->fs_info, err, "%s: %s: %s%s",
			      ctx->live->mountpoint, what, strerror(-err), hint);
}

/* The key right after @key; false past the last possible key */
static bool key_advance(struct btrfs_key *key)
{
	if (key->offset != (u64)-1) {
		key->offset++;
		return true;
	}
	key->offset = 0;
	if (key->type != 0xff) {
		key->type++;
		return true;
	}
	key->type = 0;
	if (key->objectid != (u64)-1) {
		key->objectid++;
		return true;
	}
	return false;
}

/*
 * Every item of tree @tree_id with a key in [@min, @max], in key order,
 * through @fn (<0 stops with that error, >0 stops quietly).  The kernel
 * returns as many as fit; the search goes on after the last one.
 */
static int tree_search(struct live_ctx *ctx, u64 tree_id, const struct btrfs_key *min,
		       const struct btrfs_key *max, live_item_fn fn, void *data)
{
	struct btrfs_ioctl_search_args_v2 *args = ctx->args;
	struct btrfs_ioctl_search_key *sk = &args->key;
	struct btrfs_key cur = *min;
	char what[96];

	snprintf(what, sizeof(what), "BTRFS_IOC_TREE_SEARCH_V2 in the %s",
		 btrfs_root_name(tree_id));
	while (1) {
		struct btrfs_key key = { 0 };
		u64 pos = 0;
		u32 i;

		memset(sk, 0, sizeof(*sk));
		sk->tree_id = tree_id;
		sk->min_objectid = cur.objectid;
		sk->min_type = cur.type;
		sk->min_offset = cur.offset;
		sk->max_objectid = max->objectid;
		sk->max_type = max->type;
		sk->max_offset = max->offset;
		sk->max_transid = (u64)-1;
		sk->nr_items = (u32)-1;
		args->buf_size = LIVE_SEARCH_BUF;
		if (ioctl(ctx->fd, BTRFS_IOC_TREE_SEARCH_V2, args) < 0)
			return live_error(ctx, -errno, what);
		ctx->live->searches++;
		if (!sk->nr_items)
			return 0;
		for (i = 0; i < sk->nr_items; i++) {
			struct btrfs_ioctl_search_header sh;
			const u8 *buf = (const u8 *)args->buf;
			int ret;

			if (LIVE_SEARCH_BUF - pos < sizeof(sh))
				return live_error(ctx, -EUCLEAN, what);
			memcpy(&sh, buf + pos, sizeof(sh));
			pos += sizeof(sh);
			if (sh.len > LIVE_SEARCH_BUF - pos)
				return live_error(ctx, -EUCLEAN, what);
			key.objectid = sh.objectid;
			key.type = sh.type;
			key.offset = sh.offset;
			ctx->live->items++;
			ret = fn(ctx, &key, buf + pos, sh.len, data);
			if (ret)
				return ret < 0 ? ret : 0;
			pos += sh.len;
		}
		cur = key;
		if (!key_advance(&cur) || btrfs_comp_keys(&cur, max) > 0)
			return 0;
	}
}

/* The one item at exactly @key: 0 found, 1 absent, <0 error */
struct exact_item {
	void *buf;
	u32 size;		/* expected size */
	u32 len;		/* found size */
	bool found;
};

static int copy_exact(struct live_ctx *ctx, const struct btrfs_key *key,
		      const void *item, u32 len, void *data)
{
	struct exact_item *e = data;

	e->found = true;
	e->len = len;
	memcpy(e->buf, item, min_t(u32, len, e->size));
	return 1;
}

static int search_exact(struct live_ctx *ctx, u64 tree_id, const struct btrfs_key *key,
			void *buf, u32 size, u32 *len)
{
	struct exact_item e = { .buf = buf, .size = size };
	int ret;

	memset(buf, 0, size);
	ret = tree_search(ctx, tree_id, key, key, copy_exact, &e);
	if (ret)
		return ret;
	*len = e.len;
	return e.found ? 0 : 1;
}

static int read_sysfs(const char *dir, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

static int read_sysfs_u64(const char *dir, const char *name, u64 *val)
{
	char buf[64], *end;

	if (read_sysfs(dir, name, buf, sizeof(buf)))
		return -ENOENT;
	errno = 0;
	*val = strtoull(buf, &end, 10);
	return errno || end == buf || *end ? -EINVAL : 0;
}

/* BTRFS_IOC_FS_INFO: the filesystem-wide figures the superblock holds */
static int live_fs_info(struct live_ctx *ctx, u64 *num_devices)
{
	struct btrfs_fs_info *fs_info = ctx->fs_info;
	struct btrfs_ioctl_fs_info_args fi;

	memset(&fi, 0, sizeof(fi));
	fi.flags = BTRFS_FS_INFO_FLAG_CSUM_INFO | BTRFS_FS_INFO_FLAG_GENERATION |
		   BTRFS_FS_INFO_FLAG_METADATA_UUID;
	if (ioctl(ctx->fd, BTRFS_IOC_FS_INFO, &fi) < 0)
		return live_error(ctx, -errno, "BTRFS_IOC_FS_INFO");
	*num_devices = fi.num_devices;
	memcpy(fs_info->fsid, fi.fsid, BTRFS_FSID_SIZE);
	if (fi.flags & BTRFS_FS_INFO_FLAG_METADATA_UUID)
		memcpy(fs_info->metadata_uuid, fi.metadata_uuid, BTRFS_FSID_SIZE);
	else
		memcpy(fs_info->metadata_uuid, fi.fsid, BTRFS_FSID_SIZE);
	fs_info->nodesize = fi.nodesize;
	fs_info->sectorsize = fi.sectorsize;
	/* before 5.5 no checksum info: crc32c was then the only one in use */
	fs_info->csum_type = (fi.flags & BTRFS_FS_INFO_FLAG_CSUM_INFO) ? fi.csum_type : 0;
	if (!csum_algo_valid(fs_info->csum_type))
		return btrfs_fs_error(fs_info, -EINVAL,
			"%s: unsupported checksum type %u", ctx->live->mountpoint,
			fs_info->csum_type);
	fs_info->csum_size = csum_algo_size(fs_info->csum_type);
	if (fi.flags & BTRFS_FS_INFO_FLAG_GENERATION)
		fs_info->generation = fi.generation;
	if (fs_info->nodesize < BTRFS_MIN_BLOCKSIZE ||
	    fs_info->nodesize > BTRFS_MAX_METADATA_BLOCKSIZE || !fs_info->sectorsize)
		return btrfs_fs_error(fs_info, -EINVAL,
			"%s: BTRFS_IOC_FS_INFO: nodesize %u sectorsize %u out of range",
			ctx->live->mountpoint, fs_info->nodesize, fs_info->sectorsize);
	return 0;
}

/* /sys/fs/btrfs/<fsid>/features/: names of the bits set (and known) */
static const struct {
	const char *name;
	bool compat_ro;
	u64 bit;
} sysfs_features[] = {
	{ "mixed_backref", false, BTRFS_FEATURE_INCOMPAT_MIXED_BACKREF },
	{ "default_subvol", false, BTRFS_FEATURE_INCOMPAT_DEFAULT_SUBVOL },
	{ "mixed_groups", false, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS },
	{ "compress_lzo", false, BTRFS_FEATURE_INCOMPAT_COMPRESS_LZO },
	{ "compress_zstd", false, BTRFS_FEATURE_INCOMPAT_COMPRESS_ZSTD },
	{ "big_metadata", false, BTRFS_FEATURE_INCOMPAT_BIG_METADATA },
	{ "extended_iref", false, BTRFS_FEATURE_INCOMPAT_EXTENDED_IREF },
	{ "raid56", false, BTRFS_FEATURE_INCOMPAT_RAID56 },
	{ "skinny_metadata", false, BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA },
	{ "no_holes", false, BTRFS_FEATURE_INCOMPAT_NO_HOLES },
	{ "metadata_uuid", false, BTRFS_FEATURE_INCOMPAT_METADATA_UUID },
	{ "raid1c34", false, BTRFS_FEATURE_INCOMPAT_RAID1C34 },
	{ "zoned", false, BTRFS_FEATURE_INCOMPAT_ZONED },
	{ "extent_tree_v2", false, BTRFS_FEATURE_INCOMPAT_EXTENT_TREE_V2 },
	{ "raid_stripe_tree", false, BTRFS_FEATURE_INCOMPAT_RAID_STRIPE_TREE },
	{ "simple_quota", false, BTRFS_FEATURE_INCOMPAT_SIMPLE_QUOTA },
	{ "free_space_tree", true, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE },
	{ "verity", true, BTRFS_FEATURE_COMPAT_RO_VERITY },
	{ "block_group_tree", true, BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE },
};

static int features_from_sysfs(struct live_ctx *ctx)
{
	struct btrfs_fs_info *fs_info = ctx->fs_info;
	char path[128];
	unsigned int i;

	snprintf(path, sizeof(path), "%s/features", ctx->live->sysfs_dir);
	for (i = 0; i < sizeof(sysfs_features) / sizeof(sysfs_features[0]); i++) {
		char file[192];

		snprintf(file, sizeof(file), "%s/%s", path, sysfs_features[i].name);
		if (access(file, F_OK))
			continue;
		if (sysfs_features[i].compat_ro)
			fs_info->compat_ro |= sysfs_features[i].bit;
		else
			fs_info->incompat |= sysfs_features[i].bit;
	}
	/* sysfs has no name for it; a mounted free space tree is a valid one */
	if (fs_info->compat_ro & BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE)
		fs_info->compat_ro |= BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID;
	ctx->live->features_from_sysfs = true;
	return 0;
}

static int live_features(struct live_ctx *ctx)
{
	struct btrfs_ioctl_feature_flags ff;

	if (ioctl(ctx->fd, BTRFS_IOC_GET_FEATURES, &ff) < 0)
		return features_from_sysfs(ctx);
	ctx->fs_info->compat_ro = ff.compat_ro_flags;
	ctx->fs_info->incompat = ff.incompat_flags;
	return 0;
}

/* read_one_dev() for a DEV_ITEM the tree search returned */
static int live_dev_item(struct live_ctx *ctx, const struct btrfs_key *key,
			 const struct btrfs_dev_item *item, u32 len)
{
	struct btrfs_fs_info *fs_info = ctx->fs_info;
	struct btrfs_device *dev;
	u64 devid;

	if (len != sizeof(*item))
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"chunk tree search: dev item %llu has size %u, expect %zu",
			(unsigned long long)key->offset, len, sizeof(*item));
	devid = btrfs_stack_device_id(item);
	if (btrfs_find_device(fs_info, devid))
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"chunk tree search: duplicate dev item for devid %llu",
			(unsigned long long)devid);
	dev = btrfs_add_device(fs_info, devid);
	if (!dev)
		return -ENOMEM;
	btrfs_device_from_dev_item(dev, item);
	return 0;
}

static int chunk_tree_item(struct live_ctx *ctx, const struct btrfs_key *key,
			   const void *item, u32 len, void *data)
{
	u32 *nr_chunks = data;
	struct btrfs_item_location loc = { "chunk tree (kernel tree search)", 0,
					   (int)*nr_chunks };

	if (key->type == BTRFS_DEV_ITEM_KEY)
		return live_dev_item(ctx, key, item, len);
	if (key->type != BTRFS_CHUNK_ITEM_KEY)
		return 0;
	(*nr_chunks)++;
	if (len < offsetof(struct btrfs_chunk, stripe))
		return btrfs_fs_error(ctx->fs_info, -EUCLEAN,
			"chunk tree search: chunk item %llu has size %u",
			(unsigned long long)key->offset, len);
	return btrfs_add_chunk_item(ctx->fs_info, item, len, key->offset, &loc);
}

/* btrfs_read_chunk_tree(): DEV_ITEMs then CHUNK_ITEMs, in key order */
static int live_chunk_tree(struct live_ctx *ctx)
{
	struct btrfs_key min = { BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, 0 };
	struct btrfs_key max = { BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, (u64)-1 };
	u32 nr_chunks = 0;

	return tree_search(ctx, BTRFS_CHUNK_TREE_OBJECTID, &min, &max,
			   chunk_tree_item, &nr_chunks);
}

/*
 * The devices the kernel holds: BTRFS_IOC_DEV_INFO for the path, sysfs
 * devinfo/ for missing and writeable, as check_devices() and
 * read_one_dev() tell them apart.
 */
static int live_devices(struct live_ctx *ctx)
{
	struct btrfs_fs_info *fs_info = ctx->fs_info;
	u32 i;

	for (i = 0; i < fs_info->nr_devices; i++) {
		struct btrfs_device *dev = &fs_info->devices[i];
		struct btrfs_ioctl_dev_info_args di;
		char dir[128];
		u64 missing = 0, writeable = 1;

		memset(&di, 0, sizeof(di));
		di.devid = dev->devid;
		if (ioctl(ctx->fd, BTRFS_IOC_DEV_INFO, &di) < 0) {
			if (errno != ENODEV)
				return live_error(ctx, -errno, "BTRFS_IOC_DEV_INFO");
			missing = 1;
		}
		snprintf(dir, sizeof(dir), "%s/devinfo/%llu", ctx->live->sysfs_dir,
			 (unsigned long long)dev->devid);
		read_sysfs_u64(dir, "missing", &missing);
		read_sysfs_u64(dir, "writeable", &writeable);
		di.path[sizeof(di.path) - 1] = 0;
		if (missing || !di.path[0]) {
			fs_info->degraded = true;
			continue;
		}
		dev->io.path = strdup((const char *)di.path);
		if (!dev->io.path)
			return -ENOMEM;
		dev->present = true;
		/* a seed device's dev item carries the seed's fsid */
		if (!writeable || memcmp(dev->fsid, fs_info->metadata_uuid, BTRFS_FSID_SIZE))
			continue;
		/* their sizes come with the snapshot: live_read_device_sizes() */
		dev->writeable = true;
		fs_info->rw_devices++;
	}
	return btrfs_resolve_stripes(fs_info);
}

/* btrfs_read_root_item() through the tree search */
static int live_root_item(struct live_ctx *ctx, u64 objectid, struct btrfs_root_ref *root)
{
	struct btrfs_key key = { objectid, BTRFS_ROOT_ITEM_KEY, 0 };
	struct btrfs_root_item_head ri;
	u32 len;
	int ret;

	memset(root, 0, sizeof(*root));
	root->objectid = objectid;
	ret = search_exact(ctx, BTRFS_ROOT_TREE_OBJECTID, &key, &ri, sizeof(ri), &len);
	if (ret)
		return ret < 0 ? ret : 0;
	if (len < sizeof(ri))
		return btrfs_fs_error(ctx->fs_info, -EUCLEAN,
			"tree root search: root item of %s has size %u, expect at least %zu",
			btrfs_root_name(objectid), len, sizeof(ri));
	root->bytenr = btrfs_root_bytenr(&ri);
	root->level = btrfs_root_level(&ri);
	root->generation = btrfs_root_generation(&ri);
	root->bytes_used = btrfs_root_bytes_used(&ri);
	root->found = true;
	return 0;
}

static int live_root_item_fn(void *ctx, u64 objectid, struct btrfs_root_ref *root)
{
	return live_root_item(ctx, objectid, root);
}

/* read_roots(): the same trees, and the balance item */
static int live_roots(struct live_ctx *ctx)
{
	struct btrfs_fs_info *fs_info = ctx->fs_info;
	struct btrfs_key key = { BTRFS_BALANCE_OBJECTID, BTRFS_TEMPORARY_ITEM_KEY, 0 };
	struct btrfs_balance_item bi;
	u32 len;
	int ret;

	ret = btrfs_load_roots(fs_info, live_root_item_fn, ctx);
	if (ret)
		return ret;
	ret = search_exact(ctx, BTRFS_ROOT_TREE_OBJECTID, &key, &bi, sizeof(bi), &len);
	if (ret)
		return ret < 0 ? ret : 0;
	if (len < sizeof(bi))
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"balance item: invalid size %u, expect %zu", len, sizeof(bi));
	btrfs_set_balance_convert(fs_info, &bi);
	return 0;
}

/* A chunk's block group item, found by its exact key in the kernel's tree */
static int live_block_group_item(void *arg, const struct btrfs_chunk_map *map,
				 struct btrfs_block_group_item *item)
{
	struct live_ctx *ctx = arg;
	struct btrfs_fs_info *fs_info = ctx->fs_info;
	const struct btrfs_root_ref *root = btrfs_block_group_root(fs_info);
	struct btrfs_key key = { map->start, BTRFS_BLOCK_GROUP_ITEM_KEY, map->length };
	u32 len;
	int ret;

	ret = search_exact(ctx, root->objectid, &key, item, sizeof(*item), &len);
	if (ret < 0)
		return ret;
	/*
	 * The chunk item goes into the chunk tree when the chunk is
	 * allocated, its block group item at the end of that
	 * transaction handle (btrfs_create_pending_block_groups()):
	 * in between, a live search finds the one without the other.
	 */
	if (ret)
		return btrfs_fs_error(fs_info, -EAGAIN,
			"chunk start=%llu len=%llu doesn't have corresponding block group (searched %s)",
			(unsigned long long)map->start, (unsigned long long)map->length,
			btrfs_root_name(root->objectid));
	if (len != sizeof(*item))
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"block group %llu len %llu: invalid item size, have %u expect %zu",
			(unsigned long long)map->start,
			(unsigned long long)map->length, len, sizeof(*item));
	return 0;
}

/*
 * btrfs_read_block_groups(): each chunk's block group item by its exact
 * key, then the same accounting as offline.
 */
static int live_block_groups(struct live_ctx *ctx)
{
	struct btrfs_fs_info *fs_info = ctx->fs_info;
	int ret;

	ret = btrfs_block_group_root_check(fs_info, btrfs_block_group_root(fs_info));
	if (ret)
		return ret;
	return btrfs_build_block_groups(fs_info, ctx, live_block_group_item);
}

/*
 * The primary superblock of every present device, read-only, newest
 * generation wins as offline.  Any failure leaves the devices unopened.
 */
static bool live_super_from_devices(struct btrfs_fs_info *fs_info)
{
	struct btrfs_super_block sb;
	u64 latest_gen = 0;
	bool found = false;
	u32 i;

	for (i = 0; i < fs_info->nr_devices; i++) {
		struct btrfs_device *dev = &fs_info->devices[i];
		struct io_dev io;

		if (!dev->present)
			continue;
		if (io_open(&io, dev->io.path, &btrfs_io_format, &fs_info->io_stats))
			goto fail;
		/* our page cache of the device may predate the kernel's writes */
		if (io.fd >= 0)
			posix_fadvise(io.fd, 0, 0, POSIX_FADV_DONTNEED);
		free(dev->io.path);
		dev->io = io;
		if (io_read(&dev->io, &sb, sizeof(sb), BTRFS_SUPER_INFO_OFFSET,
			    BTRFS_IO_SUPERBLOCK) ||
		    btrfs_validate_super(fs_info, &sb, dev->io.path, 0) ||
		    memcmp(sb.fsid, fs_info->fsid, BTRFS_FSID_SIZE) ||
		    btrfs_stack_device_id(&sb.dev_item) != dev->devid)
			goto fail;
		dev->sb_generation = btrfs_super_generation(&sb);
		if (!found || dev->sb_generation > latest_gen) {
			fs_info->super = sb;
			latest_gen = dev->sb_generation;
			found = true;
		}
	}
	return found;
fail:
	/* keep the paths for the report, drop the descriptors */
	for (i = 0; i < fs_info->nr_devices; i++) {
		struct btrfs_device *dev = &fs_info->devices[i];

		if (dev->present && dev->io.fd >= 0) {
			char *path = strdup(dev->io.path);

			io_close(&dev->io);
			dev->io.path = path;
		}
	}
	memset(&fs_info->err, 0, sizeof(fs_info->err));
	return false;
}

/* No device readable: the superblock fields the report shows, from the kernel */
static void live_super_synth(struct live_ctx *ctx, u64 num_devices)
{
	struct btrfs_fs_info *fs_info = ctx->fs_info;
	struct btrfs_super_block *sb = &fs_info->super;
	u64 total = 0, used = 0;
	char label[BTRFS_LABEL_SIZE];
	int i;
	u32 d;

	memset(sb, 0, sizeof(*sb));
	memcpy(sb->fsid, fs_info->fsid, BTRFS_FSID_SIZE);
	memcpy(sb->metadata_uuid, fs_info->metadata_uuid, BTRFS_FSID_SIZE);
	sb->magic = htole64(BTRFS_MAGIC);
	sb->generation = htole64(fs_info->generation);
	sb->nodesize = htole32(fs_info->nodesize);
	sb->sectorsize = htole32(fs_info->sectorsize);
	sb->csum_type = htole16(fs_info->csum_type);
	sb->compat_ro_flags = htole64(fs_info->compat_ro);
	sb->incompat_flags = htole64(fs_info->incompat);
	sb->num_devices = htole64(num_devices);
	/* the kernel's super total_bytes: the non-seed devices' sizes */
	for (d = 0; d < fs_info->nr_devices; d++)
		if (!memcmp(fs_info->devices[d].fsid, fs_info->metadata_uuid, BTRFS_FSID_SIZE))
			total += fs_info->devices[d].total_bytes;
	sb->total_bytes = htole64(total);
	/* its bytes_used: every space info's bytes_used, as sysfs shows them now */
	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++)
		used += ctx->live->sysfs[i].bytes_used;
	sb->bytes_used = htole64(used);
	if (!read_sysfs(ctx->live->sysfs_dir, "label", label, sizeof(label)))
		memcpy(sb->label, label, strnlen(label, BTRFS_LABEL_SIZE - 1));
}

/* sysfs allocation/: the kernel's space infos and global reserve now */
const char * const btrfs_live_reclaim_files[BTRFS_LIVE_NR_RECLAIM] = {
	"bg_reclaim_threshold", "dynamic_reclaim", "periodic_reclaim",
	"reclaim_count", "reclaim_bytes", "reclaim_errors",
};

const char * const btrfs_live_size_classes[BTRFS_LIVE_NR_SIZE_CLASSES] = {
	"none", "small", "medium", "large",
};

/* btrfs_size_classes_show(): one "NAME COUNT" line per class */
static bool read_size_classes(const char *sdir, u64 *counts)
{
	char buf[256], *line, *save = NULL;
	int found = 0, i;

	if (read_sysfs(sdir, "size_classes", buf, sizeof(buf)))
		return false;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[16];
		unsigned long long n;

		if (sscanf(line, "%15s %llu", name, &n) != 2)
			continue;
		for (i = 0; i < BTRFS_LIVE_NR_SIZE_CLASSES; i++) {
			if (strcmp(name, btrfs_live_size_classes[i]))
				continue;
			counts[i] = n;
			found++;
		}
	}
	return found == BTRFS_LIVE_NR_SIZE_CLASSES;
}

/* The reclaim and size-class files, each where the kernel has it */
static void live_read_reclaim(const char *sdir, struct btrfs_live_space_info *s)
{
	int i;

	for (i = 0; i < BTRFS_LIVE_NR_RECLAIM; i++)
		s->has_reclaim[i] = !read_sysfs_u64(sdir, btrfs_live_reclaim_files[i],
						    &s->reclaim[i]);
	s->has_size_classes = read_size_classes(sdir, s->size_classes);
}

static void live_read_allocation(struct live_ctx *ctx)
{
	struct btrfs_live *live = ctx->live;
	char dir[128];
	int i;

	snprintf(dir, sizeof(dir), "%s/allocation", live->sysfs_dir);
	live->has_global_rsv =
		!read_sysfs_u64(dir, "global_rsv_size", &live->global_rsv_size) &&
		!read_sysfs_u64(dir, "global_rsv_reserved", &live->global_rsv_reserved);
	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++) {
		struct btrfs_live_space_info *s = &live->sysfs[i];
		char sdir[192];

		snprintf(sdir, sizeof(sdir), "%s/%s", dir, btrfs_space_info_name(i));
		s->present = !read_sysfs_u64(sdir, "total_bytes", &s->total_bytes) &&
			     !read_sysfs_u64(sdir, "bytes_used", &s->bytes_used) &&
			     !read_sysfs_u64(sdir, "bytes_may_use", &s->bytes_may_use) &&
			     !read_sysfs_u64(sdir, "bytes_pinned", &s->bytes_pinned) &&
			     !read_sysfs_u64(sdir, "bytes_reserved", &s->bytes_reserved) &&
			     !read_sysfs_u64(sdir, "bytes_readonly", &s->bytes_readonly);
		if (!s->present)
			continue;
		read_sysfs_u64(sdir, "bytes_zone_unusable", &s->bytes_zone_unusable);
		read_sysfs_u64(sdir, "disk_total", &s->disk_total);
		read_sysfs_u64(sdir, "disk_used", &s->disk_used);
		/* since 6.0; the user may have changed it */
		s->has_chunk_size = !read_sysfs_u64(sdir, "chunk_size", &s->chunk_size);
		live_read_reclaim(sdir, s);
	}
}

/*
 * The devices' sizes as the kernel holds them now (BTRFS_IOC_DEV_INFO
 * gives the in-memory bytes_used, which chunk allocation changes before
 * the dev item), and what read_one_dev() and the allocator keep of them:
 * total_rw_bytes and free_chunk_space of the writeable devices.
 */
static int live_read_device_sizes(struct live_ctx *ctx)
{
	struct btrfs_fs_info *fs_info = ctx->fs_info;
	u32 i;

	fs_info->total_rw_bytes = 0;
	fs_info->free_chunk_space = 0;
	for (i = 0; i < fs_info->nr_devices; i++) {
		struct btrfs_device *dev = &fs_info->devices[i];
		struct btrfs_ioctl_dev_info_args di;

		if (!dev->present)
			continue;
		memset(&di, 0, sizeof(di));
		di.devid = dev->devid;
		if (ioctl(ctx->fd, BTRFS_IOC_DEV_INFO, &di) < 0)
			return live_error(ctx, -errno, "BTRFS_IOC_DEV_INFO");
		dev->total_bytes = di.total_bytes;
		dev->bytes_used = di.bytes_used;
		if (!dev->writeable)
			continue;
		fs_info->total_rw_bytes += dev->total_bytes;
		if (dev->total_bytes > dev->bytes_used)
			fs_info->free_chunk_space += dev->total_bytes - dev->bytes_used;
	}
	return 0;
}

static u64 space_info_type_flags(int index)
{
	switch (index) {
	case BTRFS_SPACE_DATA: return BTRFS_BLOCK_GROUP_DATA;
	case BTRFS_SPACE_METADATA: return BTRFS_BLOCK_GROUP_METADATA;
	case BTRFS_SPACE_SYSTEM: return BTRFS_BLOCK_GROUP_SYSTEM;
	default: return BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA;
	}
}

/*
 * The kernel's figures now replace those of the last commit's block group
 * items: each space info sysfs shows, and the global reserve.  The
 * profiles and block-group counts stay those of the items.
 */
static void live_apply_allocation(struct live_ctx *ctx)
{
	struct btrfs_fs_info *fs_info = ctx->fs_info;
	const struct btrfs_live *live = ctx->live;
	int i;

	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++) {
		const struct btrfs_live_space_info *s = &live->sysfs[i];
		struct btrfs_space_info *si = &fs_info->space_info[i];

		if (!s->present)
			continue;
		if (!si->present) {
			si->present = true;
			si->flags = space_info_type_flags(i);
		}
		si->total_bytes = s->total_bytes;
		si->bytes_used = s->bytes_used;
		si->bytes_readonly = s->bytes_readonly;
		si->bytes_zone_unusable = s->bytes_zone_unusable;
		si->bytes_may_use = s->bytes_may_use;
		si->bytes_pinned = s->bytes_pinned;
		si->bytes_reserved = s->bytes_reserved;
		si->disk_total = s->disk_total;
		si->disk_used = s->disk_used;
		if (s->has_chunk_size)
			si->chunk_size = s->chunk_size;
	}
	if (live->has_global_rsv) {
		fs_info->global_rsv_size = live->global_rsv_size;
		fs_info->global_rsv_reserved = live->global_rsv_reserved;
	}
}

/*
 * One snapshot of the kernel's accounting, taken right after the tree
 * searches: the devices' sizes, then sysfs allocation/, each file read
 * once.  Every section of the report uses these same numbers.
 */
static int live_snapshot(struct live_ctx *ctx, bool load_block_groups)
{
	int ret = live_read_device_sizes(ctx);

	if (ret)
		return ret;
	live_read_allocation(ctx);
	if (load_block_groups)
		live_apply_allocation(ctx);
	return 0;
}

/*
 * The super options of the btrfs mount @path is in: the mountinfo line
 * whose mount point is the longest one containing @path
 */
static void live_super_opts(struct btrfs_live *live)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[3 * PATH_MAX];
	size_t best = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char point[PATH_MAX], fstype[64], source[PATH_MAX], opts[1024];
		const char *sep = strstr(line, " - ");
		size_t len;

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(sep + 3, "%63s %4095s %1023s", fstype, source, opts) != 3 ||
		    strcmp(fstype, "btrfs"))
			continue;
		/* a mount point with a space is escaped (\040): it does not match */
		len = strlen(point);
		if (strncmp(live->mountpoint, point, len) ||
		    (len > 1 && live->mountpoint[len] && live->mountpoint[len] != '/') ||
		    len < best)
			continue;
		best = len;
		live->has_super_opts = true;
		snprintf(live->super_opts, sizeof(live->super_opts), "%s", opts);
	}
	fclose(f);
}

static int live_setup(struct live_ctx *ctx, const char *path)
{
	struct statvfs svfs;
	char *real = realpath(path, NULL);

	snprintf(ctx->live->mountpoint, sizeof(ctx->live->mountpoint), "%s",
		 real ? real : path);
	free(real);
	live_super_opts(ctx->live);
	ctx->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ctx->fd < 0)
		return live_error(ctx, -errno, "cannot open");
	if (fstatvfs(ctx->fd, &svfs) == 0)
		ctx->live->read_only = !!(svfs.f_flag & ST_RDONLY);
	ctx->args = calloc(1, sizeof(*ctx->args) + LIVE_SEARCH_BUF);
	return ctx->args ? 0 : -ENOMEM;
}

/* One pass over the kernel's trees; -EAGAIN when they changed under it */
static int live_open_once(struct btrfs_fs_info *fs_info, const char *path,
			  bool load_block_groups)
{
	struct live_ctx ctx = { .fs_info = fs_info, .fd = -1 };
	u64 num_devices = 0;
	char fsid[37];
	int ret;

	btrfs_fs_info_init(fs_info);
	fs_info->live = calloc(1, sizeof(*fs_info->live));
	if (!fs_info->live)
		return -ENOMEM;
	ctx.live = fs_info->live;
	ret = live_setup(&ctx, path);
	if (!ret)
		ret = live_fs_info(&ctx, &num_devices);
	if (!ret) {
		uuid_text(fs_info->fsid, fsid);
		snprintf(ctx.live->sysfs_dir, sizeof(ctx.live->sysfs_dir),
			 "/sys/fs/btrfs/%s", fsid);
		ret = live_features(&ctx);
	}
	if (!ret)
		ret = live_chunk_tree(&ctx);
	if (!ret)
		ret = live_devices(&ctx);
	if (!ret)
		ret = live_roots(&ctx);
	if (!ret && load_block_groups)
		ret = live_block_groups(&ctx);
	if (!ret)
		ret = live_snapshot(&ctx, load_block_groups);
	if (!ret) {
		ctx.live->super_from_device = live_super_from_devices(fs_info);
		if (!ctx.live->super_from_device)
			live_super_synth(&ctx, num_devices);
	}
	free(ctx.args);
	if (ctx.fd >= 0)
		close(ctx.fd);
	return ret;
}

int btrfs_live_open(struct btrfs_fs_info *fs_info, const char *path,
		    bool load_block_groups)
{
	struct btrfs_error last;
	int attempt, ret;

	for (attempt = 1; ; attempt++) {
		ret = live_open_once(fs_info, path, load_block_groups);
		if (ret != -EAGAIN)
			return ret;
		if (attempt == BTRFS_LIVE_ATTEMPTS)
			break;
		/* a transaction is between two steps: let it finish */
		btrfs_close_fs(fs_info);
		usleep(attempt * 20000);
	}
	last = fs_info->err;
	memset(&fs_info->err, 0, sizeof(fs_info->err));
	return btrfs_fs_error(fs_info, -EAGAIN,
			      "the filesystem changed during %d attempts: %s",
			      BTRFS_LIVE_ATTEMPTS, last.msg);
}

struct live_extents {
	btrfs_live_extent_fn fn;
	void *arg;
};

static int live_extent_item(struct live_ctx *ctx, const struct btrfs_key *key,
			    const void *item, u32 len, void *data)
{
	struct live_extents *le = data;

	if (key->type != BTRFS_EXTENT_ITEM_KEY && key->type != BTRFS_METADATA_ITEM_KEY)
		return 0;
	return le->fn(le->arg, key);
}

int btrfs_live_extent_items(struct btrfs_fs_info *fs_info, u64 start, u64 end,
			    btrfs_live_extent_fn fn, void *arg)
{
	struct live_ctx ctx = { .fs_info = fs_info, .live = fs_info->live, .fd = -1 };
	struct live_extents le = { .fn = fn, .arg = arg };
	struct btrfs_key min = { .objectid = start };
	struct btrfs_key max = { .objectid = end - 1, .type = 0xff, .offset = (u64)-1 };
	int ret;

	if (!ctx.live || end <= start)
		return -EINVAL;
	ctx.fd = open(ctx.live->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ctx.fd < 0)
		return live_error(&ctx, -errno, "cannot open");
	ctx.args = calloc(1, sizeof(*ctx.args) + LIVE_SEARCH_BUF);
	ret = ctx.args ? tree_search(&ctx, BTRFS_EXTENT_TREE_OBJECTID, &min, &max,
				     live_extent_item, &le) : -ENOMEM;
	free(ctx.args);
	close(ctx.fd);
	return ret;
}

bool btrfs_live_on_disk_readable(const struct btrfs_fs_info *fs_info)
{
	return fs_info->live && fs_info->live->super_from_device;
}

/*
 * The primary superblock's generation on each present device, read past
 * the page cache: the kernel writes the devices without going through it,
 * so a page we read before may be older than the disk.
 */
static int disk_generations(const struct btrfs_fs_info *fs_info, u64 *gens)
{
	struct btrfs_super_block sb;
	u32 i, n = 0;

	for (i = 0; i < fs_info->nr_devices; i++) {
		const struct btrfs_device *dev = &fs_info->devices[i];
		ssize_t got;
		int fd;

		if (!dev->present)
			continue;
		fd = open(dev->io.path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		/* the whole device: the replay reads what is on disk now */
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		got = pread(fd, &sb, sizeof(sb), BTRFS_SUPER_INFO_OFFSET);
		close(fd);
		if (got != (ssize_t)sizeof(sb) || btrfs_super_magic(&sb) != BTRFS_MAGIC ||
		    memcmp(sb.fsid, fs_info->fsid, BTRFS_FSID_SIZE))
			return -EIO;
		gens[n++] = btrfs_super_generation(&sb);
	}
	return 0;
}

static void add_io_stats(struct io_stats *to, const struct io_stats *from)
{
	int i;

	to->total.reads += from->total.reads;
	to->total.bytes += from->total.bytes;
	for (i = 0; i < IO_MAX_PURPOSES; i++) {
		to->by_purpose[i].reads += from->by_purpose[i].reads;
		to->by_purpose[i].bytes += from->by_purpose[i].bytes;
	}
}

/*
 * One offline open of the devices and the replay on it.  A replay that
 * passed is right whatever the kernel did meanwhile: every block was
 * checked against its parent's pointer (bytenr, generation, checksum), and
 * a block written again since carries a newer generation.  A failure is
 * a race when a superblock changed during the attempt (@settled false);
 * on unchanged superblocks every block reachable from them stayed in
 * place (a commit writes only space free in the last one, and what it
 * frees stays pinned until its own superblock is written), so it is real
 * corruption.
 */
static int estimate_attempt(struct btrfs_fs_info *fs_info, u64 *before, u64 *after,
			    struct btrfs_mount_estimate *est, bool *settled)
{
	struct btrfs_open_args args = { .allow_degraded = fs_info->degraded };
	struct btrfs_fs_info *disk;
	const char **paths;
	u32 i, n = 0;
	int ret;

	*settled = false;
	paths = calloc(fs_info->nr_devices ? fs_info->nr_devices : 1, sizeof(*paths));
	disk = calloc(1, sizeof(*disk));
	if (!paths || !disk) {
		free(paths);
		free(disk);
		return -ENOMEM;
	}
	for (i = 0; i < fs_info->nr_devices; i++)
		if (fs_info->devices[i].present)
			paths[n++] = fs_info->devices[i].io.path;
	args.paths = paths;
	args.nr_paths = (int)n;
	ret = disk_generations(fs_info, before);
	if (!ret) {
		ret = btrfs_open_fs(disk, &args);
		if (!ret)
			ret = btrfs_estimate_mount(disk, est);
		*settled = !ret || ret == -ENOMEM ||
			   (!disk_generations(fs_info, after) &&
			    !memcmp(before, after, n * sizeof(*before)));
	}
	add_io_stats(&fs_info->io_stats, &disk->io_stats);
	if (ret && *settled && !fs_info->err.err)
		fs_info->err = disk->err;
	btrfs_close_fs(disk);
	free(disk);
	free(paths);
	return ret;
}

int btrfs_live_estimate_mount(struct btrfs_fs_info *fs_info, struct btrfs_mount_estimate *est)
{
	u64 *before, *after;
	bool settled = false;
	int ret = 0;
	u32 attempt;

	before = calloc(fs_info->nr_devices + 1, sizeof(*before));
	after = calloc(fs_info->nr_devices + 1, sizeof(*after));
	if (!before || !after) {
		free(before);
		free(after);
		return -ENOMEM;
	}
	for (attempt = 1; attempt <= BTRFS_LIVE_ATTEMPTS; attempt++) {
		ret = estimate_attempt(fs_info, before, after, est, &settled);
		if (settled)
			break;
		/* a commit is under way: give it the time to end */
		usleep(attempt * 20000);
	}
	free(before);
	free(after);
	if (settled) {
		est->attempts = attempt;
		return ret;
	}
	memset(est, 0, sizeof(*est));
	est->attempts = BTRFS_LIVE_ATTEMPTS;
	est->fs_changed = true;
	return 0;
}

int btrfs_live_resolve_path(const u8 *fsid, const char *path, u64 *subvol, u64 *ino)
{
	struct btrfs_ioctl_ino_lookup_args lookup;
	struct btrfs_ioctl_fs_info_args fi;
	unsigned long long st_ino;
	int fd, ret = 0;

	fd = open_path_inode(path, &st_ino);
	if (fd < 0)
		return fd;
	memset(&fi, 0, sizeof(fi));
	memset(&lookup, 0, sizeof(lookup));
	lookup.objectid = BTRFS_FIRST_FREE_OBJECTID;
	if (ioctl(fd, BTRFS_IOC_FS_INFO, &fi) < 0 ||
	    memcmp(fi.fsid, fsid, BTRFS_FSID_SIZE))
		ret = -EXDEV;
	else if (ioctl(fd, BTRFS_IOC_INO_LOOKUP, &lookup) < 0)
		ret = -errno;
	close(fd);
	if (ret)
		return ret;
	*subvol = lookup.treeid;
	*ino = st_ino;
	return 0;
}
