// SPDX-License-Identifier: GPL-2.0
/*
 * trace-parse.c: the numbers and fields of an event body read strictly
 * (what sscanf("%llu") and strtoull() let through: a sign, blanks, 0x,
 * overflow, trailing bytes), and a last line cut before its end read as
 * the end of the trace, with its line number; perf script's layout and
 * lost events, an overwritten buffer's header, a first line cut.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "common/trace-parse.h"

static void test_u64(void)
{
	static const char * const bad[] = {
		"", "-1", "+1", " 1", "0x10", "x", "18446744073709551616",
		"99999999999999999999",
	};
	const char *end;
	u64 v = 0;
	size_t i;

	check(!trace_parse_u64("18446744073709551615", &end, &v) && v == ~0ULL && !*end,
	      "2^64 - 1 reads");
	check(!trace_parse_u64("524288 release", &end, &v) && v == 524288 && *end == ' ',
	      "a number ends at a blank");
	/* refused, or read only up to what the caller then finds there */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check(trace_parse_u64(bad[i], &end, &v) != 0 || *end, "'%s' not read whole", bad[i]);
}

static void test_fields(void)
{
	long long s = 0;
	char buf[16];
	u64 v = 0;

	check_u64("bytes=5", trace_field_u64("a=1 bytes=5", "bytes", &v), 0);
	check_u64("its value", v, 5);
	check_u64("num_bytes= is not bytes=", trace_field_u64("num_bytes=5", "bytes", &v),
		  (unsigned long long)-ENOENT);
	check(trace_field_u64("bytes=5x", "bytes", &v) == -EINVAL, "bytes=5x refused");
	check(trace_field_u64("bytes=-5", "bytes", &v) == -EINVAL, "bytes=-5 refused");
	check(trace_field_u64("bytes=0x5", "bytes", &v) == -EINVAL, "bytes=0x5 refused");
	check(trace_field_u64("bytes=18446744073709551616", "bytes", &v) == -EINVAL,
	      "bytes=2^64 refused");
	check(!trace_field_u64("flush=1(FLUSH_DELAYED_ITEMS_NR)", "flush", &v) && v == 1,
	      "a number before (NAME)");
	check(!trace_field_s64("diff=-9223372036854775808", "diff", &s) && s == (-9223372036854775807LL - 1),
	      "the least signed value");
	check(trace_field_s64("diff=9223372036854775808", "diff", &s) == -EINVAL,
	      "2^63 refused as signed");
	check(trace_field_s64("diff=--1", "diff", &s) == -EINVAL, "diff=--1 refused");
	check(trace_field_str("io_tree= ino=1", "io_tree", buf, sizeof(buf)) == -EINVAL,
	      "an empty word refused");
}

static int read_all(const char *text, struct trace_reader *r, int *events)
{
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	struct trace_event ev;
	int ret;

	*events = 0;
	trace_reader_init(r, fp);
	while ((ret = trace_read_event(r, &ev)) > 0)
		(*events)++;
	fclose(fp);
	return ret;
}

static void test_cut_line(void)
{
	static const char whole[] =
		"  rm-1 [001] ..... 1.000001: btrfs_trigger_flush: x: preempt: flush=1(A) flags=METADATA bytes=4\n";
	char text[512];
	struct trace_reader r;
	int events;

	snprintf(text, sizeof(text), "%s%s", whole, "  rm-1 [001] ..... 1.000002: btrfs_trigger_flush: x: pre");
	check_u64("a cut last line is the end", read_all(text, &r, &events), 0);
	check_u64("the events before it", events, 1);
	check_u64("the cut line's number", r.cut_lineno, 2);
	check_u64("whole trace: nothing cut", read_all(whole, &r, &events), 0);
	check_u64("whole trace: cut_lineno", r.cut_lineno, 0);
	check_u64("CPU:0 [LOST 17 EVENTS] counted",
		  (read_all("CPU:0 [LOST 17 EVENTS]\n", &r, &events), r.lost_events), 17);
	/* after an event: a first line that is none is taken as cut (test_layouts) */
	snprintf(text, sizeof(text), "%s%s", whole, "CPU:0 [LOST -1 EVENTS]\n");
	check(read_all(text, &r, &events) < 0,
	      "a LOST line whose count is no number is not a CPU line");
}

/* The layouts an administrator records: perf script, an overwritten buffer, a cut start */
static void test_layouts(void)
{
	static const char perf[] =
		"              dd 13435 [000] 13753.924972:   btrfs:btrfs_set_extent_bit: x: set_bits=0x1\n"
		"         kworker/u8:6 31068 [001] 13753.930000: PERF_RECORD_LOST lost 6057\n";
	static const char event[] =
		"  rm-1 [001] ..... 1.000001: btrfs_trigger_flush: x: preempt: flush=1(A) flags=METADATA bytes=4\n";
	FILE *fp = fmemopen((void *)perf, strlen(perf), "r");
	struct trace_reader r;
	struct trace_event ev;
	char text[512];
	int events;

	trace_reader_init(&r, fp);
	check_u64("perf script: an event", trace_read_event(&r, &ev), 1);
	check(!strcmp(ev.name, "btrfs_set_extent_bit"), "perf script: the event's name without btrfs:");
	check_u64("perf script: the PID after a blank", ev.pid, 13435);
	check_u64("perf script: the CPU", ev.cpu, 0);
	check_u64("perf script: PERF_RECORD_LOST is no event", trace_read_event(&r, &ev), 0);
	check_u64("perf script: its count lost", r.lost_events, 6057);
	fclose(fp);

	snprintf(text, sizeof(text), "# tracer: nop\n#\n# entries-in-buffer/entries-written: 329/1860254   #P:2\n%s",
		 event);
	check_u64("an overwritten buffer's trace", read_all(text, &r, &events), 0);
	check_u64("its lost events", r.lost_events, 1860254 - 329);
	check_u64("its event", events, 1);

	snprintf(text, sizeof(text), "ee_read_lock: x: block=32899072 generation=16\n%s", event);
	check_u64("a first line begun inside it", read_all(text, &r, &events), 0);
	check(r.head_cut && r.head_cut_bytes == 45, "set aside, with its length");
	check_u64("the events after it", events, 1);
	snprintf(text, sizeof(text), "%sno trace line\n", event);
	check(read_all(text, &r, &events) < 0 && !r.head_cut, "a later line that is no event is an error");

	/* lost counts that add up past 2^64 - 1 would wrap to "none lost" */
	snprintf(text, sizeof(text), "%s%s",
		 "  perf 7 [000] 1.000000: PERF_RECORD_LOST lost 18446744073709551615\n",
		 "  perf 7 [000] 1.000001: PERF_RECORD_LOST lost 1\n");
	check(read_all(text, &r, &events) == -EINVAL && !strncmp(r.err, "line 2: the lost-event counts", 29),
	      "perf lost counts past 2^64 - 1: an error naming line 2");
	snprintf(text, sizeof(text), "# entries-in-buffer/entries-written: 0/18446744073709551615   #P:2\n"
		 "CPU:1 [LOST 2 EVENTS]\n");
	check(read_all(text, &r, &events) == -EINVAL && !strncmp(r.err, "line 2: the lost-event counts", 29),
	      "an overwritten buffer's count and a LOST line past 2^64 - 1: an error naming line 2");
}

int main(void)
{
	test_u64();
	test_fields();
	test_cut_line();
	test_layouts();
	return unit_failures ? 1 : 0;
}
