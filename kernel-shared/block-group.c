// SPDX-License-Identifier: GPL-2.0
/*
 * Block groups, after fs/btrfs/block-group.c.  The kernel's
 * btrfs_read_block_groups() walks forward from the end of the previous
 * block group (find_first_block_group); here every block group is found by
 * a pinpoint search instead: its key is known from the chunk, (chunk start,
 * BLOCK_GROUP_ITEM, chunk length), so one root-to-leaf descent per chunk
 * with cached nodes reads exactly the blocks on those paths.  The
 * verdicts are the kernel's: read_bg_from_eb(), read_one_block_group(),
 * check_chunk_block_group_mappings().  Accounting as read_one_block_group()
 * does it: exclude_super_stripes()/btrfs_rmap_block() for bytes_super,
 * btrfs_chunk_writeable() and the end-of-load profile rule for read-only
 * block groups (inc_block_group_ro), btrfs_get_alloc_profile().
 * Behaviour reproduced: 6.1-6.18, non-zoned.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/accessors.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/reada.h"
#include "kernel-shared/space-info.h"
#include "kernel-shared/tree-block.h"
#include "kernel-shared/tree-checker.h"
#include "kernel-shared/volumes.h"
#include "common/array.h"

static void report_progress(const struct btrfs_fs_info *fs_info,
			    const struct btrfs_progress *progress, u64 done)
{
	if (progress && progress->fn)
		progress->fn(done, fs_info->nr_chunks, progress->ctx);
}

/* A chunk item fits in one leaf, which bounds its stripes (64 KiB / 32 bytes) */
#define BTRFS_MAX_STRIPES_SUPER	(BTRFS_MAX_METADATA_BLOCKSIZE / sizeof(struct btrfs_stripe))

const struct btrfs_root_ref *btrfs_block_group_root(const struct btrfs_fs_info *fs_info)
{
	if (btrfs_fs_compat_ro(fs_info, BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE))
		return &fs_info->block_group_root;
	return &fs_info->extent_root;
}

/*
 * read_bg_from_eb() and read_one_block_group() verdicts for the item found
 * at the chunk's key.  The pinpoint key already matches start and length,
 * so what is left is the type and the mixed-groups rule.
 */
static int check_bg_against_chunk(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
				  const struct btrfs_chunk_map *map, u64 flags)
{
	if ((flags & BTRFS_BLOCK_GROUP_TYPE_MASK) !=
	    (map->type & BTRFS_BLOCK_GROUP_TYPE_MASK))
		return btrfs_record_error(err, -EUCLEAN,
			"block group %llu len %llu type flags 0x%llx mismatch with chunk type flags 0x%llx",
			(unsigned long long)map->start, (unsigned long long)map->length,
			(unsigned long long)(flags & BTRFS_BLOCK_GROUP_TYPE_MASK),
			(unsigned long long)(map->type & BTRFS_BLOCK_GROUP_TYPE_MASK));
	if ((flags & BTRFS_BLOCK_GROUP_METADATA) && (flags & BTRFS_BLOCK_GROUP_DATA) &&
	    !btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS))
		return btrfs_record_error(err, -EINVAL,
			"block group %llu len %llu: mixed block group (flags 0x%llx) without the MIXED_GROUPS feature",
			(unsigned long long)map->start, (unsigned long long)map->length,
			(unsigned long long)flags);
	return 0;
}

/*
 * The block group item of @map into @bg, with read_one_block_group()'s
 * checks against the chunk.  @leaf is where it was found (0 when the
 * kernel's tree search found it, live.c).
 */
int btrfs_set_block_group_item(struct btrfs_fs_info *fs_info,
			       struct btrfs_chunk_map *map,
			       const struct btrfs_block_group_item *item, u64 leaf,
			       struct btrfs_block_group *bg)
{
	bg->start = map->start;
	bg->length = map->length;
	bg->used = btrfs_stack_block_group_used(item);
	bg->item_used = bg->used;
	bg->flags = btrfs_stack_block_group_flags(item);
	bg->leaf = leaf;
	bg->map = map;
	return check_bg_against_chunk(fs_info, &fs_info->err, map, bg->flags);
}

/* The item at the path, checked, into @bg */
static int fill_block_group(struct btrfs_fs_info *fs_info,
			    const struct btrfs_path *path,
			    struct btrfs_chunk_map *map, struct btrfs_block_group *bg)
{
	const struct btrfs_block_group_item *item;
	u32 size;
	int ret;

	ret = btrfs_check_block_group_item(fs_info, &fs_info->err, path->nodes[0],
					   path->slots[0]);
	if (ret)
		return ret;
	item = btrfs_item_ptr(path->nodes[0], path->slots[0], &size);
	return btrfs_set_block_group_item(fs_info, map, item, path->nodes[0]->start, bg);
}

static int no_block_group_error(struct btrfs_error *err,
				const struct btrfs_root_ref *root,
				const struct btrfs_chunk_map *map)
{
	return btrfs_record_error(err, -EUCLEAN,
		"chunk start=%llu len=%llu doesn't have corresponding block group (searched %s)",
		(unsigned long long)map->start, (unsigned long long)map->length,
		btrfs_root_name(root->objectid));
}

/* Pinpoint: the chunk gives the whole key, one exact search finds the item */
static int find_block_group(struct btrfs_fs_info *fs_info,
			    const struct btrfs_root_ref *root,
			    struct btrfs_chunk_map *map, struct btrfs_block_group *bg)
{
	struct btrfs_key key = { map->start, BTRFS_BLOCK_GROUP_ITEM_KEY, map->length };
	struct btrfs_path path = { 0 };
	int ret;

	ret = btrfs_search_slot(fs_info, root, &key, &path, BTRFS_IO_BG_SEARCH);
	if (ret > 0)
		ret = no_block_group_error(&fs_info->err, root, map);
	if (!ret)
		ret = fill_block_group(fs_info, &path, map, bg);
	btrfs_release_path(&path);
	return ret;
}

