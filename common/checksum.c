// SPDX-License-Identifier: GPL-2.0
/*
 * Checksum algorithms of btrfs, implemented by well-maintained libraries:
 * crc32c by Intel ISA-L, xxhash64 by libxxhash, sha256 and blake2b by
 * libgcrypt.  All this file adds is the on-disk byte layout.
 */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include <gcrypt.h>
#include <isa-l/crc.h>
#include <xxhash.h>

#include "common/checksum.h"
#include "common/types.h"

struct csum_desc {
	const char *name;
	size_t size;
};

static const struct csum_desc csum_descs[] = {
	[CSUM_ALGO_CRC32C]	= { "crc32c",	4 },
	[CSUM_ALGO_XXHASH64]	= { "xxhash64",	8 },
	[CSUM_ALGO_SHA256]	= { "sha256",	32 },
	[CSUM_ALGO_BLAKE2B_256]	= { "blake2b",	32 },
};

#define CSUM_NR_ALGOS (sizeof(csum_descs) / sizeof(csum_descs[0]))

int csum_algo_valid(unsigned int algo)
{
	return algo < CSUM_NR_ALGOS;
}

size_t csum_algo_size(enum csum_algo algo)
{
	if (!csum_algo_valid(algo))
		return 0;
	return csum_descs[algo].size;
}

const char *csum_algo_name(enum csum_algo algo)
{
	if (!csum_algo_valid(algo))
		return "unknown";
	return csum_descs[algo].name;
}

/* btrfs stores integer checksums little-endian whatever the host order. */
static void put_le32(unsigned char *p, u32 v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put_le64(unsigned char *p, u64 v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/*
 * ISA-L takes the length as an int, so feed larger buffers in pieces.
 * crc32_iscsi() neither inverts its seed nor its result (checked against
 * the "123456789" -> 0xe3069283 vector), which is what makes chaining
 * pieces work: seed with ~0 once and invert once at the end.
 */
#define CRC32C_CHUNK (1U << 30)

u32 crc32c_raw(u32 seed, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	u32 crc = seed;

	while (len) {
		size_t n = len < CRC32C_CHUNK ? len : CRC32C_CHUNK;

		/* The prototype lacks const but the buffer is only read. */
		crc = crc32_iscsi((unsigned char *)p, (int)n, crc);
		p += n;
		len -= n;
	}
	return crc;
}

static void csum_crc32c(const unsigned char *buf, size_t len,
			unsigned char *out)
{
	put_le32(out, ~crc32c_raw(~0U, buf, len));
}

static void csum_xxhash64(const void *buf, size_t len, unsigned char *out)
{
	put_le64(out, XXH64(buf, len, 0));
}

/*
 * libgcrypt must see gcry_check_version() before any other call.  We are
 * its only user in this program, so finish initialisation here too,
 * unless the application already did; hashing needs no secure memory.
 */
static int gcrypt_ready;
static pthread_once_t gcrypt_once = PTHREAD_ONCE_INIT;

static void gcrypt_init(void)
{
	if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
		gcrypt_ready = 1;
		return;
	}
	if (!gcry_check_version(GCRYPT_VERSION))
		return;
	gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	gcrypt_ready = 1;
}

static int csum_gcrypt(int md_algo, const void *buf, size_t len,
		       unsigned char *out)
{
	static const unsigned char empty;
	gcry_buffer_t iov = { 0 };

	pthread_once(&gcrypt_once, gcrypt_init);
	if (!gcrypt_ready)
		return -EIO;
	/* Never let the library write past our fixed-size output. */
	if (gcry_md_get_algo_dlen(md_algo) > CSUM_MAX_SIZE)
		return -EIO;

	iov.data = (void *)(buf ? buf : &empty);
	iov.len = len;
	iov.size = len;
	/* Unlike gcry_md_hash_buffer(), this reports errors (e.g. FIPS). */
	if (gcry_md_hash_buffers(md_algo, 0, out, &iov, 1))
		return -EIO;
	return 0;
}

int csum_compute(enum csum_algo algo, const void *buf, size_t len,
		 unsigned char out[CSUM_MAX_SIZE])
{
	int ret = 0;

	if (!csum_algo_valid(algo) || !out || (!buf && len))
		return -EINVAL;

	memset(out, 0, CSUM_MAX_SIZE);
	switch (algo) {
	case CSUM_ALGO_CRC32C:
		csum_crc32c(buf, len, out);
		break;
	case CSUM_ALGO_XXHASH64:
		csum_xxhash64(buf, len, out);
		break;
	case CSUM_ALGO_SHA256:
		ret = csum_gcrypt(GCRY_MD_SHA256, buf, len, out);
		break;
	case CSUM_ALGO_BLAKE2B_256:
		ret = csum_gcrypt(GCRY_MD_BLAKE2B_256, buf, len, out);
		break;
	}
	if (ret)
		memset(out, 0, CSUM_MAX_SIZE);
	return ret;
}
