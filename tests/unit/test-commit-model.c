// SPDX-License-Identifier: GPL-2.0
/*
 * Unit table of the commit model's pure parts (kernel-shared/transaction.c),
 * the one model csum-delete's commit and the log replay's commit both feed:
 *
 * - the order the delayed-ref runs take the heads (btrfs_head_queue, after
 *   btrfs_select_ref_head() of fs/btrfs/delayed-ref.c, 6.18): lowest bytenr
 *   from run_delayed_start, the end of the head last taken; a head queued
 *   below it waits until the run wraps to 0; a run that finds no head left
 *   has looked again from 0 and leaves run_delayed_start at 0.  Each case
 *   is a script of steps and the heads in the order they must come out;
 * - the free space tree's searches for a range (btrfs_free_space_change_keys());
 * - a tree block's extent item (btrfs_tree_block_item_key() and _size()).
 *
 * csum-delete's commit needs the cursor as the log replay's does: in
 * btrfs_commit_transaction() the first btrfs_run_delayed_refs() starts at
 * 0 on the deletion's heads, and each head it runs copies extent-tree and
 * free-space-tree leaves whose ADD heads (at the lowest free places) and
 * DROP heads (at the originals) join the same run: those below the
 * cursor wait for the wrap, those above are taken in this pass.  The
 * cases named "csum-delete" hold that order.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit-test.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/fs.h"
#include "kernel-shared/transaction.h"

enum step_kind { STEP_END, STEP_PUSH, STEP_POP, STEP_RUN_END };

struct step {
	enum step_kind kind;
	u64 bytenr;		/* PUSH: the head; POP: the head that must come out */
};

struct queue_case {
	const char *name;
	struct step steps[16];
};

#define PUSH(b)		{ STEP_PUSH, (b) }
#define POP(b)		{ STEP_POP, (b) }
#define RUN_END		{ STEP_RUN_END, 0 }

static const struct queue_case queue_cases[] = {
	{ "one run takes the heads lowest bytenr first",
	  { PUSH(300), PUSH(100), PUSH(200), POP(100), POP(200), POP(300) } },
	{ "a head queued above the cursor is taken in the same pass",
	  { PUSH(100), PUSH(300), POP(100), PUSH(200), POP(200), POP(300) } },
	{ "a head queued below the cursor waits for the wrap",
	  { PUSH(100), PUSH(300), POP(100), PUSH(50), POP(300), POP(50) } },
	{ "after the wrap, heads below the new cursor wait for a second wrap",
	  { PUSH(100), PUSH(300), POP(100), PUSH(50), POP(300), POP(50),
	    PUSH(40), PUSH(60), POP(60), POP(40) } },
	/*
	 * The log replay's fix (015f6ba): the run that found nothing stands at
	 * 0, so the next copies' heads (commit_cowonly_roots()) run in bytenr
	 * order; kept at 300, the DROP at 400 would run before the ADDs at 10
	 * and 20.
	 */
	{ "a run that finds no head left stands at 0",
	  { PUSH(300), POP(300), RUN_END, PUSH(400), PUSH(10), PUSH(20),
	    POP(10), POP(20), POP(400) } },
	{ "without the run's end the cursor would stay at the last head",
	  { PUSH(300), POP(300), PUSH(400), PUSH(10), PUSH(20),
	    POP(400), POP(10), POP(20) } },
	/*
	 * csum-delete: data extents at 1 GiB and up, the deletion's new
	 * subvolume block at the first free place (30408704), the originals'
	 * DROPs at 30 MiB; a head run copies an extent leaf: its ADD at the
	 * next free place (below the cursor: after the wrap), its DROP at
	 * 31 MiB (above the cursor while it is in the metadata: this pass).
	 */
	{ "csum-delete: the first run's copies, behind the cursor, run after the wrap",
	  { PUSH(1073741824), PUSH(1073872896), PUSH(30408704),
	    POP(30408704), POP(1073741824), PUSH(30425088), PUSH(32505856),
	    POP(1073872896), POP(30425088), POP(32505856), RUN_END } },
	{ "csum-delete: a copy made while the cursor is in the metadata joins that pass",
	  { PUSH(30408704), PUSH(31457280), PUSH(1073741824),
	    POP(30408704), PUSH(30425088), PUSH(32505856), POP(30425088),
	    POP(31457280), POP(32505856), POP(1073741824) } },
	{ "csum-delete: the second run (after the delayed items) starts at 0",
	  { PUSH(1073741824), POP(1073741824), RUN_END,
	    PUSH(30441472), PUSH(30408704), POP(30408704), POP(30441472) } },
};

static void run_queue_case(const struct queue_case *qc)
{
	struct btrfs_head_queue q = { 0 };
	const struct step *s;
	bool ok = true;
	char got[256] = "";
	size_t used = 0;

	for (s = qc->steps; s->kind != STEP_END && ok; s++) {
		struct btrfs_head_run h;

		switch (s->kind) {
		case STEP_PUSH:
			ok = !btrfs_head_queue_push(&q, s->bytenr, 0, 0, 0);
			break;
		case STEP_POP:
			if (!q.nr) {
				ok = false;
				break;
			}
			h = btrfs_head_queue_pop(&q);
			used += snprintf(got + used, sizeof(got) - used, " %llu",
					 (unsigned long long)h.bytenr);
			ok = h.bytenr == s->bytenr && q.cursor == h.bytenr;
			break;
		case STEP_RUN_END:
			btrfs_head_queue_run_end(&q);
			ok = q.cursor == 0;
			break;
		default:
			break;
		}
	}
	check(ok && !q.nr, "head queue: %s (taken:%s)", qc->name, got);
	btrfs_head_queue_release(&q);
}

