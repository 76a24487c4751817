// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/profile.h"
#include "lib/hashmap.h"

/* The per-block pass's indexes: a 64-bit key to an array position. */
struct idmap_entry {
	uint64_t key;
	size_t pos;
};

#define IDMAP_INIT HASHMAP_INIT(sizeof(uint64_t), sizeof(struct idmap_entry), NULL, NULL)

struct profile {
	struct profile_stack *stacks;
	size_t nr;
	size_t cap;
	/* Every stack's frames, one after the other. */
	__u64 *ips;
	size_t nr_ips;
	size_t ips_cap;
	/* profile__top()'s answer; pointers into stacks[], sized like it. */
	const struct profile_stack **holding;
	size_t nr_holding;
	struct profile_totals totals;
	/* The per-block pass: stack id -> stack, (tid, stack) -> thread's entry. */
	struct hashmap stack_index;
	struct hashmap thread_index;
	struct hashmap thread_stack_index;
	struct profile_thread *threads;
	size_t nr_threads;
	size_t threads_cap;
};

/* The position stored for @key, or -1. */
static long idmap__get(const struct hashmap *m, uint64_t key)
{
	const struct idmap_entry *e = hashmap__find(m, &key);

	return e ? (long)e->pos : -1;
}

static int idmap__put(struct hashmap *m, uint64_t key, size_t pos)
{
	struct idmap_entry *e;
	bool added;

	e = hashmap__insert(m, &key, &added);
	if (!e)
		return -ENOMEM;
	e->pos = pos;
	return 0;
}

/* What counters.def says of each counter. */
static const struct {
	const char *name;
	enum counter_kind kind;
	const char *reason;
} counter_table[CNT_MAX] = {
#define COUNTER(id, name, kind, reason) [CNT_##id] = {name, CNT_KIND_##kind, reason},
#include "counters.def"
#undef COUNTER
};

static const char *const trend_names[] = {
    [TREND_NEW] = "new",	 [TREND_GROWING] = "growing",
    [TREND_STABLE] = "stable",	 [TREND_SHRINKING] = "shrinking",
    [TREND_VARYING] = "varying",
};

const char *trend_name(enum trend t)
{
	return (unsigned int)t <= TREND_VARYING ? trend_names[t] : "?";
}

const char *counter_name(enum counter c)
{
	return (unsigned int)c < CNT_MAX ? counter_table[c].name : NULL;
}

enum counter_kind counter_kind(enum counter c)
{
	return (unsigned int)c < CNT_MAX ? counter_table[c].kind : CNT_KIND_PLAIN;
}

const char *counter_reason(enum counter c)
{
	return (unsigned int)c < CNT_MAX ? counter_table[c].reason : NULL;
}

struct profile *profile__new(void)
{
	struct profile *p = calloc(1, sizeof(struct profile));

	if (!p)
		return NULL;
	p->stack_index = IDMAP_INIT;
	p->thread_index = IDMAP_INIT;
	p->thread_stack_index = IDMAP_INIT;
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->threads_cap; i++)
		free(p->threads[i].stacks);
	free(p->threads);
	hashmap__release(&p->stack_index);
	hashmap__release(&p->thread_index);
	hashmap__release(&p->thread_stack_index);
	free(p->stacks);
	free(p->holding);
	free(p->ips);
	free(p);
}

void profile__clear(struct profile *p)
{
	p->nr = 0;
	p->nr_ips = 0;
	p->nr_holding = 0;
	p->totals.outstanding_bytes = 0;
	p->totals.outstanding_allocs = 0;
	p->totals.outstanding_var = 0;
	p->nr_threads = 0;
}

