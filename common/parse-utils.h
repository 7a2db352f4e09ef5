/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_PARSE_UTILS_H
#define BTRFS_SPACE_PARSE_UTILS_H

#include "common/types.h"

/* "300M", "1.5G" is refused: whole numbers with an optional k/m/g/t/p/e (base 1024) */
int parse_size(const char *str, u64 *size);
int parse_u64(const char *str, u64 *value);

#endif
