// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The target is stopped from seize to detach and nothing else: no file
 * is read and no memory copied in that time but the registers.
 * Waits retry on EINTR, so that a caller's signal handler cannot leave
 * the target stopped.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "arch/arch.h"
#include "leakcheck/keeper.h"
#include "leakcheck/snapshot.h"
#include "lib/log.h"
#include "lib/util.h"
#include "proc/procfs.h"

#define MAX_THREADS 65536

struct thread {
	pid_t tid;
	int sig; /* a signal its stop took: delivered at detach */
	struct arch_regs regs;
};

struct snapshot {
	pid_t pid, child;
	struct thread *th;
	size_t nr, cap;
	uint64_t *words, *sps;
	size_t nr_words;
	struct proc_maps maps;
	uint64_t syscall_insn;
	uint64_t pause_ns, clone_ns, reap_ns;
	bool stay;			/* no child: the target is held for the scan */
	bool ours;			/* the caller traces it and holds it stopped */
	const struct arch_regs *others; /* ours: its other threads', as the caller read them */
	size_t nr_others;
	bool held; /* its threads are stopped now */
	bool released;
	pid_t keeper; /* the tracer, when not alloctrace itself */
	int sock;     /* to the keeper */
};

/* What the keeper tells of its capture, and then of its release. */
struct kept {
	int err;
	bool stay;
	pid_t child;
	uint32_t nr;
	uint64_t pause_ns, clone_ns, reap_ns;
};

uint64_t snapshot_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static pid_t wait_tid(pid_t tid, int *st)
{
	pid_t r;

	do
		r = waitpid(tid, st, __WALL);
	while (r < 0 && errno == EINTR);
	return r;
}

/* A debugger's TracerPid, and a seccomp filter a clone could trip: from /proc/PID/status. */
static int read_status(pid_t pid, int *tracer, int *seccomp)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*tracer = *seccomp = 0;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "TracerPid: %d", tracer);
		sscanf(line, "Seccomp: %d", seccomp);
	}
	fclose(f);
	return 0;
}

/*
 * The first system-call instruction (x86-64's `syscall`, arm64's `svc #0`)
 * in the target's executable mappings: where injected calls run.
 */
static uint64_t find_syscall_insn(pid_t pid, const struct proc_maps *maps)
{
	const struct arch_syscall_insn *insn = &arch_syscall_insn;
	uint8_t page[4096];
	struct iovec l = {page, sizeof(page)}, r;
	uint64_t a;
	size_t i, k;

	for (i = 0; i < maps->nr; i++) {
		if (!maps->maps[i].exec || !maps->maps[i].read)
			continue;
		for (a = maps->maps[i].start; a < maps->maps[i].end; a += sizeof(page)) {
			r = (struct iovec){(void *)a, sizeof(page)};
			if (process_vm_readv(pid, &l, 1, &r, 1, 0) != sizeof(page))
				break;
			for (k = 0; k + insn->len <= sizeof(page); k += insn->align)
				if (!memcmp(page + k, insn->bytes, insn->len))
					return a + k;
		}
	}
	return 0;
}

/* Seize and stop @tid; a thread that exited meanwhile is skipped (1). */
static int stop_thread(struct snapshot *s, pid_t tid)
{
	struct thread *t;
	int st;

	if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACESYSGOOD))
		return errno == ESRCH ? 1 : -errno;
	t = array__grow(s->th, &s->cap, s->nr, sizeof(*t));
	if (!t) {
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return -ENOMEM;
	}
	s->th = t;
	t = &s->th[s->nr++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || wait_tid(tid, &st) < 0 || !WIFSTOPPED(st)) {
		s->nr--;
		return 1;
	}
	if (st >> 16 == 0 && WSTOPSIG(st) != SIGTRAP)
		t->sig = WSTOPSIG(st);
	return arch_regs_get(tid, &t->regs);
}

static bool seized(const struct snapshot *s, pid_t tid)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (s->th[i].tid == tid)
			return true;
	return false;
}

