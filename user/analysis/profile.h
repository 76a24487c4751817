/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_PROFILE_H
#define ALLOCTRACE_PROFILE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "alloctrace.h"

/*
 * Aggregation of one collection from the BPF maps: per-stack statistics,
 * the global counters and the totals derived from them. Plain C, no libbpf.
 */
/* A stack's numbers, from its stack_counts summed over the CPUs. */
struct stack_stats {
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	uint64_t allocs;
	uint64_t alloc_bytes;
};

enum trend {
	TREND_NEW,     /* seen in too few reports to tell */
	TREND_GROWING, /* rose in most intervals and never fell: a leak */
	TREND_STABLE,  /* large maybe, but flat: a cache, a pool */
	TREND_SHRINKING,
	TREND_VARYING,
};

struct profile_stack {
	uint64_t stack_id;
	struct stack_stats stats;
	/*
	 * A per-block pass's estimate of outstanding_bytes' variance (bytes^2),
	 * 0 when every block weighed 1: see profile__add_block().
	 */
	double outstanding_var;
	int64_t growth_bytes; /* since the previous report */
	enum trend trend;
	uint64_t sample_addr; /* one live block, from a per-block pass; 0 if none */
	uint64_t sample_size;
	uint32_t nr_ips;
	uint32_t flags; /* enum stack_flags: how far to trust the frames */
	/*
	 * Owned by the profile (or a history's peak), valid until its next
	 * clear or add: a process of a few short stacks costs a few hundred
	 * bytes, not MAX_STACK_DEPTH frames a stack (fork churn reports
	 * thousands of processes at once).
	 */
	const __u64 *ips;
};

/* What one thread holds, from a per-block pass. */
struct profile_thread {
	uint32_t tid;
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	size_t nr_stacks;
	struct thread_stack {
		size_t index; /* into the profile's stacks, see profile__stack() */
		uint64_t outstanding_bytes;
		uint64_t outstanding_allocs;
	} * stacks; /* by outstanding bytes */
};

struct profile_totals {
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	/* of outstanding_bytes, estimated from a per-block pass's weights (bytes^2) */
	double outstanding_var;
	uint64_t allocs;
	uint64_t frees;
	uint64_t untracked_frees;
	uint64_t lost;		    /* calls or blocks missing from the numbers */
	bool stacks_incomplete;	    /* a stack lost, cut or walked without its tables */
	uint64_t counters[CNT_MAX]; /* every counter, for the detail line */
};

struct profile;

struct profile *profile__new(void);
void profile__free(struct profile *p);

/* Forget the stacks of the previous collection. */
void profile__clear(struct profile *p);

/* Add one stack's numbers; @trace may be NULL: no frames. 0 or -errno. */
int profile__add(struct profile *p, uint64_t stack_id, const struct stack_stats *stats,
		 const struct stack_trace *trace);

void profile__set_counters(struct profile *p, const uint64_t counters[CNT_MAX]);

/* The counts and loss of @t from @counters; the outstanding numbers stay. */
void profile_totals__set_counters(struct profile_totals *t, const uint64_t counters[CNT_MAX]);

const struct profile_totals *profile__totals(const struct profile *p);

/*
 * The stacks that still hold memory, by outstanding bytes (then allocation
 * count, then stack id), at most @top of them (0 = all). Returns how many
 * are in *@out; the array stays valid until the next clear or add.
 */
size_t profile__top(struct profile *p, size_t top, const struct profile_stack *const **out);

/* How many stacks hold memory, whatever the cut. */
size_t profile__nr_holding(const struct profile *p);

/* Stack @index of the collection (the order profile__add saw them). */
struct profile_stack *profile__stack(struct profile *p, size_t index);
size_t profile__nr_stacks(const struct profile *p);

/*
 * A per-block pass: the outstanding numbers of every stack, the totals and
 * the per-thread breakdown are rebuilt from the blocks given to
 * profile__add_block(), those that pass the caller's filters. Call
 * profile__end_blocks() to sort the threads.
 */
int profile__begin_blocks(struct profile *p);
/*
 * @weight: how many blocks this one stands for (1 unless sampling), the
 * inverse of the probability that it was recorded. Each adds @weight
 * blocks of @size to the outstanding numbers and, to their variance,
 * size^2 * weight * (weight - 1): the Horvitz-Thompson estimate of the
 * variance of a sum of independently sampled blocks (unbiased, 0 for
 * blocks recorded for sure).
 */
int profile__add_block(struct profile *p, uint64_t stack_id, uint64_t size, double weight,
		       uint32_t tid, uint64_t addr);
int profile__end_blocks(struct profile *p);
size_t profile__threads(const struct profile *p, const struct profile_thread **out);

/* Leave stack @index out of what is held (a filter rejected it). */
void profile__drop_stack(struct profile *p, size_t index);

/* Names of the counters in reports, e.g. "lost_allocs". */
const char *counter_name(enum counter c);
/* What counter @c says of a report, and its warning when not 0 (NULL for a plain count). */
enum counter_kind counter_kind(enum counter c);
const char *counter_reason(enum counter c);

/* "growing", "stable", ... as reports print them. */
const char *trend_name(enum trend t);

#endif
