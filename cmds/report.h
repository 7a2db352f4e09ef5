/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_CMDS_REPORT_H
#define BTRFS_SPACE_CMDS_REPORT_H

#include "common/format-output.h"
#include "kernel-shared/report.h"
#include "kernel-shared/summary.h"

/* The printers: every section is written once, for text and JSON alike */
void print_mode(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info);
/* The refusal's record, for --format json */
void print_error_record(struct fmt_ctx *fctx, const struct btrfs_error *err);
void print_filesystem_section(struct fmt_ctx *fctx, const struct space_report *r);
void print_devices_section(struct fmt_ctx *fctx, const struct space_report *r);
void print_space_info_section(struct fmt_ctx *fctx, const struct space_report *r);
void print_global_rsv_section(struct fmt_ctx *fctx, const struct space_report *r);
void print_log_replay_section(struct fmt_ctx *fctx, const struct space_report *r);
void print_block_groups_summary(struct fmt_ctx *fctx, const struct space_report *r);
void print_io_section(struct fmt_ctx *fctx, const struct space_report *r);
void print_kernel_section(struct fmt_ctx *fctx, const struct space_report *r);
void print_global_rsv_detail(struct fmt_ctx *fctx, const struct space_report *r);
void print_overcommit_section(struct fmt_ctx *fctx, const struct space_report *r);
void print_preempt_section(struct fmt_ctx *fctx, const struct space_report *r);
void print_summary_section(struct fmt_ctx *fctx, const struct space_summary *s);
void print_summary_metrics(struct fmt_ctx *fctx, const struct space_summary *s,
			   const struct space_report *r);
void print_summary_nagios(struct fmt_ctx *fctx, const struct space_summary *s);
void print_gate(struct fmt_ctx *fctx, const char *option, const char *what,
		const char *limit, const char *figure, bool failed);
void print_chunk_list(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info);
void print_block_group_list(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info);

#endif
