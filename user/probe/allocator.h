/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_ALLOCATOR_H
#define ALLOCTRACE_ALLOCATOR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "alloctrace.h"
#include "probe/placement.h"

/*
 * Where one allocator function is probed: its entry and return probes
 * share one breakpoint, @place.offset past the function's first
 * instruction, where @place.arg_reg holds its arguments.
 */
struct probe_site {
	enum alloc_func func;
	uint64_t entry; /* the function's first instruction, as an offset in the file */
	struct placement place;
	bool alias; /* same address as an earlier site: not probed again */
};

/* Where @site's probes go, as an offset in the object's file. */
static inline uint64_t probe_site__offset(const struct probe_site *site)
{
	return site->entry + site->place.offset;
}

/* One object to probe and the functions in it. */
struct probe_object {
	char path[PATH_MAX]; /* how to open it from here (may be via /proc/PID) */
	char name[PATH_MAX]; /* its path as the target maps it */
	size_t nr_sites;
	struct probe_site sites[FUNC_MAX];
};

struct allocator_opts {
	const char *path;   /* --allocator: use this object, wherever symbols lead */
	const char *prefix; /* prefix of the C entry points, e.g. "je_" */
	bool mmap;	    /* also probe mmap, munmap and mremap */
	bool big_only;	    /* probe only the C library's mmap, munmap, mremap and brk */
};

/*
 * What to probe in a process: its allocator; the C++ runtime's operator
 * new when the allocator does not define it (libstdc++'s calls malloc, but
 * a stack taken at malloc's return skips new's caller: libstdc++ keeps no
 * frame pointer); with --mmap, its mmap. With --big-only the allocator's
 * own functions are not probed (its objects only name its frames), only
 * the C library's mmap, munmap, mremap and brk, when it is glibc (see
 * allocator.c: big_sites_usable()); none found: the system-call fallback.
 */
struct allocator {
	struct probe_object objs[3];
	size_t nr_objs;
	bool final;    /* nothing more will be loaded: a static executable */
	char why[256]; /* how the allocator was chosen, for --verbose */
};

/*
 * Find the object whose malloc the process's calls reach: the first in
 * symbol lookup order (the executable, LD_PRELOAD objects, libraries in
 * load order) that defines malloc and free. Returns 0, -ENOENT when none is
 * mapped (yet), -EINVAL when --allocator names no allocator or the
 * mappings are not ours to read (said on stderr), or -errno.
 */
int allocator__find(pid_t pid, const struct allocator_opts *opts, struct allocator *out);

/* Symbol names to look for: each function's, with @prefix on the C entry points. */
struct symbol_names {
	char buf[FUNC_MAX][128];
	const char *names[FUNC_MAX];
};

void symbol_names__init(struct symbol_names *sn, const char *prefix);

struct elf_file;

/*
 * Where @func's probes go in @ef, the function at @vaddr of @size bytes
 * (0: unknown): past the instructions the kernel would single-step (see
 * placement.c), with return probes on its exits where that frees the
 * entry (placement__exits()).
 */
void allocator__place(struct elf_file *ef, uint64_t vaddr, uint64_t size, enum alloc_func func,
		      struct placement *out);

/* "PATH[:PREFIX]" of --allocator into @opts (pointing into @arg). 0 or -EINVAL. */
int allocator_opts__parse_spec(struct allocator_opts *opts, char *arg);

/* Does @a probe @func anywhere? */
bool allocator__probes(const struct allocator *a, enum alloc_func func);

/* The name reports use, e.g. "malloc", "operator new". */
const char *alloc_func_name(enum alloc_func func);

/* free and munmap need nothing at return; everything else does. */
bool alloc_func_has_return_probe(enum alloc_func func);

/* Does @func release or replace blocks (alloc_funcs.def's kind is not ALLOCS)? */
bool alloc_func_releases(enum alloc_func func);

#endif
