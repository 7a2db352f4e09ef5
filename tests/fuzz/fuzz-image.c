// SPDX-License-Identifier: GPL-2.0
/*
 * Whole image: the input is a BFZ image (fuzz-common.h), by default one of
 * the templates with its metadata mutated.  Checksums are fixed up after
 * mutation (unless the header says not to), then the inspect pipeline runs
 * on it.  The custom mutator keeps the record structure intact and
 * mutates small windows inside the pages, mostly near the start of a block
 * (header, item table, keys) and at the end of a page (item data).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/fuzz/fuzz-common.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

static void dump_seeds(const char *dir, u32 t)
{
	struct fz_image img;
	size_t size;
	u8 *bfz;

	fz_clone(&img, fz_template(t));
	bfz = fz_serialize(&img, &size);
	fz_write_template_seed(dir, t, bfz, size, "bfz");
	/* the same image for inspect, then csum-delete --top and --file */
	((struct bfz_head *)bfz)->flags = FZ_CSUM_DELETE | FZ_CSUM_FILE;
	fz_write_template_seed(dir, t, bfz, size, "csum-delete.bfz");
	/* and the forecast what-ifs, the relocation model under them */
	((struct bfz_head *)bfz)->flags = FZ_FORECAST;
	fz_write_template_seed(dir, t, bfz, size, "forecast.bfz");
	free(bfz);
	fz_free(&img);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_dump_each_template(dump_seeds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_image img;

	if (fz_parse(data, size, &img)) {
		fz_free(&img);
		return -1;
	}
	fz_fixup(&img);
	fz_run(&img);
	fz_free(&img);
	return 0;
}

/* Where the records' data lie in a serialized BFZ, without copying */
struct span {
	size_t start;
	size_t len;
};

static size_t find_spans(const u8 *data, size_t size, struct span *spans, size_t max)
{
	size_t pos = sizeof(struct bfz_head), nr = 0;

	while (size - pos >= sizeof(struct bfz_rec) && nr < max) {
		const struct bfz_rec *rec = (const void *)(data + pos);
		u32 npages = fz_get32(&rec->npages);
		u64 len;

		/* as fz_parse() reads it */
		if (npages > BFZ_MAX_REC_PAGES)
			npages = BFZ_MAX_REC_PAGES;
		len = (u64)npages * BFZ_PAGE;

		pos += sizeof(*rec);
		if (len > size - pos)
			len = size - pos;
		if (!len)
			break;
		spans[nr].start = pos;
		spans[nr].len = len;
		nr++;
		pos += len;
	}
	return nr;
}

/* Mutate @len bytes at @p in place, keeping the length */
static void mutate_window(u8 *p, size_t len)
{
	u8 tmp[512];

	if (len > sizeof(tmp))
		len = sizeof(tmp);
	memcpy(tmp, p, len);
	LLVMFuzzerMutate(tmp, len, len);
	memcpy(p, tmp, len);
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	struct span spans[1024];
	size_t nr, rounds, r;

	srand(seed);
	if (size < sizeof(struct bfz_head) || memcmp(data, BFZ_MAGIC, 4))
		return LLVMFuzzerMutate(data, size, max_size);
	nr = find_spans(data, size, spans, 1024);
	rounds = 1 + rand() % 3;
	for (r = 0; r < rounds; r++) {
		int what = rand() % 100;
		const struct span *s;
		size_t page, off, len;

		if (!nr || what < 3) {
			/* flags, mirror, device count and sizes */
			mutate_window(data + 4, sizeof(struct bfz_head) - 4);
			continue;
		}
		s = &spans[rand() % nr];
		page = s->start + (size_t)(rand() % ((s->len + BFZ_PAGE - 1) / BFZ_PAGE)) * BFZ_PAGE;
		if (what < 6) {
			/* copy a page over another: duplicated blocks, cycles */
			const struct span *from = &spans[rand() % nr];
			size_t src = from->start +
				(size_t)(rand() % ((from->len + BFZ_PAGE - 1) / BFZ_PAGE)) * BFZ_PAGE;
			size_t n = BFZ_PAGE;

			if (n > s->start + s->len - page)
				n = s->start + s->len - page;
			if (n > from->start + from->len - src)
				n = from->start + from->len - src;
			/* keep the csum area: the header after it says what it is */
			memmove(data + page + 32, data + src + 32, n > 32 ? n - 32 : 0);
			continue;
		}
		if (what < 50)
			off = 32 + rand() % 480;		/* header, item table, key ptrs */
		else if (what < 70)
			off = BFZ_PAGE - 1 - rand() % 1024;	/* item data, from the end */
		else
			off = rand() % BFZ_PAGE;
		len = 1 + rand() % (rand() % 8 ? 16 : 128);
		if (page + off >= s->start + s->len)
			continue;
		if (len > s->start + s->len - page - off)
			len = s->start + s->len - page - off;
		mutate_window(data + page + off, len);
	}
	return size;
}
