// SPDX-License-Identifier: GPL-2.0
/*
 * tracefs text, one line at a time.  The layouts read:
 *
 *   trace, trace_pipe:  "   TASK-PID   [CPU] FLAGS  SECONDS: EVENT: BODY"
 *   trace-cmd report:   "   TASK-PID   [CPU]  SECONDS: EVENT: BODY"
 *                       (with a flags column too when it was asked for)
 *   perf script:        "   TASK PID [CPU] SECONDS:   btrfs:EVENT: BODY"
 *                       (perf record -e 'btrfs:*'; flags and enums as
 *                       numbers, as trace-cmd prints them; with
 *                       --show-lost-events, "... PERF_RECORD_LOST lost N"
 *                       is counted as lost)
 *
 * The task name may hold blanks, so the line is anchored on the first
 * "[CPU]" column.  Header and comment lines ("#", trace-cmd's "cpus=N" and
 * "version = N", "CPU N is empty") are skipped; "CPU:N [LOST M EVENTS]" is
 * counted, and so are the events the "trace" file's header says the ring
 * buffer overwrote.  A first line that is no event (a capture begun inside
 * it) and a last line without its end are set aside, said by the caller.
 * Anything else is an error naming the line.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "common/trace-parse.h"

void trace_reader_init(struct trace_reader *r, FILE *fp)
{
	memset(r, 0, sizeof(*r));
	r->fp = fp;
}

static int reader_error(struct trace_reader *r, const char *why)
{
	snprintf(r->err, sizeof(r->err), "line %llu: %s",
		 (unsigned long long)r->lineno, why);
	return -EINVAL;
}

/*
 * Every lost-event count adds here: a sum past 2^64 - 1 (counts no ring
 * buffer could have, two lines of 2^63) would wrap to a small number and
 * the replay would say nothing was lost; trace_read_event() refuses it
 */
static void add_lost(struct trace_reader *r, u64 n)
{
	if (n > UINT64_MAX - r->lost_events)
		r->lost_overflow = true;
	else
		r->lost_events += n;
}

static bool is_blank_line(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '\0' || *s == '#';
}

/* "CPU:3 [LOST 17 EVENTS]" (trace, trace_pipe) or "CPU 3 is empty" (trace-cmd) */
static int trace_parse_u64_at(const char *s, const char **end, u64 *val);

static bool is_cpu_line(struct trace_reader *r, const char *s)
{
	const char *lost, *end;
	u64 n;

	if (strncmp(s, "CPU", 3) || !(s[3] == ':' || s[3] == ' '))
		return false;
	lost = strstr(s, "[LOST ");
	if (lost) {
		/* a count that does not read as one is not this line */
		if (trace_parse_u64_at(lost + 6, &end, &n) || strcmp(end, " EVENTS]"))
			return false;
		add_lost(r, n);
		return true;
	}
	return strstr(s, " is empty") != NULL;
}

/*
 * The "trace" file's header: "# entries-in-buffer/entries-written: 329/1860254"
 * after the ring buffer overwrote its oldest events (the default overwrite
 * mode); the difference is lost, like trace_pipe's "[LOST N EVENTS]"
 */
static void count_overwritten(struct trace_reader *r, const char *s)
{
	static const char tag[] = "# entries-in-buffer/entries-written: ";
	const char *end;
	u64 in_buffer, written;

	if (strncmp(s, tag, sizeof(tag) - 1))
		return;
	if (trace_parse_u64_at(s + sizeof(tag) - 1, &end, &in_buffer) || *end != '/' ||
	    trace_parse_u64_at(end + 1, &end, &written) || written < in_buffer)
		return;
	add_lost(r, written - in_buffer);
}

static bool is_header_line(const char *s)
{
	return !strncmp(s, "cpus=", 5) || !strncmp(s, "version = ", 10);
}

/* The first " [DIGITS]" column; returns what follows its "]" */
static char *find_cpu_column(char *s, u32 *cpu)
{
	char *p;

	for (p = strchr(s, '['); p; p = strchr(p + 1, '[')) {
		char *end;
		unsigned long v;

		if (p == s || p[-1] != ' ' || !isdigit((unsigned char)p[1]))
			continue;
		v = strtoul(p + 1, &end, 10);
		if (*end != ']' || v > 65535)
			continue;
		*cpu = v;
		return end + 1;
	}
	return NULL;
}

