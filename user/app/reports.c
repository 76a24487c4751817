// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "app/reports.h"
#include "app/collect.h"
#include "app/leaks.h"
#include "lib/log.h"
#include "probe/allocator.h"
#include "app/procs.h"
#include "proc/procfs.h"
#include "report/assemble.h"
#include "symbolize/symbolize.h"

/* Where one process's frames come from: its symbolizer and its allocator. */
struct frame_source {
	const struct session *s;
	struct proc *proc;
	struct symbolizer *syms; /* NULL: addresses alone */
};

/* The allocator @p's stacks went through: its own, or with --all the one probed for all. */
static const struct allocator *allocator_of(const struct session *s, const struct proc *p)
{
	return p && p->allocator ? p->allocator : s->all_alloc;
}

static bool in_allocator(const struct allocator *a, const struct frame_info *f)
{
	for (size_t i = 0; i < a->nr_objs && f->module; i++) {
		if (!strcmp(f->module, a->objs[i].name))
			return true;
	}
	return false;
}

/*
 * --big-only stacks start in the C library: in its mmap, mremap or brk
 * (taken at the system call), or where they return to (taken by their
 * return probe), then in the allocator (glibc's own, or jemalloc's calling
 * glibc's mmap); both are @a's objects. What a reader wants first is the
 * code that asked for memory: drop the run of frames in @a's objects the
 * stack starts with (none when the program called mmap itself). A stack
 * that is nothing but it is kept whole.
 */
static size_t drop_allocator_frames(const struct allocator *a, struct frame_info *f, size_t n)
{
	size_t i = 0;

	while (i < n && in_allocator(a, &f[i]))
		i++;
	if (i == n)
		return n;
	memmove(f, &f[i], (n - i) * sizeof(*f));
	return n - i;
}

static size_t stack_frames(void *ctx, const __u64 *ips, uint32_t nr, struct frame_info *out)
{
	struct frame_source *fs = ctx;
	const struct allocator *a = allocator_of(fs->s, fs->proc);
	size_t n = 0;

	for (uint32_t i = 0; i < nr; i++) {
		if (fs->syms) {
			n += symbolizer__resolve(fs->syms, ips[i], out + n, REPORT_MAX_INLINE);
			continue;
		}
		/* A process whose mappings could not be read: the address alone. */
		out[n++] = (struct frame_info){.addr = ips[i]};
	}
	/* A page is touched where the allocator hands it out or where memset fills it. */
	if (a &&
	    (fs->s->opts->alloc.big_only || (fs->s->opts->growth && n && in_allocator(a, out))))
		return drop_allocator_frames(a, out, n);
	return n;
}

static void thread_name(void *ctx, uint32_t tid, char *buf, size_t size)
{
	struct frame_source *fs = ctx;

	proc_thread_name(fs->proc->pid, tid, buf, size);
}

static long read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct frame_source *fs = ctx;

	/* A process gone may have left its pid to another, whose memory is not ours to show. */
	if (fs->proc->exit.exited)
		return 0;
	return proc_read_mem(fs->proc->pid, addr, buf, len);
}

void reports__note_write_error(struct session *s, int err)
{
	if (!err || s->write_err)
		return;
	s->write_err = err;
	s->done = true;
	/* A reader that went away (| head) is no error of ours to report. */
	if (err != -EPIPE)
		pr_err("cannot write the report: %s", strerror(-err));
}

void on_oom(void *ctx, const struct task_event *ev)
{
	struct session *s = ctx;
	struct proc *p = collect__proc_seen(s, ev->tgid);

	if (p)
		p->oom_killed = true;
	pr_info("the kernel's OOM killer chose pid %u: its %s report follows", ev->tgid,
		s->multi ? "last" : "final");
}

