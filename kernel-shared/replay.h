/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_REPLAY_H
#define BTRFS_SPACE_REPLAY_H

#include <stdbool.h>
#include "common/trace-parse.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/extent-io-tree.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/space-info.h"

#define REPLAY_MAX_KERNELS	8
#define REPLAY_MAX_LISTED	64	/* disagreements kept for the report */
#define REPLAY_MAX_ROOTS	16	/* roots counted apart; the rest together */
#define REPLAY_TIMELINE		60	/* sparkline buckets */
#define REPLAY_SVG_BUCKETS	256	/* SVG timeline buckets */
#define REPLAY_OC_RECENT	64	/* over-commits kept to match tickets */

/* What the events do not carry: from the image, the capture marker, or options */
struct btrfs_replay_static {
	bool have_profile;
	u32 profile_copies;	/* metadata profile: DUP 2, single 1 ... */
	bool have_total_rw;
	u64 total_rw_bytes;
	u64 data_chunk_size;
	u32 sectorsize;		/* for the per-CPU counter error */
	u32 nodesize;
	u32 nr_cpu_ids;
	u32 recorded_version;	/* the kernel that recorded the trace, 0 unknown */
	u32 csum_size;		/* 0 unknown */
	int free_space_tree;	/* -1 unknown */
	const char *source;	/* "image", "capture marker", "options" */
};

enum replay_explain {
	EXPLAIN_NONE,		/* unexplained */
	EXPLAIN_PCPU,		/* delalloc/ordered within the per-CPU counter error */
	EXPLAIN_CLAMP,		/* the clamp was raised after the decision */
	EXPLAIN_RSV_RACE,	/* delayed reserves read without their lock */
};

struct replay_disagreement {
	u64 lineno;
	u64 ts_ns;
	u64 used;
	u64 thresh;
	u32 clamp;
	bool may_use_branch;
	enum replay_explain explain;
	u64 bound;		/* the error the explanation allows */
};

/* Why a kernel flushed or not: need_preemptive_reclaim()'s reasons, counted */
#define REPLAY_MAX_REASONS	8
struct replay_reasons {
	const char *reason[REPLAY_MAX_REASONS];
	bool verdict[REPLAY_MAX_REASONS];
	u64 count[REPLAY_MAX_REASONS];
};

struct replay_preempt {
	u64 no_profile;		/* states not weighed: the metadata profile unknown */
	u64 states;		/* btrfs_done_preemptive_reclaim of this fs, METADATA */
	u64 other_flags;	/* of another space info (not weighed) */
	u64 agree;
	u64 disagree;
	u64 explained[4];
	u64 flush_in[REPLAY_MAX_KERNELS];	/* states each kernel flushes in */
	struct replay_reasons why[REPLAY_MAX_KERNELS];
	u64 preempt_triggers;	/* btrfs_trigger_flush "preempt" */
	u64 ticket_triggers;	/* other btrfs_trigger_flush reasons */
	u64 preempt_flushes;	/* btrfs_flush_space for_preempt=1 */
	u64 pcpu_err;		/* delalloc_batch * nr_cpu_ids */
	u64 rsv_race;
	u32 nr_listed;
	struct replay_disagreement listed[REPLAY_MAX_LISTED];
	/* the seed's case: states 5.12 flushes in and 5.15+ does not */
	u64 only_512;
	/* timeline: per bucket of states, max used/thresh in per mille, and triggers */
	u32 timeline_permille[REPLAY_TIMELINE];
	u64 first_ts, last_ts;
};

/*
 * The SVG timeline: the samples (decision states and reservation points)
 * in buckets of equal counts, pairs folded as the trace grows.  A bucket
 * keeps the highest bytes_may_use, its last sample's used, clamp and
 * threshold per kernel, and what happened in it.
 */
struct replay_svg_bucket {
	u64 samples;
	u64 states;		/* of them, btrfs_done_preemptive_reclaim */
	u64 ts_first, ts_last;
	u64 may_use_max;
	u64 used;		/* the last sample's need_preemptive_reclaim used */
	u32 clamp;
	u64 thresh[REPLAY_MAX_KERNELS];	/* thresh_by_clamp[clamp] per kernel */
	u64 flush[REPLAY_MAX_KERNELS];	/* samples each kernel flushes in */
	u64 triggers;		/* btrfs_trigger_flush "preempt" */
};

