// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One run from start to end: set up the output, the targets and the
 * tracer, attach, run the loop (loop.c), write the final report
 * (reports.c) and the exports, close everything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "app/session.h"
#include "app/leaks.h"
#include "app/state.h"
#include "app/execs.h"
#include "app/loop.h"
#include "app/reports.h"
#include "app/collect.h"
#include "tracer/tracer.h"
#include "lib/log.h"
#include "proc/access.h"

static int open_tracer(struct session *s)
{
	struct tracer_opts topts = {
	    .big_only = s->opts->alloc.big_only,
	    .probe_mmap = s->opts->alloc.mmap,
	    .forks_held = s->opts->argv && s->opts->follow_forks,
	    .sizes = s->opts->maps,
	    .on_big_alloc = on_big_alloc,
	    .on_oom = on_oom,
	    .on_exec = on_exec,
	    .on_linkmap = on_linkmap,
	    .on_exit = collect__note_ended,
	    .ctx = s,
	};

	options__config(s->opts, s->nr_targets ? target__pid(s->targets[0]) : 0,
			s->opts->choice.cgroup ? &s->cgroup : NULL, &topts.config);
	/* Not root: --all takes up only the caller's own processes (proc/access.h). */
	topts.config.owner_only = access__limited();
	topts.config.owner_uid = getuid();
	topts.config.owner_gid = getgid();
	s->tracer = tracer__open(&topts);
	return s->tracer ? 0 : -errno;
}

static int open_targets(struct session *s)
{
	size_t n = s->opts->argv ? 1 : s->opts->nr_pids;
	struct target *t;
	int err;

	if (s->opts->choice.cgroup && cgroup__resolve(s->opts->choice.cgroup, &s->cgroup))
		return -EINVAL;
	s->targets = calloc(n + 1, sizeof(*s->targets));
	if (!s->targets)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!s->opts->argv && !access__may_trace(s->opts->pids[i])) {
			pr_err("process %d: not yours to trace (another user's, or not dumpable): "
			       "without root alloctrace traces only what you could ptrace yourself",
			       s->opts->pids[i]);
			return -EPERM;
		}
		t = s->opts->argv ? target__launch(s->opts->argv)
				  : target__attach(s->opts->pids[i]);
		if (!t)
			return -errno;
		s->targets[s->nr_targets++] = t;
	}
	/* Each child is checked at its own exit stop, as the command is. */
	err = s->opts->argv && s->opts->follow_forks ? target__follow_forks(s->targets[0]) : 0;
	if (err)
		pr_err("cannot follow the forks of '%s' (ptrace): %s", s->opts->argv[0],
		       strerror(-err));
	return err;
}

static int start(struct session *s)
{
	int ret = EXIT_OK;

	/* Before anything is launched: a command must not run untraced. */
	if (tracer__check_system(s->opts->growth))
		return EXIT_PRIVILEGE;
	if (open_targets(s))
		return EXIT_TARGET;
	if (open_tracer(s))
		return EXIT_FAILURE_RUNTIME;
	for (size_t i = 0; i < s->nr_targets && !ret; i++)
		ret = execs__attach(s, s->targets[i]);
	if (!ret && s->opts->all)
		ret = execs__attach_all(s);
	for (size_t i = 0; i < s->nr_targets && !ret; i++) {
		struct target *t = s->targets[i];

		if (target__resume(t))
			return EXIT_TARGET;
		/* A launched command's stops are the loop's to handle, its exit included. */
		if (!s->opts->argv && target__update(t) == TARGET_GONE) {
			pr_err("process %d exited while alloctrace attached", target__pid(t));
			return EXIT_TARGET;
		}
	}
	return ret;
}
/* Create every output file now: a bad path must fail before tracing starts. */
static int open_exporters(struct session *s)
{
	for (int kind = 0; kind < NR_EXPORTS; kind++) {
		const char *path = s->opts->exports[kind];

		if (!path)
			continue;
		s->exporters[s->nr_exporters] = exporter__new(kind, path);
		if (!s->exporters[s->nr_exporters])
			return -errno;
		s->nr_exporters++;
	}
	if (s->opts->pprof_dir) {
		s->exporters[s->nr_exporters] =
		    exporter__new_pprof_dir(s->opts->pprof_dir, s->opts->pprof_keep);
		if (!s->exporters[s->nr_exporters])
			return -errno;
		s->nr_exporters++;
	}
	if (metrics_server__open(s->opts, &s->metrics))
		return -EINVAL;
	s->out = s->opts->output ? output__open(s->opts->output) : stdout;
	return s->out ? 0 : -errno;
}

static bool exporters_per_block(const struct session *s)
{
	for (size_t i = 0; i < s->nr_exporters; i++) {
		if (exporter__per_block(s->exporters[i]))
			return true;
	}
	return false;
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
		(s->tracing ? exporter__free : exporter__discard)(s->exporters[i]);
	if (s->out && s->out != stdout)
		output__discard(s->out, s->opts->output);
	tracer__free(s->tracer);
	for (size_t i = 0; i < s->nr_targets; i++)
		target__free(s->targets[i]);
	free(s->targets);
	for (size_t i = 0; i < s->nr_followed; i++)
		target__free(s->followed[i]);
	free(s->followed);
	procs__release(&s->procs);
	free(s->ended);
	free(s->all_alloc);
	filter__free(s->filter);
	report_writer__free(s->writer);
	metrics_server__free(s->metrics);
	leaks__forget(s, true);
	for (int fd = 0, fds[] = {s->epfd, s->sigfd, s->timerfd, s->retry_fd}; fd < 4; fd++) {
		if (fds[fd] >= 0)
			close(fds[fd]);
	}
}

int session__run(const struct options *opts)
{
	struct session s = {.opts = opts, .epfd = -1, .sigfd = -1, .timerfd = -1, .retry_fd = -1};
	int ret;

	s.multi = options__multi_proc(opts);
	s.mono_to_real = clock_seconds(CLOCK_REALTIME) - clock_seconds(CLOCK_MONOTONIC);
	procs__init(&s.procs, opts->interval / 2);
	if (open_exporters(&s)) {
		ret = EXIT_USAGE;
		goto out;
	}
	s.writer = report_writer__new(opts->format, s.out);
	s.filter = filter__new(&opts->filter);
	if (!s.writer || !s.filter || loop__block_signals(&s)) {
		pr_err("cannot set up: %s", strerror(errno));
		ret = EXIT_FAILURE_RUNTIME;
		goto out;
	}
	ret = start(&s);
	if (ret)
		goto out;
	s.tracing = true;
	/*
	 * Blocks one by one when a filter, the threads, a data sample or an
	 * export need them; pages always.
	 */
	s.per_block = filter__per_block(s.filter) || opts->threads || opts->show_data ||
		      exporters_per_block(&s) || opts->sample || opts->growth;
	if (loop__setup(&s) || loop__run(&s)) {
		pr_err("event loop failed: %s", strerror(errno));
		ret = EXIT_FAILURE_RUNTIME;
	}
	tracer__consume(s.tracer);
	if (!s.write_err && reports__write(&s, true))
		ret = EXIT_FAILURE_RUNTIME;
	if (s.write_err && s.write_err != -EPIPE)
		ret = EXIT_FAILURE_RUNTIME;
	if (finish_exporters(&s) || s.failed)
		ret = EXIT_FAILURE_RUNTIME;
	if (s.out != stdout && output__close(s.out, opts->output))
		ret = EXIT_FAILURE_RUNTIME;
	s.out = NULL;
out:
	session__close(&s);
	return ret;
}
