/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stacks: the walk (CFI, remembered, or the kernel's frame-pointer walk),
 * the stack map that gives each stack an id, and the per-stack statistics,
 * so that a report reads one entry per stack instead of one per live block.
 */
#ifndef ALLOCTRACE_STACKS_BPF_H
#define ALLOCTRACE_STACKS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "alloctrace.h"
#include "config.bpf.h"
#include "procs.bpf.h"
#include "memo.bpf.h"
#include "cfi.bpf.h"

/*
 * Per CPU: threads allocating through one stack on several CPUs would
 * otherwise take turns at one cache line, six atomic adds a malloc/free
 * pair. The loader sums the CPUs' shares.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 16);
	__type(key, struct stack_key);
	__type(value, struct stack_counts);
} stack_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 16);
	/* Sizes without BTF types: the loader cuts the value to the chosen depth. */
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct stack_trace));
} stacks SEC(".maps");

static __always_inline __u64 hash_stack(const struct stack_trace *st)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < MAX_STACK_DEPTH; i++) {
		if (i >= st->nr)
			break;
		h ^= st->ips[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 32;
	}
	return h ? h : 1;
}

/* The kernel's frame-pointer walk of the current task's user stack. */
static __always_inline bool walk_fp(void *ctx, struct stack_trace *st)
{
	__u32 size = cfg.stack_depth * sizeof(__u64);
	long len;

	if (size > sizeof(st->ips))
		size = sizeof(st->ips);
	len = bpf_get_stack(ctx, st->ips, size, BPF_F_USER_STACK);
	if (len <= 0)
		return false;
	st->nr = len / sizeof(__u64);
	st->flags = st->nr >= cfg.stack_depth ? STACK_TRUNCATED : 0;
	return true;
}

/* The stack's id in the stack map, with @st holding it, or STACK_ID_NONE. */
static __always_inline __u64 stack_id_of(struct stack_trace *st)
{
	__u64 id = hash_stack(st);

	if (bpf_map_lookup_elem(&stacks, &id))
		return id;
	if (bpf_map_update_elem(&stacks, &id, st, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&stacks, &id)) {
		count(CNT_LOST_STACKS);
		return STACK_ID_NONE;
	}
	return id;
}

static __always_inline void count_stack(__u32 flags)
{
	if (flags & STACK_CUT)
		count(CNT_STACKS_CUT);
}

/*
 * The id of the stack a remembered walk from @regs says, if the stack
 * still holds it, else STACK_ID_NONE. Global functions, it and
 * remember_walk(): what they do with the thread's memos, or without them,
 * is checked once, not again with every state of the walk around them.
 */
__noinline __u64 recalled_stack(struct walk_cache *wc, const struct user_regs *regs, __u64 gen)
{
	struct stack_memo *kept;

	if (!wc || !regs)
		return STACK_ID_NONE;
	kept = memo_slot(thread_memos(), regs);
	if (!kept || !recall(wc, kept, regs, gen))
		return STACK_ID_NONE;
	count(CNT_STACKS_RECALLED);
	count_stack(kept->flags);
	return kept->stack_id;
}

/* Keep @wc's walk from @regs, whose stack went into the map as @id, under the tables of @gen. */
__noinline int remember_walk(struct walk_cache *wc, const struct user_regs *regs, __u64 id,
			     __u64 gen)
{
	struct stack_memo *kept;

	if (!wc || !regs || !memo_usable(&wc->memo) || id == STACK_ID_NONE)
		return 0;
	kept = memo_slot(thread_memos(), regs);
	if (kept)
		memo_keep(kept, &wc->memo, id, gen);
	return 0;
}

/*
 * Walk the user stack into @st and return its id in the stack map. @regs
 * are the user registers where the walk starts. Unless @need_frames, a
 * remembered walk that still holds answers with its id and leaves @st alone.
 */
static __always_inline __u64 capture_stack(void *ctx, const struct user_regs *regs,
					   struct stack_trace *st, bool need_frames)
{
	struct walk_cache *wc = NULL;
	__u64 gen = memo_gen(), id;
	bool ok;

	if (cfg.unwind_cfi) {
		wc = thread_walk_cache();
		id = need_frames ? STACK_ID_NONE : recalled_stack(wc, regs, gen);
		if (id != STACK_ID_NONE)
			return id;
	}
	/* Without its cache (no memory for it) a thread's stacks come from frame pointers. */
	ok = wc ? walk_cfi(regs, st, wc) : walk_fp(ctx, st);
	if (!ok) {
		st->nr = 0;
		count(CNT_STACK_ERRORS);
		return STACK_ID_NONE;
	}
	count_stack(st->flags);
	id = stack_id_of(st);
	/* Remembered once its stack is in the map, under the tables it was walked with. */
	remember_walk(wc, regs, id, gen);
	return id;
}

static __always_inline void stats_add(const struct owner *o, __u64 stack_id, __u64 size)
{
	struct stack_key key = {.stack_id = stack_id, .tgid = o->tgid, .gen = o->gen};
	struct stack_counts *st, zero = {};

	/* A block entered the live map: stats_release() takes it out of the count. */
	if (o->ps)
		__sync_fetch_and_add(&o->ps->live, 1);
	st = bpf_map_lookup_elem(&stack_stats, &key);
	if (!st) {
		bpf_map_update_elem(&stack_stats, &key, &zero, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&stack_stats, &key);
		if (!st) {
			count_in(o->ps, CNT_LOST_STATS);
			return;
		}
	}
	/* This CPU's share, but another probe may preempt this one on it. */
	__sync_fetch_and_add(&st->allocs, 1);
	__sync_fetch_and_add(&st->alloc_bytes, size);
}

/* Take a tracked block's contribution out of its stack's statistics. */
static __always_inline void stats_release(const struct owner *o, const struct alloc_info *info)
{
	struct stack_key key = {.stack_id = info->stack_id, .tgid = o->tgid, .gen = o->gen};
	struct stack_counts *st = bpf_map_lookup_elem(&stack_stats, &key);

	count_in(o->ps, CNT_FREES);
	if (o->ps)
		__sync_fetch_and_sub(&o->ps->live, 1);
	if (!st)
		return;
	__sync_fetch_and_add(&st->frees, 1);
	__sync_fetch_and_add(&st->freed_bytes, info->size);
}

#endif
