// SPDX-License-Identifier: GPL-2.0
/*
 * Checksum algorithms of btrfs, implemented by well-maintained libraries:
 * crc32c by Intel ISA-L, xxhash64 by libxxhash, sha256 and blake2b by
 * libgcrypt.  All this file adds is the on-disk byte layout.
 */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <isa-l/crc.h>

#include "common/checksum.h"
#include "common/dynlib.h"
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

/*
 * Below this many bytes the crc32 instruction of SSE4.2 (or, without it,
 * a table) is faster than ISA-L, whose entry point sets up 512-bit
 * folding before it looks at the length: the tree checker hashes every
 * inline data back reference as three 8-byte pieces, which is 1.9 million
 * calls for the extent tree of a 3 TiB filesystem.
 */
#define CRC32C_SMALL 64

/* CRC-32C (Castagnoli), reflected polynomial */
#define CRC32C_POLY 0x82f63b78U

static u32 crc32c_table[8][256];
static pthread_once_t crc32c_table_once = PTHREAD_ONCE_INIT;
static bool crc32c_use_sse42;
static int crc32c_ready;		/* the two above are set */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/*
 * Whether the CPU has SSE4.2, asked once.  Not __builtin_cpu_supports():
 * it links libgcc's constructor, which runs a dozen CPUID instructions at
 * every start, each a trap to the hypervisor in a virtual machine (7 % of
 * a `--version` here in perf).  glibc has asked the CPU already and keeps
 * the answer (<sys/platform/x86.h>, glibc 2.33); else one CPUID leaf 1.
 */
int crc32c_insn_state;

#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
static bool cpu_has_sse42(void)
{
	return CPU_FEATURE_ACTIVE(SSE4_2);
}
#else
#include <cpuid.h>
static bool cpu_has_sse42(void)
{
	unsigned int eax, ebx, ecx, edx;

	return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_2);
}
#endif

bool crc32c_probe_insn(void)
{
	bool has = cpu_has_sse42();

	__atomic_store_n(&crc32c_insn_state, has ? 2 : 1, __ATOMIC_RELAXED);
	return has;
}

/* The SSE4.2 crc32 instruction computes exactly this CRC, 8 bytes a step */
__attribute__((target("sse4.2")))
static u32 crc32c_sse42(u32 crc, const unsigned char *p, size_t len)
{
	u64 crc64 = crc;

	for (; len >= 8; p += 8, len -= 8) {
		u64 v;

		memcpy(&v, p, sizeof(v));	/* x86 is little-endian */
		crc64 = __builtin_ia32_crc32di(crc64, v);
	}
	crc = (u32)crc64;
	for (; len; p++, len--)
		crc = __builtin_ia32_crc32qi(crc, *p);
	return crc;
}
#define HAVE_CRC32C_SSE42 1
#endif

static void crc32c_table_init(void)
{
	u32 i, k;

#ifdef HAVE_CRC32C_SSE42
	crc32c_use_sse42 = crc32c_have_insn();
#endif

	for (i = 0; i < 256; i++) {
		u32 crc = i;

		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? CRC32C_POLY : 0);
		crc32c_table[0][i] = crc;
	}
	/* slicing by 8: table k advances a byte k places further */
	for (i = 0; i < 256; i++)
		for (k = 1; k < 8; k++)
			crc32c_table[k][i] = (crc32c_table[k - 1][i] >> 8) ^
					     crc32c_table[0][crc32c_table[k - 1][i] & 0xff];
	__atomic_store_n(&crc32c_ready, 1, __ATOMIC_RELEASE);
}

/* set once, before any use; checked without the cost of pthread_once */
static void crc32c_small_init(void)
{
	if (!__atomic_load_n(&crc32c_ready, __ATOMIC_ACQUIRE))
		pthread_once(&crc32c_table_once, crc32c_table_init);
}

static u32 crc32c_by_table(u32 crc, const unsigned char *p, size_t len)
{
	for (; len >= 8; p += 8, len -= 8) {
		u32 lo = crc ^ ((u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24);

		crc = crc32c_table[7][lo & 0xff] ^ crc32c_table[6][(lo >> 8) & 0xff] ^
		      crc32c_table[5][(lo >> 16) & 0xff] ^ crc32c_table[4][lo >> 24] ^
		      crc32c_table[3][p[4]] ^ crc32c_table[2][p[5]] ^
		      crc32c_table[1][p[6]] ^ crc32c_table[0][p[7]];
	}
	for (; len; p++, len--)
		crc = (crc >> 8) ^ crc32c_table[0][(crc ^ *p) & 0xff];
	return crc;
}

static u32 crc32c_small(u32 crc, const unsigned char *p, size_t len)
{
	crc32c_small_init();
#ifdef HAVE_CRC32C_SSE42
	if (crc32c_use_sse42)
		return crc32c_sse42(crc, p, len);
#endif
	return crc32c_by_table(crc, p, len);
}

u32 crc32c_raw_table(u32 seed, const void *buf, size_t len)
{
	crc32c_small_init();
	return crc32c_by_table(seed, buf, len);
}

u32 crc32c_raw(u32 seed, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	u32 crc = seed;

	if (len < CRC32C_SMALL)
		return crc32c_small(crc, p, len);
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
	put_le64(out, xxhash_api.XXH64(buf, len, 0));
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
	if (gcrypt_api.gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
		gcrypt_ready = 1;
		return;
	}
	if (!gcrypt_api.gcry_check_version(GCRYPT_VERSION))
		return;
	gcrypt_api.gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
	gcrypt_api.gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	gcrypt_ready = 1;
}

static int csum_gcrypt(int md_algo, const void *buf, size_t len,
		       unsigned char *out)
{
	static const unsigned char empty;
	gcry_buffer_t iov = { 0 };

	if (dynlib_load(&dynlib_gcrypt, NULL))
		return -ENOSYS;
	pthread_once(&gcrypt_once, gcrypt_init);
	if (!gcrypt_ready)
		return -EIO;
	/* Never let the library write past our fixed-size output. */
	if (gcrypt_api.gcry_md_get_algo_dlen(md_algo) > CSUM_MAX_SIZE)
		return -EIO;

	iov.data = (void *)(buf ? buf : &empty);
	iov.len = len;
	iov.size = len;
	/* Unlike gcry_md_hash_buffer(), this reports errors (e.g. FIPS). */
	if (gcrypt_api.gcry_md_hash_buffers(md_algo, 0, out, &iov, 1))
		return -EIO;
	return 0;
}

const char *csum_algo_unavailable(enum csum_algo algo)
{
	const char *why = NULL;

	if (algo == CSUM_ALGO_XXHASH64)
		dynlib_load(&dynlib_xxhash, &why);
	else if (algo == CSUM_ALGO_SHA256 || algo == CSUM_ALGO_BLAKE2B_256)
		dynlib_load(&dynlib_gcrypt, &why);
	return why;
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
		ret = dynlib_load(&dynlib_xxhash, NULL);
		if (!ret)
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
