// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * floor: attach empty BPF programs to libc's malloc (entry and return) and
 * free, for the benchmark's reference figures.
 *
 *   floor naive|best [--stack] [--live] -p PID           until SIGINT/SIGTERM or PID exits
 *   floor naive|best [--stack] [--live] -- COMMAND ARGS  launch COMMAND, probes attached first
 *   floor sites [--returns | --session] [--every] -p PID until SIGINT/SIGTERM or PID exits
 *
 * naive puts the probes on the functions' first instructions, as a tracer
 * that asks for "malloc" and "free" gets them. best puts them where
 * alloctrace does (allocator__place()): in glibc, free's on the `je`
 * after `test %rdi,%rdi`, since the kernel emulates a jcc but must
 * single-step a test, which under KVM costs a VM exit per hit; malloc's
 * first instruction, a push, is emulated already (on arm64 its entry
 * probe goes past the prologue and its return is probed on its exits).
 * --stack adds a user stack walk
 * at malloc's return, --live a live-block hash map: one piece of a real
 * tracker's work at a time.
 *
 * sites is the floor of a sampling tracer on a real process: an empty entry
 * probe at every site alloctrace probes in PID's allocator (its placement,
 * any allocator: jemalloc's too), allocating functions and releases alike,
 * and no return probe. Sampling by bytes needs each call's size, which
 * only the entry sees, and a sampled block's release needs the release's
 * entry; only the sampled calls need a return (at 64 KiB few, but one
 * in five of PostgreSQL's, whose mallocs are 8-32 KiB context blocks).
 * With --returns each allocating function also gets its empty return probe,
 * where alloctrace puts it: the probe set of full tracking, which must
 * learn every block's address. With --session (6.13+) the same sites are
 * uprobe_multi links, as alloctrace makes them, and each allocating
 * function's is a session that never asks for its return: what a
 * sampling tracer's probes cost there at least, since a session is the
 * one probe that can decide at entry to see a call's return.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "tracer/uprobe_multi.h"
#include "probe/allocator.h"
#include "probe/elfsym.h"
#include "floor.skel.h"
#include "probe/placement.h"

struct site {
	char path[4096];
	uint64_t malloc_off;			   /* malloc's entry probe, in the file */
	uint64_t free_off;			   /* free's */
	uint64_t malloc_start;			   /* malloc's first instruction */
	struct placement malloc_place, free_place; /* from the functions' starts */
};

/* malloc's return probes: one sharing its entry's breakpoint, or one on each of its exits. */
static struct bpf_link *returns[PLACEMENT_EXITS];

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* The libc this loader runs on is the one the launched program will map. */
static int find_site(bool best, struct site *s)
{
	static const char *const names[] = {"malloc", "free"};
	uint64_t addrs[2] = {}, sizes[2] = {};
	struct elf_file *ef;
	Dl_info info;
	int err = -ENOENT;

	if (!dladdr(dlsym(RTLD_DEFAULT, "free"), &info) || !info.dli_fname)
		return -ENOENT;
	snprintf(s->path, sizeof(s->path), "%s", info.dli_fname);
	ef = elf_file__open(s->path);
	if (!ef)
		return -errno;
	if (elf_file__find_funcs(ef, names, 2, addrs, sizes) == 2 &&
	    !elf_file__vaddr_to_offset(ef, addrs[0], &s->malloc_off) &&
	    !elf_file__vaddr_to_offset(ef, addrs[1], &s->free_off)) {
		placement__entry(placement__native(), &s->malloc_place);
		placement__entry(placement__native(), &s->free_place);
		strcpy(s->malloc_place.why, "its entry");
		strcpy(s->free_place.why, "its entry");
		/* where alloctrace puts them */
		if (best) {
			allocator__place(ef, addrs[0], sizes[0], FUNC_MALLOC, &s->malloc_place);
			allocator__place(ef, addrs[1], sizes[1], FUNC_FREE, &s->free_place);
		}
		s->malloc_start = s->malloc_off;
		s->malloc_off += s->malloc_place.offset;
		s->free_off += s->free_place.offset;
		err = 0;
	}
	elf_file__close(ef);
	return err;
}

static struct bpf_link *attach(struct bpf_program *prog, pid_t pid, const struct site *s,
			       uint64_t off, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret);
	struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, pid, s->path, off, &opts);

	if (!link)
		fprintf(stderr, "floor: cannot attach at %s+0x%llx: %s\n", s->path,
			(unsigned long long)off, strerror(errno));
	return link;
}

/*
 * The return probes of a function that starts at @start and is placed at
 * @place, into @links: one sharing its entry's breakpoint, or one on each
 * of its exits, a plain probe on a return instruction and a return probe
 * on a tail call. Returns how many, or -1.
 */
