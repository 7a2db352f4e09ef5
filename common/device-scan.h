/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What is on a device when it is not btrfs (libblkid probing), and --scan:
 * the other members of a multi-device filesystem, among the paths given
 * and the block devices of the system.
 */
#ifndef BTRFS_SPACE_DEVICE_SCAN_H
#define BTRFS_SPACE_DEVICE_SCAN_H

#include <stdbool.h>
#include <stddef.h>

struct io_format;

/*
 * When @path opens but its primary superblock is not @fmt's (no btrfs
 * magic), fill @msg with one line saying what it is ("PATH: ext4
 * filesystem, not btrfs", "PATH: no recognised filesystem ...") and
 * return true; false otherwise.
 */
bool device_explain_not_btrfs(const struct io_format *fmt, const char *path,
			      char *msg, size_t len);

/*
 * --scan: the filesystem of @paths[0] (its fsid, as @fmt reads it from
 * the superblock); keep the given paths that belong to it (one per
 * devid), then add the block devices that libblkid finds with TYPE=btrfs
 * and that UUID, until every devid the superblock counts is there.  *ret is a new array of *nr_ret strings
 * (free with device_scan_free).  Returns 0 or -errno.
 */
int device_scan(const struct io_format *fmt, char * const *paths, int nr_paths,
		char ***ret, int *nr_ret);
void device_scan_free(char **paths, int nr);

#endif
