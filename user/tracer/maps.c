// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reading the BPF maps for the session: counters, the per-process map,
 * the per-stack statistics, live blocks and --growth's pages, in batches,
 * and pruning what belongs to processes or images gone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h" /* before the skeleton, whose rodata holds a struct alloctrace_config */
#include "alloctrace.skel.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"
#include "tracer/unwinder.h"
#include "lib/log.h"
#include "probe/allocator.h"
#include "probe/placement.h"
#include "proc/pagemap.h"
#include "proc/procmaps.h"
#include "lib/util.h"

#define WALK_BATCH 4096

/* 0 to go on, WALK_DELETE to delete the entry, or -errno to stop. */
#define WALK_DELETE 1
typedef int (*entry_fn)(void *ctx, const void *key, const void *value);

/* The keys a batch marked for deletion; a key gone meanwhile is no error. */
static int delete_keys(int fd, const char *keys, __u32 n, size_t key_size)
{
	__u32 done = n;

	if (!n || !bpf_map_delete_batch(fd, keys, &done, NULL))
		return 0;
	/* The batch stops at a missing key: the rest one by one. */
	for (__u32 i = done; i < n; i++) {
		if (bpf_map_delete_elem(fd, keys + i * key_size) && errno != ENOENT)
			return -errno;
	}
	return 0;
}

struct walk_bufs {
	char *keys;
	char *values;
	char *doomed;
};

/* Bytes of one entry's value as a lookup returns it: per-CPU maps give every CPU's. */
static size_t value_stride(const struct bpf_map *map)
{
	size_t vsz = bpf_map__value_size(map);

	if (bpf_map__type(map) != BPF_MAP_TYPE_PERCPU_HASH)
		return vsz;
	return ((vsz + 7) & ~(size_t)7) * libbpf_num_possible_cpus();
}

/*
 * Hand every entry of the hash map @map to @fn, one lookup per batch of
 * entries where the kernel can: 100,000 stacks in a few dozen calls.
 */
static int walk_map(struct bpf_map *map, entry_fn fn, void *ctx)
{
	size_t ksz = bpf_map__key_size(map), vsz = value_stride(map);
	struct walk_bufs b = {
	    .keys = malloc(WALK_BATCH * ksz),
	    .values = malloc(WALK_BATCH * vsz),
	    .doomed = malloc(WALK_BATCH * ksz),
	};
	int fd = bpf_map__fd(map), err = 0, ret;
	__u32 in = 0, out = 0, count, nr_doomed;
	bool first = true;

	if (!b.keys || !b.values || !b.doomed)
		err = -ENOMEM;
	while (!err) {
		count = WALK_BATCH;
		ret = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, b.keys, b.values, &count,
					   NULL);
		if (ret && errno != ENOENT) {
			err = -errno;
			break;
		}
		nr_doomed = 0;
		for (__u32 i = 0; i < count && !err; i++) {
			err = fn(ctx, b.keys + i * ksz, b.values + i * vsz);
			if (err == WALK_DELETE) {
				memcpy(b.doomed + nr_doomed++ * ksz, b.keys + i * ksz, ksz);
				err = 0;
			}
		}
		if (!err)
			err = delete_keys(fd, b.doomed, nr_doomed, ksz);
		if (ret)
			break;
		in = out;
		first = false;
	}
	free(b.keys);
	free(b.values);
	free(b.doomed);
	return err;
}

static int delete_entry(void *ctx, const void *key, const void *value)
{
	return WALK_DELETE;
}

int maps__clear(struct bpf_map *map)
{
	return walk_map(map, delete_entry, NULL);
}

