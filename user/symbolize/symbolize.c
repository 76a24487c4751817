// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process's addresses to frames: the objects it maps, looked up once
 * per change of its mappings (each file is opened once for every process
 * that maps it: objcache.c), and each address's frames cached.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/addrcache.h"
#include "symbolize/debugfile.h"
#include "symbolize/lines.h"
#include "symbolize/objcache.h"
#include "symbolize/objfile.h"
#include "symbolize/objindex.h"
#include "symbolize/strtab.h"
#include "proc/procmaps.h"
#include "symbolize/symbolize.h"

/* Deeper inline chains lose their outermost inlined calls. */
struct map_object {
	uint64_t bias;	    /* runtime address minus ELF address */
	struct object *obj; /* NULL when there is no ELF object to read */
};

/* Everything a refresh replaces at once. */
struct layout {
	struct proc_maps maps;
	struct map_object *map_objs; /* parallel to maps.maps */
	struct object **objs;	     /* each held once (objcache__get) */
	size_t nr_objs;
};

struct symbolizer {
	pid_t pid;
	struct layout layout;
	struct strtab strings;
	struct addr_cache cache;
};

/* Build ids are hashes, 20 bytes for SHA-1: a longer note is no build id. */
static const char *object__build_id(const struct object *obj, struct strtab *strings)
{
	char hex[2 * MAX_BUILD_ID + 1];

	return module__build_id(obj->mod, hex) ? NULL : strtab__intern(strings, hex);
}

static const struct map_object *layout__find(const struct layout *lay, uint64_t addr,
					     const struct mapping **map)
{
	*map = proc_maps__find(&lay->maps, addr);
	return *map ? &lay->map_objs[*map - lay->maps.maps] : NULL;
}

/*
 * @addr is a return address: the call is the instruction before it, and
 * may even be the last one of a function (a call to a noreturn function),
 * so source, inlines and symbol are looked up at @addr - 1.
 */
static int symbolizer__lookup(struct symbolizer *s, uint64_t addr, struct frame_info *out)
{
	struct frame_info frame = {.addr = addr};
	const struct map_object *mo;
	const struct mapping *map;
	Dwarf_Addr pc, dwarf_pc;
	Dwarf_Die *cudie;
	int nr = 0;

	mo = layout__find(&s->layout, addr, &map);
	if (!mo) {
		out[0] = frame;
		return 1;
	}
	frame.module = strtab__intern(&s->strings, map->path);
	frame.offset = addr - mo->bias;
	if (!mo->obj) {
		out[0] = frame;
		return 1;
	}
	frame.build_id = object__build_id(mo->obj, &s->strings);
	/* In the object's own addresses: other processes map it elsewhere. */
	pc = (addr > map->start ? addr - 1 : addr) - mo->bias;
	cudie = object__cu_at(mo->obj, pc, &dwarf_pc);
	if (cudie) {
		frame__set_source(&frame, &s->strings, cudie, dwarf_pc);
		nr = frame__expand_inlines(&s->strings, mo->obj, cudie, dwarf_pc, &frame, out);
	}
	frame.inlined = false;
	frame__set_symbol(&frame, &s->strings, mo->obj, pc);
	/*
	 * No function before it: @addr is no return address but a signal
	 * trampoline's first byte (libc's __restore_rt, whose CFI starts a
	 * byte early so that unwinders find it at addr - 1).
	 */
	if (!frame.function && pc != frame.offset)
		frame__set_symbol(&frame, &s->strings, mo->obj, frame.offset);
	out[nr++] = frame;
	return nr;
}

/* Its load bias, and whether its .gnu_debugdata may be inflated: 0 or -errno. */
static int object__check(int fd, const struct mapping *map, uint64_t *bias)
{
	Elf *elf;
	int err;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	err = elf__load_bias(elf, map, bias);
	if (!err && elf__check_debugdata(elf)) {
		debugfile__warn_once(map->path, ".gnu_debugdata inflates beyond 64 MiB or is no xz "
						"stream");
		err = -EFBIG;
	}
	elf_end(elf);
	return err;
}

/*
 * The object open on @fd (taken), whose code the process maps at @map:
 * NULL when it cannot be read. @bias is kept on failure.
 */
static struct object *object__adopt(int fd, const struct mapping *map, int root_fd, uint64_t *bias)
{
	if (object__check(fd, map, bias)) {
		close(fd);
		return NULL;
	}
	return objcache__get(fd, map->path, root_fd);
}

