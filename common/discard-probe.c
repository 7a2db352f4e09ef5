// SPDX-License-Identifier: GPL-2.0
/*
 * Whether a block device supports discard, as bdev_max_discard_sectors()
 * tells the kernel: sysfs queue/discard_max_bytes above 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "common/discard-probe.h"

static bool read_positive(const char *path)
{
	char buf[32] = "";
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strtoull(buf, NULL, 10) > 0;
}

bool blockdev_discards(const char *path, bool *is_blockdev)
{
	char file[128];
	struct stat st;

	*is_blockdev = false;
	if (!path || stat(path, &st) || !S_ISBLK(st.st_mode))
		return false;
	*is_blockdev = true;
	snprintf(file, sizeof(file), "/sys/dev/block/%u:%u/queue/discard_max_bytes",
		 major(st.st_rdev), minor(st.st_rdev));
	if (read_positive(file))
		return true;
	/* a partition has no queue/ of its own */
	snprintf(file, sizeof(file), "/sys/dev/block/%u:%u/../queue/discard_max_bytes",
		 major(st.st_rdev), minor(st.st_rdev));
	return read_positive(file);
}