int maps__zero_counters(struct tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.counters);

	memset(t->percpu, 0, t->nr_cpus * sizeof(*t->percpu));
	for (__u32 key = 0; key < CNT_MAX; key++) {
		if (bpf_map_update_elem(fd, &key, t->percpu, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* Entries 0 to @n - 1 of the per-CPU array @map, each summed over the CPUs. 0 or -errno. */
static int percpu_sums(struct tracer *t, struct bpf_map *map, __u32 n, uint64_t *sums)
{
	int fd = bpf_map__fd(map);

	for (__u32 key = 0; key < n; key++) {
		sums[key] = 0;
		if (bpf_map_lookup_elem(fd, &key, t->percpu))
			return -errno;
		for (int cpu = 0; cpu < t->nr_cpus; cpu++)
			sums[key] += t->percpu[cpu];
	}
	return 0;
}

int tracer__warn_stepped(struct tracer *t)
{
	uint64_t calls[FUNC_MAX], stepped = 0, due;
	int err;

	for (size_t i = 0; i < t->nr_files; i++)
		stepped |= t->files[i].stepped_said;
	if (!(stepped & ~t->stepped_warned))
		return 0;
	err = percpu_sums(t, t->skel->maps.stepped_calls, FUNC_MAX, calls);
	if (err)
		return err;
	due = placement__stepped_due(calls, FUNC_MAX, stepped, t->stepped_warned);
	for (int f = 0; f < FUNC_MAX; f++) {
		if (due & 1ULL << f)
			pr_warn("%s: %" PRIu64 " calls since the start on a probe the kernel "
				"single-steps, %s; -v says where and why",
				alloc_func_name(f), calls[f], placement__step_cost());
	}
	t->stepped_warned |= due;
	return 0;
}

int tracer__read_counters(struct tracer *t, uint64_t counters[CNT_MAX])
{
	int err = percpu_sums(t, t->skel->maps.counters, CNT_MAX, counters);

	if (err)
		return err;
	/* The counters BPF never adds to. */
	if (t->unwinder) {
		counters[CNT_UNWIND_FULL] = unwinder__nr_full(t->unwinder);
		counters[CNT_UNOPENED] = unwinder__nr_unopened(t->unwinder);
	}
	return 0;
}

int tracer__add_proc(struct tracer *t, pid_t pid, const char *comm)
{
	struct proc_state st = {};
	__u32 key = pid;

	snprintf(st.comm, sizeof(st.comm), "%s", comm);
	return bpf_map_update_elem(bpf_map__fd(t->skel->maps.procs), &key, &st, BPF_ANY) ? -errno
											 : 0;
}

int tracer__forget_proc(struct tracer *t, pid_t pid, uint32_t gen)
{
	int fd = bpf_map__fd(t->skel->maps.procs);
	struct proc_state st;
	__u32 key = pid;

	/* Not if the pid is another process's by now, which --all took up anew. */
	if (bpf_map_lookup_elem(fd, &key, &st) || st.gen != gen)
		return 0;
	if (t->unwinder)
		unwinder__forget_process(t->unwinder, pid);
	if (bpf_map_delete_elem(fd, &key) && errno != ENOENT)
		return -errno;
	return 0;
}

int tracer__proc_state(struct tracer *t, pid_t pid, struct proc_state *st)
{
	__u32 key = pid;

	return bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.procs), &key, st) ? -errno : 0;
}

struct proc_walk {
	proc_fn fn;
	void *ctx;
};

static int walk_proc(void *ctx, const void *key, const void *value)
{
	struct proc_walk *w = ctx;

	return w->fn(w->ctx, *(const __u32 *)key, value);
}

int tracer__for_each_proc(struct tracer *t, proc_fn fn, void *ctx)
{
	struct proc_walk w = {.fn = fn, .ctx = ctx};

	return walk_map(t->skel->maps.procs, walk_proc, &w);
}

struct stats_walk {
	struct tracer *t;
	profile_fn profile_of;
	void *ctx;
	bool take; /* the entries read leave the map */
	struct stack_stats stats;
	struct stack_trace trace;
};

_Static_assert(sizeof(struct stack_counts) % 8 == 0, "per-CPU values lie 8-byte aligned");

/* a - b, or 0 if the reading saw more taken out than put in. */
static uint64_t at_least_0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* A stack's statistics from the CPUs' counts (see stack_stats in the BPF object). */
static void sum_cpus(const struct tracer *t, const struct stack_counts *cpus,
		     struct stack_stats *stats)
{
	struct stack_counts sum = {};

	for (int cpu = 0; cpu < t->nr_cpus; cpu++) {
		sum.allocs += cpus[cpu].allocs;
		sum.alloc_bytes += cpus[cpu].alloc_bytes;
		sum.frees += cpus[cpu].frees;
		sum.freed_bytes += cpus[cpu].freed_bytes;
	}
	/*
	 * The CPUs' counts are read one after another while blocks come and
	 * go: a block made on one CPU after its count was read and freed on
	 * another before its count was can show as a free without its alloc.
	 */
	*stats = (struct stack_stats){
	    .outstanding_bytes = at_least_0(sum.alloc_bytes, sum.freed_bytes),
	    .outstanding_allocs = at_least_0(sum.allocs, sum.frees),
	    .allocs = sum.allocs,
	    .alloc_bytes = sum.alloc_bytes,
	};
}

void tracer__read_stack(struct tracer *t, uint64_t stack_id, struct stack_trace *trace)
{
	int fd = bpf_map__fd(t->skel->maps.stacks);

	trace->nr = 0;
	if (stack_id != STACK_ID_NONE && bpf_map_lookup_elem(fd, &stack_id, trace))
		trace->nr = 0;
	if (trace->nr > t->stack_depth)
		trace->nr = t->stack_depth;
}

static int walk_stats(void *ctx, const void *key_, const void *value)
{
	const struct stack_key *key = key_;
	struct stats_walk *w = ctx;
	struct profile *p = w->profile_of(w->ctx, key->tgid, key->gen);

	if (!p)
		return 0;
	sum_cpus(w->t, value, &w->stats);
	tracer__read_stack(w->t, key->stack_id, &w->trace);
	return profile__add(p, key->stack_id, &w->stats, &w->trace) ?: (w->take ? WALK_DELETE : 0);
}

static int collect_stats(struct tracer *t, profile_fn profile_of, void *ctx, bool take)
{
	struct stats_walk *w = malloc(sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	*w = (struct stats_walk){.t = t, .profile_of = profile_of, .ctx = ctx, .take = take};
	err = walk_map(t->skel->maps.stack_stats, walk_stats, w);
	free(w);
	return err;
}

int tracer__collect(struct tracer *t, profile_fn profile_of, void *ctx)
{
	return collect_stats(t, profile_of, ctx, false);
}

int tracer__take(struct tracer *t, profile_fn profile_of, void *ctx)
{
	return collect_stats(t, profile_of, ctx, true);
}

int tracer__for_each_block(struct tracer *t, block_fn fn, void *ctx)
{
	return live_table__for_each(t->live, fn, ctx);
}

struct stale_walk {
	keep_fn keep;
	void *ctx;
};

static int walk_stale(void *ctx, const void *key, const void *value)
{
	const struct stack_key *k = key;
	struct stale_walk *w = ctx;

	return w->keep(w->ctx, k->tgid, k->gen) ? 0 : WALK_DELETE;
}

struct page_list {
	struct live_block *pages;
	size_t nr, cap;
};

static int list_page(void *ctx, const void *key, const void *value)
{
	struct page_list *l = ctx;

	if (l->nr == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 4096;
		struct live_block *p = realloc(l->pages, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->pages = p;
		l->cap = cap;
	}
	memcpy(&l->pages[l->nr].key, key, sizeof(struct alloc_key));
	memcpy(&l->pages[l->nr++].info, value, sizeof(struct alloc_info));
	return 0;
}

/* By process, image, then address: runs of pages for pagemap. */
static int page_cmp(const void *a, const void *b)
{
	const struct alloc_key *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Were (@tgid, @gen)'s pages read at its exit stop (tracer__settle_pages)? */
static bool settled(const struct tracer *t, uint32_t tgid, uint32_t gen)
{
	for (size_t i = 0; i < t->nr_settled; i++) {
		if (t->settled[i].tgid == tgid && t->settled[i].gen == gen)
			return true;
	}
	return false;
}

/* (@key's tgid, gen) was read at its exit stop. 0 or -ENOMEM. */
static int mark_settled(struct tracer *t, const struct alloc_key *key)
{
	struct alloc_key *n;

	if (settled(t, key->tgid, key->gen))
		return 0;
	n = realloc(t->settled, (t->nr_settled + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->settled = n;
	t->settled[t->nr_settled++] = (struct alloc_key){.tgid = key->tgid, .gen = key->gen};
	return 0;
}

/*
 * One process's @n pages at @p: the resident ones to @fn, the gone ones
 * out of the map. A process gone keeps its pages until tracer__drop();
 * those it had resident at its exit stop, if it was read there, are still
 * what it held at its end. At the exit stop (@fn NULL) every page not
 * resident leaves the map, and the process is marked settled.
 */
static int settle_pages(struct tracer *t, struct live_block *p, size_t n, block_fn fn, void *ctx)
{
	uint64_t *addrs = malloc(n * sizeof(*addrs));
	enum page_state *states = malloc(n * sizeof(*states));
	struct alloc_key *gone = malloc(n * sizeof(*gone));
	size_t nr_gone = 0;
	int err = addrs && states && gone ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && !err; i++)
		addrs[i] = p[i].key.addr;
	if (!err)
		err = pagemap__states(p[0].key.tgid, addrs, n, states);
	if (err == -ESRCH && fn && settled(t, p[0].key.tgid, p[0].key.gen)) {
		for (size_t i = 0; i < n; i++)
			states[i] = PAGE_RESIDENT;
		err = 0;
	}
	for (size_t i = 0; i < n && !err; i++) {
		/* Not classified yet (its mapping or process gone since): not known to be the
		 * process's. */
		if (states[i] == PAGE_RESIDENT && fn && p[i].info.func != PAGE_UNCLASSIFIED)
			err = fn(ctx, &p[i].key, &p[i].info);
		else if (states[i] == PAGE_GONE || (states[i] == PAGE_SWAPPED && !fn))
			gone[nr_gone++] = p[i].key;
	}
	if (!err)
		err = delete_keys(bpf_map__fd(t->skel->maps.pages), (const char *)gone, nr_gone,
				  sizeof(*gone));
	if (!err && !fn)
		err = mark_settled(t, &p[0].key);
	free(addrs);
	free(states);
	free(gone);
	return err == -ESRCH ? 0 : err;
}

/* The pages of process @tgid (every image if @tgid is 0) to settle_pages(), by image. */
static int for_each_page_of(struct tracer *t, uint32_t tgid, block_fn fn, void *ctx)
{
	struct page_list l = {};
	size_t first = 0;
	int err = walk_map(t->skel->maps.pages, list_page, &l);

	if (!err && l.nr)
		qsort(l.pages, l.nr, sizeof(*l.pages), page_cmp);
	for (size_t i = 1; i <= l.nr && !err; i++) {
		if (i < l.nr && l.pages[i].key.tgid == l.pages[first].key.tgid &&
		    l.pages[i].key.gen == l.pages[first].key.gen)
			continue;
		if (!tgid || l.pages[first].key.tgid == tgid)
			err = settle_pages(t, l.pages + first, i - first, fn, ctx);
		first = i;
	}
	free(l.pages);
	return err;
}

struct unclassified {
	struct alloc_key *keys;
	size_t nr, cap;
	uint32_t tgid; /* 0: every process's */
};

static int list_unclassified(void *ctx, const void *key, const void *value)
{
	const struct alloc_info *info = value;
	const struct alloc_key *k = key;
	struct unclassified *u = ctx;
	struct alloc_key *keys;

	if (info->func != PAGE_UNCLASSIFIED || (u->tgid && k->tgid != u->tgid))
		return 0;
	keys = array__grow(u->keys, &u->cap, u->nr, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	u->keys = keys;
	u->keys[u->nr++] = *k;
	return 0;
}

/* The verdict on one page, by the BPF object's page_classify. 0 or -errno. */
static int classify_page(struct tracer *t, const struct alloc_key *key, bool anon)
{
	__u64 args[4] = {key->tgid, key->gen, key->addr, anon};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));

	return bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.page_classify), &opts) ? -errno
											    : 0;
}

/*
 * One process's @n unclassified pages at @keys against its mappings now. A
 * page whose mapping is gone stays unclassified, and counted so: whether
 * it was anonymous memory no one can say any more. So do the pages of a
 * process gone, and of an image an exec replaced (page_classify()).
 */
static int classify_proc(struct tracer *t, const struct alloc_key *keys, size_t n)
{
	const struct mapping *map;
	struct proc_maps maps;
	int err = proc_maps__read(keys[0].tgid, &maps);

	if (err)
		return err == -ENOENT || err == -ESRCH ? 0 : err;
	for (size_t i = 0; i < n && !err; i++) {
		map = proc_maps__find(&maps, keys[i].addr);
		if (map)
			err = classify_page(t, &keys[i], mapping__is_anonymous(map));
	}
	proc_maps__release(&maps);
	return err;
}

/* How many pages wait for the loader's verdict, over every CPU's count. */
static int nr_unclassified(struct tracer *t, uint64_t *nr)
{
	__u32 key = CNT_PAGES_UNCLASSIFIED;

	*nr = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.counters), &key, t->percpu))
		return -errno;
	for (int cpu = 0; cpu < t->nr_cpus; cpu++)
		*nr += t->percpu[cpu];
	return 0;
}

