/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a device or image given for an offline read belongs to a btrfs
 * the kernel has mounted right now.
 */
#ifndef BTRFS_SPACE_MOUNTED_H
#define BTRFS_SPACE_MOUNTED_H

#include <stddef.h>

/*
 * 1 when @path (a block device, or a regular file a loop device reads)
 * is a device of a mounted btrfs: @dev gets that device's name ("loop0"),
 * @mnt a mount point of the filesystem ("" when no mount of it is visible
 * in this mount namespace).  0 when not, or when it cannot be told.
 */
int device_mounted_btrfs(const char *path, char *dev, size_t dev_size,
			 char *mnt, size_t mnt_size);

/*
 * Open @path read-only as a file is looked at, not read (a FIFO does not
 * wait for a writer, a tty is not taken), and give its inode number.
 * Returns the descriptor, or -errno.
 */
int open_path_inode(const char *path, unsigned long long *ino);

#endif
