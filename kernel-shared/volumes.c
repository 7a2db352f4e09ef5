// SPDX-License-Identifier: GPL-2.0
/*
 * Devices and the chunk map, after fs/btrfs/volumes.c: the RAID attribute
 * table (btrfs_raid_array), btrfs_read_sys_array(), btrfs_read_chunk_tree()
 * with read_one_chunk()/read_one_dev(), and the logical-to-physical mapping
 * of btrfs_map_block() for every profile.  Behaviour reproduced: 6.1-6.18
 * (sub_stripes from the table, "btrfs: don't trust sub_stripes from disk";
 * read_one_dev()'s device size check, in the kernel since 5.11).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/runs.h"
#include "common/uuid-text.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/reada.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/tree-checker.h"
#include "kernel-shared/volumes.h"

/*
 * The kernel's btrfs_raid_array with 6.18's values, the fields in its
 * order.  The kernel's mindev_error is left out: the tool refuses too few
 * devices in its own words (mkfs-layout.c, relocation.c).
 */
const struct btrfs_raid_attr btrfs_raid_array[BTRFS_NR_RAID_TYPES] = {
	[BTRFS_RAID_RAID10] = {
		.sub_stripes = 2,
		.dev_stripes = 1,
		.devs_max = 0,
		.devs_min = 2,
		.tolerated_failures = 1,
		.devs_increment = 2,
		.ncopies = 2,
		.nparity = 0,
		.name = "raid10",
		.bg_flag = BTRFS_BLOCK_GROUP_RAID10,
	},
	[BTRFS_RAID_RAID1] = {
		.sub_stripes = 1,
		.dev_stripes = 1,
		.devs_max = 2,
		.devs_min = 2,
		.tolerated_failures = 1,
		.devs_increment = 2,
		.ncopies = 2,
		.nparity = 0,
		.name = "raid1",
		.bg_flag = BTRFS_BLOCK_GROUP_RAID1,
	},
	[BTRFS_RAID_DUP] = {
		.sub_stripes = 1,
		.dev_stripes = 2,
		.devs_max = 1,
		.devs_min = 1,
		.tolerated_failures = 0,
		.devs_increment = 1,
		.ncopies = 2,
		.nparity = 0,
		.name = "dup",
		.bg_flag = BTRFS_BLOCK_GROUP_DUP,
	},
	[BTRFS_RAID_RAID0] = {
		.sub_stripes = 1,
		.dev_stripes = 1,
		.devs_max = 0,
		.devs_min = 1,
		.tolerated_failures = 0,
		.devs_increment = 1,
		.ncopies = 1,
		.nparity = 0,
		.name = "raid0",
		.bg_flag = BTRFS_BLOCK_GROUP_RAID0,
	},
	[BTRFS_RAID_SINGLE] = {
		.sub_stripes = 1,
		.dev_stripes = 1,
		.devs_max = 1,
		.devs_min = 1,
		.tolerated_failures = 0,
		.devs_increment = 1,
		.ncopies = 1,
		.nparity = 0,
		.name = "single",
		.bg_flag = 0,
	},
	[BTRFS_RAID_RAID5] = {
		.sub_stripes = 1,
		.dev_stripes = 1,
		.devs_max = 0,
		.devs_min = 2,
		.tolerated_failures = 1,
		.devs_increment = 1,
		.ncopies = 1,
		.nparity = 1,
		.name = "raid5",
		.bg_flag = BTRFS_BLOCK_GROUP_RAID5,
	},
	[BTRFS_RAID_RAID6] = {
		.sub_stripes = 1,
		.dev_stripes = 1,
		.devs_max = 0,
		.devs_min = 3,
		.tolerated_failures = 2,
		.devs_increment = 1,
		.ncopies = 1,
		.nparity = 2,
		.name = "raid6",
		.bg_flag = BTRFS_BLOCK_GROUP_RAID6,
	},
	[BTRFS_RAID_RAID1C3] = {
		.sub_stripes = 1,
		.dev_stripes = 1,
		.devs_max = 3,
		.devs_min = 3,
		.tolerated_failures = 2,
		.devs_increment = 3,
		.ncopies = 3,
		.nparity = 0,
		.name = "raid1c3",
		.bg_flag = BTRFS_BLOCK_GROUP_RAID1C3,
	},
	[BTRFS_RAID_RAID1C4] = {
		.sub_stripes = 1,
		.dev_stripes = 1,
		.devs_max = 4,
		.devs_min = 4,
		.tolerated_failures = 3,
		.devs_increment = 4,
		.ncopies = 4,
		.nparity = 0,
		.name = "raid1c4",
		.bg_flag = BTRFS_BLOCK_GROUP_RAID1C4,
	},
};

/* Of two profile bits (no valid item has them) the higher one, as ilog2() */
enum btrfs_raid_types btrfs_bg_flags_to_raid_index(u64 flags)
{
	u64 profile = flags & BTRFS_BLOCK_GROUP_PROFILE_MASK;

	if (!profile)
		return BTRFS_RAID_SINGLE;
	return BTRFS_BG_FLAG_TO_INDEX(profile);
}

int btrfs_bg_type_to_factor(u64 flags)
{
	return btrfs_raid_array[btrfs_bg_flags_to_raid_index(flags)].ncopies;
}

const char *btrfs_bg_profile_name(u64 flags)
{
	return btrfs_raid_array[btrfs_bg_flags_to_raid_index(flags)].name;
}

const char *btrfs_bg_type_name(u64 flags)
{
	switch (flags & BTRFS_BLOCK_GROUP_TYPE_MASK) {
	case BTRFS_BLOCK_GROUP_DATA: return "DATA";
	case BTRFS_BLOCK_GROUP_METADATA: return "METADATA";
	case BTRFS_BLOCK_GROUP_SYSTEM: return "SYSTEM";
	case BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA: return "DATA+METADATA";
	default: return "UNKNOWN";
	}
}

/*
 * The type and profile as btrfs-progs spells them in "btrfs filesystem df"
 * and "usage": "Data, RAID1", "Metadata, DUP", "System, single",
 * "Data+Metadata, single".  Returns @buf.
 */
const char *btrfs_bg_progs_name(u64 flags, char *buf, size_t len)
{
	const char *profile = btrfs_bg_profile_name(flags);
	const char *type;
	size_t i, n;

	switch (flags & BTRFS_BLOCK_GROUP_TYPE_MASK) {
	case BTRFS_BLOCK_GROUP_DATA: type = "Data"; break;
	case BTRFS_BLOCK_GROUP_METADATA: type = "Metadata"; break;
	case BTRFS_BLOCK_GROUP_SYSTEM: type = "System"; break;
	case BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA: type = "Data+Metadata"; break;
	default: type = "unknown"; break;
	}
	n = snprintf(buf, len, "%s, ", type);
	/* every profile but single is upper case: DUP, RAID1C3 */
	for (i = 0; profile[i] && n + 1 < len; i++, n++) {
		char c = profile[i];

		buf[n] = strcmp(profile, "single") && c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
	}
	if (n < len)
		buf[n] = 0;
	return buf;
}

/*
 * How many stripes carry distinct data, what one stripe's size is divided
 * by: the kernel's calc_data_stripes(), (num_stripes - nparity) / ncopies
 * of the profile's row.  The stripe count was held to the profile first
 * (btrfs_check_chunk_valid()), or made by the allocator models.
 */
u64 btrfs_chunk_data_stripes(u64 type, u16 num_stripes)
{
	const struct btrfs_raid_attr *attr =
		&btrfs_raid_array[btrfs_bg_flags_to_raid_index(type)];

	return (num_stripes - attr->nparity) / attr->ncopies;
}

int btrfs_chunk_max_errors(const struct btrfs_chunk_map *map)
{
	return btrfs_raid_array[btrfs_bg_flags_to_raid_index(map->type)].tolerated_failures;
}

/*
 * Copies a reader may try: the kernel's btrfs_num_copies(), the profile's
 * ncopies; RAID5/6 parity is not rebuilt here, so those have one.
 */
int btrfs_num_copies(const struct btrfs_chunk_map *map)
{
	if (map->type & BTRFS_BLOCK_GROUP_RAID56_MASK)
		return 1;
	return btrfs_raid_array[btrfs_bg_flags_to_raid_index(map->type)].ncopies;
}

/*
 * Devices are found by devid through an index kept in the same allocation,
 * after the devices_cap devices: 2 * devices_cap open-addressing slots of
 * (array index + 1), 0 for empty.  A chunk tree may hold any number of
 * DEV_ITEMs and every item, stripe and dev extent looks its device up, so
 * a linear search let a crafted image with 10^5 DEV_ITEMs take minutes.
 */
static u32 *devid_index(const struct btrfs_fs_info *fs_info)
{
	return (u32 *)(fs_info->devices + fs_info->devices_cap);
}

static u32 devid_slot(u64 devid, u32 nr_slots)
{
	return (u32)((devid * 0x9e3779b97f4a7c15ULL) >> 32) & (nr_slots - 1);
}

static void devid_index_add(struct btrfs_fs_info *fs_info, u32 i)
{
	u32 nr_slots = 2 * fs_info->devices_cap;
	u32 *index = devid_index(fs_info);
	u32 pos = devid_slot(fs_info->devices[i].devid, nr_slots);

	while (index[pos])
		pos = (pos + 1) & (nr_slots - 1);
	index[pos] = i + 1;
}

struct btrfs_device *btrfs_find_device(struct btrfs_fs_info *fs_info, u64 devid)
{
	u32 nr_slots = 2 * fs_info->devices_cap;
	const u32 *index;
	u32 pos;

	if (!nr_slots)
		return NULL;
	index = devid_index(fs_info);
	for (pos = devid_slot(devid, nr_slots); index[pos]; pos = (pos + 1) & (nr_slots - 1))
		if (fs_info->devices[index[pos] - 1].devid == devid)
			return &fs_info->devices[index[pos] - 1];
	return NULL;
}

/*
 * The device array grows while the chunk tree is read; stripes get their
 * device pointers only afterwards (resolve_stripes), so a realloc here
 * never leaves one dangling.  The devid index is rebuilt when it grows.
 */
struct btrfs_device *btrfs_add_device(struct btrfs_fs_info *fs_info, u64 devid)
{
	struct btrfs_device *dev;
	u32 i;

	if (fs_info->nr_devices == fs_info->devices_cap) {
		u32 cap = fs_info->devices_cap ? fs_info->devices_cap * 2 : 8;

		dev = realloc(fs_info->devices,
			      (size_t)cap * (sizeof(*dev) + 2 * sizeof(u32)));
		if (!dev)
			return NULL;
		fs_info->devices = dev;
		fs_info->devices_cap = cap;
		memset(devid_index(fs_info), 0, (size_t)2 * cap * sizeof(u32));
		for (i = 0; i < fs_info->nr_devices; i++)
			devid_index_add(fs_info, i);
	}
	dev = &fs_info->devices[fs_info->nr_devices++];
	memset(dev, 0, sizeof(*dev));
	dev->devid = devid;
	dev->io.fd = -1;
	devid_index_add(fs_info, fs_info->nr_devices - 1);
	return dev;
}

