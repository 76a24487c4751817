// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocator tracing: entry probes note the arguments of each allocation
 * call, the shared return probe records the block, its size and the user
 * stack, and free releases it. Per-stack statistics live here too, so that
 * a report reads one entry per stack instead of one per live block.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "alloctrace.h"

/*
 * Where the stack pointer is at the return probe relative to the entry:
 * x86 pops the return address, arm64 returns through the link register.
 */
#if defined(__TARGET_ARCH_x86)
#define RET_SP_DELTA 8
#else
#define RET_SP_DELTA 0
#endif

/*
 * An allocator call made from inside another one (glibc's realloc(NULL, n)
 * tail-calls malloc, realloc(p, 0) calls free) runs on the same stack, at
 * or below the outer call's stack pointer. Bound the distance so that a
 * record left by a thread that died mid-call is not taken for an outer
 * call of an unrelated one.
 */
#define NEST_WINDOW (64 * 1024)

#define MAP_ANONYMOUS 0x20
#define MAP_FAILED_ADDR ((__u64)-1)

/* One process: its tgid, checked without a map lookup. */
const volatile __u32 targ_tgid = 0;
/* Several processes: the procs map says which (see owner_of()). */
const volatile bool multi_proc = false;
/* --all: every process that calls the probed allocator, but alloctrace. */
const volatile bool trace_all = false;
const volatile __u32 self_tgid = 0;
const volatile bool follow_forks = false;
/* --max-per-process: live blocks one process may hold in the map, 0 = no cap. */
const volatile __u64 max_per_proc = 0;
const volatile __u64 big_threshold = 0;
const volatile __u32 stack_depth = DEFAULT_STACK_DEPTH;
/* --min-age: note when each block was made; a clock read is dear at every malloc. */
const volatile bool block_ages = false;
/* --sample: mean bytes between sampled allocations, 0 to record every one. */
const volatile __u64 sample_rate = 0;
/* --unwind cfi: walk stacks with the loader's unwind tables, not the kernel's FP walk. */
const volatile bool unwind_cfi = false;

/*
 * Bumped by the loader as it detaches every probe while calls may be in
 * flight (a process traced with -p ran execve): their returns go unseen,
 * so their records must not pass for open calls.
 */
__u32 probe_epoch = 0;

/* One allocation call between its entry and its return. */
struct inflight {
	__u32 active;		/* probe_epoch + 1 of a call in flight: the rest is valid */
	__u32 sample_armed;	/* sample_left holds a draw */
	__s64 sample_left;	/* bytes this thread allocates before its next sample */
	__u64 sp;
	__u64 size;
	__u64 ptr;	/* realloc's old block, posix_memalign's out pointer */
	__u32 func;
	__u32 has_old;	/* old block was tracked and is held in .old */
	__u32 gen;	/* the process's image at entry */
	struct alloc_info old;
};

/*
 * Per thread, in task-local storage: two cheap gets per call instead of a
 * hash update and delete, and a thread that dies mid-call takes its record
 * with it, so a recycled tid starts clean.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight);
} inflight SEC(".maps");

static __always_inline struct inflight *thread_state(bool create)
{
	return bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

static __always_inline bool call_open(const struct inflight *rec)
{
	return rec->active == probe_epoch + 1;
}

/* The call in flight on this thread, or NULL. */
static __always_inline struct inflight *in_flight(void)
{
	struct inflight *rec = thread_state(false);

	return rec && call_open(rec) ? rec : NULL;
}

/*
 * The live blocks, an open-addressing table in an array: recording and
 * releasing a block cost an index and an atomic instead of a hash map's
 * bucket lock, element allocation and free (about 350 ns a malloc/free
 * pair, measured). Sized by the loader, a power of two of slots, and
 * mapped by it to read and drop blocks without a syscall per slot.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct live_block);
} allocs SEC(".maps");

/* The table's slots - 1. */
const volatile __u32 live_mask = 0;

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* With several processes: the traced ones, by tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MAX_PROCS);
	__type(key, __u32);
	__type(value, struct proc_state);
} procs SEC(".maps");

/* Per-CPU room for one event: the stack is captured into it every time. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct big_alloc_event);
} scratch SEC(".maps");

/*
 * Exponentially distributed gaps between samples (mean sample_rate), drawn
 * by the loader: BPF has no floating point to draw them itself.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SAMPLE_DRAWS);
	__type(key, __u32);
	__type(value, __u64);
} sample_gaps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/*
 * Unwind tables, filled by the loader: rows of every object, shared by
 * every process that maps it; the page index into them; and per process,
 * its executable mappings and where their rows are. Sized at load time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

/*
 * A copy of the stack a walk reads from. A bpf_probe_read_user costs about
 * as much for a kilobyte as for 16 bytes, and a frame needs one or two:
 * the walk copies a window of the stack once and reads its frames from it.
 */
#define STACK_WINDOW 4096

/*
 * A walk remembered: where it started, which stack words it read and a
 * hash of what they held. The walk is a function of its start, those
 * words and the unwind tables, so the same start with the same words
 * under the same tables is the same stack: checking that costs one read
 * of the stack instead of a walk. Loops allocate from the same place at
 * the same depth over and over.
 */
#define MEMO_SLOTS 8
#define MEMO_WORDS 128
#define MEMO_OFF 255	/* stack_memo.nr_words of a walk that cannot be remembered */

enum bp_state {
	BP_LIVE,	/* rbp is still the registers' */
	BP_USED,	/* a rule read it while it was */
	BP_DEAD,	/* restored from the stack before any rule read it */
};

