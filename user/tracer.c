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
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "alloctrace.skel.h"
#include "log.h"
#include "tracer.h"
#include "uprobe_multi.h"

/* Every function has an entry probe and most a return probe, in up to two objects. */
#define MAX_LINKS (2 * FUNC_MAX * 2)

struct tracer {
	struct alloctrace_bpf *skel;
	struct ring_buffer *events;
	/* Perf-event links where the kernel has no usable uprobe_multi... */
	struct bpf_link *links[MAX_LINKS];
	size_t nr_links;
	/* ...else one uprobe_multi link per object, program and direction. */
	bool multi;
	int link_fds[MAX_LINKS];
	size_t nr_link_fds;
	size_t nr_probes;
	unsigned int stack_depth;
	pid_t pid;
	int nr_cpus;
	uint64_t *percpu;	/* room for one per-CPU counter value */
	big_alloc_fn on_big_alloc;
	oom_fn on_oom;
	struct bpf_link *oom_link;
	void *ctx;
};

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

/* Root, or CAP_BPF with CAP_PERFMON (uprobes are perf events), or CAP_SYS_ADMIN. */
static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	if (has_cap(data, CAP_SYS_ADMIN) || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)))
		return 0;
	pr_err("need root, or CAP_BPF and CAP_PERFMON, to load BPF programs (try sudo)");
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
		pr_err("this kernel has no uprobes: use a kernel built with CONFIG_UPROBE_EVENTS=y");
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

static int set_sizes(struct alloctrace_bpf *skel, const struct map_sizes *sz)
{
	uint32_t allocs = or_default(sz->allocs, DEFAULT_MAX_ALLOCS);
	uint32_t stacks = or_default(sz->stacks, DEFAULT_MAX_STACKS);
	uint32_t ringbuf = or_default(sz->ringbuf, DEFAULT_RINGBUF_SIZE);
	int err;

	err = bpf_map__set_max_entries(skel->maps.allocs, allocs);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.stacks, stacks);
	/* Room for the unknown stack too, so that allocations whose stack was lost still count. */
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.stack_stats, stacks + 1);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.events, ringbuf);
	return err;
}

static int configure(struct tracer *t, const struct tracer_opts *opts)
{
	struct alloctrace_bpf *skel = t->skel;
	int err;

	skel->rodata->targ_tgid = opts->pid;
	skel->rodata->big_threshold = opts->big_threshold;
	skel->rodata->stack_depth = t->stack_depth;
	skel->rodata->sample_rate = opts->sample_rate;
	if (t->multi) {
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, skel->obj) {
			if (bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE)
				bpf_program__set_expected_attach_type(prog,
								      UPROBE_MULTI_ATTACH_TYPE);
		}
	}
	err = set_sizes(skel, &opts->sizes);
	if (err)
		return err;
	/* Stacks take only the room the chosen depth needs. */
	return bpf_map__set_value_size(skel->maps.stacks,
				       offsetof(struct stack_trace, ips) +
					       t->stack_depth * sizeof(__u64));
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct tracer *t = ctx;
	__u32 type = size >= sizeof(type) ? *(__u32 *)data : 0;

	if (type == EVENT_BIG_ALLOC && size >= sizeof(struct big_alloc_event) && t->on_big_alloc)
		t->on_big_alloc(t->ctx, data);
	else if (type == EVENT_OOM_VICTIM && size >= sizeof(struct oom_event) && t->on_oom)
		t->on_oom(t->ctx, data);
	return 0;
}

