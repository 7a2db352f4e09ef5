// SPDX-License-Identifier: GPL-2.0
/*
 * What mkfs.btrfs of btrfs-progs v6.2 makes on empty devices
 * (mkfs-layout.h), step by step as its main() does:
 *
 * - make_btrfs() (mkfs/common.c): a 4 MiB single SYSTEM chunk at 1 MiB of
 *   the first device, logical = physical, holding every first tree block;
 * - create_metadata_block_groups() and create_data_block_groups()
 *   (mkfs/main.c): one temporary single METADATA and DATA chunk each,
 *   made by btrfs_alloc_chunk() with the first device alone;
 * - btrfs_add_to_fsid() (common/device-scan.c) for each other device:
 *   list_add() puts it at the head of the device list;
 * - create_raid_groups(): SYSTEM and METADATA chunks of the metadata
 *   profile, a DATA chunk of the data profile (none for single);
 * - recow_roots(), create_data_reloc_tree(), create_uuid_tree(): the tree
 *   blocks move to the newest chunks: one block (the chunk root) in the
 *   SYSTEM chunk, eight in the METADATA one (root, extent, device, fs,
 *   csum, free space, data reloc and uuid trees);
 * - cleanup_temp_chunks(): an empty chunk whose profile is not the one
 *   asked for (is_temp_block_group()) is removed.
 *
 * btrfs_alloc_chunk() (kernel-shared/volumes.c of btrfs-progs) is not the
 * kernel's allocator: it walks the device list in its order and takes the
 * first devices with room (btrfs_device_avail_bytes(): every hole from
 * 1 MiB counted), caps a chunk at a tenth of the filesystem divided by the
 * number of stripes (init_alloc_chunk_ctl_policy_regular(),
 * decide_stripe_size_regular()), and puts each stripe in the first hole
 * that fits (find_free_dev_extent_start()); create_chunk() moves each
 * device it uses back to the head of the list.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/checksum.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/mkfs-layout.h"
#include "kernel-shared/space-info.h"
#include "kernel-shared/tree-checker.h"
#include "kernel-shared/volumes.h"

#define MKFS_RESERVED			SZ_1M		/* BTRFS_BLOCK_RESERVED_1M_FOR_SUPER */
#define MKFS_SYSTEM_GROUP_SIZE		(4 * SZ_1M)	/* BTRFS_MKFS_SYSTEM_GROUP_SIZE */
#define MKFS_STRIPE_LEN			(64ULL << 10)	/* BTRFS_STRIPE_LEN */
#define MKFS_BIG_METADATA_RW_BYTES	(50ULL << 30)
#define MKFS_TREES_IN_METADATA		8
#define MKFS_MAX_CHUNKS			6	/* 3 temporary, 3 of the profiles */
#define MKFS_MAX_EXTENTS		(2 * MKFS_MAX_CHUNKS)
/* sizeof(struct btrfs_disk_key): BTRFS_MAX_DEVS_SYS_CHUNK */
#define MKFS_DISK_KEY_SIZE		17

struct mkfs_extent {
	u64 start;
	u64 length;
};

struct mkfs_device {
	u64 devid;
	u64 total_bytes;
	u64 bytes_used;
	struct mkfs_extent extents[MKFS_MAX_EXTENTS];	/* sorted by start */
	u32 nr_extents;
};

struct mkfs_chunk {
	u64 start;
	u64 length;
	u64 type;
	u64 stripe_size;
	u64 used;
	u16 num_stripes;
	u16 sub_stripes;
	bool removed;
	u32 *dev;			/* index into mkfs_state.devs */
	u64 *physical;
};

struct mkfs_state {
	struct mkfs_device *devs;	/* devid i + 1 at i */
	u32 nr_devs;			/* added so far */
	u32 *list;			/* fs_devices->devices, head first */
	u32 nr_list;
	u64 super_total;		/* super total_bytes = total_rw_bytes */
	u32 max_devs;			/* BTRFS_MAX_DEVS() */
	struct mkfs_chunk chunks[MKFS_MAX_CHUNKS];
	u32 nr_chunks;
};

