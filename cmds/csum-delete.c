// SPDX-License-Identifier: GPL-2.0
/*
 * The delayed-ref reservation for deleting data: the drop refs plus the
 * csum-deletion charge of "btrfs: stop doing excessive space reservation
 * for csum deletion", before and after.  For N extents of one size, for
 * one file of the image (--file), or for the files of a subvolume that
 * would cost the most (--top).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmds/commands.h"
#include "cmds/model-options.h"
#include "cmds/report.h"
#include "common/help.h"
#include "common/messages.h"
#include "common/parse-utils.h"
#include "common/progress.h"
#include "kernel-shared/delayed-ref.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/extent-tree.h"
#include "kernel-shared/file-item.h"
#include "kernel-shared/inode.h"
#include "kernel-shared/kernel-version.h"

/* --top keeps this many files at most: each holds a path once resolved */
#define CSUM_DELETE_MAX_TOP	100000
#define CSUM_DELETE_PATH_MAX	4096

static const char * const cmd_csum_delete_usage[] = {
	"btrfs-space csum-delete [options] --extents N --extent-size SIZE <device|image>...",
	"btrfs-space csum-delete [options] --file PATH [--subvol ID] <device|image>...",
	"btrfs-space csum-delete [options] --top N [--subvol ID] <device|image>...",
	"Show the delayed-ref reservation the kernel makes to delete data extents, with and without the 2023 csum-deletion change",
	"",
	"--extents N        number of extents deleted (each its own delayed-ref head)",
	"--extent-size SIZE  on-disk size of each extent (compressed size for compressed data)",
	"--file PATH        the extents of this file of the image, as deleting it would drop them;",
	"                   PATH is absolute from the top of the subvolume, subvolumes inside are",
	"                   entered, symlinks are not followed (at most 4096 components)",
	"--top N            the N files of the subvolume whose deletion reserves the most; reads the",
	"                   whole subvolume tree once (progress on stderr when it is a terminal)",
	"--subvol ID        subvolume for --file and --top (default 5, the top-level FS_TREE)",
	"--kernel VERSION   kernel whose formula to use (default " BTRFS_DEFAULT_KERNEL_STR ")",
	HELPINFO_GLOBALS,
	HELPINFO_UNITS_SHORT_LONG,
	NULL
};

enum {
	OPT_EXTENTS = GETOPT_VAL_EXTRA + 100,
	OPT_EXTENT_SIZE,
	OPT_CD_KERNEL,
	OPT_CD_FILE,
	OPT_CD_SUBVOL,
	OPT_CD_TOP,
};

struct csum_delete_args {
	u64 extents;
	u64 extent_size;
	u32 kernel_version;
	const char *file;
	u64 subvol;
	bool subvol_given;
	u64 top;
};

static const struct option csum_delete_longopts[] = {
	{ "extents", required_argument, NULL, OPT_EXTENTS },
	{ "extent-size", required_argument, NULL, OPT_EXTENT_SIZE },
	{ "kernel", required_argument, NULL, OPT_CD_KERNEL },
	{ "file", required_argument, NULL, OPT_CD_FILE },
	{ "subvol", required_argument, NULL, OPT_CD_SUBVOL },
	{ "top", required_argument, NULL, OPT_CD_TOP },
	{ NULL, 0, NULL, 0 }
};

static const struct cmd_option_expect csum_delete_option_expect[] = {
	{ OPT_EXTENTS, "a count, such as 1000" },
	{ OPT_EXTENT_SIZE, "a size such as 4096, 512K or 1.5G" },
	{ OPT_CD_KERNEL, "a kernel version " BTRFS_MIN_KERNEL_STR " or later, such as 6.1 or 6.6" },
	{ OPT_CD_SUBVOL, "a subvolume id: 5, or 256 and above" },
	{ OPT_CD_TOP, "1 to 100000" },
	{ 0, NULL }
};

static int parse_subvol(const char *arg, struct csum_delete_args *a)
{
	if (parse_u64(arg, &a->subvol) || !btrfs_is_subvol_id(a->subvol))
		return -EINVAL;
	a->subvol_given = true;
	return 0;
}

