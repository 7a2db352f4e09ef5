// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs-space replay TRACE [DEV...]: a recorded trace of the btrfs events
 * re-evaluated per kernel version (kernel-shared/replay.c), the trace read
 * as a stream (common/trace-parse.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmds/commands.h"
#include "cmds/driver.h"
#include "common/help.h"
#include "common/parse-utils.h"
#include "common/output-file.h"
#include "common/progress.h"
#include "common/svg.h"
#include "common/units.h"
#include "common/uuid-text.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/replay.h"
#include "kernel-shared/space-info.h"

static const char * const cmd_replay_usage[] = {
	"btrfs-space replay [options] <trace|-> [<device|image>...]",
	"Re-evaluate the decisions of a recorded btrfs trace per kernel version",
	"",
	"The trace is tracefs text (the 'trace' or 'trace_pipe' file of an instance,",
	"'trace-cmd report', or 'perf script' of 'perf record -e btrfs:...');",
	"contrib/btrfs-space-capture.sh records one.",
	"Part 1, preemptive flushing, needs btrfs_done_preemptive_reclaim.",
	"With update_bytes_may_use (and update_bytes_pinned) part 1 also evaluates every reservation.",
	"Part 2, delalloc list locking, needs btrfs_set_extent_bit and btrfs_clear_extent_bit.",
	"Part 3, delayed refs of dropped data extents, needs add_delayed_ref_head and run_delayed_ref_head.",
	"Part 4, metadata over-commit, needs btrfs_done_preemptive_reclaim and update_bytes_may_use.",
	"",
	"--part N           replay only part N (1 to 4; may be repeated)",
	"--kernel VERSION   a kernel to re-evaluate with (may be repeated; default " BTRFS_REPLAY_KERNELS_STR ")",
	"--recorded-kernel VERSION  the kernel that recorded the trace (default: the capture marker's, else " BTRFS_DEFAULT_KERNEL_STR ")",
	"--fsid UUID        the filesystem to replay (default: the capture marker's or the first seen)",
	"--metadata-copies N  copies of the metadata profile (DUP 2, single 1; default: image or marker)",
	"--total-rw-bytes SIZE  the devices' total size (default: image or marker)",
	"--data-chunk-size SIZE  the data space info's chunk size (default: image, marker, or 10G)",
	"--nr-cpus N        the recording machine's nr_cpu_ids (per-CPU counter error)",
	"--sectorsize N, --nodesize N  of the filesystem (default: image or marker)",
	"--csum-size N      bytes of a checksum: 4 crc32c, 8 xxhash64, 32 sha256/blake2b (part 3)",
	"--free-space-tree 0|1  whether the filesystem has the free-space tree (part 3)",
	"--svg FILE         part 1 as an SVG timeline (may_use, used, the threshold at the clamp",
	"                   per kernel, the triggers, where each kernel flushes); - for standard output",
	"",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

enum {
	OPT_PART = GETOPT_VAL_EXTRA,
	OPT_KERNEL,
	OPT_RECORDED,
	OPT_FSID,
	OPT_COPIES,
	OPT_TOTAL_RW,
	OPT_DATA_CHUNK,
	OPT_NR_CPUS,
	OPT_SECTORSIZE,
	OPT_NODESIZE,
	OPT_SVG,
	OPT_CSUM_SIZE,
	OPT_FST,
};

static const struct option replay_longopts[] = {
	{ "part", required_argument, NULL, OPT_PART },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "recorded-kernel", required_argument, NULL, OPT_RECORDED },
	{ "fsid", required_argument, NULL, OPT_FSID },
	{ "metadata-copies", required_argument, NULL, OPT_COPIES },
	{ "total-rw-bytes", required_argument, NULL, OPT_TOTAL_RW },
	{ "data-chunk-size", required_argument, NULL, OPT_DATA_CHUNK },
	{ "nr-cpus", required_argument, NULL, OPT_NR_CPUS },
	{ "sectorsize", required_argument, NULL, OPT_SECTORSIZE },
	{ "nodesize", required_argument, NULL, OPT_NODESIZE },
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "csum-size", required_argument, NULL, OPT_CSUM_SIZE },
	{ "free-space-tree", required_argument, NULL, OPT_FST },
	{ NULL, 0, NULL, 0 }
};

static const struct cmd_option_expect replay_option_expect[] = {
	{ OPT_PART, "1, 2, 3 or 4" },
	{ OPT_KERNEL, BTRFS_KERNEL_RANGE_STR ", at most 8 of them" },
	{ OPT_RECORDED, "a kernel version from " BTRFS_MIN_KERNEL_STR " to " BTRFS_MAX_KERNEL_STR ".y (the releases modelled)" },
	{ OPT_FSID, "a UUID such as 01234567-89ab-cdef-0123-456789abcdef" },
	{ OPT_COPIES, "1 to 4" },
	{ OPT_TOTAL_RW, "a size such as 16G" },
	{ OPT_DATA_CHUNK, "a size such as 1G" },
	{ OPT_NR_CPUS, "1 to 65536" },
	{ OPT_SECTORSIZE, "a power of two from 4096 to 65536" },
	{ OPT_NODESIZE, "a power of two from 4096 to 65536" },
	{ OPT_SVG, "a file to write, or - for standard output" },
	{ OPT_CSUM_SIZE, "4, 8 or 32" },
	{ OPT_FST, "0 or 1" },
	{ 0, NULL }
};

struct replay_args {
	const char *trace;	/* the path, or "-" */
	char **inputs;		/* the trace, then the devices */
	int nr_inputs;
	struct btrfs_replay *r;	/* the report, from replay_report() to replay_release() */
	u32 printed;		/* bit N: part N printed */
	u32 parts;		/* bit N: part N asked for; 0: every part the trace allows */
	u32 nr_kernels;
	u32 kernels[REPLAY_MAX_KERNELS];
	struct btrfs_replay_static st;	/* from the options */
	char fsid[37];
	const char *svg_path;
};

static int parse_block_size(const char *arg, u32 *out)
{
	u64 v;

	if (parse_u64(arg, &v) || v < 4096 || v > 65536 || (v & (v - 1)))
		return -EINVAL;
	*out = v;
	return 0;
}

static int replay_ctx_option(int opt, const char *arg, void *ctx)
{
	struct replay_args *a = ctx;
	u8 uu[16];
	u64 v;

	switch (opt) {
	case OPT_PART:
		if (strlen(arg) != 1 || arg[0] < '1' || arg[0] > '4')
			return -EINVAL;
		a->parts |= 1U << (arg[0] - '0');
		return 0;
	case OPT_KERNEL:
		if (a->nr_kernels == REPLAY_MAX_KERNELS)
			return -EINVAL;
		return btrfs_parse_model_kernel(arg, &a->kernels[a->nr_kernels++]);
	case OPT_RECORDED:
		return btrfs_parse_model_kernel(arg, &a->st.recorded_version);
	case OPT_FSID:
		if (strlen(arg) != 36 || uuid_from_text(arg, uu))
			return -EINVAL;
		uuid_text(uu, a->fsid);
		return 0;
	case OPT_COPIES:
		if (parse_u64(arg, &v) || v < 1 || v > 4)
			return -EINVAL;
		a->st.profile_copies = v;
		a->st.have_profile = true;
		return 0;
	case OPT_TOTAL_RW:
		if (parse_size(arg, &a->st.total_rw_bytes))
			return -EINVAL;
		a->st.have_total_rw = true;
		return 0;
	case OPT_DATA_CHUNK:
		return parse_size(arg, &a->st.data_chunk_size) ? -EINVAL : 0;
	case OPT_NR_CPUS:
		if (parse_u64(arg, &v) || v < 1 || v > 65536)
			return -EINVAL;
		a->st.nr_cpu_ids = v;
		return 0;
	case OPT_SECTORSIZE:
		return parse_block_size(arg, &a->st.sectorsize);
	case OPT_NODESIZE:
		return parse_block_size(arg, &a->st.nodesize);
	case OPT_CSUM_SIZE:
		if (parse_u64(arg, &v) || (v != 4 && v != 8 && v != 32))
			return -EINVAL;
		a->st.csum_size = v;
		return 0;
	case OPT_FST:
		if (strcmp(arg, "0") && strcmp(arg, "1"))
			return -EINVAL;
		a->st.free_space_tree = arg[0] - '0';
		return 0;
	case OPT_SVG:
		if (!arg[0])
			return -EINVAL;
		a->svg_path = arg;
		return 0;
	}
	return -EINVAL;
}

