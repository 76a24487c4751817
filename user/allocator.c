// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "allocator.h"
#include "elfsym.h"
#include "log.h"
#include "procmaps.h"

static const char *const func_names[FUNC_MAX] = {
	[FUNC_MALLOC] = "malloc",
	[FUNC_CALLOC] = "calloc",
	[FUNC_REALLOC] = "realloc",
	[FUNC_REALLOCARRAY] = "reallocarray",
	[FUNC_POSIX_MEMALIGN] = "posix_memalign",
	[FUNC_MEMALIGN] = "memalign",
	[FUNC_ALIGNED_ALLOC] = "aligned_alloc",
	[FUNC_VALLOC] = "valloc",
	[FUNC_PVALLOC] = "pvalloc",
	[FUNC_FREE] = "free",
};

const char *alloc_func_name(enum alloc_func func)
{
	return func < FUNC_MAX ? func_names[func] : "?";
}

/*
 * Where to put a function's entry probe. A probe on an instruction the
 * kernel must single-step costs about five times one it emulates. glibc's
 * free opens with `test %rdi,%rdi; je`: a probe on the je, which the kernel
 * emulates, sees every call but free(NULL), which does nothing anyway.
 * Functions that also carry a return probe stay at their entry, where the
 * return address is still on top of the stack.
 */
static uint64_t pick_entry_offset(enum alloc_func func, const uint8_t *code, long len)
{
#if defined(__x86_64__)
	static const uint8_t test_rdi[] = { 0x48, 0x85, 0xff };

	if (func != FUNC_FREE || len < 5 || memcmp(code, test_rdi, sizeof(test_rdi)))
		return 0;
	if (code[3] == 0x74 || (code[3] == 0x0f && code[4] == 0x84))
		return sizeof(test_rdi);
#endif
	return 0;
}

static int fill_site(struct elf_file *ef, struct probe_site *site, enum alloc_func func,
		     uint64_t vaddr)
{
	uint8_t code[16];
	long len;
	int err;

	site->func = func;
	err = elf_file__vaddr_to_offset(ef, vaddr, &site->entry);
	if (err)
		return err;
	len = elf_file__read(ef, vaddr, code, sizeof(code));
	site->offset = site->entry + (len > 0 ? pick_entry_offset(func, code, len) : 0);
	return 0;
}

static int fill_sites(struct elf_file *ef, const uint64_t *addrs, struct allocator *out)
{
	struct probe_site *site;
	int err;

	out->nr_sites = 0;
	for (int f = 0; f < FUNC_MAX; f++) {
		if (!addrs[f])
			continue;
		site = &out->sites[out->nr_sites];
		err = fill_site(ef, site, f, addrs[f]);
		if (err)
			return err;
		for (size_t i = 0; i < out->nr_sites; i++)
			site->alias |= out->sites[i].entry == site->entry;
		out->nr_sites++;
	}
	return 0;
}

/* Open a mapped object the way the target sees it, even from another mount namespace. */
static struct elf_file *open_mapped(pid_t pid, const struct mapping *map, char *path,
				    size_t size)
{
	struct elf_file *ef;

	snprintf(path, size, "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)map->start, (unsigned long long)map->end);
	ef = elf_file__open(path);
	if (ef)
		return ef;
	snprintf(path, size, "/proc/%d/root%s", pid, map->path);
	return elf_file__open(path);
}

/* 1 if the object at @map provides malloc and free, 0 if not, -errno. */
static int try_object(pid_t pid, const struct mapping *map, struct allocator *out)
{
	uint64_t addrs[FUNC_MAX];
	struct elf_file *ef;
	int err = 0;

	ef = open_mapped(pid, map, out->path, sizeof(out->path));
	if (!ef) {
		pr_debug("cannot read %s in pid %d: %s", map->path, pid, strerror(errno));
		return 0;
	}
	if (elf_file__find_funcs(ef, func_names, FUNC_MAX, addrs) < 0 || !addrs[FUNC_MALLOC] ||
	    !addrs[FUNC_FREE])
		goto out;
	err = fill_sites(ef, addrs, out);
	if (!err) {
		snprintf(out->name, sizeof(out->name), "%s", map->path);
		err = 1;
	}
out:
	elf_file__close(ef);
	return err;
}

static bool same_object(const struct mapping *a, const struct mapping *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor;
}

static bool is_executable_of(pid_t pid, const struct mapping *map, bool *has_interp)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st))
		return false;
	if (map->inode != st.st_ino || map->dev_major != major(st.st_dev) ||
	    map->dev_minor != minor(st.st_dev))
		return false;
	if (has_interp) {
		struct elf_file *ef = elf_file__open(path);

		*has_interp = ef && elf_file__has_interp(ef);
		elf_file__close(ef);
	}
	return true;
}

/*
 * The first mapping of each object, in the order symbol lookup visits them:
 * the executable, then the libraries by load order. The loader maps each
 * library below the previous one, so load order is falling start address.
 */
static size_t lookup_order(pid_t pid, const struct proc_maps *pm, const struct mapping **order,
			   bool *static_exe)
{
	size_t nr = 0, i, j;
	bool has_interp = true;

	for (i = pm->nr; i-- > 0;) {
		const struct mapping *map = &pm->maps[i];

		if (!mapping__is_file(map))
			continue;
		for (j = 0; j < nr && !same_object(order[j], map); j++)
			;
		if (j < nr) {
			order[j] = map;	/* keep the lowest mapping: it has offset 0 */
			continue;
		}
		order[nr++] = map;
		if (is_executable_of(pid, map, &has_interp)) {
			memmove(&order[1], &order[0], (nr - 1) * sizeof(*order));
			order[0] = map;
			*static_exe = !has_interp;
		}
	}
	return nr;
}

int allocator__find(pid_t pid, struct allocator *out)
{
	const struct mapping **order;
	struct proc_maps pm;
	int err;
	size_t nr;

	memset(out, 0, sizeof(*out));
	err = proc_maps__read(pid, &pm);
	if (err)
		return err;
	order = calloc(pm.nr + 1, sizeof(*order));
	if (!order) {
		proc_maps__release(&pm);
		return -ENOMEM;
	}
	nr = lookup_order(pid, &pm, order, &out->final);
	err = -ENOENT;
	for (size_t i = 0; i < nr && err == -ENOENT; i++) {
		int ret = try_object(pid, order[i], out);

		if (ret)
			err = ret < 0 ? ret : 0;
	}
	free(order);
	proc_maps__release(&pm);
	return err;
}
