// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs-space replay TRACE [DEV...]: a recorded trace of the btrfs events
 * re-evaluated per kernel version (kernel-shared/replay.c), the trace read
 * as a stream (common/trace-parse.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>
#include "cmds/commands.h"
#include "common/help.h"
#include "common/parse-utils.h"
#include "common/progress.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/replay.h"
#include "kernel-shared/space-info.h"

static const char * const cmd_replay_usage[] = {
	"btrfs-space replay [options] <trace|-> [<device|image>...]",
	"Re-evaluate the decisions of a recorded btrfs trace per kernel version",
	"",
	"The trace is tracefs text (the 'trace' or 'trace_pipe' file of an instance,",
	"or 'trace-cmd report'); contrib/btrfs-space-capture.sh records one.",
	"Part 1, preemptive flushing, needs btrfs_done_preemptive_reclaim.",
	"With update_bytes_may_use (and update_bytes_pinned) part 1 also evaluates every reservation.",
	"Part 2, delalloc list locking, needs btrfs_set_extent_bit and btrfs_clear_extent_bit.",
	"Part 3, delayed refs of dropped data extents, needs add_delayed_ref_head and run_delayed_ref_head.",
	"Part 4, metadata over-commit, needs btrfs_done_preemptive_reclaim and update_bytes_may_use.",
	"",
	"--part N           replay only part N (1 to 4; may be repeated)",
	"--kernel VERSION   a kernel to re-evaluate with (may be repeated; default 5.12, 5.15, 6.18)",
	"--recorded-kernel VERSION  the kernel that recorded the trace (default: the capture marker's, else 6.18)",
	"--fsid UUID        the filesystem to replay (default: the capture marker's or the first seen)",
	"--metadata-copies N  copies of the metadata profile (DUP 2, single 1; default: image or marker)",
	"--total-rw-bytes SIZE  the devices' total size (default: image or marker)",
	"--data-chunk-size SIZE  the data space info's chunk size (default: image, marker, or 10G)",
	"--nr-cpus N        the recording machine's nr_cpu_ids (per-CPU counter error)",
	"--sectorsize N, --nodesize N  of the filesystem (default: image or marker)",
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
	{ NULL, 0, NULL, 0 }
};

static const struct cmd_option_expect replay_expect[] = {
	{ OPT_PART, "1, 2 or 3" },
	{ OPT_KERNEL, "a version such as 5.12 or 6.18 (at most 8)" },
	{ OPT_RECORDED, "a version such as 6.18" },
	{ OPT_FSID, "a UUID such as 01234567-89ab-cdef-0123-456789abcdef" },
	{ OPT_COPIES, "1 to 4" },
	{ OPT_TOTAL_RW, "a size such as 16G" },
	{ OPT_DATA_CHUNK, "a size such as 1G" },
	{ OPT_NR_CPUS, "1 to 65536" },
	{ OPT_SECTORSIZE, "a power of two from 4096 to 65536" },
	{ OPT_NODESIZE, "a power of two from 4096 to 65536" },
	{ 0, NULL }
};

struct replay_args {
	u32 parts;		/* bit N: part N asked for; 0: every part the trace allows */
	u32 nr_kernels;
	u32 kernels[REPLAY_MAX_KERNELS];
	struct btrfs_replay_static st;	/* from the options */
	char fsid[37];
};

static int parse_block_size(const char *arg, u32 *out)
{
	u64 v;

	if (parse_u64(arg, &v) || v < 4096 || v > 65536 || (v & (v - 1)))
		return -EINVAL;
	*out = v;
	return 0;
}

static int replay_option(int opt, const char *arg, void *ctx)
{
	struct replay_args *a = ctx;
	uuid_t uu;
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
		return btrfs_parse_kernel_version(arg, &a->kernels[a->nr_kernels++]);
	case OPT_RECORDED:
		return btrfs_parse_kernel_version(arg, &a->st.recorded_version);
	case OPT_FSID:
		if (strlen(arg) != 36 || uuid_parse(arg, uu))
			return -EINVAL;
		uuid_unparse(uu, a->fsid);
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
	uuid_unparse(fs_info->fsid, fsid);
	if (r->fsid[0] && strcmp(r->fsid, fsid)) {
		error("the image is filesystem %s, not %s", fsid, r->fsid);
		return 1;
	}
	strcpy(r->fsid, fsid);
	r->fsid_given = true;
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
	fmt_str(f, "inputs", "Inputs",
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
	fmt_group_end(f);
}

static void print_preempt(struct fmt_ctx *f, const struct btrfs_replay *r)
{
	const struct replay_preempt *p = &r->preempt;
	char ver[32], line[REPLAY_TIMELINE + 1];
	u32 k;

	fmt_group_start(f, "preempt", "Part 1: preemptive flushing (need_preemptive_reclaim)");
	fmt_u64(f, "states", "Decision states (btrfs_done_preemptive_reclaim)", p->states);
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
	fmt_size(f, "size_rise", "Size rise, recording kernel", d->calc.total);
	fmt_size(f, "size_rise_before_6_7", "Size rise, before v6.7", d->calc.total_before);
	fmt_size(f, "peak_queued", "Peak of the queued heads' charge, recording kernel", d->peak_charge);
	fmt_size(f, "peak_queued_before_6_7", "Peak, before v6.7", d->peak_charge_before);
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

static const char * const part_names[] = { "", "preemptive flushing", "delalloc list locking",
					    "delayed refs of dropped data extents",
					    "metadata over-commit" };

/* Which parts to print; refuses a part asked for whose events are missing */
static int choose_parts(const struct btrfs_replay *r, u32 asked, u32 *parts)
{
	char missing[256];
	int part;

	*parts = 0;
	for (part = 1; part <= 4; part++) {
		btrfs_replay_missing(r, part, missing, sizeof(missing));
		if (!missing[0]) {
			if (!asked || (asked & (1U << part)))
				*parts |= 1U << part;
			continue;
		}
		if (asked & (1U << part)) {
			error("part %d (%s) needs %s, which the trace does not have: enable them when recording (contrib/btrfs-space-capture.sh)",
			      part, part_names[part], missing);
			return 1;
		}
		if (!asked)
			pr_note("part %d (%s) skipped: the trace has no %s", part,
				part_names[part], missing);
	}
	if (!*parts) {
		error("the trace has none of the events a part needs: btrfs_done_preemptive_reclaim (part 1), btrfs_set_extent_bit and btrfs_clear_extent_bit (part 2), add_delayed_ref_head and run_delayed_ref_head (part 3), btrfs_done_preemptive_reclaim and update_bytes_may_use (part 4)");
		return 1;
	}
	return 0;
}

static void setup_kernels(struct btrfs_replay *r, const struct replay_args *a)
{
	static const u32 defaults[] = {
		KERNEL_VERSION(5, 12, 0), KERNEL_VERSION(5, 15, 0), KERNEL_VERSION(6, 18, 0),
	};
	u32 k;

	if (a->nr_kernels) {
		for (k = 0; k < a->nr_kernels; k++)
			btrfs_kernel_model(a->kernels[k], &r->kernels[k]);
		r->nr_kernels = a->nr_kernels;
		return;
	}
	for (k = 0; k < 3; k++)
		btrfs_kernel_model(defaults[k], &r->kernels[k]);
	r->nr_kernels = 3;
}

static int replay_run(struct btrfs_replay *r, const struct cmd_options *opts,
		      const char *cmd_token, const char *path, u32 asked)
{
	FILE *fp = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct fmt_ctx f;
	u64 size = 0;
	u32 parts;
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
	ret = choose_parts(r, asked, &parts);
	if (ret)
		return ret;
	if (r->lost_events)
		warning("%s: the ring buffer lost %llu events: counts are lower bounds",
			path, (unsigned long long)r->lost_events);
	fmt_start(&f, stdout, opts->format, opts->units, cmd_token);
	print_trace(&f, r, path);
	if (parts & 2)
		print_preempt(&f, r);
	if (parts & 4)
		print_delalloc(&f, r);
	if (parts & 8)
		print_drefs(&f, r);
	if (parts & 16)
		print_overcommit(&f, r);
	fmt_end(&f);
	return 0;
}

static int cmd_replay(const struct cmd_struct *cmd, const struct cmd_options *global,
		      int argc, char **argv)
{
	struct cmd_options opts = *global;
	struct replay_args args;
	struct cmd_extra_options extra = {
		.longopts = replay_longopts,
		.handle = replay_option,
		.ctx = &args,
		.expect = replay_expect,
	};
	struct btrfs_fs_info fs_info;
	bool opened = false;
	struct btrfs_replay *r;
	int first, ret;

	memset(&args, 0, sizeof(args));
	args.st.free_space_tree = -1;
	ret = cmd_parse_options(cmd, &opts, &extra, argc, argv, &first);
	if (ret)
		return ret == CMD_HELP_SHOWN ? 0 : ret;
	if (first >= argc) {
		error("replay: no trace given");
		usage_print(stderr, cmd->usagestr);
		return EXIT_USAGE;
	}
	r = malloc(sizeof(*r));
	if (!r || btrfs_replay_init(r)) {
		free(r);
		return cmd_out_of_memory();
	}
	r->st = args.st;
	r->parts = args.parts;
	if (args.st.have_profile)
		r->st.source = "options";
	if (args.fsid[0]) {
		strcpy(r->fsid, args.fsid);
		r->fsid_given = true;
	}
	setup_kernels(r, &args);
	ret = 0;
	if (first + 1 < argc) {
		ret = cmd_open_fs(&fs_info, &opts, argc - first - 1, argv + first + 1, true);
		opened = !ret;
		if (!ret)
			ret = static_from_image(r, &fs_info);
	}
	if (!ret)
		ret = replay_run(r, &opts, cmd->token, argv[first], args.parts);
	if (opened)
		btrfs_close_fs(&fs_info);
	btrfs_replay_release(r);
	free(r);
	return ret;
}
DEFINE_COMMAND(replay, "replay");
