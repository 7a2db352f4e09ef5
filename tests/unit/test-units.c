// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of common/units: size formatting and option parsing.
 *
 * The "progs" cases are pairs of raw byte counts and the text that
 * `btrfs filesystem show` of btrfs-progs v6.2 printed for them with the
 * same options; they pin down its single-precision rounding.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit-test.h"
#include "common/units.h"


static void check_size(u64 size, unsigned int mode, const char *want)
{
	char buf[UNITS_BUF_LEN];
	const char *got;

	memset(buf, 'x', sizeof(buf));
	got = pretty_size_mode(size, mode, buf, sizeof(buf));
	check(got == buf && !strcmp(got, want),
	      "%llu in mode 0x%x is \"%s\"%s%s%s", (unsigned long long)size,
	      mode, want, strcmp(got, want) ? ", got \"" : "",
	      strcmp(got, want) ? got : "", strcmp(got, want) ? "\"" : "");
}

#define KIB (1ULL << 10)
#define MIB (1ULL << 20)
#define GIB (1ULL << 30)
#define TIB (1ULL << 40)
#define PIB (1ULL << 50)
#define EIB (1ULL << 60)

static void test_raw(void)
{
	check_size(0, UNITS_RAW, "0");
	check_size(1536, UNITS_RAW, "1536");
	check_size(UINT64_MAX, UNITS_RAW, "18446744073709551615");
	/* A fixed unit does not change raw output. */
	check_size(1536, UNITS_RAW | UNITS_KBYTES, "1536");
}

static void test_binary(void)
{
	check_size(0, UNITS_BINARY, "0.00B");
	check_size(1, UNITS_BINARY, "1.00B");
	check_size(1023, UNITS_BINARY, "1023.00B");
	check_size(KIB, UNITS_BINARY, "1.00KiB");
	check_size(1536, UNITS_BINARY, "1.50KiB");
	check_size(GIB + GIB / 2, UNITS_BINARY, "1.50GiB");
	/* Bytes below the next smaller unit (MiB) do not count. */
	check_size(GIB + GIB / 2 + 1000, UNITS_BINARY, "1.50GiB");
	/* 1023.999 KiB rounds up to 1024.00KiB without moving to MiB. */
	check_size(MIB - 1, UNITS_BINARY, "1024.00KiB");
	check_size(TIB, UNITS_BINARY, "1.00TiB");
	check_size(PIB * 3, UNITS_BINARY, "3.00PiB");
	check_size(EIB, UNITS_BINARY, "1.00EiB");
	check_size(UINT64_MAX, UNITS_BINARY, "16.00EiB");
	check_size(0, UNITS_DEFAULT, "0.00B");
}

static void test_decimal(void)
{
	check_size(0, UNITS_DECIMAL, "0.00B");
	check_size(999, UNITS_DECIMAL, "999.00B");
	check_size(1000, UNITS_DECIMAL, "1.00kB");
	check_size(1500000, UNITS_DECIMAL, "1.50MB");
	check_size(1000000000000ULL, UNITS_DECIMAL, "1.00TB");
	check_size(UINT64_MAX, UNITS_DECIMAL, "18.45EB");
}

static void test_fixed(void)
{
	check_size(GIB + GIB / 2, UNITS_BINARY | UNITS_MBYTES, "1536.00MiB");
	check_size(512, UNITS_BINARY | UNITS_KBYTES, "0.50KiB");
	check_size(GIB, UNITS_BINARY | UNITS_TBYTES, "0.00TiB");
	check_size(0, UNITS_BINARY | UNITS_GBYTES, "0.00GiB");
	check_size(1500, UNITS_DECIMAL | UNITS_KBYTES, "1.50kB");
	check_size(2500000000ULL, UNITS_DECIMAL | UNITS_GBYTES, "2.50GB");
	check_size(UINT64_MAX, UNITS_BINARY | UNITS_KBYTES,
		   "18014398509481984.00KiB");
}

