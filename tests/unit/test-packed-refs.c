// SPDX-License-Identifier: GPL-2.0
/*
 * The packed refs (common/packed-refs.c) and csum-delete --file's merge of
 * a file's refs in packed runs (file-item.c): each against a plain sorted
 * array, over a table of orders (rising, falling, random, rising then
 * falling), duplicates, one extent shared by thousands of file extents,
 * sizes that conflict, gaps of any size and unaligned or wrapping ref
 * offsets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/packed-refs.h"
#include "kernel-shared/file-item.h"
#include "kernel-shared/kernel-version.h"
#include "tests/unit/kernel-model.h"
#include "tests/unit/unit-test.h"

#define SECTOR		4096ULL

static const struct btrfs_csum_params params = {
	.nodesize = 16384, .sectorsize = 4096, .csum_size = 4,
	.free_space_tree_opt = true,
};

static u64 rng_state = 88172645463325252ULL;

static u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int ref_cmp(const void *pa, const void *pb)
{
	return packed_ref_cmp(pa, pb);
}

/* ---- the packed list alone ----------------------------------------------- */

/*
 * @even_pct of the refs (after the first two) repeat the step of the ref
 * before: the same bytenr gap, num_bytes, ref offset and seq differences
 * (a file written in order), packed as one byte
 */
static void test_list_steps(const char *name, u64 n, u64 max_gap, bool with_seq,
			    bool unaligned, u32 even_pct)
{
	struct packed_ref *refs = calloc(n ? n : 1, sizeof(*refs)), r;
	struct packed_refs l;
	struct packed_refs_cursor c;
	u64 i, bad_get = 0, bad_iter = 0, bad_find = 0, bad_state = 0, seen = 0;
	u64 bytenr = SECTOR * (1 + rnd() % 1000);

	packed_refs_init(&l, 12, with_seq);
	for (i = 0; i < n; i++) {
		if (i >= 2 && rnd() % 100 < even_pct) {
			refs[i].bytenr = bytenr += refs[i - 1].bytenr - refs[i - 2].bytenr;
			refs[i].num_bytes = refs[i - 1].num_bytes;
			refs[i].ref_offset = refs[i - 1].ref_offset +
					     (refs[i - 1].ref_offset - refs[i - 2].ref_offset);
			refs[i].seq = with_seq ? refs[i - 1].seq + (refs[i - 1].seq - refs[i - 2].seq) : i;
			goto append;
		}
		/* gaps of 0 (duplicates) to max_gap sectors, and now and then huge */
		if (rnd() % 97 == 0)
			bytenr += (rnd() >> 20) & ~(SECTOR - 1);
		else if (max_gap)
			bytenr += SECTOR * (rnd() % (max_gap + 1));
		refs[i].bytenr = bytenr;
		refs[i].num_bytes = SECTOR * (1 + rnd() % 64);
		refs[i].ref_offset = unaligned && rnd() % 3 == 0 ? rnd() :
				     SECTOR * (rnd() % 100000);
		refs[i].seq = with_seq ? rnd() % 1000000 : i;
append:
		if (packed_refs_append(&l, &refs[i])) {
			check(0, "%s: append %llu", name, (unsigned long long)i);
			goto out;
		}
	}
	check_u64("list: count", l.nr, n);
	for (i = 0; i < n; i++) {
		packed_refs_get(&l, (i * 7919) % n, &r);
		bad_get += memcmp(&r, &refs[(i * 7919) % n], sizeof(r)) != 0;
	}
	if (packed_refs_first(&l, &c)) {
		do {
			bad_iter += c.index != seen ||
				    memcmp(&c.cur, &refs[seen], sizeof(c.cur)) != 0;
			seen++;
		} while (packed_refs_next(&c));
	}
	for (i = 0; i < n; i++) {
		u64 want = i, got;

		while (want && refs[want - 1].bytenr == refs[i].bytenr)
			want--;
		got = packed_refs_find(&l, refs[i].bytenr, &r);
		bad_find += got != want || r.bytenr != refs[i].bytenr;
		/* a bytenr between two refs, or before the first: none */
		if (refs[i].bytenr > SECTOR && (!i || refs[i - 1].bytenr < refs[i].bytenr - SECTOR))
			bad_find += packed_refs_find(&l, refs[i].bytenr - SECTOR, &r) != UINT64_MAX;
	}
	if (n)
		bad_find += packed_refs_find(&l, refs[n - 1].bytenr + SECTOR, &r) != UINT64_MAX;
	packed_refs_init_states(&l, 1);
	for (i = 0; i < n; i += 3)
		packed_refs_set_state(&l, i, (u32)(i % 4));
	for (i = 0; i < n; i++)
		bad_state += packed_refs_state(&l, i) != (i % 3 ? 1 : (u32)(i % 4));
	check(!bad_get && !bad_iter && seen == n && !bad_find && !bad_state,
	      "%s: %llu refs, %llu bytes packed: get %llu, order %llu, find %llu, state %llu wrong",
	      name, (unsigned long long)n, (unsigned long long)l.len,
	      (unsigned long long)bad_get, (unsigned long long)bad_iter,
	      (unsigned long long)bad_find, (unsigned long long)bad_state);
	if (even_pct == 100)
		check(l.len + l.nr_blocks * sizeof(*l.blocks) < n + n / 2,
		      "%s: %.2f bytes a ref with the index", name,
		      n ? (double)(l.len + l.nr_blocks * sizeof(*l.blocks)) / n : 0.0);
out:
	packed_refs_free(&l);
	free(refs);
}