static int parse_top(const char *arg, u64 *top)
{
	if (parse_u64(arg, top) || !*top || *top > CSUM_DELETE_MAX_TOP)
		return -EINVAL;
	return 0;
}

static int csum_delete_option(int opt, const char *arg, void *ctx)
{
	struct csum_delete_args *a = ctx;

	switch (opt) {
	case OPT_EXTENTS: return parse_u64(arg, &a->extents);
	case OPT_EXTENT_SIZE: return parse_size(arg, &a->extent_size);
	case OPT_CD_KERNEL: return btrfs_parse_model_kernel(arg, &a->kernel_version);
	case OPT_CD_FILE: a->file = arg; return 0;
	case OPT_CD_SUBVOL: return parse_subvol(arg, a);
	case OPT_CD_TOP: return parse_top(arg, &a->top);
	default: return -EINVAL;
	}
}

/* Exactly one of the three ways to say what is deleted */
static int check_mode(const struct csum_delete_args *a)
{
	bool by_size = a->extents || a->extent_size;
	int modes = by_size + !!a->file + !!a->top;

	if (modes != 1) {
		error("csum-delete: give one of --extents with --extent-size, --file, or --top (--top takes 1 to %d)",
		      CSUM_DELETE_MAX_TOP);
		return EXIT_USAGE;
	}
	if (by_size && (!a->extents || !a->extent_size)) {
		error("csum-delete: give --extents and --extent-size");
		return EXIT_USAGE;
	}
	if (by_size && a->subvol_given) {
		error("csum-delete: --subvol goes with --file or --top");
		return EXIT_USAGE;
	}
	return 0;
}

static void print_csum_params(struct fmt_ctx *fctx, const struct btrfs_csum_params *p)
{
	fmt_group_start(fctx, "params", "Filesystem");
	fmt_u64(fctx, "nodesize", "Node size", p->nodesize);
	fmt_u64(fctx, "sectorsize", "Sector size", p->sectorsize);
	fmt_u64(fctx, "csum_size", "Checksum size", p->csum_size);
	fmt_u64(fctx, "csums_per_leaf", "Checksums per leaf", btrfs_csums_per_leaf(p));
	fmt_bool(fctx, "free_space_tree_option", "Free space tree option",
		 p->free_space_tree_opt);
	fmt_group_end(fctx);
}

/* @d: the whole deletion of one file (--file), or NULL */
static void print_csum_delete_calc(struct fmt_ctx *fctx, const struct btrfs_csum_delete_calc *c,
				   const struct btrfs_deletion_model *d)
{
	fmt_group_start(fctx, "csum_delete", "Delayed-ref reservation for the deletion");
	fmt_u64(fctx, "extents", "Extents (heads)", c->extents);
	fmt_size(fctx, "disk_bytes", "Disk bytes", c->disk_bytes);
	fmt_u64(fctx, "csum_leaves", "Csum leaves (per head)", c->csum_leaves);
	fmt_u64(fctx, "refs", "Dropped refs (merged)", c->refs);
	fmt_size(fctx, "drop_ref_bytes", "Drop refs", c->drop_ref_bytes);
	fmt_size(fctx, "csum_bytes", "Csum deletion", c->csum_bytes);
	fmt_size(fctx, "total", "Total", c->total);
	fmt_size(fctx, "csum_bytes_before", "Csum deletion before " BTRFS_CSUM_DELETE_CHANGE_STR, c->csum_bytes_before);
	fmt_size(fctx, "total_before", "Total before " BTRFS_CSUM_DELETE_CHANGE_STR, c->total_before);
	if (d) {
		fmt_size(fctx, "tree_refs", "Tree-block refs", d->totals.tree_ref_bytes);
		fmt_size(fctx, "reserved", "Reserved (bytes_may_use)", d->reserved);
		fmt_size(fctx, "peak", "Peak", d->peak);
	}
	fmt_group_end(fctx);
}

