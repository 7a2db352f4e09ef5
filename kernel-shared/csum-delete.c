// SPDX-License-Identifier: GPL-2.0
/*
 * The csum-delete report: the delayed-ref reservation for deleting data,
 * for the chosen kernel (its csum params, delayed-ref.c), in one of three
 * ways.  N extents of one size: btrfs_csum_delete_add().  One file: its
 * extents as dropping them queues them (btrfs_count_file_drop()) and its
 * whole deletion in one transaction (btrfs_model_deletion()).  The
 * costliest files of a subvolume: one scan of the subvolume tree
 * (btrfs_scan_subvol_drops()) kept as a bounded min-heap on cost, then
 * sorted and given their paths.  Own file, no kernel twin.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/csum-delete.h"
#include "kernel-shared/ctree.h"
#include "kernel-shared/extent_io.h"
#include "kernel-shared/messages.h"

#define CSUM_DELETE_PATH_MAX	4096

/* What the build works with besides the report */
struct csum_delete_ctx {
	struct btrfs_fs_info *fs_info;
	const struct btrfs_csum_delete_request *req;
	struct btrfs_csum_delete_report *report;
	struct btrfs_drop_tracker tracker;
	struct btrfs_subvol sv;
	u64 cap;			/* TOP: heap size */
	u64 est_leaves;			/* TOP: the subvolume's leaves, from bytes_used */
};

/* ---- one file ---------------------------------------------------------- */

static int check_regular_file(struct btrfs_fs_info *fs_info, const char *path,
			      const struct btrfs_inode_info *info, u64 subvol)
{
	if (btrfs_mode_is(info->mode, BTRFS_S_IFREG))
		return 0;
	if (btrfs_mode_is(info->mode, BTRFS_S_IFDIR))
		return btrfs_fs_error(fs_info, -EISDIR,
			"'%s' (inode %llu of subvolume %llu) is a directory: give a file",
			path, (unsigned long long)info->ino, (unsigned long long)subvol);
	if (btrfs_mode_is(info->mode, BTRFS_S_IFLNK))
		return btrfs_fs_error(fs_info, -ELOOP,
			"'%s' (inode %llu of subvolume %llu) is a symlink: symlinks are not followed, give the path of its target",
			path, (unsigned long long)info->ino, (unsigned long long)subvol);
	return btrfs_fs_error(fs_info, -EINVAL,
		"'%s' (inode %llu of subvolume %llu) is not a regular file (mode 0%o)",
		path, (unsigned long long)info->ino, (unsigned long long)subvol,
		info->mode);
}

static int build_file(struct csum_delete_ctx *cd)
{
	struct btrfs_fs_info *fs_info = cd->fs_info;
	struct btrfs_csum_delete_report *r = cd->report;
	u64 ino;
	int ret;

	r->path = cd->req->path;
	ret = btrfs_lookup_path(fs_info, cd->req->subvol, r->path, &cd->sv, &ino);
	if (ret)
		return ret;
	r->subvol = cd->sv.root.objectid;
	ret = btrfs_read_inode_info(fs_info, &cd->sv, ino, &r->info);
	if (ret == 1)
		ret = btrfs_fs_error(fs_info, -EUCLEAN,
			"'%s' leads to inode %llu of subvolume %llu, which has no inode item",
			r->path, (unsigned long long)ino, (unsigned long long)r->subvol);
	if (!ret)
		ret = check_regular_file(fs_info, r->path, &r->info, r->subvol);
	/*
	 * The count reads the file's leaves forward, the model reads them
	 * again (forward, then the truncation back) and the extent tree's
	 * leaves of its extents in the commit: a leaf the cache's budget
	 * evicts is kept packed (extent_io.c), so each is read once and
	 * memory is the budget plus a few bytes an item.
	 */
	btrfs_cache_pack_leaves(fs_info);
	if (!ret)
		ret = btrfs_count_file_drop(fs_info, &cd->sv, ino, &cd->tracker, &r->drop);
	if (!ret)
		ret = btrfs_model_deletion(fs_info, &cd->sv, ino, &cd->tracker, &r->params,
					   &r->model, &r->del);
	return ret;
}

/* ---- the costliest files of a subvolume -------------------------------- */

/* Costlier first; on a tie the lower inode, so the order is stable */
static bool top_before(const struct btrfs_csum_top_entry *a,
		       const struct btrfs_csum_top_entry *b)
{
	if (a->drop.calc.total != b->drop.calc.total)
		return a->drop.calc.total > b->drop.calc.total;
	return a->info.ino < b->info.ino;
}

static void top_swap(struct btrfs_csum_top_entry *a, struct btrfs_csum_top_entry *b)
{
	struct btrfs_csum_top_entry tmp = *a;

	*a = *b;
	*b = tmp;
}

/* The heap keeps the cheapest of the kept files at the root */
static void top_sift_down(struct btrfs_csum_delete_report *r, u64 i)
{
	while (1) {
		u64 l = 2 * i + 1, rt = l + 1, least = i;

		if (l < r->nr_top && top_before(&r->top[least], &r->top[l]))
			least = l;
		if (rt < r->nr_top && top_before(&r->top[least], &r->top[rt]))
			least = rt;
		if (least == i)
			return;
		top_swap(&r->top[i], &r->top[least]);
		i = least;
	}
}

