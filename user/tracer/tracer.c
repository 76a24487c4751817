// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h" /* before the skeleton, whose rodata holds a struct alloctrace_config */
#include "alloctrace.skel.h"
#include "lib/log.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"
#include "arch/arch.h"
#include "tracer/unwinder.h"
#include "tracer/features.h"
#include "tracer/uprobe_multi.h"
#include "lib/util.h"

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_verbose() < 2)
		return 0;
	if (!log_verbose())
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bool has_cap(const struct __user_cap_data_struct *data, int cap)
{
	return data[cap / 32].effective & (1U << (cap % 32));
}

/* The caller's effective capabilities into @data. 0 or -errno. */
static int read_caps(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};

	return syscall(SYS_capget, &hdr, data) ? -errno : 0;
}

/*
 * Root, or CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON where the kernel has
 * uprobe_multi links that filter by process. Older kernels attach uprobes
 * as perf events, which kernels with the CVE-2025-38466 fix (Debian's 6.1
 * among them) let only CAP_SYS_ADMIN attach: say so before loading
 * anything rather than fail at the first probe.
 */
static int check_privileges(void)
{
	struct __user_cap_data_struct data[2] = {};
	int err = read_caps(data);

	if (err)
		return err;
	if (has_cap(data, CAP_SYS_ADMIN))
		return 0;
	if (!has_cap(data, CAP_BPF) || !has_cap(data, CAP_PERFMON)) {
		pr_err("need root, or CAP_BPF and CAP_PERFMON, to load BPF programs (try sudo)");
		return -EPERM;
	}
	if (uprobe_multi__supported())
		return 0;
	pr_err("this kernel has no uprobe_multi links that filter by process (Linux 6.10+): "
	       "its perf-event uprobes need CAP_SYS_ADMIN, not only CAP_BPF and CAP_PERFMON (try "
	       "sudo)");
	return -EPERM;
}

/* One line naming every feature the run needs and the kernel lacks, with its release. */
static int check_kernel_features(bool growth)
{
	struct kernel_features f;
	char missing[512];
	int nr;

	kernel_features__probe(&f);
	nr = kernel_features__missing(&f, growth, missing, sizeof(missing));
	if (!nr)
		return 0;
	pr_err("this kernel lacks what alloctrace%s needs: %s (alloctrace --version lists "
	       "what it has)",
	       growth ? " --growth" : "", missing);
	return -EOPNOTSUPP;
}

int tracer__check_system(bool growth)
{
	int err = check_privileges();

	return err ? err : check_kernel_features(growth);
}

void tracer__print_features(FILE *out)
{
	struct __user_cap_data_struct data[2] = {};
	struct kernel_features f;

	/* Unprivileged, every probe would fail: not the kernel's answer. */
	if (read_caps(data) || (!has_cap(data, CAP_SYS_ADMIN) &&
				(!has_cap(data, CAP_BPF) || !has_cap(data, CAP_PERFMON)))) {
		fprintf(out,
			"kernel features: not probed (needs root, or CAP_BPF and CAP_PERFMON)\n");
		return;
	}
	kernel_features__probe(&f);
	kernel_features__print(&f, out);
}

static uint32_t or_default(uint32_t v, uint32_t def)
{
	return v ? v : def;
}

/* The maps' capacities; *@live_mask: the live-block table's slots - 1. */
static int set_sizes(struct alloctrace_bpf *skel, const struct map_sizes *sz, bool growth,
		     __u32 *live_mask)
{
	uint32_t blocks = or_default(sz->allocs, DEFAULT_MAX_ALLOCS);
	/* --growth keeps pages, not blocks: --max-allocs sizes the pages map instead. */
	uint32_t slots = live__slots(growth ? 1 : blocks);
	uint32_t stacks = or_default(sz->stacks, DEFAULT_MAX_STACKS);
	uint32_t ringbuf = or_default(sz->ringbuf, DEFAULT_RINGBUF_SIZE);
	int err;

	*live_mask = slots - 1;
	err = bpf_map__set_max_entries(skel->maps.allocs, slots);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.stacks, stacks);
	/* Room for the unknown stack too, so that allocations whose stack was lost still count. */
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.stack_stats, stacks + 1);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.events, ringbuf);
	if (!err && growth)
		err = bpf_map__set_max_entries(skel->maps.pages, blocks);
	return err;
}

