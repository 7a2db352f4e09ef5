// SPDX-License-Identifier: GPL-2.0
/*
 * mount-cost.c: the time model of the mount estimate
 * (Documentation/mount-estimate.md section 3), the tool's own fit to the
 * truth runs, not a kernel formula:
 *
 *   seconds = 0.011 + reads * (latency + 0.00009)
 *
 * and the latency profiles by name.  Worked by hand; compared to a
 * nanosecond, far below the printed precision.
 */
#include <stdbool.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/mount-cost.h"

struct time_row {
	const char *what;
	u64 reads;
	double latency;
	double seconds;		/* worked by hand */
};

static bool near(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

static const struct time_row rows[] = {
	{ "no reads: the fixed part", 0, 0.00008, 0.011 },
	{ "one read, no added latency", 1, 0, 0.01109 },
	{ "888 reads on nvme", 888, 0.00008, 0.16196 },
	{ "12 reads on ssd", 12, 0.0002, 0.01448 },
	{ "1000 reads on hdd", 1000, 0.008, 8.101 },
};

static void test_seconds(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double got = btrfs_mount_seconds(rows[i].reads, rows[i].latency);

		check(near(got, rows[i].seconds), "%s: %.9f s, want %.9f s",
		      rows[i].what, got, rows[i].seconds);
	}
}

/* Now and with the block-group tree: each count through the same rule */
static void test_time(void)
{
	struct btrfs_mount_estimate est = { 0 };
	struct btrfs_mount_time t;

	est.now.total_reads = 888;
	est.bg_tree.total_reads = 12;
	btrfs_mount_time(&est, 0.008, &t);
	check(near(t.seconds, 7.19492), "hdd, 888 reads: %.9f s", t.seconds);
	check(near(t.bg_tree_seconds, 0.108080), "hdd, 12 reads with the tree: %.9f s",
	      t.bg_tree_seconds);
	check(t.latency == 0.008, "the latency kept");
}

static void test_profiles(void)
{
	const struct btrfs_latency_profile *p;

	p = btrfs_find_latency_profile("nvme");
	check(p && p->seconds == 0.00008, "nvme: 0.08 ms");
	p = btrfs_find_latency_profile("ssd");
	check(p && p->seconds == 0.0002, "ssd: 0.2 ms");
	p = btrfs_find_latency_profile("hdd");
	check(p && p->seconds == 0.008, "hdd: 8 ms");
	check(!btrfs_find_latency_profile("HDD"), "names are exact");
	check(!btrfs_find_latency_profile(""), "no empty name");
}

int main(void)
{
	test_seconds();
	test_time();
	test_profiles();
	return unit_failures ? 1 : 0;
}
