// SPDX-License-Identifier: GPL-2.0
/*
 * Image handling and the inspect pipeline shared by the fuzz targets; see
 * fuzz-common.h for the BFZ format and Documentation/dev/fuzzing.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <getopt.h>
#include "cmds/commands.h"
#include "cmds/mount-estimate.h"
#include "cmds/report.h"
#include "common/checksum.h"
#include "common/units.h"
#include "kernel-shared/accessors.h"
#include "kernel-shared/block-group.h"
#include "kernel-shared/disk-io.h"
#include "kernel-shared/mount-cost.h"
#include "kernel-shared/tree-log.h"
#include "tests/fuzz/fuzz-common.h"

static void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		abort();
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		abort();
	return p;
}

static void add_rec(struct fz_image *img, u32 dev, u64 offset, u32 len, u8 *data)
{
	if (img->nrecs == img->recs_cap) {
		img->recs_cap = img->recs_cap ? img->recs_cap * 2 : 64;
		img->recs = realloc(img->recs, img->recs_cap * sizeof(*img->recs));
		if (!img->recs)
			abort();
	}
	img->recs[img->nrecs].dev = dev;
	img->recs[img->nrecs].offset = offset;
	img->recs[img->nrecs].len = len;
	img->recs[img->nrecs].data = data;
	img->nrecs++;
}

int fz_parse(const u8 *data, size_t size, struct fz_image *img)
{
	const struct bfz_head *head = (const void *)data;
	size_t pos = sizeof(*head);
	int i;

	memset(img, 0, sizeof(*img));
	if (size < sizeof(*head) || memcmp(head->magic, BFZ_MAGIC, 4))
		return -1;
	img->flags = head->flags & FZ_FLAGS_MASK;
	img->ndev = head->ndev ? (head->ndev - 1) % BFZ_MAX_DEVS + 1 : 1;
	img->mirror = head->mirror % BTRFS_SUPER_MIRROR_MAX;
	for (i = 0; i < BFZ_MAX_DEVS; i++) {
		img->dev_size[i] = fz_get64(&head->dev_size[i]);
		if (img->dev_size[i] > BFZ_MAX_DEV_SIZE)
			img->dev_size[i] = BFZ_MAX_DEV_SIZE;
	}
	img->buf = xmalloc(size);
	memcpy(img->buf, data, size);
	img->buf_len = size;
	while (size - pos >= sizeof(struct bfz_rec)) {
		const struct bfz_rec *rec = (const void *)(img->buf + pos);
		u32 dev = rec->dev % img->ndev;
		u32 npages = fz_get32(&rec->npages);
		u64 offset = fz_get64(&rec->offset);
		u64 len;

		pos += sizeof(*rec);
		if (npages > BFZ_MAX_REC_PAGES)
			npages = BFZ_MAX_REC_PAGES;
		len = (u64)npages * BFZ_PAGE;
		if (len > size - pos)
			len = size - pos;
		if (!len)
			break;
		/* the data stays where it is; a clipped record just writes less */
		if (offset < img->dev_size[dev]) {
			u64 room = img->dev_size[dev] - offset;

			add_rec(img, dev, offset, len < room ? len : room,
				img->buf + pos);
		}
		pos += len;
	}
	return 0;
}

u8 *fz_serialize(const struct fz_image *img, size_t *size)
{
	struct bfz_head head = { .flags = img->flags, .ndev = img->ndev,
				 .mirror = img->mirror };
	size_t total = sizeof(head);
	u8 *out, *p;
	u32 i;

	memcpy(head.magic, BFZ_MAGIC, 4);
	for (i = 0; i < BFZ_MAX_DEVS; i++)
		fz_put64(&head.dev_size[i], img->dev_size[i]);
	for (i = 0; i < img->nrecs; i++)
		total += sizeof(struct bfz_rec) +
			 (img->recs[i].len + BFZ_PAGE - 1) / BFZ_PAGE * BFZ_PAGE;
	out = calloc(1, total);
	if (!out)
		abort();
	memcpy(out, &head, sizeof(head));
	p = out + sizeof(head);
	for (i = 0; i < img->nrecs; i++) {
		struct bfz_rec rec = { .dev = img->recs[i].dev };

		fz_put32(&rec.npages, (img->recs[i].len + BFZ_PAGE - 1) / BFZ_PAGE);
		fz_put64(&rec.offset, img->recs[i].offset);
		memcpy(p, &rec, sizeof(rec));
		p += sizeof(rec);
		memcpy(p, img->recs[i].data, img->recs[i].len);
		p += (img->recs[i].len + BFZ_PAGE - 1) / BFZ_PAGE * BFZ_PAGE;
	}
	*size = total;
	return out;
}