/* The outer map's size for @entries in chunks. */
static uint32_t chunks_for(uint32_t entries)
{
	return (entries + UNWIND_CHUNK_ENTRIES - 1) / UNWIND_CHUNK_ENTRIES;
}

static int configure(struct tracer *t, const struct tracer_opts *opts)
{
	struct alloctrace_config cfg = opts->config;
	struct alloctrace_bpf *skel = t->skel;
	int err;

	/* Loaded for --big-only's fallback; attached, they tax every syscall on the system. */
	bpf_program__set_autoload(skel->progs.big_sys_enter, t->syscalls);
	bpf_program__set_autoload(skel->progs.big_sys_exit, t->syscalls);
	bpf_program__set_autoload(skel->progs.page_fault, t->growth && arch_growth_tracepoint);
	bpf_program__set_autoload(skel->progs.page_fault_event,
				  t->growth && !arch_growth_tracepoint);
	bpf_program__set_autoload(skel->progs.big_map_search, t->map_search);
	bpf_program__set_autoload(skel->progs.page_classify, t->growth);
	if (cfg.unwind_cfi) {
		err = bpf_map__set_max_entries(skel->maps.unwind_rows, chunks_for(t->unwind_rows));
		err = err
			  ?: bpf_map__set_max_entries(skel->maps.unwind_pages,
						      chunks_for(UNWIND_PAGES));
		err = err ?: bpf_map__set_max_entries(skel->maps.unwind_procs, UNWIND_PROCS);
		if (err)
			return err;
	}
	if (t->multi) {
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, skel->obj)
		{
			if (bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE)
				bpf_program__set_expected_attach_type(prog,
								      UPROBE_MULTI_ATTACH_TYPE);
		}
	}
	/* Its kfunc is not in kernels before 6.13: load it only where it runs. */
	bpf_program__set_autoload(skel->progs.alloc_session, t->session);
	bpf_program__set_expected_attach_type(skel->progs.alloc_session,
					      UPROBE_SESSION_ATTACH_TYPE);
	err = set_sizes(skel, &opts->sizes, t->growth, &cfg.live_mask);
	if (err)
		return err;
	cfg.stack_depth = t->stack_depth;
	cfg.own_links = t->own_links;
	skel->rodata->cfg = cfg;
	/* Stacks take only the room the chosen depth needs. */
	return bpf_map__set_value_size(skel->maps.stacks, offsetof(struct stack_trace, ips) +
							      t->stack_depth * sizeof(__u64));
}

/* A traced process ran code it has no tables for: most likely it loaded a library. */
static void unwind_miss(struct tracer *t, const struct unwind_miss_event *ev)
{
	if (!t->unwinder)
		return;
	pr_debug("process %u: no unwind tables at %#llx: reading its mappings again", ev->tgid,
		 (unsigned long long)ev->ip);
	tracer__reread_mappings(t, (pid_t)ev->tgid);
}

void tracer__reread_mappings(struct tracer *t, pid_t pid)
{
	int err;

	if (!t->unwinder)
		return;
	err = unwinder__add_process(t->unwinder, pid);
	if (err && err != -ENOENT && err != -ESRCH)
		pr_debug("cannot read the mappings of process %d: %s", (int)pid, strerror(-err));
}

static void exited(struct tracer *t, const struct task_event *ev)
{
	tracer__detach_proc(t, (pid_t)ev->tgid);
	if (t->on_exit)
		t->on_exit(t->ctx, ev);
}

/*
 * EVENT_PAGE: classified once the ring is read (tracer__consume()); with
 * no room to keep it, the next report finds it in the map.
 */