struct replay_timeline {
	u64 samples;
	u64 width;		/* samples a bucket holds */
	u64 triggers;
	u64 y_max;		/* the largest value drawn */
	struct replay_svg_bucket b[REPLAY_SVG_BUCKETS];
};

#define REPLAY_MAX_CPUS		256

/*
 * Part 1b: the reservation decision points.  After a successful metadata
 * reservation (an update_bytes_may_use rise while the preempt worker is
 * idle) the kernel evaluates need_preemptive_reclaim() and, when true,
 * traces btrfs_trigger_flush "preempt" from the same task next.  The state
 * there is the last recorded one (btrfs_done_preemptive_reclaim or
 * btrfs_fail_all_tickets) with bytes_may_use and bytes_pinned followed
 * exactly through update_bytes_may_use / update_bytes_pinned.
 */
struct replay_point {
	bool set;
	u32 pid;
	u64 lineno;
	struct btrfs_reserve_state s;
};

struct replay_points {
	bool have_anchor;
	struct btrfs_reserve_state anchor;
	u64 anchor_lineno;
	bool worker_busy;	/* between a "preempt" trigger and the done event */
	bool delalloc_followed;	/* delalloc_bytes from the extent-bit events */
	u64 points;
	u64 kernel_flush;	/* points followed by a "preempt" trigger */
	u64 agree;
	u64 model_flush_kernel_no;
	u64 model_no_kernel_flush;
	u64 no_anchor;		/* rises before any recorded state */
	u64 flush_in[REPLAY_MAX_KERNELS];
	struct replay_reasons why[REPLAY_MAX_KERNELS];
	u64 only_512;
	/* at the kernel's triggers: (used - thresh) / thresh, in ppm */
	bool have_margin;
	long long margin_min_ppm;
	long long margin_max_ppm;
	u64 within_1pct;
	struct replay_point pending[REPLAY_MAX_CPUS];
};

/*
 * Part 4: metadata over-commit (seed 003).  An update_bytes_may_use rise
 * that takes used + may_use above total_bytes was granted by
 * btrfs_can_overcommit(); the room it had is weighed with the state of the
 * last recorded btrfs_done_preemptive_reclaim / btrfs_fail_all_tickets and
 * the counters followed exactly since.  The flush mode is not traced, so
 * the room of FLUSH_ALL (an eighth) and of every other mode (half) are
 * both given.
 */
struct replay_overcommit_line {
	u64 lineno;
	u64 over;		/* bytes above total_bytes after the grant */
	u64 room;		/* the widest room (non-FLUSH_ALL), recording kernel */
};

struct replay_oc_recent {
	u64 bytes;
	u32 pid;
	bool matched;
};

struct replay_overcommit {
	u64 rises;		/* may_use rises weighed (a state known) */
	u64 overcommits;	/* used + may_use > total_bytes after the rise */
	u64 within_flush_all;	/* within the FLUSH_ALL room */
	u64 within_other;	/* beyond it, within the other modes' room */
	u64 beyond;		/* beyond every mode's room */
	u64 max_over;
	u64 max_over_permille;	/* over / widest room, the largest */
	u64 tickets;		/* btrfs_reserve_ticket: a reservation had to wait */
	u64 ticket_grants;	/* over-commits a later successful ticket of its size claims */
	u32 recent_next;
	struct replay_oc_recent recent[REPLAY_OC_RECENT];
	u64 allowed[REPLAY_MAX_KERNELS];	/* over-commits within that kernel's room */
	u64 zoned_allowed[REPLAY_MAX_KERNELS];	/* the same, the state taken as zoned */
	u32 nr_listed;
	struct replay_overcommit_line listed[REPLAY_MAX_LISTED];
};

/* Part 3: the delayed-ref heads of data extents being dropped (seed 000) */
struct delayed_head;

/* The traced delayed_refs_rsv bytes of one transaction (to its commit) */
struct replay_rsv_txn {
	u64 gen;		/* of its btrfs_transaction_commit, 0: not committed in the trace */
	u64 refills;		/* "delayed_refs_rsv" reserve: btrfs_delayed_refs_rsv_refill() */
	u64 refilled;
	u64 releases;		/* "delayed_refs_rsv" release: btrfs_delayed_refs_rsv_release() */
	u64 released;
	u64 size_rise;		/* the model's rise from the data heads added in it */
	u64 heads_run;
};

