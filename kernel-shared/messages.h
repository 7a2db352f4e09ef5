/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Errors and warnings as records, after fs/btrfs/messages.h: the kernel
 * logs btrfs_err()/btrfs_warn() lines, here they are kept for cmds/ to
 * print.  Nothing here prints.
 */
#ifndef BTRFS_SPACE_KERNEL_MESSAGES_H
#define BTRFS_SPACE_KERNEL_MESSAGES_H

#include <stdbool.h>
#include "common/types.h"
#include "kernel-shared/uapi/btrfs_tree.h"

struct btrfs_fs_info;

/*
 * Where an error was found, as far as the code that found it knows:
 * 0 (slot and mirror -1, device NULL) for what it does not.
 */
struct btrfs_error_loc {
	const char *device;		/* the device read: valid during the check only */
	u64 logical;			/* tree block or range start */
	u64 physical;
	u64 tree;			/* owner objectid */
	int slot;
	int mirror;			/* copy number, from 0 */
	bool has_key;
	struct btrfs_key key;
	/*
	 * The on-disk field a check read (NULL for none), the value found
	 * (has_found), and the one expected where the check wants one value
	 * (has_values: found and expected both).
	 */
	const char *field;
	bool has_found;
	bool has_values;
	u64 found;
	u64 expected;
};

/*
 * The first error found: the -errno, where it was, and @msg, the one
 * line cmds/ prints.
 */
struct btrfs_error {
	int err;
	char msg[512];
	/* loc.device is copied to device (and cleared): paths outlive no check */
	char device[256];
	struct btrfs_error_loc loc;
};

#define BTRFS_ERROR_LOC_NONE	((struct btrfs_error_loc){ .slot = -1, .mirror = -1 })

/*
 * Builders for the checks outside the tree checker: @loc where the
 * caller filled what it knows, plus the field and the value found (and
 * the one expected).  Return @loc.
 */
const struct btrfs_error_loc *btrfs_loc_field(struct btrfs_error_loc *loc,
					      const char *field);
const struct btrfs_error_loc *btrfs_loc_found(struct btrfs_error_loc *loc,
					      const char *field, u64 found);
const struct btrfs_error_loc *btrfs_loc_value(struct btrfs_error_loc *loc,
					      const char *field, u64 found,
					      u64 expected);

/*
 * Records @err with its message in @rec, unless @rec already holds an
 * error (the first is the cause, what follows its consequence); returns
 * @err.  The read path takes its record as an argument (a search in its
 * struct btrfs_path), as the kernel's reads take their
 * btrfs_tree_parent_check: the filesystem's (fs_info->err) for the cause
 * of a failure, or the caller's own for a copy that another copy may
 * replace, a walk whose verdict is weighed before it is kept, a read that
 * will be made again the way that reports (a read-ahead, a batch's first
 * copy).
 */
__attribute__ ((cold, format (printf, 3, 4)))
int btrfs_record_error(struct btrfs_error *rec, int err, const char *fmt, ...);
/* The same, with where it was found */
__attribute__ ((cold, format (printf, 4, 5)))
int btrfs_record_error_at(struct btrfs_error *rec, int err,
			  const struct btrfs_error_loc *loc, const char *fmt, ...);
/* btrfs_record_error() into the filesystem's record, fs_info->err */
__attribute__ ((cold, format (printf, 3, 4)))
int btrfs_fs_error(struct btrfs_fs_info *fs_info, int err, const char *fmt, ...);
/* The same, with where it was found */
__attribute__ ((cold, format (printf, 4, 5)))
int btrfs_fs_error_at(struct btrfs_fs_info *fs_info, int err,
		      const struct btrfs_error_loc *loc, const char *fmt, ...);
/*
 * What the user is told besides the error, in the order found.  A note
 * is one line; a warning keeps the kernel's btrfs_warn() line.
 */
enum btrfs_note_kind {
	/* a bad copy of a tree block that another copy replaced */
	BTRFS_NOTE_BAD_COPY,
	/* what the kernel logs as a warning and still mounts */
	BTRFS_NOTE_WARNING,
};

/* Warnings kept for the user; more are counted, not kept */
#define BTRFS_MAX_WARNINGS	8
/* The warnings and one bad-copy note */
#define BTRFS_MAX_NOTES		(BTRFS_MAX_WARNINGS + 1)
#define BTRFS_NOTE_LEN		768
#define BTRFS_WARNING_LEN	256

struct btrfs_note {
	enum btrfs_note_kind kind;
	char msg[BTRFS_NOTE_LEN];
};

struct btrfs_notes {
	struct btrfs_note list[BTRFS_MAX_NOTES];
	u32 nr;
	u32 nr_warnings;		/* kept or not */
};

/* btrfs_warn(): kept one line each, in order; past the last slot only counted */
__attribute__ ((format (printf, 2, 3)))
void btrfs_fs_warn(struct btrfs_fs_info *fs_info, const char *fmt, ...);
/* A bad copy another one replaced: the latest replaces the note before it */
__attribute__ ((format (printf, 2, 3)))
void btrfs_fs_note_bad_copy(struct btrfs_fs_info *fs_info, const char *fmt, ...);
/* The note of @kind, NULL if none */
const struct btrfs_note *btrfs_find_note(const struct btrfs_notes *notes,
					 enum btrfs_note_kind kind);
void btrfs_clear_notes(struct btrfs_notes *notes);

/* "extent tree", "chunk tree", ...: how messages name a tree */
const char *btrfs_root_name(u64 objectid);

#endif
