/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_ASSEMBLE_H
#define ALLOCTRACE_ASSEMBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "analysis/history.h"
#include "analysis/profile.h"
#include "report/report.h"
#include "symbolize/frame.h"

/*
 * One process's report assembled from its profile and history: the top
 * stacks, the growing ones, the per-thread lists and the peak. Nothing
 * here reads the system; what a profile does not hold (frames, thread
 * names, a block's bytes) comes from the caller's source.
 */

/* Inlined calls shown per return address, at most. */
#define REPORT_MAX_INLINE 8
/* How much of the secondary lists a report shows. */
#define REPORT_MAX_GROWING   5
#define REPORT_MAX_THREADS   10
#define REPORT_THREAD_STACKS 5
/* --show-data: bytes kept per stack, at most. */
#define REPORT_MAX_DATA 256

struct assemble_source {
	/*
	 * The frames of @nr return addresses, innermost first, into @out
	 * (room for @nr * REPORT_MAX_INLINE). Returns how many. Strings stay
	 * the caller's, valid until the report is written.
	 */
	size_t (*frames)(void *ctx, const __u64 *ips, uint32_t nr, struct frame_info *out);
	/* Threads only: the name of thread @tid into @buf, empty if gone. */
	void (*thread_name)(void *ctx, uint32_t tid, char *buf, size_t size);
	/* --show-data only: up to @len bytes at @addr. Bytes read, <= 0 for none. */
	long (*read_mem)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

/* --leak-check: one classified block, by the stack that allocated it. */
struct leak_verdict {
	uint64_t stack_id;
	uint64_t size;
	enum leak_class cls;
	enum leak_heuristic heur; /* reachable through a heuristic's pointer, or none */
};

/* The verdicts of one process's scan, sorted by stack id, and how it went. */
struct assemble_leaks {
	const struct leak_verdict *verdicts;
	size_t nr;
	struct report_leak_check check; /* its class totals are summed here */
};

struct assemble_opts {
	size_t top;	  /* stacks listed, 0 = all */
	size_t data_top;  /* of them, those given their bytes; 0 = all */
	size_t show_data; /* bytes per stack (at most REPORT_MAX_DATA), 0 = none */
	bool threads;	  /* the per-thread lists: the profile is per block */
	bool peak;	  /* the peak, for a final report */
	/*
	 * --leak-check, or NULL: each listed stack's classes, the report's
	 * totals, and stacks with definitely lost bytes listed first.
	 */
	const struct assemble_leaks *leaks;
};

/*
 * Ownership: the parts own every array the report points to, each stack's
 * frames included (one array per stack, never moved nor shared), until
 * report_parts__free(). Nothing else writes to them.
 */
struct report_parts;

/*
 * Fill @r's stacks, totals and lists from @prof and @h (NULL: no growing
 * list, no peak); the caller sets who the report is on. Returns the parts
 * @r points into, or NULL with errno set.
 */
struct report_parts *report_parts__assemble(struct profile *prof, const struct history *h,
					    const struct assemble_opts *o,
					    const struct assemble_source *src, struct report *r);
void report_parts__free(struct report_parts *rp);

#endif
