/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CFI unwinding: walk a user stack with the unwind rows the loader made
 * from .eh_frame (user/unwind/, loaded by user/tracer/unwinder.c), reading
 * the stack through the walk cache's window (memo.bpf.h). What differs
 * between architectures is in arch_<name>.bpf.h (arch.bpf.h): x86-64, arm64.
 */
#ifndef ALLOCTRACE_CFI_BPF_H
#define ALLOCTRACE_CFI_BPF_H

/*
 * From the rest of the BPF object the walk needs only cfg.stack_depth,
 * count(), current_proc() and send_event(): tests/unit/replay_env.h
 * gives those and the helpers over a recorded case, so that this same
 * file runs in the unit tests (test_unwind_replay.c).
 */
#ifdef UNWIND_REPLAY
#include "replay_env.h"
#else
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "config.bpf.h"
#include "procs.bpf.h"
#include "events.bpf.h"
#endif
#include "alloctrace.h"
#include "arch.bpf.h"
#include "memo.bpf.h"

/*
 * An array of chunks of UNWIND_CHUNK_ENTRIES values of @size bytes, which
 * the loader writes through their mappings. value_size, not __type(): in
 * here clang would name struct unwind_row only by a forward declaration.
 */
#define CHUNKS_OF(size)                                                                            \
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);                                                  \
	__uint(max_entries, 1);                                                                    \
	__type(key, __u32);                                                                        \
	__array(                                                                                   \
	    values, struct {                                                                       \
		    __uint(type, BPF_MAP_TYPE_ARRAY);                                              \
		    __uint(map_flags, BPF_F_MMAPABLE);                                             \
		    __uint(max_entries, UNWIND_CHUNK_ENTRIES);                                     \
		    __uint(key_size, sizeof(__u32));                                               \
		    __uint(value_size, size);                                                      \
	    })

/*
 * Unwind tables, filled by the loader: rows of every object, shared by
 * every process that maps it, and the page index into them, each in
 * chunks the loader adds as objects need them (UNWIND_CHUNK_SHIFT); and
 * per process, its executable mappings and where their rows are. The
 * outer arrays are sized at load time, to the most chunks allowed.
 */
struct {
	CHUNKS_OF(sizeof(struct unwind_row));
} unwind_rows SEC(".maps");

struct {
	CHUNKS_OF(sizeof(__u32));
} unwind_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

/* When each CPU last asked for the tables of a process the loader has not seen. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} miss_clock SEC(".maps");

/* How often a process may ask again while the loader finds nothing new. */
#define ASK_AGAIN_NS (1000 * 1000 * 1000ULL)
/* How often each CPU may ask for processes the loader has no table for yet. */
#define ASK_UNKNOWN_NS (10 * 1000 * 1000ULL)

static __always_inline bool may_ask(struct unwind_proc *proc)
{
	__u64 now = bpf_ktime_get_ns(), *last;
	__u32 zero = 0;

	if (proc) {
		if (proc->asked && now - proc->asked_ns < ASK_AGAIN_NS)
			return false;
		proc->asked = 1;
		proc->asked_ns = now;
		return true;
	}
	last = bpf_map_lookup_elem(&miss_clock, &zero);
	if (!last || now - *last < ASK_UNKNOWN_NS)
		return false;
	*last = now;
	return true;
}

/* A frame in code the tables do not cover: the loader reads the mappings again. */
static __always_inline void request_tables(__u32 tgid, struct unwind_proc *proc, __u64 ip)
{
	struct unwind_miss_event ev = {.type = EVENT_UNWIND_MISS, .tgid = tgid, .ip = ip};

	count(CNT_UNWIND_MISSES);
	if (may_ask(proc))
		send_event(&ev, sizeof(ev), current_proc());
}

/*
 * A child starts with its parent's mappings: its parent's unwind table is
 * right for it, and its first stacks need not wait for the loader's.
 */
static __always_inline void inherit_unwind_table(__u32 parent, __u32 child)
{
	struct unwind_proc *table = bpf_map_lookup_elem(&unwind_procs, &parent);

	if (table)
		bpf_map_update_elem(&unwind_procs, &child, table, BPF_ANY);
}