/* The image's static state where the options left it open */
static int static_from_image(struct btrfs_replay *r, struct btrfs_fs_info *fs_info)
{
	struct btrfs_kernel_model model;
	struct btrfs_reserve_state s;
	char fsid[37];

	/* Only the static fields are taken: profile, rw bytes, chunk size */
	btrfs_kernel_model(r->st.recorded_version ? r->st.recorded_version :
			   BTRFS_DEFAULT_KERNEL, &model);
	btrfs_reserve_state_from_fs(fs_info, &model, &s);
	uuid_text(fs_info->fsid, fsid);
	if (r->fsid[0] && strcmp(r->fsid, fsid)) {
		error("the image is filesystem %s, not %s", fsid, r->fsid);
		return 1;
	}
	strcpy(r->fsid, fsid);
	r->fsid_given = true;
	btrfs_replay_set_image_state(r, &s);
	if (!r->st.have_profile) {
		r->st.profile_copies = s.profile_copies;
		r->st.have_profile = true;
		r->st.source = "image";
	}
	if (!r->st.have_total_rw) {
		r->st.total_rw_bytes = s.total_rw_bytes;
		r->st.have_total_rw = true;
	}
	if (!r->st.data_chunk_size)
		r->st.data_chunk_size = s.data_chunk_size;
	if (!r->st.sectorsize)
		r->st.sectorsize = fs_info->sectorsize;
	if (!r->st.nodesize)
		r->st.nodesize = fs_info->nodesize;
	if (!r->st.csum_size)
		r->st.csum_size = fs_info->csum_size;
	if (r->st.free_space_tree < 0)
		r->st.free_space_tree = btrfs_fs_compat_ro(fs_info,
				BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE);
	return 0;
}

static int read_trace(struct btrfs_replay *r, FILE *fp, const char *path, u64 size)
{
	struct trace_reader rd;
	struct trace_event ev;
	struct progress prog;
	int ret;

	trace_reader_init(&rd, fp);
	progress_init(&prog, "reading the trace");
	while ((ret = trace_read_event(&rd, &ev)) > 0) {
		ret = btrfs_replay_event(r, &ev);
		if (ret) {
			progress_clear(&prog);
			error("%s: %s", path, r->err);
			return 1;
		}
		if ((rd.lineno & 0xffff) == 0)
			progress_update(&prog, rd.bytes, size);
	}
	progress_clear(&prog);
	if (ret < 0) {
		error("%s: %s", path, rd.err);
		return 1;
	}
	r->lines = rd.lineno;
	r->lost_events = rd.lost_events;
	if (rd.head_cut) {
		r->head_cut_lineno = 1;
		warning("%s: line 1 is not a trace line (%llu bytes, the capture began inside it): replayed from line 2",
			path, (unsigned long long)rd.head_cut_bytes);
	}
	if (rd.cut_lineno) {
		r->cut_lineno = rd.cut_lineno;
		warning("%s: line %llu has no end of line (%llu bytes, the capture was cut): replayed up to line %llu",
			path, (unsigned long long)rd.cut_lineno,
			(unsigned long long)rd.cut_bytes,
			(unsigned long long)rd.cut_lineno - 1);
	}
	return 0;
}

static void print_trace(struct fmt_ctx *f, const struct btrfs_replay *r, const char *path)
{
	char ver[32];

	fmt_group_start(f, "trace", "Trace");
	fmt_str(f, "path", "Trace", path);
	fmt_u64(f, "lines", "Lines", r->lines);
	fmt_str(f, "fsid", "Filesystem", r->fsid[0] ? r->fsid : "none");
	fmt_u64(f, "events", "Events of the filesystem", r->events);
	fmt_u64(f, "other_fs_events", "Events of other filesystems", r->other_fs_events);
	fmt_u64(f, "lost_events", "Events lost by the ring buffer", r->lost_events);
	fmt_u64(f, "cut_line", "Last line cut, not read (0: none)", r->cut_lineno);
	fmt_u64(f, "first_line_cut", "First line cut, not read (0: none)", r->head_cut_lineno);
	fmt_bool(f, "capture_marker", "Capture marker", r->have_marker);
	if (r->st.recorded_version) {
		fmt_str(f, "recorded_kernel", "Recorded by kernel",
			btrfs_kernel_version_str(r->st.recorded_version, ver, sizeof(ver)));
		fmt_bool(f, "recorded_kernel_assumed", "Recording kernel assumed", r->recorded_assumed);
	}
	if (r->st.have_profile) {
		fmt_u64(f, "metadata_copies", "Metadata profile copies", r->st.profile_copies);
		fmt_str(f, "static_source", "Static state from", r->st.source ? r->st.source : "options");
	}
	fmt_group_end(f);
}

/* ▁▂▃▄▅▆▇█ of used/threshold, full at the threshold, ! above it */
static void sparkline(const struct replay_preempt *p, char *buf, size_t len)
{
	static const char * const bars[] = { "_", ".", "-", "=", "+", "*", "#", "!" };
	u64 width = 1;
	u32 i, n;
	size_t used = 0;

	while (width * REPLAY_TIMELINE < p->states)
		width *= 2;
	n = (p->states + width - 1) / width;
	buf[0] = '\0';
	for (i = 0; i < n && i < REPLAY_TIMELINE && used + 2 < len; i++) {
		u32 pm = p->timeline_permille[i];
		u32 b = pm >= 1000 ? 7 : pm * 7 / 1000;

		buf[used++] = bars[b][0];
		buf[used] = '\0';
	}
}

static void print_disagreements(struct fmt_ctx *f, const struct replay_preempt *p)
{
	u32 i;

	fmt_array_start(f, "disagreements", "Disagreements");
	for (i = 0; i < p->nr_listed; i++) {
		const struct replay_disagreement *d = &p->listed[i];

		fmt_group_start(f, NULL, NULL);
		fmt_u64(f, "line", "line", d->lineno);
		fmt_seconds(f, "time", "time", d->ts_ns / 1e9);
		fmt_str(f, "branch", "branch", d->may_use_branch ? "may_use" : "delayed_rsv");
		fmt_u64(f, "clamp", "clamp", d->clamp);
		fmt_size(f, "used", "used", d->used);
		fmt_size(f, "thresh", "thresh", d->thresh);
		fmt_size(f, "over_by", "over_by", d->used - d->thresh);
		fmt_size(f, "bound", "bound", d->bound);
		fmt_str(f, "explanation", "explanation", btrfs_replay_explain_str(d->explain));
		fmt_group_end(f);
	}
	fmt_array_end(f);
}

/* Each kernel's reasons for flushing or not, one row each */
static void print_reasons(struct fmt_ctx *f, const struct btrfs_replay *r,
			  const struct replay_reasons *why)
{
	char ver[32];
	u32 i, k;

	fmt_array_start(f, "reasons", "Why, per kernel (need_preemptive_reclaim())");
	for (k = 0; k < r->nr_kernels; k++) {
		btrfs_kernel_version_str(r->kernels[k].version, ver, sizeof(ver));
		for (i = 0; i < REPLAY_MAX_REASONS && why[k].reason[i]; i++) {
			fmt_group_start(f, NULL, NULL);
			fmt_str(f, "kernel", "kernel", ver);
			fmt_str(f, "verdict", "verdict", why[k].verdict[i] ? "flush" : "no flush");
			fmt_u64(f, "count", "count", why[k].count[i]);
			fmt_str(f, "reason", "reason", why[k].reason[i]);
			fmt_group_end(f);
		}
	}
	fmt_array_end(f);
}