/* struct alloc_chunk_ctl of btrfs-progs */
struct mkfs_alloc_ctl {
	u64 type;
	u64 stripe_size;
	u64 min_stripe_size;
	u64 max_chunk_size;
	u32 num_stripes;
	u32 min_stripes;
	u32 max_stripes;
	u32 sub_stripes;
	u32 nparity;
	u32 total_devs;
};

u64 btrfs_mkfs_default_profile(u64 type, u32 nr_devices)
{
	/* BTRFS_MKFS_DEFAULT_{DATA,META}_{ONE,MULTI}_DEVICE */
	if (type & BTRFS_BLOCK_GROUP_DATA)
		return 0;
	return nr_devices > 1 ? BTRFS_BLOCK_GROUP_RAID1 : BTRFS_BLOCK_GROUP_DUP;
}

static void list_push_head(struct mkfs_state *st, u32 dev)
{
	memmove(&st->list[1], &st->list[0], st->nr_list * sizeof(st->list[0]));
	st->list[0] = dev;
	st->nr_list++;
}

static void list_remove(struct mkfs_state *st, u32 dev)
{
	u32 i;

	for (i = 0; i < st->nr_list; i++) {
		if (st->list[i] != dev)
			continue;
		memmove(&st->list[i], &st->list[i + 1],
			(st->nr_list - i - 1) * sizeof(st->list[0]));
		st->nr_list--;
		return;
	}
}

/* btrfs_device_avail_bytes(): every hole from 1 MiB to the end */
static u64 device_avail_bytes(const struct mkfs_device *dev)
{
	u64 search_start = MKFS_RESERVED, free_bytes = 0;
	u32 i;

	for (i = 0; i < dev->nr_extents; i++) {
		const struct mkfs_extent *e = &dev->extents[i];

		if (e->start > dev->total_bytes)
			break;
		if (e->start > search_start)
			free_bytes += e->start - search_start;
		if (e->start + e->length > search_start)
			search_start = e->start + e->length;
	}
	if (search_start < dev->total_bytes)
		free_bytes += dev->total_bytes - search_start;
	return free_bytes;
}

/* find_free_dev_extent_start() from 1 MiB: the first hole that fits */
static int find_free_dev_extent(const struct mkfs_device *dev, u64 num_bytes, u64 *start)
{
	u64 search_start = MKFS_RESERVED;
	u32 i;

	for (i = 0; i < dev->nr_extents; i++) {
		const struct mkfs_extent *e = &dev->extents[i];

		if (e->start > search_start && e->start - search_start >= num_bytes)
			break;
		if (e->start + e->length > search_start)
			search_start = e->start + e->length;
	}
	if (search_start >= dev->total_bytes || dev->total_bytes - search_start < num_bytes)
		return -ENOSPC;
	*start = search_start;
	return 0;
}

static int add_dev_extent(struct mkfs_device *dev, u64 start, u64 length)
{
	u32 i;

	if (dev->nr_extents == MKFS_MAX_EXTENTS)
		return -EINVAL;
	for (i = dev->nr_extents; i > 0 && dev->extents[i - 1].start > start; i--)
		dev->extents[i] = dev->extents[i - 1];
	dev->extents[i].start = start;
	dev->extents[i].length = length;
	dev->nr_extents++;
	dev->bytes_used += length;
	return 0;
}

static void remove_dev_extent(struct mkfs_device *dev, u64 start)
{
	u32 i;

	for (i = 0; i < dev->nr_extents; i++) {
		if (dev->extents[i].start != start)
			continue;
		dev->bytes_used -= dev->extents[i].length;
		memmove(&dev->extents[i], &dev->extents[i + 1],
			(dev->nr_extents - i - 1) * sizeof(dev->extents[0]));
		dev->nr_extents--;
		return;
	}
}

/* chunk_bytes_by_type() */
static u64 chunk_bytes(const struct mkfs_alloc_ctl *ctl)
{
	if (ctl->type & (BTRFS_BLOCK_GROUP_RAID1_MASK | BTRFS_BLOCK_GROUP_DUP))
		return ctl->stripe_size;
	if (ctl->type & BTRFS_BLOCK_GROUP_RAID10)
		return ctl->stripe_size * (ctl->num_stripes / ctl->sub_stripes);
	if (ctl->type & BTRFS_BLOCK_GROUP_RAID56_MASK)
		return ctl->stripe_size * (ctl->num_stripes - ctl->nparity);
	return ctl->stripe_size * ctl->num_stripes;
}