static int mapping__object_cmp(const void *a, const void *b)
{
	const struct mapping *x = *(const struct mapping *const *)a;
	const struct mapping *y = *(const struct mapping *const *)b;
	int cmp;

	if (x->inode != y->inode)
		return x->inode < y->inode ? -1 : 1;
	if (x->dev_major != y->dev_major)
		return x->dev_major < y->dev_major ? -1 : 1;
	if (x->dev_minor != y->dev_minor)
		return x->dev_minor < y->dev_minor ? -1 : 1;
	cmp = strcmp(x->path, y->path);
	if (cmp)
		return cmp;
	return (x->start > y->start) - (x->start < y->start);
}

static bool mapping__same_object(const struct mapping *x, const struct mapping *y)
{
	return x->inode == y->inode && x->dev_major == y->dev_major &&
	       x->dev_minor == y->dev_minor && !strcmp(x->path, y->path);
}

/* The object of @map, the code of its file in process @pid. */
static struct object *object__open(pid_t pid, const struct mapping *map, int root_fd,
				   uint64_t *bias)
{
	int fd;

	fd = mapping__open(pid, map);
	if (fd == -ESTALE || fd == -ENOEXEC)
		debugfile__warn_once(map->path, fd == -ESTALE ? "its path no longer leads to the "
								"file mapped"
							      : "not a regular file");
	return fd < 0 ? NULL : object__adopt(fd, map, root_fd, bias);
}

/* @group: the mappings of one object, lowest first. */
static void layout__add_object(struct layout *lay, pid_t pid, int root_fd,
			       const struct mapping **group, size_t nr)
{
	uint64_t bias = group[0]->start - group[0]->pgoff;
	struct object *obj = NULL;
	size_t i;

	for (i = 0; i < nr && !group[i]->exec; i++)
		;
	/*
	 * Only code holds return addresses; data files need not be opened.
	 * The bias is the code's: the process may also map the whole file
	 * below its image (libelf reading it, as alloctrace does), where the
	 * first segment would give that mapping's own.
	 */
	if (i < nr) {
		obj = object__open(pid, group[i], root_fd, &bias);
		if (obj)
			lay->objs[lay->nr_objs++] = obj;
	}
	for (i = 0; i < nr; i++)
		lay->map_objs[group[i] - lay->maps.maps] = (struct map_object){bias, obj};
}

/*
 * The vDSO's code (arm64's signal trampoline, __kernel_rt_sigreturn, is
 * there): a copy of our own, reported under its name. No debug file is
 * looked for beside it, and it has no root.
 */
static void layout__add_vdso(struct layout *lay, const struct mapping *map)
{
	struct object *obj;
	uint64_t bias;
	int fd;

	fd = vdso__open(map);
	if (fd < 0)
		return;
	obj = object__adopt(fd, map, -1, &bias);
	if (!obj)
		return;
	lay->objs[lay->nr_objs++] = obj;
	lay->map_objs[map - lay->maps.maps] = (struct map_object){bias, obj};
}

static int layout__add_objects(struct layout *lay, pid_t pid, int root_fd)
{
	const struct mapping **order;
	size_t i, j, nr = 0;

	order = calloc(lay->maps.nr ? lay->maps.nr : 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < lay->maps.nr; i++) {
		const struct mapping *map = &lay->maps.maps[i];

		if (mapping__is_file(map))
			order[nr++] = map;
		else if (map->exec && map->path && !strcmp(map->path, "[vdso]"))
			layout__add_vdso(lay, map);
	}
	qsort(order, nr, sizeof(*order), mapping__object_cmp);
	for (i = 0; i < nr; i = j) {
		for (j = i + 1; j < nr && mapping__same_object(order[i], order[j]); j++)
			;
		layout__add_object(lay, pid, root_fd, order + i, j - i);
	}
	free(order);
	return 0;
}

static void layout__release(struct layout *lay)
{
	size_t i;

	for (i = 0; i < lay->nr_objs; i++)
		objcache__put(lay->objs[i]);
	free(lay->objs);
	free(lay->map_objs);
	proc_maps__release(&lay->maps);
	*lay = (struct layout){0};
}

/* Takes @lay->maps; on failure everything in @lay is released. */
static int layout__build(struct layout *lay, pid_t pid)
{
	size_t i, nr = lay->maps.nr ? lay->maps.nr : 1;
	int err, root_fd;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		err = -ELIBBAD;
		goto fail;
	}
	/* An object has at least one mapping: nr is enough for both. */
	lay->map_objs = calloc(nr, sizeof(*lay->map_objs));
	lay->objs = calloc(nr, sizeof(*lay->objs));
	if (!lay->map_objs || !lay->objs) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < lay->maps.nr; i++)
		lay->map_objs[i].bias = lay->maps.maps[i].start - lay->maps.maps[i].pgoff;
	/* A new object keeps its own copy of the root, for its debug links. */
	root_fd = proc_root__open(pid);
	err = layout__add_objects(lay, pid, root_fd);
	if (root_fd >= 0)
		close(root_fd);
	if (err)
		goto fail;
	return 0;
