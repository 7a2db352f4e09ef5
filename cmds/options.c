// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cmds/commands.h"
#include "common/help.h"
#include "common/io-batch.h"
#include "common/messages.h"
#include "common/parse-utils.h"
#include "common/units.h"

enum {
	GETOPT_VAL_FORMAT = 256,
	GETOPT_VAL_SUPER,
	GETOPT_VAL_HELP,
	GETOPT_VAL_IEC,
	GETOPT_VAL_SI,
	GETOPT_VAL_DEGRADED,
	GETOPT_VAL_BG_SEARCH,
	GETOPT_VAL_IO_THREADS,
	GETOPT_VAL_RO_DEVICE,
	GETOPT_VAL_SCAN,
	GETOPT_VAL_VERSION,
};

#define MAX_LONGOPTS	64

static const struct option shared_longopts[] = {
	{ "format", required_argument, NULL, GETOPT_VAL_FORMAT },
	{ "super", required_argument, NULL, GETOPT_VAL_SUPER },
	{ "degraded", no_argument, NULL, GETOPT_VAL_DEGRADED },
	{ "bg-search", required_argument, NULL, GETOPT_VAL_BG_SEARCH },
	{ "io-threads", required_argument, NULL, GETOPT_VAL_IO_THREADS },
	{ "readonly-device", required_argument, NULL, GETOPT_VAL_RO_DEVICE },
	{ "scan", no_argument, NULL, GETOPT_VAL_SCAN },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "version", no_argument, NULL, GETOPT_VAL_VERSION },
	{ "help", no_argument, NULL, GETOPT_VAL_HELP },
	{ "raw", no_argument, NULL, 'b' },
	{ "human-readable", no_argument, NULL, 'h' },
	{ "iec", no_argument, NULL, GETOPT_VAL_IEC },
	{ "si", no_argument, NULL, GETOPT_VAL_SI },
	{ "kbytes", no_argument, NULL, 'k' },
	{ "mbytes", no_argument, NULL, 'm' },
	{ "gbytes", no_argument, NULL, 'g' },
	{ "tbytes", no_argument, NULL, 't' },
};

static int build_longopts(struct option *out, const struct cmd_extra_options *extra)
{
	int n = sizeof(shared_longopts) / sizeof(shared_longopts[0]);
	int i;

	memcpy(out, shared_longopts, sizeof(shared_longopts));
	for (i = 0; extra && extra->longopts && extra->longopts[i].name; i++) {
		if (n + 1 >= MAX_LONGOPTS)
			return -E2BIG;
		out[n++] = extra->longopts[i];
	}
	memset(&out[n], 0, sizeof(out[n]));
	return 0;
}

static int parse_format(const char *arg, enum fmt_mode *mode)
{
	if (!strcmp(arg, "text"))
		*mode = FMT_TEXT;
	else if (!strcmp(arg, "json"))
		*mode = FMT_JSON;
	else if (!strcmp(arg, "openmetrics"))
		*mode = FMT_OPENMETRICS;
	else if (!strcmp(arg, "nagios"))
		*mode = FMT_NAGIOS;
	else
		return -EINVAL;
	return 0;
}

/* Unit options map onto the option strings units_parse_option() knows */
static const char *unit_option_name(int c)
{
	switch (c) {
	case 'b': return "-b";
	case 'h': return "-h";
	case 'H': return "-H";
	case GETOPT_VAL_IEC: return "--iec";
	case GETOPT_VAL_SI: return "--si";
	case 'k': return "-k";
	case 'm': return "-m";
	case 'g': return "-g";
	case 't': return "-t";
	default: return NULL;
	}
}

static int usage_error(const struct cmd_struct *cmd, const char *fmt, const char *arg)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, arg);
	error("%s", msg);
	if (cmd && cmd->token[0])
		fprintf(stderr, "Try 'btrfs-space %s --help' for more information.\n",
			cmd->token);
	else
		fprintf(stderr, "Try 'btrfs-space --help' for more information.\n");
	return EXIT_USAGE;
}

/* The long name of option @c, as the user may have typed it */
static const char *option_name(const struct option *longopts, int c)
{
	for (; longopts->name; longopts++)
		if (longopts->val == c)
			return longopts->name;
	return "?";
}

static const char *option_expect(const struct cmd_extra_options *extra, int c)
{
	const struct cmd_option_expect *e;

	for (e = extra->expect; e && e->val; e++)
		if (e->val == c)
			return e->expect;
	return NULL;
}