/* init_alloc_chunk_ctl() with init_alloc_chunk_ctl_policy_regular() */
static void init_alloc_ctl(const struct mkfs_state *st, u64 type, struct mkfs_alloc_ctl *ctl)
{
	enum btrfs_raid_types index = btrfs_bg_flags_to_raid_index(type);
	const struct btrfs_raid_attr *attr = &btrfs_raid_array[index];
	u64 percent_max;

	memset(ctl, 0, sizeof(*ctl));
	ctl->type = type;
	ctl->num_stripes = attr->dev_stripes;
	ctl->min_stripes = attr->devs_min;
	ctl->sub_stripes = attr->sub_stripes;
	ctl->nparity = attr->nparity;
	ctl->stripe_size = 8 * SZ_1M;
	ctl->min_stripe_size = SZ_1M;
	ctl->max_chunk_size = 4 * ctl->stripe_size;
	ctl->total_devs = st->nr_devs;
	/* only a type with profile bits gets the sizes of its kind */
	if (type & BTRFS_BLOCK_GROUP_PROFILE_MASK) {
		if (type & BTRFS_BLOCK_GROUP_SYSTEM) {
			ctl->stripe_size = 8 * SZ_1M;
			ctl->max_chunk_size = 2 * ctl->stripe_size;
			ctl->max_stripes = (BTRFS_SYSTEM_CHUNK_ARRAY_SIZE - 2 * MKFS_DISK_KEY_SIZE -
					    2 * sizeof(struct btrfs_chunk)) /
					   sizeof(struct btrfs_stripe) + 1;
		} else if (type & BTRFS_BLOCK_GROUP_DATA) {
			ctl->stripe_size = 1024 * SZ_1M;
			ctl->max_chunk_size = 10 * ctl->stripe_size;
			ctl->min_stripe_size = 64 * SZ_1M;
			ctl->max_stripes = st->max_devs;
		} else {
			ctl->max_chunk_size = st->super_total > MKFS_BIG_METADATA_RW_BYTES ?
					      1024 * SZ_1M : 256 * SZ_1M;
			ctl->stripe_size = ctl->max_chunk_size;
			ctl->min_stripe_size = 32 * SZ_1M;
			ctl->max_stripes = st->max_devs;
		}
	}
	/* a tenth of the filesystem: div_factor(total_bytes, 1) */
	percent_max = st->super_total / 10;
	ctl->max_chunk_size = min_t(u64, percent_max, ctl->max_chunk_size);
	switch (index) {
	case BTRFS_RAID_DUP:
		ctl->min_stripes = 2;
		break;
	case BTRFS_RAID_RAID1:
	case BTRFS_RAID_RAID1C3:
	case BTRFS_RAID_RAID1C4:
		ctl->num_stripes = min_t(u32, ctl->min_stripes, ctl->total_devs);
		break;
	case BTRFS_RAID_RAID0:
	case BTRFS_RAID_RAID10:
	case BTRFS_RAID_RAID5:
	case BTRFS_RAID_RAID6:
		ctl->num_stripes = min_t(u32, ctl->max_stripes, ctl->total_devs);
		if (index == BTRFS_RAID_RAID10)
			ctl->num_stripes &= ~1U;
		break;
	default:
		break;
	}
}

/* decide_stripe_size_regular(): progs divides by every stripe, mirrors too */
static void decide_stripe_size(struct mkfs_alloc_ctl *ctl)
{
	if (chunk_bytes(ctl) > ctl->max_chunk_size) {
		ctl->stripe_size = ctl->max_chunk_size / ctl->num_stripes;
		ctl->stripe_size -= ctl->stripe_size % MKFS_STRIPE_LEN;
	}
	ctl->stripe_size = max_t(u64, ctl->stripe_size, ctl->min_stripe_size);
	ctl->stripe_size -= ctl->stripe_size % MKFS_STRIPE_LEN;
}