/* Without the tracepoint (an old kernel) only the OOM mark is missing. */
static void attach_oom(struct tracer *t)
{
	t->oom_link = bpf_program__attach_raw_tracepoint(t->skel->progs.oom_victim,
							  "mark_victim");
	if (!t->oom_link)
		pr_debug("no OOM-victim tracepoint: %s", strerror(errno));
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

static int load(struct tracer *t, const struct tracer_opts *opts)
{
	int err;

	t->skel = alloctrace_bpf__open();
	if (!t->skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	err = configure(t, opts);
	if (!err)
		err = alloctrace_bpf__load(t->skel);
	if (err) {
		pr_err("cannot load the BPF programs: %s (run with -vv for the verifier's log)",
		       strerror(-err));
		return err;
	}
	err = fill_sample_gaps(t, opts->sample_rate);
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
	return 0;
}

struct tracer *tracer__open(const struct tracer_opts *opts)
{
	struct tracer *t;
	int err;

	libbpf_set_print(libbpf_log);
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = opts->pid;
	t->stack_depth = opts->stack_depth ? opts->stack_depth : DEFAULT_STACK_DEPTH;
	t->on_big_alloc = opts->on_big_alloc;
	t->on_oom = opts->on_oom;
	t->ctx = opts->ctx;
	t->nr_cpus = libbpf_num_possible_cpus();
	t->multi = uprobe_multi__supported();
	pr_debug("probes as %s", t->multi ? "uprobe_multi links" : "perf-event uprobes");
	err = t->nr_cpus < 0 ? t->nr_cpus : 0;
	if (!err) {
		t->percpu = calloc(t->nr_cpus, sizeof(*t->percpu));
		err = t->percpu ? load(t, opts) : -ENOMEM;
	}
	if (err) {
		tracer__free(t);
		errno = -err;
		return NULL;
	}
	attach_oom(t);
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
	pthread_t threads[MAX_LINKS];
	bool started[MAX_LINKS];

	for (size_t i = 0; i < n; i++) {
		started[i] = !pthread_create(&threads[i], NULL, close_link,
					     (void *)(intptr_t)fds[i]);
		if (!started[i])
			close(fds[i]);
	}
	for (size_t i = 0; i < n; i++) {
		if (started[i])
			pthread_join(threads[i], NULL);
	}
}

static void detach_all(struct tracer *t)
{
	close_parallel(t->link_fds, t->nr_link_fds);
	t->nr_link_fds = 0;
	while (t->nr_links)
		bpf_link__destroy(t->links[--t->nr_links]);
	t->nr_probes = 0;
}

void tracer__free(struct tracer *t)
{
	if (!t)
		return;
	detach_all(t);
	bpf_link__destroy(t->oom_link);
	ring_buffer__free(t->events);
	alloctrace_bpf__destroy(t->skel);
	free(t->percpu);
	free(t);
}

static struct bpf_program *entry_program(struct alloctrace_bpf *skel, enum alloc_func func)
{
	switch (func) {
	case FUNC_CALLOC:
		return skel->progs.calloc_enter;
	case FUNC_REALLOC:
	case FUNC_RALLOCX:
		return skel->progs.realloc_enter;
	case FUNC_REALLOCARRAY:
		return skel->progs.reallocarray_enter;
	case FUNC_POSIX_MEMALIGN:
		return skel->progs.posix_memalign_enter;
	case FUNC_MEMALIGN:
	case FUNC_ALIGNED_ALLOC:
		return skel->progs.memalign_enter;
	case FUNC_FREE:
		return skel->progs.free_enter;
	case FUNC_MMAP:
		return skel->progs.mmap_enter;
	case FUNC_MREMAP:
		return skel->progs.mremap_enter;
	case FUNC_DALLOCX:
	case FUNC_SDALLOCX:
	case FUNC_FREE_SIZED:
	case FUNC_FREE_ALIGNED_SIZED:
	case FUNC_DELETE ... FUNC_DELETE_ARRAY_ALIGNED_NOTHROW:
	case FUNC_MUNMAP:
		return skel->progs.release_enter;
	default:	/* the size is the first argument: malloc, valloc, mallocx, new */
		return skel->progs.size_enter;
	}
}

/* free and munmap need nothing at return; everything else does. */
static bool has_return_probe(enum alloc_func func)
{
	return func != FUNC_FREE && func != FUNC_MUNMAP;
}

/* A target that died as its probes went on: its /proc/PID/exe is gone, zombie or not. */
static bool target_gone(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	return access(path, F_OK) && errno == ENOENT;
}

/* Say why a probe could not be attached; -ESRCH when the target is gone. */
static int attach_error(const struct tracer *t, const struct probe_object *obj, const char *what,
			const char *func, uint64_t offset, int err)
{
	/* Its objects went with it: the kernel finds no file to probe. */
	if ((err == -ENOENT || err == -ESRCH) && target_gone(t->pid)) {
		pr_err("process %d exited while alloctrace attached", t->pid);
		return -ESRCH;
	}
	pr_err("failed to attach %s '%s' in %s (offset 0x%llx): %s%s", what, func, obj->name,
	       (unsigned long long)offset, strerror(-err),
	       err == -EPERM || err == -EACCES
		       ? " (this kernel may need CAP_SYS_ADMIN for uprobes: run as root)"
		       : "");
	return err;
}

static struct bpf_program *site_program(struct tracer *t, const struct probe_site *site,
					bool retprobe)
{
	return retprobe ? t->skel->progs.alloc_return : entry_program(t->skel, site->func);
}

static bool site_wanted(const struct probe_site *site, bool retprobe)
{
	return !site->alias && (!retprobe || has_return_probe(site->func));
}

static void note_site(const struct probe_object *obj, const struct probe_site *site,
		      bool retprobe)
{
	uint64_t offset = retprobe ? site->entry : site->offset;

	pr_debug("%s %s at %s+0x%llx%s", retprobe ? "uretprobe" : "uprobe",
		 alloc_func_name(site->func), obj->name, (unsigned long long)offset,
		 offset != site->entry ? " (past an instruction the kernel would single-step)" : "");
}

static int attach_perf(struct tracer *t, const struct probe_object *obj,
		       const struct probe_site *site, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = site->func);
	uint64_t offset = retprobe ? site->entry : site->offset;
	struct bpf_link *link;

	link = bpf_program__attach_uprobe_opts(site_program(t, site, retprobe), t->pid,
					       obj->path, offset, &opts);
	if (!link)
		return attach_error(t, obj, retprobe ? "uretprobe" : "uprobe",
				    alloc_func_name(site->func), offset, -errno);
	t->links[t->nr_links++] = link;
	t->nr_probes++;
	note_site(obj, site, retprobe);
	return 0;
}

/* Every site of @obj that @prog serves in this direction, in one link. */
static int attach_multi(struct tracer *t, const struct probe_object *obj,
			struct bpf_program *prog, bool retprobe)
{
	uint64_t offsets[FUNC_MAX], cookies[FUNC_MAX];
	const struct probe_site *site;
	size_t n = 0;
	int fd;

	for (size_t i = 0; i < obj->nr_sites; i++) {
		site = &obj->sites[i];
		if (!site_wanted(site, retprobe) || site_program(t, site, retprobe) != prog)
			continue;
		offsets[n] = retprobe ? site->entry : site->offset;
		cookies[n++] = site->func;
		note_site(obj, site, retprobe);
	}
	if (!n)
		return 0;
	fd = uprobe_multi__attach(bpf_program__fd(prog), obj->path, offsets, cookies, n, t->pid,
				  retprobe);
	if (fd < 0)
		return attach_error(t, obj, retprobe ? "uretprobes" : "uprobes",
				    bpf_program__name(prog), offsets[0], fd);
	t->link_fds[t->nr_link_fds++] = fd;
	t->nr_probes += n;
	return 0;
}

static int attach_object(struct tracer *t, const struct probe_object *obj, bool retprobe)
{
	struct bpf_program *prog;
	int err = 0;

	if (t->multi) {
		bpf_object__for_each_program(prog, t->skel->obj) {
			err = attach_multi(t, obj, prog, retprobe);
			if (err)
				break;
		}
		return err;
	}
	for (size_t i = 0; i < obj->nr_sites && !err; i++) {
		if (site_wanted(&obj->sites[i], retprobe))
			err = attach_perf(t, obj, &obj->sites[i], retprobe);
	}
	return err;
}

/*
 * Return probes go first: a call that enters before its return probe is
 * attached would leave an in-flight record nobody clears.
 */
int tracer__attach(struct tracer *t, const struct allocator *a)
{
	int err = 0;

	for (int pass = 0; pass < 2 && !err; pass++) {
		for (size_t o = 0; o < a->nr_objs && !err; o++)
			err = attach_object(t, &a->objs[o], pass == 0);
	}
	if (err)
		detach_all(t);
	return err;
}

/* Delete every entry of a hash map: they all belong to the one target. */
static int clear_map(struct bpf_map *map)
{
	int fd = bpf_map__fd(map);
	char key[64];

	if (bpf_map__key_size(map) > sizeof(key))
		return -EINVAL;
	while (!bpf_map_get_next_key(fd, NULL, key)) {
		if (bpf_map_delete_elem(fd, key))
			return -errno;
	}
	return 0;
}

static int zero_counters(struct tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.counters);

	memset(t->percpu, 0, t->nr_cpus * sizeof(*t->percpu));
	for (__u32 key = 0; key < CNT_MAX; key++) {
		if (bpf_map_update_elem(fd, &key, t->percpu, BPF_ANY))
			return -errno;
	}
	return 0;
}

