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

/*
 * Printable text of @src, which may hold a path as the system gave it:
 * control bytes (a terminal escape, a newline that would split a one-line
 * message), C1 controls and bytes that are not UTF-8 become "\xNN"; the
 * rest is copied.  Returns a malloc'ed string (NULL: no memory).
 */
char *escape_text(const char *src);
/* The length of the valid UTF-8 character at @s (1 to 4), 0 if not one */
int utf8_char_len(const unsigned char *s);

#endif