/* find_next_chunk(): after the last chunk item */
static u64 next_logical(const struct mkfs_state *st)
{
	u64 end = 0;
	u32 i;

	for (i = 0; i < st->nr_chunks; i++)
		end = max_t(u64, end, st->chunks[i].start + st->chunks[i].length);
	return end;
}

/*
 * create_chunk(): one stripe after another from the private list's head;
 * each device goes back to the head of the device list as it is used
 * (a DUP device after its last stripe).
 */
static int create_chunk(struct mkfs_state *st, const struct mkfs_alloc_ctl *ctl,
			u32 *private, u32 nr_private)
{
	struct mkfs_chunk *c = &st->chunks[st->nr_chunks];
	u32 index, head = 0;
	int ret;

	if (st->nr_chunks == MKFS_MAX_CHUNKS)
		return -EINVAL;
	c->dev = calloc(ctl->num_stripes, sizeof(*c->dev));
	c->physical = calloc(ctl->num_stripes, sizeof(*c->physical));
	if (!c->dev || !c->physical) {
		free(c->dev);
		free(c->physical);
		return -ENOMEM;
	}
	c->start = next_logical(st);
	c->length = chunk_bytes(ctl);
	c->type = ctl->type;
	c->stripe_size = ctl->stripe_size;
	c->num_stripes = ctl->num_stripes;
	c->sub_stripes = ctl->sub_stripes;
	st->nr_chunks++;
	for (index = 0; index < ctl->num_stripes && head < nr_private; index++) {
		u32 dev = private[head];

		if (!(ctl->type & BTRFS_BLOCK_GROUP_DUP) || index == ctl->num_stripes - 1) {
			list_push_head(st, dev);
			head++;
		}
		ret = find_free_dev_extent(&st->devs[dev], ctl->stripe_size, &c->physical[index]);
		if (!ret)
			ret = add_dev_extent(&st->devs[dev], c->physical[index], ctl->stripe_size);
		if (ret)
			goto fail;
		c->dev[index] = dev;
	}
	return 0;
fail:
	/* devices not used go back to the list */
	while (head < nr_private)
		list_push_head(st, private[head++]);
	return ret;
}

/*
 * The loop of btrfs_alloc_chunk(): from the list's head, each device with
 * room for its stripes (btrfs_device_avail_bytes()) moves to the head of
 * the private list, until there are enough.  Returns how many stripes they
 * give; *max_avail is the most room of a device passed over.
 */
static u32 pick_devices(struct mkfs_state *st, const struct mkfs_alloc_ctl *ctl,
			u32 *walk, u32 *private, u32 *nr_private, u64 *max_avail)
{
	bool dup = ctl->type & BTRFS_BLOCK_GROUP_DUP;
	u64 min_free = dup ? 2 * ctl->stripe_size : ctl->stripe_size;
	u32 nr_walk = st->nr_list, index = 0, i;

	memcpy(walk, st->list, nr_walk * sizeof(*walk));
	*nr_private = 0;
	*max_avail = 0;
	for (i = 0; i < nr_walk && index < ctl->num_stripes; i++) {
		u64 avail = device_avail_bytes(&st->devs[walk[i]]);

		if (avail < min_free) {
			*max_avail = max_t(u64, *max_avail, avail);
			continue;
		}
		list_remove(st, walk[i]);
		memmove(&private[1], &private[0], *nr_private * sizeof(*private));
		private[0] = walk[i];
		(*nr_private)++;
		index += dup ? 2 : 1;
	}
	return index;
}

/*
 * btrfs_alloc_chunk(): the devices pick_devices() finds; too few, and it
 * tries again with as many stripes as they give (at least the profile's
 * minimum), or once with the largest room seen as the stripe.
 */
