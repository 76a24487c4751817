// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "app/execs.h"
#include "app/collect.h"
#include "proc/procfs.h"
#include "lib/log.h"
#include "probe/allocator.h"

/*
 * A process traced with -p that ran execve is looked at every RETRY_MS
 * until its new program has mapped an allocator, for EXEC_PATIENCE seconds
 * at most: a loaded machine can take seconds to page in the loader.
 */
#define RETRY_MS      20
#define EXEC_PATIENCE 10.0

/* 0: found into @a; -EAGAIN: none mapped yet, one may come; else -errno. */
static int look(const struct session *s, pid_t pid, struct allocator *a)
{
	int err = allocator__find(pid, &s->opts->alloc, a);

	/* A static program maps nothing more: none will come. */
	return err == -ENOENT && !a->final ? -EAGAIN : err;
}

struct alloc_search {
	const struct session *s;
	pid_t pid;
	struct allocator *a;
};

/* look() in target__run_until()'s terms: > 0 found, 0 step on, < 0 stop. */
static int found(void *ctx)
{
	struct alloc_search *as = ctx;
	int err = look(as->s, as->pid, as->a);

	return err == -EAGAIN ? 0 : err ? err : 1;
}

/* look(), a @launched command being run under ptrace until it maps one. */
static int wait_allocator(const struct session *s, pid_t pid, struct target *launched,
			  struct allocator *a)
{
	struct alloc_search as = {.s = s, .pid = pid, .a = a};

	return launched ? target__run_until(launched, found, &as) : look(s, pid, a);
}

static void no_allocator(pid_t pid, const char *comm, int err)
{
	/* Its mappings went with it: that is no sign of a static program. */
	if (err == -ENOENT && kill(pid, 0) && errno == ESRCH)
		err = -ESRCH;
	if (err == -ESRCH)
		pr_err("process %d (%s) exited before alloctrace could attach", pid, comm);
	else if (err == -EINVAL)
		; /* said already: a bad --allocator, mappings not readable */
	else if (err)
		pr_err("no allocator (malloc and free) found in process %d (%s): "
		       "is it static and stripped, or not using malloc?",
		       pid, comm);
}

/* Find @pid's allocator into @a now (none yet is none). 0 or -errno, said. */
static int find_allocator(const struct session *s, pid_t pid, const char *comm,
			  struct target *launched, struct allocator *a)
{
	int err = wait_allocator(s, pid, launched, a);

	if (err == -EAGAIN)
		err = -ENOENT;
	no_allocator(pid, comm, err);
	return err;
}

struct chosen_text {
	char s[PATH_MAX + 64];
};

/* " named 'NAME' in cgroup PATH", as much as --comm and --cgroup say. */
static struct chosen_text chosen(const struct proc_choice *c)
{
	struct chosen_text t = {""};
	int len = 0;

	if (c->comm)
		len = snprintf(t.s, sizeof(t.s), " named '%s'", c->comm);
	if (c->cgroup)
		snprintf(t.s + len, sizeof(t.s) - len, " in cgroup %s", c->cgroup);
	return t;
}

/*
 * Which allocator is probed, with the @probes attached for it; at
 * --verbose only for processes not named.
 */
static void describe_allocator(const struct session *s, const struct allocator *a, pid_t pid,
			       const char *comm, bool named, int probes)
{
	void (*say)(const char *fmt, ...) = named ? pr_info : pr_debug;
	char others[2 * PATH_MAX + 16] = "";
	size_t len = 0;

	pr_debug("allocator: %s (%s)", a->objs[0].name, a->why);
	for (size_t i = 1; i < a->nr_objs && len < sizeof(others); i++) {
		pr_debug("also probed: %s", a->objs[i].name);
		len += snprintf(others + len, sizeof(others) - len, " and %s", a->objs[i].name);
	}
	if (s->opts->growth && pid)
		say("tracing pid %d (%s): the pages it touches first, by stack (page faults), "
		    "no probes in %s",
		    pid, comm, a->objs[0].name);
	else if (s->opts->growth)
		say("tracing every process%s: the pages each touches first, by stack (page "
		    "faults), "
		    "no probes",
		    chosen(&s->opts->choice).s);
	else if (s->opts->alloc.big_only && pid && allocator__probes(a, FUNC_MMAP))
		say("tracing pid %d (%s): blocks of %llu bytes or more from mmap, mremap and brk, "
		    "by probes on the C library's, none in the allocator in %s",
		    pid, comm, (unsigned long long)s->opts->big, a->objs[0].name);
	else if (s->opts->alloc.big_only && pid)
		say("tracing pid %d (%s): blocks of %llu bytes or more from mmap, mremap and brk, "
		    "at the system call, no probes in %s",
		    pid, comm, (unsigned long long)s->opts->big, a->objs[0].name);
	else if (s->opts->alloc.big_only)
		say("tracing every process: blocks of %llu bytes or more from mmap, mremap and brk",
		    (unsigned long long)s->opts->big);
	else if (pid && !probes)
		say("tracing pid %d (%s): the probes in %s%s, there for every process already", pid,
		    comm, a->objs[0].name, others);
	else if (pid)
		say("tracing pid %d (%s): %d probes in %s%s", pid, comm, probes, a->objs[0].name,
		    others);
	else
		say("tracing every process%s that calls the allocator in %s%s: %d probes",
		    chosen(&s->opts->choice).s, a->objs[0].name, others, probes);
}