void fz_clone(struct fz_image *dst, const struct fz_image *src)
{
	u32 i;

	*dst = *src;
	dst->buf = xmalloc(src->buf_len);
	memcpy(dst->buf, src->buf, src->buf_len);
	dst->recs = xmalloc(src->recs_cap * sizeof(*src->recs));
	for (i = 0; i < src->nrecs; i++) {
		dst->recs[i] = src->recs[i];
		dst->recs[i].data = dst->buf + (src->recs[i].data - src->buf);
	}
}

void fz_free(struct fz_image *img)
{
	free(img->recs);
	free(img->buf);
	memset(img, 0, sizeof(*img));
}

struct btrfs_super_block *fz_super(struct fz_image *img, u32 dev)
{
	u64 offset = btrfs_sb_offset(img->mirror);
	u32 i;

	for (i = 0; i < img->nrecs; i++) {
		struct fz_rec *r = &img->recs[i];

		if (r->dev == dev && r->offset <= offset &&
		    offset + BTRFS_SUPER_INFO_SIZE <= r->offset + r->len)
			return (void *)(r->data + (offset - r->offset));
	}
	return NULL;
}

static bool overlaps_super(u64 start, u64 len)
{
	int m;

	for (m = 0; m < BTRFS_SUPER_MIRROR_MAX; m++) {
		u64 sb = btrfs_sb_offset(m);

		if (start < sb + BTRFS_SUPER_INFO_SIZE && sb < start + len)
			return true;
	}
	return false;
}

static void fix_csum(u16 type, u8 *block, u32 len)
{
	unsigned char out[CSUM_MAX_SIZE];

	if (!csum_compute(type, block + BTRFS_CSUM_SIZE, len - BTRFS_CSUM_SIZE, out))
		memcpy(block, out, BTRFS_CSUM_SIZE);
}

/* nodesize and csum type the reader will use, from device 0's superblock */
static bool fs_params(struct fz_image *img, u32 *nodesize, u16 *csum_type)
{
	struct btrfs_super_block *sb = fz_super(img, 0);

	if (!sb)
		return false;
	*nodesize = btrfs_super_nodesize(sb);
	*csum_type = btrfs_super_csum_type(sb);
	return *nodesize >= 4096 && *nodesize <= 65536 &&
	       !(*nodesize & (*nodesize - 1)) && csum_algo_valid(*csum_type);
}

void fz_fixup(struct fz_image *img)
{
	u32 nodesize, i;
	u16 csum_type;
	int m;

	if (img->flags & FZ_NOFIX)
		return;
	if (fs_params(img, &nodesize, &csum_type)) {
		for (i = 0; i < img->nrecs; i++) {
			struct fz_rec *r = &img->recs[i];
			u64 o = (r->offset + nodesize - 1) / nodesize * nodesize;

			for (; o + nodesize <= r->offset + r->len; o += nodesize)
				if (!overlaps_super(o, nodesize))
					fix_csum(csum_type, r->data + (o - r->offset),
						 nodesize);
		}
	}
	/* superblocks last: each with its own csum type */
	for (i = 0; i < img->nrecs; i++) {
		struct fz_rec *r = &img->recs[i];

		for (m = 0; m < BTRFS_SUPER_MIRROR_MAX; m++) {
			u64 o = btrfs_sb_offset(m);
			u8 *sb;

			if (o < r->offset || o + BTRFS_SUPER_INFO_SIZE > r->offset + r->len)
				continue;
			sb = r->data + (o - r->offset);
			if (csum_algo_valid(btrfs_super_csum_type((void *)sb)))
				fix_csum(btrfs_super_csum_type((void *)sb), sb,
					 BTRFS_SUPER_INFO_SIZE);
		}
	}
}

u32 fz_find_blocks(struct fz_image *img, struct fz_block *out, u32 max)
{
	struct btrfs_super_block *sb = fz_super(img, 0);
	const u8 *uuid;
	u32 nodesize, nr = 0, i;
	u16 csum_type;

	if (!sb || !fs_params(img, &nodesize, &csum_type))
		return 0;
	uuid = (btrfs_super_incompat_flags(sb) & BTRFS_FEATURE_INCOMPAT_METADATA_UUID) ?
		sb->metadata_uuid : sb->fsid;
	for (i = 0; i < img->nrecs && nr < max; i++) {
		struct fz_rec *r = &img->recs[i];
		u64 o = (r->offset + nodesize - 1) / nodesize * nodesize;

		for (; o + nodesize <= r->offset + r->len && nr < max; o += nodesize) {
			const struct btrfs_header *h = (void *)(r->data + (o - r->offset));

			if (overlaps_super(o, nodesize) ||
			    memcmp(h->fsid, uuid, BTRFS_FSID_SIZE))
				continue;
			out[nr].rec = r;
			out[nr].data = (u8 *)h;
			out[nr].len = nodesize;
			out[nr].logical = btrfs_header_bytenr(h);
			out[nr].owner = btrfs_header_owner(h);
			out[nr].level = btrfs_header_level(h);
			nr++;
		}
	}
	return nr;
}

