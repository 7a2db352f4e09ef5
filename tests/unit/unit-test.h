/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_UNIT_TEST_H
#define BTRFS_SPACE_UNIT_TEST_H

/* Failed checks so far; main returns non-zero when there are any */
extern int unit_failures;

/* Print "ok - ..." or "not ok - ..." for one check */
__attribute__ ((format (printf, 2, 3)))
void check(int cond, const char *fmt, ...);
void check_u64(const char *what, unsigned long long got, unsigned long long want);

#endif