struct stack_memo {
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u64 gen;	/* walk_gen + 1 when it was walked; 0: empty */
	__u64 stack_id;
	__u64 sum;	/* hash of the words read, in order */
	__u16 span;	/* bytes from sp to the end of the last word read */
	__u8 nr_words;	/* above MEMO_WORDS: the walk cannot be remembered */
	__u8 flags;	/* the stack's STACK_* flags */
	__u8 bp_state;	/* BP_USED: the walk read rbp as the registers had it */
	__u16 words[MEMO_WORDS];	/* each word read, as its offset from sp in words */
};

_Static_assert(STACK_WINDOW / 8 <= 65536, "a word's offset in the window fits in a __u16");
_Static_assert(MEMO_WORDS < MEMO_OFF, "MEMO_OFF is no count");

/*
 * A thread's window on its stack and its memos: per thread, so that no
 * other walk writes them while this one reads.
 */
struct walk_cache {
	__u64 win_lo;	/* the window holds the stack from win_lo to win_hi */
	__u64 win_hi;
	__u64 got[2];	/* what the last stack_read() read */
	__u32 slot;	/* the memo of the walk in progress */
	__u8 window[STACK_WINDOW + 16];	/* + the widest read past an offset */
	struct stack_memo memo[MEMO_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct walk_cache);
} walk_caches SEC(".maps");

#define MEMO_SEED 0xcbf29ce484222325ULL

static __always_inline __u64 memo_mix(__u64 sum, __u32 word, __u64 value)
{
	sum = (sum ^ value ^ ((__u64)word << 56)) * 0x100000001b3ULL;
	return sum ^ (sum >> 29);
}

/*
 * Changes whenever a remembered walk may no longer be right: the loader
 * wrote unwind tables or dropped stacks, or a process ran exec.
 */
__u64 walk_gen = 0;

/* When each CPU last asked for the tables of a process the loader has not seen. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} miss_clock SEC(".maps");

/*
 * Who a call belongs to: the process, its program image and, with several
 * processes, its entry in the procs map (NULL with one).
 */
struct owner {
	struct proc_state *ps;
	__u32 tgid;
	__u32 gen;
};

/* Count for the whole run and, with several processes, for @ps's process. */
static __always_inline void count_in(struct proc_state *ps, enum counter idx)
{
	__u32 key = idx;
	__u64 *val = bpf_map_lookup_elem(&counters, &key);

	if (val)
		*val += 1;
	if (ps && idx < CNT_MAX)
		__sync_fetch_and_add(&ps->counters[idx], 1);
}

static __always_inline struct proc_state *current_proc(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return multi_proc ? bpf_map_lookup_elem(&procs, &tgid) : NULL;
}

static __always_inline void count(enum counter idx)
{
	count_in(current_proc(), idx);
}

/* Without sampling every release of an unknown block is a fact worth counting. */
static __always_inline void count_untracked(struct proc_state *ps)
{
	if (!sample_rate)
		count_in(ps, CNT_UNTRACKED_FREES);
}

static __always_inline __s64 draw_gap(void)
{
	__u32 idx = bpf_get_prandom_u32() & (SAMPLE_DRAWS - 1);
	__u64 *gap = bpf_map_lookup_elem(&sample_gaps, &idx);

	return gap && *gap ? *gap : sample_rate;
}

/*
 * Poisson sampling by bytes, as heapprofd and tcmalloc do: each thread
 * counts down a random number of bytes; the allocation that crosses zero
 * is sampled and stands for 1/(1-exp(-size/rate)) of its kind.
 */
static __always_inline bool sampled(struct inflight *state, __u64 size)
{
	if (!sample_rate)
		return true;
	if (!state->sample_armed) {
		state->sample_left = draw_gap();
		state->sample_armed = 1;
	}
	state->sample_left -= size;
	if (state->sample_left > 0)
		return false;
	state->sample_left = draw_gap();
	return true;
}

/*
 * --all: a process calls the allocator for the first time since attach.
 * @old: the exited process whose tgid it has now, whose keys it must not
 * take for its own.
 */
static __always_inline struct proc_state *new_proc(__u32 tgid, const struct proc_state *old)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct proc_state st = { .gen = old ? old->gen + 1 : 0 }, *ps;

	BPF_CORE_READ_STR_INTO(&st.comm, task, group_leader, comm);
	/* Another of its threads may come first: that entry is as good. */
	bpf_map_update_elem(&procs, &tgid, &st, old ? BPF_ANY : BPF_NOEXIST);
	ps = bpf_map_lookup_elem(&procs, &tgid);
	if (!ps)
		count_in(NULL, CNT_LOST_PROCS);
	return ps;
}

/*
 * Is the calling process traced, and as whom? An exited entry still
 * waiting for its last report does not count: its tgid is another
 * process's now, which --all takes up under a new image number.
 */
static __always_inline bool owner_of(__u64 pid_tgid, struct owner *o)
{
	o->tgid = pid_tgid >> 32;
	o->gen = 0;
	o->ps = NULL;
	if (!multi_proc)
		return !targ_tgid || o->tgid == targ_tgid;
	o->ps = bpf_map_lookup_elem(&procs, &o->tgid);
	if (o->ps && !(o->ps->flags & PROC_EXITED)) {
		o->gen = o->ps->gen;
		return true;
	}
	if (!trace_all || o->tgid == self_tgid)
		return false;
	o->ps = new_proc(o->tgid, o->ps);
	if (!o->ps)
		return false;
	o->gen = o->ps->gen;
	return true;
}

/* Calls that take a block and may hand back another one in its place. */
static __always_inline bool func_reallocs(__u32 func)
{
	return func == FUNC_REALLOC || func == FUNC_REALLOCARRAY || func == FUNC_RALLOCX ||
	       func == FUNC_MREMAP;
}

