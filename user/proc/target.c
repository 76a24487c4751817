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
#include "proc/target_fsm.h"

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

struct target {
	pid_t pid;
	int pidfd; /* attached targets: readable once the process is gone */
	bool launched;
	bool resumed;		/* launched and let go past the loader */
	bool awaited;		/* its threads' exit stops awaited at this exit stop */
	struct tfsm fsm;	/* launched targets: its threads' states */
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
	err = tfsm_init(&t->fsm, t->pid, true);
	if (!err)
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

/*
 * The thin layer under target_fsm.c: it performs the actions the state
 * machine asks and tells it each thread's stops.
 */
static int perform_one(struct target *t, const struct tfsm_action *a)
{
	struct tfsm_thread *k;
	long ret = 0;

	switch (a->kind) {
	case TACT_CONT:
		ret = ptrace(PTRACE_CONT, a->tid, 0, a->sig);
		break;
	case TACT_LISTEN:
		ret = ptrace(PTRACE_LISTEN, a->tid, 0, 0);
		break;
	case TACT_INTERRUPT:
		ret = ptrace(PTRACE_INTERRUPT, a->tid, 0, 0);
		break;
	case TACT_DETACH:
		pr_warn("process %d: its thread or child %d is not followed: %s", t->pid, a->tid,
			strerror(ENOMEM));
		ret = ptrace(PTRACE_DETACH, a->tid, 0, 0);
		break;
	case TACT_REGS:
		k = tfsm_thread(&t->fsm, a->tid);
		if (k && !arch_regs_get(a->tid, &k->regs))
			k->has_regs = true;
		break;
	case TACT_NONE:
		break;
	}
	return ret ? -errno : 0;
}

/* Every action asked: 0, or the first one's error. */
static int perform(struct target *t)
{
	struct tfsm_action a;
	int err, first = 0;

	while (tfsm_next(&t->fsm, &a)) {
		err = perform_one(t, &a);
		if (err) {
			tfsm_failed(&t->fsm, &a);
			first = first ? first : err;
		}
	}
	return first;
}

static bool stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* A wait status of thread @tid as an event; @regs holds an exit stop's registers. */
static void to_event(pid_t tid, int status, struct tfsm_event *ev, struct arch_regs *regs)
{
	unsigned long msg = 0;
	int event = status >> 16;

	*ev = (struct tfsm_event){.tid = tid, .kind = TEV_OTHER, .status = status};
	if (!WIFSTOPPED(status)) {
		ev->kind = TEV_GONE;
		return;
	}
	ev->sig = WSTOPSIG(status);
	if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
	    event == PTRACE_EVENT_VFORK || event == PTRACE_EVENT_EXEC) {
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg))
			return;
		ev->msg = msg;
	}
	switch (event) {
	case 0:
		ev->kind = TEV_SIGNAL;
		break;
	case PTRACE_EVENT_STOP:
		ev->kind = stop_signal(ev->sig) ? TEV_GROUP_STOP : TEV_TRAP;
		break;
	case PTRACE_EVENT_CLONE:
		ev->kind = TEV_CLONE;
		break;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		ev->kind = TEV_FORK;
		break;
	case PTRACE_EVENT_EXEC:
		ev->kind = TEV_EXEC;
		break;
	case PTRACE_EVENT_EXIT:
		ev->kind = TEV_EXIT;
		ev->regs = arch_regs_get(tid, regs) ? NULL : regs;
		break;
	}
}

static void step(struct target *t, const struct tfsm_event *ev)
{
	tfsm_step(&t->fsm, ev);
	perform(t);
	if (t->fsm.gone && !t->exit.exited)
		record_exit(t, t->fsm.status);
	if (ev->kind == TEV_EXEC)
		read_comm(t);
}

/*
 * Thread @tid's next stop, waited for with @flags: 1 when one was
 * handled, 0 when there was none, -errno when it is not ours to wait for
 * (gone in an exec, or reaped): told as its end, but for the first thread.
 */
static int wait_thread(struct target *t, pid_t tid, int flags)
{
	struct tfsm_event ev;
	struct arch_regs regs;
	int status, err = 0;
	pid_t ret;

	ret = waitpid(tid, &status, flags | __WALL);
	if (!ret)
		return 0;
	if (ret < 0) {
		err = -errno;
		if (tid == t->pid)
			return err;
		status = 0;
	}
	to_event(tid, status, &ev, &regs);
	step(t, &ev);
	return ret < 0 ? err : 1;
}

