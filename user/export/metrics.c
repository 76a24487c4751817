// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Prometheus' text exposition format: each family is one "# TYPE" line
 * and all its samples, every process's, before the next family starts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "export/metrics.h"
#include "lib/util.h"

struct metrics_proc {
	int pid;
	bool has_prev; /* prev_* hold the previous report's numbers */
	uint64_t prev_bytes;
	double prev_time;
	uint64_t big_allocs;
	unsigned int round; /* the rendering that last listed it, or the next */
};

struct metrics {
	unsigned int top;
	struct metrics_proc *procs;
	size_t nr, cap;
	unsigned int round; /* renderings so far */
};

struct metrics *metrics__new(unsigned int top)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (m)
		m->top = !top || top > METRICS_MAX_TOP ? METRICS_MAX_TOP : top;
	return m;
}

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	free(m->procs);
	free(m);
}

static struct metrics_proc *state_of(struct metrics *m, int pid)
{
	struct metrics_proc *grown;

	for (size_t i = 0; i < m->nr; i++) {
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	}
	grown = array__grow(m->procs, &m->cap, m->nr, sizeof(*grown));
	if (!grown)
		return NULL;
	m->procs = grown;
	m->procs[m->nr] = (struct metrics_proc){.pid = pid, .round = m->round + 1};
	return &m->procs[m->nr++];
}

int metrics__big_alloc(struct metrics *m, int pid)
{
	struct metrics_proc *ps = state_of(m, pid);

	if (!ps)
		return -ENOMEM;
	ps->big_allocs++;
	return 0;
}

/*
 * Label values from the target (names, paths) in printable ASCII: the
 * format wants \ " and newline escaped and the whole in UTF-8, which
 * names from a process need not be.
 */
static void label(FILE *f, const char *name, const char *value, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	for (const char *c = value ? value : ""; *c; c++) {
		if (*c == '\\' || *c == '"')
			fprintf(f, "\\%c", *c);
		else
			fputc(*c >= 0x20 && *c < 0x7f ? *c : '?', f);
	}
	fputc('"', f);
}

static void proc_labels(FILE *f, const struct report *p)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", p->pid);
	label(f, "pid", pid, true);
	if (p->ns_pid) {
		snprintf(pid, sizeof(pid), "%d", p->ns_pid);
		label(f, "ns_pid", pid, false);
	}
	label(f, "comm", p->comm, false);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The processes @r lists: its own, or each of several. */
struct proc_list {
	const struct report *procs;
	size_t nr;
	struct metrics_proc **states;
};

/* One number of each process's totals (or state) as one family. */
struct proc_metric {
	const char *name;
	const char *type;
	const char *help;
	uint64_t (*value)(const struct report *p, const struct metrics_proc *ps);
};

static uint64_t outstanding_bytes(const struct report *p, const struct metrics_proc *ps)
{
	return p->totals->outstanding_bytes;
}

static uint64_t outstanding_blocks(const struct report *p, const struct metrics_proc *ps)
{
	return p->totals->outstanding_allocs;
}

static uint64_t allocs(const struct report *p, const struct metrics_proc *ps)
{
	return p->totals->allocs;
}

static uint64_t frees(const struct report *p, const struct metrics_proc *ps)
{
	return p->totals->frees;
}

static uint64_t big_allocs(const struct report *p, const struct metrics_proc *ps)
{
	return ps->big_allocs;
}

static uint64_t lost(const struct report *p, const struct metrics_proc *ps)
{
	return p->totals->lost;
}

static const struct proc_metric proc_metrics[] = {
    {"alloctrace_outstanding_bytes", "gauge", "Bytes allocated and not freed.", outstanding_bytes},
    {"alloctrace_outstanding_blocks", "gauge", "Blocks allocated and not freed.",
     outstanding_blocks},
    {"alloctrace_allocs_total", "counter", "Allocation calls since tracing began.", allocs},
    {"alloctrace_frees_total", "counter", "Releases of tracked blocks since tracing began.", frees},
    {"alloctrace_big_allocs_total", "counter",
     "Allocations of at least --big bytes seen since tracing began.", big_allocs},
    {"alloctrace_lost_total", "counter",
     "Calls or blocks missing from the numbers (the sum of the lost_ counters).", lost},
};

static void write_proc_metric(FILE *f, const struct proc_list *l, const struct proc_metric *pm)
{
	family(f, pm->name, pm->type, pm->help);
	for (size_t i = 0; i < l->nr; i++) {
		fprintf(f, "%s{", pm->name);
		proc_labels(f, &l->procs[i]);
		fprintf(f, "} %" PRIu64 "\n", pm->value(&l->procs[i], l->states[i]));
	}
}

