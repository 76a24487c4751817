// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "app/collect.h"
#include "analysis/history.h"
#include "lib/log.h"
#include "symbolize/symbolize.h"

struct proc *collect__proc_seen(struct session *s, pid_t pid)
{
	struct proc *p = procs__find(&s->procs, pid);

	/* With --all its image number comes with the next report. */
	return p || !s->multi ? p : procs__add(&s->procs, pid, 0);
}

struct block_pass {
	struct session *s;
	uint64_t now_ns;
};

/* How many allocations of @size one sample stands for (1 without sampling). */
static double sample_weight(const struct session *s, double size)
{
	uint64_t rate = s->opts->sample;

	if (!rate)
		return 1;
	if (size < 1)
		size = 1;
	return 1 / -expm1(-size / rate);
}

/* The process that entries of @pid's image @gen count for, or NULL. */
static struct proc *proc_of(struct session *s, pid_t pid, uint32_t gen)
{
	struct proc *p = procs__find(&s->procs, pid);

	return p && p->gen == gen ? p : NULL;
}

/* A drained process's statistics are in its profile already. */
static struct profile *profile_of(void *ctx, pid_t pid, uint32_t gen)
{
	struct proc *p = proc_of(ctx, pid, gen);

	return p && p->drain != DRAIN_DONE ? p->profile : NULL;
}

/*
 * --growth: a page recorded at sampling period P has the size of P pages
 * (bpf/faults.bpf.h): it is one page of weight P, so that the pages and
 * the bytes of every figure are the same estimate and its variance is
 * known (profile__add_block()).
 */
static int add_block(void *ctx, const struct alloc_key *key, const struct alloc_info *info)
{
	struct block_pass *bp = ctx;
	struct proc *p = proc_of(bp->s, key->tgid, key->gen);
	uint64_t size = bp->s->opts->growth ? GROWTH_PAGE_SIZE : info->size;
	double weight = bp->s->opts->growth ? (double)(info->size / GROWTH_PAGE_SIZE)
					    : sample_weight(bp->s, info->size);

	if (!p || !filter__block(bp->s->filter, p->pid, info, bp->now_ns))
		return 0;
	return profile__add_block(p->profile, info->stack_id, size, weight, info->tid, key->addr);
}

/*
 * --growth: a stack's first touches count recorded faults, each of P
 * pages; its estimate is the pages its bytes stand for, as its resident
 * pages are.
 */
static void scale_pages(struct profile *prof)
{
	for (size_t i = 0; i < profile__nr_stacks(prof); i++) {
		struct stack_stats *st = &profile__stack(prof, i)->stats;

		st->allocs = st->alloc_bytes / GROWTH_PAGE_SIZE;
	}
}

/*
 * A stack's allocation totals count samples; scale them by the weight of
 * its average allocation (the sizes of freed samples are not kept).
 */
static void scale_samples(struct session *s, struct profile *prof)
{
	for (size_t i = 0; i < profile__nr_stacks(prof); i++) {
		struct stack_stats *st = &profile__stack(prof, i)->stats;
		double w;

		if (!st->allocs)
			continue;
		w = sample_weight(s, (double)st->alloc_bytes / st->allocs);
		st->allocs = llround(st->allocs * w);
		st->alloc_bytes = llround(st->alloc_bytes * w);
	}
}

/* Rebuild what is held from the blocks (--growth: resident pages), through the filters. */
static int count_blocks(struct session *s)
{
	struct block_pass bp = {.s = s, .now_ns = clock_seconds(CLOCK_MONOTONIC) * 1e9};
	int err = 0;

	for (size_t i = 0; i < s->procs.nr && !err; i++)
		err = profile__begin_blocks(s->procs.procs[i]->profile);
	if (!err)
		err = s->opts->growth ? tracer__for_each_page(s->tracer, add_block, &bp)
				      : tracer__for_each_block(s->tracer, add_block, &bp);
	for (size_t i = 0; i < s->procs.nr && !err; i++)
		err = profile__end_blocks(s->procs.procs[i]->profile);
	return err;
}

