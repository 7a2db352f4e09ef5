/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BTRFS_SPACE_COMMANDS_H
#define BTRFS_SPACE_COMMANDS_H

#include <getopt.h>
#include <stdbool.h>
#include "common/format-output.h"
#include "common/messages.h"
#include "kernel-shared/fs.h"

/* Options every command takes, set globally or after the command name */
struct cmd_options {
	enum fmt_mode format;
	unsigned int units;
	int verbose;
	int super_mirror;
	bool allow_degraded;
	bool bg_search_scan;
	u32 io_threads;
	bool scan_devices;	/* --scan: find the other members of the filesystem */
	bool quiet;		/* -q: errors only */
	u64 readonly_devids[64];
	int nr_readonly_devids;
};

#define DEFAULT_IO_THREADS	16

struct cmd_struct {
	const char *token;
	int (*fn)(const struct cmd_struct *cmd, const struct cmd_options *global,
		  int argc, char **argv);
	const char * const *usagestr;
};

#define DEFINE_COMMAND(name, tok)					\
	const struct cmd_struct cmd_struct_##name = {			\
		.token = tok,						\
		.fn = cmd_##name,					\
		.usagestr = cmd_##name##_usage,				\
	}

extern const struct cmd_struct cmd_struct_inspect;
extern const struct cmd_struct cmd_struct_chunks;
extern const struct cmd_struct cmd_struct_block_groups;
extern const struct cmd_struct cmd_struct_global_rsv;
extern const struct cmd_struct cmd_struct_overcommit;
extern const struct cmd_struct cmd_struct_preempt;
extern const struct cmd_struct cmd_struct_csum_delete;
extern const struct cmd_struct cmd_struct_mount_estimate;
extern const struct cmd_struct cmd_struct_map;
extern const struct cmd_struct cmd_struct_forecast;
extern const struct cmd_struct cmd_struct_replay;

/* What an option takes, for the usage error of a bad value */
struct cmd_option_expect {
	int val;			/* the option's getopt value */
	const char *expect;		/* e.g. "1 to 8", "a size such as 512M" */
};

/* A command's own options, parsed beside the shared ones */
struct cmd_extra_options {
	const struct option *longopts;	/* values >= GETOPT_VAL_EXTRA, {0} ended */
	int (*handle)(int opt, const char *arg, void *ctx);	/* 0 or -EINVAL */
	void *ctx;
	const struct cmd_option_expect *expect;	/* {0} ended, may be NULL */
};

#define GETOPT_VAL_EXTRA	512
#define CMD_HELP_SHOWN		(-1000)

/*
 * cmds/options.c: parse the shared options (and @extra), leaving the
 * devices in argv[*first_arg..].  Returns 0, CMD_HELP_SHOWN, or
 * EXIT_USAGE after printing why.
 */
int cmd_parse_options(const struct cmd_struct *cmd, struct cmd_options *opts,
		      const struct cmd_extra_options *extra, int argc,
		      char **argv, int *first_arg);

/* -q wins over -v: a script asked for errors only */
static inline int cmd_log_level(const struct cmd_options *opts)
{
	if (opts->quiet)
		return LOG_QUIET;
	return opts->verbose ? LOG_VERBOSE : LOG_DEFAULT;
}

/* Print the usual errors; return the exit status */
int cmd_missing_device(const struct cmd_struct *cmd);
struct btrfs_mount_estimate;
int cmd_estimate_mount(struct btrfs_fs_info *fs_info, struct btrfs_mount_estimate *est);
int cmd_out_of_memory(void);

/*
 * cmds/verbose.c: the run's clock starts; close @fs_info, with -v first
 * saying on stderr what the run read (devices, trees, reads, bytes, time).
 */
void cmd_verbose_start(void);
void cmd_close_fs(struct btrfs_fs_info *fs_info);

/* cmds/open.c: open read-only, optionally load block groups; 0 or exit status */
/*
 * What a command reads, each level all of the ones before it
 * (Documentation/btrfs-space.rst, "WHAT EACH COMMAND READS").
 */
enum cmd_reads {
	CMD_READS_SUPER,	/* the superblocks: sizes, checksum, features */
	CMD_READS_CHUNKS,	/* + the chunk tree: chunk map, devices */
	CMD_READS_ROOTS,	/* + the root tree's root items */
	CMD_READS_MOUNT,	/* + the rest of a mount: dev extents, root nodes,
				   the block-group search, root directory, log */
	CMD_READS_BLOCK_GROUPS,	/* + block groups loaded, log replay accounted */
};

int cmd_open_fs(struct btrfs_fs_info *fs_info, const struct cmd_options *opts,
		int nr_paths, char **paths, enum cmd_reads reads);
/* -v: what the open was asked to read, said with the reads at the end */
void cmd_verbose_reads(enum cmd_reads reads);

#endif
