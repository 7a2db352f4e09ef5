// SPDX-License-Identifier: GPL-2.0
/*
 * The reservation formulas against the worked examples of the spec
 * (../shared/spec/kernel-space-formulas.md §2.5, §3.3, §3.4, §5.6, §6.5),
 * each value worked by hand there from a 2 GiB mkfs 6.2 image.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/kernel-model.h"
#include "tests/unit/unit-test.h"
#include "kernel-shared/block-rsv.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/kernel-version.h"
#include "kernel-shared/space-info.h"
#include "kernel-shared/volumes.h"


static void test_global_rsv(void)
{
	struct btrfs_global_rsv_inputs in = {
		.nodesize = 16384, .free_space_tree_opt = true,
		.extent_bytes_used = 16384, .has_csum_root = true,
		.csum_bytes_used = 16384, .has_free_space_root = true,
		.free_space_bytes_used = 16384,
	};
	struct btrfs_global_rsv_calc c;

	btrfs_calc_global_rsv(&in, BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS, &c);
	check_u64("§3.3 min_items", c.min_items + BTRFS_UNLINK_METADATA_UNITS, 10);
	check_u64("§3.3 global rsv, FST 16K", c.size, 5767168);
	in.has_block_group_root = true;
	btrfs_calc_global_rsv(&in, BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS, &c);
	check_u64("§3.4 FST+BGT", c.size, 6029312);
	in.has_stripe_root = true;
	btrfs_calc_global_rsv(&in, BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS, &c);
	check_u64("§3.4 FST+BGT+RST", c.size, 6291456);
	in.has_block_group_root = in.has_stripe_root = false;
	in.has_free_space_root = in.free_space_tree_opt = false;
	btrfs_calc_global_rsv(&in, BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS, &c);
	check_u64("§3.4 no FST", c.size, 3932160);
	in.has_free_space_root = in.free_space_tree_opt = true;
	in.nodesize = 4096;
	btrfs_calc_global_rsv(&in, BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS, &c);
	check_u64("§3.4 FST 4K", c.size, 1441792);
	in.nodesize = 16384;
	btrfs_calc_global_rsv(&in, BTRFS_GLOBAL_RSV_FLOOR_PLUS_10_ITEMS, &c);
	check_u64("corrections §1 pre-6.4 floor, FST 16K", c.size, 3670016);
	in.extent_bytes_used = 600ULL << 20;
	btrfs_calc_global_rsv(&in, BTRFS_GLOBAL_RSV_FLOOR_UNLINK_DELAYED_REFS, &c);
	check_u64("512 MiB cap", c.size, 536870912);
}

static void test_csum_delete(void)
{
	struct btrfs_csum_params p = { 16384, 4096, 4, true };
	struct btrfs_kernel_model after = unit_kernel_model("6.18"), before = unit_kernel_model("6.6");
	struct btrfs_csum_delete_calc a = { 0 }, b = { 0 };

	check_u64("§2.2 csums_per_leaf 16K crc32c", btrfs_csums_per_leaf(&p), 4064);
	check_u64("§2.5 one 128 KiB extent: leaves", btrfs_csum_bytes_to_leaves(&p, 131072), 1);
	check_u64("§2.5 128 MiB extent: leaves", btrfs_csum_bytes_to_leaves(&p, 128ULL << 20), 9);
	btrfs_csum_delete_add(&p, &after, &a, 131072, 983040);
	btrfs_csum_delete_add(&p, &before, &b, 131072, 983040);
	check_u64("§2.5 seed test: csum leaves (per head)", a.csum_leaves, 983040);
	check_u64("§2.5 seed test: AFTER csum part", a.csum_bytes, 128849018880ULL);
	check_u64("§2.5 seed test: BEFORE csum part", b.csum_bytes, 515396075520ULL);
	check_u64("§2.5 seed test: drop refs", a.drop_ref_bytes, 515396075520ULL);
}

/* Image S6 of the spec: 2 GiB, DUP metadata, right after mount */
static struct btrfs_reserve_state s6_state(void)
{
	struct btrfs_reserve_state st;