static int alloc_chunk(struct mkfs_state *st, u64 type)
{
	struct mkfs_alloc_ctl ctl;
	bool looped = false;
	u32 *private, *walk, nr_private, index;
	u64 max_avail;
	int ret = -ENOSPC;

	init_alloc_ctl(st, type, &ctl);
	if (ctl.num_stripes < ctl.min_stripes)
		return -ENOSPC;
	private = calloc(st->nr_devs + 1, sizeof(*private));
	walk = calloc(st->nr_devs + 1, sizeof(*walk));
	if (!private || !walk) {
		ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		decide_stripe_size(&ctl);
		index = pick_devices(st, &ctl, walk, private, &nr_private, &max_avail);
		if (index >= ctl.num_stripes)
			break;
		/* list_splice(): the private list back at the head, in its order */
		while (nr_private)
			list_push_head(st, private[--nr_private]);
		if (index >= ctl.min_stripes) {
			ctl.num_stripes = index;
			if (type & BTRFS_BLOCK_GROUP_RAID10)
				ctl.num_stripes -= ctl.num_stripes % ctl.sub_stripes;
		} else if (!looped && max_avail > 0) {
			ctl.stripe_size = type & BTRFS_BLOCK_GROUP_DUP ? max_avail / 2 : max_avail;
		} else {
			ret = -ENOSPC;
			goto out;
		}
		looped = true;
	}
	ret = create_chunk(st, &ctl, private, nr_private);
out:
	free(private);
	free(walk);
	return ret;
}

/* make_btrfs(): the first device and its SYSTEM chunk, logical = physical */
static int make_btrfs(struct mkfs_state *st, u64 size)
{
	struct mkfs_chunk *c = &st->chunks[0];

	st->devs[0].devid = 1;
	st->devs[0].total_bytes = size;
	st->nr_devs = 1;
	st->super_total = size;
	list_push_head(st, 0);
	if (size < MKFS_RESERVED + MKFS_SYSTEM_GROUP_SIZE)
		return -ENOSPC;
	c->dev = calloc(1, sizeof(*c->dev));
	c->physical = calloc(1, sizeof(*c->physical));
	if (!c->dev || !c->physical)
		return -ENOMEM;
	c->start = MKFS_RESERVED;
	c->length = MKFS_SYSTEM_GROUP_SIZE;
	c->type = BTRFS_BLOCK_GROUP_SYSTEM;
	c->stripe_size = MKFS_SYSTEM_GROUP_SIZE;
	c->num_stripes = 1;
	c->sub_stripes = 1;
	c->physical[0] = MKFS_RESERVED;
	st->nr_chunks = 1;
	return add_dev_extent(&st->devs[0], MKFS_RESERVED, MKFS_SYSTEM_GROUP_SIZE);
}

/* btrfs_add_to_fsid(): devid in order, at the head of the list */
static void add_to_fsid(struct mkfs_state *st, u64 size)
{
	u32 i = st->nr_devs++;

	st->devs[i].devid = i + 1;
	st->devs[i].total_bytes = size;
	st->super_total += size;
	list_push_head(st, i);
}

/* The newest live chunk of @type: where recow_roots() put the tree blocks */
static struct mkfs_chunk *newest_chunk(struct mkfs_state *st, u64 type)
{
	u32 i;

	for (i = st->nr_chunks; i-- > 0;)
		if ((st->chunks[i].type & BTRFS_BLOCK_GROUP_TYPE_MASK) == type)
			return &st->chunks[i];
	return NULL;
}

/* is_temp_block_group(): empty, and not the profile asked for */
static bool is_temp_chunk(const struct mkfs_chunk *c, u64 data_profile, u64 meta_profile)
{
	u64 profile = c->type & BTRFS_BLOCK_GROUP_PROFILE_MASK;

	if (c->used)
		return false;
	if (c->type & BTRFS_BLOCK_GROUP_DATA)
		return profile != (data_profile & BTRFS_BLOCK_GROUP_PROFILE_MASK);
	return profile != (meta_profile & BTRFS_BLOCK_GROUP_PROFILE_MASK);
}

/* cleanup_temp_chunks(): btrfs_remove_block_group() frees the dev extents */
static void cleanup_temp_chunks(struct mkfs_state *st, u64 data_profile, u64 meta_profile)
{
	u32 i;
	u16 s;

	for (i = 0; i < st->nr_chunks; i++) {
		struct mkfs_chunk *c = &st->chunks[i];

		if (!is_temp_chunk(c, data_profile, meta_profile))
			continue;
		for (s = 0; s < c->num_stripes; s++)
			remove_dev_extent(&st->devs[c->dev[s]], c->physical[s]);
		c->removed = true;
	}
}

