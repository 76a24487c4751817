/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_OPTIONS_H
#define ALLOCTRACE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "probe/allocator.h"
#include "proc/choose.h"
#include "export/export.h"
#include "report/report.h"
#include "config.h"
#include "analysis/filter.h"
#include "leakcheck/leakcheck.h"

/* Exit codes, documented in alloctrace(8). */
enum exit_code {
	EXIT_OK = 0,
	EXIT_FAILURE_RUNTIME = 1, /* failed while tracing (BPF load, attach, I/O) */
	EXIT_USAGE = 2,		  /* bad command line */
	EXIT_TARGET = 3,	  /* no such process, no allocator, command not runnable */
	EXIT_PRIVILEGE = 4,	  /* missing privileges or kernel features */
};

/* --listen: a numeric address and port. */
struct listen_addr {
	const char *text; /* as given, NULL without --listen */
	struct sockaddr_storage addr;
	socklen_t len;
	const char *web_config; /* --web-config: TLS and basic authentication */
};

/* Processes -p takes, in all. */
#define MAX_PIDS 1024

struct options {
	pid_t pids[MAX_PIDS];	   /* -p, in the order given */
	size_t nr_pids;		   /* 0 when launching a command or with --all */
	char **argv;		   /* command to launch, NULL with -p */
	bool all;		   /* --all: every process using the allocator */
	struct proc_choice choice; /* --cgroup, --comm: --all narrowed (all is set) */
	bool follow_forks;	   /* the children of traced processes too */
	uint64_t max_per_proc;	   /* live blocks one process may hold, 0 = no cap */
	unsigned int top_procs;	   /* processes per report, 0 = all */
	double interval;	   /* seconds between reports */
	unsigned int count;	   /* reports to print, 0 = until stopped */
	unsigned int top;	   /* stacks per report, 0 = all */
	uint64_t big;		   /* big-allocation threshold in bytes, 0 = off */
	bool growth;		   /* --growth: no uprobes, resident pages by first-touch stack */
	enum report_format format;
	unsigned int stack_depth;
	bool unwind_cfi;		 /* --unwind: by CFI unwind tables, else frame pointers */
	struct allocator_opts alloc;	 /* --allocator, --mmap, --big-only */
	const char *exports[NR_EXPORTS]; /* file per enum export_kind, or NULL */
	const char *pprof_dir;		 /* --pprof-dir: a profile per report there */
	unsigned int pprof_keep;	 /* --pprof-keep: of them, the newest kept */
	const char *output;		 /* -o: the reports' file, NULL for stdout */
	struct listen_addr listen;	 /* --listen: serve metrics */
	struct block_filter filter;	 /* which live blocks count */
	bool threads;			 /* per-thread breakdown */
	unsigned int show_data;		 /* bytes of one live block per stack */
	bool leak_check;		 /* --leak-check: valgrind's classes per block */
	unsigned int leak_heuristics;	 /* --leak-check-heuristics: 1 << enum leak_heuristic */
	struct leak_wrapper leak_wrappers[LEAK_MAX_WRAPPERS]; /* --leak-check-wrapper */
	size_t nr_leak_wrappers;
	bool no_leak_learning; /* --leak-check-wrapper none: no wrapper's offset learned */
	uint64_t sample;       /* --sample: mean bytes between samples, 0 = all */
	struct map_sizes maps; /* --max-allocs, --max-stacks, --ringbuf-size, --max-unwind-rows */
	int verbose;
	bool version; /* --version was asked: the kernel's features follow the version line */
};

/* Several processes, each its own section in reports (not a single -p or command). */
bool options__multi_proc(const struct options *opts);

/*
 * The checks of a parsed command line (checks.c): options that cannot go
 * together are said, one line, and -EINVAL; what they imply is set (--all
 * for --cgroup and --comm, the caps). 0 or -EINVAL.
 */
int options__check(struct options *opts);

/*
 * Fill @opts from the command line. Returns 0 to go on, 1 when help or the
 * version was printed (exit 0), or -EINVAL after printing one line that
 * says what is wrong.
 */
int options__parse(struct options *opts, int argc, char **argv);

/* The exit status for options__parse()'s non-zero result: EXIT_OK after help, else EXIT_USAGE. */
int options__exit_code(int parse_result);

/*
 * The BPF side's settings for @o (cli/config.c), the one process being
 * @pid, --cgroup's cgroup @cg (NULL without); the loader sets what only it
 * knows (live_mask).
 */
void options__config(const struct options *o, pid_t pid, const struct cgroup_ref *cg,
		     struct alloctrace_config *cfg);

/* "8M", "512k", "1GiB", "4096": bytes in *@out. 0 or -EINVAL. */
int parse_size(const char *s, uint64_t *out);

#endif
