// SPDX-License-Identifier: GPL-2.0
/*
 * The forecast (forecast.h).  A fill writes one type until ENOSPC, as
 * fallocate in a loop does: the free space of the type's writable block
 * groups, then one chunk after another, each made by the allocator
 * replayed (volumes.c, btrfs_create_chunk()), each preceded by
 * check_system_chunk() of fs/btrfs/block-group.c; it ends at the first
 * -ENOSPC, which is where btrfs_chunk_alloc() gives up and the data
 * reservation fails.  Before the fill the cleaner's
 * btrfs_delete_unused_bgs() (block-group.c, 6.18) is applied.
 * Documentation/formulas.md section 21.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/block-group.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/forecast.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/live.h"
#include "kernel-shared/relocation.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/volumes.h"
#include "common/array.h"

/*
 * A bound on the work of one fill, for crafted chunk trees only: each
 * chunk made one at a time looks at every device, so 10^5 devices with
 * holes that never repeat would take long.  Runs (section 21.11) take any
 * real pool to ENOSPC in a few hundred chunks made one at a time.
 */
#define FORECAST_MAX_DEVICE_STEPS	(50ULL * 1000 * 1000)

#define FORECAST_MAX_LEVEL	8	/* BTRFS_MAX_LEVEL */

void forecast_options_init(struct forecast_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->kernel_version = BTRFS_DEFAULT_KERNEL;
	btrfs_mount_discard_init(&opts->mount);
}

static const struct space_report_space_info *find_space(const struct space_report *report,
							  u64 type)
{
	int i;

	for (i = 0; i < report->nr_space_infos; i++)
		if ((report->space_infos[i].info.flags & BTRFS_BLOCK_GROUP_TYPE_MASK) == type)
			return &report->space_infos[i];
	return NULL;
}

/* Everything a space info holds, bytes_may_use included */
static u64 space_held(const struct btrfs_space_info *si)
{
	return btrfs_space_info_used(si, true);
}

/* What a writable block group can still take: length - used - bytes_super */
static u64 bg_free(const struct btrfs_block_group *bg)
{
	u64 held = bg->used + bg->bytes_super;

	if (bg->ro || held >= bg->length)
		return 0;
	return bg->length - held;
}

/* The space info's list a block group is on: block_groups[raid index] */
static u32 list_index(u64 flags)
{
	return (u32)(flags & BTRFS_BLOCK_GROUP_TYPE_MASK) * BTRFS_NR_RAID_TYPES +
	       btrfs_bg_flags_to_raid_index(flags);
}

#define FORECAST_NR_LISTS	((BTRFS_BLOCK_GROUP_TYPE_MASK + 1) * BTRFS_NR_RAID_TYPES)

/*
 * The block group that takes the tree blocks of the cleaner's first
 * deletion (its transaction COWs the dev, extent, free space and root
 * trees): btrfs_delete_unused_bgs() has made the group it deletes
 * read-only (inc_block_group_ro()) before it starts the transaction, and
 * find_free_extent() walks the metadata profile's list by start in its
 * first loop (LOOP_CACHING_NOWAIT), where only cached groups have free
 * space: read_one_block_group() cached the empty and the full ones, a
 * partly used one only starts caching then.  So the first empty writable
 * group of the list other than @deleted; the cluster then keeps later
 * tree blocks there, and the cleaner skips it (reserved, then used).
 * NULL when there is none (the blocks wait for a partly used group).
 */
static const struct btrfs_block_group *first_tree_block_bg(const struct btrfs_fs_info *fs_info,
							   u64 deleted)
{
	u64 flags = btrfs_get_alloc_profile(fs_info, BTRFS_BLOCK_GROUP_METADATA);
	u32 index = btrfs_bg_flags_to_raid_index(flags);
	u32 i;

	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		if (!(bg->flags & BTRFS_BLOCK_GROUP_METADATA) ||
		    btrfs_bg_flags_to_raid_index(bg->flags) != index ||
		    bg->used || bg->ro || bg->start == deleted)
			continue;
		return bg;
	}
	return NULL;
}

/* Where the cleaner's copies go: one after the other in the tree block group */
struct cleaner_place {
	u64 next;
	u32 nodesize;
};

static int place_in_tree_block_bg(void *ctx, u64 *found)
{
	struct cleaner_place *p = ctx;

	*found = p->next;
	p->next += p->nodesize;
	return 0;
}

/*
 * The blocks the cleaner's first deletions copy, all in one transaction:
 * btrfs_remove_chunk() deletes each chunk's dev extents
 * (btrfs_free_dev_extent(): the dev tree's paths) and
 * btrfs_remove_block_group() its block group item and its free-space tree
 * info (remove_block_group_item(),
 * btrfs_remove_block_group_free_space()); the commit writes the root items
 * of those trees and, the first since the mount, each device's dev stats
 * item (btrfs_run_dev_stats()).  The chunk tree's copies are left out: they
 * stay in the system groups, whose last one is never deleted.
 */
static int cleaner_copies(struct btrfs_fs_info *fs_info, const struct btrfs_forecast *fc,
			  struct btrfs_cow_set *set)
{
	struct btrfs_root_ref tree_root = btrfs_tree_root_ref(fs_info);
	static const u64 changed[] = {
		BTRFS_EXTENT_TREE_OBJECTID, BTRFS_DEV_TREE_OBJECTID,
		BTRFS_FREE_SPACE_TREE_OBJECTID, BTRFS_BLOCK_GROUP_TREE_OBJECTID,
	};
	struct cleaner_place place = { fc->tree_block_bg, fs_info->nodesize };
	u32 i, s;
	int ret = 0;

	for (i = 0; i < fc->nr_unused_bgs && !ret; i++) {
		const struct btrfs_chunk_map *map;

		map = btrfs_find_chunk_map(fs_info, fc->unused_bgs[i], 1);

		for (s = 0; map && s < map->num_stripes && !ret; s++)
			ret = btrfs_cow_path(fs_info, &fs_info->dev_root, map->stripes[s].devid,
					     BTRFS_DEV_EXTENT_KEY, map->stripes[s].physical, set);
		if (!ret && map)
			ret = btrfs_cow_path(fs_info, btrfs_block_group_root(fs_info), map->start,
					     BTRFS_BLOCK_GROUP_ITEM_KEY, map->length, set);
		if (!ret && map)
			ret = btrfs_cow_path(fs_info, &fs_info->free_space_root, map->start,
					     BTRFS_FREE_SPACE_INFO_KEY, map->length, set);
	}
	for (i = 0; i < sizeof(changed) / sizeof(changed[0]) && !ret; i++)
		ret = btrfs_cow_path(fs_info, &tree_root, changed[i], BTRFS_ROOT_ITEM_KEY, 0, set);
	for (i = 0; i < fs_info->nr_devices && !ret; i++) {
		const struct btrfs_device *dev = &fs_info->devices[i];

		if (dev->in_chunk_tree)
			ret = btrfs_cow_path(fs_info, &fs_info->dev_root, BTRFS_DEV_STATS_OBJECTID,
					     BTRFS_PERSISTENT_ITEM_KEY, dev->devid, set);
	}
	return ret ? ret : btrfs_cow_settle(fs_info, set, place_in_tree_block_bg, &place);
}

/*
 * Whether the cleaner's first transaction empties @bg: every byte it used
 * was a tree block that transaction copied (its copies went elsewhere).
 * btrfs_update_block_group() then marks it unused at the commit
 * (btrfs_mark_bg_unused()), and the next pass of the cleaner deletes it.
 */
static bool emptied_by_copies(const struct btrfs_block_group *bg, const struct btrfs_cow_set *set,
			      u32 nodesize)
{
	u64 copied = 0;
	u32 i;

	for (i = 0; i < set->nr; i++)
		if (set->start[i] >= bg->start && set->start[i] - bg->start < bg->length)
			copied += nodesize;
	return copied >= bg->used;
}

/*
 * btrfs_delete_unused_bgs()'s checks of @bg, an empty group on unused_bgs:
 * deleted (listed, its space info and list shortened) unless the last of
 * its list or needed by what its space info holds
 */
static bool cleaner_deletes_bg(const struct space_report *report, struct btrfs_forecast *fc,
			       const struct btrfs_block_group *bg, u64 *total, u32 *on_list)
{
	u32 *list = &on_list[list_index(bg->flags)];
	int s;

	if (*list < 2)
		return false;
	for (s = 0; s < report->nr_space_infos; s++) {
		const struct btrfs_space_info *si = &report->space_infos[s].info;

		if ((si->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) !=
		    (bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK))
			continue;
		if (total[s] < bg->length || total[s] - bg->length < space_held(si))
			return false;
		total[s] -= bg->length;
		(*list)--;
		fc->unused_bgs[fc->nr_unused_bgs++] = bg->start;
		return true;
	}
	return false;
}

