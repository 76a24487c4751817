// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ptrace.h>
#include "arch/arch.h"
#include "lib/log.h"
#include "lib/util.h"
#include "proc/procfs.h"
#include "proc/target.h"

#define PF_KTHREAD 0x00200000
/*
 * Syscalls a launched command may make before it maps an allocator: the
 * dynamic loader needs a few dozen, so a program that is still without one
 * after this many never will have one.
 */
#define MAX_LOADER_SYSCALLS 4096
/*
 * How long the last of a process's threads to stop at its exit waits for
 * the others that exit_group killed to stop at theirs: each is only
 * going from its wake-up to do_exit(), but a loaded machine can delay it.
 */
#define THREADS_EXIT_PATIENCE 5.0

/*
 * A thread of a launched target other than its first, traced since it
 * was made (PTRACE_O_TRACECLONE): its registers, read while it was held
 * for a check or at its exit stop (@exited), are roots of the checks.
 */
struct task {
	pid_t tid;
	int pending; /* a stop met while interrupting: target__update()'s to handle */
	bool interrupted;
	bool has_regs;
	bool exited; /* at its exit stop with the process's group exit */
	struct arch_regs regs;
};

struct target {
	pid_t pid;
	int pidfd; /* attached targets: readable once the process is gone */
	bool launched;
	bool resumed;	   /* launched and let go past the loader */
	bool at_exit_stop; /* held in its exit stop until target__resume() */
	int hold_signal;   /* a signal that stops it for target__release() to answer */
	bool held;	   /* stopped as that signal reached it */
	bool interrupted;  /* held in a stop of ours until target__continue() */
	int pending;	   /* a stop met while interrupting: target__update()'s to handle */
	pid_t held_tid;	   /* the thread held (the hold signal) */
	pid_t *forked;	   /* children it made, traced since: for target__take_forked() */
	size_t nr_forked, forked_cap;
	struct task *tasks; /* its other threads */
	size_t nr_tasks, tasks_cap;
	struct arch_regs *regs; /* target__thread_registers()'s */
	char comm[32];
	struct target_exit exit;
};

static int pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static void read_comm(struct target *t)
{
	char comm[sizeof(t->comm)];

	/* Keep the last name known when the process is gone. */
	proc_thread_name(t->pid, t->pid, comm, sizeof(comm));
	if (comm[0])
		memcpy(t->comm, comm, sizeof(comm));
}

void target__refresh_comm(struct target *t)
{
	read_comm(t);
}

/* State letter and flags from /proc/PID/stat; the name may hold ')' and spaces. */
static int read_stat(pid_t pid, char *state, unsigned long *flags)
{
	char path[64], buf[1024], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		return -EIO;
	return 0;
}

static struct target *target__alloc(pid_t pid)
{
	struct target *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->pid = pid;
	t->pidfd = -1;
	t->exit.status = -1;
	return t;
}

static int check_traceable(struct target *t)
{
	unsigned long flags;
	char state;
	int err;

	err = read_stat(t->pid, &state, &flags);
	if (err) {
		pr_err("cannot read /proc/%d/stat: %s", t->pid, strerror(-err));
		return err;
	}
	if (flags & PF_KTHREAD) {
		pr_err("pid %d (%s) is a kernel thread: it has no user-space allocator to trace",
		       t->pid, t->comm);
		return -EINVAL;
	}
	if (state == 'Z' || state == 'X') {
		pr_err("process %d (%s) has exited and holds no memory (zombie)", t->pid, t->comm);
		return -ESRCH;
	}
	return 0;
}

struct target *target__attach(pid_t pid)
{
	struct target *t;
	int err;

