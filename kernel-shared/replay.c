// SPDX-License-Identifier: GPL-2.0
/*
 * The replay of a recorded btrfs trace (own file, no kernel twin): each
 * event of one filesystem decoded from its tracefs text and fed to the
 * kernel-twin functions.
 *
 * Part 1, preemptive flushing: every btrfs_done_preemptive_reclaim state
 * (the preempt worker has just found need_preemptive_reclaim() false) is
 * re-evaluated by btrfs_need_preemptive_reclaim() of space-info.c for the
 * kernel that recorded it and for each kernel asked; a "flush" for the
 * recording kernel is a disagreement, explained when an input the kernel
 * reads approximately decides it (Documentation/formulas.md section 22).
 *
 * Part 2, delalloc list locking: the btrfs_{set,clear,convert}_extent_bit
 * events of inode io trees replayed by extent-io-tree.c, whose hooks are
 * btrfs_set_delalloc_extent() and btrfs_clear_delalloc_extent() of
 * inode.c, counting root->delalloc_lock under the inode-flag rule
 * (BTRFS_INODE_IN_DELALLOC_LIST, up to 6.5) or the delalloc_bytes
 * 0 <-> non-zero rule (6.6+), which take it at the same moments, and under
 * the seed's flagless patch (every delalloc set of a listed inode).
 *
 * Part 3, delayed refs: the data heads dropping an extent charged by
 * btrfs_csum_delete_add_heads() of delayed-ref.c, per kernel rule; beside
 * them the traced delayed_refs_rsv bytes of btrfs_delayed_refs_rsv_refill()
 * and btrfs_delayed_refs_rsv_release() (6.18), each held to its caller's
 * bound, since no 6.18 event carries the reserve's size.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "common/hash.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/replay.h"

static const char * const event_names[REPLAY_EV_COUNT] = {
	[REPLAY_EV_DONE_PREEMPT] = "btrfs_done_preemptive_reclaim",
	[REPLAY_EV_TRIGGER_FLUSH] = "btrfs_trigger_flush",
	[REPLAY_EV_FLUSH_SPACE] = "btrfs_flush_space",
	[REPLAY_EV_SET_EXTENT_BIT] = "btrfs_set_extent_bit",
	[REPLAY_EV_CLEAR_EXTENT_BIT] = "btrfs_clear_extent_bit",
	[REPLAY_EV_CONVERT_EXTENT_BIT] = "btrfs_convert_extent_bit",
	[REPLAY_EV_SPACE_RESERVATION] = "btrfs_space_reservation",
	[REPLAY_EV_RESERVE_TICKET] = "btrfs_reserve_ticket",
	[REPLAY_EV_FAIL_ALL_TICKETS] = "btrfs_fail_all_tickets",
	[REPLAY_EV_TRANSACTION_COMMIT] = "btrfs_transaction_commit",
	[REPLAY_EV_UPDATE_MAY_USE] = "update_bytes_may_use",
	[REPLAY_EV_UPDATE_PINNED] = "update_bytes_pinned",
	[REPLAY_EV_ADD_DELAYED_REF_HEAD] = "add_delayed_ref_head",
	[REPLAY_EV_RUN_DELAYED_REF_HEAD] = "run_delayed_ref_head",
	[REPLAY_EV_ADD_DELAYED_DATA_REF] = "add_delayed_data_ref",
};

/* The parts each event feeds, as bit N for part N (0: read by none yet) */
#define P1	(1U << 1)
#define P2	(1U << 2)
#define P3	(1U << 3)
#define P4	(1U << 4)
static const u8 event_parts[REPLAY_EV_COUNT] = {
	[REPLAY_EV_DONE_PREEMPT] = P1 | P4,
	[REPLAY_EV_TRIGGER_FLUSH] = P1,
	[REPLAY_EV_FLUSH_SPACE] = P1,
	[REPLAY_EV_FAIL_ALL_TICKETS] = P1 | P4,
	[REPLAY_EV_UPDATE_MAY_USE] = P1 | P4,
	[REPLAY_EV_UPDATE_PINNED] = P1 | P4,
	[REPLAY_EV_RESERVE_TICKET] = P4,
	[REPLAY_EV_SET_EXTENT_BIT] = P2,
	[REPLAY_EV_CLEAR_EXTENT_BIT] = P2,
	[REPLAY_EV_CONVERT_EXTENT_BIT] = P2,
	[REPLAY_EV_ADD_DELAYED_REF_HEAD] = P3,
	[REPLAY_EV_RUN_DELAYED_REF_HEAD] = P3,
	[REPLAY_EV_ADD_DELAYED_DATA_REF] = P3,
	[REPLAY_EV_SPACE_RESERVATION] = P3,
	[REPLAY_EV_TRANSACTION_COMMIT] = P3,
};

const char *btrfs_replay_event_name(int ev)
{
	return ev >= 0 && ev < REPLAY_EV_COUNT ? event_names[ev] : "?";
}

static int event_index(const char *name)
{
	int i;

	for (i = 0; i < REPLAY_EV_COUNT; i++)
		if (!strcmp(name, event_names[i]))
			return i;
	return -1;
}

static int replay_error(struct btrfs_replay *r, const struct trace_event *ev,
			const char *what, int ret)
{
	snprintf(r->err, sizeof(r->err), "line %llu: %s: %s",
		 (unsigned long long)ev->lineno, ev->name, what);
	return ret;
}

/* A field of the body, read strictly: missing, empty or malformed names it */
static int field_error(struct btrfs_replay *r, const struct trace_event *ev,
		       const char *key, int ret, const char *what)
{
	snprintf(r->err, sizeof(r->err), "line %llu: %s: %s %s=",
		 (unsigned long long)ev->lineno, ev->name,
		 ret == -ENOENT ? "no" : what, key);
	return -EINVAL;
}

static int need_u64(struct btrfs_replay *r, const struct trace_event *ev,
		    const char *body, const char *key, u64 *val)
{
	int ret = trace_field_u64(body, key, val);

	return ret ? field_error(r, ev, key, ret, "not an unsigned decimal number at") : 0;
}

static int need_s64(struct btrfs_replay *r, const struct trace_event *ev,
		    const char *body, const char *key, long long *val)
{
	int ret = trace_field_s64(body, key, val);

	return ret ? field_error(r, ev, key, ret, "not a decimal number at") : 0;
}

static int need_str(struct btrfs_replay *r, const struct trace_event *ev,
		    const char *body, const char *key, char *buf, size_t len)
{
	int ret = trace_field_str(body, key, buf, len);

	return ret ? field_error(r, ev, key, ret, "empty or over-long") : 0;
}

int btrfs_replay_init(struct btrfs_replay *r)
{
	memset(r, 0, sizeof(*r));
	r->st.free_space_tree = -1;
	r->drefs.nr_buckets = 1U << 16;
	r->drefs.buckets = calloc(r->drefs.nr_buckets, sizeof(r->drefs.buckets[0]));
	if (!r->drefs.buckets)
		return -ENOMEM;
	r->delalloc.nr_buckets = 1U << 16;
	r->delalloc.buckets = calloc(r->delalloc.nr_buckets,
				     sizeof(r->delalloc.buckets[0]));
	return r->delalloc.buckets ? 0 : -ENOMEM;
}

/* --- the capture marker ------------------------------------------------------ */

/*
 * "btrfs-space-replay: kernel=6.18.44 fsid=UUID metadata_copies=2
 * total_rw_bytes=N data_chunk_size=N sectorsize=N nodesize=N nr_cpu_ids=N
 * events=a,b,...", written by contrib/btrfs-space-capture.sh into the
 * trace: what the events do not carry.  Options and the image override it.
 */
/* A marker field: absent is fine, present must be a number in [lo, hi] */
static int marker_u64(struct btrfs_replay *r, const struct trace_event *ev,
		      const char *body, const char *key, u64 lo, u64 hi, u64 *val,
		      bool *found)
{
	int ret = trace_field_u64(body, key, val);

	*found = false;
	if (ret == -ENOENT)
		return 0;
	if (ret || *val < lo || *val > hi) {
		snprintf(r->err, sizeof(r->err), "line %llu: capture marker: bad %s=",
			 (unsigned long long)ev->lineno, key);
		return -EINVAL;
	}
	*found = true;
	return 0;
}

static int marker_events(struct btrfs_replay *r, const char *body)
{
	char buf[512], *tok, *save;

	if (trace_field_str(body, "events", buf, sizeof(buf)))
		return 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int i = event_index(tok);

		if (i >= 0)
			r->enabled_mask |= 1ULL << i;
	}
	return 0;
}