/*
 * What btrfs_space_reservation says of delayed_refs_rsv: 6.18 traces the
 * refilled bytes and the bytes a size drop frees, not the size; the bounds
 * each event must keep are in Documentation/formulas.md section 22.3.
 */
struct replay_rsv_trace {
	u64 events;
	u64 refills;
	u64 refilled;
	u64 refill_max;
	u64 releases;
	u64 released;
	u64 release_max;
	u64 refill_over_limit;	/* refills above delayed_ref_bytes(1) */
	u64 release_over_call;	/* releases above the largest drop one call makes */
	u64 first_bad_line;	/* of the first event over its bound */
	bool bounds_checked;	/* recorded by 6.18 or later, whose callers were read */
	u64 local_reserves;	/* "local_delayed_refs_rsv" reserve: start_transaction() */
	u64 local_reserved;
	u64 commits;
	struct replay_rsv_txn cur;	/* since the last commit */
	u64 rise_at_commit;	/* calc.total at the last commit */
	u32 nr_txn;
	bool txn_overflow;	/* more transactions than listed */
	struct replay_rsv_txn txn[REPLAY_MAX_LISTED];
};

/*
 * The net of the head events (formulas.md 22.3): csum leaves charged and
 * released as total_ref_mod crosses 0, ref nodes per kind, and what the
 * queued heads hold at most.
 */
struct replay_refs_net {
	u64 csum_charged;
	u64 csum_released;
	u64 data_nodes;		/* data ref nodes queued (adds and drops) */
	u64 tree_nodes;		/* tree-block ref nodes queued */
	u64 outstanding;	/* of the heads queued now */
	u64 peak_outstanding;
};

struct replay_delayed_refs {
	u64 no_params;		/* events not weighed: csum size or free-space tree unknown */
	struct replay_refs_net net;
	struct delayed_head **buckets;
	u32 nr_buckets;
	u64 live;
	u64 peak_live;
	u64 heads;		/* add_delayed_ref_head of a bytenr not queued */
	u64 merged;		/* add_delayed_ref_head of a queued bytenr */
	u64 data_drop_heads;	/* new data heads whose first action drops */
	u64 data_drop_refs;	/* add_delayed_data_ref DROP_DELAYED_REF */
	u64 runs;		/* run_delayed_ref_head of a queued head */
	u64 unknown_runs;	/* of a head the trace never added */
	struct btrfs_csum_delete_calc calc;	/* summed charges, both rules */
	u64 live_charge;	/* of the queued heads, the recording kernel's rule */
	u64 live_charge_before;	/* the same before v6.7 */
	u64 peak_charge;
	u64 peak_charge_before;
	u64 max_head_charge;	/* the largest charge of a head added so far */
	struct replay_rsv_trace rsv;
};

struct replay_root_count {
	u64 root;
	u64 set_calls;		/* btrfs_set_delalloc_extent() adding delalloc */
	u64 flag_rule;		/* root->delalloc_lock under the flag / 0<->non-zero rule */
	u64 flagless;		/* under the seed's patch */
	u64 cycles;		/* an inode leaving the delalloc list */
};

struct delalloc_inode;
struct inode_cycles;

#define REPLAY_TOP_INODES	8
#define REPLAY_CYCLE_BINS	5	/* 1, 2, 3-4, 5-8, 9 and more */

/* An inode's writeback cycles, for the busiest ones listed */
struct replay_inode_cycles {
	u64 root;
	u64 ino;
	u64 cycles;
};

struct replay_delalloc {
	/* per inode: the cycles of each inode that had one, kept past its states */
	struct inode_cycles **cycle_buckets;
	u32 nr_cycle_buckets;
	u64 cycled_inodes;
	struct delalloc_inode **buckets;
	u32 nr_buckets;
	u64 live_states;
	u64 max_live_states;
	u64 live_inodes;
	u64 set_events;
	u64 clear_events;
	u64 convert_events;
	u64 other_trees;	/* events of io trees that are not an inode's */
	u64 free_space_inode;	/* delalloc of the root tree (free-space cache) */
	u64 underflow;		/* delalloc cleared that the trace never set */
	struct replay_root_count total;
	u32 nr_roots;
	struct replay_root_count roots[REPLAY_MAX_ROOTS];
	struct replay_root_count other_roots;
};