/* What the command works out before anything is printed */
struct csum_delete_ctx {
	struct btrfs_fs_info *fs_info;
	struct btrfs_csum_params params;
	struct btrfs_kernel_model model;
	struct btrfs_drop_tracker tracker;
	struct btrfs_subvol sv;
};

/* ---- --file ---------------------------------------------------------- */

struct file_result {
	const char *path;
	struct btrfs_inode_info info;
	struct btrfs_file_drop drop;
	struct btrfs_deletion_model del;
};

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

static int count_file(struct csum_delete_ctx *cd, u64 subvol, struct file_result *res)
{
	struct btrfs_fs_info *fs_info = cd->fs_info;
	u64 ino;
	int ret;

	ret = btrfs_lookup_path(fs_info, subvol, res->path, &cd->sv, &ino);
	if (ret)
		return ret;
	ret = btrfs_read_inode_info(fs_info, &cd->sv, ino, &res->info);
	if (ret == 1)
		ret = btrfs_fs_error(fs_info, -EUCLEAN,
			"'%s' leads to inode %llu of subvolume %llu, which has no inode item",
			res->path, (unsigned long long)ino,
			(unsigned long long)cd->sv.root.objectid);
	if (!ret)
		ret = check_regular_file(fs_info, res->path, &res->info,
					 cd->sv.root.objectid);
	if (!ret)
		ret = btrfs_count_file_drop(fs_info, &cd->sv, ino, &cd->tracker,
					    &res->drop);
	if (!ret)
		ret = btrfs_model_deletion(fs_info, &cd->sv, ino, &cd->params,
					   &cd->model, &res->del);
	return ret;
}

/* The copies of shared blocks and what the deletion reserves and reaches */
static void print_deletion_section(struct fmt_ctx *fctx, const struct file_result *res)
{
	const struct btrfs_deletion_model *d = &res->del;

	fmt_group_start(fctx, "cow", "Tree blocks the deletion copies");
	fmt_u64(fctx, "leaves", "Leaves with the file's items", d->leaves);
	fmt_u64(fctx, "blocks", "Blocks copied", d->cows);
	fmt_u64(fctx, "shared", "Shared (refs > 1)", d->shared_cows);
	fmt_u64(fctx, "full_backref", "Last ref, full backrefs", d->full_backref_cows);
	fmt_u64(fctx, "tree_ref_nodes", "Tree-block ref nodes", d->totals.tree_refs);
	fmt_u64(fctx, "data_heads_uncharged", "Data heads without csum charge",
		d->totals.data_heads_uncharged);
	fmt_group_end(fctx);
	fmt_group_start(fctx, "reservation", "Reservations of the deletion");
	fmt_size(fctx, "unlink", "Unlink transaction", d->reserved_unlink);
	fmt_size(fctx, "evict", "Evict joins", d->reserved_evict);
	fmt_u64(fctx, "refills", "Delayed-refs refills", d->refills);
	fmt_size(fctx, "refill_bytes", "Refilled", d->refill_bytes);
	if (d->preempt_checked)
		fmt_bool(fctx, "preempt_flush", "Preemptive flushing during it", d->preempt_flush);
	fmt_group_end(fctx);
}

static void print_file_section(struct fmt_ctx *fctx, const struct csum_delete_ctx *cd,
			       const struct file_result *res)
{
	const struct btrfs_file_drop *d = &res->drop;

	fmt_group_start(fctx, "file", "File");
	fmt_str(fctx, "path", "Path", res->path);
	fmt_u64(fctx, "subvolume", "Subvolume", cd->sv.root.objectid);
	fmt_u64(fctx, "inode", "Inode", res->info.ino);
	fmt_size(fctx, "size", "Size", res->info.size);
	fmt_u64(fctx, "nlink", "Links", res->info.nlink);
	fmt_u64(fctx, "extent_items", "File extent items", d->items);
	fmt_u64(fctx, "inline_items", "Inline extents", d->inline_items);
	fmt_u64(fctx, "holes", "Holes", d->holes);
	fmt_u64(fctx, "extents", "Extents (heads)", d->calc.extents);
	fmt_size(fctx, "disk_bytes", "Disk bytes", d->calc.disk_bytes);
	fmt_u64(fctx, "refs", "Refs dropped", d->calc.refs);
	fmt_group_end(fctx);
}

