// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "app/procs.h"
#include "proc/procfs.h"
#include "lib/util.h"

void procs__init(struct procs *ps, double min_gap)
{
	*ps = (struct procs){.min_gap = min_gap};
}

static void proc__free(struct proc *p)
{
	if (!p)
		return;
	profile__free(p->profile);
	history__free(p->history);
	symbolizer__free(p->syms);
	free(p->allocator);
	free(p);
}

void procs__release(struct procs *ps)
{
	for (size_t i = 0; i < ps->nr; i++)
		proc__free(ps->procs[i]);
	free(ps->procs);
	ps->procs = NULL;
	ps->nr = ps->cap = 0;
}

/* Where process @pid is, or would go: procs are kept by pid for the per-block pass. */
static size_t procs__slot(const struct procs *ps, pid_t pid)
{
	size_t lo = 0, hi = ps->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ps->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct proc *procs__find(const struct procs *ps, pid_t pid)
{
	size_t i = procs__slot(ps, pid);

	return i < ps->nr && ps->procs[i]->pid == pid ? ps->procs[i] : NULL;
}

struct proc *procs__add(struct procs *ps, pid_t pid, uint32_t gen)
{
	struct proc **procs, *p;
	size_t i;

	procs = array__grow(ps->procs, &ps->cap, ps->nr, sizeof(*procs));
	if (!procs)
		return NULL;
	ps->procs = procs;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->ns_pid = proc_ns_pid(pid);
	p->gen = gen;
	p->exit.status = -1;
	p->profile = profile__new();
	p->history = history__new(ps->min_gap);
	if (!p->profile || !p->history) {
		proc__free(p);
		errno = ENOMEM;
		return NULL;
	}
	i = procs__slot(ps, pid);
	memmove(&ps->procs[i + 1], &ps->procs[i], (ps->nr - i) * sizeof(*ps->procs));
	ps->procs[i] = p;
	ps->nr++;
	return p;
}

void procs__remove(struct procs *ps, size_t i)
{
	proc__free(ps->procs[i]);
	ps->nr--;
	memmove(&ps->procs[i], &ps->procs[i + 1], (ps->nr - i) * sizeof(*ps->procs));
}

int proc__new_image(struct procs *ps, struct proc *p, uint32_t gen)
{
	struct history *h = history__new(ps->min_gap);

	if (!h)
		return -ENOMEM;
	history__free(p->history);
	p->history = h;
	p->gen = gen;
	/* The new program's mappings are others: read them afresh. */
	symbolizer__free(p->syms);
	p->syms = NULL;
	p->syms_failed = false;
	free(p->allocator);
	p->allocator = NULL;
	return 0;
}

struct symbolizer *proc__symbolizer(struct procs *ps, struct proc *p, bool refresh)
{
	struct proc *parent;

	if (p->syms) {
		if (refresh)
			symbolizer__refresh(p->syms);
		return p->syms;
	}
	if (!p->syms_failed && !p->exit.exited)
		p->syms = symbolizer__new(p->pid);
	if (p->syms)
		return p->syms;
	p->syms_failed = true;
	/* A copy of its parent's address space, unless it ran another program. */
	parent = p->parent && !p->execed ? procs__find(ps, p->parent) : NULL;
	return parent && parent != p ? proc__symbolizer(ps, parent, false) : NULL;
}
