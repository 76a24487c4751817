/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_PROFILE_H
#define ALLOCTRACE_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "alloctrace.h"

/*
 * Aggregation of one collection from the BPF maps: per-stack statistics,
 * the global counters and the totals derived from them. Plain C, no libbpf.
 */
struct profile_stack {
	uint64_t stack_id;
	struct stack_stats stats;
	uint32_t nr_ips;
	__u64 ips[MAX_STACK_DEPTH];
};

struct profile_totals {
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	uint64_t allocs;
	uint64_t frees;
	uint64_t untracked_frees;
	uint64_t lost;			/* calls or blocks missing from the numbers */
	uint64_t counters[CNT_MAX];	/* every counter, for the detail line */
};

struct profile;

struct profile *profile__new(void);
void profile__free(struct profile *p);

/* Forget the stacks of the previous collection. */
void profile__clear(struct profile *p);

/* Add one stack's numbers; @ips may be NULL when @nr_ips is 0. 0 or -errno. */
int profile__add(struct profile *p, uint64_t stack_id, const struct stack_stats *stats,
		 const __u64 *ips, uint32_t nr_ips);

void profile__set_counters(struct profile *p, const uint64_t counters[CNT_MAX]);

const struct profile_totals *profile__totals(const struct profile *p);

/*
 * The stacks that still hold memory, by outstanding bytes (then allocation
 * count, then stack id), at most @top of them (0 = all). Returns how many
 * are in *@out; the array stays valid until the next clear or add.
 */
size_t profile__top(struct profile *p, size_t top, const struct profile_stack *const **out);

/* How many stacks hold memory, whatever the cut. */
size_t profile__nr_holding(const struct profile *p);

/* Names of the counters in reports, e.g. "lost_allocs". */
const char *counter_name(enum counter c);

#endif
