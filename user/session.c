// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "allocator.h"
#include "export.h"
#include "log.h"
#include "profile.h"
#include "report.h"
#include "session.h"
#include "symbolize.h"
#include "target.h"
#include "tracer.h"

/* Inlined calls shown per return address, at most. */
#define MAX_INLINE 8

struct session {
	const struct options *opts;
	struct target *target;
	struct tracer *tracer;
	struct symbolizer *syms;
	struct profile *profile;
	struct report_writer *writer;
	struct exporter *exporters[EXPORT_HTML + 1];
	size_t nr_exporters;
	struct allocator allocator;
	int epfd;
	int sigfd;
	int timerfd;
	unsigned int reports;
	double mono_to_real;	/* add to CLOCK_MONOTONIC seconds for unix time */
	struct frame_info *frames;
	size_t nr_frames;
	size_t frames_cap;
	int write_err;
	bool done;
};

static double clock_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Append the frames of one stack to the session's frame buffer. */
static int resolve_stack(struct session *s, const __u64 *ips, uint32_t nr)
{
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
		s->nr_frames += symbolizer__resolve(s->syms, ips[i], s->frames + s->nr_frames,
						    MAX_INLINE);
	}
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

static void on_big_alloc(void *ctx, const struct big_alloc_event *ev)
{
	struct session *s = ctx;
	struct big_alloc alert = {
		.time = ev->time_ns / 1e9 + s->mono_to_real,
		.pid = ev->tgid,
		.tid = ev->tid,
		.func = alloc_func_name(ev->func),
		.size = ev->size,
		.addr = ev->addr,
	};
	uint32_t nr = ev->stack.nr < MAX_STACK_DEPTH ? ev->stack.nr : MAX_STACK_DEPTH;

	/* The loader may have mapped more since the last report. */
	symbolizer__refresh(s->syms);
	s->nr_frames = 0;
	if (resolve_stack(s, ev->stack.ips, nr))
		return;
	alert.frames = s->frames;
	alert.nr_frames = s->nr_frames;
	note_write_error(s, report_writer__big_alloc(s->writer, &alert));
	/* Exporters say what went wrong themselves, once. */
	for (size_t i = 0; i < s->nr_exporters; i++)
		exporter__big_alloc(s->exporters[i], &alert);
}

static int build_stacks(struct session *s, const struct profile_stack *const *top, size_t n,
			struct report_stack *out)
{
	size_t first;
	int err;

	s->nr_frames = 0;
	for (size_t i = 0; i < n; i++) {
		first = s->nr_frames;
		err = resolve_stack(s, top[i]->ips, top[i]->nr_ips);
		if (err)
			return err;
		out[i] = (struct report_stack){
			.stack_id = top[i]->stack_id,
			.outstanding_bytes = top[i]->stats.outstanding_bytes,
			.outstanding_allocs = top[i]->stats.outstanding_allocs,
			.allocs = top[i]->stats.allocs,
			.alloc_bytes = top[i]->stats.alloc_bytes,
			.nr_frames = s->nr_frames - first,
		};
		/* Offsets for now: the buffer may still move. */
		out[i].frames = (const struct frame_info *)(uintptr_t)first;
	}
	for (size_t i = 0; i < n; i++)
		out[i].frames = s->frames + (uintptr_t)out[i].frames;
	return 0;
}

static int session__report(struct session *s, bool final)
{
	const struct profile_stack *const *top;
	struct report_stack *stacks;
	struct report r = {
		.final = final,
		.time = clock_seconds(CLOCK_REALTIME),
		.pid = target__pid(s->target),
		.comm = target__comm(s->target),
		.exit = target__exit(s->target),
		.rss_bytes = target__rss(s->target),
		.interval = s->opts->interval,
	};
	int err;

	err = tracer__collect(s->tracer, s->profile);
	if (err) {
		pr_err("cannot read the BPF maps: %s", strerror(-err));
		return err;
	}
	/* Libraries loaded since the last report need their mappings. */
	symbolizer__refresh(s->syms);
	/* Exporters see every stack; the live report the top ones. */
	r.nr_stacks = profile__top(s->profile, s->nr_exporters ? 0 : s->opts->top, &top);
	r.nr_holding = profile__nr_holding(s->profile);
	r.totals = profile__totals(s->profile);
	stacks = calloc(r.nr_stacks + 1, sizeof(*stacks));
	if (!stacks)
		return -ENOMEM;
	err = build_stacks(s, top, r.nr_stacks, stacks);
	if (!err) {
		r.stacks = stacks;
		for (size_t i = 0; i < s->nr_exporters; i++)
			exporter__report(s->exporters[i], &r);
		if (s->opts->top && r.nr_stacks > s->opts->top)
			r.nr_stacks = s->opts->top;
		note_write_error(s, report_writer__report(s->writer, &r));
	}
	free(stacks);
	s->reports++;
	return err;
}

static int found_allocator(void *ctx)
{
	struct session *s = ctx;
	int err = allocator__find(target__pid(s->target), &s->opts->alloc, &s->allocator);

	if (err == -ENOENT)
		return s->allocator.final ? -ENOENT : 0;
	return err ? err : 1;
}

static int find_allocator(struct session *s)
{
	pid_t pid = target__pid(s->target);
	int err;

	if (s->opts->argv)
		err = target__run_until(s->target, found_allocator, s);
	else
		err = found_allocator(s) > 0 ? 0 : -ENOENT;
	if (err == -ESRCH)
		pr_err("process %d (%s) exited before alloctrace could attach", pid,
		       target__comm(s->target));
	else if (err == -EINVAL)
		;	/* --allocator's object was wrong: said already */
	else if (err)
		pr_err("no allocator (malloc and free) found in process %d (%s): "
		       "is it static and stripped, or not using malloc?",
		       pid, target__comm(s->target));
	return err;
}

