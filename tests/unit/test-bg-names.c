// SPDX-License-Identifier: GPL-2.0
/*
 * volumes.c: the names of a block group's type and profile, as tables:
 *
 *   btrfs_bg_type_name()   the type as dump-tree prints it in a chunk's
 *                          type ("METADATA|DUP": METADATA), DATA+METADATA
 *                          for mixed, UNKNOWN for none
 *   btrfs_bg_progs_name()  "Type, PROFILE" as "btrfs filesystem df" and
 *                          "usage" print it: Data, Metadata, System,
 *                          Data+Metadata; profiles upper case except
 *                          "single"; cut to the buffer, always ended
 *
 * Written from btrfs-progs' output (cmds/filesystem-usage.c,
 * btrfs_group_type_str() and btrfs_group_profile_str()), not from the code.
 */
#include <stdio.h>
#include <string.h>
#include "tests/unit/unit-test.h"
#include "kernel-shared/volumes.h"

#define DATA	BTRFS_BLOCK_GROUP_DATA
#define META	BTRFS_BLOCK_GROUP_METADATA
#define SYS	BTRFS_BLOCK_GROUP_SYSTEM

struct name_row {
	u64 flags;
	size_t len;		/* the buffer */
	const char *type;
	const char *progs;
};

static const struct name_row rows[] = {
	{ DATA, 64, "DATA", "Data, single" },
	{ DATA | BTRFS_AVAIL_ALLOC_BIT_SINGLE, 64, "DATA", "Data, single" },
	{ META | BTRFS_BLOCK_GROUP_DUP, 64, "METADATA", "Metadata, DUP" },
	{ SYS | BTRFS_BLOCK_GROUP_RAID1, 64, "SYSTEM", "System, RAID1" },
	{ DATA | BTRFS_BLOCK_GROUP_RAID0, 64, "DATA", "Data, RAID0" },
	{ DATA | BTRFS_BLOCK_GROUP_RAID10, 64, "DATA", "Data, RAID10" },
	{ DATA | BTRFS_BLOCK_GROUP_RAID5, 64, "DATA", "Data, RAID5" },
	{ DATA | BTRFS_BLOCK_GROUP_RAID6, 64, "DATA", "Data, RAID6" },
	{ META | BTRFS_BLOCK_GROUP_RAID1C3, 64, "METADATA", "Metadata, RAID1C3" },
	{ META | BTRFS_BLOCK_GROUP_RAID1C4, 64, "METADATA", "Metadata, RAID1C4" },
	{ DATA | META, 64, "DATA+METADATA", "Data+Metadata, single" },
	{ DATA | META | BTRFS_BLOCK_GROUP_DUP, 64, "DATA+METADATA", "Data+Metadata, DUP" },
	{ 0, 64, "UNKNOWN", "unknown, single" },
	/* buffers too small: cut, and ended */
	{ META | BTRFS_BLOCK_GROUP_RAID1C3, 14, "METADATA", "Metadata, RAI" },
	{ DATA | BTRFS_BLOCK_GROUP_RAID1, 8, "DATA", "Data, R" },
	{ DATA | BTRFS_BLOCK_GROUP_RAID1, 4, "DATA", "Dat" },
	{ DATA | BTRFS_BLOCK_GROUP_RAID1, 1, "DATA", "" },
};

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct name_row *r = &rows[i];
		char buf[64];

		memset(buf, 'x', sizeof(buf));
		btrfs_bg_progs_name(r->flags, buf, r->len);
		check(!strcmp(btrfs_bg_type_name(r->flags), r->type), "0x%llx: type %s, want %s",
		      (unsigned long long)r->flags, btrfs_bg_type_name(r->flags), r->type);
		check(!strcmp(buf, r->progs), "0x%llx in %zu bytes: \"%.*s\", want \"%s\"",
		      (unsigned long long)r->flags, r->len, (int)r->len, buf, r->progs);
	}
	return unit_failures ? 1 : 0;
}