/* ---- --top ----------------------------------------------------------- */

struct top_entry {
	struct btrfs_inode_info info;
	struct btrfs_file_drop drop;
	char *path;			/* NULL: not resolvable cheaply */
};

/* The N costliest files so far, as a min-heap on cost */
struct top_list {
	struct top_entry *e;
	u64 nr;
	u64 cap;
	const struct btrfs_subvol_scan *scan;
	struct progress progress;	/* on stderr when it is a terminal */
	u64 est_leaves;
	u64 subvol;
};

/* Costlier first; on a tie the lower inode, so the order is stable */
static bool top_before(const struct top_entry *a, const struct top_entry *b)
{
	if (a->drop.calc.total != b->drop.calc.total)
		return a->drop.calc.total > b->drop.calc.total;
	return a->info.ino < b->info.ino;
}

static void top_swap(struct top_entry *a, struct top_entry *b)
{
	struct top_entry tmp = *a;

	*a = *b;
	*b = tmp;
}

static void top_sift_down(struct top_list *tl, u64 i)
{
	while (1) {
		u64 l = 2 * i + 1, r = l + 1, least = i;

		if (l < tl->nr && top_before(&tl->e[least], &tl->e[l]))
			least = l;
		if (r < tl->nr && top_before(&tl->e[least], &tl->e[r]))
			least = r;
		if (least == i)
			return;
		top_swap(&tl->e[i], &tl->e[least]);
		i = least;
	}
}

