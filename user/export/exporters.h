/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_EXPORTERS_H
#define ALLOCTRACE_EXPORTERS_H

#include <stdbool.h>
#include <stdio.h>
#include "report/report.h"

/*
 * What each kind of export implements; export.c owns the file and calls
 * these. A kind's state is made by its constructor (NULL with errno set)
 * and freed by .free.
 *
 * A report or an alert, and every string and frame it points to, lives
 * only during the call: a kind copies whatever it keeps. Each kind is a
 * line of kinds.def, which names its constructor and its ops.
 */
struct export_ops {
	/*
	 * Every report of the run, in order, the final one last. 0 or -errno.
	 * With .by_process, a report on several processes comes as one on
	 * their stacks, each under its process: an outermost frame named
	 * "pid N (COMM)", and its pid in the stack's @pid.
	 */
	int (*report)(void *state, const struct report *r);
	bool by_process;
	/*
	 * Its reports must be made from the live blocks one by one (each
	 * stack's threads), which costs reading the live table every report.
	 */
	bool per_block;
	/* Every big allocation, as it comes; NULL to ignore them. 0 or -errno. */
	int (*big_alloc)(void *state, const struct big_alloc *a);
	/*
	 * Write the whole file to @f, once, when the run ends: after the
	 * final report, or after whatever reports there were. 0 or -errno;
	 * errors of @f itself are checked by the caller.
	 */
	int (*finish)(void *state, FILE *f);
	void (*free)(void *state);
};

/* Folded stacks, one "root;...;leaf WEIGHT" line each (folded.c). */
void *folded_bytes_new(void); /* weight: outstanding bytes */
void *folded_count_new(void); /* weight: outstanding blocks */
extern const struct export_ops folded_ops;

/* Gzipped profile.proto for pprof (pprof.c). */
void *pprof_new(void);
extern const struct export_ops pprof_ops;

/* One self-contained HTML page (html.c). */
void *html_new(void);
extern const struct export_ops html_ops;

#endif
