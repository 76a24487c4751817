// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocator tracing: entry probes note the arguments of each allocation
 * call, the shared return probe records the block, its size and the user
 * stack, and free releases it. The parts, each owning its maps, are the
 * headers below (docs/ARCHITECTURE.md); this file holds the programs and
 * what an allocation or release does with the parts.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "alloctrace.h"
#include "arch.bpf.h"
#include "config.bpf.h"
#include "procs.bpf.h"
#include "events.bpf.h"
#include "inflight.bpf.h"
#include "live.bpf.h"
#include "memo.bpf.h"
#include "cfi.bpf.h"
#include "stacks.bpf.h"
#include "syscalls.bpf.h"
#include "faults.bpf.h"
#include "linkmap.bpf.h"

#define MAP_FAILED_ADDR ((__u64)-1)

/* Per-CPU room for one event: the stack is captured into it every time. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct big_alloc_event);
} scratch SEC(".maps");

/* nmemb * size, or false when it overflows (the call will fail). */
static __always_inline bool mul_size(__u64 nmemb, __u64 size, __u64 *total)
{
	__u64 limit;

	if ((nmemb | size) >> 32 && size) {
		/* Hide the division from clang, which would turn it into a
		 * 128-bit multiply that BPF cannot do. */
		limit = ~0ULL / size;
		asm volatile("" : "+r"(limit));
		if (nmemb > limit)
			return false;
	}
	*total = nmemb * size;
	return true;
}

static __always_inline void send_big_alloc(struct big_alloc_event *ev, const struct owner *o,
					   __u64 pid_tgid, __u64 addr, __u64 size, __u32 func)
{
	ev->type = EVENT_BIG_ALLOC;
	ev->time_ns = bpf_ktime_get_ns();
	ev->size = size;
	ev->addr = addr;
	ev->tgid = pid_tgid >> 32;
	ev->tid = (__u32)pid_tgid;
	ev->func = func;
	send_event(ev, sizeof(*ev), o->ps);
}

/* Room for one more block of the process under --max-per-process? */
static __always_inline bool under_cap(const struct owner *o)
{
	if (!o->ps || !cfg.max_per_proc || o->ps->live < cfg.max_per_proc)
		return true;
	count_in(o->ps, CNT_LOST_CAP);
	return false;
}

/* @keep: record the block (not when sampling passed it by); alerts come regardless. */
static __always_inline void record_alloc(void *ctx, const struct user_regs *regs,
					 const struct owner *o, __u64 pid_tgid, __u64 addr,
					 __u64 size, __u32 func, bool keep)
{
	bool big = cfg.big_threshold && size >= cfg.big_threshold;
	struct alloc_key key = {.addr = addr, .tgid = o->tgid, .gen = o->gen};
	struct alloc_info info = {.size = size, .tid = (__u32)pid_tgid, .func = func};
	struct big_alloc_event *ev;
	__u32 zero = 0;

	count_in(o->ps, CNT_ALLOCS);
	keep = keep && under_cap(o);
	if (!keep && !big)
		return;
	ev = bpf_map_lookup_elem(&scratch, &zero);
	if (!ev)
		return;
	info.stack_id = capture_stack(ctx, regs, &ev->stack, big);
	if (cfg.block_ages)
		info.time_ns = bpf_ktime_get_ns();
	if (!keep)
		;
	else if (!live_insert(&key, &info))
		count_in(o->ps, CNT_LOST_ALLOCS);
	else
		stats_add(o, info.stack_id, size);
	if (big)
		send_big_alloc(ev, o, pid_tgid, addr, size, func);
}

/*
 * realloc's old block leaves the live map at entry and comes back only if
 * the call fails: between the two, another thread may be handed the same
 * address, and its record must not be the one released.
 */
static __always_inline void take_old_block(struct inflight *rec, const struct owner *o)
{
	struct alloc_key key = {.addr = rec->ptr, .tgid = o->tgid, .gen = o->gen};

	rec->has_old = live_take(&key, &rec->old);
}

