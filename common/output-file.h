/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files this tool writes (a picture, a report) must never be what it
 * reads.  A path is refused when it is a block device, or the same file
 * (device and inode) as one of the inputs, named by path or open as a file
 * descriptor, or the backing file of an input that is a loop device.  The path "-" is standard output, checked the same way.
 */
#ifndef BTRFS_SPACE_COMMON_OUTPUT_FILE_H
#define BTRFS_SPACE_COMMON_OUTPUT_FILE_H

#include <stdbool.h>
#include <stdio.h>

struct output_inputs {
	char * const *paths;
	int nr_paths;
	const int *fds;		/* may hold -1 for "none" */
	int nr_fds;
};

/* True for "-", standard output */
bool output_is_stdout(const char *path);

/* True when @path exists and may not be written; false when it may */
bool output_is_input(const char *path, const struct output_inputs *in);

/*
 * Create or truncate @path and open it for writing in *@out.  The file is
 * opened first, checked, and only then truncated, so a path that turns
 * out to be an input loses nothing.  0, -EPERM when refused, or -errno.
 */
int output_open(const char *path, const struct output_inputs *in, FILE **out);

/*
 * Flush and close standard output, the report's stream: 0 when every byte
 * written reached it, else -errno (a full disk, /dev/full), or -ECANCELED
 * when an earlier write failed and its errno is lost, so the caller does
 * not exit 0 with a cut report.
 */
int output_close_stdout(void);

#endif
