/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel models the unit tables' rows name by version */
#ifndef BTRFS_SPACE_UNIT_KERNEL_MODEL_H
#define BTRFS_SPACE_UNIT_KERNEL_MODEL_H

#include "kernel-shared/kernel-version.h"

/* The model of @version ("6.18"); a version that does not parse fails a check */
struct btrfs_kernel_model unit_kernel_model(const char *version);

#endif
