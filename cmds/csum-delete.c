// SPDX-License-Identifier: GPL-2.0
/*
 * The delayed-ref reservation for deleting data: the drop refs plus the
 * csum-deletion charge of "btrfs: stop doing excessive space reservation
 * for csum deletion", before and after.  For N extents of one size, for
 * one file of the image (--file), or for the files of a subvolume that
 * would cost the most (--top).  The options are parsed here and the
 * report kernel-shared/csum-delete.c fills is printed; nothing else.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "cmds/commands.h"
#include "cmds/driver.h"
#include "cmds/model-options.h"
#include "cmds/report.h"
#include "common/help.h"
#include "common/messages.h"
#include "common/parse-utils.h"
#include "common/progress.h"
#include "kernel-shared/csum-delete.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/live.h"

static const char * const cmd_csum_delete_usage[] = {
	"btrfs-space csum-delete [options] --extents N --extent-size SIZE <device|image>...",
	"btrfs-space csum-delete [options] --file PATH [--subvol ID] <device|image>...",
	"btrfs-space csum-delete [options] --top N [--subvol ID] <device|image>...",
	"Show the delayed-ref reservation the kernel makes to delete data extents, with and without the 2023 csum-deletion change",
	"",
	"--extents N        number of extents deleted (each its own delayed-ref head)",
	"--extent-size SIZE  on-disk size of each extent (compressed size for compressed data)",
	"--file PATH        the extents of this file of the image, as deleting it would drop them;",
	"                   a path on a mount of the filesystem, as typed ($PWD/mnt/dir/f), is",
	"                   resolved by the kernel to its subvolume and inode; any other PATH is",
	"                   absolute from the top of the subvolume, subvolumes inside are",
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
	{ OPT_CD_KERNEL, BTRFS_KERNEL_RANGE_STR ", such as 6.1 or 6.6" },
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
	if (parse_u64(arg, top) || !*top || *top > BTRFS_CSUM_DELETE_MAX_TOP)
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
		      BTRFS_CSUM_DELETE_MAX_TOP);
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
		fmt_size(fctx, "commit_tree_refs", "Tree-block refs, commit", d->commit.bytes);
		fmt_bool(fctx, "commit_tree_refs_exact", "Commit refs exact", !d->commit.inexact);
		fmt_size(fctx, "reserved", "Reserved (bytes_may_use)", d->reserved);
		fmt_size(fctx, "peak", "Peak", d->peak);
	}
	fmt_group_end(fctx);
}

/* What the commit copies in the cow-only trees (transaction.c) */
static void print_commit_section(struct fmt_ctx *fctx, const struct btrfs_commit_refs *c)
{
	static const char *const why[] = {
		"leaf split or merge", "copies did not settle",
		"free space cache v1", "quota tree",
	};
	const char *reasons[BTRFS_COMMIT_INEXACT_REASONS];
	u32 i, n = 0;

	for (i = 0; i < BTRFS_COMMIT_INEXACT_REASONS; i++)
		if (c->inexact & (1U << i))
			reasons[n++] = why[i];
	fmt_group_start(fctx, "commit", "Tree blocks the commit copies");
	fmt_u64(fctx, "extent_tree", "Extent tree", c->copies[BTRFS_COMMIT_EXTENT]);
	fmt_u64(fctx, "csum_tree", "Checksum tree", c->copies[BTRFS_COMMIT_CSUM]);
	fmt_u64(fctx, "free_space_tree", "Free space tree", c->copies[BTRFS_COMMIT_FREE_SPACE]);
	fmt_u64(fctx, "block_group_tree", "Block group tree", c->copies[BTRFS_COMMIT_BLOCK_GROUP]);
	fmt_u64(fctx, "root_tree", "Root tree", c->copies[BTRFS_COMMIT_ROOT]);
	fmt_u64(fctx, "dev_tree", "Device tree", c->copies[BTRFS_COMMIT_DEV]);
	fmt_u64(fctx, "blocks", "Blocks copied", c->copies_total);
	fmt_u64(fctx, "new_blocks", "New subvolume blocks", c->new_blocks);
	fmt_u64(fctx, "freed_data", "Data extents freed", c->freed_data);
	fmt_u64(fctx, "freed_blocks", "Tree blocks freed", c->freed_blocks);
	fmt_u64(fctx, "splits", "Extent leaves split", c->splits);
	fmt_u64(fctx, "tree_ref_nodes", "Tree-block ref nodes", c->nodes);
	fmt_size(fctx, "tree_refs", "Tree-block refs", c->bytes);
	fmt_str_list(fctx, "inexact", "Not exact because", reasons, n);
	fmt_group_end(fctx);
}