static void top_sift_up(struct btrfs_csum_delete_report *r, u64 i)
{
	while (i && top_before(&r->top[(i - 1) / 2], &r->top[i])) {
		top_swap(&r->top[i], &r->top[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

static int top_add_file(const struct btrfs_inode_info *info,
			const struct btrfs_file_drop *drop, void *ctx)
{
	struct csum_delete_ctx *cd = ctx;
	struct btrfs_csum_delete_report *r = cd->report;
	struct btrfs_csum_top_entry entry = { .info = *info, .drop = *drop };

	if (!drop->calc.total)
		return 0;
	if (r->nr_top < cd->cap) {
		r->top[r->nr_top++] = entry;
		top_sift_up(r, r->nr_top - 1);
	} else if (top_before(&entry, &r->top[0])) {
		r->top[0] = entry;
		top_sift_down(r, 0);
	}
	return 0;
}

#define PROGRESS_MAX_PERCENT	99	/* 100 only once the scan is done */

static void top_progress(u64 leaves, void *ctx)
{
	struct csum_delete_ctx *cd = ctx;
	struct btrfs_csum_delete_progress p = {
		.subvol = cd->report->subvol,
		.leaves = leaves,
		.files = cd->report->scan.files,
	};
	u64 pct = cd->est_leaves ? leaves * 100 / cd->est_leaves : 0;

	p.percent = pct > PROGRESS_MAX_PERCENT ? PROGRESS_MAX_PERCENT : pct;
	cd->req->progress_fn(&p, cd->req->progress_ctx);
}

static int top_cmp(const void *a, const void *b)
{
	return top_before(a, b) ? -1 : top_before(b, a) ? 1 : 0;
}

static int top_resolve_paths(struct csum_delete_ctx *cd)
{
	struct btrfs_csum_delete_report *r = cd->report;
	char buf[CSUM_DELETE_PATH_MAX];
	u64 i;
	int ret;

	for (i = 0; i < r->nr_top; i++) {
		ret = btrfs_inode_path(cd->fs_info, &cd->sv, r->top[i].info.ino,
				       buf, sizeof(buf));
		if (ret < 0)
			return ret;
		if (ret == 1)
			continue;
		r->top[i].path = strdup(buf);
		if (!r->top[i].path)
			return -ENOMEM;
	}
	return 0;
}

static int build_top(struct csum_delete_ctx *cd)
{
	struct btrfs_csum_delete_report *r = cd->report;
	int ret;

	if (!cd->req->top || cd->req->top > BTRFS_CSUM_DELETE_MAX_TOP)
		return -EINVAL;
	ret = btrfs_read_subvol(cd->fs_info, &cd->fs_info->err, cd->req->subvol, &cd->sv);
	if (ret)
		return ret;
	r->subvol = cd->sv.root.objectid;
	cd->cap = cd->req->top;
	r->top = calloc(cd->cap, sizeof(*r->top));
	if (!r->top)
		return -ENOMEM;
	cd->est_leaves = cd->sv.root.bytes_used / cd->fs_info->nodesize;
	r->scan.file_fn = top_add_file;
	r->scan.progress_fn = cd->req->progress_fn ? top_progress : NULL;
	r->scan.ctx = cd;
	ret = btrfs_scan_subvol_drops(cd->fs_info, &cd->sv, &cd->tracker, &r->scan);
	r->scan.file_fn = NULL;
	r->scan.progress_fn = NULL;
	r->scan.ctx = NULL;
	if (ret)
		return ret;
	qsort(r->top, r->nr_top, sizeof(*r->top), top_cmp);
	return top_resolve_paths(cd);
}

/* ---- the report ------------------------------------------------------ */

/*
 * Fill @report for @req on @fs_info with the model of the requested
 * kernel.  0, or a negative errno with fs_info's error record filled for
 * what the image lacks; free the report in either case.
 */
int btrfs_build_csum_delete_report(struct btrfs_fs_info *fs_info,
				   const struct btrfs_csum_delete_request *req,
				   struct btrfs_csum_delete_report *report)
{
	struct csum_delete_ctx cd = {
		.fs_info = fs_info,
		.req = req,
		.report = report,
	};
	int ret = 0;

	memset(report, 0, sizeof(*report));
	report->mode = req->mode;
	btrfs_kernel_model(req->kernel_version, &report->model);
	btrfs_csum_params_for_kernel(fs_info, &report->model, &report->params);
	btrfs_drop_tracker_init(&cd.tracker, &report->params, &report->model);
	switch (req->mode) {
	case BTRFS_CSUM_DELETE_EXTENTS:
		btrfs_csum_delete_add(&report->params, &report->model, &report->calc,
				      req->extent_size, req->extents);
		break;
	case BTRFS_CSUM_DELETE_FILE:
		ret = build_file(&cd);
		break;
	case BTRFS_CSUM_DELETE_TOP:
		ret = build_top(&cd);
		break;
	default:
		ret = -EINVAL;
	}
	btrfs_drop_tracker_release(&cd.tracker);
	return ret;
}

void btrfs_free_csum_delete_report(struct btrfs_csum_delete_report *report)
{
	u64 i;

	for (i = 0; report->top && i < report->nr_top; i++)
		free(report->top[i].path);
	free(report->top);
	report->top = NULL;
	report->nr_top = 0;
}
