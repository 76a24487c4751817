/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_OPTIONS_H
#define ALLOCTRACE_OPTIONS_H

#include <stdint.h>
#include <sys/types.h>
#include "allocator.h"
#include "export.h"
#include "report.h"
#include "tracer.h"

/* Exit codes, documented in alloctrace(8). */
enum exit_code {
	EXIT_OK = 0,
	EXIT_FAILURE_RUNTIME = 1,	/* failed while tracing (BPF load, attach, I/O) */
	EXIT_USAGE = 2,			/* bad command line */
	EXIT_TARGET = 3,		/* no such process, no allocator, command not runnable */
	EXIT_PRIVILEGE = 4,		/* missing privileges or kernel features */
};

struct options {
	pid_t pid;		/* -p; 0 when launching a command */
	char **argv;		/* command to launch, NULL with -p */
	double interval;	/* seconds between reports */
	unsigned int count;	/* reports to print, 0 = until stopped */
	unsigned int top;	/* stacks per report, 0 = all */
	uint64_t big;		/* big-allocation threshold in bytes, 0 = off */
	enum report_format format;
	unsigned int stack_depth;
	struct allocator_opts alloc;	/* --allocator, --mmap */
	const char *exports[4];		/* file per enum export_kind, or NULL */
	struct block_filter {		/* which live blocks count */
		double min_age;		/* seconds */
		pid_t tid;
		const char *thread_name;	/* regex */
		const char *module;		/* regex: stacks through such an object */
		uint64_t min_size;
		uint64_t max_size;	/* 0 = no limit */
	} filter;
	bool threads;			/* per-thread breakdown */
	unsigned int show_data;		/* bytes of one live block per stack */
	uint64_t sample;		/* --sample: mean bytes between samples, 0 = all */
	struct map_sizes maps;		/* --max-allocs, --max-stacks, --ringbuf-size */
	int verbose;
};

/*
 * Fill @opts from the command line. Returns 0 to go on, 1 when help or the
 * version was printed (exit 0), or -EINVAL after printing one line that
 * says what is wrong.
 */
int options__parse(struct options *opts, int argc, char **argv);

/* "8M", "512k", "1GiB", "4096": bytes in *@out. 0 or -EINVAL. */
int parse_size(const char *s, uint64_t *out);

#endif