/*
 * "btrfs-space-replay: kernel=6.18.44 fsid=UUID metadata_copies=2
 * total_rw_bytes=N data_chunk_size=N sectorsize=N nodesize=N nr_cpu_ids=N
 * events=a,b,...", written by contrib/btrfs-space-capture.sh into the
 * trace before it enables the events: what the events do not carry.
 * Options and the image override it.
 */
static int read_marker(struct btrfs_replay *r, const struct trace_event *ev)
{
	struct btrfs_replay_static *st = &r->st;
	const char *body = ev->body;
	char buf[40];
	bool found;
	u32 version;
	u64 v;
	int ret;

	if (strncmp(body, "btrfs-space-replay: ", 20))
		return 0;
	body += 19;
	r->have_marker = true;
	if (!trace_field_str(body, "kernel", buf, sizeof(buf)) && !st->recorded_version) {
		if (btrfs_parse_kernel_version(buf, &version))
			return replay_error(r, ev, "capture marker: bad kernel=", -EINVAL);
		/* a kernel whose decisions are not modelled is not guessed */
		if (version < BTRFS_MIN_KERNEL || version > BTRFS_MAX_KERNEL) {
			snprintf(r->err, sizeof(r->err),
				 "line %llu: capture marker: kernel=%s is not one of the kernels modelled (" BTRFS_MIN_KERNEL_STR " to " BTRFS_MAX_KERNEL_STR ".y): name the nearest with --recorded-kernel",
				 (unsigned long long)ev->lineno, buf);
			return -EINVAL;
		}
		st->recorded_version = version;
	}
	if (!r->fsid_given && !r->fsid[0] && !trace_field_str(body, "fsid", buf, sizeof(buf))) {
		if (strlen(buf) != 36)
			return replay_error(r, ev, "capture marker: bad fsid=", -EINVAL);
		strcpy(r->fsid, buf);
	}
	ret = marker_u64(r, ev, body, "metadata_copies", 1, 4, &v, &found);
	if (!ret && found && !st->have_profile) {
		st->profile_copies = v;
		st->have_profile = true;
		st->source = "capture marker";
	}
	if (!ret)
		ret = marker_u64(r, ev, body, "total_rw_bytes", 0, (u64)-1, &v, &found);
	if (!ret && found && !st->have_total_rw) {
		st->total_rw_bytes = v;
		st->have_total_rw = true;
	}
	if (!ret)
		ret = marker_u64(r, ev, body, "data_chunk_size", 0, (u64)-1, &v, &found);
	if (!ret && found && !st->data_chunk_size)
		st->data_chunk_size = v;
	if (!ret)
		ret = marker_u64(r, ev, body, "sectorsize", 4096, 65536, &v, &found);
	if (!ret && found && !st->sectorsize)
		st->sectorsize = v;
	if (!ret)
		ret = marker_u64(r, ev, body, "nodesize", 4096, 65536, &v, &found);
	if (!ret && found && !st->nodesize)
		st->nodesize = v;
	if (!ret)
		ret = marker_u64(r, ev, body, "nr_cpu_ids", 1, 65536, &v, &found);
	if (!ret && found && !st->nr_cpu_ids)
		st->nr_cpu_ids = v;
	if (!ret)
		ret = marker_u64(r, ev, body, "csum_size", 4, 32, &v, &found);
	if (!ret && found && !st->csum_size)
		st->csum_size = v;
	if (!ret)
		ret = marker_u64(r, ev, body, "free_space_tree", 0, 1, &v, &found);
	if (!ret && found && st->free_space_tree < 0)
		st->free_space_tree = v;
	if (!ret)
		ret = marker_events(r, body);
	return ret;
}

/* --- part 1: preemptive flushing --------------------------------------------- */

static const struct {
	const char *label;		/* as the event prints it */
	size_t offset;
} state_fields[] = {
	{ "total_bytes", offsetof(struct btrfs_reserve_state, total_bytes) },
	{ "bytes_used", offsetof(struct btrfs_reserve_state, bytes_used) },
	{ "bytes_pinned", offsetof(struct btrfs_reserve_state, bytes_pinned) },
	{ "bytes_reserved", offsetof(struct btrfs_reserve_state, bytes_reserved) },
	{ "bytes_may_use", offsetof(struct btrfs_reserve_state, bytes_may_use) },
	{ "bytes_readonly", offsetof(struct btrfs_reserve_state, bytes_readonly) },
	{ "reclaim_size", offsetof(struct btrfs_reserve_state, reclaim_size) },
	{ "global_reserved", offsetof(struct btrfs_reserve_state, global_rsv_reserved) },
	{ "delayed_refs_reserved", offsetof(struct btrfs_reserve_state, delayed_refs_rsv_reserved) },
	{ "delayed_reserved", offsetof(struct btrfs_reserve_state, delayed_block_rsv_reserved) },
	{ "chunk_free_space", offsetof(struct btrfs_reserve_state, free_chunk_space) },
	{ "delalloc_bytes", offsetof(struct btrfs_reserve_state, delalloc_bytes) },
	{ "ordered_bytes", offsetof(struct btrfs_reserve_state, ordered_bytes) },
};

static int parse_state(struct btrfs_replay *r, const struct trace_event *ev,
		       const char *body, struct btrfs_reserve_state *s)
{
	char flags[64];
	size_t i;
	u64 clamp;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < sizeof(state_fields) / sizeof(state_fields[0]); i++) {
		u64 *dst = (u64 *)((char *)s + state_fields[i].offset);

		int ret = trace_field_u64(body, state_fields[i].label, dst);

		if (ret)
			return field_error(r, ev, state_fields[i].label, ret, "no number");
	}
	if (need_u64(r, ev, body, "clamp", &clamp))
		return -EINVAL;
	if (clamp > BTRFS_PREEMPT_MAX_CLAMP)
		return replay_error(r, ev, "clamp= above 8", -EINVAL);
	s->clamp = clamp;
	if (need_str(r, ev, body, "flags", flags, sizeof(flags)))
		return -EINVAL;
	if (!strcmp(flags, "METADATA"))
		s->flags = BTRFS_BLOCK_GROUP_METADATA;
	else if (!strcmp(flags, "DATA|METADATA"))
		s->flags = BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_DATA;
	else
		s->flags = 0;		/* not a metadata space info */
	s->profile_copies = r->st.profile_copies;
	s->total_rw_bytes = r->st.total_rw_bytes;
	s->data_chunk_size = r->st.data_chunk_size ? r->st.data_chunk_size :
			     BTRFS_MAX_DATA_CHUNK_SIZE;
	return 0;
}

static bool flushes(const struct btrfs_reserve_state *s,
		    const struct btrfs_kernel_model *m)
{
	struct btrfs_preempt_result res;

	btrfs_need_preemptive_reclaim(s, m, &res);
	return res.verdict;
}

/* As flushes(), the reason counted */
static bool flushes_why(const struct btrfs_reserve_state *s,
			const struct btrfs_kernel_model *m, struct replay_reasons *why)
{
	struct btrfs_preempt_result res;
	u32 i;

	btrfs_need_preemptive_reclaim(s, m, &res);
	for (i = 0; i < REPLAY_MAX_REASONS; i++) {
		if (!why->reason[i]) {
			why->reason[i] = res.reason ? res.reason : "?";
			why->verdict[i] = res.verdict;
		}
		if (!strcmp(why->reason[i], res.reason ? res.reason : "?")) {
			why->count[i]++;
			break;
		}
	}
	return res.verdict;
}

static u64 abs_diff(u64 a, u64 b)
{
	return a > b ? a - b : b - a;
}

/* Which approximate input turns the model's "flush" into the kernel's "no" */
static enum replay_explain explain(const struct replay_preempt *p,
				   const struct btrfs_reserve_state *s,
				   const struct btrfs_kernel_model *m,
				   const struct btrfs_preempt_result *res)
{
	struct btrfs_reserve_state alt = *s;
	u64 ordered = btrfs_preempt_ordered(s, m);

	if (abs_diff(ordered, s->delalloc_bytes) <= 2 * p->pcpu_err) {
		bool may_use = btrfs_preempt_counts_may_use(s, m);

		alt.delalloc_bytes = may_use ? 0 : 1;
		alt.ordered_bytes = 0;
		if (!flushes(&alt, m))
			return EXPLAIN_PCPU;
		alt = *s;
	}
	if (s->clamp < BTRFS_PREEMPT_MAX_CLAMP) {
		alt.clamp = s->clamp + 1;
		if (!flushes(&alt, m))
			return EXPLAIN_CLAMP;
	}
	if (!btrfs_preempt_counts_may_use(s, m) && res->used >= res->thresh_by_clamp[s->clamp] &&
	    res->used - res->thresh_by_clamp[s->clamp] < p->rsv_race)
		return EXPLAIN_RSV_RACE;
	return EXPLAIN_NONE;
}

