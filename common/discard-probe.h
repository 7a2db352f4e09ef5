/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_DISCARD_PROBE_H
#define BTRFS_SPACE_DISCARD_PROBE_H

#include <stdbool.h>

/*
 * Does the block device at @path take discards (its queue's
 * discard_max_bytes, a partition's from its disk)?  *is_blockdev says
 * whether @path is one; false for anything else.
 */
bool blockdev_discards(const char *path, bool *is_blockdev);

#endif