	if (pid == getpid()) {
		pr_err("pid %d is alloctrace itself: give the pid of another process", pid);
		errno = EINVAL;
		return NULL;
	}
	t = target__alloc(pid);
	if (!t)
		return NULL;
	t->pidfd = pidfd_open(pid);
	if (t->pidfd < 0) {
		err = -errno;
		if (err == -ESRCH)
			pr_err("no process with pid %d", pid);
		else
			pr_err("cannot open process %d: %s", pid, strerror(-err));
		goto err;
	}
	read_comm(t);
	err = check_traceable(t);
	if (err)
		goto err;
	return t;
err:
	target__free(t);
	errno = -err;
	return NULL;
}

/* In the child: wait until the parent traces us, then become the command. */
static void __attribute__((noreturn)) exec_child(char *const argv[], int go_fd, int err_fd)
{
	sigset_t none;
	char c;
	int err;

	/* The tracer blocks signals for its signalfd; the command must not inherit that. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (read(go_fd, &c, 1) == 1)
		execvp(argv[0], argv);
	err = errno;
	if (write(err_fd, &err, sizeof(err)) != sizeof(err))
		_exit(126);
	_exit(127);
}

static void report_exec_error(const char *cmd, int err)
{
	if (err == ENOENT)
		pr_err("cannot run '%s': command not found", cmd);
	else if (err == EACCES)
		pr_err("cannot run '%s': permission denied (not executable?)", cmd);
	else
		pr_err("cannot run '%s': %s", cmd, strerror(err));
}

struct target_exit target_exit__from_status(int status)
{
	struct target_exit e = {.exited = true, .status = -1};

	if (WIFEXITED(status))
		e.status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		e.signal = WTERMSIG(status);
	return e;
}

static void record_exit(struct target *t, int status)
{
	t->exit = target_exit__from_status(status);
}

/* The target's next stop in *@status: 0, -ESRCH when it exited instead, or -errno. */
static int wait_stop(struct target *t, int *status)
{
	if (waitpid(t->pid, status, __WALL) < 0)
		return -errno;
	if (!WIFSTOPPED(*status)) {
		record_exit(t, *status);
		return -ESRCH;
	}
	return 0;
}

/* Wait for the stop at exec; a signal that arrives first is passed on. */
static int wait_exec_stop(struct target *t)
{
	int status, err;

	for (;;) {
		err = wait_stop(t, &status);
		if (err)
			return err;
		if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			return 0;
		if (ptrace(PTRACE_CONT, t->pid, 0, status >> 16 ? 0 : WSTOPSIG(status)))
			return -errno;
	}
}

/*
 * Wait for a dying child until it is reaped: as a tracee it stops once
 * more, at its exit event, and left there it would outlive us as a zombie
 * for init to reap.
 */
static void reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, __WALL) == pid && WIFSTOPPED(status))
		ptrace(PTRACE_CONT, pid, 0, 0);
}

static int start_child(struct target *t, char *const argv[], int go[2], int errp[2])
{
	long opts =
	    PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE;
	ssize_t n;
	int err;

	if (ptrace(PTRACE_SEIZE, t->pid, 0, opts)) {
		err = -errno;
		pr_err("cannot trace the command (ptrace): %s", strerror(-err));
		return err;
	}
	if (write(go[1], "g", 1) != 1)
		return -errno;
	n = read(errp[0], &err, sizeof(err));
	if (n == sizeof(err)) {
		report_exec_error(argv[0], err);
		reap(t->pid);
		t->pid = 0;
		return -err;
	}
	err = wait_exec_stop(t);
	if (err)
		pr_err("command '%s' ended before it started", argv[0]);
	return err;
}

struct target *target__launch(char *const argv[])
{
	int go[2] = {-1, -1}, errp[2] = {-1, -1};
	struct target *t;
	int err;

