/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_METRICS_H
#define ALLOCTRACE_METRICS_H

#include <stdio.h>
#include "report/report.h"

/*
 * Reports in the Prometheus text exposition format (version 0.0.4), for
 * --listen's /metrics: the numbers of each process a report lists, and its
 * top stacks with the rest summed as one "other" series, so that a
 * scrape holds what the report printed. docs/formats.md names every
 * metric.
 *
 * It remembers, per process, the outstanding bytes of the previous report
 * (the growth rate is over the interval between the two) and the big
 * allocations seen, which reports do not hold.
 */
struct metrics;

/* Stack series per process at most: 1 to METRICS_MAX_TOP. */
#define METRICS_MAX_TOP 100

/* @top: stack series per process (capped at METRICS_MAX_TOP, 0 = the cap). NULL with errno. */
struct metrics *metrics__new(unsigned int top);
void metrics__free(struct metrics *m);

/* A big allocation of process @pid, counted in its next rendering. 0 or -ENOMEM. */
int metrics__big_alloc(struct metrics *m, int pid);

/*
 * Write @r as the whole exposition to @f. The processes it does not list
 * are forgotten (but those with big allocations since the last rendering,
 * until the next). 0 or -errno; errors of @f itself are left on the stream.
 */
int metrics__render(struct metrics *m, const struct report *r, FILE *f);

#endif
