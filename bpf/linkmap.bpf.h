/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The dynamic loader's link map: ld.so calls _dl_debug_state (r_debug's
 * r_brk) for debuggers before and after every change of its objects, with
 * r_debug.r_state RT_ADD or RT_DELETE before and RT_CONSISTENT after. At
 * RT_CONSISTENT the new objects are mapped and none of their code has run:
 * not their constructors, not a function dlsym found. That is when the
 * loader must make their unwind tables, and the probe here makes sure it
 * can: a thread of the launched command, which the loader traces, is held
 * in a ptrace stop (LINKMAP_HOLD_SIGNAL) until its tables are in; a thread
 * of any other traced process tells the loader and waits in the probe (a
 * sleepable one) until the loader answers, for cfg.linkmap_wait_ns at
 * most, on its CPU: a uprobe cannot sleep until woken.
 */
#ifndef ALLOCTRACE_LINKMAP_BPF_H
#define ALLOCTRACE_LINKMAP_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "alloctrace.h"
#include "config.bpf.h"
#include "procs.bpf.h"
#include "events.bpf.h"

/* The threads held, by thread id, with their tgid: the loader claims their stops. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} linkmap_holds SEC(".maps");

/* The launched command, whose threads the loader traces: set by the loader (0: none). */
__u32 linkmap_hold_tgid;

/*
 * The waits, by tgid: how many changes its threads told the loader of
 * (linkmap_asked, counted here), and how many of those the loader has
 * made tables for (linkmap_answered, written by the loader). Two maps, so
 * that neither side ever writes the other's number.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} linkmap_asked SEC(".maps"), linkmap_answered SEC(".maps");

/* Set by the loader as it leaves: nobody answers any more. */
bool linkmap_no_answers;

/* enum r_state's value once a change is complete (<link.h>). */
#define RT_CONSISTENT 0

/*
 * Whether the loader's stop can hold the calling thread: it is the
 * launched command's and ptraced by alloctrace itself (--leak-check's
 * snapshots trace other processes' threads, and never for long); it does
 * not block the signal, which would leave it running; and no such signal
 * is pending for it already, which the hold's would merge with and which
 * would then never be delivered: such a thread waits in the probe instead.
 * And the process leaves the signal to its default (ignore) or ignores
 * it: if alloctrace dies while the thread is held, the kernel detaches it
 * and delivers the stop's signal, which must then do nothing. A handler
 * of its own (the Go runtime's, for one) would run for a signal nobody
 * sent it.
 */
static __always_inline bool linkmap_can_hold(__u32 tgid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 bit = 1ULL << (LINKMAP_HOLD_SIGNAL - 1);
	__u64 busy = BPF_CORE_READ(task, blocked.sig[0]) |
		     BPF_CORE_READ(task, pending.signal.sig[0]) |
		     BPF_CORE_READ(task, signal, shared_pending.signal.sig[0]);

	__u64 handler =
	    (__u64)BPF_CORE_READ(task, sighand, action[LINKMAP_HOLD_SIGNAL - 1].sa.sa_handler);

	/* SIG_DFL 0, SIG_IGN 1 */
	return linkmap_hold_tgid && tgid == linkmap_hold_tgid && BPF_CORE_READ(task, ptrace) &&
	       BPF_CORE_READ(task, parent, tgid) == cfg.self_tgid && !(busy & bit) && handler <= 1;
}

struct linkmap_wait {
	__u32 tgid;
	__u64 ticket;	/* the loader's answer to wait for */
	__u64 deadline; /* bpf_ktime_get_ns() */
	bool answered;
};

static long linkmap_poll(__u64 i, void *data)
{
	struct linkmap_wait *w = data;
	__u64 *answered = bpf_map_lookup_elem(&linkmap_answered, &w->tgid);

	w->answered = (answered && *answered >= w->ticket) || linkmap_no_answers;
	return w->answered || bpf_ktime_get_ns() > w->deadline;
}

/* Polls of one inner bpf_loop(), and how many of those: far over LINKMAP_WAIT_NS at 1 ns a poll. */
#define LINKMAP_POLLS  (1U << 20)
#define LINKMAP_ROUNDS (1U << 12)

static long linkmap_round(__u64 i, void *data)
{
	struct linkmap_wait *w = data;

	bpf_loop(LINKMAP_POLLS, linkmap_poll, w, 0);
	return w->answered || bpf_ktime_get_ns() > w->deadline;
}

/*
 * Tell the loader and wait for its answer, at most cfg.linkmap_wait_ns.
 * bpf_loop() is bounded by its count: one inside another reaches the
 * deadline, and the verifier looks at each callback once.
 */
static __always_inline void linkmap_wait(__u32 tgid, struct proc_state *ps)
{
	struct linkmap_wait w = {.tgid = tgid};
	__u64 zero = 0, *asked;

	bpf_map_update_elem(&linkmap_asked, &tgid, &zero, BPF_NOEXIST);
	asked = bpf_map_lookup_elem(&linkmap_asked, &tgid);
	if (asked)
		w.ticket = __sync_add_and_fetch(asked, 1);
	send_task_event(EVENT_LINKMAP, tgid, ps);
	if (!asked)
		return;
	w.deadline = bpf_ktime_get_ns() + cfg.linkmap_wait_ns;
	bpf_loop(LINKMAP_ROUNDS, linkmap_round, &w, 0);
}

/*
 * @ip: _dl_debug_state's address; @to_state: from there to r_debug.r_state
 * (the probe's cookie). A state that cannot be read counts as a change
 * complete: a needless hold costs a reading of the mappings, a missed one
 * cut stacks.
 */
static __always_inline void linkmap_changed(__u64 ip, __s64 to_state)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, state = RT_CONSISTENT;
	struct owner o;

	if (!owner_of(pid_tgid, &o))
		return;
	if (bpf_probe_read_user(&state, sizeof(state), (void *)(ip + to_state)))
		state = RT_CONSISTENT;
	/* RT_ADD, RT_DELETE: the change is about to start, the mappings are the old ones. */
	if (state != RT_CONSISTENT)
		return;
	if (linkmap_can_hold(o.tgid) &&
	    !bpf_map_update_elem(&linkmap_holds, &tid, &o.tgid, BPF_ANY)) {
		if (!bpf_send_signal_thread(LINKMAP_HOLD_SIGNAL))
			return;
		bpf_map_delete_elem(&linkmap_holds, &tid);
	}
	if (cfg.linkmap_wait_ns)
		linkmap_wait(o.tgid, o.ps);
	else
		send_task_event(EVENT_LINKMAP, o.tgid, o.ps);
}

#endif
