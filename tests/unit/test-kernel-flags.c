// SPDX-License-Identifier: GPL-2.0
/*
 * btrfs_kernel_model() (kernel-version.c) as a table: which variant of
 * each formula a kernel version gets, the rows on each side of every
 * version in the table of Documentation/formulas.md section 2:
 *
 *   global_rsv_unlink_floor      v6.4, and 6.1.112 up to 6.2
 *   free_space_tree_accounting   v5.17
 *   csum_delete_metadata_size    v6.7
 *   trans_delayed_ref_bytes      v6.7
 *   overcommit_data_chunk        v6.9
 *   preempt_global_rsv_terms     v5.14
 *   preempt_full_percent         90 from v5.15, 98 before
 *   preempt_majority_global      v5.15
 *   zoned_overcommit             never in 6.0-6.1, unless active zones in
 *                                6.2-6.5, always before 6.0 and from 6.6
 *
 * and btrfs_alloc_model(), the chunk allocator's variants of section 21.5:
 *
 *   space_info_chunk_size, stripe_size_1g_cap   v6.0
 *   system chunk at most 32 MiB from v6.0, 2 * 32 MiB before
 *   data chunk at most 10 GiB, system stripe 32 MiB      always
 *   size_classes                                          v6.3
 *   size_class_reset                                      6.18 (the 6.18.y referee)
 *
 * Each row was written from that text, not from the code.
 */
#include <stdio.h>
#include "tests/unit/kernel-model.h"
#include "tests/unit/unit-test.h"
#include "kernel-shared/kernel-version.h"

#define ALWAYS	ZONED_OVERCOMMIT_ALWAYS
#define NEVER	ZONED_OVERCOMMIT_NEVER
#define UNLESS	ZONED_OVERCOMMIT_UNLESS_ACTIVE_ZONES

struct flags_row {
	const char *kernel;
	bool unlink_floor;
	bool fst_accounting;
	bool csum_metadata_size;
	bool trans_delayed_ref;
	bool overcommit_data_chunk;
	bool preempt_terms;
	u32 full_percent;
	bool majority_global;
	int zoned;
};

static const struct flags_row rows[] = {
	/*            floor  fst    csum   trans  oc     terms  %   major  zoned */
	{ "5.12.0",   false, false, false, false, false, false, 98, false, ALWAYS },
	{ "5.13.255", false, false, false, false, false, false, 98, false, ALWAYS },
	{ "5.14.0",   false, false, false, false, false, true,  98, false, ALWAYS },
	{ "5.14.255", false, false, false, false, false, true,  98, false, ALWAYS },
	{ "5.15.0",   false, false, false, false, false, true,  90, true,  ALWAYS },
	{ "5.16.255", false, false, false, false, false, true,  90, true,  ALWAYS },
	{ "5.17.0",   false, true,  false, false, false, true,  90, true,  ALWAYS },
	{ "5.19.255", false, true,  false, false, false, true,  90, true,  ALWAYS },
	{ "6.0.0",    false, true,  false, false, false, true,  90, true,  NEVER },
	{ "6.1.0",    false, true,  false, false, false, true,  90, true,  NEVER },
	{ "6.1.111",  false, true,  false, false, false, true,  90, true,  NEVER },
	{ "6.1.112",  true,  true,  false, false, false, true,  90, true,  NEVER },
	{ "6.1.255",  true,  true,  false, false, false, true,  90, true,  NEVER },
	{ "6.2.0",    false, true,  false, false, false, true,  90, true,  UNLESS },
	{ "6.3.255",  false, true,  false, false, false, true,  90, true,  UNLESS },
	{ "6.4.0",    true,  true,  false, false, false, true,  90, true,  UNLESS },
	{ "6.5.255",  true,  true,  false, false, false, true,  90, true,  UNLESS },
	{ "6.6.0",    true,  true,  false, false, false, true,  90, true,  ALWAYS },
	{ "6.6.255",  true,  true,  false, false, false, true,  90, true,  ALWAYS },
	{ "6.7.0",    true,  true,  true,  true,  false, true,  90, true,  ALWAYS },
	{ "6.8.255",  true,  true,  true,  true,  false, true,  90, true,  ALWAYS },
	{ "6.9.0",    true,  true,  true,  true,  true,  true,  90, true,  ALWAYS },
	{ "6.18.0",   true,  true,  true,  true,  true,  true,  90, true,  ALWAYS },
};

struct alloc_row {
	const char *kernel;
	bool space_info_chunk_size;
	bool stripe_1g_cap;
	u64 system_max_chunk;
	bool size_classes;
	bool size_class_reset;
};

#define MiB	(1ULL << 20)

static const struct alloc_row alloc_rows[] = {
	{ "5.12.0",   false, false, 64 * MiB, false, false },
	{ "5.19.255", false, false, 64 * MiB, false, false },
	{ "6.0.0",    true,  true,  32 * MiB, false, false },
	{ "6.2.255",  true,  true,  32 * MiB, false, false },
	{ "6.3.0",    true,  true,  32 * MiB, true,  false },
	{ "6.17.255", true,  true,  32 * MiB, true,  false },
	{ "6.18.0",   true,  true,  32 * MiB, true,  true },
};

static void check_alloc_rows(void)
{
	char what[64];
	u32 i;

	for (i = 0; i < sizeof(alloc_rows) / sizeof(alloc_rows[0]); i++) {
		const struct alloc_row *r = &alloc_rows[i];
		struct btrfs_alloc_model m;

		btrfs_alloc_model(unit_kernel_model(r->kernel).version, &m);
		snprintf(what, sizeof(what), "%s allocator", r->kernel);
		check_u64(what, m.space_info_chunk_size, r->space_info_chunk_size);
		check_u64(what, m.stripe_size_1g_cap, r->stripe_1g_cap);
		check_u64(what, m.system_max_chunk_size, r->system_max_chunk);
		check_u64(what, m.data_max_chunk_size, 10ULL << 30);
		check_u64(what, m.system_max_stripe_size, 32 * MiB);
		check_u64(what, m.size_classes, r->size_classes);
		check_u64(what, m.size_class_reset, r->size_class_reset);
	}
}

static void check_flag(u32 i, const char *name, u64 got, u64 want)
{
	char what[64];

	snprintf(what, sizeof(what), "%s %s", rows[i].kernel, name);
	check_u64(what, got, want);
}

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct flags_row *r = &rows[i];
		struct btrfs_kernel_model m = unit_kernel_model(r->kernel);

		check_flag(i, "unlink floor", m.global_rsv_unlink_floor, r->unlink_floor);
		check_flag(i, "FST accounting", m.free_space_tree_accounting, r->fst_accounting);
		check_flag(i, "csum deletion by leaf", m.csum_delete_metadata_size,
			   r->csum_metadata_size);
		check_flag(i, "trans delayed refs", m.trans_delayed_ref_bytes, r->trans_delayed_ref);
		check_flag(i, "over-commit data chunk", m.overcommit_data_chunk,
			   r->overcommit_data_chunk);
		check_flag(i, "preempt G terms", m.preempt_global_rsv_terms, r->preempt_terms);
		check_flag(i, "preempt full %", m.preempt_full_percent, r->full_percent);
		check_flag(i, "preempt majority G", m.preempt_majority_global, r->majority_global);
		check_flag(i, "zoned over-commit", m.zoned_overcommit, r->zoned);
	}
	check_alloc_rows();
	return unit_failures ? 1 : 0;
}