/* The PID of "TASK-PID   [CPU]": the digits after the last '-' before the column */
static u32 task_pid(const char *line, const char *after_cpu)
{
	const char *p = after_cpu;
	u32 pid = 0, mul = 1;

	while (p > line && *p != '[')
		p--;
	while (p > line && p[-1] == ' ')
		p--;
	while (p > line && isdigit((unsigned char)p[-1]) && mul <= 100000000) {
		p--;
		pid += (*p - '0') * mul;
		mul *= 10;
	}
	/* "TASK-PID" in tracefs and trace-cmd, "TASK PID" in perf script */
	return p > line && (p[-1] == '-' || p[-1] == ' ') ? pid : 0;
}

static char *next_token(char *p, char **end)
{
	while (*p == ' ')
		p++;
	*end = p;
	while (**end && **end != ' ')
		(*end)++;
	return p;
}

/* "12345.678901:" -> ns; false if the token is not a timestamp */
static bool parse_timestamp(const char *tok, const char *end, u64 *ns)
{
	u64 sec = 0, frac = 0;
	int digits = 0;
	const char *p = tok;

	if (end - tok < 4 || end[-1] != ':')
		return false;
	for (; p < end - 1 && isdigit((unsigned char)*p); p++) {
		if (sec > 1000000000000ULL)
			return false;
		sec = sec * 10 + (*p - '0');
	}
	if (p == tok || *p != '.')
		return false;
	for (p++; p < end - 1 && isdigit((unsigned char)*p); p++) {
		if (digits < 9) {
			frac = frac * 10 + (*p - '0');
			digits++;
		}
	}
	if (p != end - 1 || digits == 0)
		return false;
	while (digits++ < 9)
		frac *= 10;
	*ns = sec * 1000000000ULL + frac;
	return true;
}

/* trace-cmd prints markers as "print: tracing_mark_write: TEXT" or "print: ADDR: TEXT" */
static const char *marker_text(const char *name, const char *body)
{
	const char *p;

	if (!strcmp(name, "tracing_mark_write"))
		return body;
	if (strcmp(name, "print"))
		return NULL;
	if (!strncmp(body, "tracing_mark_write: ", 20))
		return body + 20;
	for (p = body; isxdigit((unsigned char)*p) || *p == 'x'; p++)
		;
	if (p > body && p[0] == ':' && p[1] == ' ')
		return p + 2;
	return body;
}

/*
 * perf script --show-lost-events: "TASK PID [CPU] SECONDS: PERF_RECORD_LOST
 * lost N", the events perf's buffers dropped (without that option perf
 * script only warns on its standard error)
 */
static bool perf_lost(struct trace_reader *r, const char *tok, const char *end)
{
	static const char tag[] = "PERF_RECORD_LOST";
	const char *p;
	u64 n;

	if ((size_t)(end - tok) != sizeof(tag) - 1 || strncmp(tok, tag, sizeof(tag) - 1))
		return false;
	for (p = end; *p == ' '; p++)
		;
	if (strncmp(p, "lost ", 5) || trace_parse_u64_at(p + 5, &p, &n))
		return false;
	add_lost(r, n);
	return true;
}

/* 1 and @ev for an event, 0 for a line that holds none, <0 for an error */
static int parse_event_line(struct trace_reader *r, char *s, struct trace_event *ev)
{
	char *p, *tok, *end;
	const char *marker;

	p = find_cpu_column(s, &ev->cpu);
	if (!p)
		return reader_error(r, "not a trace line (no [CPU] column)");
	ev->pid = task_pid(s, p);
	tok = next_token(p, &end);
	if (!parse_timestamp(tok, end, &ev->ts_ns)) {
		/* the flags column ("d..1.", "...1") comes first in trace/trace_pipe */
		tok = next_token(end, &end);
		if (!parse_timestamp(tok, end, &ev->ts_ns))
			return reader_error(r, "no timestamp after the [CPU] column");
	}
	tok = next_token(end, &end);
	if (perf_lost(r, tok, end))
		return 0;
	if (end == tok || end[-1] != ':')
		return reader_error(r, "no event name after the timestamp");
	end[-1] = '\0';
	/* perf script names the event with its system: "btrfs:EVENT:" */
	if (!strncmp(tok, "btrfs:", 6))
		tok += 6;
	ev->name = tok;
	ev->body = *end ? end + 1 : end;
	while (*ev->body == ' ')
		ev->body++;
	ev->lineno = r->lineno;
	marker = marker_text(ev->name, ev->body);
	if (marker) {
		ev->name = "marker";
		ev->body = marker;
	}
	return 1;
}

/*
 * One line into r->line: 1 with its length, 0 at the end; a byte at a
 * time, so a NUL in the line is seen (fgets() would hide it)
 */
