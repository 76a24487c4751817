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
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include "alloctrace.h"
#include "arch.bpf.h"
#include "config.bpf.h"
#include "events.bpf.h"
#include "procs.bpf.h"
#include "stacks.bpf.h"

#define FAULT_PAGE_SIZE GROWTH_PAGE_SIZE
/* x86's error code: set for a fault on a present page (write to a shared or zero page). */
#define PF_PROT	     0x1
#define VM_GROWSDOWN 0x100
#define EBUSY	     16 /* bpf_find_vma(): the address space's lock not taken */

/* Page address (key.addr) -> the stack that touched it first; sized by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct alloc_key);
	__type(value, struct alloc_info);
} pages SEC(".maps");

/*
 * Rate-adaptive sampling. The cost is the find_vma, the stack walk and the
 * hash insert of each recorded fault (~8 us; Apache with mod_deflate takes
 * ~24 faults a request); an unsampled fault pays for one hash delete only.
 * Each CPU keeps a bucket of FAULT_BURST tokens refilled at one per
 * FAULT_TOKEN_NS (a rate limit by theoretical arrival time, tat): a fault
 * that finds a token is recorded exactly, so a burst of first touches (a
 * program's start, a buffer filled at once, up to 64 MiB) is exact whatever
 * came before: a full bucket costs a CPU ~0.13 s once, and its refill 0.8%
 * of one. (4,096 tokens left a 32 MiB buffer filled at once half sampled,
 * at P = 64: an estimate with a standard error of 5%.)
 * Past it one in P is, P a power of two growing with the CPU's faults in
 * the current window of FAULT_WINDOW_NS (up to 64: a CPU takes at most ~1M
 * faults a second), and the page is recorded as P pages, so resident sums
 * stay unbiased estimates: whether a fault is recorded depends on the faults
 * before it, never on its page.
 */
#define FAULT_TOKEN_NS	1000000ULL
#define FAULT_BURST	16384
#define FAULT_WINDOW_NS 100000000ULL
#define FAULT_MAX_SHIFT 6

struct fault_window {
	__u64 tat;
	__u64 start;
	__u64 count;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fault_window);
} fault_windows SEC(".maps");

/* log2 of this fault's sampling period: 0 while the CPU has a token. */
static __always_inline __u32 fault_shift(void)
{
	struct fault_window *w;
	__u64 now = bpf_ktime_get_ns(), tat;
	__u32 zero = 0, shift = 1;

	w = bpf_map_lookup_elem(&fault_windows, &zero);
	if (!w)
		return 0;
	if (now - w->start >= FAULT_WINDOW_NS) {
		w->start = now;
		w->count = 0;
	}
	w->count++;
	tat = (w->tat > now ? w->tat : now) + FAULT_TOKEN_NS;
	if (tat - now <= FAULT_BURST * FAULT_TOKEN_NS) {
		w->tat = tat;
		return 0;
	}
	while (shift < FAULT_MAX_SHIFT && (FAULT_WINDOW_NS / FAULT_TOKEN_NS << shift) < w->count)
		shift++;
	return shift;
}

/*
 * The pages map forgets @key: a page given back, or touched again. An
 * unclassified page's count goes with it.
 */
static __always_inline void page_forget(const struct owner *o, const struct alloc_key *key)
{
	struct alloc_info *old = bpf_map_lookup_elem(&pages, key);

	if (!old)
		return;
	if (old->func == PAGE_UNCLASSIFIED)
		count_by(o->ps, CNT_PAGES_UNCLASSIFIED, -1);
	bpf_map_delete_elem(&pages, key);
}

/*
 * Is this fault at @addr one to record, and as how many pages (*weight)?
 * An unsampled one drops what the pages map still says of the address: a
 * page unmapped and mapped again is not credited to its old stack.
 */
static __always_inline bool fault_sampled(const struct owner *o, __u64 addr, __u64 *weight)
{
	struct alloc_key key = {
	    .addr = addr & ~(FAULT_PAGE_SIZE - 1), .tgid = o->tgid, .gen = o->gen};
	__u32 shift = fault_shift();

	*weight = 1ULL << shift;
	if (!shift || !(bpf_get_prandom_u32() & ((1U << shift) - 1)))
		return true;
	page_forget(o, &key);
	count_in(o->ps, CNT_PAGES_SAMPLED_OUT);
	return false;
}

