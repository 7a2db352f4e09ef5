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
#include "kernel-shared/live.h"
#include "kernel-shared/volumes.h"

/* a bound on chunks per fill: 10^5 chunks are 10^5 dev extents on a device */
#define FORECAST_MAX_CHUNKS	100000
/*
 * and on the work: each chunk looks at every device, so a crafted chunk
 * tree with 10^5 devices gets fewer chunks (the fill says it stopped)
 */
#define FORECAST_MAX_DEVICE_STEPS	(50ULL * 1000 * 1000)

static u32 max_chunks(const struct btrfs_alloc_state *st)
{
	u64 by_work = FORECAST_MAX_DEVICE_STEPS / (st->nr_devs ? st->nr_devs : 1);

	return by_work < FORECAST_MAX_CHUNKS ? (u32)by_work : FORECAST_MAX_CHUNKS;
}
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
 * btrfs_delete_unused_bgs(): a block group with nothing used, not
 * read-only, is deleted unless it is the only one left on its space
 * info's list of its profile (list_is_singular(), which keeps the
 * profile known; a deletion shortens the list) or the space info without
 * it could not hold what is used and reserved there (total_bytes -
 * length < btrfs_space_info_used(sinfo, true)).  Block groups are taken
 * in the order the mount marked them: by start.  Under discard=async
 * read_one_block_group() marks none (discard.c): they are counted as
 * empty and kept.  One pass, the list lengths counted first.
 */
