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
#include "kernel-shared/qgroup.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/fs.h"
#include "kernel-shared/messages.h"
#include "kernel-shared/tree-block.h"

/* One qgroup's counts, from its INFO item */
struct qgroup_count {
	u64 qgroupid;
	u64 rfer;
	u64 excl;
};

/*
 * The keys are (0, TYPE, qgroupid): every INFO item (242) sorts before
 * every LIMIT item (244), each run by qgroup id.  A second path walks the
 * INFO items in step with the LIMIT items, so each limit meets its own
 * qgroup's counts with nothing kept per qgroup (the last INFO item read
 * belongs to the highest qgroup: with quotas on, 0/5 and one 0/N per
 * subvolume, so a limit on any other subvolume would meet no counts).
 */
struct info_cursor {
	struct btrfs_fs_info *fs_info;
	struct btrfs_root_ref *root;
	struct btrfs_path path;
	bool started;
	bool done;		/* past the last INFO item, or a read failed */
	struct qgroup_count cur;
};

static void info_cursor_step(struct info_cursor *c)
{
	const struct btrfs_tree_block *leaf;
	struct btrfs_key key;
	u32 size;
	const void *p;

	if (!c->started) {
		struct btrfs_key first = { 0, BTRFS_QGROUP_INFO_KEY, 0 };

		c->started = true;
		if (btrfs_search_slot(c->fs_info, c->root, &first, &c->path, BTRFS_IO_OTHER) < 0)
			goto done;
	} else {
		c->path.slots[0]++;
	}
	while (c->path.slots[0] >= (int)c->path.nodes[0]->nritems)
		if (btrfs_next_leaf(c->fs_info, c->root, &c->path, BTRFS_IO_OTHER))
			goto done;
	leaf = c->path.nodes[0];
	btrfs_item_key_to_cpu(leaf, c->path.slots[0], &key);
	p = btrfs_item_ptr(leaf, c->path.slots[0], &size);
	if (key.type != BTRFS_QGROUP_INFO_KEY)
		goto done;
	c->cur = (struct qgroup_count) { key.offset, 0, 0 };
	if (size >= sizeof(struct btrfs_qgroup_info_item)) {
		c->cur.rfer = btrfs_qgroup_info_rfer(p);
		c->cur.excl = btrfs_qgroup_info_excl(p);
	}
	return;
done:
	c->done = true;
}

/* The counts of @qgroupid (0 without an INFO item); ids asked in order */
static struct qgroup_count info_counts(struct info_cursor *c, u64 qgroupid)
{
	while (!c->done && (!c->started || c->cur.qgroupid < qgroupid))
		info_cursor_step(c);
	if (!c->done && c->cur.qgroupid == qgroupid)
		return c->cur;
	return (struct qgroup_count) { qgroupid, 0, 0 };
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

static void read_item(struct btrfs_quota_state *q, const struct btrfs_tree_block *leaf,
		      int slot, const struct btrfs_key *key, struct info_cursor *info)
{
	u32 size;
	const void *p = btrfs_item_ptr(leaf, slot, &size);

	if (key->type == BTRFS_QGROUP_STATUS_KEY &&
	    size >= sizeof(struct btrfs_qgroup_status_item)) {
		u64 flags = btrfs_qgroup_status_flags(p);

		q->enabled = flags & BTRFS_QGROUP_STATUS_FLAG_ON;
		q->inconsistent = flags & BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT;
		q->simple = flags & BTRFS_QGROUP_STATUS_FLAG_SIMPLE_MODE;
	} else if (key->type == BTRFS_QGROUP_INFO_KEY &&
		   size >= sizeof(struct btrfs_qgroup_info_item)) {
		q->qgroups++;
	} else if (key->type == BTRFS_QGROUP_LIMIT_KEY &&
		   size >= sizeof(struct btrfs_qgroup_limit_item)) {
		u64 flags = btrfs_qgroup_limit_flags(p);
		bool rfer = flags & BTRFS_QGROUP_LIMIT_MAX_RFER;
		bool excl = flags & BTRFS_QGROUP_LIMIT_MAX_EXCL;
		struct qgroup_count c;

		if (!rfer && !excl)
			return;
		c = info_counts(info, key->offset);
		q->limited++;
		if (rfer)
			weigh_limit(q, key->offset, false, btrfs_qgroup_limit_max_rfer(p), c.rfer);
		if (excl)
			weigh_limit(q, key->offset, true, btrfs_qgroup_limit_max_excl(p), c.excl);
	}
}

int btrfs_read_quota_state(struct btrfs_fs_info *fs_info, struct btrfs_quota_state *q)
{
	struct btrfs_error err = { 0 };
	struct btrfs_path path = { .err = &err };
	struct btrfs_root_ref root = { 0 };
	struct btrfs_key first = { 0 };
	struct info_cursor info = { .fs_info = fs_info, .root = &root, .path = { .err = &err } };
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
		read_item(q, path.nodes[0], path.slots[0], &key, &info);
		path.slots[0]++;
	}
	btrfs_release_path(&path);
	if (info.started)
		btrfs_release_path(&info.path);
	if (!q->enabled) {
		/* disabled quotas limit nothing */
		q->limited = 0;
		q->tightest.found = false;
	}
	/* the end of the tree (1) is no error */
	return ret < 0 ? ret : 0;
}
