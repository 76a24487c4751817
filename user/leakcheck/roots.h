/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef ALLOCTRACE_ROOTS_H
#define ALLOCTRACE_ROOTS_H

#include <stddef.h>
#include <stdint.h>
#include "leakcheck/leakcheck.h"
#include "proc/procmaps.h"

/* Address ranges [start, end), sorted and merged by range_set__normalize. */
struct range {
	uint64_t start;
	uint64_t end;
};

struct range_set {
	struct range *r;
	size_t n, cap;
};

int range_set__add(struct range_set *s, uint64_t start, uint64_t end);
void range_set__normalize(struct range_set *s);
void range_set__release(struct range_set *s);
uint64_t range_set__bytes(const struct range_set *s);

/* What the process's roots are made of. */
struct root_sources {
	const struct proc_maps *maps;
	const uint64_t *sps; /* each thread's stack pointer */
	/*
	 * and where its live stack starts: its stack pointer less its red
	 * zone, or where it entered exit() (leakcheck/exitframe.h)
	 */
	const uint64_t *live;
	size_t nr_sps;
	const struct range_set *heap;  /* the allocator's arenas: not roots... */
	const struct range_set *inuse; /* ...but for their untracked in-use chunks */
	const struct leak_block *blocks;
	size_t nr_blocks;
};

/*
 * The root memory: every readable, writable mapping, less the tracked
 * blocks, the allocator's arenas and each thread's stack below where
 * its live part starts, plus the arenas' untracked in-use chunks.
 * 0 or -errno.
 */
int roots__build(const struct root_sources *src, struct range_set *out);

#endif
