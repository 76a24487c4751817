// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "probe/allocator.h"
#include "probe/alloc_choice.h"
#include "probe/elfsym.h"
#include "probe/linkmap.h"
#include "lib/log.h"
#include "probe/placement.h"
#include "proc/mapfile.h"
#include "proc/procmaps.h"

/* @nr_args: its parameters, which probe placement keeps readable (see placement.c). */
struct func_desc {
	const char *symbol;
	const char *display;
	enum func_group group;
	enum func_kind kind;
	unsigned int nr_args;
};

static const struct func_desc funcs[FUNC_MAX] = {
#define ALLOC_FUNC(id, group, kind, nr_args, args, symbol, display)                                \
	[FUNC_##id] = {symbol, display, FUNC_GROUP_##group, FUNC_KIND_##kind, nr_args},
#include "alloc_funcs.def"
#undef ALLOC_FUNC
};

const char *alloc_func_name(enum alloc_func func)
{
	return func < FUNC_MAX ? funcs[func].display : "?";
}

int allocator_opts__parse_spec(struct allocator_opts *opts, char *arg)
{
	char *colon = strrchr(arg, ':');

	/* A colon inside the path is part of it: a prefix holds no '/'. */
	if (colon && !strchr(colon, '/')) {
		*colon = '\0';
		opts->prefix = colon + 1;
	}
	opts->path = arg;
	return *arg ? 0 : -EINVAL;
}

bool allocator__probes(const struct allocator *a, enum alloc_func func)
{
	for (size_t o = 0; o < a->nr_objs; o++) {
		for (size_t i = 0; i < a->objs[o].nr_sites; i++) {
			if (a->objs[o].sites[i].func == func)
				return true;
		}
	}
	return false;
}

bool alloc_func_has_return_probe(enum alloc_func func)
{
	return func < FUNC_MAX && funcs[func].kind != FUNC_KIND_FREES;
}

bool alloc_func_releases(enum alloc_func func)
{
	return func < FUNC_MAX && funcs[func].kind != FUNC_KIND_ALLOCS;
}

/*
 * A function whose return probe keeps its entry probe single-stepped (on
 * arm64, where it must sit before the prologue saves x30): its @size
 * bytes read for placement__move_return().
 */
static void place_exits(struct elf_file *ef, uint64_t vaddr, uint64_t size,
			struct placement_need need, struct placement *out)
{
	uint8_t body[PLACEMENT_BODY_MAX];

	if (size <= sizeof(body) && elf_file__read(ef, vaddr, body, size) == (long)size)
		placement__move_return(placement__native(), body, size, need, out);
}

void allocator__place(struct elf_file *ef, uint64_t vaddr, uint64_t size, enum alloc_func func,
		      struct placement *out)
{
	struct placement_need need = {
	    .nr_args = funcs[func].nr_args,
	    .keep_sp = alloc_func_has_return_probe(func),
	};
	uint8_t code[PLACEMENT_CODE_MAX];
	long len = elf_file__read(ef, vaddr, code, sizeof(code));

	if (len >= 0) {
		placement__walk(placement__native(), code, len, &need, out);
		if (out->stepped && need.keep_sp)
			place_exits(ef, vaddr, size, need, out);
		return;
	}
	placement__entry(placement__native(), out);
	snprintf(out->why, sizeof(out->why), "single-stepped: cannot read its code: %s",
		 strerror((int)-len));
}

static int fill_site(struct elf_file *ef, struct probe_site *site, enum alloc_func func,
		     uint64_t vaddr, uint64_t size)
{
	int err;

	site->func = func;
	err = elf_file__vaddr_to_offset(ef, vaddr, &site->entry);
	if (err)
		return err;
	allocator__place(ef, vaddr, size, func, &site->place);
	return 0;
}

static bool in_set(enum alloc_func f, enum site_set set)
{
	switch (set) {
	case SITES_ALLOCATOR:
		return funcs[f].group == FUNC_GROUP_C || funcs[f].group == FUNC_GROUP_CXX;
	case SITES_NEW:
		return funcs[f].group == FUNC_GROUP_CXX && funcs[f].kind == FUNC_KIND_ALLOCS;
	case SITES_MMAP:
		return funcs[f].group == FUNC_GROUP_MMAP;
	case SITES_BIG:
		return funcs[f].group == FUNC_GROUP_MMAP || funcs[f].group == FUNC_GROUP_BRK;
	}
	return false;
}

/* Add the sites of @set's functions found in @ef to @obj. */
static int add_sites(struct probe_object *obj, struct elf_file *ef, const uint64_t *addrs,
		     const uint64_t *sizes, enum site_set set)
{
	struct probe_site *site;
	int err;

	for (int f = 0; f < FUNC_MAX; f++) {
		if (!addrs[f] || !in_set(f, set))
			continue;
		site = &obj->sites[obj->nr_sites];
		err = fill_site(ef, site, f, addrs[f], sizes[f]);
		if (err)
			return err;
		for (size_t i = 0; i < obj->nr_sites; i++)
			site->alias |= obj->sites[i].entry == site->entry;
		obj->nr_sites++;
	}
	return 0;
}

void symbol_names__init(struct symbol_names *sn, const char *prefix)
{
	for (int f = 0; f < FUNC_MAX; f++) {
		bool prefixed = funcs[f].group == FUNC_GROUP_C && prefix;

		snprintf(sn->buf[f], sizeof(sn->buf[f]), "%s%s", prefixed ? prefix : "",
			 funcs[f].symbol);
		sn->names[f] = sn->buf[f];
	}
}

/* One object in lookup order, and how we can open it. */
struct candidate {
	const struct mapping *map;
	char path[PATH_MAX];
};

/*
 * Open a mapped object the way the target sees it, even from another mount
 * namespace; @c->path is then how the probes will name it. Without
 * map_files, the path under /proc/PID/root is kept only when it leads to
 * the file mapping__open() found in the target's root: one that resolved
 * elsewhere (a symlink whose target the kernel would look up in our root)
 * would put the probes on another file.
 */
static struct elf_file *open_candidate(pid_t pid, struct candidate *c)
{
	struct elf_file *ef;
	struct stat st;
	int fd;

	snprintf(c->path, sizeof(c->path), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)c->map->start, (unsigned long long)c->map->end);
	ef = elf_file__open(c->path);
	if (ef || c->map->deleted)
		return ef;
	fd = mapping__open(pid, c->map);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	snprintf(c->path, sizeof(c->path), "/proc/%d/root%s", pid, c->map->path);
	if (stat(c->path, &st) || !mapping__is(c->map, &st)) {
		close(fd);
		errno = ESTALE;
		return NULL;
	}
	return elf_file__from_fd(fd);
}