/* --- running the reader -------------------------------------------------- */

static int memfds[BFZ_MAX_DEVS] = { -1, -1, -1, -1 };

static void write_devices(struct fz_image *img)
{
	u32 d, i;

	for (d = 0; d < img->ndev; d++) {
		if (memfds[d] < 0) {
			memfds[d] = memfd_create("fuzz-dev", MFD_CLOEXEC);
			if (memfds[d] < 0)
				abort();
		}
		/* truncating to 0 first drops the previous run's pages */
		if (ftruncate(memfds[d], 0) || ftruncate(memfds[d], img->dev_size[d]))
			abort();
	}
	for (i = 0; i < img->nrecs; i++) {
		struct fz_rec *r = &img->recs[i];

		if (pwrite(memfds[r->dev], r->data, r->len, r->offset) != (ssize_t)r->len)
			abort();
	}
}

/* The image target has no template: the one path with files behind it */
static const char *csum_file(const struct fz_image *img)
{
	return img->file ? img->file : "/small/d001/f000001";
}

void fz_export_if_asked(struct fz_image *img)
{
	const char *prefix = getenv("FUZZ_EXPORT");
	static bool done;
	char path[4096];
	u32 d, i;

	/* libFuzzer may run one input file more than once */
	if (!prefix || !*prefix || done)
		return;
	done = true;
	for (d = 0; d < img->ndev; d++) {
		int fd;

		snprintf(path, sizeof(path), "%s.dev%u.img", prefix, d + 1);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || ftruncate(fd, img->dev_size[d])) {
			perror(path);
			exit(2);
		}
		for (i = 0; i < img->nrecs; i++)
			if (img->recs[i].dev == d &&
			    pwrite(fd, img->recs[i].data, img->recs[i].len,
				   img->recs[i].offset) != (ssize_t)img->recs[i].len) {
				perror(path);
				exit(2);
			}
		close(fd);
		fprintf(stderr, "FUZZ_EXPORT: wrote %s (%llu bytes)%s\n", path,
			(unsigned long long)img->dev_size[d],
			(img->flags & FZ_DEGRADED) && img->ndev > 1 && d == img->ndev - 1u ?
			" (left out of the run: degraded)" : "");
	}
	fprintf(stderr, "FUZZ_EXPORT: flags 0x%x: --super %u%s%s%s%s%s%s%s%s%s\n", img->flags,
		img->mirror, img->flags & FZ_SCAN ? " --bg-search scan" : "",
		img->flags & FZ_DEGRADED ? " --degraded" : "",
		img->flags & FZ_SERIAL ? " --io-threads 1" : "",
		img->flags & FZ_CSUM_DELETE ? " (then csum-delete --top 3)" : "",
		img->flags & FZ_CSUM_FILE ? " (then csum-delete --file " : "",
		img->flags & FZ_CSUM_FILE ? csum_file(img) : "",
		img->flags & FZ_CSUM_FILE ? ")" : "",
		img->flags & FZ_FORECAST ? " (then forecast --resize 1:HALF, --remove 1, --balance, --periodic-reclaim data)" : "",
		img->flags & FZ_NOFIX ? " (checksums not fixed)" : "");
}

/* "Label:  nan" in text or "key": nan in JSON: a number that is not one */
static void check_numbers(const char *out, size_t len)
{
	const char *p = out, *end = out + len;

	while ((p = memchr(p, ':', end - p))) {
		p++;
		while (p < end && *p == ' ')
			p++;
		if (p < end && (*p == '-' || *p == '+'))
			p++;
		if (end - p >= 3 && (!strncasecmp(p, "nan", 3) || !strncasecmp(p, "inf", 3)) &&
		    (end - p == 3 || !((p[3] >= 'a' && p[3] <= 'z') || (p[3] >= 'A' && p[3] <= 'Z')))) {
			fprintf(stderr, "fuzz: printed a number that is not one: %.40s\n", p);
			abort();
		}
	}
}