/* The copies of shared blocks and what the deletion reserves and reaches */
static void print_deletion_section(struct fmt_ctx *fctx, const struct btrfs_deletion_model *d)
{
	fmt_group_start(fctx, "cow", "Tree blocks the deletion copies");
	fmt_u64(fctx, "leaves", "Leaves with the file's items", d->leaves);
	fmt_u64(fctx, "blocks", "Blocks copied", d->cows);
	fmt_u64(fctx, "shared", "Shared (refs > 1)", d->shared_cows);
	fmt_u64(fctx, "full_backref", "Last ref, full backrefs", d->full_backref_cows);
	fmt_u64(fctx, "tree_ref_nodes", "Tree-block ref nodes", d->totals.tree_refs);
	fmt_u64(fctx, "data_heads_uncharged", "Data heads without csum charge",
		d->totals.data_heads_uncharged);
	fmt_group_end(fctx);
	print_commit_section(fctx, &d->commit);
	fmt_group_start(fctx, "reservation", "Reservations of the deletion");
	fmt_size(fctx, "unlink", "Unlink transaction", d->reserved_unlink);
	fmt_size(fctx, "evict", "Evict joins", d->reserved_evict);
	fmt_u64(fctx, "refills", "Delayed-refs refills", d->refills);
	fmt_size(fctx, "refill_bytes", "Refilled", d->refill_bytes);
	if (d->preempt_checked) {
		fmt_bool(fctx, "preempt_flush", "Preemptive flushing during it", d->preempt_flush);
		fmt_bool(fctx, "reserve_flush", "More than over-commit grants", d->reserve_flush);
	}
	fmt_group_end(fctx);
}

static void print_file_section(struct fmt_ctx *fctx, const struct btrfs_csum_delete_report *r)
{
	const struct btrfs_file_drop *d = &r->drop;

	fmt_group_start(fctx, "file", "File");
	fmt_str(fctx, "path", "Path", r->path);
	fmt_u64(fctx, "subvolume", "Subvolume", r->subvol);
	fmt_u64(fctx, "inode", "Inode", r->info.ino);
	fmt_size(fctx, "size", "Size", r->info.size);
	fmt_u64(fctx, "nlink", "Links", r->info.nlink);
	fmt_u64(fctx, "extent_items", "File extent items", d->items);
	fmt_u64(fctx, "inline_items", "Inline extents", d->inline_items);
	fmt_u64(fctx, "holes", "Holes", d->holes);
	fmt_u64(fctx, "extents", "Extents (heads)", d->calc.extents);
	fmt_size(fctx, "disk_bytes", "Disk bytes", d->calc.disk_bytes);
	fmt_u64(fctx, "refs", "Refs dropped", d->calc.refs);
	fmt_group_end(fctx);
}

/* A line on the terminal (common/progress.c: at most five times a second) */
#define PROGRESS_EVERY_LEAVES	64

static void top_progress(const struct btrfs_csum_delete_progress *p, void *ctx)
{
	if (p->leaves % PROGRESS_EVERY_LEAVES)
		return;
	progress_printf(ctx, "scanning subvolume %llu: %llu leaves (~%u%%), %llu files ",
			(unsigned long long)p->subvol, (unsigned long long)p->leaves,
			p->percent, (unsigned long long)p->files);
}

