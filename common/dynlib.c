// SPDX-License-Identifier: GPL-2.0
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include "common/dynlib.h"

struct dynlib_sym {
	const char *name;
	void **addr;
};

struct dynlib {
	const char *soname;
	const struct dynlib_sym *syms;
	unsigned int nr_syms;
	int state;			/* 0 not tried, 1 loaded, -1 not loadable */
	char why[512];
};

struct zlib_api zlib_api;
struct lzma_api lzma_api;
struct zstd_api zstd_api;
struct xxhash_api xxhash_api;
struct gcrypt_api gcrypt_api;
struct blkid_api blkid_api;
#ifdef HAVE_LIBURING
struct uring_api uring_api;
#endif

/* dlsym()'s object pointer into a function pointer, as dlopen(3) shows */
#define SYM(api, fn)	{ #fn, (void **)&(api).fn }
#define LIB(soname, syms) { soname, syms, sizeof(syms) / sizeof(syms[0]), 0, "" }

static const struct dynlib_sym zlib_syms[] = {
	SYM(zlib_api, inflateInit_), SYM(zlib_api, inflateInit2_), SYM(zlib_api, inflate),
	SYM(zlib_api, inflateReset), SYM(zlib_api, inflateEnd),
};
static const struct dynlib_sym lzma_syms[] = {
	SYM(lzma_api, lzma_stream_decoder), SYM(lzma_api, lzma_code), SYM(lzma_api, lzma_end),
};
static const struct dynlib_sym zstd_syms[] = {
	SYM(zstd_api, ZSTD_createDStream), SYM(zstd_api, ZSTD_decompressStream),
	SYM(zstd_api, ZSTD_freeDStream), SYM(zstd_api, ZSTD_isError),
	SYM(zstd_api, ZSTD_getErrorName),
};
static const struct dynlib_sym xxhash_syms[] = {
	SYM(xxhash_api, XXH64),
};
static const struct dynlib_sym gcrypt_syms[] = {
	SYM(gcrypt_api, gcry_check_version), SYM(gcrypt_api, gcry_control),
	SYM(gcrypt_api, gcry_md_get_algo_dlen), SYM(gcrypt_api, gcry_md_hash_buffers),
};
static const struct dynlib_sym blkid_syms[] = {
	SYM(blkid_api, blkid_new_probe), SYM(blkid_api, blkid_new_probe_from_filename),
	SYM(blkid_api, blkid_free_probe), SYM(blkid_api, blkid_probe_set_device),
	SYM(blkid_api, blkid_probe_enable_superblocks),
	SYM(blkid_api, blkid_probe_set_superblocks_flags),
	SYM(blkid_api, blkid_probe_enable_partitions), SYM(blkid_api, blkid_do_safeprobe),
	SYM(blkid_api, blkid_probe_lookup_value),
};

struct dynlib dynlib_zlib = LIB(ZLIB_SONAME, zlib_syms);
struct dynlib dynlib_lzma = LIB(LZMA_SONAME, lzma_syms);
struct dynlib dynlib_zstd = LIB(ZSTD_SONAME, zstd_syms);
struct dynlib dynlib_xxhash = LIB(XXHASH_SONAME, xxhash_syms);
struct dynlib dynlib_gcrypt = LIB(GCRYPT_SONAME, gcrypt_syms);
struct dynlib dynlib_blkid = LIB(BLKID_SONAME, blkid_syms);
#ifdef HAVE_LIBURING
static const struct dynlib_sym uring_syms[] = {
	SYM(uring_api, io_uring_queue_init), SYM(uring_api, io_uring_queue_exit),
	SYM(uring_api, io_uring_register_iowq_max_workers), SYM(uring_api, io_uring_submit),
	SYM(uring_api, io_uring_submit_and_wait),
};
struct dynlib dynlib_uring = LIB(URING_SONAME, uring_syms);
#endif

static pthread_mutex_t dynlib_lock = PTHREAD_MUTEX_INITIALIZER;

/* dlopen() and every symbol, or the reason in lib->why */
static int load_once(struct dynlib *lib)
{
	void *handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	unsigned int i;

	if (!handle) {
		snprintf(lib->why, sizeof(lib->why), "%s cannot be loaded: %s",
			 lib->soname, dlerror());
		return -1;
	}
	for (i = 0; i < lib->nr_syms; i++) {
		*lib->syms[i].addr = dlsym(handle, lib->syms[i].name);
		if (!*lib->syms[i].addr) {
			snprintf(lib->why, sizeof(lib->why), "%s cannot be used: no %s in it",
				 lib->soname, lib->syms[i].name);
			/* the handle stays: nothing is unloaded in a run */
			return -1;
		}
	}
	return 1;
}

int dynlib_load(struct dynlib *lib, const char **why)
{
	int state = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);

	if (!state) {
		pthread_mutex_lock(&dynlib_lock);
		state = lib->state;
		if (!state) {
			state = load_once(lib);
			__atomic_store_n(&lib->state, state, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&dynlib_lock);
	}
	if (state > 0)
		return 0;
	if (why)
		*why = lib->why;
	return -ENOSYS;
}