	t = target__alloc(0);
	if (!t)
		return NULL;
	t->launched = true;
	if (pipe2(go, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	t->pid = fork();
	if (t->pid < 0) {
		err = -errno;
		pr_err("cannot start '%s': %s", argv[0], strerror(errno));
		t->pid = 0;
		goto out;
	}
	if (!t->pid)
		exec_child(argv, go[0], errp[1]);
	close(go[0]);
	close(errp[1]);
	go[0] = errp[1] = -1;
	err = start_child(t, argv, go, errp);
	if (!err)
		read_comm(t);
out:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	if (!err)
		return t;
	target__free(t);
	errno = -err;
	return NULL;
}

/*
 * Step the loader from syscall to syscall and look again after each mmap:
 * the allocator is usable only once mapped, and the loader runs none of a
 * library's code before it has mapped them all.
 */
static int step_to_next_mmap(struct target *t, int *steps)
{
	struct ptrace_syscall_info info;
	long last_nr = -1;
	int status, sig = 0;

	while ((*steps)++ < MAX_LOADER_SYSCALLS) {
		if (ptrace(PTRACE_SYSCALL, t->pid, 0, sig))
			return -errno;
		sig = 0;
		if (waitpid(t->pid, &status, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(status)) {
			record_exit(t, status);
			return -ESRCH;
		}
		if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			/* A signal for the command is passed on; our events are not. */
			if (!(status >> 16))
				sig = WSTOPSIG(status);
			continue;
		}
		if (ptrace(PTRACE_GET_SYSCALL_INFO, t->pid, sizeof(info), &info) <= 0)
			return -errno;
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY)
			last_nr = info.entry.nr;
		else if (info.op == PTRACE_SYSCALL_INFO_EXIT && last_nr == SYS_mmap)
			return 0;
	}
	return -ENOENT;
}

int target__run_until(struct target *t, int (*found)(void *ctx), void *ctx)
{
	int steps = 0, ret;

	for (;;) {
		ret = found(ctx);
		if (ret)
			return ret > 0 ? 0 : ret;
		ret = step_to_next_mmap(t, &steps);
		if (ret)
			return ret;
	}
}

int target__resume(struct target *t)
{
	if (!t->launched || t->exit.exited)
		return 0;
	if (ptrace(PTRACE_CONT, t->pid, 0, 0))
		return -errno;
	t->resumed = true;
	t->at_exit_stop = false;
	return 0;
}

void target__set_hold_signal(struct target *t, int sig)
{
	t->hold_signal = sig;
}

int target__release(struct target *t, bool deliver)
{
	if (!t->held)
		return 0;
	t->held = false;
	return ptrace(PTRACE_CONT, t->held_tid, 0, deliver ? t->hold_signal : 0) ? -errno : 0;
}

pid_t target__held_tid(const struct target *t)
{
	return t->held ? t->held_tid : 0;
}

int target__fd(const struct target *t)
{
	return t->pidfd;
}

static enum target_state update_attached(struct target *t)
{
	struct pollfd pfd = {.fd = t->pidfd, .events = POLLIN};

	if (poll(&pfd, 1, 0) == 1) {
		t->exit.exited = true;
		return TARGET_GONE;
	}
	return TARGET_RUNNING;
}

static bool stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * The process or thread an event stop of thread @tid made, traced from its
 * first instruction, into *@id, and @arr (of @nr entries of @size) grown
 * for it; NULL when there is none to keep. One that cannot be kept is let
 * go rather than left stopped for nobody.
 */
static void *note_new(struct target *t, pid_t tid, void *arr, size_t *cap, size_t nr, size_t size,
		      const char *what, pid_t *id)
{
	unsigned long msg;
	void *a;

	if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg))
		return NULL;
	a = array__grow(arr, cap, nr, size);
	if (!a) {
		pr_warn("process %d: its %s %lu is not followed: %s", t->pid, what, msg,
			strerror(ENOMEM));
		ptrace(PTRACE_DETACH, (pid_t)msg, 0, 0);
	}
	*id = msg;
	return a;
}

