// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/device-scan.h"
#include "common/dynlib.h"
#include "common/io.h"
#include "common/messages.h"
#include "common/uuid-text.h"

#define MAX_MEMBERS		1024

/*
 * The primary superblock's identity, as @fmt reads it; 1 if it is not the
 * format's, <0 if the path cannot be read.  Not counted: no stats.
 */
static int read_sb_id(const struct io_format *fmt, const char *path,
		      struct io_super_id *id, int *fd_out)
{
	struct io_dev dev;
	u8 *sb = malloc(fmt->super_size);
	int ret;

	if (!sb)
		return -ENOMEM;
	ret = io_open(&dev, path, fmt, NULL);
	if (ret) {
		free(sb);
		return ret;
	}
	ret = io_read(&dev, sb, fmt->super_size, fmt->super_offset[0], 0);
	if (!ret && !fmt->super_id(sb, id))
		ret = 1;
	if (ret == -ERANGE)
		ret = 1;
	if (ret == 1 && fd_out && !dev.dump) {
		*fd_out = dev.fd;
		dev.fd = -1;
	}
	io_close(&dev);
	free(sb);
	return ret;
}

/* ------------------------------------------------------------------------
 * What it is, when not btrfs
 */

static const char *probe_value(blkid_probe pr, const char *name)
{
	const char *val = NULL;

	if (blkid_api.blkid_probe_lookup_value(pr, name, &val, NULL))
		return NULL;
	return val;
}

static void describe_probe(const struct io_format *fmt, blkid_probe pr,
			   int rc, const char *path, char *msg, size_t len)
{
	const char *type = probe_value(pr, "TYPE");
	const char *usage = probe_value(pr, "USAGE");
	const char *pttype = probe_value(pr, "PTTYPE");

	if (rc == -2)
		snprintf(msg, len, "%s: several filesystem signatures, none of them btrfs",
			 path);
	else if (type && (!usage || !strcmp(usage, "filesystem")))
		snprintf(msg, len, "%s: %s filesystem, not btrfs", path, type);
	else if (type)
		snprintf(msg, len, "%s: %s (%s), not btrfs", path, type, usage);
	else if (pttype)
		snprintf(msg, len, "%s: %s partition table, not btrfs (give the partition)",
			 path, pttype);
	else
		snprintf(msg, len,
			 "%s: no recognised filesystem (no btrfs superblock at offset %llu)",
			 path, (unsigned long long)fmt->super_offset[0]);
}

static bool probe_fd(const struct io_format *fmt, int fd, const char *path,
		     char *msg, size_t len)
{
	const struct blkid_api *b = &blkid_api;
	const char *type, *why;
	blkid_probe pr;
	int rc;

	if (dynlib_load(&dynlib_blkid, &why)) {
		snprintf(msg, len,
			 "%s: no btrfs superblock at offset %llu (what it holds is not named: %s)",
			 path, (unsigned long long)fmt->super_offset[0], why);
		return true;
	}
	pr = b->blkid_new_probe();
	if (!pr)
		return false;
	if (b->blkid_probe_set_device(pr, fd, 0, 0)) {
		b->blkid_free_probe(pr);
		return false;
	}
	b->blkid_probe_enable_superblocks(pr, 1);
	b->blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
	b->blkid_probe_enable_partitions(pr, 1);
	rc = b->blkid_do_safeprobe(pr);
	type = rc ? NULL : probe_value(pr, "TYPE");
	if (rc == -1 || (type && !strcmp(type, "btrfs"))) {
		b->blkid_free_probe(pr);
		return false;
	}
	describe_probe(fmt, pr, rc, path, msg, len);
	b->blkid_free_probe(pr);
	return true;
}

/* POSIX tar: "ustar" at offset 257 of the first header (the fixtures' .tar.xz) */
static bool is_tar(int fd)
{
	char magic[5];

	return pread(fd, magic, sizeof(magic), 257) == sizeof(magic) &&
	       !memcmp(magic, "ustar", sizeof(magic));
}

bool device_explain_not_btrfs(const struct io_format *fmt, const char *path,
			      char *msg, size_t len)
{
	u64 sb_end = fmt->super_offset[0] + fmt->super_size;
	struct io_super_id id;
	struct stat st;
	int fd = -1;
	bool ret;

	if (read_sb_id(fmt, path, &id, &fd) != 1)
		return false;
	if (fd < 0) {
		snprintf(msg, len, "%s: no recognised filesystem (no btrfs superblock at offset %llu)",
			 path, (unsigned long long)fmt->super_offset[0]);
		return true;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (u64)st.st_size < sb_end) {
		if (st.st_size)
			snprintf(msg, len, "%s: %lld bytes, too small for a btrfs superblock (which ends at %llu)",
				 path, (long long)st.st_size, (unsigned long long)sb_end);
		else
			snprintf(msg, len, "%s: an empty file", path);
		close(fd);
		return true;
	}
	ret = is_tar(fd);
	if (ret)
		snprintf(msg, len, "%s: a tar archive, not a filesystem image: unpack it first (tar -xSf)",
			 path);
	else
		ret = probe_fd(fmt, fd, path, msg, len);
	close(fd);
	return ret;
}