static __always_inline void settle_old_block(const struct inflight *rec, const struct owner *o,
					     bool released)
{
	struct alloc_key key = {.addr = rec->ptr, .tgid = o->tgid, .gen = o->gen};

	if (!rec->ptr)
		return;
	if (!released) {
		if (rec->has_old && !live_insert(&key, &rec->old))
			count_in(o->ps, CNT_LOST_ALLOCS);
		return;
	}
	if (rec->has_old)
		stats_release(o, &rec->old);
	else if (rec->func != FUNC_MREMAP) /* most mappings are not ours */
		count_untracked(o->ps);
}

/* Argument @i (from 0) where the calling convention puts it. */
#define ABI_ARG(i)                                                                                 \
	((i) == 0   ? PT_REGS_PARM1(ctx)                                                           \
	 : (i) == 1 ? PT_REGS_PARM2(ctx)                                                           \
	 : (i) == 2 ? PT_REGS_PARM3(ctx)                                                           \
		    : PT_REGS_PARM4(ctx))

/*
 * A general register by its number as COOKIE_ARG_SHIFT gives it (the
 * architecture's ARCH_REGS: x86 by encoding, arm64's x0-x30). The barrier keeps each case's load
 * apart: merged into one load at a computed offset, it is a context access the verifier refuses.
 */
#define REG_CASE(n, field)                                                                         \
	case n:                                                                                    \
		val = ctx->field;                                                                  \
		barrier_var(val);                                                                  \
		return val

static __always_inline __u64 arch_reg(const struct pt_regs *ctx, __u32 reg)
{
	__u64 val;

	switch (reg) {
		ARCH_REGS(REG_CASE);
	}
	return 0;
}

/* Where placement moved argument @i: 0 for its ABI register (see COOKIE_ARG_SHIFT). */
#define ARG_MOVED(i) ((bpf_get_attach_cookie(ctx) >> COOKIE_ARG_SHIFT(i)) & COOKIE_ARG_MASK)

/*
 * Argument @i (from 0) where the probe's placement found it. Most probes
 * read the ABI's register: they take it straight from the context, not
 * through the switch, which costs a free probe about 20 ns.
 */
#define ARG(i) (ARG_MOVED(i) ? arch_reg(ctx, ARG_MOVED(i) ^ ABI_ARG_REG(i)) : ABI_ARG(i))

/*
 * What an allocation call whose arguments have @shape asks for: its size,
 * and the block it takes (realloc's) or the pointer it writes to
 * (posix_memalign's) in *@ptr. False for a call that allocates nothing:
 * calloc and reallocarray fail on overflow, and file mappings are not
 * allocations. No default: a shape of arg_shapes.def without its case
 * fails the build (-Werror=switch). With @shape a constant the switch
 * folds away.
 */
static __always_inline bool call_args(struct pt_regs *ctx, enum arg_shape shape, __u64 *size,
				      __u64 *ptr)
{
	*ptr = 0;
	switch (shape) {
	case ARGS_SIZE:
		*size = ARG(0);
		return true;
	case ARGS_CALLOC:
		return mul_size(ARG(0), ARG(1), size);
	case ARGS_REALLOC:
		*ptr = ARG(0);
		*size = ARG(1);
		return true;
	case ARGS_REALLOCARRAY:
		*ptr = ARG(0);
		return mul_size(ARG(1), ARG(2), size);
	case ARGS_MEMALIGN:
		*size = ARG(1);
		return true;
	case ARGS_MMAP:
		*size = ARG(1);
		/* --big-only records big mappings only, as its system-call path does. */
		return cfg.big_only ? big_mapping(ARG(1), ARG(2), ARG(3)) : ARG(3) & MAP_ANONYMOUS;
	case ARGS_BRK:
		/* The heap's end before the call, to measure its growth by. */
		*ptr = heap_end();
		*size = 0;
		return true;
	case ARGS_MREMAP:
	case ARGS_POSIX_MEMALIGN:
		*ptr = ARG(0);
		*size = ARG(2);
		return true;
	/* Releases, and an id no line has, allocate nothing. */
	case ARGS_FREE:
	case ARGS_BLOCK:
	case NR_ARG_SHAPES:
		break;
	}
	return false;
}