static void check_error(const struct btrfs_fs_info *fs_info, int ret)
{
	if (!ret || !fs_info->err.err)
		return;
	if (!fs_info->err.msg[0] || strchr(fs_info->err.msg, '\n')) {
		fprintf(stderr, "fuzz: error message is not one line: '%s'\n",
			fs_info->err.msg);
		abort();
	}
}

static void print_all(struct btrfs_fs_info *fs_info, struct space_report *report,
		      const struct btrfs_mount_estimate *est, const struct space_summary *sum,
		      bool json)
{
	struct mount_estimate_args margs;
	struct fmt_ctx fctx;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		abort();
	mount_estimate_args_init(&margs);
	fmt_start(&fctx, out, json ? FMT_JSON : FMT_TEXT, UNITS_BINARY, "inspect");
	/* the first screen: levels, remedies (the data owners, backref.c), quotas (qgroup.c) */
	if (sum)
		print_summary_section(&fctx, sum);
	print_filesystem_section(&fctx, report);
	print_devices_section(&fctx, report);
	print_space_info_section(&fctx, report);
	print_global_rsv_section(&fctx, report);
	print_kernel_section(&fctx, report);
	print_global_rsv_detail(&fctx, report);
	print_overcommit_section(&fctx, report);
	print_preempt_section(&fctx, report);
	print_block_groups_summary(&fctx, report);
	print_mount_estimate(&fctx, est, &margs);
	print_io_section(&fctx, report);
	/* runs, then every item: both printers run on every input */
	print_chunk_list(&fctx, fs_info, false);
	print_chunk_list(&fctx, fs_info, true);
	print_block_group_list(&fctx, fs_info, false);
	print_block_group_list(&fctx, fs_info, true);
	fmt_end(&fctx);
	fclose(out);
	check_numbers(buf, len);
	free(buf);
}

/* The command as the CLI runs it: options as arguments; --top 3 or --file */
/* @cmd with its first @nr_words words, then the image's flags as options */
static void run_command(const struct fz_image *img, const char **paths, int nr_paths,
			const struct cmd_struct *cmd, char *const *words, int nr_words)
{
	struct cmd_options opts = {
		.format = FMT_TEXT,
		.units = UNITS_DEFAULT,
		.io_threads = DEFAULT_IO_THREADS,
	};
	char super[] = "0";
	char *argv[16 + BFZ_MAX_DEVS];
	int argc = 0, i;

	for (i = 0; i < nr_words; i++)
		argv[argc++] = words[i];
	argv[argc++] = "--io-threads";
	argv[argc++] = img->flags & FZ_SERIAL ? "1" : "2";
	argv[argc++] = "--super";
	super[0] += img->mirror;
	argv[argc++] = super;
	if (img->flags & FZ_DEGRADED)
		argv[argc++] = "--degraded";
	if (img->flags & FZ_SCAN) {
		argv[argc++] = "--bg-search";
		argv[argc++] = "scan";
	}
	if (img->flags & FZ_JSON) {
		argv[argc++] = "--format";
		argv[argc++] = "json";
	}
	for (i = 0; i < nr_paths; i++)
		argv[argc++] = (char *)paths[i];
	argv[argc] = NULL;
	cmd->fn(cmd, &opts, argc, argv);
}

static void run_csum_delete(const struct fz_image *img, const char **paths, int nr_paths,
			    const char *file)
{
	char *words[] = { "csum-delete", file ? "--file" : "--top", file ? (char *)file : "3" };

	run_command(img, paths, nr_paths, &cmd_struct_csum_delete, words, 3);
}

/*
 * forecast's what-ifs, the relocation model under each: a shrink of devid
 * 1 to half its size (every dev extent past it tried, the failed ones
 * again), its removal, a balance by usage and the periodic reclaim
 */
static void run_forecast(const struct fz_image *img, const char **paths, int nr_paths)
{
	char resize[48];
	char *shrink[] = { "forecast", "--resize", resize };
	char *remove[] = { "forecast", "--remove", "1" };
	char *balance[] = { "forecast", "--balance", "-dusage=90,limit=3 -musage=90" };
	char *reclaim[] = { "forecast", "--periodic-reclaim", "data",
			    "--reclaim-threshold", "data=50" };

	snprintf(resize, sizeof(resize), "1:%llu",
		 (unsigned long long)(img->dev_size[0] / 2));
	run_command(img, paths, nr_paths, &cmd_struct_forecast, shrink, 3);
	run_command(img, paths, nr_paths, &cmd_struct_forecast, remove, 3);
	run_command(img, paths, nr_paths, &cmd_struct_forecast, balance, 3);
	run_command(img, paths, nr_paths, &cmd_struct_forecast, reclaim, 5);
}

