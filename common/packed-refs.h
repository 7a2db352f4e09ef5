/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A list of data refs sorted by bytenr, packed: each ref is the varints of
 * its bytenr's difference from the ref before, of its num_bytes and of its
 * ref offset's difference (bytenr, num_bytes and aligned offset
 * differences in sectors), 3 or 4 bytes a ref for extents a few sectors
 * apart instead of 32, and a run of refs whose differences are the ref
 * before's (extents evenly spaced, a file written in order) is one varint
 * whatever its length.  Every PACKED_REFS_BLOCK of those encodings (a run
 * is one) the list notes the ref's whole values, its index and where it
 * starts, so that a lookup by bytenr or by index is a binary search of
 * those notes and the decoding of one block, a run's refs computed, not
 * decoded one by one: an evenly spaced list costs a few bytes, not a byte
 * a ref.  Optionally each ref has a state of 2 bits, which can change (the
 * packing cannot), kept per PACKED_REFS_STATE_CHUNK refs as one value
 * while all of them share it.
 */
#ifndef BTRFS_SPACE_COMMON_PACKED_REFS_H
#define BTRFS_SPACE_COMMON_PACKED_REFS_H

#include <stdbool.h>
#include "common/types.h"

#define PACKED_REFS_BLOCK	128

/* One ref: a file's data ref as its deletion drops it */
struct packed_ref {
	u64 bytenr;			/* disk_bytenr */
	u64 num_bytes;			/* disk_num_bytes */
	u64 ref_offset;			/* file offset - extent offset */
	u64 seq;			/* items with an extent before it, in key order */
};

/* The list's order: bytenr, then ref offset, then seq */
static inline int packed_ref_cmp(const struct packed_ref *a, const struct packed_ref *b)
{
	if (a->bytenr != b->bytenr)
		return a->bytenr < b->bytenr ? -1 : 1;
	if (a->ref_offset != b->ref_offset)
		return a->ref_offset < b->ref_offset ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* What a ref adds to the one before it: a repeated step is one byte */
struct packed_refs_step {
	u64 bytenr;			/* difference, >> shift */
	u64 num_bytes;			/* >> shift */
	u64 ref_offset;			/* difference */
	u64 seq;			/* difference */
	bool valid;			/* false at a block's first ref */
};

/* Where a block starts: its first ref, that ref's index, its encodings' offset */
struct packed_refs_block {
	struct packed_ref first;
	u64 index;
	u64 pos;
};

/*
 * The states of PACKED_REFS_STATE_CHUNK refs: @uniform for all while
 * @bits is NULL, else 2 bits a ref and how many refs have each state
 */
#define PACKED_REFS_STATE_CHUNK	4096
struct packed_refs_states {
	u8 *bits;
	u16 count[4];
	u8 uniform;
};

struct packed_refs;

/* Reading the list in order */
struct packed_refs_cursor {
	const struct packed_refs *l;
	const u8 *p;			/* the next encoding */
	u64 index;			/* of the ref in cur */
	u64 block;			/* the block cur is in */
	u64 run_left;			/* refs of cur's run after it */
	struct packed_ref cur;
	struct packed_refs_step step;	/* cur's */
};

struct packed_refs {
	u8 *data;
	u64 len;
	u64 cap;
	struct packed_refs_block *blocks;
	u64 nr_blocks;
	u64 cap_blocks;
	struct packed_refs_states *states;	/* a chunk each, or NULL */
	u64 nr;
	u32 shift;			/* bytenr and num_bytes in units of 1 << shift */
	bool with_seq;			/* seq packed too; else a ref's seq is its index */
	struct packed_ref last;		/* the ref appended last */
	struct packed_refs_step last_step;	/* and its step */
	u64 last_pos;			/* where the last encoding starts */
	u64 last_run;			/* the refs it repeats the step for (0: not a run) */
	u32 block_encodings;		/* in the last block, its first ref counted */
	bool seek_valid;
	struct packed_refs_cursor seek;	/* where the last get left off */
};

/* Empty list; bytenr and num_bytes of every ref will be multiples of 1 << @shift */
void packed_refs_init(struct packed_refs *l, u32 shift, bool with_seq);
/* Empty again, the memory kept for reuse */
void packed_refs_clear(struct packed_refs *l);
void packed_refs_free(struct packed_refs *l);
/*
 * Append @r: its bytenr at least the last one's, bytenr and num_bytes
 * aligned, and (without seq) seq the list's length.  0, -ENOMEM, or
 * -EINVAL when @r breaks those (the list unchanged).
 */
int packed_refs_append(struct packed_refs *l, const struct packed_ref *r);
/* The list's memory down to what it holds (appending grows it again) */
void packed_refs_trim(struct packed_refs *l);
/* Ref @index (< l->nr) into *@r */
void packed_refs_get(struct packed_refs *l, u64 index, struct packed_ref *r);
/*
 * The first ref of bytenr @bytenr into *@r: its index, or UINT64_MAX
 * when the list has none
 */
u64 packed_refs_find(struct packed_refs *l, u64 bytenr, struct packed_ref *r);

/* Every ref's state @state (0 to 3): 0, or -ENOMEM */
int packed_refs_init_states(struct packed_refs *l, u32 state);
static inline u32 packed_refs_state(const struct packed_refs *l, u64 index)
{
	const struct packed_refs_states *c = &l->states[index / PACKED_REFS_STATE_CHUNK];
	u64 i = index % PACKED_REFS_STATE_CHUNK;

	if (!c->bits)
		return c->uniform;
	return (c->bits[i / 4] >> (2 * (i % 4))) & 3;
}

/* Ref @index's state to @state: 0, or -ENOMEM (the state unchanged) */
int packed_refs_set_state(struct packed_refs *l, u64 index, u32 state);

/* At the first ref: false when the list is empty */
bool packed_refs_first(const struct packed_refs *l, struct packed_refs_cursor *c);
/* On to the next ref: false past the last */
bool packed_refs_next(struct packed_refs_cursor *c);

#endif
