/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The walk memo, and the window on the stack the CFI walk reads through.
 *
 * A walk remembered: where it started, which stack words it read and a
 * hash of what they held. The walk is a function of its start, those
 * words and the unwind tables, so the same start with the same words
 * under the same tables is the same stack: checking that costs the walk's
 * reads of the stack without its lookups of the tables. Loops allocate
 * from the same place at the same depth over and over.
 */
#ifndef ALLOCTRACE_MEMO_BPF_H
#define ALLOCTRACE_MEMO_BPF_H

/* In the unit tests, the helpers read a recorded case (cfi.bpf.h). */
#ifdef UNWIND_REPLAY
#include "replay_env.h"
#else
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#endif
#include "alloctrace.h"

/*
 * A copy of the stack a walk reads from. A bpf_probe_read_user costs about
 * as much for a kilobyte as for 16 bytes, and a frame needs one or two:
 * the walk copies a window of the stack once and reads its frames from it.
 */
#define STACK_WINDOW 4096
#define PAGE_SIZE    4096

#define MEMO_SLOTS 128
#define MEMO_WORDS 64
/*
 * How far from sp a remembered walk may read: a server's stacks run deep
 * (MariaDB's allocations 12 KiB on average, over three windows).
 */
#define MEMO_SPAN_MAX (64 * 1024)
/* stack_memo.nr_words of a walk that cannot be remembered: past MEMO_WORDS, no count. */
#define MEMO_UNUSABLE 255
/*
 * walk_cache.bp_word: the walk's frame pointer is the registers', or was restored
 * from a stack word already in the memo, or from the word off bytes above
 * sp (BP_WORD(off)), which goes into the memo only if a frame uses it.
 */
#define BP_FROM_REGS 0
#define BP_NOTED     1
#define BP_WORD(off) ((off) + 2)
/* stack_memo.stamp of a slot that holds no walk. */
#define MEMO_EMPTY 0
#define MEMO_SEED  0xcbf29ce484222325ULL

/*
 * What the walk did with the frame pointer (bp) first. A walk that read it as the registers
 * had it is right only for that bp; one that restored it from the stack
 * before any rule read it does not depend on it.
 */
enum memo_bp {
	MEMO_BP_UNTOUCHED,
	MEMO_BP_DEPENDS,
	MEMO_BP_REPLACED,
};

/*
 * Where a stack walk starts: the user registers at a probe or a syscall.
 * bp is the frame pointer (rbp, x29); lr the link register where there is
 * one (arm64's x30, PT_REGS_LR() in arch.bpf.h), else 0.
 */
struct user_regs {
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u64 lr;
};

struct stack_memo {
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u64 lr;
	__u64 stamp; /* memo_stamp() of walk_gen when walked, or MEMO_EMPTY */
	__u64 stack_id;
	__u64 sum;		 /* hash of the words read, in order */
	__u32 span;		 /* bytes from sp to the end of the farthest word read */
	__u8 nr_words;		 /* words read so far, or MEMO_UNUSABLE */
	__u8 flags;		 /* the stack's STACK_* flags */
	__u8 bp_use;		 /* enum memo_bp */
	__u8 lr_used;		 /* a frame's return address was the registers' lr */
	__u16 words[MEMO_WORDS]; /* each word read, as its offset from sp in words */
};

_Static_assert(MEMO_SPAN_MAX / 8 <= 65536, "a word's offset from sp fits in a __u16");
_Static_assert(MEMO_WORDS < MEMO_UNUSABLE, "MEMO_UNUSABLE is no count");

/* walk_cache.pending before the walk meets a trampoline: not read yet. */
#define URETPROBE_UNREAD (~0ULL)

/* What a walk reads of a pending return instance (the kernel's struct return_instance). */
struct pending_return {
	__u64 stack; /* the stack pointer at its function's entry */
	__u64 orig;  /* the return address it took */
	__u64 next;  /* the next instance, outward; 0 after the last */
	bool chained;
};

/*
 * A thread's window on its stack and the memo of its walk in progress:
 * per thread, so that no other walk writes them while this one reads.
 */
struct walk_cache {
	__u64 win_lo; /* the window holds the stack from win_lo to win_hi */
	__u64 win_hi;
	__u64 got[2];			/* what the last stack_read() read */
	__u32 bp_word;			/* where the walk's bp came from: BP_FROM_REGS, ... */
	__u64 bp_value;			/* the word BP_WORD() names, as read */
	__u64 tramp;			/* the process's uretprobe trampoline, 0 if none */
	__u64 pending;			/* the next pending return instance (cfi.bpf.h) */
	struct pending_return ret;	/* the last read: kept off the walk's full stack */
	__u8 window[STACK_WINDOW + 16]; /* + the widest read past an offset */
	struct stack_memo memo;
};