/* Every thread, until a pass over /proc/PID/task finds none new. */
static int stop_all(struct snapshot *s)
{
	char path[64];
	struct dirent *d;
	bool added = true;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", s->pid);
	while (added && !err) {
		added = false;
		dir = opendir(path);
		if (!dir)
			return -errno;
		while (!err && (d = readdir(dir))) {
			pid_t tid = atoi(d->d_name);

			if (tid <= 0 || seized(s, tid))
				continue;
			err = s->nr >= MAX_THREADS ? -E2BIG : stop_thread(s, tid);
			added |= err == 0;
			err = err > 0 ? 0 : err;
		}
		closedir(dir);
	}
	return err ?: (s->nr ? 0 : -ESRCH);
}

static void resume_all(struct snapshot *s)
{
	size_t i;

	/* The caller's own stops are the caller's to end. */
	for (i = 0; i < s->nr && !s->ours; i++)
		ptrace(PTRACE_DETACH, s->th[i].tid, 0, s->th[i].sig);
	s->held = false;
}

/*
 * Run syscall @nr(@a0, @a1, @a2) in stopped thread @t at the target's own
 * system-call instruction, then put its registers back, with the restart
 * of a call it was interrupted in (arch_regs_resume). A new process it
 * makes is returned in *@child. The call's result, or -errno.
 */
static long inject(struct snapshot *s, struct thread *t, long nr, uint64_t a0, uint64_t a1,
		   uint64_t a2, pid_t *child)
{
	struct arch_regs r = t->regs, back = arch_regs_resume(&t->regs);
	const uint64_t args[3] = {a0, a1, a2};
	unsigned long msg;
	int st, stops = 0, err;

	arch_regs_call(&r, s->syscall_insn, nr, args);
	err = arch_regs_set(t->tid, &r);
	if (err)
		return err;
	/* Two syscall stops: the call's entry, then its exit. */
	while (stops < 2) {
		if (ptrace(PTRACE_SYSCALL, t->tid, 0, 0) || wait_tid(t->tid, &st) < 0)
			return -errno;
		if (!WIFSTOPPED(st))
			return -ESRCH;
		if (st >> 16 == PTRACE_EVENT_CLONE && child &&
		    !ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg))
			*child = msg;
		else if (WSTOPSIG(st) == (SIGTRAP | 0x80))
			stops++;
		else if (st >> 16 == 0 && !t->sig)
			t->sig = WSTOPSIG(st); /* delivered at detach */
		err = arch_regs_get(t->tid, &r);
		if (err)
			return err;
	}
	return arch_regs_set(t->tid, &back) ?: arch_regs_ret(&r);
}

/* The copy-on-write child: a clone with no flags and no exit signal, from the first thread. */
static int fork_child(struct snapshot *s)
{
	struct thread *t = &s->th[0];
	pid_t child = 0;
	long ret;
	int st;

	if (ptrace(PTRACE_SETOPTIONS, t->tid, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE))
		return -errno;
	ret = inject(s, t, SYS_clone, 0, 0, 0, &child);
	ptrace(PTRACE_SETOPTIONS, t->tid, 0, PTRACE_O_TRACESYSGOOD);
	if (ret < 0)
		return ret;
	if (child <= 0 || child != ret)
		return -ECHILD;
	s->child = child;
	/* It starts stopped; if its tracer (the keeper) dies, the kernel kills it. */
	if (wait_tid(child, &st) < 0)
		return -errno;
	ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_EXITKILL);
	return 0;
}

/*
 * The caller's own stopped tracee (a launched command): its stopped
 * thread, as it is, and its other threads' registers as the caller read
 * them, which it traces too (no other tracer may seize them).
 */
static int hold_ours(struct snapshot *s)
{
	s->th = calloc(s->nr_others + 1, sizeof(*s->th));
	if (!s->th)
		return -ENOMEM;
	s->nr = s->cap = s->nr_others + 1;
	s->th[0].tid = s->pid;
	for (size_t i = 0; i < s->nr_others; i++)
		s->th[i + 1].regs = s->others[i];
	return arch_regs_get(s->pid, &s->th[0].regs);
}

/*
 * Stop, read registers, fork the child unless asked not to, resume. The
 * maps are the child's, read once the target runs: clone copied them as
 * they were. The clone's page-table copy is most of the pause (about 60
 * ms a GB of 4 KiB pages here, as for any fork), so it is timed apart.
 */
