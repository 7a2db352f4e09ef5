// SPDX-License-Identifier: GPL-2.0
/*
 * The error record and the warnings list, after fs/btrfs/messages.c:
 * where the kernel logs, this keeps one line per message for cmds/.
 */
#include <stdarg.h>
#include <stdio.h>
#include "kernel-shared/fs.h"
#include "kernel-shared/messages.h"

/*
 * An error is one line, whatever it quotes: file names from the image or a
 * --file argument may hold a newline or a terminal escape, shown as '?'.
 */
static void one_line(char *msg)
{
	for (; *msg; msg++)
		if ((unsigned char)*msg < 0x20 || *msg == 0x7f)
			*msg = '?';
}

static int record_error(struct btrfs_error *rec, int err,
			const struct btrfs_error_loc *loc, const char *fmt, va_list ap)
{
	/* the first error is the cause; what follows is its consequence */
	if (rec->err)
		return err;
	rec->err = err;
	rec->loc = loc ? *loc : BTRFS_ERROR_LOC_NONE;
	snprintf(rec->device, sizeof(rec->device), "%s",
		 rec->loc.device ? rec->loc.device : "");
	rec->loc.device = NULL;
	vsnprintf(rec->msg, sizeof(rec->msg), fmt, ap);
	one_line(rec->msg);
	return err;
}

const struct btrfs_error_loc *btrfs_loc_field(struct btrfs_error_loc *loc,
					      const char *field)
{
	loc->field = field;
	return loc;
}

const struct btrfs_error_loc *btrfs_loc_found(struct btrfs_error_loc *loc,
					      const char *field, u64 found)
{
	loc->field = field;
	loc->has_found = true;
	loc->found = found;
	return loc;
}

const struct btrfs_error_loc *btrfs_loc_value(struct btrfs_error_loc *loc,
					      const char *field, u64 found,
					      u64 expected)
{
	btrfs_loc_found(loc, field, found);
	loc->has_values = true;
	loc->expected = expected;
	return loc;
}

int btrfs_record_error(struct btrfs_error *rec, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record_error(rec, err, NULL, fmt, ap);
	va_end(ap);
	return err;
}

int btrfs_record_error_at(struct btrfs_error *rec, int err,
			  const struct btrfs_error_loc *loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record_error(rec, err, loc, fmt, ap);
	va_end(ap);
	return err;
}

int btrfs_fs_error(struct btrfs_fs_info *fs_info, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record_error(&fs_info->err, err, NULL, fmt, ap);
	va_end(ap);
	return err;
}

int btrfs_fs_error_at(struct btrfs_fs_info *fs_info, int err,
		      const struct btrfs_error_loc *loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record_error(&fs_info->err, err, loc, fmt, ap);
	va_end(ap);
	return err;
}

static void set_note(struct btrfs_note *note, enum btrfs_note_kind kind,
		     size_t len, const char *fmt, va_list ap)
{
	note->kind = kind;
	vsnprintf(note->msg, len, fmt, ap);
	one_line(note->msg);
}

void btrfs_fs_warn(struct btrfs_fs_info *fs_info, const char *fmt, ...)
{
	struct btrfs_notes *notes = &fs_info->notes;
	va_list ap;

	if (notes->nr_warnings++ >= BTRFS_MAX_WARNINGS)
		return;
	/* one slot is the bad-copy note's: a warning always finds room */
	va_start(ap, fmt);
	set_note(&notes->list[notes->nr++], BTRFS_NOTE_WARNING,
		 BTRFS_WARNING_LEN, fmt, ap);
	va_end(ap);
}

const struct btrfs_note *btrfs_find_note(const struct btrfs_notes *notes,
					 enum btrfs_note_kind kind)
{
	u32 i;

	for (i = 0; i < notes->nr; i++)
		if (notes->list[i].kind == kind)
			return &notes->list[i];
	return NULL;
}

void btrfs_fs_note_bad_copy(struct btrfs_fs_info *fs_info, const char *fmt, ...)
{
	struct btrfs_notes *notes = &fs_info->notes;
	struct btrfs_note *note;
	va_list ap;

	/* one line for the user: the latest bad block read says enough */
	note = (struct btrfs_note *)btrfs_find_note(notes, BTRFS_NOTE_BAD_COPY);
	if (!note)
		note = &notes->list[notes->nr++];
	va_start(ap, fmt);
	set_note(note, BTRFS_NOTE_BAD_COPY, BTRFS_NOTE_LEN, fmt, ap);
	va_end(ap);
}

void btrfs_clear_notes(struct btrfs_notes *notes)
{
	notes->nr = 0;
	notes->nr_warnings = 0;
}

const char *btrfs_root_name(u64 objectid)
{
	switch (objectid) {
	case BTRFS_ROOT_TREE_OBJECTID: return "root tree";
	case BTRFS_EXTENT_TREE_OBJECTID: return "extent tree";
	case BTRFS_CHUNK_TREE_OBJECTID: return "chunk tree";
	case BTRFS_DEV_TREE_OBJECTID: return "dev tree";
	case BTRFS_FS_TREE_OBJECTID: return "fs tree";
	case BTRFS_CSUM_TREE_OBJECTID: return "csum tree";
	case BTRFS_QUOTA_TREE_OBJECTID: return "quota tree";
	case BTRFS_UUID_TREE_OBJECTID: return "uuid tree";
	case BTRFS_FREE_SPACE_TREE_OBJECTID: return "free space tree";
	case BTRFS_BLOCK_GROUP_TREE_OBJECTID: return "block group tree";
	case BTRFS_RAID_STRIPE_TREE_OBJECTID: return "raid stripe tree";
	default: return "tree";
	}
}
