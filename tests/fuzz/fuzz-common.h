/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared parts of the libFuzzer targets (Documentation/dev/fuzzing.md).
 *
 * Every target ends in the same place: a set of in-memory devices (one
 * memfd each, opened by the reader as /proc/self/fd/N, so the real
 * io_open()/io_read() path is used unchanged) holding an image, with the
 * superblock and tree block checksums fixed up, read through the inspect
 * pipeline: btrfs_open_fs(), btrfs_read_block_groups(), the space report,
 * the mount estimate and every printer.
 *
 * Images travel as "BFZ" files: a small header and the 4 KiB pages a
 * normal run reads (the metadata), each record giving device and byte
 * offset.  Everything else of a device reads as zeros.
 *
 *   struct bfz_head, then records: struct bfz_rec + npages * 4096 bytes
 */
#ifndef BTRFS_SPACE_FUZZ_COMMON_H
#define BTRFS_SPACE_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/types.h"
#include "kernel-shared/ctree.h"

#define BFZ_MAGIC		"BFZ1"
#define BFZ_PAGE		4096U
#define BFZ_MAX_DEVS		4
#define BFZ_MAX_DEV_SIZE	(16ULL << 40)	/* u32 pages of 4 KiB */
#define BFZ_MAX_REC_PAGES	256U

/* Flags of an image (bfz_head.flags; the other targets: their second byte) */
#define FZ_NOFIX	0x01	/* keep the checksums as they are */
#define FZ_SCAN		0x02	/* --bg-search scan instead of pinpoint */
#define FZ_DEGRADED	0x04	/* --degraded, and the last device left out */
#define FZ_SERIAL	0x08	/* --io-threads 1: serial pinpoint (else 2) */
#define FZ_JSON		0x10	/* print in JSON instead of text */
#define FZ_CSUM_DELETE	0x20	/* then "csum-delete --top 3" too */
#define FZ_CSUM_FILE	0x40	/* then "csum-delete --file PATH" too */
#define FZ_FORECAST	0x80	/* then forecast's what-ifs: --resize 1:half,
				 * --remove 1, --balance, --periodic-reclaim */
#define FZ_FLAGS_MASK	0xff

struct bfz_head {
	char magic[4];
	u8 flags;
	u8 ndev;		/* 1..4 */
	u8 mirror;		/* superblock copy to read, 0..2 */
	u8 reserved;
	__le64 dev_size[BFZ_MAX_DEVS];
} __attribute__ ((__packed__));

struct bfz_rec {
	u8 dev;
	u8 reserved[3];
	__le32 npages;
	__le64 offset;		/* bytes, on device dev */
} __attribute__ ((__packed__));

struct fz_rec {
	u32 dev;
	u64 offset;
	u32 len;
	u8 *data;		/* into fz_image.buf */
};

struct fz_image {
	u8 flags;
	u8 ndev;
	u8 mirror;
	u64 dev_size[BFZ_MAX_DEVS];
	struct fz_rec *recs;
	u32 nrecs;
	u32 recs_cap;
	u8 *buf;
	size_t buf_len;
	const char *file;	/* FZ_CSUM_FILE: a path of the template, or NULL */
};

/* A tree block found in an image, for the targets that rebuild one */
struct fz_block {
	struct fz_rec *rec;
	u8 *data;		/* len (nodesize) bytes inside rec */
	u32 len;
	u64 logical;		/* header bytenr */
	u64 owner;
	u8 level;
};

/* Little-endian stores; the project's accessors only read */
static inline void fz_put16(void *p, u16 v)
{
	u8 *b = p;

	b[0] = v;
	b[1] = v >> 8;
}

static inline void fz_put32(void *p, u32 v)
{
	fz_put16(p, v);
	fz_put16((u8 *)p + 2, v >> 16);
}

static inline void fz_put64(void *p, u64 v)
{
	fz_put32(p, v);
	fz_put32((u8 *)p + 4, v >> 32);
}

static inline u64 fz_get64(const void *p)
{
	const u8 *b = p;
	u64 v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | b[i];
	return v;
}

static inline u32 fz_get32(const void *p)
{
	const u8 *b = p;

	return b[0] | (b[1] << 8) | (b[2] << 16) | ((u32)b[3] << 24);
}

static inline u16 fz_get16(const void *p)
{
	const u8 *b = p;

	return b[0] | (b[1] << 8);
}

/* Key order of two disk keys: -1, 0 or 1 */
int fz_cmp_disk_keys(const struct btrfs_disk_key *x, const struct btrfs_disk_key *y);
/*
 * Leaves built item by item: fz_leaf_put() puts item @slot, its data below
 * @data_end (offset in the item area, the leaf's size less the header to
 * start with), false when it does not fit; fz_leaf_end() zeroes what lies
 * between table and data and sets nritems.
 */
bool fz_leaf_put(u8 *leaf, u32 *data_end, u32 slot, const struct btrfs_disk_key *key,
		 const u8 *data, u32 size);
void fz_leaf_end(u8 *leaf, u32 data_end, u32 nritems);

