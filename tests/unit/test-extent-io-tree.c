// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of kernel-shared/extent-io-tree.c and common/trace-parse.c:
 * the states a sequence of set/clear operations leaves (split at both
 * ends, a state per gap, merging of equal neighbours unless locked), how
 * often the hooks see a state without DELALLOC being given it, and the
 * fields and lines of tracefs text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit-test.h"
#include "common/trace-parse.h"
#include "kernel-shared/extent-io-tree.h"

struct hook_count {
	int delalloc_sets;	/* states without DELALLOC given it */
	int delalloc_clears;	/* states with DELALLOC losing it */
};

static void count_set(void *ctx, const struct extent_state *st, u32 bits)
{
	struct hook_count *c = ctx;

	if (!(st->state & EXTENT_DELALLOC) && (bits & EXTENT_DELALLOC))
		c->delalloc_sets++;
}

static void count_clear(void *ctx, const struct extent_state *st, u32 bits)
{
	struct hook_count *c = ctx;

	if ((st->state & EXTENT_DELALLOC) && (bits & EXTENT_DELALLOC))
		c->delalloc_clears++;
}

static void check_state(const struct extent_io_tree *t, u32 i, u64 start,
			u64 end, u32 bits)
{
	check(i < t->nr && t->states[i].start == start && t->states[i].end == end &&
	      t->states[i].state == bits,
	      "state %u is [%llu, %llu] bits 0x%x", i, (unsigned long long)start,
	      (unsigned long long)end, bits);
}

static void test_buffered_write(void)
{
	struct extent_io_tree t = { 0 };
	struct hook_count c = { 0 };
	struct extent_io_hooks h = { count_set, count_clear, &c };
	u64 live = 0;
	int k;

	t.live = &live;
	/* a buffered write: lock, set delalloc, unlock; pages 0, 2, 4 */
	for (k = 0; k < 3; k++) {
		u64 s = k * 8192;

		btrfs_set_extent_bit(&t, s, s + 4095, EXTENT_LOCKED, &h);
		btrfs_set_extent_bit(&t, s, s + 4095, EXTENT_DELALLOC | EXTENT_DELALLOC_NEW, &h);
		btrfs_clear_extent_bit(&t, s, s + 4095, EXTENT_LOCKED, &h);
	}
	check_u64("states after 3 non-adjacent writes", t.nr, 3);
	check_u64("live states counted", live, 3);
	check_u64("delalloc sets", c.delalloc_sets, 3);
	check_state(&t, 1, 8192, 12287, EXTENT_DELALLOC | EXTENT_DELALLOC_NEW);
	/* filling page 1 merges pages 0-2 into one state */
	btrfs_set_extent_bit(&t, 4096, 8191, EXTENT_DELALLOC | EXTENT_DELALLOC_NEW, &h);
	check_u64("states after filling the gap", t.nr, 2);
	check_state(&t, 0, 0, 12287, EXTENT_DELALLOC | EXTENT_DELALLOC_NEW);
	/* setting delalloc again over it is no new delalloc */
	btrfs_set_extent_bit(&t, 0, 20479, EXTENT_DELALLOC, &h);
	check_u64("delalloc sets after a set over delalloc and a gap", c.delalloc_sets, 5);
	/* writeback clears all of it: one hook call per state */
	btrfs_clear_extent_bit(&t, 0, (u64)-1, EXTENT_DELALLOC | EXTENT_DELALLOC_NEW, &h);
	check_u64("states after the clear", t.nr, 0);
	check_u64("live states after the clear", live, 0);
	check_u64("delalloc clears", c.delalloc_clears, 3);
	extent_io_tree_release(&t);
}

