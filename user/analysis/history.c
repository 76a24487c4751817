// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/history.h"

/* One stack's last outstanding byte counts, oldest first. */
struct series {
	uint64_t stack_id;
	uint64_t values[HISTORY_DEPTH];
	unsigned int nr;
	unsigned int seen; /* the report that last saw this stack */
};

struct history {
	struct series *series; /* sorted by stack_id */
	size_t nr;
	size_t cap;
	unsigned int reports;
	double last_time;
	double min_gap;
	struct peak peak;
};

struct history *history__new(double min_gap)
{
	struct history *h = calloc(1, sizeof(struct history));

	if (h)
		h->min_gap = min_gap;
	return h;
}

void history__free(struct history *h)
{
	if (!h)
		return;
	free(h->series);
	free(h->peak.ips);
	free(h);
}

static int series__cmp(const void *key, const void *elem)
{
	uint64_t id = *(const uint64_t *)key;
	const struct series *s = elem;

	return id < s->stack_id ? -1 : id > s->stack_id;
}

static int series_by_id(const void *a, const void *b)
{
	return series__cmp(&((const struct series *)a)->stack_id, b);
}

/* Appended unsorted: history__update sorts once the collection is in. */
static struct series *add_series(struct history *h, uint64_t stack_id)
{
	struct series *s;

	if (h->nr == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 8;

		s = reallocarray(h->series, cap, sizeof(*s));
		if (!s)
			return NULL;
		h->series = s;
		h->cap = cap;
	}
	s = &h->series[h->nr++];
	memset(s, 0, sizeof(*s));
	s->stack_id = stack_id;
	return s;
}

static void series__push(struct series *s, uint64_t value)
{
	if (s->nr == HISTORY_DEPTH) {
		memmove(s->values, s->values + 1, (HISTORY_DEPTH - 1) * sizeof(*s->values));
		s->nr--;
	}
	s->values[s->nr++] = value;
}

/*
 * Growing: rose in at least two thirds of the intervals seen and never
 * fell. Stable: every value within 5% of the largest. At least three
 * reports are needed to say anything.
 */
static enum trend series__trend(const struct series *s)
{
	unsigned int rises = 0, falls = 0;
	uint64_t lo = s->values[0], hi = s->values[0];

	if (s->nr < 3)
		return TREND_NEW;
	for (unsigned int i = 1; i < s->nr; i++) {
		rises += s->values[i] > s->values[i - 1];
		falls += s->values[i] < s->values[i - 1];
		lo = s->values[i] < lo ? s->values[i] : lo;
		hi = s->values[i] > hi ? s->values[i] : hi;
	}
	if (!falls && 3 * rises >= 2 * (s->nr - 1))
		return TREND_GROWING;
	if (hi - lo <= hi / 20)
		return TREND_STABLE;
	if (!rises && falls)
		return TREND_SHRINKING;
	return TREND_VARYING;
}

/* The peak's stacks outlive the profile's collection: their frames are copied. */
static int update_peak(struct history *h, struct profile *p, double time)
{
	const struct profile_totals *t = profile__totals(p);
	struct peak *pk = &h->peak;
	const struct profile_stack *const *top;
	size_t n, nr_ips = 0;
	__u64 *ips;

	if (pk->time && t->outstanding_bytes <= pk->outstanding_bytes)
		return 0;
	n = profile__top(p, PEAK_STACKS, &top);
	for (size_t i = 0; i < n; i++)
		nr_ips += top[i]->nr_ips;
	if (nr_ips > pk->ips_cap) {
		ips = reallocarray(pk->ips, nr_ips, sizeof(*ips));
		if (!ips)
			return -ENOMEM;
		pk->ips = ips;
		pk->ips_cap = nr_ips;
	}
	pk->time = time;
	pk->outstanding_bytes = t->outstanding_bytes;
	pk->outstanding_allocs = t->outstanding_allocs;
	nr_ips = 0;
	for (size_t i = 0; i < n; i++) {
		pk->stacks[i] = *top[i];
		pk->stacks[i].ips = top[i]->nr_ips ? pk->ips + nr_ips : NULL;
		if (top[i]->nr_ips)
			memcpy(pk->ips + nr_ips, top[i]->ips, top[i]->nr_ips * sizeof(*ips));
		nr_ips += top[i]->nr_ips;
	}
	pk->nr_stacks = n;
	return 0;
}

int history__update(struct history *h, struct profile *p, double time)
{
	bool replace = h->reports && time - h->last_time < h->min_gap;
	size_t nr_before = h->nr;
	struct profile_stack *st;
	struct series *s;

	if (!replace) {
		h->reports++;
		h->last_time = time;
	}
	for (size_t i = 0; i < profile__nr_stacks(p); i++) {
		st = profile__stack(p, i);
		/* Only the first nr_before series are sorted; stack ids are unique. */
		s = nr_before
			? bsearch(&st->stack_id, h->series, nr_before, sizeof(*s), series__cmp)
			: NULL;
		if (!s)
			s = add_series(h, st->stack_id);
		if (!s)
			return -ENOMEM;
		/* A stack missing from a report held nothing then. */
		if (s->nr && s->seen + 1 < h->reports)
			series__push(s, 0);
		if (replace && s->seen == h->reports)
			s->nr--;
		st->growth_bytes =
		    s->nr ? (int64_t)(st->stats.outstanding_bytes - s->values[s->nr - 1]) : 0;
		series__push(s, st->stats.outstanding_bytes);
		s->seen = h->reports;
		st->trend = series__trend(s);
	}
	if (h->nr)
		qsort(h->series, h->nr, sizeof(*h->series), series_by_id);
	return update_peak(h, p, time);
}

const struct peak *history__peak(const struct history *h)
{
	return &h->peak;
}

static bool grows_faster(const struct profile_stack *x, const struct profile_stack *y)
{
	if (x->growth_bytes != y->growth_bytes)
		return x->growth_bytes > y->growth_bytes;
	return x->stack_id < y->stack_id;
}

size_t history__growing(struct profile *p, const struct profile_stack **out, size_t max)
{
	const struct profile_stack *st;
	size_t n = 0, j;

	/* Insertion into a short list: max is a handful. */
	for (size_t i = 0; i < profile__nr_stacks(p) && max; i++) {
		st = profile__stack(p, i);
		if (st->trend != TREND_GROWING)
			continue;
		for (j = n; j > 0 && grows_faster(st, out[j - 1]); j--) {
			if (j < max)
				out[j] = out[j - 1];
		}
		if (j < max)
			out[j] = st;
		n += n < max;
	}
	return n;
}
