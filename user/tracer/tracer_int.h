/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_TRACER_INT_H
#define ALLOCTRACE_TRACER_INT_H

/*
 * The tracer's insides, shared by its files: tracer.c loads and
 * configures the BPF object; attach.c attaches its programs to the probe
 * sites and detaches them; maps.c reads and prunes its maps for the
 * session. Nothing outside user/tracer/ includes this.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "tracer/tracer.h"

/*
 * A file probed already for a process filter and its functions: with -1
 * every process shares the probes, else only that one has them.
 */
struct probed_file {
	dev_t dev;
	ino_t ino;
	pid_t pid;	       /* the probes' process filter, -1 for every process */
	uint64_t funcs;	       /* bit per enum alloc_func */
	uint64_t stepped_said; /* functions found single-stepped, for the whole run */
};

/* The links made for one process alone, detached when it ends (own_links). */
struct proc_links {
	pid_t pid;
	int *fds;
	size_t nr_fds;
	struct bpf_link **links;
	size_t nr_links;
};

enum task_tracepoint {
	TP_OOM,
	TP_EXEC,
	TP_FORK,
	TP_EXIT,
	NR_TRACEPOINTS,
};

/*
 * Unwind table room, taken a chunk (UNWIND_CHUNK_ENTRIES) at a time as
 * objects are loaded: by default no cap a program reaches (clang and its
 * libraries take 2.5M rows) but the map limit, 64M rows of 8 bytes; the
 * page index, an entry per 256 bytes of text, likewise. Processes with
 * tables at once.
 */
#define DEFAULT_UNWIND_ROWS MAX_MAP_ENTRIES
#define UNWIND_PAGES	    MAX_MAP_ENTRIES
#define UNWIND_PROCS	    1024

struct tracer {
	struct alloctrace_bpf *skel;
	struct bpf_program *entry_progs[FUNC_MAX]; /* its args' program (arg_shapes.def) */
	struct ring_buffer *events;
	/* Perf-event links where the kernel has no usable uprobe_multi... */
	struct bpf_link **links;
	size_t nr_links, links_cap;
	/* ...else one uprobe_multi link per object, program and direction. */
	bool multi;
	/*
	 * Uprobe sessions (6.13+, no --mmap): allocations are probed by
	 * alloc_session, which skips the return of a call that needs none:
	 * another process's, an inner one, one sampling passes by.
	 */
	bool session;
	int *link_fds;
	size_t nr_link_fds, link_fds_cap;
	struct probed_file *files;
	size_t nr_files, files_cap;
	uint64_t stepped_warned; /* functions whose stepped calls were warned of */
	/* The dynamic loaders whose link map is watched (linkwatch.c): dev and ino. */
	struct probed_file *watched;
	size_t nr_watched, watched_cap;
	size_t nr_probes;
	unsigned int stack_depth;
	uint32_t unwind_rows;
	bool no_probes;	   /* --growth: nothing on the allocator */
	bool syscalls;	   /* --big-only: its probes, or its syscall tracepoints where they fail */
	bool growth;	   /* the page-fault tracepoint or events */
	bool map_search;   /* the unmapped-area tracepoint: --growth with --big */
	bool raw_attached; /* those: once, whatever the processes */
	pid_t pid;	   /* the one process, -1 with several */
	/*
	 * Each process's uprobes filtered by its pid, so that no other process
	 * holds a breakpoint: -p, a launched command, and its children with
	 * --follow-forks, each held at its first ptrace stop until its probes
	 * are on. With --all, --comm, --cgroup and -p with --follow-forks they
	 * are not known before they call the allocator, or not held, and the
	 * probes see every process (the procs map leaves the others out). With
	 * several processes each one's links are its own (@own_links),
	 * detached as it ends.
	 */
	bool per_pid;
	bool own_links;
	struct proc_links *procs;
	size_t nr_procs, procs_cap;
	int nr_cpus;
	uint64_t *percpu; /* room for one per-CPU counter value */
	big_alloc_fn on_big_alloc;
	task_fn on_oom;
	task_fn on_exec;
	task_fn on_linkmap;
	task_fn on_exit;
	struct bpf_link *task_links[NR_TRACEPOINTS];
	struct unwinder *unwinder; /* NULL unless unwinding by CFI */
	struct live_table *live;
	/* --growth: the images whose pages were read at their exit stop (tgid and gen). */
	struct alloc_key *settled;
	size_t nr_settled;
	/* --growth: pages whose mapping was busy at their fault, to classify (EVENT_PAGE). */
	struct alloc_key *unclassified;
	size_t nr_unclassified, unclassified_cap;
	double classified_at; /* CLOCK_MONOTONIC seconds of the last batch */
	bool warned_procs_full;
	void *ctx;
};

/* The process filter @pid's probes are attached with: itself, or -1 for every process. */
static inline pid_t tracer__probe_filter(const struct tracer *t, pid_t pid)
{
	return t->per_pid ? pid : -1;
}

/* Room for one more perf-event link. 0 or -ENOMEM. */
int tracer__reserve_link(struct tracer *t);

/*
 * --growth: the page-fault software event on every online CPU, where the
 * kernel has no page_fault_user tracepoint (pagefaults.c). 0 or -errno.
 */
int pagefaults__attach(struct tracer *t);

/* Room for one more uprobe_multi link fd. 0 or -ENOMEM. */
int tracer__reserve_link_fd(struct tracer *t);

/*
 * Detach every probe and raw tracepoint (attach.c). The files stay known:
 * a warning said of one is not said again after an exec.
 */
void tracer__detach_all(struct tracer *t);

/*
 * The links made since there were @nr_links and @nr_link_fds become
 * @pid's own (own_links). 0 or -ENOMEM, the links then still the run's.
 */
int tracer__own_links(struct tracer *t, pid_t pid, size_t nr_links, size_t nr_link_fds);

/* Read @pid's mappings again into its unwind table, new objects' rows made. */
void tracer__reread_mappings(struct tracer *t, pid_t pid);

/* EVENT_LINKMAP: a process not held (linkwatch.c) changed its link map. */
void linkwatch__changed(struct tracer *t, const struct task_event *ev);

/* Delete every entry of the hash map @map. 0 or -errno. */
int maps__clear(struct bpf_map *map);

/* Set every counter back to 0 on every CPU. 0 or -errno. */
int maps__zero_counters(struct tracer *t);

/*
 * --growth: classify the @n unclassified pages at @keys (any order; sorted
 * here) by their processes' /proc/PID/maps. 0 or -errno.
 */
int tracer__classify_keys(struct tracer *t, struct alloc_key *keys, size_t n);

#endif
