/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which variant of each formula a kernel version uses.  The differences
 * are data here, keyed by the version that brought each change, so the
 * formula files stay single functions with small branches.
 */
#ifndef BTRFS_SPACE_KERNEL_VERSION_H
#define BTRFS_SPACE_KERNEL_VERSION_H

#include <stdbool.h>
#include "common/types.h"

#define KERNEL_VERSION(a, b, c)	(((a) << 16) | ((b) << 8) | ((c) > 255 ? 255 : (c)))

/*
 * The kernels the model knows, each as a number and as the text the help
 * and the option errors show (tests/unit/test-kernel-version checks that
 * the two agree).  5.12 is the oldest: the preemptive-flushing predicate
 * is modelled from there on (formulas.md section 2).
 */
#define BTRFS_MIN_KERNEL		KERNEL_VERSION(5, 12, 0)
#define BTRFS_MIN_KERNEL_STR		"5.12"
#define BTRFS_DEFAULT_KERNEL		KERNEL_VERSION(6, 18, 0)
#define BTRFS_DEFAULT_KERNEL_STR	"6.18"
/*
 * The newest release modelled: every 6.18.y; a later release is refused
 * until its space code has been read (kernel-version.c says what was).
 */
#define BTRFS_MAX_KERNEL		KERNEL_VERSION(6, 18, 255)
#define BTRFS_MAX_KERNEL_STR		"6.18"
/* What --kernel takes, for the usage texts and the option errors */
#define BTRFS_KERNEL_RANGE_STR		"a kernel version from " BTRFS_MIN_KERNEL_STR \
					" to " BTRFS_MAX_KERNEL_STR ".y (the releases modelled)"
/* The kernels global-rsv, overcommit and preempt show side by side */
#define BTRFS_COMPARE_KERNELS_STR	"5.12, 5.15, 6.1, 6.1.112, 6.6, 6.18"
extern const char * const btrfs_compare_kernels[];

/*
 * The kernels replay re-evaluates a trace with when no --kernel is given
 * (tests/unit/test-kernel-version checks the text against the list), and
 * the kernel a trace is taken to come from when its marker names none.
 */
#define BTRFS_REPLAY_KERNELS_STR	"5.12, 5.15, 6.18"
#define BTRFS_NR_REPLAY_KERNELS		3
extern const u32 btrfs_replay_kernels[BTRFS_NR_REPLAY_KERNELS];
#define BTRFS_REPLAY_RECORDED_DEFAULT	BTRFS_DEFAULT_KERNEL

/*
 * The delayed-refs reserve's callers and bounds were read in 6.18: a trace
 * recorded by an older kernel is replayed without checking them.
 */
#define BTRFS_DELAYED_REFS_BOUNDS_READ	KERNEL_VERSION(6, 18, 0)

/*
 * The kernel's automatic reclaim (formulas.md section 21.14):
 * bg_reclaim_threshold per space info since v5.19 ("btrfs: make the
 * bg_reclaim_threshold per-space info"), dynamic and periodic reclaim
 * since v6.11 ("btrfs: dynamic block_group reclaim threshold",
 * "btrfs: periodic block_group reclaim").
 */
#define BTRFS_RECLAIM_THRESHOLD_KERNEL	KERNEL_VERSION(5, 19, 0)
#define BTRFS_RECLAIM_THRESHOLD_KERNEL_STR	"5.19"
#define BTRFS_DYNAMIC_RECLAIM_KERNEL	KERNEL_VERSION(6, 11, 0)
#define BTRFS_DYNAMIC_RECLAIM_KERNEL_STR	"6.11"

/*
 * "btrfs: auto enable discard=async when possible" (v6.2):
 * before it, a mount without a discard option does not discard.
 */
#define BTRFS_DISCARD_ASYNC_DEFAULT	KERNEL_VERSION(6, 2, 0)

/*
 * "btrfs: stop doing excessive space reservation for csum deletion": the
 * csum-delete figures "before" it are labelled with this release.
 */
#define BTRFS_CSUM_DELETE_CHANGE	KERNEL_VERSION(6, 7, 0)
#define BTRFS_CSUM_DELETE_CHANGE_STR	"v6.7"

struct btrfs_kernel_model {
	u32 version;
	/* global reserve floor: insert(roots + 6) + delayed_ref_bytes(6) (v6.4, 6.1.112) */
	bool global_rsv_unlink_floor;
	/*
	 * v5.17: the free space tree counts in the global reserve (its root
	 * and min_items) and doubles the delayed-ref charge
	 */
	bool free_space_tree_accounting;
	/* csum deletion charged as calc_metadata_size per leaf (v6.7) */
	bool csum_delete_metadata_size;
	bool csum_delete_unconfirmed;
	/*
	 * start_transaction(): insert(n) + delayed_ref_bytes(n) at once
	 * (btrfs_reserve_trans_metadata(), 6.7 believed); before: insert(n),
	 * doubled while the delayed refs reserve is not full
	 */
	bool trans_delayed_ref_bytes;
	/* calc_available_free_space subtracts the data chunk size (v6.9), zoned: zone size, rounded (6.10, 6.9.y) */
	bool overcommit_data_chunk;
	/* preemptive flushing: 2021 series (v5.14) and 90 % / majority-global rsv (v5.15) */
	bool preempt_global_rsv_terms;
	u32 preempt_full_percent;
	bool preempt_majority_global;
	/* zoned metadata over-commit: off (6.0-6.1), off with active-zone limit (6.2-6.5), on */
	enum {
		ZONED_OVERCOMMIT_ALWAYS,
		ZONED_OVERCOMMIT_NEVER,
		ZONED_OVERCOMMIT_UNLESS_ACTIVE_ZONES,
	} zoned_overcommit;
	bool zoned_unconfirmed;
};

int btrfs_parse_kernel_version(const char *str, u32 *version);
int btrfs_parse_model_kernel(const char *str, u32 *version);
int btrfs_kernel_model_unconfirmed(const struct btrfs_kernel_model *model,
				   const char **notes, int max);
void btrfs_kernel_model(u32 version, struct btrfs_kernel_model *model);
/*
 * The two sides of the v5.15 preemptive-flushing change (the fields
 * preempt_full_percent and preempt_majority_global): the oldest model
 * (5.12) and 5.15, whose difference replay counts as "only 5.12".
 */
void btrfs_preempt_change_models(struct btrfs_kernel_model *before,
				 struct btrfs_kernel_model *after);
const char *btrfs_kernel_version_str(u32 version, char *buf, int len);

/*
 * The chunk allocator's limits by version (volumes.c, the allocator
 * replayed): a block of its own, beside the reservation model.
 */
struct btrfs_alloc_model {
	bool space_info_chunk_size;	/* v6.0: max_chunk_size = space info chunk_size */
	bool stripe_size_1g_cap;	/* v6.0: stripe_size capped at 1 GiB */
	u64 data_max_chunk_size;	/* before v6.0: BTRFS_MAX_DATA_CHUNK_SIZE */
	u64 system_max_stripe_size;	/* before v6.0 */
	u64 system_max_chunk_size;	/* 32 MiB since v6.0, 2 * 32 MiB before */
	bool size_classes;		/* v6.3: data block groups by extent size class */
	bool size_class_reset;		/* 5870ec7c8fe5: an emptied group loses its class */
};

void btrfs_alloc_model(u32 version, struct btrfs_alloc_model *m);

#endif