static void test_locked_split(void)
{
	struct extent_io_tree t = { 0 };
	struct hook_count c = { 0 };
	struct extent_io_hooks h = { count_set, count_clear, &c };

	btrfs_set_extent_bit(&t, 0, 4095, EXTENT_LOCKED, &h);
	btrfs_set_extent_bit(&t, 4096, 8191, EXTENT_LOCKED, &h);
	check_u64("locked neighbours do not merge", t.nr, 2);
	/* one set over both locked states and a gap: three hook calls */
	btrfs_set_extent_bit(&t, 0, 12287, EXTENT_DELALLOC, &h);
	check_u64("delalloc sets over two locked states and a gap", c.delalloc_sets, 3);
	btrfs_clear_extent_bit(&t, 0, 12287, EXTENT_LOCKED, &h);
	check_u64("unlocked equal states merge", t.nr, 1);
	check_state(&t, 0, 0, 12287, EXTENT_DELALLOC);
	/* a clear in the middle splits, CLEAR_ALL_BITS empties */
	btrfs_clear_extent_bit(&t, 4096, 8191, EXTENT_DELALLOC, &h);
	check_u64("states after a middle clear", t.nr, 2);
	check_state(&t, 1, 8192, 12287, EXTENT_DELALLOC);
	btrfs_clear_extent_bit(&t, 0, 12287, EXTENT_CLEAR_ALL_BITS, &h);
	check_u64("states after CLEAR_ALL_BITS", t.nr, 0);
	check(btrfs_set_extent_bit(&t, 10, 9, EXTENT_DIRTY, &h) != 0, "an inverted range is refused");
	extent_io_tree_release(&t);
}

static void test_bits(void)
{
	u32 bits;

	check(!btrfs_parse_extent_bits("DELALLOC|LOCKED|0x4", &bits) &&
	      bits == (EXTENT_DELALLOC | EXTENT_LOCKED | EXTENT_DIO_LOCKED),
	      "DELALLOC|LOCKED|0x4 parses");
	check(!btrfs_parse_extent_bits("", &bits) && bits == 0, "no bits is 0");
	check(btrfs_parse_extent_bits("DELALLOC||LOCKED", &bits) != 0, "an empty name is refused");
	check(btrfs_parse_extent_bits("UPTODATE", &bits) != 0, "a name 6.18 lacks is refused");
}

static void test_trace_lines(void)
{
	static const char text[] =
		"# tracer: nop\n"
		"cpus=2\n"
		"   kworker/u8:2-31065   [001] d..1. 13808.888659: btrfs_flush_space: "
		"6772d6a8-9af7-47d4-8859-49157733aa04: state=1(X) flags=4(METADATA) num_bytes=0 ret=0 for_preempt=1\n"
		"CPU:1 [LOST 17 EVENTS]\n"
		"  my task-12 [000] 5.5: print: tracing_mark_write: hello there\n"
		"garbage\n";
	FILE *fp = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct trace_reader r;
	struct trace_event ev;
	char fsid[37];
	const char *rest;
	long long s;
	u64 v;

	if (!fp) {
		check(0, "fmemopen");
		return;
	}
	trace_reader_init(&r, fp);
	check(trace_read_event(&r, &ev) == 1 && !strcmp(ev.name, "btrfs_flush_space") &&
	      ev.cpu == 1 && ev.pid == 31065 && ev.ts_ns == 13808888659000ULL && ev.lineno == 3,
	      "a trace line: name, cpu, pid, timestamp, line");
	check(!trace_body_fsid(ev.body, fsid, &rest) &&
	      !strcmp(fsid, "6772d6a8-9af7-47d4-8859-49157733aa04") &&
	      !strncmp(rest, "state=", 6), "the fsid and the rest of the body");
	check(!trace_field_u64(rest, "flags", &v) && v == 4, "flags=4(METADATA) is 4");
	check(!trace_field_u64(rest, "for_preempt", &v) && v == 1, "the last field");
	check(trace_field_u64(rest, "bytes", &v) != 0, "bytes= is not num_bytes=");
	check(!trace_field_s64("a=1 diff=-42", "diff", &s) && s == -42, "a negative field");
	check(trace_read_event(&r, &ev) == 1 && !strcmp(ev.name, "marker") &&
	      !strcmp(ev.body, "hello there") && ev.pid == 12 && ev.ts_ns == 5500000000ULL,
	      "a trace-cmd marker with a blank in the task name");
	check_u64("lost events counted", r.lost_events, 17);
	check(trace_read_event(&r, &ev) < 0 && !strncmp(r.err, "line 6:", 7),
	      "a garbage line is an error naming line 6 (%s)", r.err);
	fclose(fp);
}

int main(void)
{
	test_buffered_write();
	test_locked_split();
	test_bits();
	test_trace_lines();
	return unit_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