static void print_top(struct fmt_ctx *fctx, const struct btrfs_csum_delete_report *r)
{
	const struct btrfs_subvol_scan *scan = &r->scan;
	char ino[32];
	u64 i;

	fmt_group_start(fctx, "scan", "Scan");
	fmt_u64(fctx, "subvolume", "Subvolume", r->subvol);
	fmt_u64(fctx, "inodes", "Inodes", scan->inodes);
	fmt_u64(fctx, "files", "Regular files", scan->files);
	fmt_u64(fctx, "extent_items", "File extent items", scan->extent_items);
	fmt_u64(fctx, "leaves", "Leaves read", scan->leaves);
	fmt_group_end(fctx);
	fmt_array_start(fctx, "top", "Files whose deletion reserves the most");
	for (i = 0; i < r->nr_top; i++) {
		const struct btrfs_csum_top_entry *e = &r->top[i];
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

static void warn_file(const struct btrfs_csum_delete_report *r)
{
	if (r->info.nlink > 1)
		warning("inode %llu has %u links: removing one name drops nothing, the figures are for removing all of them",
			(unsigned long long)r->info.ino, r->info.nlink);
	if (r->del.preempt_flush)
		warning("with the deletion's %llu bytes reserved the kernel starts preemptive flushing, which runs delayed refs during the deletion: the figures are those of a deletion without flushing",
			(unsigned long long)r->del.reserved);
	else if (r->del.reserve_flush)
		warning("the deletion's %llu bytes reserved are more than over-commit grants: its own reservations flush and run delayed refs during the deletion, the figures are those of a deletion without flushing",
			(unsigned long long)r->del.reserved);
}

/* What csum-delete is asked and what it builds */
struct csum_delete_ctx {
	struct csum_delete_args args;
	struct btrfs_csum_delete_report report;
	char resolved[PATH_MAX];	/* --file on a mount: from its subvolume's top */
};

static int csum_delete_ctx_option(int opt, const char *arg, void *ctx)
{
	struct csum_delete_ctx *c = ctx;

	return csum_delete_option(opt, arg, &c->args);
}

static int csum_delete_check(void *ctx, int nr_paths, char **paths)
{
	struct csum_delete_ctx *c = ctx;

	return check_mode(&c->args);
}

/*
 * --file weighs its reservations against the space infos: the block
 * groups; --top scans a subvolume for the files a mounted filesystem
 * would delete, so it makes the mount's checks (a filesystem the kernel
 * refuses has no file to delete) without loading the block groups;
 * --extents N is arithmetic on the superblock's sizes and feature flags.
 */
static enum cmd_reads csum_delete_reads(const void *ctx)
{
	const struct csum_delete_ctx *c = ctx;

	if (c->args.file)
		return CMD_READS_BLOCK_GROUPS;
	return c->args.top ? CMD_READS_MOUNT : CMD_READS_SUPER;
}

static void print_csum_delete(struct fmt_ctx *fctx, const struct btrfs_fs_info *fs_info,
			      void *ctx)
{
	const struct csum_delete_ctx *c = ctx;
	const struct btrfs_csum_delete_report *r = &c->report;

	print_csum_params(fctx, &r->params);
	switch (r->mode) {
	case BTRFS_CSUM_DELETE_FILE:
		print_file_section(fctx, r);
		print_deletion_section(fctx, &r->del);
		print_csum_delete_calc(fctx, &r->del.totals.data, &r->del);
		break;
	case BTRFS_CSUM_DELETE_TOP:
		print_top(fctx, r);
		break;
	case BTRFS_CSUM_DELETE_EXTENTS:
		print_csum_delete_calc(fctx, &r->calc, NULL);
		break;
	}
}

static void csum_delete_release(void *ctx)
{
	struct csum_delete_ctx *c = ctx;

	btrfs_free_csum_delete_report(&c->report);
}

/*
 * --file as typed on a mounted filesystem ("$PWD/mnt/dir/f"): the kernel
 * resolves it to a subvolume and inode (live.c), and the inode's path
 * from its subvolume's top is what the image is asked for.  A path not
 * on a mount of this filesystem keeps its meaning: from the top of
 * --subvol.  0, or the exit status after saying why.
 */
static int resolve_file(struct btrfs_fs_info *fs_info, struct csum_delete_ctx *c,
			struct btrfs_csum_delete_request *req)
{
	const struct csum_delete_args *args = &c->args;
	struct btrfs_subvol sv;
	u64 subvol, ino;
	int ret;

	if (btrfs_live_resolve_path(fs_info->fsid, args->file, &subvol, &ino))
		return 0;
	if (args->subvol_given && subvol != args->subvol) {
		error("csum-delete: %s is in subvolume %llu, not --subvol %llu", args->file,
		      (unsigned long long)subvol, (unsigned long long)args->subvol);
		return EXIT_USAGE;
	}
	ret = btrfs_read_subvol(fs_info, &fs_info->err, subvol, &sv);
	if (!ret)
		ret = btrfs_inode_path(fs_info, &sv, ino, c->resolved, sizeof(c->resolved));
	if (ret) {
		error("csum-delete: %s is inode %llu of subvolume %llu, which the filesystem read has no path to%s%s",
		      args->file, (unsigned long long)ino, (unsigned long long)subvol,
		      ret < 0 ? ": " : " (not committed yet?)", ret < 0 ? fs_info->err.msg : "");
		return EXIT_FS_ERROR;
	}
	pr_verbose(LOG_VERBOSE, "%s: subvolume %llu, inode %llu: %s from its top\n", args->file,
		   (unsigned long long)subvol, (unsigned long long)ino, c->resolved);
	req->path = c->resolved;
	req->subvol = subvol;
	return 0;
}

static int run_csum_delete(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
			   void *ctx)
{
	struct csum_delete_ctx *c = ctx;
	const struct csum_delete_args *args = &c->args;
	struct progress line;
	struct btrfs_csum_delete_request req = {
		.kernel_version = args->kernel_version,
		.extents = args->extents,
		.extent_size = args->extent_size,
		.path = args->file,
		.subvol = args->subvol,
		.top = args->top,
	};
	int ret;

	if (args->file) {
		req.mode = BTRFS_CSUM_DELETE_FILE;
		ret = resolve_file(fs_info, c, &req);
		if (ret)
			return ret;
	} else if (args->top)
		req.mode = BTRFS_CSUM_DELETE_TOP;
	else
		req.mode = BTRFS_CSUM_DELETE_EXTENTS;
	progress_init(&line, "scanning");
	if (req.mode == BTRFS_CSUM_DELETE_TOP) {
		req.progress_fn = top_progress;
		req.progress_ctx = &line;
	}
	ret = btrfs_build_csum_delete_report(fs_info, &req, &c->report);
	progress_clear(&line);
	if (!ret) {
		if (req.mode == BTRFS_CSUM_DELETE_FILE)
			warn_file(&c->report);
		return 0;
	}
	btrfs_free_csum_delete_report(&c->report);
	if (ret == -ENOMEM)
		return cmd_out_of_memory();
	if (fs_info->err.err)
		error("%s", fs_info->err.msg);
	else
		error("cannot read the filesystem: %s (error %d) while computing the csum-delete report",
		      strerror(-ret), ret);
	return EXIT_FS_ERROR;
}

static const struct cmd_spec csum_delete_spec = {
	CMD_OWN_OPTIONS(csum_delete),
	.check = csum_delete_check,
	.reads = csum_delete_reads,
	.report = run_csum_delete,
	.print = print_csum_delete,
	.release = csum_delete_release,
};

static int cmd_csum_delete(const struct cmd_struct *cmd, const struct cmd_options *global,
			   int argc, char **argv)
{
	struct csum_delete_ctx c = {
		.args = {
			.kernel_version = BTRFS_DEFAULT_KERNEL,
			.subvol = BTRFS_FS_TREE_OBJECTID,
		},
	};

	return cmd_run(cmd, global, argc, argv, &csum_delete_spec, &c);
}
DEFINE_COMMAND(csum_delete, "csum-delete");
