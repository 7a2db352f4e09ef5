// SPDX-License-Identifier: GPL-2.0
/*
 * The delayed refs of one transaction (kernel-shared/delayed-ref.c) against
 * the rules of fs/btrfs/delayed-ref.c, worked by hand for 16 KiB nodes,
 * crc32c and the free space tree: delayed_ref_bytes(1) = 524288, one csum
 * leaf (an extent up to 4064 sectors) = 131072.
 */
#include <stdio.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/kernel-version.h"

#define REF	524288ULL
#define CSUM	131072ULL

static const struct btrfs_csum_params params = {
	.nodesize = 16384, .sectorsize = 4096, .csum_size = 4,
	.free_space_tree_opt = true,
};

static void sim_start(struct btrfs_delayed_refs_sim *sim, struct btrfs_kernel_model *m)
{
	u32 v = 0;

	btrfs_parse_kernel_version("6.18", &v);
	btrfs_kernel_model(v, m);
	btrfs_delayed_refs_sim_init(sim, &params, m);
}

/* A file's drop alone: a head charged its csum leaf and one ref node */
static void test_plain_drop(void)
{
	struct btrfs_delayed_refs_sim sim;
	struct btrfs_delayed_refs_totals t;
	struct btrfs_kernel_model m;

	sim_start(&sim, &m);
	btrfs_sim_add_ref(&sim, true, BTRFS_DELAYED_REF_DROP, 1 << 20, 65536, 0, 256, 257, 0);
	/* the same drop again merges: ref_mod -2, no new node */
	btrfs_sim_add_ref(&sim, true, BTRFS_DELAYED_REF_DROP, 1 << 20, 65536, 0, 256, 257, 0);
	btrfs_delayed_refs_sim_totals(&sim, &t);
	check_u64("plain drop: data refs", t.data.refs, 1);
	check_u64("plain drop: heads charged", t.data.extents, 1);
	check_u64("plain drop: total", t.data.total, REF + CSUM);
	check_u64("plain drop: running size", sim.size, REF + CSUM);
	btrfs_delayed_refs_sim_release(&sim);
}

/*
 * The snapshot side: the copy's normal ref (ADD, root 257) and the
 * file's drop of the same ref merge to nothing (released), the head ends
 * at total_ref_mod 0: no csum charge; the peak saw the ADD.
 */
static void test_cancelled_drop(void)
{
	struct btrfs_delayed_refs_sim sim;
	struct btrfs_delayed_refs_totals t;
	struct btrfs_kernel_model m;

	sim_start(&sim, &m);
	btrfs_sim_add_ref(&sim, true, BTRFS_DELAYED_REF_ADD, 1 << 20, 65536, 0, 257, 300, 0);
	btrfs_sim_add_ref(&sim, true, BTRFS_DELAYED_REF_DROP, 1 << 20, 65536, 0, 257, 300, 0);
	btrfs_delayed_refs_sim_totals(&sim, &t);
	check_u64("cancelled: data refs", t.data.refs, 0);
	check_u64("cancelled: heads charged", t.data.extents, 0);
	check_u64("cancelled: uncharged heads", t.data_heads_uncharged, 1);
	check_u64("cancelled: size back to 0", sim.size, 0);
	check_u64("cancelled: peak", sim.peak, REF);
	check_u64("cancelled: zero merges", sim.ref_zero_merges, 1);
	btrfs_delayed_refs_sim_release(&sim);
}

/*
 * The original side: a full backref ADD (parent = the leaf) and the
 * file's DROP (root 256) are two nodes, the head ends at 0: two refs, no
 * csum.  A drop first, then the add: the csum is charged, then released.
 */
static void test_full_backref(void)
{
	struct btrfs_delayed_refs_sim sim;
	struct btrfs_delayed_refs_totals t;
	struct btrfs_kernel_model m;

	sim_start(&sim, &m);
	btrfs_sim_add_ref(&sim, true, BTRFS_DELAYED_REF_DROP, 2 << 20, 8192, 0, 256, 300, 0);
	check_u64("drop first: size", sim.size, REF + CSUM);
	btrfs_sim_add_ref(&sim, true, BTRFS_DELAYED_REF_ADD, 2 << 20, 8192, 30 << 20, 256, 300, 0);
	btrfs_delayed_refs_sim_totals(&sim, &t);
	check_u64("full backref: data refs", t.data.refs, 2);
	check_u64("full backref: total", t.data.total, 2 * REF);
	check_u64("full backref: csum released", sim.size, 2 * REF);
	check_u64("full backref: peak", sim.peak, 2 * REF);
	btrfs_delayed_refs_sim_release(&sim);
}

/*
 * A run takes the queued heads: the rise keeps them, a later ref of the
 * same extent makes a new head and node, and the tree block's extent ops
 * and run ref_mods stay visible.
 */
static void test_run(void)
{
	struct btrfs_delayed_refs_sim sim;
	struct btrfs_delayed_refs_totals t;
	struct btrfs_kernel_model m;
	const struct btrfs_sim_head *h;

	sim_start(&sim, &m);
	btrfs_sim_add_ref(&sim, false, BTRFS_DELAYED_REF_ADD, 40 << 20, 16384, 0, 257, 0, 0);
	btrfs_sim_set_extent_flags(&sim, 40 << 20, 16384, 1ULL << 8);
	btrfs_sim_run_all(&sim);
	btrfs_sim_add_ref(&sim, false, BTRFS_DELAYED_REF_DROP, 40 << 20, 16384, 0, 257, 0, 0);
	btrfs_delayed_refs_sim_totals(&sim, &t);
	check_u64("run: tree refs (ADD ran, DROP anew)", t.tree_refs, 2);
	check_u64("run: size", sim.size, 2 * REF);
	h = btrfs_sim_find_head(&sim, 40 << 20);
	check(h && h->ran_mod == 1 && h->ref_mod == -1 && h->flags_to_set == 1ULL << 8,
	      "run: head keeps ran_mod 1, queued -1, FULL_BACKREF");
	/* a data head leaves with its run: its extent's next ref is a new head */
	btrfs_sim_add_ref(&sim, true, BTRFS_DELAYED_REF_DROP, 64 << 20, 4096, 0, 5, 257, 0);
	btrfs_sim_run_all(&sim);
	check(!btrfs_sim_find_head(&sim, 64 << 20), "run: data head gone after its run");
	h = btrfs_sim_find_head(&sim, 40 << 20);
	check(h && h->ran_mod == 0 && !h->queued, "run: tree head kept, DROP ran");
	btrfs_sim_add_ref(&sim, true, BTRFS_DELAYED_REF_DROP, 64 << 20, 4096, 0, 5, 257, 0);
	btrfs_delayed_refs_sim_totals(&sim, &t);
	check_u64("run: data refs, the ran one and the new one", t.data.refs, 2);
	btrfs_delayed_refs_sim_release(&sim);
}

int main(void)
{
	test_plain_drop();
	test_cancelled_drop();
	test_full_backref();
	test_run();
	return unit_failures ? 1 : 0;
}