static int capture(struct snapshot *s)
{
	uint64_t t0 = snapshot_clock_ns(), t1;
	int err;

	s->held = true;
	err = s->ours ? hold_ours(s) : stop_all(s);
	t1 = snapshot_clock_ns();
	if (!err && !s->stay)
		err = fork_child(s);
	s->clone_ns = snapshot_clock_ns() - t1;
	if (err || !s->stay)
		resume_all(s);
	s->pause_ns = snapshot_clock_ns() - t0;
	return err;
}

/*
 * The keeper's whole life: capture, tell, wait for alloctrace's word to
 * let go or for its death (end of file: the same to the keeper), release,
 * tell, exit. Whatever instant alloctrace dies at, the step under way is
 * finished and the target let go as if alloctrace had asked.
 */
static void keep(struct snapshot *s)
{
	struct kept k = {0};
	char word;

	/* Dead before anything was touched: nothing to do. */
	if (keeper__peer_gone(s->sock))
		_exit(0);
	k.err = capture(s);
	k.stay = s->stay;
	k.child = s->child;
	k.nr = s->nr;
	k.pause_ns = s->pause_ns;
	k.clone_ns = s->clone_ns;
	if (!keeper__send(s->sock, &k, sizeof(k)) && !k.err)
		keeper__send(s->sock, s->th, s->nr * sizeof(*s->th));
	keeper__recv(s->sock, &word, 1);
	k.err = snapshot__release(s);
	k.reap_ns = s->reap_ns;
	keeper__send(s->sock, &k, sizeof(k));
	_exit(0);
}

/* The capture, made by a keeper: its result and the threads' registers. */
static int capture_kept(struct snapshot *s)
{
	struct kept k;
	int err;

	s->keeper = keeper__fork(&s->sock);
	if (s->keeper < 0)
		return s->keeper;
	if (s->keeper == 0) {
		s->keeper = -1; /* the keeper traces itself, it has no keeper */
		keep(s);
	}
	err = keeper__recv(s->sock, &k, sizeof(k));
	if (err || k.err)
		return err ?: k.err;
	s->stay = k.stay;
	s->child = k.child;
	s->pause_ns = k.pause_ns;
	s->clone_ns = k.clone_ns;
	s->th = calloc(k.nr ?: 1, sizeof(*s->th));
	if (!s->th)
		return -ENOMEM;
	s->nr = s->cap = k.nr;
	return keeper__recv(s->sock, s->th, k.nr * sizeof(*s->th));
}

/* Tell the keeper to let go, wait until it has, and collect it. */
static int release_kept(struct snapshot *s)
{
	struct kept k = {.err = -EPIPE};
	pid_t r;
	int st;

	keeper__send(s->sock, "r", 1);
	if (keeper__recv(s->sock, &k, sizeof(k)))
		k.err = -EPIPE;
	close(s->sock);
	do
		r = waitpid(s->keeper, &st, 0);
	while (r < 0 && errno == EINTR);
	s->reap_ns = k.reap_ns;
	return k.err;
}

static int collect_registers(struct snapshot *s)
{
	size_t i;

	s->words = calloc(s->nr * ARCH_REGS_MAX + 1, 8);
	s->sps = calloc(s->nr + 1, 8);
	if (!s->words || !s->sps)
		return -ENOMEM;
	for (i = 0; i < s->nr; i++) {
		const struct arch_regs *r = &s->th[i].regs;

		memcpy(s->words + s->nr_words, r->w, r->nr * sizeof(r->w[0]));
		s->nr_words += r->nr;
		s->sps[i] = arch_regs_sp(r);
	}
	return 0;
}

static int check_target(struct snapshot *s, struct proc_maps *text)
{
	int tracer, seccomp, err;

	err = read_status(s->pid, &tracer, &seccomp);
	if (err || s->ours)
		return err;
	if (tracer) {
		pr_err("process %d is already traced by process %d: detach the debugger first\n",
		       s->pid, tracer);
		return -EBUSY;
	}
	/* A filter could kill the target for a clone: it stays stopped instead. */
	s->stay |= seccomp == 2;
	if (s->stay)
		return 0;
	err = proc_maps__read(s->pid, text);
	if (!err)
		s->syscall_insn = find_syscall_insn(s->pid, text);
	proc_maps__release(text);
	s->stay |= !err && !s->syscall_insn;
	return err;
}