static void top_sift_up(struct top_list *tl, u64 i)
{
	while (i && top_before(&tl->e[(i - 1) / 2], &tl->e[i])) {
		top_swap(&tl->e[i], &tl->e[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

static int top_add_file(const struct btrfs_inode_info *info,
			const struct btrfs_file_drop *drop, void *ctx)
{
	struct top_list *tl = ctx;
	struct top_entry entry = { .info = *info, .drop = *drop };

	if (!drop->calc.total)
		return 0;
	if (tl->nr < tl->cap) {
		tl->e[tl->nr++] = entry;
		top_sift_up(tl, tl->nr - 1);
	} else if (top_before(&entry, &tl->e[0])) {
		tl->e[0] = entry;
		top_sift_down(tl, 0);
	}
	return 0;
}

/* A line on the terminal, rewritten at most five times a second */
static void top_progress(u64 leaves, void *ctx)
{
	struct top_list *tl = ctx;
	u64 pct;

	if (leaves % 64)
		return;
	pct = tl->est_leaves ? leaves * 100 / tl->est_leaves : 0;
	progress_printf(&tl->progress, "scanning subvolume %llu: %llu leaves (~%llu%%), %llu files ",
			(unsigned long long)tl->subvol, (unsigned long long)leaves,
			(unsigned long long)(pct > 99 ? 99 : pct),
			(unsigned long long)tl->scan->files);
}

static int top_cmp(const void *a, const void *b)
{
	return top_before(a, b) ? -1 : top_before(b, a) ? 1 : 0;
}

static int top_resolve_paths(struct csum_delete_ctx *cd, struct top_list *tl)
{
	char buf[CSUM_DELETE_PATH_MAX];
	u64 i;
	int ret;

	for (i = 0; i < tl->nr; i++) {
		ret = btrfs_inode_path(cd->fs_info, &cd->sv, tl->e[i].info.ino,
				       buf, sizeof(buf));
		if (ret < 0)
			return ret;
		if (ret == 1)
			continue;
		tl->e[i].path = strdup(buf);
		if (!tl->e[i].path)
			return -ENOMEM;
	}
	return 0;
}

static int scan_top(struct csum_delete_ctx *cd, u64 subvol, struct top_list *tl,
		    struct btrfs_subvol_scan *scan)
{
	int ret;

	ret = btrfs_read_subvol(cd->fs_info, subvol, &cd->sv);
	if (ret)
		return ret;
	tl->e = calloc(tl->cap, sizeof(*tl->e));
	if (!tl->e)
		return -ENOMEM;
	tl->scan = scan;
	tl->subvol = subvol;
	tl->est_leaves = cd->sv.root.bytes_used / cd->fs_info->nodesize;
	progress_init(&tl->progress, "scanning");
	scan->file_fn = top_add_file;
	scan->progress_fn = top_progress;
	scan->ctx = tl;
	ret = btrfs_scan_subvol_drops(cd->fs_info, &cd->sv, &cd->tracker, scan);
	progress_clear(&tl->progress);
	if (ret)
		return ret;
	qsort(tl->e, tl->nr, sizeof(*tl->e), top_cmp);
	return top_resolve_paths(cd, tl);
}

static void free_top(struct top_list *tl)
{
	u64 i;

	for (i = 0; tl->e && i < tl->nr; i++)
		free(tl->e[i].path);
	free(tl->e);
}

static void print_top(struct fmt_ctx *fctx, const struct csum_delete_ctx *cd,
		      const struct top_list *tl, const struct btrfs_subvol_scan *scan)
{
	char ino[32];
	u64 i;

	fmt_group_start(fctx, "scan", "Scan");
	fmt_u64(fctx, "subvolume", "Subvolume", cd->sv.root.objectid);
	fmt_u64(fctx, "inodes", "Inodes", scan->inodes);
	fmt_u64(fctx, "files", "Regular files", scan->files);
	fmt_u64(fctx, "extent_items", "File extent items", scan->extent_items);
	fmt_u64(fctx, "leaves", "Leaves read", scan->leaves);
	fmt_group_end(fctx);
	fmt_array_start(fctx, "top", "Files whose deletion reserves the most");
	for (i = 0; i < tl->nr; i++) {
		const struct top_entry *e = &tl->e[i];
		const struct btrfs_csum_delete_calc *c = &e->drop.calc;

		snprintf(ino, sizeof(ino), "inode:%llu", (unsigned long long)e->info.ino);
		fmt_group_start(fctx, NULL, NULL);
		fmt_size(fctx, "total", "total", c->total);
		fmt_size(fctx, "total_before", "before_" BTRFS_CSUM_DELETE_CHANGE_STR, c->total_before);
		fmt_u64(fctx, "extents", "extents", c->extents);
		fmt_size(fctx, "disk_bytes", "disk", c->disk_bytes);
		fmt_u64(fctx, "refs", "refs", c->refs);
		fmt_u64(fctx, "csum_leaves", NULL, c->csum_leaves);
		fmt_size(fctx, "drop_ref_bytes", NULL, c->drop_ref_bytes);
		fmt_size(fctx, "csum_bytes", NULL, c->csum_bytes);
		fmt_size(fctx, "csum_bytes_before", NULL, c->csum_bytes_before);
		fmt_u64(fctx, "nlink", "links", e->info.nlink);
		fmt_u64(fctx, "inode", NULL, e->info.ino);
		fmt_str(fctx, "path", "path", e->path ? e->path : (fctx->mode == FMT_JSON ? NULL : ino));
		fmt_group_end(fctx);
	}
	fmt_array_end(fctx);
}

/* ---- the command ----------------------------------------------------- */

static void warn_links(const struct file_result *res)
{
	if (res->info.nlink > 1)
		warning("inode %llu has %u links: removing one name drops nothing, the figures are for removing all of them",
			(unsigned long long)res->info.ino, res->info.nlink);
}

static int run_file(struct csum_delete_ctx *cd, const struct cmd_options *opts,
		    const struct csum_delete_args *args, const char *token)
{
	struct file_result res = { .path = args->file };
	struct fmt_ctx fctx;
	int ret;

	ret = count_file(cd, args->subvol, &res);
	if (ret)
		return ret;
	warn_links(&res);
	if (res.del.preempt_flush)
		warning("with the deletion's %llu bytes reserved the kernel starts preemptive flushing, which runs delayed refs during the deletion: the figures are those of a deletion without flushing",
			(unsigned long long)res.del.reserved);
	fmt_start(&fctx, stdout, opts->format, opts->units, token);
	print_mode(&fctx, cd->fs_info);
	print_csum_params(&fctx, &cd->params);
	print_file_section(&fctx, cd, &res);
	print_deletion_section(&fctx, &res);
	print_csum_delete_calc(&fctx, &res.del.totals.data, &res.del);
	fmt_end(&fctx);
	return 0;
}

static int run_top(struct csum_delete_ctx *cd, const struct cmd_options *opts,
		   const struct csum_delete_args *args, const char *token)
{
	struct top_list tl = { .cap = args->top };
	struct btrfs_subvol_scan scan = { 0 };
	struct fmt_ctx fctx;
	int ret;

	ret = scan_top(cd, args->subvol, &tl, &scan);
	if (!ret) {
		fmt_start(&fctx, stdout, opts->format, opts->units, token);
		print_mode(&fctx, cd->fs_info);
		print_csum_params(&fctx, &cd->params);
		print_top(&fctx, cd, &tl, &scan);
		fmt_end(&fctx);
	}
	free_top(&tl);
	return ret;
}

static void run_extents(struct csum_delete_ctx *cd, const struct cmd_options *opts,
			const struct csum_delete_args *args, const char *token)
{
	struct btrfs_csum_delete_calc calc = { 0 };
	struct fmt_ctx fctx;

	btrfs_csum_delete_add(&cd->params, &cd->model, &calc, args->extent_size,
			      args->extents);
	fmt_start(&fctx, stdout, opts->format, opts->units, token);
	print_mode(&fctx, cd->fs_info);
	print_csum_params(&fctx, &cd->params);
	print_csum_delete_calc(&fctx, &calc, NULL);
	fmt_end(&fctx);
}

static int run_csum_delete(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
			   const struct csum_delete_args *args, const char *token)
{
	struct csum_delete_ctx cd = { .fs_info = fs_info };
	int ret = 0;

	btrfs_kernel_model(args->kernel_version, &cd.model);
	btrfs_csum_params_for_kernel(fs_info, &cd.model, &cd.params);
	btrfs_drop_tracker_init(&cd.tracker, &cd.params, &cd.model);
	if (args->file)
		ret = run_file(&cd, opts, args, token);
	else if (args->top)
		ret = run_top(&cd, opts, args, token);
	else
		run_extents(&cd, opts, args, token);
	btrfs_drop_tracker_release(&cd.tracker);
	if (!ret)
		return 0;
	if (ret == -ENOMEM)
		return cmd_out_of_memory();
	if (fs_info->err.err)
		error("%s", fs_info->err.msg);
	else
		error("cannot read the filesystem: error %d", ret);
	return EXIT_FS_ERROR;
}

static int cmd_csum_delete(const struct cmd_struct *cmd, const struct cmd_options *global,
			   int argc, char **argv)
{
	struct cmd_options opts = *global;
	struct csum_delete_args args = {
		.kernel_version = BTRFS_DEFAULT_KERNEL,
		.subvol = BTRFS_FS_TREE_OBJECTID,
	};
	struct cmd_extra_options extra = {
		.longopts = csum_delete_longopts,
		.handle = csum_delete_option,
		.ctx = &args,
		.expect = csum_delete_option_expect,
	};
	struct btrfs_fs_info fs_info;
	int first, ret;

	ret = cmd_parse_options(cmd, &opts, &extra, argc, argv, &first);
	if (ret)
		return ret == CMD_HELP_SHOWN ? 0 : ret;
	if (first >= argc)
		return cmd_missing_device(cmd);
	ret = check_mode(&args);
	if (ret)
		return ret;
	/* --file weighs its reservations against the space infos */
	ret = cmd_open_fs(&fs_info, &opts, argc - first, argv + first, args.file != NULL);
	if (!ret)
		ret = run_csum_delete(&fs_info, &opts, &args, cmd->token);
	cmd_close_fs(&fs_info);
	return ret;
}
DEFINE_COMMAND(csum_delete, "csum-delete");