/* --module: keep the stacks with a frame in a matching object. */
static void filter_modules(struct session *s, struct proc *p)
{
	struct symbolizer *syms = proc__symbolizer(&s->procs, p, false);
	struct frame_info frame;

	for (size_t i = 0; i < profile__nr_stacks(p->profile); i++) {
		struct profile_stack *st = profile__stack(p->profile, i);
		bool keep = false;

		for (uint32_t j = 0; j < st->nr_ips && !keep && syms; j++) {
			symbolizer__resolve(syms, st->ips[j], &frame, 1);
			keep = filter__module(s->filter, frame.module);
		}
		if (!keep)
			profile__drop_stack(p->profile, i);
	}
}

int collect__update_proc(void *ctx, pid_t pid, const struct proc_state *st)
{
	struct session *s = ctx;
	struct proc *p = procs__find(&s->procs, pid);
	int err = 0;

	if (!p)
		p = procs__add(&s->procs, pid, st->gen);
	if (!p)
		return -ENOMEM;
	if (p->gen != st->gen) {
		err = proc__new_image(&s->procs, p, st->gen);
		s->stale = true;
	}
	memcpy(p->counters, st->counters, sizeof(p->counters));
	p->parent = st->parent;
	/* The BPF side read it when it met the process, which may be gone now. */
	if (st->ns_pid)
		p->ns_pid = st->ns_pid;
	p->execed = st->flags & PROC_EXECED;
	snprintf(p->comm, sizeof(p->comm), "%.*s", (int)sizeof(st->comm), st->comm);
	if (st->flags & PROC_EXITED && !p->exit.exited)
		p->exit = target_exit__from_status(st->exit_code);
	return err;
}

/* The one process of a run without the per-process map: the counters are its own. */
static void update_single(struct session *s)
{
	struct proc *p = s->procs.procs[0];
	struct target *t = s->targets[0];

	memcpy(p->counters, s->counters, sizeof(p->counters));
	snprintf(p->comm, sizeof(p->comm), "%s", target__comm(t));
	p->exit = target__exit(t);
}

/* The run's totals over every process, then each process's history. */
static int sum_procs(struct session *s, double time)
{
	int err = 0;

	profile_totals__set_counters(&s->totals, s->counters);
	s->totals.outstanding_bytes = s->totals.outstanding_allocs = 0;
	s->totals.outstanding_var = 0;
	for (size_t i = 0; i < s->procs.nr && !err; i++) {
		struct proc *p = s->procs.procs[i];

		/* Libraries loaded since the last report need their mappings. */
		if (p->syms)
			symbolizer__refresh(p->syms);
		if (filter__has_module(s->filter))
			filter_modules(s, p);
		s->totals.outstanding_bytes += profile__totals(p->profile)->outstanding_bytes;
		s->totals.outstanding_allocs += profile__totals(p->profile)->outstanding_allocs;
		s->totals.outstanding_var += profile__totals(p->profile)->outstanding_var;
		err = history__update(p->history, p->profile, time);
	}
	return err;
}

/* Every process's numbers, then the run's totals over all of them. */
static int collect_procs(struct session *s, double time)
{
	struct proc *p;
	int err;

	for (size_t i = 0; i < s->procs.nr; i++) {
		p = s->procs.procs[i];
		if (p->drain == DRAIN_DONE)
			continue;
		profile__clear(p->profile);
		profile__set_counters(p->profile, p->counters);
	}
	err = tracer__collect(s->tracer, profile_of, s);
	for (size_t i = 0; i < s->procs.nr && !err && s->opts->sample; i++)
		scale_samples(s, s->procs.procs[i]->profile);
	for (size_t i = 0; i < s->procs.nr && !err && s->opts->growth; i++)
		scale_pages(s->procs.procs[i]->profile);
	if (!err && s->per_block)
		err = count_blocks(s);
	return err ? err : sum_procs(s, time);
}

