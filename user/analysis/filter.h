/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_FILTER_H
#define ALLOCTRACE_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "alloctrace.h"

/* Which live blocks count: the options --min-age, --tid, ... */
struct block_filter {
	double min_age; /* seconds */
	pid_t tid;
	const char *thread_name; /* regex */
	const char *module;	 /* regex: stacks through such an object */
	uint64_t min_size;
	uint64_t max_size; /* 0 = no limit */
};

/* Which live blocks and stacks a report counts, built from a struct block_filter. */
struct filter;

/* NULL with errno set. */
struct filter *filter__new(const struct block_filter *spec);
void filter__free(struct filter *f);

/* True when some criterion needs the blocks one by one. */
bool filter__per_block(const struct filter *f);

/*
 * Does a block of process @pid count? @now_ns is CLOCK_MONOTONIC, the
 * clock of its time. Thread names are read from /proc as needed.
 */
bool filter__block(struct filter *f, pid_t pid, const struct alloc_info *info, uint64_t now_ns);

/* True when no --module was given or @module matches it. */
bool filter__module(const struct filter *f, const char *module);
bool filter__has_module(const struct filter *f);

/* What is filtered, for the report ("blocks older than 5 s, ..."), or NULL. */
const char *filter__describe(const struct filter *f);

#endif