/*
 * btrfs_rmap_block() for one superblock copy: the logical addresses in
 * this chunk that land on @physical, each counted once.  Returns how many
 * were written to @logical (at most num_stripes).
 */
static int rmap_super_copy(const struct btrfs_chunk_map *map, u64 physical,
			   u64 *logical, u64 *io_size)
{
	u64 io_stripe = BTRFS_STRIPE_LEN;
	int nr = 0;
	u16 i;

	if (map->type & BTRFS_BLOCK_GROUP_RAID56_MASK)
		io_stripe *= btrfs_chunk_data_stripes(map->type, map->num_stripes);
	*io_size = io_stripe;
	for (i = 0; i < map->num_stripes; i++) {
		u64 stripe_start = map->stripes[i].physical;
		u64 stripe_nr, offset, bytenr;
		int j;

		if (physical < stripe_start || physical - stripe_start >= map->stripe_size)
			continue;
		stripe_nr = (physical - stripe_start) >> BTRFS_STRIPE_LEN_SHIFT;
		offset = (physical - stripe_start) & (BTRFS_STRIPE_LEN - 1);
		if (map->type & (BTRFS_BLOCK_GROUP_RAID0 | BTRFS_BLOCK_GROUP_RAID10))
			stripe_nr = (stripe_nr * map->num_stripes + i) / map->sub_stripes;
		bytenr = map->start + stripe_nr * io_stripe + offset;
		for (j = 0; j < nr && logical[j] != bytenr; j++)
			;
		if (j == nr)
			logical[nr++] = bytenr;
	}
	return nr;
}

/* exclude_super_stripes(): the bytes superblock copies take from a block group */
static u64 calc_bytes_super(const struct btrfs_block_group *bg)
{
	u64 logical[BTRFS_MAX_STRIPES_SUPER];
	u64 bytes = 0;
	int mirror;

	if (bg->start < BTRFS_SUPER_INFO_OFFSET)
		bytes += BTRFS_SUPER_INFO_OFFSET - bg->start;
	for (mirror = 0; mirror < BTRFS_SUPER_MIRROR_MAX; mirror++) {
		u64 io_size;
		int nr = rmap_super_copy(bg->map, btrfs_sb_offset(mirror),
					 logical, &io_size);

		while (nr--)
			bytes += min_t(u64, io_size,
				       bg->start + bg->length - logical[nr]);
	}
	return bytes;
}

/*
 * Whether [@start, @start + @len) meets a range exclude_super_stripes()
 * keeps from the allocator (the superblock copies, and below 1 MiB).
 */
bool btrfs_block_group_super_overlap(const struct btrfs_block_group *bg, u64 start, u64 len)
{
	u64 logical[BTRFS_MAX_STRIPES_SUPER];
	int mirror;

	if (start < BTRFS_SUPER_INFO_OFFSET)
		return true;
	for (mirror = 0; mirror < BTRFS_SUPER_MIRROR_MAX; mirror++) {
		u64 io_size;
		int nr = rmap_super_copy(bg->map, btrfs_sb_offset(mirror), logical, &io_size);

		while (nr--)
			if (start < logical[nr] + io_size && logical[nr] < start + len)
				return true;
	}
	return false;
}

/*
 * The logical ranges exclude_super_stripes() keeps from the allocator in
 * the block group on @map (below 1 MiB, then each superblock copy's
 * stripe), at most @max into @start/@len; returns how many.  They may
 * overlap: the caller takes them out of its free space one by one.
 */
u32 btrfs_super_exclude_ranges(const struct btrfs_chunk_map *map, u64 *start, u64 *len,
			       u32 max)
{
	u64 logical[BTRFS_MAX_STRIPES_SUPER];
	u32 n = 0;
	int mirror;

	if (map->start < BTRFS_SUPER_INFO_OFFSET && n < max) {
		start[n] = map->start;
		len[n++] = BTRFS_SUPER_INFO_OFFSET - map->start;
	}
	for (mirror = 0; mirror < BTRFS_SUPER_MIRROR_MAX; mirror++) {
		u64 io_size;
		int nr = rmap_super_copy(map, btrfs_sb_offset(mirror), logical, &io_size);

		while (nr-- && n < max) {
			start[n] = logical[nr];
			len[n++] = io_size;
		}
	}
	return n;
}

/* The bytes_super a block group on @map would get (a chunk not yet made) */
u64 btrfs_chunk_map_bytes_super(const struct btrfs_chunk_map *map)
{
	struct btrfs_block_group bg = {
		.start = map->start, .length = map->length,
		.map = (struct btrfs_chunk_map *)map,
	};

	return calc_bytes_super(&bg);
}

/*
 * btrfs_chunk_writeable(): a stripe on a present device that cannot be
 * written (seed, read-only media) makes the chunk read-only outright;
 * missing devices only beyond what the profile tolerates.
 */
static bool chunk_writeable(const struct btrfs_chunk_map *map)
{
	int missing = 0;
	u16 i;

	for (i = 0; i < map->num_stripes; i++) {
		if (!map->stripes[i].dev)
			missing++;
		else if (!map->stripes[i].dev->writeable)
			return false;
	}
	return missing <= btrfs_chunk_max_errors(map);
}

/* inc_block_group_ro(cache, force=1) at mount: its free space becomes read-only */
static void inc_block_group_ro(struct btrfs_fs_info *fs_info,
			       struct btrfs_block_group *bg)
{
	struct btrfs_space_info *sinfo = btrfs_find_space_info(fs_info, bg->flags);

	if (bg->ro || !sinfo)
		return;
	bg->ro = true;
	sinfo->bytes_readonly += bg->length - bg->bytes_super - bg->used;
}