int collect__run(struct session *s, double time)
{
	int err;

	/* Before the numbers are read, so that the pages it adds are in them. */
	err = s->opts->growth ? tracer__classify_pages(s->tracer, 0) : 0;
	if (!err)
		err = tracer__read_counters(s->tracer, s->counters);
	if (!err && s->multi)
		err = tracer__for_each_proc(s->tracer, collect__update_proc, s);
	else if (!err)
		update_single(s);
	if (!err)
		err = collect_procs(s, time);
	if (err)
		pr_err("cannot read the BPF maps: %s", strerror(-err));
	return err;
}

/*
 * Processes that ended were in this report for the last time: their
 * entries leave the maps, and so do those of images replaced by an exec.
 */
static bool still_traced(void *ctx, pid_t pid, uint32_t gen)
{
	struct proc *p = procs__find(&((struct session *)ctx)->procs, pid);

	return !p || (!p->exit.exited && gen >= p->gen);
}

void collect__forget_gone(struct session *s)
{
	int err = 0;

	for (size_t i = 0; i < s->procs.nr; i++)
		s->stale |= s->procs.procs[i]->exit.exited;
	if (!s->stale)
		return;
	err = tracer__drop(s->tracer, still_traced, s);
	for (size_t i = s->procs.nr; i-- > 0 && !err;) {
		struct proc *p = s->procs.procs[i];

		if (!p->exit.exited)
			continue;
		s->exited.nr++;
		s->exited.bytes += profile__totals(p->profile)->outstanding_bytes;
		s->exited.allocs += profile__totals(p->profile)->outstanding_allocs;
		err = tracer__forget_proc(s->tracer, p->pid, p->gen);
		procs__remove(&s->procs, i);
	}
	if (err)
		pr_err("cannot clear the BPF maps of processes gone: %s", strerror(-err));
	s->stale = false;
	/* The report read what they left, and they are gone. */
	s->nr_ended = 0;
}

double collect__drain_due(const struct session *s)
{
	if (!s->nr_ended)
		return -1;
	if (s->nr_ended >= DRAIN_BATCH)
		return 0;
	return fmax(0, s->drained_at + DRAIN_PERIOD - clock_seconds(CLOCK_MONOTONIC));
}

void collect__note_ended(void *ctx, const struct task_event *ev)
{
	struct session *s = ctx;
	pid_t *ended = array__grow(s->ended, &s->ended_cap, s->nr_ended, sizeof(*ended));

	/* Unnoted, its entries wait for the next report, as they would have. */
	if (!ended)
		return;
	s->ended = ended;
	s->ended[s->nr_ended++] = (pid_t)ev->tgid;
}

static struct profile *draining_profile_of(void *ctx, pid_t pid, uint32_t gen)
{
	struct proc *p = proc_of(ctx, pid, gen);

	return p && p->drain == DRAIN_NOW ? p->profile : NULL;
}

/*
 * A server that forks a child per request ends thousands of them between
 * two reports: their entries would fill the stack map, which then has
 * room for the stacks of the processes alive, not of every child ended
 * within an interval. Each one is still reported once, at the next report,
 * from its profile.
 */
int collect__drain_ended(struct session *s)
{
	struct proc_state st;
	struct proc *p;
	size_t n = 0;
	int err = 0;

	for (size_t i = 0; i < s->nr_ended && !err; i++) {
		/* Reported and forgotten already, or the pid is another's now. */
		if (tracer__proc_state(s->tracer, s->ended[i], &st) || !(st.flags & PROC_EXITED))
			continue;
		err = collect__update_proc(s, s->ended[i], &st);
		p = err ? NULL : procs__find(&s->procs, s->ended[i]);
		if (!p || p->drain != DRAIN_NO)
			continue;
		profile__clear(p->profile);
		profile__set_counters(p->profile, p->counters);
		p->drain = DRAIN_NOW;
		s->ended[n++] = p->pid;
	}
	s->nr_ended = 0;
	if (!err && n)
		err = tracer__take(s->tracer, draining_profile_of, s);
	/* Even half read: what was taken is in the profile alone. */
	for (size_t i = 0; i < n; i++)
		procs__find(&s->procs, s->ended[i])->drain = DRAIN_DONE;
	s->drained_at = clock_seconds(CLOCK_MONOTONIC);
	if (err)
		pr_err("cannot read the BPF maps of processes ended: %s", strerror(-err));
	return err;
}