int tracer__reset(struct tracer *t)
{
	int err;

	detach_all(t);
	err = clear_map(t->skel->maps.allocs);
	if (!err)
		err = clear_map(t->skel->maps.stack_stats);
	/* The old program's stacks would hold room --max-stacks gave the new one. */
	if (!err)
		err = clear_map(t->skel->maps.stacks);
	/* In-flight records are per task and none can be open across an exec. */
	if (!err)
		err = zero_counters(t);
	return err;
}

size_t tracer__nr_probes(const struct tracer *t)
{
	return t->nr_probes;
}

static int read_counters(struct tracer *t, uint64_t counters[CNT_MAX])
{
	int fd = bpf_map__fd(t->skel->maps.counters);

	for (__u32 key = 0; key < CNT_MAX; key++) {
		counters[key] = 0;
		if (bpf_map_lookup_elem(fd, &key, t->percpu))
			return -errno;
		for (int cpu = 0; cpu < t->nr_cpus; cpu++)
			counters[key] += t->percpu[cpu];
	}
	return 0;
}

static int add_stack(struct tracer *t, struct profile *p, const struct stack_key *key,
		     const struct stack_stats *stats, struct stack_trace *trace)
{
	int fd = bpf_map__fd(t->skel->maps.stacks);

	trace->nr = 0;
	if (key->stack_id != STACK_ID_NONE && bpf_map_lookup_elem(fd, &key->stack_id, trace))
		trace->nr = 0;
	if (trace->nr > t->stack_depth)
		trace->nr = t->stack_depth;
	return profile__add(p, key->stack_id, stats, trace->ips, trace->nr);
}