static void print_points(struct fmt_ctx *f, const struct btrfs_replay *r)
{
	const struct replay_points *pts = &r->points;
	char ver[32];
	u32 k;

	fmt_group_start(f, "reservations", "At reservations (update_bytes_may_use rises, worker idle)");
	fmt_u64(f, "points", "Decision points", pts->points);
	fmt_u64(f, "kernel_flush", "Followed by a preempt trigger", pts->kernel_flush);
	fmt_u64(f, "agree", "Agreeing with the kernel", pts->agree);
	if (pts->points)
		fmt_ratio(f, "agreement_percent", "Agreement %", 100.0 * pts->agree / pts->points);
	fmt_u64(f, "model_flush_kernel_no", "Model flush, kernel did not", pts->model_flush_kernel_no);
	fmt_u64(f, "model_no_kernel_flush", "Kernel flushed, model did not", pts->model_no_kernel_flush);
	if (pts->have_margin) {
		fmt_ratio(f, "trigger_margin_min_percent", "At triggers, (used - thresh) / thresh min %",
			  pts->margin_min_ppm / 10000.0);
		fmt_ratio(f, "trigger_margin_max_percent", "At triggers, (used - thresh) / thresh max %",
			  pts->margin_max_ppm / 10000.0);
		fmt_u64(f, "triggers_within_1_percent", "Triggers within 1 % of the threshold",
			pts->within_1pct);
	}
	fmt_u64(f, "before_first_state", "Rises before any recorded state", pts->no_anchor);
	fmt_bool(f, "image_anchor", "First state from the image", r->anchor_from_image);
	fmt_bool(f, "delalloc_followed", "delalloc_bytes followed (extent-bit events)",
		 pts->delalloc_followed);
	fmt_str(f, "inputs", "Inputs", pts->delalloc_followed ?
		"bytes_may_use, bytes_pinned, delalloc_bytes exact; the rest from the last recorded state (approximate)" :
		"bytes_may_use, bytes_pinned exact; the rest from the last recorded state (approximate)");
	fmt_u64(f, "only_5_12", "Points 5.12 flushes in and 5.15+ not", pts->only_512);
	fmt_array_start(f, "kernels", "Per kernel");
	for (k = 0; k < r->nr_kernels; k++) {
		fmt_group_start(f, NULL, NULL);
		fmt_str(f, "kernel", "kernel",
			btrfs_kernel_version_str(r->kernels[k].version, ver, sizeof(ver)));
		fmt_u64(f, "flush_points", "flush_points", pts->flush_in[k]);
		fmt_group_end(f);
	}
	fmt_array_end(f);
	print_reasons(f, r, pts->why);
	fmt_group_end(f);
}

static void print_preempt(struct fmt_ctx *f, const struct btrfs_replay *r)
{
	const struct replay_preempt *p = &r->preempt;
	char ver[32], line[REPLAY_TIMELINE + 1];
	u32 k;

	fmt_group_start(f, "preempt", "Part 1: preemptive flushing (need_preemptive_reclaim)");
	fmt_u64(f, "states", "Decision states (btrfs_done_preemptive_reclaim)", p->states);
	if (!p->states)
		fmt_str(f, "states_note", "Note",
			"0 decision states: the recording kernel never reached a decision point (its preempt worker never ran to its end)");
	fmt_u64(f, "agree", "Agreeing with the kernel (no-flush)", p->agree);
	fmt_u64(f, "disagree", "Disagreeing", p->disagree);
	if (p->states)
		fmt_ratio(f, "agreement_percent", "Agreement %", 100.0 * p->agree / p->states);
	fmt_u64(f, "explained_pcpu", "Explained: per-CPU counters", p->explained[EXPLAIN_PCPU]);
	fmt_u64(f, "explained_clamp", "Explained: clamp raised", p->explained[EXPLAIN_CLAMP]);
	fmt_u64(f, "explained_rsv_race", "Explained: unlocked delayed reserves", p->explained[EXPLAIN_RSV_RACE]);
	fmt_u64(f, "unexplained", "Unexplained", p->explained[EXPLAIN_NONE]);
	fmt_size(f, "pcpu_error", "Per-CPU counter error", p->pcpu_err);
	fmt_size(f, "rsv_race_bound", "Unlocked reserve bound", p->rsv_race);
	fmt_u64(f, "preempt_triggers", "Preempt triggers (btrfs_trigger_flush)", p->preempt_triggers);
	fmt_u64(f, "ticket_triggers", "Ticket triggers", p->ticket_triggers);
	fmt_u64(f, "preempt_flushes", "Preempt flush states run (btrfs_flush_space)", p->preempt_flushes);
	fmt_u64(f, "other_space_infos", "States of other space infos", p->other_flags);
	fmt_u64(f, "only_5_12", "States 5.12 flushes in and 5.15+ not", p->only_512);
	sparkline(p, line, sizeof(line));
	fmt_str(f, "timeline", "used/thresh timeline", line[0] ? line : "-");
	fmt_array_start(f, "kernels", "Per kernel");
	for (k = 0; k < r->nr_kernels; k++) {
		fmt_group_start(f, NULL, NULL);
		fmt_str(f, "kernel", "kernel",
			btrfs_kernel_version_str(r->kernels[k].version, ver, sizeof(ver)));
		fmt_u64(f, "flush_states", "flush_states", p->flush_in[k]);
		fmt_u64(f, "no_flush_states", "no_flush_states", p->states - p->flush_in[k]);
		fmt_group_end(f);
	}
	fmt_array_end(f);
	print_reasons(f, r, p->why);
	print_disagreements(f, p);
	if (r->seen_mask & (1ULL << REPLAY_EV_UPDATE_MAY_USE))
		print_points(f, r);
	fmt_group_end(f);
}

static void print_root_count(struct fmt_ctx *f, const struct replay_root_count *c)
{
	fmt_u64(f, "set_calls", "set_calls", c->set_calls);
	fmt_u64(f, "lock_flag_rule", "lock_flag_rule", c->flag_rule);
	fmt_u64(f, "lock_flagless", "lock_flagless", c->flagless);
	fmt_u64(f, "cycles", "cycles", c->cycles);
}

/* Each writeback of an inode's whole delalloc, per inode */
static void print_inode_cycles(struct fmt_ctx *f, const struct btrfs_replay *r)
{
	static const char * const bin_names[REPLAY_CYCLE_BINS] = {
		"1", "2", "3-4", "5-8", "9+",
	};
	struct replay_inode_cycles top[REPLAY_TOP_INODES];
	u64 bins[REPLAY_CYCLE_BINS];
	u32 i, nr_top;

	btrfs_replay_inode_cycles(r, bins, top, &nr_top);
	fmt_u64(f, "cycled_inodes", "Inodes with a cycle", r->delalloc.cycled_inodes);
	fmt_array_start(f, "cycles_per_inode", "Inodes by cycles");
	for (i = 0; i < REPLAY_CYCLE_BINS; i++) {
		fmt_group_start(f, NULL, NULL);
		fmt_str(f, "cycles", "cycles", bin_names[i]);
		fmt_u64(f, "inodes", "inodes", bins[i]);
		fmt_group_end(f);
	}
	fmt_array_end(f);
	fmt_array_start(f, "busiest_inodes", "Inodes with the most cycles");
	for (i = 0; i < nr_top; i++) {
		fmt_group_start(f, NULL, NULL);
		fmt_u64(f, "root", "root", top[i].root);
		fmt_u64(f, "ino", "ino", top[i].ino);
		fmt_u64(f, "cycles", "cycles", top[i].cycles);
		fmt_group_end(f);
	}
	fmt_array_end(f);
}

