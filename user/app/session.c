// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "probe/allocator.h"
#include "export/export.h"
#include "analysis/filter.h"
#include "analysis/history.h"
#include "lib/log.h"
#include "proc/procs.h"
#include "analysis/profile.h"
#include "report/report.h"
#include "app/session.h"
#include "symbolize/symbolize.h"
#include "proc/target.h"
#include "bpf/tracer.h"
#include "lib/util.h"

/* Inlined calls shown per return address, at most. */
#define MAX_INLINE 8

/*
 * A process traced with -p that ran execve is looked at every RETRY_MS
 * until its new program has mapped an allocator, for EXEC_PATIENCE seconds
 * at most: a loaded machine can take seconds to page in the loader.
 */
#define RETRY_MS 20
#define EXEC_PATIENCE 10.0

struct pending_exec {
	pid_t pid;
	bool named;
	char comm[32];
	double deadline;
};

struct session {
	const struct options *opts;
	bool multi;		/* several processes: the per-process map, per-process reports */
	/* The processes named on the command line, or the launched command. */
	struct target **targets;
	size_t nr_targets;
	size_t nr_gone;		/* of them, ended */
	struct tracer *tracer;
	struct procs procs;	/* every process traced, named or not */
	struct report_writer *writer;
	struct filter *filter;
	bool per_block;		/* reports are rebuilt from the live blocks */
	struct exporter *exporters[EXPORT_HTML + 1];
	size_t nr_exporters;
	struct allocator allocator;
	int epfd;
	int sigfd;
	int timerfd;
	int retry_fd;		/* ticks while pending execs wait for their allocator */
	struct pending_exec *pending;
	size_t nr_pending, pending_cap;
	unsigned int reports;
	double mono_to_real;	/* add to CLOCK_MONOTONIC seconds for unix time */
	uint64_t counters[CNT_MAX];	/* of the whole run */
	struct profile_totals totals;	/* of the whole run, over every process */
	bool stale;		/* the maps hold entries of processes or images gone */
	struct frame_info *frames;
	size_t nr_frames;
	size_t frames_cap;
	int write_err;
	bool done;
	bool failed;		/* tracing stopped on an error: exit 1 */
};

static double clock_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A frame of a process whose mappings could not be read: the address alone. */
static int unresolved(uint64_t addr, struct frame_info *frame)
{
	*frame = (struct frame_info){ .addr = addr };
	return 1;
}

/* Append the frames of one stack to the session's frame buffer. */
/*
 * --big-only stacks start at the syscall, inside the allocator (mmap from
 * sysmalloc from malloc): what a reader wants first is the code that asked
 * it for memory. Drop the allocator's frames above it, from @first on.
 */
static void drop_allocator_frames(struct session *s, size_t first)
{
	const char *allocator = s->allocator.objs[0].name;
	size_t n = 0, total = s->nr_frames - first;

	while (n < total && s->frames[first + n].module &&
	       !strcmp(s->frames[first + n].module, allocator))
		n++;
	if (!n || n == total)
		return;
	memmove(&s->frames[first], &s->frames[first + n], (total - n) * sizeof(*s->frames));
	s->nr_frames -= n;
}