/*
 * bpf_find_vma() in a page fault costs ~8 us here: the fault comes with
 * interrupts off, so it gives the address space's lock back through an
 * irq_work, an interrupt this CPU sends itself (a VM exit under a
 * hypervisor), where its walk of the mappings costs ~0.1 us. Each CPU
 * remembers the last mapping it looked up, and a fault in it is answered
 * from the memo while the address space's mappings have not changed:
 * every change of them holds its lock for writing, and on 6.4+ bumps
 * mm_lock_seq on the way out (an int to 6.12, a seqcount, odd while
 * held, from 6.13). Without that field (6.1, or no per-VMA locks) every
 * recorded fault looks its mapping up.
 */
struct vma_memo {
	__u64 mm; /* the mm_struct it is of; 0: none */
	__u64 start;
	__u64 end;
	__u32 seq;  /* mm_lock_seq when it was looked up */
	__u32 tgid; /* with gen, which exec of which process: mm may be reused */
	__u32 gen;
	bool anon;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vma_memo);
} vma_memos SEC(".maps");

struct mm_struct___seqcount {
	struct {
		unsigned int sequence;
	} mm_lock_seq;
} __attribute__((preserve_access_index));

struct mm_struct___int {
	int mm_lock_seq;
} __attribute__((preserve_access_index));

#define RWSEM_WRITER_LOCKED 1UL

/*
 * *seq: @mm's count of changes to its mappings, if the kernel keeps one
 * and no change is under way. Read before the writer's bit, so that a
 * change that began and ended since shows in the count.
 */
static __always_inline bool mappings_seq(struct mm_struct *mm, __u32 *seq)
{
	struct mm_struct___seqcount *sc = (void *)mm;
	struct mm_struct___int *in = (void *)mm;

	if (bpf_core_field_exists(sc->mm_lock_seq.sequence))
		*seq = BPF_CORE_READ(sc, mm_lock_seq.sequence);
	else if (bpf_core_field_exists(in->mm_lock_seq))
		*seq = BPF_CORE_READ(in, mm_lock_seq);
	else
		return false;
	if (!bpf_core_field_exists(mm->mmap_lock.count))
		return false;
	return !(BPF_CORE_READ(mm, mmap_lock.count.counter) & RWSEM_WRITER_LOCKED);
}

/*
 * Anonymous as the kernel means it (vma_is_anonymous()): no vm_ops. The
 * kernel's own mappings have no file either but have ops, and are not the
 * process's memory: the [vdso] a forked child faults in at its first
 * time() (fork copies no page of it) and [vvar]. The main thread's stack
 * grows by faults too, but nobody allocated it.
 */
static long vma_anonymous(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_memo *memo;
	bool *anon = data;
	__u32 zero = 0;

	*anon = !vma->vm_ops && !(vma->vm_flags & VM_GROWSDOWN);
	memo = bpf_map_lookup_elem(&vma_memos, &zero);
	if (memo) {
		memo->start = vma->vm_start;
		memo->end = vma->vm_end;
	}
	return 0;
}

/*
 * For a hook that sees no fault flags: is @addr's page mapped and readable
 * already? A read that may not fault succeeds only then, as on a page
 * shared copy-on-write or the zero page a read mapped; it fails on a page
 * not present, which x86's error code would say without PF_PROT. (An
 * arm64 CPU without hardware access flags also faults on a present page
 * whose access flag reclaim cleared: that page is counted again.)
 */
static __always_inline bool page_present(__u64 addr)
{
	char byte;

	return !bpf_probe_read_user(&byte, 1, (const void *)addr);
}

/* What first_touch() knows of a fault's page. */
enum touch {
	TOUCH_NONE,    /* not anonymous memory, or no mapping */
	TOUCH_ANON,    /* a first touch of anonymous memory */
	TOUCH_UNKNOWN, /* its mapping could not be looked up: the loader will */
};

/*
 * A not-present fault on anonymous memory: a page the process touches for
 * the first time since it was mapped (or since it was given back), for a
 * fault the callers know was on a page not present: one on a present page
 * is copy-on-write of a page already counted. bpf_find_vma() only tries the
 * address space's lock: a writer holding or awaiting it (another thread's
 * mmap, a uprobe registered on a library the process maps), or this CPU's
 * unlock still pending, leaves the page unknown, for the loader to
 * classify from /proc/PID/maps (page_classify()).
 */