static void print_delalloc(struct fmt_ctx *f, const struct btrfs_replay *r)
{
	const struct replay_delalloc *d = &r->delalloc;
	u32 i;

	fmt_group_start(f, "delalloc", "Part 2: delalloc list locking (root->delalloc_lock)");
	fmt_u64(f, "set_events", "btrfs_set_extent_bit events", d->set_events);
	fmt_u64(f, "clear_events", "btrfs_clear_extent_bit events", d->clear_events);
	fmt_u64(f, "convert_events", "btrfs_convert_extent_bit events", d->convert_events);
	fmt_u64(f, "other_tree_events", "Events of other io trees", d->other_trees);
	fmt_u64(f, "set_calls", "btrfs_set_delalloc_extent adding delalloc", d->total.set_calls);
	fmt_u64(f, "lock_flag_rule", "Lock acquisitions, flag / 0<->non-zero rule", d->total.flag_rule);
	fmt_u64(f, "lock_flagless", "Lock acquisitions, flagless patch", d->total.flagless);
	fmt_ratio(f, "flagless_ratio", "Flagless / flag rule",
		  d->total.flag_rule ? (double)d->total.flagless / d->total.flag_rule : 0.0);
	fmt_u64(f, "cycles", "Inode delalloc cycles (list add + del)", d->total.cycles);
	print_inode_cycles(f, r);
	fmt_u64(f, "free_space_inode_sets", "Free-space cache inode sets (no list)", d->free_space_inode);
	fmt_u64(f, "underflow", "Delalloc cleared that the trace never set", d->underflow);
	fmt_u64(f, "max_live_states", "Most extent states live", d->max_live_states);
	fmt_u64(f, "live_inodes_at_end", "Inodes with states at the end", d->live_inodes);
	fmt_array_start(f, "roots", "Per root");
	for (i = 0; i < d->nr_roots; i++) {
		fmt_group_start(f, NULL, NULL);
		fmt_u64(f, "root", "root", d->roots[i].root);
		print_root_count(f, &d->roots[i]);
		fmt_group_end(f);
	}
	if (d->other_roots.set_calls || d->other_roots.cycles) {
		fmt_group_start(f, NULL, NULL);
		fmt_str(f, "root", "root", "other");
		print_root_count(f, &d->other_roots);
		fmt_group_end(f);
	}
	fmt_array_end(f);
	fmt_group_end(f);
}

static void print_rsv_txns(struct fmt_ctx *f, const struct replay_rsv_trace *t)
{
	u32 i;

	fmt_array_start(f, "transactions", "Per transaction (gen 0: not committed in the trace)");
	for (i = 0; i < t->nr_txn; i++) {
		const struct replay_rsv_txn *x = &t->txn[i];

		fmt_group_start(f, NULL, NULL);
		fmt_u64(f, "gen", "gen", x->gen);
		fmt_size(f, "size_rise", "size rise", x->size_rise);
		fmt_u64(f, "heads_run", "heads run", x->heads_run);
		fmt_u64(f, "refills", "refills", x->refills);
		fmt_size(f, "refilled", "refilled", x->refilled);
		fmt_u64(f, "releases", "releases", x->releases);
		fmt_size(f, "released", "released", x->released);
		fmt_group_end(f);
	}
	fmt_array_end(f);
}

/* Beside the size rise: what btrfs_space_reservation says the reserve received */
static void print_rsv_trace(struct fmt_ctx *f, const struct btrfs_replay *r)
{
	const struct replay_rsv_trace *t = &r->drefs.rsv;
	u64 have = r->enabled_mask ? r->enabled_mask : r->seen_mask;

	fmt_group_start(f, "rsv_trace", "Traced delayed_refs_rsv (btrfs_space_reservation): reserved bytes, not the size");
	fmt_bool(f, "traced", "btrfs_space_reservation recorded",
		 have & (1ULL << REPLAY_EV_SPACE_RESERVATION));
	fmt_u64(f, "refills", "Refills (reserve)", t->refills);
	fmt_size(f, "refilled", "Refilled", t->refilled);
	fmt_size(f, "refill_max", "Largest refill", t->refill_max);
	fmt_u64(f, "releases", "Releases (release)", t->releases);
	fmt_size(f, "released", "Released", t->released);
	fmt_size(f, "release_max", "Largest release", t->release_max);
	fmt_u64(f, "local_reserves", "Transaction starts' local_delayed_refs_rsv", t->local_reserves);
	fmt_size(f, "local_reserved", "Their bytes", t->local_reserved);
	fmt_u64(f, "commits", "Transaction commits", t->commits);
	fmt_bool(f, "bounds_checked", "Bounds checked (recorded by 6.18+)", t->bounds_checked);
	fmt_u64(f, "refills_over_limit", "Refills above delayed_ref_bytes(1)", t->refill_over_limit);
	fmt_u64(f, "releases_over_call", "Releases above one call's size drop", t->release_over_call);
	if (t->first_bad_line)
		fmt_u64(f, "first_over_bound_line", "First over its bound, line", t->first_bad_line);
	fmt_bool(f, "transactions_truncated", "More transactions than listed", t->txn_overflow);
	print_rsv_txns(f, t);
	fmt_group_end(f);
}

/* What every head event adds and takes back, as the kernel keeps the size */
static void print_net(struct fmt_ctx *f, const struct btrfs_replay *r)
{
	const struct replay_refs_net *n = &r->drefs.net;
	u64 ref = btrfs_calc_delayed_ref_bytes(r->st.nodesize, r->st.free_space_tree > 0, 1);
	u64 csum_net = n->csum_charged - n->csum_released;

	fmt_size(f, "csum_charged", "Csum leaves charged (total_ref_mod below 0)", n->csum_charged);
	fmt_size(f, "csum_released", "Csum leaves released (total_ref_mod back to 0 or above)", n->csum_released);
	fmt_size(f, "csum_net_rise", "Csum net rise", csum_net);
	fmt_u64(f, "data_ref_nodes", "Data ref nodes queued (adds and drops)", n->data_nodes);
	fmt_size(f, "data_ref_rise", "Data-ref rise", n->data_nodes * ref);
	fmt_u64(f, "tree_ref_nodes", "Tree-block ref nodes queued", n->tree_nodes);
	fmt_size(f, "tree_ref_rise", "Tree-ref rise", n->tree_nodes * ref);
	fmt_size(f, "net_size_rise", "Net size rise (csum net + ref nodes)",
		 csum_net + (n->data_nodes + n->tree_nodes) * ref);
	fmt_size(f, "peak_outstanding", "Peak outstanding (heads queued, until run)",
		 n->peak_outstanding);
}

static void print_drefs(struct fmt_ctx *f, const struct btrfs_replay *r)
{
	const struct replay_delayed_refs *d = &r->drefs;

	fmt_group_start(f, "delayed_refs", "Part 3: delayed refs of dropped data extents (delayed_refs_rsv size)");
	fmt_u64(f, "heads", "Heads queued (add_delayed_ref_head)", d->heads);
	fmt_u64(f, "merged", "Adds to a queued head", d->merged);
	fmt_u64(f, "runs", "Heads run (run_delayed_ref_head)", d->runs);
	fmt_u64(f, "unknown_runs", "Runs of heads the trace never added", d->unknown_runs);
	fmt_u64(f, "peak_heads", "Most heads queued", d->peak_live);
	fmt_u64(f, "data_drop_heads", "Data heads dropping an extent", d->data_drop_heads);
	fmt_size(f, "data_drop_bytes", "Their extent bytes", d->calc.disk_bytes);
	fmt_u64(f, "csum_leaves", "Csum leaves charged (each head rounded up)", d->calc.csum_leaves);
	fmt_u64(f, "data_drop_refs", "Data refs dropped (add_delayed_data_ref)", d->data_drop_refs);
	fmt_size(f, "size_rise", "Charged at the dropping heads (gross), recording kernel", d->calc.total);
	fmt_size(f, "size_rise_before_6_7", "Size rise, before v6.7", d->calc.total_before);
	fmt_size(f, "peak_queued", "Peak of the queued heads' charge, recording kernel", d->peak_charge);
	fmt_size(f, "peak_queued_before_6_7", "Peak, before v6.7", d->peak_charge_before);
	print_net(f, r);
	print_rsv_trace(f, r);
	fmt_group_end(f);
}

