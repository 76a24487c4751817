// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include "arch/arch.h"
#include "leakcheck/classify.h"
#include "leakcheck/exitframe.h"
#include "leakcheck/heapwalk.h"
#include "leakcheck/heuristics.h"
#include "leakcheck/leakcheck.h"
#include "leakcheck/roots.h"
#include "leakcheck/snapshot.h"
#include "lib/log.h"
#include "lib/util.h"

const char *leak_class__name(enum leak_class cls)
{
	static const char *const names[] = {
	    [LEAK_REACHABLE] = "reachable",
	    [LEAK_POSSIBLE] = "possibly lost",
	    [LEAK_INDIRECT] = "indirectly lost",
	    [LEAK_DEFINITE] = "definitely lost",
	};

	return cls < LEAK_CLASSES ? names[cls] : "?";
}

static const struct {
	enum leak_assumption bit;
	const char *name, *text;
} assumptions[] = {
    {LEAK_ASSUME_UNTRACKED_ROOTS, "untracked_blocks_as_roots",
     "glibc heap walk: in-use chunks not tracked (allocated before attach) treated as roots"},
    {LEAK_ASSUME_UNKNOWN_HEAP, "unknown_heap_as_roots",
     "no glibc heap found: the allocator's memory treated as roots, leaks may be hidden"},
    {LEAK_ASSUME_HEAP_PARTIAL, "heap_partly_walked",
     "a heap header could not be read: the rest of that heap treated as roots"},
    {LEAK_ASSUME_ROOTS_UNREADABLE, "unreadable_roots_held_no_pointer",
     "some root memory could not be read: assumed to hold no pointer"},
    {LEAK_ASSUME_STOPPED, "target_stopped_for_scan",
     "no snapshot child: the target stayed stopped for the whole scan"},
    {LEAK_ASSUME_RED_ZONE, "red_zone_as_roots",
     "a thread stopped in user code: the 128 bytes below its stack pointer (the red zone) "
     "were roots"},
    {LEAK_ASSUME_WRAPPER, "wrapper_offset_as_start",
     "blocks of a wrapper given by --leak-check-wrapper: a pointer at its offset was a start "
     "pointer"},
    {LEAK_ASSUME_WRAPPER_LEARNED, "learned_wrapper_offset_as_start",
     "blocks of a function whose possibly lost blocks were held at one offset (a wrapper's "
     "header, learned): a pointer at that offset was a start pointer"},
    {LEAK_ASSUME_EXIT_REGISTERS, "registers_at_each_thread_exit",
     "the registers of every thread, read at each one's exit (exit_group ended the others), "
     "were roots"},
};

static const char *assumption_text(enum leak_assumption a, bool name)
{
	for (size_t i = 0; i < sizeof(assumptions) / sizeof(*assumptions); i++)
		if (assumptions[i].bit == a)
			return name ? assumptions[i].name : assumptions[i].text;
	return "?";
}

const char *leak_assumption__name(enum leak_assumption a)
{
	return assumption_text(a, true);
}

const char *leak_assumption__describe(enum leak_assumption a)
{
	return assumption_text(a, false);
}

struct leakcheck {
	pid_t pid;
	struct leakcheck_opts opts;
	struct leak_block *before, *blocks; /* the first collection; both */
	size_t nr_before, nr, cap;
	uint8_t *cls, *heur; /* each block's class, and its heuristic */
	/* at a launched command's exit: each thread's exit() entry, sp 0 where it has none */
	struct exit_entry *entries;
	struct leakcheck_stats stats;
};

struct leakcheck *leakcheck__new(pid_t pid, const struct leakcheck_opts *opts)
{
	struct leakcheck *lc;

