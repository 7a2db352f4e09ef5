// SPDX-License-Identifier: GPL-2.0
/*
 * Is a device given for an offline read mounted right now?  The mount
 * table alone cannot say: a btrfs mount's major:minor in
 * /proc/self/mountinfo is an anonymous device, and only one of a
 * multi-device filesystem's devices is its source.  The kernel's own list
 * is /sys/fs/btrfs/<uuid>/devices/, one entry per device of each mounted
 * btrfs (the directory exists from mount to unmount); a regular file is
 * found through the loop devices among those devices that read it
 * (/sys/block/loopN/loop/backing_file).  The mount point is then a
 * mountinfo line whose source is one of that filesystem's devices.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "common/mounted.h"

static int read_line(const char *file, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* A sysfs "dev" file: "MAJ:MIN" */
static int read_devt(const char *file, dev_t *devt)
{
	unsigned int maj, min;
	char buf[32];

	if (read_line(file, buf, sizeof(buf)) || sscanf(buf, "%u:%u", &maj, &min) != 2)
		return -1;
	*devt = makedev(maj, min);
	return 0;
}

/* Loop device @name (as /sys/block names it) reads the inode @st */
static bool loop_reads_file(const char *name, const struct stat *st)
{
	char file[PATH_MAX], backing[PATH_MAX];
	struct stat bst;
	char *deleted;

	if (strncmp(name, "loop", 4))
		return false;
	snprintf(file, sizeof(file), "/sys/block/%s/loop/backing_file", name);
	if (read_line(file, backing, sizeof(backing)))
		return false;	/* not attached, or a partition */
	deleted = strstr(backing, " (deleted)");
	if (deleted)
		*deleted = 0;
	return !stat(backing, &bst) && bst.st_dev == st->st_dev && bst.st_ino == st->st_ino;
}

/*
 * The mounted btrfs with a loop device that reads @st, and that device's
 * name: only the loop devices of mounted btrfs filesystems are looked at
 * (every loop device of the machine was a failed open of its
 * backing_file each, 40 of them 0.3 ms of a 7 ms run)
 */
static bool mounted_fs_of_file(const struct stat *st, char *fsdir, size_t size,
			       char *name, size_t name_size)
{
	DIR *dir = opendir("/sys/fs/btrfs");
	struct dirent *de;
	bool found = false;

	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		char path[PATH_MAX + 16];
		struct dirent *dev;
		DIR *devs;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "features"))
			continue;
		snprintf(fsdir, size, "/sys/fs/btrfs/%s", de->d_name);
		snprintf(path, sizeof(path), "%s/devices", fsdir);
		devs = opendir(path);
		if (!devs)
			continue;
		while (!found && (dev = readdir(devs))) {
			if (!loop_reads_file(dev->d_name, st))
				continue;
			if (name)
				snprintf(name, name_size, "%s", dev->d_name);
			found = true;
		}
		closedir(devs);
	}
	closedir(dir);
	return found;
}

/* @devt is one of the devices listed in @fsdir/devices/ */
static bool fs_has_device(const char *fsdir, dev_t devt, char *name, size_t size)
{
	char path[PATH_MAX];
	struct dirent *de;
	bool found = false;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/devices", fsdir);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		char file[PATH_MAX + NAME_MAX + 8];
		dev_t d;

		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s/dev", path, de->d_name);
		if (read_devt(file, &d) || d != devt)
			continue;
		if (name)
			snprintf(name, size, "%s", de->d_name);
		found = true;
	}
	closedir(dir);
	return found;
}

/* The /sys/fs/btrfs/<uuid> of the mounted btrfs that has @devt */
static bool mounted_fs_of(dev_t devt, char *fsdir, size_t size, char *name, size_t name_size)
{
	DIR *dir = opendir("/sys/fs/btrfs");
	struct dirent *de;
	bool found = false;

	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "features"))
			continue;
		snprintf(fsdir, size, "/sys/fs/btrfs/%s", de->d_name);
		found = fs_has_device(fsdir, devt, name, name_size);
	}
	closedir(dir);
	return found;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = 0;
}

/*
 * A mount point of the filesystem @fsdir: a btrfs line of mountinfo whose
 * source is one of its devices, the top of the filesystem (root "/")
 * preferred over a subvolume mount.
 */
static void find_mount_point(const char *fsdir, char *mnt, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[3 * PATH_MAX];
	bool top = false;

	mnt[0] = 0;
	if (!f)
		return;
	while (!top && fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], point[PATH_MAX], fstype[64], source[PATH_MAX];
		const char *sep = strstr(line, " - ");
		struct stat st;

		if (!sep || sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2 ||
		    sscanf(sep + 3, "%63s %4095s", fstype, source) != 2 ||
		    strcmp(fstype, "btrfs"))
			continue;
		unescape(source);
		if (stat(source, &st) || !S_ISBLK(st.st_mode) ||
		    !fs_has_device(fsdir, st.st_rdev, NULL, 0))
			continue;
		if (mnt[0] && strcmp(root, "/"))
			continue;
		unescape(point);
		snprintf(mnt, size, "%s", point);
		top = !strcmp(root, "/");
	}
	fclose(f);
}

int device_mounted_btrfs(const char *path, char *dev, size_t dev_size,
			 char *mnt, size_t mnt_size)
{
	char fsdir[PATH_MAX];
	struct stat st;
	bool found;

	if (stat(path, &st))
		return 0;
	if (S_ISBLK(st.st_mode))
		found = mounted_fs_of(st.st_rdev, fsdir, sizeof(fsdir), dev, dev_size);
	else if (S_ISREG(st.st_mode))
		found = mounted_fs_of_file(&st, fsdir, sizeof(fsdir), dev, dev_size);
	else
		return 0;
	if (!found)
		return 0;
	find_mount_point(fsdir, mnt, mnt_size);
	return 1;
}

int open_path_inode(const char *path, unsigned long long *ino)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	*ino = st.st_ino;
	return fd;
}
