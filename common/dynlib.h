/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The libraries only some inputs need, loaded (dlopen()) the first time
 * one does: zlib, liblzma and libzstd for a compressed image or a
 * btrfs-image dump, libxxhash and libgcrypt for the xxhash64, sha256 and
 * blake2b checksums, libblkid for --scan and for naming what a device
 * holds when it is not btrfs, liburing for the first read-ahead (a warm
 * run, served by the page cache, starts none: loading liburing was 24 k
 * instructions and 7 page faults of every start).  Linked, they were mapped and relocated at
 * every start: seven of the program's thirteen libraries (with
 * libgpg-error), 0.6-0.8 ms of CPU, which a warm inspect of a 3 TiB image
 * (10 ms) paid without using any of them.  Each library is the one the
 * build was checked against: configure finds its soname.
 *
 * A user calls dynlib_load() first, then the library's functions through
 * its table below (the library's own prototypes, by __typeof__).  A
 * library that cannot be loaded is an error of the input that needs it,
 * said with the library's name and dlerror()'s reason.
 */
#ifndef BTRFS_SPACE_COMMON_DYNLIB_H
#define BTRFS_SPACE_COMMON_DYNLIB_H

#include <blkid/blkid.h>
#include <gcrypt.h>
#include <lzma.h>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

struct dynlib;

extern struct dynlib dynlib_zlib;
extern struct dynlib dynlib_lzma;
extern struct dynlib dynlib_zstd;
extern struct dynlib dynlib_xxhash;
extern struct dynlib dynlib_gcrypt;
extern struct dynlib dynlib_blkid;
#ifdef HAVE_LIBURING
extern struct dynlib dynlib_uring;
#endif

/*
 * 0 when @lib is loaded (by this call or an earlier one, from any
 * thread), else -ENOSYS and *@why (if not NULL) says which library could
 * not be loaded and why, e.g. "libzstd.so.1 cannot be loaded: libzstd.so.1:
 * cannot open shared object file: No such file or directory".
 */
int dynlib_load(struct dynlib *lib, const char **why);

#define DYNLIB_FN(fn) __typeof__(fn) *fn

struct zlib_api {
	DYNLIB_FN(inflateInit_);
	DYNLIB_FN(inflateInit2_);
	DYNLIB_FN(inflate);
	DYNLIB_FN(inflateReset);
	DYNLIB_FN(inflateEnd);
};

struct lzma_api {
	DYNLIB_FN(lzma_stream_decoder);
	DYNLIB_FN(lzma_code);
	DYNLIB_FN(lzma_end);
};

struct zstd_api {
	DYNLIB_FN(ZSTD_createDStream);
	DYNLIB_FN(ZSTD_decompressStream);
	DYNLIB_FN(ZSTD_freeDStream);
	DYNLIB_FN(ZSTD_isError);
	DYNLIB_FN(ZSTD_getErrorName);
};

struct xxhash_api {
	DYNLIB_FN(XXH64);
};

struct gcrypt_api {
	DYNLIB_FN(gcry_check_version);
	DYNLIB_FN(gcry_control);
	DYNLIB_FN(gcry_md_get_algo_dlen);
	DYNLIB_FN(gcry_md_hash_buffers);
};

struct blkid_api {
	DYNLIB_FN(blkid_new_probe);
	DYNLIB_FN(blkid_new_probe_from_filename);
	DYNLIB_FN(blkid_free_probe);
	DYNLIB_FN(blkid_probe_set_device);
	DYNLIB_FN(blkid_probe_enable_superblocks);
	DYNLIB_FN(blkid_probe_set_superblocks_flags);
	DYNLIB_FN(blkid_probe_enable_partitions);
	DYNLIB_FN(blkid_do_safeprobe);
	DYNLIB_FN(blkid_probe_lookup_value);
};

#ifdef HAVE_LIBURING
/* The rest of liburing that io-batch.c uses is inline in liburing.h */
struct uring_api {
	DYNLIB_FN(io_uring_queue_init);
	DYNLIB_FN(io_uring_queue_exit);
	DYNLIB_FN(io_uring_register_iowq_max_workers);
	DYNLIB_FN(io_uring_submit);
	DYNLIB_FN(io_uring_submit_and_wait);
};
#endif

#undef DYNLIB_FN

/* Filled by dynlib_load() of the library of the same name */
extern struct zlib_api zlib_api;
extern struct lzma_api lzma_api;
extern struct zstd_api zstd_api;
extern struct xxhash_api xxhash_api;
extern struct gcrypt_api gcrypt_api;
extern struct blkid_api blkid_api;
#ifdef HAVE_LIBURING
extern struct uring_api uring_api;
#endif

#endif