/*
 * Probe the allocator found for @p once its unwind tables are made: no
 * allocation is walked without them. Its dynamic loader is watched first,
 * so that what it maps after the tables were read is not missed. With
 * several processes it is counted from then on (@add, its first probing),
 * not before: probes another process put in a library they share (--comm
 * and --cgroup probe every process) would walk its calls without tables.
 * Returns how many probes were attached for it, or -errno.
 */
static int probe_allocator(struct session *s, struct proc *p, bool add)
{
	int err;

	tracer__watch_linkmap(s->tracer, p->pid);
	err = tracer__unwind_process(s->tracer, p->pid);
	if (!err && add) {
		err = tracer__add_proc(s->tracer, p->pid, p->comm);
		if (err)
			pr_err("cannot set up tracing pid %d: %s", p->pid, strerror(-err));
	}
	return err ? err : tracer__attach(s->tracer, p->allocator, p->pid);
}

/* @p's own allocator to fill, made on first use. */
static struct allocator *allocator_slot(struct proc *p)
{
	if (!p->allocator)
		p->allocator = calloc(1, sizeof(*p->allocator));
	return p->allocator;
}

static void arm_retry(struct session *s)
{
	bool pending = false;
	struct timespec tick;
	struct itimerspec its;

	for (size_t i = 0; i < s->procs.nr && !pending; i++)
		pending = s->procs.procs[i]->trace == PROC_ALLOC_PENDING;
	tick = (struct timespec){.tv_nsec = pending ? RETRY_MS * 1000000L : 0};
	its = (struct itimerspec){.it_value = tick, .it_interval = tick};
	timerfd_settime(s->retry_fd, 0, &its, NULL);
}

/* The event of a look for @p's allocator that gave @err (look()). */
static struct exec_event looked(const struct session *s, const struct proc *p, int err)
{
	return (struct exec_event){
	    .kind = EXEC_EV_LOOKED,
	    .err = err,
	    .gone = err == -EAGAIN && kill(p->pid, 0) && errno == ESRCH,
	    .late = err == -EAGAIN && clock_seconds(CLOCK_MONOTONIC) >= p->exec_deadline,
	    .named = p->named,
	    .multi = s->multi,
	};
}

/*
 * Follow @p (NULL if its record could not be kept) through its exec from
 * @ev on: each step exec_fsm__step() decides, performed here, until one
 * asks neither a look (of @launched, if run here) nor a probe.
 */
static void exec_run(struct session *s, struct proc *p, pid_t pid, struct target *launched,
		     struct exec_event ev)
{
	struct exec_step st;
	int probes = 0;

	for (;;) {
		/* Without a record, the only event is its execve, whatever the state. */
		st = exec_fsm__step(p ? p->trace : PROC_EXEC_SEEN, &ev);
		if (p)
			p->trace = st.trace;
		if (st.acts & EXEC_ACT_TELL_NONE)
			no_allocator(pid, p->comm, st.err);
		if (st.acts & EXEC_ACT_GIVE_UP) {
			pr_err("cannot trace pid %d after its exec: %s", pid, strerror(-st.err));
			s->failed = true;
			s->done = true;
		}
		if (st.acts & EXEC_ACT_DESCRIBE) {
			describe_allocator(s, p->allocator, pid, p->comm, p->named, probes);
			/* Its new mappings, while it lives (a launched command is still held). */
			proc__symbolizer(&s->procs, p, true);
		}
		if (st.acts & EXEC_ACT_LOOK) {
			ev = looked(s, p, wait_allocator(s, pid, launched, p->allocator));
		} else if (st.acts & EXEC_ACT_PROBE) {
			probes = probe_allocator(s, p, false);
			ev = (struct exec_event){
			    .kind = EXEC_EV_PROBED,
			    .err = probes < 0 ? probes : 0,
			    .multi = s->multi,
			};
		} else {
			return;
		}
	}
}

void execs__retry(struct session *s)
{
	for (size_t i = 0; i < s->procs.nr; i++) {
		struct proc *p = s->procs.procs[i];

		if (p->trace == PROC_ALLOC_PENDING)
			exec_run(s, p, p->pid, NULL, looked(s, p, look(s, p->pid, p->allocator)));
	}
	arm_retry(s);
}