static bool same_object(const struct mapping *a, const struct mapping *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor;
}

/* The lowest mapping of the object behind @st (it has file offset 0), or NULL. */
static const struct mapping *find_object(const struct proc_maps *pm, const struct stat *st)
{
	for (size_t i = 0; i < pm->nr; i++) {
		if (mapping__is_file(&pm->maps[i]) && mapping__is(&pm->maps[i], st))
			return &pm->maps[i];
	}
	return NULL;
}

static size_t add_candidate(struct candidate *order, size_t nr, const struct mapping *map)
{
	for (size_t i = 0; i < nr; i++) {
		if (same_object(order[i].map, map))
			return nr;
	}
	order[nr].map = map;
	return nr + 1;
}

static size_t add_link_map(pid_t pid, const struct proc_maps *pm, struct candidate *order,
			   size_t nr, bool *used)
{
	struct link_names ln;
	char path[PATH_MAX];
	const struct mapping *map;
	struct stat st;

	if (link_names__read(pid, &ln))
		return nr;
	*used = true;
	for (size_t i = 1; i < ln.nr; i++) {
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, ln.names[i]);
		if (ln.names[i][0] != '/' || stat(path, &st))
			continue; /* the vdso has no file */
		map = find_object(pm, &st);
		if (map)
			nr = add_candidate(order, nr, map);
	}
	link_names__release(&ln);
	return nr;
}