static int resolve_stack(struct session *s, struct symbolizer *syms, const __u64 *ips,
			 uint32_t nr)
{
	size_t first = s->nr_frames;
	struct frame_info *grown;

	for (uint32_t i = 0; i < nr; i++) {
		if (s->frames_cap - s->nr_frames < MAX_INLINE) {
			size_t cap = s->frames_cap ? 2 * s->frames_cap : 256;

			grown = realloc(s->frames, cap * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			s->frames = grown;
			s->frames_cap = cap;
		}
		s->nr_frames += syms ? symbolizer__resolve(syms, ips[i], s->frames + s->nr_frames,
							   MAX_INLINE)
				     : unresolved(ips[i], s->frames + s->nr_frames);
	}
	if (s->opts->big_only)
		drop_allocator_frames(s, first);
	return 0;
}

static void note_write_error(struct session *s, int err)
{
	if (!err || s->write_err)
		return;
	s->write_err = err;
	s->done = true;
	/* A reader that went away (| head) is no error of ours to report. */
	if (err != -EPIPE)
		pr_err("cannot write the report: %s", strerror(-err));
}

/*
 * The process an event is about. With --all it may be new since the last
 * report: its image number comes with the next one.
 */
static struct proc *proc_seen(struct session *s, pid_t pid)
{
	struct proc *p = procs__find(&s->procs, pid);

	return p || !s->multi ? p : procs__add(&s->procs, pid, 0);
}

static void on_oom(void *ctx, const struct task_event *ev)
{
	struct session *s = ctx;
	struct proc *p = proc_seen(s, ev->tgid);

	if (p)
		p->oom_killed = true;
	pr_info("the kernel's OOM killer chose pid %u: its %s report follows", ev->tgid,
		s->multi ? "last" : "final");
}

static void on_big_alloc(void *ctx, const struct big_alloc_event *ev)
{
	struct session *s = ctx;
	struct proc *p = proc_seen(s, ev->tgid);
	struct big_alloc alert = {
		.time = ev->time_ns / 1e9 + s->mono_to_real,
		.pid = ev->tgid,
		.tid = ev->tid,
		.func = alloc_func_name(ev->func),
		.size = ev->size,
		.addr = ev->addr,
		.stack_flags = ev->stack.flags,
	};
	uint32_t nr = ev->stack.nr < MAX_STACK_DEPTH ? ev->stack.nr : MAX_STACK_DEPTH;

	s->nr_frames = 0;
	/* The loader may have mapped more since the last report. */
	if (resolve_stack(s, p ? proc__symbolizer(&s->procs, p, true) : NULL, ev->stack.ips, nr))
		return;
	alert.frames = s->frames;
	alert.nr_frames = s->nr_frames;
	note_write_error(s, report_writer__big_alloc(s->writer, &alert));
	/* Exporters say what went wrong themselves, once. */
	for (size_t i = 0; i < s->nr_exporters; i++)
		exporter__big_alloc(s->exporters[i], &alert);
}

/* How much of the secondary lists a report shows. */
#define MAX_GROWING 5
#define MAX_THREADS 10
#define THREAD_STACKS 5

/*
 * One process's part of a report: every list (top, growing, per thread,
 * peak) is cut from one array, and frames go to the session's buffer as
 * offsets until the buffer stops moving (see fix_frames()).
 */
struct report_parts {
	struct proc *proc;
	struct symbolizer *syms;
	struct report_stack *stacks;
	size_t nr;
	struct report_thread threads[MAX_THREADS];
	char thread_names[MAX_THREADS][32];
	struct report_peak peak;
	uint8_t (*data)[256];
};

static int add_stack(struct session *s, struct report_parts *rp, const struct profile_stack *st)
{
	struct report_stack *out = &rp->stacks[rp->nr];
	size_t first = s->nr_frames;
	int err;

	err = resolve_stack(s, rp->syms, st->ips, st->nr_ips);
	if (err)
		return err;
	*out = (struct report_stack){
		.stack_id = st->stack_id,
		.outstanding_bytes = st->stats.outstanding_bytes,
		.outstanding_allocs = st->stats.outstanding_allocs,
		.allocs = st->stats.allocs,
		.alloc_bytes = st->stats.alloc_bytes,
		.growth_bytes = st->growth_bytes,
		.trend = trend_name(st->trend),
		.stack_flags = st->flags,
		.nr_frames = s->nr_frames - first,
		.frames = (const struct frame_info *)(uintptr_t)first,
	};
	rp->nr++;
	return 0;
}

/* --show-data: the first bytes of the block each top stack kept as a sample. */
static void add_data(struct session *s, struct report_parts *rp, const struct profile_stack *st,
		     size_t i)
{
	struct report_stack *out = &rp->stacks[i];
	size_t len = s->opts->show_data;
	long n;

	/* A process gone may have left its pid to another, whose memory is not ours to show. */
	if (!st->sample_addr || !rp->data || rp->proc->exit.exited)
		return;
	if (len > st->sample_size)
		len = st->sample_size;
	n = proc_read_mem(rp->proc->pid, st->sample_addr, rp->data[i], len);
	if (n <= 0)
		return;
	out->data_addr = st->sample_addr;
	out->data = rp->data[i];
	out->data_len = n;
}

static int add_threads(struct session *s, struct report_parts *rp, struct report *r)
{
	struct profile *prof = rp->proc->profile;
	const struct profile_thread *th;
	size_t n = profile__threads(prof, &th);
	int err = 0;

	for (size_t i = 0; i < n && i < MAX_THREADS && !err; i++) {
		struct report_thread *out = &rp->threads[i];
		size_t first = rp->nr;

		proc_thread_name(rp->proc->pid, th[i].tid, rp->thread_names[i],
				 sizeof(rp->thread_names[i]));
		for (size_t j = 0; j < th[i].nr_stacks && j < THREAD_STACKS && !err; j++) {
			struct profile_stack *st = profile__stack(prof, th[i].stacks[j].index);

			err = add_stack(s, rp, st);
			/* The thread's share of the stack, not the whole stack's. */
			rp->stacks[rp->nr - 1].outstanding_bytes = th[i].stacks[j].outstanding_bytes;
			rp->stacks[rp->nr - 1].outstanding_allocs = th[i].stacks[j].outstanding_allocs;
		}
		*out = (struct report_thread){
			.tid = th[i].tid,
			.comm = rp->thread_names[i][0] ? rp->thread_names[i] : NULL,
			.outstanding_bytes = th[i].outstanding_bytes,
			.outstanding_allocs = th[i].outstanding_allocs,
			.nr_stacks = rp->nr - first,
			.stacks = &rp->stacks[first],
		};
		r->nr_threads++;
	}
	r->threads = rp->threads;
	return err;
}

static int add_peak(struct session *s, struct report_parts *rp, struct report *r)
{
	const struct peak *pk = history__peak(rp->proc->history);
	size_t first = rp->nr;
	int err = 0;

	if (!pk->time)
		return 0;
	for (size_t i = 0; i < pk->nr_stacks && !err; i++)
		err = add_stack(s, rp, &pk->stacks[i]);
	rp->peak = (struct report_peak){
		.time = pk->time,
		.outstanding_bytes = pk->outstanding_bytes,
		.outstanding_allocs = pk->outstanding_allocs,
		.nr_stacks = rp->nr - first,
		.stacks = &rp->stacks[first],
	};
	r->peak = &rp->peak;
	return err;
}

static int build_parts(struct session *s, struct report_parts *rp, struct report *r,
		       const struct profile_stack *const *top, bool final)
{
	const struct profile_stack *growing[MAX_GROWING];
	int err = 0;

	for (size_t i = 0; i < r->nr_stacks && !err; i++) {
		err = add_stack(s, rp, top[i]);
		if (!err && (!s->opts->top || i < s->opts->top))
			add_data(s, rp, top[i], i);
	}
	r->nr_growing = history__growing(rp->proc->profile, growing, MAX_GROWING);
	r->growing = &rp->stacks[rp->nr];
	for (size_t i = 0; i < r->nr_growing && !err; i++)
		err = add_stack(s, rp, growing[i]);
	if (!err && s->per_block && (s->opts->threads || s->nr_exporters))
		err = add_threads(s, rp, r);
	if (!err && final)
		err = add_peak(s, rp, r);
	r->stacks = rp->stacks;
	return err;
}

/* The report on process @rp->proc into @r: its numbers, stacks and lists. 0 or -errno. */
static int build_proc(struct session *s, struct report_parts *rp, struct report *r, bool final)
{
	struct proc *p = rp->proc;
	const struct profile_stack *const *top;
	size_t room;

	r->pid = p->pid;
	r->comm = p->comm;
	r->parent = p->parent;
	r->exit = p->exit;
	r->exit.oom_killed = p->oom_killed;
	r->rss_bytes = p->exit.exited ? 0 : proc_rss(p->pid);
	/* Exporters see every stack; the live report the top ones. */
	r->nr_stacks = profile__top(p->profile, s->nr_exporters ? 0 : s->opts->top, &top);
	r->nr_holding = profile__nr_holding(p->profile);
	r->totals = profile__totals(p->profile);
	rp->syms = proc__symbolizer(&s->procs, p, false);
	room = r->nr_stacks + MAX_GROWING + MAX_THREADS * THREAD_STACKS + PEAK_STACKS;
	rp->stacks = calloc(room, sizeof(*rp->stacks));
	if (s->opts->show_data)
		rp->data = calloc(s->opts->top ? s->opts->top : r->nr_stacks + 1, sizeof(*rp->data));
	if (!rp->stacks || (s->opts->show_data && !rp->data))
		return -ENOMEM;
	return build_parts(s, rp, r, top, final);
}

/* The frame buffer is complete: turn the offsets stored in the stacks into pointers. */
static void fix_frames(struct session *s, struct report_parts *parts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < parts[i].nr; j++)
			parts[i].stacks[j].frames = s->frames + (uintptr_t)parts[i].stacks[j].frames;
	}
}

