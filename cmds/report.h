/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_CMDS_REPORT_H
#define BTRFS_SPACE_CMDS_REPORT_H

#include "common/format-output.h"
#include "common/runs.h"
#include "kernel-shared/report.h"
#include "kernel-shared/summary.h"
#include "kernel-shared/volumes.h"

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
/* A chunk as the forecast prints it (keys of formulas.md section 21) */
void print_chunk(struct fmt_ctx *fctx, const char *key, const char *label,
		 const struct btrfs_chunk_map *map);
/* A run of chunks (section 21.11), or with --list-chunks each of its chunks */
void print_run(struct fmt_ctx *fctx, const struct btrfs_chunk_run *run);
void print_run_chunks(struct fmt_ctx *fctx, const struct btrfs_chunk_run *run);
/* A run as a row of a table (fmt_table_start()): text as `chunks` prints it */
void print_run_row(struct fmt_ctx *fctx, const struct btrfs_chunk_run *run);
typedef void (*print_item_fn)(struct fmt_ctx *fctx, const void *item);
/* A list of items with a logical start as runs, under "KEY_runs" (section 21.11) */
void print_item_runs(struct fmt_ctx *fctx, const char *key, const char *label,
		     const void *items, u32 nr, size_t size, size_t start_off,
		     item_same_fn same, print_item_fn print_item);
/*
 * A list of logical starts: each, or (@each false) as runs under
 * "KEY_runs" (section 21.11)
 */
void print_u64_runs(struct fmt_ctx *fctx, const char *key, const char *label,
		    const u64 *v, u32 nr, bool each);
/* chunks, block-groups: runs and per-type totals, or (@each) every item */
void print_chunk_list(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info, bool each);
void print_block_group_list(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
			    bool each);

#endif
