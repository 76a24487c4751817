/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_TRACER_H
#define ALLOCTRACE_TRACER_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "alloctrace.h"
#include "config.h"
#include "probe/allocator.h"
#include "tracer/live.h"
#include "analysis/profile.h"

/*
 * The BPF side: programs, maps and the probes attached to the allocators
 * of the traced processes.
 *
 * One process is told apart by its tgid alone, and probed with a process
 * filter. Several (multi_proc) are listed in a per-process map, which
 * tracer__add_proc() fills and the BPF side extends (forks, --all). A list
 * known in advance (-p A,B) is probed a process at a time, each with its
 * own filter, so that no other process takes the probes' traps and each
 * is probed only once its unwind tables are made. The processes --all,
 * --comm, --cgroup and --follow-forks take up come and go: their
 * allocators are probed for every process, once per file, and entries of
 * the others are left out in BPF. Each process's entries in the maps
 * carry its image number (gen), which each exec bumps.
 */
struct tracer;

typedef void (*big_alloc_fn)(void *ctx, const struct big_alloc_event *ev);
typedef void (*task_fn)(void *ctx, const struct task_event *ev);

struct tracer_opts {
	struct alloctrace_config config; /* the BPF side's settings (options__config()) */
	bool big_only;	 /* only big mmap/mremap/brk: at the C library, or syscall */
	bool probe_mmap; /* --mmap: malloc's own mmap calls are probed too */
	/*
	 * Forks are followed under ptrace (a launched command): each child
	 * is held at its first stop until its own probes are attached.
	 */
	bool forks_held;
	struct map_sizes sizes;
	big_alloc_fn on_big_alloc;
	task_fn on_oom;	 /* the OOM killer chose a traced process */
	task_fn on_exec; /* a traced process runs a new program */
	/* A traced process's loader mapped objects, whose tables are made: it still waits. */
	task_fn on_linkmap;
	task_fn on_exit; /* a traced process ended (several processes traced) */
	void *ctx;
};

/*
 * Can this process load BPF programs and attach uprobes on this kernel,
 * with every kernel feature the run (@growth: --growth) needs? 0, or
 * -EPERM / -EOPNOTSUPP after printing what is missing, in one line.
 */
int tracer__check_system(bool growth);

/* --version: the kernel features found (features.def), or why they were not probed. */
void tracer__print_features(FILE *out);

/* Open, configure and load. NULL with errno set; the cause is printed. */
struct tracer *tracer__open(const struct tracer_opts *opts);
void tracer__free(struct tracer *t);

/*
 * Attach every probe of @a, the allocator of process @pid, not attached
 * yet for it (or for another process, where probes see every process);
 * with big_only, the C library's mmap, munmap, mremap and brk, or where
 * @a has none of them (or with --all) the syscall tracepoints, their cost
 * said once. On failure none of this call's stays attached. Returns how
 * many probes this call attached (0 when every one was there already), or
 * -errno: -ESRCH when the target exited meanwhile.
 */
int tracer__attach(struct tracer *t, const struct allocator *a, pid_t pid);

/*
 * With CFI unwinding, (re)build @pid's table of mappings: at once for a
 * process whose allocator was just found, rather than when a stack first
 * runs into code without one. 0 (also for a process gone, without code of
 * its own, or not readable), or -errno, said.
 */
int tracer__unwind_process(struct tracer *t, pid_t pid);

/*
 * With CFI unwinding, probe @pid's dynamic loader where it tells debuggers
 * of changes to its link map, so that objects it maps later get their
 * tables before their code runs (bpf/linkmap.bpf.h). Before the process's
 * tables are made: a change after them is then seen. Not with --big-only
 * or --growth, which attach no uprobe. Never fails the run: without the
 * probe, tables are made on a miss (what could not be done is said).
 */
void tracer__watch_linkmap(struct tracer *t, pid_t pid);

/*
 * @pid is the launched command, whose thread alloctrace traces: the probe
 * holds it at LINKMAP_HOLD_SIGNAL instead of only telling the loader.
 */
void tracer__hold_launched(struct tracer *t, pid_t pid);

/*
 * Thread @tid stopped at LINKMAP_HOLD_SIGNAL: if the probe held it, make
 * its process's tables for what its loader mapped and say true (the
 * signal is the tracer's, not to be delivered); else false.
 */
bool tracer__release_hold(struct tracer *t, pid_t tid);