/* One look at each thread, the first one last: its end is told once the others are reaped. */
static void update_pass(struct target *t)
{
	struct tfsm_event ev;
	pid_t tid;

	while (tfsm_take_pending(&t->fsm, &ev))
		step(t, &ev);
	for (size_t i = 1; i < t->fsm.nr_threads; i++) {
		tid = t->fsm.threads[i].tid;
		if (t->fsm.threads[i].state != TS_GONE && t->fsm.threads[i].state != TS_EARLY)
			wait_thread(t, tid, WNOHANG);
	}
	if (!t->fsm.gone)
		wait_thread(t, t->pid, WNOHANG);
}

/*
 * The first thread is at its exit stop. When the process is ending (not
 * that thread alone), wait for its other threads, which exit_group or the
 * fatal signal is killing, to stop at theirs and give their registers.
 */
static void await_tasks(struct target *t)
{
	double deadline = clock_seconds(CLOCK_MONOTONIC) + THREADS_EXIT_PATIENCE;

	t->awaited = true;
	while (tfsm_awaiting_exits(&t->fsm) && clock_seconds(CLOCK_MONOTONIC) < deadline) {
		update_pass(t);
		if (tfsm_awaiting_exits(&t->fsm))
			usleep(1000);
	}
}

/*
 * SIGCHLDs coalesce, and a stop one tells may be that of a thread noted
 * only in this pass (its parent's clone event came with it, or after it):
 * look again until a pass finds no stop at all, so that none waits for a
 * later SIGCHLD.
 */
static enum target_state update_launched(struct target *t)
{
	size_t before;

	do {
		before = t->fsm.stops;
		update_pass(t);
	} while (t->fsm.stops != before && !t->fsm.gone);
	if (t->fsm.at_exit && !t->awaited)
		await_tasks(t);
	return t->exit.exited ? TARGET_GONE : tfsm_state(&t->fsm);
}

int target__resume(struct target *t)
{
	if (!t->launched || t->exit.exited)
		return 0;
	tfsm_resume(&t->fsm);
	t->resumed = true;
	t->awaited = false;
	return perform(t);
}

void target__set_hold_signal(struct target *t, int sig)
{
	t->fsm.hold_signal = sig;
}

int target__release(struct target *t, bool deliver)
{
	if (!t->fsm.held_tid)
		return 0;
	tfsm_release(&t->fsm, deliver);
	return perform(t);
}

pid_t target__held_tid(const struct target *t)
{
	return t->launched ? t->fsm.held_tid : 0;
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

size_t target__thread_registers(struct target *t, const struct arch_regs **regs, bool *at_exit)
{
	struct arch_regs *r = realloc(t->regs, (t->fsm.nr_threads + 1) * sizeof(*r));
	size_t n = 0;

	*regs = NULL;
	*at_exit = t->fsm.at_exit;
	if (!r)
		return 0;
	t->regs = r;
	for (size_t i = 1; i < t->fsm.nr_threads; i++)
		if (t->fsm.threads[i].has_regs)
			r[n++] = t->fsm.threads[i].regs;
	*regs = r;
	return n;
}

pid_t target__take_forked(struct target *t)
{
	return t->launched ? tfsm_take_forked(&t->fsm) : 0;
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
	if (tfsm_init(&t->fsm, pid, false)) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	read_comm(t);
	return t;
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
	pid_t tid;
	int err;

	if (!t->launched || !t->resumed || t->exit.exited || tfsm_interrupt(&t->fsm))
		return -EAGAIN;
	err = perform(t);
	if (err)
		return err;
	while ((tid = tfsm_waiting(&t->fsm))) {
		err = wait_thread(t, tid, 0);
		if (err < 0 && tid == t->pid) {
			tfsm_failed(&t->fsm,
				    &(struct tfsm_action){.kind = TACT_INTERRUPT, .tid = tid});
			return err;
		}
	}
	return tfsm_interrupt_result(&t->fsm);
}

int target__continue(struct target *t)
{
	if (!t->launched || !t->fsm.interrupted)
		return 0;
	tfsm_continue(&t->fsm);
	return perform(t);
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
	tfsm_free(&t->fsm);
	free(t->regs);
	free(t);
}
