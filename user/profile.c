// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profile.h"

struct profile {
	struct profile_stack *stacks;
	size_t nr;
	size_t cap;
	/* profile__top()'s answer; pointers into stacks[], sized like it. */
	const struct profile_stack **holding;
	size_t nr_holding;
	struct profile_totals totals;
};

static const char *const counter_names[CNT_MAX] = {
	[CNT_ALLOCS] = "allocs",
	[CNT_FREES] = "frees",
	[CNT_UNTRACKED_FREES] = "untracked_frees",
	[CNT_LOST_ALLOCS] = "lost_allocs",
	[CNT_LOST_STATS] = "lost_stats",
	[CNT_LOST_INFLIGHT] = "lost_inflight",
	[CNT_LOST_STACKS] = "lost_stacks",
	[CNT_STACK_ERRORS] = "stack_errors",
	[CNT_LOST_EVENTS] = "lost_events",
};

const char *counter_name(enum counter c)
{
	return (unsigned int)c < CNT_MAX ? counter_names[c] : NULL;
}

struct profile *profile__new(void)
{
	return calloc(1, sizeof(struct profile));
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	free(p->stacks);
	free(p->holding);
	free(p);
}

void profile__clear(struct profile *p)
{
	p->nr = 0;
	p->nr_holding = 0;
	p->totals.outstanding_bytes = 0;
	p->totals.outstanding_allocs = 0;
}

/* Grows both arrays together so that profile__top() never allocates. */
static int profile__grow(struct profile *p)
{
	size_t cap = p->cap ? p->cap * 2 : 64;
	struct profile_stack *stacks;
	const struct profile_stack **holding;

	stacks = reallocarray(p->stacks, cap, sizeof(*stacks));
	if (!stacks)
		return -ENOMEM;
	p->stacks = stacks;
	holding = reallocarray(p->holding, cap, sizeof(*holding));
	if (!holding)
		return -ENOMEM;
	p->holding = holding;
	p->cap = cap;
	return 0;
}

int profile__add(struct profile *p, uint64_t stack_id, const struct stack_stats *stats,
		 const __u64 *ips, uint32_t nr_ips)
{
	struct profile_stack *s;
	int err;

	if (nr_ips && !ips)
		return -EINVAL;
	if (p->nr == p->cap) {
		err = profile__grow(p);
		if (err)
			return err;
	}
	if (nr_ips > MAX_STACK_DEPTH)
		nr_ips = MAX_STACK_DEPTH;

	s = &p->stacks[p->nr++];
	s->stack_id = stack_id;
	s->stats = *stats;
	s->nr_ips = nr_ips;
	if (nr_ips)
		memcpy(s->ips, ips, nr_ips * sizeof(*ips));

	p->totals.outstanding_bytes += stats->outstanding_bytes;
	p->totals.outstanding_allocs += stats->outstanding_allocs;
	if (stats->outstanding_allocs)
		p->nr_holding++;
	return 0;
}

void profile__set_counters(struct profile *p, const uint64_t counters[CNT_MAX])
{
	struct profile_totals *t = &p->totals;

	memcpy(t->counters, counters, sizeof(t->counters));
	t->allocs = counters[CNT_ALLOCS];
	t->frees = counters[CNT_FREES];
	t->untracked_frees = counters[CNT_UNTRACKED_FREES];
	/* Lost stacks and stack errors are counted, under an unknown stack. */
	t->lost = counters[CNT_LOST_ALLOCS] + counters[CNT_LOST_STATS] +
		  counters[CNT_LOST_INFLIGHT] + counters[CNT_LOST_EVENTS];
}

const struct profile_totals *profile__totals(const struct profile *p)
{
	return &p->totals;
}

static int stack__cmp(const void *a, const void *b)
{
	const struct profile_stack *x = *(const struct profile_stack *const *)a;
	const struct profile_stack *y = *(const struct profile_stack *const *)b;

	if (x->stats.outstanding_bytes != y->stats.outstanding_bytes)
		return x->stats.outstanding_bytes > y->stats.outstanding_bytes ? -1 : 1;
	if (x->stats.outstanding_allocs != y->stats.outstanding_allocs)
		return x->stats.outstanding_allocs > y->stats.outstanding_allocs ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return 0;
}

size_t profile__top(struct profile *p, size_t top, const struct profile_stack *const **out)
{
	size_t i, n = 0;

	for (i = 0; i < p->nr; i++) {
		if (p->stacks[i].stats.outstanding_allocs)
			p->holding[n++] = &p->stacks[i];
	}
	if (n)
		qsort(p->holding, n, sizeof(*p->holding), stack__cmp);
	*out = p->holding;
	return top && top < n ? top : n;
}

size_t profile__nr_holding(const struct profile *p)
{
	return p->nr_holding;
}