/* ------------------------------------------------------------------------
 * --scan
 */

struct members {
	const struct io_format *fmt;
	struct io_super_id fs;
	char **paths;
	u64 *devids;
	int nr;
};

static bool has_devid(const struct members *m, u64 devid)
{
	int i;

	for (i = 0; i < m->nr; i++)
		if (m->devids[i] == devid)
			return true;
	return false;
}

static int add_member(struct members *m, const char *path, u64 devid)
{
	void *p;

	if (m->nr >= MAX_MEMBERS)
		return -E2BIG;
	p = realloc(m->paths, (m->nr + 1) * sizeof(*m->paths));
	if (!p)
		return -ENOMEM;
	m->paths = p;
	p = realloc(m->devids, (m->nr + 1) * sizeof(*m->devids));
	if (!p)
		return -ENOMEM;
	m->devids = p;
	m->paths[m->nr] = strdup(path);
	if (!m->paths[m->nr])
		return -ENOMEM;
	m->devids[m->nr++] = devid;
	return 0;
}

/* A candidate: kept when it holds another devid of the same filesystem */
static int consider(struct members *m, const char *path, bool given)
{
	struct io_super_id id;
	int ret = read_sb_id(m->fmt, path, &id, NULL);

	if (ret) {
		if (given)
			pr_verbose(LOG_VERBOSE, "scan: %s: not btrfs, left out\n", path);
		return 0;
	}
	if (memcmp(id.fsid, m->fs.fsid, sizeof(id.fsid))) {
		if (given)
			pr_verbose(LOG_VERBOSE, "scan: %s: another filesystem, left out\n", path);
		return 0;
	}
	if (has_devid(m, id.devid))
		return 0;
	pr_verbose(LOG_VERBOSE, "scan: %s: devid %llu\n", path,
		   (unsigned long long)id.devid);
	return add_member(m, path, id.devid);
}

/* TYPE=btrfs with our fsid as UUID, by libblkid's probe of @path */
static bool blkid_says_member(const char *path, const char *uuid)
{
	const struct blkid_api *b = &blkid_api;
	blkid_probe pr = b->blkid_new_probe_from_filename(path);
	const char *type, *val;
	bool ret = false;

	if (!pr)
		return false;
	b->blkid_probe_enable_superblocks(pr, 1);
	b->blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_UUID);
	if (!b->blkid_do_safeprobe(pr)) {
		type = probe_value(pr, "TYPE");
		val = probe_value(pr, "UUID");
		ret = type && val && !strcmp(type, "btrfs") && !strcmp(val, uuid);
	}
	b->blkid_free_probe(pr);
	return ret;
}

/* Every block device of /proc/partitions (disks, partitions, loop, dm) */
static int scan_block_devices(struct members *m)
{
	FILE *f = fopen("/proc/partitions", "r");
	char line[512], name[256], path[300], uuid[37];
	unsigned long long blocks;
	const char *why;
	int ret = 0;

	if (!f)
		return 0;
	if (dynlib_load(&dynlib_blkid, &why)) {
		warning("--scan: the block devices are not probed: %s", why);
		fclose(f);
		return 0;
	}
	uuid_text(m->fs.fsid, uuid);
	while (!ret && (u64)m->nr < m->fs.num_devices && fgets(line, sizeof(line), f)) {
		unsigned int major, minor;
		struct stat st;

		if (sscanf(line, " %u %u %llu %255s", &major, &minor, &blocks, name) != 4 ||
		    blocks < 2)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", name);
		if (stat(path, &st) || !S_ISBLK(st.st_mode) ||
		    !blkid_says_member(path, uuid))
			continue;
		ret = consider(m, path, false);
	}
	fclose(f);
	return ret;
}

void device_scan_free(char **paths, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
}

int device_scan(const struct io_format *fmt, char * const *paths, int nr_paths,
		char ***ret, int *nr_ret)
{
	struct members m = { .fmt = fmt };
	int i, err = 0;

	*ret = NULL;
	*nr_ret = 0;
	if (nr_paths < 1 || read_sb_id(fmt, paths[0], &m.fs, NULL))
		return 0;
	for (i = 0; !err && i < nr_paths; i++)
		err = consider(&m, paths[i], true);
	if (!err && (u64)m.nr < m.fs.num_devices)
		err = scan_block_devices(&m);
	free(m.devids);
	if (err) {
		device_scan_free(m.paths, m.nr);
		return err;
	}
	*ret = m.paths;
	*nr_ret = m.nr;
	return 0;
}