/*
 * Process @tgid ended: its table walks nothing more, and its room (the
 * map holds UNWIND_PROCS) goes to the next, before its last report. A
 * process per request ends hundreds of them between two reports; kept
 * until then, they filled the map and the next children inherited no
 * table. Remembered walks stay (memo_forget_all() would cost every
 * other process its memo at each exit): a process that ended walks
 * nothing more.
 */
static __always_inline void drop_unwind_table(__u32 tgid)
{
	bpf_map_delete_elem(&unwind_procs, &tgid);
}

/*
 * Process @tgid ran exec: its old table is wrong for the new program, whose
 * first frame outside any table asks for a new one; remembered walks too.
 */
static __always_inline void forget_unwind_table(__u32 tgid)
{
	bpf_map_delete_elem(&unwind_procs, &tgid);
	memo_forget_all();
}

#if defined(ARCH_WALKS_CFI)
/* A stack walk in progress, shared with the per-frame bpf_loop callback. */
struct walk {
	struct stack_trace *st;
	struct unwind_proc *proc;
	struct unwind_mapping *last; /* the previous frame's: callers are often in it */
	/*
	 * What the walk reads and remembers is kept there: counts and flags
	 * kept here would make the verifier see a new state at every frame.
	 */
	struct walk_cache *wc;
	struct stack_memo *memo;
	__u64 ip;
	__u64 sp;
	__u64 bp; /* the frame pointer: rbp, x29 */
	__u64 lr; /* the link register, where known (lr_known) */
	__u32 flags;
	__u32 tgid;
	bool done;	  /* reached the outermost frame */
	bool interrupted; /* ip is where a signal came, not a return address */
	/*
	 * lr holds the frame's link register: the registers' at the first
	 * frame (lr_from_regs), the signal frame's after a sigreturn
	 * trampoline. A caller's is lost: its call wrote the callee's.
	 */
	bool lr_known;
	bool lr_from_regs;
};

/*
 * The binary searches run as bpf_loop callbacks: the verifier checks one
 * step with unknown bounds instead of every path through a bounded loop.
 */
struct map_search {
	struct unwind_proc *proc;
	__u64 ip;
	__u32 lo; /* the first mapping starting above ip, once lo == hi */
	__u32 hi;
};