/*
 * Objects in the order symbol lookup visits them: the executable, then the
 * loader's link map when it can be read. Objects it does not list (too
 * early in a launch) follow by falling start address, the order in which
 * the loader maps them.
 */
static size_t lookup_order(pid_t pid, const struct proc_maps *pm, struct candidate *order,
			   bool *static_exe, bool *from_link_map)
{
	const struct mapping *exe;
	char path[64];
	struct stat st;
	size_t nr = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	exe = stat(path, &st) ? NULL : find_object(pm, &st);
	if (exe) {
		struct elf_file *ef = elf_file__open(path);

		nr = add_candidate(order, nr, exe);
		*static_exe = ef && !elf_file__has_interp(ef);
		elf_file__close(ef);
	}
	nr = add_link_map(pid, pm, order, nr, from_link_map);
	/* Only code can hold an allocator: this skips data files like ld.so.cache. */
	for (size_t i = pm->nr; i-- > 0;) {
		if (mapping__is_file(&pm->maps[i]) && pm->maps[i].exec)
			nr = add_candidate(order, nr, &pm->maps[i]);
	}
	return nr;
}

/* A search through the candidates for the allocator and, with --mmap, mmap. */
struct search {
	const struct allocator_opts *opts;
	struct symbol_names sn;
	struct allocator *out;
	struct alloc_choice choice;
	bool denied; /* an object we may not open */
	bool unsafe; /* an object its path does not lead to, or no regular file */
};

static struct probe_object *new_object(struct search *s, const struct candidate *c)
{
	struct probe_object *obj = &s->out->objs[s->out->nr_objs++];

	snprintf(obj->path, sizeof(obj->path), "%s", c->path);
	snprintf(obj->name, sizeof(obj->name), "%s", c->map ? c->map->path : c->path);
	return obj;
}

/* Take from one object what the search still lacks (alloc_choice__object()). 0 or -errno. */
static int inspect(struct search *s, const struct candidate *c, struct elf_file *ef)
{
	static const char *const glibc[] = {"gnu_get_libc_version"};
	uint64_t addrs[FUNC_MAX], sizes[FUNC_MAX], libc_version = 0;
	struct alloc_candidate obj = {.glibc = false};
	struct probe_object *here;
	struct alloc_take take;
	int err = 0;

	if (elf_file__find_funcs(ef, s->sn.names, FUNC_MAX, addrs, sizes) <= 0)
		return 0;
	for (int f = 0; f < FUNC_MAX; f++)
		obj.defines[f] = addrs[f];
	if (s->opts->big_only)
		obj.glibc =
		    elf_file__find_funcs(ef, glibc, 1, &libc_version, NULL) > 0 && libc_version;
	take = alloc_choice__object(&s->choice, &obj);
	if (!take.entry)
		return 0;
	here = new_object(s, c);
	if (take.why_not_big)
		pr_debug("%s: %s", here->name, take.why_not_big);
	for (int set = 0; set < SITES_MAX && !err; set++) {
		if (take.sets & 1u << set)
			err = add_sites(here, ef, addrs, sizes, set);
	}
	return err;
}