	if (pid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	lc = calloc(1, sizeof(*lc));
	if (!lc)
		return NULL;
	lc->pid = pid;
	if (opts)
		lc->opts = *opts;
	return lc;
}

void leakcheck__free(struct leakcheck *lc)
{
	if (!lc)
		return;
	free(lc->before);
	free(lc->blocks);
	free(lc->cls);
	free(lc->heur);
	free(lc->entries);
	free(lc);
}

static int cmp_block(const void *a, const void *b)
{
	const struct leak_block *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int leakcheck__add_block(struct leakcheck *lc, const struct leak_block *b)
{
	struct leak_block *blocks = array__grow(lc->blocks, &lc->cap, lc->nr, sizeof(*blocks));

	if (!blocks)
		return -ENOMEM;
	lc->blocks = blocks;
	lc->blocks[lc->nr++] = *b;
	return 0;
}

/* Keep the blocks of the second collection that the first one had too. */
static void intersect(struct leakcheck *lc)
{
	size_t i, j = 0, out = 0;

	qsort(lc->blocks, lc->nr, sizeof(*lc->blocks), cmp_block);
	for (i = 0; i < lc->nr; i++) {
		while (j < lc->nr_before && cmp_block(&lc->before[j], &lc->blocks[i]) < 0)
			j++;
		if (j < lc->nr_before && !cmp_block(&lc->before[j], &lc->blocks[i]) &&
		    lc->before[j].size == lc->blocks[i].size)
			lc->blocks[out++] = lc->blocks[i];
	}
	lc->nr = out;
}

/* The first collection, set aside until the second. */
static int collect_before(struct leakcheck *lc, leakcheck_collect_fn collect, void *ctx)
{
	int err = collect(ctx, lc);

	if (err)
		return err;
	qsort(lc->blocks, lc->nr, sizeof(*lc->blocks), cmp_block);
	lc->before = lc->blocks;
	lc->nr_before = lc->nr;
	lc->blocks = NULL;
	lc->nr = lc->cap = 0;
	return 0;
}

static int record(struct leakcheck *lc, const struct classifier *c)
{
	enum leak_heuristic h;
	enum leak_class cls;
	size_t i;

	lc->cls = malloc(lc->nr ? lc->nr : 1);
	lc->heur = malloc(lc->nr ? lc->nr : 1);
	if (!lc->cls || !lc->heur)
		return -ENOMEM;
	for (i = 0; i < lc->nr; i++) {
		cls = classifier__class(c, i);
		h = classifier__heuristic(c, i);
		lc->cls[i] = cls;
		lc->heur[i] = h;
		lc->stats.heur_bytes[h] += lc->blocks[i].size;
		lc->stats.heur_blocks[h]++;
		lc->stats.bytes[cls] += lc->blocks[i].size;
		lc->stats.blocks[cls]++;
		lc->stats.block_bytes += lc->blocks[i].size;
		if (lc->blocks[i].offset)
			lc->stats.assumptions |= lc->blocks[i].learned ? LEAK_ASSUME_WRAPPER_LEARNED
								       : LEAK_ASSUME_WRAPPER;
	}
	if (classifier__unreadable(c))
		lc->stats.assumptions |= LEAK_ASSUME_ROOTS_UNREADABLE;
	return 0;
}

/*
 * Where each thread's live stack starts. A thread that called exit(),
 * at a launched command's exit: where it entered it (exitframe.h).
 * Another, at its stack pointer, less the bytes a function can be using
 * below it: the ABI's red zone (x86-64's 128 bytes of a leaf function's
 * data; arm64 has none) of a thread stopped in user code. A thread in a
 * system call has none: its red zone holds what returned functions left
 * there, which would hide a leak.
 */
static uint64_t *live_stacks(struct leakcheck *lc, const struct snapshot *s, const uint64_t *sps,
			     size_t n)
{
	uint64_t *live = calloc(n + 1, sizeof(*live));

	for (size_t i = 0; live && i < n; i++) {
		live[i] = lc->entries && lc->entries[i].sp ? lc->entries[i].sp : sps[i];
		if (live[i] != sps[i] || !arch_red_zone || snapshot__in_syscall(s, i))
			continue;
		live[i] -= arch_red_zone;
		lc->stats.assumptions |= LEAK_ASSUME_RED_ZONE;
	}
	return live;
}

/* The registers of exit()'s callers as they called it: roots. */
static int scan_entries(const struct leakcheck *lc, struct classifier *c, size_t n)
{
	int err = 0;

	for (size_t i = 0; lc->entries && i < n && !err; i++)
		err = classifier__scan_words(c, lc->entries[i].regs, lc->entries[i].nr);
	return err;
}

/* The roots: registers, then root memory, in address order. */
static int scan_roots(struct leakcheck *lc, struct snapshot *s, struct classifier *c,
		      const struct range_set *arenas, const struct range_set *inuse)
{
	struct root_sources src = {
	    .maps = snapshot__maps(s),
	    .heap = arenas,
	    .inuse = inuse,
	    .blocks = lc->blocks,
	    .nr_blocks = lc->nr,
	};
	struct range_set roots = {};
	const uint64_t *regs;
	uint64_t *live;
	size_t i, nr;
	int err;

	src.sps = snapshot__stack_pointers(s, &src.nr_sps);
	live = live_stacks(lc, s, src.sps, src.nr_sps);
	if (!live)
		return -ENOMEM;
	src.live = live;
	regs = snapshot__registers(s, &nr);
	err = roots__build(&src, &roots) ?: classifier__scan_words(c, regs, nr) ?:
					    scan_entries(lc, c, src.nr_sps);
	free(live);
	for (i = 0; i < roots.n && !err; i++)
		err = classifier__scan_range(c, roots.r[i].start, roots.r[i].end);
	lc->stats.root_bytes = range_set__bytes(&roots);
	range_set__release(&roots);
	return err;
}

/* One classification of the blocks from snapshot @s into *@out. */
static int classify(struct leakcheck *lc, struct snapshot *s, struct classifier **out)
{
	struct leak_memory mem = {snapshot__read, s};
	struct heuristics heur = {lc->opts.heuristics, mem, snapshot__maps(s)};
	struct range_set arenas = {}, inuse = {};
	struct classifier *c;
	int err;

	c = classifier__new(lc->blocks, lc->nr, &mem, heur.set ? &heur : NULL, lc->opts.stop);
	if (!c)
		return -errno;
	err = glibc_heap__walk(&mem, snapshot__maps(s), c, &arenas, &inuse,
			       &lc->stats.assumptions) ?:
	      scan_roots(lc, s, c, &arenas, &inuse) ?:
	      classifier__finish(c);
	range_set__release(&arenas);
	range_set__release(&inuse);
	if (err)
		classifier__free(c);
	else
		*out = c;
	return err;
}

/*
 * Block @b is held at @at past a wrapper's header, so it seems: @at a
 * header's size, and a word of that header the size of the rest, as a
 * wrapper that keeps the size it was asked for has it (its low 3 bits
 * may be flags). A pointer into a structure of another shape seldom has one.
 */
static bool header_holds_size(struct snapshot *s, const struct leak_block *b, uint32_t at)
{
	uint64_t words[LEAK_LEARN_MAX_HEADER / 8];
	uint64_t rest = (b->size - at) & ~7ULL;

	if (at < LEAK_LEARN_MIN_HEADER || at > LEAK_LEARN_MAX_HEADER || at % 8 || !rest ||
	    snapshot__read(s, b->addr, words, at))
		return false;
	for (uint32_t i = 0; i < at / 8; i++)
		if ((words[i] & ~7ULL) == rest)
			return true;
	return false;
}

/* The caller's learning: true when it gave blocks a wrapper's offset. */
static bool learned(struct leakcheck *lc, struct snapshot *s, const struct classifier *c)
{
	struct leak_block *b;

	if (!lc->opts.learn)
		return false;
	for (size_t i = 0; i < lc->nr; i++) {
		b = &lc->blocks[i];
		b->held_at = classifier__held_at(c, i);
		if (b->held_at && !header_holds_size(s, b, b->held_at))
			b->held_at = 0;
	}
	return lc->opts.learn(lc->opts.learn_ctx, lc->blocks, lc->nr) > 0;
}

/*
 * Classify; when the caller learned a wrapper's offset from the verdicts,
 * again with it, from the same snapshot: a block its pointer reaches may
 * reach others.
 */
static int scan(struct leakcheck *lc, struct snapshot *s)
{
	struct classifier *c = NULL;
	uint64_t t0 = snapshot_clock_ns();
	int err;

	err = classify(lc, s, &c);
	if (!err && learned(lc, s, c)) {
		classifier__free(c);
		c = NULL;
		err = classify(lc, s, &c);
	}
	if (!err)
		err = record(lc, c);
	lc->stats.scan_ns = snapshot_clock_ns() - t0;
	classifier__free(c);
	return err;
}

/*
 * Thread @i's exit() entry, if it called exit_group (no other thread
 * can be in exit()) and it entered exit() higher up the same stack.
 */
static void find_entry(const struct leakcheck *lc, struct exit_walk *w, const struct snapshot *s,
		       size_t i, struct exit_entry *e)
{
	const struct arch_regs *r = snapshot__thread_registers(s, i);
	const struct proc_maps *maps = snapshot__maps(s);
	uint64_t sp = arch_regs_sp(r);

	if (r->syscall != SYS_exit_group || exit_walk__find(w, r, e) || e->sp <= sp ||
	    proc_maps__find(maps, e->sp) != proc_maps__find(maps, sp)) {
		memset(e, 0, sizeof(*e));
		return;
	}
	pr_debug("leak check of process %d: thread %zu entered exit() %#" PRIx64
		 " bytes above its stack pointer: exit()'s frames there are no roots, its caller's "
		 "%u registers are",
		 lc->pid, i, e->sp - sp, e->nr);
}

/* At a launched command's exit stop: where its threads entered exit(). */
static int find_entries(struct leakcheck *lc, struct snapshot *s)
{
	struct leak_memory mem = {snapshot__read, s};
	size_t n = snapshot__threads(s);
	struct exit_walk *w;

	lc->entries = calloc(n + 1, sizeof(*lc->entries));
	w = lc->entries ? exit_walk__new(lc->pid, snapshot__maps(s), &mem) : NULL;
	if (!w)
		return lc->entries ? -errno : -ENOMEM;
	for (size_t i = 0; i < n; i++)
		find_entry(lc, w, s, i, &lc->entries[i]);
	exit_walk__free(w);
	return 0;
}

int leakcheck__run(struct leakcheck *lc, leakcheck_collect_fn collect, void *ctx)
{
	struct snapshot *s;
	int err;

	if (lc->cls || lc->before)
		return -EALREADY;
	err = collect_before(lc, collect, ctx);
	if (err)
		return err;
	s = snapshot__take(lc->pid, lc->opts.no_fork, lc->opts.ours, lc->opts.threads,
			   lc->opts.nr_threads);
	if (!s)
		return -errno;
	if (lc->opts.ours && lc->opts.at_exit && lc->opts.nr_threads)
		lc->stats.assumptions |= LEAK_ASSUME_EXIT_REGISTERS;
	lc->stats.pause_ns = snapshot__pause_ns(s);
	lc->stats.clone_ns = snapshot__clone_ns(s);
	lc->stats.threads = snapshot__threads(s);
	if (snapshot__stopped(s))
		lc->stats.assumptions |= LEAK_ASSUME_STOPPED;
	err = (lc->opts.ours && lc->opts.at_exit ? find_entries(lc, s) : 0) ?: collect(ctx, lc);
	if (!err) {
		intersect(lc);
		err = scan(lc, s);
	}
	/* Its blocks may have left the caller's table before the second collection. */
	if (!err && snapshot__gone(s))
		err = -ESRCH;
	snapshot__release(s);
	if (snapshot__stopped(s))
		lc->stats.pause_ns += lc->stats.scan_ns;
	lc->stats.reap_pause_ns = snapshot__reap_ns(s);
	snapshot__free(s);
	return err;
}

size_t leakcheck__nr_blocks(const struct leakcheck *lc)
{
	return lc->cls ? lc->nr : 0;
}

const struct leak_block *leakcheck__block(const struct leakcheck *lc, size_t i)
{
	return &lc->blocks[i];
}

enum leak_class leakcheck__class(const struct leakcheck *lc, size_t i)
{
	return lc->cls[i];
}

enum leak_heuristic leakcheck__heuristic(const struct leakcheck *lc, size_t i)
{
	return lc->heur[i];
}

const struct leakcheck_stats *leakcheck__stats(const struct leakcheck *lc)
{
	return &lc->stats;
}