/*
 * A file written in order (1 M extents evenly spaced) packs into a few
 * bytes whatever its length, and its states, set one by one from the
 * last ref back as the truncation drops them, keep 2 bits a ref only in
 * the chunk being changed
 */
static void test_list_runs(void)
{
	const u64 n = 1000000;
	struct packed_refs l;
	struct packed_ref r = { .bytenr = SECTOR * 100, .num_bytes = SECTOR };
	u64 i, bad = 0, chunks_bits, max_bits = 0, bytes;

	packed_refs_init(&l, 12, false);
	for (i = 0; i < n; i++) {
		r.seq = i;
		packed_refs_append(&l, &r);
		r.bytenr += 2 * SECTOR;
		r.ref_offset += 2 * SECTOR;
	}
	bytes = l.len + l.nr_blocks * sizeof(*l.blocks);
	check(bytes < 128, "runs: 1 M even refs in %llu bytes with the index",
	      (unsigned long long)bytes);
	for (i = 0; i < n; i += 9973) {
		u64 got = packed_refs_find(&l, SECTOR * 100 + i * 2 * SECTOR, &r);

		packed_refs_get(&l, i, &r);
		bad += got != i || r.bytenr != SECTOR * 100 + i * 2 * SECTOR ||
		       r.ref_offset != i * 2 * SECTOR || r.seq != i;
		bad += packed_refs_find(&l, SECTOR * 101 + i * 2 * SECTOR, &r) != UINT64_MAX;
	}
	check(!bad, "runs: get and find inside a run: %llu wrong", (unsigned long long)bad);
	packed_refs_init_states(&l, 1);
	for (i = n; i-- > 0;) {
		u64 c;

		packed_refs_set_state(&l, i, 2);
		for (c = 0, chunks_bits = 0; i % 50000 == 0 && c < (n + 4095) / 4096; c++)
			chunks_bits += l.states[c].bits != NULL;
		if (chunks_bits > max_bits)
			max_bits = chunks_bits;
	}
	for (i = 0, bad = 0; i < n; i++)
		bad += packed_refs_state(&l, i) != 2;
	for (i = 0, chunks_bits = 0; i < (n + 4095) / 4096; i++)
		chunks_bits += l.states[i].bits != NULL;
	check(!bad && max_bits <= 1 && !chunks_bits,
	      "runs: states set back to front: %llu wrong, at most %llu chunks of bits, %llu at the end",
	      (unsigned long long)bad, (unsigned long long)max_bits,
	      (unsigned long long)chunks_bits);
	packed_refs_free(&l);
}

static void test_list(const char *name, u64 n, u64 max_gap, bool with_seq, bool unaligned)
{
	test_list_steps(name, n, max_gap, with_seq, unaligned, 0);
}

static void test_list_refused(void)
{
	struct packed_refs l;
	struct packed_ref a = { 8 * SECTOR, SECTOR, 0, 0 }, b = a;

	packed_refs_init(&l, 12, false);
	check(!packed_refs_append(&l, &a), "list: first ref");
	b.bytenr -= SECTOR;
	b.seq = 1;
	check(packed_refs_append(&l, &b) == -EINVAL, "list: a lower bytenr refused");
	b.bytenr = a.bytenr + 1;
	check(packed_refs_append(&l, &b) == -EINVAL, "list: an unaligned bytenr refused");
	b.bytenr = a.bytenr;
	b.seq = 5;
	check(packed_refs_append(&l, &b) == -EINVAL, "list: without seq, seq is the index");
	check_u64("list: refused refs leave it", l.nr, 1);
	packed_refs_free(&l);
}

/* ---- a file's refs merged ------------------------------------------------ */

