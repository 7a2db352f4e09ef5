// SPDX-License-Identifier: GPL-2.0
/*
 * Packed refs sorted by bytenr (packed-refs.h).  The first ref of a block
 * is only in the block's note; each other ref is, as varints:
 * ((bytenr - the previous bytenr) >> shift) << 1, num_bytes >> shift, a
 * ref offset token, and with seq zigzag(seq - the previous seq).  The
 * token is zigzag((offset difference) >> shift) << 1 when the difference
 * is aligned (and fits), else 1 followed by zigzag(difference) whole.  A
 * ref whose four differences are those of the ref before it (not a
 * block's first) is the one varint 1 instead: the step repeated.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/packed-refs.h"
#include "common/varint.h"

/* a ref's varints at most: bytenr, num_bytes, offset token and whole, seq */
#define PACKED_REF_MAX		(5 * VARINT_U64_MAX)

void packed_refs_init(struct packed_refs *l, u32 shift, bool with_seq)
{
	memset(l, 0, sizeof(*l));
	l->shift = shift;
	l->with_seq = with_seq;
}

void packed_refs_clear(struct packed_refs *l)
{
	l->len = 0;
	l->nr = 0;
	l->nr_blocks = 0;
	l->cached = 0;
	free(l->states);
	l->states = NULL;
}

void packed_refs_free(struct packed_refs *l)
{
	free(l->data);
	free(l->blocks);
	free(l->states);
	packed_refs_init(l, l->shift, l->with_seq);
}

