/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_APP_STATE_H
#define ALLOCTRACE_APP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "alloctrace.h"
#include "analysis/filter.h"
#include "app/metrics_server.h"
#include "cli/options.h"
#include "export/export.h"
#include "lib/util.h"
#include "app/procs.h"
#include "proc/target.h"
#include "report/report.h"

/*
 * What one run keeps, shared by the session's files: session.c makes and
 * frees it, loop.c owns the fds, execs.c the following of execs,
 * collect.c the processes' numbers, reports.c what is written. What is
 * about one process (its allocator, where it is in an exec) is in its
 * struct proc, not here.
 */
struct leak_result;

struct session {
	const struct options *opts;
	bool multi; /* several processes: the per-process map, per-process reports */
	/* The processes named on the command line, or the launched command. */
	struct target **targets;
	size_t nr_targets;
	size_t nr_gone; /* of them, ended */
	/* --follow-forks: the launched command's children, traced to their exit stops */
	struct target **followed;
	size_t nr_followed, followed_cap;
	struct tracer *tracer;
	struct procs procs;	     /* every process traced, named or not */
	struct allocator *all_alloc; /* --all: the C library's, probed for every process */
	struct cgroup_ref cgroup;    /* --cgroup's, resolved */
	struct report_writer *writer;
	FILE *out;    /* the reports' stream: stdout, or -o's file */
	bool tracing; /* started: files written from here on are kept */
	struct filter *filter;
	bool per_block; /* reports are rebuilt from the live blocks */
	/* A file per export kind, and --pprof-dir's. */
	struct exporter *exporters[NR_EXPORTS + 1];
	size_t nr_exporters;
	struct metrics_server *metrics; /* --listen */
	struct leak_result *leaks;	/* --leak-check: verdicts (app/leaks.c) */
	size_t nr_leaks, leaks_cap;
	int epfd;
	int sigfd;
	int timerfd;
	int retry_fd; /* ticks while execs wait for their allocator */
	unsigned int reports;
	double mono_to_real;	      /* add to CLOCK_MONOTONIC seconds for unix time */
	uint64_t counters[CNT_MAX];   /* of the whole run */
	struct profile_totals totals; /* of the whole run, over every process */
	struct exited_procs exited;   /* processes gone from the reports, and what they held */
	bool stale;		      /* the maps hold entries of processes or images gone */
	/* Processes ended since the last look (collect__drain_ended()), by pid. */
	pid_t *ended;
	size_t nr_ended, ended_cap;
	double drained_at; /* that look's end, CLOCK_MONOTONIC seconds */
	int write_err;
	bool done;
	bool failed; /* tracing stopped on an error: exit 1 */
};

#endif
