/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Calls in flight: what an allocator call's entry probe notes for its
 * return probe. The rules, all of them (decided in include/inflight_rules.h,
 * checked case by case in tests/unit/test_inflight.c):
 *
 * - Each thread has one record, in task-local storage: the outermost
 *   allocator call it is in, between entry and return (its arguments, its
 *   function, its stack pointer at entry, the process image), and its
 *   sampling countdown. A thread that dies mid-call takes its record with
 *   it, so a recycled tid starts clean.
 *
 * - Nested calls. An allocator call made from inside another runs on the
 *   same stack, at or below the outer call's stack pointer: glibc's
 *   realloc(NULL, n) tail-calls malloc and realloc(p, 0) calls free,
 *   operator new calls malloc, operator delete and sdallocx call free. Such
 *   a call is inner (CALL_INNER): it leaves the record alone and is not
 *   counted, since the outer call accounts for the block.
 *
 * - Returns. The return closes the record only if it is the open call's
 *   own: the same function, with the stack pointer where its entry left it
 *   (RET_SP_DELTA). Otherwise it is foreign (CALL_FOREIGN): an inner
 *   call's, such as a tail-called malloc's, whose return probe fires first
 *   at the same stack pointer, or a recursive call's, lower on the stack.
 *
 * - Releases. free releases its block at entry and opens no record. The
 *   other releases (operator delete, sdallocx, free_sized, ...) may call
 *   free: they hold the record until they return (CALL_CLOSES), so that
 *   free inside them is inner and not an untracked free.
 *
 * - NEST_WINDOW. A record stays open when its call never comes back
 *   through the return probe: an exception thrown out of operator new, a
 *   longjmp out of a signal handler. Calls further down the stack would
 *   then pass for inner ones and go unseen; only those within NEST_WINDOW
 *   (64 KiB) below it do, and any other call opens a new record over it.
 *
 * - probe_epoch. When the loader detaches every probe while calls may be
 *   in flight (a process traced with -p ran execve, and the returns of
 *   the old program's calls never come), it bumps probe_epoch. A record is
 *   open only while it carries call_mark() of the current epoch, and
 *   CALL_CLOSED (0) never is, so a new record starts closed.
 *
 * - Sampling (--sample). The countdown lives in the record across calls:
 *   a successful outer allocation counts its bytes down at its return, and
 *   the one that crosses zero is recorded and draws the next gap from the
 *   loader's table. Inner calls do not count. Big-allocation alerts come
 *   whether or not the allocation was sampled. Where the probes are uprobe
 *   sessions (6.13+), an outer call that will not cross zero is counted
 *   down at its entry instead and takes no return probe (sample_passes_by),
 *   failed or not; inner calls take none either, sampling or not, nor do
 *   the calls of processes not traced.
 *
 * - --big-only's system-call fallback uses the same record between a
 *   syscall's entry and exit: syscalls do not nest, and a process it
 *   serves has no probes, so any open record is the syscall's.
 */
#ifndef ALLOCTRACE_INFLIGHT_BPF_H
#define ALLOCTRACE_INFLIGHT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "alloctrace.h"
#include "inflight_rules.h"
#include "config.bpf.h"
#include "procs.bpf.h"

/* Bumped by the loader as it detaches every probe: see probe_epoch above. */
__u32 probe_epoch = 0;

/* One allocation call between its entry and its return. */
struct inflight {
	__u32 mark;	    /* call_mark(probe_epoch) while in flight: the rest is valid */
	__u32 sample_armed; /* sample_left holds a draw */
	__s64 sample_left;  /* bytes this thread allocates before its next sample */
	__u64 sp;
	__u64 size;
	__u64 ptr; /* realloc's old block, posix_memalign's out pointer */
	__u32 func;
	__u32 has_old; /* old block was tracked and is held in .old */
	__u32 gen;     /* the process's image at entry */
	struct alloc_info old;
};

/* Two cheap gets per call instead of a hash update and delete. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight);
} inflight SEC(".maps");

/*
 * Exponentially distributed gaps between samples (mean sample_rate), drawn
 * by the loader: BPF has no floating point to draw them itself.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SAMPLE_DRAWS);
	__type(key, __u32);
	__type(value, __u64);
} sample_gaps SEC(".maps");

static __always_inline struct inflight *thread_state(bool create)
{
	return bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* The thread's record, made if need be; a thread left without one is counted for @ps. */
static __always_inline struct inflight *thread_record(struct proc_state *ps)
{
	struct inflight *rec = thread_state(true);

	if (!rec)
		count_in(ps, CNT_LOST_INFLIGHT);
	return rec;
}

/* The call in flight on this thread, or NULL. */
static __always_inline struct inflight *in_flight(void)
{
	struct inflight *rec = thread_state(false);

	return rec && call_open(rec->mark, probe_epoch) ? rec : NULL;
}

/* A call enters at @sp on a thread whose record is @rec. */
static __always_inline enum call_verdict entry_verdict(const struct inflight *rec, __u64 sp)
{
	return call_at_entry(rec->mark, rec->sp, probe_epoch, sp);
}

/* Function @func returns at @sp on a thread whose record is @rec. */
static __always_inline enum call_verdict return_verdict(const struct inflight *rec, __u32 func,
							__u64 sp)
{
	return call_at_return(rec->mark, rec->func, rec->sp, probe_epoch, func, sp);
}

/* Is a call entering at @sp inside the one in flight on this thread? */
static __always_inline bool call_inner(__u64 sp)
{
	struct inflight *rec = thread_state(false);

	return rec && entry_verdict(rec, sp) == CALL_INNER;
}

/* @rec now holds function @func's call, which entered at @sp, with no old block. */
static __always_inline void open_call(struct inflight *rec, __u32 func, __u64 sp)
{
	rec->mark = call_mark(probe_epoch);
	rec->sp = sp;
	rec->func = func;
	rec->has_old = 0;
}

static __always_inline void close_call(struct inflight *rec)
{
	rec->mark = CALL_CLOSED;
}

static __always_inline __s64 draw_gap(void)
{
	__u32 idx = bpf_get_prandom_u32() & (SAMPLE_DRAWS - 1);
	__u64 *gap = bpf_map_lookup_elem(&sample_gaps, &idx);

	return gap && *gap ? *gap : cfg.sample_rate;
}

/* The thread's countdown, drawn at its first allocation. */
static __always_inline void arm_sample(struct inflight *state)
{
	if (state->sample_armed)
		return;
	state->sample_left = draw_gap();
	state->sample_armed = 1;
}

/*
 * Poisson sampling by bytes, as heapprofd and tcmalloc do: the sampled
 * allocation stands for 1/(1-exp(-size/rate)) of its kind.
 */
static __always_inline bool sampled(struct inflight *state, __u64 size)
{
	if (!cfg.sample_rate)
		return true;
	arm_sample(state);
	if (!sample_due(cfg.sample_rate, &state->sample_left, size))
		return false;
	state->sample_left = draw_gap();
	return true;
}

/*
 * At the entry of the call @rec just opened, in a session: true when its
 * return has nothing to do, so that the session skips it. Its bytes are
 * then counted down here instead. Without sampling every outer call is
 * recorded at its return. The return is needed by a sample, a big
 * allocation's alert, a reallocation of a tracked block, and a call that
 * may make allocator calls itself, whose record must stay open for them
 * to pass as inner ones.
 */
static __always_inline bool sample_passes_by(struct inflight *rec)
{
	if (!cfg.sample_rate || rec->has_old || func_may_nest(rec->func) ||
	    (cfg.big_threshold && rec->size >= cfg.big_threshold))
		return false;
	arm_sample(rec);
	return sample_passes(cfg.sample_rate, &rec->sample_left, rec->size);
}

#endif