static int find_unused_bgs(const struct space_report *report, struct btrfs_forecast *fc)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	u64 total[BTRFS_NR_SPACE_INFOS] = { 0 };
	u32 on_list[FORECAST_NR_LISTS] = { 0 };
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
		u32 *list = &on_list[list_index(bg->flags)];

		if (bg->used || bg->ro)
			continue;
		fc->nr_empty_bgs++;
		/* live: the mount has already decided (it is past) */
		if (report->live || !fc->cleaner_deletes || *list < 2)
			continue;
		for (s = 0; s < report->nr_space_infos; s++) {
			const struct btrfs_space_info *si = &report->space_infos[s].info;

			if ((si->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) !=
			    (bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK))
				continue;
			if (total[s] < bg->length || total[s] - bg->length < space_held(si))
				break;
			total[s] -= bg->length;
			(*list)--;
			fc->unused_bgs[fc->nr_unused_bgs++] = bg->start;
			break;
		}
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* unused_bgs is in block-group order, which is by start */
static bool is_unused(const struct btrfs_forecast *fc, u64 start)
{
	return fc->nr_unused_bgs &&
	       bsearch(&start, fc->unused_bgs, fc->nr_unused_bgs, sizeof(u64), cmp_u64);
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

/* What the chunk tree, in the SYSTEM space, has room for while chunks are made */
struct system_room {
	u64 left;		/* total - used, readonly, reserved, may_use */
	u64 profile;
	u64 chunk_size;
	u64 item_bytes;		/* chunk items added to the chunk tree */
	u64 leaves_charged;
	u32 nodesize;
};

static void system_room_init(const struct space_report *report, struct system_room *room)
{
	const struct space_report_space_info *sys = find_space(report, BTRFS_BLOCK_GROUP_SYSTEM);
	const struct btrfs_fs_info *fs_info = report->fs_info;

	memset(room, 0, sizeof(*room));
	room->nodesize = fs_info->nodesize;
	room->profile = btrfs_get_alloc_profile(fs_info, BTRFS_BLOCK_GROUP_SYSTEM);
	room->chunk_size = sys ? sys->info.chunk_size : 32ULL << 20;
	if (sys && sys->info.total_bytes > space_held(&sys->info))
		room->left = sys->info.total_bytes - space_held(&sys->info);
}

/*
 * The chunk tree grows by one chunk item (25-byte item header, 48-byte
 * chunk, 32 bytes per stripe) per chunk; a new leaf is charged to the
 * SYSTEM space each time the added items fill one.  An estimate: the
 * kernel's leaves split at other points, and COW copies are freed at commit.
 */
static void system_room_charge(struct system_room *room, const struct btrfs_chunk_map *map)
{
	u64 capacity = room->nodesize - sizeof(struct btrfs_header);
	u64 leaves;

	room->item_bytes += sizeof(struct btrfs_item) + sizeof(struct btrfs_chunk) +
			    (u64)(map->num_stripes - 1) * sizeof(struct btrfs_stripe);
	leaves = (room->item_bytes + capacity - 1) / capacity;
	while (room->leaves_charged < leaves) {
		room->left -= min_t(u64, room->left, room->nodesize);
		room->leaves_charged++;
	}
}

static int add_chunk(struct forecast_fill *fill, struct btrfs_chunk_map *map)
{
	struct btrfs_chunk_map **chunks;

	chunks = realloc(fill->chunks, (fill->nr_chunks + 1) * sizeof(*chunks));
	if (!chunks) {
		free(map);
		return -ENOMEM;
	}
	fill->chunks = chunks;
	fill->chunks[fill->nr_chunks++] = map;
	return 0;
}

/*
 * check_system_chunk(): before a chunk of @type, room for updating
 * num_devs device items and inserting one chunk item,
 * calc_metadata_size(num_devs) + calc_insert_metadata_size(1); a SYSTEM
 * chunk is made when the SYSTEM space has less (a failure is ignored).
 */
static int check_system_chunk(struct btrfs_alloc_state *st, struct system_room *room,
			      u64 type, struct forecast_fill *fill)
{
	u64 num_devs = btrfs_raid_devs_max(type);
	struct btrfs_chunk_map *map;
	u64 bytes;
	int err;

	if (!num_devs)
		num_devs = st->rw_devices;
	bytes = (u64)room->nodesize * FORECAST_MAX_LEVEL * num_devs +
		(u64)room->nodesize * FORECAST_MAX_LEVEL * 2;
	if (room->left >= bytes)
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

/*
 * Chunks of @type (type and profile) until -ENOSPC.  Returns the usable bytes they
 * add (length - bytes_super of each), or a negative errno in *err.  With
 * @fill NULL the chunks are made and dropped; at most @max chunks.
 */
static u64 allocate_chunks(struct btrfs_alloc_state *st, struct system_room *room,
			   u64 type, u64 chunk_size, struct forecast_fill *fill,
			   u32 max, int *err)
{
	u64 bytes = 0;
	u32 n;

	*err = 0;
	for (n = 0; n < max; n++) {
		struct btrfs_chunk_map *map;
		int ret;

		*err = check_system_chunk(st, room, type, fill);
		if (*err)
			return bytes;
		map = btrfs_alloc_create_chunk(st, type, chunk_size, &ret);
		if (!map) {
			if (ret == -ENOMEM)
				*err = ret;
			return bytes;
		}
		bytes += map->length - btrfs_chunk_map_bytes_super(map);
		system_room_charge(room, map);
		if (!fill) {
			free(map);
			continue;
		}
		*err = add_chunk(fill, map);
		if (*err)
			return bytes;
	}
	return bytes;
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
/* Each device of @map's stripes has its stripe more (@add) or less bytes_used */
static void charge_stripes(struct btrfs_alloc_state *st, const struct btrfs_chunk_map *map,
			   bool add)
{
	u16 s;
	u32 d;

	for (s = 0; s < map->num_stripes; s++)
		for (d = 0; d < st->nr_devs; d++)
			if (st->devs[d].devid == map->stripes[s].devid)
				st->devs[d].bytes_used = add ?
					st->devs[d].bytes_used + map->stripe_size :
					st->devs[d].bytes_used - min_t(u64, st->devs[d].bytes_used,
								       map->stripe_size);
}

/*
 * The cleaner's deletions before their transaction commits:
 * btrfs_remove_chunk() has lowered each device's bytes_used and taken
 * the chunk maps out (find_next_chunk() sees them gone), but
 * find_free_dev_extent() searches the dev tree's commit root, where the
 * dev extents still are: their ranges stay allocated.
 */
static void cleaner_pending(const struct btrfs_fs_info *fs_info, const struct btrfs_forecast *fc,
			    struct btrfs_alloc_state *st)
{
	u32 i;

	for (i = 0; i < fs_info->nr_block_groups; i++)
		if (is_unused(fc, fs_info->block_groups[i].start))
			charge_stripes(st, fs_info->block_groups[i].map, false);
	next_chunk_after_cleaner(fs_info, fc, st);
}

/* The commit the fill's ENOSPC flushing makes (COMMIT_TRANS): the ranges free */
static void cleaner_commit(const struct btrfs_fs_info *fs_info, const struct btrfs_forecast *fc,
			   struct btrfs_alloc_state *st)
{
	u32 i;

	for (i = 0; i < fs_info->nr_block_groups; i++) {
		const struct btrfs_chunk_map *map = fs_info->block_groups[i].map;

		if (!is_unused(fc, fs_info->block_groups[i].start))
			continue;
		/* btrfs_alloc_remove_chunk() lowers bytes_used again: already done */
		btrfs_alloc_remove_chunk(st, map);
		charge_stripes(st, map, true);
	}
}

static int run_fill(const struct space_report *report, const struct btrfs_forecast *fc,
		    struct forecast_fill *fill, const struct forecast_fill *other,
		    bool cleaner)
{
	bool pending = cleaner && fc->cleaner_uncommitted && fc->nr_unused_bgs;
	struct btrfs_alloc_state st;
	struct system_room room;
	u64 *left = NULL;
	u64 added;
	u32 i;
	int ret;

	ret = fill_state(report, fc, cleaner && !pending, &st);
	if (ret)
		return ret;
	if (pending)
		cleaner_pending(report->fs_info, fc, &st);
	system_room_init(report, &room);
	fill->free_existing = free_of_type(report, fc, fill->type, cleaner);
	added = allocate_chunks(&st, &room, fill->type | fill->profile,
				fill->chunk_size, fill, max_chunks(&st), &ret);
	if (ret)
		goto out;
	/* at ENOSPC the data and metadata flushing commits, then goes on */
	if (pending && fill->nr_chunks < max_chunks(&st)) {
		cleaner_commit(report->fs_info, fc, &st);
		added += allocate_chunks(&st, &room, fill->type | fill->profile, fill->chunk_size,
					 fill, max_chunks(&st) - fill->nr_chunks, &ret);
		if (ret)
			goto out;
	}
	fill->truncated = fill->nr_chunks >= max_chunks(&st);
	fill->new_chunk_bytes = added;
	left = calloc(st.nr_devs ? st.nr_devs : 1, sizeof(*left));
	ret = -ENOMEM;
	if (!left)
		goto out;
	unallocated_now(&st, left);
	unallocated_now(&st, fill->hard);
	memset(fill->soft, 0, st.nr_devs * sizeof(*fill->soft));
	if (other && other->present) {
		allocate_chunks(&st, &room, other->type | other->profile,
				other->chunk_size, NULL, max_chunks(&st), &ret);
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

	for (i = 0; i < fill->nr_chunks; i++)
		free(fill->chunks[i]);
	free(fill->chunks);
	fill->chunks = NULL;
	fill->nr_chunks = 0;
}

static u64 writable_of(const struct forecast_fill *fill, u64 global_rsv)
{
	u64 all = fill->free_existing + fill->new_chunk_bytes;

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
 * FLUSH_ALL: btrfs_calc_insert_metadata_size(n) plus (6.7+)
 * btrfs_calc_delayed_ref_bytes(n), doubled with the free space tree;
 * before 6.7 insert(n) doubled (the delayed refs reserve not full).
 * With no unallocated space left there is no over-commit: it fits while
 * used + may_use (the global reserve held in full) + it <= total, so the
 * fill ends less than one reservation short of writable_bytes.
 */
static void workload_stop(const struct space_report *report, const struct forecast_options *opts,
			  struct forecast_fill *fill)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	struct btrfs_kernel_model model;
	bool fst = btrfs_fs_compat_ro(fs_info, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE);
	u32 n = workloads[opts->workload].items;
	u64 insert = btrfs_calc_insert_metadata_size(fs_info->nodesize, n);

	btrfs_kernel_model(opts->kernel_version, &model);
	fill->workload = workloads[opts->workload].name;
	fill->workload_items = n;
	if (model.trans_delayed_ref_bytes)
		fill->last_reservation = insert +
			btrfs_calc_delayed_ref_bytes(fs_info->nodesize, fst, n);
	else
		fill->last_reservation = 2 * insert;
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
	struct btrfs_alloc_state st;
	struct system_room room;
	u64 dfree, mfree, rsv = report->global_rsv_size;
	u32 n;
	int ret;

	if (!d || !m || !d->info.bytes_used || !m->info.bytes_used || !fc->metadata.present)
		return 0;
	fc->metadata_ratio = (double)m->info.bytes_used / (double)d->info.bytes_used;
	ret = fill_state(report, fc, true, &st);
	if (ret)
		return ret;
	system_room_init(report, &room);
	dfree = fc->data.free_existing;
	mfree = fc->metadata.free_existing > rsv ? fc->metadata.free_existing - rsv : 0;
	for (n = 0; n < 2 * max_chunks(&st); n++) {
		double by_meta = (double)mfree / fc->metadata_ratio;
		u64 x = by_meta < (double)dfree ? (u64)by_meta : dfree;
		u64 mx = (u64)((double)x * fc->metadata_ratio);
		const struct forecast_fill *need;
		u64 got;

		fc->mixed_data_bytes += x;
		fc->mixed_metadata_bytes += mx;
		dfree -= x;
		mfree -= min_t(u64, mfree, mx);
		need = dfree ? &fc->metadata : &fc->data;
		got = allocate_chunks(&st, &room, need->type | need->profile,
				      need->chunk_size, NULL, 1, &ret);
		if (ret || !got)
			break;
		if (need == &fc->data)
			dfree += got;
		else
			mfree += got;
	}
	fc->mixed_estimate_present = !ret;
	btrfs_alloc_state_free(&st);
	return ret;
}

/*
 * The balance what-if.  should_balance_chunk() of fs/btrfs/volumes.c
 * (6.18) for the filters modelled: the chunk type picks the arguments
 * (DATA, also mixed; SYSTEM takes the metadata ones, as btrfs-progs
 * copies -m to -s), then chunk_usage_filter() / chunk_usage_range_filter()
 * with mult_perc(length, N) = length * N / 100 rounded down, then
 * chunk_soft_convert_filter(), then limit last.  __btrfs_balance() walks
 * the chunk tree from the highest logical down.
 */
static bool usage_selects(const struct btrfs_block_group *bg, u64 used,
			  const struct forecast_balance_args *a)
{
	u64 lo, hi;

	if (a->flags & FORECAST_BAL_USAGE) {
		/* usage_min aliases the low half of usage in the kernel's union */
		if ((u32)a->usage == 0)
			hi = 1;
		else if (a->usage > 100)
			hi = bg->length;
		else
			hi = bg->length * a->usage / 100;
		if (used >= hi)
			return false;
	}
	if (a->flags & FORECAST_BAL_USAGE_RANGE) {
		lo = a->usage_min ? bg->length * a->usage_min / 100 : 0;
		if (a->usage_max == 0)
			hi = 1;
		else if (a->usage_max > 100)
			hi = bg->length;
		else
			hi = bg->length * a->usage_max / 100;
		if (used < lo || used >= hi)
			return false;
	}
	return true;
}

static const struct forecast_balance_args *balance_args(const struct forecast_options *opts,
							u64 flags, struct forecast_balance_args *left)
{
	if (flags & BTRFS_BLOCK_GROUP_DATA) {
		/* a mixed chunk is balanced by -d or -m, with the data arguments */
		if (!opts->bal_data.set && !((flags & BTRFS_BLOCK_GROUP_METADATA) &&
					     opts->bal_meta.set))
			return NULL;
		return &left[0];
	}
	return opts->bal_meta.set ? &left[1] : NULL;
}

static bool should_balance(const struct btrfs_block_group *bg, u64 used,
			   struct forecast_balance_args *a)
{
	if (!usage_selects(bg, used, a))
		return false;
	if ((a->flags & FORECAST_BAL_CONVERT) && (a->flags & FORECAST_BAL_SOFT) &&
	    btrfs_bg_flags_to_raid_index(bg->flags) == btrfs_bg_flags_to_raid_index(a->target))
		return false;
	if (a->flags & FORECAST_BAL_LIMIT) {
		if (a->limit == 0)
			return false;
		a->limit--;
	}
	return true;
}

/* Where a selected block group's bytes go: its type, in the target profile */
static u64 balance_target(const struct btrfs_block_group *bg,
			  const struct forecast_balance_args *a)
{
	u64 profile = bg->flags & BTRFS_BLOCK_GROUP_PROFILE_MASK;

	if (a->flags & FORECAST_BAL_CONVERT)
		profile = a->target;
	return (bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) | profile;
}

static bool same_target(u64 flags, u64 target)
{
	return (flags & BTRFS_BLOCK_GROUP_TYPE_MASK) == (target & BTRFS_BLOCK_GROUP_TYPE_MASK) &&
	       btrfs_bg_flags_to_raid_index(flags) == btrfs_bg_flags_to_raid_index(target);
}

struct balance_group {
	u64 target;
	u64 moved;
	u64 overflow;		/* what the kept block groups could not take */
	u32 cursor;		/* below it: full, relocated or of another target */
};

#define FORECAST_MAX_TARGETS	64

static u32 find_group(struct balance_group *groups, u32 *nr_groups, u64 target)
{
	u32 g;

	for (g = 0; g < *nr_groups; g++)
		if (groups[g].target == target)
			return g;
	if (g >= FORECAST_MAX_TARGETS)
		return g;
	memset(&groups[g], 0, sizeof(groups[g]));
	groups[g].target = target;
	(*nr_groups)++;
	return g;
}

/*
 * A relocated block group's bytes go to the writable block groups of the
 * target, lowest logical first, raising their used before the walk
 * reaches them: what the filters see is the used of that moment.
 */
static u64 place_moved(const struct btrfs_fs_info *fs_info, const bool *picked, u64 *used,
		       struct balance_group *group, u64 bytes)
{
	/* a block group passed stays passed: the walk is linear per target */
	for (; group->cursor < fs_info->nr_block_groups && bytes; group->cursor++) {
		u32 j = group->cursor;
		const struct btrfs_block_group *bg = &fs_info->block_groups[j];
		u64 held = used[j] + bg->bytes_super, take;

		if (picked[j] || bg->ro || held >= bg->length ||
		    !same_target(bg->flags, group->target))
			continue;
		take = min_t(u64, bytes, bg->length - held);
		used[j] += take;
		bytes -= take;
		if (used[j] + bg->bytes_super < bg->length)
			break;
	}
	return bytes;
}

static int select_chunks(const struct space_report *report, const struct forecast_options *opts,
			 struct forecast_balance *bal, bool *picked,
			 struct balance_group *groups, u32 *nr_groups)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	struct forecast_balance_args left[2] = { opts->bal_data, opts->bal_meta };
	u32 i, g, n = fs_info->nr_block_groups;
	u64 *used;

	bal->selected = calloc(n ? n : 1, sizeof(u64));
	used = calloc(n ? n : 1, sizeof(u64));
	if (!bal->selected || !used) {
		free(used);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		used[i] = fs_info->block_groups[i].used;
	/* block groups are held by start: walk them from the last */
	for (i = n; i-- > 0;) {
		const struct btrfs_block_group *bg = &fs_info->block_groups[i];
		struct forecast_balance_args *a;
		u64 target;

		a = (struct forecast_balance_args *)balance_args(opts, bg->flags, left);
		if (!a || !should_balance(bg, used[i], a))
			continue;
		picked[i] = true;
		bal->selected[bal->nr_selected++] = bg->start;
		bal->moved_bytes += used[i];
		target = balance_target(bg, a);
		g = find_group(groups, nr_groups, target);
		if (g >= FORECAST_MAX_TARGETS) {
			free(used);
			return -EINVAL;
		}
		groups[g].moved += used[i];
		groups[g].overflow += place_moved(fs_info, picked, used, &groups[g], used[i]);
	}
	free(used);
	return 0;
}

static u64 target_chunk_size(const struct space_report *report, u64 target)
{
	const struct space_report_space_info *si;

	si = find_space(report, target & BTRFS_BLOCK_GROUP_TYPE_MASK);
	if (si && si->info.chunk_size)
		return si->info.chunk_size;
	return target & BTRFS_BLOCK_GROUP_SYSTEM ? 32ULL << 20 : 256ULL << 20;
}

/* Relocation starts when a chunk of each target profile can be made now */
static int balance_can_start(const struct space_report *report, const struct btrfs_forecast *fc,
			     const struct balance_group *groups, u32 nr_groups, bool *ok)
{
	u32 g;
	int ret;

	*ok = true;
	for (g = 0; g < nr_groups && *ok; g++) {
		struct btrfs_alloc_state st;
		struct btrfs_chunk_map *map;

		ret = fill_state(report, fc, false, &st);
		if (ret)
			return ret;
		map = btrfs_alloc_create_chunk(&st, groups[g].target,
					       target_chunk_size(report, groups[g].target), &ret);
		btrfs_alloc_state_free(&st);
		if (!map && ret == -ENOMEM)
			return ret;
		*ok = map != NULL;
		free(map);
	}
	return 0;
}

static void charge_new_chunks(const struct btrfs_alloc_state *st, const u64 *before, u64 *diff)
{
	u32 i;

	for (i = 0; i < st->nr_devs; i++)
		diff[i] += st->devs[i].bytes_used - before[i];
}

/*
 * The selected chunks' dev extents freed; each target's moved bytes go
 * first into the free space of the block groups left of that type and
 * profile, the rest into new chunks made by the allocator (with
 * check_system_chunk() before each).
 */
static int balance_after(const struct space_report *report, const struct btrfs_forecast *fc,
			 struct forecast_balance *bal, const bool *picked,
			 const struct balance_group *groups, u32 nr_groups)
{
	const struct btrfs_fs_info *fs_info = report->fs_info;
	struct btrfs_alloc_state st;
	struct system_room room;
	u64 *before;
	u32 i, g;
	int ret;

	ret = fill_state(report, fc, false, &st);
	if (ret)
		return ret;
	before = calloc(st.nr_devs ? st.nr_devs : 1, sizeof(u64));
	if (!before) {
		btrfs_alloc_state_free(&st);
		return -ENOMEM;
	}
	for (i = 0; i < fs_info->nr_block_groups; i++)
		if (picked[i])
			btrfs_alloc_remove_chunk(&st, fs_info->block_groups[i].map);
	system_room_init(report, &room);
	bal->exact = true;
	for (g = 0; g < nr_groups && !ret; g++) {
		u64 need = groups[g].overflow;

		if (!need)
			continue;
		bal->exact = false;
		for (i = 0; i < st.nr_devs; i++)
			before[i] = st.devs[i].bytes_used;
		while (need && !ret) {
			u64 got = allocate_chunks(&st, &room, groups[g].target,
						  target_chunk_size(report, groups[g].target),
						  NULL, 1, &ret);

			if (!got)
				break;
			bal->nr_new_chunks++;
			bal->new_chunk_bytes += got;
			need -= min_t(u64, need, got);
		}
		bal->unplaced_bytes += need;
		charge_new_chunks(&st, before, bal->may_differ);
	}
	if (!ret)
		unallocated_now(&st, bal->unallocated_after);
	free(before);
	btrfs_alloc_state_free(&st);
	return ret;
}

static int balance_whatif(const struct space_report *report, const struct forecast_options *opts,
			  struct btrfs_forecast *fc)
{
	struct forecast_balance *bal = &fc->balance;
	struct balance_group groups[FORECAST_MAX_TARGETS];
	u32 nr_groups = 0, n = report->fs_info->nr_block_groups;
	bool *picked;
	int ret;

	if (!opts->bal_data.set && !opts->bal_meta.set)
		return 0;
	bal->present = true;
	picked = calloc(n ? n : 1, sizeof(bool));
	bal->unallocated_after = calloc(fc->nr_devs ? fc->nr_devs : 1, sizeof(u64));
	bal->may_differ = calloc(fc->nr_devs ? fc->nr_devs : 1, sizeof(u64));
	ret = -ENOMEM;
	if (!picked || !bal->unallocated_after || !bal->may_differ)
		goto out;
	ret = select_chunks(report, opts, bal, picked, groups, &nr_groups);
	if (!ret)
		ret = balance_can_start(report, fc, groups, nr_groups, &bal->can_start);
	if (!ret)
		ret = balance_after(report, fc, bal, picked, groups, nr_groups);
out:
	free(picked);
	return ret;
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
	if (!ret)
		ret = balance_whatif(report, opts, fc);
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
	free_fill(&fc->data);
	free_fill(&fc->metadata);
	free(fc->devids);
	free(fc->unused_bgs);
	free(fc->balance.selected);
	free(fc->balance.unallocated_after);
	free(fc->balance.may_differ);
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
		st.devs[i].nr_ranges = 0;
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
	u64 count = 0;
	int err;

	*bytes = 0;
	if (btrfs_alloc_state_init(report->fs_info, report->reserve.kernel_version, &st))
		return 0;
	while (count < max_chunks(&st)) {
		struct btrfs_chunk_map *map = btrfs_alloc_create_chunk(&st, type, chunk_size, &err);

		if (!map)
			break;
		count++;
		*bytes += map->length;
		free(map);
	}
	btrfs_alloc_state_free(&st);
	return count;
}