/* Every counter but allocs and frees, which have their families above. */
static void write_counters(FILE *f, const struct proc_list *l)
{
	char name[64];

	for (int c = 0; c < CNT_MAX; c++) {
		if (c == CNT_ALLOCS || c == CNT_FREES)
			continue;
		snprintf(name, sizeof(name), "alloctrace_%s_total", counter_name(c));
		family(f, name, "counter", "A counter of the JSON report's \"counters\".");
		for (size_t i = 0; i < l->nr; i++) {
			fprintf(f, "%s{", name);
			proc_labels(f, &l->procs[i]);
			fprintf(f, "} %" PRIu64 "\n", l->procs[i].totals->counters[c]);
		}
	}
}

/* Bytes per second since the previous report, for the processes it listed. */
static void write_growth(FILE *f, const struct proc_list *l)
{
	const char *name = "alloctrace_growth_bytes_per_second";

	family(f, name, "gauge", "Change of the outstanding bytes since the previous report.");
	for (size_t i = 0; i < l->nr; i++) {
		const struct report *p = &l->procs[i];
		const struct metrics_proc *ps = l->states[i];

		if (!ps->has_prev || p->time <= ps->prev_time)
			continue;
		fprintf(f, "%s{", name);
		proc_labels(f, p);
		fprintf(f, "} %.15g\n",
			((double)p->totals->outstanding_bytes - ps->prev_bytes) /
			    (p->time - ps->prev_time));
	}
}

static void stack_sample(FILE *f, const char *name, const struct report *p, const char *id,
			 const struct frame_info *inner, uint64_t value)
{
	fprintf(f, "%s{", name);
	proc_labels(f, p);
	label(f, "stack", id, false);
	label(f, "function", inner ? inner->function ? inner->function : "[unknown]" : "", false);
	label(f, "module", inner ? inner->module : "", false);
	fprintf(f, "} %" PRIu64 "\n", value);
}

/* The top stacks of each process by @bytes or blocks, the rest as "other". */
static void write_stacks(FILE *f, const struct metrics *m, const struct proc_list *l, bool bytes)
{
	const char *name =
	    bytes ? "alloctrace_stack_outstanding_bytes" : "alloctrace_stack_outstanding_blocks";
	static const struct frame_info lost_stack = {.function = "[stack unknown]"};
	char id[24];

	family(f, name, "gauge",
	       bytes ? "Bytes held through a stack." : "Blocks held through a stack.");
	for (size_t i = 0; i < l->nr; i++) {
		const struct report *p = &l->procs[i];
		uint64_t rest =
		    bytes ? p->totals->outstanding_bytes : p->totals->outstanding_allocs;

		for (size_t j = 0; j < p->nr_stacks && j < m->top; j++) {
			const struct report_stack *s = &p->stacks[j];
			uint64_t v = bytes ? s->outstanding_bytes : s->outstanding_allocs;

			snprintf(id, sizeof(id), "%016" PRIx64, s->stack_id);
			stack_sample(f, name, p, id, s->nr_frames ? &s->frames[0] : &lost_stack, v);
			rest -= v < rest ? v : rest;
		}
		stack_sample(f, name, p, "other", NULL, rest);
	}
}

/* States for the processes of @l, and the others forgotten. 0 or -ENOMEM. */
static int match_states(struct metrics *m, struct proc_list *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nr; i++) {
		l->states[i] = state_of(m, l->procs[i].pid);
		if (!l->states[i])
			return -ENOMEM;
		l->states[i]->round = m->round + 1;
	}
	for (size_t i = 0; i < m->nr; i++) {
		if (m->procs[i].round == m->round + 1)
			m->procs[n++] = m->procs[i];
	}
	m->nr = n;
	/* Pointers again: the array was compacted. */
	for (size_t i = 0; i < l->nr; i++)
		l->states[i] = state_of(m, l->procs[i].pid);
	return 0;
}

int metrics__render(struct metrics *m, const struct report *r, FILE *f)
{
	struct proc_list l = {
	    .procs = r->per_process ? r->procs : r,
	    .nr = r->per_process ? r->nr_procs : 1,
	};
	int err;

	l.states = calloc(l.nr + 1, sizeof(*l.states));
	err = l.states ? match_states(m, &l) : -ENOMEM;
	if (err) {
		free(l.states);
		return err;
	}
	for (size_t i = 0; i < sizeof(proc_metrics) / sizeof(proc_metrics[0]); i++)
		write_proc_metric(f, &l, &proc_metrics[i]);
	write_growth(f, &l);
	write_counters(f, &l);
	write_stacks(f, m, &l, true);
	write_stacks(f, m, &l, false);
	for (size_t i = 0; i < l.nr; i++) {
		l.states[i]->has_prev = true;
		l.states[i]->prev_bytes = l.procs[i].totals->outstanding_bytes;
		l.states[i]->prev_time = l.procs[i].time;
	}
	m->round++;
	free(l.states);
	return 0;
}
