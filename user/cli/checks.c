// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The checks of a parsed command line: options that cannot go together, and what they imply. */
#include <errno.h>
#include <stdio.h>
#include "lib/log.h"
#include "lib/util.h"
#include "cli/options.h"

/* --all's cap: sixteen processes at it fill the live-allocation map. */
#define ALL_MAX_PER_PROC 65536

/* --cgroup and --comm narrow --all: the rest of the checks see --all. */
static int check_choice(struct options *opts)
{
	if (!proc_choice__narrows(&opts->choice))
		return 0;
	if (opts->all || opts->nr_pids || opts->argv) {
		pr_err("--cgroup and --comm choose the processes: give no --all, -p PID or "
		       "command with them");
		return -EINVAL;
	}
	opts->all = true;
	return 0;
}

/* An option @opt refuses, if given. */
struct refused {
	const char *name;
	bool given;
};

/*
 * @opt refuses the options of @r (@n of them) for @why: say so, naming
 * only the ones given. 0 when none is, else -EINVAL.
 */
static int refuse(const char *opt, const struct refused *r, size_t n, const char *why)
{
	char names[128] = "";
	size_t len = 0, nr = 0;

	for (size_t i = 0; i < n; i++) {
		if (r[i].given)
			len += snprintf(names + len, sizeof(names) - len, "%s%s", nr++ ? ", " : "",
					r[i].name);
	}
	if (!nr)
		return 0;
	pr_err("%s takes no %s: %s", opt, names, why);
	return -EINVAL;
}

/*
 * --growth counts pages, not allocations. @all: --all given itself, not
 * set by --cgroup or --comm, whose processes it follows as -p's.
 */
static int check_growth(const struct options *opts, bool all)
{
	const struct refused r[] = {
	    {"--big-only", opts->alloc.big_only}, {"--sample", opts->sample},
	    {"--mmap", opts->alloc.mmap},	  {"--all", all},
	    {"--min-age", opts->filter.min_age},
	};

	return opts->growth
		   ? refuse("--growth", r, ARRAY_SIZE(r), "it counts pages, not allocations")
		   : 0;
}

/* A verdict needs every block: one not tracked would count as a root. */
static int check_leak_check(const struct options *opts, bool all)
{
	const struct refused r[] = {
	    {"--big-only", opts->alloc.big_only},
	    {"--growth", opts->growth},
	    {"--sample", opts->sample},
	    {"--all", all},
	};

	if ((opts->nr_leak_wrappers || opts->no_leak_learning) && !opts->leak_check) {
		pr_err("--leak-check-wrapper tells --leak-check of a wrapper: give it too");
		return -EINVAL;
	}
	return opts->leak_check ? refuse("--leak-check", r, ARRAY_SIZE(r),
					 "a verdict needs every block of the processes it checks")
				: 0;
}

int options__check(struct options *opts)
{
	/* --all as given: --cgroup and --comm set it, and leave it to choose. */
	bool all = opts->all;

	if (check_choice(opts))
		return -EINVAL;
	if (opts->filter.max_size && opts->filter.min_size > opts->filter.max_size) {
		pr_err("--min-size is larger than --max-size: no block could count");
		return -EINVAL;
	}
	if (opts->alloc.big_only && !opts->big) {
		pr_err("--big-only needs --big SIZE: the smallest block to see");
		return -EINVAL;
	}
	if (opts->alloc.big_only && (opts->sample || opts->alloc.mmap)) {
		pr_err("--big-only takes neither --sample nor --mmap: it probes no allocator");
		return -EINVAL;
	}
	if (check_growth(opts, all) || check_leak_check(opts, all))
		return -EINVAL;
	if (opts->listen.web_config && !opts->listen.text) {
		pr_err("--web-config secures the endpoint of --listen ADDR:PORT: give it too");
		return -EINVAL;
	}
	if (opts->pprof_keep && !opts->pprof_dir) {
		pr_err("--pprof-keep bounds the files of --pprof-dir DIR: give it too");
		return -EINVAL;
	}
	if (!opts->pprof_keep)
		opts->pprof_keep = PPROF_DIR_KEEP;
	if (opts->all && (opts->nr_pids || opts->argv)) {
		pr_err("--all traces every process: give no -p PID or command with it");
		return -EINVAL;
	}
	if (opts->nr_pids && opts->argv) {
		pr_err("give either -p PID or a command, not both");
		return -EINVAL;
	}
	if (!opts->nr_pids && !opts->argv && !opts->all) {
		pr_err("nothing to trace: give -p PID, -- COMMAND, --all, --cgroup or --comm "
		       "(see --help)");
		return -EINVAL;
	}
	if (opts->max_per_proc && !options__multi_proc(opts)) {
		pr_err("--max-per-process caps each of several processes: give it with "
		       "-p PID,PID..., --follow-forks or --all");
		return -EINVAL;
	}
	if (opts->all && !opts->max_per_proc)
		opts->max_per_proc = ALL_MAX_PER_PROC;
	return 0;
}
