/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_TARGET_H
#define ALLOCTRACE_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "proc/exit.h"

/*
 * The traced process: one found by pid, or a command we launch. A launched
 * command is held under ptrace from before its first instruction until its
 * allocator is mapped, and stops once more as it exits, while its mappings
 * can still be read.
 */
struct target;

enum target_state {
	TARGET_RUNNING,
	TARGET_EXITING, /* stopped on its way out: mappings still readable */
	TARGET_EXECED,	/* stopped in a new program image: probe it anew */
	TARGET_HELD,	/* stopped as the hold signal reached it: target__release() */
	TARGET_GONE,
};

/* Both print one line naming the cause and return NULL with errno set. */
struct target *target__attach(pid_t pid);
struct target *target__launch(char *const argv[]);

/*
 * Launched targets: run the loader until @found(ctx) returns > 0 (the
 * allocator is mapped, no code of it has run yet). A negative return of
 * @found ends the wait with that error. 0 or -errno.
 */
int target__run_until(struct target *t, int (*found)(void *ctx), void *ctx);

/*
 * --follow-forks: a launched target's children (and theirs) are traced
 * from their first instruction, each stopping at its exit while its
 * memory can still be read, as the target does. Call while it is
 * stopped. 0 or -errno.
 */
int target__follow_forks(struct target *t);

/* A child target__update() met being made, traced since, or 0: each is told once. */
pid_t target__take_forked(struct target *t);

/* Such a child, as a launched target let go past its loader. NULL with errno set. */
struct target *target__adopt(pid_t pid);

/* Let a stopped launched target go on (after EXITING or EXECED). 0 or -errno. */
int target__resume(struct target *t);

/*
 * Launched targets: a stop as @sig reaches the thread is the session's to
 * answer (TARGET_HELD) rather than passed on: the tracer's probes send it
 * to hold the thread.
 */
void target__set_hold_signal(struct target *t, int sig);

/*
 * A running launched target: held in a ptrace stop of ours, each of its
 * threads, its memory still, until target__continue(); -EAGAIN when another stop came first
 * (target__update() then tells it). 0 or -errno.
 */
int target__interrupt(struct target *t);
int target__continue(struct target *t);

/* Let a TARGET_HELD target go on, the signal delivered or not. 0 or -errno. */
int target__release(struct target *t, bool deliver);

/* The thread a TARGET_HELD target holds (the first or another one), else 0. */
pid_t target__held_tid(const struct target *t);

/*
 * A launched target's threads other than the first are traced too
 * (PTRACE_O_TRACECLONE). Their registers, roots of a check, into *@regs:
 * in its exit stop (*@at_exit), those each read at its own exit stop when
 * exit_group or a fatal signal ended it (the first thread's exit stop
 * waits for them); held by target__interrupt(), those read there. Valid
 * until the next call. The count.
 */
struct arch_regs;
size_t target__thread_registers(struct target *t, const struct arch_regs **regs, bool *at_exit);

/* An fd that polls readable when target__update() has news, or -1 (SIGCHLD). */
int target__fd(const struct target *t);

/* Handle what happened to the target since the last call. */
enum target_state target__update(struct target *t);

pid_t target__pid(const struct target *t);
const char *target__comm(const struct target *t);
struct target_exit target__exit(const struct target *t);

/* How a process ended, from a wait(2) status. */
struct target_exit target_exit__from_status(int status);

/* Read the name again: a process traced with -p ran execve. */
void target__refresh_comm(struct target *t);

/* Let go of the target: a launched one that never ran is killed. */
void target__free(struct target *t);

#endif