/* mmap and mremap fail with MAP_FAILED, not NULL. */
static __always_inline bool func_maps(__u32 func)
{
	return func == FUNC_MMAP || func == FUNC_MREMAP;
}

/*
 * Releases other than plain free (operator delete, sdallocx, ...) may call
 * free themselves: they keep an in-flight record until they return so that
 * the inner free is seen as part of them.
 */
static __always_inline bool func_holds_release(__u32 func)
{
	return (func >= FUNC_DALLOCX && func <= FUNC_FREE_ALIGNED_SIZED) ||
	       (func >= FUNC_DELETE && func <= FUNC_DELETE_ARRAY_ALIGNED_NOTHROW);
}

static __always_inline bool nested(const struct inflight *outer, __u64 sp)
{
	return sp <= outer->sp && outer->sp - sp < NEST_WINDOW;
}

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
	struct unwind_miss_event ev = { .type = EVENT_UNWIND_MISS, .tgid = tgid, .ip = ip };

	count(CNT_UNWIND_MISSES);
	if (may_ask(proc) && bpf_ringbuf_output(&events, &ev, sizeof(ev), 0))
		count(CNT_LOST_EVENTS);
}

/* Where a stack walk starts: the user registers at a probe or a syscall. */
struct user_regs {
	__u64 ip;
	__u64 sp;
	__u64 bp;
};

#if defined(__TARGET_ARCH_x86)
/* A stack walk in progress, shared with the per-frame bpf_loop callback. */
struct walk {
	struct stack_trace *st;
	struct unwind_proc *proc;
	struct unwind_mapping *last;	/* the previous frame's: callers are often in it */
	/*
	 * What the walk reads and remembers is kept there: counts and flags
	 * kept here would make the verifier see a new state at every frame.
	 */
	struct walk_cache *wc;
	struct stack_memo *memo;
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u32 flags;
	__u32 tgid;
	bool done;	/* reached the outermost frame */
};

/*
 * The binary searches run as bpf_loop callbacks: the verifier checks one
 * step with unknown bounds instead of every path through a bounded loop.
 */
struct map_search {
	struct unwind_proc *proc;
	__u64 ip;
	__u32 lo;	/* the first mapping starting above ip, once lo == hi */
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
	struct map_search s = { .proc = proc, .ip = ip, .hi = proc->nr };
	struct unwind_mapping *m;

	if (s.hi > UNWIND_MAX_MAPPINGS)
		s.hi = UNWIND_MAX_MAPPINGS;
	bpf_loop(9, map_search_step, &s, 0);
	if (!s.lo)
		return NULL;
	m = &proc->maps[(s.lo - 1) & (UNWIND_MAX_MAPPINGS - 1)];
	return ip < m->end ? m : NULL;
}

struct row_search {
	__u64 off;
	__u32 lo;	/* the last row at or below off, once lo == hi */
	__u32 hi;
};

static long row_search_step(__u32 i, struct row_search *s)
{
	struct unwind_row *row;
	__u32 mid;

	if (s->lo >= s->hi)
		return 1;
	mid = (s->lo + s->hi + 1) / 2;
	row = bpf_map_lookup_elem(&unwind_rows, &mid);
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
	struct row_search s = { .off = pc - m->table_base };
	__u64 page = s.off >> UNWIND_PAGE_SHIFT;
	struct unwind_row *row;
	__u32 key, *bound;

	if (page >= m->nr_pages)
		return false;
	key = m->page_first + (__u32)page;
	bound = bpf_map_lookup_elem(&unwind_pages, &key);
	if (!bound)
		return false;
	s.lo = *bound;
	key++;
	bound = bpf_map_lookup_elem(&unwind_pages, &key);
	if (!bound)
		return false;
	s.hi = *bound;
	bpf_loop(9, row_search_step, &s, 0);
	row = bpf_map_lookup_elem(&unwind_rows, &s.lo);
	if (!row || row->pc > s.off)
		return false;
	*out = *row;
	return true;
}

#define PAGE_SIZE 4096

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
static __always_inline bool in_window(struct walk_cache *wc, struct stack_memo *memo,
				      __u64 addr, __u32 size)
{
	if (addr >= wc->win_lo && addr + size <= wc->win_hi)
		return true;
	/* A memo is checked against the first window only, which starts at sp. */
	memo->nr_words = MEMO_OFF;
	return window_fill(wc, addr) && addr + size <= wc->win_hi;
}