static u64 restripe_target(const struct btrfs_fs_info *fs_info, u64 flags)
{
	if ((flags & BTRFS_BLOCK_GROUP_DATA) && fs_info->balance_convert[BTRFS_SPACE_DATA])
		return BTRFS_BLOCK_GROUP_DATA | fs_info->balance_convert[BTRFS_SPACE_DATA];
	if ((flags & BTRFS_BLOCK_GROUP_SYSTEM) && fs_info->balance_convert[BTRFS_SPACE_SYSTEM])
		return BTRFS_BLOCK_GROUP_SYSTEM | fs_info->balance_convert[BTRFS_SPACE_SYSTEM];
	if ((flags & BTRFS_BLOCK_GROUP_METADATA) && fs_info->balance_convert[BTRFS_SPACE_METADATA])
		return BTRFS_BLOCK_GROUP_METADATA | fs_info->balance_convert[BTRFS_SPACE_METADATA];
	return 0;
}

/* btrfs_reduce_alloc_profile(): the best profile the writeable devices allow */
static u64 reduce_alloc_profile(const struct btrfs_fs_info *fs_info, u64 flags)
{
	static const u64 preference[] = {
		BTRFS_BLOCK_GROUP_RAID1C4, BTRFS_BLOCK_GROUP_RAID6,
		BTRFS_BLOCK_GROUP_RAID1C3, BTRFS_BLOCK_GROUP_RAID5,
		BTRFS_BLOCK_GROUP_RAID10, BTRFS_BLOCK_GROUP_RAID1,
		BTRFS_BLOCK_GROUP_DUP, BTRFS_BLOCK_GROUP_RAID0,
	};
	u64 target = restripe_target(fs_info, flags);
	u64 allowed = 0;
	unsigned int i;

	if (target)
		return target & ~BTRFS_AVAIL_ALLOC_BIT_SINGLE;
	for (i = 0; i < BTRFS_NR_RAID_TYPES; i++)
		if (fs_info->rw_devices >= btrfs_raid_array[i].devs_min)
			allowed |= btrfs_raid_array[i].bg_flag;
	allowed &= flags;
	for (i = 0; i < sizeof(preference) / sizeof(preference[0]); i++) {
		if (allowed & preference[i]) {
			allowed = preference[i];
			break;
		}
	}
	flags &= ~(BTRFS_BLOCK_GROUP_PROFILE_MASK | BTRFS_AVAIL_ALLOC_BIT_SINGLE);
	return flags | allowed;
}

u64 btrfs_get_alloc_profile(const struct btrfs_fs_info *fs_info, u64 orig_flags)
{
	const struct btrfs_space_info *sinfo =
		btrfs_find_space_info((struct btrfs_fs_info *)fs_info, orig_flags);

	return reduce_alloc_profile(fs_info,
				    orig_flags | (sinfo ? sinfo->profile_bits : 0));
}

/*
 * End of btrfs_read_block_groups(): once a space info allocates with a
 * redundant profile, its leftover single and RAID0 block groups are made
 * read-only so nothing new lands without redundancy.
 */
static void mark_unredundant_ro(struct btrfs_fs_info *fs_info)
{
	const u64 redundant = BTRFS_BLOCK_GROUP_RAID10 | BTRFS_BLOCK_GROUP_RAID1_MASK |
			      BTRFS_BLOCK_GROUP_RAID56_MASK | BTRFS_BLOCK_GROUP_DUP;
	int s;
	u32 i;

	for (s = 0; s < BTRFS_NR_SPACE_INFOS; s++) {
		const struct btrfs_space_info *sinfo = &fs_info->space_info[s];

		if (!sinfo->present ||
		    !(btrfs_get_alloc_profile(fs_info, sinfo->flags) & redundant))
			continue;
		for (i = 0; i < fs_info->nr_block_groups; i++) {
			struct btrfs_block_group *bg = &fs_info->block_groups[i];

			if (btrfs_find_space_info(fs_info, bg->flags) != sinfo)
				continue;
			if (!(bg->flags & (BTRFS_BLOCK_GROUP_PROFILE_MASK &
					   ~BTRFS_BLOCK_GROUP_RAID0)))
				inc_block_group_ro(fs_info, bg);
		}
	}
}

/*
 * find_first_block_group(): from @key, walk forward item by item (into the
 * next leaves as needed) to the first BLOCK_GROUP_ITEM at or after it.
 * Returns 0 with the path at it, 1 when there is none.
 */
static int match_scanned_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			      const struct btrfs_key *found, u32 *index);

static int find_first_block_group(struct btrfs_fs_info *fs_info,
				  const struct btrfs_root_ref *root,
				  const struct btrfs_key *key, struct btrfs_path *path,
				  unsigned int purpose)
{
	int ret = btrfs_search_slot_again(fs_info, root, key, path, purpose);

	if (ret < 0)
		return ret;
	while (1) {
		struct btrfs_key found;

		if (path->slots[0] >= (int)path->nodes[0]->nritems) {
			ret = btrfs_next_leaf(fs_info, root, path, purpose);
			if (ret)
				return ret;
			continue;
		}
		btrfs_item_key_to_cpu(path->nodes[0], path->slots[0], &found);
		if (found.objectid >= key->objectid &&
		    found.type == BTRFS_BLOCK_GROUP_ITEM_KEY)
			return 0;
		path->slots[0]++;
	}
}

/*
 * read_one_block_group()'s verdicts on an item the kernel's walk found,
 * without loading it: its chunk (read_bg_from_eb()), the tree checker's
 * item check, its type against the chunk's, and no chunk twice.
 */