const char *btrfs_replay_explain_str(enum replay_explain e)
{
	switch (e) {
	case EXPLAIN_PCPU:
		return "delalloc_bytes/ordered_bytes within the per-CPU counter error: the kernel's approximate read took the other branch";
	case EXPLAIN_CLAMP:
		return "no-flush at clamp + 1: the worker raised the clamp after it decided";
	case EXPLAIN_RSV_RACE:
		return "delayed reserves over the threshold by less than one create reservation per CPU: read without their locks";
	default:
		return "unexplained";
	}
}

/* The sparkline: buckets of states, halved in number when full */
static void timeline_add(struct replay_preempt *p, u32 permille)
{
	u64 width = 1, idx;

	while (width * REPLAY_TIMELINE < p->states)
		width *= 2;
	idx = (p->states - 1) / width;
	if (width > 1 && (p->states - 1) % width == 0 && idx == REPLAY_TIMELINE / 2) {
		/* the width just doubled: fold pairs of the old buckets */
		u32 i;

		for (i = 0; i < REPLAY_TIMELINE / 2; i++)
			p->timeline_permille[i] = p->timeline_permille[2 * i] >
				p->timeline_permille[2 * i + 1] ?
				p->timeline_permille[2 * i] : p->timeline_permille[2 * i + 1];
		memset(&p->timeline_permille[REPLAY_TIMELINE / 2], 0,
		       sizeof(p->timeline_permille) / 2);
	}
	if (permille > p->timeline_permille[idx])
		p->timeline_permille[idx] = permille;
}

/* --- the SVG timeline ---------------------------------------------------------- */

/* @b's samples after @a's, into @a */
static void bucket_merge(struct replay_svg_bucket *a, const struct replay_svg_bucket *b)
{
	u32 k;

	if (!b->samples) {
		a->triggers += b->triggers;
		return;
	}
	if (!a->samples)
		a->ts_first = b->ts_first;
	a->samples += b->samples;
	a->states += b->states;
	a->ts_last = b->ts_last;
	a->may_use_max = max_t(u64, a->may_use_max, b->may_use_max);
	a->used = b->used;
	a->clamp = b->clamp;
	for (k = 0; k < REPLAY_MAX_KERNELS; k++) {
		a->thresh[k] = b->thresh[k];
		a->flush[k] += b->flush[k];
	}
	a->triggers += b->triggers;
}

/* The bucket of the latest sample: full buckets fold in pairs */
static struct replay_svg_bucket *timeline_bucket(struct replay_timeline *tl)
{
	if (!tl->width)
		tl->width = 1;
	return &tl->b[tl->samples ? (tl->samples - 1) / tl->width : 0];
}

/*
 * One sample: @s evaluated by the recording kernel (the used and
 * thresh_by_clamp[clamp] drawn) and by each kernel (its flush marks).
 */
static void timeline_sample(struct btrfs_replay *r, u64 ts_ns,
			    const struct btrfs_reserve_state *s, bool state)
{
	struct replay_timeline *tl = &r->timeline;
	struct btrfs_preempt_result res;
	struct replay_svg_bucket *b;
	u32 i, k;

	if (!tl->width)
		tl->width = 1;
	if (tl->samples == tl->width * REPLAY_SVG_BUCKETS) {
		for (i = 0; i < REPLAY_SVG_BUCKETS / 2; i++) {
			tl->b[i] = tl->b[2 * i];
			bucket_merge(&tl->b[i], &tl->b[2 * i + 1]);
		}
		memset(&tl->b[REPLAY_SVG_BUCKETS / 2], 0, sizeof(tl->b) / 2);
		tl->width *= 2;
	}
	tl->samples++;
	b = timeline_bucket(tl);
	if (!b->samples)
		b->ts_first = ts_ns;
	b->samples++;
	b->states += state;
	b->ts_last = ts_ns;
	b->may_use_max = max_t(u64, b->may_use_max, s->bytes_may_use);
	b->clamp = s->clamp;
	btrfs_need_preemptive_reclaim(s, &r->recorded, &res);
	b->used = res.used;
	tl->y_max = max_t(u64, tl->y_max, max_t(u64, s->bytes_may_use, res.used));
	for (k = 0; k < r->nr_kernels; k++) {
		btrfs_need_preemptive_reclaim(s, &r->kernels[k], &res);
		b->thresh[k] = res.thresh_by_clamp[s->clamp];
		b->flush[k] += res.verdict;
		tl->y_max = max_t(u64, tl->y_max, b->thresh[k]);
	}
}

static void timeline_trigger(struct btrfs_replay *r)
{
	r->timeline.triggers++;
	timeline_bucket(&r->timeline)->triggers++;
}

static void set_bounds(struct btrfs_replay *r);

/* The recording kernel and the error bounds, once the marker is read */
static void first_state_setup(struct btrfs_replay *r)
{
	if (!r->st.recorded_version) {
		r->st.recorded_version = BTRFS_REPLAY_RECORDED_DEFAULT;
		r->recorded_assumed = true;
	}
	btrfs_kernel_model(r->st.recorded_version, &r->recorded);
	set_bounds(r);
}

static int preempt_state(struct btrfs_replay *r, const struct trace_event *ev,
			 const char *body)
{
	struct replay_preempt *p = &r->preempt;
	struct btrfs_reserve_state s;
	struct btrfs_preempt_result res;
	struct btrfs_kernel_model m512, m515;
	u64 thresh;
	u32 k;
	int ret;

	ret = parse_state(r, ev, body, &s);
	if (ret)
		return ret;
	if (!r->st.have_profile) {
		/* parts 1 and 4 are skipped with a note; the other parts go on */
		p->no_profile++;
		return 0;
	}
	if (!p->states && !p->other_flags)
		first_state_setup(r);
	if (!(s.flags & BTRFS_BLOCK_GROUP_METADATA)) {
		p->other_flags++;
		return 0;
	}
	r->points.anchor = s;
	r->points.anchor_lineno = ev->lineno;
	r->points.have_anchor = true;
	r->points.worker_busy = false;
	if (!p->states)
		p->first_ts = ev->ts_ns;
	p->last_ts = ev->ts_ns;
	p->states++;
	btrfs_need_preemptive_reclaim(&s, &r->recorded, &res);
	thresh = res.thresh_by_clamp[s.clamp];
	timeline_add(p, thresh ? (u32)(res.used >= 4 * thresh ? 4000 :
				       res.used * 1000 / thresh) : 4000);
	if (!res.verdict) {
		p->agree++;
	} else {
		enum replay_explain e = explain(p, &s, &r->recorded, &res);

		p->disagree++;
		p->explained[e]++;
		if (p->nr_listed < REPLAY_MAX_LISTED) {
			struct replay_disagreement *d = &p->listed[p->nr_listed++];

			d->lineno = ev->lineno;
			d->ts_ns = ev->ts_ns;
			d->used = res.used;
			d->thresh = thresh;
			d->clamp = s.clamp;
			d->may_use_branch = btrfs_preempt_counts_may_use(&s, &r->recorded);
			d->explain = e;
			d->bound = e == EXPLAIN_PCPU ? 2 * p->pcpu_err :
				   e == EXPLAIN_RSV_RACE ? p->rsv_race : 0;
		}
	}
	for (k = 0; k < r->nr_kernels; k++)
		p->flush_in[k] += flushes_why(&s, &r->kernels[k], &p->why[k]);
	timeline_sample(r, ev->ts_ns, &s, true);
	btrfs_preempt_change_models(&m512, &m515);
	if (flushes(&s, &m512) && !flushes(&s, &m515))
		p->only_512++;
	return 0;
}

/* "REASON: flush=N(NAME) flags=FLAGS bytes=N" after the fsid, every field whole */
static int trigger_flush(struct btrfs_replay *r, const struct trace_event *ev,
			 const char *body)
{
	const char *p = body;
	char flags[64];
	long long flush;
	u64 bytes;

	while (islower((unsigned char)*p) || *p == '_')
		p++;
	if (p == body || p[0] != ':' || p[1] != ' ')
		return replay_error(r, ev, "no REASON: before flush=", -EINVAL);
	if (need_s64(r, ev, p, "flush", &flush) ||
	    need_str(r, ev, p, "flags", flags, sizeof(flags)) ||
	    need_u64(r, ev, p, "bytes", &bytes))
		return -EINVAL;
	if (!strncmp(body, "preempt:", 8)) {
		r->preempt.preempt_triggers++;
		timeline_trigger(r);
		r->points.worker_busy = true;
	} else
		r->preempt.ticket_triggers++;
	return 0;
}

static int flush_space(struct btrfs_replay *r, const struct trace_event *ev,
		       const char *body)
{
	u64 v;

	if (need_u64(r, ev, body, "for_preempt", &v))
		return -EINVAL;
	r->preempt.preempt_flushes += v != 0;
	return 0;
}

