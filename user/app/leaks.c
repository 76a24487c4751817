// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "app/leaks.h"
#include "tracer/tracer.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/util.h"
#include "proc/target.h"
#include "symbolize/symbolize.h"

/* One process's verdicts, or why it has none. */
struct leak_result {
	pid_t pid;
	uint32_t gen;
	bool kept; /* taken at the exit stop, or refused: until the end */
	struct assemble_leaks a;
	struct leak_verdict *v;
	struct leak_learned *learned; /* the wrappers its check learned */
	size_t nr_learned;
};

struct block_pass {
	struct tracer *tracer;
	const struct proc *p;
	struct leakcheck *lc;
	/* --leak-check-wrapper: the declared ones; each stack's first function */
	const struct options *opts;
	struct symbolizer *syms;
	struct hashmap stacks; /* struct stack_first */
	/* the wrappers learned, and the start of each one's function */
	struct leak_learned *learned;
	uint64_t *learned_at;
	size_t nr_learned, cap, cap_at;
};

/*
 * A stack's first function, the one that called the allocator (the
 * innermost of its first return address's frames): a wrapper, or not.
 * Not one further up: a wrapper's caller may allocate blocks of its own,
 * which the wrapper never returned.
 */
struct stack_first {
	uint64_t stack_id;
	uint64_t start;	  /* the function's address, 0 if unknown */
	const char *name; /* the symbolizer's */
	uint32_t offset;  /* a declared wrapper's header, or 0 */
};

static const struct stack_first *stack_first(struct block_pass *bp, uint64_t stack_id)
{
	struct frame_info frames[REPORT_MAX_INLINE];
	struct stack_first *sf;
	struct stack_trace trace;
	bool added;

	sf = hashmap__insert(&bp->stacks, &stack_id, &added);
	if (!sf || !added)
		return sf;
	tracer__read_stack(bp->tracer, stack_id, &trace);
	if (!trace.nr || !symbolizer__resolve(bp->syms, trace.ips[0], frames, REPORT_MAX_INLINE) ||
	    !frames[0].function)
		return sf;
	sf->start = frames[0].addr - frames[0].function_offset;
	sf->name = frames[0].function;
	sf->offset =
	    leak_wrapper__offset(bp->opts->leak_wrappers, bp->opts->nr_leak_wrappers, sf->name);
	return sf;
}

/* A block's id is its stack: the verdicts go to stacks by it. */
static int add_block(void *ctx, const struct alloc_key *key, const struct alloc_info *info)
{
	struct block_pass *bp = ctx;
	struct leak_block b = {.addr = key->addr, .size = info->size, .id = info->stack_id};

	if (key->tgid != (__u32)bp->p->pid || key->gen != bp->p->gen)
		return 0;
	if (bp->syms && bp->opts->nr_leak_wrappers) {
		const struct stack_first *sf = stack_first(bp, info->stack_id);

		b.offset = sf ? sf->offset : 0;
	}
	return leakcheck__add_block(bp->lc, &b);
}

/* A possibly lost block, where it is held, and its stack's first function. */
struct held {
	uint64_t start;
	uint32_t at;
	const char *name;
};

