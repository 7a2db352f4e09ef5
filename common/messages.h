/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages to the user.  Errors and warnings go to stderr with the same
 * prefixes as btrfs-progs, so scripts that grep for "ERROR: " keep working.
 * Only cmds/ and main call these: the layers below return errors instead.
 */
#ifndef BTRFS_SPACE_MESSAGES_H
#define BTRFS_SPACE_MESSAGES_H

#define LOG_QUIET	0	/* -q: errors only */
#define LOG_DEFAULT	1
#define LOG_VERBOSE	2

void set_log_level(int level);
int get_log_level(void);

__attribute__ ((format (printf, 1, 2)))
void error(const char *fmt, ...);
__attribute__ ((format (printf, 1, 2)))
void warning(const char *fmt, ...);
/* Something worth knowing that is neither wrong nor verbose detail */
__attribute__ ((format (printf, 1, 2)))
void pr_note(const char *fmt, ...);
__attribute__ ((format (printf, 2, 3)))
void pr_verbose(int level, const char *fmt, ...);

#endif