/* What the live report leaves out that exporters see. */
static void cut_for_writer(const struct session *s, struct report *r)
{
	if (s->opts->top && r->nr_stacks > s->opts->top)
		r->nr_stacks = s->opts->top;
	if (!s->opts->threads)
		r->nr_threads = 0;
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

static struct profile *profile_of(void *ctx, pid_t pid, uint32_t gen)
{
	struct proc *p = proc_of(ctx, pid, gen);

	return p ? p->profile : NULL;
}

static int add_block(void *ctx, const struct alloc_key *key, const struct alloc_info *info)
{
	struct block_pass *bp = ctx;
	struct proc *p = proc_of(bp->s, key->tgid, key->gen);

	if (!p || !filter__block(bp->s->filter, p->pid, info, bp->now_ns))
		return 0;
	return profile__add_block(p->profile, info->stack_id, info->size,
				  sample_weight(bp->s, info->size), info->tid, key->addr);
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

/* Rebuild what is held from the blocks themselves, through the filters. */
static int count_blocks(struct session *s)
{
	struct block_pass bp = { .s = s, .now_ns = clock_seconds(CLOCK_MONOTONIC) * 1e9 };
	int err = 0;

	for (size_t i = 0; i < s->procs.nr && !err; i++)
		err = profile__begin_blocks(s->procs.procs[i]->profile);
	if (!err)
		err = tracer__for_each_block(s->tracer, add_block, &bp);
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

/* What the per-process map says of one process: it may be new, or run a new program. */
static int update_proc(void *ctx, pid_t pid, const struct proc_state *st)
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

/* Every process's numbers, then the run's totals over all of them. */
static int collect_procs(struct session *s, double time)
{
	struct proc *p;
	int err;

	for (size_t i = 0; i < s->procs.nr; i++) {
		p = s->procs.procs[i];
		profile__clear(p->profile);
		profile__set_counters(p->profile, p->counters);
	}
	err = tracer__collect(s->tracer, profile_of, s);
	for (size_t i = 0; i < s->procs.nr && !err && s->opts->sample; i++)
		scale_samples(s, s->procs.procs[i]->profile);
	if (!err && s->per_block)
		err = count_blocks(s);
	if (err)
		return err;
	profile_totals__set_counters(&s->totals, s->counters);
	s->totals.outstanding_bytes = s->totals.outstanding_allocs = 0;
	for (size_t i = 0; i < s->procs.nr && !err; i++) {
		p = s->procs.procs[i];
		/* Libraries loaded since the last report need their mappings. */
		if (p->syms)
			symbolizer__refresh(p->syms);
		if (filter__has_module(s->filter))
			filter_modules(s, p);
		s->totals.outstanding_bytes += profile__totals(p->profile)->outstanding_bytes;
		s->totals.outstanding_allocs += profile__totals(p->profile)->outstanding_allocs;
		err = history__update(p->history, p->profile, time);
	}
	return err;
}

static int collect(struct session *s, double time)
{
	int err;

	err = tracer__read_counters(s->tracer, s->counters);
	if (!err && s->multi)
		err = tracer__for_each_proc(s->tracer, update_proc, s);
	else if (!err)
		update_single(s);
	if (!err)
		err = collect_procs(s, time);
	if (err)
		pr_err("cannot read the BPF maps: %s", strerror(-err));
	return err;
}

static int by_outstanding(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	uint64_t bx = profile__totals(x->profile)->outstanding_bytes;
	uint64_t by = profile__totals(y->profile)->outstanding_bytes;

	if (bx != by)
		return bx > by ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * The processes a report lists, the most outstanding bytes first: with
 * --all those holding memory, else every one traced. Returns how many
 * there are; *@out is to be freed.
 */
static size_t listed_procs(struct session *s, struct proc ***out)
{
	struct proc **list = calloc(s->procs.nr + 1, sizeof(*list));
	size_t n = 0;

	*out = list;
	if (!list)
		return 0;
	for (size_t i = 0; i < s->procs.nr; i++) {
		struct proc *p = s->procs.procs[i];

		if (!s->opts->all || profile__totals(p->profile)->outstanding_allocs)
			list[n++] = p;
	}
	if (n)
		qsort(list, n, sizeof(*list), by_outstanding);
	return n;
}

static void write_report(struct session *s, struct report *r)
{
	for (size_t i = 0; i < s->nr_exporters; i++)
		exporter__report(s->exporters[i], r);
	if (!r->per_process)
		cut_for_writer(s, r);
	for (size_t i = 0; i < r->nr_procs; i++)
		cut_for_writer(s, (struct report *)&r->procs[i]);
	if (s->opts->top_procs && r->nr_procs > s->opts->top_procs)
		r->nr_procs = s->opts->top_procs;
	note_write_error(s, report_writer__report(s->writer, r));
}

static void free_parts(struct report_parts *parts, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(parts[i].stacks);
		free(parts[i].data);
	}
	free(parts);
}

/* Build the processes' reports into @r and write them. 0 or -errno. */
static int report_procs(struct session *s, struct report *r, struct proc **list, size_t n)
{
	struct report *procs = calloc(n + 1, sizeof(*procs));
	struct report_parts *parts = calloc(n + 1, sizeof(*parts));
	int err = procs && parts ? 0 : -ENOMEM;

	/* Exporters see every process; without them only the listed ones are built. */
	if (!s->nr_exporters && s->opts->top_procs && n > s->opts->top_procs)
		n = s->opts->top_procs;
	s->nr_frames = 0;
	for (size_t i = 0; i < n && !err; i++) {
		parts[i].proc = list[i];
		procs[i] = (struct report){
			.final = r->final,
			.time = r->time,
			.interval = r->interval,
			.filter = r->filter,
			.sample_rate = r->sample_rate,
			.big_only = r->big_only,
		};
		err = build_proc(s, &parts[i], &procs[i], r->final);
	}
	if (!err) {
		fix_frames(s, parts, n);
		if (r->per_process) {
			r->procs = procs;
			r->nr_procs = n;
		} else {
			*r = procs[0];
		}
		write_report(s, r);
	}
	free_parts(parts, n);
	free(procs);
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

static void forget_gone(struct session *s)
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
		err = tracer__forget_proc(s->tracer, p->pid, p->gen);
		procs__remove(&s->procs, i);
	}
	if (err)
		pr_err("cannot clear the BPF maps of processes gone: %s", strerror(-err));
	s->stale = false;
}

static int session__report(struct session *s, bool final)
{
	struct report r = {
		.final = final,
		.time = clock_seconds(CLOCK_REALTIME),
		.interval = s->opts->interval,
		.filter = filter__describe(s->filter),
		.sample_rate = s->opts->sample,
		.big_only = s->opts->big_only ? s->opts->big : 0,
		.per_process = s->multi,
		.totals = &s->totals,
	};
	struct proc **list;
	int err;

	err = collect(s, r.time);
	if (err)
		return err;
	r.nr_procs_total = listed_procs(s, &list);
	err = list ? report_procs(s, &r, list, r.nr_procs_total) : -ENOMEM;
	free(list);
	s->reports++;
	if (s->multi)
		forget_gone(s);
	return err;
}

struct alloc_search {
	struct session *s;
	pid_t pid;
};

static int found_allocator(void *ctx)
{
	struct alloc_search *as = ctx;
	struct session *s = as->s;
	int err = allocator__find(as->pid, &s->opts->alloc, &s->allocator);

	if (err == -ENOENT)
		return s->allocator.final ? -ENOENT : 0;
	return err ? err : 1;
}

static void no_allocator(pid_t pid, const char *comm, int err)
{
	/* Its mappings went with it: that is no sign of a static program. */
	if (err == -ENOENT && kill(pid, 0) && errno == ESRCH)
		err = -ESRCH;
	if (err == -ESRCH)
		pr_err("process %d (%s) exited before alloctrace could attach", pid, comm);
	else if (err == -EINVAL)
		;	/* said already: a bad --allocator, mappings not readable */
	else if (err)
		pr_err("no allocator (malloc and free) found in process %d (%s): "
		       "is it static and stripped, or not using malloc?",
		       pid, comm);
}

/*
 * Find the allocator of process @pid (named @comm) into s->allocator. A
 * @launched command is run under ptrace until it is mapped.
 */
static int find_allocator(struct session *s, pid_t pid, const char *comm,
			  struct target *launched)
{
	struct alloc_search as = { .s = s, .pid = pid };
	int err;

	if (launched) {
		err = target__run_until(launched, found_allocator, &as);
	} else {
		err = found_allocator(&as);
		err = err > 0 ? 0 : err ? err : -ENOENT;
	}
	no_allocator(pid, comm, err);
	return err;
}

static int open_targets(struct session *s)
{
	size_t n = s->opts->argv ? 1 : s->opts->nr_pids;
	struct target *t;

	s->targets = calloc(n + 1, sizeof(*s->targets));
	if (!s->targets)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		t = s->opts->argv ? target__launch(s->opts->argv) : target__attach(s->opts->pids[i]);
		if (!t)
			return -errno;
		s->targets[s->nr_targets++] = t;
	}
	return 0;
}

static int add_fd(struct session *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int setup_loop(struct session *s)
{
	double iv = s->opts->interval;
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)iv, .tv_nsec = (long)((iv - (time_t)iv) * 1e9) },
	};
	int err;

	its.it_interval = its.it_value;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	s->retry_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (s->epfd < 0 || s->timerfd < 0 || s->retry_fd < 0 ||
	    timerfd_settime(s->timerfd, 0, &its, NULL))
		return -errno;
	err = add_fd(s, s->sigfd);
	if (!err)
		err = add_fd(s, s->timerfd);
	if (!err)
		err = add_fd(s, s->retry_fd);
	if (!err)
		err = add_fd(s, tracer__events_fd(s->tracer));
	for (size_t i = 0; i < s->nr_targets && !err; i++) {
		if (target__fd(s->targets[i]) >= 0)
			err = add_fd(s, target__fd(s->targets[i]));
	}
	return err;
}

