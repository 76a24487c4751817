// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The BPF stack walker in user space: bpf/memo.bpf.h and bpf/cfi.bpf.h
 * compiled here with the helpers of replay_env.h, which answer from a
 * recorded case (unwind_case.h). Built once per architecture the walker
 * knows (-D__TARGET_ARCH_<name>, its arch_<name>.bpf.h), CASE_WALK naming
 * the one function each build exports (the Makefile keeps every other
 * symbol of the object local: each defines the BPF object's maps).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unwind_case.h"
#include "replay_env.h"
#include "memo.bpf.h"
#include "cfi.bpf.h"

/* The case the helpers answer from: one walk at a time. */
static struct unwind_case *cur;
static __u32 misses;

struct alloctrace_config cfg;

/* The process every case is, to the walker. */
#define CASE_TGID 1

/* An inner map of unwind_rows or unwind_pages: the chunk a lookup named. */
struct chunk_ref {
	bool rows;
	__u32 chunk;
};

static void *chunk_slot(const struct chunk_ref *ref, __u32 slot)
{
	__u32 i = (ref->chunk << UNWIND_CHUNK_SHIFT) | slot;
	__u32 nr = ref->rows ? cur->nr_rows : cur->nr_pages;
	__u8 *state = ref->rows ? cur->row_state : cur->page_state;

	if (i >= nr || state[i] == ENTRY_ABSENT) {
		cur->absent++;
		return NULL;
	}
	state[i] = ENTRY_READ;
	return ref->rows ? (void *)&cur->rows[i] : (void *)&cur->pages[i];
}

void *bpf_map_lookup_elem(void *map, const void *key)
{
	static struct chunk_ref rows = {.rows = true}, pages;
	static __u64 clock;
	__u32 k = *(const __u32 *)key;

	if (map == &unwind_rows || map == &unwind_pages) {
		struct chunk_ref *ref = map == &unwind_rows ? &rows : &pages;

		ref->chunk = k;
		return ref;
	}
	if (map == &rows || map == &pages)
		return chunk_slot(map, k);
	if (map == &unwind_procs)
		return k == CASE_TGID ? &cur->proc : NULL;
	if (map == &miss_clock)
		return &clock;
	return NULL;
}

long bpf_map_update_elem(void *map, const void *key, const void *value, __u64 flags)
{
	return -EINVAL;
}

long bpf_map_delete_elem(void *map, const void *key)
{
	return -ENOENT;
}

/* The recorded range holding [@addr, @addr + @size), or NULL. */
static const struct case_memory *memory_at(const struct unwind_case *c, __u64 addr, __u32 size)
{
	for (size_t i = 0; i < c->nr_mem; i++) {
		const struct case_memory *m = &c->mem[i];

		if (addr >= m->addr && addr - m->addr <= m->len &&
		    size <= m->len - (addr - m->addr))
			return m;
	}
	return NULL;
}

long bpf_probe_read_user(void *dst, __u32 size, const void *unsafe_ptr)
{
	__u64 addr = (__u64)unsafe_ptr;
	const struct case_memory *m;

	if (cur->mem_fd >= 0) {
		if (pread(cur->mem_fd, dst, size, (off_t)addr) != (ssize_t)size)
			goto fault;
		return unwind_case__add_memory(cur, addr, dst, size);
	}
	m = memory_at(cur, addr, size);
	if (m) {
		memcpy(dst, m->bytes + (addr - m->addr), size);
		return 0;
	}
fault:
	/* As the kernel's helper leaves it. */
	memset(dst, 0, size);
	return -EFAULT;
}

long bpf_loop(__u32 nr, void *callback_fn, void *ctx, __u64 flags)
{
	long (*fn)(__u32 i, void *ctx) = (long (*)(__u32, void *))callback_fn;

	for (__u32 i = 0; i < nr; i++)
		if (fn(i, ctx))
			return i + 1;
	return nr;
}

__u64 bpf_ktime_get_ns(void)
{
	static __u64 now = 1000000000000ULL;

	return now += 1000;
}

__u64 bpf_get_current_pid_tgid(void)
{
	return (__u64)CASE_TGID << 32 | CASE_TGID;
}

void *bpf_get_current_task_btf(void)
{
	return NULL;
}

void *bpf_task_storage_get(void *map, void *task, void *value, __u64 flags)
{
	return NULL;
}

/* Return probes pending on the recorded thread: the case's, numbered from 1, innermost first. */
__u64 uretprobe_trampoline(void)
{
	return cur->pending.tramp;
}

__u64 uretprobe_first(void)
{
	return cur->pending.nr ? 1 : 0;
}

void uretprobe_read(__u64 at, struct pending_return *out)
{
	const struct case_return *ri = &cur->pending.ret[at - 1];

	cur->pending.reads++;
	*out = (struct pending_return){.stack = ri->stack,
				       .orig = ri->orig,
				       .next = at < cur->pending.nr ? at + 1 : 0,
				       .chained = ri->chained};
}

struct proc_state *current_proc(void)
{
	return NULL;
}

void count(enum counter idx)
{
	if (idx == CNT_UNWIND_MISSES)
		misses++;
}

void send_event(void *ev, __u64 size, struct proc_state *ps)
{
}

/*
 * Change each word the walk remembered in turn, ask the memo again, and
 * put the word back: a remembered walk must not answer for another stack,
 * whichever window of the walk's the word was in.
 */
static bool recall_changed(struct walk_cache *wc, struct stack_memo *memo,
			   const struct user_regs *regs)
{
	bool recalled = false;

	for (__u32 i = 0; i < memo->nr_words && !recalled; i++) {
		__u64 addr = regs->sp + memo->words[i] * 8ULL;
		struct case_memory *m = (struct case_memory *)memory_at(cur, addr, 8);
		__u8 *byte;

		if (!m || cur->mem_fd >= 0)
			return false;
		byte = m->bytes + (addr - m->addr);
		*byte ^= 0x40;
		recalled = recall(wc, memo, regs, memo_gen());
		*byte ^= 0x40;
	}
	return recalled;
}

int CASE_WALK(struct unwind_case *c, struct case_walk *out)
{
	struct user_regs regs = {
	    .ip = c->regs.ip, .sp = c->regs.sp, .bp = c->regs.bp, .lr = c->regs.lr};
	struct walk_cache *wc = calloc(1, sizeof(*wc));
	struct walk_memos *memos = calloc(1, sizeof(*memos));
	struct stack_memo *memo;
	int err = 0;

	if (!wc || !memos) {
		err = -ENOMEM;
		goto out;
	}
	cur = c;
	misses = 0;
	cfg.stack_depth = c->depth;
	*out = (struct case_walk){0};
	out->started = walk_cfi(&regs, &out->st, wc);
	out->misses = misses;
	/* As stacks.bpf.h keeps a walk whose stack went into the map. */
	if (memo_usable(&wc->memo)) {
		memo = memo_slot(memos, &regs);
		memo_keep(memo, &wc->memo, 1, memo_gen());
		out->recalled = recall(wc, memo, &regs, memo_gen()) && memo->stack_id == 1;
		if (out->recalled)
			out->recalled_changed = recall_changed(wc, memo, &regs);
		/* New tables or an exec: every remembered walk is stale. */
		memo_forget_all();
		out->recalled_stale = recall(wc, memo, &regs, memo_gen());
	}
out:
	free(memos);
	free(wc);
	cur = NULL;
	return err;
}