/* --- part 1b: reservation decision points ------------------------------------ */

/* btrfs_fail_all_tickets prints the same state: an anchor, not a decision */
static int anchor_state(struct btrfs_replay *r, const struct trace_event *ev,
			const char *body)
{
	struct btrfs_reserve_state s;
	int ret;

	if (!r->st.have_profile)
		return 0;		/* part 1 refuses at its first decision state */
	ret = parse_state(r, ev, body, &s);
	if (ret || !(s.flags & BTRFS_BLOCK_GROUP_METADATA))
		return ret;
	if (!r->points.have_anchor && !r->preempt.states)
		first_state_setup(r);
	r->points.anchor = s;
	r->points.anchor_lineno = ev->lineno;
	r->points.have_anchor = true;
	return 0;
}

static void point_margin(struct replay_points *pts, const struct btrfs_preempt_result *res,
			 u32 clamp)
{
	u64 thresh = res->thresh_by_clamp[clamp];
	long long ppm;

	if (!thresh)
		return;
	ppm = ((long long)res->used - (long long)thresh) * 1000000LL / (long long)thresh;
	if (!pts->have_margin || ppm < pts->margin_min_ppm)
		pts->margin_min_ppm = ppm;
	if (!pts->have_margin || ppm > pts->margin_max_ppm)
		pts->margin_max_ppm = ppm;
	pts->have_margin = true;
	if (ppm >= -10000 && ppm <= 10000)
		pts->within_1pct++;
}

/*
 * The task that made a rise has its next event here: a "preempt" trigger
 * means the kernel's need_preemptive_reclaim() said flush there.
 */
static void resolve_point(struct btrfs_replay *r, const struct trace_event *ev,
			  bool preempt_trigger)
{
	struct replay_points *pts = &r->points;
	struct replay_point *pt;
	struct btrfs_preempt_result res;
	struct btrfs_kernel_model m512, m515;
	u32 k;

	if (ev->cpu >= REPLAY_MAX_CPUS)
		return;
	pt = &pts->pending[ev->cpu];
	if (!pt->set || pt->pid != ev->pid)
		return;
	pt->set = false;
	pts->points++;
	btrfs_need_preemptive_reclaim(&pt->s, &r->recorded, &res);
	if (preempt_trigger) {
		pts->kernel_flush++;
		point_margin(pts, &res, pt->s.clamp);
	}
	if (res.verdict == preempt_trigger)
		pts->agree++;
	else if (res.verdict)
		pts->model_flush_kernel_no++;
	else
		pts->model_no_kernel_flush++;
	for (k = 0; k < r->nr_kernels; k++)
		pts->flush_in[k] += flushes_why(&pt->s, &r->kernels[k], &pts->why[k]);
	timeline_sample(r, ev->ts_ns, &pt->s, false);
	btrfs_preempt_change_models(&m512, &m515);
	if (flushes(&pt->s, &m512) && !flushes(&pt->s, &m515))
		pts->only_512++;
}

/* --- part 4: over-commit ------------------------------------------------------ */

static u64 state_used(const struct btrfs_reserve_state *s)
{
	return s->bytes_used + s->bytes_reserved + s->bytes_pinned +
	       s->bytes_readonly + s->bytes_zone_unusable + s->bytes_may_use;
}

/*
 * A rise of @bytes on state @s (may_use before it): past total_bytes only
 * btrfs_can_overcommit() grants it, used + bytes < total + room.
 */
static void overcommit_rise(struct btrfs_replay *r, const struct trace_event *ev,
			    const struct btrfs_reserve_state *s, u64 bytes)
{
	struct replay_overcommit *oc = &r->oc;
	struct btrfs_reserve_state z = *s;
	u64 after = state_used(s) + bytes;
	u64 room_other, over;
	u32 k;

	oc->rises++;
	if (after <= s->total_bytes)
		return;
	oc->overcommits++;
	over = after - s->total_bytes;
	room_other = btrfs_calc_available_free_space(s, BTRFS_RESERVE_FLUSH_LIMIT, &r->recorded);
	if (btrfs_can_overcommit(s, bytes, BTRFS_RESERVE_FLUSH_ALL, &r->recorded))
		oc->within_flush_all++;
	else if (btrfs_can_overcommit(s, bytes, BTRFS_RESERVE_FLUSH_LIMIT, &r->recorded))
		oc->within_other++;
	else
		oc->beyond++;
	oc->recent[oc->recent_next] = (struct replay_oc_recent) {
		.bytes = bytes, .pid = ev->pid,
	};
	oc->recent_next = (oc->recent_next + 1) % REPLAY_OC_RECENT;
	oc->max_over = max_t(u64, oc->max_over, over);
	oc->max_over_permille = max_t(u64, oc->max_over_permille,
				      room_other ? over * 1000 / room_other : 1000000);
	if (oc->nr_listed < REPLAY_MAX_LISTED &&
	    !btrfs_can_overcommit(s, bytes, BTRFS_RESERVE_FLUSH_LIMIT, &r->recorded)) {
		struct replay_overcommit_line *l = &oc->listed[oc->nr_listed++];

		l->lineno = ev->lineno;
		l->over = over;
		l->room = room_other;
	}
	/* the zoned what-if: 256 MiB zones, no active-zone limit */
	z.zoned = true;
	z.zone_size = BTRFS_DEFAULT_ZONE_SIZE;
	z.max_active_zones = 0;
	for (k = 0; k < r->nr_kernels; k++) {
		oc->allowed[k] += btrfs_can_overcommit(s, bytes, BTRFS_RESERVE_FLUSH_LIMIT,
						       &r->kernels[k]);
		oc->zoned_allowed[k] += btrfs_can_overcommit(&z, bytes, BTRFS_RESERVE_FLUSH_LIMIT,
							     &r->kernels[k]);
	}
}

/*
 * "flags=METADATA bytes=N start_ns=N flush=NAME error=N", traced by the
 * task that waited, after btrfs_try_granting_tickets() granted it in
 * another task: the latest over-commit of that size by another task, not
 * yet claimed, was that grant and not a direct one.
 */
static int reserve_ticket(struct btrfs_replay *r, const struct trace_event *ev,
			  const char *body)
{
	struct replay_overcommit *oc = &r->oc;
	char flags[64];
	long long error;
	u64 bytes;
	u32 i;

	oc->tickets++;
	if (need_str(r, ev, body, "flags", flags, sizeof(flags)) ||
	    need_u64(r, ev, body, "bytes", &bytes) || need_s64(r, ev, body, "error", &error))
		return -EINVAL;
	if (error || !strstr(flags, "METADATA"))
		return 0;
	for (i = 1; i <= REPLAY_OC_RECENT; i++) {
		struct replay_oc_recent *rc =
			&oc->recent[(oc->recent_next + REPLAY_OC_RECENT - i) % REPLAY_OC_RECENT];

		if (rc->bytes == bytes && !rc->matched && rc->pid != ev->pid) {
			rc->matched = true;
			oc->ticket_grants++;
			return 0;
		}
	}
	return 0;
}

/* The image's state as the first anchor: may_use from the event, exact */
static bool image_anchor(struct btrfs_replay *r, const struct trace_event *ev,
			 bool may_use, u64 old)
{
	struct replay_points *pts = &r->points;

	if (!r->have_image_state || !r->st.have_profile)
		return false;
	if (!r->preempt.states && !r->preempt.other_flags)
		first_state_setup(r);
	pts->anchor = r->image_state;
	pts->anchor.profile_copies = r->st.profile_copies;
	pts->anchor.total_rw_bytes = r->st.total_rw_bytes;
	if (r->st.data_chunk_size)
		pts->anchor.data_chunk_size = r->st.data_chunk_size;
	if (may_use)
		pts->anchor.bytes_may_use = old;
	else
		pts->anchor.bytes_pinned = old;
	pts->anchor_lineno = ev->lineno;
	pts->have_anchor = true;
	r->anchor_from_image = true;
	return true;
}

void btrfs_replay_set_image_state(struct btrfs_replay *r,
				  const struct btrfs_reserve_state *s)
{
	r->image_state = *s;
	r->have_image_state = (s->flags & BTRFS_BLOCK_GROUP_METADATA) != 0;
}