/* How @func's arguments are read: its line of alloc_funcs.def. */
static __always_inline enum arg_shape func_shape(__u32 func)
{
	switch (func) {
#define ALLOC_FUNC(id, group, kind, nr_args, args, symbol, display)                                \
	case FUNC_##id:                                                                            \
		return ARGS_##args;
#include "alloc_funcs.def"
#undef ALLOC_FUNC
	}
	return NR_ARG_SHAPES;
}

/*
 * Calls on entry probes the kernel single-steps (COOKIE_STEPPED), by
 * function, whoever made them: the loader says what they cost once they
 * add up (tracer__warn_stepped()). Each costs microseconds, this count
 * ~50 ns; a probe preempting another on the CPU may lose one.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FUNC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stepped_calls SEC(".maps");

static __always_inline void count_stepped(__u64 cookie)
{
	__u32 func = COOKIE_FUNC(cookie);
	__u64 *n;

	if (!(cookie & COOKIE_STEPPED))
		return;
	n = bpf_map_lookup_elem(&stepped_calls, &func);
	if (n)
		(*n)++;
}

/*
 * Open the thread's record for an outermost call of the function its
 * probe's @cookie names, its arguments read as @shape says, made by a
 * traced process; NULL for an inner call, one that allocates nothing, or
 * an untraced process.
 */
static __always_inline struct inflight *open_alloc(struct pt_regs *ctx, __u64 cookie,
						   enum arg_shape shape, struct owner *o)
{
	__u64 sp = PT_REGS_SP(ctx) + COOKIE_SP_ADJUST(cookie), size, ptr;
	struct inflight *rec;

	count_stepped(cookie);
	/* The owner first: probes for every process see mostly calls of others. */
	if (!owner_of(bpf_get_current_pid_tgid(), o) || !call_args(ctx, shape, &size, &ptr))
		return NULL;
	rec = thread_record(o->ps);
	if (!rec || entry_verdict(rec, sp) == CALL_INNER)
		return NULL;
	open_call(rec, COOKIE_FUNC(cookie), sp);
	rec->size = size;
	rec->ptr = ptr;
	rec->gen = o->gen;
	if (func_reallocs(rec->func) && ptr)
		take_old_block(rec, o);
	return rec;
}

/*
 * The entry program of every allocating function whose arguments have
 * @shape, for entry and return probes apart: one a line of arg_shapes.def.
 */
#define ALLOC_SHAPE(id, entry, reads)                                                              \
	SEC("uprobe") int entry(struct pt_regs *ctx)                                               \
	{                                                                                          \
		struct owner o;                                                                    \
		open_alloc(ctx, bpf_get_attach_cookie(ctx), ARGS_##id, &o);                        \
		return 0;                                                                          \
	}
/* Those of releases are below, each its own. */
#define RELEASE_SHAPE(id, entry, reads)
#include "arg_shapes.def"
#undef ALLOC_SHAPE
#undef RELEASE_SHAPE

/* What the return of an allocation call records. */
static __always_inline int alloc_returned(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), ret = PT_REGS_RC(ctx);
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 func = COOKIE_FUNC(cookie);
	enum call_verdict verdict;
	struct inflight *found, rec;
	struct owner o;
	__u64 addr = ret;

	found = thread_state(false);
	if (!found)
		return 0;
	verdict = return_verdict(found, func, PT_REGS_SP(ctx));
	if (verdict == CALL_FOREIGN)
		return 0;
	rec = *found;
	close_call(found);
	if (verdict == CALL_CLOSES)
		return 0;
	/* The image it was called in: an exec cannot come between entry and return. */
	o.tgid = pid_tgid >> 32;
	o.gen = rec.gen;
	o.ps = current_proc();

	if (func == FUNC_POSIX_MEMALIGN) {
		addr = 0;
		if (ret == 0)
			bpf_probe_read_user(&addr, sizeof(addr), (void *)rec.ptr);
	} else if (func_maps(func) && ret == MAP_FAILED_ADDR) {
		addr = 0;
	} else if (func == FUNC_BRK) {
		addr = heap_growth(rec.ptr, heap_end(), &rec.size);
	}
	if (func_reallocs(func))
		/* realloc(p, 0) may free p and return NULL: a success. */
		settle_old_block(&rec, &o, addr || (!rec.size && !func_maps(func)));
	/* --big-only: a small mremap's result is no block of its. */
	if (cfg.big_only && rec.size < cfg.big_threshold)
		addr = 0;
	if (addr) {
		__u64 ip = PT_REGS_IP(ctx), lr = PT_REGS_LR(ctx);
		struct user_regs regs;

		/* Both read first: the verifier refuses a load through a chosen context offset. */
		barrier_var(ip);
		barrier_var(lr);
		/* On a return instruction: as the return probe would see the caller. */
		regs = (struct user_regs){.ip = cookie & COOKIE_AT_RET ? lr : ip,
					  .sp = PT_REGS_SP(ctx),
					  .bp = PT_REGS_FP(ctx),
					  .lr = lr};

		record_alloc(ctx, &regs, &o, pid_tgid, addr, rec.size, func,
			     func != FUNC_BRK && sampled(found, rec.size));
	}
	return 0;
}