static int attach_returns(struct bpf_program *prog, pid_t pid, const struct site *s,
			  uint64_t start, const struct placement *place, struct bpf_link **links)
{
	size_t n = place->nr_exits ? place->nr_exits : 1;

	for (size_t i = 0; i < n; i++) {
		links[i] = place->nr_exits ? attach(prog, pid, s, start + place->exits[i].offset,
						    place->exits[i].tail)
					   : attach(prog, pid, s, start + place->offset, true);
		if (!links[i])
			return -1;
	}
	return n;
}

/* Return probe first: an entry seen without its return would be harmless
 * here, but keep the order every real tracer needs. */
static int attach_all(struct floor_bpf *skel, pid_t pid, const struct site *s)
{
	if (attach_returns(skel->progs.malloc_return, pid, s, s->malloc_start, &s->malloc_place,
			   returns) < 0)
		return -1;
	skel->links.malloc_enter = attach(skel->progs.malloc_enter, pid, s, s->malloc_off, false);
	if (!skel->links.malloc_enter)
		return -1;
	skel->links.free_enter = attach(skel->progs.free_enter, pid, s, s->free_off, false);
	return skel->links.free_enter ? 0 : -1;
}

/* The child waits on a pipe until the probes are in, then execs. */
static pid_t spawn_held(char **argv, int *go)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "floor: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void wait_attached(pid_t pid)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop && !kill(pid, 0))
		usleep(100000);
}

static int usage(void)
{
	fprintf(stderr, "usage: floor naive|best [--stack] [--live] -p PID\n"
			"       floor naive|best [--stack] [--live] -- COMMAND [ARGS...]\n"
			"       floor sites [--returns | --session] [--every] -p PID\n");
	return 2;
}

/* The skeleton, its session programs loaded only for --session (6.13+). */
static struct floor_bpf *sites_load(bool session)
{
	struct floor_bpf *skel = floor_bpf__open();

	if (!skel)
		return NULL;
	bpf_program__set_autoload(skel->progs.site_session, session);
	bpf_program__set_autoload(skel->progs.site_multi, session);
	bpf_program__set_expected_attach_type(skel->progs.site_session,
					      UPROBE_SESSION_ATTACH_TYPE);
	bpf_program__set_expected_attach_type(skel->progs.site_multi, UPROBE_MULTI_ATTACH_TYPE);
	if (floor_bpf__load(skel)) {
		floor_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* One site as a uprobe_multi link: a session on an allocating function, else an entry. */
static int attach_multi(struct floor_bpf *skel, pid_t pid, const char *path,
			const struct probe_site *site)
{
	bool session = alloc_func_has_return_probe(site->func);
	uint64_t off = probe_site__offset(site);
	int fd;

	fd = uprobe_multi__attach(bpf_program__fd(session ? skel->progs.site_session
							   : skel->progs.site_multi),
				  path, &off, NULL, 1, pid,
				  session ? UPROBE_MULTI_SESSION : UPROBE_MULTI_ENTRY);
	if (fd < 0)
		fprintf(stderr, "floor: cannot attach at %s+0x%llx: %s\n", path,
			(unsigned long long)off, strerror(-fd));
	return fd;
}

/*
 * One site as perf-event links into @links: its entry, after its return
 * probes with @returns on an allocating function. Returns how many, or -1.
 */
static int attach_links(struct floor_bpf *skel, pid_t pid, const struct site *where,
			const struct probe_site *site, bool returns, struct bpf_link **links)
{
	int n = 0;

	if (returns && alloc_func_has_return_probe(site->func))
		n = attach_returns(skel->progs.malloc_return, pid, where, site->entry, &site->place,
				   links);
	if (n >= 0)
		links[n] = attach(skel->progs.malloc_enter, pid, where, probe_site__offset(site),
				  false);
	if (n >= 0 && links[n])
		return n + 1;
	/* @links is zeroed past what was made: undo this site's. */
	for (n = 0; links[n]; n++)
		bpf_link__destroy(links[n]);
	return -1;
}

/*
 * floor sites [--returns | --session] [--every] -p PID: the empty entry
 * program at each of alloctrace's sites in PID, for PID alone or every
 * process (@every), with its return probes too on allocating functions
 * (@returns), or as uprobe_multi links with sessions on them (@session).
 */
static int sites_main(pid_t pid, bool every, bool returns, bool session)
{
	struct allocator_opts opts = {0};
	struct floor_bpf *skel = NULL;
	struct bpf_link **links;
	static struct allocator a;
	size_t n = 0, nr_returns = 0, nr_fds = 0;
	int ret = 1, got, *fds;

	if (allocator__find(pid, &opts, &a)) {
		fprintf(stderr, "floor: cannot find the allocator of process %d\n", (int)pid);
		return 1;
	}
	links = calloc(a.nr_objs * FUNC_MAX * (1 + PLACEMENT_EXITS), sizeof(*links));
	fds = calloc(a.nr_objs * FUNC_MAX, sizeof(*fds));
	skel = links && fds ? sites_load(session) : NULL;
	if (!skel) {
		fprintf(stderr, "floor: cannot load the BPF programs: %s\n", strerror(errno));
		free(links);
		free(fds);
		return 1;
	}
	for (size_t o = 0; o < a.nr_objs; o++) {
		for (size_t i = 0; i < a.objs[o].nr_sites; i++) {
			const struct probe_site *site = &a.objs[o].sites[i];
			struct site where;

			if (site->alias)
				continue;
			snprintf(where.path, sizeof(where.path), "%s", a.objs[o].path);
			if (session) {
				fds[nr_fds] = attach_multi(skel, every ? -1 : pid, where.path, site);
				if (fds[nr_fds] < 0)
					goto out;
				nr_fds++;
				continue;
			}
			got = attach_links(skel, every ? -1 : pid, &where, site, returns, links + n);
			if (got < 0)
				goto out;
			n += got;
			nr_returns += got - 1;
		}
	}
	fprintf(stderr, "floor: sites: %zu entry probes in process %d, %s, %zu return probes\n",
		session ? nr_fds : n - nr_returns, (int)pid,
		every ? "for every process mapping them" : "for it alone", nr_returns);
	wait_attached(pid);
	ret = 0;
out:
	while (n)
		bpf_link__destroy(links[--n]);
	while (nr_fds)
		close(fds[--nr_fds]);
	free(links);
	free(fds);
	floor_bpf__destroy(skel);
	return ret;
}

/* Options between the placement and the target; returns the next argument. */
static int parse_switches(int argc, char **argv, struct floor_bpf *skel)
{
	int i;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--stack"))
			skel->rodata->walk_stack = true;
		else if (!strcmp(argv[i], "--live"))
			skel->rodata->track_live = true;
		else
			break;
	}
	return i;
}

/* Sets *pid for -p; returns the index of the command for --, or -1. */
static int parse_target(int argc, char **argv, int i, pid_t *pid)
{
	if (i + 2 == argc && !strcmp(argv[i], "-p")) {
		*pid = atoi(argv[i + 1]);
		return *pid > 0 ? argc : -1;
	}
	return i + 1 < argc && !strcmp(argv[i], "--") ? i + 1 : -1;
}

static struct floor_bpf *open_and_load(int argc, char **argv, int *next)
{
	struct floor_bpf *skel = floor_bpf__open();