/* "type=METADATA old=N diff=N": the counter after the change is exact */
static int update_bytes(struct btrfs_replay *r, const struct trace_event *ev,
			const char *body, bool may_use)
{
	struct replay_points *pts = &r->points;
	char type[32];
	long long diff;
	u64 old, now;

	if (need_str(r, ev, body, "type", type, sizeof(type)) ||
	    need_u64(r, ev, body, "old", &old) || need_s64(r, ev, body, "diff", &diff))
		return -EINVAL;
	if (strcmp(type, "METADATA") && strcmp(type, "DATA|METADATA"))
		return 0;
	now = old + (u64)diff;
	if (diff < 0 ? now > old : now < old)
		return replay_error(r, ev, "the counter wraps", -EINVAL);
	if (!pts->have_anchor && !image_anchor(r, ev, may_use, old)) {
		pts->no_anchor += may_use && diff > 0;
		return 0;
	}
	if (!may_use) {
		pts->anchor.bytes_pinned = now;
		return 0;
	}
	if (diff > 0)
		overcommit_rise(r, ev, &pts->anchor, (u64)diff);
	pts->anchor.bytes_may_use = now;
	if (diff <= 0 || pts->worker_busy || ev->cpu >= REPLAY_MAX_CPUS)
		return 0;
	/* __reserve_bytes() granted without a ticket: no tickets queued */
	pts->pending[ev->cpu].set = true;
	pts->pending[ev->cpu].pid = ev->pid;
	pts->pending[ev->cpu].lineno = ev->lineno;
	pts->pending[ev->cpu].s = pts->anchor;
	pts->pending[ev->cpu].s.reclaim_size = 0;
	return 0;
}

/* --- part 2: delalloc list locking ------------------------------------------- */

struct delalloc_inode {
	struct delalloc_inode *next;
	u64 root;
	u64 ino;
	u64 delalloc_bytes;
	struct extent_io_tree tree;
	struct replay_root_count *count;
	struct replay_delalloc *d;
};

static struct replay_root_count *root_count(struct replay_delalloc *d, u64 root)
{
	u32 i;

	for (i = 0; i < d->nr_roots; i++)
		if (d->roots[i].root == root)
			return &d->roots[i];
	if (d->nr_roots == REPLAY_MAX_ROOTS)
		return &d->other_roots;
	d->roots[d->nr_roots].root = root;
	return &d->roots[d->nr_roots++];
}

/* An inode's cycles, kept apart from its io tree, which goes when empty */
struct inode_cycles {
	struct inode_cycles *next;
	u64 root;
	u64 ino;
	u64 cycles;
};

static void inode_cycle(struct replay_delalloc *d, u64 root, u64 ino)
{
	struct inode_cycles **pp, *c;

	if (!d->cycle_buckets) {
		d->cycle_buckets = calloc(1U << 16, sizeof(*d->cycle_buckets));
		if (!d->cycle_buckets)
			return;		/* the per-inode list only: the totals stand */
		d->nr_cycle_buckets = 1U << 16;
	}
	pp = &d->cycle_buckets[hash_mix64(ino ^ (root << 40) ^ (root >> 24)) &
			       (d->nr_cycle_buckets - 1)];
	while (*pp && ((*pp)->root != root || (*pp)->ino != ino))
		pp = &(*pp)->next;
	c = *pp;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return;
		c->root = root;
		c->ino = ino;
		*pp = c;
		d->cycled_inodes++;
	}
	c->cycles++;
}

static u32 cycle_bin(u64 cycles)
{
	return cycles <= 2 ? cycles - 1 : cycles <= 4 ? 2 : cycles <= 8 ? 3 : 4;
}

/* The inodes by cycles: a histogram and the busiest, most cycles first */
void btrfs_replay_inode_cycles(const struct btrfs_replay *r, u64 bins[REPLAY_CYCLE_BINS],
			       struct replay_inode_cycles top[REPLAY_TOP_INODES], u32 *nr_top)
{
	const struct replay_delalloc *d = &r->delalloc;
	u32 i, j;

	memset(bins, 0, sizeof(u64) * REPLAY_CYCLE_BINS);
	*nr_top = 0;
	for (i = 0; i < d->nr_cycle_buckets; i++) {
		const struct inode_cycles *c;

		for (c = d->cycle_buckets[i]; c; c = c->next) {
			bins[cycle_bin(c->cycles)]++;
			/* insertion into the sorted top: cycles down, then root, ino up */
			for (j = *nr_top; j > 0; j--) {
				const struct replay_inode_cycles *t = &top[j - 1];

				if (t->cycles > c->cycles ||
				    (t->cycles == c->cycles && (t->root < c->root ||
				     (t->root == c->root && t->ino < c->ino))))
					break;
				if (j < REPLAY_TOP_INODES)
					top[j] = top[j - 1];
			}
			if (j < REPLAY_TOP_INODES) {
				top[j] = (struct replay_inode_cycles) {
					.root = c->root, .ino = c->ino, .cycles = c->cycles,
				};
				if (*nr_top < REPLAY_TOP_INODES)
					(*nr_top)++;
			}
		}
	}
}

/* btrfs_set_delalloc_extent(): the delalloc part of the set hook */
/* The replay a delalloc io tree belongs to */
static struct btrfs_replay *delalloc_replay(struct replay_delalloc *d)
{
	return (struct btrfs_replay *)((char *)d - offsetof(struct btrfs_replay, delalloc));
}

/*
 * fs_info->delalloc_bytes follows every inode's but the free-space cache's
 * (btrfs_set/clear_delalloc_extent()): the anchor of the reservation
 * points follows it exactly from its last recorded (or mount) value.
 */
static void follow_delalloc(struct replay_delalloc *d, u64 add, u64 sub)
{
	struct replay_points *pts = &delalloc_replay(d)->points;

	pts->delalloc_followed = true;
	pts->anchor.delalloc_bytes += add;
	pts->anchor.delalloc_bytes -= min_t(u64, sub, pts->anchor.delalloc_bytes);
}

static void delalloc_set_hook(void *ctx, const struct extent_state *state, u32 bits)
{
	struct delalloc_inode *di = ctx;
	u64 len = state->end + 1 - state->start;
	u64 prev = di->delalloc_bytes;
	/* do_list: not a free-space cache inode (those live in the root tree) */
	bool do_list = di->root != BTRFS_ROOT_TREE_OBJECTID;

	if ((state->state & EXTENT_DELALLOC) || !(bits & EXTENT_DELALLOC))
		return;
	di->delalloc_bytes += len;
	if (!do_list) {
		di->d->free_space_inode++;
		return;
	}
	follow_delalloc(di->d, len, 0);
	di->count->set_calls++;
	di->d->total.set_calls++;
	/* flagless: btrfs_add_delalloc_inodes() takes the lock every time */
	di->count->flagless++;
	di->d->total.flagless++;
	if (prev == 0) {
		di->count->flag_rule++;
		di->d->total.flag_rule++;
	}
}

/* btrfs_clear_delalloc_extent(): btrfs_del_delalloc_inode() at zero */
static void delalloc_clear_hook(void *ctx, const struct extent_state *state, u32 bits)
{
	struct delalloc_inode *di = ctx;
	u64 len = state->end + 1 - state->start;

	if (!(state->state & EXTENT_DELALLOC) || !(bits & EXTENT_DELALLOC))
		return;
	if (di->delalloc_bytes < len) {
		di->d->underflow++;
		di->delalloc_bytes = 0;
		return;
	}
	di->delalloc_bytes -= len;
	if (di->root != BTRFS_ROOT_TREE_OBJECTID)
		follow_delalloc(di->d, 0, len);
	if (di->delalloc_bytes || di->root == BTRFS_ROOT_TREE_OBJECTID)
		return;
	di->count->flag_rule++;
	di->count->flagless++;
	di->count->cycles++;
	di->d->total.flag_rule++;
	di->d->total.flagless++;
	di->d->total.cycles++;
	inode_cycle(di->d, di->root, di->ino);
}

static struct delalloc_inode **inode_slot(struct replay_delalloc *d, u64 root, u64 ino)
{
	u64 h = hash_mix64(ino ^ (root << 40) ^ (root >> 24));
	struct delalloc_inode **pp = &d->buckets[h & (d->nr_buckets - 1)];

	while (*pp && ((*pp)->root != root || (*pp)->ino != ino))
		pp = &(*pp)->next;
	return pp;
}

static struct delalloc_inode *inode_get(struct replay_delalloc *d, u64 root, u64 ino)
{
	struct delalloc_inode **pp = inode_slot(d, root, ino);
	struct delalloc_inode *di = *pp;

	if (di)
		return di;
	di = calloc(1, sizeof(*di));
	if (!di)
		return NULL;
	di->root = root;
	di->ino = ino;
	di->tree.live = &d->live_states;
	di->count = root_count(d, root);
	di->d = d;
	*pp = di;
	d->live_inodes++;
	return di;
}

