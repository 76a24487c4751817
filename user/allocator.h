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

/* Where one allocator function is probed, as offsets in the object's file. */
struct probe_site {
	enum alloc_func func;
	uint64_t entry;		/* the function's first instruction: return probes */
	uint64_t offset;	/* where the entry probe goes (see pick_entry_offset) */
	bool alias;		/* same address as an earlier site: not probed again */
};

/* The object that provides a process's malloc and friends. */
struct allocator {
	char path[PATH_MAX];	/* how to open it from here (may be via /proc/PID) */
	char name[PATH_MAX];	/* its path as the target maps it */
	size_t nr_sites;
	struct probe_site sites[FUNC_MAX];
	bool final;		/* nothing more will be loaded: a static executable */
};

/*
 * Find the object whose malloc the process's calls reach, among those it
 * has mapped: the executable if it defines malloc, else the library loaded
 * first that does. Returns 0, -ENOENT when none is mapped (yet), or -errno.
 */
int allocator__find(pid_t pid, struct allocator *out);

const char *alloc_func_name(enum alloc_func func);

#endif