/*
 * A thread's remembered walks, one slot per hash of where they start.
 * Apart from its walk cache: 24 KiB the kernel may not find at once, and
 * without them walks still run, only none is recalled.
 */
struct walk_memos {
	struct stack_memo slot[MEMO_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct walk_cache);
} walk_caches SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct walk_memos);
} walk_memos SEC(".maps");

/*
 * Changes whenever a remembered walk may no longer be right: the loader
 * wrote unwind tables or dropped stacks, or a process ran exec.
 */
__u64 walk_gen = 0;

/* This thread's window, or NULL when there is no memory for it. */
static __always_inline struct walk_cache *thread_walk_cache(void)
{
	return bpf_task_storage_get(&walk_caches, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* This thread's remembered walks, or NULL when there is no memory for them. */
static __always_inline struct walk_memos *thread_memos(void)
{
	return bpf_task_storage_get(&walk_memos, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/*
 * The generation a walk starting now is remembered under: read before the
 * walk, so that tables written while it runs leave its memo stale.
 */
static __always_inline __u64 memo_gen(void)
{
	return walk_gen;
}

/* Every remembered walk may be wrong from now on (an exec). */
static __always_inline void memo_forget_all(void)
{
	__sync_fetch_and_add(&walk_gen, 1);
}

/* A memo is good under the walk_gen it was stamped with; MEMO_EMPTY never is one. */
static __always_inline __u64 memo_stamp(__u64 gen)
{
	return gen + 1;
}

static __always_inline void memo_give_up(struct stack_memo *memo)
{
	memo->nr_words = MEMO_UNUSABLE;
}

/* Did the walk read a word or more, and no more than a memo holds? */
static __always_inline bool memo_usable(const struct stack_memo *memo)
{
	return memo->nr_words && memo->nr_words <= MEMO_WORDS;
}

/* The walk read bp (MEMO_BP_DEPENDS) or restored it (MEMO_BP_REPLACED): the first counts. */
static __always_inline void memo_note_bp(struct stack_memo *memo, enum memo_bp how)
{
	if (memo->bp_use == MEMO_BP_UNTOUCHED)
		memo->bp_use = how;
}

static __always_inline __u64 memo_mix(__u64 sum, __u32 word, __u64 value)
{
	sum = (sum ^ value ^ ((__u64)word << 56)) * 0x100000001b3ULL;
	return sum ^ (sum >> 29);
}

/*
 * Copy the stack from @addr up into the window. Where the stack ends
 * within a window's length the copy fails: then only to the end of
 * @addr's page, which holds @addr and so is mapped if anything is.
 */
static __always_inline bool window_fill(struct walk_cache *wc, __u64 addr)
{
	__u32 len = STACK_WINDOW;

	if (bpf_probe_read_user(wc->window, STACK_WINDOW, (void *)addr)) {
		len = PAGE_SIZE - (addr & (PAGE_SIZE - 1));
		if (len > STACK_WINDOW)
			len = STACK_WINDOW;
		if (bpf_probe_read_user(wc->window, len, (void *)addr))
			return false;
	}
	wc->win_lo = addr;
	wc->win_hi = addr + len;
	return true;
}

/* Does the window hold [@addr, @addr + @size)? It moves to @addr if not. */
static __always_inline bool in_window(struct walk_cache *wc, __u64 addr, __u32 size)
{
	if (addr >= wc->win_lo && addr + size <= wc->win_hi)
		return true;
	return window_fill(wc, addr) && addr + size <= wc->win_hi;
}

/* Note a word the walk read @off bytes above its sp, for its memo. */
static __always_inline void remember(struct stack_memo *memo, __u64 off, __u64 value)
{
	__u32 n = memo->nr_words;

	if ((off & 7) || off >= MEMO_SPAN_MAX || n >= MEMO_WORDS) {
		memo_give_up(memo);
		return;
	}
	memo->words[n] = off / 8;
	memo->sum = memo_mix(memo->sum, off / 8, value);
	memo->nr_words = n + 1;
	if (off + 8 > memo->span)
		memo->span = off + 8;
}

/*
 * Read @size (8 or 16) bytes of the stack at @addr into wc->got, through
 * the window, and note them in the walk's memo. @bp_first: the first word
 * is the caller's frame pointer, noted only once a frame uses it (memo_bp_used()):
 * code without frame pointers keeps data in it, which differs from call
 * to call and would make every memo miss. A global function: the
 * verifier checks its paths once, not again at every frame of every walk.
 */
__noinline int stack_read(struct walk_cache *wc, __u64 addr, __u32 size, bool bp_first)
{
	struct stack_memo *memo;
	__u64 off, at;

	/* The verifier knows nothing of a global function's callers. */
	if (!wc || (size != 8 && size != 16))
		return -1;
	memo = &wc->memo;
	if (!in_window(wc, addr, size)) {
		memo_give_up(memo);
		/* The memo is given up: nothing to note. */
		if (bp_first)
			wc->bp_word = BP_NOTED;
		if (size == 16)
			return bpf_probe_read_user(wc->got, 16, (void *)addr) ? -1 : 0;
		return bpf_probe_read_user(wc->got, 8, (void *)addr) ? -1 : 0;
	}
	off = (addr - wc->win_lo) & (STACK_WINDOW - 1);
	at = addr - memo->sp;
	__builtin_memcpy(wc->got, &wc->window[off], 8);
	if (!bp_first) {
		remember(memo, at, wc->got[0]);
	} else if (at < MEMO_SPAN_MAX) {
		wc->bp_word = BP_WORD(at);
		wc->bp_value = wc->got[0];
	} else {
		memo_give_up(memo);
		wc->bp_word = BP_NOTED;
	}
	if (size == 16) {
		__builtin_memcpy(&wc->got[1], &wc->window[off + 8], 8);
		remember(memo, at + 8, wc->got[1]);
	}
	return 0;
}

/* A frame uses the walk's bp: the memo must hold what it came from. */
static __always_inline void memo_bp_used(struct walk_cache *wc, struct stack_memo *memo)
{
	__u32 word = wc->bp_word;

	if (word == BP_FROM_REGS) {
		memo_note_bp(memo, MEMO_BP_DEPENDS);
		return;
	}
	if (word == BP_NOTED)
		return;
	remember(memo, word - BP_WORD(0), wc->bp_value);
	wc->bp_word = BP_NOTED;
}

/* The slot in @memos of a walk from @regs, NULL without @memos. */
static __always_inline struct stack_memo *memo_slot(struct walk_memos *memos,
						    const struct user_regs *regs)
{
	__u64 h = (regs->ip ^ (regs->sp << 16)) * 0x9e3779b97f4a7c15ULL;

	return memos ? &memos->slot[(h >> 32) & (MEMO_SLOTS - 1)] : NULL;
}

/* Empty @memo for a walk from @regs about to fill it. */
static __always_inline void memo_start(struct stack_memo *memo, const struct user_regs *regs)
{
	*memo = (struct stack_memo){
	    .ip = regs->ip, .sp = regs->sp, .bp = regs->bp, .lr = regs->lr, .sum = MEMO_SEED};
}

/*
 * Do the words @memo names still hold what its walk read? @wc's window
 * moves over the stack as the walk's did. A global function: its loop is
 * checked once, and runs without a callback per word.
 */
__noinline bool memo_holds(struct walk_cache *wc, const struct stack_memo *memo)
{
	__u64 sum = MEMO_SEED, at;
	__u32 word;

	if (!wc || !memo)
		return false;
	for (__u32 i = 0; i < MEMO_WORDS; i++) {
		if (i >= memo->nr_words)
			break;
		word = memo->words[i];
		at = memo->sp + word * 8;
		if (!in_window(wc, at, 8))
			return false;
		sum = memo_mix(sum, word,
			       *(__u64 *)&wc->window[(at - wc->win_lo) & (STACK_WINDOW - 1)]);
	}
	return sum == memo->sum;
}

/* Does the stack still hold what the walk @memo remembers read from @regs on? */
static __always_inline bool recall(struct walk_cache *wc, struct stack_memo *memo,
				   const struct user_regs *regs, __u64 gen)
{
	if (memo->stamp != memo_stamp(gen) || memo->ip != regs->ip || memo->sp != regs->sp ||
	    (memo->bp_use == MEMO_BP_DEPENDS && memo->bp != regs->bp) ||
	    (memo->lr_used && memo->lr != regs->lr))
		return false;
	/* Only what the walk read: a shallow one reads less than a window. */
	if (memo->span < STACK_WINDOW) {
		if (memo->span && bpf_probe_read_user(wc->window, memo->span, (void *)regs->sp))
			return false;
		wc->win_lo = regs->sp;
		wc->win_hi = regs->sp + memo->span;
	} else if (!window_fill(wc, regs->sp)) {
		return false;
	}
	return memo_holds(wc, memo);
}

/* Keep the walk in progress @walked in @slot as stack @id, good while walk_gen stays @gen. */
static __always_inline void memo_keep(struct stack_memo *slot, const struct stack_memo *walked,
				      __u64 id, __u64 gen)
{
	*slot = *walked;
	slot->stack_id = id;
	slot->stamp = memo_stamp(gen);
}

#endif