static int check_found_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			    const struct btrfs_path *path, const struct btrfs_key *found,
			    bool *seen)
{
	const struct btrfs_block_group_item *item;
	u32 index = 0, size;
	int ret = match_scanned_item(fs_info, err, found, &index);

	if (!ret && seen[index])
		ret = btrfs_record_error(err, -EEXIST,
			"duplicate block group item for %llu len %llu",
			(unsigned long long)found->objectid,
			(unsigned long long)found->offset);
	if (!ret)
		ret = btrfs_check_block_group_item(fs_info, err, path->nodes[0],
						   path->slots[0]);
	if (ret)
		return ret;
	seen[index] = true;
	item = btrfs_item_ptr(path->nodes[0], path->slots[0], &size);
	return check_bg_against_chunk(fs_info, err, fs_info->chunks[index],
				      btrfs_stack_block_group_flags(item));
}

/*
 * The searches btrfs_read_block_groups() makes, without loading anything:
 * what the mount model counts, with the verdicts the mount gives on the
 * way (every command makes them, block groups loaded or not), then
 * check_chunk_block_group_mappings(): every chunk has its item.  The
 * verdict is recorded in @err.
 */
int btrfs_replay_block_group_search(struct btrfs_fs_info *fs_info, struct btrfs_error *err)
{
	const struct btrfs_root_ref *root = btrfs_block_group_root(fs_info);
	struct btrfs_key key = { 0, BTRFS_BLOCK_GROUP_ITEM_KEY, 0 };
	struct btrfs_path path = { .err = err };
	bool *seen;
	u32 i;
	int ret;

	if (!root->found)
		return 0;
	seen = calloc(fs_info->nr_chunks ? fs_info->nr_chunks : 1, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	while ((ret = find_first_block_group(fs_info, root, &key, &path,
					     BTRFS_IO_OTHER)) == 0) {
		struct btrfs_key found;

		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &found);
		ret = check_found_item(fs_info, err, &path, &found, seen);
		if (ret)
			break;
		key.objectid = found.objectid + found.offset;
		/* the path stays: the next search reads only where it turns off */
	}
	btrfs_release_path(&path);
	for (i = 0; ret >= 0 && i < fs_info->nr_chunks; i++)
		if (!seen[i])
			ret = no_block_group_error(err, root, fs_info->chunks[i]);
	free(seen);
	return ret < 0 ? ret : 0;
}

/*
 * The keys btrfs_replay_block_group_search() searches, known before it
 * runs when every block group item is its chunk's (what loading checks):
 * (0, BLOCK_GROUP_ITEM, 0), then from the end of each block group; and
 * each chunk's own item, in the leaf the walk steps into when a search
 * lands just before it (nothing lies between: no extent starts in a gap
 * between chunks, and a chunk's first extent item sorts before its block
 * group item).  In key order; @keys holds 2 * nr_chunks + 1.
 */
u32 btrfs_block_group_search_keys(const struct btrfs_fs_info *fs_info,
				  struct btrfs_key *keys)
{
	u64 end = 0;
	u32 i, n = 0;

	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];

		keys[n++] = (struct btrfs_key) { end, BTRFS_BLOCK_GROUP_ITEM_KEY, 0 };
		keys[n++] = (struct btrfs_key) { map->start, BTRFS_BLOCK_GROUP_ITEM_KEY,
						 map->length };
		end = map->start + map->length;
	}
	keys[n++] = (struct btrfs_key) { end, BTRFS_BLOCK_GROUP_ITEM_KEY, 0 };
	return n;
}

/* read_bg_from_eb(): the item found must match a chunk exactly */
static int match_scanned_item(struct btrfs_fs_info *fs_info, struct btrfs_error *err,
			      const struct btrfs_key *found, u32 *index)
{
	struct btrfs_chunk_map *map = btrfs_find_chunk_map(fs_info, found->objectid,
							   found->offset);
	u32 low = 0, high = fs_info->nr_chunks;

	if (!map)
		return btrfs_record_error(err, -ENOENT,
			"logical %llu len %llu found bg but no related chunk",
			(unsigned long long)found->objectid,
			(unsigned long long)found->offset);
	if (map->start != found->objectid || map->length != found->offset)
		return btrfs_record_error(err, -EUCLEAN,
			"block group %llu len %llu mismatch with chunk %llu len %llu",
			(unsigned long long)found->objectid,
			(unsigned long long)found->offset,
			(unsigned long long)map->start, (unsigned long long)map->length);
	/* btrfs_find_chunk_map() leaves its answer's index as the hint */
	if (fs_info->chunk_hint < high && fs_info->chunks[fs_info->chunk_hint] == map)
		low = high = fs_info->chunk_hint;
	while (low < high) {
		u32 mid = low + (high - low) / 2;

		if (fs_info->chunks[mid]->start < map->start)
			low = mid + 1;
		else
			high = mid;
	}
	*index = low;
	return 0;
}

/*
 * The kernel's way (btrfs_read_block_groups, 6.18): search the end of the
 * previous block group and walk forward.  Kept to compare with pinpoint and
 * to replay the blocks a mount reads; unlike pinpoint it also meets block
 * group items that have no chunk, which the kernel rejects.
 */
static int scan_block_groups(struct btrfs_fs_info *fs_info,
			     const struct btrfs_root_ref *root,
			     const struct btrfs_progress *progress)
{
	struct btrfs_key key = { 0, BTRFS_BLOCK_GROUP_ITEM_KEY, 0 };
	struct btrfs_path path = { 0 };
	u32 i;
	int ret;

	while ((ret = find_first_block_group(fs_info, root, &key, &path,
					     BTRFS_IO_BG_SEARCH)) == 0) {
		struct btrfs_key found;
		u32 index = 0;

		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &found);
		ret = match_scanned_item(fs_info, &fs_info->err, &found, &index);
		if (!ret && fs_info->block_groups[index].map)
			ret = btrfs_fs_error(fs_info, -EEXIST,
				"duplicate block group item for %llu len %llu",
				(unsigned long long)found.objectid,
				(unsigned long long)found.offset);
		if (!ret)
			ret = fill_block_group(fs_info, &path, fs_info->chunks[index],
					       &fs_info->block_groups[index]);
		if (ret)
			break;
		key.objectid = found.objectid + found.offset;
		key.offset = 0;
		btrfs_release_path(&path);
		report_progress(fs_info, progress, index + 1);
	}
	btrfs_release_path(&path);
	if (ret < 0)
		return ret;
	/* check_chunk_block_group_mappings() */
	for (i = 0; i < fs_info->nr_chunks; i++)
		if (!fs_info->block_groups[i].map)
			return no_block_group_error(&fs_info->err, root, fs_info->chunks[i]);
	fs_info->nr_block_groups = fs_info->nr_chunks;
	return 0;
}