/* A child made (the options of target__follow_forks()): kept for the session to adopt. */
static void note_forked(struct target *t, pid_t tid)
{
	pid_t child, *f = note_new(t, tid, t->forked, &t->forked_cap, t->nr_forked, sizeof(*f),
				   "child", &child);

	if (!f)
		return;
	t->forked = f;
	t->forked[t->nr_forked++] = child;
}

/* A thread made: let go from its first stop, and heard from until it is gone. */
static void note_thread(struct target *t, pid_t tid)
{
	pid_t thread;
	struct task *k =
	    note_new(t, tid, t->tasks, &t->tasks_cap, t->nr_tasks, sizeof(*k), "thread", &thread);

	if (!k)
		return;
	t->tasks = k;
	t->tasks[t->nr_tasks++] = (struct task){.tid = thread};
}

/*
 * Thread @k at its exit stop: its registers are roots of the process's
 * last check when exit_group (its own or another thread's) or a fatal
 * signal ended it, not when it ended alone (SYS_exit: pthread_exit, or its
 * start routine returned), which leaves the program without them.
 */
static void task_exit(struct task *k)
{
	k->has_regs = !arch_regs_get(k->tid, &k->regs) && k->regs.syscall != SYS_exit;
	k->exited = k->has_regs;
}

/* A stop of the hold signal in thread @tid: the session's to answer, one at a time. */
static bool hold(struct target *t, pid_t tid, int status)
{
	if (status >> 16 || !t->hold_signal || WSTOPSIG(status) != t->hold_signal)
		return false;
	t->held = true;
	t->held_tid = tid;
	return true;
}

/* One stop of thread @i (not the first): it runs on, but for the hold signal. */
static enum target_state handle_task_stop(struct target *t, size_t i, int status)
{
	pid_t tid = t->tasks[i].tid;
	int event = status >> 16;

	if (t->held && !event) {
		t->tasks[i].pending = status; /* after the one held */
		return TARGET_RUNNING;
	}
	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		note_forked(t, tid);
		break;
	case PTRACE_EVENT_CLONE:
		note_thread(t, tid);
		break;
	case PTRACE_EVENT_EXIT:
		task_exit(&t->tasks[i]);
		break;
	case PTRACE_EVENT_STOP:
		if (stop_signal(WSTOPSIG(status))) {
			ptrace(PTRACE_LISTEN, tid, 0, 0);
			return TARGET_RUNNING;
		}
		break;
	}
	if (hold(t, tid, status))
		return TARGET_HELD;
	ptrace(PTRACE_CONT, tid, 0, event ? 0 : WSTOPSIG(status));
	return TARGET_RUNNING;
}

/* The threads' stops since the last look; gone ones forgotten, but for their exit registers. */
static enum target_state poll_tasks(struct target *t)
{
	enum target_state state = TARGET_RUNNING;
	size_t i, out = 0;
	int status;
	pid_t ret;

	for (i = 0; i < t->nr_tasks && state == TARGET_RUNNING; i++) {
		status = t->tasks[i].pending;
		t->tasks[i].pending = 0;
		if (status)
			state = handle_task_stop(t, i, status);
		while (state == TARGET_RUNNING && t->tasks[i].tid && !t->tasks[i].pending) {
			ret = waitpid(t->tasks[i].tid, &status, WNOHANG | __WALL);
			if (!ret)
				break;
			if (ret > 0 && WIFSTOPPED(status))
				state = handle_task_stop(t, i, status);
			else
				t->tasks[i].tid = 0; /* exited and reaped, or gone in an exec */
		}
	}
	for (i = 0; i < t->nr_tasks; i++)
		if (t->tasks[i].tid || t->tasks[i].exited)
			t->tasks[out++] = t->tasks[i];
	t->nr_tasks = out;
	return state;
}

/*
 * The first thread is at its exit stop. When the process is ending (not
 * that thread alone), wait for its other threads, which exit_group or the
 * fatal signal is killing, to stop at theirs and give their registers.
 */