/* Process @pid's record, as its entry in the maps is now, with room for its allocator. */
static struct proc *entry_proc(struct session *s, pid_t pid, int *err)
{
	struct proc_state st;
	struct proc *p;

	*err = tracer__proc_state(s->tracer, pid, &st);
	if (!*err)
		*err = collect__update_proc(s, pid, &st);
	p = *err ? NULL : procs__find(&s->procs, pid);
	if (!*err && (!p || !allocator_slot(p)))
		*err = -ENOMEM;
	return *err ? NULL : p;
}

/*
 * With one process its old numbers go, its old address space with them;
 * with several the BPF side gave it a new image number, which leaves the
 * old ones behind. Returns @pid's process, or NULL with *@err set.
 */
static struct proc *forget_image(struct session *s, pid_t pid, int *err)
{
	struct proc *p = procs__find(&s->procs, pid);

	/* With several, its record follows the new image now, so its mappings are read in time. */
	if (s->multi)
		return entry_proc(s, pid, err);
	*err = tracer__reset(s->tracer);
	if (!*err && p)
		*err = proc__new_image(&s->procs, p, 0);
	if (!*err && (!p || !allocator_slot(p)))
		*err = -ENOMEM;
	return *err ? NULL : p;
}

/*
 * A launched command (@t, held at its exec) is stepped under ptrace until
 * its new program maps an allocator; another process is looked at until
 * it does. Processes not named on the command line (@t NULL) are talked
 * about at --verbose only: a shell runs many programs.
 */
void execs__reattach(struct session *s, pid_t pid, struct target *t)
{
	void (*say)(const char *fmt, ...) = t ? pr_info : pr_debug;
	struct target *launched = s->opts->argv ? t : NULL;
	struct proc *p;
	char comm[32];
	int err;

	if (t) {
		target__refresh_comm(t);
		snprintf(comm, sizeof(comm), "%s", target__comm(t));
	} else {
		proc_thread_name(pid, pid, comm, sizeof(comm));
	}
	say("pid %d became '%s': tracing the new program", pid, comm);
	p = forget_image(s, pid, &err);
	if (p) {
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
		p->named = t;
		p->exec_deadline = clock_seconds(CLOCK_MONOTONIC) + EXEC_PATIENCE;
	}
	exec_run(s, p, pid, launched,
		 (struct exec_event){.kind = EXEC_EV_EXECVE, .err = err, .multi = s->multi});
	arm_retry(s);
	if (launched && !s->done)
		target__resume(launched);
}

static struct target *target_of(const struct session *s, pid_t pid)
{
	for (size_t i = 0; i < s->nr_targets; i++) {
		if (target__pid(s->targets[i]) == pid)
			return s->targets[i];
	}
	return NULL;
}

/* A launched command's exec is handled at its ptrace stop, before it runs on. */
void on_exec(void *ctx, const struct task_event *ev)
{
	struct session *s = ctx;
	struct target *t = target_of(s, ev->tgid);

	if (!(s->opts->argv && t))
		execs__reattach(s, ev->tgid, t);
}

/*
 * Trace process @pid (@comm) from now on: its entry, its allocator probed,
 * its mappings read while they are there. One named on the command line
 * (@launched if it is run here) must be, and why not is said; one that
 * --cgroup or --comm finds running is left alone if it cannot be (static,
 * gone). 0 or an exit code.
 */
static int attach_proc(struct session *s, pid_t pid, const char *comm, bool named,
		       struct target *launched)
{
	struct proc *p = procs__add(&s->procs, pid, 0);
	int err, probes;

	if (!p || !allocator_slot(p)) {
		pr_err("cannot set up tracing pid %d: %s", pid, strerror(errno));
		return EXIT_FAILURE_RUNTIME;
	}
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->named = named;
	if (launched) {
		/* Its thread is ours to hold while its loader's new objects get tables. */
		target__set_hold_signal(launched, LINKMAP_HOLD_SIGNAL);
		tracer__hold_launched(s->tracer, pid);
	}
	err = named ? find_allocator(s, pid, comm, launched, p->allocator)
		    : look(s, pid, p->allocator);
	if (err)
		return EXIT_TARGET;
	probes = probe_allocator(s, p, s->multi);
	if (probes < 0)
		return probes == -ESRCH ? EXIT_TARGET : EXIT_FAILURE_RUNTIME;
	if (!proc__symbolizer(&s->procs, p, false) && named) {
		pr_err("cannot read the mappings of process %d: %s", pid, strerror(errno));
		return EXIT_TARGET;
	}
	describe_allocator(s, p->allocator, pid, comm, named, probes);
	return EXIT_OK;
}

