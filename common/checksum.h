// SPDX-License-Identifier: GPL-2.0
/*
 * Checksums over plain byte buffers.  This layer knows nothing about btrfs
 * structures; it only produces digests laid out the way btrfs stores them.
 */
#ifndef BTRFS_SPACE_COMMON_CHECKSUM_H
#define BTRFS_SPACE_COMMON_CHECKSUM_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include "common/types.h"

/*
 * The values match the csum_type field of the btrfs superblock, so a value
 * read from disk can be passed straight in after csum_algo_valid().
 */
enum csum_algo {
	CSUM_ALGO_CRC32C = 0,
	CSUM_ALGO_XXHASH64 = 1,
	CSUM_ALGO_SHA256 = 2,
	CSUM_ALGO_BLAKE2B_256 = 3,
};

/* Largest digest of any algorithm above, and the size of a csum field. */
#define CSUM_MAX_SIZE 32

/* Return 1 if @algo names one of the algorithms above, 0 otherwise. */
int csum_algo_valid(unsigned int algo);

/* Digest size in bytes (4, 8, 32, 32), or 0 for an unknown algorithm. */
size_t csum_algo_size(enum csum_algo algo);

/*
 * Short name as btrfs-progs and sysfs spell it ("crc32c", "xxhash64",
 * "sha256", "blake2b"), or "unknown".
 */
const char *csum_algo_name(enum csum_algo algo);

/*
 * NULL when csum_compute() can compute @algo, else why not: its library
 * (libxxhash, libgcrypt: loaded at the first use, common/dynlib.h) cannot
 * be loaded.  crc32c is always there.
 */
const char *csum_algo_unavailable(enum csum_algo algo);

/*
 * Checksum @len bytes at @buf into @out in on-disk byte order:
 *  crc32c:   little-endian u32 of the standard (inverted) CRC-32C
 *  xxhash64: little-endian u64 of XXH64 with seed 0
 *  sha256:   the 32-byte digest
 *  blake2b:  the 32-byte unkeyed BLAKE2b-256 digest
 * Bytes of @out past the digest size are set to zero.
 *
 * Return 0 on success, -EINVAL for an unknown algorithm or a NULL buffer
 * with non-zero length, -ENOSYS if the algorithm's library cannot be
 * loaded (csum_algo_unavailable() says why), -EIO if the crypto library
 * cannot be used.
 */
int csum_compute(enum csum_algo algo, const void *buf, size_t len,
		 unsigned char out[CSUM_MAX_SIZE]);

/*
 * CRC-32C of @len bytes at @buf continuing from @seed, with neither the
 * seed nor the result inverted: the kernel's crc32c(), which btrfs uses
 * raw for name and back reference hashes.  The checksum of a buffer is
 * ~crc32c_raw(~0, buf, len).
 */
u32 crc32c_raw(u32 seed, const void *buf, size_t len);
/* The same by table lookups, what short buffers use without SSE4.2 */
u32 crc32c_raw_table(u32 seed, const void *buf, size_t len);

/*
 * crc32c_raw() of one little-endian u64, inline where the CPU has the
 * crc32 instruction (SSE4.2): the tree checker hashes every inline data
 * back reference as three of them.  A caller compiled for the instruction
 * (__attribute__((target("sse4.2")))) may use crc32c_u64_insn() after
 * crc32c_have_insn() said yes; crc32c_u64() chooses by itself.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define CRC32C_HAVE_INSN 1
/* 0: not asked yet, else 1 + whether the CPU has SSE4.2 (checksum.c) */
extern int crc32c_insn_state;
bool crc32c_probe_insn(void);

static inline bool crc32c_have_insn(void)
{
	int state = __atomic_load_n(&crc32c_insn_state, __ATOMIC_RELAXED);

	return state ? state == 2 : crc32c_probe_insn();
}

__attribute__((target("sse4.2")))
static inline u32 crc32c_u64_insn(u32 seed, u64 v)
{
	return (u32)_mm_crc32_u64(seed, v);	/* x86 is little-endian */
}
#else
static inline bool crc32c_have_insn(void)
{
	return false;
}
#endif

static inline u32 crc32c_u64(u32 seed, u64 v)
{
	u64 le = htole64(v);

	return crc32c_raw(seed, &le, sizeof(le));
}

#endif