static void page_unclassified(struct tracer *t, const struct page_event *ev)
{
	struct alloc_key *keys;

	keys =
	    array__grow(t->unclassified, &t->unclassified_cap, t->nr_unclassified, sizeof(*keys));
	if (!keys)
		return;
	t->unclassified = keys;
	keys[t->nr_unclassified++] =
	    (struct alloc_key){.addr = ev->addr, .tgid = ev->tgid, .gen = ev->gen};
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	__u32 type = size >= sizeof(type) ? *(__u32 *)data : 0;

	if (type == EVENT_BIG_ALLOC && size >= sizeof(struct big_alloc_event) && t->on_big_alloc)
		t->on_big_alloc(t->ctx, data);
	else if (size < sizeof(struct task_event))
		;
	else if (type == EVENT_OOM_VICTIM && t->on_oom)
		t->on_oom(t->ctx, data);
	else if (type == EVENT_UNWIND_MISS && size >= sizeof(struct unwind_miss_event))
		unwind_miss(t, data);
	else if (type == EVENT_LINKMAP)
		linkwatch__changed(t, data);
	else if (type == EVENT_EXIT)
		exited(t, data);
	else if (type == EVENT_PAGE && size >= sizeof(struct page_event))
		page_unclassified(t, data);
	else if (type == EVENT_EXEC && t->on_exec)
		t->on_exec(t->ctx, data);
	return 0;
}

/*
 * Without the OOM mark only the report's note is missing; without the
 * others, forks, execs or exits go unseen: that is an error.
 */
static int attach_tracepoints(struct tracer *t, const struct tracer_opts *opts)
{
	static const char *const names[NR_TRACEPOINTS] = {
	    [TP_OOM] = "mark_victim",
	    [TP_EXEC] = "sched_process_exec",
	    [TP_FORK] = "sched_process_fork",
	    [TP_EXIT] = "sched_process_exit",
	};
	struct bpf_program *progs[NR_TRACEPOINTS] = {
	    [TP_OOM] = t->skel->progs.oom_victim,
	    [TP_EXEC] = t->skel->progs.proc_exec,
	    [TP_FORK] = opts->config.follow_forks ? t->skel->progs.proc_fork : NULL,
	    [TP_EXIT] = opts->config.multi_proc ? t->skel->progs.proc_exit : NULL,
	};
	int err;

	for (int i = 0; i < NR_TRACEPOINTS; i++) {
		if (!progs[i])
			continue;
		t->task_links[i] = bpf_program__attach_raw_tracepoint(progs[i], names[i]);
		if (t->task_links[i])
			continue;
		err = -errno;
		if (i == TP_OOM) {
			pr_debug("no OOM-victim tracepoint: %s", strerror(-err));
			continue;
		}
		pr_err("cannot attach to the %s tracepoint: %s", names[i], strerror(-err));
		return err;
	}
	return 0;
}

/*
 * The exponential distribution's quantiles at evenly spaced points: the BPF
 * side picks one at random, so the gaps it uses follow the distribution.
 */
