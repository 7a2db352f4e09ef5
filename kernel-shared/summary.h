/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The summary at the top of inspect: what is really free per space info,
 * what the unallocated space can still become, the metadata over-commit
 * room, the preemptive-flush threshold, the mount time and how far each
 * type can grow before ENOSPC (the forecast), each with a
 * level (ok, tight, critical) and the rule that gave it.  Every figure is
 * taken from the report, so live mode's summary shows live figures.  The
 * rules are Documentation/formulas.md section 19.  No kernel twin.
 */
#ifndef BTRFS_SPACE_SUMMARY_H
#define BTRFS_SPACE_SUMMARY_H

#include "kernel-shared/backref.h"
#include "kernel-shared/forecast.h"
#include "kernel-shared/mount-cost.h"
#include "kernel-shared/qgroup.h"
#include "kernel-shared/report.h"

enum summary_level {
	SUMMARY_OK,
	SUMMARY_TIGHT,
	SUMMARY_CRITICAL,
};

struct summary_space {
	const char *name;		/* data, metadata, mixed, system */
	u64 profile;			/* allocation profile (bits) */
	u64 total_bytes;
	u64 held;			/* used + reserved + pinned + readonly + zone + may_use */
	u64 free;			/* total_bytes - held, 0 if negative */
	u64 chunk_size;			/* logical size of a full new chunk */
	u64 new_chunks;			/* chunks the unallocated space can make */
	u64 new_chunk_bytes;		/* their logical bytes */
	enum summary_level level;
	const char *rule;
	/* the forecast's fill of this type (section 19.2) */
	bool headroom_present;
	bool flags_metadata;		/* a metadata (or mixed) space info */
	u64 headroom;			/* writable_bytes */
	u64 headroom_rsv;		/* metadata: held by the global reserve */
	u64 headroom_existing;		/* of it: in the existing block groups */
	u64 headroom_new;		/* of it: in new chunks */
	u64 capacity;			/* held + headroom: what the type holds when full */
	u64 size_share;			/* a tenth of the devices' bytes in the type's copies (19.2) */
	u64 reservation;		/* metadata: one transaction's reservation (19.2) */
	u64 critical_bound;		/* headroom below it: critical (19.2) */
	u64 tight_bound;		/* headroom below it: tight */
	enum summary_level headroom_level;
	const char *headroom_rule;
};

/* A tight or critical line of the summary, worst first (section 19.3) */
enum summary_finding_kind {
	SUMMARY_FIND_SPACE,		/* a space info's headroom: space[index] */
	SUMMARY_FIND_MOUNT,		/* the mount time */
};

struct summary_finding {
	enum summary_level level;
	enum summary_finding_kind kind;
	int space;			/* index into spaces[] for SUMMARY_FIND_SPACE */
};

/* Per device: the forecast's space no chunk of a fill can use (21.4) */
struct summary_dead {
	u64 devid;
	u64 hard;			/* no chunk of any profile */
	u64 soft_data;			/* the data fill leaves it: metadata's profile only */
	u64 soft_metadata;		/* the metadata fill leaves it: data's profile only */
};

/* A remedy checked by a model before it is printed (section 19.6) */
enum summary_remedy_kind {
	SUMMARY_REMEDY_BALANCE,		/* btrfs balance start -dusage=N */
	SUMMARY_REMEDY_BG_TREE,		/* btrfstune --convert-to-block-group-tree */
	SUMMARY_REMEDY_DEVICE_ADD,	/* btrfs device add, a device of add_size */
	SUMMARY_REMEDY_DELETE_DATA,	/* delete the data of the least used data block group */
	SUMMARY_REMEDY_CONVERT,		/* btrfs balance start -dconvert= / -mconvert= */
	SUMMARY_REMEDY_RESIZE,		/* btrfs filesystem resize DEVID:max */
	SUMMARY_REMEDY_REPLACE,		/* btrfs replace start DEVID, then resize DEVID:max */
	SUMMARY_REMEDY_NODISCARD,	/* a fresh mount with nodiscard: the cleaner deletes
					   the empty block groups discard=async keeps */
};

/* A remedy's finding when it answers no level: dead space, a profile */
#define SUMMARY_FINDING_DEAD		(-1)
#define SUMMARY_FINDING_PROFILE		(-2)
#define SUMMARY_FINDING_SLACK		(-3)	/* a device larger than the filesystem uses */
#define SUMMARY_FINDING_MIXED		(-4)	/* block groups of a profile new chunks do not get */

