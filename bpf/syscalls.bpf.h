/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --big-only: big blocks reach the kernel as anonymous mmap (glibc serves
 * requests above its mmap threshold so), mremap or brk. Seen where the
 * traced process calls glibc's mmap, munmap, mremap and brk (probes that
 * only its address space holds), or, where those cannot be probed (--all,
 * musl, a static program without them), at the system call: raw
 * tracepoints that run on every system call of the host. The programs are
 * in alloctrace.bpf.c; what they decide with is here.
 */
#ifndef ALLOCTRACE_SYSCALLS_BPF_H
#define ALLOCTRACE_SYSCALLS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "alloctrace.h"
#include "config.bpf.h"
#include "procs.bpf.h"
#include "inflight.bpf.h"
#include "arch.bpf.h"

#define PROT_NONE     0
#define MAP_ANONYMOUS 0x20
#define MAP_STACK     0x20000
#define MAX_ERRNO     4095

/* With several processes, those the system-call fallback serves (the loader's to write). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PROCS);
	__type(key, __u32);
	__type(value, __u8);
} syscall_procs SEC(".maps");

/* Set by the loader where the fallback serves every process (--all, probes for none). */
bool syscalls_all;

/*
 * Are @tgid's big blocks the syscall programs' to see? One process: it has
 * them attached only if it needs them; with syscalls_all every process;
 * otherwise only those the loader put in syscall_procs, as the others'
 * probes see their blocks already.
 */
static __always_inline bool at_syscalls(__u32 tgid)
{
	return !cfg.multi_proc || syscalls_all || bpf_map_lookup_elem(&syscall_procs, &tgid);
}

/*
 * A child forked by a process the fallback serves runs the same program
 * on the same C library: served from its first instruction, as its
 * parent. Its exec tells the loader, which probes the new allocator and
 * takes it out if that has the functions to probe.
 */
static __always_inline void syscalls_inherit(__u32 parent, __u32 child)
{
	__u8 one = 1;

	if (cfg.multi_proc && bpf_map_lookup_elem(&syscall_procs, &parent))
		bpf_map_update_elem(&syscall_procs, &child, &one, BPF_ANY);
}

/* A process ended: its pid, taken up again, is another's. */
static __always_inline void syscalls_forget(__u32 tgid)
{
	if (cfg.multi_proc)
		bpf_map_delete_elem(&syscall_procs, &tgid);
}

/* The calling process's heap end (its program break). */
static __always_inline __u64 heap_end(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return BPF_CORE_READ(task, mm, brk);
}

/*
 * A heap grown from @old to now: where the growth starts and its size into
 * *@size, or 0 when it is not big. Heap growth is reported, not tracked:
 * glibc gives it back piecemeal.
 */
static __always_inline __u64 heap_growth(__u64 old, __u64 now, __u64 *size)
{
	if (now <= old || now - old < cfg.big_threshold)
		return 0;
	*size = now - old;
	return old;
}

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