static int grow(void **p, u64 *cap, u64 need, size_t size, u64 first)
{
	u64 n = *cap ? *cap : first;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static u8 *put_offset(u8 *p, u64 delta, u32 shift)
{
	u64 mask = (1ULL << shift) - 1;
	u64 scaled = zigzag((u64)((int64_t)delta >> shift));

	if (!(delta & mask) && !(scaled >> 63))
		return put_varint(p, scaled << 1);
	*p++ = 1;
	return put_varint(p, zigzag(delta));
}

static const u8 *get_offset(const u8 *p, u64 *delta, u32 shift)
{
	u64 token;

	p = get_varint(p, &token);
	if (token & 1) {
		p = get_varint(p, &token);
		*delta = unzigzag(token);
	} else {
		*delta = unzigzag(token >> 1) << shift;
	}
	return p;
}

static bool same_step(const struct packed_refs_step *a, const struct packed_refs_step *b)
{
	return a->valid && b->valid && a->bytenr == b->bytenr &&
	       a->num_bytes == b->num_bytes && a->ref_offset == b->ref_offset &&
	       a->seq == b->seq;
}

int packed_refs_append(struct packed_refs *l, const struct packed_ref *r)
{
	u64 mask = (1ULL << l->shift) - 1;
	struct packed_refs_step step = { 0 };
	u8 *p;

	if ((r->bytenr | r->num_bytes) & mask || (l->nr && r->bytenr < l->last.bytenr) ||
	    (!l->with_seq && r->seq != l->nr))
		return -EINVAL;
	if (l->nr % PACKED_REFS_BLOCK == 0) {
		if (grow((void **)&l->blocks, &l->cap_blocks, l->nr_blocks + 1,
			 sizeof(*l->blocks), 64))
			return -ENOMEM;
		l->blocks[l->nr_blocks].first = *r;
		l->blocks[l->nr_blocks++].pos = l->len;
	} else {
		if (grow((void **)&l->data, &l->cap, l->len + PACKED_REF_MAX, 1, 4096))
			return -ENOMEM;
		step = (struct packed_refs_step){
			.bytenr = (r->bytenr - l->last.bytenr) >> l->shift,
			.num_bytes = r->num_bytes >> l->shift,
			.ref_offset = r->ref_offset - l->last.ref_offset,
			.seq = r->seq - l->last.seq,
			.valid = true,
		};
		p = l->data + l->len;
		if (same_step(&step, &l->last_step)) {
			p = put_varint(p, 1);
		} else {
			p = put_varint(p, step.bytenr << 1);
			p = put_varint(p, step.num_bytes);
			p = put_offset(p, step.ref_offset, l->shift);
			if (l->with_seq)
				p = put_varint(p, zigzag(step.seq));
		}
		l->len = p - l->data;
	}
	l->last = *r;
	l->last_step = step;
	l->nr++;
	if (l->cached == l->nr_blocks)
		l->cached = 0;		/* its block grew */
	return 0;
}

/* Capacity doubled as refs came: up to half of it unused */
void packed_refs_trim(struct packed_refs *l)
{
	void *p;

	if (l->len && l->len < l->cap) {
		p = realloc(l->data, l->len);
		if (p) {
			l->data = p;
			l->cap = l->len;
		}
	}
	if (l->nr_blocks && l->nr_blocks < l->cap_blocks) {
		p = realloc(l->blocks, l->nr_blocks * sizeof(*l->blocks));
		if (p) {
			l->blocks = p;
			l->cap_blocks = l->nr_blocks;
		}
	}
}

/*
 * The ref after @prev (ref @index - 1), from @p; *@step is @prev's step
 * on entry (not valid for a block's first ref), the new ref's on return
 */
static const u8 *decode_next(const struct packed_refs *l, const u8 *p,
			     const struct packed_ref *prev, u64 index,
			     struct packed_refs_step *step, struct packed_ref *r)
{
	u64 v;

	p = get_varint(p, &v);
	if (v != 1) {
		step->bytenr = v >> 1;
		p = get_varint(p, &step->num_bytes);
		p = get_offset(p, &step->ref_offset, l->shift);
		step->seq = 1;
		if (l->with_seq) {
			p = get_varint(p, &v);
			step->seq = unzigzag(v);
		}
		step->valid = true;
	}
	r->bytenr = prev->bytenr + (step->bytenr << l->shift);
	r->num_bytes = step->num_bytes << l->shift;
	r->ref_offset = prev->ref_offset + step->ref_offset;
	r->seq = l->with_seq ? prev->seq + step->seq : index;
	return p;
}

static u64 block_len(const struct packed_refs *l, u64 block)
{
	u64 left = l->nr - block * PACKED_REFS_BLOCK;

	return left < PACKED_REFS_BLOCK ? left : PACKED_REFS_BLOCK;
}

/*
 * The encoded bytes of block @blk: a list whose blocks hold one ref each has
 * no encoded bytes at all, and NULL + 0 is undefined in C
 */
static const u8 *block_data(const struct packed_refs *l, u64 blk)
{
	return l->data ? l->data + l->blocks[blk].pos : NULL;
}

/* Block @block decoded into the cache */
static void load_block(struct packed_refs *l, u64 block)
{
	struct packed_refs_step step = { 0 };
	const u8 *p;
	u64 i, n;

	if (l->cached == block + 1)
		return;
	n = block_len(l, block);
	l->cache[0] = l->blocks[block].first;
	p = block_data(l, block);
	for (i = 1; i < n; i++)
		p = decode_next(l, p, &l->cache[i - 1], block * PACKED_REFS_BLOCK + i,
				&step, &l->cache[i]);
	l->cached = block + 1;
}

void packed_refs_get(struct packed_refs *l, u64 index, struct packed_ref *r)
{
	load_block(l, index / PACKED_REFS_BLOCK);
	*r = l->cache[index % PACKED_REFS_BLOCK];
}

u64 packed_refs_find(struct packed_refs *l, u64 bytenr, struct packed_ref *r)
{
	u64 lo = 0, hi = l->nr_blocks, block, i, n;

	/* the first block whose first bytenr is at least @bytenr */
	while (lo < hi) {
		u64 mid = lo + (hi - lo) / 2;

		if (l->blocks[mid].first.bytenr < bytenr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the ref is in the block before it, or first in it */
	if (lo < l->nr_blocks && l->blocks[lo].first.bytenr == bytenr && !lo)
		block = 0;
	else if (lo)
		block = lo - 1;
	else
		return UINT64_MAX;
	load_block(l, block);
	n = block_len(l, block);
	for (i = 0; i < n && l->cache[i].bytenr < bytenr; i++)
		;
	if (i == n) {
		/* past this block: the next one's first, if it is @bytenr */
		if (lo < l->nr_blocks && l->blocks[lo].first.bytenr == bytenr) {
			*r = l->blocks[lo].first;
			return lo * PACKED_REFS_BLOCK;
		}
		return UINT64_MAX;
	}
	if (l->cache[i].bytenr != bytenr)
		return UINT64_MAX;
	*r = l->cache[i];
	return block * PACKED_REFS_BLOCK + i;
}

int packed_refs_init_states(struct packed_refs *l, u32 state)
{
	u64 bytes = (l->nr + 3) / 4;
	u8 pattern = (u8)((state & 3) * 0x55);

	free(l->states);
	l->states = malloc(bytes ? bytes : 1);
	if (!l->states)
		return -ENOMEM;
	memset(l->states, pattern, bytes);
	return 0;
}

bool packed_refs_first(const struct packed_refs *l, struct packed_refs_cursor *c)
{
	c->l = l;
	c->index = 0;
	if (!l->nr)
		return false;
	c->cur = l->blocks[0].first;
	c->p = block_data(l, 0);
	c->step.valid = false;
	return true;
}

bool packed_refs_next(struct packed_refs_cursor *c)
{
	const struct packed_refs *l = c->l;
	struct packed_ref prev = c->cur;

	if (++c->index >= l->nr)
		return false;
	if (c->index % PACKED_REFS_BLOCK == 0) {
		c->cur = l->blocks[c->index / PACKED_REFS_BLOCK].first;
		c->p = block_data(l, c->index / PACKED_REFS_BLOCK);
		c->step.valid = false;
		return true;
	}
	c->p = decode_next(l, c->p, &prev, c->index, &c->step, &c->cur);
	return true;
}