/*
 * The cleaner's next pass: the tree block groups its first transaction
 * emptied (emptied_by_copies()), but the one its copies went to.  None
 * when the fills start before that commit (--cleaner-uncommitted), or
 * when no empty group took the copies: they went to a partly used group,
 * which one is not known, and it may be one of those.
 */
static int find_emptied_bgs(const struct space_report *report, struct btrfs_forecast *fc,
			    u64 *total, u32 *on_list)
{
	struct btrfs_fs_info *fs_info = (struct btrfs_fs_info *)report->fs_info;
	struct btrfs_cow_set set = { 0 };
	u32 i, first = fc->nr_unused_bgs;
	int ret;

	if (fc->cleaner_uncommitted || !fc->has_tree_block_bg)
		return 0;
	ret = cleaner_copies(fs_info, fc, &set);
	for (i = 0; i < fs_info->nr_block_groups && !ret; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		if (bg->ro || !bg->used || (bg->flags & BTRFS_BLOCK_GROUP_DATA) ||
		    (fc->has_tree_block_bg && bg->start == fc->tree_block_bg) ||
		    !emptied_by_copies(bg, &set, fs_info->nodesize))
			continue;
		cleaner_deletes_bg(report, fc, bg, total, on_list);
	}
	free(set.start);
	if (fc->nr_unused_bgs > first)
		qsort(fc->unused_bgs, fc->nr_unused_bgs, sizeof(u64), array_cmp_u64);
	return ret;
}

/*
 * btrfs_delete_unused_bgs(): a block group with nothing used, not
 * read-only, is deleted unless it is the only one left on its space
 * info's list of its profile (list_is_singular(), which keeps the
 * profile known; a deletion shortens the list) or the space info without
 * it could not hold what is used and reserved there (total_bytes -
 * length < btrfs_space_info_used(sinfo, true)).  Block groups are taken
 * in the order the mount marked them: by start.  Under discard=async
 * read_one_block_group() marks none (discard.c): they are counted as
 * empty and kept.  The metadata group the first deletion writes its tree
 * blocks to is kept too (first_tree_block_bg()), and the groups those
 * deletions' copies empty go at the next pass (find_emptied_bgs()).  The
 * list lengths are counted first.
 */
static int find_unused_bgs(const struct space_report *report, struct btrfs_forecast *fc)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	u64 total[BTRFS_NR_SPACE_INFOS] = { 0 };
	u32 on_list[FORECAST_NR_LISTS] = { 0 };
	const struct btrfs_block_group *kept;
	u32 i;
	int s;

	for (s = 0; s < report->nr_space_infos; s++)
		total[s] = report->space_infos[s].info.total_bytes;
	fc->unused_bgs = calloc(fs_info->nr_block_groups ? fs_info->nr_block_groups : 1,
				sizeof(u64));
	if (!fc->unused_bgs)
		return -ENOMEM;
	for (i = 0; i < fs_info->nr_block_groups; i++)
		on_list[list_index(fs_info->block_groups[i].flags)]++;
	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		if (bg->used || bg->ro)
			continue;
		fc->nr_empty_bgs++;
		/* live: the mount has already decided (it is past) */
		if (report->live || !fc->cleaner_deletes)
			continue;
		if (fc->has_tree_block_bg && bg->start == fc->tree_block_bg)
			continue;
		if (!cleaner_deletes_bg(report, fc, bg, total, on_list))
			continue;
		if (fc->nr_unused_bgs == 1 && (kept = first_tree_block_bg(fs_info, bg->start))) {
			fc->has_tree_block_bg = true;
			fc->tree_block_bg = kept->start;
		}
	}
	if (!fc->nr_unused_bgs)
		return 0;
	return find_emptied_bgs(report, fc, total, on_list);
}

/* unused_bgs is in block-group order, which is by start */
static bool is_unused(const struct btrfs_forecast *fc, u64 start)
{
	return fc->nr_unused_bgs &&
	       bsearch(&start, fc->unused_bgs, fc->nr_unused_bgs, sizeof(u64), array_cmp_u64);
}

/*
 * find_next_chunk() after btrfs_remove_chunk() took the deleted chunks'
 * maps out: the end of the last map left, lower than before when a
 * deleted chunk was the last.
 */
static void next_chunk_after_cleaner(const struct btrfs_fs_info *fs_info,
				     const struct btrfs_forecast *fc,
				     struct btrfs_alloc_state *st)
{
	u64 end = 0;
	u32 i;

	for (i = 0; i < fs_info->nr_chunks; i++) {
		const struct btrfs_chunk_map *map = fs_info->chunks[i];

		if (!is_unused(fc, map->start) && map->start + map->length > end)
			end = map->start + map->length;
	}
	st->next_logical = end;
}

/* The state a fill starts from; @cleaner: the unused block groups deleted */
static int fill_state(const struct space_report *report, const struct btrfs_forecast *fc,
		      bool cleaner, struct btrfs_alloc_state *st)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	u32 i;
	int ret;

	ret = btrfs_alloc_state_init(fs_info, fc->kernel_version, st);
	if (ret || !cleaner)
		return ret;
	for (i = 0; i < fs_info->nr_block_groups; i++)
		if (is_unused(fc, fs_info->block_groups[i].start))
			btrfs_alloc_remove_chunk(st, fs_info->block_groups[i].map);
	if (fc->nr_unused_bgs)
		next_chunk_after_cleaner(fs_info, fc, st);
	return 0;
}

static u64 free_of_type(const struct space_report *report, const struct btrfs_forecast *fc,
			u64 type, bool cleaner)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	u64 sum = 0;
	u32 i;

	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];

		if ((bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) != type)
			continue;
		if (cleaner && is_unused(fc, bg->start))
			continue;
		sum += bg_free(bg);
	}
	return sum;
}

/*
 * Live mode, data: the bytes the kernel has promised since the commit the
 * block group items show.  Written data waits in bytes_may_use (delalloc),
 * then bytes_reserved (extent allocated), then bytes_used; a block group
 * item only learns of it at the commit.  btrfs_reserve_data_bytes() counts
 * all of them against total_bytes, so they are no room for a new write.
 * Pinned bytes come back at the commit that data flushing runs before it
 * gives up (COMMIT_TRANS), so used + pinned, not used, is what the
 * committed block groups hold.  Offline the space infos are the block
 * groups', and this is 0.
 */
static u64 live_data_pending(const struct space_report *report, u64 type)
{
	const struct space_report_space_info *si = find_space(report, type);
	const struct btrfs_fs_info *fs_info = report->fs_info;
	u64 committed = 0, now;
	u32 i;

	if (!report->live || type != BTRFS_BLOCK_GROUP_DATA || !si)
		return 0;
	for (i = 0; i < fs_info->nr_block_groups; i++)
		if ((fs_info->block_groups[i].flags & BTRFS_BLOCK_GROUP_TYPE_MASK) == type)
			committed += fs_info->block_groups[i].used;
	now = si->info.bytes_used + si->info.bytes_pinned + si->info.bytes_reserved +
	      si->info.bytes_may_use;
	return now > committed ? now - committed : 0;
}

void system_room_init(const struct space_report *report, struct system_room *room)
{
	const struct space_report_space_info *sys = find_space(report, BTRFS_BLOCK_GROUP_SYSTEM);
	const struct btrfs_fs_info *fs_info = report->fs_info;

	memset(room, 0, sizeof(*room));
	room->nodesize = fs_info->nodesize;
	room->profile = btrfs_get_alloc_profile(fs_info, BTRFS_BLOCK_GROUP_SYSTEM);
	room->chunk_size = sys ? sys->info.chunk_size :
			   btrfs_calc_chunk_size(fs_info->total_rw_bytes, BTRFS_BLOCK_GROUP_SYSTEM);
	if (sys && sys->info.total_bytes > space_held(&sys->info))
		room->left = sys->info.total_bytes - space_held(&sys->info);
}

/*
 * The chunk tree grows by one chunk item (25-byte item header, 48-byte
 * chunk, 32 bytes per stripe) per chunk; a new leaf is charged to the
 * SYSTEM space each time the added items fill one.  An estimate: the
 * kernel's leaves split at other points, and COW copies are freed at commit.
 */