SEC("uretprobe")
int alloc_return(struct pt_regs *ctx)
{
	return alloc_returned(ctx);
}

/* Linux 6.13+; the loader loads alloc_session only where the kernel has it. */
extern bool bpf_session_is_return(void) __ksym __weak;

/*
 * Where the kernel has uprobe sessions: one program at both ends of every
 * allocation call but a release's. Its entry run returns non-zero for a
 * call that needs no return run (another process's, which probes for every
 * process see; an inner call; one that sampling passes by), so that the
 * call takes one trap instead of two.
 */
SEC("uprobe")
int alloc_session(struct pt_regs *ctx)
{
	struct inflight *rec;
	struct owner o;
	__u64 cookie;

	if (bpf_session_is_return())
		return alloc_returned(ctx);
	cookie = bpf_get_attach_cookie(ctx);
	rec = open_alloc(ctx, cookie, func_shape(COOKIE_FUNC(cookie)), &o);
	if (!rec)
		return 1;
	if (!sample_passes_by(rec))
		return 0;
	/* Counted here, as its return would have. */
	close_call(rec);
	count_in(o.ps, CNT_ALLOCS);
	return 1;
}

/* Take a block out of the live map; 0 if it was not there. */
static __always_inline int release_block(const struct owner *o, __u64 ptr)
{
	struct alloc_key key = {.addr = ptr, .tgid = o->tgid, .gen = o->gen};
	struct alloc_info info;

	if (!live_take(&key, &info))
		return 0;
	stats_release(o, &info);
	return 1;
}

static __always_inline int free_block(struct pt_regs *ctx, __u64 ptr)
{
	struct owner o;

	if (!ptr || !owner_of(bpf_get_current_pid_tgid(), &o) || release_block(&o, ptr))
		return 0;
	/*
	 * Sampling passes most blocks by and counts no untracked frees. Else
	 * realloc(p, 0) or operator delete freeing p: the outer call accounts
	 * for it.
	 */
	if (!cfg.sample_rate && !call_inner(PT_REGS_SP(ctx)))
		count_untracked(o.ps);
	return 0;
}

/*
 * free, the hottest probe, where its pointer is still in the ABI's
 * register: no cookie to read (about 15 ns a call).
 */
SEC("uprobe")
int free_enter(struct pt_regs *ctx)
{
	return free_block(ctx, PT_REGS_PARM1(ctx));
}

/* free where placement found its pointer copied to another register. */
SEC("uprobe")
int free_moved_enter(struct pt_regs *ctx)
{
	return free_block(ctx, ARG(0));
}