static int by_function(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int add_learned(struct block_pass *bp, const struct held *h, uint32_t offset,
		       size_t evidence)
{
	struct leak_learned *l = array__grow(bp->learned, &bp->cap, bp->nr_learned, sizeof(*l));
	uint64_t *at =
	    l ? array__grow(bp->learned_at, &bp->cap_at, bp->nr_learned, sizeof(*at)) : NULL;
	char *name = strdup(h->name);

	if (l)
		bp->learned = l;
	if (at)
		bp->learned_at = at;
	if (!l || !at || !name) {
		free(name);
		return -ENOMEM;
	}
	bp->learned[bp->nr_learned] = (struct leak_learned){name, offset, evidence};
	bp->learned_at[bp->nr_learned++] = h->start;
	return 0;
}

/* Each function's possibly lost blocks, @h[0..n) sorted by it: a wrapper's? */
static int learn_functions(struct block_pass *bp, const struct held *h, size_t n)
{
	uint32_t *at = calloc(n + 1, sizeof(*at));
	size_t i, j, evidence;
	uint32_t offset;
	int err = at ? 0 : -ENOMEM;

	for (i = 0; i < n && !err; i = j) {
		for (j = i; j < n && h[j].start == h[i].start; j++)
			at[j - i] = h[j].at;
		offset = leak_wrapper__learn(at, j - i, &evidence);
		if (offset)
			err = add_learned(bp, &h[i], offset, evidence);
	}
	free(at);
	return err;
}

/* The wrappers shown by @blocks' possibly lost ones (no declared wrapper's). */
static int learn_wrappers(struct block_pass *bp, const struct leak_block *blocks, size_t n)
{
	struct held *h = calloc(n + 1, sizeof(*h));
	const struct stack_first *sf;
	size_t nr = 0;
	int err;

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!blocks[i].held_at || blocks[i].offset)
			continue;
		sf = stack_first(bp, blocks[i].id);
		if (sf && sf->start)
			h[nr++] = (struct held){sf->start, blocks[i].held_at, sf->name};
	}
	qsort(h, nr, sizeof(*h), by_function);
	err = learn_functions(bp, h, nr);
	free(h);
	return err;
}

static const struct leak_learned *learned_of(const struct block_pass *bp, uint64_t start)
{
	for (size_t i = 0; start && i < bp->nr_learned; i++)
		if (bp->learned_at[i] == start)
			return &bp->learned[i];
	return NULL;
}

/*
 * leakcheck's learning: every block of a learned wrapper gets its
 * offset. Out of memory, nothing is learned and the verdicts stay
 * valgrind's.
 */
static size_t learn(void *ctx, struct leak_block *blocks, size_t n)
{
	struct block_pass *bp = ctx;
	const struct leak_learned *l;
	const struct stack_first *sf;
	size_t given = 0;

	if (learn_wrappers(bp, blocks, n) || !bp->nr_learned)
		return 0;
	for (size_t i = 0; i < n; i++) {
		sf = blocks[i].offset ? NULL : stack_first(bp, blocks[i].id);
		l = sf ? learned_of(bp, sf->start) : NULL;
		if (!l)
			continue;
		blocks[i].offset = l->offset;
		blocks[i].learned = true;
		given++;
	}
	return given;
}

static void free_learned(struct leak_learned *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i].function);
	free(l);
}

static int collect_blocks(void *ctx, struct leakcheck *lc)
{
	struct block_pass *bp = ctx;

	bp->lc = lc;
	return tracer__for_each_block(bp->tracer, add_block, bp);
}

static int by_stack(const void *a, const void *b)
{
	const struct leak_verdict *x = a, *y = b;

	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

/* The scan's verdicts, sorted by stack, and its figures into @r. */
static int keep_verdicts(struct leak_result *r, const struct leakcheck *lc, unsigned int heuristics)
{
	const struct leakcheck_stats *st = leakcheck__stats(lc);
	size_t n = leakcheck__nr_blocks(lc);

	r->v = calloc(n + 1, sizeof(*r->v));
	if (!r->v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct leak_block *b = leakcheck__block(lc, i);

		r->v[i] = (struct leak_verdict){b->id, b->size, leakcheck__class(lc, i),
						leakcheck__heuristic(lc, i)};
	}
	qsort(r->v, n, sizeof(*r->v), by_stack);
	r->a.verdicts = r->v;
	r->a.nr = n;
	r->a.check.pause_ms = (st->pause_ns + st->reap_pause_ns) / 1e6;
	r->a.check.bytes_scanned = st->root_bytes;
	r->a.check.assumptions = st->assumptions;
	r->a.check.threads = st->threads;
	r->a.check.heuristics = heuristics;
	return 0;
}

/* The wrapper's count is in the report when wrappers are declared or learned. */
static unsigned int wrapper_bit(const struct options *opts, const struct block_pass *bp)
{
	return opts->nr_leak_wrappers || bp->nr_learned ? 1u << LEAK_HEUR_WRAPPER : 0;
}

static const int interrupts[] = {SIGINT, SIGTERM, SIGHUP};
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = sig;
}

