// SPDX-License-Identifier: GPL-2.0
/* The kernel models the unit tables' rows name by version (linked into each) */
#include "tests/unit/kernel-model.h"
#include "tests/unit/unit-test.h"

struct btrfs_kernel_model unit_kernel_model(const char *version)
{
	struct btrfs_kernel_model m;
	u32 v = 0;

	if (btrfs_parse_kernel_version(version, &v))
		check(0, "kernel version %s", version);
	btrfs_kernel_model(v, &m);
	return m;
}