int tracer__classify_keys(struct tracer *t, struct alloc_key *keys, size_t n)
{
	size_t first = 0;
	int err = 0;

	if (n)
		qsort(keys, n, sizeof(*keys), page_cmp);
	for (size_t i = 1; i <= n && !err; i++) {
		if (i < n && keys[i].tgid == keys[first].tgid)
			continue;
		err = classify_proc(t, keys + first, i - first);
		first = i;
	}
	return err;
}

int tracer__classify_pages(struct tracer *t, pid_t pid)
{
	struct unclassified u = {.tgid = pid};
	uint64_t nr;
	int err;

	if (!t->growth)
		return 0;
	err = nr_unclassified(t, &nr);
	if (err || !nr)
		return err;
	err = walk_map(t->skel->maps.pages, list_unclassified, &u);
	if (!err && u.nr)
		pr_debug("--growth: %zu first touches whose mapping was busy left for the "
			 "report",
			 u.nr);
	err = err ?: tracer__classify_keys(t, u.keys, u.nr);
	/* The ring's pages were among them. */
	if (!err && !pid)
		t->nr_unclassified = 0;
	free(u.keys);
	return err;
}

int tracer__for_each_page(struct tracer *t, block_fn fn, void *ctx)
{
	return for_each_page_of(t, 0, fn, ctx);
}

int tracer__settle_pages(struct tracer *t, pid_t pid)
{
	return t->growth ? tracer__classify_pages(t, pid) ?: for_each_page_of(t, pid, NULL, NULL)
			 : 0;
}

int tracer__drop(struct tracer *t, keep_fn keep, void *ctx)
{
	struct stale_walk w = {.keep = keep, .ctx = ctx};
	int err = walk_map(t->skel->maps.stack_stats, walk_stale, &w);

	/* A page's key begins as a stack's does: the tgid and image after 8 bytes. */
	if (!err && t->growth)
		err = walk_map(t->skel->maps.pages, walk_stale, &w);
	for (size_t i = 0; i < t->nr_settled && !err;) {
		if (keep(ctx, t->settled[i].tgid, t->settled[i].gen))
			i++;
		else
			t->settled[i] = t->settled[--t->nr_settled];
	}
	return err ? err : live_table__drop(t->live, keep, ctx);
}
