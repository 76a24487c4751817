/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_APP_PROCS_H
#define ALLOCTRACE_APP_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "alloctrace.h"
#include "analysis/history.h"
#include "analysis/profile.h"
#include "proc/exec_fsm.h"
#include "proc/exit.h"
#include "symbolize/symbolize.h"

struct allocator;

/*
 * What a session keeps of each traced process between reports: its
 * numbers, the history behind its trends, its symbolizer, and its
 * allocator with where it is in an exec.
 */
/* An ended process's statistics (collect__drain_ended()). */
enum proc_drain {
	DRAIN_NO,   /* in the maps */
	DRAIN_NOW,  /* leaving the maps for its profile */
	DRAIN_DONE, /* in its profile only */
};

struct proc {
	pid_t pid;
	pid_t ns_pid; /* its pid in a pid namespace of its own, or 0 */
	uint32_t gen; /* its program image, as the BPF side numbers them */
	pid_t parent; /* the traced process it was forked from, or 0 */
	bool execed;  /* runs another program than it was forked as */
	char comm[32];
	bool oom_killed;
	struct target_exit exit;
	enum proc_drain drain;
	uint64_t counters[CNT_MAX];
	struct profile *profile;
	struct history *history;
	struct symbolizer *syms;     /* made when first needed */
	bool syms_failed;	     /* gone before it could be read */
	struct allocator *allocator; /* found for its current image, NULL before; owned */
	enum proc_trace trace;
	bool named;	      /* on the command line: its execs are told at info level */
	double exec_deadline; /* PROC_ALLOC_PENDING: when to give up, CLOCK_MONOTONIC */
};

struct procs {
	struct proc **procs;
	size_t nr;
	size_t cap;
	double min_gap; /* for each history, see history__new() */
};

void procs__init(struct procs *ps, double min_gap);
void procs__release(struct procs *ps);

/* The process @pid, or NULL. ps->procs is in order of pid. */
struct proc *procs__find(const struct procs *ps, pid_t pid);

/* A new process with empty numbers; NULL with errno set. */
struct proc *procs__add(struct procs *ps, pid_t pid, uint32_t gen);

/* Forget process @i, its index in ps->procs. */
void procs__remove(struct procs *ps, size_t i);

/*
 * @p runs a new program: its numbers and history start again, and its
 * allocator is forgotten. 0 or -errno.
 */
int proc__new_image(struct procs *ps, struct proc *p, uint32_t gen);

/*
 * The symbolizer of @p, made on first use and refreshed when asked. A
 * forked child that was gone before it could be read has its parent's
 * mappings, if the parent is known. NULL when none can be had.
 */
struct symbolizer *proc__symbolizer(struct procs *ps, struct proc *p, bool refresh);

#endif