static void await_tasks(struct target *t)
{
	double deadline = clock_seconds(CLOCK_MONOTONIC) + THREADS_EXIT_PATIENCE;
	struct arch_regs first;
	bool waiting = true;

	if (!arch_regs_get(t->pid, &first) && first.syscall == SYS_exit)
		return;
	while (waiting && clock_seconds(CLOCK_MONOTONIC) < deadline) {
		poll_tasks(t);
		waiting = false;
		for (size_t i = 0; i < t->nr_tasks; i++)
			waiting |= t->tasks[i].tid && !t->tasks[i].exited;
		if (waiting)
			usleep(1000);
	}
}

size_t target__thread_registers(struct target *t, const struct arch_regs **regs, bool *at_exit)
{
	struct arch_regs *r = realloc(t->regs, (t->nr_tasks + 1) * sizeof(*r));
	size_t n = 0;

	*regs = NULL;
	*at_exit = t->at_exit_stop;
	if (!r)
		return 0;
	t->regs = r;
	for (size_t i = 0; i < t->nr_tasks; i++)
		if (t->tasks[i].has_regs)
			r[n++] = t->tasks[i].regs;
	*regs = r;
	return n;
}

pid_t target__take_forked(struct target *t)
{
	return t->nr_forked ? t->forked[--t->nr_forked] : 0;
}

int target__follow_forks(struct target *t)
{
	long opts = PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD |
		    PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;

	if (!t->launched)
		return 0;
	return ptrace(PTRACE_SETOPTIONS, t->pid, 0, opts) ? -errno : 0;
}

struct target *target__adopt(pid_t pid)
{
	struct target *t = target__alloc(pid);

	if (!t)
		return NULL;
	t->launched = t->resumed = true;
	read_comm(t);
	return t;
}

/* A new program image: the threads gone in its exec held no root of it. */
static void forget_exited(struct target *t)
{
	size_t out = 0;

	for (size_t i = 0; i < t->nr_tasks; i++)
		if (t->tasks[i].tid)
			t->tasks[out++] = (struct task){.tid = t->tasks[i].tid};
	t->nr_tasks = out;
}

/* One ptrace stop of a running launched target: pass signals on, keep job control. */
static enum target_state handle_stop(struct target *t, int status)
{
	int event = status >> 16;

	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		note_forked(t, t->pid);
		break;
	case PTRACE_EVENT_CLONE:
		note_thread(t, t->pid);
		break;
	case PTRACE_EVENT_EXIT:
		t->at_exit_stop = true;
		await_tasks(t);
		return TARGET_EXITING;
	case PTRACE_EVENT_STOP:
		/* Group stop (SIGSTOP, SIGTSTP): stay stopped until SIGCONT... */
		if (stop_signal(WSTOPSIG(status))) {
			ptrace(PTRACE_LISTEN, t->pid, 0, 0);
			return TARGET_RUNNING;
		}
		/* ...which ends it with this trap: run again. */
		ptrace(PTRACE_CONT, t->pid, 0, 0);
		return TARGET_RUNNING;
	case PTRACE_EVENT_EXEC:
		read_comm(t);
		forget_exited(t);
		return TARGET_EXECED;
	}
	if (hold(t, t->pid, status))
		return TARGET_HELD;
	ptrace(PTRACE_CONT, t->pid, 0, event ? 0 : WSTOPSIG(status));
	return TARGET_RUNNING;
}

/* Hold its other threads too, each one's registers read; a stop met first is target__update()'s. */
static void interrupt_tasks(struct target *t)
{
	struct task *k;
	int status;

	for (size_t i = 0; i < t->nr_tasks; i++) {
		k = &t->tasks[i];
		if (!k->tid)
			continue;
		if (!k->pending) {
			if (ptrace(PTRACE_INTERRUPT, k->tid, 0, 0) ||
			    waitpid(k->tid, &status, __WALL) != k->tid)
				continue;
			if (!WIFSTOPPED(status)) {
				k->tid = 0; /* gone, and reaped */
				continue;
			}
			if (status >> 16 == PTRACE_EVENT_STOP && !stop_signal(WSTOPSIG(status)))
				k->interrupted = true;
			else
				k->pending = status;
		}
		k->has_regs |= !arch_regs_get(k->tid, &k->regs);
	}
}

