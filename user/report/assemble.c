// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/assemble.h"

/*
 * Every list (top, growing, per thread, peak) is cut from one array of
 * stacks, sized for the most the lists can take, so that a list's pointer
 * into it never moves.
 */
struct report_parts {
	const struct assemble_opts *opts;
	const struct assemble_source *src;
	struct report_stack *stacks;
	size_t nr;
	struct report_thread threads[REPORT_MAX_THREADS];
	char thread_names[REPORT_MAX_THREADS][32];
	struct report_peak peak;
	struct report_leak_check leak_check;
	uint8_t (*data)[REPORT_MAX_DATA];
};

/* The first verdict of stack @id or later, by binary search. */
static size_t first_verdict(const struct assemble_leaks *l, uint64_t id)
{
	size_t lo = 0, hi = l->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->verdicts[mid].stack_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Stack @id's blocks of each class into @bytes and @allocs. */
static void sum_classes(const struct assemble_leaks *l, uint64_t id, uint64_t *bytes,
			uint64_t *allocs)
{
	for (size_t i = first_verdict(l, id); i < l->nr && l->verdicts[i].stack_id == id; i++) {
		bytes[l->verdicts[i].cls] += l->verdicts[i].size;
		allocs[l->verdicts[i].cls]++;
	}
}

/* The frames of @st in an array of their own, or NULL (and 0) for none. */
static int own_frames(struct report_parts *rp, const struct profile_stack *st,
		      struct report_stack *out)
{
	struct frame_info *frames, *fit;
	size_t n;

	out->frames = NULL;
	out->nr_frames = 0;
	if (!st->nr_ips)
		return 0;
	frames = malloc((size_t)st->nr_ips * REPORT_MAX_INLINE * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	n = rp->src->frames(rp->src->ctx, st->ips, st->nr_ips, frames);
	fit = n ? realloc(frames, n * sizeof(*frames)) : NULL;
	if (!fit)
		free(frames);
	out->frames = fit;
	out->nr_frames = fit ? n : 0;
	return 0;
}

/* @classify: the stack's own verdicts apply (not a thread's share, not the peak's past). */
static int add_stack(struct report_parts *rp, const struct profile_stack *st, bool classify)
{
	struct report_stack *out = &rp->stacks[rp->nr];
	const struct assemble_leaks *l = rp->opts->leaks;

	*out = (struct report_stack){
	    .stack_id = st->stack_id,
	    .outstanding_bytes = st->stats.outstanding_bytes,
	    .outstanding_allocs = st->stats.outstanding_allocs,
	    .allocs = st->stats.allocs,
	    .alloc_bytes = st->stats.alloc_bytes,
	    .stderr_bytes = llround(sqrt(st->outstanding_var)),
	    .growth_bytes = st->growth_bytes,
	    .trend = trend_name(st->trend),
	    .stack_flags = st->flags,
	    /* A check that failed has no classes to show, not four zeros. */
	    .classified = classify && l && !l->check.error,
	};
	if (out->classified)
		sum_classes(l, st->stack_id, out->class_bytes, out->class_allocs);
	rp->nr++;
	return own_frames(rp, st, out);
}

/* --show-data: the first bytes of the block top stack @i kept as a sample. */
static void add_data(struct report_parts *rp, const struct profile_stack *st, size_t i)
{
	struct report_stack *out = &rp->stacks[i];
	size_t len = rp->opts->show_data;
	long n;

	if (!st->sample_addr || !rp->data)
		return;
	if (len > st->sample_size)
		len = st->sample_size;
	n = rp->src->read_mem(rp->src->ctx, st->sample_addr, rp->data[i], len);
	if (n <= 0)
		return;
	out->data_addr = st->sample_addr;
	out->data = rp->data[i];
	out->data_len = n;
}

/* Thread @th's part of each of its stacks, the thread's share, not the stack's. */
static int add_thread_stacks(struct report_parts *rp, struct profile *prof,
			     const struct profile_thread *th)
{
	int err = 0;

	for (size_t j = 0; j < th->nr_stacks && j < REPORT_THREAD_STACKS && !err; j++) {
		err = add_stack(rp, profile__stack(prof, th->stacks[j].index), false);
		rp->stacks[rp->nr - 1].outstanding_bytes = th->stacks[j].outstanding_bytes;
		rp->stacks[rp->nr - 1].outstanding_allocs = th->stacks[j].outstanding_allocs;
	}
	return err;
}

static int add_threads(struct report_parts *rp, struct profile *prof, struct report *r)
{
	const struct profile_thread *th;
	size_t n = profile__threads(prof, &th);
	int err = 0;

	for (size_t i = 0; i < n && i < REPORT_MAX_THREADS && !err; i++) {
		size_t first = rp->nr;

		rp->src->thread_name(rp->src->ctx, th[i].tid, rp->thread_names[i],
				     sizeof(rp->thread_names[i]));
		err = add_thread_stacks(rp, prof, &th[i]);
		rp->threads[i] = (struct report_thread){
		    .tid = th[i].tid,
		    .comm = rp->thread_names[i][0] ? rp->thread_names[i] : NULL,
		    .outstanding_bytes = th[i].outstanding_bytes,
		    .outstanding_allocs = th[i].outstanding_allocs,
		    .nr_stacks = rp->nr - first,
		    .stacks = &rp->stacks[first],
		};
		r->nr_threads++;
	}
	r->threads = rp->threads;
	return err;
}

static int add_peak(struct report_parts *rp, const struct history *h, struct report *r)
{
	const struct peak *pk = history__peak(h);
	size_t first = rp->nr;
	int err = 0;

	if (!pk->time)
		return 0;
	for (size_t i = 0; i < pk->nr_stacks && !err; i++)
		err = add_stack(rp, &pk->stacks[i], false);
	rp->peak = (struct report_peak){
	    .time = pk->time,
	    .outstanding_bytes = pk->outstanding_bytes,
	    .outstanding_allocs = pk->outstanding_allocs,
	    .nr_stacks = rp->nr - first,
	    .stacks = &rp->stacks[first],
	};
	r->peak = &rp->peak;
	return err;
}

static int add_lists(struct report_parts *rp, struct profile *prof, const struct history *h,
		     const struct profile_stack *const *top, struct report *r)
{
	const struct assemble_opts *o = rp->opts;
	const struct profile_stack *growing[REPORT_MAX_GROWING];
	int err = 0;

	for (size_t i = 0; i < r->nr_stacks && !err; i++) {
		err = add_stack(rp, top[i], true);
		if (!err && (!o->data_top || i < o->data_top))
			add_data(rp, top[i], i);
	}
	r->nr_growing = h ? history__growing(prof, growing, REPORT_MAX_GROWING) : 0;
	r->growing = &rp->stacks[rp->nr];
	for (size_t i = 0; i < r->nr_growing && !err; i++)
		err = add_stack(rp, growing[i], true);
	if (!err && o->threads)
		err = add_threads(rp, prof, r);
	if (!err && o->peak && h)
		err = add_peak(rp, h, r);
	r->stacks = rp->stacks;
	return err;
}

/*
 * How many stacks add_lists() can add, no more than the profile has: fork
 * churn assembles a report for each of thousands of small processes.
 */
static size_t parts_room(struct profile *prof, const struct history *h,
			 const struct assemble_opts *o, size_t nr_top)
{
	size_t nr = profile__nr_stacks(prof);
	size_t room = nr_top + (nr < REPORT_MAX_GROWING ? nr : REPORT_MAX_GROWING);
	const struct profile_thread *th;
	size_t n = o->threads ? profile__threads(prof, &th) : 0;

	for (size_t i = 0; i < n && i < REPORT_MAX_THREADS; i++)
		room +=
		    th[i].nr_stacks < REPORT_THREAD_STACKS ? th[i].nr_stacks : REPORT_THREAD_STACKS;
	if (o->peak && h)
		room += history__peak(h)->nr_stacks;
	return room;
}

static struct report_parts *parts_new(const struct assemble_opts *o,
				      const struct assemble_source *src, size_t nr_top, size_t room)
{
	struct report_parts *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return NULL;
	rp->opts = o;
	rp->src = src;
	rp->stacks = calloc(room + 1, sizeof(*rp->stacks)); /* calloc(0) may be NULL */
	if (o->show_data)
		rp->data = calloc(o->data_top ? o->data_top : nr_top + 1, sizeof(*rp->data));
	if (!rp->stacks || (o->show_data && !rp->data)) {
		report_parts__free(rp);
		errno = ENOMEM;
		return NULL;
	}
	return rp;
}

/* The report's class totals: every verdict, listed or not. */
static void add_leak_check(struct report_parts *rp, struct report *r)
{
	const struct assemble_leaks *l = rp->opts->leaks;

	rp->leak_check = l->check;
	memset(rp->leak_check.class_bytes, 0, sizeof(rp->leak_check.class_bytes));
	memset(rp->leak_check.class_allocs, 0, sizeof(rp->leak_check.class_allocs));
	memset(rp->leak_check.heur_bytes, 0, sizeof(rp->leak_check.heur_bytes));
	memset(rp->leak_check.heur_allocs, 0, sizeof(rp->leak_check.heur_allocs));
	for (size_t i = 0; i < l->nr; i++) {
		rp->leak_check.class_bytes[l->verdicts[i].cls] += l->verdicts[i].size;
		rp->leak_check.class_allocs[l->verdicts[i].cls]++;
		rp->leak_check.heur_bytes[l->verdicts[i].heur] += l->verdicts[i].size;
		rp->leak_check.heur_allocs[l->verdicts[i].heur]++;
	}
	r->leak_check = &rp->leak_check;
}

struct ranked {
	const struct profile_stack *st;
	uint64_t definite;
	size_t rank;
};

static int by_definite(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->definite != y->definite)
		return x->definite > y->definite ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/*
 * Every holding stack, those with definitely lost bytes first (the most
 * first), the rest in @prof's order; cut to @top. Into @out (room for all).
 */
static size_t rank_by_loss(struct profile *prof, const struct assemble_leaks *l, size_t top,
			   struct ranked *rk, const struct profile_stack **out)
{
	const struct profile_stack *const *all;
	size_t n = profile__top(prof, 0, &all);

	for (size_t i = 0; i < n; i++) {
		uint64_t bytes[LEAK_CLASSES] = {}, allocs[LEAK_CLASSES] = {};

		sum_classes(l, all[i]->stack_id, bytes, allocs);
		rk[i] = (struct ranked){all[i], bytes[LEAK_DEFINITE], i};
	}
	qsort(rk, n, sizeof(*rk), by_definite);
	if (top && n > top)
		n = top;
	for (size_t i = 0; i < n; i++)
		out[i] = rk[i].st;
	return n;
}

/* rank_by_loss into an array of its own (NULL: errno), its length in *@n. */
static const struct profile_stack **ranked_top(struct profile *prof, const struct assemble_opts *o,
					       size_t *n)
{
	size_t room = profile__nr_stacks(prof) + 1;
	struct ranked *rk = calloc(room, sizeof(*rk));
	const struct profile_stack **out = calloc(room, sizeof(*out));

	if (rk && out)
		*n = rank_by_loss(prof, o->leaks, o->top, rk, out);
	free(rk);
	if (!rk || !out) {
		free(out);
		errno = ENOMEM;
		return NULL;
	}
	return out;
}

struct report_parts *report_parts__assemble(struct profile *prof, const struct history *h,
					    const struct assemble_opts *o,
					    const struct assemble_source *src, struct report *r)
{
	const struct profile_stack *const *top;
	const struct profile_stack **ranked = NULL;
	struct report_parts *rp;
	int err;

	r->nr_stacks = profile__top(prof, o->top, &top);
	r->nr_holding = profile__nr_holding(prof);
	r->totals = profile__totals(prof);
	if (o->leaks) {
		ranked = ranked_top(prof, o, &r->nr_stacks);
		if (!ranked)
			return NULL;
		top = ranked;
	}
	rp = parts_new(o, src, r->nr_stacks, parts_room(prof, h, o, r->nr_stacks));
	if (!rp) {
		free(ranked);
		return NULL;
	}
	if (o->leaks)
		add_leak_check(rp, r);
	err = add_lists(rp, prof, h, top, r);
	free(ranked);
	if (err) {
		report_parts__free(rp);
		errno = -err;
		return NULL;
	}
	return rp;
}

void report_parts__free(struct report_parts *rp)
{
	if (!rp)
		return;
	/* The frames were allocated here, const only to the report's readers. */
	for (size_t i = 0; i < rp->nr; i++)
		free((void *)rp->stacks[i].frames);
	free(rp->stacks);
	free(rp->data);
	free(rp);
}
