/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A list of data refs sorted by bytenr, packed: each ref is the varints of
 * its bytenr's difference from the ref before, of its num_bytes and of its
 * ref offset's difference (bytenr, num_bytes and aligned offset
 * differences in sectors), 3 or 4 bytes a ref for extents a few sectors
 * apart instead of 32, and one byte for a ref whose differences are the
 * ref before's (extents evenly spaced, a file written in order).  Every
 * PACKED_REFS_BLOCK refs the list notes the
 * ref's whole values and where it starts, so that a lookup by bytenr is a
 * binary search of those notes and the decoding of one block (kept
 * decoded for the next lookup near it), and a ref can be read by its
 * index.  Optionally each ref has a state of 2 bits beside it, which can
 * change (the packing cannot).
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

/* Where block i (refs i * PACKED_REFS_BLOCK on) starts */
struct packed_refs_block {
	struct packed_ref first;
	u64 pos;
};

struct packed_refs {
	u8 *data;
	u64 len;
	u64 cap;
	struct packed_refs_block *blocks;
	u64 nr_blocks;
	u64 cap_blocks;
	u8 *states;			/* 2 bits a ref, or NULL */
	u64 nr;
	u32 shift;			/* bytenr and num_bytes in units of 1 << shift */
	bool with_seq;			/* seq packed too; else a ref's seq is its index */
	struct packed_ref last;		/* the ref appended last */
	struct packed_refs_step last_step;	/* and its step */
	u64 cached;			/* block decoded in cache[], + 1; 0: none */
	struct packed_ref cache[PACKED_REFS_BLOCK];
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
	return (l->states[index / 4] >> (2 * (index % 4))) & 3;
}

static inline void packed_refs_set_state(struct packed_refs *l, u64 index, u32 state)
{
	u8 *b = &l->states[index / 4];
	u32 shift = 2 * (index % 4);

	*b = (u8)((*b & ~(3U << shift)) | ((state & 3) << shift));
}

/* Reading the list in order, without touching its decoded block */
struct packed_refs_cursor {
	const struct packed_refs *l;
	const u8 *p;
	u64 index;			/* of the ref in cur */
	struct packed_ref cur;
	struct packed_refs_step step;	/* cur's */
};

/* At the first ref: false when the list is empty */
bool packed_refs_first(const struct packed_refs *l, struct packed_refs_cursor *c);
/* On to the next ref: false past the last */
bool packed_refs_next(struct packed_refs_cursor *c);

#endif
