/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The ring buffer of events the loader reads: big allocations, OOM, exec, unwind misses. */
#ifndef ALLOCTRACE_EVENTS_BPF_H
#define ALLOCTRACE_EVENTS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "alloctrace.h"
#include "procs.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* An event lost to a full ring buffer is counted for @ps's process. */
static __always_inline void send_event(void *ev, __u64 size, struct proc_state *ps)
{
	if (bpf_ringbuf_output(&events, ev, size, 0))
		count_in(ps, CNT_LOST_EVENTS);
}

static __always_inline void send_task_event(__u32 type, __u32 tgid, struct proc_state *ps)
{
	struct task_event ev = {.type = type, .tgid = tgid, .time_ns = bpf_ktime_get_ns()};

	send_event(&ev, sizeof(ev), ps);
}

#endif
