/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_SNAPSHOT_H
#define ALLOCTRACE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "proc/procmaps.h"

/*
 * A process's memory and registers at one instant. Every thread is
 * seized and interrupted, its registers read, and (unless @stay_stopped)
 * a child forked from it by a clone syscall run in one of its threads:
 * the child, stopped and traced, is never let run and keeps the memory as
 * it was, copy-on-write, while the target goes on at once. The child is
 * made with no exit signal, so the target gets no SIGCHLD, and
 * snapshot__free reaps it in the target with a wait4 run the same way.
 * All of that is done by a keeper process (keeper.h), which finishes or
 * undoes it by itself if alloctrace dies at any instant; alloctrace only
 * reads the child's memory. Not so for @ours, which alloctrace traces.
 */
struct snapshot;

/*
 * NULL with errno set: EBUSY when a debugger already traces @pid, ESRCH
 * when it exited or is a zombie (whatever step found it gone). @ours:
 * the caller traces @pid and each of its threads, and holds it in a
 * ptrace stop (its exit stop, or one the caller made while it runs):
 * that thread's registers are read as they are and it stays stopped; the
 * other threads' are the caller's @others (held by it, or read at their
 * exit stops), @nr_others of them.
 */
struct arch_regs;
struct snapshot *snapshot__take(pid_t pid, bool stay_stopped, bool ours,
				const struct arch_regs *others, size_t nr_others);

/*
 * Kill the child and reap it, or resume the target left stopped; once.
 * snapshot__free does it if not done. 0 or -errno.
 */
int snapshot__release(struct snapshot *s);
void snapshot__free(struct snapshot *s);

/* Read the snapshot's memory: 0, or -EFAULT when part of it is not mapped. */
int snapshot__read(void *s, uint64_t addr, void *buf, size_t len);

const struct proc_maps *snapshot__maps(const struct snapshot *s);
/* Every register of every thread, and each thread's stack pointer. */
const uint64_t *snapshot__registers(const struct snapshot *s, size_t *n);
const uint64_t *snapshot__stack_pointers(const struct snapshot *s, size_t *n);
unsigned int snapshot__threads(const struct snapshot *s);
/* Thread @i's registers, of the stack pointers' order. */
const struct arch_regs *snapshot__thread_registers(const struct snapshot *s, size_t i);
/* Thread @i (of the stack pointers' order) was stopped in a system call, not in user code. */
bool snapshot__in_syscall(const struct snapshot *s, size_t i);
bool snapshot__stopped(const struct snapshot *s); /* no child: the target waits */
bool snapshot__gone(const struct snapshot *s);	  /* the target exited since */
uint64_t snapshot__pause_ns(const struct snapshot *s);
uint64_t snapshot__clone_ns(const struct snapshot *s); /* the part of the pause in clone */
uint64_t snapshot__reap_ns(const struct snapshot *s);  /* the target's stop in release */

/* The monotonic clock pauses are measured with, in ns. */
uint64_t snapshot_clock_ns(void);

#endif