/* Note a word the walk read at @off in the window, for its memo. */
static __always_inline void remember(struct stack_memo *memo, __u64 off, __u64 value)
{
	__u32 n = memo->nr_words;

	if ((off & 7) || n >= MEMO_WORDS) {
		memo->nr_words = MEMO_OFF;
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
 * the window, and note them in the walk's memo. A global function: the
 * verifier checks its paths once, not again at every frame of every walk.
 */
__noinline int stack_read(struct walk_cache *wc, __u64 addr, __u32 size)
{
	struct stack_memo *memo;
	__u64 off;

	/* The verifier knows nothing of a global function's callers. */
	if (!wc || (size != 8 && size != 16))
		return -1;
	memo = &wc->memo[wc->slot & (MEMO_SLOTS - 1)];
	if (!in_window(wc, memo, addr, size)) {
		memo->nr_words = MEMO_OFF;
		if (size == 16)
			return bpf_probe_read_user(wc->got, 16, (void *)addr) ? -1 : 0;
		return bpf_probe_read_user(wc->got, 8, (void *)addr) ? -1 : 0;
	}
	off = (addr - wc->win_lo) & (STACK_WINDOW - 1);
	__builtin_memcpy(wc->got, &wc->window[off], 8);
	remember(memo, off, wc->got[0]);
	if (size == 16) {
		__builtin_memcpy(&wc->got[1], &wc->window[off + 8], 8);
		remember(memo, off + 8, wc->got[1]);
	}
	return 0;
}

/* The walk uses rbp (BP_USED) or replaces it (BP_DEAD): a memo must know if it was the registers'. */
static __always_inline void bp_read(struct walk *w, enum bp_state how)
{
	if (w->memo->bp_state == BP_LIVE)
		w->memo->bp_state = how;
}

/* Code without CFI: trust rbp to point at the saved rbp and return address. */
static __always_inline long frame_pointer_step(struct walk *w)
{
	bp_read(w, BP_USED);
	if (w->bp < w->sp || (w->bp & 7) || stack_read(w->wc, w->bp, 16)) {
		w->flags |= STACK_CUT;
		return 1;
	}
	w->flags |= STACK_FP;
	w->sp = w->bp + 16;
	w->bp = w->wc->got[0];
	w->ip = w->wc->got[1];
	w->done = !w->ip;
	return w->done;
}

/*
 * The return address at CFA - 8 and, where the row says it was saved, the
 * caller's rbp; most frames that save it keep it right below, at CFA - 16:
 * one read for both.
 */
static __always_inline long read_caller(struct walk *w, __u64 cfa, __s8 rbp_off)
{
	if (rbp_off == -2) {
		if (stack_read(w->wc, cfa - 16, 16))
			return -1;
		bp_read(w, BP_DEAD);
		w->bp = w->wc->got[0];
		w->ip = w->wc->got[1];
		return 0;
	}
	if (stack_read(w->wc, cfa - 8, 8))
		return -1;
	w->ip = w->wc->got[0];
	if (rbp_off) {
		if (stack_read(w->wc, cfa + rbp_off * 8, 8))
			return -1;
		bp_read(w, BP_DEAD);
		w->bp = w->wc->got[0];
	}
	return 0;
}

static long unwind_step(__u32 i, struct walk *w)
{
	struct unwind_row row = { .kind = UNWIND_NONE };
	struct unwind_mapping *m = NULL;
	__u32 n = w->st->nr;
	__u64 cfa, pc;

	if (n >= MAX_STACK_DEPTH)
		return 1;
	w->st->ips[n] = w->ip;
	w->st->nr = n + 1;
	/* A return address may be the first byte of the next function: look up the call. */
	pc = n ? w->ip - 1 : w->ip;
	if (w->last && pc >= w->last->start && pc < w->last->end)
		m = w->last;
	else if (w->proc)
		m = w->last = find_mapping(w->proc, pc);
	if (m && m->nr_pages)
		find_row(m, pc, &row);
	/* Past a frame-pointer step the address may be garbage: no reason to ask. */
	else if (!m && !(w->flags & STACK_FP)) {
		request_tables(w->tgid, w->proc, pc);
		/* Walked again, the next call asks again if it must. */
		w->memo->nr_words = MEMO_OFF;
	}
	switch (row.kind) {
	case UNWIND_END:
		w->done = true;
		return 1;
	case UNWIND_CFA_SP:
		cfa = w->sp + row.cfa_off * 8;
		break;
	case UNWIND_CFA_FP:
		bp_read(w, BP_USED);
		cfa = w->bp + row.cfa_off * 8;
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + 8 + ((w->ip & 15) >= (__u64)row.cfa_off ? 8 : 0);
		break;
	default:
		return frame_pointer_step(w);
	}
	if (read_caller(w, cfa, row.rbp_off)) {
		w->flags |= STACK_CUT;
		return 1;
	}
	w->sp = cfa;
	w->done = !w->ip;
	return w->done;
}

/* Walk with the unwind tables from the user registers @regs; false if it cannot start. */
/*
 * Walk with the unwind tables from the user registers @regs; false if it
 * cannot start. @wc: the thread's window and memos. @memo: the slot to
 * remember the walk in; the walk fills it but for its stack id, or leaves
 * it without words if it cannot be remembered.
 */
static __always_inline bool walk_cfi(const struct user_regs *regs, struct stack_trace *st,
				     struct walk_cache *wc, struct stack_memo *memo)
{
	struct walk w = {
		.st = st,
		.ip = regs->ip,
		.sp = regs->sp,
		.bp = regs->bp,
		.tgid = bpf_get_current_pid_tgid() >> 32,
		.wc = wc,
		.memo = memo,
	};

	*memo = (struct stack_memo){ .ip = regs->ip, .sp = regs->sp, .bp = regs->bp,
				     .sum = MEMO_SEED };
	w.proc = bpf_map_lookup_elem(&unwind_procs, &w.tgid);
	if (!window_fill(wc, regs->sp))
		memo->nr_words = MEMO_OFF;
	/* The frame count lives in the map: kept here it would be a new verifier state per frame. */
	st->nr = 0;
	bpf_loop(stack_depth, unwind_step, &w, 0);
	st->flags = w.flags;
	if (!w.done && !(w.flags & STACK_CUT) && st->nr >= stack_depth)
		st->flags |= STACK_TRUNCATED;
	memo->flags = st->flags;
	if (memo->nr_words > MEMO_WORDS)
		memo->nr_words = 0;
	return st->nr > 0;
}
#else
static __always_inline bool walk_cfi(const struct user_regs *regs, struct stack_trace *st,
				     struct walk_cache *wc, struct stack_memo *memo)
{
	return false;
}
#endif

/* The kernel's frame-pointer walk of the current task's user stack. */
static __always_inline bool walk_fp(void *ctx, struct stack_trace *st)
{
	__u32 size = stack_depth * sizeof(__u64);
	long len;

	if (size > sizeof(st->ips))
		size = sizeof(st->ips);
	len = bpf_get_stack(ctx, st->ips, size, BPF_F_USER_STACK);
	if (len <= 0)
		return false;
	st->nr = len / sizeof(__u64);
	st->flags = st->nr >= stack_depth ? STACK_TRUNCATED : 0;
	return true;
}

/* The memo slot of a walk from @regs, made the one a walk writes. */
static __always_inline struct stack_memo *memo_slot(struct walk_cache *wc,
						    const struct user_regs *regs)
{
	__u64 h = (regs->ip ^ (regs->sp << 16)) * 0x9e3779b97f4a7c15ULL;
	__u32 slot = (h >> 32) & (MEMO_SLOTS - 1);

	wc->slot = slot;
	return &wc->memo[slot];
}

/*
 * The hash of the words memo @slot of @wc names, as the window holds them
 * now. A global function: its loop is checked once, and runs without a
 * callback per word.
 */
__noinline __u64 memo_sum(struct walk_cache *wc, __u32 slot)
{
	struct stack_memo *memo;
	__u64 sum = MEMO_SEED;
	__u32 word;

	if (!wc)
		return 0;
	memo = &wc->memo[slot & (MEMO_SLOTS - 1)];
	for (__u32 i = 0; i < MEMO_WORDS; i++) {
		if (i >= memo->nr_words)
			break;
		word = memo->words[i] & (STACK_WINDOW / 8 - 1);
		sum = memo_mix(sum, word, *(__u64 *)&wc->window[word * 8]);
	}
	return sum;
}

/* Does the stack still hold what the walk @memo remembers read from @regs on? */
static __always_inline bool recall(struct walk_cache *wc, struct stack_memo *memo,
				   const struct user_regs *regs, __u64 gen)
{
	__u32 span = memo->span;

	if (memo->gen != gen + 1 || memo->ip != regs->ip || memo->sp != regs->sp ||
	    (memo->bp_state == BP_USED && memo->bp != regs->bp) || span > STACK_WINDOW)
		return false;
	if (span && bpf_probe_read_user(wc->window, span, (void *)regs->sp))
		return false;
	return memo_sum(wc, wc->slot) == memo->sum;
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
 * Walk the user stack into @st and return its id in the stack map. @regs
 * are the user registers where the walk starts. Unless @need_frames, a
 * remembered walk that still holds answers with its id and leaves @st alone.
 */
static __always_inline __u64 capture_stack(void *ctx, const struct user_regs *regs,
					   struct stack_trace *st, bool need_frames)
{
	struct stack_memo *memo = NULL;
	struct walk_cache *wc = NULL;
	__u64 gen = walk_gen, id;
	bool ok;

	if (unwind_cfi) {
		wc = bpf_task_storage_get(&walk_caches, bpf_get_current_task_btf(), 0,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		memo = wc ? memo_slot(wc, regs) : NULL;
		if (memo && !need_frames && recall(wc, memo, regs, gen)) {
			count(CNT_STACKS_RECALLED);
			count_stack(memo->flags);
			return memo->stack_id;
		}
	}
	/* Without its cache (no memory for it) a thread's stacks come from frame pointers. */
	ok = wc ? walk_cfi(regs, st, wc, memo) : walk_fp(ctx, st);
	if (!ok) {
		st->nr = 0;
		count(CNT_STACK_ERRORS);
		return STACK_ID_NONE;
	}
	count_stack(st->flags);
	id = stack_id_of(st);
	/* Remembered once its stack is in the map, under the tables it was walked with. */
	if (wc && memo->nr_words && id != STACK_ID_NONE) {
		memo->stack_id = id;
		memo->gen = gen + 1;
	}
	return id;
}

static __always_inline void stats_add(const struct owner *o, __u64 stack_id, __u64 size)
{
	struct stack_key key = { .stack_id = stack_id, .tgid = o->tgid, .gen = o->gen };
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
	struct stack_key key = { .stack_id = info->stack_id, .tgid = o->tgid, .gen = o->gen };
	struct stack_counts *st = bpf_map_lookup_elem(&stack_stats, &key);

	count_in(o->ps, CNT_FREES);
	if (o->ps)
		__sync_fetch_and_sub(&o->ps->live, 1);
	if (!st)
		return;
	__sync_fetch_and_add(&st->frees, 1);
	__sync_fetch_and_add(&st->freed_bytes, info->size);
}

/* The first slot a block may take: blocks of one process are 16-byte aligned, mostly. */
static __always_inline __u32 live_home(const struct alloc_key *key)
{
	__u64 h = (key->addr >> 4) * 0x9e3779b97f4a7c15ULL;

	h ^= ((__u64)key->tgid << 32 | key->gen) * 0xc2b2ae3d27d4eb4fULL;
	return h >> 32;
}

static __always_inline bool live_match(const struct live_block *b, const struct alloc_key *key)
{
	return b->key.addr == key->addr && b->key.tgid == key->tgid && b->key.gen == key->gen;
}

/*
 * The slot of @key's block on its path, or -1. A search ends at a
 * never-used slot: no block was placed past one. With @claim, the slot to
 * record the block in: its own if it is there already (its free went
 * unseen), else the first free one; marked LIVE_BUSY, which no search
 * matches and no other claim takes. A global function: the verifier
 * checks its loop once, not at every caller.
 */
__noinline int live_slot(const struct alloc_key *key, int claim)
{
	struct live_block *b;
	__u32 home, idx;
	__u64 addr;

	if (!key)
		return -1;
	home = live_home(key);
	for (__u32 i = 0; i < LIVE_PROBES; i++) {
		idx = (home + i) & live_mask;
		b = bpf_map_lookup_elem(&allocs, &idx);
		if (!b)
			return -1;
		addr = b->key.addr;
		if (!claim) {
			if (addr == LIVE_EMPTY)
				return -1;
			if (live_match(b, key))
				return idx;
			continue;
		}
		if (addr > LIVE_GONE && !live_match(b, key))
			continue;
		if (__sync_val_compare_and_swap(&b->key.addr, addr, LIVE_BUSY) == addr)
			return idx;
	}
	return -1;
}

/* live_slot() as a pointer into the table, or NULL. */
static __always_inline struct live_block *live_block_of(const struct alloc_key *key, bool claim)
{
	int slot = live_slot(key, claim);
	__u32 idx = slot;

	return slot < 0 ? NULL : bpf_map_lookup_elem(&allocs, &idx);
}

/* Record a block; false when its path in the table is full. */
static __always_inline bool live_insert(const struct alloc_key *key, const struct alloc_info *info)
{
	struct live_block *b = live_block_of(key, true);

	if (!b)
		return false;
	b->key.tgid = key->tgid;
	b->key.gen = key->gen;
	b->info = *info;
	/* Published last, with a full barrier: who sees the address sees the block. */
	__sync_lock_test_and_set(&b->key.addr, key->addr);
	return true;
}

/*
 * Take @key's block out of the table into @info; false if it is not
 * there. Whoever turns its address into LIVE_GONE owns the release: the
 * loader may be dropping the same block.
 */
static __always_inline bool live_take(const struct alloc_key *key, struct alloc_info *info)
{
	struct live_block *b = live_block_of(key, false);

	if (!b)
		return false;
	*info = b->info;
	return __sync_val_compare_and_swap(&b->key.addr, key->addr, LIVE_GONE) == key->addr;
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
	if (bpf_ringbuf_output(&events, ev, sizeof(*ev), 0))
		count_in(o->ps, CNT_LOST_EVENTS);
}

/* Room for one more block of the process under --max-per-process? */
static __always_inline bool under_cap(const struct owner *o)
{
	if (!o->ps || !max_per_proc || o->ps->live < max_per_proc)
		return true;
	count_in(o->ps, CNT_LOST_CAP);
	return false;
}

/* @keep: record the block (not when sampling passed it by); alerts come regardless. */
static __always_inline void record_alloc(void *ctx, const struct user_regs *regs,
					 const struct owner *o, __u64 pid_tgid, __u64 addr,
					 __u64 size, __u32 func, bool keep)
{
	bool big = big_threshold && size >= big_threshold;
	struct alloc_key key = { .addr = addr, .tgid = o->tgid, .gen = o->gen };
	struct alloc_info info = { .size = size, .tid = (__u32)pid_tgid, .func = func };
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
	if (block_ages)
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
	struct alloc_key key = { .addr = rec->ptr, .tgid = o->tgid, .gen = o->gen };

	rec->has_old = live_take(&key, &rec->old);
}

static __always_inline void settle_old_block(const struct inflight *rec, const struct owner *o,
					     bool released)
{
	struct alloc_key key = { .addr = rec->ptr, .tgid = o->tgid, .gen = o->gen };

	if (!rec->ptr)
		return;
	if (!released) {
		if (rec->has_old && !live_insert(&key, &rec->old))
			count_in(o->ps, CNT_LOST_ALLOCS);
		return;
	}
	if (rec->has_old)
		stats_release(o, &rec->old);
	else if (rec->func != FUNC_MREMAP)	/* most mappings are not ours */
		count_untracked(o->ps);
}

#if defined(__TARGET_ARCH_x86)
/*
 * A general register by its x86 encoding, as COOKIE_ARG_SHIFT numbers them.
 * The barrier keeps each case's load apart: merged into one load at a
 * computed offset, it is a context access the verifier refuses.
 */
#define REG_CASE(n, field)               \
	case n:                          \
		val = ctx->field;        \
		barrier_var(val);        \
		return val
static __always_inline __u64 x86_reg(const struct pt_regs *ctx, __u32 reg)
{
	__u64 val;

	switch (reg) {
	REG_CASE(0, ax);
	REG_CASE(1, cx);
	REG_CASE(2, dx);
	REG_CASE(3, bx);
	REG_CASE(4, sp);
	REG_CASE(5, bp);
	REG_CASE(6, si);
	REG_CASE(7, di);
	REG_CASE(8, r8);
	REG_CASE(9, r9);
	REG_CASE(10, r10);
	REG_CASE(11, r11);
	REG_CASE(12, r12);
	REG_CASE(13, r13);
	REG_CASE(14, r14);
	REG_CASE(15, r15);
	}
	return 0;
}

/* Argument @i (from 0) where the probe's placement found it (see COOKIE_ARG_SHIFT). */
#define ARG(i)                                                                        \
	x86_reg(ctx, ((bpf_get_attach_cookie(ctx) >> COOKIE_ARG_SHIFT(i)) & 15) ^ \
			     ABI_ARG_REG(i))
#else
/* Placement moves probes only on x86: elsewhere the arguments are where the call put them. */
#define ARG(i)                       \
	((i) == 0   ? PT_REGS_PARM1(ctx) \
	 : (i) == 1 ? PT_REGS_PARM2(ctx) \
	 : (i) == 2 ? PT_REGS_PARM3(ctx) \
		    : PT_REGS_PARM4(ctx))
#endif

static __always_inline int enter(struct pt_regs *ctx, __u64 size, __u64 ptr)
{
	__u64 sp = PT_REGS_SP(ctx);
	struct inflight *rec;
	struct owner o;

	if (!owner_of(bpf_get_current_pid_tgid(), &o))
		return 0;
	rec = thread_state(true);
	if (!rec) {
		count_in(o.ps, CNT_LOST_INFLIGHT);
		return 0;
	}
	if (call_open(rec) && nested(rec, sp))
		return 0;
	rec->active = probe_epoch + 1;
	rec->sp = sp;
	rec->size = size;
	rec->ptr = ptr;
	rec->func = (__u32)bpf_get_attach_cookie(ctx);
	rec->has_old = 0;
	rec->gen = o.gen;
	if (func_reallocs(rec->func) && ptr)
		take_old_block(rec, &o);
	return 0;
}

SEC("uprobe")
int size_enter(struct pt_regs *ctx)
{
	return enter(ctx, ARG(0), 0);
}

SEC("uprobe")
int calloc_enter(struct pt_regs *ctx)
{
	__u64 total;

	/* On overflow calloc fails: nothing will be allocated. */
	if (!mul_size(ARG(0), ARG(1), &total))
		return 0;
	return enter(ctx, total, 0);
}

SEC("uprobe")
int realloc_enter(struct pt_regs *ctx)
{
	return enter(ctx, ARG(1), ARG(0));
}

SEC("uprobe")
int reallocarray_enter(struct pt_regs *ctx)
{
	__u64 total;

	/* On overflow reallocarray fails and leaves ptr alone. */
	if (!mul_size(ARG(1), ARG(2), &total))
		return 0;
	return enter(ctx, total, ARG(0));
}

SEC("uprobe")
int memalign_enter(struct pt_regs *ctx)
{
	return enter(ctx, ARG(1), 0);
}

SEC("uprobe")
int mmap_enter(struct pt_regs *ctx)
{
	/* File mappings are not allocations. */
	if (!(ARG(3) & MAP_ANONYMOUS))
		return 0;
	return enter(ctx, ARG(1), 0);
}

SEC("uprobe")
int mremap_enter(struct pt_regs *ctx)
{
	return enter(ctx, ARG(2), ARG(0));
}

SEC("uprobe")
int posix_memalign_enter(struct pt_regs *ctx)
{
	return enter(ctx, ARG(2), ARG(0));
}

SEC("uretprobe")
int BPF_KRETPROBE(alloc_return, __u64 ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 func = bpf_get_attach_cookie(ctx);
	struct inflight *found, rec;
	struct owner o;
	__u64 addr = ret;

	found = in_flight();
	/* A nested call's return, or a tail call's: the outer one decides. */
	if (!found || found->func != func || found->sp + RET_SP_DELTA != PT_REGS_SP(ctx))
		return 0;
	rec = *found;
	found->active = 0;
	if (func_holds_release(func))
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
	}
	if (func_reallocs(func))
		/* realloc(p, 0) may free p and return NULL: a success. */
		settle_old_block(&rec, &o, addr || (!rec.size && !func_maps(func)));
	if (addr) {
		struct user_regs regs = {
			.ip = PT_REGS_IP(ctx), .sp = PT_REGS_SP(ctx), .bp = PT_REGS_FP(ctx)
		};

		record_alloc(ctx, &regs, &o, pid_tgid, addr, rec.size, func,
			     sampled(found, rec.size));
	}
	return 0;
}

/* Take a block out of the live map; 0 if it was not there. */
static __always_inline int release_block(const struct owner *o, __u64 ptr)
{
	struct alloc_key key = { .addr = ptr, .tgid = o->tgid, .gen = o->gen };
	struct alloc_info info;

	if (!live_take(&key, &info))
		return 0;
	stats_release(o, &info);
	return 1;
}

SEC("uprobe")
int free_enter(struct pt_regs *ctx)
{
	__u64 ptr = ARG(0);
	struct inflight *outer;
	struct owner o;

	if (!ptr || !owner_of(bpf_get_current_pid_tgid(), &o) || release_block(&o, ptr))
		return 0;
	/* realloc(p, 0) or operator delete freeing p: the outer call accounts for it. */
	outer = in_flight();
	if (!outer || !nested(outer, PT_REGS_SP(ctx)))
		count_untracked(o.ps);
	return 0;
}

/* Releases other than free: operator delete, dallocx, sdallocx, free_sized, munmap. */
SEC("uprobe")
int release_enter(struct pt_regs *ctx)
{
	__u64 sp = PT_REGS_SP(ctx), ptr = ARG(0);
	__u32 func = bpf_get_attach_cookie(ctx);
	struct inflight *outer, *rec;
	struct owner o;

	if (!owner_of(bpf_get_current_pid_tgid(), &o))
		return 0;
	outer = in_flight();
	if (outer && nested(outer, sp))
		return 0;
	/* Most unmapped memory was never ours: only known blocks count. */
	if (ptr && !release_block(&o, ptr) && func != FUNC_MUNMAP)
		count_untracked(o.ps);
	if (!func_holds_release(func))
		return 0;
	rec = thread_state(true);
	if (!rec) {
		count_in(o.ps, CNT_LOST_INFLIGHT);
		return 0;
	}
	rec->active = probe_epoch + 1;
	rec->sp = sp;
	rec->func = func;
	rec->has_old = 0;
	rec->ptr = 0;
	return 0;
}

/*
 * --big-only: no uprobes at all. Big blocks reach the kernel as anonymous
 * mmap (glibc serves requests above its mmap threshold so), mremap or brk;
 * raw syscall tracepoints see those, at a cost only to syscalls.
 */
#if defined(__TARGET_ARCH_x86)
#define NR_MMAP 9
#define NR_MUNMAP 11
#define NR_BRK 12
#define NR_MREMAP 25
#else
#define NR_MMAP 222
#define NR_MUNMAP 215
#define NR_BRK 214
#define NR_MREMAP 216
#endif
#define PROT_NONE 0
#define MAP_STACK 0x20000
#define MAX_ERRNO 4095

/* Thread stacks and PROT_NONE reservations (glibc's arenas) are not allocations. */
static __always_inline bool big_mapping(__u64 len, __u64 prot, __u64 flags)
{
	return len >= big_threshold && (flags & MAP_ANONYMOUS) && !(flags & MAP_STACK) &&
	       prot != PROT_NONE;
}

/* Note a syscall's arguments for its exit; the in-flight record is free in this mode. */
static __always_inline void note_syscall(__u32 func, __u64 size, __u64 ptr)
{
	struct inflight *rec = thread_state(true);

	if (!rec) {
		count(CNT_LOST_INFLIGHT);
		return;
	}
	rec->active = probe_epoch + 1;
	rec->func = func;
	rec->size = size;
	rec->ptr = ptr;
	rec->has_old = 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(big_sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task;
	struct owner o;

	if (id != NR_MMAP && id != NR_MUNMAP && id != NR_MREMAP && id != NR_BRK)
		return 0;
	if (!owner_of(bpf_get_current_pid_tgid(), &o))
		return 0;
	switch (id) {
	case NR_MMAP:
		if (big_mapping(PT_REGS_PARM2_CORE_SYSCALL(regs), PT_REGS_PARM3_CORE_SYSCALL(regs),
				PT_REGS_PARM4_CORE_SYSCALL(regs)))
			note_syscall(FUNC_MMAP, PT_REGS_PARM2_CORE_SYSCALL(regs), 0);
		return 0;
	case NR_MUNMAP:
		release_block(&o, PT_REGS_PARM1_CORE_SYSCALL(regs));
		return 0;
	case NR_MREMAP:
		note_syscall(FUNC_MREMAP, PT_REGS_PARM3_CORE_SYSCALL(regs),
			     PT_REGS_PARM1_CORE_SYSCALL(regs));
		return 0;
	}
	/* brk: the heap's end before the call, to measure its growth by. */
	task = bpf_get_current_task_btf();
	note_syscall(FUNC_BRK, 0, BPF_CORE_READ(task, mm, brk));
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

	rec = in_flight();
	if (!rec)
		return 0;
	rec->active = 0;
	if (!owner_of(pid_tgid, &o))
		return 0;
	if (ret < 0 && ret >= -MAX_ERRNO)
		return 0;
	size = rec->size;
	if (rec->func == FUNC_MREMAP) {
		release_block(&o, rec->ptr);
		if (size < big_threshold)
			return 0;
	} else if (rec->func == FUNC_BRK) {
		/* Heap growth is reported, not tracked: glibc gives it back piecemeal. */
		if (addr <= rec->ptr || addr - rec->ptr < big_threshold)
			return 0;
		size = addr - rec->ptr;
		addr = rec->ptr;
	}
	user.ip = PT_REGS_IP_CORE(regs);
	user.sp = PT_REGS_SP_CORE(regs);
	user.bp = PT_REGS_FP_CORE(regs);
	record_alloc(ctx, &user, &o, pid_tgid, addr, size, rec->func, rec->func != FUNC_BRK);
	return 0;
}

/*
 * The OOM killer marks its victim here, before the kill: the loader learns
 * why the target is about to die while its numbers are still in the maps.
 */
/* Is @task's process traced? *@ps: its entry, with several processes. */
static __always_inline bool traced_task(struct task_struct *task, struct proc_state **ps)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	*ps = NULL;
	if (!multi_proc)
		return targ_tgid && tgid == targ_tgid;
	*ps = bpf_map_lookup_elem(&procs, &tgid);
	return *ps && !((*ps)->flags & PROC_EXITED);
}

static __always_inline void send_task_event(__u32 type, __u32 tgid, struct proc_state *ps)
{
	struct task_event ev = { .type = type, .tgid = tgid, .time_ns = bpf_ktime_get_ns() };

	if (bpf_ringbuf_output(&events, &ev, sizeof(ev), 0))
		count_in(ps, CNT_LOST_EVENTS);
}

SEC("raw_tp/mark_victim")
int BPF_PROG(oom_victim, struct task_struct *task)
{
	struct proc_state *ps;

	if (traced_task(task, &ps))
		send_task_event(EVENT_OOM_VICTIM, BPF_CORE_READ(task, tgid), ps);
	return 0;
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

/* --follow-forks: a traced process's child is traced from its first instruction. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct proc_state *pps, *old, st = {};

	/* Not a new thread, and a parent with an entry (follow_forks is multi_proc). */
	if (!follow_forks || ptgid == ctgid || !traced_task(parent, &pps) || !pps)
		return 0;
	/* A recycled tgid whose last report is pending: keep its keys apart. */
	old = bpf_map_lookup_elem(&procs, &ctgid);
	st.gen = old ? old->gen + 1 : 0;
	st.parent = ptgid;
	__builtin_memcpy(st.comm, pps->comm, sizeof(st.comm));
	if (bpf_map_update_elem(&procs, &ctgid, &st, BPF_ANY))
		count_in(NULL, CNT_LOST_PROCS);
	inherit_unwind_table(ptgid, ctgid);
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
	struct proc_state *ps, st = {};

	if (!traced_task(task, &ps))
		return 0;
	/* The old program's table: its first frame outside it asks for the new one. */
	bpf_map_delete_elem(&unwind_procs, &tgid);
	__sync_fetch_and_add(&walk_gen, 1);
	if (ps) {
		st.gen = ps->gen + 1;
		st.parent = ps->parent;
		st.flags = PROC_EXECED;
		BPF_CORE_READ_STR_INTO(&st.comm, task, comm);
		if (bpf_map_update_elem(&procs, &tgid, &st, BPF_EXIST))
			return 0;
	}
	/* --all probes one allocator for every process: nothing to look up. */
	if (!trace_all)
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
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
