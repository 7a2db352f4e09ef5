// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <string.h>
#include "common/uuid-text.h"

/* where the dashes go: before bytes 4, 6, 8 and 10 */
static bool dash_before(unsigned int byte)
{
	return byte == 4 || byte == 6 || byte == 8 || byte == 10;
}

void uuid_text(const u8 uuid[16], char out[UUID_TEXT_SIZE])
{
	static const char hex[] = "0123456789abcdef";
	unsigned int i;
	char *p = out;

	for (i = 0; i < 16; i++) {
		if (dash_before(i))
			*p++ = '-';
		*p++ = hex[uuid[i] >> 4];
		*p++ = hex[uuid[i] & 0xf];
	}
	*p = '\0';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int uuid_from_text(const char *in, u8 uuid[16])
{
	unsigned int i;

	if (strlen(in) != UUID_TEXT_SIZE - 1)
		return -1;
	for (i = 0; i < 16; i++) {
		int hi, lo;

		if (dash_before(i) && *in++ != '-')
			return -1;
		hi = hex_digit(in[0]);
		lo = hex_digit(in[1]);
		if (hi < 0 || lo < 0)
			return -1;
		uuid[i] = hi << 4 | lo;
		in += 2;
	}
	return 0;
}