/*
 * Level-by-level pinpoint: all chunk keys descend together, and the
 * children they need at one level are read in one concurrent batch, so a
 * slow device costs about tree height times its latency, not one latency
 * per block group.  The blocks read are the same minimal set as the
 * serial descent.  Windows bound the leaves held at once.
 */
#define BG_BATCH_WINDOW	1024

struct bg_descent {
	struct btrfs_tree_block **node;		/* per chunk: node at this level */
	u64 *bytenr;				/* distinct children of one window */
	struct btrfs_tree_check *check;
	struct btrfs_tree_block **child;
	u32 *first_key;				/* first chunk index of each child */
};

static int child_slot(const struct btrfs_tree_block *node, const struct btrfs_chunk_map *map)
{
	struct btrfs_key key = { map->start, BTRFS_BLOCK_GROUP_ITEM_KEY, map->length };
	int slot;

	if (bin_search_block(node, &key, &slot) && slot > 0)
		slot--;
	return slot;
}

/* The leaf step of one chunk: exact item, or the kernel's verdict */
static int finish_in_leaf(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root,
			  struct btrfs_tree_block *leaf, u32 index)
{
	struct btrfs_chunk_map *map = fs_info->chunks[index];
	struct btrfs_key key = { map->start, BTRFS_BLOCK_GROUP_ITEM_KEY, map->length };
	struct btrfs_path path = { 0 };

	if (bin_search_block(leaf, &key, &path.slots[0]))
		return no_block_group_error(&fs_info->err, root, map);
	path.nodes[0] = leaf;
	return fill_block_group(fs_info, &path, map, &fs_info->block_groups[index]);
}

/* Children of chunks [start, end) of one level, read together, then used */
static int descend_window(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root,
			  struct bg_descent *d, u32 start, u32 *end)
{
	u32 nr = 0, i, c;
	int ret;

	for (i = start; i < fs_info->nr_chunks && nr < BG_BATCH_WINDOW; i++) {
		struct btrfs_tree_block *node = d->node[i];
		int slot = child_slot(node, fs_info->chunks[i]);
		u64 bytenr = btrfs_node_blockptr(node, slot);

		if (nr && d->bytenr[nr - 1] == bytenr)
			continue;
		d->bytenr[nr] = bytenr;
		d->first_key[nr] = i;
		d->check[nr] = (struct btrfs_tree_check) {
			.root = root->objectid, .level = node->level - 1,
			.transid = btrfs_node_ptr_generation(node, slot),
			.has_first_key = true,
		};
		btrfs_node_key_to_cpu(node, slot, &d->check[nr].first_key);
		nr++;
	}
	*end = i;
	ret = btrfs_read_tree_blocks(fs_info, &fs_info->err, d->bytenr, d->check, nr,
				     BTRFS_IO_BG_SEARCH, fs_info->read.io_threads, d->child);
	for (c = 0; c < nr; c++) {
		u32 last = c + 1 < nr ? d->first_key[c + 1] : *end;

		for (i = d->first_key[c]; i < last && !ret && d->child[c]; i++) {
			if (d->child[c]->level)
				d->node[i] = d->child[c];	/* nodes stay cached */
			else
				ret = finish_in_leaf(fs_info, root, d->child[c], i);
		}
		btrfs_tree_block_put(d->child[c]);
	}
	return ret;
}

static int load_block_groups_batched(struct btrfs_fs_info *fs_info,
				     const struct btrfs_root_ref *root,
				     const struct btrfs_progress *progress)
{
	struct bg_descent d = { 0 };
	struct btrfs_tree_block *eb = NULL;
	u32 n = fs_info->nr_chunks, i, end;
	int level, ret;

	ret = btrfs_read_root_node(fs_info, &fs_info->err, root, BTRFS_IO_BG_SEARCH, &eb);
	if (ret)
		return ret;
	d.node = calloc(n, sizeof(*d.node));
	d.bytenr = calloc(BG_BATCH_WINDOW, sizeof(*d.bytenr));
	d.check = calloc(BG_BATCH_WINDOW, sizeof(*d.check));
	d.child = calloc(BG_BATCH_WINDOW, sizeof(*d.child));
	d.first_key = calloc(BG_BATCH_WINDOW, sizeof(*d.first_key));
	if (!d.node || !d.bytenr || !d.check || !d.child || !d.first_key)
		ret = -ENOMEM;
	for (i = 0; !ret && i < n; i++)
		d.node[i] = eb;
	for (i = 0; !ret && eb->level == 0 && i < n; i++)
		ret = finish_in_leaf(fs_info, root, eb, i);
	for (level = eb->level; !ret && level > 0; level--) {
		for (i = 0; !ret && i < n; i = end) {
			ret = descend_window(fs_info, root, &d, i, &end);
			if (level == 1)
				report_progress(fs_info, progress, end);
		}
	}
	if (!ret)
		fs_info->nr_block_groups = n;
	btrfs_tree_block_put(eb);
	free(d.node);
	free(d.bytenr);
	free(d.check);
	free(d.child);
	free(d.first_key);
	return ret;
}

