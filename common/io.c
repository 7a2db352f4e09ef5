// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include "common/io.h"

/*
 * Open strictly read-only: the tool must never be able to write to its
 * input, whatever a later bug might try.  O_CLOEXEC keeps the descriptor
 * out of any child.
 */
int io_open(struct io_dev *dev, const char *path, struct io_stats *stats)
{
	struct stat st;
	u64 size;

	memset(dev, 0, sizeof(*dev));
	dev->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (dev->fd < 0)
		return -errno;
	if (fstat(dev->fd, &st) < 0)
		goto fail;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(dev->fd, BLKGETSIZE64, &size) < 0)
			goto fail;
		dev->is_blockdev = true;
	} else if (S_ISREG(st.st_mode)) {
		size = st.st_size;
	} else {
		errno = ENOTBLK;
		goto fail;
	}
	dev->size = size;
	dev->path = strdup(path);
	if (!dev->path) {
		errno = ENOMEM;
		goto fail;
	}
	dev->stats = stats;
	return 0;
fail:
	size = errno;
	close(dev->fd);
	dev->fd = -1;
	return -(int)size;
}

void io_close(struct io_dev *dev)
{
	if (dev->fd >= 0)
		close(dev->fd);
	dev->fd = -1;
	free(dev->path);
	dev->path = NULL;
}

static void io_count(struct io_dev *dev, u64 len, unsigned int purpose)
{
	if (!dev->stats)
		return;
	dev->stats->total.reads++;
	dev->stats->total.bytes += len;
	if (purpose < IO_MAX_PURPOSES) {
		dev->stats->by_purpose[purpose].reads++;
		dev->stats->by_purpose[purpose].bytes += len;
	}
}

/*
 * Read exactly @len bytes at @offset.  Returns 0, -ERANGE when the range
 * lies (partly) beyond the end of the device, or -EIO on a short read.
 */
int io_read(struct io_dev *dev, void *buf, u64 len, u64 offset,
	    unsigned int purpose)
{
	u64 done = 0;

	if (offset > dev->size || len > dev->size - offset)
		return -ERANGE;
	io_count(dev, len, purpose);
	while (done < len) {
		ssize_t ret = pread(dev->fd, (char *)buf + done, len - done,
				    offset + done);

		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == 0)
			return -EIO;
		done += ret;
	}
	return 0;
}
