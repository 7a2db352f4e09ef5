/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where "btrfs-image -r" writes the items of a dump on the device it
 * restores: the layout function that common/image-dump.c, which knows
 * only the dump's cluster format, is given by this layer.
 */
#ifndef BTRFS_SPACE_IMAGE_RESTORE_H
#define BTRFS_SPACE_IMAGE_RESTORE_H

struct image_dump;

/* An image_dump_layout_fn: restore's layout of a single-device dump */
int btrfs_image_restore_layout(struct image_dump *dump);

#endif