static int load_block_groups(struct btrfs_fs_info *fs_info,
			     const struct btrfs_root_ref *root,
			     const struct btrfs_progress *progress)
{
	u32 i;

	fs_info->block_groups = calloc(fs_info->nr_chunks ? fs_info->nr_chunks : 1,
				       sizeof(*fs_info->block_groups));
	if (!fs_info->block_groups)
		return -ENOMEM;
	if (fs_info->read.bg_search_scan)
		return scan_block_groups(fs_info, root, progress);
	/*
	 * While the mount's read-ahead is deferred (reada.c) the page cache
	 * has served every read: the searches one by one cost less than the
	 * windows, and the first miss starts the read-ahead of them all
	 */
	if (fs_info->read.io_threads > 1 && !btrfs_prefetch_deferred(fs_info))
		return load_block_groups_batched(fs_info, root, progress);
	for (i = 0; i < fs_info->nr_chunks; i++) {
		struct btrfs_block_group *bg = &fs_info->block_groups[i];
		int ret;

		ret = find_block_group(fs_info, root, fs_info->chunks[i], bg);
		if (ret)
			return ret;
		report_progress(fs_info, progress, i + 1);
		fs_info->nr_block_groups++;
	}
	return 0;
}

/* fs_info->block_groups is in the order of the chunks: by start */
struct btrfs_block_group *btrfs_lookup_block_group(const struct btrfs_fs_info *fs_info,
						    u64 bytenr)
{
	u32 nr = fs_info->nr_block_groups;
	u32 i = array_find_range(fs_info->block_groups, nr, sizeof(*fs_info->block_groups),
				 offsetof(struct btrfs_block_group, start),
				 offsetof(struct btrfs_block_group, length), bytenr);

	return i < nr ? &fs_info->block_groups[i] : NULL;
}

/*
 * Pinpoint finds a chunk without its item where the kernel's walk meets
 * first the item that is wrong (a length its chunk does not have: "block
 * group %llu len %llu mismatch with chunk"): the walk gives the kernel's
 * words, when it finds something.
 */
static int kernel_verdict(struct btrfs_fs_info *fs_info, int ret)
{
	struct btrfs_error walk = { 0 };
	int walk_ret;

	if (fs_info->read.bg_search_scan)
		return ret;
	walk_ret = btrfs_replay_block_group_search(fs_info, &walk);
	if (!walk_ret || !walk.err)
		return ret;
	fs_info->err = walk;
	return walk_ret;
}

/*
 * The tree btrfs_read_block_groups() reads, @root (the extent tree or the
 * block group tree), noted in fs_info; -ENOENT without its root item
 */
int btrfs_block_group_root_check(struct btrfs_fs_info *fs_info,
				 const struct btrfs_root_ref *root)
{
	if (!root->found)
		return btrfs_fs_error(fs_info, -ENOENT,
			"no root item for the %s in the root tree",
			btrfs_root_name(root->objectid));
	fs_info->bg_from_bg_tree = root->objectid == BTRFS_BLOCK_GROUP_TREE_OBJECTID;
	return 0;
}

int btrfs_read_block_groups(struct btrfs_fs_info *fs_info,
			    const struct btrfs_progress *progress)
{
	const struct btrfs_root_ref *root = btrfs_block_group_root(fs_info);
	int ret;

	ret = btrfs_block_group_root_check(fs_info, root);
	if (ret)
		return ret;
	ret = load_block_groups(fs_info, root, progress);
	if (ret == -EUCLEAN)
		ret = kernel_verdict(fs_info, ret);
	if (ret)
		return ret;
	btrfs_account_block_groups(fs_info);
	return 0;
}

/*
 * The block groups of items not read by a tree search of ours (live mode's
 * kernel searches, a planned mkfs): @item_of gives each chunk's item, in
 * chunk order; then the accounting, as btrfs_read_block_groups()
 */
int btrfs_build_block_groups(struct btrfs_fs_info *fs_info, void *ctx,
			     int (*item_of)(void *ctx, const struct btrfs_chunk_map *map,
					    struct btrfs_block_group_item *item))
{
	u32 i;
	int ret;

	fs_info->block_groups = calloc(fs_info->nr_chunks ? fs_info->nr_chunks : 1,
				       sizeof(*fs_info->block_groups));
	if (!fs_info->block_groups)
		return -ENOMEM;
	for (i = 0; i < fs_info->nr_chunks; i++) {
		struct btrfs_chunk_map *map = fs_info->chunks[i];
		struct btrfs_block_group_item item = { 0 };

		ret = item_of(ctx, map, &item);
		if (!ret)
			ret = btrfs_set_block_group_item(fs_info, map, &item, 0,
							 &fs_info->block_groups[i]);
		if (ret)
			return ret;
		fs_info->nr_block_groups++;
	}
	btrfs_account_block_groups(fs_info);
	return 0;
}

/*
 * The rest of btrfs_read_block_groups() once every chunk's block group is
 * in fs_info->block_groups (read here, or found by the kernel's tree
 * search in live mode): bytes_super, space infos and the read-only rules.
 * The space infos stay raw: the global reserve depends on the kernel
 * modelled and is added by the report (block-rsv.c).
 */
void btrfs_account_block_groups(struct btrfs_fs_info *fs_info)
{
	u32 i;

	btrfs_init_space_info(fs_info);
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		struct btrfs_block_group *bg = &fs_info->block_groups[i];

		bg->bytes_super = calc_bytes_super(bg);
		btrfs_add_bg_to_space_info(fs_info, bg);
		if (!chunk_writeable(bg->map))
			inc_block_group_ro(fs_info, bg);
	}
	mark_unredundant_ro(fs_info);
}

/*
 * The kernel's own reclaim, after fs/btrfs/block-group.c and space-info.c of
 * 6.18: should_reclaim_block_group() and btrfs_mark_bg_to_reclaim() on a
 * free in btrfs_update_block_group() (bg_reclaim_threshold, 5.19), and
 * btrfs_reclaim_sweep() / do_reclaim_sweep() with reclaim_mark (periodic
 * reclaim, 6.11), both run by btrfs_reclaim_bgs() in the cleaner, then
 * btrfs_reclaim_bgs_work() relocating the list sorted by used
 * (reclaim_bgs_cmp()).  Non-zoned; formulas.md section 21.14.
 */