static __always_inline enum touch first_touch(const struct owner *o, __u64 addr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mm_struct *mm = task->mm;
	struct vma_memo *memo;
	bool anon = false, stable;
	__u32 zero = 0, seq = 0;
	long err;

	memo = bpf_map_lookup_elem(&vma_memos, &zero);
	if (!memo)
		return TOUCH_UNKNOWN;
	/* Read before the lookup: a change made since makes the memo miss. */
	stable = mappings_seq(mm, &seq);
	if (stable && memo->mm == (__u64)mm && memo->seq == seq && memo->tgid == o->tgid &&
	    memo->gen == o->gen && addr >= memo->start && addr < memo->end)
		return memo->anon ? TOUCH_ANON : TOUCH_NONE;
	memo->mm = 0;
	err = bpf_find_vma(task, addr, vma_anonymous, &anon, 0);
	if (err == -EBUSY)
		return TOUCH_UNKNOWN;
	if (err)
		return TOUCH_NONE;
	if (stable) {
		memo->mm = (__u64)mm;
		memo->seq = seq;
		memo->tgid = o->tgid;
		memo->gen = o->gen;
		memo->anon = anon;
	}
	return anon ? TOUCH_ANON : TOUCH_NONE;
}

/*
 * The page at @addr now belongs to stack @stack_id. A page the loader has
 * not dropped yet (unmapped and mapped again between two reports) changes
 * hands. A full map counts as lost_allocs. @weight: the pages it stands
 * for (fault_sampled()). The toucher is the current thread. A page of @touch TOUCH_UNKNOWN is kept
 * aside (PAGE_UNCLASSIFIED), out of its stack's numbers until the loader's verdict, asked for at
 * once (EVENT_PAGE).
 */
static __always_inline void page_record(const struct owner *o, __u64 addr, __u64 stack_id,
					__u64 weight, enum touch touch)
{
	/* Read here, not held over the walk: a register fewer to spill to the stack. */
	__u32 tid = bpf_get_current_pid_tgid();
	struct alloc_key key = {
	    .addr = addr & ~(FAULT_PAGE_SIZE - 1), .tgid = o->tgid, .gen = o->gen};
	struct alloc_info info = {.size = FAULT_PAGE_SIZE * weight,
				  .stack_id = stack_id,
				  .tid = tid,
				  .func = touch == TOUCH_UNKNOWN ? PAGE_UNCLASSIFIED : 0};
	struct page_event *ev;

	page_forget(o, &key);
	if (touch != TOUCH_UNKNOWN)
		count_in(o->ps, CNT_ALLOCS);
	if (bpf_map_update_elem(&pages, &key, &info, BPF_ANY)) {
		count_in(o->ps, CNT_LOST_ALLOCS);
		return;
	}
	if (touch != TOUCH_UNKNOWN) {
		stats_add(o, stack_id, FAULT_PAGE_SIZE * weight);
		return;
	}
	count_in(o->ps, CNT_PAGES_UNCLASSIFIED);
	/*
	 * Reserved, not built on the stack: the fault's program and its walk
	 * come within bytes of the 512 a call chain may take. Not lost if the
	 * ring is full: the next report finds the page in the map.
	 */
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return;
	*ev = (struct page_event){
	    .type = EVENT_PAGE, .tgid = key.tgid, .addr = key.addr, .gen = key.gen};
	bpf_ringbuf_submit(ev, 0);
}

/*
 * The loader's verdict on a page page_record() kept aside: @anon, its
 * mapping in /proc/PID/maps is anonymous memory, and the page becomes its
 * stack's first touch as at the fault; else it leaves. Either way it is
 * classified (counted in pages_classified_late).
 */
static __always_inline void page_settle(const struct owner *o, const struct alloc_key *key,
					bool anon)
{
	struct alloc_info *info = bpf_map_lookup_elem(&pages, key);

	if (!info || info->func != PAGE_UNCLASSIFIED)
		return;
	count_by(o->ps, CNT_PAGES_UNCLASSIFIED, -1);
	count_in(o->ps, CNT_PAGES_CLASSIFIED_LATE);
	if (!anon) {
		bpf_map_delete_elem(&pages, key);
		return;
	}
	info->func = 0;
	count_in(o->ps, CNT_ALLOCS);
	stats_add(o, info->stack_id, info->size);
}

#endif
