// SPDX-License-Identifier: GPL-2.0
/*
 * parse-trace: the replay's trace reader and event decoder alone
 * (common/trace-parse.c, kernel-shared/replay.c): every line of the input
 * read by trace_read_event() and fed to btrfs_replay_event(), as
 * "btrfs-space replay" does, then btrfs_replay_finish() and the parts'
 * event checks.  The static state the events do not carry (profile, sizes,
 * csum size, free-space tree) is set as an image would, so every part
 * decodes; a capture marker in the input adds only what is unset.  An
 * error must be one line naming its line.
 * Input: tracefs text.  Seeds: tests/fuzz/corpus/parse-trace (heads of the
 * recorded traces of tests/fixtures/replay-*).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel-shared/replay.h"
#include "tests/fuzz/parse-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* no templates: the committed corpus is the seed set */
	if (fz_dump_dir())
		exit(0);
	return 0;
}

static void check_err(const char *err)
{
	if (!err[0] || strchr(err, '\n') || strncmp(err, "line ", 5)) {
		fprintf(stderr, "fuzz: error message is not one line naming its line: '%s'\n", err);
		abort();
	}
}

static void setup(struct btrfs_replay *r)
{
	u32 k;

	r->st.have_profile = true;
	r->st.profile_copies = 2;
	r->st.have_total_rw = true;
	r->st.total_rw_bytes = 1ULL << 30;
	r->st.sectorsize = 4096;
	r->st.nodesize = 16384;
	r->st.csum_size = 4;
	r->st.free_space_tree = 1;
	r->st.nr_cpu_ids = 2;
	for (k = 0; k < BTRFS_NR_REPLAY_KERNELS; k++)
		btrfs_kernel_model(btrfs_replay_kernels[k], &r->kernels[k]);
	r->nr_kernels = BTRFS_NR_REPLAY_KERNELS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct btrfs_replay r;
	struct trace_reader rd;
	struct trace_event ev;
	char missing[256];
	FILE *fp;
	int ret, part;

	if (!size)
		return 0;
	fp = fmemopen((void *)data, size, "r");
	if (!fp)
		abort();
	if (btrfs_replay_init(&r))
		abort();
	setup(&r);
	trace_reader_init(&rd, fp);
	while ((ret = trace_read_event(&rd, &ev)) > 0) {
		ret = btrfs_replay_event(&r, &ev);
		if (ret) {
			check_err(r.err);
			break;
		}
	}
	if (ret < 0 && !r.err[0])
		check_err(rd.err);
	if (!ret) {
		btrfs_replay_finish(&r);
		for (part = 1; part <= 4; part++)
			btrfs_replay_missing(&r, part, missing, sizeof(missing));
	}
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: %s%s\n", ret ? "error: " : "read fine",
			ret ? (r.err[0] ? r.err : rd.err) : "");
	btrfs_replay_release(&r);
	fclose(fp);
	return 0;
}
