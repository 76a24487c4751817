/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_APP_EXECS_H
#define ALLOCTRACE_APP_EXECS_H

#include <sys/types.h>
#include "app/state.h"
#include "tracer/tracer.h"

/*
 * Which allocator is probed in which process, and following execs: each
 * traced process moves through enum proc_trace (proc/procs.h), its
 * allocator kept in its struct proc. Retries are ticked by the loop's
 * retry timer (s->retry_fd), armed while a process is pending.
 */

/* Find and probe the allocator of a process named on the command line. An exit code. */
int execs__attach(struct session *s, struct target *t);

/* --all: probe the C library's allocator for every process. An exit code. */
int execs__attach_all(struct session *s);

/*
 * --follow-forks: @pid, a child of @parent, stopped before it ran: its own
 * probes on its parent's allocator, before it is resumed.
 */
void execs__adopt(struct session *s, pid_t pid, pid_t parent);

/* Process @pid (@t if named on the command line) ran execve: probe its new program. */
void execs__reattach(struct session *s, pid_t pid, struct target *t);

/* The retry timer ticked: look again at the processes pending. */
void execs__retry(struct session *s);

/* The tracer's callback (tracer_opts.on_exec); @ctx is the session. */
void on_exec(void *ctx, const struct task_event *ev);

/* The tracer's callback (tracer_opts.on_linkmap); @ctx is the session. */
void on_linkmap(void *ctx, const struct task_event *ev);

#endif