static void test_progs(void)
{
	static const struct {
		u64 size;
		unsigned int mode;
		const char *text;
	} cases[] = {
		{ 147456, UNITS_BINARY, "144.00KiB" },
		{ 147456, UNITS_DECIMAL, "147.46kB" },
		{ 147456, UNITS_BINARY | UNITS_MBYTES, "0.14MiB" },
		{ 147456, UNITS_DECIMAL | UNITS_MBYTES, "0.15MB" },
		{ 132513792, UNITS_BINARY, "126.38MiB" },
		{ 132513792, UNITS_DECIMAL | UNITS_KBYTES, "132513.80kB" },
		{ 1073741824, UNITS_DECIMAL, "1.07GB" },
		{ 1073741824, UNITS_DECIMAL | UNITS_KBYTES, "1073741.88kB" },
		{ 1073741824, UNITS_DECIMAL | UNITS_MBYTES, "1073.74MB" },
		{ 1073741824, UNITS_BINARY | UNITS_KBYTES, "1048576.00KiB" },
		{ 123453440, UNITS_BINARY, "117.73MiB" },
		{ 123453440, UNITS_DECIMAL | UNITS_KBYTES, "123453.44kB" },
		{ 92274688, UNITS_DECIMAL | UNITS_KBYTES, "92274.69kB" },
		{ 1234567168, UNITS_BINARY, "1.15GiB" },
		{ 1234567168, UNITS_BINARY | UNITS_MBYTES, "1177.38MiB" },
		{ 1234567168, UNITS_DECIMAL | UNITS_KBYTES, "1234567.12kB" },
		{ 148504576, UNITS_BINARY, "141.62MiB" },
		{ 148504576, UNITS_DECIMAL | UNITS_KBYTES, "148504.58kB" },
		{ 98765430784ULL, UNITS_BINARY, "91.98GiB" },
		{ 98765430784ULL, UNITS_BINARY | UNITS_MBYTES, "94190.05MiB" },
		{ 98765430784ULL, UNITS_BINARY | UNITS_TBYTES, "0.09TiB" },
		{ 98765430784ULL, UNITS_DECIMAL | UNITS_KBYTES,
		  "98765432.00kB" },
		{ 98765430784ULL, UNITS_DECIMAL | UNITS_GBYTES, "98.77GB" },
		{ 98765430784ULL, UNITS_DECIMAL | UNITS_TBYTES, "0.10TB" },
		{ 2172649472ULL, UNITS_BINARY, "2.02GiB" },
		{ 2172649472ULL, UNITS_DECIMAL | UNITS_KBYTES, "2172649.50kB" },
		{ 5000000000000ULL, UNITS_BINARY, "4.55TiB" },
		{ 5000000000000ULL, UNITS_DECIMAL, "5.00TB" },
		{ 5000000000000ULL, UNITS_BINARY | UNITS_KBYTES,
		  "4882812416.00KiB" },
		{ 5000000000000ULL, UNITS_BINARY | UNITS_MBYTES,
		  "4768371.50MiB" },
		{ 5000000000000ULL, UNITS_BINARY | UNITS_GBYTES, "4656.61GiB" },
		{ 5000000000000ULL, UNITS_DECIMAL | UNITS_KBYTES,
		  "5000000000.00kB" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_size(cases[i].size, cases[i].mode, cases[i].text);
}

static void test_buffer(void)
{
	char buf[8];
	const char *got;

	got = pretty_size_mode(GIB + GIB / 2, UNITS_BINARY, buf, 5);
	check(got == buf && !strcmp(buf, "1.50"),
	      "short buffer truncates to \"1.50\"");
	memset(buf, 'x', sizeof(buf));
	got = pretty_size_mode(1, UNITS_RAW, buf, 0);
	check(got == buf && buf[0] == 'x', "zero-length buffer is untouched");
	check(pretty_size_mode(1, UNITS_RAW, NULL, 8) == NULL,
	      "NULL buffer gives NULL");
	check(!strcmp(pretty_size_mode(1, 0, buf, sizeof(buf)), ""),
	      "mode 0 gives \"\"");
	check(!strcmp(pretty_size_mode(1, UNITS_KBYTES, buf, sizeof(buf)), ""),
	      "fixed unit without scale gives \"\"");
	check(!strcmp(pretty_size_mode(1, UNITS_BINARY | (5U << 8), buf,
				       sizeof(buf)), ""),
	      "fixed unit 5 gives \"\"");
	check(!strcmp(pretty_size_mode(1, UNITS_BINARY | 0x10000U, buf,
				       sizeof(buf)), ""),
	      "unknown mode bits give \"\"");
}

/* Apply a NULL-terminated list of options to @start, all must parse. */
static unsigned int parse_all(unsigned int start, const char *const *opts)
{
	unsigned int mode = start;

	for (; *opts; opts++)
		if (!units_parse_option(*opts, &mode))
			return 0xdeadU;
	return mode;
}

static void check_parse(const char *desc, unsigned int start,
			const char *const *opts, unsigned int want)
{
	unsigned int got = parse_all(start, opts);

	check(got == want, "options %s give 0x%x (got 0x%x)", desc, want, got);
}

#define OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_parse_single(void)
{
	static const struct {
		const char *opt;
		unsigned int want;
	} single[] = {
		{ "-b", UNITS_RAW },
		{ "--raw", UNITS_RAW },
		{ "-h", UNITS_BINARY },
		{ "--human-readable", UNITS_BINARY },
		{ "-H", UNITS_DECIMAL },
		{ "--iec", UNITS_BINARY },
		{ "--si", UNITS_DECIMAL },
		{ "-k", UNITS_BINARY | UNITS_KBYTES },
		{ "--kbytes", UNITS_BINARY | UNITS_KBYTES },
		{ "-m", UNITS_BINARY | UNITS_MBYTES },
		{ "--mbytes", UNITS_BINARY | UNITS_MBYTES },
		{ "-g", UNITS_BINARY | UNITS_GBYTES },
		{ "--gbytes", UNITS_BINARY | UNITS_GBYTES },
		{ "-t", UNITS_BINARY | UNITS_TBYTES },
		{ "--tbytes", UNITS_BINARY | UNITS_TBYTES },
	};
	size_t i;

	for (i = 0; i < sizeof(single) / sizeof(single[0]); i++)
		check_parse(single[i].opt, UNITS_DEFAULT,
			    OPTS(single[i].opt), single[i].want);
}

static void test_parse_combined(void)
{
	static const char *const not_units[] = {
		"--kb", "-kb", "-K", "--RAW", "-s", "", "--",
	};
	unsigned int mode = UNITS_DECIMAL | UNITS_GBYTES;
	size_t i;

	check_parse("-k --si", UNITS_DEFAULT, OPTS("-k", "--si"),
		    UNITS_DECIMAL | UNITS_KBYTES);
	check_parse("--si -k", UNITS_DEFAULT, OPTS("--si", "-k"),
		    UNITS_DECIMAL | UNITS_KBYTES);
	check_parse("-H -m", UNITS_DEFAULT, OPTS("-H", "-m"),
		    UNITS_DECIMAL | UNITS_MBYTES);
	check_parse("-m --iec", UNITS_DECIMAL, OPTS("-m", "--iec"),
		    UNITS_BINARY | UNITS_MBYTES);
	check_parse("-g -t", UNITS_DEFAULT, OPTS("-g", "-t"),
		    UNITS_BINARY | UNITS_TBYTES);
	check_parse("-g -h", UNITS_DEFAULT, OPTS("-g", "-h"), UNITS_BINARY);
	check_parse("-k -H", UNITS_DEFAULT, OPTS("-k", "-H"), UNITS_DECIMAL);
	check_parse("-m -b", UNITS_DEFAULT, OPTS("-m", "-b"), UNITS_RAW);
	/* As btrfs-progs: a fixed unit leaves raw mode raw ... */
	check_parse("--raw -k", UNITS_DEFAULT, OPTS("--raw", "-k"),
		    UNITS_RAW | UNITS_KBYTES);
	/* ... until a base is chosen again. */
	check_parse("--raw -k --si", UNITS_DEFAULT, OPTS("--raw", "-k", "--si"),
		    UNITS_DECIMAL | UNITS_KBYTES);
	check_parse("--raw --iec", UNITS_DEFAULT, OPTS("--raw", "--iec"),
		    UNITS_BINARY);
	check_parse("-k from mode 0", 0, OPTS("-k"),
		    UNITS_BINARY | UNITS_KBYTES);

	check(units_parse_option("-x", &mode) == 0 &&
	      mode == (UNITS_DECIMAL | UNITS_GBYTES),
	      "\"-x\" is not a units option and keeps the mode");
	for (i = 0; i < sizeof(not_units) / sizeof(not_units[0]); i++)
		check(units_parse_option(not_units[i], &mode) == 0,
		      "\"%s\" is not a units option", not_units[i]);
	check(units_parse_option(NULL, &mode) == 0,
	      "NULL is not a units option");
	check(units_parse_option("-k", NULL) == 0, "NULL mode is refused");
	check(mode == (UNITS_DECIMAL | UNITS_GBYTES),
	      "non-options left the mode alone");
}

int main(void)
{
	test_raw();
	test_binary();
	test_decimal();
	test_fixed();
	test_progs();
	test_buffer();
	test_parse_single();
	test_parse_combined();

	return unit_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
