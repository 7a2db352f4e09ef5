/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_CMDS_FORECAST_H
#define BTRFS_SPACE_CMDS_FORECAST_H

#include "common/format-output.h"
#include "kernel-shared/forecast.h"

/* The forecast object, printed by forecast and by inspect */
void print_forecast_section(struct fmt_ctx *fctx, const struct btrfs_forecast *fc);

#endif