/* Signals arrive through a signalfd, read in the loop like any other event. */
static int block_signals(struct session *s)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	/* Write errors come back as EPIPE and end the run cleanly. */
	signal(SIGPIPE, SIG_IGN);
	s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return s->sigfd < 0 ? -errno : 0;
}

/* A second Ctrl-C during the final report ends the process at once. */
static void let_second_interrupt_kill(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	signal(SIGINT, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/* Which allocator is probed; at --verbose only for processes not named. */
static void describe_allocator(struct session *s, pid_t pid, const char *comm, bool named)
{
	void (*say)(const char *fmt, ...) = named ? pr_info : pr_debug;
	const struct allocator *a = &s->allocator;
	char others[2 * PATH_MAX + 16] = "";
	size_t len = 0;

	pr_debug("allocator: %s (%s)", a->objs[0].name, a->why);
	for (size_t i = 1; i < a->nr_objs && len < sizeof(others); i++) {
		pr_debug("also probed: %s", a->objs[i].name);
		len += snprintf(others + len, sizeof(others) - len, " and %s", a->objs[i].name);
	}
	if (s->opts->big_only && pid)
		say("tracing pid %d (%s): blocks of %llu bytes or more from mmap, mremap and brk, "
		    "no probes in %s", pid, comm, (unsigned long long)s->opts->big, a->objs[0].name);
	else if (s->opts->big_only)
		say("tracing every process: blocks of %llu bytes or more from mmap, mremap and brk",
		    (unsigned long long)s->opts->big);
	else if (pid)
		say("tracing pid %d (%s): %zu probes in %s%s", pid, comm,
		    tracer__nr_probes(s->tracer), a->objs[0].name, others);
	else
		say("tracing every process that calls the allocator in %s%s: %zu probes",
		    a->objs[0].name, others, tracer__nr_probes(s->tracer));
}

static struct target *target_of(const struct session *s, pid_t pid)
{
	for (size_t i = 0; i < s->nr_targets; i++) {
		if (target__pid(s->targets[i]) == pid)
			return s->targets[i];
	}
	return NULL;
}

/*
 * Probe the allocator just found for @pid and, with several processes
 * (one has its tables made as it is attached), build its unwind tables.
 */
static int probe_allocator(struct session *s, pid_t pid)
{
	int err = tracer__attach(s->tracer, &s->allocator);

	return !err && s->multi ? tracer__unwind_process(s->tracer, pid) : err;
}

/* Probe the allocator found for @pid's new program, or say why not (@err). */
static void probe_exec(struct session *s, pid_t pid, const char *comm, bool named, int err)
{
	struct proc *p = procs__find(&s->procs, pid);

	if (!err)
		err = probe_allocator(s, pid);
	if (!err) {
		describe_allocator(s, pid, comm, named);
		/* Its new mappings, while it lives (a launched command is still held). */
		if (p)
			proc__symbolizer(&s->procs, p, true);
		return;
	}
	/* With several processes, the others are still traced. */
	if (s->multi)
		return;
	pr_err("cannot trace pid %d after its exec: %s", pid, strerror(-err));
	s->failed = true;
	s->done = true;
}

static void arm_retry(struct session *s)
{
	struct timespec tick = { .tv_nsec = s->nr_pending ? RETRY_MS * 1000000L : 0 };
	struct itimerspec its = { .it_value = tick, .it_interval = tick };

	timerfd_settime(s->retry_fd, 0, &its, NULL);
}

/* Look again at the processes whose new program had no allocator mapped yet. */
static void retry_execs(struct session *s)
{
	double now = clock_seconds(CLOCK_MONOTONIC);

	for (size_t i = s->nr_pending; i-- > 0;) {
		struct pending_exec pe = s->pending[i];
		struct alloc_search as = { .s = s, .pid = pe.pid };
		int ret = found_allocator(&as);
		/* Gone, and its end is told by its pidfd or its last report. */
		bool gone = !ret && kill(pe.pid, 0) && errno == ESRCH;

		if (!ret && !gone && now < pe.deadline)
			continue;
		s->pending[i] = s->pending[--s->nr_pending];
		if (gone)
			continue;
		ret = ret > 0 ? 0 : ret ? ret : -ENOENT;
		if (pe.named)
			no_allocator(pe.pid, pe.comm, ret);
		probe_exec(s, pe.pid, pe.comm, pe.named, ret);
	}
	arm_retry(s);
}

/* Watch @pid until its new program maps an allocator. 0 or -errno. */
static int add_pending(struct session *s, pid_t pid, const char *comm, bool named)
{
	struct pending_exec *pe = NULL;

	for (size_t i = 0; i < s->nr_pending && !pe; i++)
		pe = s->pending[i].pid == pid ? &s->pending[i] : NULL;
	if (!pe) {
		pe = array__grow(s->pending, &s->pending_cap, s->nr_pending, sizeof(*pe));
		if (!pe)
			return -ENOMEM;
		s->pending = pe;
		pe = &s->pending[s->nr_pending++];
	}
	pe->pid = pid;
	pe->named = named;
	snprintf(pe->comm, sizeof(pe->comm), "%s", comm);
	pe->deadline = clock_seconds(CLOCK_MONOTONIC) + EXEC_PATIENCE;
	return 0;
}

/*
 * A traced process ran execve: probe the new program's allocator. A
 * launched command (@t, held at its exec) is stepped under ptrace until it
 * is mapped; another process is watched until it maps it. With one
 * process its old numbers go, its old address space with them; with
 * several the BPF side gave it a new image number, which leaves the old
 * ones behind. Processes not named on the command line (@t NULL) are
 * talked about at --verbose only: a shell runs many programs.
 */
static void reattach(struct session *s, pid_t pid, struct target *t)
{
	bool named = t;
	void (*say)(const char *fmt, ...) = named ? pr_info : pr_debug;
	struct target *launched = s->opts->argv ? t : NULL;
	struct proc *p = procs__find(&s->procs, pid);
	struct proc_state st;
	char comm[32];
	int err = 0;

	if (t) {
		target__refresh_comm(t);
		snprintf(comm, sizeof(comm), "%s", target__comm(t));
	} else {
		proc_thread_name(pid, pid, comm, sizeof(comm));
	}
	say("pid %d became '%s': tracing the new program", pid, comm);
	if (!s->multi) {
		err = tracer__reset(s->tracer);
		if (!err && p)
			err = proc__new_image(&s->procs, p, 0);
	} else {
		/* Its record follows the new image now, so its mappings are read in time. */
		err = tracer__proc_state(s->tracer, pid, &st);
		if (!err)
			err = update_proc(s, pid, &st);
	}
	if (!err && !launched) {
		err = add_pending(s, pid, comm, named);
		if (!err) {
			retry_execs(s);
			return;
		}
	}
	if (!err)
		err = find_allocator(s, pid, comm, launched);
	probe_exec(s, pid, comm, named, err);
	if (launched && !s->done)
		target__resume(launched);
}

/* A launched command's exec is handled at its ptrace stop, before it runs on. */
static void on_exec(void *ctx, const struct task_event *ev)
{
	struct session *s = ctx;
	struct target *t = target_of(s, ev->tgid);

	if (!(s->opts->argv && t))
		reattach(s, ev->tgid, t);
}

static int open_tracer(struct session *s)
{
	struct tracer_opts topts = {
		.big_only = s->opts->big_only,
		.sizes = s->opts->maps,
		.on_big_alloc = on_big_alloc,
		.on_oom = on_oom,
		.on_exec = on_exec,
		.ctx = s,
	};

	options__config(s->opts, s->nr_targets ? target__pid(s->targets[0]) : 0, &topts.config);
	s->tracer = tracer__open(&topts);
	return s->tracer ? 0 : -errno;
}

/* A process named on the command line ended; the run ends with the last of them. */
static void target_gone(struct session *s, struct target *t)
{
	int fd = target__fd(t);

	if (fd >= 0)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	if (++s->nr_gone >= s->nr_targets)
		s->done = true;
}

static void on_target_event(struct session *s, struct target *t)
{
	struct proc *p = procs__find(&s->procs, target__pid(t));

	switch (target__update(t)) {
	case TARGET_EXECED:
		reattach(s, target__pid(t), t);
		break;
	case TARGET_EXITING:
		/* Last chance to read its mappings. */
		if (p)
			proc__symbolizer(&s->procs, p, true);
		target__resume(t);
		break;
	case TARGET_GONE:
		target_gone(s, t);
		break;
	case TARGET_RUNNING:
		break;
	}
}

static void on_signal(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			if (s->opts->argv)
				on_target_event(s, s->targets[0]);
			break;
		case SIGUSR1:
			session__report(s, false);
			break;
		default:
			let_second_interrupt_kill();
			s->done = true;
		}
	}
}

