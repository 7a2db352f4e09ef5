// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel versions and the space-reservation changes they carry: the one
 * place that knows versions.  Each change names its kernel commit (id
 * and subject; the subject and release alone where no id could be
 * verified); Documentation/formulas.md section 2 lists them with their
 * releases.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernel-shared/kernel-version.h"

/* "6.18", "6.1.112", "5.15" */
int btrfs_parse_kernel_version(const char *str, u32 *version)
{
	unsigned long part[3] = { 0, 0, 0 };
	const char *p = str;
	char *end;
	int i;

	for (i = 0; i < 3; i++) {
		part[i] = strtoul(p, &end, 10);
		if (end == p || part[i] > 999)
			return -EINVAL;
		if (*end == '\0')
			break;
		if (*end != '.' || i == 2)
			return -EINVAL;
		p = end + 1;
	}
	if (i == 0 || part[0] < 3 || part[0] > 99)
		return -EINVAL;
	*version = KERNEL_VERSION(part[0], part[1], part[2]);
	return 0;
}

/*
 * A version --kernel accepts: one the model knows, BTRFS_MIN_KERNEL to
 * BTRFS_MAX_KERNEL.  Before 5.12 the preemptive-flushing predicate is not
 * modelled.  After 6.18 nothing has been checked: 6.19 and later are
 * refused rather than given 6.18's formulas without a word; to accept
 * one, read its fs/btrfs/space-info.c, block-rsv.c, delayed-ref.c and
 * volumes.c against 6.18 and list here the commits checked.
 */
int btrfs_parse_model_kernel(const char *str, u32 *version)
{
	u32 v;

	if (btrfs_parse_kernel_version(str, &v) || v < BTRFS_MIN_KERNEL ||
	    v > BTRFS_MAX_KERNEL)
		return -EINVAL;
	*version = v;
	return 0;
}

const char * const btrfs_compare_kernels[] = {
	"5.12", "5.15", "6.1", "6.1.112", "6.6", "6.18", NULL
};

const u32 btrfs_replay_kernels[BTRFS_NR_REPLAY_KERNELS] = {
	BTRFS_MIN_KERNEL, KERNEL_VERSION(5, 15, 0), BTRFS_DEFAULT_KERNEL,
};

const char *btrfs_kernel_version_str(u32 version, char *buf, int len)
{
	snprintf(buf, len, "%u.%u.%u", version >> 16, (version >> 8) & 0xff,
		 version & 0xff);
	return buf;
}

static bool at_least(u32 version, u32 a, u32 b, u32 c)
{
	return version >= KERNEL_VERSION(a, b, c);
}

/*
 * f8f210dc8470 "btrfs: calculate the right space for delayed refs when
 * updating global reserve" (v6.4), taken into 6.1.y stable at 6.1.112.
 */
static bool has_unlink_floor(u32 version)
{
	if (at_least(version, 6, 4, 0))
		return true;
	return at_least(version, 6, 1, 112) && !at_least(version, 6, 2, 0);
}

/*
 * The "plain full" limit of need_preemptive_reclaim(), in percent of
 * total_bytes: 93c60b17f2b5 "btrfs: reduce the preemptive flushing
 * threshold to 90%" (v5.15, and 5.13.y/5.14.y stable) lowered it from 98.
 */
#define PREEMPT_FULL_PERCENT		90
#define PREEMPT_FULL_PERCENT_BEFORE	98

static void preempt_model(u32 version, struct btrfs_kernel_model *m)
{
	/* "Preemptive flushing improvements" series, Josef Bacik, v5.14 */
	m->preempt_global_rsv_terms = at_least(version, 5, 14, 0);
	m->preempt_full_percent = at_least(version, 5, 15, 0) ?
				  PREEMPT_FULL_PERCENT : PREEMPT_FULL_PERCENT_BEFORE;
	/* 114623979405 "btrfs: do not do preemptive flushing if the majority is global rsv" */
	m->preempt_majority_global = at_least(version, 5, 15, 0);
}

/*
 * Zoned metadata over-commit: 79417d040f4f "btrfs: zoned: disable
 * metadata overcommit for zoned" (6.0), 85e79ec7b78f "btrfs: zoned:
 * enable metadata over-commit for non-ZNS setup" (6.2 cycle) and
 * 5b135b382a36 "btrfs: zoned: re-enable metadata over-commit for zoned
 * mode" (6.6, 6.5.y); none of the three releases is confirmed, so 6.0
 * to 6.6 say so.
 */
