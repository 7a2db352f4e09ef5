// SPDX-License-Identifier: GPL-2.0
/*
 * qgroup.c: the quota limits that stop writes before ENOSPC.
 *
 * Mirrors what btrfs_read_qgroup_config() (fs/btrfs/qgroup.c) reads at
 * mount: the status item (ON, INCONSISTENT, SIMPLE_MODE), one INFO item
 * (rfer, excl) and at most one LIMIT item (flags, max_rfer, max_excl) per
 * qgroup, key (0, TYPE, qgroupid).  qgroup_check_limits() fails a
 * reservation with -EDQUOT once rfer (excl) plus the reservations held plus
 * the new bytes pass max_rfer (max_excl) of the qgroup or any parent: so a
 * limited qgroup can take max - counted more bytes from the last commit,
 * whatever the space infos still have.  Behaviour reproduced: kernels
 * 5.x-6.18 (the items unchanged; simple quotas, 6.7, count the same way).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "kernel-shared/qgroup.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/fs.h"
#include "kernel-shared/messages.h"
#include "kernel-shared/tree-block.h"

/*
 * The count of qgroup @id, its INFO item searched: every INFO key
 * (0, 242, id) sorts before every LIMIT key (0, 244, id), so the item
 * before a limit is another qgroup's.  One search per limit, on leaves the
 * pass has just read: nothing kept per qgroup.  1: no INFO item.  The
 * item's size was checked when the pass read it.
 */
static int find_count(struct btrfs_fs_info *fs_info, const struct btrfs_root_ref *root,
		      u64 qgroupid, u64 *rfer, u64 *excl)
{
	struct btrfs_error err = { 0 };
	struct btrfs_path path = { .err = &err };
	struct btrfs_key key = { 0, BTRFS_QGROUP_INFO_KEY, qgroupid };
	const void *p;
	u32 size;
	int ret;

	*rfer = *excl = 0;
	ret = btrfs_search_slot(fs_info, root, &key, &path, BTRFS_IO_OTHER);
	if (!ret) {
		p = btrfs_item_ptr(path.nodes[0], path.slots[0], &size);
		*rfer = btrfs_qgroup_info_rfer(p);
		*excl = btrfs_qgroup_info_excl(p);
	}
	btrfs_release_path(&path);
	return ret;
}

static void weigh_limit(struct btrfs_quota_state *q, u64 qgroupid, bool exclusive,
			u64 limit, u64 counted)
{
	u64 left = counted < limit ? limit - counted : 0;

	if (q->tightest.found && left >= q->tightest.left)
		return;
	q->tightest = (struct btrfs_qgroup_tightest) {
		.found = true, .qgroupid = qgroupid, .exclusive = exclusive, .limit = limit,
		.counted = counted, .left = left,
	};
}

/* What the kernel logs at mount, the first one kept for the quota line */
static void quota_note(struct btrfs_quota_state *q, const struct btrfs_tree_block *leaf,
		       int slot, const char *what)
{
	if (q->note[0])
		return;
	snprintf(q->note, sizeof(q->note), "quota tree leaf %llu slot %d: %s",
		 (unsigned long long)leaf->start, slot, what);
}

/* The fields read of an item, by where they end */
struct item_field {
	const char *name;
	u32 end;
};

static const struct item_field status_fields[] = {
	{ "version", 8 }, { "generation", 16 }, { "flags", 24 }, { NULL, 0 } };
static const struct item_field info_fields[] = {
	{ "rfer", 16 }, { "excl", 32 }, { NULL, 0 } };
static const struct item_field limit_fields[] = {
	{ "flags", 8 }, { "max_rfer", 16 }, { "max_excl", 24 }, { NULL, 0 } };

/*
 * An item that ends before a field read: the kernel's btrfs_item_ptr()
 * reads past it (no tree-checker rule for quota items), into the next
 * item or outside the leaf; what it would count cannot be told, so the
 * quota state is not given (-EUCLEAN, the item named in q->note).  Fields
 * neither read (rescan, the compressed counts, rsv_*) may be missing.
 */
static int check_size(struct btrfs_quota_state *q, const struct btrfs_tree_block *leaf,
		      int slot, const char *item, u32 size, const struct item_field *f)
{
	char what[160];

	for (; f->name; f++) {
		if (f->end <= size)
			continue;
		snprintf(what, sizeof(what),
			 "%s item of %u bytes ends before its %s field (bytes %u-%u), which the kernel reads past the item",
			 item, size, f->name, f->end - 8, f->end - 1);
		q->note[0] = 0;
		quota_note(q, leaf, slot, what);
		return -EUCLEAN;
	}
	return 0;
}