static void on_timer(struct session *s)
{
	uint64_t ticks;

	if (read(s->timerfd, &ticks, sizeof(ticks)) != sizeof(ticks))
		return;
	/* With -n, the last report is the final one. */
	if (s->opts->count && s->reports + 1 >= s->opts->count)
		s->done = true;
	else
		session__report(s, false);
}

static void on_fd(struct session *s, int fd)
{
	if (fd == s->sigfd) {
		on_signal(s);
		return;
	}
	if (fd == s->timerfd) {
		on_timer(s);
		return;
	}
	if (fd == s->retry_fd) {
		if (read(fd, &(uint64_t){ 0 }, sizeof(uint64_t)) == sizeof(uint64_t))
			retry_execs(s);
		return;
	}
	for (size_t i = 0; i < s->nr_targets; i++) {
		if (fd == target__fd(s->targets[i])) {
			on_target_event(s, s->targets[i]);
			return;
		}
	}
	tracer__consume(s->tracer);
}

static int run_loop(struct session *s)
{
	struct epoll_event evs[4];
	int n;

	while (!s->done) {
		/*
		 * A launched target is also looked at every half second:
		 * SIGCHLDs coalesce, and a stop must never be left waiting.
		 */
		n = epoll_wait(s->epfd, evs, 4, s->opts->argv ? 500 : -1);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0 && s->opts->argv)
			on_target_event(s, s->targets[0]);
		for (int i = 0; i < n && !s->done; i++)
			on_fd(s, evs[i].data.fd);
	}
	return 0;
}

