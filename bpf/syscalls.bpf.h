/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --big-only: no uprobes at all. Big blocks reach the kernel as anonymous
 * mmap (glibc serves requests above its mmap threshold so), mremap or brk;
 * raw syscall tracepoints see those, at a cost only to syscalls. The
 * programs are in alloctrace.bpf.c; what they decide with is here.
 */
#ifndef ALLOCTRACE_SYSCALLS_BPF_H
#define ALLOCTRACE_SYSCALLS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "alloctrace.h"
#include "config.bpf.h"
#include "procs.bpf.h"
#include "inflight.bpf.h"

#if defined(__TARGET_ARCH_x86)
#define NR_MMAP	  9
#define NR_MUNMAP 11
#define NR_BRK	  12
#define NR_MREMAP 25
#else
#define NR_MMAP	  222
#define NR_MUNMAP 215
#define NR_BRK	  214
#define NR_MREMAP 216
#endif
#define PROT_NONE     0
#define MAP_ANONYMOUS 0x20
#define MAP_STACK     0x20000
#define MAX_ERRNO     4095

/* Thread stacks and PROT_NONE reservations (glibc's arenas) are not allocations. */
static __always_inline bool big_mapping(__u64 len, __u64 prot, __u64 flags)
{
	return len >= cfg.big_threshold && (flags & MAP_ANONYMOUS) && !(flags & MAP_STACK) &&
	       prot != PROT_NONE;
}

/* Note @o's syscall's arguments for its exit; the in-flight record is free in this mode. */
static __always_inline void note_syscall(const struct owner *o, __u32 func, __u64 size, __u64 ptr)
{
	struct inflight *rec = thread_record(o->ps);

	if (!rec)
		return;
	open_call(rec, func, 0);
	rec->size = size;
	rec->ptr = ptr;
}

/*
 * --growth --big: where a mapping goes, from the kernel's search for room
 * (mm:vm_unmapped_area) inside the mmap or mremap call that asked. The
 * area found is @found, @searched bytes long. For an anonymous mapping of
 * whole huge pages without a hint the kernel searched a huge page more and
 * aligns the start within it: to the next huge page boundary, or one huge
 * page up when the area found is aligned and the search ran top-down
 * (mm/huge_memory.c, __thp_get_unmapped_area).
 */
#define HPAGE_PMD_SIZE		 (2ULL << 20)
#define VM_UNMAPPED_AREA_TOPDOWN 1

static __always_inline __u64 mapping_start(__u64 found, __u64 searched, __u64 len, __u64 off,
					   bool topdown)
{
	__u64 sub;

	if (searched != len + HPAGE_PMD_SIZE || len & (HPAGE_PMD_SIZE - 1))
		return found;
	sub = (off - found) & (HPAGE_PMD_SIZE - 1);
	return topdown && !sub ? found + HPAGE_PMD_SIZE : found + sub;
}

#endif
