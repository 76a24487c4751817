/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_APP_REPORTS_H
#define ALLOCTRACE_APP_REPORTS_H

#include <stdbool.h>
#include "app/state.h"
#include "tracer/tracer.h"

/*
 * What the session writes: the report of each interval (collected, then
 * assembled per process by report/assemble.c, then written and exported)
 * and the events the BPF side sends (big allocations, OOM kills). Each
 * report owns its frames (report_parts) and each big-allocation alert its
 * own: an event handled between two reports never touches a report's.
 */

/* Collect, report on every process listed, forget those gone. 0 or -errno. */
int reports__write(struct session *s, bool final);

/* A write error of the report's stream ends the run (said once). */
void reports__note_write_error(struct session *s, int err);

/* The tracer's callbacks (tracer_opts.on_big_alloc, .on_oom); @ctx is the session. */
void on_big_alloc(void *ctx, const struct big_alloc_event *ev);
void on_oom(void *ctx, const struct task_event *ev);

#endif