/*
 * The session takes these signals from a signalfd, which a scan of
 * seconds would not read: during the check of a running process they end
 * the scan instead (the target resumed and the child reaped first), and
 * are raised again after it for the session to handle as ever. A second
 * Ctrl-C, fatal during the final report, thus kills alloctrace only once
 * the target is let go. A check at a launched command's exit is left
 * alone: the Ctrl-C that ended the command reaches alloctrace too, and
 * that check is the one wanted; the command, held in its exit stop with
 * no child made, only goes on exiting if alloctrace dies.
 */
static void catch_interrupts(struct sigaction *old, sigset_t *mask)
{
	struct sigaction sa = {.sa_handler = on_interrupt, .sa_flags = SA_RESTART};
	sigset_t set;

	interrupted = 0;
	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(interrupts); i++) {
		sigaction(interrupts[i], &sa, &old[i]);
		sigaddset(&set, interrupts[i]);
	}
	sigprocmask(SIG_UNBLOCK, &set, mask);
}

static void release_interrupts(const struct sigaction *old, const sigset_t *mask)
{
	for (size_t i = 0; i < ARRAY_SIZE(interrupts); i++)
		sigaction(interrupts[i], &old[i], NULL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (interrupted)
		raise(interrupted);
}

/* The launched command or a child it made, which the session traces, or NULL. */
static struct target *launched(struct session *s, const struct proc *p)
{
	if (!s->opts->argv || !s->nr_targets)
		return NULL;
	if (target__pid(s->targets[0]) == p->pid)
		return s->targets[0];
	for (size_t i = 0; i < s->nr_followed; i++) {
		if (target__pid(s->followed[i]) == p->pid)
			return s->followed[i];
	}
	return NULL;
}

static int run_check(struct session *s, struct proc *p, bool ours, struct leak_result *r)
{
	struct leakcheck_opts o = {
	    .ours = ours,
	    .heuristics = s->opts->leak_heuristics,
	    .stop = ours ? NULL : &interrupted,
	};
	struct block_pass bp = {
	    .tracer = s->tracer,
	    .p = p,
	    .opts = s->opts,
	    .stacks = HASHMAP_INIT(sizeof(uint64_t), sizeof(struct stack_first), NULL, NULL),
	};
	struct leakcheck *lc;
	int err;

	struct target *t = ours ? launched(s, p) : NULL;

	/* Its other threads are ours too: their registers as the target read them. */
	if (t)
		o.nr_threads = target__thread_registers(t, &o.threads, &o.at_exit);
	if (s->opts->nr_leak_wrappers || !s->opts->no_leak_learning)
		bp.syms = proc__symbolizer(&s->procs, p, false);
	if (bp.syms && !s->opts->no_leak_learning) {
		o.learn = learn;
		o.learn_ctx = &bp;
	}
	lc = leakcheck__new(p->pid, &o);
	if (!lc)
		return -errno;
	/* One pending since before, delivered on unblocking: no new pause. */
	err = o.stop && *o.stop ? -EINTR : leakcheck__run(lc, collect_blocks, &bp);
	if (!err)
		err = keep_verdicts(r, lc, o.heuristics | wrapper_bit(s->opts, &bp));
	if (!err) {
		r->learned = bp.learned;
		r->nr_learned = bp.nr_learned;
		r->a.check.learned = bp.learned;
		r->a.check.nr_learned = bp.nr_learned;
	} else {
		free_learned(bp.learned, bp.nr_learned);
	}
	free(bp.learned_at);
	leakcheck__free(lc);
	hashmap__release(&bp.stacks);
	return err;
}

static int scan(struct session *s, struct proc *p, bool ours, struct leak_result *r)
{
	struct sigaction old[ARRAY_SIZE(interrupts)];
	sigset_t mask;
	int err;

	if (ours)
		return run_check(s, p, ours, r);
	catch_interrupts(old, &mask);
	err = run_check(s, p, ours, r);
	release_interrupts(old, &mask);
	return err;
}

static struct leak_result *find(struct session *s, const struct proc *p)
{
	for (size_t i = 0; i < s->nr_leaks; i++) {
		if (s->leaks[i].pid == p->pid && s->leaks[i].gen == p->gen)
			return &s->leaks[i];
	}
	return NULL;
}

static struct leak_result *add_result(struct session *s, const struct proc *p)
{
	struct leak_result *r = array__grow(s->leaks, &s->leaks_cap, s->nr_leaks, sizeof(*r));

	if (!r)
		return NULL;
	s->leaks = r;
	r = &s->leaks[s->nr_leaks++];
	*r = (struct leak_result){.pid = p->pid, .gen = p->gen};
	return r;
}

/*
 * A failed scan: its reason in the report; a debugger's hold (said by the
 * scan) for good. A signal's end of it is no fault to warn of.
 */
static void note_failure(struct leak_result *r, const struct proc *p, int err)
{
	r->kept |= err == -EBUSY;
	switch (err) {
	case -EBUSY:
		r->a.check.error = "the process is traced by another program (a debugger)";
		break;
	case -EINTR:
		r->a.check.error = "interrupted by a signal";
		break;
	default:
		r->a.check.error = strerror(-err);
		pr_warn("leak check of process %d failed: %s", p->pid, strerror(-err));
	}
}

/* @keep: the verdicts stay for every later report (a check at the exit stop). */
static void check(struct session *s, struct proc *p, bool ours, bool keep)
{
	struct leak_result *r = add_result(s, p);
	int err = r ? scan(s, p, ours, r) : -ENOMEM;

	if (!r) {
		pr_warn("leak check of process %d failed: %s", p->pid, strerror(ENOMEM));
		return;
	}
	r->kept |= keep;
	/* Gone before the check ended: as for any exited process, no verdicts to give. */
	if (err == -ESRCH)
		s->nr_leaks--;
	else if (err)
		note_failure(r, p, err);
}

void leaks__check(struct session *s, struct proc *p, bool ours)
{
	check(s, p, ours, ours);
}

/*
 * A running process is checked now. The launched command is the
 * session's tracee, which no other tracer (the snapshot's) may seize: it
 * is held in a stop of the session's own, and checked there as at its
 * exit. A stop of another kind that comes first (its exit, an exec) is
 * left to the loop: this report has no verdicts for it.
 */
static void check_running(struct session *s, struct proc *p)
{
	struct target *t = launched(s, p);

	if (!t) {
		check(s, p, false, false);
		return;
	}
	if (target__interrupt(t))
		return;
	check(s, p, true, false);
	target__continue(t);
}

const struct assemble_leaks *leaks__for_report(struct session *s, struct proc *p)
{
	struct leak_result *r;

	if (!s->opts->leak_check)
		return NULL;
	r = find(s, p);
	if (!r && !p->exit.exited) {
		check_running(s, p);
		r = find(s, p);
	}
	return r ? &r->a : NULL;
}

void leaks__forget(struct session *s, bool all)
{
	size_t out = 0;

	for (size_t i = 0; i < s->nr_leaks; i++) {
		if (s->leaks[i].kept && !all) {
			s->leaks[out++] = s->leaks[i];
			continue;
		}
		free(s->leaks[i].v);
		free_learned(s->leaks[i].learned, s->leaks[i].nr_learned);
	}
	s->nr_leaks = out;
	if (all) {
		free(s->leaks);
		s->leaks = NULL;
		s->leaks_cap = 0;
	}
}