/* An inode with no states left holds nothing the replay needs */
static void inode_put(struct replay_delalloc *d, struct delalloc_inode *di)
{
	struct delalloc_inode **pp;

	if (d->live_states > d->max_live_states)
		d->max_live_states = d->live_states;
	if (di->tree.nr)
		return;
	pp = inode_slot(d, di->root, di->ino);
	*pp = di->next;
	extent_io_tree_release(&di->tree);
	free(di);
	d->live_inodes--;
}

static int extent_bit_event(struct btrfs_replay *r, const struct trace_event *ev,
			    const char *body, int which)
{
	struct replay_delalloc *d = &r->delalloc;
	struct extent_io_hooks hooks = {
		.set = delalloc_set_hook,
		.clear = delalloc_clear_hook,
	};
	struct delalloc_inode *di;
	char tree[32], bits_str[256];
	u64 ino, root, start, len, end;
	u32 set_bits = 0, clear_bits = 0;
	int ret = 0;

	if (need_str(r, ev, body, "io_tree", tree, sizeof(tree)) ||
	    need_u64(r, ev, body, "ino", &ino) || need_u64(r, ev, body, "root", &root) ||
	    need_u64(r, ev, body, "start", &start) || need_u64(r, ev, body, "len", &len))
		return -EINVAL;
	if (which != REPLAY_EV_CLEAR_EXTENT_BIT) {
		if (need_str(r, ev, body, "set_bits", bits_str, sizeof(bits_str)))
			return -EINVAL;
		if (btrfs_parse_extent_bits(bits_str, &set_bits))
			return replay_error(r, ev, "bad set_bits=", -EINVAL);
	}
	if (which != REPLAY_EV_SET_EXTENT_BIT) {
		if (need_str(r, ev, body, "clear_bits", bits_str, sizeof(bits_str)))
			return -EINVAL;
		if (btrfs_parse_extent_bits(bits_str, &clear_bits))
			return replay_error(r, ev, "bad clear_bits=", -EINVAL);
	}
	if (strcmp(tree, "INODE_IO")) {
		d->other_trees++;
		return 0;
	}
	/*
	 * The event's len is end + 1 - start: a range to the end of the
	 * file (end (u64)-1, as an inode's teardown clears) wraps to
	 * -start, and from 0 to 0; only an end before the start is wrong
	 */
	end = start + len - 1;
	if (end < start)
		return replay_error(r, ev, "range ends before it starts", -EINVAL);
	di = inode_get(d, root, ino);
	if (!di)
		return replay_error(r, ev, "out of memory", -ENOMEM);
	hooks.ctx = di;
	if (which == REPLAY_EV_SET_EXTENT_BIT) {
		d->set_events++;
		ret = btrfs_set_extent_bit(&di->tree, start, end, set_bits, &hooks);
	} else if (which == REPLAY_EV_CLEAR_EXTENT_BIT) {
		d->clear_events++;
		ret = btrfs_clear_extent_bit(&di->tree, start, end, clear_bits, &hooks);
	} else {
		/* convert_extent_bit(): the set hooks, then the clear hooks, per state */
		d->convert_events++;
		ret = btrfs_set_extent_bit(&di->tree, start, end, set_bits, &hooks);
		if (!ret)
			ret = btrfs_clear_extent_bit(&di->tree, start, end,
						     clear_bits & ~set_bits, &hooks);
	}
	inode_put(d, di);
	if (ret == -E2BIG)
		return replay_error(r, ev, "more than 16M extent states live: the replay's memory bound", ret);
	if (ret)
		return replay_error(r, ev, ret == -ENOMEM ? "out of memory" : "bad range", ret);
	return 0;
}

/* --- part 3: delayed-ref heads of dropped data extents --------------------- */

struct delayed_head {
	struct delayed_head *next;
	u64 bytenr;
	u64 num_bytes;
	u64 charge;		/* the recording kernel's rule */
	u64 charge_before;	/* before v6.7 */
	long long ref_mod;	/* the head's total_ref_mod, from its events */
	u64 csum;		/* csum leaves charged now (total_ref_mod < 0) */
	u64 nodes;		/* ref nodes queued on it (delayed_ref_updates) */
};

#define DELAYED_HEADS_MAX	(16U << 20)

static struct delayed_head **head_slot(struct replay_delayed_refs *d, u64 bytenr)
{
	struct delayed_head **pp = &d->buckets[hash_mix64(bytenr) & (d->nr_buckets - 1)];

	while (*pp && (*pp)->bytenr != bytenr)
		pp = &(*pp)->next;
	return pp;
}

static int csum_params(struct btrfs_replay *r, struct btrfs_csum_params *p)
{
	if (!r->st.sectorsize || !r->st.nodesize || !r->st.csum_size ||
	    r->st.free_space_tree < 0)
		return -ENOENT;
	p->nodesize = r->st.nodesize;
	p->sectorsize = r->st.sectorsize;
	p->csum_size = r->st.csum_size;
	p->free_space_tree_opt = r->st.free_space_tree;
	return 0;
}

static void charge(struct replay_delayed_refs *d, struct delayed_head *h,
		   const struct btrfs_csum_delete_calc *before_calc)
{
	u64 now = d->calc.total - before_calc->total;
	u64 old = d->calc.total_before - before_calc->total_before;

	h->charge += now;
	h->charge_before += old;
	d->live_charge += now;
	d->live_charge_before += old;
	if (d->live_charge > d->peak_charge)
		d->peak_charge = d->live_charge;
	if (d->live_charge_before > d->peak_charge_before)
		d->peak_charge_before = d->live_charge_before;
	if (h->charge > d->max_head_charge)
		d->max_head_charge = h->charge;
}

/*
 * The action= of the delayed-ref events: show_ref_action() prints its
 * name; trace-cmd report, whose libtraceevent cannot resolve the enum,
 * prints the value of enum btrfs_delayed_ref_action (delayed-ref.h:
 * REF_ADD = 1, REF_DROP = 2, ...).  True for
 * a drop in either form.
 */
/* enum btrfs_delayed_ref_action of delayed-ref.h, the values trace-cmd prints */
enum {
	REF_ADD = 1,		/* BTRFS_ADD_DELAYED_REF */
	REF_DROP,		/* BTRFS_DROP_DELAYED_REF */
	REF_ADD_EXTENT,		/* BTRFS_ADD_DELAYED_EXTENT */
	REF_UPDATE_HEAD,	/* BTRFS_UPDATE_DELAYED_HEAD */
};

static int ref_action(const char *action)
{
	static const char * const names[] = {
		[REF_ADD] = "ADD_DELAYED_REF",
		[REF_DROP] = "DROP_DELAYED_REF",
		[REF_ADD_EXTENT] = "ADD_DELAYED_EXTENT",
		[REF_UPDATE_HEAD] = "UPDATE_DELAYED_HEAD",
	};
	const char *end;
	u64 v;
	int i;

	for (i = REF_ADD; i <= REF_UPDATE_HEAD; i++)
		if (!strcmp(action, names[i]))
			return i;
	/* trace-cmd: "1" or "0x1" */
	if (action[0] == '0' && action[1] == 'x')
		action += 2;
	if (trace_parse_u64(action, &end, &v) || *end ||
	    v > REF_UPDATE_HEAD)
		return -EINVAL;
	/* 0: none, as run_delayed_ref_head prints a head's ("0x0") */
	return v;
}

static bool is_drop_action(int action)
{
	return action == REF_DROP;
}

/*
 * The net of a head's event as add_delayed_ref_head() and
 * update_existing_head_ref() keep it: every add or drop is one ref node
 * (delayed_ref_updates, delayed_ref_bytes(1) each, merges of equal nodes
 * not seen without the ref-node events); a data head's csum leaves are
 * charged when its total_ref_mod goes below 0 and released when it comes
 * back, so a snapshot's added ref cancels the drop of the same extent.
 */
static void head_net(struct btrfs_replay *r, const struct btrfs_csum_params *params,
		     struct delayed_head *h, bool is_data, int action, bool created)
{
	struct replay_delayed_refs *d = &r->drefs;
	struct btrfs_csum_delete_calc one = { 0 };
	long long old = h->ref_mod;
	int delta = action == REF_DROP ? -1 :
		    action == REF_ADD || action == REF_ADD_EXTENT ? 1 : 0;

	if (!delta)
		return;
	btrfs_csum_delete_add_refs(params, &one, 1);
	h->nodes++;
	if (is_data)
		d->net.data_nodes++;
	else
		d->net.tree_nodes++;
	d->net.outstanding += one.drop_ref_bytes;
	h->ref_mod += delta;
	if (is_data && h->ref_mod < 0 && (created || old >= 0)) {
		btrfs_csum_delete_add_heads(params, &r->recorded, &one, h->num_bytes, 1);
		h->csum = one.csum_bytes;
		d->net.csum_charged += h->csum;
		d->net.outstanding += h->csum;
	} else if (is_data && h->ref_mod >= 0 && old < 0) {
		d->net.csum_released += h->csum;
		d->net.outstanding -= h->csum;
		h->csum = 0;
	}
	if (d->net.outstanding > d->net.peak_outstanding)
		d->net.peak_outstanding = d->net.outstanding;
}

