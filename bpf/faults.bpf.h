/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --growth: no uprobes at all. The first touch of a page of anonymous
 * memory faults it in; the page-fault tracepoint walks the user stack
 * there and the pages map remembers which stack touched each page. The
 * loader asks /proc/PID/pagemap which of them are still resident and
 * drops those that are gone. The program is in alloctrace.bpf.c.
 */
#ifndef ALLOCTRACE_FAULTS_BPF_H
#define ALLOCTRACE_FAULTS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "alloctrace.h"
#include "config.bpf.h"
#include "procs.bpf.h"
#include "stacks.bpf.h"

#define FAULT_PAGE_SIZE 4096ULL
/* x86's error code: set for a fault on a present page (write to a shared or zero page). */
#define PF_PROT	     0x1
#define VM_GROWSDOWN 0x100

/* Page address (key.addr) -> the stack that touched it first; sized by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct alloc_key);
	__type(value, struct alloc_info);
} pages SEC(".maps");

/*
 * Anonymous as the kernel means it (vma_is_anonymous()): no vm_ops. The
 * kernel's own mappings have no file either but have ops, and are not the
 * process's memory: the [vdso] a forked child faults in at its first
 * time() (fork copies no page of it) and [vvar]. The main thread's stack
 * grows by faults too, but nobody allocated it.
 */
static long vma_anonymous(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	bool *anon = data;

	*anon = !vma->vm_ops && !(vma->vm_flags & VM_GROWSDOWN);
	return 0;
}

/*
 * A not-present fault on anonymous memory: a page the process touches for
 * the first time since it was mapped (or since it was given back). A fault
 * on a present page is copy-on-write of a page already counted.
 */
static __always_inline bool first_touch(__u64 addr, __u64 error_code)
{
	bool anon = false;

	if (error_code & PF_PROT)
		return false;
	/* Taken before the fault handler locks the address space: -EBUSY is rare. */
	if (bpf_find_vma(bpf_get_current_task_btf(), addr, vma_anonymous, &anon, 0))
		return false;
	return anon;
}

/*
 * The page at @addr now belongs to stack @stack_id. A page the loader has
 * not dropped yet (unmapped and mapped again between two reports) changes
 * hands. A full map counts as lost_allocs.
 */
static __always_inline void page_record(const struct owner *o, __u64 addr, __u64 stack_id,
					__u32 tid)
{
	struct alloc_key key = {
	    .addr = addr & ~(FAULT_PAGE_SIZE - 1), .tgid = o->tgid, .gen = o->gen};
	struct alloc_info info = {.size = FAULT_PAGE_SIZE, .stack_id = stack_id, .tid = tid};

	count_in(o->ps, CNT_ALLOCS);
	if (bpf_map_update_elem(&pages, &key, &info, BPF_ANY)) {
		count_in(o->ps, CNT_LOST_ALLOCS);
		return;
	}
	stats_add(o, stack_id, FAULT_PAGE_SIZE);
}

#endif