void fz_run(struct fz_image *img)
{
	static struct btrfs_fs_info fs_info;
	char names[BFZ_MAX_DEVS][32];
	const char *paths[BFZ_MAX_DEVS];
	static bool load_block_groups = true;
	struct btrfs_open_args args = {
		.paths = paths,
		.super_mirror = img->mirror,
		.allow_degraded = img->flags & FZ_DEGRADED,
		.read = {
			.bg_search_scan = img->flags & FZ_SCAN,
			/* two threads take the batched path the default 16 take, and cost less */
			.io_threads = img->flags & FZ_SERIAL ? 1 : 2,
			/* the mount's read-ahead, and the key-only leaves it starts */
			.after_roots = btrfs_mount_read_ahead,
			.after_roots_ctx = &load_block_groups,
		},
	};
	struct btrfs_mount_estimate est;
	struct report_options opts;
	struct space_report report;
	u32 d;
	int ret;

	fz_export_if_asked(img);
	write_devices(img);
	args.nr_paths = img->ndev;
	if ((img->flags & FZ_DEGRADED) && img->ndev > 1)
		args.nr_paths--;
	for (d = 0; d < img->ndev; d++) {
		snprintf(names[d], sizeof(names[d]), "/proc/self/fd/%d", memfds[d]);
		paths[d] = names[d];
	}
	/* as cmd_open_fs() and cmd_inspect() do it */
	ret = btrfs_open_fs(&fs_info, &args);
	if (!ret)
		ret = btrfs_read_block_groups(&fs_info, NULL);
	if (!ret)
		ret = btrfs_replay_log_accounting(&fs_info);
	check_error(&fs_info, ret);
	if (!ret) {
		report_options_init(&opts);
		if (!btrfs_build_space_report(&fs_info, &opts, &report)) {
			ret = btrfs_estimate_mount(&fs_info, &est);
			check_error(&fs_info, ret);
			if (!ret) {
				struct space_summary sum;
				/* as inspect_report(): only out of memory fails it */
				bool have_sum = !btrfs_build_summary(&report, &est, &sum);

				btrfs_report_fill_io(&fs_info, &report);
				print_all(&fs_info, &report, &est, have_sum ? &sum : NULL,
					  img->flags & FZ_JSON);
				if (have_sum)
					btrfs_free_summary(&sum);
			}
			btrfs_free_space_report(&report);
		}
	}
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: %s%s\n", ret ? "error: " : "read fine",
			ret ? (fs_info.err.err ? fs_info.err.msg : "(no message)") : "");
	btrfs_close_fs(&fs_info);
	if (img->flags & FZ_CSUM_DELETE)
		run_csum_delete(img, paths, args.nr_paths, NULL);
	if (img->flags & FZ_CSUM_FILE)
		run_csum_delete(img, paths, args.nr_paths, csum_file(img));
	if (img->flags & FZ_FORECAST)
		run_forecast(img, paths, args.nr_paths);
}

void fz_start(struct fz_image *img, const u8 *data)
{
	fz_clone(img, fz_template(data[0] % fz_nr_templates()));
	img->flags = data[1] & FZ_FLAGS_MASK;
	img->file = fz_template_file(data[0] % fz_nr_templates());
}

/* --- templates ------------------------------------------------------------ */

/* templates.c: the embedded BFZ files */
extern const u8 *const fz_template_data[];
extern const u8 *const fz_template_end[];
extern const char *const fz_template_names[];
extern const u32 fz_template_count;

u32 fz_nr_templates(void)
{
	return fz_template_count;
}

const char *fz_template_name(u32 i)
{
	return fz_template_names[i];
}

const struct fz_image *fz_template(u32 i)
{
	static struct fz_image *parsed;

	if (!parsed) {
		u32 t;

		parsed = calloc(fz_template_count, sizeof(*parsed));
		if (!parsed)
			abort();
		for (t = 0; t < fz_template_count; t++) {
			if (fz_parse(fz_template_data[t],
				     fz_template_end[t] - fz_template_data[t], &parsed[t])) {
				fprintf(stderr, "fuzz: template %s is not a BFZ file\n",
					fz_template_names[t]);
				abort();
			}
			/* templates are kept with good checksums */
			parsed[t].flags = 0;
		}
	}
	return &parsed[i];
}

/*
 * Of the templates with an fs tree only 08-raid0-2dev holds files (/big,
 * /small/dNNN/fNNNNNN); a path two directories deep walks the lookup
 * through every step.  The others have only their top directory: "/" is
 * found, then refused as a directory.
 */
const char *fz_template_file(u32 i)
{
	if (!strcmp(fz_template_names[i], "08-raid0-2dev"))
		return "/small/d001/f000001";
	return "/";
}