/* Grows both arrays together so that profile__top() never allocates. */
static int profile__grow(struct profile *p)
{
	size_t cap = p->cap ? p->cap * 2 : 8;
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

/*
 * Room for @n more frames. The pool moves as it grows, so the stacks
 * already in it are pointed at its new place.
 */
static int profile__reserve_ips(struct profile *p, size_t n)
{
	size_t cap = p->ips_cap ? p->ips_cap : 64;
	__u64 *ips;

	if (p->nr_ips + n <= p->ips_cap)
		return 0;
	while (cap < p->nr_ips + n)
		cap *= 2;
	ips = calloc(cap, sizeof(*ips));
	if (!ips)
		return -ENOMEM;
	if (p->nr_ips)
		memcpy(ips, p->ips, p->nr_ips * sizeof(*ips));
	for (size_t i = 0; p->ips && i < p->nr; i++)
		p->stacks[i].ips = ips + (p->stacks[i].ips - p->ips);
	free(p->ips);
	p->ips = ips;
	p->ips_cap = cap;
	return 0;
}

int profile__add(struct profile *p, uint64_t stack_id, const struct stack_stats *stats,
		 const struct stack_trace *trace)
{
	uint32_t nr_ips = trace ? trace->nr : 0;
	struct profile_stack *s;
	int err;

	if (nr_ips > MAX_STACK_DEPTH)
		nr_ips = MAX_STACK_DEPTH;
	err = p->nr == p->cap ? profile__grow(p) : 0;
	if (!err)
		err = profile__reserve_ips(p, nr_ips);
	if (err)
		return err;

	s = &p->stacks[p->nr++];
	*s = (struct profile_stack){
	    .stack_id = stack_id,
	    .stats = *stats,
	    .nr_ips = nr_ips,
	    .flags = trace ? trace->flags : 0,
	    .ips = p->ips ? p->ips + p->nr_ips : NULL,
	};
	if (nr_ips)
		memcpy(p->ips + p->nr_ips, trace->ips, nr_ips * sizeof(*p->ips));
	p->nr_ips += nr_ips;

	p->totals.outstanding_bytes += stats->outstanding_bytes;
	p->totals.outstanding_allocs += stats->outstanding_allocs;
	if (stats->outstanding_allocs)
		p->nr_holding++;
	return 0;
}

void profile_totals__set_counters(struct profile_totals *t, const uint64_t counters[CNT_MAX])
{
	memcpy(t->counters, counters, sizeof(t->counters));
	t->allocs = counters[CNT_ALLOCS];
	t->frees = counters[CNT_FREES];
	t->untracked_frees = counters[CNT_UNTRACKED_FREES];
	t->lost = 0;
	t->stacks_incomplete = false;
	for (int c = 0; c < CNT_MAX; c++) {
		/* Lost stacks and stack errors are counted, under an unknown stack. */
		if (counter_kind(c) == CNT_KIND_LOST)
			t->lost += counters[c];
		/* Each walked, or not, some other way than by its objects' tables to its end. */
		else if (counter_kind(c) != CNT_KIND_PLAIN)
			t->stacks_incomplete |= counters[c] != 0;
	}
}

void profile__set_counters(struct profile *p, const uint64_t counters[CNT_MAX])
{
	profile_totals__set_counters(&p->totals, counters);
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

struct profile_stack *profile__stack(struct profile *p, size_t index)
{
	return index < p->nr ? &p->stacks[index] : NULL;
}

size_t profile__nr_stacks(const struct profile *p)
{
	return p->nr;
}

int profile__begin_blocks(struct profile *p)
{
	int err;

	hashmap__clear(&p->stack_index);
	hashmap__clear(&p->thread_index);
	hashmap__clear(&p->thread_stack_index);
	p->nr_threads = 0;
	p->nr_holding = 0;
	p->totals.outstanding_bytes = 0;
	p->totals.outstanding_allocs = 0;
	p->totals.outstanding_var = 0;
	for (size_t i = 0; i < p->nr; i++) {
		p->stacks[i].stats.outstanding_bytes = 0;
		p->stacks[i].stats.outstanding_allocs = 0;
		p->stacks[i].outstanding_var = 0;
		err = idmap__put(&p->stack_index, p->stacks[i].stack_id, i);
		if (err)
			return err;
	}
	return 0;
}

static struct profile_thread *thread_of(struct profile *p, uint32_t tid)
{
	long pos = idmap__get(&p->thread_index, tid);
	struct profile_thread *th;

	if (pos >= 0)
		return &p->threads[pos];
	if (p->nr_threads == p->threads_cap) {
		size_t cap = p->threads_cap ? 2 * p->threads_cap : 16;

		th = reallocarray(p->threads, cap, sizeof(*th));
		if (!th)
			return NULL;
		memset(th + p->threads_cap, 0, (cap - p->threads_cap) * sizeof(*th));
		p->threads = th;
		p->threads_cap = cap;
	}
	if (idmap__put(&p->thread_index, tid, p->nr_threads))
		return NULL;
	th = &p->threads[p->nr_threads++];
	th->tid = tid;
	th->outstanding_bytes = th->outstanding_allocs = 0;
	th->nr_stacks = 0;
	return th;
}

/* The thread's entry for stack @index; its stacks array holds room for every stack. */
static struct thread_stack *thread_stack_of(struct profile *p, struct profile_thread *th,
					    size_t index)
{
	uint64_t key = (uint64_t)th->tid << 32 | index;
	long pos = idmap__get(&p->thread_stack_index, key);
	struct thread_stack *ts;

	if (pos >= 0)
		return &th->stacks[pos];
	ts = reallocarray(th->stacks, th->nr_stacks + 1, sizeof(*ts));
	if (!ts || idmap__put(&p->thread_stack_index, key, th->nr_stacks)) {
		if (ts)
			th->stacks = ts;
		return NULL;
	}
	th->stacks = ts;
	ts = &th->stacks[th->nr_stacks++];
	*ts = (struct thread_stack){.index = index};
	return ts;
}

int profile__add_block(struct profile *p, uint64_t stack_id, uint64_t size, double weight,
		       uint32_t tid, uint64_t addr)
{
	long index = idmap__get(&p->stack_index, stack_id);
	uint64_t count = llround(weight), bytes = llround(size * weight);
	double var = (double)size * size * weight * (weight - 1);
	struct profile_thread *th;
	struct thread_stack *ts;
	struct profile_stack *s;

	/* A stack born after the statistics were read waits for the next report. */
	if (index < 0)
		return 0;
	s = &p->stacks[index];
	if (!s->stats.outstanding_allocs) {
		p->nr_holding++;
		s->sample_addr = addr;
		s->sample_size = size;
	}
	s->stats.outstanding_allocs += count;
	s->stats.outstanding_bytes += bytes;
	s->outstanding_var += var;
	p->totals.outstanding_bytes += bytes;
	p->totals.outstanding_allocs += count;
	p->totals.outstanding_var += var;
	th = thread_of(p, tid);
	ts = th ? thread_stack_of(p, th, index) : NULL;
	if (!ts)
		return -ENOMEM;
	th->outstanding_bytes += bytes;
	th->outstanding_allocs += count;
	ts->outstanding_bytes += bytes;
	ts->outstanding_allocs += count;
	return 0;
}

static int thread__cmp(const void *a, const void *b)
{
	const struct profile_thread *x = a, *y = b;

	if (x->outstanding_bytes != y->outstanding_bytes)
		return x->outstanding_bytes > y->outstanding_bytes ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int thread_stack__cmp(const void *a, const void *b)
{
	const struct thread_stack *x = a, *y = b;

	if (x->outstanding_bytes != y->outstanding_bytes)
		return x->outstanding_bytes > y->outstanding_bytes ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

int profile__end_blocks(struct profile *p)
{
	/* Every thread here holds a stack; an empty set may have no array at all. */
	for (size_t i = 0; i < p->nr_threads; i++)
		qsort(p->threads[i].stacks, p->threads[i].nr_stacks, sizeof(struct thread_stack),
		      thread_stack__cmp);
	if (p->nr_threads)
		qsort(p->threads, p->nr_threads, sizeof(*p->threads), thread__cmp);
	/* Positions moved: the (tid, stack) index no longer holds. */
	hashmap__clear(&p->thread_index);
	hashmap__clear(&p->thread_stack_index);
	return 0;
}

size_t profile__threads(const struct profile *p, const struct profile_thread **out)
{
	*out = p->threads;
	return p->nr_threads;
}

void profile__drop_stack(struct profile *p, size_t index)
{
	struct profile_stack *s = &p->stacks[index];

	if (s->stats.outstanding_allocs)
		p->nr_holding--;
	p->totals.outstanding_bytes -= s->stats.outstanding_bytes;
	p->totals.outstanding_allocs -= s->stats.outstanding_allocs;
	p->totals.outstanding_var -= s->outstanding_var;
	s->stats.outstanding_bytes = 0;
	s->stats.outstanding_allocs = 0;
	s->outstanding_var = 0;
}
