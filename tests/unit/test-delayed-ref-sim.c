// SPDX-License-Identifier: GPL-2.0
/*
 * The delayed refs of one transaction (kernel-shared/delayed-ref.c) against
 * the rules of fs/btrfs/delayed-ref.c, worked by hand for 16 KiB nodes,
 * crc32c and the free space tree: delayed_ref_bytes(1) = 524288, one csum
 * leaf (an extent up to 4064 sectors) = 131072.
 */
#include <stdio.h>
#include "tests/unit/kernel-model.h"
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
	*m = unit_kernel_model("6.18");
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

/*
 * Lone refs (the file's only ref to an extent) are counted instead of
 * kept: the same refs with and without them give the same running size,
 * peak, nodes inserted and totals, also when another ref joins a lone
 * ref's head after its drop (it moves into the tables) or before (it
 * never was lone).
 */
struct lone_step {
	bool is_data;
	int action;
	u64 bytenr;
	u64 parent;
	u64 root;
	u64 owner;
	u64 offset;
};

static void test_lone_refs(void)
{
	/* the file: inode 257 of subvolume 256 */
	/* 5 refs; 3 << 20 twice in the file (at 8192 and 12288), not lone */
	static const struct packed_ref lone_refs[] = {
		{ 1 << 20, 4096, 0, 0 },	/* lone, dropped alone */
		{ 2 << 20, 8192, 4096, 1 },	/* lone, then a snapshot's ADD joins */
		{ 4 << 20, 4096, 16384, 2 },	/* a COW ref comes before its drop */
	};
	struct packed_refs lone;
	struct packed_ref e;
	static const struct lone_step steps[] = {
		{ true, BTRFS_DELAYED_REF_ADD, 4 << 20, 0, 258, 300, 0 },
		{ false, BTRFS_DELAYED_REF_ADD, 40 << 20, 0, 256, 0, 0 },
		{ true, BTRFS_DELAYED_REF_DROP, 4 << 20, 0, 256, 257, 16384 },
		{ true, BTRFS_DELAYED_REF_DROP, 3 << 20, 0, 256, 257, 12288 },
		{ true, BTRFS_DELAYED_REF_DROP, 3 << 20, 0, 256, 257, 8192 },
		{ true, BTRFS_DELAYED_REF_DROP, 2 << 20, 0, 256, 257, 4096 },
		{ true, BTRFS_DELAYED_REF_DROP, 1 << 20, 0, 256, 257, 0 },
		{ true, BTRFS_DELAYED_REF_ADD, 2 << 20, 0, 256, 257, 4096 },
		{ true, BTRFS_DELAYED_REF_ADD, 2 << 20, 50 << 20, 0, 0, 0 },
	};
	static const u64 sizes[] = { 4096, 4096, 4096, 4096, 4096, 8192, 4096, 8192, 8192 };
	struct btrfs_delayed_refs_sim with, without;
	struct btrfs_delayed_refs_totals tw, to;
	struct btrfs_kernel_model m;
	char name[64];
	u32 i;
	bool same = true;

	sim_start(&with, &m);
	sim_start(&without, &m);
	packed_refs_init(&lone, 12, false);
	for (i = 0; i < 3; i++)
		packed_refs_append(&lone, &lone_refs[i]);
	check(!btrfs_sim_set_lone_refs(&with, &lone, 5, 256, 257), "lone: set");
	check(packed_refs_state(&lone, 0) == BTRFS_LONE_WAITING &&
	      btrfs_sim_find_lone(&with, 3 << 20, &e) == UINT64_MAX,
	      "lone: one ref a bytenr is lone, two are not");
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct lone_step *st = &steps[i];

		btrfs_sim_add_ref(&with, st->is_data, st->action, st->bytenr, sizes[i],
				  st->parent, st->root, st->owner, st->offset);
		btrfs_sim_add_ref(&without, st->is_data, st->action, st->bytenr, sizes[i],
				  st->parent, st->root, st->owner, st->offset);
		snprintf(name, sizeof(name), "lone: size after step %u", i);
		check_u64(name, with.size, without.size);
		same &= with.peak == without.peak && with.ref_inserts == without.ref_inserts &&
			with.ref_zero_merges == without.ref_zero_merges;
	}
	check(same, "lone: peak, nodes inserted and merged away as the tables have them");
	check(packed_refs_state(&lone, 0) == BTRFS_LONE_DROPPED, "lone: a lone drop is counted only");
	check(packed_refs_state(&lone, 1) == BTRFS_LONE_QUEUED,
	      "lone: a ref joining a lone head takes it to the tables");
	check(packed_refs_state(&lone, 2) == BTRFS_LONE_WAITING, "lone: a ref before the drop: never lone");
	btrfs_sim_run_all(&with);
	btrfs_sim_run_all(&without);
	/* after the run a ref of a lone extent makes a new head, as in the tables */
	btrfs_sim_add_ref(&with, true, BTRFS_DELAYED_REF_ADD, 1 << 20, 4096, 0, 258, 9, 0);
	btrfs_sim_add_ref(&without, true, BTRFS_DELAYED_REF_ADD, 1 << 20, 4096, 0, 258, 9, 0);
	btrfs_delayed_refs_sim_totals(&with, &tw);
	btrfs_delayed_refs_sim_totals(&without, &to);
	check_u64("lone: data refs", tw.data.refs, to.data.refs);
	check_u64("lone: heads charged", tw.data.extents, to.data.extents);
	check_u64("lone: total", tw.data.total, to.data.total);
	check_u64("lone: heads without charge", tw.data_heads_uncharged, to.data_heads_uncharged);
	check_u64("lone: tree refs", tw.tree_refs, to.tree_refs);
	check_u64("lone: size at the end", with.size, without.size);
	btrfs_delayed_refs_sim_release(&with);
	btrfs_delayed_refs_sim_release(&without);
	packed_refs_free(&lone);
}

int main(void)
{
	test_plain_drop();
	test_cancelled_drop();
	test_full_backref();
	test_run();
	test_lone_refs();
	return unit_failures ? 1 : 0;
}