/* Releases other than free: operator delete, dallocx, sdallocx, free_sized, munmap. */
SEC("uprobe")
int release_enter(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), ptr = ARG(0);
	__u64 sp = PT_REGS_SP(ctx) + COOKIE_SP_ADJUST(cookie);
	__u32 func = COOKIE_FUNC(cookie);
	struct inflight *rec;
	struct owner o;

	count_stepped(cookie);
	if (!owner_of(bpf_get_current_pid_tgid(), &o) || call_inner(sp))
		return 0;
	/* Most unmapped memory was never ours: only known blocks count. */
	if (ptr && !release_block(&o, ptr) && func != FUNC_MUNMAP)
		count_untracked(o.ps);
	if (!func_holds_release(func))
		return 0;
	rec = thread_record(o.ps);
	if (!rec)
		return 0;
	open_call(rec, func, sp);
	rec->ptr = 0;
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(big_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct owner o;

	if (id != NR_MMAP && id != NR_MUNMAP && id != NR_MREMAP && id != NR_BRK)
		return 0;
	if (!maybe_traced(pid_tgid) || !at_syscalls(pid_tgid >> 32) || !owner_of(pid_tgid, &o))
		return 0;
	switch (id) {
	case NR_MMAP:
		if (big_mapping(PT_REGS_PARM2_CORE_SYSCALL(regs), PT_REGS_PARM3_CORE_SYSCALL(regs),
				PT_REGS_PARM4_CORE_SYSCALL(regs)))
			note_syscall(&o, FUNC_MMAP, PT_REGS_PARM2_CORE_SYSCALL(regs), 0);
		return 0;
	case NR_MUNMAP:
		release_block(&o, PT_REGS_PARM1_CORE_SYSCALL(regs));
		return 0;
	case NR_MREMAP:
		note_syscall(&o, FUNC_MREMAP, PT_REGS_PARM3_CORE_SYSCALL(regs),
			     PT_REGS_PARM1_CORE_SYSCALL(regs));
		return 0;
	}
	/* brk: the heap's end before the call, to measure its growth by. */
	note_syscall(&o, FUNC_BRK, 0, heap_end());
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(big_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct user_regs user;
	struct inflight *rec;
	__u64 addr = ret, size;
	struct owner o;

	/*
	 * Before the thread's record: most syscalls on the system are not the
	 * target's, and a probed process's record is its probes'.
	 */
	if (!maybe_traced(pid_tgid) || !at_syscalls(pid_tgid >> 32))
		return 0;
	rec = in_flight();
	if (!rec)
		return 0;
	close_call(rec);
	if (!owner_of(pid_tgid, &o))
		return 0;
	if (ret < 0 && ret >= -MAX_ERRNO)
		return 0;
	size = rec->size;
	if (rec->func == FUNC_MREMAP) {
		release_block(&o, rec->ptr);
		if (size < cfg.big_threshold)
			return 0;
	} else if (rec->func == FUNC_BRK) {
		addr = heap_growth(rec->ptr, addr, &size);
		if (!addr)
			return 0;
	}
	user.ip = PT_REGS_IP_CORE(regs);
	user.sp = PT_REGS_SP_CORE(regs);
	user.bp = PT_REGS_FP_CORE(regs);
	user.lr = PT_REGS_LR_CORE(regs);
	/* --growth counts pages, not blocks: its mappings are alerts only. */
	record_alloc(ctx, &user, &o, pid_tgid, addr, size, rec->func,
		     rec->func != FUNC_BRK && !cfg.growth);
	return 0;
}

/*
 * --growth --big: a big anonymous mapping is placed. Not the syscall
 * tracepoints: attached, they put every syscall of every process on the
 * kernel's slow path (about 300-500 ns each here), where this runs only
 * when a process maps memory. It sees mmap and a moving mremap, neither
 * with a fixed address nor a hint the kernel could honour, nor brk.
 */
SEC("raw_tp/vm_unmapped_area")
int BPF_PROG(big_map_search, unsigned long found, struct vm_unmapped_area_info *info)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), size, off = 0;
	struct user_regs user;
	struct pt_regs *regs;
	struct owner o;
	__u32 func;

	if (!maybe_traced(pid_tgid) || found & (FAULT_PAGE_SIZE - 1) || !owner_of(pid_tgid, &o))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	switch (SYSCALL_NR(regs)) {
	case NR_MMAP:
		size = PT_REGS_PARM2_CORE_SYSCALL(regs);
		if (!big_mapping(size, PT_REGS_PARM3_CORE_SYSCALL(regs),
				 PT_REGS_PARM4_CORE_SYSCALL(regs)))
			return 0;
		off = SYSCALL_ARG6(regs);
		func = FUNC_MMAP;
		break;
	case NR_MREMAP:
		size = PT_REGS_PARM3_CORE_SYSCALL(regs);
		if (size < cfg.big_threshold)
			return 0;
		func = FUNC_MREMAP;
		break;
	default:
		return 0;
	}
	found = mapping_start(found, BPF_CORE_READ(info, length), size, off,
			      BPF_CORE_READ(info, flags) & VM_UNMAPPED_AREA_TOPDOWN);
	user.ip = PT_REGS_IP_CORE(regs);
	user.sp = PT_REGS_SP_CORE(regs);
	user.bp = PT_REGS_FP_CORE(regs);
	user.lr = PT_REGS_LR_CORE(regs);
	record_alloc(ctx, &user, &o, pid_tgid, found, size, func, false);
	return 0;
}

