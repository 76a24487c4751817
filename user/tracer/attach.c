// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Attaching the BPF object's programs to an allocator's probe sites, and
 * detaching them: which probes a site takes (its entry, its return shared
 * with the entry's breakpoint or on each of its exits), their cookies, in
 * which order they go on, as perf-event or uprobe_multi links; and the
 * raw tracepoints of --growth, and of --big-only where its probes cannot
 * see a process's big blocks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "config.h" /* before the skeleton, whose rodata holds a struct alloctrace_config */
#include "alloctrace.skel.h"
#include "lib/log.h"
#include "tracer/tracer.h"
#include "tracer/tracer_int.h"
#include "arch/arch.h"
#include "tracer/uprobe_multi.h"
#include "lib/util.h"

/* Links closed at once, each from a thread of its own. */
#define CLOSE_BATCH 64

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

int tracer__own_links(struct tracer *t, pid_t pid, size_t nr_links, size_t nr_link_fds)
{
	size_t nfd = t->nr_link_fds - nr_link_fds, nl = t->nr_links - nr_links;
	struct proc_links *pl = NULL;
	int *fds;
	struct bpf_link **links;

	for (size_t i = 0; i < t->nr_procs && !pl; i++)
		pl = t->procs[i].pid == pid ? &t->procs[i] : NULL;
	if (!pl) {
		pl = array__grow(t->procs, &t->procs_cap, t->nr_procs, sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		t->procs = pl;
		pl = &t->procs[t->nr_procs++];
		*pl = (struct proc_links){.pid = pid};
	}
	fds = realloc(pl->fds, (pl->nr_fds + nfd) * sizeof(*fds) ?: 1);
	if (fds)
		pl->fds = fds;
	links = fds ? realloc(pl->links, (pl->nr_links + nl) * sizeof(*links) ?: 1) : NULL;
	if (!links)
		return -ENOMEM;
	pl->links = links;
	if (nfd)
		memcpy(fds + pl->nr_fds, t->link_fds + nr_link_fds, nfd * sizeof(*fds));
	if (nl)
		memcpy(links + pl->nr_links, t->links + nr_links, nl * sizeof(*links));
	pl->nr_fds += nfd;
	pl->nr_links += nl;
	t->nr_link_fds = nr_link_fds;
	t->nr_links = nr_links;
	return 0;
}

static void close_links(struct proc_links *pl)
{
	close_parallel(pl->fds, pl->nr_fds);
	for (size_t i = 0; i < pl->nr_links; i++)
		bpf_link__destroy(pl->links[i]);
	free(pl->fds);
	free(pl->links);
}

static void *close_in_background(void *arg)
{
	close_links(arg);
	free(arg);
	return NULL;
}

/* Forget the probed-file records of the filter @pid in @files. Returns how many stay. */
static size_t forget_filter(struct probed_file *files, size_t n, pid_t pid)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		if (files[i].pid != pid)
			files[kept++] = files[i];
	}
	return kept;
}

/*
 * Each link waits for grace periods as it closes (50-200 ms): a thread
 * of its own closes them, so that the loop never waits on a process that
 * ended. Its files count as unprobed for the pid at once.
 */
void tracer__detach_proc(struct tracer *t, pid_t pid)
{
	struct proc_links *copy;
	pthread_attr_t attr;
	pthread_t thread;
	bool started = false;

	t->nr_files = forget_filter(t->files, t->nr_files, pid);
	t->nr_watched = forget_filter(t->watched, t->nr_watched, pid);
	for (size_t i = 0; i < t->nr_procs; i++) {
		if (t->procs[i].pid != pid)
			continue;
		copy = malloc(sizeof(*copy));
		if (copy && !pthread_attr_init(&attr)) {
			*copy = t->procs[i];
			pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			started = !pthread_create(&thread, &attr, close_in_background, copy);
			pthread_attr_destroy(&attr);
		}
		if (!started) {
			free(copy);
			close_links(&t->procs[i]);
		}
		t->procs[i] = t->procs[--t->nr_procs];
		return;
	}
}