static u64 chunk_item_bytes(u16 num_stripes)
{
	return sizeof(struct btrfs_item) + sizeof(struct btrfs_chunk) +
	       (u64)(num_stripes - 1) * sizeof(struct btrfs_stripe);
}

/* @nr chunk items of @num_stripes stripes each added to the chunk tree */
static void system_room_charge_items(struct system_room *room, u64 nr, u16 num_stripes)
{
	u64 capacity = room->nodesize - sizeof(struct btrfs_header);
	u64 leaves;

	room->item_bytes += nr * chunk_item_bytes(num_stripes);
	leaves = (room->item_bytes + capacity - 1) / capacity;
	if (leaves <= room->leaves_charged)
		return;
	/* one nodesize per leaf, until nothing is left */
	room->left -= min_t(u64, room->left, (leaves - room->leaves_charged) * room->nodesize);
	room->leaves_charged = leaves;
}

void system_room_charge(struct system_room *room, const struct btrfs_chunk_map *map)
{
	system_room_charge_items(room, 1, map->num_stripes);
}

/* The room check_system_chunk() asks for before a chunk of @type */
static u64 system_need(const struct btrfs_alloc_state *st, const struct system_room *room,
		       u64 type)
{
	u64 num_devs = btrfs_raid_devs_max(type);

	if (!num_devs)
		num_devs = st->rw_devices;
	return (u64)room->nodesize * FORECAST_MAX_LEVEL * num_devs +
	       (u64)room->nodesize * FORECAST_MAX_LEVEL * 2;
}

/*
 * How many chunks of @num_stripes stripes in a row find @need in the
 * SYSTEM room: after m of them ceil((item_bytes + m * item) / capacity)
 * leaves are charged, and the check before the next one passes while
 * that is at most leaves_charged + (left - need) / nodesize.
 */
static u64 system_room_chunks(const struct system_room *room, u64 need, u16 num_stripes)
{
	u64 capacity = room->nodesize - sizeof(struct btrfs_header);
	u64 spare, room_bytes;

	if (room->left < need)
		return 0;
	spare = (room->left - need) / room->nodesize;
	if (spare > (1ULL << 40))
		return UINT64_MAX;
	room_bytes = (room->leaves_charged + spare) * capacity;
	if (room_bytes < room->item_bytes)
		return 0;
	return (room_bytes - room->item_bytes) / chunk_item_bytes(num_stripes) + 1;
}

static int add_run(struct forecast_fill *fill, const struct btrfs_chunk_run *run)
{
	if (array_grow((void **)&fill->runs, fill->nr_runs, &fill->runs_cap, sizeof(*fill->runs)))
		return -ENOMEM;
	fill->runs[fill->nr_runs++] = *run;
	fill->nr_chunks += btrfs_chunk_run_count(run);
	return 0;
}

/* @map as a run of one chunk (freed on failure) */
static int add_chunk(struct forecast_fill *fill, struct btrfs_chunk_map *map)
{
	struct btrfs_chunk_run run = { .period = 1, .count = 1, .logical_step = map->length };
	int ret;

	run.pattern = malloc(sizeof(*run.pattern));
	if (!run.pattern) {
		free(map);
		return -ENOMEM;
	}
	run.pattern[0] = map;
	ret = add_run(fill, &run);
	if (ret)
		btrfs_chunk_run_free(&run);
	return ret;
}

/* @single is a run of one chunk equal to chunk @j of @run one period before its first */
static bool precedes(const struct btrfs_chunk_run *single, const struct btrfs_chunk_run *run,
		     u32 j)
{
	const struct btrfs_chunk_map *a, *b = run->pattern[j];
	u16 s;
	u32 k;

	if (single->count != 1)
		return false;
	a = single->pattern[0];
	if (a->type != b->type || a->length != b->length || a->stripe_size != b->stripe_size ||
	    a->num_stripes != b->num_stripes || a->start + run->logical_step != b->start)
		return false;
	for (s = 0; s < a->num_stripes; s++) {
		for (k = 0; k < run->nr_steps; k++)
			if (run->steps[k].devid == b->stripes[s].devid)
				break;
		if (k == run->nr_steps || a->stripes[s].devid != b->stripes[s].devid ||
		    a->stripes[s].physical + run->steps[k].step != b->stripes[s].physical)
			return false;
	}
	return true;
}

/*
 * @run (taken: its pattern freed or kept) goes on from the chunks made
 * alone before it: the last periods of @fill that are its pattern one
 * period earlier become its first ones, so that a run is listed once.
 */
static int add_taken_run(struct forecast_fill *fill, struct btrfs_chunk_run *run)
{
	u32 p = run->period, j;

	while (fill->nr_runs >= p) {
		struct btrfs_chunk_run *last = &fill->runs[fill->nr_runs - p];

		for (j = 0; j < p; j++)
			if (!precedes(&last[j], run, j))
				break;
		if (j < p)
			break;
		for (j = 0; j < p; j++) {
			free(run->pattern[j]);
			run->pattern[j] = last[j].pattern[0];
			free(last[j].pattern);
		}
		fill->nr_runs -= p;
		fill->nr_chunks -= p;
		run->count += p;
	}
	return add_run(fill, run);
}

