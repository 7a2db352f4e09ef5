// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of common/uuid-text: the text of a UUID is libuuid's
 * uuid_unparse() form (the vectors were written by python3's uuid module,
 * str(uuid.UUID(bytes=...))), and text that is not exactly that form is
 * refused as uuid_parse() refuses it.
 */

#include <stdlib.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "common/uuid-text.h"

static const u8 bytes[16] = {
	0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
	0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
};
static const char text[] = "00112233-4455-6677-8899-aabbccddeeff";

static void test_text(void)
{
	char out[UUID_TEXT_SIZE];

	memset(out, 'x', sizeof(out));
	uuid_text(bytes, out);
	check(strcmp(out, text) == 0, "uuid_text: %s, want %s", out, text);
}

static void test_from_text(void)
{
	static const char *const bad[] = {
		"", "00112233-4455-6677-8899-aabbccddeef",
		"00112233-4455-6677-8899-aabbccddeeff0",
		"001122334-455-6677-8899-aabbccddeeff",
		"00112233-4455-6677-8899_aabbccddeeff",
		"00112233-4455-6677-8899-aabbccddeegf",
		"0011223344556677-8899-aabbccddeeff00",
	};
	u8 got[16];
	unsigned int i;

	check(uuid_from_text(text, got) == 0 && memcmp(got, bytes, 16) == 0,
	      "uuid_from_text(%s)", text);
	check(uuid_from_text("00112233-4455-6677-8899-AABBCCDDEEFF", got) == 0 &&
	      memcmp(got, bytes, 16) == 0, "upper case accepted");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check(uuid_from_text(bad[i], got) == -1, "refused: \"%s\"", bad[i]);
}

int main(void)
{
	test_text();
	test_from_text();
	return unit_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