static void print_overcommit(struct fmt_ctx *f, const struct btrfs_replay *r)
{
	const struct replay_overcommit *oc = &r->oc;
	char ver[32];
	u32 k;

	fmt_group_start(f, "overcommit", "Part 4: metadata over-commit (btrfs_can_overcommit)");
	fmt_u64(f, "rises", "Reservations weighed (may_use rises)", oc->rises);
	fmt_u64(f, "overcommits", "Granted past total_bytes", oc->overcommits);
	fmt_u64(f, "within_flush_all", "Within the FLUSH_ALL room (1/8)", oc->within_flush_all);
	fmt_u64(f, "within_other_modes", "Within the other modes' room (1/2) only", oc->within_other);
	fmt_u64(f, "beyond_room", "Beyond every mode's room", oc->beyond);
	fmt_size(f, "max_over", "Most bytes past total_bytes", oc->max_over);
	fmt_ratio(f, "max_over_percent_of_room", "Of the 1/2 room, most used %",
		  oc->max_over_permille / 10.0);
	fmt_u64(f, "tickets", "Reservations that waited (btrfs_reserve_ticket)", oc->tickets);
	fmt_u64(f, "ticket_grants", "Over-commits granted to a waiting ticket", oc->ticket_grants);
	fmt_u64(f, "direct", "Over-commits granted directly (no ticket)",
		oc->overcommits - oc->ticket_grants);
	fmt_bool(f, "image_anchor", "First state from the image", r->anchor_from_image);
	fmt_str(f, "inputs", "Inputs",
		"bytes_may_use, bytes_pinned exact; total_bytes, chunk_free_space from the last recorded state");
	fmt_array_start(f, "kernels", "Per kernel (room of the non-FLUSH_ALL modes)");
	for (k = 0; k < r->nr_kernels; k++) {
		fmt_group_start(f, NULL, NULL);
		fmt_str(f, "kernel", "kernel",
			btrfs_kernel_version_str(r->kernels[k].version, ver, sizeof(ver)));
		fmt_u64(f, "allowed", "allowed", oc->allowed[k]);
		fmt_u64(f, "zoned_allowed", "zoned_allowed", oc->zoned_allowed[k]);
		fmt_group_end(f);
	}
	fmt_array_end(f);
	fmt_array_start(f, "beyond", "Beyond the room");
	for (k = 0; k < oc->nr_listed; k++) {
		fmt_group_start(f, NULL, NULL);
		fmt_u64(f, "line", "line", oc->listed[k].lineno);
		fmt_size(f, "over", "over", oc->listed[k].over);
		fmt_size(f, "room", "room", oc->listed[k].room);
		fmt_group_end(f);
	}
	fmt_array_end(f);
	fmt_group_end(f);
}

/* --- part 1 as an SVG timeline ------------------------------------------------ */

#define TL_WIDTH	1000.0
#define TL_LEFT		100.0
#define TL_PLOT_W	860.0
#define TL_TOP		80.0
#define TL_PLOT_H	300.0
#define TL_STRIP	26.0
#define TL_BAR		16.0

static const char * const tl_dash[] = { "6 3", "2 2", NULL, "8 2 2 2" };
static const char * const tl_colour[] = { "#c0392b", "#8e44ad", "#d35400", "#16a085" };

static const char tl_css[] =
	"text { font-family: sans-serif; font-size: 12px; fill: #222; }\n"
	".title { font-size: 16px; font-weight: bold; }\n"
	".subtitle { font-size: 12px; fill: #444; }\n"
	".axis { font-size: 11px; fill: #555; }\n"
	".legend { font-size: 11px; }\n"
	"polyline { stroke-width: 1.5; }\n"
	".bucket { fill: #000; fill-opacity: 0; }\n"
	".bucket:hover { fill-opacity: 0.06; }\n";

struct tl_draw {
	const struct btrfs_replay *r;
	unsigned int units;
	u32 nb;			/* buckets drawn */
	u64 t0;			/* the first sample's time, ns: x = 0 */
	u64 span;		/* to the last sample's, ns (at least 1) */
	double y_max;		/* the top of the plot: a whole number of y_step */
	double y_step;		/* between two y ticks: 1, 2 or 5 x 10^k of a binary unit */
};

/* The x of time @ts: the axis is the trace's time, not the buckets' order */
static double tl_xt(const struct tl_draw *d, u64 ts)
{
	u64 off = ts > d->t0 ? ts - d->t0 : 0;

	if (off > d->span)
		off = d->span;
	return TL_LEFT + TL_PLOT_W * (double)off / (double)d->span;
}

/* A bucket's box: from its first sample's time to its last's, 1 px at least */
static void tl_box(const struct tl_draw *d, u32 i, double *x, double *w)
{
	const struct replay_svg_bucket *b = &d->r->timeline.b[i];
	double x1 = tl_xt(d, b->ts_last);

	*x = tl_xt(d, b->ts_first);
	*w = x1 - *x >= 1.0 ? x1 - *x : 1.0;
	if (*x + *w > TL_LEFT + TL_PLOT_W)
		*x = TL_LEFT + TL_PLOT_W - *w;
}

/* A bucket's point on the lines: the middle of its time */
static double tl_x(const struct tl_draw *d, u32 i)
{
	double x, w;

	tl_box(d, i, &x, &w);
	return x + w / 2;
}

/* 1, 2 or 5 x 10^k x @unit, the first at least @raw */
static double nice_step(double raw, double unit)
{
	double m = 1;

	while (m * 10 * unit <= raw)
		m *= 10;
	if (m * unit >= raw)
		return m * unit;
	if (2 * m * unit >= raw)
		return 2 * m * unit;
	if (5 * m * unit >= raw)
		return 5 * m * unit;
	return 10 * m * unit;
}

/* The y ticks: about five, round in the unit the labels print (KiB, MiB, GiB, ...) */
static void tl_y_scale(struct tl_draw *d, u64 y_max)
{
	double raw = (y_max ? (double)y_max : 1.0) / 5, unit = 1;

	while (unit * 1024 <= raw)
		unit *= 1024;
	d->y_step = nice_step(raw, unit);
	d->y_max = d->y_step;
	while (d->y_max < (double)y_max)
		d->y_max += d->y_step;
}

/* The time range the samples cover */
static void tl_x_scale(struct tl_draw *d)
{
	const struct replay_timeline *tl = &d->r->timeline;
	u64 t1 = 0;
	u32 i;

	d->t0 = d->nb ? tl->b[0].ts_first : 0;
	for (i = 0; i < d->nb; i++) {
		d->t0 = min_t(u64, d->t0, tl->b[i].ts_first);
		t1 = max_t(u64, t1, tl->b[i].ts_last);
	}
	d->span = t1 > d->t0 ? t1 - d->t0 : 1;
}

static double tl_y(const struct tl_draw *d, u64 v)
{
	return TL_TOP + TL_PLOT_H - TL_PLOT_H * (double)v / d->y_max;
}