static int open_target(struct session *s)
{
	s->target = s->opts->argv ? target__launch(s->opts->argv) : target__attach(s->opts->pid);
	return s->target ? 0 : -errno;
}

static int open_tracer(struct session *s)
{
	struct tracer_opts topts = {
		.sz = sizeof(topts),
		.pid = target__pid(s->target),
		.big_threshold = s->opts->big,
		.stack_depth = s->opts->stack_depth,
		.on_big_alloc = on_big_alloc,
		.ctx = s,
	};

	s->tracer = tracer__open(&topts);
	return s->tracer ? 0 : -errno;
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
	if (s->epfd < 0 || s->timerfd < 0 || timerfd_settime(s->timerfd, 0, &its, NULL))
		return -errno;
	err = add_fd(s, s->sigfd);
	if (!err)
		err = add_fd(s, s->timerfd);
	if (!err)
		err = add_fd(s, tracer__events_fd(s->tracer));
	if (!err && target__fd(s->target) >= 0)
		err = add_fd(s, target__fd(s->target));
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

static int find_allocator(struct session *s);
static void describe_allocator(struct session *s);

/*
 * A launched command exec'd another program (a wrapper, env, a shell):
 * probe the new image from its first instruction as at launch.
 */
static void reattach(struct session *s)
{
	int err;

	pr_info("pid %d became '%s': tracing the new program", target__pid(s->target),
		target__comm(s->target));
	err = tracer__reset(s->tracer);
	if (!err)
		err = find_allocator(s);
	if (!err)
		err = tracer__attach(s->tracer, &s->allocator);
	if (err) {
		pr_err("cannot trace pid %d after its exec: %s", target__pid(s->target),
		       strerror(-err));
		s->done = true;
		return;
	}
	describe_allocator(s);
	symbolizer__refresh(s->syms);
	target__resume(s->target);
}

static void on_target_event(struct session *s)
{
	switch (target__update(s->target)) {
	case TARGET_EXECED:
		reattach(s);
		break;
	case TARGET_EXITING:
		/* Last chance to read its mappings. */
		symbolizer__refresh(s->syms);
		target__resume(s->target);
		break;
	case TARGET_GONE:
		s->done = true;
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
			on_target_event(s);
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
			on_target_event(s);
		for (int i = 0; i < n && !s->done; i++) {
			int fd = evs[i].data.fd;

			if (fd == s->sigfd)
				on_signal(s);
			else if (fd == s->timerfd)
				on_timer(s);
			else if (fd == target__fd(s->target))
				on_target_event(s);
			else
				tracer__consume(s->tracer);
		}
	}
	return 0;
}

static void describe_allocator(struct session *s)
{
	const struct allocator *a = &s->allocator;

	pr_debug("allocator: %s (%s)", a->objs[0].name, a->why);
	if (a->nr_objs > 1)
		pr_debug("mmap: %s", a->objs[1].name);
	pr_info("tracing pid %d (%s): %zu probes in %s%s%s", target__pid(s->target),
		target__comm(s->target), tracer__nr_probes(s->tracer), a->objs[0].name,
		a->nr_objs > 1 ? " and " : "", a->nr_objs > 1 ? a->objs[1].name : "");
}

static int start(struct session *s)
{
	/* Before anything is launched: a command must not run untraced. */
	if (tracer__check_system())
		return EXIT_PRIVILEGE;
	if (open_target(s) || find_allocator(s))
		return EXIT_TARGET;
	if (open_tracer(s) || tracer__attach(s->tracer, &s->allocator))
		return EXIT_FAILURE_RUNTIME;
	s->syms = symbolizer__new(target__pid(s->target));
	if (!s->syms) {
		pr_err("cannot read the mappings of process %d: %s", target__pid(s->target),
		       strerror(errno));
		return EXIT_TARGET;
	}
	if (target__resume(s->target))
		return EXIT_TARGET;
	if (target__update(s->target) == TARGET_GONE && !s->opts->argv) {
		pr_err("process %d exited while alloctrace attached", target__pid(s->target));
		return EXIT_TARGET;
	}
	describe_allocator(s);
	return EXIT_OK;
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
	target__free(s->target);
	symbolizer__free(s->syms);
	profile__free(s->profile);
	report_writer__free(s->writer);
	free(s->frames);
	for (int fd = 0, fds[] = { s->epfd, s->sigfd, s->timerfd }; fd < 3; fd++) {
		if (fds[fd] >= 0)
			close(fds[fd]);
	}
}

int session__run(const struct options *opts)
{
	struct session s = { .opts = opts, .epfd = -1, .sigfd = -1, .timerfd = -1 };
	int ret;

	s.mono_to_real = clock_seconds(CLOCK_REALTIME) - clock_seconds(CLOCK_MONOTONIC);
	s.profile = profile__new();
	s.writer = report_writer__new(opts->format, stdout);
	if (!s.profile || !s.writer || block_signals(&s)) {
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
	if (setup_loop(&s) || run_loop(&s)) {
		pr_err("event loop failed: %s", strerror(errno));
		ret = EXIT_FAILURE_RUNTIME;
	}
	tracer__consume(s.tracer);
	if (!s.write_err && session__report(&s, true))
		ret = EXIT_FAILURE_RUNTIME;
	if (s.write_err && s.write_err != -EPIPE)
		ret = EXIT_FAILURE_RUNTIME;
	if (finish_exporters(&s))
		ret = EXIT_FAILURE_RUNTIME;
out:
	session__close(&s);
	return ret;
}