static const char * const reclaim_when_names[] = {
	[BTRFS_RECLAIM_ON_FREE] = "on the free that crosses the threshold",
	[BTRFS_RECLAIM_ON_FREE_ARMED] = "on a free that crosses it once armed",
	[BTRFS_RECLAIM_FIRST_SWEEP] = "first sweep (urgent)",
	[BTRFS_RECLAIM_SECOND_SWEEP] = "second sweep",
};

const char *btrfs_reclaim_when_name(enum btrfs_reclaim_when when)
{
	return reclaim_when_names[when];
}

enum btrfs_space_index btrfs_bg_space_index(u64 flags)
{
	if ((flags & BTRFS_BLOCK_GROUP_DATA) && (flags & BTRFS_BLOCK_GROUP_METADATA))
		return BTRFS_SPACE_MIXED;
	if (flags & BTRFS_BLOCK_GROUP_SYSTEM)
		return BTRFS_SPACE_SYSTEM;
	if (flags & BTRFS_BLOCK_GROUP_METADATA)
		return BTRFS_SPACE_METADATA;
	return BTRFS_SPACE_DATA;
}

/* btrfs_calc_block_group_size_class() (6.3-6.18): by the allocation's size */
enum btrfs_block_group_size_class btrfs_calc_block_group_size_class(u64 size)
{
	if (size <= SZ_128K)
		return BTRFS_BG_SZ_SMALL;
	if (size <= SZ_8M)
		return BTRFS_BG_SZ_MEDIUM;
	return BTRFS_BG_SZ_LARGE;
}

/*
 * reclaim_bgs_cmp() sorts the list by used, stable: equal ones stay in the
 * order the sweep marked them, raid index first, then the space info's
 * list (logical order after a mount)
 */
static int reclaim_cmp(const void *a, const void *b)
{
	const struct btrfs_reclaim_candidate *x = a, *y = b;
	int rx = btrfs_bg_flags_to_raid_index(x->flags);
	int ry = btrfs_bg_flags_to_raid_index(y->flags);

	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x->start < y->start ? -1 : (x->start > y->start);
}

static void reclaim_add(struct btrfs_reclaim_candidate *v, u32 *nr,
			const struct btrfs_block_group *bg, enum btrfs_reclaim_when when,
			u64 free_to_mark)
{
	struct btrfs_reclaim_candidate *c = &v[(*nr)++];

	c->start = bg->start;
	c->length = bg->length;
	c->used = bg->used;
	c->flags = bg->flags;
	c->when = when;
	c->free_to_mark = free_to_mark;
	c->may_be_skipped = false;
}

/*
 * One block group: at or above the threshold, the free that takes used
 * below it marks it (should_reclaim_block_group(): old >= thresh > new);
 * already below, only a sweep takes it (a block group that starts below is
 * never marked by a free).  Read-only ones are balance's; empty ones go to
 * the unused list instead (btrfs_reclaim_bgs_work()).
 */
static void reclaim_classify(const struct btrfs_block_group *bg,
			     struct btrfs_reclaim_plan *plan)
{
	u32 pct = plan->arm_bytes ? plan->armed_pct : plan->thresh_pct;
	u64 thresh = mult_perc(bg->length, pct);

	if (bg->ro || bg->used == 0 || thresh == 0)
		return;
	if (bg->used >= thresh) {
		/*
		 * With periodic reclaim a free only counts its bytes toward
		 * periodic_reclaim_ready (btrfs_update_block_group() of 6.11 to
		 * 6.18): no free marks it, a sweep takes it once below
		 */
		if (plan->knobs.periodic_reclaim)
			plan->nr_above_swept++;
		else
			reclaim_add(plan->on_free, &plan->nr_on_free, bg, plan->arm_bytes ?
				    BTRFS_RECLAIM_ON_FREE_ARMED : BTRFS_RECLAIM_ON_FREE,
				    bg->used - thresh + 1);
		return;
	}
	if (!plan->sweeps) {
		plan->nr_below_unswept++;
		return;
	}
	reclaim_add(plan->sweep, &plan->nr_sweep, bg, plan->urgent ?
		    BTRFS_RECLAIM_FIRST_SWEEP : BTRFS_RECLAIM_SECOND_SWEEP, 0);
	plan->sweep_bytes += bg->used;
}

int btrfs_plan_reclaim(const struct btrfs_fs_info *fs_info, enum btrfs_space_index index,
		       const struct btrfs_space_info *sinfo, u64 free_chunk_space,
		       u64 chunk_size, const struct btrfs_reclaim_knobs *knobs,
		       struct btrfs_reclaim_plan *plan)
{
	u32 n = fs_info->nr_block_groups;
	u32 i;