static int run_mkfs(const struct btrfs_mkfs_args *args, u32 nodesize, u32 sectorsize,
		    struct mkfs_state *st, u64 data_profile, u64 meta_profile)
{
	struct mkfs_chunk *c;
	u32 i;
	int ret;

	/* the device sizes are taken in whole sectors */
	ret = make_btrfs(st, args->sizes[0] - args->sizes[0] % sectorsize);
	if (!ret)
		ret = alloc_chunk(st, BTRFS_BLOCK_GROUP_METADATA);
	if (!ret)
		ret = alloc_chunk(st, BTRFS_BLOCK_GROUP_DATA);
	if (ret)
		return ret;
	for (i = 1; i < args->nr_devices; i++)
		add_to_fsid(st, args->sizes[i] - args->sizes[i] % sectorsize);
	/* create_raid_groups(): a single profile keeps the temporary chunks */
	if (meta_profile) {
		ret = alloc_chunk(st, BTRFS_BLOCK_GROUP_SYSTEM | meta_profile);
		if (!ret)
			ret = alloc_chunk(st, BTRFS_BLOCK_GROUP_METADATA | meta_profile);
	}
	if (!ret && data_profile)
		ret = alloc_chunk(st, BTRFS_BLOCK_GROUP_DATA | data_profile);
	if (ret)
		return ret;
	c = newest_chunk(st, BTRFS_BLOCK_GROUP_SYSTEM);
	c->used = nodesize;
	c = newest_chunk(st, BTRFS_BLOCK_GROUP_METADATA);
	c->used = (u64)nodesize * MKFS_TREES_IN_METADATA;
	cleanup_temp_chunks(st, data_profile, meta_profile);
	return 0;
}

/* The chunk as its CHUNK_ITEM, read as the chunk tree reader reads one */
static int add_chunk_item(struct btrfs_fs_info *fs_info, const struct mkfs_state *st,
			  const struct mkfs_chunk *c)
{
	static const struct btrfs_item_location loc = { .where = "mkfs layout" };
	u32 size = sizeof(struct btrfs_chunk) + (c->num_stripes - 1) * sizeof(struct btrfs_stripe);
	struct btrfs_chunk *chunk = calloc(1, size);
	struct btrfs_stripe *stripe;
	u16 s;
	int ret;

	if (!chunk)
		return -ENOMEM;
	chunk->length = htole64(c->length);
	chunk->owner = htole64(BTRFS_EXTENT_TREE_OBJECTID);
	chunk->stripe_len = htole64(MKFS_STRIPE_LEN);
	chunk->type = htole64(c->type);
	chunk->io_align = htole32(MKFS_STRIPE_LEN);
	chunk->io_width = htole32(MKFS_STRIPE_LEN);
	chunk->sector_size = htole32(fs_info->sectorsize);
	chunk->num_stripes = htole16(c->num_stripes);
	chunk->sub_stripes = htole16(c->sub_stripes);
	for (s = 0, stripe = &chunk->stripe; s < c->num_stripes; s++, stripe++) {
		stripe->devid = htole64(st->devs[c->dev[s]].devid);
		stripe->offset = htole64(c->physical[s]);
	}
	ret = btrfs_add_chunk_item(fs_info, chunk, size, c->start, &loc);
	free(chunk);
	return ret;
}

static int add_devices(struct btrfs_fs_info *fs_info, const struct mkfs_state *st)
{
	u32 i;

	for (i = 0; i < st->nr_devs; i++) {
		struct btrfs_device *dev = btrfs_add_device(fs_info, st->devs[i].devid);

		if (!dev)
			return -ENOMEM;
		dev->total_bytes = st->devs[i].total_bytes;
		dev->bytes_used = st->devs[i].bytes_used;
		dev->in_chunk_tree = true;
		dev->present = true;
		dev->writeable = true;
		fs_info->rw_devices++;
		fs_info->total_rw_bytes += dev->total_bytes;
		fs_info->free_chunk_space += dev->total_bytes - dev->bytes_used;
	}
	return 0;
}