static void zoned_model(u32 version, struct btrfs_kernel_model *m)
{
	if (at_least(version, 6, 6, 0))
		m->zoned_overcommit = ZONED_OVERCOMMIT_ALWAYS;
	else if (at_least(version, 6, 2, 0))
		m->zoned_overcommit = ZONED_OVERCOMMIT_UNLESS_ACTIVE_ZONES;
	else if (at_least(version, 6, 0, 0))
		m->zoned_overcommit = ZONED_OVERCOMMIT_NEVER;
	else
		m->zoned_overcommit = ZONED_OVERCOMMIT_ALWAYS;
	m->zoned_unconfirmed = at_least(version, 6, 0, 0) && !at_least(version, 6, 7, 0);
}

void btrfs_kernel_model(u32 version, struct btrfs_kernel_model *m)
{
	m->version = version;
	m->global_rsv_unlink_floor = has_unlink_floor(version);
	/*
	 * 9506f9538206 "btrfs: include the free space tree in the global rsv
	 * minimum calculation", c18e3235646a "btrfs: reserve extra space for
	 * the free space tree" (both v5.17)
	 */
	m->free_space_tree_accounting = at_least(version, 5, 17, 0);
	/*
	 * "btrfs: stop doing excessive space reservation for csum deletion"
	 * (Filipe Manana, 2023): 6.7 believed, 6.6 and 6.7 unconfirmed
	 */
	m->csum_delete_metadata_size = version >= BTRFS_CSUM_DELETE_CHANGE;
	m->csum_delete_unconfirmed = at_least(version, 6, 6, 0) &&
				     !at_least(version, 6, 8, 0);
	/*
	 * the delayed refs reservation series of 2023 (Filipe Manana):
	 * start_transaction() reserves btrfs_calc_delayed_ref_bytes(num_items)
	 * beside insert(num_items), 6.7 believed (measured on 6.18 only)
	 */
	m->trans_delayed_ref_bytes = at_least(version, 6, 7, 0);
	/* cb6cbab79055 "btrfs: adjust overcommit logic when very close to full" (v6.9) */
	m->overcommit_data_chunk = at_least(version, 6, 9, 0);
	preempt_model(version, m);
	zoned_model(version, m);
}

void btrfs_preempt_change_models(struct btrfs_kernel_model *before,
				 struct btrfs_kernel_model *after)
{
	btrfs_kernel_model(BTRFS_MIN_KERNEL, before);
	btrfs_kernel_model(KERNEL_VERSION(5, 15, 0), after);
}

/*
 * The chunk allocator's limits (volumes.c, init_alloc_chunk_ctl_policy_regular()
 * and decide_stripe_size_regular()); formulas.md section 21.5.  Kept apart
 * from the reservation model above: it changes at other versions.
 */
void btrfs_alloc_model(u32 version, struct btrfs_alloc_model *m)
{
	/*
	 * v6.0, "btrfs: store chunk size in space-info struct" and "btrfs: fix
	 * the max chunk size and stripe length calculation": max_chunk_size is
	 * the space info's chunk_size (sysfs-tunable), max_stripe_size that
	 * capped at 1 GiB, and stripes are capped at 1 GiB after the 16 MiB
	 * round-up.  Before: fixed limits per type, the SYSTEM chunk up to
	 * 2 * 32 MiB.
	 */
	m->space_info_chunk_size = at_least(version, 6, 0, 0);
	m->stripe_size_1g_cap = at_least(version, 6, 0, 0);
	m->data_max_chunk_size = 10ULL << 30;
	m->system_max_stripe_size = 32ULL << 20;
	m->system_max_chunk_size = m->space_info_chunk_size ? 32ULL << 20 : 64ULL << 20;
	/*
	 * v6.3, "btrfs: introduce size class to block group allocator"
	 * (subject and release only): find_free_extent() keeps data
	 * extents of a size class (<= 128 KiB, <= 8 MiB, larger) to block
	 * groups of that class until LOOP_WRONG_SIZE_CLASS.
	 */
	m->size_classes = at_least(version, 6, 3, 0);
	/*
	 * 5870ec7c8fe5 "btrfs: reset block group size class when it becomes
	 * empty" (v7.0, in 6.18.y stable from the 2026-02 review): a block
	 * group whose used and reserved bytes reach 0 (an extent freed, a
	 * reservation given back) has no size class again.  Taken for 6.18,
	 * the referee (6.18.44, traced); the first 6.18.y with it and the
	 * older stable lines that took it are UNCONFIRMED.
	 */
	m->size_class_reset = at_least(version, 6, 18, 0);
}

/*
 * The changes whose release the sources could not confirm, when @model's
 * version falls in the uncertain range: at most @max notes into @notes.
 */
int btrfs_kernel_model_unconfirmed(const struct btrfs_kernel_model *model,
				   const char **notes, int max)
{
	int n = 0;

	if (model->csum_delete_unconfirmed && n < max)
		notes[n++] = "csum-deletion reservation (release of the change: 6.7 believed)";
	if (model->zoned_unconfirmed && n < max)
		notes[n++] = "zoned metadata over-commit (releases of 85e79ec7b78f / 5b135b382a36)";
	return n;
}
