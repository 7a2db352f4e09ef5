/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A streaming reader of tracefs text: the "trace" and "trace_pipe" files
 * (TASK-PID [CPU] FLAGS SECONDS: EVENT: BODY) and trace-cmd report's lines
 * (the same without, or with, the flags column).  One line at a time in a
 * fixed buffer, so a trace of any size is read in bounded memory.  Nothing
 * here knows btrfs: the fields of an event body are read by name.
 */
#ifndef BTRFS_SPACE_TRACE_PARSE_H
#define BTRFS_SPACE_TRACE_PARSE_H

#include <stdbool.h>
#include <stdio.h>
#include "common/types.h"

/* The longest line read: btrfs events print at most ~700 characters */
#define TRACE_LINE_MAX	4096

struct trace_reader {
	FILE *fp;
	u64 lineno;
	u64 lost_events;	/* "CPU:N [LOST M EVENTS]" lines, summed */
	u64 bytes;		/* read so far, for progress */
	u64 cut_lineno;		/* a last line without its end: not read; 0 none */
	u64 cut_bytes;		/* its length */
	bool lost_overflow;	/* the lost-event counts passed 2^64 - 1 */
	bool head_cut;		/* the first line is no event (begun inside it): not read */
	u64 head_cut_bytes;	/* its length */
	char line[TRACE_LINE_MAX + 1];
	char err[160];		/* why the last call failed, with the line */
};

struct trace_event {
	u64 lineno;
	u32 cpu;
	u32 pid;		/* of TASK-PID, 0 when it has none */
	u64 ts_ns;		/* the timestamp, SECONDS.FRACTION as ns */
	const char *name;	/* "btrfs_trigger_flush"; "marker" for trace_marker text */
	const char *body;	/* what the event printed */
};

void trace_reader_init(struct trace_reader *r, FILE *fp);
/*
 * 1 and @ev, 0 at the end (a last line cut before its end is not read:
 * r->cut_lineno; nor is a first line that holds no event, r->head_cut),
 * -EINVAL (r->err says which line and why)
 */
int trace_read_event(struct trace_reader *r, struct trace_event *ev);

/* An unsigned decimal, digits only and in range; @end after it */
int trace_parse_u64(const char *s, const char **end, u64 *val);
/* "key=NUMBER" in @body (a "(NAME)" after the number is allowed) */
int trace_field_u64(const char *body, const char *key, u64 *val);
int trace_field_s64(const char *body, const char *key, long long *val);
/* "key=WORD": the text up to the next blank (not empty), NUL-ended in @buf */
int trace_field_str(const char *body, const char *key, char *buf, size_t len);
/* The leading "FSID: " of a btrfs event: 36 characters copied to @fsid */
int trace_body_fsid(const char *body, char fsid[37], const char **rest);

#endif