/*
 * Stop a running launched command in a stop of our own (PTRACE_INTERRUPT),
 * for the caller to read it while it waits. Signals that reach it
 * meanwhile are passed on; any other stop (its exit, an exec, a group
 * stop, the hold signal) is left for target__update() and the command
 * not held: -EAGAIN. 0, or -errno.
 */
int target__interrupt(struct target *t)
{
	int status, event, err;

	if (!t->launched || !t->resumed || t->exit.exited || t->at_exit_stop || t->held ||
	    t->pending)
		return -EAGAIN;
	if (ptrace(PTRACE_INTERRUPT, t->pid, 0, 0))
		return -errno;
	for (;;) {
		err = wait_stop(t, &status);
		if (err)
			return err;
		event = status >> 16;
		if (event == PTRACE_EVENT_STOP && !stop_signal(WSTOPSIG(status))) {
			t->interrupted = true;
			interrupt_tasks(t);
			return 0;
		}
		if (event || (t->hold_signal && WSTOPSIG(status) == t->hold_signal)) {
			t->pending = status;
			return -EAGAIN;
		}
		if (ptrace(PTRACE_CONT, t->pid, 0, WSTOPSIG(status)))
			return -errno;
	}
}

int target__continue(struct target *t)
{
	struct task *k;

	if (!t->interrupted)
		return 0;
	t->interrupted = false;
	for (size_t i = 0; i < t->nr_tasks; i++) {
		k = &t->tasks[i];
		k->has_regs &= k->exited;
		if (k->interrupted)
			ptrace(PTRACE_CONT, k->tid, 0, 0);
		k->interrupted = false;
	}
	return ptrace(PTRACE_CONT, t->pid, 0, 0) ? -errno : 0;
}

static enum target_state update_launched(struct target *t)
{
	enum target_state state = TARGET_RUNNING;
	int status;
	pid_t ret;

	/* waitpid() reports a stop once: until resumed, say it again. */
	if (t->at_exit_stop)
		return TARGET_EXITING;
	if (t->held)
		return TARGET_HELD;
	if (t->pending) {
		status = t->pending;
		t->pending = 0;
		state = handle_stop(t, status);
	}
	/* Its threads first: the first one's end is told only once they are reaped. */
	if (state == TARGET_RUNNING)
		state = poll_tasks(t);
	while (!t->exit.exited && state == TARGET_RUNNING) {
		ret = waitpid(t->pid, &status, WNOHANG | __WALL);
		if (ret <= 0)
			break;
		if (WIFSTOPPED(status)) {
			state = handle_stop(t, status);
			continue;
		}
		record_exit(t, status);
		state = TARGET_GONE;
	}
	return t->exit.exited ? TARGET_GONE : state;
}

enum target_state target__update(struct target *t)
{
	if (t->exit.exited)
		return TARGET_GONE;
	return t->launched ? update_launched(t) : update_attached(t);
}

pid_t target__pid(const struct target *t)
{
	return t->pid;
}

const char *target__comm(const struct target *t)
{
	return t->comm;
}

struct target_exit target__exit(const struct target *t)
{
	return t->exit;
}

void target__free(struct target *t)
{
	if (!t)
		return;
	if (t->launched && t->pid > 0 && !t->exit.exited && !t->resumed) {
		/* Never ran a line of its own: nothing of the user's is lost. */
		kill(t->pid, SIGKILL);
		reap(t->pid);
	}
	if (t->pidfd >= 0)
		close(t->pidfd);
	free(t->forked);
	free(t->tasks);
	free(t->regs);
	free(t);
}