struct expect {
	struct btrfs_csum_delete_calc calc;
	u64 conflict;
	u64 conflict_old;
	struct packed_ref *lone;
	u64 nr_lone;
};

/* What the merge should give: the refs sorted whole, one extent at a time */
static void reference_merge(const struct btrfs_kernel_model *m, struct packed_ref *refs,
			    u64 n, struct expect *x)
{
	struct packed_ref *s = malloc((n ? n : 1) * sizeof(*s));
	u64 i = 0, j;

	memset(x, 0, sizeof(*x));
	x->conflict = UINT64_MAX;
	x->lone = malloc((n ? n : 1) * sizeof(*x->lone));
	memcpy(s, refs, n * sizeof(*s));
	qsort(s, n, sizeof(*s), ref_cmp);
	while (i < n) {
		u64 k = 1, first = i, refs_n = 1, c = UINT64_MAX;

		while (i + k < n && s[i + k].bytenr == s[i].bytenr)
			k++;
		for (j = i; j < i + k; j++)
			if (s[j].seq < s[first].seq)
				first = j;
		for (j = i; j < i + k; j++) {
			if (s[j].num_bytes != s[first].num_bytes && s[j].seq < c)
				c = s[j].seq;
			if (j > i)
				refs_n += s[j].ref_offset != s[j - 1].ref_offset;
		}
		if (c < x->conflict) {
			x->conflict = c;
			x->conflict_old = s[first].num_bytes;
		}
		if (x->conflict == UINT64_MAX) {
			btrfs_csum_delete_add_heads(&params, m, &x->calc, s[first].num_bytes, 1);
			btrfs_csum_delete_add_refs(&params, &x->calc, refs_n);
			if (k == 1)
				x->lone[x->nr_lone++] = s[i];
		}
		i += k;
	}
	free(s);
}

enum order { RISING, FALLING, RANDOM, RISE_THEN_FALL, CLUSTERS };

struct merge_case {
	const char *name;
	u64 n;
	enum order order;
	u32 dup_pct;		/* refs that take an earlier ref's extent */
	u32 same_offset_pct;	/* of those, with its ref offset too */
	u32 conflict_pct;	/* of those, with another size */
	u64 shared;		/* refs of one extent, spread over the file */
};

static const struct merge_case cases[] = {
	{ "empty", 0, RISING, 0, 0, 0, 0 },
	{ "one", 1, RISING, 0, 0, 0, 0 },
	{ "rising", 100000, RISING, 0, 0, 0, 0 },
	{ "falling", 100000, FALLING, 0, 0, 0, 0 },
	{ "random, 3 runs", 150000, RANDOM, 0, 0, 0, 0 },
	{ "random, exactly 2 runs", 131072, RANDOM, 0, 0, 0, 0 },
	{ "rising, one fall at the end", 70000, RISE_THEN_FALL, 0, 0, 0, 0 },
	{ "rising, duplicates", 80000, RISING, 10, 50, 0, 0 },
	{ "random, duplicates", 200000, RANDOM, 20, 30, 0, 0 },
	{ "random, one extent in 30,000 items", 140000, RANDOM, 0, 0, 0, 30000 },
	{ "one extent, 70,000 items", 70000, RISING, 0, 0, 0, 70000 },
	{ "clusters", 150000, CLUSTERS, 5, 50, 0, 0 },
	{ "random, conflicts", 150000, RANDOM, 20, 30, 1, 0 },
	{ "falling, conflicts", 90000, FALLING, 30, 0, 5, 0 },
};

static void make_refs(const struct merge_case *mc, struct packed_ref *refs)
{
	u64 i, shared = SECTOR * (1ULL << 30);

	for (i = 0; i < mc->n; i++) {
		u64 slot;

		switch (mc->order) {
		case RISING: slot = i; break;
		case FALLING: slot = mc->n - i; break;
		case RISE_THEN_FALL: slot = i + 1 < mc->n ? i + 1 : 0; break;
		case CLUSTERS: slot = (i % 1000) * 1000 + i / 1000; break;
		default: slot = rnd() % (mc->n * 4); break;
		}
		refs[i].bytenr = SECTOR * (16 + 2 * slot);
		refs[i].num_bytes = SECTOR * (1 + slot % 3);
		/* file offset - extent offset: wraps where an offset is past it */
		refs[i].ref_offset = i % 101 == 0 ? (u64)0 - SECTOR * (i % 7) : SECTOR * i;
		refs[i].seq = i;
		if (i && rnd() % 100 < mc->dup_pct) {
			const struct packed_ref *o = &refs[rnd() % i];

			refs[i].bytenr = o->bytenr;
			refs[i].num_bytes = o->num_bytes;
			if (rnd() % 100 < mc->same_offset_pct)
				refs[i].ref_offset = o->ref_offset;
			if (rnd() % 100 < mc->conflict_pct)
				refs[i].num_bytes += SECTOR;
		}
		if (mc->shared && rnd() % mc->n < mc->shared) {
			refs[i].bytenr = shared;
			refs[i].num_bytes = SECTOR;
		}
	}
}