/* The usable bytes of @run's chunks: length - bytes_super of each */
static int run_usable(const struct btrfs_chunk_run *run, u64 *bytes)
{
	u32 max = 3 * 2 * (run->nr_steps ? run->nr_steps : 1), nr, i;
	u64 *idx = calloc(max, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	*bytes = btrfs_chunk_run_length(run);
	nr = btrfs_chunk_run_super_chunks(run, idx, max);
	for (i = 0; i < nr; i++) {
		struct btrfs_chunk_map *map = btrfs_chunk_run_chunk(run, idx[i]);

		if (!map) {
			free(idx);
			return -ENOMEM;
		}
		*bytes -= btrfs_chunk_map_bytes_super(map);
		free(map);
	}
	free(idx);
	return 0;
}

/*
 * check_system_chunk(): before a chunk of @type, room for updating
 * num_devs device items and inserting one chunk item,
 * calc_metadata_size(num_devs) + calc_insert_metadata_size(1); a SYSTEM
 * chunk is made when the SYSTEM space has less (a failure is ignored).
 */
int check_system_chunk(struct btrfs_alloc_state *st, struct system_room *room,
			      u64 type, struct forecast_fill *fill)
{
	struct btrfs_chunk_map *map;
	int err;

	if (room->left >= system_need(st, room, type))
		return 0;
	map = btrfs_alloc_create_chunk(st, BTRFS_BLOCK_GROUP_SYSTEM | room->profile,
				       room->chunk_size, &err);
	if (!map)
		return err == -ENOMEM ? err : 0;
	room->left += map->length - btrfs_chunk_map_bytes_super(map);
	system_room_charge(room, map);
	if (!fill) {
		free(map);
		return 0;
	}
	return add_chunk(fill, map);
}

/* What a fill made */
struct fill_total {
	u64 chunks;		/* of the type filled, SYSTEM ones not counted */
	u64 length;		/* their logical bytes */
	u64 usable;		/* their length - bytes_super */
	bool truncated;		/* stopped at FORECAST_MAX_DEVICE_STEPS */
};

/*
 * A run after the chunk just made, when the allocator repeats itself; at
 * most the chunks before check_system_chunk() makes a SYSTEM chunk, unless
 * it could not (@system_failed): free space only shrinks in a fill, so
 * the SYSTEM chunk it could not make it cannot make later either, and
 * each of its attempts changes nothing.
 */
static int fill_one_run(struct btrfs_alloc_state *st, struct btrfs_alloc_history *h,
			struct system_room *room, bool system_failed, u64 type, u64 chunk_size,
			u16 num_stripes, struct forecast_fill *fill, struct fill_total *tot)
{
	struct btrfs_chunk_run run;
	u64 max = UINT64_MAX, usable;
	int ret;

	if (room && !system_failed)
		max = system_room_chunks(room, system_need(st, room, type), num_stripes);
	ret = btrfs_alloc_take_run(st, h, type, chunk_size, max, &run);
	if (ret <= 0)
		return ret;
	ret = run_usable(&run, &usable);
	if (ret) {
		btrfs_chunk_run_free(&run);
		return ret;
	}
	tot->chunks += btrfs_chunk_run_count(&run);
	tot->length += btrfs_chunk_run_length(&run);
	tot->usable += usable;
	if (room)
		system_room_charge_items(room, btrfs_chunk_run_count(&run), num_stripes);
	if (!fill) {
		btrfs_chunk_run_free(&run);
		return 0;
	}
	ret = add_taken_run(fill, &run);
	if (ret)
		btrfs_chunk_run_free(&run);
	return ret;
}

/*
 * Chunks of @type (type and profile) until -ENOSPC, each after
 * check_system_chunk() when @room is given, into @fill when not NULL:
 * made one at a time until the allocator repeats itself, then as runs
 * (btrfs_alloc_take_run(), section 21.11), each cut where the SYSTEM room
 * runs out so that check_system_chunk() makes its chunk in its place.
 */
static int fill_runs(struct btrfs_alloc_state *st, struct system_room *room, u64 type,
		     u64 chunk_size, struct forecast_fill *fill, struct fill_total *tot,
		     bool runs)
{
	struct btrfs_alloc_history h;
	bool system_failed = false;
	u64 work = 0;
	int ret;

	memset(tot, 0, sizeof(*tot));
	ret = btrfs_alloc_history_init(st, &h);
	while (!ret) {
		struct btrfs_chunk_map *map;
		u64 logical = st->next_logical;
		u16 num_stripes;

		if (work >= FORECAST_MAX_DEVICE_STEPS) {
			tot->truncated = true;
			break;
		}
		if (room) {
			bool short_room = room->left < system_need(st, room, type);

			ret = check_system_chunk(st, room, type, fill);
			if (ret)
				break;
			/* a SYSTEM chunk between: the repeats start again */
			if (st->next_logical != logical)
				btrfs_alloc_history_reset(&h);
			else if (short_room)
				system_failed = true;
		}
		work += st->nr_devs ? st->nr_devs : 1;
		map = btrfs_alloc_create_chunk_logged(st, type, chunk_size, &h, &ret);
		if (!map) {
			if (ret != -ENOMEM)
				ret = 0;
			break;
		}
		num_stripes = map->num_stripes;
		tot->chunks++;
		tot->length += map->length;
		tot->usable += map->length - btrfs_chunk_map_bytes_super(map);
		if (room)
			system_room_charge(room, map);
		if (fill)
			ret = add_chunk(fill, map);
		else
			free(map);
		if (!ret && runs)
			ret = fill_one_run(st, &h, room, system_failed, type, chunk_size,
					   num_stripes, fill, tot);
	}
	btrfs_alloc_history_free(&h);
	return ret;
}

static void unallocated_now(const struct btrfs_alloc_state *st, u64 *out)
{
	u32 i;

	for (i = 0; i < st->nr_devs; i++)
		out[i] = st->devs[i].total_bytes > st->devs[i].bytes_used ?
			 st->devs[i].total_bytes - st->devs[i].bytes_used : 0;
}

static void setup_fill(const struct space_report *report, const struct forecast_options *opts,
		       u64 type, const char *name, struct forecast_fill *fill)
{
	const struct space_report_space_info *si = find_space(report, type);
	bool is_data = type & BTRFS_BLOCK_GROUP_DATA;
	bool set = is_data ? opts->data_profile_set : opts->metadata_profile_set;

	fill->present = si != NULL;
	fill->name = name;
	fill->type = type;
	fill->chunk_size = si ? si->info.chunk_size : 0;
	if (set)
		fill->profile = is_data ? opts->data_profile : opts->metadata_profile;
	else
		fill->profile = btrfs_get_alloc_profile(report->fs_info, type) &
				BTRFS_BLOCK_GROUP_PROFILE_MASK;
}

/*
 * One fill: the free space and the new chunks, then what is left on each
 * device split into what @other's profile could still take (soft) and
 * what nothing can (hard).
 */
/*
 * The cleaner's deletions before their transaction commits
 * (btrfs_alloc_remove_chunk_uncommitted()), the chunk maps taken out
 * (find_next_chunk() sees them gone)
 */
static void cleaner_pending(const struct btrfs_fs_info *fs_info, const struct btrfs_forecast *fc,
			    struct btrfs_alloc_state *st)
{
	u32 i;

	for (i = 0; i < fs_info->nr_block_groups; i++)
		if (is_unused(fc, fs_info->block_groups[i].start))
			btrfs_alloc_remove_chunk_uncommitted(st, fs_info->block_groups[i].map);
	next_chunk_after_cleaner(fs_info, fc, st);
}

/* The commit the fill's ENOSPC flushing makes (COMMIT_TRANS): the ranges free */
static int cleaner_commit(const struct btrfs_fs_info *fs_info, const struct btrfs_forecast *fc,
			  struct btrfs_alloc_state *st)
{
	const struct btrfs_chunk_map **maps;
	u32 i, nr = 0;
	int ret;

	maps = malloc((fc->nr_unused_bgs ? fc->nr_unused_bgs : 1) * sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	for (i = 0; i < fs_info->nr_block_groups && nr < fc->nr_unused_bgs; i++) {
		const struct btrfs_chunk_map *map = fs_info->block_groups[i].map;

		if (!is_unused(fc, fs_info->block_groups[i].start))
			continue;
		btrfs_alloc_commit_removed_bytes(st, map);
		maps[nr++] = map;
	}
	ret = btrfs_alloc_remove_ranges(st, maps, nr);
	free(maps);
	return ret;
}

static int run_fill(const struct space_report *report, const struct btrfs_forecast *fc,
		    struct forecast_fill *fill, const struct forecast_fill *other,
		    bool cleaner)
{
	bool pending = cleaner && fc->cleaner_uncommitted && fc->nr_unused_bgs;
	struct btrfs_alloc_state st;
	struct system_room room;
	struct fill_total tot;
	u64 *left = NULL;
	u32 i;
	int ret;

	ret = fill_state(report, fc, cleaner && !pending, &st);
	if (ret)
		return ret;
	if (pending)
		cleaner_pending(report->fs_info, fc, &st);
	system_room_init(report, &room);
	fill->free_existing = free_of_type(report, fc, fill->type, cleaner);
	fill->live_pending = live_data_pending(report, fill->type);
	ret = fill_runs(&st, &room, fill->type | fill->profile, fill->chunk_size, fill, &tot,
			true);
	if (ret)
		goto out;
	/* at ENOSPC the data and metadata flushing commits, then goes on */
	if (pending && !tot.truncated) {
		struct fill_total more;

		ret = cleaner_commit(report->fs_info, fc, &st);
		if (ret)
			goto out;
		ret = fill_runs(&st, &room, fill->type | fill->profile, fill->chunk_size, fill,
				&more, true);
		if (ret)
			goto out;
		tot.usable += more.usable;
		tot.truncated = more.truncated;
	}
	fill->truncated = tot.truncated;
	fill->new_chunk_bytes = tot.usable;
	left = calloc(st.nr_devs ? st.nr_devs : 1, sizeof(*left));
	ret = -ENOMEM;
	if (!left)
		goto out;
	unallocated_now(&st, left);
	unallocated_now(&st, fill->hard);
	memset(fill->soft, 0, st.nr_devs * sizeof(*fill->soft));
	if (other && other->present) {
		ret = fill_runs(&st, &room, other->type | other->profile, other->chunk_size,
				NULL, &tot, true);
		if (ret)
			goto out;
		unallocated_now(&st, fill->hard);
		for (i = 0; i < st.nr_devs; i++)
			fill->soft[i] = left[i] - fill->hard[i];
	}
	ret = 0;
out:
	free(left);
	btrfs_alloc_state_free(&st);
	return ret;
}

static void free_fill_chunks(struct forecast_fill *fill)
{
	u32 i;

	for (i = 0; i < fill->nr_runs; i++)
		btrfs_chunk_run_free(&fill->runs[i]);
	free(fill->runs);
	fill->runs = NULL;
	fill->nr_runs = 0;
	fill->runs_cap = 0;
	fill->nr_chunks = 0;
}

static u64 writable_of(const struct forecast_fill *fill, u64 global_rsv)
{
	u64 all = fill->free_existing + fill->new_chunk_bytes;

	all -= min_t(u64, all, fill->live_pending);

	if (fill->type & BTRFS_BLOCK_GROUP_METADATA)
		return all > global_rsv ? all - global_rsv : 0;
	return all;
}

static const struct {
	const char *name;
	u32 items;
} workloads[FORECAST_NR_WORKLOADS] = {
	/*
	 * btrfs_create_common(): btrfs_new_inode_prepare() counts 1 for the
	 * inode item (its ref goes in the same batch), 1 for the LSM's
	 * security xattr (dir->i_security: any LSM with inode blobs), 3 for
	 * the dir item, dir index and parent inode update; then
	 * btrfs_setxattr_trans() starts one of 2: the create is the larger
	 */
	[FORECAST_WORKLOAD_CREATE_XATTR] = { "create-xattr", 5 },
	[FORECAST_WORKLOAD_CREATE_XATTR_NOLSM] = { "create-xattr-nolsm", 4 },
	/* btrfs_setxattr_trans(): btrfs_start_transaction(root, 2) */
	[FORECAST_WORKLOAD_SETXATTR] = { "setxattr", 2 },
};

const char *forecast_workload_name(enum forecast_workload w)
{
	return w < FORECAST_NR_WORKLOADS ? workloads[w].name : NULL;
}

/*
 * start_transaction(root, n) of the workload's largest transaction,
 * FLUSH_ALL (btrfs_calc_start_trans_size()).
 * With no unallocated space left there is no over-commit: it fits while
 * used + may_use (the global reserve held in full) + it <= total, so the
 * fill ends less than one reservation short of writable_bytes.
 */
static void workload_stop(const struct space_report *report, const struct forecast_options *opts,
			  struct forecast_fill *fill)
{
	struct btrfs_kernel_model model;
	u32 n = workloads[opts->workload].items;

	btrfs_kernel_model(opts->kernel_version, &model);
	fill->workload = workloads[opts->workload].name;
	fill->workload_items = n;
	fill->last_reservation = btrfs_calc_start_trans_size(report->fs_info, &model, n);
	fill->workload_writable_bytes = fill->writable_bytes > fill->last_reservation ?
		fill->writable_bytes - fill->last_reservation : 0;
}

/*
 * Both ways: first with the unused block groups kept (writable_if_kept),
 * then deleted as the cleaner will, which is the fill reported.
 */
static int forecast_fill(const struct space_report *report, struct btrfs_forecast *fc,
			 struct forecast_fill *fill, const struct forecast_fill *other)
{
	u64 rsv = report->global_rsv_size;
	int ret;

	if (!fill->present)
		return 0;
	fill->hard = calloc(fc->nr_devs ? fc->nr_devs : 1, sizeof(u64));
	fill->soft = calloc(fc->nr_devs ? fc->nr_devs : 1, sizeof(u64));
	if (!fill->hard || !fill->soft)
		return -ENOMEM;
	ret = run_fill(report, fc, fill, other, false);
	if (ret)
		return ret;
	fill->writable_if_kept = writable_of(fill, rsv);
	free_fill_chunks(fill);
	ret = run_fill(report, fc, fill, other, true);
	if (ret)
		return ret;
	fill->writable_bytes = writable_of(fill, rsv);
	if (fill->type & BTRFS_BLOCK_GROUP_METADATA)
		fill->global_rsv_held = min_t(u64, rsv, fill->free_existing +
					      fill->new_chunk_bytes);
	return 0;
}

/*
 * Data written with metadata growing at @w->ratio (metadata per data
 * byte): each step writes until the data or the metadata free space is
 * used up (section 21.4, "Data with metadata growing").
 */
static void mixed_write(struct btrfs_mixed_walk *w)
{
	double by_meta = (double)w->mfree / w->ratio;
	u64 x = by_meta < (double)w->dfree ? (u64)by_meta : w->dfree;
	u64 mx = (u64)((double)x * w->ratio);

	w->data_bytes += x;
	w->metadata_bytes += mx;
	w->dfree -= x;
	w->mfree -= min_t(u64, w->mfree, mx);
}

/* The metadata a step takes when it writes a whole data chunk of @g bytes */
static u64 mixed_meta_of(const struct btrfs_mixed_walk *w, u64 g)
{
	return (u64)((double)g * w->ratio);
}

/* With @m metadata free, a data chunk of @g (or less) is written whole */
static bool mixed_whole(const struct btrfs_mixed_walk *w, u64 m, u64 g)
{
	return !((double)m / w->ratio < (double)g) && m >= mixed_meta_of(w, g);
}

/*
 * How many data chunks of at most @g bytes in a row are each written
 * whole, so that the step after each asks for data again: chunk j finds
 * at least mfree - j * mixed_meta_of(g), and mixed_whole() only grows
 * with the metadata free (binary search).
 */
static u64 mixed_whole_chunks(const struct btrfs_mixed_walk *w, u64 g)
{
	u64 c = mixed_meta_of(w, g), lo = 0, hi;

	if (!mixed_whole(w, w->mfree, g))
		return 0;
	if (!c)
		return UINT64_MAX;
	hi = w->mfree / c + 1;		/* j = hi has less than c left: not whole */
	while (hi - lo > 1) {
		u64 mid = lo + (hi - lo) / 2;

		if (mixed_whole(w, w->mfree - mid * c, g))
			lo = mid;
		else
			hi = mid;
	}
	return lo + 1;
}

/* The longest chunk among the last ones of @h: no run of it has longer ones */
static u64 history_longest(const struct btrfs_alloc_history *h)
{
	u64 longest = 0, i, n = h->nr < h->max_period + 1 ? h->nr : h->max_period + 1;

	for (i = h->nr - n; i < h->nr; i++) {
		const struct btrfs_chunk_map *map = h->maps[i % (h->max_period + 1)];

		if (map && map->length > longest)
			longest = map->length;
	}
	return longest;
}

/*
 * The steps of @run's data chunks, each written whole: the data and the
 * metadata of chunk i are its usable bytes and mixed_meta_of() of them,
 * summed per place in the pattern, the chunks on a superblock copy apart.
 */
static int mixed_run_steps(struct btrfs_mixed_walk *w, const struct btrfs_chunk_run *run)
{
	u32 max = 3 * 2 * (run->nr_steps ? run->nr_steps : 1), nr, i, j;
	u64 count = btrfs_chunk_run_count(run), *idx;

	for (j = 0; j < run->period && j < count; j++) {
		u64 n = (count - j + run->period - 1) / run->period;
		u64 g = run->pattern[j]->length, c = mixed_meta_of(w, g);

		w->data_bytes += n * g;
		w->metadata_bytes += n * c;
		w->mfree -= n * c;
	}
	idx = calloc(max, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	nr = btrfs_chunk_run_super_chunks(run, idx, max);
	for (i = 0; i < nr; i++) {
		struct btrfs_chunk_map *map = btrfs_chunk_run_chunk(run, idx[i]);
		u64 g, c;

		if (!map) {
			free(idx);
			return -ENOMEM;
		}
		g = map->length - btrfs_chunk_map_bytes_super(map);
		c = mixed_meta_of(w, map->length) - mixed_meta_of(w, g);
		w->data_bytes -= map->length - g;
		w->metadata_bytes -= c;
		w->mfree += c;
		free(map);
	}
	free(idx);
	return 0;
}

/*
 * Data chunks in a row that are each written whole, taken as one run when
 * the allocator repeats itself (at most until check_system_chunk() makes
 * a SYSTEM chunk, as fill_one_run()): 1 when some were taken, 0 when none.
 */
static int mixed_data_run(struct btrfs_alloc_state *st, struct btrfs_alloc_history *h,
			  struct system_room *room, bool system_failed, u64 type,
			  u64 chunk_size, struct btrfs_mixed_walk *w)
{
	u64 longest = history_longest(h), max;
	struct btrfs_chunk_run run;
	u16 num_stripes;
	int ret;

	if (!longest)
		return 0;
	max = mixed_whole_chunks(w, longest);
	num_stripes = h->maps[(h->nr - 1) % (h->max_period + 1)]->num_stripes;
	if (!system_failed)
		max = min_t(u64, max, system_room_chunks(room, system_need(st, room, type),
							 num_stripes));
	if (!max)
		return 0;
	ret = btrfs_alloc_take_run(st, h, type, chunk_size, max, &run);
	if (ret <= 0)
		return ret;
	w->chunks += btrfs_chunk_run_count(&run);
	system_room_charge_items(room, btrfs_chunk_run_count(&run), num_stripes);
	ret = mixed_run_steps(w, &run);
	btrfs_chunk_run_free(&run);
	return ret < 0 ? ret : 1;
}

/*
 * One chunk of @type after check_system_chunk(), logged in @h when given;
 * the chunks of @other are no longer the allocator's last ones.  Its
 * usable bytes, 0 at -ENOSPC.
 */
static u64 mixed_one_chunk(struct btrfs_alloc_state *st, struct system_room *room,
			   u64 type, u64 chunk_size, struct btrfs_alloc_history *h,
			   struct btrfs_alloc_history *other, bool *system_failed, int *err)
{
	bool short_room = room->left < system_need(st, room, type);
	u64 logical = st->next_logical, got;
	struct btrfs_chunk_map *map;

	*err = check_system_chunk(st, room, type, NULL);
	if (*err)
		return 0;
	if (st->next_logical != logical) {
		/* a SYSTEM chunk between: the repeats start again */
		if (h)
			btrfs_alloc_history_reset(h);
	} else if (short_room) {
		*system_failed = true;
	}
	if (other)
		btrfs_alloc_history_reset(other);
	if (h)
		map = btrfs_alloc_create_chunk_logged(st, type, chunk_size, h, err);
	else
		map = btrfs_alloc_create_chunk(st, type, chunk_size, err);
	if (!map) {
		if (*err != -ENOMEM)
			*err = 0;
		return 0;
	}
	got = map->length - btrfs_chunk_map_bytes_super(map);
	system_room_charge(room, map);
	free(map);
	return got;
}

/*
 * Data and metadata written together at @w->ratio from @w's free space,
 * each type taking a new chunk when its free space is used up, until one
 * cannot.  One chunk at a time (@runs false), or with the data chunks
 * that are each written whole taken as runs: the same chunks and bytes
 * (tests/unit/test-forecast-runs.c), the metadata chunks one at a time.
 */
static int mixed_alloc(struct btrfs_alloc_state *st, struct system_room *room,
		       u64 dtype, u64 dchunk, u64 mtype, u64 mchunk, bool runs,
		       struct btrfs_mixed_walk *w)
{
	struct btrfs_alloc_history hd, hm;
	bool system_failed = false, ran = false;
	u64 work = 0;
	int ret;

	ret = btrfs_alloc_history_init(st, &hd);
	if (ret)
		return ret;
	ret = btrfs_alloc_history_init(st, &hm);
	if (ret) {
		btrfs_alloc_history_free(&hd);
		return ret;
	}
	mixed_write(w);
	while (!ret) {
		bool data = !w->dfree;
		u64 got;

		/* as fill_runs(): a chunk made alone between two runs */
		if (runs && data && !ran && hd.nr) {
			ret = mixed_data_run(st, &hd, room, system_failed, dtype, dchunk, w);
			if (ret < 0)
				break;
			ran = ret == 1;
			ret = 0;
			if (ran)
				continue;
		}
		ran = false;
		if (runs && work >= FORECAST_MAX_DEVICE_STEPS) {
			w->truncated = true;
			break;
		}
		work += st->nr_devs ? st->nr_devs : 1;
		got = mixed_one_chunk(st, room, data ? dtype : mtype, data ? dchunk : mchunk,
				      runs ? (data ? &hd : &hm) : NULL,
				      runs ? (data ? &hm : &hd) : NULL, &system_failed, &ret);
		if (ret || !got)
			break;
		w->chunks++;
		if (data)
			w->dfree += got;
		else
			w->mfree += got;
		mixed_write(w);
	}
	btrfs_alloc_history_free(&hd);
	btrfs_alloc_history_free(&hm);
	return ret;
}

/*
 * Data written with metadata growing at the current ratio (metadata used
 * over data used): the two fills interleaved, each type taking a new
 * chunk when its free space runs out, until one cannot (only when both are
 * in use: the ratio is then above 0).  An estimate: real
 * metadata growth is not proportional, and the kernel allocates metadata
 * chunks ahead (should_alloc_chunk()).
 */
static int mixed_estimate(const struct space_report *report, struct btrfs_forecast *fc)
{
	const struct space_report_space_info *d = find_space(report, BTRFS_BLOCK_GROUP_DATA);
	const struct space_report_space_info *m = find_space(report, BTRFS_BLOCK_GROUP_METADATA);
	struct btrfs_mixed_walk w = { 0 };
	struct btrfs_alloc_state st;
	struct system_room room;
	u64 rsv = report->global_rsv_size;
	int ret;

	if (!d || !m || !d->info.bytes_used || !m->info.bytes_used || !fc->metadata.present)
		return 0;
	fc->metadata_ratio = (double)m->info.bytes_used / (double)d->info.bytes_used;
	ret = fill_state(report, fc, true, &st);
	if (ret)
		return ret;
	system_room_init(report, &room);
	w.ratio = fc->metadata_ratio;
	w.dfree = fc->data.free_existing;
	w.mfree = fc->metadata.free_existing > rsv ? fc->metadata.free_existing - rsv : 0;
	ret = mixed_alloc(&st, &room, fc->data.type | fc->data.profile, fc->data.chunk_size,
			  fc->metadata.type | fc->metadata.profile, fc->metadata.chunk_size,
			  true, &w);
	fc->mixed_data_bytes = w.data_bytes;
	fc->mixed_metadata_bytes = w.metadata_bytes;
	fc->mixed_truncated = w.truncated;
	fc->mixed_estimate_present = !ret;
	btrfs_alloc_state_free(&st);
	return ret;
}

/* Usable bytes of the chunks made on the way, and raw bytes per device */
static void account_new_chunks(const struct btrfs_reloc_result *res, u64 *usable, u64 *raw)
{
	u32 i, d;
	u16 s;

	*usable = 0;
	for (i = 0; i < res->nr_new_chunks; i++) {
		const struct btrfs_chunk_map *map = res->new_chunks[i];

		*usable += map->length - btrfs_chunk_map_bytes_super(map);
		for (s = 0; raw && s < map->num_stripes; s++)
			for (d = 0; d < res->nr_devs; d++)
				if (res->devids[d] == map->stripes[s].devid)
					raw[d] += map->stripe_size;
	}
}

static u64 data_free_after(const struct btrfs_reloc_result *res)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < res->nr_bgs; i++) {
		const struct btrfs_reloc_bg_after *bg = &res->bgs[i];
		u64 held = bg->used + bg->bytes_super;

		if ((bg->flags & BTRFS_BLOCK_GROUP_DATA) && !bg->ro && held < bg->length)
			sum += bg->length - held;
	}
	return sum;
}

static u64 failed_bytes(const struct space_report *report, const struct btrfs_reloc_result *res)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	u64 sum = 0;
	u32 i, j;

	for (i = 0; i < res->nr_failed; i++) {
		for (j = 0; j < i && res->failed[j] != res->failed[i]; j++)
			;
		if (j < i)
			continue;
		for (j = 0; j < fs_info->nr_block_groups; j++)
			if (fs_info->block_groups[j].start == res->failed[i])
				sum += fs_info->block_groups[j].used;
	}
	return sum;
}