/* Find and probe the allocator of a process named on the command line. An exit code. */
static int trace_target(struct session *s, struct target *t)
{
	pid_t pid = target__pid(t);
	const char *comm = target__comm(t);
	struct proc *p = procs__add(&s->procs, pid, 0);
	int err;

	if (!p || (s->multi && tracer__add_proc(s->tracer, pid, comm))) {
		pr_err("cannot set up tracing pid %d: %s", pid, strerror(errno));
		return EXIT_FAILURE_RUNTIME;
	}
	if (find_allocator(s, pid, comm, s->opts->argv ? t : NULL))
		return EXIT_TARGET;
	err = probe_allocator(s, pid);
	if (err)
		return err == -ESRCH ? EXIT_TARGET : EXIT_FAILURE_RUNTIME;
	if (!proc__symbolizer(&s->procs, p, false)) {
		pr_err("cannot read the mappings of process %d: %s", pid, strerror(errno));
		return EXIT_TARGET;
	}
	describe_allocator(s, pid, comm, true);
	return EXIT_OK;
}

/*
 * --all: the processes running now get their unwind tables at once, so
 * that the stacks of their first allocations are whole too; the ones that
 * start later ask for theirs as they first allocate.
 */
static void unwind_running(struct session *s)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	char *end;
	long pid;

	while (dir && (de = readdir(dir))) {
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		tracer__unwind_process(s->tracer, (pid_t)pid);
	}
	if (dir)
		closedir(dir);
}