fail:
	layout__release(lay);
	return err;
}

static bool str_equal(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool mapping__equal(const struct mapping *x, const struct mapping *y)
{
	return x->start == y->start && x->end == y->end && x->pgoff == y->pgoff &&
	       x->inode == y->inode && x->dev_major == y->dev_major &&
	       x->dev_minor == y->dev_minor && x->read == y->read && x->write == y->write &&
	       x->exec == y->exec && x->deleted == y->deleted && str_equal(x->path, y->path);
}

static bool proc_maps__equal(const struct proc_maps *x, const struct proc_maps *y)
{
	size_t i;

	if (x->nr != y->nr)
		return false;
	for (i = 0; i < x->nr; i++)
		if (!mapping__equal(&x->maps[i], &y->maps[i]))
			return false;
	return true;
}

/* Whether what was resolved for @addr under @old still holds under @new. */
static bool layout__same_at(const struct layout *old, const struct layout *new, uint64_t addr)
{
	const struct mapping *old_map, *new_map;
	const struct map_object *old_mo, *new_mo;

	old_mo = layout__find(old, addr, &old_map);
	new_mo = layout__find(new, addr, &new_map);
	if (!old_mo || !new_mo)
		return !old_mo && !new_mo;
	return mapping__equal(old_map, new_map) && old_mo->bias == new_mo->bias &&
	       !old_mo->obj == !new_mo->obj;
}

/* @arg: the old layout and the new, for addr_cache__prune(). */
static bool layout__still_at(uint64_t addr, const void *arg)
{
	const struct layout *const *lays = arg;

	return layout__same_at(lays[0], lays[1], addr);
}

struct symbolizer *symbolizer__new(pid_t pid)
{
	struct symbolizer *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pid = pid;
	debugfile__hold();
	err = proc_maps__read(pid, &s->layout.maps);
	if (!err)
		err = layout__build(&s->layout, pid);
	if (err) {
		symbolizer__free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	layout__release(&s->layout);
	addr_cache__release(&s->cache);
	strtab__release(&s->strings);
	free(s);
	debugfile__put();
}

static bool process__has_mappings(pid_t pid)
{
	struct proc_maps maps = {0};
	bool has;

	has = !proc_maps__read(pid, &maps) && maps.nr;
	proc_maps__release(&maps);
	return has;
}

int symbolizer__refresh(struct symbolizer *s)
{
	struct layout fresh = {0};
	int err;

	err = proc_maps__read(s->pid, &fresh.maps);
	/* A process that is gone keeps what we knew of it. */
	if (err == -ENOENT || err == -ESRCH)
		return 0;
	if (err)
		return err;
	if (!fresh.maps.nr || proc_maps__equal(&fresh.maps, &s->layout.maps)) {
		proc_maps__release(&fresh.maps);
		return 0;
	}
	err = layout__build(&fresh, s->pid);
	if (err)
		return err;
	/*
	 * A process that exits while its objects are opened loses its
	 * mappings and root on the way (map_files and /proc/PID/root say
	 * ENOENT): those objects would be left unnamed, over the good layout.
	 */
	if (!process__has_mappings(s->pid)) {
		layout__release(&fresh);
		return 0;
	}
	addr_cache__prune(&s->cache, layout__still_at,
			  (const struct layout *[]){&s->layout, &fresh});
	layout__release(&s->layout);
	s->layout = fresh;
	return 0;
}

int symbolizer__resolve(struct symbolizer *s, uint64_t addr, struct frame_info *frames, int max)
{
	struct frame_info found[MAX_FRAMES];
	const struct cache_entry *e;
	int nr;

	if (max <= 0)
		return 0;
	e = addr_cache__find(&s->cache, addr);
	if (e) {
		nr = e->nr < max ? e->nr : max;
		memcpy(frames, e->frames, nr * sizeof(*frames));
		return nr;
	}
	nr = symbolizer__lookup(s, addr, found);
	addr_cache__add(&s->cache, addr, found, nr);
	if (nr > max)
		nr = max;
	memcpy(frames, found, nr * sizeof(*frames));
	return nr;
}
