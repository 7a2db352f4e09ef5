/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A btrfs-image metadata dump read in place.  This layer knows the dump's
 * own format only: its clusters, the items they list (bytes by logical
 * address, plain or zlib-compressed) and their inflation.  Where restore
 * ("btrfs-image -r") writes each item on the device needs the filesystem
 * format: a layout function given by the layer above
 * (kernel-shared/image-restore.c) places the items as pieces of the
 * device, and this reader then serves reads of that device from the
 * index: what restore would leave as a hole reads as zeroes.
 */
#ifndef BTRFS_SPACE_IMAGE_DUMP_H
#define BTRFS_SPACE_IMAGE_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include "common/types.h"

#define IMAGE_DUMP_MAGIC	0xbd5c25e27295668bULL

/* The cluster format, as btrfs-progs image/ writes it */
#define IMAGE_DUMP_CLUSTER_SIZE		1024U
#define IMAGE_DUMP_CLUSTER_HEADER	21	/* magic, bytenr, nritems, compress */
#define IMAGE_DUMP_CLUSTER_ITEM		12	/* bytenr, size */
#define IMAGE_DUMP_ITEMS_PER_CLUSTER	\
	((IMAGE_DUMP_CLUSTER_SIZE - IMAGE_DUMP_CLUSTER_HEADER) / IMAGE_DUMP_CLUSTER_ITEM)

struct image_dump;

/* One item of the dump; the layout may only set len (by measuring) and patch */
struct image_dump_item {
	u64 logical;		/* where the dump says its bytes belong */
	u64 file_off;		/* where they are in the file */
	u64 cluster;		/* file offset of its cluster */
	u32 stored;		/* bytes in the file */
	u32 len;		/* bytes restored (image_dump_measure()) */
	bool zlib;
	bool measured;		/* len is known */
	/*
	 * The layout's rewrite of the item's first patch_len bytes, then
	 * further rewritten copies (piece mirror 1, 2, ...); freed with the
	 * reader.  Restore fixes up the superblock this way.
	 */
	u8 *patch;
	u32 patch_len;
};

/*
 * Place the indexed items on the restored device with
 * image_dump_add_piece(), then image_dump_set_layout().  Returns 0 or
 * -errno, with image_dump_error() for a one-line reason.
 */
typedef int (*image_dump_layout_fn)(struct image_dump *dump);

/* True when the first 8 bytes at @buf are the cluster magic of a dump */
bool image_dump_magic(const void *buf, size_t len);

/*
 * Index the dump open at @fd (@file_size bytes) and lay it out with
 * @layout.  On success *ret holds the reader and *dev_size the size of
 * the restored device.  On failure returns -errno and a one-line reason
 * in @err.
 */
int image_dump_open(int fd, u64 file_size, image_dump_layout_fn layout,
		    struct image_dump **ret, u64 *dev_size, char *err,
		    size_t errlen);

/* Read @len bytes of the restored device at @offset; thread-safe */
int image_dump_read(struct image_dump *dump, void *buf, u64 len, u64 offset);

void image_dump_close(struct image_dump *dump);

/* A quirk of restore that the reader will meet, or NULL */
const char *image_dump_note(const struct image_dump *dump);

/* What was indexed, for a verbose note */
void image_dump_describe(const struct image_dump *dump, char *buf, size_t len);

/* For the layout ------------------------------------------------------- */

/* The items in file order */
struct image_dump_item *image_dump_items(struct image_dump *dump, u32 *nr);

/* The file offset of the bad cluster header that ended the dump, or -1 */
u64 image_dump_bad_header(const struct image_dump *dump);
/* The file offset of the last good cluster */
u64 image_dump_last_cluster(const struct image_dump *dump);
/* The item cut short by the end of the file (cluster and stored set), or NULL */
const struct image_dump_item *image_dump_truncated(const struct image_dump *dump);

/* Set @it->len to its restored size (inflating a zlib item to count) */
int image_dump_measure(struct image_dump *dump, struct image_dump_item *it);
/* The whole restored content of @it (measured), freshly allocated */
int image_dump_load(struct image_dump *dump, const struct image_dump_item *it,
		    u8 **data);
/*
 * At most @cap restored bytes of @it into @buf, their number in *size;
 * -EFBIG when a zlib item holds more, -EUCLEAN when it does not inflate.
 */
int image_dump_peek(struct image_dump *dump, const struct image_dump_item *it,
		    u8 *buf, u64 cap, u64 *size);

/*
 * Restore writes [physical, +len) from item @src at @src_off (from its
 * patch copy @mirror when not 0); pieces are written in the order added.
 */
int image_dump_add_piece(struct image_dump *dump, u64 physical, u64 len,
			 u32 src, u64 src_off, u8 mirror);
/* The restored device's size, the chunks the layout used, its note */
void image_dump_set_layout(struct image_dump *dump, u64 dev_size,
			   u32 nr_chunks, const char *note);

__attribute__((format(printf, 3, 4)))
int image_dump_error(struct image_dump *dump, int err, const char *fmt, ...);

#endif
