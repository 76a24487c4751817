/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_PROBE_EVENTS_H
#define ALLOCTRACE_PROBE_EVENTS_H

/*
 * Probes that follow a process's forks by themselves: uprobe events
 * defined in tracefs (uprobe_events) and opened as a perf event for each
 * thread of a traced process with inherit set. At a fork the kernel gives
 * the child copies of its parent's events before the child runs
 * (copy_process(); trace_uprobe_filter_add() skips the walk of the
 * file's mappings, the child's copy of them keeping the breakpoints), and
 * takes them at its exit: no hold, and no register or unregister (each a
 * walk of every mapping of the file, with every fork on the host waiting,
 * as dup_mmap_sem is held) per child.
 *
 * A BPF program runs on the event's tracepoint, whichever traced process
 * hit it: it is attached once a tracepoint, with its cookie, to an anchor
 * event on a kernel thread (kthreadd), whose filter holds no address
 * space: no process that is not traced holds a breakpoint.
 *
 * tracefs is reached through a mount of our own that is attached nowhere
 * (fsopen(), fsmount()): nothing is mounted on the host. The events are
 * named alloctrace_PID/pN, and removed at the end; those of an alloctrace
 * that died are removed by the next one.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct probe_events;

/* NULL with errno set (ENOTSUP: no tracefs, no kernel thread to anchor on), said. */
struct probe_events *probe_events__open(void);

/* Detach the anchors and remove the definitions; the per-thread events are the caller's. */
void probe_events__close(struct probe_events *pe);

/*
 * The tracepoint of a probe at @offset of @path (the file @dev, @ino) as
 * @retprobe says, @prog attached with @cookie: defined and anchored at
 * its first use. Its id, or -errno.
 */
long probe_events__tracepoint(struct probe_events *pe, struct bpf_program *prog, const char *path,
			      dev_t dev, ino_t ino, uint64_t offset, bool retprobe,
			      uint64_t cookie);

/* Tracepoint @id opened for thread @tid, inherited by the threads and children it makes: its fd, or
 * -errno. */
int probe_events__open_thread(long id, pid_t tid);

/*
 * An event on thread @tid that its children do not inherit: its fd, or
 * -errno. Without one, the perf context of a child that inherited every
 * event is a clone of its parent's, and the scheduler swaps the two at a
 * switch between them (perf_event_context_sched_out()), events and all:
 * a uprobe event's filter, its target's address space, then names the
 * other process, and the child's calls pass or fail it by chance (1 child
 * in 100-3,000 lost its returns in a fork churn; none with this).
 */
int probe_events__open_unshared(pid_t tid);

#endif