/* The chunk map whose range intersects [logical, logical + length) first */
struct btrfs_chunk_map *btrfs_find_chunk_map(struct btrfs_fs_info *fs_info,
					     u64 logical, u64 length)
{
	u32 low = 0, high = fs_info->nr_chunks;

	/*
	 * The chunk of the last answer first: the tree blocks a run reads lie
	 * in a few metadata chunks, and a read asks for its block's chunk
	 * twice (the read, then its mapping).  The chunks are disjoint and
	 * sorted, so the chunk holding @logical is the one the search finds.
	 */
	if (fs_info->chunk_hint < high) {
		u32 hint = fs_info->chunk_hint;
		struct btrfs_chunk_map *map = fs_info->chunks[hint];

		if (map->start <= logical && logical - map->start < map->length) {
			low = hint;
			goto found;
		}
		/*
		 * Or past it: walks in logical order (the chunk items, the
		 * device extents, the block group items) ask for the chunk
		 * after the last one, or for a chunk after them all
		 */
		if (map->start <= logical) {
			const struct btrfs_chunk_map *next = hint + 1 < high ?
				fs_info->chunks[hint + 1] : NULL;

			if (!next || next->start > logical ||
			    logical - next->start < next->length) {
				low = hint + 1;
				goto found;
			}
		}
	}
	while (low < high) {
		u32 mid = low + (high - low) / 2;
		struct btrfs_chunk_map *map = fs_info->chunks[mid];

		if (map->start + map->length <= logical)
			low = mid + 1;
		else
			high = mid;
	}
found:
	if (low < fs_info->nr_chunks &&
	    fs_info->chunks[low]->start < logical + length) {
		fs_info->chunk_hint = low;
		return fs_info->chunks[low];
	}
	return NULL;
}

static int insert_chunk_map(struct btrfs_fs_info *fs_info,
			    struct btrfs_chunk_map *map)
{
	u32 pos = fs_info->nr_chunks;

	if (array_grow((void **)&fs_info->chunks, fs_info->nr_chunks,
		       &fs_info->chunks_cap, sizeof(*fs_info->chunks)))
		return -ENOMEM;
	while (pos > 0 && fs_info->chunks[pos - 1]->start > map->start)
		pos--;
	memmove(&fs_info->chunks[pos + 1], &fs_info->chunks[pos],
		(fs_info->nr_chunks - pos) * sizeof(map));
	fs_info->chunks[pos] = map;
	fs_info->nr_chunks++;
	fs_info->chunk_hint = pos;	/* the chunk tree's next item comes after it */
	return 0;
}

static struct btrfs_chunk_map *alloc_chunk_map(const struct btrfs_chunk *chunk,
					       u64 logical)
{
	u16 num_stripes = btrfs_stack_chunk_num_stripes(chunk);
	struct btrfs_chunk_map *map;

	map = calloc(1, sizeof(*map) + num_stripes * sizeof(map->stripes[0]));
	if (!map)
		return NULL;
	map->start = logical;
	map->length = btrfs_stack_chunk_length(chunk);
	map->stripe_len = btrfs_stack_chunk_stripe_len(chunk);
	map->type = btrfs_stack_chunk_type(chunk);
	map->num_stripes = num_stripes;
	map->disk_sub_stripes = btrfs_stack_chunk_sub_stripes(chunk);
	map->sub_stripes = btrfs_raid_array[btrfs_bg_flags_to_raid_index(map->type)].sub_stripes;
	map->stripe_size = map->length / btrfs_chunk_data_stripes(map->type, num_stripes);
	return map;
}

/*
 * read_one_chunk(): validate, then add the chunk unless an identical one is
 * already mapped (the system chunks come twice: sys_array and chunk tree).
 */
/* A given device of @devid and @uuid that another one's devid kept out */
static struct btrfs_device *find_unmatched(struct btrfs_fs_info *fs_info, u64 devid,
					   const u8 *uuid)
{
	u32 i;

	for (i = 0; i < fs_info->nr_unmatched; i++)
		if (fs_info->unmatched[i].devid == devid &&
		    !memcmp(fs_info->unmatched[i].uuid, uuid, BTRFS_UUID_SIZE))
			return &fs_info->unmatched[i];
	return NULL;
}

static void swap_devices(struct btrfs_device *a, struct btrfs_device *b)
{
	struct btrfs_device t = *a;

	*a = *b;
	*b = t;
}

/*
 * -o degraded, a stripe naming @dev's devid with another uuid: the devid
 * becomes a missing device of the stripe's uuid, the device given for it
 * is set aside unused
 */
static int claimed_devid_missing(struct btrfs_fs_info *fs_info, struct btrfs_device *dev,
				 const u8 *dev_uuid, const char *uuid)
{
	struct btrfs_device *aside = realloc(fs_info->unmatched,
					     (fs_info->nr_unmatched + 1) * sizeof(*aside));

	if (!aside)
		return -ENOMEM;
	fs_info->unmatched = aside;
	fs_info->unmatched[fs_info->nr_unmatched++] = *dev;
	memset(dev, 0, sizeof(*dev));
	dev->devid = fs_info->unmatched[fs_info->nr_unmatched - 1].devid;
	memcpy(dev->uuid, dev_uuid, BTRFS_UUID_SIZE);
	fs_info->degraded = true;
	btrfs_fs_warn(fs_info, "devid %llu uuid %s is missing", (unsigned long long)dev->devid,
		      uuid);
	return 0;
}

/*
 * read_one_chunk() of the sys_array finds a stripe's device by devid and
 * dev_uuid, the uuid of a given device being its superblock's dev_item's.
 * Of two devices given with one devid, the one with the stripe's uuid is
 * that devid.  With none, the stripe is on a missing device, which fails
 * the mount without -o degraded (handle_missing_device()); with it,
 * add_missing_dev() makes a placeholder of the stripe's devid and uuid
 * (the kernel's warning: "devid %llu uuid %pU is missing") and the device
 * given with that devid is not used, as btrfs_free_extra_devids() drops
 * a scanned device no metadata names.  Read by devid alone, the chunk
 * tree would be read from the wrong device ("bad tree block start").
 */
static int check_sys_stripes(struct btrfs_fs_info *fs_info,
			     const struct btrfs_chunk_map *map)
{
	struct btrfs_error_loc loc = BTRFS_ERROR_LOC_NONE;
	char uuid[37];
	u16 s;

	for (s = 0; s < map->num_stripes; s++) {
		const struct btrfs_io_stripe *stripe = &map->stripes[s];
		struct btrfs_device *dev = btrfs_find_device(fs_info, stripe->devid);
		struct btrfs_device *given;

		if (!dev || !dev->present ||
		    !memcmp(dev->uuid, stripe->dev_uuid, BTRFS_UUID_SIZE))
			continue;
		given = find_unmatched(fs_info, stripe->devid, stripe->dev_uuid);
		if (given) {
			swap_devices(dev, given);
			continue;
		}
		uuid_text(stripe->dev_uuid, uuid);
		if (fs_info->allow_degraded) {
			int ret = claimed_devid_missing(fs_info, dev, stripe->dev_uuid, uuid);

			if (ret)
				return ret;
			continue;
		}
		loc.logical = map->start;
		loc.tree = BTRFS_CHUNK_TREE_OBJECTID;
		return btrfs_fs_error_at(fs_info, -ENOENT,
			btrfs_loc_field(&loc, "dev_uuid"),
			"devid %llu uuid %s is missing (sys_array chunk %llu stripe %u names it; %s is devid %llu with another device uuid)",
			(unsigned long long)stripe->devid, uuid,
			(unsigned long long)map->start, s, dev->io.path,
			(unsigned long long)stripe->devid);
	}
	return 0;
}

static int read_one_chunk(struct btrfs_fs_info *fs_info,
			  const struct btrfs_chunk *chunk, u32 item_size,
			  u64 logical, const struct btrfs_item_location *loc)
{
	struct btrfs_chunk_map *map, *existing;
	const struct btrfs_stripe *stripe = &chunk->stripe;
	int ret;
	u16 i;

	ret = btrfs_check_chunk_valid(fs_info, &fs_info->err, chunk, item_size,
				      logical, loc);
	if (ret)
		return ret;
	existing = btrfs_find_chunk_map(fs_info, logical,
					btrfs_stack_chunk_length(chunk));
	if (existing) {
		if (existing->start == logical &&
		    existing->length == btrfs_stack_chunk_length(chunk) &&
		    existing->from_sys_array && !strcmp(loc->where, "chunk tree"))
			return 0;
		return btrfs_fs_error_at(fs_info, -EUCLEAN,
			btrfs_loc_found(&(struct btrfs_error_loc){ .logical = loc->block,
				.tree = BTRFS_CHUNK_TREE_OBJECTID, .slot = loc->slot,
				.mirror = -1 }, "key.offset", logical),
			"corrupt chunk item in %s: block=%llu slot=%d, chunk [%llu, %llu) overlaps chunk [%llu, %llu)",
			loc->where, (unsigned long long)loc->block, loc->slot,
			(unsigned long long)logical,
			(unsigned long long)(logical + btrfs_stack_chunk_length(chunk)),
			(unsigned long long)existing->start,
			(unsigned long long)(existing->start + existing->length));
	}
	map = alloc_chunk_map(chunk, logical);
	if (!map)
		return -ENOMEM;
	map->from_sys_array = !strcmp(loc->where, "sys_array");
	for (i = 0; i < map->num_stripes; i++, stripe++) {
		map->stripes[i].devid = btrfs_stack_stripe_devid(stripe);
		map->stripes[i].physical = btrfs_stack_stripe_offset(stripe);
		memcpy(map->stripes[i].dev_uuid, stripe->dev_uuid, BTRFS_UUID_SIZE);
	}
	ret = map->from_sys_array ? check_sys_stripes(fs_info, map) : 0;
	if (!ret)
		ret = insert_chunk_map(fs_info, map);
	if (ret)
		free(map);
	return ret;
}

/*
 * read_one_chunk() for a chunk item found by other means than this reader's
 * tree walk (live mode: the kernel's tree search); @loc names where.
 */
int btrfs_add_chunk_item(struct btrfs_fs_info *fs_info, const struct btrfs_chunk *chunk,
			 u32 item_size, u64 logical, const struct btrfs_item_location *loc)
{
	return read_one_chunk(fs_info, chunk, item_size, logical, loc);
}

bool btrfs_scan_one_device(const void *buf, struct io_super_id *id)
{
	const struct btrfs_super_block *sb = buf;

	if (btrfs_super_magic(sb) != BTRFS_MAGIC)
		return false;
	memcpy(id->fsid, sb->fsid, sizeof(id->fsid));
	id->devid = btrfs_stack_device_id(&sb->dev_item);
	id->num_devices = btrfs_super_num_devices(sb);
	return true;
}

