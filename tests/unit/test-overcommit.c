// SPDX-License-Identifier: GPL-2.0
/*
 * Metadata over-commit (space-info.c: the kernel's
 * calc_available_free_space(), btrfs_can_overcommit() and the fits test
 * of __reserve_bytes()) as a table, Documentation/formulas.md section 8.2
 * with the versions of section 2:
 *
 *   D     = min(data chunk_size, 10 % of total_rw_bytes, 1 GiB)   (zoned: the zone size)
 *   avail = free_chunk_space / copies; 0 stays 0
 *           6.9+: 0 when avail <= D, else avail - D
 *           >> 3 for FLUSH_ALL, >> 1 for the other modes
 *           zoned (with the 6.9 rule): down to whole zones
 *   room  = avail, or 0 for zoned metadata in 6.0-6.1, and in 6.2-6.5
 *           with an active-zone limit
 *   can_overcommit(bytes) = used + bytes < total + room; never for data
 *           or mixed
 *   largest = max(total - used, total + room - used - 1), data and mixed
 *           only the first
 *
 * used is space_info_used(si, true): one row spreads it over all six
 * counters.  Expected values from a python check written from that text,
 * not by this code: each profile's copies, both flush classes, 6.8
 * against 6.9, a small filesystem's 10 % chunk, unallocated at one data
 * chunk and none, already over-committed, within and past the room, data
 * and mixed, zoned by version, and sizes near the top of u64.
 */
#include "tests/unit/kernel-model.h"
#include "tests/unit/unit-test.h"
#include "kernel-shared/space-info.h"

#define META	BTRFS_BLOCK_GROUP_METADATA
#define DATA	BTRFS_BLOCK_GROUP_DATA
#define MIXED	(BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA)
#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)

struct overcommit_row {
	const char *what;
	const char *kernel;
	u64 flags;
	u64 total_bytes;
	u64 used;
	u64 free_chunk_space;
	u32 copies;
	bool flush_all;
	u64 total_rw_bytes;
	bool zoned;
	u32 max_active_zones;
	u64 data_chunk_size;
	/* worked from the text */
	u64 avail;
	u64 largest;
	bool over;		/* largest comes from over-commit */
};