/* The outcome of an aborted transaction: which abort the relocation hit */
static const char *abort_reason(const struct btrfs_reloc_result *res)
{
	return res->abort_reason ? res->abort_reason : RELOC_ABORT_REASON;
}

/*
 * The balance what-if (formulas.md 21.8): relocation replayed by
 * btrfs_reloc_balance() (relocation.c), the report's figures from its
 * account.  @bal is filled whole, its per-device figures in the order of
 * bal->res.devids (by devid, as a forecast's devids); free it with
 * btrfs_free_forecast_balance().
 */
int btrfs_forecast_balance(const struct space_report *report,
			   const struct forecast_options *opts, struct forecast_balance *bal)
{
	struct btrfs_reloc_result *res = &bal->res;
	const char *refused;
	u32 i;
	int ret;

	memset(bal, 0, sizeof(*bal));
	bal->present = true;
	ret = btrfs_reloc_balance(report, opts, res, &refused);
	if (ret)
		return ret;
	bal->may_differ = calloc(res->nr_devs ? res->nr_devs : 1, sizeof(u64));
	if (!bal->may_differ)
		return -ENOMEM;
	bal->can_start = !refused;
	bal->completes = !refused && !res->ret;
	bal->reason = refused ? refused : res->ret == -EROFS ? abort_reason(res) : res->ret ?
		"ENOSPC: some block groups could not be relocated (balance ends with -ENOSPC)" :
		"every selected block group relocated";
	bal->selected = res->selected;
	bal->nr_selected = res->nr_selected;
	bal->moved_bytes = res->moved_bytes;
	bal->unallocated_after = res->unallocated_after;
	bal->nr_new_chunks = res->nr_new_chunks;
	bal->exact = res->exact && res->extents_read;
	account_new_chunks(res, &bal->new_chunk_bytes, bal->exact ? NULL : bal->may_differ);
	for (i = 0; !bal->exact && i < res->nr_devs; i++)
		bal->may_differ[i] += res->uncertain_raw[i];
	bal->unplaced_bytes = failed_bytes(report, res);
	bal->data_free_after = data_free_after(res);
	return 0;
}

