// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs_space_info_used() (space-info.c, the kernel's of 5.12-6.18) as a
 * table, Documentation/formulas.md section 5.5:
 *
 *   used(si, may_use) = bytes_used + bytes_reserved + bytes_pinned
 *                       + bytes_readonly + bytes_zone_unusable
 *                       + (may_use ? bytes_may_use : 0)
 *
 * Each counter alone (so a counter left out or counted twice fails its
 * row), all of them, may_use with and without, and sums at the top of
 * u64.  Worked from the text.
 */
#include "tests/unit/unit-test.h"
#include "kernel-shared/space-info.h"

#define TOP	18446744073709551615ULL

struct used_row {
	const char *what;
	u64 used, reserved, pinned, readonly, zone_unusable, may_use;
	u64 without_may_use;	/* worked from the text */
	u64 with_may_use;
};

static const struct used_row rows[] = {
	{ "nothing", 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "bytes_used alone", 1, 0, 0, 0, 0, 0, 1, 1 },
	{ "bytes_reserved alone", 0, 2, 0, 0, 0, 0, 2, 2 },
	{ "bytes_pinned alone", 0, 0, 4, 0, 0, 0, 4, 4 },
	{ "bytes_readonly alone", 0, 0, 0, 8, 0, 0, 8, 8 },
	{ "bytes_zone_unusable alone", 0, 0, 0, 0, 16, 0, 16, 16 },
	{ "bytes_may_use alone", 0, 0, 0, 0, 0, 32, 0, 32 },
	{ "all six", 1, 2, 4, 8, 16, 32, 31, 63 },
	/* truth ns16k-1g: the metadata counters sysfs showed after a 6.18 mount */
	{ "truth ns16k-1g metadata", 131072, 0, 0, 65536, 0, 5767168, 196608, 5963776 },
	{ "the top of u64 without may_use", TOP - 31, 1, 2, 4, 8, 16, TOP - 16, TOP },
	{ "the top of u64 in may_use", 0, 0, 0, 0, 0, TOP, 0, TOP },
};

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct used_row *r = &rows[i];
		struct btrfs_space_info s = {
			.present = true, .flags = BTRFS_BLOCK_GROUP_METADATA,
			.bytes_used = r->used, .bytes_reserved = r->reserved,
			.bytes_pinned = r->pinned, .bytes_readonly = r->readonly,
			.bytes_zone_unusable = r->zone_unusable, .bytes_may_use = r->may_use,
		};

		check_u64(r->what, btrfs_space_info_used(&s, false), r->without_may_use);
		check_u64(r->what, btrfs_space_info_used(&s, true), r->with_may_use);
	}
	return unit_failures ? 1 : 0;
}
