// SPDX-License-Identifier: GPL-2.0
/*
 * Packed refs sorted by bytenr (packed-refs.h).  The first ref of a block
 * is only in the block's note; each other ref is, as varints:
 * ((bytenr - the previous bytenr) >> shift) << 1, num_bytes >> shift, a
 * ref offset token, and with seq zigzag(seq - the previous seq).  The
 * token is zigzag((offset difference) >> shift) << 1 when the difference
 * is aligned (and fits), else 1 followed by zigzag(difference) whole.
 * Refs whose four differences are those of the ref before them (not a
 * block's first) are the one varint (count << 1) | 1 instead: the step
 * repeated count times.  A run is the list's last encoding while it
 * grows, and is rewritten in place as it does.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/kerncompat.h"
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

static void free_states(struct packed_refs *l)
{
	u64 i, n = (l->nr + PACKED_REFS_STATE_CHUNK - 1) / PACKED_REFS_STATE_CHUNK;

	for (i = 0; l->states && i < n; i++)
		free(l->states[i].bits);
	free(l->states);
	l->states = NULL;
}

void packed_refs_clear(struct packed_refs *l)
{
	free_states(l);
	l->len = 0;
	l->nr = 0;
	l->nr_blocks = 0;
	l->last_run = 0;
	l->block_encodings = 0;
	l->seek_valid = false;
}

void packed_refs_free(struct packed_refs *l)
{
	free_states(l);
	free(l->data);
	free(l->blocks);
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

/* @r starts a new block: noted whole */
static int append_block(struct packed_refs *l, const struct packed_ref *r)
{
	if (grow((void **)&l->blocks, &l->cap_blocks, l->nr_blocks + 1,
		 sizeof(*l->blocks), 64))
		return -ENOMEM;
	l->blocks[l->nr_blocks++] = (struct packed_refs_block){
		.first = *r, .index = l->nr, .pos = l->len,
	};
	l->block_encodings = 1;
	l->last_run = 0;
	l->last_step = (struct packed_refs_step){ 0 };
	return 0;
}

int packed_refs_append(struct packed_refs *l, const struct packed_ref *r)
{
	u64 mask = (1ULL << l->shift) - 1;
	struct packed_refs_step step;
	bool repeat;
	u8 *p;

	if ((r->bytenr | r->num_bytes) & mask || (l->nr && r->bytenr < l->last.bytenr) ||
	    (!l->with_seq && r->seq != l->nr))
		return -EINVAL;
	if (grow((void **)&l->data, &l->cap, l->len + PACKED_REF_MAX, 1, 4096))
		return -ENOMEM;
	l->seek_valid = false;
	step = (struct packed_refs_step){
		.bytenr = (r->bytenr - l->last.bytenr) >> l->shift,
		.num_bytes = r->num_bytes >> l->shift,
		.ref_offset = r->ref_offset - l->last.ref_offset,
		.seq = r->seq - l->last.seq,
		.valid = l->nr != 0,
	};
	repeat = same_step(&step, &l->last_step);
	if (repeat && l->last_run) {
		/* the run grows: its varint rewritten where it is, last */
		l->last_run++;
		p = put_varint(l->data + l->last_pos, (l->last_run << 1) | 1);
		l->len = p - l->data;
	} else if (!l->nr || l->block_encodings >= PACKED_REFS_BLOCK) {
		if (append_block(l, r))
			return -ENOMEM;
	} else {
		l->last_pos = l->len;
		p = l->data + l->len;
		if (repeat) {
			l->last_run = 1;
			p = put_varint(p, 3);
		} else {
			l->last_run = 0;
			p = put_varint(p, step.bytenr << 1);
			p = put_varint(p, step.num_bytes);
			p = put_offset(p, step.ref_offset, l->shift);
			if (l->with_seq)
				p = put_varint(p, zigzag(step.seq));
			l->last_step = step;
		}
		l->len = p - l->data;
		l->block_encodings++;
	}
	l->last = *r;
	l->nr++;
	return 0;
}