/* --all: alloctrace's own allocator, which is every dynamic program's C library. */
static int trace_all(struct session *s)
{
	if (find_allocator(s, getpid(), "alloctrace", NULL))
		return EXIT_TARGET;
	if (tracer__attach(s->tracer, &s->allocator))
		return EXIT_FAILURE_RUNTIME;
	unwind_running(s);
	describe_allocator(s, 0, NULL, true);
	return EXIT_OK;
}

static int start(struct session *s)
{
	int ret = EXIT_OK;

	/* Before anything is launched: a command must not run untraced. */
	if (tracer__check_system())
		return EXIT_PRIVILEGE;
	if (open_targets(s))
		return EXIT_TARGET;
	if (open_tracer(s))
		return EXIT_FAILURE_RUNTIME;
	for (size_t i = 0; i < s->nr_targets && !ret; i++)
		ret = trace_target(s, s->targets[i]);
	if (!ret && s->opts->all)
		ret = trace_all(s);
	for (size_t i = 0; i < s->nr_targets && !ret; i++) {
		struct target *t = s->targets[i];

		if (target__resume(t))
			return EXIT_TARGET;
		/* A launched command's stops are the loop's to handle, its exit included. */
		if (!s->opts->argv && target__update(t) == TARGET_GONE) {
			pr_err("process %d exited while alloctrace attached", target__pid(t));
			return EXIT_TARGET;
		}
	}
	return ret;
}

