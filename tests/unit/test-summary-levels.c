// SPDX-License-Identifier: GPL-2.0
/*
 * summary.c: the levels of the first screen (Documentation/formulas.md
 * 19.2), a table worked by hand from the rule:
 *
 *   W = max(capacity, size_share)
 *   critical  headroom < min(C, max(2 R, W / 10))
 *   tight     headroom < min(2 C, max(4 R, W / 5))
 *   ok        otherwise
 *
 * with C one full chunk of the type and R one transaction's reservation
 * (metadata only).  The rows sit on each side of each bound, so a rule
 * that moved a bound by a byte, swapped min and max or took the capacity
 * where the size share should win fails a row.
 */
#include "tests/unit/unit-test.h"
#include "kernel-shared/summary.h"

#define MiB	(1ULL << 20)
#define GiB	(1ULL << 30)

struct level_row {
	const char *what;
	u64 headroom;
	u64 chunk_size;
	u64 capacity;
	u64 size_share;
	u64 reservation;
	u64 critical_bound;	/* worked by hand */
	u64 tight_bound;
	enum summary_level level;
};

static const struct level_row rows[] = {
	/* data of a 100 GiB filesystem: the chunk is the smaller bound */
	{ "data 100G, 0.5G left", GiB / 2, GiB, 100 * GiB, 10 * GiB, 0,
	  GiB, 2 * GiB, SUMMARY_CRITICAL },
	{ "data 100G, a byte under one chunk", GiB - 1, GiB, 100 * GiB, 10 * GiB, 0,
	  GiB, 2 * GiB, SUMMARY_CRITICAL },
	{ "data 100G, one chunk left", GiB, GiB, 100 * GiB, 10 * GiB, 0,
	  GiB, 2 * GiB, SUMMARY_TIGHT },
	{ "data 100G, a byte under two chunks", 2 * GiB - 1, GiB, 100 * GiB, 10 * GiB, 0,
	  GiB, 2 * GiB, SUMMARY_TIGHT },
	{ "data 100G, two chunks left", 2 * GiB, GiB, 100 * GiB, 10 * GiB, 0,
	  GiB, 2 * GiB, SUMMARY_OK },
	/* data of a 1 GiB filesystem: the shares are the smaller bound */
	{ "data 1G, 100M left", 100 * MiB, GiB, GiB, 100 * MiB, 0,
	  GiB / 10, GiB / 5, SUMMARY_CRITICAL },
	{ "data 1G, a tenth left", GiB / 10, GiB, GiB, 100 * MiB, 0,
	  GiB / 10, GiB / 5, SUMMARY_TIGHT },
	{ "data 1G, a fifth left", GiB / 5, GiB, GiB, 100 * MiB, 0,
	  GiB / 10, GiB / 5, SUMMARY_OK },
	/* metadata with a small capacity: two reservations are the floor */
	{ "metadata 20M, 5M left, R 3M", 5 * MiB, 256 * MiB, 20 * MiB, 0, 3 * MiB,
	  6 * MiB, 12 * MiB, SUMMARY_CRITICAL },
	{ "metadata 20M, 2R left", 6 * MiB, 256 * MiB, 20 * MiB, 0, 3 * MiB,
	  6 * MiB, 12 * MiB, SUMMARY_TIGHT },
	{ "metadata 20M, 4R left", 12 * MiB, 256 * MiB, 20 * MiB, 0, 3 * MiB,
	  6 * MiB, 12 * MiB, SUMMARY_OK },
	/*
	 * metadata squeezed by data: its capacity is 10 MiB but the devices
	 * hold 1 GiB in its copies; the size share decides, so 50 MiB left
	 * is critical, not ok as 5 capacities would make it
	 */
	{ "metadata squeezed, 50M left", 50 * MiB, 256 * MiB, 10 * MiB, GiB, 3 * MiB,
	  GiB / 10, GiB / 5, SUMMARY_CRITICAL },
	{ "metadata squeezed, 150M left", 150 * MiB, 256 * MiB, 10 * MiB, GiB, 3 * MiB,
	  GiB / 10, GiB / 5, SUMMARY_TIGHT },
	/* a full filesystem: nothing left is critical whatever the sizes */
	{ "data full", 0, GiB, 5 * GiB, 500 * MiB, 0,
	  512 * MiB, GiB, SUMMARY_CRITICAL },
	/* a huge type: capped by one and two chunks, not by its shares */
	{ "data 240T, 3G left", 3 * GiB, 10 * GiB, 240ULL << 40, 24ULL << 40, 0,
	  10 * GiB, 20 * GiB, SUMMARY_CRITICAL },
	{ "data 240T, 20G left", 20 * GiB, 10 * GiB, 240ULL << 40, 24ULL << 40, 0,
	  10 * GiB, 20 * GiB, SUMMARY_OK },
};

static void test_headroom_levels(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct level_row *r = &rows[i];
		struct summary_space s = {
			.headroom = r->headroom,
			.chunk_size = r->chunk_size,
			.capacity = r->capacity,
			.size_share = r->size_share,
			.reservation = r->reservation,
		};

		btrfs_summary_rate_headroom(&s);
		check(s.level == r->level, "%s: %s (want %s)", r->what,
		      btrfs_summary_level_name(s.level), btrfs_summary_level_name(r->level));
		check(s.critical_bound == r->critical_bound, "%s: critical bound %llu (want %llu)",
		      r->what, (unsigned long long)s.critical_bound,
		      (unsigned long long)r->critical_bound);
		check(s.tight_bound == r->tight_bound, "%s: tight bound %llu (want %llu)",
		      r->what, (unsigned long long)s.tight_bound,
		      (unsigned long long)r->tight_bound);
		check(s.rule != NULL, "%s: a rule is named", r->what);
	}
}

struct system_row {
	const char *what;
	u64 free;
	u64 new_chunks;
	enum summary_level level;
};

static const struct system_row system_rows[] = {
	{ "a tree block free", 16384, 0, SUMMARY_OK },
	{ "a byte short, no chunk fits", 16383, 0, SUMMARY_CRITICAL },
	{ "nothing free, a chunk fits", 0, 1, SUMMARY_OK },
	{ "nothing free, no chunk fits", 0, 0, SUMMARY_CRITICAL },
};

static void test_system_levels(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(system_rows) / sizeof(system_rows[0]); i++) {
		const struct system_row *r = &system_rows[i];
		struct summary_space s = { .free = r->free, .new_chunks = r->new_chunks };

		btrfs_summary_rate_system(&s, 16384);
		check(s.level == r->level, "system, %s: %s (want %s)", r->what,
		      btrfs_summary_level_name(s.level), btrfs_summary_level_name(r->level));
	}
}

int main(void)
{
	test_headroom_levels();
	test_system_levels();
	return unit_failures ? 1 : 0;
}
