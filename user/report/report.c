// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The walk both formats share: report_writer__report() and
 * report_writer__big_alloc() visit a report's or an alert's parts in one
 * order and the format's ops (text.c, json.c) only print them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "lib/util.h"
#include "report/format.h"

const enum leak_class report_class_order[LEAK_CLASSES] = {
    LEAK_DEFINITE,
    LEAK_INDIRECT,
    LEAK_POSSIBLE,
    LEAK_REACHABLE,
};

struct report_writer {
	const struct report_ops *ops;
	FILE *out;
	bool resident; /* the report is --growth's: pages, not blocks */
};

static const struct report_ops *const ops_by_format[] = {
    [FORMAT_TEXT] = &report_text_ops,
    [FORMAT_JSON] = &report_json_ops,
};

struct report_writer *report_writer__new(enum report_format format, FILE *out)
{
	struct report_writer *w;

	if ((unsigned int)format >= ARRAY_SIZE(ops_by_format) || !out) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->ops = ops_by_format[format];
	w->out = out;
	return w;
}

void report_writer__free(struct report_writer *w)
{
	free(w);
}

static void report_writer__frames(struct report_writer *w, const struct frame_info *frames,
				  size_t nr, uint32_t stack_flags)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		if (i)
			fputs(w->ops->separator, w->out);
		w->ops->frame(w->out, &frames[i], i);
	}
	w->ops->frames_end(w->out, nr, stack_flags);
}

/*
 * Ends an object and pushes it out at once: a reader may wait on a pipe.
 * stdio keeps the first write error in the stream's flag and in errno,
 * which the callers clear before they start.
 */
static int report_writer__end(struct report_writer *w)
{
	fputc('\n', w->out);
	if (fflush(w->out) == 0 && !ferror(w->out))
		return 0;
	return errno ? -errno : -EIO;
}

/* A list of stacks: full for JSON, one line each for text's secondary lists. */
static void report_writer__stacks(struct report_writer *w, const struct report_stack *stacks,
				  size_t n, bool brief)
{
	for (size_t i = 0; i < n; i++) {
		if (brief && w->ops->brief_stack) {
			w->ops->brief_stack(w->out, &stacks[i]);
			continue;
		}
		if (i)
			fputs(w->ops->separator, w->out);
		w->ops->stack_begin(w->out, &stacks[i], w->resident);
		report_writer__frames(w, stacks[i].frames, stacks[i].nr_frames,
				      stacks[i].stack_flags);
	}
}

static void report_writer__threads(struct report_writer *w, const struct report *r)
{
	w->ops->list_begin(w->out, "threads", r->nr_threads);
	for (size_t i = 0; i < r->nr_threads; i++) {
		if (i)
			fputs(w->ops->separator, w->out);
		w->ops->thread_begin(w->out, &r->threads[i]);
		w->ops->list_begin(w->out, "stacks", r->threads[i].nr_stacks);
		report_writer__stacks(w, r->threads[i].stacks, r->threads[i].nr_stacks, true);
		w->ops->list_end(w->out);
		w->ops->object_end(w->out);
	}
	w->ops->list_end(w->out);
}

static void report_writer__peak(struct report_writer *w, const struct report_peak *pk)
{
	w->ops->peak_begin(w->out, pk, w->resident);
	w->ops->list_begin(w->out, "stacks", pk->nr_stacks);
	report_writer__stacks(w, pk->stacks, pk->nr_stacks, true);
	w->ops->list_end(w->out);
	w->ops->object_end(w->out);
}

/* One process's stacks and lists. */
static void report_writer__body(struct report_writer *w, const struct report *r)
{
	report_writer__stacks(w, r->stacks, r->nr_stacks, false);
	w->ops->stacks_end(w->out, r);
	if (r->nr_growing) {
		w->ops->list_begin(w->out, "growing", r->nr_growing);
		report_writer__stacks(w, r->growing, r->nr_growing, true);
		w->ops->list_end(w->out);
	}
	if (r->nr_threads)
		report_writer__threads(w, r);
	if (r->peak)
		report_writer__peak(w, r->peak);
}

bool report__sampled(const struct report *r)
{
	return r->growth && r->totals && r->totals->counters[CNT_PAGES_SAMPLED_OUT];
}

uint64_t report__stderr_bytes(const struct report *r)
{
	return r->totals ? llround(sqrt(r->totals->outstanding_var)) : 0;
}

int report_writer__report(struct report_writer *w, const struct report *r)
{
	errno = 0;
	w->resident = r->growth;
	w->ops->report_begin(w->out, r);
	if (!r->per_process)
		report_writer__body(w, r);
	for (size_t i = 0; i < r->nr_procs; i++) {
		if (i)
			fputs(w->ops->separator, w->out);
		w->ops->proc_begin(w->out, &r->procs[i]);
		report_writer__body(w, &r->procs[i]);
		w->ops->proc_end(w->out, &r->procs[i]);
	}
	w->ops->report_end(w->out, r);
	return report_writer__end(w);
}

int report_writer__big_alloc(struct report_writer *w, const struct big_alloc *a)
{
	errno = 0;
	w->ops->big_alloc_begin(w->out, a);
	report_writer__frames(w, a->frames, a->nr_frames, a->stack_flags);
	return report_writer__end(w);
}
