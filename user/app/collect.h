/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_APP_COLLECT_H
#define ALLOCTRACE_APP_COLLECT_H

#include <sys/types.h>
#include "app/state.h"
#include "tracer/tracer.h"

/*
 * Reading the BPF maps into the processes' profiles: the per-process
 * table (s->procs) follows the maps, each profile is filled (per block
 * when a filter needs it) and fed to its history; processes gone leave
 * the maps after their last report.
 */

/* Every process's numbers and the run's totals at @time. 0 or -errno (said). */
int collect__run(struct session *s, double time);

/* What the per-process map says of @pid: it may be new, or run a new program. */
int collect__update_proc(void *ctx, pid_t pid, const struct proc_state *st);

/* The process an event is about; with --all it may be new. NULL if not traced. */
struct proc *collect__proc_seen(struct session *s, pid_t pid);

/* After a report: the entries of processes ended and images replaced go. */
void collect__forget_gone(struct session *s);

/* The tracer's on_exit: process ev->tgid ended, its statistics are final. */
void collect__note_ended(void *ctx, const struct task_event *ev);

/*
 * Seconds between looks at the processes ended: at most this long their
 * statistics stay in the maps, or until DRAIN_BATCH of them wait (a
 * server forking thousands of children a second).
 */
#define DRAIN_PERIOD 0.2
#define DRAIN_BATCH  32

/* Seconds until collect__drain_ended() is due: 0 now, -1 nothing to drain. */
double collect__drain_due(const struct session *s);

/*
 * The statistics of the processes ended since the last look move from
 * the maps to their profiles, for their one report to come. 0 or -errno
 * (said).
 */
int collect__drain_ended(struct session *s);

#endif