	memset(plan, 0, sizeof(*plan));
	plan->present = true;
	plan->knobs = *knobs;
	plan->chunk_size = chunk_size;
	plan->thresh_pct = btrfs_calc_reclaim_threshold(sinfo, knobs, free_chunk_space,
							chunk_size, &plan->dyn_target,
							&plan->dyn_want, &plan->unused);
	/*
	 * Dynamic: while unused is below a chunk the threshold is 0 and no
	 * free marks anything.  A free moves its bytes from used to pinned,
	 * which counts as used: they count toward unused only once unpinned,
	 * when the free's transaction commits.  Once arm_bytes are so freed
	 * (net of allocations), the frees of a later transaction see the
	 * threshold of the unallocated space as now: armed_pct.  A sweep
	 * waits for periodic_reclaim_ready, a whole chunk freed net
	 * (btrfs_space_info_update_reclaimable()), and runs in the cleaner
	 * woken after the commit that unpinned it: it sees armed_pct too,
	 * unless those frees emptied block groups the cleaner deleted first
	 * (their length leaves total_bytes, and unused with it).
	 */
	if (knobs->dynamic_reclaim && plan->unused < chunk_size) {
		plan->arm_bytes = chunk_size - plan->unused;
		plan->armed_pct = btrfs_dynamic_reclaim_pct(plan->dyn_want, plan->dyn_target);
	}
	/* is_reclaim_urgent() */
	plan->urgent = free_chunk_space < chunk_size;
	/* btrfs_should_periodic_reclaim(): never SYSTEM */
	plan->sweeps = knobs->periodic_reclaim && index != BTRFS_SPACE_SYSTEM;
	/*
	 * Room for every block group, but not zeroed: reclaim_add() fills each
	 * entry it takes, and the pages no entry reaches are never touched
	 * (calloc() zeroed 2 x 56 bytes per block group for each space info:
	 * 65 of the 435 page faults of a warm inspect of 771 block groups)
	 */
	plan->sweep = malloc((n ? n : 1) * sizeof(*plan->sweep));
	plan->on_free = malloc((n ? n : 1) * sizeof(*plan->on_free));
	if (!plan->sweep || !plan->on_free) {
		btrfs_free_reclaim_plan(plan);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (btrfs_bg_space_index(fs_info->block_groups[i].flags) == index)
			reclaim_classify(&fs_info->block_groups[i], plan);
	qsort(plan->sweep, plan->nr_sweep, sizeof(*plan->sweep), reclaim_cmp);
	/*
	 * btrfs_reclaim_bgs_work() checks each again when it comes to it: the
	 * bytes relocated before may have gone into it and lifted it to the
	 * threshold (forecast's reclaim replay, btrfs_reloc_reclaim(), says
	 * where they go)
	 */
	for (i = 1; i < plan->nr_sweep; i++)
		plan->sweep[i].may_be_skipped = true;
	return 0;
}

void btrfs_free_reclaim_plan(struct btrfs_reclaim_plan *plan)
{
	free(plan->sweep);
	free(plan->on_free);
	plan->sweep = NULL;
	plan->on_free = NULL;
}

bool btrfs_block_group_needs_caching(const struct btrfs_block_group *bg)
{
	return bg->item_used && bg->item_used != bg->length;
}

/* Load_block_group_size_class()'s samples: five, at i * length / 5 */
#define SIZE_CLASS_SAMPLES	5

/*
 * sample_block_group_extent_item(): from (start + index * length / 5,
 * EXTENT_ITEM, 0) slot by slot (btrfs_for_each_slot()) to the first
 * EXTENT_ITEM wholly inside the block group, or to a key past its end
 */
static int sample_extent_item(struct btrfs_fs_info *fs_info, const struct btrfs_block_group *bg,
			      u32 index, struct btrfs_path *path)
{
	const struct btrfs_root_ref *root = &fs_info->extent_root;
	const u64 end = bg->start + bg->length;
	struct btrfs_key key = {
		bg->start + index * (bg->length / SIZE_CLASS_SAMPLES), BTRFS_EXTENT_ITEM_KEY, 0
	};
	int ret = btrfs_search_slot(fs_info, root, &key, path, BTRFS_IO_OTHER);

	while (ret >= 0) {
		if (path->slots[0] >= (int)path->nodes[0]->nritems) {
			ret = btrfs_next_leaf(fs_info, root, path, BTRFS_IO_OTHER);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(path->nodes[0], path->slots[0], &key);
		if ((key.type == BTRFS_EXTENT_ITEM_KEY && key.objectid >= bg->start &&
		     key.objectid + key.offset <= end) || key.objectid >= end)
			break;
		path->slots[0]++;
	}
	btrfs_release_path(path);
	return ret < 0 ? ret : 0;
}

/*
 * load_free_space_tree(): the search of the block group's FREE_SPACE_INFO
 * (btrfs_search_free_space_info()), then btrfs_next_item() over its
 * extents or bitmaps up to the next FREE_SPACE_INFO or the tree's end
 */
static int load_free_space_tree(struct btrfs_fs_info *fs_info,
				const struct btrfs_block_group *bg, struct btrfs_path *path)
{
	const struct btrfs_root_ref *root = &fs_info->free_space_root;
	struct btrfs_key key = { bg->start, BTRFS_FREE_SPACE_INFO_KEY, bg->length };
	int ret = btrfs_search_slot(fs_info, root, &key, path, BTRFS_IO_OTHER);

	if (ret > 0)
		ret = -ENOENT;
	while (!ret) {
		ret = btrfs_next_item(fs_info, root, path, BTRFS_IO_OTHER);
		if (ret)
			break;
		btrfs_item_key_to_cpu(path->nodes[0], path->slots[0], &key);
		if (key.type == BTRFS_FREE_SPACE_INFO_KEY)
			break;
	}
	btrfs_release_path(path);
	return ret < 0 ? ret : 0;
}

/*
 * caching_thread() (6.18): load_block_group_size_class() for a data block
 * group (btrfs_block_group_should_use_size_class(): data only, since 6.3),
 * then the free space from the free space tree.  Both search the commit
 * root with READA_FORWARD.
 */
int btrfs_caching_thread_searches(struct btrfs_fs_info *fs_info,
				  const struct btrfs_block_group *bg,
				  const struct btrfs_reada_forward *reada)
{
	struct btrfs_path path = { .reada = reada };
	u32 i;
	int ret = 0;

	if (!btrfs_fs_compat_ro(fs_info, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE) ||
	    !fs_info->free_space_root.found)
		return 1;
	if ((bg->flags & BTRFS_BLOCK_GROUP_DATA) && !(bg->flags & BTRFS_BLOCK_GROUP_METADATA))
		for (i = 0; i < SIZE_CLASS_SAMPLES && !ret; i++)
			ret = sample_extent_item(fs_info, bg, i, &path);
	return ret ? ret : load_free_space_tree(fs_info, bg, &path);
}