const char *fz_dump_dir(void)
{
	const char *dir = getenv("FUZZ_DUMP_SEEDS");

	return dir && *dir ? dir : NULL;
}

void fz_write_seed(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(2);
	}
}

void fz_write_template_seed(const char *dir, u32 t, const void *data, size_t len,
			    const char *fmt, ...)
{
	char name[128];
	va_list ap;
	int n;

	n = snprintf(name, sizeof(name), "%s.", fz_template_name(t));
	va_start(ap, fmt);
	vsnprintf(name + n, sizeof(name) - n, fmt, ap);
	va_end(ap);
	fz_write_seed(dir, name, data, len);
}

void fz_dump_each_template(void (*dump)(const char *dir, u32 t))
{
	const char *dir = fz_dump_dir();
	u32 t;

	if (!dir)
		return;
	for (t = 0; t < fz_nr_templates(); t++)
		dump(dir, t);
	exit(0);
}

void fz_dump_template_seeds(const char *suffix, size_t cap, fz_seed_fn make)
{
	const char *dir = fz_dump_dir();
	u32 t;

	if (!dir)
		return;
	for (t = 0; t < fz_nr_templates(); t++) {
		/* zeroed: the flags byte and any padding of a seed stay 0 */
		u8 *seed = xcalloc(1, cap);
		size_t len = make(t, seed, cap);

		if (len)
			fz_write_template_seed(dir, t, seed, len, "%s", suffix);
		free(seed);
	}
	exit(0);
}

/* The superblock and sys-array targets, pipeline and parse-*: same inputs */
size_t fz_super_seed(u32 t, u8 *seed, size_t cap)
{
	struct fz_image img;

	fz_clone(&img, fz_template(t));
	seed[0] = t;
	memcpy(seed + FZ_CONTROL, fz_super(&img, 0), BTRFS_SUPER_INFO_SIZE);
	fz_free(&img);
	return FZ_SUPER_SEED;
}

size_t fz_sys_array_seed(u32 t, u8 *seed, size_t cap)
{
	struct btrfs_super_block *sb;
	struct fz_image img;
	u32 len;

	fz_clone(&img, fz_template(t));
	sb = fz_super(&img, 0);
	len = btrfs_super_sys_array_size(sb);
	seed[0] = t;
	fz_put16(seed + FZ_CONTROL, len);
	memcpy(seed + FZ_CONTROL + 2, sb->sys_chunk_array, len);
	fz_free(&img);
	return FZ_CONTROL + 2 + len;
}

/* --- item targets --------------------------------------------------------- */

#define FZ_MAX_BLOCKS	4096
#define FZ_MAX_ITEMS	2048
#define FZ_ITEM_HEAD	19	/* objectid, offset, spec, size */

struct fz_item {
	struct btrfs_disk_key key;
	const u8 *data;
	u32 size;
	u32 order;
};

static u64 spec_owner(struct fz_image *img, const struct fz_item_spec *spec)
{
	struct btrfs_super_block *sb = fz_super(img, 0);

	if (spec->owner == BTRFS_EXTENT_TREE_OBJECTID &&
	    spec->type == BTRFS_BLOCK_GROUP_ITEM_KEY && sb &&
	    (btrfs_super_compat_ro_flags(sb) & BTRFS_FEATURE_COMPAT_RO_BLOCK_GROUP_TREE))
		return BTRFS_BLOCK_GROUP_TREE_OBJECTID;
	return spec->owner;
}

static const struct btrfs_item *leaf_items(const u8 *leaf)
{
	return (const void *)(leaf + sizeof(struct btrfs_header));
}

/* The leaf of @spec's tree holding its item type, else its first leaf */
static struct fz_block *spec_leaf(struct fz_image *img, struct fz_block *blocks,
				  u32 nr, const struct fz_item_spec *spec)
{
	u64 owner = spec_owner(img, spec);
	struct fz_block *first = NULL;
	u32 b, i;

	for (b = 0; b < nr; b++) {
		const struct btrfs_item *items = leaf_items(blocks[b].data);
		u32 nritems = btrfs_header_nritems((void *)blocks[b].data);

		if (blocks[b].owner != owner || blocks[b].level)
			continue;
		if (!first)
			first = &blocks[b];
		for (i = 0; i < nritems && (i + 1) * sizeof(*items) < blocks[b].len; i++)
			if (items[i].key.type == spec->type)
				return &blocks[b];
	}
	return first;
}

