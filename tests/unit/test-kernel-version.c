// SPDX-License-Identifier: GPL-2.0
/*
 * kernel-version.c: the versions --kernel accepts, and that the texts the
 * help and the option errors show say the same as the numbers the model
 * compares against.
 */
#include <stdio.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/kernel-version.h"

static u32 parse(const char *str)
{
	u32 v = 0;

	if (btrfs_parse_kernel_version(str, &v))
		return 0;
	return v;
}

static void test_texts(void)
{
	char joined[128] = "";
	int i;

	check_u64("BTRFS_MIN_KERNEL_STR", parse(BTRFS_MIN_KERNEL_STR), BTRFS_MIN_KERNEL);
	check_u64("BTRFS_DEFAULT_KERNEL_STR", parse(BTRFS_DEFAULT_KERNEL_STR),
		  BTRFS_DEFAULT_KERNEL);
	check_u64("BTRFS_CSUM_DELETE_CHANGE_STR", parse(BTRFS_CSUM_DELETE_CHANGE_STR + 1),
		  BTRFS_CSUM_DELETE_CHANGE);
	for (i = 0; btrfs_compare_kernels[i]; i++) {
		if (i)
			strcat(joined, ", ");
		strcat(joined, btrfs_compare_kernels[i]);
	}
	check(!strcmp(joined, BTRFS_COMPARE_KERNELS_STR),
	      "compare list '%s' is BTRFS_COMPARE_KERNELS_STR", joined);
	check(!strcmp(btrfs_compare_kernels[0], BTRFS_MIN_KERNEL_STR),
	      "the compare list starts at the oldest kernel");
	check(!strcmp(btrfs_compare_kernels[i - 1], BTRFS_DEFAULT_KERNEL_STR),
	      "the compare list ends at the default kernel");
	joined[0] = 0;
	for (i = 0; i < BTRFS_NR_REPLAY_KERNELS; i++) {
		char ver[32];

		if (i)
			strcat(joined, ", ");
		/* "5.12", not "5.12.0": the texts name releases */
		btrfs_kernel_version_str(btrfs_replay_kernels[i], ver, sizeof(ver));
		*strrchr(ver, '.') = 0;
		strcat(joined, ver);
	}
	check(!strcmp(joined, BTRFS_REPLAY_KERNELS_STR),
	      "replay's kernels '%s' are BTRFS_REPLAY_KERNELS_STR", joined);
}

static void test_accepted(void)
{
	u32 v = 1;

	check(btrfs_parse_model_kernel("5.11.99", &v) != 0 && v == 1,
	      "5.11.99 refused, version untouched");
	check(btrfs_parse_model_kernel("5.12", &v) == 0 && v == KERNEL_VERSION(5, 12, 0),
	      "5.12 accepted");
	check(btrfs_parse_model_kernel("6.1.112", &v) == 0 && v == KERNEL_VERSION(6, 1, 112),
	      "6.1.112 accepted");
	check(btrfs_parse_model_kernel("6.x", &v) != 0, "6.x refused");
	check(btrfs_parse_model_kernel("6.18.255", &v) == 0 && v == BTRFS_MAX_KERNEL,
	      "6.18.255 accepted");
	check(btrfs_parse_model_kernel("6.19", &v) != 0, "6.19 refused (not checked)");
	check(btrfs_parse_model_kernel("7.0", &v) != 0, "7.0 refused");
	check(btrfs_parse_model_kernel("99.0", &v) != 0, "99.0 refused");
	check(btrfs_parse_model_kernel("4.19", &v) != 0, "4.19 refused");
}

static void test_unconfirmed(void)
{
	struct btrfs_kernel_model m;
	const char *notes[4];

	btrfs_kernel_model(KERNEL_VERSION(6, 18, 0), &m);
	check_u64("6.18: nothing unconfirmed", btrfs_kernel_model_unconfirmed(&m, notes, 4), 0);
	btrfs_kernel_model(KERNEL_VERSION(6, 6, 0), &m);
	check_u64("6.6: csum deletion and zoned", btrfs_kernel_model_unconfirmed(&m, notes, 4), 2);
	check_u64("6.6, room for one note", btrfs_kernel_model_unconfirmed(&m, notes, 1), 1);
}

int main(void)
{
	test_texts();
	test_accepted();
	test_unconfirmed();
	return unit_failures ? 1 : 0;
}
