/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_HISTORY_H
#define ALLOCTRACE_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include "analysis/profile.h"

/*
 * Memory of past reports: each stack's outstanding bytes over the last few
 * reports, to tell a steady leak from a large but stable cache, and the
 * moment the outstanding total was highest.
 */
#define HISTORY_DEPTH 6
#define PEAK_STACKS   5

struct peak {
	double time; /* unix seconds; 0 before the first report */
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	size_t nr_stacks;
	struct profile_stack stacks[PEAK_STACKS]; /* the largest holders then */
	__u64 *ips;				  /* their frames */
	size_t ips_cap;
};

struct history;

/*
 * @min_gap: a report closer than this (seconds) to the previous one
 * replaces its point instead of adding one, so a final report right after
 * a periodic one does not count as an interval without growth.
 */
struct history *history__new(double min_gap);
void history__free(struct history *h);

/*
 * Record this collection and set growth_bytes and trend on every stack of
 * @p. Call once per report, in order. 0 or -errno.
 */
int history__update(struct history *h, struct profile *p, double time);

const struct peak *history__peak(const struct history *h);

/* Stacks of @p that grow, steepest first, at most @max; returns how many. */
size_t history__growing(struct profile *p, const struct profile_stack **out, size_t max);

#endif
