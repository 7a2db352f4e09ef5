// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of common/checksum: known vectors for every algorithm, and
 * optionally the superblock checksum of a real btrfs image.
 *
 * Usage: test-checksum [IMAGE]
 *
 * The expected digests were checked with independent tools (python3
 * hashlib, a bitwise CRC-32C, a pure-python XXH64 and xxhsum), not with
 * this code.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <isa-l/crc.h>

#include "tests/unit/unit-test.h"
#include "common/checksum.h"
#include "common/types.h"


static void to_hex(const unsigned char *p, size_t len, char *hex)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", p[i]);
	hex[2 * len] = '\0';
}

/*
 * Compute and compare the whole CSUM_MAX_SIZE output as hex: the digest
 * in on-disk byte order followed by zeros.  The output is pre-filled with
 * garbage to prove the zero fill.
 */
static void check_vector(enum csum_algo algo, const char *what,
			 const void *buf, size_t len, const char *want_digest)
{
	unsigned char out[CSUM_MAX_SIZE];
	char want[2 * CSUM_MAX_SIZE + 1];
	char got[2 * CSUM_MAX_SIZE + 1];
	int ret;

	memset(want, '0', 2 * CSUM_MAX_SIZE);
	want[2 * CSUM_MAX_SIZE] = '\0';
	memcpy(want, want_digest, strlen(want_digest));

	memset(out, 0xa5, sizeof(out));
	ret = csum_compute(algo, buf, len, out);
	to_hex(out, sizeof(out), got);
	check(ret == 0 && !strcmp(got, want), "%s(%s) = %s%s%s",
	      csum_algo_name(algo), what, want_digest,
	      ret || strcmp(got, want) ? ", got " : "",
	      ret || strcmp(got, want) ? got : "");
}