int tracer__collect(struct tracer *t, struct profile *p)
{
	int fd = bpf_map__fd(t->skel->maps.stack_stats);
	struct stack_key key, *prev = NULL;
	uint64_t counters[CNT_MAX];
	struct stack_trace trace;
	struct stack_stats stats;
	int err;

	profile__clear(p);
	err = read_counters(t, counters);
	if (err)
		return err;
	profile__set_counters(p, counters);
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (key.tgid != (__u32)t->pid || bpf_map_lookup_elem(fd, &key, &stats))
			continue;
		err = add_stack(t, p, &key, &stats, &trace);
		if (err)
			return err;
	}
	return 0;
}

#define BLOCK_BATCH 4096

struct block_batch {
	struct alloc_key keys[BLOCK_BATCH];
	struct alloc_info values[BLOCK_BATCH];
};

/* One lookup per batch of blocks where the kernel can: 1,000,000 of them in a few calls. */
int tracer__for_each_block(struct tracer *t, block_fn fn, void *ctx)
{
	int fd = bpf_map__fd(t->skel->maps.allocs);
	__u32 in = 0, out = 0, count;
	struct block_batch *b;
	bool first = true;
	int err = 0, ret;

	b = malloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	do {
		count = BLOCK_BATCH;
		ret = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, b->keys, b->values,
					   &count, NULL);
		if (ret && errno != ENOENT) {
			err = -errno;
			break;
		}
		for (__u32 i = 0; i < count && !err; i++) {
			if (b->keys[i].tgid == (__u32)t->pid)
				err = fn(ctx, b->keys[i].addr, &b->values[i]);
		}
		in = out;
		first = false;
	} while (!ret && !err);
	free(b);
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