#define sys_array_error(fs_info, offset, fmt, ...)			\
	btrfs_fs_error(fs_info, -EUCLEAN,				\
		"corrupt superblock sys_chunk_array at offset %u: " fmt,	\
		(offset), ##__VA_ARGS__)

/*
 * btrfs_read_sys_array(): the superblock carries the SYSTEM chunks so the
 * chunk tree itself can be found.  Every length is checked against what
 * is left of the array before it is read.
 */
int btrfs_read_sys_array(struct btrfs_fs_info *fs_info)
{
	const u8 *array = fs_info->super.sys_chunk_array;
	u32 size = btrfs_super_sys_array_size(&fs_info->super);
	u32 cur = 0;

	if (size > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE)
		return sys_array_error(fs_info, 0,
			"sys_chunk_array_size %u is larger than %u", size,
			BTRFS_SYSTEM_CHUNK_ARRAY_SIZE);
	if (size == 0)
		return sys_array_error(fs_info, 0, "sys_chunk_array_size is 0");
	while (cur < size) {
		const struct btrfs_disk_key *disk_key = (const void *)(array + cur);
		const struct btrfs_chunk *chunk;
		struct btrfs_item_location loc = { "sys_array", cur, -1 };
		struct btrfs_key key;
		u32 len;
		int ret;

		if (size - cur < sizeof(*disk_key))
			return sys_array_error(fs_info, cur,
				"short key, %u bytes left, need %zu", size - cur,
				sizeof(*disk_key));
		btrfs_disk_key_to_cpu(&key, disk_key);
		cur += sizeof(*disk_key);
		if (key.type != BTRFS_CHUNK_ITEM_KEY)
			return sys_array_error(fs_info, cur,
				"unexpected item type %u in sys_array, expect %u",
				key.type, BTRFS_CHUNK_ITEM_KEY);
		chunk = (const void *)(array + cur);
		if (size - cur < offsetof(struct btrfs_chunk, stripe))
			return sys_array_error(fs_info, cur,
				"short chunk item, %u bytes left, need %zu",
				size - cur, offsetof(struct btrfs_chunk, stripe));
		len = btrfs_chunk_item_size(btrfs_stack_chunk_num_stripes(chunk));
		if (!btrfs_stack_chunk_num_stripes(chunk) || size - cur < len)
			return sys_array_error(fs_info, cur,
				"chunk item with num_stripes %u needs %u bytes, %u left",
				btrfs_stack_chunk_num_stripes(chunk), len, size - cur);
		if (!(btrfs_stack_chunk_type(chunk) & BTRFS_BLOCK_GROUP_SYSTEM))
			return sys_array_error(fs_info, cur,
				"invalid chunk type %llu in sys_array, must be SYSTEM",
				(unsigned long long)btrfs_stack_chunk_type(chunk));
		ret = read_one_chunk(fs_info, chunk, len, key.offset, &loc);
		if (ret)
			return ret;
		cur += len;
	}
	return 0;
}

/*
 * What read_one_dev() keeps of a DEV_ITEM (fill_device_from_item()), for
 * the chunk tree read offline and for live mode's tree search alike.
 */
void btrfs_device_from_dev_item(struct btrfs_device *dev,
				const struct btrfs_dev_item *item)
{
	memcpy(dev->uuid, item->uuid, BTRFS_UUID_SIZE);
	memcpy(dev->fsid, item->fsid, BTRFS_FSID_SIZE);
	dev->total_bytes = btrfs_stack_device_total_bytes(item);
	dev->bytes_used = btrfs_stack_device_bytes_used(item);
	dev->in_chunk_tree = true;
}

/* Where a dev item check failed: the chunk tree leaf, the slot and its key */
static struct btrfs_error_loc *leaf_loc(struct btrfs_error_loc *loc,
					const struct btrfs_tree_block *leaf, int slot)
{
	*loc = BTRFS_ERROR_LOC_NONE;
	loc->logical = leaf->start;
	loc->tree = leaf->owner;
	loc->slot = slot;
	loc->has_key = true;
	btrfs_item_key_to_cpu(leaf, slot, &loc->key);
	return loc;
}

/* A device's check: its path, and the dev item field (NULL: none) */
static struct btrfs_error_loc *dev_loc(struct btrfs_error_loc *loc,
				       const struct btrfs_device *dev,
				       const char *field)
{
	*loc = BTRFS_ERROR_LOC_NONE;
	loc->device = dev->io.path;
	loc->field = field;
	return loc;
}

/* A dev extent's check: the dev tree and the extent's physical offset */
static struct btrfs_error_loc *dev_extent_loc(struct btrfs_error_loc *loc,
					      u64 physical)
{
	*loc = BTRFS_ERROR_LOC_NONE;
	loc->tree = BTRFS_DEV_TREE_OBJECTID;
	loc->physical = physical;
	return loc;
}

/*
 * read_one_dev(): record a DEV_ITEM, creating a missing device if needed.
 * A device present but smaller than its item says fails the chunk tree's
 * load, as the kernel's does since 5.11 ("btrfs: drop never met disk
 * total bytes check in verify_one_dev_extent" moved the check here): every
 * shortfall, a sector or a gigabyte, below the last dev extent or above
 * it.  The size is the I/O layer's (BLKGETSIZE64, or a file's size down to
 * whole sectors, as a loop device of it has).
 */
static int read_one_dev(struct btrfs_fs_info *fs_info,
			const struct btrfs_tree_block *leaf, int slot)
{
	struct btrfs_error_loc loc;
	const struct btrfs_dev_item *item;
	struct btrfs_device *dev;
	u32 size;
	u64 devid;

	item = btrfs_item_ptr(leaf, slot, &size);
	if (size < sizeof(*item))
		return btrfs_fs_error_at(fs_info, -EUCLEAN,
			btrfs_loc_value(leaf_loc(&loc, leaf, slot), "item size",
					size, sizeof(*item)),
			"corrupt leaf: root=3 block=%llu slot=%d, invalid dev item size %u, expect %zu",
			(unsigned long long)leaf->start, slot, size, sizeof(*item));
	devid = btrfs_stack_device_id(item);
	dev = btrfs_find_device(fs_info, devid);
	if (dev && dev->in_chunk_tree)
		return btrfs_fs_error_at(fs_info, -EUCLEAN,
			btrfs_loc_found(leaf_loc(&loc, leaf, slot), "devid", devid),
			"corrupt leaf: root=3 block=%llu slot=%d, duplicate dev item for devid %llu",
			(unsigned long long)leaf->start, slot, (unsigned long long)devid);
	if (!dev) {
		dev = btrfs_add_device(fs_info, devid);
		if (!dev)
			return -ENOMEM;
	}
	if (dev->present && memcmp(dev->uuid, item->uuid, BTRFS_UUID_SIZE))
		return btrfs_fs_error_at(fs_info, -EUCLEAN,
			dev_loc(&loc, dev, "uuid"),
			"device %s: devid %llu has a different device uuid than the chunk tree's dev item",
			dev->io.path, (unsigned long long)devid);
	btrfs_device_from_dev_item(dev, item);
	if (dev->present && dev->total_bytes > dev->io.size)
		return btrfs_fs_error_at(fs_info, -EINVAL,
			btrfs_loc_found(dev_loc(&loc, dev, NULL), "total_bytes",
					dev->total_bytes),
			"%s: device total_bytes should be at most %llu but found %llu",
			dev->io.path, (unsigned long long)dev->io.size,
			(unsigned long long)dev->total_bytes);
	return 0;
}

static int chunk_tree_leaf(struct btrfs_fs_info *fs_info,
			   const struct btrfs_tree_block *leaf, void *ctx)
{
	u32 slot;

	for (slot = 0; slot < leaf->nritems; slot++) {
		struct btrfs_item_location loc = { "chunk tree", leaf->start, slot };
		struct btrfs_key key;
		const void *ptr;
		u32 size;
		int ret = 0;

		btrfs_item_key_to_cpu(leaf, slot, &key);
		ptr = btrfs_item_ptr(leaf, slot, &size);
		if (key.type == BTRFS_DEV_ITEM_KEY)
			ret = read_one_dev(fs_info, leaf, slot);
		else if (key.type == BTRFS_CHUNK_ITEM_KEY)
			ret = read_one_chunk(fs_info, ptr, size, key.offset, &loc);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * read_one_chunk() looks a stripe's device up by devid and dev_uuid
 * together: a stripe whose uuid names no device is on a missing device,
 * which without -o degraded fails the mount (btrfs_report_missing_device).
 */
static int resolve_stripe(struct btrfs_fs_info *fs_info,
			  struct btrfs_chunk_map *map, u16 s)
{
	struct btrfs_io_stripe *stripe = &map->stripes[s];
	struct btrfs_device *dev = btrfs_find_device(fs_info, stripe->devid);
	struct btrfs_error_loc loc = BTRFS_ERROR_LOC_NONE;
	char uuid[37];

	/* the stripe of the chunk at map->start that names the device */
	loc.logical = map->start;
	loc.tree = BTRFS_CHUNK_TREE_OBJECTID;

	if (!dev || !dev->in_chunk_tree)
		return btrfs_fs_error_at(fs_info, -EUCLEAN,
			btrfs_loc_found(&loc, "devid", stripe->devid),
			"chunk %llu stripe %u: devid %llu has no dev item in the chunk tree",
			(unsigned long long)map->start, s,
			(unsigned long long)stripe->devid);
	if (!memcmp(dev->uuid, stripe->dev_uuid, BTRFS_UUID_SIZE)) {
		stripe->dev = dev->present ? dev : NULL;
		return 0;
	}
	if (!fs_info->allow_degraded) {
		uuid_text(stripe->dev_uuid, uuid);
		return btrfs_fs_error_at(fs_info, -ENOENT,
			btrfs_loc_field(&loc, "dev_uuid"),
			"devid %llu uuid %s is missing (chunk %llu stripe %u names it; devid %llu of this filesystem has another uuid)",
			(unsigned long long)stripe->devid, uuid,
			(unsigned long long)map->start, s,
			(unsigned long long)stripe->devid);
	}
	stripe->dev = NULL;
	fs_info->degraded = true;
	return 0;
}

/* Attach every stripe to its device; a stripe may name a missing one */
int btrfs_resolve_stripes(struct btrfs_fs_info *fs_info)
{
	u32 i;

	for (i = 0; i < fs_info->nr_chunks; i++) {
		struct btrfs_chunk_map *map = fs_info->chunks[i];
		u16 s;

		for (s = 0; s < map->num_stripes; s++) {
			int ret = resolve_stripe(fs_info, map, s);

			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Every copy of a chunk tree block on missing devices (-o degraded): the
 * kernel's open_ctree() says "failed to read chunk root" (6.18.44, a
 * RAID1 pair whose only device given claims devid 1 with devid 2's uuid),
 * the tool's words follow
 */
static void chunk_root_missing(struct btrfs_fs_info *fs_info)
{
	char msg[sizeof(fs_info->err.msg)];

	snprintf(msg, sizeof(msg), "failed to read chunk root: %.480s", fs_info->err.msg);
	memcpy(fs_info->err.msg, msg, sizeof(msg));
}

/*
 * btrfs_read_chunk_tree(): the whole chunk tree, DEV_ITEMs then
 * CHUNK_ITEMs in key order, as the kernel reads it at every mount.
 */
int btrfs_read_chunk_tree(struct btrfs_fs_info *fs_info)
{
	struct btrfs_root_ref root = {
		.objectid = BTRFS_CHUNK_TREE_OBJECTID,
		.bytenr = btrfs_super_chunk_root(&fs_info->super),
		.level = btrfs_super_chunk_root_level(&fs_info->super),
		.generation = btrfs_super_chunk_root_generation(&fs_info->super),
		.found = true,
	};
	int ret;

	btrfs_prefetch_tree(fs_info, &root, NULL, BTRFS_IO_CHUNK_TREE);
	ret = btrfs_walk_tree(fs_info, &root, BTRFS_IO_CHUNK_TREE,
			      chunk_tree_leaf, NULL);
	if (ret == -ENODEV)
		chunk_root_missing(fs_info);
	if (ret)
		return ret;
	return btrfs_resolve_stripes(fs_info);
}

/* Looked up by devid: stripe pointers are not resolved while reading the chunk tree */
static struct btrfs_device *present_device(struct btrfs_fs_info *fs_info, u64 devid)
{
	struct btrfs_device *dev = btrfs_find_device(fs_info, devid);

	return dev && dev->present ? dev : NULL;
}

/*
 * btrfs_map_block() for one mirror: where the bytes at @logical live, and
 * how many of the @length bytes are contiguous there (up to the end of
 * the stripe).  RAID5/6 map to the data stripe; parity is not used.  A
 * @logical no chunk covers is recorded in @err.
 */
int btrfs_map_block(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
		    u64 logical, u64 length, int mirror, struct btrfs_io_piece *piece)
{
	struct btrfs_chunk_map *map = btrfs_find_chunk_map(fs_info, logical, 1);
	u64 offset, stripe_nr, stripe_offset, row;
	u32 index;

	if (!map || map->start > logical)
		return btrfs_record_error(err, -ENOENT,
			"logical %llu is not covered by any chunk",
			(unsigned long long)logical);
	offset = logical - map->start;
	stripe_nr = offset >> BTRFS_STRIPE_LEN_SHIFT;
	stripe_offset = offset & (BTRFS_STRIPE_LEN - 1);
	if (map->type & BTRFS_BLOCK_GROUP_RAID0) {
		index = stripe_nr % map->num_stripes;
		row = stripe_nr / map->num_stripes;
	} else if (map->type & BTRFS_BLOCK_GROUP_RAID10) {
		u32 factor = map->num_stripes / map->sub_stripes;

		index = (stripe_nr % factor) * map->sub_stripes + mirror;
		row = stripe_nr / factor;
	} else if (map->type & BTRFS_BLOCK_GROUP_RAID56_MASK) {
		u32 data_stripes = btrfs_chunk_data_stripes(map->type, map->num_stripes);

		row = stripe_nr / data_stripes;
		/* parity rotates by one stripe per full row */
		index = (stripe_nr % data_stripes + row) % map->num_stripes;
	} else {
		/* single, DUP, RAID1*: every copy is the whole chunk */
		if (mirror >= map->num_stripes)
			return -EINVAL;
		piece->dev = present_device(fs_info, map->stripes[mirror].devid);
		piece->physical = map->stripes[mirror].physical + offset;
		piece->length = min_t(u64, length, map->length - offset);
		return 0;
	}
	if (index >= map->num_stripes)
		return -EINVAL;
	piece->dev = present_device(fs_info, map->stripes[index].devid);
	piece->physical = map->stripes[index].physical +
			  (row << BTRFS_STRIPE_LEN_SHIFT) + stripe_offset;
	piece->length = min_t(u64, length, BTRFS_STRIPE_LEN - stripe_offset);
	return 0;
}

void btrfs_free_chunk_maps(struct btrfs_fs_info *fs_info)
{
	u32 i;

	for (i = 0; i < fs_info->nr_chunks; i++)
		free(fs_info->chunks[i]);
	free(fs_info->chunks);
	fs_info->chunks = NULL;
	fs_info->nr_chunks = 0;
}

/* verify_one_dev_extent(): the dev extent must be exactly one chunk stripe */
static int verify_one_dev_extent(struct btrfs_fs_info *fs_info, u64 chunk_offset,
				 u64 devid, u64 physical, u64 length)
{
	struct btrfs_error_loc loc;
	struct btrfs_chunk_map *map = btrfs_find_chunk_map(fs_info, chunk_offset, 1);
	struct btrfs_device *dev;
	u16 i;

	if (!map)
		return btrfs_fs_error_at(fs_info, -EUCLEAN,
			btrfs_loc_found(dev_extent_loc(&loc, physical), "chunk_offset",
					chunk_offset),
			"dev extent physical offset %llu on devid %llu doesn't have corresponding chunk",
			(unsigned long long)physical, (unsigned long long)devid);
	if (length != map->stripe_size)
		return btrfs_fs_error_at(fs_info, -EUCLEAN,
			btrfs_loc_value(dev_extent_loc(&loc, physical), "length",
					length, map->stripe_size),
			"dev extent physical offset %llu on devid %llu length doesn't match chunk %llu, have %llu expect %llu",
			(unsigned long long)physical, (unsigned long long)devid,
			(unsigned long long)map->start, (unsigned long long)length,
			(unsigned long long)map->stripe_size);
	dev = btrfs_find_device(fs_info, devid);
	if (!dev || !dev->in_chunk_tree)
		return btrfs_fs_error_at(fs_info, -EUCLEAN,
			btrfs_loc_found(dev_extent_loc(&loc, physical), "key.objectid",
					devid),
			"dev extent physical offset %llu: failed to find devid %llu",
			(unsigned long long)physical, (unsigned long long)devid);
	if (physical + length < physical || physical + length > dev->total_bytes)
		return btrfs_fs_error_at(fs_info, -EUCLEAN,
			btrfs_loc_found(dev_extent_loc(&loc, physical), "length", length),
			"dev extent devid %llu physical offset %llu len %llu is beyond device boundary %llu",
			(unsigned long long)devid, (unsigned long long)physical,
			(unsigned long long)length, (unsigned long long)dev->total_bytes);
	for (i = 0; i < map->num_stripes; i++) {
		if (map->stripes[i].devid != devid || map->stripes[i].physical != physical)
			continue;
		if (map->verified_stripes >= map->num_stripes)
			return btrfs_fs_error(fs_info, -EUCLEAN,
				"too many dev extents for chunk %llu found",
				(unsigned long long)map->start);
		map->verified_stripes++;
		return 0;
	}
	return btrfs_fs_error(fs_info, -EUCLEAN,
		"dev extent physical offset %llu devid %llu has no corresponding chunk",
		(unsigned long long)physical, (unsigned long long)devid);
}

/* verify_chunk_dev_extent_mapping(): every stripe needs its dev extent */
static int verify_chunk_dev_extent_mapping(struct btrfs_fs_info *fs_info)
{
	u32 i;

	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];

		if (map->verified_stripes != map->num_stripes)
			return btrfs_fs_error(fs_info, -EUCLEAN,
				"chunk %llu has missing dev extent, have %d expect %d",
				(unsigned long long)map->start, map->verified_stripes,
				map->num_stripes);
	}
	return 0;
}

static int check_dev_extent_item(struct btrfs_fs_info *fs_info,
				 const struct btrfs_path *path,
				 const struct btrfs_key *key, u64 *prev_devid,
				 u64 *prev_end)
{
	const struct btrfs_dev_extent *dext;
	u64 length, chunk_offset;
	u32 size;

	dext = btrfs_item_ptr(path->nodes[0], path->slots[0], &size);
	if (size != sizeof(*dext))
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"corrupt leaf: root=4 block=%llu slot=%d, invalid dev extent item size, have %u expect %zu",
			(unsigned long long)path->nodes[0]->start, path->slots[0],
			size, sizeof(*dext));
	length = btrfs_stack_dev_extent_length(dext);
	chunk_offset = btrfs_stack_dev_extent_chunk_offset(dext);
	if (key->objectid == *prev_devid && key->offset < *prev_end)
		return btrfs_fs_error(fs_info, -EUCLEAN,
			"dev extent devid %llu physical offset %llu overlap with previous dev extent end %llu",
			(unsigned long long)key->objectid,
			(unsigned long long)key->offset, (unsigned long long)*prev_end);
	*prev_devid = key->objectid;
	*prev_end = key->offset + length;
	return verify_one_dev_extent(fs_info, chunk_offset, key->objectid,
				     key->offset, length);
}

/*
 * btrfs_verify_dev_extents(): at every mount the kernel walks all
 * DEV_EXTENT items and checks them against the chunk map; a mismatch fails
 * the mount, so it fails here too.  This reads the whole dev tree, as the
 * kernel does.
 */
int btrfs_verify_dev_extents(struct btrfs_fs_info *fs_info)
{
	struct btrfs_key key = { 1, BTRFS_DEV_EXTENT_KEY, 0 };
	struct btrfs_path path = { 0 };
	u64 prev_devid = 0, prev_end = 0;
	int ret;

	if (!fs_info->dev_root.found)
		return btrfs_fs_error(fs_info, -ENOENT, "no root item for the dev tree");
	btrfs_prefetch_tree(fs_info, &fs_info->dev_root, &key, BTRFS_IO_DEV_TREE);
	ret = btrfs_search_slot(fs_info, &fs_info->dev_root, &key, &path,
				BTRFS_IO_DEV_TREE);
	if (ret < 0)
		goto out;
	ret = 0;
	if (path.slots[0] >= (int)path.nodes[0]->nritems)
		ret = btrfs_next_leaf(fs_info, &fs_info->dev_root, &path,
				      BTRFS_IO_DEV_TREE);
	while (ret == 0) {
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		if (key.type != BTRFS_DEV_EXTENT_KEY)
			break;
		ret = check_dev_extent_item(fs_info, &path, &key, &prev_devid,
					    &prev_end);
		if (!ret)
			ret = btrfs_next_item(fs_info, &fs_info->dev_root, &path,
					      BTRFS_IO_DEV_TREE);
	}
	if (ret >= 0)
		ret = verify_chunk_dev_extent_mapping(fs_info);
out:
	btrfs_release_path(&path);
	return ret;
}

/*
 * The chunk allocator replayed.
 *
 * btrfs_create_chunk() of fs/btrfs/volumes.c (regular allocation policy,
 * non-zoned), run forward on a copy of the devices' allocated ranges:
 * init_alloc_chunk_ctl() and init_alloc_chunk_ctl_policy_regular() set the
 * limits, gather_device_info() asks find_free_dev_extent() for a hole on
 * every writeable device and sorts them with btrfs_cmp_device_info() by the
 * kernel's sort() (a heapsort, whose order of equal devices is reproduced),
 * decide_stripe_size() and decide_stripe_size_regular() size the stripes,
 * create_chunk() places them and find_next_chunk() gives the logical start.
 * Nothing is written: the chunks made exist only in @st.  The dev extents
 * are the chunk stripes, which btrfs_verify_dev_extents() proved equal at
 * open.  Kernel versions: 6.0-6.18 as written; the limits of 5.x come from
 * kernel-version.c (btrfs_alloc_model()).  Documentation/formulas.md
 * section 21 states the rules.
 */

/* The first MiB of every device is never allocated (BTRFS_DEVICE_RANGE_RESERVED) */
#define ALLOC_RANGE_RESERVED	(1ULL << 20)
#define ALLOC_SZ_16M		(16ULL << 20)
#define ALLOC_SZ_1G		(1ULL << 30)
#define ALLOC_MAX_DEVS_SYS_CHUNK	16

u32 btrfs_raid_devs_max(u64 flags)
{
	return btrfs_raid_array[btrfs_bg_flags_to_raid_index(flags)].devs_max;
}

/* kept by start: the order the dev tree search walks them */
static int alloc_add_range(struct btrfs_alloc_device *dev, u64 start, u64 length)
{
	return range_tree_insert(&dev->ranges, start, length);
}

/* The devices are sorted by devid once they are all in (btrfs_alloc_state_init()) */
static struct btrfs_alloc_device *alloc_find_dev(struct btrfs_alloc_state *st, u64 devid)
{
	u32 i = array_lower_bound(st->devs, st->nr_devs, sizeof(*st->devs),
				  offsetof(struct btrfs_alloc_device, devid), devid);

	if (i < st->nr_devs && st->devs[i].devid == devid)
		return &st->devs[i];
	return NULL;
}

static int cmp_alloc_devid(const void *a, const void *b)
{
	const struct btrfs_alloc_device *x = a, *y = b;

	return x->devid < y->devid ? -1 : x->devid > y->devid;
}

/*
 * Each device's ranges from the chunk stripes, in chunk order, one tree
 * built per device (range_tree_build(): O(n) for the stripes of a device
 * by start, which chunks made in turn are, instead of n insertions)
 */
static int build_device_ranges(const struct btrfs_fs_info *fs_info,
			       struct btrfs_alloc_state *st)
{
	u32 *first = calloc(st->nr_devs + 1, sizeof(*first)), *at = NULL, d, i;
	struct range_item *items = NULL;
	int ret = -ENOMEM;
	u16 s;

	if (!first)
		return -ENOMEM;
	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];

		for (s = 0; s < map->num_stripes; s++) {
			struct btrfs_alloc_device *dev = alloc_find_dev(st, map->stripes[s].devid);

			if (dev)
				first[dev - st->devs + 1]++;
		}
	}
	for (d = 0; d < st->nr_devs; d++)
		first[d + 1] += first[d];
	at = malloc((st->nr_devs + 1) * sizeof(*at));
	items = malloc((first[st->nr_devs] ? first[st->nr_devs] : 1) * sizeof(*items));
	if (!at || !items)
		goto out;
	memcpy(at, first, (st->nr_devs + 1) * sizeof(*at));
	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];

		for (s = 0; s < map->num_stripes; s++) {
			struct btrfs_alloc_device *dev = alloc_find_dev(st, map->stripes[s].devid);

			if (dev)
				items[at[dev - st->devs]++] = (struct range_item) {
					.start = map->stripes[s].physical,
					.length = map->stripe_size,
				};
		}
	}
	ret = 0;
	for (d = 0; d < st->nr_devs && !ret; d++)
		ret = range_tree_build(&st->devs[d].ranges, items + first[d], first[d + 1] - first[d]);