static void tl_attr_u64(struct svg *svg, const char *name, u64 v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	svg_shape_attr(svg, name, num);
}

static void tl_header(struct svg *svg, const struct tl_draw *d)
{
	const struct btrfs_replay *r = d->r;
	const struct replay_timeline *tl = &r->timeline;
	char line[400], ver[32];

	snprintf(line, sizeof(line), "Preemptive flushing of %s, recorded by %s%s",
		 r->fsid[0] ? r->fsid : "no filesystem",
		 btrfs_kernel_version_str(r->st.recorded_version ? r->st.recorded_version :
					  BTRFS_REPLAY_RECORDED_DEFAULT, ver, sizeof(ver)),
		 r->recorded_assumed ? " (assumed)" : "");
	svg_text(svg, "title", TL_LEFT, 28, line);
	snprintf(line, sizeof(line),
		 "%llu samples: %llu decision states (btrfs_done_preemptive_reclaim), %llu reservation points (update_bytes_may_use); %llu preempt triggers",
		 (unsigned long long)tl->samples, (unsigned long long)r->preempt.states,
		 (unsigned long long)r->points.points, (unsigned long long)tl->triggers);
	svg_text(svg, "subtitle", TL_LEFT, 48, line);
	snprintf(line, sizeof(line),
		 "%u buckets of %llu samples, each drawn over the time its samples span; a reservation point weighs the last recorded state%s",
		 d->nb, (unsigned long long)(tl->width ? tl->width : 1),
		 r->anchor_from_image ? " (first: the image's)" : "");
	svg_text(svg, "subtitle", TL_LEFT, 66, line);
}

static void tl_axes(struct svg *svg, const struct tl_draw *d)
{
	char label[UNITS_BUF_LEN], line[64];
	double v, step, t, span_s = d->span / 1e9;
	int decimals = 0;

	svg_rect_stroked(svg, TL_LEFT, TL_TOP, TL_PLOT_W, TL_PLOT_H, "#fff", "#999");
	for (v = 0; v <= d->y_max + d->y_step / 2; v += d->y_step) {
		double y = tl_y(d, (u64)v);

		svg_rect(svg, "grid", TL_LEFT, y, TL_PLOT_W, 0.5, "#ddd");
		pretty_size_mode((u64)v, d->units, label, sizeof(label));
		svg_text(svg, "axis", 8, y + 4, label);
	}
	if (!d->nb)
		return;
	/* seconds since the first sample, about eight round ticks */
	step = nice_step(span_s / 8, 1e-9);
	for (t = step; t < 1 && decimals < 9; t *= 10)
		decimals++;
	for (t = 0; t <= span_s + step / 1000; t += step) {
		double x = TL_LEFT + TL_PLOT_W * t / span_s;

		svg_rect(svg, "grid", x, TL_TOP + TL_PLOT_H, 0.5, 4, "#999");
		snprintf(line, sizeof(line), "%.*f s", decimals, t);
		svg_text(svg, "axis", x - 12, TL_TOP + TL_PLOT_H + 16, line);
	}
	svg_text(svg, "axis", TL_LEFT + TL_PLOT_W - 140, TL_TOP + TL_PLOT_H + 28,
		 "time since the first sample");
}

/* One line of a value per bucket */
static void tl_line(struct svg *svg, const struct tl_draw *d, const char *cls,
		    const char *stroke, const char *dash, int what, u32 k,
		    const char *tooltip)
{
	const struct replay_timeline *tl = &d->r->timeline;
	double *xy = malloc(sizeof(*xy) * 2 * d->nb);
	u32 i;

	if (!xy)
		return;
	for (i = 0; i < d->nb; i++) {
		const struct replay_svg_bucket *b = &tl->b[i];
		u64 v = what == 0 ? b->may_use_max : what == 1 ? b->used : b->thresh[k];

		xy[2 * i] = tl_x(d, i);
		xy[2 * i + 1] = tl_y(d, v);
	}
	svg_polyline(svg, cls, stroke, dash, xy, d->nb, tooltip);
	free(xy);
}

static void tl_bucket_tip(const struct tl_draw *d, u32 i, char *tip, size_t len)
{
	const struct btrfs_replay *r = d->r;
	const struct replay_svg_bucket *b = &r->timeline.b[i];
	char a[UNITS_BUF_LEN], u[UNITS_BUF_LEN], t[UNITS_BUF_LEN], ver[32];
	size_t n;
	u32 k;

	n = snprintf(tip, len, "%.6f s to %.6f s: %llu samples (%llu states), %llu triggers\n"
		     "may_use up to %s, used %s at clamp %u",
		     b->ts_first / 1e9, b->ts_last / 1e9, (unsigned long long)b->samples,
		     (unsigned long long)b->states, (unsigned long long)b->triggers,
		     pretty_size_mode(b->may_use_max, d->units, a, sizeof(a)),
		     pretty_size_mode(b->used, d->units, u, sizeof(u)), b->clamp);
	for (k = 0; k < r->nr_kernels && n < len; k++)
		n += snprintf(tip + n, len - n, "\n%s: threshold %s, flushes in %llu",
			      btrfs_kernel_version_str(r->kernels[k].version, ver, sizeof(ver)),
			      pretty_size_mode(b->thresh[k], d->units, t, sizeof(t)),
			      (unsigned long long)b->flush[k]);
}

static void tl_marks(struct svg *svg, const struct tl_draw *d)
{
	const struct btrfs_replay *r = d->r;
	const struct replay_timeline *tl = &r->timeline;
	double strip_top = TL_TOP + TL_PLOT_H + 36, x, w;
	char tip[1024], ver[32], line[128];
	u64 max_triggers = 1;
	u32 i, k;

	for (i = 0; i < d->nb; i++)
		max_triggers = max_t(u64, max_triggers, tl->b[i].triggers);
	svg_text(svg, "legend", 8, strip_top + TL_BAR - 3, "preempt triggers");
	svg_rect_stroked(svg, TL_LEFT, strip_top, TL_PLOT_W, TL_BAR, "#fafafa", "#ccc");
	for (i = 0; i < d->nb; i++) {
		double h;

		if (!tl->b[i].triggers)
			continue;
		h = TL_BAR * tl->b[i].triggers / max_triggers;
		svg_shape_begin(svg, "trigger", "#444");
		tl_attr_u64(svg, "data-count", tl->b[i].triggers);
		tl_box(d, i, &x, &w);
		svg_shape_rect(svg, x, strip_top + TL_BAR - h, w, h > 1 ? h : 1);
		snprintf(tip, sizeof(tip), "%llu preempt triggers", (unsigned long long)tl->b[i].triggers);
		svg_shape_end(svg, tip);
	}
	strip_top += TL_STRIP;
	for (k = 0; k < r->nr_kernels; k++) {
		double y = strip_top + k * TL_STRIP;

		btrfs_kernel_version_str(r->kernels[k].version, ver, sizeof(ver));
		snprintf(line, sizeof(line), "%s flushes", ver);
		svg_text(svg, "legend", 8, y + TL_BAR - 3, line);
		svg_rect_stroked(svg, TL_LEFT, y, TL_PLOT_W, TL_BAR, "#fafafa", "#ccc");
		for (i = 0; i < d->nb; i++) {
			const struct replay_svg_bucket *b = &tl->b[i];
			double h = TL_BAR * b->flush[k] / (b->samples ? b->samples : 1);

			if (!b->flush[k])
				continue;
			svg_shape_begin(svg, "flush", tl_colour[k % 4]);
			svg_shape_attr(svg, "data-kernel", ver);
			tl_attr_u64(svg, "data-count", b->flush[k]);
			tl_box(d, i, &x, &w);
			svg_shape_rect(svg, x, y + TL_BAR - h, w, h > 1 ? h : 1);
			snprintf(tip, sizeof(tip), "%s flushes in %llu of %llu samples", ver,
				 (unsigned long long)b->flush[k], (unsigned long long)b->samples);
			svg_shape_end(svg, tip);
		}
	}
	/* one hover target per bucket, over the plot */
	for (i = 0; i < d->nb; i++) {
		svg_shape_begin(svg, "bucket", NULL);
		tl_attr_u64(svg, "data-samples", tl->b[i].samples);
		tl_attr_u64(svg, "data-states", tl->b[i].states);
		tl_attr_u64(svg, "data-triggers", tl->b[i].triggers);
		tl_attr_u64(svg, "data-may-use", tl->b[i].may_use_max);
		tl_attr_u64(svg, "data-used", tl->b[i].used);
		tl_box(d, i, &x, &w);
		svg_shape_rect(svg, x, TL_TOP, w, TL_PLOT_H);
		tl_bucket_tip(d, i, tip, sizeof(tip));
		svg_shape_end(svg, tip);
	}
}