/*
 * Process @pid ended: detach the links made for it alone (every mode with
 * several processes but --all), closed in a thread of their own.
 */
void tracer__detach_proc(struct tracer *t, pid_t pid);

/*
 * The one process became another program: detach every probe and forget
 * what was recorded, since its old address space is gone. 0 or -errno.
 */
int tracer__reset(struct tracer *t);

/* The counters summed over the CPUs, for the whole run. 0 or -errno. */
int tracer__read_counters(struct tracer *t, uint64_t counters[CNT_MAX]);

/*
 * Warn, once a run per function, of the functions probed on instructions
 * the kernel single-steps whose calls since the start reached
 * PLACEMENT_STEP_WARN_CALLS: the cost is then noticeable. 0 or -errno.
 */
int tracer__warn_stepped(struct tracer *t);

/* multi_proc: trace process @pid (named @comm) from now on. 0 or -errno. */
int tracer__add_proc(struct tracer *t, pid_t pid, const char *comm);

/*
 * multi_proc: forget process @pid's entry, if it is still image @gen (its
 * blocks: tracer__drop). 0 or -errno.
 */
int tracer__forget_proc(struct tracer *t, pid_t pid, uint32_t gen);

/* multi_proc: process @pid's entry into @st. 0 or -errno (-ENOENT: not traced). */
int tracer__proc_state(struct tracer *t, pid_t pid, struct proc_state *st);

/* Every entry of the per-process map; a non-zero return of @fn stops and is returned. */
typedef int (*proc_fn)(void *ctx, pid_t pid, const struct proc_state *st);
int tracer__for_each_proc(struct tracer *t, proc_fn fn, void *ctx);

/*
 * Read the per-stack statistics into the profile @profile_of gives for
 * each process and image (NULL: leave them out). 0 or -errno.
 */
typedef struct profile *(*profile_fn)(void *ctx, pid_t pid, uint32_t gen);
int tracer__collect(struct tracer *t, profile_fn profile_of, void *ctx);

/*
 * The same, and the entries read leave the map: those of processes
 * that ended, whose numbers can no longer change. 0 or -errno.
 */
int tracer__take(struct tracer *t, profile_fn profile_of, void *ctx);

/* Stack @stack_id's return addresses into *@trace (none: nr 0, as STACK_ID_NONE's). */
void tracer__read_stack(struct tracer *t, uint64_t stack_id, struct stack_trace *trace);

/*
 * Call @fn for every live block the maps hold, in batches; stops at the
 * first non-zero return of @fn, which it returns. 0 or -errno.
 */
typedef live_fn block_fn;
int tracer__for_each_block(struct tracer *t, block_fn fn, void *ctx);

/*
 * --growth: classify the pages first touched while the kernel could not
 * look up their mapping (its lock busy), of process @pid or of every
 * process (@pid 0), by /proc/PID/maps: those in anonymous memory join
 * their stacks' numbers, the others leave. Cheap when there are none (one
 * counter read). 0 or -errno.
 */
int tracer__classify_pages(struct tracer *t, pid_t pid);

/*
 * --growth: call @fn for every page first touched that is still resident
 * (the key its address, the info its stack and size), and forget the
 * pages gone from memory and swap. 0 or -errno.
 */
int tracer__for_each_page(struct tracer *t, block_fn fn, void *ctx);

/*
 * --growth: process @pid is in its exit stop, its memory still there: keep
 * the pages it has resident now as what it held at its end, once it is
 * gone (else nothing to do), its unclassified pages classified first,
 * while its mappings can still be read. 0 or -errno.
 */
int tracer__settle_pages(struct tracer *t, pid_t pid);

/* Delete the blocks and statistics of every process and image @keep rejects. 0 or -errno. */
typedef live_keep_fn keep_fn;
int tracer__drop(struct tracer *t, keep_fn keep, void *ctx);

/* The ring buffer's fd to poll, and handing its events to on_big_alloc and the rest. */
int tracer__events_fd(const struct tracer *t);
int tracer__consume(struct tracer *t);

/*
 * --growth: seconds until the pages the ring said had a busy mapping are
 * due to be classified (tracer__classify_pending()), 0 now, -1 when none
 * wait.
 */
double tracer__pages_due(const struct tracer *t);
/* Classify them, one reading of each process's mappings. 0 or -errno. */
int tracer__classify_pending(struct tracer *t);

#endif