static void test_merge(const struct btrfs_kernel_model *m, const struct merge_case *mc)
{
	struct packed_ref *refs = calloc(mc->n ? mc->n : 1, sizeof(*refs));
	struct btrfs_drop_tracker t;
	struct btrfs_file_drop drop;
	struct expect x;
	struct packed_refs_cursor c;
	u64 i, bad_lone = 0, n_lone = 0;
	int ret = 0;

	make_refs(mc, refs);
	reference_merge(m, refs, mc->n, &x);
	btrfs_drop_tracker_init(&t, &params, m);
	btrfs_drop_tracker_start_file(&t, 12, &drop);
	for (i = 0; i < mc->n && !ret; i++)
		ret = btrfs_drop_tracker_add(&t, refs[i].bytenr, refs[i].num_bytes,
					     refs[i].ref_offset);
	check(!ret, "%s: refs queued", mc->name);
	ret = btrfs_drop_tracker_merge(&t, &drop);
	check(ret == (x.conflict != UINT64_MAX), "%s: merge returns %d", mc->name, ret);
	if (x.conflict != UINT64_MAX) {
		check(t.conflict == x.conflict && t.conflict_old == x.conflict_old,
		      "%s: first conflict item %llu (size %llu), want %llu (%llu)", mc->name,
		      (unsigned long long)t.conflict, (unsigned long long)t.conflict_old,
		      (unsigned long long)x.conflict, (unsigned long long)x.conflict_old);
		check(!t.lone_list, "%s: no lone refs after a conflict", mc->name);
		goto out;
	}
	check(!memcmp(&drop.calc, &x.calc, sizeof(x.calc)),
	      "%s: heads %llu refs %llu total %llu, want %llu %llu %llu", mc->name,
	      (unsigned long long)drop.calc.extents, (unsigned long long)drop.calc.refs,
	      (unsigned long long)drop.calc.total, (unsigned long long)x.calc.extents,
	      (unsigned long long)x.calc.refs, (unsigned long long)x.calc.total);
	if (!t.lone_list) {
		check(!mc->n, "%s: a lone list", mc->name);
		goto out;
	}
	if (packed_refs_first(t.lone_list, &c)) {
		do {
			bad_lone += n_lone >= x.nr_lone ||
				    c.cur.bytenr != x.lone[n_lone].bytenr ||
				    c.cur.num_bytes != x.lone[n_lone].num_bytes ||
				    c.cur.ref_offset != x.lone[n_lone].ref_offset;
			n_lone++;
		} while (packed_refs_next(&c));
	}
	check(!bad_lone && n_lone == x.nr_lone,
	      "%s: %llu lone refs (%llu wrong), want %llu; %.1f bytes a ref", mc->name,
	      (unsigned long long)n_lone, (unsigned long long)bad_lone,
	      (unsigned long long)x.nr_lone,
	      t.lone_list->nr ? (double)(t.lone_list->len + t.lone_list->nr_blocks *
			       sizeof(struct packed_refs_block)) / (double)t.lone_list->nr : 0);
out:
	btrfs_drop_tracker_release(&t);
	free(x.lone);
	free(refs);
}

int main(void)
{
	struct btrfs_kernel_model m = unit_kernel_model("6.18");
	u32 i;
	test_list("list: empty", 0, 4, false, false);
	test_list("list: one", 1, 4, false, false);
	test_list("list: one block", PACKED_REFS_BLOCK, 4, false, false);
	test_list("list: a block and one", PACKED_REFS_BLOCK + 1, 4, true, false);
	test_list("list: 4 KiB apart", 10000, 1, false, false);
	test_list("list: duplicates and gaps", 20000, 3, true, true);
	test_list("list: all one bytenr", 5000, 0, true, false);
	test_list("list: sparse", 20000, 1 << 20, true, true);
	test_list_steps("list: even steps", 10000, 1, false, false, 100);
	test_list_steps("list: even steps with seq", 10000, 1, true, false, 100);
	test_list_steps("list: mostly even steps", 20000, 3, true, true, 90);
	test_list_steps("list: half even steps", 20000, 1 << 20, false, true, 50);
	test_list_refused();
	test_list_runs();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		test_merge(&m, &cases[i]);
	return unit_failures ? 1 : 0;
}