int fz_cmp_disk_keys(const struct btrfs_disk_key *x, const struct btrfs_disk_key *y)
{
	u64 xo = fz_get64(&x->objectid), yo = fz_get64(&y->objectid);
	u64 xf = fz_get64(&x->offset), yf = fz_get64(&y->offset);

	if (xo != yo)
		return xo < yo ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (xf != yf)
		return xf < yf ? -1 : 1;
	return 0;
}

bool fz_leaf_put(u8 *leaf, u32 *data_end, u32 slot, const struct btrfs_disk_key *key,
		 const u8 *data, u32 size)
{
	struct btrfs_item *table = (void *)(leaf + sizeof(struct btrfs_header));

	if (size > *data_end || *data_end - size < (slot + 1) * sizeof(*table))
		return false;
	*data_end -= size;
	table[slot].key = *key;
	fz_put32(&table[slot].offset, *data_end);
	fz_put32(&table[slot].size, size);
	memcpy(leaf + sizeof(struct btrfs_header) + *data_end, data, size);
	return true;
}

void fz_leaf_end(u8 *leaf, u32 data_end, u32 nritems)
{
	struct btrfs_header *h = (void *)leaf;
	struct btrfs_item *table = (void *)(leaf + sizeof(*h));

	memset(&table[nritems], 0, data_end - nritems * sizeof(*table));
	fz_put32(&h->nritems, nritems);
}

