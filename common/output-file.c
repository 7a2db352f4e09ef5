// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "common/output-file.h"

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * An input that is a loop device reads its backing file: writing that
 * file overwrites the image as surely as writing the device, read-only
 * loop device or not.  The kernel names it in
 * /sys/dev/block/MAJ:MIN/loop/backing_file.
 */
static bool backs_loop_input(const struct stat *out, const struct stat *input)
{
	char sys[64], path[PATH_MAX + 16];
	struct stat st;
	size_t len;
	FILE *f;

	if (!S_ISBLK(input->st_mode))
		return false;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(input->st_rdev), minor(input->st_rdev));
	f = fopen(sys, "re");
	if (!f)
		return false;
	len = fread(path, 1, sizeof(path) - 1, f);
	fclose(f);
	path[len] = 0;
	len = strcspn(path, "\n");
	path[len] = 0;
	/* the kernel appends " (deleted)" once the file is unlinked */
	if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
		path[len - 10] = 0;
	return !stat(path, &st) && same_file(out, &st);
}

static bool matches_input(const struct stat *out, const struct stat *input)
{
	return same_file(out, input) || backs_loop_input(out, input);
}

/*
 * A block device is refused whatever it holds: truncating one, or writing
 * a picture over its start, would destroy a filesystem.
 */
static bool stat_is_input(const struct stat *out, const struct output_inputs *in)
{
	struct stat st;
	int i;

	if (S_ISBLK(out->st_mode))
		return true;
	for (i = 0; i < in->nr_paths; i++)
		if (!stat(in->paths[i], &st) && matches_input(out, &st))
			return true;
	for (i = 0; i < in->nr_fds; i++)
		if (in->fds[i] >= 0 && !fstat(in->fds[i], &st) && matches_input(out, &st))
			return true;
	return false;
}

bool output_is_stdout(const char *path)
{
	return !strcmp(path, "-");
}

bool output_is_input(const char *path, const struct output_inputs *in)
{
	struct stat st;

	if (output_is_stdout(path))
		return !fstat(STDOUT_FILENO, &st) && stat_is_input(&st, in);
	return !stat(path, &st) && stat_is_input(&st, in);
}

int output_open(const char *path, const struct output_inputs *in, FILE **out)
{
	struct stat st;
	int fd, ret;

	if (output_is_stdout(path))
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
	else
		fd = open(path, O_WRONLY | O_CREAT | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out_close;
	}
	if (stat_is_input(&st, in)) {
		ret = -EPERM;
		goto out_close;
	}
	/*
	 * A pipe or /dev/null cannot be truncated, and need not be; standard
	 * output is the shell's to truncate (">") or not (">>").
	 */
	if (S_ISREG(st.st_mode) && !output_is_stdout(path) && ftruncate(fd, 0)) {
		ret = -errno;
		goto out_close;
	}
	*out = fdopen(fd, "w");
	if (*out)
		return 0;
	ret = -errno;
out_close:
	close(fd);
	return ret;
}

int output_close_stdout(void)
{
	/* an earlier write's error is gone with its errno: say "a write failed" */
	int ret = ferror(stdout) ? -ECANCELED : 0;

	errno = 0;
	if (fflush(stdout) && !ret)
		ret = errno ? -errno : -EIO;
	errno = 0;
	if (fclose(stdout) && !ret)
		ret = errno ? -errno : -EIO;
	return ret;
}