/* --growth: the page at @address is the process's, first touched at @user. */
static __always_inline void page_fault_record(void *ctx, const struct owner *o, __u64 address,
					      const struct user_regs *user)
{
	struct big_alloc_event *ev;
	enum touch touch;
	__u64 weight;
	__u32 zero = 0;

	if (!fault_sampled(o, address, &weight))
		return;
	touch = first_touch(o, address);
	if (touch == TOUCH_NONE)
		return;
	ev = bpf_map_lookup_elem(&scratch, &zero);
	if (ev)
		page_record(o, address, capture_stack(ctx, user, &ev->stack, false), weight, touch);
}

/* --growth: a user page fault, x86's exceptions:page_fault_user. */
SEC("raw_tp/page_fault_user")
int BPF_PROG(page_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct user_regs user;
	struct owner o;

	if (!owner_of(pid_tgid, &o) || (error_code & PF_PROT))
		return 0;
	user.ip = PT_REGS_IP_CORE(regs);
	user.sp = PT_REGS_SP_CORE(regs);
	user.bp = PT_REGS_FP_CORE(regs);
	user.lr = PT_REGS_LR_CORE(regs);
	page_fault_record(ctx, &o, address, &user);
	return 0;
}

/*
 * --growth where there is no page_fault_user tracepoint (arm64): the
 * software event every page fault raises before it is handled, with the
 * faulting registers and address (PERF_COUNT_SW_PAGE_FAULTS, one CPU
 * each). It carries no fault flags (arm64's ESR): see page_present().
 */
SEC("perf_event")
int page_fault_event(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), address = ctx->addr;
	struct user_regs user;
	struct owner o;

	/* As the tracepoint: faults the kernel takes on user memory are not the program's. */
	if (!USER_MODE(&ctx->regs) || !owner_of(pid_tgid, &o) || page_present(address))
		return 0;
	user.ip = PT_REGS_IP(&ctx->regs);
	user.sp = PT_REGS_SP(&ctx->regs);
	user.bp = PT_REGS_FP(&ctx->regs);
	user.lr = PT_REGS_LR(&ctx->regs);
	page_fault_record(ctx, &o, address, &user);
	return 0;
}

/*
 * --growth: the loader's verdict on a page whose mapping was busy at its
 * fault (page_settle()), run by BPF_PROG_TEST_RUN, never attached: args
 * the page's tgid, image and address, and whether /proc/PID/maps shows
 * it in anonymous memory.
 */
SEC("raw_tp")
int page_classify(struct bpf_raw_tracepoint_args *ctx)
{
	struct alloc_key key = {.addr = ctx->args[2], .tgid = ctx->args[0], .gen = ctx->args[1]};
	struct owner o = {.tgid = key.tgid, .gen = key.gen};

	if (cfg.multi_proc) {
		o.ps = bpf_map_lookup_elem(&procs, &o.tgid);
		/* An exec since: /proc/PID/maps is another image's, the page stays unknown. */
		if (!o.ps || o.ps->gen != o.gen)
			return 0;
	}
	page_settle(&o, &key, ctx->args[3]);
	return 0;
}