static void test_vectors(void)
{
	static const char digits[] = "123456789";
	unsigned char pattern[1280];
	size_t i;

	/* 1280 bytes: long enough for the SIMD and 32-byte-stripe paths. */
	for (i = 0; i < sizeof(pattern); i++)
		pattern[i] = (unsigned char)i;

	/* CRC-32C 0xe3069283 stored little-endian. */
	check_vector(CSUM_ALGO_CRC32C, "\"123456789\"", digits, 9, "839206e3");
	check_vector(CSUM_ALGO_CRC32C, "\"\"", "", 0, "00000000");
	check_vector(CSUM_ALGO_CRC32C, "NULL, 0", NULL, 0, "00000000");
	check_vector(CSUM_ALGO_CRC32C, "0..255 x5", pattern, sizeof(pattern),
		     "982cb623");

	/* XXH64 0xef46db3751d8e999 etc., stored little-endian. */
	check_vector(CSUM_ALGO_XXHASH64, "\"\"", "", 0, "99e9d85137db46ef");
	check_vector(CSUM_ALGO_XXHASH64, "\"abc\"", "abc", 3,
		     "990977adf52cbc44");
	check_vector(CSUM_ALGO_XXHASH64, "\"123456789\"", digits, 9,
		     "83aee640db41b88c");
	check_vector(CSUM_ALGO_XXHASH64, "0..255 x5", pattern, sizeof(pattern),
		     "54a33879ad84c1af");

	check_vector(CSUM_ALGO_SHA256, "\"abc\"", "abc", 3,
		     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_vector(CSUM_ALGO_SHA256, "\"\"", "", 0,
		     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check_vector(CSUM_ALGO_SHA256, "0..255 x5", pattern, sizeof(pattern),
		     "d414b085826eb06778483ba35564dc849e643359f69ed9747878ba6e54985bed");

	check_vector(CSUM_ALGO_BLAKE2B_256, "\"abc\"", "abc", 3,
		     "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319");
	check_vector(CSUM_ALGO_BLAKE2B_256, "\"\"", "", 0,
		     "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
	check_vector(CSUM_ALGO_BLAKE2B_256, "0..255 x5", pattern,
		     sizeof(pattern),
		     "82628cbfc9689e234b0923a531f4578fe2e7138a03e2f81ed6cde97517336650");
}

/*
 * ISA-L takes an int length, so buffers past 2 GiB go through in pieces.
 * Anonymous zero pages cost no memory; the expected CRC of that many zero
 * bytes was worked out independently by GF(2) matrix powers in python.
 */
static void test_crc32c_huge(void)
{
	const size_t len = (5ULL << 29) + 12345;
	unsigned char out[CSUM_MAX_SIZE];
	void *zeros;

	zeros = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_NORESERVE, -1, 0);
	if (zeros == MAP_FAILED) {
		check(1, "crc32c over %zu zero bytes # skip: no address space",
		      len);
		return;
	}
	memset(out, 0xa5, sizeof(out));
	check(csum_compute(CSUM_ALGO_CRC32C, zeros, len, out) == 0 &&
	      out[0] == 0x38 && out[1] == 0xf7 && out[2] == 0x84 &&
	      out[3] == 0xb4, "crc32c over %zu zero bytes = b484f738", len);
	munmap(zeros, len);
}

/*
 * Short buffers go through a table instead of ISA-L: both must give the
 * same value for every length around the switch, any alignment and seed.
 */
static void test_crc32c_small(void)
{
	static const u32 seeds[] = { 0, ~0U, 1, 0x12345678 };
	unsigned char buf[160];
	size_t i, len, off;
	int bad = 0;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		for (off = 0; off < 8; off++)
			for (len = 0; len + off <= 150; len++)
				if (crc32c_raw(seeds[i], buf + off, len) !=
				    crc32_iscsi(buf + off, (int)len, seeds[i]) ||
				    crc32c_raw_table(seeds[i], buf + off, len) !=
				    crc32_iscsi(buf + off, (int)len, seeds[i]))
					bad++;
	check(bad == 0, "crc32c_raw and its table equal ISA-L for lengths 0..150 (%d differ)", bad);
}

/*
 * One little-endian u64 (the pieces of the data ref hash): crc32c_u64()
 * and, where the CPU has it, the crc32 instruction equal ISA-L.
 */
#ifdef CRC32C_HAVE_INSN
__attribute__((target("sse4.2")))
static u32 u64_by_insn(u32 seed, u64 v)
{
	return crc32c_u64_insn(seed, v);
}
#endif

static void test_crc32c_u64(void)
{
	static const u32 seeds[] = { 0, ~0U, 1, 0x12345678 };
	u64 v = 0x0123456789abcdefULL;
	int i, k, bad = 0, bad_insn = 0;

	for (k = 0; k < 64; k++, v = v * 6364136223846793005ULL + 1442695040888963407ULL) {
		for (i = 0; i < 4; i++) {
			unsigned char le[8];
			u32 want;
			int b;

			for (b = 0; b < 8; b++)
				le[b] = (unsigned char)(v >> (8 * b));
			want = crc32_iscsi(le, 8, seeds[i]);
			bad += crc32c_u64(seeds[i], v) != want;
#ifdef CRC32C_HAVE_INSN
			if (crc32c_have_insn())
				bad_insn += u64_by_insn(seeds[i], v) != want;
#endif
		}
	}
	check(bad == 0, "crc32c_u64 equals ISA-L on 256 values (%d differ)", bad);
	check(bad_insn == 0, "the crc32 instruction equals ISA-L on 256 values (%d differ%s)",
	      bad_insn, crc32c_have_insn() ? "" : "; no SSE4.2 here, not run");
}

static void test_algo_table(void)
{
	static const struct {
		enum csum_algo algo;
		size_t size;
		const char *name;
	} algos[] = {
		{ CSUM_ALGO_CRC32C, 4, "crc32c" },
		{ CSUM_ALGO_XXHASH64, 8, "xxhash64" },
		{ CSUM_ALGO_SHA256, 32, "sha256" },
		{ CSUM_ALGO_BLAKE2B_256, 32, "blake2b" },
	};
	unsigned char out[CSUM_MAX_SIZE];
	size_t i;

	for (i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
		check(csum_algo_valid(algos[i].algo), "algo %d is valid",
		      algos[i].algo);
		check(csum_algo_size(algos[i].algo) == algos[i].size,
		      "algo %d size is %zu", algos[i].algo, algos[i].size);
		check(!strcmp(csum_algo_name(algos[i].algo), algos[i].name),
		      "algo %d name is %s", algos[i].algo, algos[i].name);
	}
	check(!csum_algo_valid(4), "algo 4 is not valid");
	check(!csum_algo_valid(0xffff), "algo 0xffff is not valid");
	check(!csum_algo_valid((unsigned int)-1), "algo -1 is not valid");
	check(csum_algo_size(4) == 0, "algo 4 has size 0");
	check(!strcmp(csum_algo_name(4), "unknown"), "algo 4 is named unknown");
	check(csum_compute(4, "abc", 3, out) == -EINVAL,
	      "csum_compute rejects algo 4 with -EINVAL");
	check(csum_compute(CSUM_ALGO_SHA256, NULL, 3, out) == -EINVAL,
	      "csum_compute rejects NULL buffer with length 3");
}

/*
 * The only two facts about btrfs this test relies on: the primary
 * superblock is 4096 bytes at byte 65536 of the device, its checksum
 * occupies the first 32 bytes and covers the rest of the block, and the
 * checksum type is a little-endian u16 at byte 196 of the superblock.
 */
#define SB_OFFSET	65536
#define SB_SIZE		4096
#define SB_CSUM_TYPE	196

static void test_image(const char *path)
{
	unsigned char sb[SB_SIZE];
	unsigned char out[CSUM_MAX_SIZE];
	unsigned int type;
	size_t size;
	ssize_t got;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		check(0, "open image %s: %s", path, strerror(errno));
		return;
	}
	got = pread(fd, sb, sizeof(sb), SB_OFFSET);
	close(fd);
	if (got != (ssize_t)sizeof(sb)) {
		check(0, "read superblock of %s", path);
		return;
	}

	type = sb[SB_CSUM_TYPE] | (sb[SB_CSUM_TYPE + 1] << 8);
	check(csum_algo_valid(type), "%s: csum_type %u is known", path, type);
	if (!csum_algo_valid(type))
		return;

	size = csum_algo_size(type);
	check(csum_compute(type, sb + CSUM_MAX_SIZE, SB_SIZE - CSUM_MAX_SIZE,
			   out) == 0 && !memcmp(out, sb, size),
	      "%s: superblock %s checksum matches", path, csum_algo_name(type));

	/* A match must not be vacuous: one flipped bit has to break it. */
	sb[SB_SIZE - 1] ^= 1;
	check(csum_compute(type, sb + CSUM_MAX_SIZE, SB_SIZE - CSUM_MAX_SIZE,
			   out) == 0 && memcmp(out, sb, size),
	      "%s: flipped bit changes the %s checksum", path,
	      csum_algo_name(type));
}

int main(int argc, char **argv)
{
	int i;

	test_vectors();
	test_crc32c_huge();
	test_crc32c_small();
	test_crc32c_u64();
	test_algo_table();
	for (i = 1; i < argc; i++)
		test_image(argv[i]);

	return unit_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