out:
	free(first);
	free(at);
	free(items);
	return ret;
}

/*
 * The allocator's view after a mount: alloc_list in devid order
 * (btrfs_open_devices() sorts the device list before opening), each
 * device's total_bytes and bytes_used from its DEV_ITEM, its allocated
 * ranges from the chunk stripes, and the end of the last chunk.
 */
static int alloc_state_build(const struct btrfs_fs_info *fs_info,
			     struct btrfs_alloc_state *st)
{
	u32 i, n = 0;
	int ret;

	memset(st, 0, sizeof(*st));
	st->devs = calloc(fs_info->nr_devices ? fs_info->nr_devices : 1, sizeof(*st->devs));
	if (!st->devs)
		return -ENOMEM;
	for (i = 0; i < fs_info->nr_devices; i++) {
		const struct btrfs_device *dev = &fs_info->devices[i];

		if (!dev->in_chunk_tree)
			continue;
		st->devs[n].devid = dev->devid;
		st->devs[n].total_bytes = dev->total_bytes;
		st->devs[n].bytes_used = dev->bytes_used;
		st->devs[n].writeable = dev->present && dev->writeable;
		n++;
	}
	st->nr_devs = n;
	qsort(st->devs, n, sizeof(*st->devs), cmp_alloc_devid);
	st->total_rw_bytes = fs_info->total_rw_bytes;
	st->rw_devices = fs_info->rw_devices;
	/* BTRFS_MAX_DEVS(): stripes that fit in one chunk item */
	st->max_devs = (fs_info->nodesize - sizeof(struct btrfs_header) -
			sizeof(struct btrfs_item) - sizeof(struct btrfs_chunk)) /
		       sizeof(struct btrfs_stripe) + 1;
	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];

		if (map->start + map->length > st->next_logical)
			st->next_logical = map->start + map->length;
	}
	ret = build_device_ranges(fs_info, st);
	if (ret)
		btrfs_alloc_state_free(st);
	return ret;
}