static const struct overcommit_row rows[] = {
	{ "DUP, 6.18, FLUSH_ALL", "6.18", META,
	  1 * GiB, 512 * MiB, 9 * GiB, 2, true,
	  100 * GiB, false, 0, 10 * GiB,
	  448 * MiB, 1006632959ULL, true },
	{ "DUP, 6.18, other", "6.18", META,
	  1 * GiB, 512 * MiB, 9 * GiB, 2, false,
	  100 * GiB, false, 0, 10 * GiB,
	  1792 * MiB, 2415919103ULL, true },
	{ "DUP, 6.8: no data chunk kept", "6.8", META,
	  1 * GiB, 512 * MiB, 9 * GiB, 2, true,
	  100 * GiB, false, 0, 10 * GiB,
	  576 * MiB, 1140850687ULL, true },
	{ "single, 6.18", "6.18", META,
	  1 * GiB, 512 * MiB, 9 * GiB, 1, true,
	  100 * GiB, false, 0, 10 * GiB,
	  1 * GiB, 1610612735ULL, true },
	{ "RAID1C3, 6.18", "6.18", META,
	  1 * GiB, 512 * MiB, 9 * GiB, 3, true,
	  100 * GiB, false, 0, 10 * GiB,
	  256 * MiB, 805306367ULL, true },
	{ "RAID1C4, 6.18, other", "6.18", META,
	  1 * GiB, 512 * MiB, 9 * GiB, 4, false,
	  100 * GiB, false, 0, 10 * GiB,
	  640 * MiB, 1207959551ULL, true },
	{ "small fs: a tenth of 5 GiB kept", "6.18", META,
	  256 * MiB, 128 * MiB, 3 * GiB, 2, false,
	  5 * GiB, false, 0, 10 * GiB,
	  512 * MiB, 671088639ULL, true },
	{ "unallocated at one data chunk", "6.18", META,
	  1 * GiB, 512 * MiB, 2 * GiB, 2, false,
	  100 * GiB, false, 0, 10 * GiB,
	  0ULL, 512 * MiB, false },
	{ "nothing unallocated", "6.18", META,
	  1 * GiB, 512 * MiB, 0ULL, 2, false,
	  100 * GiB, false, 0, 10 * GiB,
	  0ULL, 512 * MiB, false },
	{ "over-committed already", "6.18", META,
	  1 * GiB, 1124 * MiB, 9 * GiB, 2, true,
	  100 * GiB, false, 0, 10 * GiB,
	  448 * MiB, 364904447ULL, true },
	{ "over-committed past the room", "6.18", META,
	  1 * GiB, 2 * GiB, 9 * GiB, 2, true,
	  100 * GiB, false, 0, 10 * GiB,
	  448 * MiB, 0ULL, false },
	{ "data: no over-commit", "6.18", DATA,
	  1 * GiB, 512 * MiB, 9 * GiB, 1, true,
	  100 * GiB, false, 0, 10 * GiB,
	  1 * GiB, 512 * MiB, false },
	{ "mixed: no over-commit", "6.18", MIXED,
	  1 * GiB, 512 * MiB, 9 * GiB, 1, true,
	  100 * GiB, false, 0, 10 * GiB,
	  1 * GiB, 512 * MiB, false },
	{ "data, full", "6.18", DATA,
	  1 * GiB, 1 * GiB, 9 * GiB, 1, true,
	  100 * GiB, false, 0, 10 * GiB,
	  1 * GiB, 0ULL, false },
	{ "zoned 6.1: none", "6.1", META,
	  1 * GiB, 512 * MiB, 9 * GiB, 1, true,
	  100 * GiB, true, 0, 10 * GiB,
	  1152 * MiB, 512 * MiB, false },
	{ "zoned 6.4, active-zone limit: none", "6.4", META,
	  1 * GiB, 512 * MiB, 9 * GiB, 1, true,
	  100 * GiB, true, 14, 10 * GiB,
	  1152 * MiB, 512 * MiB, false },
	{ "zoned 6.4, no limit", "6.4", META,
	  1 * GiB, 512 * MiB, 9 * GiB, 1, true,
	  100 * GiB, true, 0, 10 * GiB,
	  1152 * MiB, 1744830463ULL, true },
	{ "zoned 6.18, limit: zones rounded", "6.18", META,
	  1 * GiB, 512 * MiB, 9 * GiB, 1, true,
	  100 * GiB, true, 14, 256 * MiB,
	  1 * GiB, 1610612735ULL, true },
	{ "near the top of u64", "6.18", META,
	  8589934592 * GiB, 4294967296 * GiB, 4294967296 * GiB, 1, false,
	  100 * GiB, false, 0, 10 * GiB,
	  2305843008676823040ULL, 6917529027104210943ULL, true },
};

/* A row's used bytes as bytes_used alone, or spread over the six counters */
static void set_used(struct btrfs_reserve_state *st, u64 used, bool spread)
{
	if (!spread) {
		st->bytes_used = used;
		return;
	}
	st->bytes_used = used / 2;
	st->bytes_reserved = used / 8;
	st->bytes_pinned = used / 8;
	st->bytes_readonly = used / 16;
	st->bytes_zone_unusable = used / 16;
	st->bytes_may_use = used / 8;
}

static void check_row(const struct overcommit_row *r, bool spread)
{
	struct btrfs_kernel_model m = unit_kernel_model(r->kernel);
	enum btrfs_reserve_flush_enum flush = r->flush_all ? BTRFS_RESERVE_FLUSH_ALL :
							     BTRFS_RESERVE_NO_FLUSH;
	struct btrfs_reserve_state st = {
		.flags = r->flags, .total_bytes = r->total_bytes,
		.free_chunk_space = r->free_chunk_space, .profile_copies = r->copies,
		.total_rw_bytes = r->total_rw_bytes, .data_chunk_size = r->data_chunk_size,
		.zoned = r->zoned, .zone_size = r->zoned ? BTRFS_DEFAULT_ZONE_SIZE : 0,
		.max_active_zones = r->max_active_zones,
	};

	set_used(&st, r->used, spread);
	check_u64(r->what, btrfs_calc_available_free_space(&st, flush, &m), r->avail);
	check_u64(r->what, btrfs_largest_reservation(&st, flush, &m), r->largest);
	check(btrfs_can_overcommit(&st, r->largest, flush, &m) == r->over,
	      "%s: over-commits the largest: %s", r->what, r->over ? "yes" : "no");
	check(!btrfs_can_overcommit(&st, r->largest + 1, flush, &m),
	      "%s: not a byte more", r->what);
}

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i], false);
	/* the first row again, its 512 MiB spread over the six counters */
	check_row(&rows[0], true);
	return unit_failures ? 1 : 0;
}