struct snapshot *snapshot__take(pid_t pid, bool stay_stopped, bool ours,
				const struct arch_regs *others, size_t nr_others)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	struct proc_maps text = {};
	int err;

	if (!s)
		return NULL;
	s->pid = pid;
	s->stay = stay_stopped || ours;
	s->ours = ours;
	s->others = ours ? others : NULL;
	s->nr_others = ours ? nr_others : 0;
	err = check_target(s, &text) ?: (ours ? capture(s) : capture_kept(s)) ?:
	      proc_maps__read(s->child > 0 ? s->child : s->pid, &s->maps) ?:
	      collect_registers(s);
	if (err) {
		snapshot__free(s);
		errno = proc_gone(pid) ? ESRCH : -err;
		return NULL;
	}
	return s;
}

/*
 * The dead child is the target's zombie, with no exit signal: a plain
 * wait() in the target never sees it. One wait4 in the target reaps it,
 * with WNOHANG so that the target can never block in it.
 */
static int reap_in_target(struct snapshot *s)
{
	struct snapshot r = {.pid = s->pid, .syscall_insn = s->syscall_insn};
	uint64_t t0 = snapshot_clock_ns();
	long ret = -ESRCH;
	size_t i;

	for (i = 0; i < s->nr && ret == -ESRCH; i++) {
		if (stop_thread(&r, s->th[i].tid) == 0)
			ret = inject(&r, &r.th[0], SYS_wait4, s->child, 0, WNOHANG | __WALL, NULL);
		resume_all(&r);
		r.nr = 0;
	}
	s->reap_ns = snapshot_clock_ns() - t0;
	free(r.th);
	/* A target that exited left the child to init, which reaps it. */
	if (ret == s->child || proc_gone(s->pid))
		return 0;
	pr_warn("snapshot of process %d: its child %d is left unreaped: %s\n", s->pid, s->child,
		ret < 0 ? strerror(-ret) : "not a zombie yet");
	return ret < 0 ? ret : -EAGAIN;
}

int snapshot__release(struct snapshot *s)
{
	int st;

	if (s->released)
		return 0;
	s->released = true;
	if (s->keeper > 0)
		return release_kept(s);
	if (s->held)
		resume_all(s);
	if (s->child <= 0)
		return 0;
	kill(s->child, SIGKILL);
	while (wait_tid(s->child, &st) > 0 && !WIFEXITED(st) && !WIFSIGNALED(st))
		;
	return reap_in_target(s);
}

void snapshot__free(struct snapshot *s)
{
	if (!s)
		return;
	snapshot__release(s);
	proc_maps__release(&s->maps);
	free(s->th);
	free(s->words);
	free(s->sps);
	free(s);
}

int snapshot__read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct snapshot *s = ctx;
	struct iovec l = {buf, len}, r = {(void *)addr, len};
	ssize_t n;

	n = process_vm_readv(s->child > 0 ? s->child : s->pid, &l, 1, &r, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

const struct proc_maps *snapshot__maps(const struct snapshot *s)
{
	return &s->maps;
}

const uint64_t *snapshot__registers(const struct snapshot *s, size_t *n)
{
	*n = s->nr_words;
	return s->words;
}

const uint64_t *snapshot__stack_pointers(const struct snapshot *s, size_t *n)
{
	*n = s->nr;
	return s->sps;
}

unsigned int snapshot__threads(const struct snapshot *s)
{
	return s->nr;
}

const struct arch_regs *snapshot__thread_registers(const struct snapshot *s, size_t i)
{
	return &s->th[i].regs;
}

/*
 * A syscall's number stays while the thread is in it (and at the exit
 * stop of exit_group); a thread interrupted in user code has -1. On arm64
 * the kernel forgets a call it interrupted for the stop (arch_arm64.c):
 * such a thread reads as in user code, where arm64 has no red zone anyway.
 */
bool snapshot__in_syscall(const struct snapshot *s, size_t i)
{
	return s->th[i].regs.syscall >= 0;
}

bool snapshot__stopped(const struct snapshot *s)
{
	return s->stay;
}

uint64_t snapshot__pause_ns(const struct snapshot *s)
{
	return s->pause_ns;
}

bool snapshot__gone(const struct snapshot *s)
{
	return proc_gone(s->pid);
}

uint64_t snapshot__clone_ns(const struct snapshot *s)
{
	return s->clone_ns;
}

uint64_t snapshot__reap_ns(const struct snapshot *s)
{
	return s->reap_ns;
}