/* Capacity doubled as refs came: up to half of it unused */
void packed_refs_trim(struct packed_refs *l)
{
	void *p;

	l->seek_valid = false;		/* it points into the data */
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
 * The encoded bytes of block @blk: a list whose blocks hold one ref each has
 * no encoded bytes at all, and NULL + 0 is undefined in C
 */
static const u8 *block_data(const struct packed_refs *l, u64 blk)
{
	return l->data ? l->data + l->blocks[blk].pos : NULL;
}

/* The cursor at the first ref of block @blk */
static void cursor_at_block(const struct packed_refs *l, u64 blk, struct packed_refs_cursor *c)
{
	c->l = l;
	c->block = blk;
	c->index = l->blocks[blk].index;
	c->cur = l->blocks[blk].first;
	c->p = block_data(l, blk);
	c->run_left = 0;
	c->step.valid = false;
}

/* The last ref of cur's block is cur */
static bool block_ends(const struct packed_refs_cursor *c)
{
	const struct packed_refs *l = c->l;

	if (c->index + 1 >= l->nr)
		return true;
	return c->block + 1 < l->nr_blocks && l->blocks[c->block + 1].index == c->index + 1;
}

/* @k refs on along cur's run (@k <= run_left): computed, not decoded */
static void run_skip(struct packed_refs_cursor *c, u64 k)
{
	const struct packed_refs *l = c->l;

	c->cur.bytenr += (k * c->step.bytenr) << l->shift;
	c->cur.ref_offset += k * c->step.ref_offset;
	c->index += k;
	c->cur.seq = l->with_seq ? c->cur.seq + k * c->step.seq : c->index;
	c->run_left -= k;
}

/* The next ref of cur's block (not its last) */
static void cursor_step(struct packed_refs_cursor *c)
{
	const struct packed_refs *l = c->l;
	u64 v;

	if (c->run_left) {
		run_skip(c, 1);
		return;
	}
	c->p = get_varint(c->p, &v);
	if (v & 1) {
		c->run_left = v >> 1;
		run_skip(c, 1);
		return;
	}
	c->step.bytenr = v >> 1;
	c->p = get_varint(c->p, &c->step.num_bytes);
	c->p = get_offset(c->p, &c->step.ref_offset, l->shift);
	c->step.seq = 1;
	if (l->with_seq) {
		c->p = get_varint(c->p, &v);
		c->step.seq = unzigzag(v);
	}
	c->step.valid = true;
	c->cur.bytenr += c->step.bytenr << l->shift;
	c->cur.num_bytes = c->step.num_bytes << l->shift;
	c->cur.ref_offset += c->step.ref_offset;
	c->index++;
	c->cur.seq = l->with_seq ? c->cur.seq + c->step.seq : c->index;
}

/* The block holding ref @index: the last whose first index is at most it */
static u64 block_of(const struct packed_refs *l, u64 index)
{
	u64 lo = 0, hi = l->nr_blocks;

	while (hi - lo > 1) {
		u64 mid = lo + (hi - lo) / 2;

		if (l->blocks[mid].index <= index)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

void packed_refs_get(struct packed_refs *l, u64 index, struct packed_ref *r)
{
	struct packed_refs_cursor *c = &l->seek;
	u64 blk = block_of(l, index);

	/* on from where the last get left off when it is in the same block */
	if (!l->seek_valid || c->block != blk || c->index > index)
		cursor_at_block(l, blk, c);
	l->seek_valid = true;
	while (c->index < index) {
		if (c->run_left)
			run_skip(c, min_t(u64, c->run_left, index - c->index));
		else
			cursor_step(c);
	}
	*r = c->cur;
}

u64 packed_refs_find(struct packed_refs *l, u64 bytenr, struct packed_ref *r)
{
	struct packed_refs_cursor c;
	u64 lo = 0, hi = l->nr_blocks, block;

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
	cursor_at_block(l, block, &c);
	while (c.cur.bytenr < bytenr) {
		if (block_ends(&c)) {
			/* past this block: the next one's first, if it is @bytenr */
			if (lo < l->nr_blocks && l->blocks[lo].first.bytenr == bytenr) {
				*r = l->blocks[lo].first;
				return l->blocks[lo].index;
			}
			return UINT64_MAX;
		}
		if (c.run_left && !c.step.bytenr) {
			run_skip(&c, c.run_left);	/* bytenr stays: below @bytenr */
		} else if (c.run_left) {
			u64 step = c.step.bytenr << l->shift;
			u64 k = (bytenr - c.cur.bytenr + step - 1) / step;

			run_skip(&c, min_t(u64, k, c.run_left));
		} else {
			cursor_step(&c);
		}
	}
	if (c.cur.bytenr != bytenr)
		return UINT64_MAX;
	*r = c.cur;
	return c.index;
}

static u64 chunk_len(const struct packed_refs *l, u64 chunk)
{
	u64 left = l->nr - chunk * PACKED_REFS_STATE_CHUNK;

	return left < PACKED_REFS_STATE_CHUNK ? left : PACKED_REFS_STATE_CHUNK;
}

int packed_refs_init_states(struct packed_refs *l, u32 state)
{
	u64 i, n = (l->nr + PACKED_REFS_STATE_CHUNK - 1) / PACKED_REFS_STATE_CHUNK;

	free_states(l);
	l->states = calloc(n ? n : 1, sizeof(*l->states));
	if (!l->states)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		l->states[i].uniform = (u8)(state & 3);
	return 0;
}

int packed_refs_set_state(struct packed_refs *l, u64 index, u32 state)
{
	struct packed_refs_states *c = &l->states[index / PACKED_REFS_STATE_CHUNK];
	u64 i = index % PACKED_REFS_STATE_CHUNK, len = chunk_len(l, index / PACKED_REFS_STATE_CHUNK);
	u32 old = packed_refs_state(l, index), shift = 2 * (i % 4);
	u8 *b;

	state &= 3;
	if (old == state)
		return 0;
	if (!c->bits) {
		/* the chunk's refs stop sharing one state: 2 bits each */
		c->bits = malloc(PACKED_REFS_STATE_CHUNK / 4);
		if (!c->bits)
			return -ENOMEM;
		memset(c->bits, (u8)(c->uniform * 0x55), PACKED_REFS_STATE_CHUNK / 4);
		memset(c->count, 0, sizeof(c->count));
		c->count[c->uniform] = (u16)len;
	}
	b = &c->bits[i / 4];
	*b = (u8)((*b & ~(3U << shift)) | (state << shift));
	c->count[old]--;
	c->count[state]++;
	if (c->count[state] == len) {
		/* all of them share it again */
		free(c->bits);
		c->bits = NULL;
		c->uniform = (u8)state;
	}
	return 0;
}

bool packed_refs_first(const struct packed_refs *l, struct packed_refs_cursor *c)
{
	if (!l->nr)
		return false;
	cursor_at_block(l, 0, c);
	return true;
}

bool packed_refs_next(struct packed_refs_cursor *c)
{
	const struct packed_refs *l = c->l;

	if (c->index + 1 >= l->nr)
		return false;
	if (block_ends(c))
		cursor_at_block(l, c->block + 1, c);
	else
		cursor_step(c);
	return true;
}