void btrfs_free_forecast_balance(struct forecast_balance *bal)
{
	btrfs_free_reloc_result(&bal->res);
	free(bal->may_differ);
	memset(bal, 0, sizeof(*bal));
}

/* The device remove / shrink what-if (formulas.md 21.13) */
int btrfs_forecast_shrink(const struct space_report *report,
			  const struct forecast_options *opts, struct forecast_shrink *sh)
{
	const char *refused;
	int ret;

	memset(sh, 0, sizeof(*sh));
	sh->present = true;
	sh->remove = opts->shrink_remove;
	sh->devid = opts->shrink_devid;
	sh->new_size = opts->shrink_remove ? 0 : opts->shrink_size;
	ret = btrfs_reloc_shrink(report, opts, sh->devid, sh->new_size,
				 sh->remove, &sh->res, &refused);
	if (ret)
		return ret;
	sh->can_start = !refused;
	sh->completes = !refused && !sh->res.ret;
	sh->reason = refused ? refused : sh->res.ret == -EROFS ? abort_reason(&sh->res) :
		sh->res.ret ? "ENOSPC: chunks past the new size could not all be relocated" :
		"every chunk past the new size relocated";
	return 0;
}

/*
 * The discard mode of the mount the fill runs on: --mount-options, else
 * in live mode the mount's own options, else what open_ctree() picks.
 */