	memset(&st, 0, sizeof(st));
	st.flags = 4;
	st.total_bytes = 107347968;
	st.bytes_used = 131072;
	st.bytes_readonly = 65536;
	st.bytes_may_use = 5767168;
	st.global_rsv_reserved = 5767168;
	st.free_chunk_space = 2147483648ULL - 239861760ULL;
	st.total_rw_bytes = 2147483648ULL;
	st.profile_copies = 2;
	st.data_chunk_size = 10ULL << 30;
	st.clamp = 1;
	return st;
}

static void test_overcommit(void)
{
	struct btrfs_reserve_state st = s6_state();
	struct btrfs_kernel_model m = unit_kernel_model("6.18");

	check_u64("§5.6 effective data chunk", btrfs_calc_effective_data_chunk_size(&st), 214748364);
	check_u64("§5.6 avail FLUSH_ALL",
		  btrfs_calc_available_free_space(&st, BTRFS_RESERVE_FLUSH_ALL, &m), 92382822);
	check_u64("§5.6 avail other",
		  btrfs_calc_available_free_space(&st, BTRFS_RESERVE_NO_FLUSH, &m), 369531290);
	check_u64("§5.6 avail FLUSH_LIMIT as other",
		  btrfs_calc_available_free_space(&st, BTRFS_RESERVE_FLUSH_LIMIT, &m), 369531290);
	check_u64("§5.6 avail FLUSH_ALL_STEAL as other (6.18)",
		  btrfs_calc_available_free_space(&st, BTRFS_RESERVE_FLUSH_ALL_STEAL, &m), 369531290);
	check_u64("§5.6 avail FLUSH_EMERGENCY as other (6.18)",
		  btrfs_calc_available_free_space(&st, BTRFS_RESERVE_FLUSH_EMERGENCY, &m), 369531290);
	check_u64("§5.6 largest FLUSH_ALL",
		  btrfs_largest_reservation(&st, BTRFS_RESERVE_FLUSH_ALL, &m), 193767013);
	check_u64("§5.6 largest NO_FLUSH",
		  btrfs_largest_reservation(&st, BTRFS_RESERVE_NO_FLUSH, &m), 470915481);
	check_u64("§5.6 can_overcommit at the limit",
		  btrfs_can_overcommit(&st, 193767014, BTRFS_RESERVE_FLUSH_ALL, &m), 0);
	check_u64("§5.6 can_overcommit below the limit",
		  btrfs_can_overcommit(&st, 193767013, BTRFS_RESERVE_FLUSH_ALL, &m), 1);
}

static void test_preempt(void)
{
	struct btrfs_reserve_state st = s6_state();
	struct btrfs_kernel_model m = unit_kernel_model("6.18"), old = unit_kernel_model("5.12");
	struct btrfs_preempt_result r;

	btrfs_need_preemptive_reclaim(&st, &m, &r);
	check_u64("§6.5 verdict right after mount", r.verdict, 0);
	check_u64("§6.5 plain full limit", r.full_limit, 96613171);
	check_u64("§6.5 thresh clamp 1", r.thresh_by_clamp[1], 96883507);
	check_u64("§6.5 thresh clamp 8", r.thresh_by_clamp[8], 756902);
	st.delalloc_bytes = 1;
	btrfs_need_preemptive_reclaim(&st, &m, &r);
	check_u64("§6.5 flushes from may_use (G + thresh)", r.min_may_use_to_flush,
	      5767168ULL + 134217728ULL + 1);
	btrfs_need_preemptive_reclaim(&st, &old, &r);
	check_u64("§6.5 5.12 plain full (98%)", r.full_limit, 105201008);
	check_u64("§6.5 5.12 thresh clamp 1", r.thresh_by_clamp[1], 113188864);
}


int main(void)
{
	test_global_rsv();
	test_csum_delete();
	test_overcommit();
	test_preempt();
	return unit_failures ? 1 : 0;
}