void tracer__detach_all(struct tracer *t)
{
	detach_since(t, 0, 0);
	for (size_t i = 0; i < t->nr_procs; i++)
		close_links(&t->procs[i]);
	t->nr_procs = 0;
	for (size_t i = 0; i < t->nr_files; i++)
		t->files[i].funcs = 0;
	t->nr_probes = 0;
	t->nr_watched = 0;
	/* detach_since() took the raw tracepoints' links too. */
	t->raw_attached = false;
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
 * The entry's cookie: the function id, the stack pointer's adjustment,
 * whether the kernel single-steps it, and where the program finds each
 * argument (see COOKIE_ARG_SHIFT).
 */
static uint64_t entry_cookie(const struct probe_site *site)
{
	uint64_t cookie = site->func | (uint64_t)site->place.sp_adjust << COOKIE_SP_SHIFT;

	if (site->place.stepped)
		cookie |= COOKIE_STEPPED;
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
	else if (p->prog == t->skel->progs.alloc_session)
		pr_debug("uprobe session %s at %s+0x%llx, %s+%llu (%s)", name, obj->name,
			 (unsigned long long)p->offset, name, at, site->place.why);
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

/* --big-only, --growth: the raw tracepoints (or events) of the run, in the perf-link array. */
static int attach_raw(struct tracer *t)
{
	struct bpf_program *progs[] = {t->skel->progs.big_sys_enter, t->skel->progs.big_sys_exit,
				       t->skel->progs.page_fault, t->skel->progs.big_map_search};
	const char *names[] = {"sys_enter", "sys_exit", "page_fault_user", "vm_unmapped_area"};
	bool wanted[] = {t->syscalls, t->syscalls, t->growth && arch_growth_tracepoint,
			 t->map_search};
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
	if (t->syscalls)
		pr_info("--big-only at the system call (raw tracepoints sys_enter and sys_exit): "
			"every system call on the host pays about 140 ns more while alloctrace "
			"runs");
	return t->growth && !arch_growth_tracepoint ? pagefaults__attach(t) : 0;
}

/*
 * --big-only where probes cannot see every big block: probes for every
 * process (--all, and --comm and --cgroup while they attach so: each
 * process is taken up at its first system call, whatever its C library),
 * or a process whose C library has no mmap, munmap, mremap and brk that
 * glibc's malloc reaches the kernel through (allocator.c). With several
 * processes, the syscall programs serve only the processes noted here.
 */
static bool big_at_syscalls(struct tracer *t, const struct allocator *a, pid_t pid)
{
	int fd = bpf_map__fd(t->skel->maps.syscall_procs);
	__u32 key = pid;
	__u8 one = 1;
	bool raw;

	if (!t->syscalls)
		return false;
	if (pid <= 0) {
		t->skel->bss->syscalls_all = true;
		return true;
	}
	raw = !allocator__probes(a, FUNC_MMAP);
	if (raw && bpf_map_update_elem(fd, &key, &one, BPF_ANY))
		pr_warn("pid %d: cannot note it for the syscall tracepoints: %s", (int)pid,
			strerror(errno));
	/* Its earlier image's, before an exec: its probes see its blocks now. */
	if (!raw)
		bpf_map_delete_elem(fd, &key);
	return raw;
}

/*
 * A single-stepped probe costs a second exception a call
 * (placement__step_cost()): on x86 about 5.5 us under KVM, each step a VM
 * exit, where an emulated one costs 0.4-1 us. Said at the start with -v,
 * once a run per file and function; without, when the calls add up
 * (tracer__warn_stepped()).
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
	if (n && log_verbose())
		pr_info("%zu probe%s in %s on instructions the kernel single-steps "
			"(%s): %s",
			n, n == 1 ? "" : "s", obj->name, names, placement__step_cost());
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
	bool raw = t->no_probes || big_at_syscalls(t, a, pid);
	int err = 0;

	for (size_t o = 0; o < a->nr_objs && !err && !raw; o++) {
		files[o] = probed_file(t, &a->objs[o], filter);
		err = files[o] < 0 ? files[o] : 0;
		/* Its objects, named through its /proc entry, went with it. */
		if (err == -ENOENT && pid > 0 && target_gone(pid)) {
			pr_err("process %d exited while alloctrace attached", pid);
			err = -ESRCH;
		} else if (err) {
			pr_err("cannot open %s to probe it: %s", a->objs[o].name, strerror(-err));
		}
	}
	for (int pass = 0; pass < NR_PASSES && !err && !raw; pass++) {
		for (size_t o = 0; o < a->nr_objs && !err; o++)
			err = attach_object(t, &a->objs[o], &t->files[files[o]], pass);
	}
	if (!err && raw && !t->raw_attached) {
		err = attach_raw(t);
		t->raw_attached = !err;
	}
	/* Its links go with it; the run's raw tracepoints stay the run's. */
	if (!err && t->own_links && filter > 0 && !t->no_probes)
		err = tracer__own_links(t, pid, nr_links, nr_link_fds);
	if (err) {
		detach_since(t, nr_links, nr_link_fds);
		t->nr_files = nr_files;
		t->nr_probes = nr_probes;
		return err;
	}
	for (size_t o = 0; o < a->nr_objs && !raw; o++) {
		warn_stepped(&a->objs[o], &t->files[files[o]]);
		mark_probed(&t->files[files[o]], &a->objs[o]);
	}
	return t->nr_probes - nr_probes;
}
