/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A progress line on stderr for long runs, only when stderr is a
 * terminal, rewritten at most five times a second and erased at the end.
 */
#ifndef BTRFS_SPACE_PROGRESS_H
#define BTRFS_SPACE_PROGRESS_H

#include <stdbool.h>
#include <time.h>
#include "common/types.h"

struct progress {
	bool enabled;
	bool shown;
	const char *what;
	struct timespec last;
};

void progress_init(struct progress *p, const char *what);
/* "what: done of total (pct%)" */
void progress_update(struct progress *p, u64 done, u64 total);
/* A line of one's own, when one is due */
__attribute__ ((format (printf, 2, 3)))
void progress_printf(struct progress *p, const char *fmt, ...);
/* True when a line may be written now; it then counts as written */
bool progress_due(struct progress *p);
void progress_clear(struct progress *p);

#endif