/* Parse a BFZ file into @img (a private copy); 0 or -1 when not one */
int fz_parse(const u8 *data, size_t size, struct fz_image *img);
/* Serialize @img as a BFZ file; returns a malloc'd buffer */
u8 *fz_serialize(const struct fz_image *img, size_t *size);
void fz_clone(struct fz_image *dst, const struct fz_image *src);
void fz_free(struct fz_image *img);

/* Fix the superblock and tree block checksums (unless FZ_NOFIX) */
void fz_fixup(struct fz_image *img);
/* The superblock copy the reader will use, or NULL if not in the image */
struct btrfs_super_block *fz_super(struct fz_image *img, u32 dev);
/* Tree blocks of @img: every nodesize-aligned block whose header names its
 * own position plausibly (fsid of the template).  Returns how many. */
u32 fz_find_blocks(struct fz_image *img, struct fz_block *out, u32 max);

/*
 * Write the devices, run the inspect pipeline.  Aborts (a finding) when an
 * error message is not one line or the JSON output holds nan/inf.  With
 * FZ_CSUM_DELETE, then runs the csum-delete command itself (--top 3, the
 * flags as options), which walks the fs tree, and with FZ_CSUM_FILE
 * "csum-delete --file PATH" for a path of the template (fz_template_file()),
 * which looks the path up (btrfs_lookup_path()): their output goes to
 * stdout and stderr (run-all.sh closes them, -close_fd_mask=3).
 */
void fz_run(struct fz_image *img);

/*
 * Templates: the BFZ images in tests/fuzz/templates, built into every
 * target.  The other targets start with two bytes: the template (modulo
 * their number) and the flags.
 */
u32 fz_nr_templates(void);
const char *fz_template_name(u32 i);
const struct fz_image *fz_template(u32 i);
/* The path FZ_CSUM_FILE gives csum-delete --file for template @i */
const char *fz_template_file(u32 i);

/*
 * Environment of every target:
 *  FUZZ_EXPORT=PREFIX  also write the devices of the first run, checksums
 *                      fixed, as sparse files PREFIX.devN.img (replay with
 *                      the CLI); give one input
 *  FUZZ_VERBOSE=1      say how each run ended (read fine, or the error)
 *  FUZZ_DUMP_SEEDS=DIR (LLVMFuzzerInitialize) write the target's seeds,
 *                      derived from the templates, into DIR and exit
 */
void fz_export_if_asked(struct fz_image *img);
const char *fz_dump_dir(void);
void fz_write_seed(const char *dir, const char *name, const void *data, size_t len);
/* fz_write_seed() as "<name of template t>.<fmt...>" */
void fz_write_template_seed(const char *dir, u32 t, const void *data, size_t len,
			    const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));
/*
 * LLVMFuzzerInitialize's FUZZ_DUMP_SEEDS: return when it is not set, else
 * write the seeds and exit.  fz_dump_each_template() lets @dump write any
 * number of seeds for template @t; fz_dump_template_seeds() writes one per
 * template, "<template>.<suffix>", of the length @make returns (0: none)
 * after building it into @seed (@cap bytes, zeroed).
 */
typedef size_t (*fz_seed_fn)(u32 t, u8 *seed, size_t cap);
void fz_dump_each_template(void (*dump)(const char *dir, u32 t));
void fz_dump_template_seeds(const char *suffix, size_t cap, fz_seed_fn make);

/*
 * Seeds shared by a pipeline target and its parse-* twin (same input):
 * the template's superblock, and its sys_chunk_array with le16 size.
 */
#define FZ_SUPER_SEED		(FZ_CONTROL + BTRFS_SUPER_INFO_SIZE)
#define FZ_SYS_ARRAY_SEED	(FZ_CONTROL + 2 + BTRFS_SYSTEM_CHUNK_ARRAY_SIZE)
size_t fz_super_seed(u32 t, u8 *seed, size_t cap);
size_t fz_sys_array_seed(u32 t, u8 *seed, size_t cap);

/* A copy of the template the input's first byte picks, with its flags */
void fz_start(struct fz_image *img, const u8 *data);
#define FZ_CONTROL	2	/* template, flags */

/*
 * Item targets.  The input is the template and flags bytes, then items:
 *
 *   le64 objectid, le64 offset, u8 spec, le16 size, size bytes of data
 *
 * Item i goes, with key type specs[spec % nr].type, into the leaf of tree
 * specs[spec % nr].owner that holds the template's items of that type,
 * replacing them; the leaf is rebuilt in key order (what does not fit is
 * left out) and its parents' keys follow its first key.  Then the inspect
 * pipeline runs on the image.  The seeds are the templates' own items, so
 * a seed rebuilds its template exactly.
 */
struct fz_item_spec {
	u64 owner;		/* 2 for block groups moves to 11 with a bg tree */
	u8 type;
};

int fz_items_run(const u8 *data, size_t size, const struct fz_item_spec *specs,
		 u32 nr_specs);
/* Write one seed per template into @dir */
void fz_items_dump(const char *dir, const struct fz_item_spec *specs, u32 nr_specs);

#endif