/* "--clamp: invalid value '9', expect 1 to 8" */
static int bad_value(const struct cmd_struct *cmd, const struct option *longopts,
		     const struct cmd_extra_options *extra, int c, const char *arg)
{
	const char *expect = option_expect(extra, c);
	char what[128];

	snprintf(what, sizeof(what), "--%s: invalid value '%%s'%s%s",
		 option_name(longopts, c), expect ? ", expect " : "",
		 expect ? expect : "");
	return usage_error(cmd, what, arg ? arg : "");
}

static int print_version(void)
{
	printf("btrfs-space %s\n", BTRFS_SPACE_VERSION);
	return CMD_HELP_SHOWN;
}

static int parse_super(const char *arg, int *mirror)
{
	char *end;
	long val = strtol(arg, &end, 10);

	if (*end || end == arg || val < 0 || val > 2)
		return -EINVAL;
	*mirror = val;
	return 0;
}

static int parse_threads(const char *arg, u32 *threads)
{
	char *end;
	long val = strtol(arg, &end, 10);

	if (*end || end == arg || val < 1 || val > IO_BATCH_MAX_THREADS)
		return -EINVAL;
	*threads = val;
	return 0;
}

static int add_readonly_device(const char *arg, struct cmd_options *opts)
{
	u64 devid;

	if (parse_u64(arg, &devid) || !devid ||
	    opts->nr_readonly_devids >= (int)(sizeof(opts->readonly_devids) /
					      sizeof(opts->readonly_devids[0])))
		return -EINVAL;
	opts->readonly_devids[opts->nr_readonly_devids++] = devid;
	return 0;
}

int cmd_parse_options(const struct cmd_struct *cmd, struct cmd_options *opts,
		      const struct cmd_extra_options *extra, int argc,
		      char **argv, int *first_arg)
{
	struct option longopts[MAX_LONGOPTS];
	int c;

	if (build_longopts(longopts, extra))
		return EXIT_USAGE;
	/* 0, not 1: GNU getopt then also forgets the first call's ordering mode */
	optind = 0;
	opterr = 0;
	/*
	 * Before the command, stop at its name; after it, options may come
	 * before or after the devices, as btrfs-progs takes them ("--" ends
	 * the options).
	 */
	while ((c = getopt_long(argc, argv, cmd->token[0] ? ":bhHkmgtvq" : "+:bhHkmgtvq",
				longopts, NULL)) != -1) {
		const char *unit = unit_option_name(c);

		if (unit) {
			units_parse_option(unit, &opts->units);
		} else if (c == GETOPT_VAL_BG_SEARCH) {
			if (strcmp(optarg, "pinpoint") && strcmp(optarg, "scan"))
				return usage_error(cmd, "--bg-search: invalid value '%s', expect pinpoint or scan", optarg);
			opts->bg_search_scan = !strcmp(optarg, "scan");
		} else if (c == GETOPT_VAL_IO_THREADS) {
			if (parse_threads(optarg, &opts->io_threads))
				return usage_error(cmd, "--io-threads: invalid value '%s', expect 1 to 256", optarg);
		} else if (c == GETOPT_VAL_SCAN) {
			opts->scan_devices = true;
		} else if (c == GETOPT_VAL_RO_DEVICE) {
			if (add_readonly_device(optarg, opts))
				return usage_error(cmd, "--readonly-device: invalid value '%s', expect a devid (1 or more; at most 64 devices)", optarg);
		} else if (c == GETOPT_VAL_DEGRADED) {
			opts->allow_degraded = true;
		} else if (c == 'v') {
			opts->verbose++;
		} else if (c == 'q') {
			opts->quiet = true;
		} else if (c == GETOPT_VAL_VERSION) {
			return print_version();
		} else if (c == GETOPT_VAL_FORMAT) {
			if (parse_format(optarg, &opts->format))
				return usage_error(cmd, "--format: invalid value '%s', expect text, json, openmetrics or nagios", optarg);
		} else if (c == GETOPT_VAL_SUPER) {
			if (parse_super(optarg, &opts->super_mirror))
				return usage_error(cmd, "--super: invalid value '%s', expect 0, 1 or 2", optarg);
		} else if (c == GETOPT_VAL_HELP) {
			if (cmd->token[0])
				usage_print(stdout, cmd->usagestr);
			else
				usage_print_full(stdout, cmd->usagestr);
			return CMD_HELP_SHOWN;
		} else if (c >= GETOPT_VAL_EXTRA && extra && extra->handle) {
			if (extra->handle(c, optarg, extra->ctx))
				return bad_value(cmd, longopts, extra, c, optarg);
		} else if (c == ':') {
			return usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		} else if (c == '?' && optopt) {
			char opt[2] = { (char)optopt, 0 };

			return usage_error(cmd, "unrecognized option '-%s'", opt);
		} else {
			return usage_error(cmd, "unrecognized option '%s'", argv[optind - 1]);
		}
	}
	*first_arg = optind;
	return 0;
}