struct summary_remedy {
	enum summary_remedy_kind kind;
	int finding;			/* index into findings[] */
	u64 usage;			/* balance: N of -dusage=N; soft convert: usage=N, 0 none */
	u32 usage_min;			/* balance: M of -musage=M..N, 0 for -musage=N */
	bool mixed_filters;		/* balance, convert: mixed block groups, typed
					   with -d and -m alike (btrfs_balance()) */
	u32 nr_selected;		/* balance: block groups relocated; nodiscard:
					   the empty ones the cleaner deletes */
	u32 nr_failed;			/* balance: block groups that ended -ENOSPC */
	u64 moved_bytes;		/* balance: their used bytes; delete: the group's;
					   nodiscard: the empty groups' length */
	bool can_start;			/* balance: a chunk of the target can be made */
	bool enough;			/* balance: gives back the room needed */
	u64 room_needed;		/* balance: raw bytes of one full chunk of the type */
	u64 room_gained;		/* balance: Σ unallocated after − now */
	u64 *unallocated_after;		/* balance: per device, report->devices order */
	u64 bg_start;			/* delete data: the block group emptied */
	struct btrfs_bg_owners *owners;	/* delete data: the files holding its data */
	u64 add_size;			/* device add: the new device's size */
	u32 add_count;			/* device add: how many such devices */
	u64 new_bytes;			/* device add, delete: the type's bytes in new chunks */
	u32 new_chunks;			/* device add, delete: how many */
	u64 dead_devid;			/* device add for dead space: the device */
	u64 dead_before;		/* its dead bytes now and after */
	u64 dead_after;
	u64 reads_now;			/* bg tree: mount reads now and after */
	u64 reads_after;
	double hdd_seconds_after;
	u64 type;			/* convert: the type converted (DATA or METADATA);
					   resize, replace, dead space: the type filled */
	u64 from_profile;		/* convert: its profile now and the target */
	u64 to_profile;
	bool completes;			/* balance, convert: every block group relocated */
	bool exact;			/* convert: every input of the kernel's choices known */
	u64 *may_differ;		/* convert, not exact: per device, how far
					   unallocated_after may be off (21.8) */
	u64 writable_before;		/* convert, resize, replace, dead space add:
					   the type's headroom now */
	u64 writable_after;		/* and after, the allocator replayed */
	bool force;			/* convert: -f (metadata redundancy reduced) */
	bool soft;			/* convert: ,soft: the groups of other profiles only */
	u32 other_groups;		/* convert, soft: the groups of other profiles, */
	u64 other_used;			/* and their used bytes (usage filters select some) */
	bool whole_completes;		/* convert, usage=N: the conversion of all completes
					   (then it left the type critical) */
	u64 devid;			/* resize, replace: the device changed */
	u64 old_size;			/* its size now (DEV_ITEM total_bytes) */
	u64 new_size;			/* its size after (resize max, the new device's) */
};

/* The first MiB of a device, never allocated (BTRFS_DEVICE_RANGE_RESERVED) */
#define SUMMARY_DEVICE_RESERVED	(1ULL << 20)

#define SUMMARY_MAX_FINDINGS	(BTRFS_NR_SPACE_INFOS + 1)
#define SUMMARY_MAX_REMEDIES	(6 * SUMMARY_MAX_FINDINGS + 12)

struct summary_device {
	u64 devid;
	u64 unallocated;
	bool counted;			/* writeable: chunks can be made on it */
};

struct space_summary {
	enum summary_level level;	/* the worst of the lines below */
	struct summary_space spaces[BTRFS_NR_SPACE_INFOS];
	int nr_spaces;

	struct summary_finding findings[SUMMARY_MAX_FINDINGS];
	int nr_findings;
	struct summary_remedy remedies[SUMMARY_MAX_REMEDIES];	/* finding < 0: SUMMARY_FINDING_* */
	int nr_remedies;

	struct summary_device *devices;
	struct summary_dead *dead;	/* per device, report->devices order */
	u32 nr_devices;
	u64 unallocated;		/* over the counted devices */

	u64 overcommit_room;		/* calc_available_free_space(FLUSH_ALL) */

	u64 bytes_may_use;
	bool can_flush;
	u64 flush_from;			/* min bytes_may_use that flushes */
	u64 flush_headroom;		/* flush_from - bytes_may_use, 0 if flushing */
	bool flushing;

	bool mount_available;
	u64 mount_reads;
	double mount_hdd_seconds;
	double mount_ssd_seconds;
	enum summary_level mount_level;
	const char *mount_rule;

	/*
	 * Deleted subvolumes the cleaner has not dropped yet (root-tree.c):
	 * the extents only they hold are still in every figure above
	 */
	bool deleted_subvolumes_known;
	u64 deleted_subvolumes;

	/*
	 * Quotas (qgroup.c): a limited qgroup fails writes with EDQUOT
	 * before the headroom above is used up (formulas.md 19.9)
	 */
	bool quota_known;
	struct btrfs_quota_state quota;

	struct btrfs_forecast forecast;	/* the allocator replayed (forecast.c) */
};

/* The mount time thresholds of the rule, seconds on HDD */
#define SUMMARY_MOUNT_TIGHT_SECONDS	10.0
#define SUMMARY_MOUNT_CRITICAL_SECONDS	90.0

const char *btrfs_summary_level_name(enum summary_level level);
/* "ok", "tight", "critical" to the level; -EINVAL for another word */
int btrfs_summary_level_parse(const char *name, enum summary_level *level);
/*
 * Section 19.2's rules, pure: the level of a type from its headroom,
 * chunk_size, capacity, size_share and reservation (bounds filled in),
 * and the system type's from its free bytes and new chunks
 */
void btrfs_summary_rate_headroom(struct summary_space *s);
void btrfs_summary_rate_system(struct summary_space *s, u32 nodesize);
int btrfs_build_summary(const struct space_report *report,
			const struct btrfs_mount_estimate *est,
			struct space_summary *sum);
void btrfs_free_summary(struct space_summary *sum);
/* Section 19.6: the remedies of the findings, each run through its model */
int btrfs_summary_remedies(const struct space_report *report,
			   const struct btrfs_mount_estimate *est,
			   struct space_summary *sum);

#endif