static int read_line(struct trace_reader *r, size_t *len, bool *newline)
{
	size_t n = 0;
	int c;

	*newline = false;
	while ((c = getc_unlocked(r->fp)) != EOF) {
		if (c == '\n') {
			*newline = true;
			break;
		}
		if (n == TRACE_LINE_MAX) {
			n++;		/* too long: the caller says so */
			break;
		}
		r->line[n++] = c;
	}
	if (c == EOF && n == 0)
		return 0;
	r->line[n > TRACE_LINE_MAX ? TRACE_LINE_MAX : n] = '\0';
	r->bytes += n + *newline;
	*len = n;
	return 1;
}

int trace_read_event(struct trace_reader *r, struct trace_event *ev)
{
	bool newline;
	size_t len;
	int ret;

	while (read_line(r, &len, &newline)) {
		r->lineno++;
		if (len > TRACE_LINE_MAX)
			return reader_error(r, "longer than 4096 characters");
		if (memchr(r->line, '\0', len))
			return reader_error(r, "holds a NUL byte: not a text trace");
		if (!newline) {
			/*
			 * Only the last line can lack its end: a capture stopped
			 * while a line was written.  The replay ends before it.
			 */
			r->cut_lineno = r->lineno;
			r->cut_bytes = len;
			return 0;
		}
		if (len && r->line[len - 1] == '\r')
			r->line[--len] = '\0';
		count_overwritten(r, r->line);
		if (is_blank_line(r->line) || is_header_line(r->line) ||
		    is_cpu_line(r, r->line))
			ret = 0;
		else
			ret = parse_event_line(r, r->line, ev);
		if (r->lost_overflow)
			return reader_error(r, "the lost-event counts add up past 2^64 - 1: no ring buffer or perf counts so many");
		if (ret < 0 && r->lineno == 1) {
			/*
			 * Only the first line can lack its start: a capture
			 * begun inside a line (a copy from an offset, a pipe
			 * opened late).  The replay starts after it.
			 */
			r->head_cut_bytes = len;
			r->head_cut = true;
			continue;
		}
		if (ret)
			return ret;
	}
	if (ferror(r->fp)) {
		snprintf(r->err, sizeof(r->err), "after line %llu: read error: %s",
			 (unsigned long long)r->lineno, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* Where "key=" starts a field of @body, or NULL */
static const char *find_field(const char *body, const char *key)
{
	size_t klen = strlen(key);
	const char *p = body;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == body || p[-1] == ' ') && p[klen] == '=')
			return p + klen + 1;
		p += klen;
	}
	return NULL;
}

static bool number_ends(char c)
{
	return c == '\0' || c == ' ' || c == '(' || c == ',';
}

/*
 * An unsigned decimal at @s, digits only (no sign, blank, 0x, or overflow);
 * @end after it.  strtoull() alone takes "-1" and " 7" and wraps.
 */
int trace_parse_u64(const char *s, const char **end, u64 *val)
{
	return trace_parse_u64_at(s, end, val);
}

static int trace_parse_u64_at(const char *s, const char **end, u64 *val)
{
	u64 v = 0;
	const char *p = s;

	for (; isdigit((unsigned char)*p); p++) {
		u64 d = *p - '0';

		if (v > (~0ULL - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (p == s)
		return -EINVAL;
	*val = v;
	*end = p;
	return 0;
}

int trace_field_u64(const char *body, const char *key, u64 *val)
{
	const char *v = find_field(body, key);
	const char *end;

	if (!v)
		return -ENOENT;
	if (trace_parse_u64(v, &end, val) || !number_ends(*end))
		return -EINVAL;
	return 0;
}

int trace_field_s64(const char *body, const char *key, long long *val)
{
	const char *v = find_field(body, key);
	const char *end;
	bool neg;
	u64 mag;

	if (!v)
		return -ENOENT;
	neg = *v == '-';
	if (trace_parse_u64(v + neg, &end, &mag) || !number_ends(*end) ||
	    mag > (u64)LLONG_MAX + neg)
		return -EINVAL;
	*val = neg ? (long long)(0 - mag) : (long long)mag;
	return 0;
}

int trace_field_str(const char *body, const char *key, char *buf, size_t len)
{
	const char *v = find_field(body, key);
	size_t n = 0;

	if (!v)
		return -ENOENT;
	while (v[n] && v[n] != ' ')
		n++;
	if (!n || n >= len)
		return -EINVAL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return 0;
}

int trace_body_fsid(const char *body, char fsid[37], const char **rest)
{
	int i;

	for (i = 0; i < 36; i++) {
		char c = body[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? c != '-' : !isxdigit((unsigned char)c))
			return -EINVAL;
	}
	if (body[36] != ':')
		return -EINVAL;
	memcpy(fsid, body, 36);
	fsid[36] = '\0';
	*rest = body[37] == ' ' ? body + 38 : body + 37;
	return 0;
}