/* btrfs_read_qgroup_config()'s status item: 1 when quotas stay disabled */
static int read_status(struct btrfs_quota_state *q, const struct btrfs_fs_info *fs_info,
		       const struct btrfs_tree_block *leaf, int slot, const void *p)
{
	u64 version = btrfs_qgroup_status_version(p);
	u64 flags = btrfs_qgroup_status_flags(p);
	char what[160];

	if (version != BTRFS_QGROUP_STATUS_VERSION) {
		snprintf(what, sizeof(what),
			 "status version %llu, not %u: the kernel disables quotas at mount (\"old qgroup version, quota disabled\")",
			 (unsigned long long)version, BTRFS_QGROUP_STATUS_VERSION);
		quota_note(q, leaf, slot, what);
		q->disabled = true;
		return 1;
	}
	q->enabled = flags & BTRFS_QGROUP_STATUS_FLAG_ON;
	q->inconsistent = flags & BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT;
	q->simple = flags & BTRFS_QGROUP_STATUS_FLAG_SIMPLE_MODE;
	/* simple quotas keep no generation to compare (6.7) */
	if (!q->simple && btrfs_qgroup_status_generation(p) != fs_info->generation) {
		q->inconsistent = true;
		snprintf(what, sizeof(what),
			 "status generation %llu, not the superblock's %llu: the kernel marks quotas inconsistent at mount",
			 (unsigned long long)btrfs_qgroup_status_generation(p),
			 (unsigned long long)fs_info->generation);
		quota_note(q, leaf, slot, what);
	}
	return 0;
}

/* 1: quotas disabled by the status item (q->disabled); -EUCLEAN: an item too short */
static int read_item(struct btrfs_quota_state *q, struct btrfs_fs_info *fs_info,
		     const struct btrfs_root_ref *root, const struct btrfs_tree_block *leaf,
		     int slot, const struct btrfs_key *key)
{
	u32 size;
	const void *p = btrfs_item_ptr(leaf, slot, &size);
	u64 flags, rfer_count, excl_count;
	bool rfer, excl;
	int ret;

	if (key->type == BTRFS_QGROUP_STATUS_KEY) {
		if (check_size(q, leaf, slot, "status", size, status_fields))
			return -EUCLEAN;
		return read_status(q, fs_info, leaf, slot, p);
	}
	if (key->type == BTRFS_QGROUP_INFO_KEY) {
		if (check_size(q, leaf, slot, "info", size, info_fields))
			return -EUCLEAN;
		q->qgroups++;
		return 0;
	}
	if (key->type != BTRFS_QGROUP_LIMIT_KEY)
		return 0;
	if (check_size(q, leaf, slot, "limit", size, limit_fields))
		return -EUCLEAN;
	flags = btrfs_qgroup_limit_flags(p);
	rfer = flags & BTRFS_QGROUP_LIMIT_MAX_RFER;
	excl = flags & BTRFS_QGROUP_LIMIT_MAX_EXCL;
	ret = find_count(fs_info, root, key->offset, &rfer_count, &excl_count);
	if (ret < 0)
		return ret;
	if (ret) {
		/* the kernel creates the qgroup with nothing counted */
		q->inconsistent = true;
		quota_note(q, leaf, slot,
			   "a limit item without an info item: the kernel marks quotas inconsistent at mount (\"inconsistent qgroup config\")");
	}
	if (!rfer && !excl)
		return 0;
	q->limited++;
	if (rfer)
		weigh_limit(q, key->offset, false, btrfs_qgroup_limit_max_rfer(p), rfer_count);
	if (excl)
		weigh_limit(q, key->offset, true, btrfs_qgroup_limit_max_excl(p), excl_count);
	return 0;
}

int btrfs_read_quota_state(struct btrfs_fs_info *fs_info, struct btrfs_quota_state *q)
{
	struct btrfs_error err = { 0 };
	struct btrfs_path path = { .err = &err };
	struct btrfs_root_ref root = { 0 };
	struct btrfs_key first = { 0 };
	struct btrfs_key key;
	int ret;

	*q = (struct btrfs_quota_state) { 0 };
	ret = btrfs_read_root_item(fs_info, &err, BTRFS_QUOTA_TREE_OBJECTID, &root);
	if (ret || !root.found)
		return ret;
	ret = btrfs_search_slot(fs_info, &root, &first, &path, BTRFS_IO_OTHER);
	while (ret >= 0) {
		if (path.slots[0] >= (int)path.nodes[0]->nritems) {
			ret = btrfs_next_leaf(fs_info, &root, &path, BTRFS_IO_OTHER);
			if (ret)
				break;
			continue;
		}
		btrfs_item_key_to_cpu(path.nodes[0], path.slots[0], &key);
		ret = read_item(q, fs_info, &root, path.nodes[0], path.slots[0], &key);
		if (ret)
			break;
		path.slots[0]++;
	}
	btrfs_release_path(&path);
	if (q->disabled) {
		/* the status item's version: the kernel reads on no further */
		char note[sizeof(q->note)];

		memcpy(note, q->note, sizeof(note));
		*q = (struct btrfs_quota_state) { .disabled = true };
		memcpy(q->note, note, sizeof(note));
	}
	if (!q->enabled) {
		/* disabled quotas limit nothing */
		q->limited = 0;
		q->tightest.found = false;
	}
	/* the end of the tree (1) is no error */
	return ret < 0 ? ret : 0;
}