/* A legend entry: a line (dashed or not) or a filled box, then its text */
static void tl_key(struct svg *svg, double x, double y, const char *colour,
		   const char *dash, bool box, const char *text)
{
	double xy[4] = { x, y - 4, x + 20, y - 4 };

	if (box)
		svg_rect(svg, NULL, x + 4, y - 10, 12, 10, colour);
	else
		svg_polyline(svg, "key", colour, dash, xy, 2, NULL);
	svg_text(svg, "legend", x + 24, y, text);
}

/* Every mark drawn, in three rows: the lines, the thresholds, the strips */
static void tl_legend(struct svg *svg, const struct tl_draw *d, double y)
{
	const struct btrfs_replay *r = d->r;
	char line[160], ver[32];
	u32 k;

	tl_key(svg, TL_LEFT, y, "#2471a3", NULL, false, "bytes_may_use (highest in the bucket)");
	tl_key(svg, TL_LEFT + 250, y, "#27ae60", NULL, false,
	       "used as need_preemptive_reclaim() weighs it (recording kernel)");
	y += 18;
	for (k = 0; k < r->nr_kernels; k++) {
		snprintf(line, sizeof(line), "threshold at the clamp, %s",
			 btrfs_kernel_version_str(r->kernels[k].version, ver, sizeof(ver)));
		tl_key(svg, TL_LEFT + (k % 3) * 280, y + (k / 3) * 18, tl_colour[k % 4],
		       tl_dash[k % 4], false, line);
	}
	y += 18 * ((r->nr_kernels + 2) / 3);
	tl_key(svg, TL_LEFT, y, "#444", NULL, true,
	       "preempt triggers in the bucket (height: their count)");
	y += 18;
	for (k = 0; k < r->nr_kernels; k++) {
		snprintf(line, sizeof(line), "samples %s flushes in (height: share)",
			 btrfs_kernel_version_str(r->kernels[k].version, ver, sizeof(ver)));
		tl_key(svg, TL_LEFT + (k % 3) * 280, y + (k / 3) * 18, tl_colour[k % 4],
		       NULL, true, line);
	}
}

static int write_timeline(FILE *out, const struct btrfs_replay *r, unsigned int units)
{
	const struct replay_timeline *tl = &r->timeline;
	struct tl_draw d = { .r = r, .units = units };
	double height;
	char tip[64], ver[32];
	struct svg svg;
	u32 k;

	d.nb = tl->samples ? (tl->samples + tl->width - 1) / tl->width : 0;
	tl_x_scale(&d);
	tl_y_scale(&d, tl->y_max + tl->y_max / 20);
	height = TL_TOP + TL_PLOT_H + 36 + (r->nr_kernels + 1) * TL_STRIP + 30 +
		 18 * (2 + 2 * ((r->nr_kernels + 2) / 3));
	svg_begin(&svg, out, TL_WIDTH, height);
	svg_style(&svg, tl_css);
	svg_rect(&svg, NULL, 0, 0, TL_WIDTH, height, "#fff");
	tl_header(&svg, &d);
	tl_axes(&svg, &d);
	if (!d.nb)
		svg_text(&svg, "subtitle", TL_LEFT + 20, TL_TOP + 40,
			 "no decision state and no reservation point in the trace");
	if (d.nb) {
		tl_line(&svg, &d, "may-use", "#2471a3", NULL, 0, 0, "bytes_may_use");
		tl_line(&svg, &d, "used", "#27ae60", NULL, 1, 0,
			"used, as the recording kernel's need_preemptive_reclaim() weighs it");
		for (k = 0; k < r->nr_kernels; k++) {
			snprintf(tip, sizeof(tip), "threshold of %s",
				 btrfs_kernel_version_str(r->kernels[k].version, ver, sizeof(ver)));
			tl_line(&svg, &d, "thresh", tl_colour[k % 4], tl_dash[k % 4], 2, k, tip);
		}
	}
	tl_marks(&svg, &d);
	tl_legend(&svg, &d, TL_TOP + TL_PLOT_H + 36 + (r->nr_kernels + 1) * TL_STRIP + 20);
	return svg_end(&svg);
}

static const char *svg_name(const char *path)
{
	return output_is_stdout(path) ? "standard output" : path;
}

/* The inputs the picture must not land on: the trace and the devices */
static int write_svg(const struct btrfs_replay *r, const char *path, unsigned int units,
		     char **inputs, int nr_inputs)
{
	int in_fd = 0;
	struct output_inputs in = {
		.paths = inputs, .nr_paths = nr_inputs,
		.fds = &in_fd, .nr_fds = strcmp(inputs[0], "-") ? 0 : 1,
	};
	FILE *out;
	int ret;

	ret = output_open(path, &in, &out);
	if (ret == -EPERM) {
		error("refusing to write the timeline to '%s': it is a block device or one of the inputs",
		      path);
		return EXIT_USAGE;
	}
	if (ret) {
		error("cannot create '%s': %s", svg_name(path), strerror(-ret));
		return 1;
	}
	ret = write_timeline(out, r, units);
	if (fclose(out) || ret) {
		error("cannot write '%s': %s", svg_name(path), strerror(EIO));
		return 1;
	}
	return 0;
}

static void print_svg(struct fmt_ctx *f, const struct btrfs_replay *r, const char *path)
{
	const struct replay_timeline *tl = &r->timeline;
	u64 width = tl->width ? tl->width : 1;

	fmt_group_start(f, "svg", "SVG timeline");
	fmt_str(f, "file", "File", path);
	fmt_u64(f, "samples", "Samples (states and reservation points)", tl->samples);
	fmt_u64(f, "buckets", "Buckets", tl->samples ? (tl->samples + width - 1) / width : 0);
	fmt_u64(f, "samples_per_bucket", "Samples a bucket", width);
	fmt_u64(f, "triggers", "Preempt triggers drawn", tl->triggers);
	fmt_group_end(f);
}

static const char * const part_names[] = { "", "preemptive flushing", "delalloc list locking",
					    "delayed refs of dropped data extents",
					    "metadata over-commit" };

/*
 * Why a part whose events the trace has cannot be weighed: what the events
 * do not carry and nothing gave (marker, image, options); "" if it can.
 */