static int delayed_ref_event(struct btrfs_replay *r, const struct trace_event *ev,
			     const char *body, int which)
{
	struct replay_delayed_refs *d = &r->drefs;
	struct btrfs_csum_delete_calc prev = d->calc;
	struct btrfs_csum_params params;
	struct delayed_head **pp, *h;
	char action_str[32];
	u64 bytenr, num_bytes, is_data = 1;
	int action;

	if (need_u64(r, ev, body, "bytenr", &bytenr) ||
	    need_u64(r, ev, body, "num_bytes", &num_bytes) ||
	    need_str(r, ev, body, "action", action_str, sizeof(action_str)) ||
	    (which != REPLAY_EV_ADD_DELAYED_DATA_REF &&
	     need_u64(r, ev, body, "is_data", &is_data)))
		return -EINVAL;
	action = ref_action(action_str);
	if (action < 0)
		return field_error(r, ev, "action", action, "not a delayed-ref action at");
	if (is_data > 1)
		return field_error(r, ev, "is_data", -EINVAL, "neither 0 nor 1 at");
	if (csum_params(r, &params)) {
		/* part 3 is skipped with a note; the other parts go on */
		d->no_params++;
		return 0;
	}
	if (!r->recorded.version)
		first_state_setup(r);
	pp = head_slot(d, bytenr);
	h = *pp;
	if (which == REPLAY_EV_RUN_DELAYED_REF_HEAD) {
		if (!h) {
			d->unknown_runs++;
			return 0;
		}
		d->runs++;
		d->rsv.cur.heads_run++;
		d->live--;
		d->live_charge -= h->charge;
		d->live_charge_before -= h->charge_before;
		d->net.outstanding -= h->csum + h->nodes *
			btrfs_calc_delayed_ref_bytes(params.nodesize,
						     params.free_space_tree_opt, 1);
		*pp = h->next;
		free(h);
		return 0;
	}
	if (which == REPLAY_EV_ADD_DELAYED_DATA_REF) {
		if (!is_drop_action(action))
			return 0;
		d->data_drop_refs++;
		btrfs_csum_delete_add_refs(&params, &d->calc, 1);
		if (h)
			charge(d, h, &prev);
		return 0;
	}
	if (h) {
		d->merged++;
		head_net(r, &params, h, is_data, action, false);
		return 0;
	}
	if (d->live >= DELAYED_HEADS_MAX)
		return replay_error(r, ev, "more than 16M delayed-ref heads queued: the replay's memory bound", -E2BIG);
	h = calloc(1, sizeof(*h));
	if (!h)
		return replay_error(r, ev, "out of memory", -ENOMEM);
	h->bytenr = bytenr;
	h->num_bytes = num_bytes;
	*pp = h;
	d->heads++;
	if (++d->live > d->peak_live)
		d->peak_live = d->live;
	if (is_data && is_drop_action(action)) {
		/* add_delayed_ref_head(): the csum deletion of a dropped data extent */
		d->data_drop_heads++;
		btrfs_csum_delete_add_heads(&params, &r->recorded, &d->calc, num_bytes, 1);
		charge(d, h, &prev);
	}
	head_net(r, &params, h, is_data, action, true);
	return 0;
}

/*
 * btrfs_space_reservation of delayed_refs_rsv, "TYPE: VAL reserve|release
 * BYTES".  6.18 emits "delayed_refs_rsv" from btrfs_delayed_refs_rsv_refill()
 * (the bytes refilled, at most delayed_ref_bytes(1)) and
 * btrfs_delayed_refs_rsv_release() (what block_rsv_release_bytes() frees as
 * the size drops: at most the drop of that call, one ref's
 * delayed_ref_bytes(1) or one head's csum leaves); the rises of the size
 * and what btrfs_update_delayed_refs_rsv() and btrfs_block_rsv_release()
 * move into it are not traced, so the events bound the reserve, they do
 * not give its size.
 */
/*
 * "TYPE: VAL reserve|release BYTES" (TP_printk of btrfs_space_reservation),
 * read from its end: the type is the kernel's string, which may hold a
 * colon itself ("space_info:enospc" of __reserve_bytes() callers), never a
 * blank.  Both numbers unsigned decimal, nothing after BYTES.
 */
static int parse_reservation(struct btrfs_replay *r, const struct trace_event *ev,
			     const char *body, size_t *type_len, bool *reserve,
			     u64 *bytes)
{
	const char *sep = NULL, *p, *end;
	u64 val;

	for (p = strstr(body, ": "); p; p = strstr(p + 1, ": "))
		sep = p;
	if (!sep || sep == body)
		return replay_error(r, ev, "not TYPE: VAL reserve|release BYTES (no TYPE:)", -EINVAL);
	for (p = body; p < sep; p++)
		if (!isgraph((unsigned char)*p))
			return replay_error(r, ev, "not TYPE: VAL reserve|release BYTES (a blank in TYPE)", -EINVAL);
	if (trace_parse_u64(sep + 2, &end, &val) || *end != ' ')
		return replay_error(r, ev, "not TYPE: VAL reserve|release BYTES (VAL not an unsigned decimal number)", -EINVAL);
	end++;
	if (!strncmp(end, "reserve ", 8))
		*reserve = true;
	else if (!strncmp(end, "release ", 8))
		*reserve = false;
	else
		return replay_error(r, ev, "not TYPE: VAL reserve|release BYTES (neither reserve nor release)", -EINVAL);
	if (trace_parse_u64(end + 8, &end, bytes) || *end)
		return replay_error(r, ev, "not TYPE: VAL reserve|release BYTES (BYTES not an unsigned decimal number ending the line)", -EINVAL);
	*type_len = sep - body;
	return 0;
}

static bool type_is(const char *body, size_t len, const char *type)
{
	return len == strlen(type) && !strncmp(body, type, len);
}

static int rsv_reservation(struct btrfs_replay *r, const struct trace_event *ev,
			   const char *body)
{
	struct replay_rsv_trace *t = &r->drefs.rsv;
	struct btrfs_csum_delete_calc one = { 0 };
	struct btrfs_csum_params params;
	const char *dir;
	bool reserve;
	size_t len;
	u64 bytes, limit;
	int ret;

	ret = parse_reservation(r, ev, body, &len, &reserve, &bytes);
	if (ret)
		return ret;
	dir = reserve ? "reserve" : "release";
	if (type_is(body, len, "local_delayed_refs_rsv")) {
		if (reserve) {
			t->local_reserves++;
			t->local_reserved += bytes;
		}
		return 0;
	}
	if (!type_is(body, len, "delayed_refs_rsv"))
		return 0;
	if (csum_params(r, &params)) {
		r->drefs.no_params++;
		return 0;
	}
	if (!r->recorded.version)
		first_state_setup(r);
	btrfs_csum_delete_add_refs(&params, &one, 1);
	limit = one.drop_ref_bytes;
	/* the callers and their bounds as read in 6.18 */
	t->bounds_checked = r->st.recorded_version >= BTRFS_DELAYED_REFS_BOUNDS_READ;
	t->events++;
	if (!strcmp(dir, "reserve")) {
		t->refills++;
		t->refilled += bytes;
		t->cur.refills++;
		t->cur.refilled += bytes;
		if (bytes > t->refill_max)
			t->refill_max = bytes;
		if (t->bounds_checked && bytes > limit) {
			t->refill_over_limit++;
			if (!t->first_bad_line)
				t->first_bad_line = ev->lineno;
		}
		return 0;
	}
	t->releases++;
	t->released += bytes;
	t->cur.releases++;
	t->cur.released += bytes;
	if (bytes > t->release_max)
		t->release_max = bytes;
	/* the releasing head was added before: its charge bounds its csum drop */
	if (t->bounds_checked && bytes > limit && bytes > r->drefs.max_head_charge) {
		t->release_over_call++;
		if (!t->first_bad_line)
			t->first_bad_line = ev->lineno;
	}
	return 0;
}

/* Close the transaction's row at its commit (gen 0: the trace's tail) */
static void close_txn(struct btrfs_replay *r, u64 gen)
{
	struct replay_rsv_trace *t = &r->drefs.rsv;

	t->cur.gen = gen;
	t->cur.size_rise = r->drefs.calc.total - t->rise_at_commit;
	t->rise_at_commit = r->drefs.calc.total;
	if (!gen && !t->cur.refills && !t->cur.releases && !t->cur.size_rise &&
	    !t->cur.heads_run)
		return;
	if (t->nr_txn < REPLAY_MAX_LISTED)
		t->txn[t->nr_txn++] = t->cur;
	else
		t->txn_overflow = true;
	memset(&t->cur, 0, sizeof(t->cur));
}

