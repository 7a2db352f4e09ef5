// SPDX-License-Identifier: GPL-2.0
/*
 * discard.c: the mount's discard mode (Documentation/formulas.md 21.4), a
 * table of option strings as --mount-options and /proc/mounts give them,
 * and of the default a kernel picks from its version, the zoned flag and
 * the devices.  The expected modes are the kernel's, read in
 * btrfs_parse_param(), btrfs_show_options() and open_ctree().
 */
#include <errno.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/discard.h"
#include "kernel-shared/kernel-version.h"

struct option_row {
	const char *opts;
	int ret;
	bool set;
	enum btrfs_discard_mode mode;
	u32 commit;
};

static const struct option_row option_rows[] = {
	{ "discard", 0, true, BTRFS_DISCARD_SYNC, 30 },
	{ "discard=sync", 0, true, BTRFS_DISCARD_SYNC, 30 },
	{ "discard=async", 0, true, BTRFS_DISCARD_ASYNC, 30 },
	{ "nodiscard", 0, true, BTRFS_DISCARD_NONE, 30 },
	/* the last one given wins, as in btrfs_parse_param() */
	{ "discard,nodiscard", 0, true, BTRFS_DISCARD_NONE, 30 },
	{ "nodiscard,discard=async", 0, true, BTRFS_DISCARD_ASYNC, 30 },
	/* commit= alone leaves the mode to the kernel's default */
	{ "commit=120", 0, false, BTRFS_DISCARD_NONE, 120 },
	{ "commit=0", 0, false, BTRFS_DISCARD_NONE, 30 },
	{ "discard=async,commit=5", 0, true, BTRFS_DISCARD_ASYNC, 5 },
	{ "commit=", -EINVAL, false, BTRFS_DISCARD_NONE, 30 },
	{ "commit=5s", -EINVAL, false, BTRFS_DISCARD_NONE, 30 },
	{ "commit=300001", -EINVAL, false, BTRFS_DISCARD_NONE, 30 },
	{ "discard=fast", -EINVAL, false, BTRFS_DISCARD_NONE, 30 },
	{ "", -EINVAL, false, BTRFS_DISCARD_NONE, 30 },
};

static void test_options(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(option_rows) / sizeof(option_rows[0]); i++) {
		const struct option_row *r = &option_rows[i];
		struct btrfs_mount_discard md;
		int ret;

		btrfs_mount_discard_init(&md);
		ret = btrfs_parse_mount_discard(r->opts, &md);
		check(ret == r->ret, "'%s': returns %d (want %d)", r->opts, ret, r->ret);
		if (ret)
			continue;
		check(md.set == r->set && md.mode == r->mode,
		      "'%s': %s%s (want %s%s)", r->opts, btrfs_discard_mode_name(md.mode),
		      md.set ? "" : " (not set)", btrfs_discard_mode_name(r->mode),
		      r->set ? "" : " (not set)");
		check_u64(r->opts, md.commit_interval, r->commit);
	}
}

/* What a mount prints is what it runs: nothing printed is no discard */
static void test_super_opts(void)
{
	struct btrfs_mount_discard md;

	btrfs_mount_discard_from_super_opts("rw,relatime,space_cache=v2,subvolid=5,subvol=/",
					    &md);
	check(md.set && md.mode == BTRFS_DISCARD_NONE, "/proc/mounts without discard: none");
	btrfs_mount_discard_from_super_opts("rw,relatime,ssd,discard=async,space_cache=v2",
					    &md);
	check(md.set && md.mode == BTRFS_DISCARD_ASYNC, "/proc/mounts discard=async: async");
	btrfs_mount_discard_from_super_opts("ro,discard,commit=60", &md);
	check(md.set && md.mode == BTRFS_DISCARD_SYNC, "/proc/mounts discard: sync");
	check_u64("/proc/mounts commit=60", md.commit_interval, 60);
}

struct default_row {
	const char *what;
	const char *kernel;	/* as --kernel takes it */
	bool zoned;
	bool image_file;	/* one device, a regular file */
	bool given_sync;	/* --mount-options discard */
	enum btrfs_discard_mode mode;
};

static const struct default_row default_rows[] = {
	{ "6.1, an image file", "6.1", false, true, false,
	  BTRFS_DISCARD_NONE },
	{ "6.2, an image file", "6.2", false, true, false,
	  BTRFS_DISCARD_ASYNC },
	{ "6.18, an image file", "6.18", false, true, false,
	  BTRFS_DISCARD_ASYNC },
	{ "6.18, zoned", "6.18", true, true, false, BTRFS_DISCARD_NONE },
	{ "6.18, no device present", "6.18", false, false, false,
	  BTRFS_DISCARD_NONE },
	{ "6.1, discard given", "6.1", false, true, true,
	  BTRFS_DISCARD_SYNC },
};

static void test_defaults(const char *regular_file)
{
	unsigned int i;

	for (i = 0; i < sizeof(default_rows) / sizeof(default_rows[0]); i++) {
		const struct default_row *r = &default_rows[i];
		struct btrfs_device dev = { .devid = 1, .present = r->image_file };
		struct btrfs_fs_info fs_info;
		struct btrfs_mount_discard md;
		enum btrfs_discard_mode mode;
		const char *why = NULL;
		u32 kernel = 0;

		check(!btrfs_parse_kernel_version(r->kernel, &kernel), "%s: a kernel version",
		      r->kernel);
		memset(&fs_info, 0, sizeof(fs_info));
		dev.io.path = (char *)regular_file;
		fs_info.devices = &dev;
		fs_info.nr_devices = 1;
		if (r->zoned)
			fs_info.incompat = BTRFS_FEATURE_INCOMPAT_ZONED;
		btrfs_mount_discard_init(&md);
		if (r->given_sync)
			btrfs_parse_mount_discard("discard", &md);
		mode = btrfs_discard_at_mount(&fs_info, &md, kernel, &why);
		check(mode == r->mode, "%s: %s (want %s)", r->what, btrfs_discard_mode_name(mode),
		      btrfs_discard_mode_name(r->mode));
		check(why && *why, "%s: says why", r->what);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	test_options();
	test_super_opts();
	/* the test's own binary: a regular file, as an image is */
	test_defaults(argv[0]);
	return unit_failures ? 1 : 0;
}
