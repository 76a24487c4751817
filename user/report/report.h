/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_REPORT_H
#define ALLOCTRACE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "symbolize/frame.h"
#include "analysis/profile.h"
#include "proc/exit.h"
#include "leakcheck/leakcheck.h"

enum report_format {
	FORMAT_TEXT,
	FORMAT_JSON,
};

struct report_stack {
	uint64_t stack_id;
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	uint64_t allocs;
	uint64_t alloc_bytes; /* every byte ever allocated from this stack */
	/* the standard error of outstanding_bytes, an estimate; 0 when exact */
	uint64_t stderr_bytes;
	int64_t growth_bytes; /* outstanding bytes gained since the last report */
	const char *trend;    /* "growing", "stable", ... or NULL to leave out */
	uint64_t data_addr;   /* --show-data: the block the bytes come from */
	size_t data_len;
	const uint8_t *data;
	size_t nr_frames;
	const struct frame_info *frames;
	uint32_t stack_flags; /* enum stack_flags */
	int pid;	      /* of a report on several flattened for an export; else 0 */
	bool classified;      /* --leak-check: the bytes and blocks of each class below */
	uint64_t class_bytes[LEAK_CLASSES];
	uint64_t class_allocs[LEAK_CLASSES];
};

/*
 * --leak-check on one process: how the scan went and the classes of all
 * its blocks. @error says why there are no verdicts (then nothing else is set).
 * In a report on several processes, the run's: the sums over the processes
 * with verdicts (@processes of them), their assumptions together.
 */
struct report_leak_check {
	const char *error;
	unsigned int processes;	  /* a run's: the processes summed; 0 for one process */
	double pause_ms;	  /* the target stopped, both stops together */
	uint64_t bytes_scanned;	  /* root memory read */
	unsigned int assumptions; /* enum leak_assumption bits */
	unsigned int threads;	  /* whose registers were roots */
	uint64_t class_bytes[LEAK_CLASSES];
	uint64_t class_allocs[LEAK_CLASSES];
	/* the heuristics on (1 << enum leak_heuristic), and what each made reachable */
	unsigned int heuristics;
	uint64_t heur_bytes[LEAK_HEURISTICS];
	uint64_t heur_allocs[LEAK_HEURISTICS];
	/* a process's wrappers learned in the check (none in a run's sums) */
	const struct leak_learned *learned;
	size_t nr_learned;
};

/* What one thread holds (a per-block pass). */
struct report_thread {
	uint32_t tid;
	const char *comm; /* NULL if the thread is gone */
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	size_t nr_stacks;
	const struct report_stack *stacks;
};

/* The largest outstanding total seen at a report, and who held it. */
struct report_peak {
	double time;
	uint64_t outstanding_bytes;
	uint64_t outstanding_allocs;
	size_t nr_stacks;
	const struct report_stack *stacks;
};

/*
 * A report on one process, or on several: then each process is a report of
 * its own in @procs (pid, comm, totals, stacks and the lists, exit, rss,
 * parent), and this one holds what applies to all: the time, the run's
 * totals (over every process, listed or not), the filter and sampling.
 */
/*
 * Processes that ended, were in one report after their end, and left the
 * session: how many, and the outstanding bytes and blocks they held at
 * their ends, summed. A process per request (a forking server) makes
 * thousands; each is reported once, then only counted here.
 */
struct exited_procs {
	size_t nr;
	uint64_t bytes;
	uint64_t allocs;
};

struct report {
	bool final;
	double time; /* unix seconds */
	int pid;
	int ns_pid; /* its pid in a pid namespace of its own, or 0 */
	const char *comm;
	int parent; /* of a process in @procs: the traced one it was forked from, or 0 */
	const struct profile_totals *totals;
	size_t nr_stacks;  /* stacks below, already cut to --top */
	size_t nr_holding; /* stacks holding memory before the cut */
	const struct report_stack *stacks;
	struct target_exit exit;
	uint64_t rss_bytes;   /* the target's resident memory, 0 if unknown */
	double interval;      /* seconds between reports */
	const char *filter;   /* which blocks count, if not all; NULL otherwise */
	uint64_t sample_rate; /* --sample: numbers are estimates; 0 when exact */
	uint64_t big_only;    /* --big-only: only blocks this big were seen; 0 otherwise */
	bool growth;	      /* --growth: resident pages by first toucher, not blocks */
	size_t nr_growing;    /* stacks growing steadily, steepest first */
	const struct report_stack *growing;
	size_t nr_threads; /* threads by outstanding bytes */
	const struct report_thread *threads;
	const struct report_peak *peak;		    /* NULL before there is one */
	const struct report_leak_check *leak_check; /* NULL without --leak-check */
	bool per_process;			    /* a report on several processes, in @procs */
	size_t nr_procs;			    /* processes listed */
	size_t nr_procs_total;		   /* processes there were to list, before the cut */
	const struct exited_procs *exited; /* per_process: those gone from the reports, or NULL */
	const struct report *procs;	   /* the most outstanding bytes first */
};

struct big_alloc {
	double time; /* unix seconds */
	int pid;
	int ns_pid; /* its pid in a pid namespace of its own, or 0 */
	int tid;
	const char *func;
	uint64_t size;
	uint64_t addr;
	size_t nr_frames;
	const struct frame_info *frames; /* the caller's, valid during the call only */
	uint32_t stack_flags;		 /* enum stack_flags */
};

/*
 * --growth past the fault budget: the figures are estimates (a recorded
 * page stands for several), with the standard error of
 * report__stderr_bytes().
 */
bool report__sampled(const struct report *r);
uint64_t report__stderr_bytes(const struct report *r);

struct report_writer;

/* Returns NULL with errno set on failure. Does not take ownership of @out. */
struct report_writer *report_writer__new(enum report_format format, FILE *out);
void report_writer__free(struct report_writer *w);

/* Both return 0 or -errno (a write error on the stream, e.g. -EPIPE). */
int report_writer__report(struct report_writer *w, const struct report *r);
int report_writer__big_alloc(struct report_writer *w, const struct big_alloc *a);

#endif