/*
 * The OOM killer marks its victim here, before the kill: the loader learns
 * why the target is about to die while its numbers are still in the maps.
 */
SEC("raw_tp/mark_victim")
int BPF_PROG(oom_victim, struct task_struct *task)
{
	struct proc_state *ps;

	if (traced_task(task, &ps))
		send_task_event(EVENT_OOM_VICTIM, BPF_CORE_READ(task, tgid), ps);
	return 0;
}

/*
 * The dynamic loader's _dl_debug_state: its link map changes
 * (bpf/linkmap.bpf.h). Sleepable, so that a thread may wait here.
 */
SEC("uprobe.s")
int linkmap_change(struct pt_regs *ctx)
{
	linkmap_changed(PT_REGS_IP(ctx), (__s64)bpf_get_attach_cookie(ctx));
	return 0;
}

/*
 * --leak-check's snapshot (user/leakcheck/snapshot.c): a clone of a
 * ptrace-stopped target that its tracer injected, born traced and with no
 * exit signal (no wait() of the target's would ever see it). It is ours,
 * not the target's child, and the keeper kills it: not a process to list.
 * A program's own fork has an exit signal, under a debugger too.
 */
static __always_inline bool snapshot_clone(struct task_struct *parent, struct task_struct *child)
{
	return BPF_CORE_READ(parent, ptrace) && BPF_CORE_READ(child, ptrace) &&
	       !BPF_CORE_READ(child, exit_signal);
}

/* --follow-forks: a traced process's child is traced from its first instruction. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct proc_state *pps;

	/* Not a new thread, and a parent with an entry (follow_forks is multi_proc). */
	if (!cfg.follow_forks || ptgid == ctgid || !traced_task(parent, &pps) || !pps ||
	    snapshot_clone(parent, child))
		return 0;
	proc_adopt(ptgid, pps, child, ctgid);
	inherit_unwind_table(ptgid, ctgid);
	syscalls_inherit(ptgid, ctgid);
	return 0;
}

/*
 * --cgroup, --comm: a process not traced yet runs a program as one chosen
 * (it joined the cgroup, or a service started again under its name). It
 * is traced from now on (the tracepoint runs in it), and the loader probes its program's allocator,
 * which need not be the one --all probes (a container has its own).
 */
static __always_inline int exec_chosen(__u32 tgid)
{
	struct proc_state *old;

	if (!chosen_only() || tgid == cfg.self_tgid || !chosen())
		return 0;
	old = bpf_map_lookup_elem(&procs, &tgid);
	if (new_proc(tgid, old))
		send_task_event(EVENT_EXEC, tgid, NULL);
	return 0;
}

/*
 * A traced process runs a new program: what the old one held is gone with
 * its address space. A new image number keeps its blocks from matching the
 * new program's frees; the loader drops them and probes the new allocator.
 */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct proc_state *ps;

	if (!traced_task(task, &ps))
		return exec_chosen(tgid);
	forget_unwind_table(tgid);
	if (ps && proc_new_image(task, tgid, ps))
		return 0;
	/* --all probes one allocator for every process: nothing to look up. */
	if (!cfg.trace_all || chosen_only())
		send_task_event(EVENT_EXEC, tgid, NULL);
	return 0;
}

/* The last thread of a traced process exits: its last report marks it. */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *task)
{
	struct proc_state *ps;

	/* Its other threads live on: not the end of the process yet. */
	if (!traced_task(task, &ps) || !ps || BPF_CORE_READ(task, signal, live.counter))
		return 0;
	ps->exit_code = BPF_CORE_READ(task, exit_code);
	ps->flags |= PROC_EXITED;
	drop_unwind_table(BPF_CORE_READ(task, tgid));
	syscalls_forget(BPF_CORE_READ(task, tgid));
	/*
	 * Its statistics are final: the loader moves them out of the maps
	 * now, not at the next report, and detaches its probes if its own.
	 */
	if (cfg.multi_proc)
		send_task_event(EVENT_EXIT, BPF_CORE_READ(task, tgid), NULL);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
