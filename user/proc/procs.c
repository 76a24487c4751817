// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "proc/procs.h"
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

void proc_thread_name(pid_t pid, uint32_t tid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, size, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

pid_t proc_ns_pid(pid_t pid)
{
	char path[64], line[256], *last;
	pid_t ns_pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		/* One pid per namespace, outermost first: more than one is a namespace of its own.
		 */
		last = strrchr(line, '\t');
		if (last && last != line + 6)
			ns_pid = atoi(last + 1);
		break;
	}
	fclose(f);
	return ns_pid;
}

uint64_t proc_rss(pid_t pid)
{
	unsigned long long pages = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%*u %llu", &pages) != 1)
		pages = 0;
	fclose(f);
	return pages * sysconf(_SC_PAGESIZE);
}

long proc_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return n < 0 ? -errno : n;
}