static int fill_sample_gaps(struct tracer *t, uint64_t rate)
{
	int fd = bpf_map__fd(t->skel->maps.sample_gaps);

	for (__u32 i = 0; rate && i < SAMPLE_DRAWS; i++) {
		double u = (i + 0.5) / SAMPLE_DRAWS;
		__u64 gap = (__u64)ceil(-log(u) * rate);

		if (bpf_map_update_elem(fd, &i, &gap, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int open_unwinder(struct tracer *t)
{
	struct alloctrace_bpf *skel = t->skel;
	struct unwinder_opts uo = {
	    .sz = sizeof(uo),
	    .rows_fd = bpf_map__fd(skel->maps.unwind_rows),
	    .pages_fd = bpf_map__fd(skel->maps.unwind_pages),
	    .procs_fd = bpf_map__fd(skel->maps.unwind_procs),
	    .max_rows = t->unwind_rows,
	    .max_pages = UNWIND_PAGES,
	    .walk_gen = &skel->bss->walk_gen,
	};

	t->unwinder = unwinder__new(&uo);
	if (!t->unwinder) {
		pr_err("cannot set up the unwinder: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* Each function's entry program: its args' (alloc_funcs.def), by name (arg_shapes.def). */
static const char *const shape_entries[NR_ARG_SHAPES] = {
#define ALLOC_SHAPE(id, entry, reads)	[ARGS_##id] = #entry,
#define RELEASE_SHAPE(id, entry, reads) [ARGS_##id] = #entry,
#include "arg_shapes.def"
#undef ALLOC_SHAPE
#undef RELEASE_SHAPE
};
static const enum arg_shape func_shapes[FUNC_MAX] = {
#define ALLOC_FUNC(id, group, kind, nr_args, args, symbol, display) [FUNC_##id] = ARGS_##args,
#include "alloc_funcs.def"
#undef ALLOC_FUNC
};

/* Find every function's entry program: a name the object lacks fails every run, not one probe. */
static int find_entry_programs(struct tracer *t)
{
	for (int f = 0; f < FUNC_MAX; f++) {
		const char *name = shape_entries[func_shapes[f]];

		t->entry_progs[f] = bpf_object__find_program_by_name(t->skel->obj, name);
		if (!t->entry_progs[f]) {
			pr_err("the BPF object has no program '%s' for %s", name,
			       alloc_func_name(f));
			return -ENOENT;
		}
	}
	return 0;
}

static int load(struct tracer *t, const struct tracer_opts *opts)
{
	int err;

	t->skel = alloctrace_bpf__open();
	if (!t->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	err = find_entry_programs(t);
	if (err)
		return err;
	err = configure(t, opts);
	if (!err)
		err = alloctrace_bpf__load(t->skel);
	if (err) {
		pr_err("cannot load the BPF programs: %s (run with -vv for the verifier's log)",
		       strerror(-err));
		return err;
	}
	t->live = live_table__open(t->skel->maps.allocs);
	if (!t->live) {
		err = -errno;
		pr_err("cannot set up the live-block table: %s", strerror(-err));
		return err;
	}
	err = fill_sample_gaps(t, opts->config.sample_rate);
	if (err) {
		pr_err("cannot fill the sampling table: %s", strerror(-err));
		return err;
	}
	t->events = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_event, t, NULL);
	if (!t->events) {
		err = -errno;
		pr_err("cannot set up the event ring buffer: %s", strerror(-err));
		return err;
	}
	return opts->config.unwind_cfi ? open_unwinder(t) : 0;
}

struct tracer *tracer__open(const struct tracer_opts *opts)
{
	struct tracer *t;
	int err;

	libbpf_set_print(libbpf_log);
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = opts->config.multi_proc ? -1 : (pid_t)opts->config.targ_tgid;
	t->per_pid = !opts->config.follow_forks || opts->forks_held;
	t->own_links = opts->config.multi_proc && t->per_pid;
	t->stack_depth = or_default(opts->config.stack_depth, DEFAULT_STACK_DEPTH);
	t->unwind_rows = or_default(opts->sizes.unwind_rows, DEFAULT_UNWIND_ROWS);
	t->growth = opts->config.growth;
	t->no_probes = t->growth;
	t->syscalls = opts->big_only;
	t->map_search = t->growth && opts->config.big_threshold;
	t->on_big_alloc = opts->on_big_alloc;
	t->on_oom = opts->on_oom;
	t->on_exec = opts->on_exec;
	t->on_linkmap = opts->on_linkmap;
	t->on_exit = opts->on_exit;
	t->ctx = opts->ctx;
	t->nr_cpus = libbpf_num_possible_cpus();
	t->multi = uprobe_multi__supported();
	pr_debug("probes as %s", t->multi ? "uprobe_multi links" : "perf-event uprobes");
	/* malloc's mmap calls would pass for outer ones after a skipped return. */
	t->session = t->multi && !opts->probe_mmap && uprobe_session__supported();
	pr_debug("allocating calls probed by %s",
		 t->session ? "uprobe sessions" : "entry and return probes");
	if (opts->config.sample_rate)
		pr_info("sampling with %s",
			t->session ? "uprobe sessions: a call sampling passes by takes no return "
				     "probe"
				   : "entry and return probes on every call (uprobe sessions need "
				     "Linux 6.13+, and no --mmap)");
	err = t->nr_cpus < 0 ? t->nr_cpus : 0;
	if (!err) {
		t->percpu = calloc(t->nr_cpus, sizeof(*t->percpu));
		err = t->percpu ? load(t, opts) : -ENOMEM;
	}
	if (!err)
		err = attach_tracepoints(t, opts);
	if (err) {
		tracer__free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

void tracer__free(struct tracer *t)
{
	if (!t)
		return;
	/* A thread waiting in the loader's probe goes on at once. */
	if (t->skel)
		t->skel->bss->linkmap_no_answers = true;
	tracer__detach_all(t);
	for (int i = 0; i < NR_TRACEPOINTS; i++)
		bpf_link__destroy(t->task_links[i]);
	ring_buffer__free(t->events);
	unwinder__free(t->unwinder);
	live_table__free(t->live);
	alloctrace_bpf__destroy(t->skel);
	free(t->links);
	free(t->link_fds);
	free(t->files);
	free(t->watched);
	free(t->procs);
	free(t->percpu);
	free(t->settled);
	free(t->unclassified);
	free(t);
}

int tracer__unwind_process(struct tracer *t, pid_t pid)
{
	int err;

	if (!t->unwinder)
		return 0;
	err = unwinder__add_process(t->unwinder, pid);
	/*
	 * Gone, nothing to unwind, or not ours to read (--all meets processes
	 * of other user namespaces): without a table its frames are walked by
	 * frame pointers, no harm.
	 */
	if (err == -ENOENT || err == -ESRCH || err == -EACCES || err == -EPERM) {
		pr_debug("no unwind tables for process %d: %s", (int)pid, strerror(-err));
		return 0;
	}
	/* The per-process table map is full (--all on a busy machine): said once. */
	if (err == -E2BIG) {
		if (!t->warned_procs_full)
			pr_warn("unwind tables for at most %u processes: the stacks of process %d "
				"and later ones use frame pointers",
				UNWIND_PROCS, (int)pid);
		t->warned_procs_full = true;
		return 0;
	}
	if (err)
		pr_err("cannot build the unwind tables of process %d: %s", (int)pid,
		       strerror(-err));
	return err;
}

int tracer__reset(struct tracer *t)
{
	int err;

	tracer__detach_all(t);
	if (t->unwinder)
		unwinder__forget_process(t->unwinder, t->pid);
	/* Calls that entered before are never seen returning: forget them. */
	t->skel->bss->probe_epoch++;
	err = live_table__drop(t->live, NULL, NULL);
	if (!err)
		err = maps__clear(t->skel->maps.stack_stats);
	/* The old program's stacks would hold room --max-stacks gave the new one. */
	if (!err)
		err = maps__clear(t->skel->maps.stacks);
	/* Remembered walks name stacks that are gone. */
	__atomic_fetch_add(&t->skel->bss->walk_gen, 1, __ATOMIC_SEQ_CST);
	if (!err)
		err = maps__zero_counters(t);
	return err;
}

int tracer__events_fd(const struct tracer *t)
{
	return ring_buffer__epoll_fd(t->events);
}

int tracer__consume(struct tracer *t)
{
	int ret = ring_buffer__consume(t->events);

	return ret < 0 ? ret : 0;
}

/*
 * EVENT_PAGE's pages wait for a batch: at most UNCLASSIFIED_PERIOD after
 * the last one, or at once when UNCLASSIFIED_BATCH wait, so that a process
 * whose lock stays busy costs a reading of its mappings 20 times a second,
 * not one per event.
 */
#define UNCLASSIFIED_PERIOD 0.05
#define UNCLASSIFIED_BATCH  4096

double tracer__pages_due(const struct tracer *t)
{
	if (!t->nr_unclassified)
		return -1;
	if (t->nr_unclassified >= UNCLASSIFIED_BATCH)
		return 0;
	return fmax(0, t->classified_at + UNCLASSIFIED_PERIOD - clock_seconds(CLOCK_MONOTONIC));
}

int tracer__classify_pending(struct tracer *t)
{
	int err = tracer__classify_keys(t, t->unclassified, t->nr_unclassified);

	t->nr_unclassified = 0;
	t->classified_at = clock_seconds(CLOCK_MONOTONIC);
	return err;
}
