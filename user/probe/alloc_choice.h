/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_ALLOC_CHOICE_H
#define ALLOCTRACE_ALLOC_CHOICE_H

#include <stdbool.h>
#include <stddef.h>
#include "alloctrace.h"

struct allocator_opts;

/*
 * Which objects of a process are probed for what, as a pure function of
 * what each object defines, visited in symbol lookup order (the
 * executable, LD_PRELOAD objects, libraries in load order): no file is
 * opened here. probe/allocator.c reads the link map and the ELF symbols,
 * and makes the probe sites of what is chosen.
 */

/* What one object defines of the functions looked for. */
struct alloc_candidate {
	bool defines[FUNC_MAX]; /* each under its name, --allocator's prefix on the C ones */
	bool glibc;		/* defines gnu_get_libc_version (read for --big-only only) */
};

/* The functions whose sites are made in one object. */
enum site_set {
	SITES_ALLOCATOR, /* everything but mmap */
	SITES_NEW,	 /* operator new and new[] only */
	SITES_MMAP,
	SITES_BIG, /* --big-only: mmap, munmap, mremap and brk */
};

#define SITES_MAX (SITES_BIG + 1)

/* What to take from one object. */
struct alloc_take {
	bool entry;		 /* an entry of its own in struct allocator's objs */
	unsigned int sets;	 /* 1 << enum site_set, made in that order */
	const char *why_not_big; /* --big-only: why its mmap... are not probed, or NULL */
};

/* The search so far. */
struct alloc_choice {
	bool mmap;     /* --mmap: an mmap to probe is looked for too */
	bool big_only; /* --big-only */
	size_t nr_entries;
	long allocator;	 /* its entry, -1 before one is found */
	long mmap_entry; /* the entry mmap is taken from, -1 before */
	bool new_seen;	 /* operator new found, wherever it is */
};

void alloc_choice__init(struct alloc_choice *c, const struct allocator_opts *opts);

/* The next object in lookup order: what to take from it. */
struct alloc_take alloc_choice__object(struct alloc_choice *c, const struct alloc_candidate *obj);

/* Is there no need to look at more objects? */
bool alloc_choice__finished(const struct alloc_choice *c);

/*
 * After the last object: 0 when an allocator is chosen (a static
 * executable, @final, may have no mmap to probe), else -ENOENT.
 */
int alloc_choice__verdict(const struct alloc_choice *c, bool final);

#endif