/* Create every output file now: a bad path must fail before tracing starts. */
static int open_exporters(struct session *s)
{
	for (int kind = 0; kind <= EXPORT_HTML; kind++) {
		const char *path = s->opts->exports[kind];

		if (!path)
			continue;
		s->exporters[s->nr_exporters] = exporter__new(kind, path);
		if (!s->exporters[s->nr_exporters])
			return -errno;
		s->nr_exporters++;
	}
	return 0;
}

static int finish_exporters(struct session *s)
{
	int err = 0;

	for (size_t i = 0; i < s->nr_exporters; i++) {
		if (exporter__finish(s->exporters[i]))
			err = EXIT_FAILURE_RUNTIME;
	}
	return err;
}

static void session__close(struct session *s)
{
	for (size_t i = 0; i < s->nr_exporters; i++)
		exporter__free(s->exporters[i]);
	tracer__free(s->tracer);
	for (size_t i = 0; i < s->nr_targets; i++)
		target__free(s->targets[i]);
	free(s->targets);
	procs__release(&s->procs);
	filter__free(s->filter);
	report_writer__free(s->writer);
	free(s->frames);
	free(s->pending);
	for (int fd = 0, fds[] = { s->epfd, s->sigfd, s->timerfd, s->retry_fd }; fd < 4; fd++) {
		if (fds[fd] >= 0)
			close(fds[fd]);
	}
}

int session__run(const struct options *opts)
{
	struct session s = { .opts = opts, .epfd = -1, .sigfd = -1, .timerfd = -1, .retry_fd = -1 };
	int ret;

	s.multi = options__multi_proc(opts);
	s.mono_to_real = clock_seconds(CLOCK_REALTIME) - clock_seconds(CLOCK_MONOTONIC);
	procs__init(&s.procs, opts->interval / 2);
	s.writer = report_writer__new(opts->format, stdout);
	s.filter = filter__new(&opts->filter);
	if (!s.writer || !s.filter || block_signals(&s)) {
		pr_err("cannot set up: %s", strerror(errno));
		ret = EXIT_FAILURE_RUNTIME;
		goto out;
	}
	if (open_exporters(&s)) {
		ret = EXIT_USAGE;
		goto out;
	}
	ret = start(&s);
	if (ret)
		goto out;
	/* Blocks one by one when a filter, the threads or a data sample need them. */
	s.per_block = filter__per_block(s.filter) || opts->threads || opts->show_data ||
		      opts->exports[EXPORT_HTML] || opts->sample;
	if (setup_loop(&s) || run_loop(&s)) {
		pr_err("event loop failed: %s", strerror(errno));
		ret = EXIT_FAILURE_RUNTIME;
	}
	tracer__consume(s.tracer);
	if (!s.write_err && session__report(&s, true))
		ret = EXIT_FAILURE_RUNTIME;
	if (s.write_err && s.write_err != -EPIPE)
		ret = EXIT_FAILURE_RUNTIME;
	if (finish_exporters(&s) || s.failed)
		ret = EXIT_FAILURE_RUNTIME;
out:
	session__close(&s);
	return ret;
}