static int transaction_commit(struct btrfs_replay *r, const struct trace_event *ev,
			      const char *body)
{
	u64 gen;

	if (need_u64(r, ev, body, "gen", &gen))
		return -EINVAL;
	r->drefs.rsv.commits++;
	close_txn(r, gen);
	return 0;
}

/* --- dispatch ------------------------------------------------------------------ */

/*
 * A CPU's ring buffer holds its events in the order they were recorded, and
 * tracefs prints each buffer in order: trace_pipe, read while events are
 * written, may step back in time between two CPUs, never on one. A step
 * back on one CPU is a trace spliced from two captures or edited, and its
 * states would be replayed out of order.
 */
static int check_cpu_order(struct btrfs_replay *r, const struct trace_event *ev)
{
	u64 last;

	if (ev->cpu >= REPLAY_MAX_CPUS)
		return 0;
	last = r->cpu_last_ts[ev->cpu];
	if (r->cpu_last_line[ev->cpu] && ev->ts_ns < last) {
		snprintf(r->err, sizeof(r->err),
			 "line %llu: %s: time %llu.%06llu on CPU %u is before line %llu's %llu.%06llu on that CPU: a CPU records in time order (traces spliced or edited?)",
			 (unsigned long long)ev->lineno, ev->name,
			 (unsigned long long)(ev->ts_ns / 1000000000),
			 (unsigned long long)(ev->ts_ns % 1000000000 / 1000),
			 ev->cpu,
			 (unsigned long long)r->cpu_last_line[ev->cpu],
			 (unsigned long long)(last / 1000000000),
			 (unsigned long long)(last % 1000000000 / 1000));
		return -EINVAL;
	}
	r->cpu_last_ts[ev->cpu] = ev->ts_ns;
	r->cpu_last_line[ev->cpu] = ev->lineno;
	return 0;
}

int btrfs_replay_event(struct btrfs_replay *r, const struct trace_event *ev)
{
	char fsid[37];
	const char *body;
	int i;

	if (!strcmp(ev->name, "marker"))
		return read_marker(r, ev);
	i = event_index(ev->name);
	if (i < 0)
		return 0;		/* an event the replay does not read */
	if (trace_body_fsid(ev->body, fsid, &body))
		return replay_error(r, ev, "the body does not start with a filesystem UUID", -EINVAL);
	if (!r->fsid[0]) {
		strcpy(r->fsid, fsid);
		r->fsid_first_seen = true;
	}
	if (strcmp(r->fsid, fsid)) {
		/* "the first seen" is only a choice when there is one */
		if (r->fsid_first_seen)
			return replay_error(r, ev, "events of a second filesystem: choose one with --fsid (or the device)", -EINVAL);
		r->other_fs_events++;
		return 0;
	}
	if (check_cpu_order(r, ev))
		return -EINVAL;
	r->events++;
	r->seen_mask |= 1ULL << i;
	/* part 1 follows delalloc_bytes through part 2's io trees */
	if (r->parts && event_parts[i] && !(r->parts & event_parts[i]) &&
	    !((event_parts[i] & P2) && (r->parts & P1)))
		return 0;		/* a part not asked for */
	if (event_parts[i] & P1)
		resolve_point(r, ev, i == REPLAY_EV_TRIGGER_FLUSH &&
			      !strncmp(body, "preempt:", 8));
	switch (i) {
	case REPLAY_EV_DONE_PREEMPT:
		return preempt_state(r, ev, body);
	case REPLAY_EV_FAIL_ALL_TICKETS:
		return anchor_state(r, ev, body);
	case REPLAY_EV_UPDATE_MAY_USE:
	case REPLAY_EV_UPDATE_PINNED:
		return update_bytes(r, ev, body, i == REPLAY_EV_UPDATE_MAY_USE);
	case REPLAY_EV_RESERVE_TICKET:
		return reserve_ticket(r, ev, body);
	case REPLAY_EV_TRIGGER_FLUSH:
		return trigger_flush(r, ev, body);
	case REPLAY_EV_FLUSH_SPACE:
		return flush_space(r, ev, body);
	case REPLAY_EV_SET_EXTENT_BIT:
	case REPLAY_EV_CLEAR_EXTENT_BIT:
	case REPLAY_EV_CONVERT_EXTENT_BIT:
		return extent_bit_event(r, ev, body, i);
	case REPLAY_EV_ADD_DELAYED_REF_HEAD:
	case REPLAY_EV_RUN_DELAYED_REF_HEAD:
	case REPLAY_EV_ADD_DELAYED_DATA_REF:
		return delayed_ref_event(r, ev, body, i);
	case REPLAY_EV_SPACE_RESERVATION:
		return rsv_reservation(r, ev, body);
	case REPLAY_EV_TRANSACTION_COMMIT:
		return transaction_commit(r, ev, body);
	default:
		return 0;
	}
}

static u32 ilog2_u32(u32 v)
{
	u32 l = 0;

	while (v >>= 1)
		l++;
	return l;
}

/*
 * The bounds of the explanations, from the static state: the per-CPU
 * counters may hold delalloc_batch = sectorsize * 512 * (1 + ilog2(cpus))
 * unsummed per CPU; one create reservation per CPU (5 items inserted,
 * and their delayed refs without the free space tree's doubling).
 */
static void set_bounds(struct btrfs_replay *r)
{
	u32 cpus = r->st.nr_cpu_ids ? r->st.nr_cpu_ids : 1;
	u64 sectorsize = r->st.sectorsize ? r->st.sectorsize : 4096;
	u64 nodesize = r->st.nodesize ? r->st.nodesize : 16384;

	r->preempt.pcpu_err = sectorsize * 512 * (1 + ilog2_u32(cpus)) * cpus;
	r->preempt.rsv_race = (u64)cpus * (btrfs_calc_insert_metadata_size(nodesize, 5) +
					   btrfs_calc_delayed_ref_bytes(nodesize, false, 5));
}

void btrfs_replay_finish(struct btrfs_replay *r)
{
	set_bounds(r);
	close_txn(r, 0);
}

/*
 * The events a part reads, none of which the trace has (or the marker
 * enabled): part 1 weighs decision states or reservation points, part 2
 * sets or clears, part 3 the heads, part 4 the may_use rises.
 */
void btrfs_replay_missing(const struct btrfs_replay *r, int part, char *buf, size_t len)
{
	static const int part1[] = { REPLAY_EV_DONE_PREEMPT, REPLAY_EV_UPDATE_MAY_USE, -1 };
	static const int part2[] = { REPLAY_EV_SET_EXTENT_BIT, REPLAY_EV_CLEAR_EXTENT_BIT, -1 };
	static const int part3[] = { REPLAY_EV_ADD_DELAYED_REF_HEAD, -1 };
	static const int part4[] = { REPLAY_EV_UPDATE_MAY_USE, -1 };
	const int *need = part == 1 ? part1 : part == 2 ? part2 : part == 3 ? part3 : part4;
	u64 have = r->enabled_mask ? r->enabled_mask : r->seen_mask;
	size_t used = 0;
	const int *e;

	buf[0] = '\0';
	for (e = need; *e >= 0; e++)
		if (have & (1ULL << *e))
			return;
	for (e = need; *e >= 0; e++)
		used += snprintf(buf + used, used < len ? len - used : 0, "%s%s",
				 used ? " or " : "", event_names[*e]);
}

void btrfs_replay_release(struct btrfs_replay *r)
{
	u32 i;

	for (i = 0; r->delalloc.buckets && i < r->delalloc.nr_buckets; i++) {
		struct delalloc_inode *di = r->delalloc.buckets[i];

		while (di) {
			struct delalloc_inode *next = di->next;

			extent_io_tree_release(&di->tree);
			free(di);
			di = next;
		}
	}
	free(r->delalloc.buckets);
	r->delalloc.buckets = NULL;
	for (i = 0; r->delalloc.cycle_buckets && i < r->delalloc.nr_cycle_buckets; i++) {
		struct inode_cycles *c = r->delalloc.cycle_buckets[i];

		while (c) {
			struct inode_cycles *next = c->next;

			free(c);
			c = next;
		}
	}
	free(r->delalloc.cycle_buckets);
	r->delalloc.cycle_buckets = NULL;
	for (i = 0; r->drefs.buckets && i < r->drefs.nr_buckets; i++) {
		struct delayed_head *h = r->drefs.buckets[i];

		while (h) {
			struct delayed_head *next = h->next;

			free(h);
			h = next;
		}
	}
	free(r->drefs.buckets);
	r->drefs.buckets = NULL;
}