	if (!skel)
		return NULL;
	*next = parse_switches(argc, argv, skel);
	if (floor_bpf__load(skel)) {
		floor_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

int main(int argc, char **argv)
{
	struct floor_bpf *skel;
	struct site site;
	pid_t pid = -1;
	int go = -1, ret = 1, next, cmd;
	bool best;

	if (argc >= 4 && !strcmp(argv[1], "sites")) {
		bool every = false, returns = false, session = false;
		int i;

		for (i = 2; i < argc - 2; i++) {
			if (!strcmp(argv[i], "--every") && !every)
				every = true;
			else if (!strcmp(argv[i], "--returns") && !returns && !session)
				returns = true;
			else if (!strcmp(argv[i], "--session") && !session && !returns)
				session = true;
			else
				return usage();
		}
		if (strcmp(argv[i], "-p") || atoi(argv[i + 1]) <= 0)
			return usage();
		libbpf_set_print(quiet_libbpf);
		return sites_main(atoi(argv[i + 1]), every, returns, session);
	}
	if (argc < 4 || (strcmp(argv[1], "naive") && strcmp(argv[1], "best")))
		return usage();
	best = !strcmp(argv[1], "best");
	libbpf_set_print(quiet_libbpf);
	if (find_site(best, &site)) {
		fprintf(stderr, "floor: cannot find malloc and free in this process's libc\n");
		return 1;
	}
	skel = open_and_load(argc, argv, &next);
	if (!skel) {
		fprintf(stderr, "floor: cannot load the BPF programs: %s\n", strerror(errno));
		return 1;
	}
	cmd = parse_target(argc, argv, next, &pid);
	if (cmd < 0) {
		floor_bpf__destroy(skel);
		return usage();
	}
	if (cmd < argc && (pid = spawn_held(&argv[cmd], &go)) < 0)
		goto out;
	if (attach_all(skel, pid, &site))
		goto out;
	fprintf(stderr, "floor: %s: malloc at %s+0x%llx (%s), free at +0x%llx (%s)\n", argv[1],
		site.path, (unsigned long long)site.malloc_off, site.malloc_place.why,
		(unsigned long long)site.free_off, site.free_place.why);
	if (go < 0) {
		wait_attached(pid);
		ret = 0;
	} else if (write(go, "g", 1) == 1) {
		close(go);
		go = -1;
		ret = wait_child(pid);
	}
out:
	if (go >= 0) {
		close(go); /* a child still held exits on EOF */
		wait_child(pid);
	}
	for (size_t i = 0; i < PLACEMENT_EXITS; i++)
		bpf_link__destroy(returns[i]);
	floor_bpf__destroy(skel);
	return ret;
}