static void mount_discard(const struct space_report *report,
			  const struct forecast_options *opts, struct btrfs_forecast *fc)
{
	const struct btrfs_live *live = report->fs_info->live;
	struct btrfs_mount_discard md = opts->mount;

	if (!md.set && live && live->has_super_opts)
		btrfs_mount_discard_from_super_opts(live->super_opts, &md);
	fc->discard = btrfs_discard_at_mount(report->fs_info, &md, fc->kernel_version,
					     &fc->discard_why);
	if (!opts->mount.set && live && live->has_super_opts)
		fc->discard_why = "the mount's options (/proc/self/mountinfo)";
	fc->commit_interval = md.commit_interval;
	fc->cleaner_deletes = fc->discard != BTRFS_DISCARD_ASYNC;
	fc->cleaner_uncommitted = opts->cleaner_uncommitted;
	fc->live = live;
}

/*
 * The kernel's own reclaim for each space info (formulas.md 21.14): the
 * knobs from a what-if option, else in live mode sysfs allocation/TYPE/,
 * else the kernel's defaults (off; 75 % on zoned, not modelled).
 */
static void reclaim_knobs(const struct space_report *report,
			  const struct forecast_options *opts, int i,
			  struct btrfs_forecast *fc, struct btrfs_reclaim_knobs *k)
{
	const struct btrfs_live *live = report->fs_info->live;
	const struct btrfs_live_space_info *s = live ? &live->sysfs[i] : NULL;

	memset(k, 0, sizeof(*k));
	fc->reclaim_source[i] = "kernel defaults";
	if (s && s->present && s->has_reclaim[0]) {
		k->bg_reclaim_threshold = s->reclaim[0];
		k->dynamic_reclaim = s->has_reclaim[1] && s->reclaim[1];
		k->periodic_reclaim = s->has_reclaim[2] && s->reclaim[2];
		fc->reclaim_source[i] = "sysfs";
	}
	if (opts->reclaim_threshold_set[i])
		k->bg_reclaim_threshold = opts->reclaim[i].bg_reclaim_threshold;
	if (opts->dynamic_reclaim_set[i])
		k->dynamic_reclaim = true;
	if (opts->periodic_reclaim_set[i])
		k->periodic_reclaim = true;
	if (opts->reclaim_threshold_set[i] || opts->dynamic_reclaim_set[i] ||
	    opts->periodic_reclaim_set[i])
		fc->reclaim_source[i] = "what-if options";
}

/*
 * free_chunk_space as the cleaner's reclaim finds it: the unused block
 * groups it deletes first (btrfs_delete_unused_bgs() before
 * btrfs_reclaim_bgs()) have given their stripes back (btrfs_remove_chunk())
 */
static u64 reclaim_unallocated(const struct btrfs_fs_info *fs_info,
			       const struct btrfs_reserve_state *st,
			       const struct btrfs_forecast *fc)
{
	u64 bytes = st->free_chunk_space;
	u32 i;

	for (i = 0; i < fc->nr_unused_bgs; i++) {
		const struct btrfs_block_group *bg;

		bg = btrfs_lookup_block_group(fs_info, fc->unused_bgs[i]);
		if (bg && bg->map)
			bytes += bg->map->stripe_size * bg->map->num_stripes;
	}
	return bytes;
}

