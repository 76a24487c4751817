// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h" /* before the skeleton, whose rodata holds a struct alloctrace_config */
#include "alloctrace.skel.h"
#include "lib/log.h"
#include "bpf/tracer.h"
#include "bpf/tracer_int.h"
#include "bpf/unwinder.h"
#include "bpf/uprobe_multi.h"
#include "lib/util.h"

/* Links closed at once, each from a thread of its own. */
#define CLOSE_BATCH 64

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

/*
 * Root, or CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON where the kernel has
 * uprobe_multi links that filter by process (6.10+). Elsewhere uprobes are
 * perf events, which kernels with the CVE-2025-38466 fix (Debian's 6.1
 * among them) let only CAP_SYS_ADMIN attach: say so before loading
 * anything rather than fail at the first probe.
 */
static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
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

static int check_kernel_features(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("this kernel has no BTF (/sys/kernel/btf/vmlinux): "
		       "use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -EOPNOTSUPP;
	}
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		pr_err(
		    "this kernel has no uprobes: use a kernel built with CONFIG_UPROBE_EVENTS=y");
		return -EOPNOTSUPP;
	}
	return 0;
}

int tracer__check_system(void)
{
	int err = check_privileges();

	return err ? err : check_kernel_features();
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

	/* The syscall programs tax every syscall on the system: only when asked. */
	bpf_program__set_autoload(skel->progs.big_sys_enter, t->syscalls);
	bpf_program__set_autoload(skel->progs.big_sys_exit, t->syscalls);
	bpf_program__set_autoload(skel->progs.page_fault, t->growth && GROWTH_TRACEPOINT);
	bpf_program__set_autoload(skel->progs.page_fault_event, t->growth && !GROWTH_TRACEPOINT);
	bpf_program__set_autoload(skel->progs.big_map_search, t->map_search);
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

/* Each function's entry program, by its name in alloc_funcs.def. */
static const char *const entry_names[FUNC_MAX] = {
#define ALLOC_FUNC(id, group, kind, nr_args, symbol, display, entry) [FUNC_##id] = entry,
#include "alloc_funcs.def"
#undef ALLOC_FUNC
};

/* Find every function's entry program: a name the object lacks fails every run, not one probe. */
static int find_entry_programs(struct tracer *t)
{
	for (int f = 0; f < FUNC_MAX; f++) {
		if (!entry_names[f])
			continue;
		t->entry_progs[f] = bpf_object__find_program_by_name(t->skel->obj, entry_names[f]);
		if (!t->entry_progs[f]) {
			pr_err("the BPF object has no program '%s' for %s", entry_names[f],
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
	t->per_pid = !opts->config.follow_forks;
	t->stack_depth = or_default(opts->config.stack_depth, DEFAULT_STACK_DEPTH);
	t->unwind_rows = or_default(opts->sizes.unwind_rows, DEFAULT_UNWIND_ROWS);
	t->growth = opts->config.growth;
	t->no_probes = opts->big_only || t->growth;
	t->syscalls = opts->big_only;
	t->map_search = t->growth && opts->config.big_threshold;
	t->on_big_alloc = opts->on_big_alloc;
	t->on_oom = opts->on_oom;
	t->on_exec = opts->on_exec;
	t->on_linkmap = opts->on_linkmap;
	t->ctx = opts->ctx;
	t->nr_cpus = libbpf_num_possible_cpus();
	t->multi = uprobe_multi__supported();
	pr_debug("probes as %s", t->multi ? "uprobe_multi links" : "perf-event uprobes");
	/* malloc's mmap calls would pass for outer ones after a skipped return. */
	t->session = t->multi && opts->config.sample_rate && !opts->probe_mmap &&
		     uprobe_session__supported();
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

static void *close_link(void *fd)
{
	close((int)(intptr_t)fd);
	return NULL;
}

/*
 * Each link waits for a grace period as it closes; links closed from
 * separate threads at once share theirs.
 */
static void close_parallel(int *fds, size_t n)
{
	pthread_t threads[CLOSE_BATCH];
	bool started[CLOSE_BATCH];

	for (size_t first = 0; first < n; first += CLOSE_BATCH) {
		size_t batch = n - first < CLOSE_BATCH ? n - first : CLOSE_BATCH;

		for (size_t i = 0; i < batch; i++) {
			started[i] = !pthread_create(&threads[i], NULL, close_link,
						     (void *)(intptr_t)fds[first + i]);
			if (!started[i])
				close(fds[first + i]);
		}
		for (size_t i = 0; i < batch; i++) {
			if (started[i])
				pthread_join(threads[i], NULL);
		}
	}
}

/* Detach the links made since there were @nr_links and @nr_link_fds. */
static void detach_since(struct tracer *t, size_t nr_links, size_t nr_link_fds)
{
	/* link_fds is NULL until the first link: no offset from it before. */
	if (t->nr_link_fds > nr_link_fds)
		close_parallel(t->link_fds + nr_link_fds, t->nr_link_fds - nr_link_fds);
	t->nr_link_fds = nr_link_fds;
	while (t->nr_links > nr_links)
		bpf_link__destroy(t->links[--t->nr_links]);
}

/* The files stay known: a warning said of one is not said again after an exec. */
static void detach_all(struct tracer *t)
{
	detach_since(t, 0, 0);
	for (size_t i = 0; i < t->nr_files; i++)
		t->files[i].funcs = 0;
	t->nr_probes = 0;
	t->nr_watched = 0;
	/* detach_since() took the raw tracepoints' links too. */
	t->raw_attached = false;
}

void tracer__free(struct tracer *t)
{
	if (!t)
		return;
	/* A thread waiting in the loader's probe goes on at once. */
	if (t->skel)
		t->skel->bss->linkmap_no_answers = true;
	detach_all(t);
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
	free(t->percpu);
	free(t->settled);
	free(t);
}

/* Did placement find one of @site's arguments outside its ABI register? */
static bool site_moved(const struct probe_site *site)
{
	for (unsigned int i = 0; i < COOKIE_ARGS; i++) {
		if (site->place.arg_reg[i] != ABI_ARG_REG(i))
			return true;
	}
	return false;
}

static struct bpf_program *entry_program(const struct tracer *t, const struct probe_site *site)
{
	/* Placement found free's pointer outside its ABI register. */
	if (site->func == FUNC_FREE && site_moved(site))
		return t->skel->progs.free_moved_enter;
	return t->entry_progs[site->func];
}

/* A target that died as its probes went on: its /proc/PID/exe is gone, zombie or not. */
static bool target_gone(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	return access(path, F_OK) && errno == ENOENT;
}

/* Say why a probe could not be attached; -ESRCH when the target is gone. */
static int attach_error(const struct probed_file *file, const struct probe_object *obj,
			const char *what, const char *func, uint64_t offset, int err)
{
	/* Its objects went with it: the kernel finds no file to probe. */
	if ((err == -ENOENT || err == -ESRCH) && file->pid > 0 && target_gone(file->pid)) {
		pr_err("process %d exited while alloctrace attached", file->pid);
		return -ESRCH;
	}
	pr_err("failed to attach %s '%s' in %s (offset 0x%llx): %s%s", what, func, obj->name,
	       (unsigned long long)offset, strerror(-err),
	       err == -EPERM || err == -EACCES
		   ? " (this kernel may need CAP_SYS_ADMIN for uprobes: run as root)"
		   : "");
	return err;
}

/* Is @site an allocation probed by a session, return and entry in one? */
static bool site_in_session(const struct tracer *t, const struct probe_site *site)
{
	return t->session && alloc_func_has_return_probe(site->func) && !site->place.nr_exits &&
	       t->entry_progs[site->func] != t->skel->progs.release_enter;
}

/*
 * The order probes are attached in, one kind at a time (perf-event links,
 * kernels before 6.10, take seconds for a whole allocator): return probes,
 * so that no call enters unseen and leaves a record nobody clears; then
 * the entries of what releases blocks, so that no block is recorded whose
 * release could still go unseen and leave it outstanding for good; then
 * the allocating entries.
 */
enum attach_pass {
	PASS_RETURNS,
	PASS_RELEASES,
	PASS_ALLOCS,
	NR_PASSES,
};

/* Not an alias, and not probed already (for another process, with probes for every one). */
static bool site_unprobed(const struct probed_file *file, const struct probe_site *site)
{
	return !site->alias && !(file->funcs & 1ULL << site->func);
}

static bool site_wanted(const struct tracer *t, const struct probed_file *file,
			const struct probe_site *site, enum attach_pass pass)
{
	if (pass == PASS_RETURNS)
		return site_unprobed(file, site) && alloc_func_has_return_probe(site->func) &&
		       !site_in_session(t, site);
	return site_unprobed(file, site) &&
	       alloc_func_releases(site->func) == (pass == PASS_RELEASES);
}

/* One probe of a site: where, how, with which program and cookie. */
struct site_probe {
	struct bpf_program *prog;
	uint64_t offset; /* in the object's file */
	uint64_t cookie;
	bool retprobe;
};

/*
 * The entry's cookie: the function id, the stack pointer's adjustment, and
 * where the program finds each argument (see COOKIE_ARG_SHIFT).
 */
static uint64_t entry_cookie(const struct probe_site *site)
{
	uint64_t cookie = site->func | (uint64_t)site->place.sp_adjust << COOKIE_SP_SHIFT;

	for (unsigned int i = 0; i < COOKIE_ARGS; i++)
		cookie |= (uint64_t)(site->place.arg_reg[i] ^ ABI_ARG_REG(i))
			  << COOKIE_ARG_SHIFT(i);
	return cookie;
}

/*
 * @site's probes of @pass, into @out: its entry, or its return: a return
 * probe sharing the entry's breakpoint, or one on each of its exits (see
 * placement__exits()). Returns how many.
 */
static size_t site_probes(struct tracer *t, const struct probe_site *site, enum attach_pass pass,
			  struct site_probe *out)
{
	const struct placement *place = &site->place;

	if (pass != PASS_RETURNS) {
		out[0] = (struct site_probe){site_in_session(t, site) ? t->skel->progs.alloc_session
								      : entry_program(t, site),
					     probe_site__offset(site), entry_cookie(site), false};
		return 1;
	}
	if (!place->nr_exits) {
		out[0] = (struct site_probe){t->skel->progs.alloc_return, probe_site__offset(site),
					     site->func, true};
		return 1;
	}
	for (size_t i = 0; i < place->nr_exits; i++)
		out[i] = (struct site_probe){
		    t->skel->progs.alloc_return, site->entry + place->exits[i].offset,
		    site->func | (place->exits[i].tail ? 0 : COOKIE_AT_RET), place->exits[i].tail};
	return place->nr_exits;
}

static void note_probe(const struct tracer *t, const struct probe_object *obj,
		       const struct probe_site *site, const struct site_probe *p)
{
	const char *name = alloc_func_name(site->func);
	unsigned long long at = p->offset - site->entry;

	if (p->retprobe)
		pr_debug("uretprobe %s at %s+0x%llx, %s+%llu", name, obj->name,
			 (unsigned long long)p->offset, name, at);
	else if (p->prog == t->skel->progs.alloc_return)
		pr_debug("uprobe %s's return at %s+0x%llx, %s+%llu", name, obj->name,
			 (unsigned long long)p->offset, name, at);
	else
		pr_debug("uprobe %s at %s+0x%llx, %s+%llu (%s)", name, obj->name,
			 (unsigned long long)p->offset, name, at, site->place.why);
}

int tracer__reserve_link(struct tracer *t)
{
	struct bpf_link **links;

	links = array__grow(t->links, &t->links_cap, t->nr_links, sizeof(*links));
	if (!links)
		return -ENOMEM;
	t->links = links;
	return 0;
}

int tracer__reserve_link_fd(struct tracer *t)
{
	int *fds = array__grow(t->link_fds, &t->link_fds_cap, t->nr_link_fds, sizeof(*fds));

	if (!fds)
		return -ENOMEM;
	t->link_fds = fds;
	return 0;
}

static int attach_perf(struct tracer *t, const struct probe_object *obj,
		       const struct probed_file *file, const struct probe_site *site,
		       enum attach_pass pass)
{
	struct site_probe probes[PLACEMENT_EXITS];
	size_t n = site_probes(t, site, pass, probes);
	struct bpf_link *link;
	int err;

	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = probes[i].retprobe,
			    .bpf_cookie = probes[i].cookie);

		err = tracer__reserve_link(t);
		if (err)
			return err;
		link = bpf_program__attach_uprobe_opts(probes[i].prog, file->pid, obj->path,
						       probes[i].offset, &opts);
		if (!link)
			return attach_error(file, obj, probes[i].retprobe ? "uretprobe" : "uprobe",
					    alloc_func_name(site->func), probes[i].offset, -errno);
		t->links[t->nr_links++] = link;
		t->nr_probes++;
		note_probe(t, obj, site, &probes[i]);
	}
	return 0;
}

/* Every probe of @obj's sites in @pass that @prog serves @retprobe or not, in one link. */
static int attach_multi(struct tracer *t, const struct probe_object *obj,
			const struct probed_file *file, struct bpf_program *prog,
			enum attach_pass pass, bool retprobe)
{
	bool session = prog == t->skel->progs.alloc_session;
	uint64_t offsets[FUNC_MAX * PLACEMENT_EXITS], cookies[FUNC_MAX * PLACEMENT_EXITS];
	struct site_probe probes[PLACEMENT_EXITS];
	size_t n = 0;
	int fd, err;

	err = tracer__reserve_link_fd(t);
	if (err)
		return err;
	for (size_t i = 0; i < obj->nr_sites; i++) {
		const struct probe_site *site = &obj->sites[i];
		size_t nr;

		if (!site_wanted(t, file, site, pass))
			continue;
		nr = site_probes(t, site, pass, probes);
		for (size_t j = 0; j < nr; j++) {
			if (probes[j].prog != prog || probes[j].retprobe != retprobe)
				continue;
			offsets[n] = probes[j].offset;
			cookies[n++] = probes[j].cookie;
			note_probe(t, obj, site, &probes[j]);
		}
	}
	if (!n)
		return 0;
	fd = uprobe_multi__attach(bpf_program__fd(prog), obj->path, offsets, cookies, n, file->pid,
				  session    ? UPROBE_MULTI_SESSION
				  : retprobe ? UPROBE_MULTI_RETURN
					     : UPROBE_MULTI_ENTRY);
	if (fd < 0)
		return attach_error(file, obj,
				    session    ? "uprobe sessions"
				    : retprobe ? "uretprobes"
					       : "uprobes",
				    bpf_program__name(prog), offsets[0], fd);
	t->link_fds[t->nr_link_fds++] = fd;
	t->nr_probes += n;
	return 0;
}

static int attach_object(struct tracer *t, const struct probe_object *obj,
			 const struct probed_file *file, enum attach_pass pass)
{
	struct bpf_program *prog;
	int err = 0;

	if (t->multi) {
		bpf_object__for_each_program(prog, t->skel->obj)
		{
			if (bpf_program__type(prog) != BPF_PROG_TYPE_KPROBE)
				continue;
			err = attach_multi(t, obj, file, prog, pass, pass == PASS_RETURNS);
			/* return programs on return instructions: plain probes */
			if (!err && pass == PASS_RETURNS)
				err = attach_multi(t, obj, file, prog, pass, false);
			if (err)
				break;
		}
		return err;
	}
	for (size_t i = 0; i < obj->nr_sites && !err; i++) {
		if (site_wanted(t, file, &obj->sites[i], pass))
			err = attach_perf(t, obj, file, &obj->sites[i], pass);
	}
	return err;
}

/*
 * Index of the probed-file record of @obj's file for the filter @pid,
 * made if new; or -errno. A new one knows the single-step warnings said of
 * the file for other processes: they are said once a run.
 */
static long probed_file(struct tracer *t, const struct probe_object *obj, pid_t pid)
{
	struct probed_file *files;
	uint64_t said = 0;
	struct stat st;

	if (stat(obj->path, &st))
		return -errno;
	for (size_t i = 0; i < t->nr_files; i++) {
		if (t->files[i].dev != st.st_dev || t->files[i].ino != st.st_ino)
			continue;
		if (t->files[i].pid == pid)
			return i;
		said |= t->files[i].stepped_said;
	}
	files = array__grow(t->files, &t->files_cap, t->nr_files, sizeof(*files));
	if (!files)
		return -ENOMEM;
	t->files = files;
	files[t->nr_files] = (struct probed_file){
	    .dev = st.st_dev, .ino = st.st_ino, .pid = pid, .stepped_said = said};
	return t->nr_files++;
}

static void mark_probed(struct probed_file *file, const struct probe_object *obj)
{
	for (size_t i = 0; i < obj->nr_sites; i++)
		file->funcs |= 1ULL << obj->sites[i].func;
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

/* --big-only, --growth: the raw tracepoints (or events) of the run, in the perf-link array. */
static int attach_raw(struct tracer *t)
{
	struct bpf_program *progs[] = {t->skel->progs.big_sys_enter, t->skel->progs.big_sys_exit,
				       t->skel->progs.page_fault, t->skel->progs.big_map_search};
	const char *names[] = {"sys_enter", "sys_exit", "page_fault_user", "vm_unmapped_area"};
	bool wanted[] = {t->syscalls, t->syscalls, t->growth && GROWTH_TRACEPOINT, t->map_search};
	struct bpf_link *link;
	int err;

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		if (!wanted[i])
			continue;
		err = tracer__reserve_link(t);
		if (err)
			return err;
		link = bpf_program__attach_raw_tracepoint(progs[i], names[i]);
		if (!link) {
			err = -errno;
			pr_err("cannot attach to the raw tracepoint %s: %s", names[i],
			       strerror(-err));
			return err;
		}
		t->links[t->nr_links++] = link;
		pr_debug("raw tracepoint %s", names[i]);
	}
	return t->growth && !GROWTH_TRACEPOINT ? pagefaults__attach(t) : 0;
}

/*
 * Said without -v, once a run per file and function: a single-stepped
 * probe costs a second exception a call (PLACEMENT_STEP_COST): on x86
 * about 5.5 us under KVM, each step a VM exit, where an emulated one
 * costs 0.4-1 us.
 */
static void warn_stepped(const struct probe_object *obj, struct probed_file *file)
{
	char names[256] = "";
	size_t used = 0, n = 0;

	for (size_t i = 0; i < obj->nr_sites; i++) {
		const struct probe_site *site = &obj->sites[i];

		if (!site->place.stepped || !site_unprobed(file, site) ||
		    (file->stepped_said & 1ULL << site->func))
			continue;
		file->stepped_said |= 1ULL << site->func;
		if (used < sizeof(names))
			used += snprintf(names + used, sizeof(names) - used, "%s%s", n ? ", " : "",
					 alloc_func_name(site->func));
		n++;
	}
	if (n)
		pr_warn("%zu probe%s in %s on instructions the kernel single-steps "
			"(%s): " PLACEMENT_STEP_COST "; -v says why",
			n, n == 1 ? "" : "s", obj->name, names);
}

/*
 * In the order of enum attach_pass. A function probed already in the same
 * file for the same filter (another process's allocator, with probes for
 * every process) is not probed again.
 */
int tracer__attach(struct tracer *t, const struct allocator *a, pid_t pid)
{
	pid_t filter = tracer__probe_filter(t, pid);
	size_t nr_links = t->nr_links, nr_link_fds = t->nr_link_fds, nr_files = t->nr_files;
	size_t nr_probes = t->nr_probes;
	long files[sizeof(a->objs) / sizeof(a->objs[0])];
	int err = 0;

	for (size_t o = 0; o < a->nr_objs && !err && !t->no_probes; o++) {
		files[o] = probed_file(t, &a->objs[o], filter);
		err = files[o] < 0 ? files[o] : 0;
		if (err)
			pr_err("cannot open %s to probe it: %s", a->objs[o].name, strerror(-err));
	}
	for (int pass = 0; pass < NR_PASSES && !err && !t->no_probes; pass++) {
		for (size_t o = 0; o < a->nr_objs && !err; o++)
			err = attach_object(t, &a->objs[o], &t->files[files[o]], pass);
	}
	if (!err && t->no_probes && !t->raw_attached) {
		err = attach_raw(t);
		t->raw_attached = !err;
	}
	if (err) {
		detach_since(t, nr_links, nr_link_fds);
		t->nr_files = nr_files;
		t->nr_probes = nr_probes;
		return err;
	}
	for (size_t o = 0; o < a->nr_objs && !t->no_probes; o++) {
		warn_stepped(&a->objs[o], &t->files[files[o]]);
		mark_probed(&t->files[files[o]], &a->objs[o]);
	}
	return 0;
}

int tracer__reset(struct tracer *t)
{
	int err;

	detach_all(t);
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

size_t tracer__nr_probes(const struct tracer *t)
{
	return t->nr_probes;
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