static long map_search_step(__u32 i, struct map_search *s)
{
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = (s->lo + s->hi) / 2;
	if (s->proc->maps[mid & (UNWIND_MAX_MAPPINGS - 1)].start <= s->ip)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

/* The mapping holding @ip: the last one starting at or below it (9 halvings of 256). */
static __always_inline struct unwind_mapping *find_mapping(struct unwind_proc *proc, __u64 ip)
{
	struct map_search s = {.proc = proc, .ip = ip, .hi = proc->nr};
	struct unwind_mapping *m;

	if (s.hi > UNWIND_MAX_MAPPINGS)
		s.hi = UNWIND_MAX_MAPPINGS;
	bpf_loop(9, map_search_step, &s, 0);
	if (!s.lo)
		return NULL;
	m = &proc->maps[(s.lo - 1) & (UNWIND_MAX_MAPPINGS - 1)];
	return ip < m->end ? m : NULL;
}

/* Entry @i of the chunked array @chunks (unwind_rows or unwind_pages), or NULL. */
static __always_inline void *chunk_entry(void *chunks, __u32 i)
{
	__u32 chunk = i >> UNWIND_CHUNK_SHIFT, slot = i & (UNWIND_CHUNK_ENTRIES - 1);
	void *inner = bpf_map_lookup_elem(chunks, &chunk);

	return inner ? bpf_map_lookup_elem(inner, &slot) : NULL;
}

struct row_search {
	__u64 off;
	__u32 lo; /* the last row at or below off, once lo == hi */
	__u32 hi;
};

static long row_search_step(__u32 i, struct row_search *s)
{
	struct unwind_row *row;
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = (s->lo + s->hi + 1) / 2;
	row = chunk_entry(&unwind_rows, mid);
	if (!row)
		return 1;
	if (row->pc <= s->off)
		s->lo = mid;
	else
		s->hi = mid - 1;
	return 0;
}

/*
 * The row in effect at @pc: the page index bounds the search to one
 * page's rows, at most 257, so 9 halvings always suffice.
 */
static __always_inline bool find_row(const struct unwind_mapping *m, __u64 pc,
				     struct unwind_row *out)
{
	struct row_search s = {.off = pc - m->table_base};
	__u64 page = s.off >> UNWIND_PAGE_SHIFT;
	struct unwind_row *row;
	__u32 key, *bound;

	if (page >= m->nr_pages)
		return false;
	key = m->page_first + (__u32)page;
	bound = chunk_entry(&unwind_pages, key);
	if (!bound)
		return false;
	s.lo = *bound;
	bound = chunk_entry(&unwind_pages, key + 1);
	if (!bound)
		return false;
	s.hi = *bound;
	bpf_loop(9, row_search_step, &s, 0);
	row = chunk_entry(&unwind_rows, s.lo);
	if (!row || row->pc > s.off)
		return false;
	*out = *row;
	return true;
}

/*
 * Code without CFI: trust the frame pointer to point at a frame record,
 * the caller's frame pointer and the return address (x86-64's push rbp
 * after the call, arm64's stp x29, x30).
 */
static __always_inline long frame_pointer_step(struct walk *w)
{
	memo_bp_used(w->wc, w->memo);
	if (w->bp < w->sp || (w->bp & 7) || stack_read(w->wc, w->bp, 16, true)) {
		w->flags |= STACK_CUT;
		return 1;
	}
	w->flags |= STACK_FP;
	w->sp = w->bp + 16;
	w->bp = w->wc->got[0];
	w->ip = STRIP_RA(w->wc->got[1]);
	w->lr_known = false;
	w->done = !w->ip;
	return w->done;
}

/* The return address still in the link register (UNWIND_RA_LR). */
static __always_inline long caller_from_lr(struct walk *w)
{
	if (!w->lr_known)
		return -1;
	if (w->lr_from_regs)
		w->memo->lr_used = 1;
	w->ip = STRIP_RA(w->lr);
	return 0;
}

/*
 * The return address and, where the row says it was saved, the caller's
 * frame pointer. Most frames that save both keep them as a frame record,
 * the return address in the word after (x86-64: at CFA - 16 and - 8):
 * one read for both.
 */
/* A frame record {fp, return address} at @at. */
static __always_inline long read_record(struct walk *w, __u64 at)
{
	if (stack_read(w->wc, at, 16, true))
		return -1;
	memo_note_bp(w->memo, MEMO_BP_REPLACED);
	w->bp = w->wc->got[0];
	w->ip = STRIP_RA(w->wc->got[1]);
	return 0;
}

static __always_inline long read_caller(struct walk *w, __u64 cfa, __s64 fp_off, __s64 ra_off)
{
	/* Addresses, not offsets, live across the reads: the walk's stack is at the verifier's
	 * limit. */
	__u64 fp_at = cfa + fp_off * 8;

	/* Compiled out where no row says so (no link register), as UNWIND_RA_LR below. */
	if (HAS_LINK_REGISTER && ra_off == UNWIND_RA_SP_RECORD)
		return read_record(w, w->sp + fp_off * 8);
	if (HAS_LINK_REGISTER && ra_off == UNWIND_RA_SP) {
		if (stack_read(w->wc, w->sp + fp_off * 8, 8, false))
			return -1;
		w->ip = STRIP_RA(w->wc->got[0]);
		return 0;
	}
	if (ra_off == UNWIND_RA_RECORD)
		ra_off = fp_off + 1;
	if (fp_off && ra_off == fp_off + 1)
		return read_record(w, fp_at);
	/* Compiled out where no row says so (no link register). */
	if (HAS_LINK_REGISTER && ra_off == UNWIND_RA_LR) {
		if (caller_from_lr(w))
			return -1;
	} else if (stack_read(w->wc, cfa + ra_off * 8, 8, false)) {
		return -1;
	} else {
		w->ip = STRIP_RA(w->wc->got[0]);
	}
	if (fp_at == cfa)
		return 0;
	if (stack_read(w->wc, fp_at, 8, true))
		return -1;
	memo_note_bp(w->memo, MEMO_BP_REPLACED);
	w->bp = w->wc->got[0];
	return 0;
}

/* The row in effect at the frame's @pc, asking the loader for tables where none are. */
static __always_inline void frame_row(struct walk *w, __u64 pc, struct unwind_row *row)
{
	struct unwind_mapping *m = NULL;

	if (w->last && pc >= w->last->start && pc < w->last->end)
		m = w->last;
	else if (w->proc)
		m = w->last = find_mapping(w->proc, pc);
	if (m && m->nr_pages)
		find_row(m, pc, row);
	/* Past a frame-pointer step the address may be garbage: no reason to ask. */
	else if (!m && !(w->flags & STACK_FP)) {
		request_tables(w->tgid, w->proc, pc);
		/* Walked again, the next call asks again if it must. */
		memo_give_up(w->memo);
	}
}

/*
 * A uretprobe, ours or another tool's on the same function, replaces the
 * return address of each call it catches by its trampoline (the first
 * word of the process's [uprobes] page) and keeps the real one in the
 * thread's pending return instances, innermost first. A walk from inside
 * such a call meets the trampoline where its caller should be: taken for
 * code without tables, it asked the loader for them and went on by frame
 * pointers into garbage (two pages of test_growth's malloc beside another
 * tracer's return probes). The kernel gives the instances (replay_env.h
 * the recorded case's).
 */
#ifndef UNWIND_REPLAY
/*
 * The current process's trampoline, 0 if no uprobe was ever hit in it:
 * loads through the task's BTF pointers, not three helper calls a walk.
 */
static __always_inline __u64 uretprobe_trampoline(void)
{
	struct xol_area *area = bpf_get_current_task_btf()->mm->uprobes_state.xol_area;

	return area ? area->vaddr : 0;
}

/* The innermost pending return instance of the current thread, or 0. */
static __always_inline __u64 uretprobe_first(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return (__u64)BPF_CORE_READ(task, utask, return_instances);
}

static __always_inline void uretprobe_read(__u64 at, struct pending_return *out)
{
	struct return_instance *ri = (void *)at;

	out->stack = BPF_CORE_READ(ri, stack);
	out->orig = BPF_CORE_READ(ri, orig_ret_vaddr);
	out->next = (__u64)BPF_CORE_READ(ri, next);
	out->chained = BPF_CORE_READ(ri, chained);
}
#endif

/* At most this many instances are passed over at a trampoline. */
#define URETPROBE_MAX_SKIP 8

/*
 * The return address that the instances from wc->pending hold for the
 * frame whose caller's stack pointer is @sp, wc->pending moved to the
 * instance of the next trampoline; 0 if none does. An instance's stack is
 * at the return address's slot (x86-64) or at its caller's stack pointer
 * (arm64): one below @sp - 8 belongs to a frame a longjmp left, which the
 * kernel drops only at the thread's next return probe. A chained instance
 * (a probed function's tail call probed too) shares its slot with the one
 * after it.
 */
static __always_inline __u64 uretprobe_return(struct walk_cache *wc, __u64 sp)
{
	struct pending_return *ri = &wc->ret;
	__u64 at = wc->pending, ret;
	int i;

	for (i = 0; i < URETPROBE_MAX_SKIP; i++) {
		if (!at)
			return 0;
		uretprobe_read(at, ri);
		if (ri->stack + 8 >= sp)
			break;
		at = ri->next;
	}
	if (i == URETPROBE_MAX_SKIP)
		return 0;
	ret = ri->orig;
	for (i = 0; i < URETPROBE_MAX_SKIP && ri->chained && ri->next; i++)
		uretprobe_read(ri->next, ri);
	wc->pending = ri->next;
	return ret;
}

/*
 * The caller of a frame whose return address is the trampoline. Such a
 * walk is not remembered: the same stack words stand for whichever call
 * the kernel's instances say.
 */
static __always_inline void uretprobe_caller(struct walk *w)
{
	__u64 ret;

	if (w->wc->pending == URETPROBE_UNREAD)
		w->wc->pending = uretprobe_first();
	ret = uretprobe_return(w->wc, w->sp);
	if (!ret)
		return;
	w->ip = STRIP_RA(ret);
	memo_give_up(w->memo);
}

/*
 * The sigreturn trampoline: the handler returned to it with sp at the
 * kernel's signal frame, which holds the interrupted registers. Its ip is
 * not a return address: it is looked up as it is.
 */
static __always_inline long sigframe_step(struct walk *w)
{
	__u64 frame = w->sp;

#if defined(SIGFRAME_LR)
	if (stack_read(w->wc, frame + SIGFRAME_BP, 16, true))
		goto cut;
	w->lr = w->wc->got[1];
	w->lr_known = true;
	w->lr_from_regs = false;
#else
	if (stack_read(w->wc, frame + SIGFRAME_BP, 8, true))
		goto cut;
#endif
	memo_note_bp(w->memo, MEMO_BP_REPLACED);
	w->bp = w->wc->got[0];
	if (stack_read(w->wc, frame + SIGFRAME_SP, 16, false) || !w->wc->got[1])
		goto cut;
	w->sp = w->wc->got[0];
	w->ip = w->wc->got[1];
	w->interrupted = true;
	return 0;
cut:
	w->flags |= STACK_CUT;
	return 1;
}

/* A sigreturn trampoline without rules, known by its code (SIGRETURN_INSNS). */
static __always_inline bool at_sigreturn(const struct walk *w)
{
#if defined(SIGRETURN_INSNS)
	__u64 insns;

	return !bpf_probe_read_user(&insns, sizeof(insns), (void *)w->ip) &&
	       insns == SIGRETURN_INSNS;
#else
	return false;
#endif
}

static long unwind_step(__u32 i, struct walk *w)
{
	struct unwind_row row = {.kind = UNWIND_NONE};
	__u32 n = w->st->nr;
	__u64 cfa;

	if (n >= MAX_STACK_DEPTH)
		return 1;
	if (n && w->ip == w->wc->tramp)
		uretprobe_caller(w);
	w->st->ips[n] = w->ip;
	w->st->nr = n + 1;
	/* A return address may be the first byte of the next function: look up the call. */
	frame_row(w, n && !w->interrupted ? w->ip - 1 : w->ip, &row);
	w->interrupted = false;
	switch (row.kind) {
	case UNWIND_END:
		w->done = true;
		return 1;
	case UNWIND_CFA_SP:
		cfa = w->sp + row.cfa_off * 8;
		break;
	case UNWIND_CFA_FP:
		memo_bp_used(w->wc, w->memo);
		cfa = w->bp + row.cfa_off * 8;
		break;
	case UNWIND_CFA_PLT:
		cfa = PLT_CFA(w->sp, w->ip, row.cfa_off);
		break;
	case UNWIND_SIGFRAME:
		return sigframe_step(w);
	default:
		return at_sigreturn(w) ? sigframe_step(w) : frame_pointer_step(w);
	}
	if (read_caller(w, cfa, row.fp_off, row.ra_off)) {
		w->flags |= STACK_CUT;
		return 1;
	}
	w->lr_known = false;
	w->sp = cfa;
	w->done = !w->ip;
	return w->done;
}

/*
 * Walk with the unwind tables from the user registers @regs into @st;
 * false if it cannot start. @wc: the thread's window and its memo of the
 * walk, which the walk fills but for its stack id (memo_keep()), or gives
 * up if it cannot be remembered.
 */
static __always_inline bool walk_cfi(const struct user_regs *regs, struct stack_trace *st,
				     struct walk_cache *wc)
{
	struct stack_memo *memo = &wc->memo;
	struct walk w = {
	    .st = st,
	    .ip = regs->ip,
	    .sp = regs->sp,
	    .bp = regs->bp,
	    .lr = regs->lr,
	    .lr_known = true,
	    .lr_from_regs = true,
	    .tgid = bpf_get_current_pid_tgid() >> 32,
	    .wc = wc,
	    .memo = memo,
	};

	memo_start(memo, regs);
	wc->bp_word = BP_FROM_REGS;
	wc->tramp = uretprobe_trampoline();
	wc->pending = URETPROBE_UNREAD;
	w.proc = bpf_map_lookup_elem(&unwind_procs, &w.tgid);
	if (!window_fill(wc, regs->sp))
		memo_give_up(memo);
	/* The frame count lives in the map: kept here it would be a new verifier state per frame.
	 */
	st->nr = 0;
	bpf_loop(cfg.stack_depth, unwind_step, &w, 0);
	st->flags = w.flags;
	if (!w.done && !(w.flags & STACK_CUT) && st->nr >= cfg.stack_depth)
		st->flags |= STACK_TRUNCATED;
	memo->flags = st->flags;
	return st->nr > 0;
}
#else
static __always_inline bool walk_cfi(const struct user_regs *regs, struct stack_trace *st,
				     struct walk_cache *wc)
{
	return false;
}
#endif

#endif