struct btrfs_replay {
	char fsid[37];		/* the filesystem replayed; "" = the first seen */
	bool fsid_given;
	bool fsid_first_seen;	/* taken from the first event: no marker, no option */
	u32 parts;		/* bit N: replay part N; 0: every part */
	u64 lines;
	u64 lost_events;
	struct btrfs_replay_static st;
	u32 nr_kernels;
	struct btrfs_kernel_model kernels[REPLAY_MAX_KERNELS];
	struct btrfs_kernel_model recorded;
	bool recorded_assumed;	/* no kernel= in the trace nor --recorded-kernel */
	u64 events;		/* of this filesystem */
	u64 other_fs_events;
	/* per CPU, the last event of this filesystem read: time and line */
	u64 cpu_last_ts[REPLAY_MAX_CPUS];
	u64 cpu_last_line[REPLAY_MAX_CPUS];
	u64 seen_mask;		/* REPLAY_EV_* seen */
	u64 enabled_mask;	/* from the capture marker, 0 if none */
	bool have_marker;
	u64 cut_lineno;		/* a last line without its end, not read; 0 none */
	u64 head_cut_lineno;	/* 1: the first line held no event (cut), not read */
	struct replay_preempt preempt;
	struct replay_points points;
	struct replay_timeline timeline;
	bool have_image_state;	/* the image's state anchors the first rise */
	struct btrfs_reserve_state image_state;
	bool anchor_from_image;	/* the first anchor was the image's */
	struct replay_delalloc delalloc;
	struct replay_delayed_refs drefs;
	struct replay_overcommit oc;
	char err[200];
};

/* The events read, as bits of seen_mask/enabled_mask */
enum {
	REPLAY_EV_DONE_PREEMPT,
	REPLAY_EV_TRIGGER_FLUSH,
	REPLAY_EV_FLUSH_SPACE,
	REPLAY_EV_SET_EXTENT_BIT,
	REPLAY_EV_CLEAR_EXTENT_BIT,
	REPLAY_EV_CONVERT_EXTENT_BIT,
	REPLAY_EV_SPACE_RESERVATION,
	REPLAY_EV_RESERVE_TICKET,
	REPLAY_EV_FAIL_ALL_TICKETS,
	REPLAY_EV_TRANSACTION_COMMIT,
	REPLAY_EV_UPDATE_MAY_USE,
	REPLAY_EV_UPDATE_PINNED,
	REPLAY_EV_ADD_DELAYED_REF_HEAD,
	REPLAY_EV_RUN_DELAYED_REF_HEAD,
	REPLAY_EV_ADD_DELAYED_DATA_REF,
	REPLAY_EV_COUNT,
};

const char *btrfs_replay_event_name(int ev);

int btrfs_replay_init(struct btrfs_replay *r);
void btrfs_replay_release(struct btrfs_replay *r);
/* 0, or -EINVAL/-ENOMEM/-E2BIG with r->err naming the line */
int btrfs_replay_event(struct btrfs_replay *r, const struct trace_event *ev);
/*
 * The image's metadata space info as the state the recording started on:
 * the anchor of the reservation points and over-commits when the trace
 * records no state before its first update_bytes_may_use.
 */
void btrfs_replay_set_image_state(struct btrfs_replay *r,
				  const struct btrfs_reserve_state *s);
/* After the last event: the per-CPU error bounds need the static state */
void btrfs_replay_finish(struct btrfs_replay *r);
/* The events a part reads when the trace has none of them, as "a or b"; "" if it has one */
/* Part 2's inodes by writeback cycles: a histogram and the busiest */
void btrfs_replay_inode_cycles(const struct btrfs_replay *r, u64 bins[REPLAY_CYCLE_BINS],
			       struct replay_inode_cycles top[REPLAY_TOP_INODES], u32 *nr_top);
void btrfs_replay_missing(const struct btrfs_replay *r, int part, char *buf, size_t len);
const char *btrfs_replay_explain_str(enum replay_explain e);

#endif
