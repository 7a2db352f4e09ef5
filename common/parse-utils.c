// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include "common/parse-utils.h"

int parse_u64(const char *str, u64 *value)
{
	char *end;
	unsigned long long v;

	if (!str || !isdigit((unsigned char)*str))
		return -EINVAL;
	errno = 0;
	v = strtoull(str, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*value = v;
	return 0;
}

int parse_size(const char *str, u64 *size)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!str || !isdigit((unsigned char)*str))
		return -EINVAL;
	errno = 0;
	v = strtoull(str, &end, 10);
	if (errno)
		return -EINVAL;
	switch (tolower((unsigned char)*end)) {
	case 'e': shift += 10; /* fall through */
	case 'p': shift += 10; /* fall through */
	case 't': shift += 10; /* fall through */
	case 'g': shift += 10; /* fall through */
	case 'm': shift += 10; /* fall through */
	case 'k': shift += 10; end++; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (*end == 'i' && *(end + 1) == 'B')
		end += 2;
	else if (*end == 'B' && shift)
		end++;
	if (*end || (shift && v > (~0ULL >> shift)))
		return -EINVAL;
	*size = (u64)v << shift;
	return 0;
}