/* @dst a copy of @src with ranges of its own */
static int alloc_state_copy(const struct btrfs_alloc_state *src,
			    struct btrfs_alloc_state *dst)
{
	u32 i;

	*dst = *src;
	dst->devs = malloc((src->nr_devs ? src->nr_devs : 1) * sizeof(*dst->devs));
	if (!dst->devs) {
		memset(dst, 0, sizeof(*dst));
		return -ENOMEM;
	}
	memcpy(dst->devs, src->devs, src->nr_devs * sizeof(*dst->devs));
	for (i = 0; i < src->nr_devs; i++) {
		if (range_tree_copy(&dst->devs[i].ranges, &src->devs[i].ranges)) {
			dst->nr_devs = i;
			btrfs_alloc_state_free(dst);
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The state after a mount, for the kernel version asked.  An opened
 * filesystem's chunks and devices do not change after the open, so the
 * state is built from them once (fs_info->alloc_base) and copied: every
 * caller gets a state of its own to allocate from.
 */
int btrfs_alloc_state_init(const struct btrfs_fs_info *fs_info, u32 kernel_version,
			   struct btrfs_alloc_state *st)
{
	struct btrfs_alloc_state *base = fs_info->alloc_base;
	int ret;

	if (!base) {
		ret = alloc_state_build(fs_info, st);
	} else {
		ret = base->devs ? 0 : alloc_state_build(fs_info, base);
		if (!ret)
			ret = alloc_state_copy(base, st);
	}
	if (!ret)
		btrfs_alloc_model(kernel_version, &st->model);
	return ret;
}

void btrfs_alloc_state_free(struct btrfs_alloc_state *st)
{
	u32 i;

	for (i = 0; i < st->nr_devs; i++)
		range_tree_free(&st->devs[i].ranges);
	free(st->devs);
	memset(st, 0, sizeof(*st));
}

/*
 * btrfs_remove_chunk(): the chunk's dev extents freed, its devices'
 * bytes_used lowered (what the cleaner does to an unused block group).
 */
void btrfs_alloc_remove_chunk(struct btrfs_alloc_state *st,
			      const struct btrfs_chunk_map *map)
{
	u16 s;

	for (s = 0; s < map->num_stripes; s++) {
		struct btrfs_alloc_device *dev = alloc_find_dev(st, map->stripes[s].devid);

		/* the first range of the stripe's start, whatever its length */
		if (dev && range_tree_remove(&dev->ranges, map->stripes[s].physical))
			dev->bytes_used -= min_t(u64, dev->bytes_used, map->stripe_size);
	}
}

/*
 * btrfs_remove_chunk() before its transaction commits: each stripe's
 * device has its bytes_used lowered at once, but the dev extents stay in
 * the dev tree's commit root, which find_free_dev_extent() searches, so
 * their ranges stay allocated
 */
void btrfs_alloc_remove_chunk_uncommitted(struct btrfs_alloc_state *st,
					  const struct btrfs_chunk_map *map)
{
	u16 s;

	for (s = 0; s < map->num_stripes; s++) {
		struct btrfs_alloc_device *dev = alloc_find_dev(st, map->stripes[s].devid);

		if (dev)
			dev->bytes_used -= min_t(u64, dev->bytes_used, map->stripe_size);
	}
}

/*
 * The commit of such a removal, its bytes: bytes_used stays lowered where
 * the dev extent goes at the commit, and a stripe with no range to free
 * has its bytes back.  The ranges go with btrfs_alloc_remove_ranges(),
 * which may gather many commits' removals into one pass.
 */
void btrfs_alloc_commit_removed_bytes(struct btrfs_alloc_state *st,
				      const struct btrfs_chunk_map *map)
{
	u16 s;

	for (s = 0; s < map->num_stripes; s++) {
		struct btrfs_alloc_device *dev = alloc_find_dev(st, map->stripes[s].devid);

		if (dev && !range_tree_contains(&dev->ranges, map->stripes[s].physical))
			dev->bytes_used += map->stripe_size;
	}
}

/*
 * The dev extents of @nr removed chunks become holes, as
 * btrfs_alloc_remove_chunk() makes them one chunk at a time but without its
 * bytes_used change (the caller lowered bytes_used when it removed them):
 * each stripe drops the first range of its start, O(log n) a stripe.
 */
int btrfs_alloc_remove_ranges(struct btrfs_alloc_state *st,
			      const struct btrfs_chunk_map *const *maps, u32 nr)
{
	u32 i;
	u16 s;

	for (i = 0; i < nr; i++) {
		for (s = 0; s < maps[i]->num_stripes; s++) {
			struct btrfs_alloc_device *dev;

			dev = alloc_find_dev(st, maps[i]->stripes[s].devid);
			if (dev)
				range_tree_remove(&dev->ranges, maps[i]->stripes[s].physical);
		}
	}
	return 0;
}

/*
 * find_free_dev_extent(): walk the device's extents from the first MiB;
 * the first hole of at least @num_bytes wins, else the largest hole (the
 * first of equal ones).  Returns 0 with *start, or -ENOSPC with *start and
 * *len of the largest hole.  Holes are measured between extents and up to
 * total_bytes, as the dev tree search sees them; chunks made earlier in the
 * replay count as the pending extents contains_pending_extent() skips.
 * The walk is range_tree_first_gap()'s, O(log n) per search.
 */
static int find_free_dev_extent(struct btrfs_alloc_device *dev, u64 num_bytes,
				u64 *start, u64 *len)
{
	range_tree_first_gap(&dev->ranges, ALLOC_RANGE_RESERVED, dev->total_bytes, num_bytes,
			     start, len);
	return *len >= num_bytes ? 0 : -ENOSPC;
}

/* btrfs_cmp_device_info(): most max_avail first, then most total_avail */
static int cmp_device_info(const struct btrfs_device_info *a,
			   const struct btrfs_device_info *b)
{
	if (a->max_avail > b->max_avail)
		return -1;
	if (a->max_avail < b->max_avail)
		return 1;
	if (a->total_avail > b->total_avail)
		return -1;
	if (a->total_avail < b->total_avail)
		return 1;
	return 0;
}

static void swap_device_info(struct btrfs_device_info *a, struct btrfs_device_info *b)
{
	struct btrfs_device_info t = *a;

	*a = *b;
	*b = t;
}

/* lib/sort.c parent(): (j - 1) / 2 in element indexes */
static size_t heap_parent(size_t j)
{
	return (j - 1) / 2;
}

/*
 * The kernel's sort() of lib/sort.c as 6.18 has it, on element indexes: a
 * bottom-up heapsort that extracts two elements per round ("double-pop",
 * 6.11), prefers the right child on equal ones in the sift-down, and
 * finishes the last two or three elements apart.  Not stable: devices
 * that compare equal end up in the order this leaves them, which decides
 * which device gets which stripe (kernel test 050 holds it to RAID5,
 * RAID6 and RAID10 chunks with equal devices).
 */
static void kernel_sort_device_info(struct btrfs_device_info *base, size_t num)
{
	size_t n = num, a = num / 2, shift = 0;

	if (!a)
		return;
	for (;;) {
		size_t b, c, d;

		if (a) {
			a -= (size_t)1 << shift;
		} else if (n > 3) {
			n--;
			swap_device_info(&base[0], &base[n]);
			shift = cmp_device_info(&base[1], &base[2]) <= 0;
			a = (size_t)1 << shift;
			n--;
			swap_device_info(&base[a], &base[n]);
		} else {
			break;
		}
		for (b = a; c = 2 * b + 1, (d = c + 1) < n;)
			b = cmp_device_info(&base[c], &base[d]) > 0 ? c : d;
		if (d == n)
			b = c;
		while (b != a && cmp_device_info(&base[a], &base[b]) >= 0)
			b = heap_parent(b);
		c = b;
		while (b != a) {
			b = heap_parent(b);
			swap_device_info(&base[b], &base[c]);
		}
	}
	n--;
	swap_device_info(&base[0], &base[n]);
	if (n == 2 && cmp_device_info(&base[0], &base[1]) > 0)
		swap_device_info(&base[0], &base[1]);
}

/* init_alloc_chunk_ctl() with init_alloc_chunk_ctl_policy_regular() */
static void init_alloc_chunk_ctl(const struct btrfs_alloc_state *st, u64 type,
				 u64 chunk_size, struct btrfs_alloc_chunk_ctl *ctl)
{
	enum btrfs_raid_types index = btrfs_bg_flags_to_raid_index(type);
	const struct btrfs_raid_attr *attr = &btrfs_raid_array[index];
	u64 tenth = mult_perc(st->total_rw_bytes, 10);

	memset(ctl, 0, sizeof(*ctl));
	ctl->type = type;
	ctl->sub_stripes = attr->sub_stripes;
	ctl->dev_stripes = attr->dev_stripes;
	ctl->devs_max = attr->devs_max ? attr->devs_max : st->max_devs;
	ctl->devs_min = attr->devs_min;
	ctl->devs_increment = attr->devs_increment;
	ctl->ncopies = attr->ncopies;
	ctl->nparity = attr->nparity;
	if (st->model.space_info_chunk_size) {
		/* v6.0: the space info's chunk_size (sysfs), stripes at most 1 GiB */
		ctl->max_chunk_size = chunk_size;
		ctl->max_stripe_size = min_t(u64, chunk_size, ALLOC_SZ_1G);
	} else if (type & BTRFS_BLOCK_GROUP_DATA) {
		ctl->max_stripe_size = ALLOC_SZ_1G;
		ctl->max_chunk_size = st->model.data_max_chunk_size;
	} else if (type & BTRFS_BLOCK_GROUP_METADATA) {
		ctl->max_stripe_size = chunk_size;
		ctl->max_chunk_size = chunk_size;
	} else {
		ctl->max_stripe_size = st->model.system_max_stripe_size;
		ctl->max_chunk_size = st->model.system_max_chunk_size;
	}
	if (type & BTRFS_BLOCK_GROUP_SYSTEM)
		ctl->devs_max = min_t(u32, ctl->devs_max, ALLOC_MAX_DEVS_SYS_CHUNK);
	/* "We don't want a chunk larger than 10% of writable space" */
	ctl->max_chunk_size = min_t(u64, tenth, ctl->max_chunk_size);
	ctl->dev_extent_min = (u64)ctl->dev_stripes * BTRFS_STRIPE_LEN;
}

/*
 * gather_device_info(): every writeable device with room for at least
 * dev_extent_min, its hole from find_free_dev_extent() (the wanted size
 * when a hole that big exists), sorted as the kernel sorts them.
 */
static u32 gather_device_info(struct btrfs_alloc_state *st,
			      const struct btrfs_alloc_chunk_ctl *ctl,
			      struct btrfs_device_info *info, struct btrfs_alloc_seen *seen)
{
	u64 want = ctl->max_stripe_size * ctl->dev_stripes;
	u32 i, ndevs = 0;

	for (i = 0; i < st->nr_devs && ndevs < st->rw_devices; i++) {
		struct btrfs_alloc_device *dev = &st->devs[i];
		u64 total_avail, offset, max_avail, hole;

		if (!dev->writeable)
			continue;
		total_avail = dev->total_bytes > dev->bytes_used ?
			      dev->total_bytes - dev->bytes_used : 0;
		if (total_avail < ctl->dev_extent_min)
			continue;
		if (!find_free_dev_extent(dev, want, &offset, &hole))
			max_avail = want;
		else
			max_avail = hole;
		if (max_avail < ctl->dev_extent_min)
			continue;
		if (seen) {
			seen[ndevs].devid = dev->devid;
			seen[ndevs].offset = offset;
			seen[ndevs].hole = hole;
			seen[ndevs].max_avail = max_avail;
			seen[ndevs].total_avail = total_avail;
		}
		info[ndevs].devid = dev->devid;
		info[ndevs].dev_offset = offset;
		info[ndevs].max_avail = max_avail;
		info[ndevs].total_avail = total_avail;
		ndevs++;
	}
	kernel_sort_device_info(info, ndevs);
	return ndevs;
}

/* decide_stripe_size() with decide_stripe_size_regular() */
static int decide_stripe_size(const struct btrfs_alloc_state *st,
			      struct btrfs_alloc_chunk_ctl *ctl,
			      const struct btrfs_device_info *info)
{
	u64 data_stripes;

	ctl->ndevs -= ctl->ndevs % ctl->devs_increment;
	if (ctl->ndevs < ctl->devs_min || !ctl->ndevs)
		return -ENOSPC;
	ctl->ndevs = min_t(u32, ctl->ndevs, ctl->devs_max);
	ctl->stripe_size = info[ctl->ndevs - 1].max_avail / ctl->dev_stripes;
	ctl->num_stripes = ctl->ndevs * ctl->dev_stripes;
	data_stripes = (ctl->num_stripes - ctl->nparity) / ctl->ncopies;
	if (!data_stripes)
		return -ENOSPC;
	if (ctl->stripe_size * data_stripes > ctl->max_chunk_size) {
		u64 reduced = (ctl->max_chunk_size / data_stripes + ALLOC_SZ_16M - 1) /
			      ALLOC_SZ_16M * ALLOC_SZ_16M;

		ctl->stripe_size = min_t(u64, reduced, ctl->stripe_size);
	}
	if (st->model.stripe_size_1g_cap)
		ctl->stripe_size = min_t(u64, ctl->stripe_size, ALLOC_SZ_1G);
	ctl->stripe_size -= ctl->stripe_size % BTRFS_STRIPE_LEN;
	ctl->chunk_size = ctl->stripe_size * data_stripes;
	return ctl->chunk_size ? 0 : -ENOSPC;
}

/*
 * create_chunk(): stripe i * dev_stripes + j on the i-th sorted device at
 * its hole's start plus j stripes; the extents and bytes_used recorded.
 */
static struct btrfs_chunk_map *create_chunk(struct btrfs_alloc_state *st,
					    const struct btrfs_alloc_chunk_ctl *ctl,
					    const struct btrfs_device_info *info)
{
	struct btrfs_chunk_map *map;
	u32 i, j, s = 0;

	map = calloc(1, sizeof(*map) + ctl->num_stripes * sizeof(map->stripes[0]));
	if (!map)
		return NULL;
	map->start = st->next_logical;		/* find_next_chunk() */
	map->length = ctl->chunk_size;
	map->stripe_len = BTRFS_STRIPE_LEN;
	map->type = ctl->type;
	map->stripe_size = ctl->stripe_size;
	map->num_stripes = ctl->num_stripes;
	map->sub_stripes = ctl->sub_stripes;
	map->disk_sub_stripes = ctl->sub_stripes;
	for (i = 0; i < ctl->ndevs; i++) {
		struct btrfs_alloc_device *dev = alloc_find_dev(st, info[i].devid);

		for (j = 0; j < ctl->dev_stripes; j++, s++) {
			map->stripes[s].devid = info[i].devid;
			map->stripes[s].physical = info[i].dev_offset + j * ctl->stripe_size;
			if (alloc_add_range(dev, map->stripes[s].physical, ctl->stripe_size)) {
				free(map);
				return NULL;
			}
			dev->bytes_used += ctl->stripe_size;
		}
	}
	st->next_logical += ctl->chunk_size;
	return map;
}

/*
 * btrfs_create_chunk(): the next chunk of @type (type and profile bits) as
 * the kernel makes it, @chunk_size being the space info's chunk_size.
 * Returns the new chunk map (the caller frees it), or NULL with *err
 * -ENOSPC (no room: what the kernel returns) or -ENOMEM.
 */
struct btrfs_chunk_map *btrfs_alloc_create_chunk(struct btrfs_alloc_state *st, u64 type,
						 u64 chunk_size, int *err)
{
	return btrfs_alloc_create_chunk_logged(st, type, chunk_size, NULL, err);
}

/*
 * btrfs_alloc_create_chunk() that keeps in @h (when not NULL) the chunk
 * made and what gather_device_info() saw before it.
 */
static int history_record(struct btrfs_alloc_history *h, const struct btrfs_chunk_map *map,
			  const struct btrfs_alloc_seen *seen, u32 nr_seen);

struct btrfs_chunk_map *btrfs_alloc_create_chunk_logged(struct btrfs_alloc_state *st,
							u64 type, u64 chunk_size,
							struct btrfs_alloc_history *h, int *err)
{
	struct btrfs_alloc_chunk_ctl ctl;
	struct btrfs_device_info *info;
	struct btrfs_alloc_seen *seen = NULL;
	struct btrfs_chunk_map *map = NULL;
	u32 nr_seen;

	*err = -ENOSPC;
	if (!st->nr_devs || !st->rw_devices)
		return NULL;
	info = calloc(st->nr_devs, sizeof(*info));
	if (h)
		seen = calloc(st->nr_devs, sizeof(*seen));
	if (!info || (h && !seen)) {
		*err = -ENOMEM;
		goto out;
	}
	init_alloc_chunk_ctl(st, type, chunk_size, &ctl);
	ctl.ndevs = gather_device_info(st, &ctl, info, seen);
	nr_seen = ctl.ndevs;
	if (!decide_stripe_size(st, &ctl, info)) {
		map = create_chunk(st, &ctl, info);
		*err = map ? 0 : -ENOMEM;
		if (map && h && history_record(h, map, seen, nr_seen)) {
			free(map);
			map = NULL;
			*err = -ENOMEM;
		}
	}
out:
	free(info);
	free(seen);
	return map;
}

/*
 * Runs.  Once the devices' holes and their sorted order repeat, the
 * allocator makes the same chunks again, shifted: a period of p chunks
 * takes delta(d) bytes from each device d, all from the start of the hole
 * find_free_dev_extent() returns, and the next period sees every
 * total_avail and hole delta(d) smaller.  The next period repeats the
 * last one exactly as long as what decides each chunk is unchanged:
 *
 *   - the devices gather_device_info() keeps and their max_avail: a device
 *     whose hole is smaller than wanted takes nothing (delta 0), one
 *     whose hole fits keeps fitting while hole - r * delta >= want;
 *   - the result of every btrfs_cmp_device_info() the heapsort makes:
 *     the order by (max_avail, total_avail) with its ties, kept while no
 *     two devices meet (equal ones need equal deltas, then stay equal;
 *     for neighbours in the sorted order, t_a - r * delta_a > t_b - r *
 *     delta_b, and by transitivity every pair);
 *   - the chunk ctl (total_rw_bytes does not change).
 *
 * Then sort() sees the same comparisons and leaves the devices in the
 * same order, decide_stripe_size() gives the same stripe size, and each
 * stripe lands delta(d) further on: r periods are taken at once, with r
 * the largest that satisfies all of it, computed from the last period's
 * states, and the first chunks of one more period whose states still do
 * (formulas.md section 21.11).  The period is found by shape:
 * p such that the last p chunks are on the same devices, in the same
 * stripe order, as the p before them.
 */

/* at most this many seen entries per history (max_period * nr_devs) */
#define ALLOC_HISTORY_ENTRIES	(1U << 22)
#define ALLOC_MAX_PERIOD	256

int btrfs_alloc_history_init(const struct btrfs_alloc_state *st,
			     struct btrfs_alloc_history *h)
{
	u32 n = st->nr_devs ? st->nr_devs : 1;
	u32 p = min_t(u32, n, ALLOC_MAX_PERIOD);

	memset(h, 0, sizeof(*h));
	p = min_t(u32, p, ALLOC_HISTORY_ENTRIES / n);
	if (!p)
		p = 1;
	h->max_period = p;
	h->nr_devs = st->nr_devs;
	h->maps = calloc(p + 1, sizeof(*h->maps));
	h->seen = calloc((size_t)(p + 1) * n, sizeof(*h->seen));
	h->nr_seen = calloc(p + 1, sizeof(*h->nr_seen));
	h->match = calloc(p + 1, sizeof(*h->match));
	if (!h->maps || !h->seen || !h->nr_seen || !h->match) {
		btrfs_alloc_history_free(h);
		return -ENOMEM;
	}
	return 0;
}

void btrfs_alloc_history_reset(struct btrfs_alloc_history *h)
{
	u32 i;

	for (i = 0; h->maps && i <= h->max_period; i++) {
		free(h->maps[i]);
		h->maps[i] = NULL;
	}
	if (h->match)
		memset(h->match, 0, (h->max_period + 1) * sizeof(*h->match));
	h->nr = 0;
}

void btrfs_alloc_history_free(struct btrfs_alloc_history *h)
{
	btrfs_alloc_history_reset(h);
	free(h->maps);
	free(h->seen);
	free(h->nr_seen);
	free(h->match);
	memset(h, 0, sizeof(*h));
}

static u32 history_slot(const struct btrfs_alloc_history *h, u64 i)
{
	return i % (h->max_period + 1);
}

static const struct btrfs_chunk_map *history_map(const struct btrfs_alloc_history *h, u64 i)
{
	return h->maps[history_slot(h, i)];
}

static const struct btrfs_alloc_seen *history_seen(const struct btrfs_alloc_history *h,
						   u64 i, u32 *nr)
{
	u32 slot = history_slot(h, i);

	*nr = h->nr_seen[slot];
	return &h->seen[(size_t)slot * (h->nr_devs ? h->nr_devs : 1)];
}

static size_t chunk_map_size(u16 num_stripes)
{
	return sizeof(struct btrfs_chunk_map) + num_stripes * sizeof(struct btrfs_io_stripe);
}

static struct btrfs_chunk_map *dup_chunk_map(const struct btrfs_chunk_map *map)
{
	struct btrfs_chunk_map *copy = malloc(chunk_map_size(map->num_stripes));

	if (copy)
		memcpy(copy, map, chunk_map_size(map->num_stripes));
	return copy;
}

/* Same devices in the same stripe order, same sizes and type */
static bool same_shape(const struct btrfs_chunk_map *a, const struct btrfs_chunk_map *b)
{
	u16 s;

	if (a->type != b->type || a->length != b->length ||
	    a->stripe_size != b->stripe_size || a->num_stripes != b->num_stripes)
		return false;
	for (s = 0; s < a->num_stripes; s++)
		if (a->stripes[s].devid != b->stripes[s].devid)
			return false;
	return true;
}

static int history_record(struct btrfs_alloc_history *h, const struct btrfs_chunk_map *map,
			  const struct btrfs_alloc_seen *seen, u32 nr_seen)
{
	u32 slot = history_slot(h, h->nr), p;
	struct btrfs_chunk_map *copy = dup_chunk_map(map);

	if (!copy)
		return -ENOMEM;
	for (p = 1; p <= h->max_period; p++) {
		if (p > h->nr)
			h->match[p] = 0;
		else if (same_shape(map, history_map(h, h->nr - p)))
			h->match[p]++;
		else
			h->match[p] = 0;
	}
	free(h->maps[slot]);
	h->maps[slot] = copy;
	h->nr_seen[slot] = nr_seen;
	memcpy(&h->seen[(size_t)slot * (h->nr_devs ? h->nr_devs : 1)], seen,
	       nr_seen * sizeof(*seen));
	h->nr++;
	return 0;
}

/* What @map takes from each device of @seen (devid order): *alloc */
static bool chunk_takes(const struct btrfs_chunk_map *map, const struct btrfs_alloc_seen *seen,
			u32 nr, u64 *alloc)
{
	u16 s;

	memset(alloc, 0, nr * sizeof(*alloc));
	for (s = 0; s < map->num_stripes; s++) {
		u32 lo = array_lower_bound(seen, nr, sizeof(*seen),
					   offsetof(struct btrfs_alloc_seen, devid),
					   map->stripes[s].devid);

		if (lo == nr || seen[lo].devid != map->stripes[s].devid)
			return false;
		alloc[lo] += map->stripe_size;
	}
	return true;
}

/*
 * @next is @cur after @alloc: the same devices and max_avail, every hole
 * and total_avail smaller by what was taken, the hole's start further by it.
 */
static bool seen_follows(const struct btrfs_alloc_seen *cur, const struct btrfs_alloc_seen *next,
			 u32 nr, const u64 *alloc)
{
	u32 d;

	for (d = 0; d < nr; d++) {
		if (cur[d].devid != next[d].devid || cur[d].max_avail != next[d].max_avail ||
		    cur[d].hole < alloc[d] || cur[d].total_avail < alloc[d] ||
		    next[d].offset != cur[d].offset + alloc[d] ||
		    next[d].hole != cur[d].hole - alloc[d] ||
		    next[d].total_avail != cur[d].total_avail - alloc[d])
			return false;
	}
	return true;
}

struct run_order_key {
	u64 max_avail;
	u64 total_avail;
	u64 delta;
};

/* btrfs_cmp_device_info()'s order */
static int cmp_run_order(const void *a, const void *b)
{
	const struct run_order_key *x = a, *y = b;

	if (x->max_avail != y->max_avail)
		return x->max_avail > y->max_avail ? -1 : 1;
	if (x->total_avail != y->total_avail)
		return x->total_avail > y->total_avail ? -1 : 1;
	return 0;
}

/*
 * The most repeats r <= @limit for which the comparisons of the sort on
 * @seen, every total_avail lowered by r * delta, are those on @seen.
 */
static u64 order_repeats(const struct btrfs_alloc_seen *seen, u32 nr, const u64 *delta,
			 struct run_order_key *keys, u64 limit)
{
	u32 d;

	for (d = 0; d < nr; d++) {
		keys[d].max_avail = seen[d].max_avail;
		keys[d].total_avail = seen[d].total_avail;
		keys[d].delta = delta[d];
	}
	qsort(keys, nr, sizeof(*keys), cmp_run_order);
	for (d = 0; d + 1 < nr && limit; d++) {
		const struct run_order_key *a = &keys[d], *b = &keys[d + 1];

		if (a->max_avail != b->max_avail || a->delta <= b->delta)
			continue;
		/* equal now, a falls below b at the first repeat */
		if (a->total_avail == b->total_avail)
			return 0;
		limit = min_t(u64, limit, (a->total_avail - b->total_avail - 1) /
					  (a->delta - b->delta));
	}
	return limit;
}

/*
 * The most repeats r for which state @cur of the period, every
 * total_avail and hole lowered by r * delta, gives the same chunk: each
 * device that takes keeps its hole and stays kept, the sort the same.
 */
static u64 state_repeats(const struct btrfs_alloc_chunk_ctl *ctl,
			 const struct btrfs_alloc_seen *cur, u32 nr, const u64 *delta,
			 struct run_order_key *keys)
{
	u64 want = ctl->max_stripe_size * ctl->dev_stripes, limit = UINT64_MAX;
	u32 d;

	for (d = 0; d < nr; d++) {
		if (!delta[d])
			continue;
		/* a device short of the wanted hole changes max_avail when it takes */
		if (cur[d].max_avail != want || cur[d].hole < want ||
		    cur[d].total_avail < ctl->dev_extent_min)
			return 0;
		limit = min_t(u64, limit, (cur[d].hole - want) / delta[d]);
		limit = min_t(u64, limit, (cur[d].total_avail - ctl->dev_extent_min) / delta[d]);
	}
	return order_repeats(cur, nr, delta, keys, limit);
}

/*
 * How many chunks repeat the last @p chunks of @h as the replay would make
 * them next (at most @max_chunks), given @now, what the allocator sees
 * before the next chunk: whole periods while every state of the period
 * holds, then the first states of one more period that still hold.
 * @delta gets each device's bytes per period; @lim is scratch (p entries).
 */
static u64 run_chunks(const struct btrfs_alloc_state *st, const struct btrfs_alloc_history *h,
		      const struct btrfs_alloc_chunk_ctl *ctl, u32 p,
		      const struct btrfs_alloc_seen *now, u32 nr_now, u64 max_chunks, u64 *delta,
		      u64 *alloc, struct run_order_key *keys, u64 *lim)
{
	u64 first = h->nr - p, step = 0, periods, count;
	const struct btrfs_chunk_map *last = history_map(h, h->nr - 1);
	u32 j, d, nr;

	if (last->start + last->length != st->next_logical)
		return 0;
	memset(delta, 0, nr_now * sizeof(*delta));
	for (j = 0; j < p; j++) {
		const struct btrfs_chunk_map *map = history_map(h, first + j);
		const struct btrfs_alloc_seen *cur = history_seen(h, first + j, &nr);
		const struct btrfs_alloc_seen *next = now;
		u32 nr_next = nr_now;

		if (j + 1 < p) {
			const struct btrfs_chunk_map *after = history_map(h, first + j + 1);

			if (after->start != map->start + map->length)
				return 0;
			next = history_seen(h, first + j + 1, &nr_next);
		}
		if (nr != nr_now || nr_next != nr_now || map->type != last->type ||
		    !chunk_takes(map, cur, nr, alloc) || !seen_follows(cur, next, nr, alloc))
			return 0;
		for (d = 0; d < nr; d++)
			delta[d] += alloc[d];
		step += map->length;
	}
	/* no logical start past U64_MAX, a part of a period included */
	periods = (UINT64_MAX - st->next_logical) / step;
	periods = min_t(u64, periods ? periods - 1 : 0, max_chunks / p);
	for (j = 0; j < p && periods; j++) {
		lim[j] = state_repeats(ctl, history_seen(h, first + j, &nr), nr, delta, keys);
		periods = min_t(u64, periods, lim[j]);
	}
	if (!periods)
		return 0;
	count = periods * p;
	for (j = 0; j < p && lim[j] > periods && count < max_chunks; j++)
		count++;
	return count;
}

static void shift_chunk(struct btrfs_chunk_map *map, const struct btrfs_chunk_run *run, u64 r)
{
	u16 s;

	map->start += r * run->logical_step;
	for (s = 0; s < map->num_stripes; s++) {
		u32 lo = array_lower_bound(run->steps, run->nr_steps, sizeof(*run->steps),
					   offsetof(struct btrfs_run_step, devid),
					   map->stripes[s].devid);

		if (lo < run->nr_steps && run->steps[lo].devid == map->stripes[s].devid)
			map->stripes[s].physical += r * run->steps[lo].step;
	}
}

/* @run: @count chunks repeating the last @p chunks of @h, from one period on */
static int build_run(const struct btrfs_alloc_history *h, u32 p, const struct btrfs_alloc_seen *now,
		     u32 nr_now, const u64 *delta, u64 count, struct btrfs_chunk_run *run)
{
	u32 j, d;

	memset(run, 0, sizeof(*run));
	run->pattern = calloc(p, sizeof(*run->pattern));
	run->steps = calloc(nr_now ? nr_now : 1, sizeof(*run->steps));
	if (!run->pattern || !run->steps)
		goto enomem;
	run->period = p;
	run->count = count;
	for (d = 0; d < nr_now; d++) {
		if (!delta[d])
			continue;
		run->steps[run->nr_steps].devid = now[d].devid;
		run->steps[run->nr_steps++].step = delta[d];
	}
	for (j = 0; j < p; j++)
		run->logical_step += history_map(h, h->nr - p + j)->length;
	for (j = 0; j < p; j++) {
		run->pattern[j] = dup_chunk_map(history_map(h, h->nr - p + j));
		if (!run->pattern[j])
			goto enomem;
		shift_chunk(run->pattern[j], run, 1);
	}
	return 0;
enomem:
	btrfs_chunk_run_free(run);
	return -ENOMEM;
}

/*
 * The run made in @st: on each device (@now) the run's stripes lie end to
 * end from its hole's start, one range; its bytes used; the logical start.
 */
static int apply_run(struct btrfs_alloc_state *st, const struct btrfs_alloc_seen *now,
		     u32 nr_now, const struct btrfs_chunk_run *run, u64 *take)
{
	u64 whole = run->count / run->period;
	u32 d, j;
	u16 s;
	int ret;

	for (d = 0; d < nr_now; d++) {
		take[d] = 0;
		for (j = 0; j < run->nr_steps; j++)
			if (run->steps[j].devid == now[d].devid)
				take[d] = whole * run->steps[j].step;
	}
	for (j = 0; j < run->count % run->period; j++) {
		const struct btrfs_chunk_map *map = run->pattern[j];

		for (s = 0; s < map->num_stripes; s++)
			for (d = 0; d < nr_now; d++)
				if (now[d].devid == map->stripes[s].devid)
					take[d] += map->stripe_size;
	}
	for (d = 0; d < nr_now; d++) {
		struct btrfs_alloc_device *dev;

		if (!take[d])
			continue;
		dev = alloc_find_dev(st, now[d].devid);
		ret = alloc_add_range(dev, now[d].offset, take[d]);
		if (ret)
			return ret;
		dev->bytes_used += take[d];
	}
	st->next_logical += btrfs_chunk_run_length(run);
	return 0;
}

int btrfs_alloc_take_run(struct btrfs_alloc_state *st, struct btrfs_alloc_history *h,
			 u64 type, u64 chunk_size, u64 max_chunks,
			 struct btrfs_chunk_run *run)
{
	struct btrfs_alloc_chunk_ctl ctl;
	struct btrfs_device_info *info;
	struct btrfs_alloc_seen *now;
	struct run_order_key *keys;
	u64 *delta, *alloc, *lim, count = 0;
	u32 n = st->nr_devs ? st->nr_devs : 1, nr_now, p;
	int ret = -ENOMEM;

	memset(run, 0, sizeof(*run));
	if (!h->nr || !st->nr_devs)
		return 0;
	info = calloc(n, sizeof(*info));
	now = calloc(n, sizeof(*now));
	keys = calloc(n, sizeof(*keys));
	delta = calloc(n, sizeof(*delta));
	alloc = calloc(n, sizeof(*alloc));
	lim = calloc(h->max_period, sizeof(*lim));
	if (!info || !now || !keys || !delta || !alloc || !lim)
		goto out;
	init_alloc_chunk_ctl(st, type, chunk_size, &ctl);
	nr_now = gather_device_info(st, &ctl, info, now);
	ret = 0;
	for (p = 1; p <= h->max_period && p <= h->nr && !count; p++)
		if (h->match[p] >= p)
			count = run_chunks(st, h, &ctl, p, now, nr_now, max_chunks, delta, alloc,
					   keys, lim);
	if (!count)
		goto out;
	ret = build_run(h, p - 1, now, nr_now, delta, count, run);
	if (!ret)
		ret = apply_run(st, now, nr_now, run, alloc);
	if (ret)
		btrfs_chunk_run_free(run);
	else
		ret = 1;
	btrfs_alloc_history_reset(h);
out:
	free(info);
	free(now);
	free(keys);
	free(delta);
	free(alloc);
	free(lim);
	return ret;
}

u64 btrfs_chunk_run_count(const struct btrfs_chunk_run *run)
{
	return run->count;
}

/* Each pattern chunk's length times its chunks: a run of chunks read may have gaps */
u64 btrfs_chunk_run_length(const struct btrfs_chunk_run *run)
{
	u64 bytes = 0;
	u32 j;

	for (j = 0; j < run->period; j++)
		bytes += run->pattern[j]->length *
			 (run->count / run->period + (j < run->count % run->period));
	return bytes;
}

struct btrfs_chunk_map *btrfs_chunk_run_chunk(const struct btrfs_chunk_run *run, u64 i)
{
	struct btrfs_chunk_map *map = dup_chunk_map(run->pattern[i % run->period]);

	if (map)
		shift_chunk(map, run, i / run->period);
	return map;
}

/*
 * A device's stripes of a run lie end to end from its first one, a step
 * per period: a superblock copy at S on it falls in period (S - base) /
 * step, in the pattern's stripe that covers base + (S - base) % step.
 */
u32 btrfs_chunk_run_super_chunks(const struct btrfs_chunk_run *run, u64 *idx, u32 max)
{
	u32 nr = 0, k, j, out = 0;
	int mirror;
	u16 s;

	for (k = 0; k < run->nr_steps; k++) {
		u64 devid = run->steps[k].devid, step = run->steps[k].step, base = UINT64_MAX;

		for (j = 0; j < run->period; j++)
			for (s = 0; s < run->pattern[j]->num_stripes; s++)
				if (run->pattern[j]->stripes[s].devid == devid)
					base = min_t(u64, base, run->pattern[j]->stripes[s].physical);
		for (mirror = 0; mirror < BTRFS_SUPER_MIRROR_MAX; mirror++) {
			u64 sb = btrfs_sb_offset(mirror), pos, r;

			if (sb < base || (sb - base) / step > run->count / run->period)
				continue;
			r = (sb - base) / step;
			pos = base + (sb - base) % step;
			for (j = 0; j < run->period; j++) {
				const struct btrfs_chunk_map *map = run->pattern[j];

				for (s = 0; s < map->num_stripes; s++) {
					if (map->stripes[s].devid != devid ||
					    pos < map->stripes[s].physical ||
					    pos - map->stripes[s].physical >= map->stripe_size)
						continue;
					if (nr < max && r * run->period + j < run->count)
						idx[nr++] = r * run->period + j;
				}
			}
		}
	}
	qsort(idx, nr, sizeof(*idx), array_cmp_u64);
	for (k = 0; k < nr; k++)
		if (!out || idx[out - 1] != idx[k])
			idx[out++] = idx[k];
	return out;
}

void btrfs_chunk_run_free(struct btrfs_chunk_run *run)
{
	u32 j;

	for (j = 0; run->pattern && j < run->period; j++)
		free(run->pattern[j]);
	free(run->pattern);
	free(run->steps);
	memset(run, 0, sizeof(*run));
}

/*
 * Runs of the chunks read (not the allocator's: formulas.md section
 * 21.11): chunk k + p is chunk k moved logical_step on in logical and
 * each stripe its device's step on, the same steps over the run.
 */
struct read_runs_ctx {
	struct btrfs_chunk_map *const *maps;
	struct btrfs_run_step *steps;		/* of the period tried, by devid */
	u32 nr_steps;
	u64 logical_step;
};

static bool read_same_shape(const struct btrfs_chunk_map *a, const struct btrfs_chunk_map *b)
{
	return same_shape(a, b) && a->stripe_len == b->stripe_len &&
	       a->sub_stripes == b->sub_stripes;
}

/* @devid's step in @c, or it added with @step: false when it differs */
static bool note_step(struct read_runs_ctx *c, u64 devid, u64 step)
{
	u32 i;

	for (i = 0; i < c->nr_steps; i++)
		if (c->steps[i].devid == devid)
			return c->steps[i].step == step;
	c->steps[c->nr_steps].devid = devid;
	c->steps[c->nr_steps++].step = step;
	return true;
}

static bool moved_as(const struct btrfs_chunk_map *map, const struct btrfs_chunk_map *prev,
		     const struct btrfs_chunk_map *base_map, const struct btrfs_chunk_map *base,
		     u64 logical_step)
{
	u16 s;

	if (!read_same_shape(map, prev) || map->start - prev->start != logical_step)
		return false;
	for (s = 0; s < map->num_stripes; s++)
		if (map->stripes[s].physical <= prev->stripes[s].physical ||
		    map->stripes[s].physical - prev->stripes[s].physical !=
		    base_map->stripes[s].physical - base->stripes[s].physical)
			return false;
	return true;
}

static bool read_runs_begin(void *ctx, u64 first, u32 p)
{
	struct read_runs_ctx *c = ctx;
	u32 j;
	u16 s;

	c->nr_steps = 0;
	c->logical_step = c->maps[first + p]->start - c->maps[first]->start;
	for (j = 0; j < p; j++) {
		const struct btrfs_chunk_map *a = c->maps[first + j], *b = c->maps[first + p + j];

		if (!read_same_shape(a, b) || b->start - a->start != c->logical_step)
			return false;
		for (s = 0; s < a->num_stripes; s++) {
			if (b->stripes[s].physical <= a->stripes[s].physical ||
			    !note_step(c, a->stripes[s].devid,
				       b->stripes[s].physical - a->stripes[s].physical))
				return false;
		}
	}
	return true;
}

/* position-wise: begin() has made the steps one per device */
static bool read_runs_repeats(void *ctx, u64 first, u32 p, u64 k)
{
	struct read_runs_ctx *c = ctx;
	u64 base = first + (k - first) % p;

	return moved_as(c->maps[k], c->maps[k - p], c->maps[base + p], c->maps[base],
			c->logical_step);
}

static const struct runs_ops read_runs_ops = {
	.begin = read_runs_begin,
	.repeats = read_runs_repeats,
};

static int cmp_run_step(const void *a, const void *b)
{
	const struct btrfs_run_step *x = a, *y = b;

	return x->devid < y->devid ? -1 : x->devid > y->devid;
}

/* @run: @count chunks from @maps[0], period @p */
static int read_run(struct read_runs_ctx *c, u64 first, u64 count, u32 p,
		    struct btrfs_chunk_run *run)
{
	u32 j;

	memset(run, 0, sizeof(*run));
	if (count > 1 && !read_runs_begin(c, first, p))
		return -EINVAL;
	run->pattern = calloc(p, sizeof(*run->pattern));
	run->steps = calloc(c->nr_steps ? c->nr_steps : 1, sizeof(*run->steps));
	if (!run->pattern || !run->steps)
		goto enomem;
	run->period = p;
	run->count = count;
	for (j = 0; j < p; j++) {
		run->pattern[j] = dup_chunk_map(c->maps[first + j]);
		if (!run->pattern[j])
			goto enomem;
	}
	if (count > 1) {
		run->logical_step = c->logical_step;
		memcpy(run->steps, c->steps, c->nr_steps * sizeof(*run->steps));
		run->nr_steps = c->nr_steps;
		qsort(run->steps, run->nr_steps, sizeof(*run->steps), cmp_run_step);
	}
	return 0;
enomem:
	btrfs_chunk_run_free(run);
	return -ENOMEM;
}

static u32 max_stripes(struct btrfs_chunk_map *const *maps, u64 nr)
{
	u32 most = 1;
	u64 i;

	for (i = 0; i < nr; i++)
		most = max_t(u32, most, maps[i]->num_stripes);
	return most;
}

long btrfs_chunk_runs_of(struct btrfs_chunk_map *const *maps, u64 nr,
			 struct btrfs_chunk_run **runs)
{
	struct read_runs_ctx c = { .maps = maps };
	struct btrfs_chunk_run *out = NULL;
	u32 alloc = 0, nr_runs = 0, p;
	u64 i = 0, count;
	int ret = -ENOMEM;

	c.steps = calloc((size_t)RUNS_MAX_PERIOD * max_stripes(maps, nr), sizeof(*c.steps));
	if (!c.steps)
		return -ENOMEM;
	while (i < nr) {
		count = runs_next(&read_runs_ops, &c, i, nr, RUNS_MAX_PERIOD, &p);
		if (array_grow((void **)&out, nr_runs, &alloc, sizeof(*out)))
			goto fail;
		ret = read_run(&c, i, count, p, &out[nr_runs]);
		if (ret)
			goto fail;
		nr_runs++;
		i += count;
	}
	free(c.steps);
	*runs = out;
	return nr_runs;
fail:
	free(c.steps);
	btrfs_chunk_runs_free(out, nr_runs);
	return ret;
}

void btrfs_chunk_runs_free(struct btrfs_chunk_run *runs, long nr)
{
	long i;

	for (i = 0; i < nr; i++)
		btrfs_chunk_run_free(&runs[i]);
	free(runs);
}