static int search_candidates(struct search *s, pid_t pid, struct candidate *order, size_t nr)
{
	struct elf_file *ef;
	int err = 0;

	for (size_t i = 0; i < nr && !err && !alloc_choice__finished(&s->choice); i++) {
		ef = open_candidate(pid, &order[i]);
		if (!ef && (errno == ESTALE || errno == ENOEXEC)) {
			s->unsafe = true;
			pr_warn("pid %d: %s: %s: its functions are not probed", pid,
				order[i].map->path,
				errno == ESTALE ? "its path no longer leads to the file mapped"
						: "not a regular ELF file");
			continue;
		}
		if (!ef) {
			s->denied |= errno == EACCES || errno == EPERM;
			pr_debug("cannot read %s in pid %d: %s", order[i].map->path, pid,
				 strerror(errno));
			continue;
		}
		err = inspect(s, &order[i], ef);
		elf_file__close(ef);
	}
	return err;
}

static int search_forced(struct search *s)
{
	struct candidate c = {.map = NULL};
	struct elf_file *ef;
	int err;

	snprintf(c.path, sizeof(c.path), "%s", s->opts->path);
	ef = elf_file__open(c.path);
	if (!ef) {
		pr_err("--allocator %s: %s", c.path,
		       errno == ENOEXEC ? "not a valid ELF object (truncated or corrupt)"
					: strerror(errno));
		return -EINVAL;
	}
	err = inspect(s, &c, ef);
	elf_file__close(ef);
	if (!err && s->choice.allocator < 0) {
		pr_err("--allocator %s: it defines no %smalloc and %sfree", c.path,
		       s->opts->prefix ? s->opts->prefix : "",
		       s->opts->prefix ? s->opts->prefix : "");
		return -EINVAL;
	}
	return err;
}

static void explain(struct search *s, size_t nr, bool from_link_map)
{
	if (s->opts->path)
		snprintf(s->out->why, sizeof(s->out->why), "given by --allocator");
	else
		snprintf(s->out->why, sizeof(s->out->why),
			 "the first of %zu objects in symbol lookup order (%s) to define malloc "
			 "and free",
			 nr, from_link_map ? "the loader's link map" : "load order");
}

/* Not "no allocator": the process is another user's, and that is what to say. */
static int no_access(pid_t pid, const char *what)
{
	pr_err("cannot read %s process %d: permission denied "
	       "(another user's process needs CAP_SYS_PTRACE)",
	       what, pid);
	return -EINVAL;
}

/* Not "no allocator" either: the one it has could not be opened for what it is. */
static int no_safe_allocator(pid_t pid)
{
	pr_err("pid %d: no allocator object could be opened safely (see the warnings above)", pid);
	return -EINVAL;
}

int allocator__find(pid_t pid, const struct allocator_opts *opts, struct allocator *out)
{
	struct search s = {.opts = opts, .out = out};
	bool from_link_map = false;
	struct candidate *order;
	struct proc_maps pm;
	size_t nr;
	int err;

	memset(out, 0, sizeof(*out));
	symbol_names__init(&s.sn, opts->prefix);
	alloc_choice__init(&s.choice, opts);
	if (opts->path && (err = search_forced(&s)))
		return err;
	err = proc_maps__read(pid, &pm);
	if (err == -EACCES || err == -EPERM)
		return no_access(pid, "the mappings of");
	if (err)
		return err;
	order = calloc(pm.nr + 1, sizeof(*order));
	if (!order) {
		proc_maps__release(&pm);
		return -ENOMEM;
	}
	nr = lookup_order(pid, &pm, order, &out->final, &from_link_map);
	err = search_candidates(&s, pid, order, nr);
	if (!err)
		err = alloc_choice__verdict(&s.choice, out->final);
	if (err == -ENOENT && s.denied)
		err = no_access(pid, "the objects mapped by");
	else if (err == -ENOENT && s.unsafe)
		err = no_safe_allocator(pid);
	if (!err) {
		/* The allocator leads: reports and --verbose name objs[0]. */
		size_t i = s.choice.allocator;
		struct probe_object first = out->objs[0];

		out->objs[0] = out->objs[i];
		out->objs[i] = first;
		explain(&s, nr, from_link_map);
	}
	free(order);
	proc_maps__release(&pm);
	return err;
}