static int cmp_items(const void *a, const void *b)
{
	const struct fz_item *x = a, *y = b;
	int ret = fz_cmp_disk_keys(&x->key, &y->key);

	if (ret)
		return ret;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Nodes pointing at @logical take @key for that slot, up the tree */
static void fix_parent_keys(struct fz_block *blocks, u32 nr, u64 owner,
			    u64 logical, const struct btrfs_disk_key *key, int depth)
{
	u32 b, s;

	if (depth >= BTRFS_MAX_LEVEL)
		return;
	for (b = 0; b < nr; b++) {
		struct btrfs_key_ptr *ptrs;
		u32 nritems;

		if (blocks[b].owner != owner || !blocks[b].level)
			continue;
		ptrs = (void *)(blocks[b].data + sizeof(struct btrfs_header));
		nritems = btrfs_header_nritems((void *)blocks[b].data);
		for (s = 0; s < nritems && s < btrfs_node_max_ptrs(blocks[b].len); s++) {
			if (fz_get64(&ptrs[s].blockptr) != logical)
				continue;
			ptrs[s].key = *key;
			if (s == 0 && blocks[b].logical != logical)
				fix_parent_keys(blocks, nr, owner, blocks[b].logical, key,
						depth + 1);
		}
	}
}

static bool spec_in_leaf(const struct fz_item_spec *specs, u32 nr_specs,
			 struct fz_block **leaf_of, const struct fz_block *leaf, u8 type)
{
	u32 s;

	for (s = 0; s < nr_specs; s++)
		if (leaf_of[s] == leaf && specs[s].type == type)
			return true;
	return false;
}

/* Rebuild @leaf from its kept items and the input's items for it */
static void rebuild_leaf(struct fz_image *img, struct fz_block *blocks, u32 nr_blocks,
			 struct fz_block *leaf, const struct fz_item_spec *specs,
			 u32 nr_specs, struct fz_block **leaf_of,
			 const struct fz_item *in, u32 nr_in)
{
	static struct fz_item items[FZ_MAX_ITEMS];
	static u8 copy[BTRFS_MAX_METADATA_BLOCKSIZE];
	struct btrfs_header *h = (void *)leaf->data;
	const struct btrfs_item *old = leaf_items(copy);
	struct btrfs_item *out = (void *)(leaf->data + sizeof(*h));
	struct btrfs_disk_key old_first;
	u32 nritems = btrfs_header_nritems(h), n = 0, i, slot = 0;
	u32 data_end = leaf->len - sizeof(*h);

	memcpy(copy, leaf->data, leaf->len);
	old_first = old[0].key;
	for (i = 0; i < nritems && n < FZ_MAX_ITEMS &&
		    (i + 1) * sizeof(*old) <= btrfs_leaf_data_size(leaf->len); i++) {
		u32 off = btrfs_raw_item_offset(&old[i]), size = btrfs_raw_item_size(&old[i]);

		if (spec_in_leaf(specs, nr_specs, leaf_of, leaf, old[i].key.type))
			continue;
		if ((u64)off + size > data_end)
			continue;
		items[n] = (struct fz_item) { old[i].key, copy + sizeof(*h) + off, size, n };
		n++;
	}
	for (i = 0; i < nr_in && n < FZ_MAX_ITEMS; i++) {
		items[n] = in[i];
		items[n].order = n;
		n++;
	}
	qsort(items, n, sizeof(items[0]), cmp_items);
	for (i = 0; i < n; i++) {
		if (!fz_leaf_put(leaf->data, &data_end, slot, &items[i].key, items[i].data,
				 items[i].size))
			break;
		slot++;
	}
	fz_leaf_end(leaf->data, data_end, slot);
	if (slot && memcmp(&out[0].key, &old_first, sizeof(old_first)))
		fix_parent_keys(blocks, nr_blocks, leaf->owner, leaf->logical,
				&out[0].key, 0);
}

int fz_items_run(const u8 *data, size_t size, const struct fz_item_spec *specs,
		 u32 nr_specs)
{
	static struct fz_block blocks[FZ_MAX_BLOCKS];
	static struct fz_item in[FZ_MAX_ITEMS];
	struct fz_block *leaf_of[8];
	struct fz_image img;
	u32 nr_blocks, nr_in = 0, s, i;
	size_t pos = FZ_CONTROL;

	if (size < FZ_CONTROL || nr_specs > 8)
		return -1;
	fz_start(&img, data);
	nr_blocks = fz_find_blocks(&img, blocks, FZ_MAX_BLOCKS);
	for (s = 0; s < nr_specs; s++)
		leaf_of[s] = spec_leaf(&img, blocks, nr_blocks, &specs[s]);
	while (size - pos >= FZ_ITEM_HEAD && nr_in < FZ_MAX_ITEMS) {
		const u8 *p = data + pos;
		u32 len = fz_get16(p + 17);

		s = p[16] % nr_specs;
		pos += FZ_ITEM_HEAD;
		if (len > size - pos)
			len = size - pos;
		if (leaf_of[s]) {
			memcpy(&in[nr_in].key.objectid, p, 8);
			in[nr_in].key.type = specs[s].type;
			memcpy(&in[nr_in].key.offset, p + 8, 8);
			in[nr_in].data = data + pos;
			in[nr_in].size = len;
			in[nr_in].order = s;	/* which leaf; reset when rebuilt */
			nr_in++;
		}
		pos += len;
	}
	for (s = 0; s < nr_specs; s++) {
		static struct fz_item mine[FZ_MAX_ITEMS];
		u32 n = 0, t;

		if (!leaf_of[s])
			continue;
		for (t = 0; t < s; t++)
			if (leaf_of[t] == leaf_of[s])
				break;
		if (t < s)
			continue;	/* rebuilt with an earlier spec */
		for (i = 0; i < nr_in; i++)
			if (leaf_of[in[i].order] == leaf_of[s])
				mine[n++] = in[i];
		rebuild_leaf(&img, blocks, nr_blocks, leaf_of[s], specs, nr_specs,
			     leaf_of, mine, n);
	}
	fz_fixup(&img);
	fz_run(&img);
	fz_free(&img);
	return 0;
}

void fz_items_dump(const char *dir, const struct fz_item_spec *specs, u32 nr_specs)
{
	static struct fz_block blocks[FZ_MAX_BLOCKS];
	u32 t;

	for (t = 0; t < fz_nr_templates(); t++) {
		struct fz_image img;
		/* item data and an item header (25 > 19 bytes) each fit a leaf */
		u8 *out = xmalloc(FZ_CONTROL + nr_specs * BTRFS_MAX_METADATA_BLOCKSIZE);
		size_t len = FZ_CONTROL;
		u32 nr_blocks, s;

		fz_clone(&img, fz_template(t));
		nr_blocks = fz_find_blocks(&img, blocks, FZ_MAX_BLOCKS);
		out[0] = t;
		out[1] = 0;
		for (s = 0; s < nr_specs; s++) {
			struct fz_block *leaf = spec_leaf(&img, blocks, nr_blocks, &specs[s]);
			const struct btrfs_item *items;
			u32 i, nritems;

			if (!leaf)
				continue;
			items = leaf_items(leaf->data);
			nritems = btrfs_header_nritems((void *)leaf->data);
			for (i = 0; i < nritems; i++) {
				u32 size = btrfs_raw_item_size(&items[i]);

				if (items[i].key.type != specs[s].type)
					continue;
				memcpy(out + len, &items[i].key.objectid, 8);
				memcpy(out + len + 8, &items[i].key.offset, 8);
				out[len + 16] = s;
				fz_put16(out + len + 17, size);
				memcpy(out + len + FZ_ITEM_HEAD, leaf->data +
				       sizeof(struct btrfs_header) +
				       btrfs_raw_item_offset(&items[i]), size);
				len += FZ_ITEM_HEAD + size;
			}
		}
		fz_write_template_seed(dir, t, out, len, "items");
		free(out);
		fz_free(&img);
	}
}