/* A sorted source of heads (btrfs_head_queue_attach()) over a list */
struct list_source {
	const u64 *v;
	u32 nr;
	u32 pos;
};

static bool list_peek(void *ctx, u64 *bytenr, u32 *arg)
{
	struct list_source *ls = ctx;

	if (ls->pos == ls->nr)
		return false;
	*bytenr = ls->v[ls->pos];
	*arg = ls->pos;
	return true;
}

static void list_next(void *ctx)
{
	struct list_source *ls = ctx;

	ls->pos++;
}

/*
 * The first csum-delete case above with the two data heads handed over as
 * a sorted source instead of pushed: the same order, and a source is
 * refused unless the run stands at 0.
 */
static void test_queue_source(void)
{
	static const u64 data[] = { 1073741824, 1073872896 };
	static const u64 want[] = { 30408704, 1073741824, 1073872896, 30425088, 32505856 };
	struct list_source ls = { .v = data, .nr = 2 };
	const struct btrfs_head_source src = { .peek = list_peek, .next = list_next, .ctx = &ls };
	struct btrfs_head_queue q = { 0 };
	u32 i = 0;
	bool ok;

	ok = !btrfs_head_queue_push(&q, 30408704, 0, 0, 0) && !btrfs_head_queue_attach(&q, &src);
	while (ok && !btrfs_head_queue_empty(&q) && i < 5) {
		struct btrfs_head_run h = btrfs_head_queue_pop(&q);

		ok = h.bytenr == want[i++] && q.cursor == h.bytenr;
		/* the first data head's run copies a leaf: behind the cursor */
		if (ok && h.bytenr == 1073741824)
			ok = !btrfs_head_queue_push(&q, 30425088, 0, 0, 0) &&
			     !btrfs_head_queue_push(&q, 32505856, 0, 0, 0);
	}
	check(ok && i == 5 && btrfs_head_queue_empty(&q),
	      "head queue: a sorted source runs in the order of the same heads pushed");
	check(btrfs_head_queue_attach(&q, &src) == -EINVAL,
	      "head queue: a source waits for the run to stand at 0");
	btrfs_head_queue_release(&q);
}

struct fst_case {
	const char *name;
	u64 start;
	u64 len;
	bool add;
	u32 want_nr;
	struct btrfs_key want[3];
};

#define BG_START	30408704ULL
#define BG_LEN		(256ULL << 20)

static const struct fst_case fst_cases[] = {
	/* btrfs_remove_from_free_space_tree(): the info, then the extent holding the range */
	{ "remove a new block's place", BG_START + 16384, 16384, false, 2,
	  { { BG_START, BTRFS_FREE_SPACE_INFO_KEY, BG_LEN },
	    { BG_START + 16384, (u8)-1, (u64)-1 } } },
	/* btrfs_add_to_free_space_tree(): the info, the extents left and right */
	{ "add a freed data extent", 1073741824, 131072, true, 3,
	  { { BG_START, BTRFS_FREE_SPACE_INFO_KEY, BG_LEN },
	    { 1073741823, (u8)-1, (u64)-1 },
	    { 1073872896, BTRFS_FREE_SPACE_EXTENT_KEY, (u64)-1 } } },
};

static void run_fst_case(const struct fst_case *fc)
{
	const struct btrfs_block_group bg = { .start = BG_START, .length = BG_LEN };
	struct btrfs_key keys[3];
	u32 n, i;
	bool ok;

	n = btrfs_free_space_change_keys(&bg, fc->start, fc->len, fc->add, keys);
	ok = n == fc->want_nr;
	for (i = 0; ok && i < n; i++)
		ok = !btrfs_comp_keys(&keys[i], &fc->want[i]);
	check(ok, "free space keys: %s", fc->name);
}

struct item_case {
	const char *name;
	u64 incompat;
	u32 nodesize;
	u64 level;
	struct btrfs_key want_key;
	u32 want_size;
};

static const struct item_case item_cases[] = {
	/* METADATA_ITEM: extent item 24 + inline tree ref 9 */
	{ "skinny metadata", BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA, 16384, 1,
	  { 30408704, BTRFS_METADATA_ITEM_KEY, 1 }, 33 },
	/* EXTENT_ITEM: 24 + tree_block_info 18 + 9 */
	{ "without skinny metadata", 0, 4096, 0,
	  { 30408704, BTRFS_EXTENT_ITEM_KEY, 4096 }, 51 },
};

static void run_item_case(const struct item_case *ic)
{
	static struct btrfs_fs_info fs_info;
	struct btrfs_key key;

	memset(&fs_info, 0, sizeof(fs_info));
	fs_info.incompat = ic->incompat;
	fs_info.nodesize = ic->nodesize;
	key = btrfs_tree_block_item_key(&fs_info, 30408704, ic->level);
	check(!btrfs_comp_keys(&key, &ic->want_key), "tree block item key: %s", ic->name);
	check_u64(ic->name, btrfs_tree_block_item_size(&fs_info), ic->want_size);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(queue_cases) / sizeof(queue_cases[0]); i++)
		run_queue_case(&queue_cases[i]);
	test_queue_source();
	for (i = 0; i < sizeof(fst_cases) / sizeof(fst_cases[0]); i++)
		run_fst_case(&fst_cases[i]);
	for (i = 0; i < sizeof(item_cases) / sizeof(item_cases[0]); i++)
		run_item_case(&item_cases[i]);
	return unit_failures ? 1 : 0;
}