void on_big_alloc(void *ctx, const struct big_alloc_event *ev)
{
	struct session *s = ctx;
	struct proc *p = collect__proc_seen(s, ev->tgid);
	/* The loader may have mapped more since the last report. */
	struct frame_source fs = {
	    .s = s, .proc = p, .syms = p ? proc__symbolizer(&s->procs, p, true) : NULL};
	uint32_t nr = ev->stack.nr < MAX_STACK_DEPTH ? ev->stack.nr : MAX_STACK_DEPTH;
	/* The alert's own frames, gone with it: no report's are touched. */
	struct frame_info *frames = calloc((size_t)nr * REPORT_MAX_INLINE + 1, sizeof(*frames));
	struct big_alloc alert = {
	    .time = ev->time_ns / 1e9 + s->mono_to_real,
	    .pid = ev->tgid,
	    .ns_pid = p ? p->ns_pid : proc_ns_pid(ev->tgid),
	    .tid = ev->tid,
	    .func = alloc_func_name(ev->func),
	    .size = ev->size,
	    .addr = ev->addr,
	    .stack_flags = ev->stack.flags,
	    .frames = frames,
	};

	if (!frames)
		return;
	alert.nr_frames = stack_frames(&fs, ev->stack.ips, nr, frames);
	metrics_server__big_alloc(s->metrics, ev->tgid);
	reports__note_write_error(s, report_writer__big_alloc(s->writer, &alert));
	/* Exporters say what went wrong themselves, once. */
	for (size_t i = 0; i < s->nr_exporters; i++)
		exporter__big_alloc(s->exporters[i], &alert);
	free(frames);
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

/* What the live report leaves out that exporters see. */
static void cut_for_writer(const struct session *s, struct report *r)
{
	if (s->opts->top && r->nr_stacks > s->opts->top)
		r->nr_stacks = s->opts->top;
	if (!s->opts->threads)
		r->nr_threads = 0;
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
	metrics_server__report(s->metrics, r);
	reports__note_write_error(s, report_writer__report(s->writer, r));
}

/* The report on process @p into @r, from the parts it returns (NULL: errno). */
static struct report_parts *report_proc(struct session *s, struct proc *p, struct report *r)
{
	struct frame_source fs = {.s = s, .proc = p, .syms = proc__symbolizer(&s->procs, p, false)};
	struct assemble_source src = {
	    .frames = stack_frames,
	    .thread_name = thread_name,
	    .read_mem = read_mem,
	    .ctx = &fs,
	};
	struct assemble_opts o = {
	    /* Exporters see every stack; the live report the top ones. */
	    .top = s->nr_exporters ? 0 : s->opts->top,
	    .data_top = s->opts->top,
	    .show_data = s->opts->show_data,
	    .threads = s->per_block && (s->opts->threads || s->nr_exporters),
	    .peak = r->final,
	    .leaks = leaks__for_report(s, p),
	};

	r->pid = p->pid;
	r->ns_pid = p->ns_pid;
	r->comm = p->comm;
	r->parent = p->parent;
	r->exit = p->exit;
	r->exit.oom_killed = p->oom_killed;
	r->rss_bytes = p->exit.exited ? 0 : proc_rss(p->pid);
	/* Assembly is done with the source and options on this stack. */
	return report_parts__assemble(p->profile, p->history, &o, &src, r);
}

/* The run's verdicts: every listed process's that has them. */
static void sum_leak_checks(struct report_leak_check *run, const struct report *procs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct report_leak_check *lc = procs[i].leak_check;

		if (!lc || lc->error)
			continue;
		run->processes++;
		run->pause_ms += lc->pause_ms;
		run->bytes_scanned += lc->bytes_scanned;
		run->assumptions |= lc->assumptions;
		run->threads += lc->threads;
		run->heuristics |= lc->heuristics;
		for (int c = 0; c < LEAK_CLASSES; c++) {
			run->class_bytes[c] += lc->class_bytes[c];
			run->class_allocs[c] += lc->class_allocs[c];
		}
		for (int h = 0; h < LEAK_HEURISTICS; h++) {
			run->heur_bytes[h] += lc->heur_bytes[h];
			run->heur_allocs[h] += lc->heur_allocs[h];
		}
	}
}

/* Build the processes' reports into @r and write them. 0 or -errno. */
static int report_procs(struct session *s, struct report *r, struct proc **list, size_t n)
{
	struct report_leak_check run = {0};
	struct report *procs = calloc(n + 1, sizeof(*procs));
	struct report_parts **parts = calloc(n + 1, sizeof(*parts));
	int err = procs && parts ? 0 : -ENOMEM;
	size_t built = 0;

	/* Exporters see every process; without them only the listed ones are built. */
	if (!s->nr_exporters && s->opts->top_procs && n > s->opts->top_procs)
		n = s->opts->top_procs;
	for (; built < n && !err; built++) {
		procs[built] = (struct report){
		    .final = r->final,
		    .time = r->time,
		    .interval = r->interval,
		    .filter = r->filter,
		    .sample_rate = r->sample_rate,
		    .big_only = r->big_only,
		    .growth = r->growth,
		};
		parts[built] = report_proc(s, list[built], &procs[built]);
		err = parts[built] ? 0 : -errno;
	}
	if (!err && r->per_process) {
		r->procs = procs;
		r->nr_procs = n;
		sum_leak_checks(&run, procs, n);
		if (run.processes)
			r->leak_check = &run;
	} else if (!err) {
		*r = procs[0];
	}
	if (!err)
		write_report(s, r);
	for (size_t i = 0; parts && i < built; i++)
		report_parts__free(parts[i]);
	free(parts);
	free(procs);
	return err;
}

int reports__write(struct session *s, bool final)
{
	struct report r = {
	    .final = final,
	    .time = clock_seconds(CLOCK_REALTIME),
	    .interval = s->opts->interval,
	    .filter = filter__describe(s->filter),
	    .sample_rate = s->opts->sample,
	    .big_only = s->opts->alloc.big_only ? s->opts->big : 0,
	    .growth = s->opts->growth,
	    .per_process = s->multi,
	    .totals = &s->totals,
	    .exited = &s->exited,
	};
	struct proc **list;
	int err;

	err = collect__run(s, r.time);
	if (!err)
		err = tracer__warn_stepped(s->tracer);
	if (err)
		return err;
	r.nr_procs_total = listed_procs(s, &list);
	err = list ? report_procs(s, &r, list, r.nr_procs_total) : -ENOMEM;
	free(list);
	leaks__forget(s, false);
	s->reports++;
	if (s->multi)
		collect__forget_gone(s);
	return err;
}