/* The block group item mkfs writes for a chunk of the plan */
static int mkfs_block_group_item(void *arg, const struct btrfs_chunk_map *map,
				 struct btrfs_block_group_item *item)
{
	const struct mkfs_state *st = arg;
	u32 c;

	for (c = 0; c < st->nr_chunks; c++)
		if (!st->chunks[c].removed && st->chunks[c].start == map->start)
			item->used = htole64(st->chunks[c].used);
	item->chunk_objectid = htole64(BTRFS_FIRST_CHUNK_TREE_OBJECTID);
	item->flags = htole64(map->type);
	return 0;
}

/* The trees mkfs makes, one leaf each, as their root items count them */
static void set_roots(struct btrfs_fs_info *fs_info)
{
	const struct btrfs_root_ref leaf = { .found = true, .bytes_used = fs_info->nodesize };

	fs_info->extent_root = leaf;
	fs_info->extent_root.objectid = BTRFS_EXTENT_TREE_OBJECTID;
	fs_info->dev_root = leaf;
	fs_info->dev_root.objectid = BTRFS_DEV_TREE_OBJECTID;
	fs_info->csum_root = leaf;
	fs_info->csum_root.objectid = BTRFS_CSUM_TREE_OBJECTID;
	fs_info->free_space_root = leaf;
	fs_info->free_space_root.objectid = BTRFS_FREE_SPACE_TREE_OBJECTID;
}

static u64 profile_features(u64 profile)
{
	if (profile & BTRFS_BLOCK_GROUP_RAID56_MASK)
		return BTRFS_FEATURE_INCOMPAT_RAID56;
	if (profile & (BTRFS_BLOCK_GROUP_RAID1C3 | BTRFS_BLOCK_GROUP_RAID1C4))
		return BTRFS_FEATURE_INCOMPAT_RAID1C34;
	return 0;
}

/*
 * btrfs_min_dev_size() (mkfs/common.c): the reserved MiB, the temporary
 * chunks (4 MiB SYSTEM, 8 MiB METADATA and DATA), then 40 MiB of metadata
 * (16 MiB when single) and 64 MiB of data (8 MiB when single), each twice
 * for DUP; mkfs.btrfs refuses a device smaller than that.
 */
u64 btrfs_mkfs_min_dev_size(u64 data_profile, u64 meta_profile)
{
	u64 meta = meta_profile & BTRFS_BLOCK_GROUP_PROFILE_MASK ? 40 * SZ_1M : 16 * SZ_1M;
	u64 data = data_profile & BTRFS_BLOCK_GROUP_PROFILE_MASK ? 64 * SZ_1M : 8 * SZ_1M;

	if (meta_profile & BTRFS_BLOCK_GROUP_DUP)
		meta *= 2;
	if (data_profile & BTRFS_BLOCK_GROUP_DUP)
		data *= 2;
	return MKFS_RESERVED + MKFS_SYSTEM_GROUP_SIZE + 16 * SZ_1M + meta + data;
}

static int check_args(const struct btrfs_mkfs_args *args, struct btrfs_fs_info *fs_info,
		      u64 data_profile, u64 meta_profile)
{
	const u64 profiles[2] = { data_profile, meta_profile };
	u64 min_size = btrfs_mkfs_min_dev_size(data_profile, meta_profile);
	u64 total = 0;
	u32 d;
	int i;

	if (!args->nr_devices || args->nr_devices > BTRFS_MKFS_MAX_DEVICES)
		return btrfs_fs_error(fs_info, -EINVAL, "from 1 to %d devices can be planned",
				      BTRFS_MKFS_MAX_DEVICES);
	for (i = 0; i < 2; i++) {
		const struct btrfs_raid_attr *attr =
			&btrfs_raid_array[btrfs_bg_flags_to_raid_index(profiles[i])];

		if (args->nr_devices < attr->devs_min)
			return btrfs_fs_error(fs_info, -EINVAL,
				"%s profile %s needs at least %u devices (mkfs.btrfs refuses %u)",
				i ? "metadata" : "data", attr->name, attr->devs_min,
				args->nr_devices);
	}
	/* btrfs_add_to_fsid(): "would exceed max file system size" */
	for (d = 0; d < args->nr_devices; d++) {
		if (total + args->sizes[d] < total)
			return btrfs_fs_error(fs_info, -EINVAL,
				"the devices add up to more than 16 EiB, more than a filesystem can hold");
		total += args->sizes[d];
	}
	for (d = 0; d < args->nr_devices; d++)
		if (args->sizes[d] < min_size)
			return btrfs_fs_error(fs_info, -ENOSPC,
				"device %u of %llu bytes is too small: mkfs.btrfs needs %llu bytes on each device",
				d + 1, (unsigned long long)args->sizes[d],
				(unsigned long long)min_size);
	return 0;
}

