// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
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
#include "filter.h"
#include "history.h"
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
	struct history *history;
	struct filter *filter;
	bool per_block;		/* reports are rebuilt from the live blocks */
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
	bool failed;		/* tracing stopped on an error: exit 1 */
	bool oom_killed;
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

static void on_oom(void *ctx, const struct oom_event *ev)
{
	struct session *s = ctx;

	s->oom_killed = true;
	pr_info("the kernel's OOM killer chose pid %u: its final report follows", ev->tgid);
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

/* How much of the secondary lists a report shows. */
#define MAX_GROWING 5
#define MAX_THREADS 10
#define THREAD_STACKS 5

/*
 * One report's stacks: every list (top, growing, per thread, peak) is cut
 * from one array, and frames go to the session's buffer as offsets until
 * the buffer stops moving.
 */
struct report_parts {
	struct report_stack *stacks;
	size_t nr;
	struct report_thread threads[MAX_THREADS];
	char thread_names[MAX_THREADS][32];
	struct report_peak peak;
	uint8_t (*data)[256];
};

static int add_stack(struct session *s, struct report_parts *rp, const struct profile_stack *st)
{
	struct report_stack *out = &rp->stacks[rp->nr];
	size_t first = s->nr_frames;
	int err;

	err = resolve_stack(s, st->ips, st->nr_ips);
	if (err)
		return err;
	*out = (struct report_stack){
		.stack_id = st->stack_id,
		.outstanding_bytes = st->stats.outstanding_bytes,
		.outstanding_allocs = st->stats.outstanding_allocs,
		.allocs = st->stats.allocs,
		.alloc_bytes = st->stats.alloc_bytes,
		.growth_bytes = st->growth_bytes,
		.trend = trend_name(st->trend),
		.nr_frames = s->nr_frames - first,
		.frames = (const struct frame_info *)(uintptr_t)first,
	};
	rp->nr++;
	return 0;
}

/* --show-data: the first bytes of the block each top stack kept as a sample. */
static void add_data(struct session *s, struct report_parts *rp, const struct profile_stack *st,
		     size_t i)
{
	struct report_stack *out = &rp->stacks[i];
	size_t len = s->opts->show_data;
	long n;

	if (!st->sample_addr || !rp->data)
		return;
	if (len > st->sample_size)
		len = st->sample_size;
	n = target__read(s->target, st->sample_addr, rp->data[i], len);
	if (n <= 0)
		return;
	out->data_addr = st->sample_addr;
	out->data = rp->data[i];
	out->data_len = n;
}

static int add_threads(struct session *s, struct report_parts *rp, struct report *r)
{
	const struct profile_thread *th;
	size_t n = profile__threads(s->profile, &th);
	int err = 0;

	for (size_t i = 0; i < n && i < MAX_THREADS && !err; i++) {
		struct report_thread *out = &rp->threads[i];
		size_t first = rp->nr;

		target__thread_name(s->target, th[i].tid, rp->thread_names[i],
				    sizeof(rp->thread_names[i]));
		for (size_t j = 0; j < th[i].nr_stacks && j < THREAD_STACKS && !err; j++) {
			struct profile_stack *st = profile__stack(s->profile, th[i].stacks[j].index);

			err = add_stack(s, rp, st);
			/* The thread's share of the stack, not the whole stack's. */
			rp->stacks[rp->nr - 1].outstanding_bytes = th[i].stacks[j].outstanding_bytes;
			rp->stacks[rp->nr - 1].outstanding_allocs = th[i].stacks[j].outstanding_allocs;
		}
		*out = (struct report_thread){
			.tid = th[i].tid,
			.comm = rp->thread_names[i][0] ? rp->thread_names[i] : NULL,
			.outstanding_bytes = th[i].outstanding_bytes,
			.outstanding_allocs = th[i].outstanding_allocs,
			.nr_stacks = rp->nr - first,
			.stacks = &rp->stacks[first],
		};
		r->nr_threads++;
	}
	r->threads = rp->threads;
	return err;
}

static int add_peak(struct session *s, struct report_parts *rp, struct report *r)
{
	const struct peak *pk = history__peak(s->history);
	size_t first = rp->nr;
	int err = 0;

	if (!pk->time)
		return 0;
	for (size_t i = 0; i < pk->nr_stacks && !err; i++)
		err = add_stack(s, rp, &pk->stacks[i]);
	rp->peak = (struct report_peak){
		.time = pk->time,
		.outstanding_bytes = pk->outstanding_bytes,
		.outstanding_allocs = pk->outstanding_allocs,
		.nr_stacks = rp->nr - first,
		.stacks = &rp->stacks[first],
	};
	r->peak = &rp->peak;
	return err;
}

static int build_parts(struct session *s, struct report_parts *rp, struct report *r,
		       const struct profile_stack *const *top, bool final)
{
	const struct profile_stack *growing[MAX_GROWING];
	int err = 0;

	s->nr_frames = 0;
	for (size_t i = 0; i < r->nr_stacks && !err; i++) {
		err = add_stack(s, rp, top[i]);
		if (!err && (!s->opts->top || i < s->opts->top))
			add_data(s, rp, top[i], i);
	}
	r->nr_growing = history__growing(s->profile, growing, MAX_GROWING);
	r->growing = &rp->stacks[rp->nr];
	for (size_t i = 0; i < r->nr_growing && !err; i++)
		err = add_stack(s, rp, growing[i]);
	if (!err && s->per_block && (s->opts->threads || s->nr_exporters))
		err = add_threads(s, rp, r);
	if (!err && final)
		err = add_peak(s, rp, r);
	for (size_t i = 0; i < rp->nr; i++)
		rp->stacks[i].frames = s->frames + (uintptr_t)rp->stacks[i].frames;
	r->stacks = rp->stacks;
	return err;
}

struct block_pass {
	struct session *s;
	uint64_t now_ns;
};

/* How many allocations of @size one sample stands for (1 without sampling). */
static double sample_weight(const struct session *s, double size)
{
	uint64_t rate = s->opts->sample;

	if (!rate)
		return 1;
	if (size < 1)
		size = 1;
	return 1 / -expm1(-size / rate);
}

static int add_block(void *ctx, uint64_t addr, const struct alloc_info *info)
{
	struct block_pass *bp = ctx;

	if (!filter__block(bp->s->filter, info, bp->now_ns))
		return 0;
	return profile__add_block(bp->s->profile, info->stack_id, info->size,
				  sample_weight(bp->s, info->size), info->tid, addr);
}

/*
 * A stack's allocation totals count samples; scale them by the weight of
 * its average allocation (the sizes of freed samples are not kept).
 */
static void scale_samples(struct session *s)
{
	for (size_t i = 0; i < profile__nr_stacks(s->profile); i++) {
		struct stack_stats *st = &profile__stack(s->profile, i)->stats;
		double w;

		if (!st->allocs)
			continue;
		w = sample_weight(s, (double)st->alloc_bytes / st->allocs);
		st->allocs = llround(st->allocs * w);
		st->alloc_bytes = llround(st->alloc_bytes * w);
	}
}

/* Rebuild what is held from the blocks themselves, through the filters. */
static int count_blocks(struct session *s)
{
	struct block_pass bp = { .s = s, .now_ns = clock_seconds(CLOCK_MONOTONIC) * 1e9 };
	int err;

	err = profile__begin_blocks(s->profile);
	if (!err)
		err = tracer__for_each_block(s->tracer, add_block, &bp);
	if (!err)
		err = profile__end_blocks(s->profile);
	return err;
}

/* --module: keep the stacks with a frame in a matching object. */
static void filter_modules(struct session *s)
{
	struct frame_info frame;

	for (size_t i = 0; i < profile__nr_stacks(s->profile); i++) {
		struct profile_stack *st = profile__stack(s->profile, i);
		bool keep = false;

		for (uint32_t j = 0; j < st->nr_ips && !keep; j++) {
			symbolizer__resolve(s->syms, st->ips[j], &frame, 1);
			keep = filter__module(s->filter, frame.module);
		}
		if (!keep)
			profile__drop_stack(s->profile, i);
	}
}

static int collect(struct session *s, double time)
{
	int err;

	err = tracer__collect(s->tracer, s->profile);
	if (!err && s->opts->sample)
		scale_samples(s);
	if (!err && s->per_block)
		err = count_blocks(s);
	if (err) {
		pr_err("cannot read the BPF maps: %s", strerror(-err));
		return err;
	}
	/* Libraries loaded since the last report need their mappings. */
	symbolizer__refresh(s->syms);
	if (filter__has_module(s->filter))
		filter_modules(s);
	return history__update(s->history, s->profile, time);
}

static int session__report(struct session *s, bool final)
{
	const struct profile_stack *const *top;
	struct report_parts rp = {};
	struct report r = {
		.final = final,
		.time = clock_seconds(CLOCK_REALTIME),
		.pid = target__pid(s->target),
		.comm = target__comm(s->target),
		.exit = target__exit(s->target),
		.rss_bytes = target__rss(s->target),
		.interval = s->opts->interval,
		.filter = filter__describe(s->filter),
		.sample_rate = s->opts->sample,
	};
	size_t room;
	int err;

	r.exit.oom_killed = s->oom_killed;
	err = collect(s, r.time);
	if (err)
		return err;
	/* Exporters see every stack; the live report the top ones. */
	r.nr_stacks = profile__top(s->profile, s->nr_exporters ? 0 : s->opts->top, &top);
	r.nr_holding = profile__nr_holding(s->profile);
	r.totals = profile__totals(s->profile);
	room = r.nr_stacks + MAX_GROWING + MAX_THREADS * THREAD_STACKS + PEAK_STACKS;
	rp.stacks = calloc(room, sizeof(*rp.stacks));
	if (s->opts->show_data)
		rp.data = calloc(s->opts->top ? s->opts->top : r.nr_stacks + 1, sizeof(*rp.data));
	err = rp.stacks && (rp.data || !s->opts->show_data) ? build_parts(s, &rp, &r, top, final)
							    : -ENOMEM;
	if (!err) {
		for (size_t i = 0; i < s->nr_exporters; i++)
			exporter__report(s->exporters[i], &r);
		if (s->opts->top && r.nr_stacks > s->opts->top)
			r.nr_stacks = s->opts->top;
		if (!s->opts->threads)
			r.nr_threads = 0;
		note_write_error(s, report_writer__report(s->writer, &r));
	}
	free(rp.data);
	free(rp.stacks);
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

	if (s->opts->argv) {
		err = target__run_until(s->target, found_allocator, s);
	} else {
		err = found_allocator(s);
		err = err > 0 ? 0 : err ? err : -ENOENT;
	}
	if (err == -ESRCH)
		pr_err("process %d (%s) exited before alloctrace could attach", pid,
		       target__comm(s->target));
	else if (err == -EINVAL)
		;	/* said already: a bad --allocator, mappings not readable */
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
		.sample_rate = s->opts->sample,
		.sizes = s->opts->maps,
		.on_big_alloc = on_big_alloc,
		.on_oom = on_oom,
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
	history__free(s->history);
	s->history = history__new(s->opts->interval / 2);
	if (!s->history)
		err = -ENOMEM;
	if (!err)
		err = find_allocator(s);
	if (!err)
		err = tracer__attach(s->tracer, &s->allocator);
	if (err) {
		pr_err("cannot trace pid %d after its exec: %s", target__pid(s->target),
		       strerror(-err));
		s->failed = true;
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
	char others[2 * PATH_MAX + 16] = "";
	size_t len = 0;

	pr_debug("allocator: %s (%s)", a->objs[0].name, a->why);
	for (size_t i = 1; i < a->nr_objs && len < sizeof(others); i++) {
		pr_debug("also probed: %s", a->objs[i].name);
		len += snprintf(others + len, sizeof(others) - len, " and %s", a->objs[i].name);
	}
	pr_info("tracing pid %d (%s): %zu probes in %s%s", target__pid(s->target),
		target__comm(s->target), tracer__nr_probes(s->tracer), a->objs[0].name, others);
}

static int start(struct session *s)
{
	int err;

	/* Before anything is launched: a command must not run untraced. */
	if (tracer__check_system())
		return EXIT_PRIVILEGE;
	if (open_target(s) || find_allocator(s))
		return EXIT_TARGET;
	if (open_tracer(s))
		return EXIT_FAILURE_RUNTIME;
	err = tracer__attach(s->tracer, &s->allocator);
	if (err)
		return err == -ESRCH ? EXIT_TARGET : EXIT_FAILURE_RUNTIME;
	s->syms = symbolizer__new(target__pid(s->target));
	if (!s->syms) {
		pr_err("cannot read the mappings of process %d: %s", target__pid(s->target),
		       strerror(errno));
		return EXIT_TARGET;
	}
	if (target__resume(s->target))
		return EXIT_TARGET;
	/* A launched command's stops are the loop's to handle, its exit included. */
	if (!s->opts->argv && target__update(s->target) == TARGET_GONE) {
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
	history__free(s->history);
	filter__free(s->filter);
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
	s.history = history__new(opts->interval / 2);
	s.writer = report_writer__new(opts->format, stdout);
	if (!s.profile || !s.history || !s.writer || block_signals(&s)) {
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
	s.filter = filter__new(&opts->filter, s.target);
	if (!s.filter) {
		ret = EXIT_FAILURE_RUNTIME;
		goto out;
	}
	/* Blocks one by one when a filter, the threads or a data sample need them. */
	s.per_block = filter__per_block(s.filter) || opts->threads || opts->show_data ||
		      opts->exports[EXPORT_HTML] || opts->sample;
	if (setup_loop(&s) || run_loop(&s)) {
		pr_err("event loop failed: %s", strerror(errno));
		ret = EXIT_FAILURE_RUNTIME;
	}
	tracer__consume(s.tracer);
	if (!s.write_err && session__report(&s, true))
		ret = EXIT_FAILURE_RUNTIME;
	if (s.write_err && s.write_err != -EPIPE)
		ret = EXIT_FAILURE_RUNTIME;
	if (finish_exporters(&s) || s.failed)
		ret = EXIT_FAILURE_RUNTIME;
out:
	session__close(&s);
	return ret;
}