static void unweighable(const struct btrfs_replay *r, int part, char *buf, size_t len)
{
	const struct btrfs_replay_static *st = &r->st;

	buf[0] = '\0';
	if ((part == 1 || part == 4) && !st->have_profile)
		snprintf(buf, len, "the metadata profile is not known: give the image or device, --metadata-copies N, or record with contrib/btrfs-space-capture.sh");
	if (part == 3) {
		const char *facts[4], *opts[4];
		size_t used = 0;
		int n = 0, i;

		if (!st->csum_size) {
			facts[n] = "the csum size";
			opts[n++] = "--csum-size N";
		}
		if (st->free_space_tree < 0) {
			facts[n] = "the free-space-tree flag";
			opts[n++] = "--free-space-tree 0|1";
		}
		if (!st->sectorsize) {
			facts[n] = "the sector size";
			opts[n++] = "--sectorsize N";
		}
		if (!st->nodesize) {
			facts[n] = "the node size";
			opts[n++] = "--nodesize N";
		}
		if (!n)
			return;
		for (i = 0; i < n; i++)
			used += snprintf(buf + used, used < len ? len - used : 0, "%s%s",
					 i ? (i == n - 1 ? " and " : ", ") : "", facts[i]);
		used += snprintf(buf + used, used < len ? len - used : 0,
				 " not known: give the image or device, ");
		for (i = 0; i < n; i++)
			used += snprintf(buf + used, used < len ? len - used : 0, "%s, ", opts[i]);
		snprintf(buf + used, used < len ? len - used : 0,
			 "or record with contrib/btrfs-space-capture.sh");
	}
}

/*
 * Which parts to print: every part the trace allows, the others skipped
 * with a note; a part asked for that cannot be replayed is refused.
 */
static int choose_parts(const struct btrfs_replay *r, u32 asked, u32 *parts)
{
	char why[400], last[400] = "";
	int part;

	*parts = 0;
	for (part = 1; part <= 4; part++) {
		char missing[256];

		btrfs_replay_missing(r, part, missing, sizeof(missing));
		if (missing[0])
			snprintf(why, sizeof(why), "the trace has no %s (not enabled, or never emitted)",
				 missing);
		else
			unweighable(r, part, why, sizeof(why));
		if (!why[0]) {
			if (!asked || (asked & (1U << part)))
				*parts |= 1U << part;
			continue;
		}
		if (asked & (1U << part)) {
			error("part %d (%s) cannot be replayed: %s", part, part_names[part], why);
			return 1;
		}
		if (!asked)
			pr_note("part %d (%s) skipped: %s", part, part_names[part], why);
		if (!missing[0])
			snprintf(last, sizeof(last), "part %d (%s): %s", part,
				 part_names[part], why);
	}
	if (!*parts) {
		/* --fsid (or the device) named a filesystem the trace has no event of */
		if (!r->events && r->other_fs_events)
			error("the trace has no event of filesystem %s, %llu of other filesystems (an overwritten ring buffer keeps only the last events): record it, or choose another with --fsid",
			      r->fsid, (unsigned long long)r->other_fs_events);
		else if (last[0])
			error("no part can be replayed; %s", last);
		else
			error("the trace has none of the events a part needs: btrfs_done_preemptive_reclaim or update_bytes_may_use (part 1), btrfs_set_extent_bit or btrfs_clear_extent_bit (part 2), add_delayed_ref_head (part 3), update_bytes_may_use (part 4)");
		return 1;
	}
	return 0;
}

static void setup_kernels(struct btrfs_replay *r, const struct replay_args *a)
{
	u32 k;

	if (a->nr_kernels) {
		for (k = 0; k < a->nr_kernels; k++)
			btrfs_kernel_model(a->kernels[k], &r->kernels[k]);
		r->nr_kernels = a->nr_kernels;
		return;
	}
	for (k = 0; k < BTRFS_NR_REPLAY_KERNELS; k++)
		btrfs_kernel_model(btrfs_replay_kernels[k], &r->kernels[k]);
	r->nr_kernels = BTRFS_NR_REPLAY_KERNELS;
}

static int replay_trace(struct btrfs_replay *r, const struct cmd_options *opts,
			struct replay_args *a)
{
	const char *path = a->trace;
	FILE *fp = strcmp(path, "-") ? fopen(path, "r") : stdin;
	u64 size = 0;
	int ret;

	if (!fp) {
		error("cannot open %s: %s", path, strerror(errno));
		return 1;
	}
	if (fp != stdin && !fseeko(fp, 0, SEEK_END)) {
		size = ftello(fp);
		rewind(fp);
	}
	ret = read_trace(r, fp, path, size);
	if (fp != stdin)
		fclose(fp);
	if (ret)
		return ret;
	btrfs_replay_finish(r);
	ret = choose_parts(r, a->parts, &a->printed);
	if (ret)
		return ret;
	if (a->svg_path && !(a->printed & 2)) {
		error("--svg draws part 1 (preemptive flushing): the trace has no btrfs_done_preemptive_reclaim, or --part leaves it out");
		return 1;
	}
	if (r->lost_events)
		warning("%s: the ring buffer lost %llu events: counts are lower bounds",
			path, (unsigned long long)r->lost_events);
	if (a->svg_path)
		return write_svg(r, a->svg_path, opts->units, a->inputs, a->nr_inputs);
	return 0;
}

static int replay_check(void *ctx, int nr_paths, char **paths)
{
	struct replay_args *a = ctx;
	struct output_inputs in = { .paths = paths, .nr_paths = nr_paths };

	a->trace = paths[0];
	a->inputs = paths;
	a->nr_inputs = nr_paths;
	if (a->svg_path && output_is_input(a->svg_path, &in)) {
		error("refusing to write the timeline to '%s': it is a block device or one of the inputs",
		      a->svg_path);
		return EXIT_USAGE;
	}
	return 0;
}

static struct btrfs_replay *replay_new(const struct replay_args *a)
{
	struct btrfs_replay *r = malloc(sizeof(*r));

	if (!r || btrfs_replay_init(r)) {
		free(r);
		return NULL;
	}
	r->st = a->st;
	r->parts = a->parts;
	if (a->st.have_profile)
		r->st.source = "options";
	if (a->fsid[0]) {
		strcpy(r->fsid, a->fsid);
		r->fsid_given = true;
	}
	setup_kernels(r, a);
	return r;
}

static void replay_release(void *ctx)
{
	struct replay_args *a = ctx;

	btrfs_replay_release(a->r);
	free(a->r);
	a->r = NULL;
}

/* The image (when given) sets what the options left open; then the trace */
static int replay_report(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
			 void *ctx)
{
	struct replay_args *a = ctx;
	int ret = 0;

	a->r = replay_new(a);
	if (!a->r)
		return cmd_out_of_memory();
	if (fs_info)
		ret = static_from_image(a->r, fs_info);
	if (!ret)
		ret = replay_trace(a->r, opts, a);
	if (ret)
		replay_release(a);
	return ret;
}

/* The timeline written to standard output takes the place of the report */
static bool replay_prints(const void *ctx)
{
	const struct replay_args *a = ctx;

	return !a->svg_path || !output_is_stdout(a->svg_path);
}

static void replay_print(struct fmt_ctx *f, const struct btrfs_fs_info *fs_info, void *ctx)
{
	const struct replay_args *a = ctx;

	print_trace(f, a->r, a->trace);
	if (a->printed & 2)
		print_preempt(f, a->r);
	if (a->printed & 4)
		print_delalloc(f, a->r);
	if (a->printed & 8)
		print_drefs(f, a->r);
	if (a->printed & 16)
		print_overcommit(f, a->r);
	if (a->svg_path)
		print_svg(f, a->r, a->svg_path);
}

static const struct cmd_spec replay_spec = {
	.lead_arg = "trace",
	CMD_OWN_OPTIONS(replay),
	.check = replay_check,
	.block_groups = cmd_want_block_groups,
	.report = replay_report,
	.prints = replay_prints,
	.print = replay_print,
	.release = replay_release,
	/* the image only fills in the static state: -v says nothing of it */
	.close = btrfs_close_fs,
};

static int cmd_replay(const struct cmd_struct *cmd, const struct cmd_options *global,
		      int argc, char **argv)
{
	struct replay_args args = { .st.free_space_tree = -1 };

	return cmd_run(cmd, global, argc, argv, &replay_spec, &args);
}
DEFINE_COMMAND(replay, "replay");