static void free_state(struct mkfs_state *st)
{
	u32 i;

	for (i = 0; i < MKFS_MAX_CHUNKS; i++) {
		free(st->chunks[i].dev);
		free(st->chunks[i].physical);
	}
	free(st->devs);
	free(st->list);
}

int btrfs_plan_mkfs(const struct btrfs_mkfs_args *args, struct btrfs_fs_info *fs_info)
{
	u64 data_profile = args->data_profile_set ? args->data_profile :
			   btrfs_mkfs_default_profile(BTRFS_BLOCK_GROUP_DATA, args->nr_devices);
	u64 meta_profile = args->metadata_profile_set ? args->metadata_profile :
			   btrfs_mkfs_default_profile(BTRFS_BLOCK_GROUP_METADATA, args->nr_devices);
	struct mkfs_state st = { 0 };
	u32 i;
	int ret;

	fs_info->planned = true;
	fs_info->nodesize = args->nodesize ? args->nodesize : 16384;
	fs_info->sectorsize = args->sectorsize ? args->sectorsize : 4096;
	fs_info->csum_type = CSUM_ALGO_CRC32C;
	fs_info->csum_size = 4;
	fs_info->incompat = BTRFS_FEATURE_INCOMPAT_MIXED_BACKREF |
			    BTRFS_FEATURE_INCOMPAT_BIG_METADATA |
			    BTRFS_FEATURE_INCOMPAT_EXTENDED_IREF |
			    BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA |
			    BTRFS_FEATURE_INCOMPAT_NO_HOLES |
			    profile_features(data_profile) | profile_features(meta_profile);
	fs_info->compat_ro = BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE |
			     BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID;
	ret = check_args(args, fs_info, data_profile, meta_profile);
	if (ret)
		return ret;
	st.devs = calloc(args->nr_devices, sizeof(*st.devs));
	st.list = calloc(args->nr_devices, sizeof(*st.list));
	if (!st.devs || !st.list) {
		free_state(&st);
		return -ENOMEM;
	}
	/* BTRFS_MAX_DEVS(): the stripes one chunk item in a leaf can hold */
	st.max_devs = (fs_info->nodesize - sizeof(struct btrfs_header) - sizeof(struct btrfs_item) -
		       sizeof(struct btrfs_chunk)) / sizeof(struct btrfs_stripe) + 1;
	ret = run_mkfs(args, fs_info->nodesize, fs_info->sectorsize, &st, data_profile, meta_profile);
	if (ret == -ENOSPC)
		ret = btrfs_fs_error(fs_info, -ENOSPC,
			"mkfs.btrfs %s would fail: not enough free space to allocate chunk",
			BTRFS_MKFS_LAYOUT_PROGS);
	if (!ret)
		ret = add_devices(fs_info, &st);
	for (i = 0; !ret && i < st.nr_chunks; i++)
		if (!st.chunks[i].removed)
			ret = add_chunk_item(fs_info, &st, &st.chunks[i]);
	if (!ret)
		ret = btrfs_resolve_stripes(fs_info);
	if (!ret)
		set_roots(fs_info);
	if (!ret)
		ret = btrfs_build_block_groups(fs_info, &st, mkfs_block_group_item);
	free_state(&st);
	return ret;
}