int execs__attach(struct session *s, struct target *t)
{
	return attach_proc(s, target__pid(t), target__comm(t), true, s->opts->argv ? t : NULL);
}

/*
 * --all: the processes running now get their unwind tables at once, so
 * that the stacks of their first allocations are whole too; the ones that
 * start later ask for theirs as they first allocate. Those --cgroup or
 * --comm chooses are attached as -p would, their allocators probed (a
 * container's C library is not alloctrace's) and their mappings read: one
 * that leaks and dies before the next report still has its stacks named.
 */
static int prepare_running(void *ctx, pid_t pid)
{
	struct session *s = ctx;
	char comm[32];

	if (!proc_choice__narrows(&s->opts->choice)) {
		tracer__unwind_process(s->tracer, pid);
		return 0;
	}
	proc_thread_name(pid, pid, comm, sizeof(comm));
	if (attach_proc(s, pid, comm, false, NULL))
		pr_debug("process %d (%s) chosen but not attached", pid, comm);
	return 0;
}

/* alloctrace's own allocator, which is every dynamic program's C library. */
int execs__attach_all(struct session *s)
{
	int probes;

	s->all_alloc = calloc(1, sizeof(*s->all_alloc));
	if (!s->all_alloc) {
		pr_err("cannot set up tracing every process: %s", strerror(errno));
		return EXIT_FAILURE_RUNTIME;
	}
	if (find_allocator(s, getpid(), "alloctrace", NULL, s->all_alloc))
		return EXIT_TARGET;
	probes = tracer__attach(s->tracer, s->all_alloc, -1);
	if (probes < 0)
		return EXIT_FAILURE_RUNTIME;
	proc_choice__for_each(&s->opts->choice, getpid(), prepare_running, s);
	describe_allocator(s, s->all_alloc, 0, NULL, true, probes);
	return EXIT_OK;
}

/* @path starting with @from starts with @to instead. */
static void rebase_path(char *path, size_t size, const char *from, const char *to)
{
	char rest[PATH_MAX];

	if (strncmp(path, from, strlen(from)))
		return;
	snprintf(rest, sizeof(rest), "%s", path + strlen(from));
	snprintf(path, size, "%s%s", to, rest);
}

/*
 * @a, its parent's allocator, named through child @pid's /proc entry:
 * false when a name is gone. The parent's objects were named by the
 * map_files range each had when it was found, and ld.so may split that
 * range afterwards (arm64's 64 KiB-aligned segments on 4 KiB pages: the
 * gap between two is made PROT_NONE), leaving no entry of that name.
 */
static bool inherit_allocator(struct allocator *a, pid_t pid, pid_t parent)
{
	char from[32], to[32];

	snprintf(from, sizeof(from), "/proc/%d/", parent);
	snprintf(to, sizeof(to), "/proc/%d/", pid);
	for (size_t i = 0; i < a->nr_objs; i++) {
		rebase_path(a->objs[i].path, sizeof(a->objs[i].path), from, to);
		if (access(a->objs[i].path, F_OK))
			return false;
	}
	return true;
}

/*
 * --follow-forks: @pid, a child of @parent that has not run yet (held at
 * its first ptrace stop), gets its own probes on its parent's allocator:
 * the same files at the same addresses, named through its own /proc
 * entry, or found again when those names are gone. Its unwind tables it
 * inherited at the fork (the BPF side).
 */
void execs__adopt(struct session *s, pid_t pid, pid_t parent)
{
	struct proc *pp = procs__find(&s->procs, parent), *p;
	int err = 0, probes;

	p = entry_proc(s, pid, &err);
	if (p && pp && pp->allocator && pp->allocator->nr_objs) {
		*p->allocator = *pp->allocator;
		if (!inherit_allocator(p->allocator, pid, parent))
			err = look(s, pid, p->allocator);
	} else if (p) {
		err = look(s, pid, p->allocator);
	}
	probes = err ? err : probe_allocator(s, p, false);
	if (probes < 0) {
		pr_warn("child %d of process %d: its allocator is not probed: %s", pid, parent,
			strerror(-probes));
		return;
	}
	p->trace = PROC_ATTACHED;
	describe_allocator(s, p->allocator, pid, p->comm, false, probes);
}

/*
 * Its dynamic loader mapped objects, and the thread that mapped them waits:
 * read its mappings now, so that a process gone before the next report
 * (a forked child that ran a dlopen) keeps the new objects' names.
 */
void on_linkmap(void *ctx, const struct task_event *ev)
{
	struct session *s = ctx;
	struct proc *p = collect__proc_seen(s, (pid_t)ev->tgid);

	if (p)
		proc__symbolizer(&s->procs, p, true);
}
