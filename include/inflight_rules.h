/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The decisions about allocator calls in flight, as pure functions of
 * integers: the BPF programs call them (bpf/inflight.bpf.h, which explains
 * the rules), and tests/unit/test_inflight.c checks them case by case.
 * No BPF helper belongs here.
 */
#ifndef ALLOCTRACE_INFLIGHT_RULES_H
#define ALLOCTRACE_INFLIGHT_RULES_H

#ifndef __VMLINUX_H__
#include <stdbool.h>
#include <linux/types.h>
#endif
#include "alloctrace.h"
#include "arch.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* How far below an open call's stack pointer a call still counts as made from inside it. */
#define NEST_WINDOW (64 * 1024)

/* The mark of a record whose call is not in flight. */
#define CALL_CLOSED 0

enum call_verdict {
	CALL_OPENS,   /* entry: the outermost call: it opens the thread's record */
	CALL_INNER,   /* entry: made from inside the open call, which accounts for it */
	CALL_RECORD,  /* return: the open call returns: record what it made */
	CALL_CLOSES,  /* return: a release that held the record returns: nothing to record */
	CALL_FOREIGN, /* return: not the open call's: a nested or tail call's, or stale */
};

/* The mark a call opened under probe epoch @epoch carries. */
static __always_inline __u32 call_mark(__u32 epoch)
{
	return epoch + 1;
}

/* Is a record marked @mark a call in flight under @epoch (not closed, not stale)? */
static __always_inline bool call_open(__u32 mark, __u32 epoch)
{
	return mark != CALL_CLOSED && mark == call_mark(epoch);
}

/* The functions of @kind, or of @group, a bit each: a constant once inlined. */
static __always_inline __u64 funcs_of(int kind, int group)
{
	__u64 mask = 0;

#define ALLOC_FUNC(id, group_, kind_, nr_args, args, symbol, display)                              \
	mask |= (__u64)(FUNC_KIND_##kind_ == kind || FUNC_GROUP_##group_ == group) << FUNC_##id;
#include "alloc_funcs.def"
#undef ALLOC_FUNC
	return mask;
}

/* Is @func of @kind (alloc_funcs.def)? */
static __always_inline bool func_is(__u32 func, enum func_kind kind)
{
	return func < FUNC_MAX && (funcs_of(kind, -1) >> func & 1);
}

/* Calls that take a block and may hand back another one in its place. */
static __always_inline bool func_reallocs(__u32 func)
{
	return func_is(func, FUNC_KIND_REALLOCS);
}

/* mmap and mremap fail with MAP_FAILED, not NULL. */
static __always_inline bool func_maps(__u32 func)
{
	return func == FUNC_MMAP || func == FUNC_MREMAP;
}

/*
 * Allocations that may call other probed allocator functions: realloc(NULL,
 * n) tail-calls malloc, operator new calls malloc, glibc's memalign
 * family calls malloc for an alignment malloc's own meets, and musl's
 * calloc calls malloc. (malloc calls mmap, but the loader makes no
 * sessions with --mmap.)
 */
static __always_inline bool func_may_nest(__u32 func)
{
	__u64 callers = 1ULL << FUNC_CALLOC | 1ULL << FUNC_POSIX_MEMALIGN | 1ULL << FUNC_MEMALIGN |
			1ULL << FUNC_ALIGNED_ALLOC | 1ULL << FUNC_VALLOC | 1ULL << FUNC_PVALLOC;

	return func < FUNC_MAX &&
	       ((funcs_of(FUNC_KIND_REALLOCS, FUNC_GROUP_CXX) | callers) >> func & 1);
}

/* Releases that may call free themselves (operator delete, sdallocx, ...): they hold a record. */
static __always_inline bool func_holds_release(__u32 func)
{
	return func_is(func, FUNC_KIND_HELD_FREES);
}

/*
 * A call enters at stack pointer @sp while the thread's record carries
 * @mark and @open_sp (CALL_CLOSED: no record).
 */
static __always_inline enum call_verdict call_at_entry(__u32 mark, __u64 open_sp, __u32 epoch,
						       __u64 sp)
{
	if (call_open(mark, epoch) && sp <= open_sp && open_sp - sp < NEST_WINDOW)
		return CALL_INNER;
	return CALL_OPENS;
}

/*
 * Function @func returns at @sp; the record carries @mark, @open_func and
 * @open_sp. Its stack pointer there is the entry's plus RET_SP_DELTA
 * (arch.h): x86 pops the return address, arm64 returns through the link
 * register.
 */
static __always_inline enum call_verdict call_at_return(__u32 mark, __u32 open_func, __u64 open_sp,
							__u32 epoch, __u32 func, __u64 sp)
{
	if (!call_open(mark, epoch) || open_func != func || open_sp + RET_SP_DELTA != sp)
		return CALL_FOREIGN;
	return func_holds_release(func) ? CALL_CLOSES : CALL_RECORD;
}

/*
 * --sample at @rate mean bytes: count @size down from *@left; true when
 * this allocation is the sample (the caller draws the next gap then).
 */
static __always_inline bool sample_due(__u64 rate, __s64 *left, __u64 size)
{
	if (!rate)
		return true;
	*left -= size;
	return *left <= 0;
}

/*
 * --sample at @rate, deciding at a call's entry: true when @size leaves
 * *@left above zero, counted down then; false when sample_due() may take
 * this allocation, and *@left is left for it at the return.
 */
static __always_inline bool sample_passes(__u64 rate, __s64 *left, __u64 size)
{
	if (!rate || *left <= 0 || size >= (__u64)*left)
		return false;
	*left -= size;
	return true;
}

#endif
