// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "app/loop.h"
#include "app/leaks.h"
#include "app/execs.h"
#include "app/reports.h"
#include "app/collect.h"
#include "tracer/tracer.h"
#include "lib/log.h"
#include "lib/util.h"

int loop__block_signals(struct session *s)
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

static int add_fd(struct session *s, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int loop__setup(struct session *s)
{
	double iv = s->opts->interval;
	struct itimerspec its = {
	    .it_value = {.tv_sec = (time_t)iv, .tv_nsec = (long)((iv - (time_t)iv) * 1e9)},
	};
	int err;

	its.it_interval = its.it_value;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	/*
	 * Not blocking: an event handled in the same wake (an exec probed at
	 * its loader's hold) may re-arm or disarm a timer epoll said was due,
	 * whose read would then wait for its next expiry, or for ever.
	 */
	s->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->retry_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
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

/* A process named on the command line ended; the run ends with the last of them. */
static void target_gone(struct session *s, struct target *t)
{
	int fd = target__fd(t);

	if (fd >= 0)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	if (++s->nr_gone >= s->nr_targets)
		s->done = true;
}

/* --follow-forks: @t is one of the command's children, not the command. */
static size_t followed_index(const struct session *s, const struct target *t)
{
	size_t i = 0;

	while (i < s->nr_followed && s->followed[i] != t)
		i++;
	return i;
}

/* A followed child ended: its verdicts, taken at its exit stop, stay. */
static void followed_gone(struct session *s, size_t i)
{
	target__free(s->followed[i]);
	s->followed[i] = s->followed[--s->nr_followed];
}

/*
 * The process at its exit stop. A child met only now may have no entry
 * yet: the BPF side's is read in, as a report would.
 */
static struct proc *exiting_proc(struct session *s, pid_t pid, bool child)
{
	struct proc_state st;

	if (child && !tracer__proc_state(s->tracer, pid, &st))
		collect__update_proc(s, pid, &st);
	return procs__find(&s->procs, pid);
}

static void on_exit_stop(struct session *s, struct target *t, bool child)
{
	struct proc *p = exiting_proc(s, target__pid(t), child);

	/* Last chance to read its mappings, and its memory: valgrind checks here too. */
	if (p)
		proc__symbolizer(&s->procs, p, true);
	if (p && s->opts->leak_check)
		leaks__check(s, p, true);
	/* --growth: what it holds at its end, read before it is gone. */
	if (tracer__settle_pages(s->tracer, target__pid(t)))
		pr_warn("--growth: the pages of process %d not read at its exit: its final report "
			"holds none",
			target__pid(t));
	target__resume(t);
}

static void adopt_forked(struct session *s, struct target *parent);

static void on_target_event(struct session *s, struct target *t)
{
	enum target_state state = target__update(t);
	size_t i;

	/* Before a parent that exited is let go with what it told. */
	adopt_forked(s, t);
	i = followed_index(s, t);
	switch (state) {
	case TARGET_EXECED:
		/* A child's new program is followed by the BPF side's exec event. */
		if (i < s->nr_followed)
			target__resume(t);
		else
			execs__reattach(s, target__pid(t), t);
		break;
	case TARGET_EXITING:
		on_exit_stop(s, t, i < s->nr_followed);
		break;
	case TARGET_HELD:
		/* The loader's probe held it: its new objects' tables first (else not ours). */
		target__release(t, !tracer__release_hold(s->tracer, target__held_tid(t)));
		/* Another thread's stop may wait behind it, its SIGCHLD already read. */
		on_target_event(s, t);
		break;
	case TARGET_GONE:
		if (i < s->nr_followed)
			followed_gone(s, i);
		else
			target_gone(s, t);
		break;
	case TARGET_RUNNING:
		break;
	}
}

/* Children @parent made: traced, each heard from at once. */
static void adopt_forked(struct session *s, struct target *parent)
{
	struct target **f, *t;
	pid_t pid;

	while ((pid = target__take_forked(parent))) {
		f = array__grow(s->followed, &s->followed_cap, s->nr_followed, sizeof(*f));
		t = f ? target__adopt(pid) : NULL;
		if (!t) {
			pr_warn("child %d of process %d is not followed: %s", pid,
				target__pid(parent), strerror(errno));
			continue;
		}
		s->followed = f;
		s->followed[s->nr_followed++] = t;
		/* Its own probes before it first runs. */
		execs__adopt(s, pid, target__pid(parent));
		on_target_event(s, t);
	}
}

/* A SIGCHLD: news of the launched command or of any child it made. */
static void on_children(struct session *s)
{
	size_t i = 0;

	on_target_event(s, s->targets[0]);
	while (i < s->nr_followed) {
		struct target *t = s->followed[i];

		on_target_event(s, t);
		/* A child gone leaves its slot to another, not yet heard. */
		i += i < s->nr_followed && s->followed[i] == t;
	}
}

static void on_signal(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			if (s->opts->argv)
				on_children(s);
			break;
		case SIGUSR1:
			reports__write(s, false);
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
		reports__write(s, false);
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
		if (read(fd, &(uint64_t){0}, sizeof(uint64_t)) == sizeof(uint64_t))
			execs__retry(s);
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

/* The earlier of two deadlines in seconds, -1 for none. */
static double earliest(double a, double b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

/*
 * Milliseconds epoll may wait. A launched target and every child it made
 * are also looked at every half second, a safety net: each look drains
 * every stop there is, and a stop must never be left waiting. Processes
 * ended are drained from the maps within DRAIN_PERIOD, --growth's pages of
 * a busy mapping classified within the tracer's period.
 */
static int wait_ms(const struct session *s)
{
	double due = earliest(collect__drain_due(s), tracer__pages_due(s->tracer));

	if (due < 0)
		return s->opts->argv ? 500 : -1;
	return due > 0 ? (int)(due * 1000) + 1 : 0;
}

int loop__run(struct session *s)
{
	struct epoll_event evs[4];
	int n;

	while (!s->done) {
		n = epoll_wait(s->epfd, evs, 4, wait_ms(s));
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0 && s->opts->argv)
			on_children(s);
		for (int i = 0; i < n && !s->done; i++)
			on_fd(s, evs[i].data.fd);
		if (!collect__drain_due(s))
			collect__drain_ended(s);
		if (!tracer__pages_due(s->tracer) && tracer__classify_pending(s->tracer))
			pr_warn("cannot classify the pages whose mapping was busy; the next report "
				"will");
	}
	return 0;
}