static int forecast_reclaim(const struct space_report *report,
			    const struct forecast_options *opts, struct btrfs_forecast *fc)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	const struct btrfs_reserve_state *st = &report->reserve.state;
	u64 chunk_size = btrfs_calc_effective_data_chunk_size(st);
	struct btrfs_reclaim_knobs k;
	int i, ret;

	fc->reclaim_modelled = opts->kernel_version >= BTRFS_RECLAIM_THRESHOLD_KERNEL;
	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++) {
		bool later = opts->dynamic_reclaim_set[i] || opts->periodic_reclaim_set[i];

		/* dynamic and periodic reclaim came with 6.11 */
		if ((later && opts->kernel_version < BTRFS_DYNAMIC_RECLAIM_KERNEL) ||
		    (opts->reclaim_threshold_set[i] && !fc->reclaim_modelled))
			return -EINVAL;
	}
	if (!fc->reclaim_modelled)
		return 0;
	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++) {
		if (!fs_info->space_info[i].present)
			continue;
		reclaim_knobs(report, opts, i, fc, &k);
		ret = btrfs_plan_reclaim(fs_info, i, &fs_info->space_info[i],
					 reclaim_unallocated(fs_info, st, fc), chunk_size, &k,
					 &fc->reclaim[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* One block group onto the list */
static void reclaim_list_add(const struct btrfs_fs_info *fs_info, struct forecast_reclaim_after *ra,
			     bool *on_list, const struct btrfs_block_group *bg)
{
	u32 index = bg - fs_info->block_groups;

	/* list_add_tail() of a block group already on the list: list_empty() kept it once */
	if (on_list[index])
		return;
	on_list[index] = true;
	ra->list[ra->nr_list++] = bg->start;
}

struct reclaim_sort_entry {
	u64 used;
	u32 pos;			/* on the list before the sort: keeps it stable */
};

static int cmp_reclaim_entry(const void *a, const void *b)
{
	const struct reclaim_sort_entry *x = a, *y = b;

	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* list_sort() by used: stable, equal ones in the order they were added */
static int reclaim_list_sort(const struct btrfs_fs_info *fs_info,
			     struct forecast_reclaim_after *ra)
{
	struct reclaim_sort_entry *e = calloc(ra->nr_list ? ra->nr_list : 1, sizeof(*e));
	u64 *list = calloc(ra->nr_list ? ra->nr_list : 1, sizeof(u64));
	u32 i;

	if (!e || !list) {
		free(e);
		free(list);
		return -ENOMEM;
	}
	for (i = 0; i < ra->nr_list; i++) {
		const struct btrfs_block_group *bg = btrfs_lookup_block_group(fs_info, ra->list[i]);

		e[i].used = bg ? bg->used : 0;
		e[i].pos = i;
	}
	qsort(e, ra->nr_list, sizeof(*e), cmp_reclaim_entry);
	for (i = 0; i < ra->nr_list; i++)
		list[i] = ra->list[e[i].pos];
	memcpy(ra->list, list, ra->nr_list * sizeof(u64));
	free(e);
	free(list);
	return 0;
}

/*
 * btrfs_reclaim_bgs_work()'s list: the block groups frees marked
 * (--reclaim-marked, in the order given), then each space info's sweep
 * candidates, then list_sort() by used, a stable sort.  A block group is
 * on the list once; all of it is O(n log n) in the block groups.
 */
static int reclaim_list(const struct btrfs_fs_info *fs_info,
			const struct forecast_options *opts, struct btrfs_forecast *fc)
{
	struct forecast_reclaim_after *ra = &fc->reclaim_after;
	u32 n = fs_info->nr_block_groups, i, j;
	bool *on_list;

	ra->list = calloc(n ? n : 1, sizeof(u64));
	ra->skipped = calloc(n ? n : 1, sizeof(u64));
	on_list = calloc(n ? n : 1, sizeof(bool));
	if (!ra->list || !ra->skipped || !on_list) {
		free(on_list);
		return -ENOMEM;
	}
	for (i = 0; i < opts->nr_reclaim_marked; i++) {
		const struct btrfs_block_group *bg;

		bg = btrfs_lookup_block_group(fs_info, opts->reclaim_marked[i]);
		if (!bg || bg->start != opts->reclaim_marked[i]) {
			free(on_list);
			return -ENOENT;
		}
		reclaim_list_add(fs_info, ra, on_list, bg);
	}
	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++)
		for (j = 0; fc->reclaim[i].present && j < fc->reclaim[i].nr_sweep; j++)
			reclaim_list_add(fs_info, ra, on_list,
					 btrfs_lookup_block_group(fs_info,
								  fc->reclaim[i].sweep[j].start));
	free(on_list);
	return reclaim_list_sort(fs_info, ra);
}

/*
 * Where the reclaim's relocations put the bytes: the list through
 * relocation.c, each block group checked again when reached
 */
static int forecast_reclaim_after(const struct space_report *report,
				  const struct forecast_options *opts, struct btrfs_forecast *fc)
{
	struct forecast_reclaim_after *ra = &fc->reclaim_after;
	u64 *tried;
	u32 i;
	int ret;

	ret = reclaim_list(report->fs_info, opts, fc);
	if (ret || !ra->nr_list)
		return ret;
	ra->present = true;
	/* the cleaner deletes the unused block groups before it queues the work */
	ret = btrfs_reloc_reclaim(report, opts, fc->unused_bgs,
				  fc->nr_unused_bgs, ra->list, fc->reclaim, ra->nr_list, &ra->res);
	if (ret)
		return ret;
	/* the ones the replay did not try, by a sorted copy of those it did */
	tried = calloc(ra->res.nr_selected ? ra->res.nr_selected : 1, sizeof(u64));
	if (!tried)
		return -ENOMEM;
	memcpy(tried, ra->res.selected, ra->res.nr_selected * sizeof(u64));
	qsort(tried, ra->res.nr_selected, sizeof(u64), array_cmp_u64);
	for (i = 0; i < ra->nr_list; i++)
		if (!bsearch(&ra->list[i], tried, ra->res.nr_selected, sizeof(u64), array_cmp_u64))
			ra->skipped[ra->nr_skipped++] = ra->list[i];
	free(tried);
	return 0;
}

int btrfs_build_forecast(const struct space_report *report,
			 const struct forecast_options *opts,
			 struct btrfs_forecast *fc)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	bool mixed = btrfs_fs_incompat(fs_info, BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS);
	struct btrfs_alloc_state st;
	u32 i;
	int ret;

	memset(fc, 0, sizeof(*fc));
	fc->kernel_version = opts->kernel_version;
	ret = btrfs_alloc_state_init(fs_info, fc->kernel_version, &st);
	if (ret)
		return ret;
	fc->nr_devs = st.nr_devs;
	fc->devids = calloc(st.nr_devs ? st.nr_devs : 1, sizeof(u64));
	for (i = 0; fc->devids && i < st.nr_devs; i++)
		fc->devids[i] = st.devs[i].devid;
	btrfs_alloc_state_free(&st);
	if (!fc->devids)
		return -ENOMEM;
	mount_discard(report, opts, fc);
	ret = find_unused_bgs(report, fc);
	if (ret)
		return ret;
	if (mixed) {
		setup_fill(report, opts, BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA,
			   "mixed", &fc->data);
	} else {
		setup_fill(report, opts, BTRFS_BLOCK_GROUP_DATA, "data", &fc->data);
		setup_fill(report, opts, BTRFS_BLOCK_GROUP_METADATA, "metadata", &fc->metadata);
	}
	ret = forecast_fill(report, fc, &fc->data, &fc->metadata);
	if (!ret)
		ret = forecast_fill(report, fc, &fc->metadata, &fc->data);
	if (!ret && fc->metadata.present)
		workload_stop(report, opts, &fc->metadata);
	if (!ret)
		ret = mixed_estimate(report, fc);
	if (!ret && (opts->bal_data.set || opts->bal_meta.set))
		ret = btrfs_forecast_balance(report, opts, &fc->balance);
	if (!ret && opts->shrink_set)
		ret = btrfs_forecast_shrink(report, opts, &fc->shrink);
	if (!ret)
		ret = forecast_reclaim(report, opts, fc);
	if (!ret && fc->reclaim_modelled)
		ret = forecast_reclaim_after(report, opts, fc);
	return ret;
}

static void free_fill(struct forecast_fill *fill)
{
	free_fill_chunks(fill);
	free(fill->hard);
	free(fill->soft);
}

void btrfs_free_forecast(struct btrfs_forecast *fc)
{
	int i;

	free_fill(&fc->data);
	free_fill(&fc->metadata);
	free(fc->devids);
	free(fc->unused_bgs);
	for (i = 0; i < BTRFS_NR_SPACE_INFOS; i++)
		btrfs_free_reclaim_plan(&fc->reclaim[i]);
	btrfs_free_forecast_balance(&fc->balance);
	btrfs_free_reloc_result(&fc->shrink.res);
	free(fc->reclaim_after.list);
	free(fc->reclaim_after.skipped);
	btrfs_free_reloc_result(&fc->reclaim_after.res);
	memset(fc, 0, sizeof(*fc));
}

/*
 * A full chunk: the first chunk the allocator makes on this filesystem's
 * writeable devices with nothing allocated on them.
 */
u64 btrfs_forecast_full_chunk(const struct space_report *report, u64 type,
			      u64 chunk_size)
{
	struct btrfs_alloc_state st;
	struct btrfs_chunk_map *map;
	u64 length = 0;
	u32 i;
	int err;

	if (btrfs_alloc_state_init(report->fs_info, report->reserve.kernel_version, &st))
		return 0;
	for (i = 0; i < st.nr_devs; i++) {
		range_tree_free(&st.devs[i].ranges);
		st.devs[i].bytes_used = 0;
	}
	map = btrfs_alloc_create_chunk(&st, type, chunk_size, &err);
	if (map)
		length = map->length;
	free(map);
	btrfs_alloc_state_free(&st);
	return length;
}

/*
 * Chunks of @type (type and profile) alone until -ENOSPC, without the
 * SYSTEM chunks of check_system_chunk(): how many, and their logical bytes.
 */
u64 btrfs_forecast_count_chunks(const struct space_report *report, u64 type,
				u64 chunk_size, u64 *bytes)
{
	struct btrfs_alloc_state st;
	struct fill_total tot = { 0 };

	*bytes = 0;
	if (btrfs_alloc_state_init(report->fs_info, report->reserve.kernel_version, &st))
		return 0;
	if (!fill_runs(&st, NULL, type, chunk_size, NULL, &tot, true))
		*bytes = tot.length;
	else
		tot.chunks = 0;
	btrfs_alloc_state_free(&st);
	return tot.chunks;
}

/*
 * The fill loop on @st alone, for tests: chunks of @type until ENOSPC,
 * each after check_system_chunk() with @system_left bytes of SYSTEM room
 * (@nodesize, SYSTEM chunks of @system_type and @system_chunk_size), as
 * runs or (@runs false) one at a time, into @fill.
 */
int btrfs_forecast_fill_alloc(struct btrfs_alloc_state *st, u32 nodesize, u64 system_left,
			      u64 system_type, u64 system_chunk_size, u64 type,
			      u64 chunk_size, bool runs, struct forecast_fill *fill)
{
	struct system_room room = {
		.left = system_left, .nodesize = nodesize,
		.profile = system_type & BTRFS_BLOCK_GROUP_PROFILE_MASK,
		.chunk_size = system_chunk_size,
	};
	struct fill_total tot;
	int ret;

	ret = fill_runs(st, &room, type, chunk_size, fill, &tot, runs);
	fill->new_chunk_bytes = tot.usable;
	fill->truncated = tot.truncated;
	return ret;
}

/*
 * The data-with-metadata loop on @st alone, for tests: @w holds the ratio
 * and the free space at the start, the SYSTEM room as for
 * btrfs_forecast_fill_alloc(); as runs or (@runs false) one chunk at a time.
 */
int btrfs_forecast_mixed_alloc(struct btrfs_alloc_state *st, u32 nodesize, u64 system_left,
			       u64 system_type, u64 system_chunk_size, u64 dtype,
			       u64 dchunk, u64 mtype, u64 mchunk, bool runs,
			       struct btrfs_mixed_walk *w)
{
	struct system_room room = {
		.left = system_left, .nodesize = nodesize,
		.profile = system_type & BTRFS_BLOCK_GROUP_PROFILE_MASK,
		.chunk_size = system_chunk_size,
	};

	return mixed_alloc(st, &room, dtype, dchunk, mtype, mchunk, runs, w);
}

void btrfs_forecast_fill_free(struct forecast_fill *fill)
{
	free_fill(fill);
}
