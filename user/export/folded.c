// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Folded stacks, the input of flamegraph.pl, inferno and speedscope: one
 * line per stack, "root;caller;...;allocating_function WEIGHT".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "export/exporters.h"

struct folded {
	bool count; /* weight by outstanding blocks instead of bytes */
	char *text; /* the lines of the last report; NULL before any */
	size_t len;
};

/* One line being made: its stack, then, once merged, the whole line. */
struct folded_line {
	char *str;
	uint64_t weight;
};

static void *folded_new(bool count)
{
	struct folded *fo = calloc(1, sizeof(*fo));

	if (fo)
		fo->count = count;
	return fo;
}

void *folded_bytes_new(void)
{
	return folded_new(false);
}

void *folded_count_new(void)
{
	return folded_new(true);
}

static void folded_free(void *state)
{
	struct folded *fo = state;

	if (!fo)
		return;
	free(fo->text);
	free(fo);
}

/* ';' separates frames and a newline ends the stack: no name may hold them. */
static void folded_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' || (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

/*
 * The function; else where the address is, for addr2line. "_[i]" marks an
 * inlined call as flamegraph.pl does, which colours it apart.
 */
static void folded_frame(FILE *f, const struct frame_info *fr)
{
	if (fr->function) {
		folded_name(f, fr->function);
	} else if (fr->module) {
		folded_name(f, fr->module);
		fprintf(f, "+0x%" PRIx64, fr->offset);
	} else {
		fprintf(f, "0x%" PRIx64, fr->addr);
	}
	if (fr->inlined)
		fputs("_[i]", f);
}

/* The frames, root first. NULL when out of memory. */
static char *folded_stack(const struct report_stack *s)
{
	char *str = NULL;
	size_t len, i;
	FILE *f;

	f = open_memstream(&str, &len);
	if (!f)
		return NULL;
	/* The allocations whose stack was lost still weigh. */
	if (!s->nr_frames)
		fputs("[stack unknown]", f);
	for (i = s->nr_frames; i-- > 0;) {
		folded_frame(f, &s->frames[i]);
		if (i)
			fputc(';', f);
	}
	if (fclose(f)) {
		free(str);
		return NULL;
	}
	return str;
}

static int line_cmp(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;

	return strcmp(x->str, y->str);
}

static void lines__free(struct folded_line *lines, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(lines[i].str);
	free(lines);
}

/* Sum the weights of stacks that fold the same; returns how many are left. */
static size_t lines__merge(struct folded_line *lines, size_t nr)
{
	size_t i, n = 0;

	if (nr > 1)
		qsort(lines, nr, sizeof(*lines), line_cmp);
	for (i = 0; i < nr; i++) {
		if (n && !strcmp(lines[n - 1].str, lines[i].str)) {
			lines[n - 1].weight += lines[i].weight;
			free(lines[i].str);
		} else {
			lines[n++] = lines[i];
		}
	}
	return n;
}

/*
 * The stack gets its weight. Lines are then sorted again as a whole: a
 * name holding a space can order a line apart from its stack.
 */
static int lines__finish(struct folded_line *lines, size_t nr)
{
	size_t i;
	char *line;

	for (i = 0; i < nr; i++) {
		if (asprintf(&line, "%s %" PRIu64 "\n", lines[i].str, lines[i].weight) < 0)
			return -ENOMEM;
		free(lines[i].str);
		lines[i].str = line;
	}
	if (nr > 1)
		qsort(lines, nr, sizeof(*lines), line_cmp);
	return 0;
}

static int lines__join(const struct folded_line *lines, size_t nr, char **text, size_t *len)
{
	size_t i;
	FILE *f;

	*text = NULL;
	f = open_memstream(text, len);
	if (!f)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		fputs(lines[i].str, f);
	if (fclose(f)) {
		free(*text);
		return -ENOMEM;
	}
	return 0;
}

static int folded_report(void *state, const struct report *r)
{
	struct folded *fo = state;
	struct folded_line *lines;
	size_t i, nr = 0, len;
	uint64_t weight;
	char *text;
	int err = -ENOMEM;

	lines = calloc(r->nr_stacks ? r->nr_stacks : 1, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (i = 0; i < r->nr_stacks; i++) {
		weight =
		    fo->count ? r->stacks[i].outstanding_allocs : r->stacks[i].outstanding_bytes;
		if (!weight)
			continue;
		lines[nr].str = folded_stack(&r->stacks[i]);
		if (!lines[nr].str)
			goto out;
		lines[nr++].weight = weight;
	}
	nr = lines__merge(lines, nr);
	err = lines__finish(lines, nr);
	if (!err)
		err = lines__join(lines, nr, &text, &len);
	if (!err) {
		free(fo->text);
		fo->text = text;
		fo->len = len;
	}
out:
	lines__free(lines, nr);
	return err;
}

static int folded_finish(void *state, FILE *f)
{
	struct folded *fo = state;

	if (fo->len)
		fwrite(fo->text, 1, fo->len, f);
	return 0;
}

const struct export_ops folded_ops = {
    .by_process = true,
    .report = folded_report,
    .finish = folded_finish,
    .free = folded_free,
};
